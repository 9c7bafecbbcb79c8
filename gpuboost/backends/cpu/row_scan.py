"""Split scan of small nodes straight from their rows (compiled CPU backend; the
definition, for every backend: ``Backend.find_best_splits_of_rows``, the histograms of
the nodes then the split scan).

Deep in a tree a node holds a few hundred rows but its histogram still has
``n_features * n_bins`` cells (172 KB for 28 features and 256 bins): building the
smaller child, subtracting it from the parent for the larger one and scanning both moves
about six such histograms through main memory per pair of children, where the rows
themselves are a few thousand cell updates. Here each thread builds one node's histogram
at a time in a scratch histogram of its own, which stays in its cache, scans it at once
(:func:`gpuboost.backends.cpu.split_scan.scan_node`: the features in order, the scan's
tie rule) and reuses it for its next node, zeroing only the cells its rows touched
where they are few (:func:`scan_segment`); no histogram is written to memory, and both
children of a pair are built from their rows, so no parent histogram is read.

The histogram sums are exact integers and the scan is the batch scan's per-node code, so
the records equal those of ``build_histograms`` + ``find_best_splits`` bit for bit.
"""

import threading

import numpy as np

from ...core.dtypes import HIST_FIELDS
from .histogram import WIDE_CELL_FIELDS, _accumulate, wide_zeros
from .jit import kernel, prange, sized, threads
from .split_scan import (
    INT_COLUMNS,
    bin_words,
    records_of,
    scan_arguments,
    scan_node,
    words_per_feature,
)

__all__ = [
    "find_best_splits_of_rows",
    "scan_segment",
    "clear_rows",
    "scratch_cells",
    "ROW_SCAN_MAX_ROWS_PER_CELL",
]

#: The parents whose children are scanned from their rows: at most this many rows per
#: histogram cell of one feature (``n_bins``), i.e. ``8 * n_bins`` rows (2048 for 255
#: bins). Building the larger child from its rows costs its rows' updates; the
#: subtraction it replaces, and the scan of two histograms from memory, cost about six
#: histograms' traffic: below this size the rows are cheaper (one thread, 28 uniform
#: features of 255 bins: 2.4x faster at 390 rows per parent, 1.7x at 1,560, even near
#: 3,000).
ROW_SCAN_MAX_ROWS_PER_CELL = 8


#: Nodes of fewer rows than this many per bin (``n_bins``) have their scan visit only
#: the bins their rows hold (:func:`scan_segment`), listed in a bitmap per feature, instead
#: of every bin of every feature.
LISTED_BINS_MAX_ROWS_PER_BIN = 0.5


@kernel
def clear_rows(cells, X_binned, sample_indices, start, stop, n_bins):
    """Zero the wide scratch histogram ``cells`` after the rows
    ``sample_indices[start:stop]`` were added to it: their cells only where they are
    fewer than the bins of a feature (a deep node touches a few cells of each feature),
    else every cell."""
    if stop - start >= n_bins:
        cells[:] = 0
        return
    n_features = X_binned.shape[1]
    for position in range(start, stop):
        row = sample_indices[position]
        for feature in range(n_features):
            cell = (feature * n_bins + np.int64(X_binned[row, feature])) * WIDE_CELL_FIELDS
            for field in range(HIST_FIELDS):
                cells[cell + field] = 0


_scratch = threading.local()


def scratch_cells(n_threads, n_features, n_bins):
    """Zeroed wide scratch histograms, one per thread ((n_threads, n_features * n_bins *
    WIDE_CELL_FIELDS) int64, rows 32-byte aligned), as :func:`scan_segment` takes them;
    kept per calling thread for the next call (:func:`scan_segment` leaves its cells
    zero)."""
    shape = (int(n_threads), int(n_features) * int(n_bins) * WIDE_CELL_FIELDS)
    cached = getattr(_scratch, "cells", None)
    if cached is None or cached.shape != shape:
        cached = _scratch.cells = wide_zeros(shape)
    return cached


