"""The two tiers of the test suite (issue 27; tests/conftest.py, README "Quick setup").

``python -m pytest -q`` runs the fast tier: every test not marked ``slow``.
``python -m pytest -q -m slow`` runs the slow tier. A slow test always has a fast sibling
that runs the same code path on smaller data or on a sample of the parametrization; the
helpers here keep that sample next to the full list, so that both tiers together run
every case exactly once.
"""

import pytest

__all__ = ["SLOW", "sampled"]

#: Marks a test (or a parametrization) for the slow tier.
SLOW = pytest.mark.slow


def sampled(cases, fast, *, unpack=False):
    """``cases`` as ``pytest.param``s, those not in ``fast`` marked :data:`SLOW`.

    Parameters
    ----------
    cases : sequence
        The parametrization's values; ``pytest.param`` values keep their id and marks.
    fast : container
        The values (or, for ``pytest.param``s, their ids) that run in the fast tier.
    unpack : bool
        Each case is a tuple of the values of several argument names.

    Returns
    -------
    list of ``pytest.param``
    """
    params = []
    for case in cases:
        if isinstance(case, type(pytest.param(None))):
            key = case.id if case.id is not None else case.values[0]
            marks = list(case.marks) + ([] if key in fast else [SLOW])
            params.append(pytest.param(*case.values, id=case.id, marks=marks))
        else:
            values = case if unpack else (case,)
            params.append(pytest.param(*values, marks=[] if case in fast else [SLOW]))
    return params
