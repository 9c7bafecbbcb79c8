"""Row partition primitive of the NumPy backend (and its naive loop reference).

Node ``i`` owns ``sample_indices[begin:end]`` (docs/DESIGN.md, "Row partition").
Splitting is stable: the rows going left take the first positions of the
segment and the rows going right the rest, each in their original order.
CUDA version: ``cuda/partition.cu``.
"""

import numpy as np

from ...core.segments import concat_ranges
from ...core.threads import thread_pool

__all__ = [
    "goes_left",
    "partition_rows",
    "partition_rows_threaded",
    "partition_rows_naive",
    "PARALLEL_PARTITION_MIN_ROWS",
]

#: Partitions of fewer rows run on one thread (thread hand-off costs more).
PARALLEL_PARTITION_MIN_ROWS = 1 << 16


def goes_left(bins, threshold_bin, default_left, missing_bin):
    """Whether rows with these bins go to the left child (elementwise).

    ``bin <= threshold_bin`` goes left; the missing bin follows ``default_left``.
    """
    return (bins <= threshold_bin) | ((bins == missing_bin) & default_left)


def partition_rows(
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    missing_bin,
):
    """Split several nodes' segments at once.

    Parameters
    ----------
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8  # IN
    sample_indices : ndarray of shape (n_samples,), int32  # IN, OUT
        Modified in place: every listed segment is reordered.
    begins, ends : ndarray of shape (n_nodes,), int
        The segments of the nodes being split (disjoint).
    features, threshold_bins : ndarray of shape (n_nodes,), int
    default_left : ndarray of shape (n_nodes,), bool
    missing_bin : int

    Returns
    -------
    n_left : ndarray of shape (n_nodes,), int64  # OUT
        Rows sent to each node's left child.
    """
    n_nodes = len(begins)
    if n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    # Visit the nodes grouped by split feature, so each feature's column is
    # gathered in one contiguous pass.
    order = np.argsort(np.asarray(features, dtype=np.int64), kind="stable")
    begins = np.asarray(begins, dtype=np.int64)[order]
    lengths = np.asarray(ends, dtype=np.int64)[order] - begins
    features = np.asarray(features, dtype=np.int64)[order]
    positions, _ = concat_ranges(begins, begins + lengths)
    rows = sample_indices[positions]
    segment_starts = np.cumsum(lengths) - lengths
    bins = np.empty(len(rows), dtype=X_binned_columns.dtype)
    group_starts = np.flatnonzero(np.r_[True, features[1:] != features[:-1]])
    group_ends = np.r_[group_starts[1:], n_nodes]
    for first, last in zip(group_starts, group_ends):
        start, stop = segment_starts[first], segment_starts[last - 1] + lengths[last - 1]
        bins[start:stop] = X_binned_columns[features[first]].take(rows[start:stop])
    left = goes_left(
        bins,
        np.repeat(np.asarray(threshold_bins)[order].astype(bins.dtype), lengths),
        np.repeat(np.asarray(default_left, dtype=bool)[order], lengths),
        missing_bin,
    )
    # Destination of each row: lefts fill the segment from its start in order,
    # rights follow the lefts in order. With L = inclusive running count of lefts:
    # left rows go to begin + (L - L_before_segment) - 1, right rows to
    # begin + n_left + (offset_in_segment - (L - L_before_segment)).
    lefts_through = np.cumsum(left, dtype=np.int64)
    lefts_padded = np.concatenate(([0], lefts_through))
    lefts_before = lefts_padded[segment_starts]
    n_left_sorted = lefts_padded[segment_starts + lengths] - lefts_before
    left_base = np.repeat(begins - lefts_before - 1, lengths)
    right_base = np.repeat(begins + n_left_sorted - segment_starts + lefts_before, lengths)
    destination = np.where(
        left,
        left_base + lefts_through,
        right_base + np.arange(len(rows), dtype=np.int64) - lefts_through,
    )
    sample_indices[destination] = rows
    n_left = np.empty(n_nodes, dtype=np.int64)
    n_left[order] = n_left_sorted
    return n_left


def partition_rows_threaded(
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    missing_bin,
    n_threads,
):
    """:func:`partition_rows` with the nodes split among ``n_threads`` threads.

    Node segments are disjoint, so groups of nodes of similar row counts are partitioned
    concurrently; the result does not depend on ``n_threads``. Batches of fewer than
    :data:`PARALLEL_PARTITION_MIN_ROWS` rows, or of one node, run on the calling thread.
    Same parameters as :func:`partition_rows` (``begins`` .. ``default_left`` as
    ndarrays), plus ``n_threads`` (int); returns nothing.
    """
    pool = thread_pool(n_threads)
    n_rows = int(np.sum(np.asarray(ends) - np.asarray(begins)))
    if pool is None or len(begins) < 2 or n_rows < PARALLEL_PARTITION_MIN_ROWS:
        partition_rows(
            X_binned_columns,
            sample_indices,
            begins,
            ends,
            features,
            threshold_bins,
            default_left,
            missing_bin,
        )
        return
    lengths = np.asarray(ends) - np.asarray(begins)
    group_of_node = np.minimum(np.cumsum(lengths) - lengths, n_rows - 1) * n_threads // n_rows
    groups = [np.flatnonzero(group_of_node == g) for g in range(n_threads)]
    list(
        pool.map(
            lambda nodes: partition_rows(
                X_binned_columns,
                sample_indices,
                begins[nodes],
                ends[nodes],
                features[nodes],
                threshold_bins[nodes],
                default_left[nodes],
                missing_bin,
            ),
            [nodes for nodes in groups if len(nodes)],
        )
    )


def partition_rows_naive(
    X_binned, sample_indices, begins, ends, features, threshold_bins, default_left, missing_bin
):
    """Reference loop version of :func:`partition_rows` (``X_binned`` row-major)."""
    n_left = np.zeros(len(begins), dtype=np.int64)
    for node, (begin, end) in enumerate(zip(begins, ends)):
        left_rows, right_rows = [], []
        for position in range(begin, end):
            row = int(sample_indices[position])
            bin_ = int(X_binned[row, features[node]])
            is_left = bin_ <= threshold_bins[node] or (bin_ == missing_bin and default_left[node])
            (left_rows if is_left else right_rows).append(row)
        sample_indices[begin:end] = left_rows + right_rows
        n_left[node] = len(left_rows)
    return n_left
