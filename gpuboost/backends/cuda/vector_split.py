"""Vector-leaf split scan on the CUDA backend (``cuda/vector_split.cu``).

The definition is :func:`gpuboost.core.vector_split.find_best_vector_splits`; the compiled
CPU backend's :mod:`gpuboost.backends.cpu.vector_split` runs the same candidate loop. Two
launches: ``vector_split_prefix`` (a thread per (node, feature, field): the exact int64
running sums over the bins) and ``vector_split_pairs`` (a thread per (node, feature)
pair: its candidates in the definition's order, the gain summed over the outputs, the
first best). The node sums are the definition's
(:func:`~gpuboost.core.vector_split.node_fields`, on the device), the parents' scores and
each node's first best feature the host's (NumPy:
:func:`~gpuboost.core.vector_split.node_scores`,
:func:`~gpuboost.core.vector_split.table_of_pairs`). Scales that are not
powers of two, and batches without a candidate, take the definition.
"""

import numpy as np

from ...core.array import to_numpy
from ...core.quantize import is_power_of_two
from ...core.vector_split import find_best_vector_splits as scan_in_arrays
from ...core.vector_split import node_fields, node_scores, scan_candidates, table_of_pairs
from .launch import ceil_div
from .split_scan import gain_scalars

__all__ = ["find_best_vector_splits", "VECTOR_SPLIT_THREADS_PER_BLOCK"]

#: Kernel file (``cuda/vector_split.cu``) and its kernels.
KERNEL_FILE = "vector_split"
PREFIX_KERNEL = "vector_split_prefix"
PAIRS_KERNEL = "vector_split_pairs"
#: Threads per block of both kernels (``VECTOR_SPLIT_MAX_THREADS``, their
#: ``__launch_bounds__``).
VECTOR_SPLIT_THREADS_PER_BLOCK = 128


def find_best_vector_splits(
    xp, launcher, histograms, scales, n_value_bins, missing_bin, params, feature_mask
):
    """The definition's table of vector-leaf histograms (host arrays), from the kernels.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    histograms : OutputHistograms  # IN
        Device arrays.
    scales, n_value_bins, missing_bin, params, feature_mask
        As for :func:`gpuboost.core.vector_split.find_best_vector_splits`.
    """
    n_outputs = histograms.n_outputs
    cells = xp.ascontiguousarray(histograms.cells)
    counts = xp.ascontiguousarray(histograms.counts)
    n_nodes, n_features, n_bins, width = cells.shape
    n_value_bins = np.asarray(n_value_bins, dtype=np.int64)
    n_candidates = scan_candidates(n_value_bins, missing_bin)
    if (
        not n_nodes
        or not n_features
        or n_candidates <= 0
        or not all(is_power_of_two(g) and is_power_of_two(h) for g, h in scales)
    ):
        return scan_in_arrays(
            xp, histograms, scales, n_value_bins, missing_bin, params, feature_mask
        )
    parents = to_numpy(node_fields(xp, histograms))
    n_pairs = n_nodes * n_features
    prefix_cells = xp.empty_like(cells)
    prefix_counts = xp.empty_like(counts)
    launcher(
        KERNEL_FILE,
        PREFIX_KERNEL,
        ceil_div(n_pairs * (width + 1), VECTOR_SPLIT_THREADS_PER_BLOCK),
        VECTOR_SPLIT_THREADS_PER_BLOCK,
        (
            cells,
            counts,
            np.int64(n_pairs),
            np.int32(n_bins),
            np.int32(width),
            prefix_cells,
            prefix_counts,
        ),
    )
    use_mask = feature_mask is not None
    mask = (
        xp.asarray(np.ascontiguousarray(feature_mask, dtype=np.uint8))
        if use_mask
        else xp.zeros(1, dtype=np.uint8)
    )
    best_gain = xp.empty((n_nodes, n_features), dtype=np.float64)
    best_bin = xp.empty((n_nodes, n_features), dtype=np.int64)
    best_direction = xp.empty((n_nodes, n_features), dtype=np.int64)
    best_left = xp.zeros((n_nodes, n_features, 3 * n_outputs), dtype=np.int64)
    launcher(
        KERNEL_FILE,
        PAIRS_KERNEL,
        ceil_div(n_pairs, VECTOR_SPLIT_THREADS_PER_BLOCK),
        VECTOR_SPLIT_THREADS_PER_BLOCK,
        (
            cells,
            counts,
            prefix_cells,
            prefix_counts,
            np.int32(n_nodes),
            np.int32(n_features),
            np.int32(n_bins),
            np.int32(width),
            np.int32(n_outputs),
            xp.asarray(np.array([1.0 / g for g, _ in scales])),
            xp.asarray(np.array([1.0 / h for _, h in scales])),
            xp.asarray(n_value_bins.astype(np.int32)),
            np.int32(missing_bin),
            np.int32(n_candidates),
            mask,
            np.int32(use_mask),
            xp.asarray(parents),
            xp.asarray(node_scores(np, parents, scales, params)),
            *gain_scalars(params),
            best_gain,
            best_bin,
            best_direction,
            best_left,
        ),
    )
    return table_of_pairs(
        parents,
        to_numpy(best_gain),
        to_numpy(best_bin),
        to_numpy(best_direction),
        to_numpy(best_left),
        to_numpy(counts[:, :, missing_bin] > 0),
    )
