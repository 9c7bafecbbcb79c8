"""Row partition primitive of the NumPy backend (and its naive loop reference).

Node ``i`` owns ``sample_indices[begin:end]`` (docs/DESIGN.md, "Row partition").
Splitting is stable: the rows going left take the first positions of the
segment and the rows going right the rest, each in their original order.
"""
import numpy as np

from .histogram import concat_ranges

__all__ = ["goes_left", "partition_rows", "partition_rows_naive"]


def goes_left(bins, threshold_bin, default_left, missing_bin):
    """Whether rows with these bins go to the left child (elementwise).

    ``bin <= threshold_bin`` goes left; the missing bin follows ``default_left``.
    """
    return (bins <= threshold_bin) | ((bins == missing_bin) & default_left)


def partition_rows(X_binned_columns, sample_indices, begins, ends, features, threshold_bins,
                   default_left, missing_bin):
    """Split several nodes' segments at once.

    Parameters
    ----------
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8
    sample_indices : ndarray of shape (n_samples,), int32
        Modified in place: every listed segment is reordered.
    begins, ends : ndarray of shape (n_nodes,), int
        The segments of the nodes being split (disjoint).
    features, threshold_bins : ndarray of shape (n_nodes,), int
    default_left : ndarray of shape (n_nodes,), bool
    missing_bin : int

    Returns
    -------
    n_left : ndarray of shape (n_nodes,), int64
        Rows sent to each node's left child.
    """
    begins = np.asarray(begins, dtype=np.int64)
    n_nodes = len(begins)
    if n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    positions, node_of_row = concat_ranges(begins, ends)
    rows = sample_indices[positions]
    features = np.asarray(features, dtype=np.int64)
    bins = X_binned_columns[features[node_of_row], rows]
    left = goes_left(bins, np.asarray(threshold_bins)[node_of_row],
                     np.asarray(default_left, dtype=bool)[node_of_row], missing_bin)
    lengths = np.asarray(ends, dtype=np.int64) - begins
    segment_starts = np.cumsum(lengths) - lengths
    lefts_through = np.cumsum(left, dtype=np.int64)           # inclusive prefix count
    lefts_before_segment = np.concatenate(([0], lefts_through))[segment_starts]  # exclusive
    lefts_in_segment_through = lefts_through - lefts_before_segment[node_of_row]
    n_left = np.bincount(node_of_row, weights=left, minlength=n_nodes).astype(np.int64)
    offset_in_segment = np.arange(len(rows), dtype=np.int64) - segment_starts[node_of_row]
    destination = np.where(
        left,
        begins[node_of_row] + lefts_in_segment_through - 1,
        begins[node_of_row] + n_left[node_of_row] + (offset_in_segment - lefts_in_segment_through))
    sample_indices[destination] = rows
    return n_left


def partition_rows_naive(X_binned, sample_indices, begins, ends, features, threshold_bins,
                         default_left, missing_bin):
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