@kernel
def scan_segment(
    X_binned,
    gradients,
    hessians,
    sample_indices,
    start,
    stop,
    n_bins,
    cells,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    feature_mask,
    use_mask,
    monotone,
    use_monotone,
    lower,
    upper,
    words,
    scratch_int,
    scratch_float,
    best_int,
    out_int,
    clear,
):
    """The best split of the rows ``sample_indices[start:stop]`` (one node): their
    histogram added into the zeroed wide scratch ``cells`` (n_features * n_bins *
    WIDE_CELL_FIELDS,), 32-byte aligned (:func:`scratch_cells`; one vector addition per
    row and feature, about a third faster than three scalar ones), scanned
    by :func:`~gpuboost.backends.cpu.split_scan.scan_node` (its arguments from
    ``scale_gradients`` on), and ``cells`` zeroed again (:func:`clear_rows`; with
    ``clear`` False the caller scans them further, then zeroes them); fills
    ``out_int`` and returns the gain. A node of fewer rows than
    :data:`LISTED_BINS_MAX_ROWS_PER_BIN` per bin lists the bins its rows hold in the
    scratch ``words`` ((n_features, words_per_feature(n_bins)) uint64, :func:`bin_words`)
    and the scan visits those only."""
    _accumulate(X_binned, gradients, hessians, sample_indices, start, stop, cells, n_bins, True)
    use_words = (stop - start) < LISTED_BINS_MAX_ROWS_PER_BIN * n_bins
    if use_words:
        bin_words(X_binned, sample_indices, start, stop, words)
    gain = scan_node(
        cells.reshape((X_binned.shape[1], n_bins, WIDE_CELL_FIELDS)),
        scale_gradients,
        scale_hessians,
        n_value_bins,
        missing_bin,
        reg_lambda,
        reg_alpha,
        max_delta_step,
        min_child_weight,
        min_data_in_leaf,
        gamma,
        feature_mask,
        use_mask,
        monotone,
        use_monotone,
        lower,
        upper,
        words,
        use_words,
        scratch_int,
        scratch_float,
        best_int,
        out_int,
    )
    if clear:
        clear_rows(cells, X_binned, sample_indices, start, stop, n_bins)
    return gain


@kernel(parallel=True)
def _scan_rows(
    X_binned,
    gradients,
    hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    feature_mask,
    use_mask,
    monotone,
    use_monotone,
    node_bounds,
    cells,
    out_int,
    out_gain,
):
    """Thread ``t`` of ``n_threads = len(cells)`` takes nodes ``t, t + n_threads, ...``:
    its scratch histogram ``cells[t]`` (:func:`scratch_cells`) holds one node at a time
    (:func:`scan_segment`), scanned into ``out_int[node]`` / ``out_gain[node]`` (OUT)."""
    n_nodes = begins.shape[0]
    n_features = X_binned.shape[1]
    n_threads = cells.shape[0]
    for thread in prange(n_threads):
        words = np.empty((n_features, words_per_feature(n_bins)), dtype=np.uint64)
        scratch_int = np.empty((4, n_bins), dtype=np.int64)
        scratch_float = np.empty((6, n_bins), dtype=np.float64)
        best_int = np.empty(5, dtype=np.int64)
        for node in range(thread, n_nodes, n_threads):
            out_gain[node] = scan_segment(
                X_binned,
                gradients,
                hessians,
                sample_indices,
                begins[node],
                ends[node],
                n_bins,
                cells[thread],
                scale_gradients,
                scale_hessians,
                n_value_bins,
                missing_bin,
                reg_lambda,
                reg_alpha,
                max_delta_step,
                min_child_weight,
                min_data_in_leaf,
                gamma,
                feature_mask[node if use_mask else 0],
                use_mask,
                monotone,
                use_monotone,
                node_bounds[node, 0] if use_monotone else -np.inf,
                node_bounds[node, 1] if use_monotone else np.inf,
                words,
                scratch_int,
                scratch_float,
                best_int,
                out_int[node],
                True,
            )


def find_best_splits_of_rows(
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    params,
    feature_mask=None,
    node_bounds=None,
):
    """Best split of every node of a batch, from the nodes' rows (no histogram kept).

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order  # IN
    quantized_gradients, quantized_hessians : ndarray of shape (n_rows,), int32  # IN
    sample_indices : ndarray of shape (n_samples,), int32  # IN
        Node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : sequence of int, length n_nodes
    n_bins, n_value_bins, missing_bin
        As for ``build_histograms`` and ``find_best_splits``.
    scale_gradients, scale_hessians : float
    params : SplitParams
    feature_mask : ndarray of shape (n_nodes, n_features), bool, optional
    node_bounds : ndarray of shape (n_nodes, 2), float64, optional

    Returns
    -------
    records : ndarray of shape (n_nodes,), SPLIT_RECORD_DTYPE  # OUT
        Those of ``find_best_splits`` on ``build_histograms`` of the same segments.
    """
    begins = np.ascontiguousarray(begins, dtype=np.int64).reshape(-1)
    ends = np.ascontiguousarray(ends, dtype=np.int64).reshape(-1)
    n_nodes = len(begins)
    out_int = np.empty((n_nodes, INT_COLUMNS), dtype=np.int64)
    out_gain = np.empty(n_nodes, dtype=np.float64)
    if n_nodes:
        sized(_scan_rows)(
            np.ascontiguousarray(X_binned),
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            int(n_bins),
            *scan_arguments(
                n_value_bins,
                missing_bin,
                scale_gradients,
                scale_hessians,
                params,
                n_nodes,
                feature_mask,
                node_bounds,
            ),
            scratch_cells(max(1, min(n_nodes, threads())), X_binned.shape[1], n_bins),
            out_int,
            out_gain,
        )
    return records_of(out_int, out_gain)
