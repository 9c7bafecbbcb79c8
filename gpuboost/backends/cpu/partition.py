"""Row partition of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.partition`; CUDA: ``cuda/partition.cu``).

Splits the segments of a batch of nodes at once, stably: each node's rows going left
take the first positions of its segment and the others the rest, each in their order
(docs/DESIGN.md, "Row partition"); ``bin <= threshold_bin`` goes left and the missing
bin follows the node's default direction (:func:`gpuboost.backends.numpy.partition.goes_left`).

Threads: the batch's positions are cut into one range per thread, the boundaries moved
to node edges where that keeps the ranges about equal (:mod:`.ranges`). A node wholly
inside a range is partitioned by its thread in one pass (left rows written in place,
right rows to scratch, then copied back): with no node cut, that is the kernel's only
parallel loop. A node cut by range boundaries is split in pieces: every piece counts
its left rows, the counts give each piece its destinations, and the pieces are
scattered to scratch and copied back (two more parallel loops). The result does not
depend on the number of threads.
"""

import numpy as np

from ...core.dtypes import SAMPLE_INDEX_DTYPE
from .jit import kernel, prange, sized, threads
from .ranges import CUT_NODES_PER_THREAD, segment_offsets, thread_pieces, thread_ranges

__all__ = ["partition_rows", "partition_categorical", "goes_left", "split_by_set"]


@kernel
def goes_left(bin_, threshold_bin, default_left, missing_bin):
    """1 when the row goes left, else 0 (unsigned, for branch-free counting)."""
    return np.uint64(bin_ <= threshold_bin) | (
        np.uint64(bin_ == missing_bin) & np.uint64(default_left)
    )


# The loops below index with unsigned integers: no negative-index wraparound code.
@kernel
def _split_whole(
    column, sample_indices, start, stop, threshold, default_left, missing_bin, scratch
):
    """Partition one node's segment in one pass: left rows in place (never ahead of the
    read position), right rows to ``scratch[start:]`` and back after them; returns the
    number of left rows. Branch-free: each row is stored at both destinations and the
    counter of its side advances."""
    begin = np.uint64(start)
    write = begin
    n_right = np.uint64(0)
    for position in range(begin, np.uint64(stop)):
        row = sample_indices[position]
        left = goes_left(column[np.uint64(row)], threshold, default_left, missing_bin)
        sample_indices[write] = row
        scratch[begin + n_right] = row
        write += left
        n_right += np.uint64(1) - left
    for i in range(n_right):
        sample_indices[write + i] = scratch[begin + i]
    return np.int64(write - begin)


@kernel
def _count_left(column, sample_indices, start, stop, threshold, default_left, missing_bin):
    lefts = np.uint64(0)
    for position in range(np.uint64(start), np.uint64(stop)):
        lefts += goes_left(
            column[np.uint64(sample_indices[position])], threshold, default_left, missing_bin
        )
    return np.int64(lefts)


@kernel
def _scatter(
    column,
    sample_indices,
    start,
    stop,
    threshold,
    default_left,
    missing_bin,
    left_at,
    right_at,
    scratch,
):
    """Rows of a piece to ``scratch``: left ones from ``left_at`` on, right ones from
    ``right_at`` on, in order."""
    left_at = np.uint64(left_at)
    right_at = np.uint64(right_at)
    for position in range(np.uint64(start), np.uint64(stop)):
        row = sample_indices[position]
        left = goes_left(column[np.uint64(row)], threshold, default_left, missing_bin)
        scratch[left_at if left else right_at] = row
        left_at += left
        right_at += np.uint64(1) - left


