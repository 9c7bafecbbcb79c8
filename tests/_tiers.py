"""The two tiers of the test suite (issue 27; tests/conftest.py, README "Quick setup").

``python -m pytest -q`` runs the fast tier: every test not marked ``slow``.
``python -m pytest -q -m slow`` runs the slow tier. A slow test always has a fast sibling
that runs the same code path on smaller data or on a sample of the parametrization; the
helpers here keep that sample next to the full list, so that both tiers together run
every case exactly once.
"""

import itertools

import pytest

__all__ = ["SLOW", "STARTED_FIRST", "sampled", "crossed", "longest_first"]

#: Marks a test (or a parametrization) for the slow tier.
SLOW = pytest.mark.slow


#: Tests that start before the others, longest first (node-id prefixes). The tiers run on
#: one xdist worker per core, each worker taking the next test when it is done; a test of
#: three minutes taken last keeps its worker busy after the other has finished (the slow
#: tier: 436 s for 728 s of tests on 2 workers, 2026-11-30). Started first, the others
#: fill the other worker meanwhile. An order, not a limit: a test missing here only runs
#: in collection order.
STARTED_FIRST = (
    "tests/test_platform_independence.py::test_golden_hashes_without_numpys_simd_and_with_generic",
    "tests/backends/emulation/test_sanitizer.py::test_the_cuda_backend_suite_is_clean",
    "tests/backends/emulation/test_device_profiles.py::test_the_cuda_backend_suite_on_a_device",
    "tests/test_warmup.py::test_compile_command_fills_the_cache",
    "tests/model/test_model_io_fuzz.py::",
)


def longest_first(items):
    """``items`` (pytest's collected tests) reordered in place: those of
    :data:`STARTED_FIRST` first, in its order; the rest in their collection order."""

    def rank(item):
        for position, prefix in enumerate(STARTED_FIRST):
            if item.nodeid.startswith(prefix):
                return position
        return len(STARTED_FIRST)

    items.sort(key=rank)  # stable: collection order within a rank


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


def crossed(first, *others):
    """Every combination of the axes' values as ``pytest.param``s, half of them (or fewer)
    marked :data:`SLOW`: the fast tier runs each combination of ``others`` once, at the
    values of ``first`` in turn (the combination's indices summed, modulo ``len(first)``),
    so each pair of the other axes' values and each value of ``first`` still runs there.

    Parameters
    ----------
    first : sequence
        The axis the fast tier samples (a size, say).
    *others : sequence
        The axes the fast tier runs in full.

    Returns
    -------
    list of ``pytest.param``, with the values in the order of the axes
    """
    axes = (first, *others)
    cases = []
    for indices in itertools.product(*(range(len(axis)) for axis in axes)):
        fast = indices[0] == sum(indices[1:]) % len(first)
        values = [axis[index] for axis, index in zip(axes, indices)]
        name = "-".join(
            str(value) if isinstance(value, (int, float, str)) else f"params{index}"
            for value, index in zip(values, indices)
        )
        cases.append(pytest.param(*values, marks=[] if fast else [SLOW], id=name))
    return cases
