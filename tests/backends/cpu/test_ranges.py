"""Tests of gpuboost.backends.cpu.ranges: the threads' ranges of a batch of nodes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends.cpu.ranges import (
    CUT_NODES_PER_THREAD,
    SNAP_DIVISOR,
    equal_ranges,
    segment_offsets,
    thread_pieces,
    thread_ranges,
)


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


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=30),
    gaps=st.lists(st.integers(0, 50), min_size=30, max_size=30),
    n_threads=st.integers(1, 9),
    snapped=st.booleans(),
)
def test_the_pieces_of_the_ranges_are_the_segments_cut_at_the_bounds(
    sizes, gaps, n_threads, snapped
):
    """The threads' pieces (equal or snapped ranges) put end to end are every segment in
    node order, each position once; a piece is whole exactly when it is its segment; a
    range holds at most CUT_NODES_PER_THREAD cut pieces. Segments lie anywhere in
    sample_indices (gaps between them)."""
    begins, ends, at = [], [], 0
    for size, gap in zip(sizes, gaps):
        begins.append(at + gap)
        ends.append(at + gap + size)
        at += gap + size
    begins, ends = np.array(begins, dtype=np.int64), np.array(ends, dtype=np.int64)
    offsets = segment_offsets(begins, ends)
    np.testing.assert_array_equal(offsets, np.concatenate([[0], np.cumsum(sizes)]))
    bounds = (thread_ranges if snapped else equal_ranges)(offsets, n_threads)
    if not snapped:
        np.testing.assert_array_equal(
            bounds, [t * int(offsets[-1]) // n_threads for t in range(n_threads + 1)]
        )
    covered = {node: [] for node in range(len(sizes))}
    for thread in range(n_threads):
        pieces = np.full((len(sizes), 4), -7, dtype=np.int64)
        count = thread_pieces(offsets, begins, bounds[thread], bounds[thread + 1], pieces)
        cut = 0
        for node, start, stop, whole in pieces[:count]:
            assert begins[node] <= start < stop <= ends[node]
            assert whole == (start == begins[node] and stop == ends[node])
            cut += not whole
            covered[node].append((int(start), int(stop)))
        assert cut <= CUT_NODES_PER_THREAD
    for node, spans in covered.items():
        positions = [p for start, stop in spans for p in range(start, stop)]
        assert positions == list(range(begins[node], ends[node]))