@kernel(parallel=True)
def _partition(
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    missing_bin,
    n_left,
    scratch,
    n_threads,
):
    n_nodes = begins.shape[0]
    offsets = segment_offsets(begins, ends)
    n_left[:n_nodes] = 0
    total = offsets[n_nodes]
    n_threads = max(1, min(n_threads, total))
    piece_node = np.full((n_threads, CUT_NODES_PER_THREAD), -1, dtype=np.int64)
    piece_start = np.zeros((n_threads, CUT_NODES_PER_THREAD), dtype=np.int64)
    piece_stop = np.zeros((n_threads, CUT_NODES_PER_THREAD), dtype=np.int64)
    piece_lefts = np.zeros((n_threads, CUT_NODES_PER_THREAD), dtype=np.int64)
    bounds = thread_ranges(offsets, n_threads)
    for thread in prange(n_threads):
        pieces = np.empty((n_nodes, 4), dtype=np.int64)
        used = 0
        for piece in range(
            thread_pieces(offsets, begins, bounds[thread], bounds[thread + 1], pieces)
        ):
            node, start, stop = pieces[piece, 0], pieces[piece, 1], pieces[piece, 2]
            column = X_binned_columns[features[node]]
            threshold = threshold_bins[node]
            to_left = default_left[node]
            if pieces[piece, 3] == 1:
                n_left[node] = _split_whole(
                    column,
                    sample_indices,
                    start,
                    stop,
                    threshold,
                    to_left,
                    missing_bin,
                    scratch,
                )
            else:
                lefts = _count_left(
                    column, sample_indices, start, stop, threshold, to_left, missing_bin
                )
                piece_node[thread, used] = node
                piece_start[thread, used] = start
                piece_stop[thread, used] = stop
                piece_lefts[thread, used] = lefts
                used += 1
    if piece_node.max() < 0:
        return  # no node was cut: no more parallel loops
    # Cut nodes: their left totals, then each piece's first left and first right position
    # (pieces of a node are in thread order, which is position order).
    for thread in range(n_threads):
        for slot in range(CUT_NODES_PER_THREAD):
            node = piece_node[thread, slot]
            if node >= 0:
                n_left[node] += piece_lefts[thread, slot]
    piece_left_at = np.zeros((n_threads, CUT_NODES_PER_THREAD), dtype=np.int64)
    piece_right_at = np.zeros((n_threads, CUT_NODES_PER_THREAD), dtype=np.int64)
    lefts_before = np.zeros(n_nodes, dtype=np.int64)
    rights_before = np.zeros(n_nodes, dtype=np.int64)
    for thread in range(n_threads):
        for slot in range(CUT_NODES_PER_THREAD):
            node = piece_node[thread, slot]
            if node >= 0:
                lefts = piece_lefts[thread, slot]
                rights = piece_stop[thread, slot] - piece_start[thread, slot] - lefts
                piece_left_at[thread, slot] = begins[node] + lefts_before[node]
                piece_right_at[thread, slot] = begins[node] + n_left[node] + rights_before[node]
                lefts_before[node] += lefts
                rights_before[node] += rights
    for thread in prange(n_threads):
        for slot in range(CUT_NODES_PER_THREAD):
            node = piece_node[thread, slot]
            if node >= 0:
                column = X_binned_columns[features[node]]
                threshold = threshold_bins[node]
                to_left = default_left[node]
                _scatter(
                    column,
                    sample_indices,
                    piece_start[thread, slot],
                    piece_stop[thread, slot],
                    threshold,
                    to_left,
                    missing_bin,
                    piece_left_at[thread, slot],
                    piece_right_at[thread, slot],
                    scratch,
                )
    # Copy the scattered pieces back (all reads above are done): each thread copies the
    # positions of its own pieces.
    for thread in prange(n_threads):
        for slot in range(CUT_NODES_PER_THREAD):
            if piece_node[thread, slot] >= 0:
                for position in range(piece_start[thread, slot], piece_stop[thread, slot]):
                    sample_indices[position] = scratch[position]


