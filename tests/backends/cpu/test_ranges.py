"""Tests of gpuboost.backends.cpu.ranges: the threads' ranges of a batch of nodes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends.cpu.ranges import SNAP_DIVISOR, thread_ranges


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 500), min_size=1, max_size=40),
    n_threads=st.integers(1, 9),
)
def test_ranges_cover_the_batch_and_move_only_to_nearby_node_edges(sizes, n_threads):
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    total = int(offsets[-1])
    bounds = thread_ranges(offsets, n_threads)
    assert bounds.shape == (n_threads + 1,) and bounds[0] == 0 and bounds[-1] == total
    assert np.all(np.diff(bounds) >= 0)
    share = total // n_threads
    for thread in range(1, n_threads):
        ideal = thread * total // n_threads
        bound = int(bounds[thread])
        if bound != ideal:  # moved: to a node edge, and not far
            assert bound in offsets
            assert abs(bound - ideal) * SNAP_DIVISOR <= share
        elif ideal not in offsets:  # kept: no edge was near enough
            nearest = np.min(np.abs(offsets - ideal))
            assert nearest * SNAP_DIVISOR > share


def test_many_small_nodes_are_never_cut():
    offsets = np.arange(0, 6401, 100, dtype=np.int64)  # 64 nodes of 100 rows
    bounds = thread_ranges(offsets, 3)
    assert set(bounds.tolist()) <= set(offsets.tolist())


def test_one_large_node_is_cut_in_equal_ranges():
    bounds = thread_ranges(np.array([0, 1000], dtype=np.int64), 4)
    np.testing.assert_array_equal(bounds, [0, 250, 500, 750, 1000])
