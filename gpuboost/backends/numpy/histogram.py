"""Histogram primitive of the NumPy backend (and its naive loop reference).

For every node in a batch and every feature and bin, the exact int64 sums of the
quantized gradients, quantized hessians and the row count (docs/DESIGN.md). Rows
of node ``i`` are ``sample_indices[begins[i]:ends[i]]``.
"""

import numpy as np

from ...core.dtypes import HIST_COUNT, HIST_DTYPE, HIST_FIELDS, HIST_GRAD, HIST_HESS
from ...core.segments import concat_ranges
from ...core.threads import thread_pool

__all__ = ["build_histograms", "build_histograms_naive"]

#: Largest joint (node, bin, bin) histogram built for a feature pair (cells); with
#: 256 bins this admits batches of up to two nodes (1 MiB per field).
JOINT_HISTOGRAM_MAX_CELLS = 2 * 256 * 256


def build_histograms(
    X_binned_columns,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    n_threads=1,
):
    """Histograms of a batch of nodes.

    Parameters
    ----------
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8
        The binned features, feature-major (the transpose of ``Dataset.X_binned``)
        so that gathering one feature's bins for a set of rows is contiguous.
    quantized_gradients, quantized_hessians : ndarray of shape (n_rows,), int32
    sample_indices : ndarray of shape (n_samples,), int32
        The row partition; node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : sequence of int, length n_nodes
    n_bins : int
        Histogram width (``max_bin + 1``; the last column is the missing bin).
    n_threads : int
        Worker threads for the feature loop (the result does not depend on it).

    Returns
    -------
    histograms : ndarray of shape (n_nodes, n_features, n_bins, 3), int64
        Last axis: (sum_gradients, sum_hessians, count).
    """
    n_features = X_binned_columns.shape[0]
    n_nodes = len(begins)
    positions, node_of_row = concat_ranges(begins, ends)
    if n_nodes == 1 and len(positions) == X_binned_columns.shape[1]:
        # One node holding every row, in some order: sums do not depend on the
        # order, so read the columns as stored instead of gathering them.
        rows = None
        gradients = quantized_gradients.astype(HIST_DTYPE)
        hessians = quantized_hessians.astype(HIST_DTYPE)
    else:
        rows = sample_indices[positions]
        gradients = quantized_gradients[rows].astype(HIST_DTYPE)
        hessians = quantized_hessians[rows].astype(HIST_DTYPE)
    # Accumulate feature-major, (feature, node, bin), so each feature owns one
    # contiguous block and its cells are indexed by the local key node * n_bins + bin.
    cells_per_feature = n_nodes * n_bins
    sum_gradients = np.zeros((n_features, cells_per_feature), dtype=HIST_DTYPE)
    sum_hessians = np.zeros((n_features, cells_per_feature), dtype=HIST_DTYPE)
    counts = np.empty((n_features, cells_per_feature), dtype=HIST_DTYPE)
    node_base = node_of_row * n_bins

    def bins_of(feature):
        column = X_binned_columns[feature]
        return column if rows is None else column.take(rows)

    def accumulate(feature):
        cells = node_base + bins_of(feature)
        np.add.at(sum_gradients[feature], cells, gradients)
        np.add.at(sum_hessians[feature], cells, hessians)
        counts[feature] = np.bincount(cells, minlength=cells_per_feature)

    def accumulate_pair(first):
        # One scatter pass for two features: cell (node, bin_a, bin_b) of a joint
        # histogram, then each feature's histogram is an exact integer marginal.
        second = first + 1
        cells = node_base * n_bins + bins_of(first).astype(np.intp) * n_bins + bins_of(second)
        joint_cells = n_nodes * n_bins * n_bins
        joint_shape = (n_nodes, n_bins, n_bins)
        for sums, values in ((sum_gradients, gradients), (sum_hessians, hessians), (counts, None)):
            if values is None:
                joint = np.bincount(cells, minlength=joint_cells).astype(HIST_DTYPE)
            else:
                joint = np.zeros(joint_cells, dtype=HIST_DTYPE)
                np.add.at(joint, cells, values)
            joint = joint.reshape(joint_shape)
            sums[first] = joint.sum(axis=2).ravel()
            sums[second] = joint.sum(axis=1).ravel()

    # Few nodes: the joint histogram of a feature pair is small enough to stay in
    # cache, and one pass replaces two.
    if n_nodes * n_bins * n_bins <= JOINT_HISTOGRAM_MAX_CELLS:
        tasks = [(accumulate_pair, f) for f in range(0, n_features - 1, 2)]
        if n_features % 2:
            tasks.append((accumulate, n_features - 1))
    else:
        tasks = [(accumulate, f) for f in range(n_features)]
    # Features are independent and the sums exact, so threads (NumPy releases the
    # GIL in take, add.at and bincount) cannot change the result.
    pool = thread_pool(n_threads)
    if pool is not None and len(tasks) > 1:
        list(pool.map(lambda task: task[0](task[1]), tasks))
    else:
        for function, feature in tasks:
            function(feature)
    histograms = np.empty((n_nodes, n_features, n_bins, HIST_FIELDS), dtype=HIST_DTYPE)
    for field, sums in (
        (HIST_GRAD, sum_gradients),
        (HIST_HESS, sum_hessians),
        (HIST_COUNT, counts),
    ):
        histograms[..., field] = sums.reshape(n_features, n_nodes, n_bins).transpose(1, 0, 2)
    return histograms


def build_histograms_naive(
    X_binned, quantized_gradients, quantized_hessians, sample_indices, begins, ends, n_bins
):
    """Reference loop version of :func:`build_histograms`.

    ``X_binned`` is row-major, shape (n_rows, n_features), as in ``Dataset``.
    """
    n_features = X_binned.shape[1]
    histograms = np.zeros((len(begins), n_features, n_bins, HIST_FIELDS), dtype=HIST_DTYPE)
    for node, (begin, end) in enumerate(zip(begins, ends)):
        for position in range(begin, end):
            row = int(sample_indices[position])
            for feature in range(n_features):
                cell = histograms[node, feature, int(X_binned[row, feature])]
                cell[HIST_GRAD] += int(quantized_gradients[row])
                cell[HIST_HESS] += int(quantized_hessians[row])
                cell[HIST_COUNT] += 1
    return histograms