def partition_rows(
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    missing_bin,
    n_threads=None,
):
    """Split several nodes' segments at once (same contract as the NumPy reference
    :func:`gpuboost.backends.numpy.partition.partition_rows`).

    Parameters
    ----------
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8  # IN
    sample_indices : ndarray of shape (n_samples,), int32  # IN, OUT
    begins, ends : ndarray of shape (n_nodes,), int
        The segments of the nodes being split (disjoint).
    features, threshold_bins : ndarray of shape (n_nodes,), int
    default_left : ndarray of shape (n_nodes,), bool (or 0/1)
    missing_bin : int
    n_threads : int, optional
        Ranges of positions the batch is cut into (default: the threads of the parallel
        kernels, :func:`gpuboost.backends.cpu.jit.threads`); does not change the result.

    Returns
    -------
    n_left : ndarray of shape (n_nodes,), int64  # OUT
    """
    begins = np.ascontiguousarray(begins, dtype=np.int64).reshape(-1)
    n_left = np.zeros(len(begins), dtype=np.int64)
    if len(begins) == 0:
        return n_left
    sized(_partition)(
        X_binned_columns,
        sample_indices,
        begins,
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(features, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(threshold_bins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(default_left, dtype=np.int64).reshape(-1),
        int(missing_bin),
        n_left,
        np.empty(len(sample_indices), dtype=SAMPLE_INDEX_DTYPE),
        threads() if n_threads is None else max(1, int(n_threads)),
    )
    return n_left


@kernel
def split_by_set(column, sample_indices, start, stop, left_set, default_left, missing_bin, scratch):
    """Partition one categorical split's segment in one pass, as :func:`_split_whole`
    does a numeric one: a row goes left when its bin's bit is set in ``left_set``
    (uint32 words), the missing bin by ``default_left``; left rows in place, right rows
    to ``scratch[start:]`` and back after them; returns the number of left rows."""
    n_words = left_set.shape[0]
    table = np.zeros(missing_bin + 1, dtype=np.uint64)
    for bin_ in range(min(missing_bin, n_words * 32)):
        table[bin_] = np.uint64((left_set[bin_ >> 5] >> np.uint32(bin_ & 31)) & 1)
    table[missing_bin] = np.uint64(default_left)
    begin = np.uint64(start)
    write = begin
    n_right = np.uint64(0)
    for position in range(begin, np.uint64(stop)):
        row = sample_indices[position]
        left = table[np.uint64(column[np.uint64(row)])]
        sample_indices[write] = row
        scratch[begin + n_right] = row
        write += left
        n_right += np.uint64(1) - left
    for i in range(n_right):
        sample_indices[write + i] = scratch[begin + i]
    return np.int64(write - begin)


@kernel(parallel=True)
def _partition_by_sets(
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    left_sets,
    default_left,
    missing_bin,
    scratch,
):
    """Each categorical split's segment in one pass (:func:`split_by_set`; splits over
    the threads)."""
    for split in prange(begins.shape[0]):
        split_by_set(
            X_binned_columns[features[split]],
            sample_indices,
            begins[split],
            ends[split],
            left_sets[split],
            default_left[split],
            missing_bin,
            scratch,
        )


def partition_categorical(
    X_binned_columns, sample_indices, begins, ends, features, left_sets, default_left, missing_bin
):
    """Split segments by categorical splits, in place and stably (same contract as the
    definition, :func:`gpuboost.backends.categorical.partition_categorical`, on the
    column-major bins).

    Parameters
    ----------
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8  # IN
    sample_indices : ndarray of shape (n_samples,), int32  # IN, OUT
    begins, ends, features : int sequences of shape (n_splits,)
        The segments (disjoint) and the splits' features.
    left_sets : ndarray of shape (n_splits, n_words), uint32
        The bins going left.
    default_left : bool sequence of shape (n_splits,)
    missing_bin : int
    """
    begins = np.ascontiguousarray(begins, dtype=np.int64).reshape(-1)
    if len(begins) == 0:
        return
    sized(_partition_by_sets)(
        X_binned_columns,
        sample_indices,
        begins,
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(features, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(left_sets, dtype=np.uint32),
        np.ascontiguousarray(default_left, dtype=np.int64).reshape(-1),
        int(missing_bin),
        np.empty(len(sample_indices), dtype=SAMPLE_INDEX_DTYPE),
    )
