"""The tiers' helpers (tests/_tiers.py): the longest tests start first; a crossed
parametrization runs every case once over both tiers."""

import itertools
from pathlib import Path
from types import SimpleNamespace

from _tiers import SLOW, STARTED_FIRST, crossed, longest_first

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_the_listed_tests_start_first_in_the_listed_order_and_the_rest_keep_theirs():
    names = ["tests/a.py::test_one", STARTED_FIRST[1] + "[x]", "tests/b.py::test_two",
             STARTED_FIRST[0], "tests/c.py::test_three"]  # fmt: skip
    items = [SimpleNamespace(nodeid=name) for name in names]
    longest_first(items)
    assert [item.nodeid for item in items] == [
        STARTED_FIRST[0],
        STARTED_FIRST[1] + "[x]",
        "tests/a.py::test_one",
        "tests/b.py::test_two",
        "tests/c.py::test_three",
    ]


def test_every_listed_prefix_names_a_test_that_exists():
    """A renamed test would silently drop out of the order: each prefix's file exists
    and defines a test function whose name starts with the prefix's function part."""
    for prefix in STARTED_FIRST:
        path, _, function = prefix.partition("::")
        source = (REPO_ROOT / path).read_text()
        assert f"def {function}" in source, prefix


def test_crossed_runs_each_pair_of_the_other_axes_once_in_the_fast_tier():
    rows, params, variants = [700, 6000], [{"a": 1}, {"b": 2}, {"c": 3}], ["x", "y", "z", "w"]
    cases = crossed(rows, params, variants)
    values = [tuple(case.values) for case in cases]
    assert sorted(map(repr, values)) == sorted(
        map(repr, itertools.product(rows, params, variants))
    )  # every combination, once
    fast = [case.values for case in cases if SLOW not in case.marks]
    assert sorted(repr(v[1:]) for v in fast) == sorted(
        map(repr, itertools.product(params, variants))
    )  # each (params, variant) pair once in the fast tier
    assert {v[0] for v in fast} == set(rows)  # at every row count
    assert len({case.id for case in cases}) == len(cases)
    assert cases[0].id == "700-params0-x"
