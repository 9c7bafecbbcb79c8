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
        The parametrization's values.
    fast : container
        The values that run in the fast tier.
    unpack : bool
        Each case is a tuple of the values of several argument names.

    Returns
    -------
    list of ``pytest.param``
    """
    return [
        pytest.param(*(case if unpack else (case,)), marks=[] if case in fast else [SLOW])
        for case in cases
    ]
