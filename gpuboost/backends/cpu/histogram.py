"""Histogram primitive of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.histogram`; CUDA: ``cuda/histogram.cu``).

One pass over the rows of every node of a batch, row-major: each row's quantized
gradient and hessian are added to the cell of its bin in every feature, as exact int64
sums (docs/DESIGN.md, "Quantization"), so the result is the reference's bit for bit
whatever the order of rows and threads.

Threads: the batch's positions (the nodes' segments laid end to end) are cut into one
equal range per thread. A node lying wholly inside a thread's range is summed by that
thread straight into the output; a node cut by a range boundary (at most two per thread)
is summed into the thread's own scratch histogram, and the scratch histograms are added
into the output afterwards. So the work is balanced by rows whatever the node sizes, and
no two threads ever write the same cell.
"""

import numpy as np

from ...core.dtypes import HIST_DTYPE, HIST_FIELDS
from .jit import kernel, prange, threads

__all__ = ["build_histograms", "build_children_histograms"]

#: Scratch histograms per thread: the node its range starts inside and the one it ends in.
_PARTIAL_NODES_PER_THREAD = 2


@kernel
def _accumulate(X_binned, gradients, hessians, sample_indices, start, stop, histogram, n_bins):
    """Add rows ``sample_indices[start:stop]`` to one node's flat histogram
    ``(n_features * n_bins * 3,)`` int64."""
    n_features = np.uint64(X_binned.shape[1])
    width = np.uint64(n_bins)
    fields = np.uint64(HIST_FIELDS)
    for position in range(start, stop):
        # Unsigned indices: no negative-index wraparound code in the inner loop.
        row = np.uint64(sample_indices[position])
        gradient = np.int64(gradients[row])
        hessian = np.int64(hessians[row])
        for feature in range(n_features):
            cell = (feature * width + np.uint64(X_binned[row, feature])) * fields
            histogram[cell] += gradient
            histogram[cell + np.uint64(1)] += hessian
            histogram[cell + np.uint64(2)] += np.int64(1)


@kernel(parallel=True)
def _build(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins, out, n_threads):
    """Fill ``out[:n_nodes]`` (n_nodes, n_cells) with the histograms of the segments."""
    n_nodes = begins.shape[0]
    n_cells = out.shape[1]
    for node in prange(n_nodes):
        out[node, :] = 0
    offsets = np.zeros(n_nodes + 1, dtype=np.int64)
    for node in range(n_nodes):
        offsets[node + 1] = offsets[node] + (ends[node] - begins[node])
    total = offsets[n_nodes]
    n_threads = max(1, min(n_threads, total))
    scratch = np.empty((n_threads, _PARTIAL_NODES_PER_THREAD, n_cells), dtype=HIST_DTYPE)
    scratch_node = np.full((n_threads, _PARTIAL_NODES_PER_THREAD), -1, dtype=np.int64)
    for thread in prange(n_threads):
        low = thread * total // n_threads
        high = (thread + 1) * total // n_threads
        node = np.searchsorted(offsets, low, side="right") - 1
        used = 0
        while node < n_nodes and offsets[node] < high:
            first = max(low, offsets[node])
            last = min(high, offsets[node + 1])
            if last > first:
                start = begins[node] + first - offsets[node]
                stop = begins[node] + last - offsets[node]
                if first == offsets[node] and last == offsets[node + 1]:
                    target = out[node]
                else:
                    scratch[thread, used, :] = 0
                    scratch_node[thread, used] = node
                    target = scratch[thread, used]
                    used += 1
                _accumulate(
                    X_binned, gradients, hessians, sample_indices, start, stop, target, n_bins
                )
            node += 1
    # Add the partial sums, each thread over its own range of cells.
    for thread in prange(n_threads):
        low = thread * n_cells // n_threads
        high = (thread + 1) * n_cells // n_threads
        for owner in range(n_threads):
            for slot in range(_PARTIAL_NODES_PER_THREAD):
                node = scratch_node[owner, slot]
                if node >= 0:
                    for cell in range(low, high):
                        out[node, cell] += scratch[owner, slot, cell]


@kernel(parallel=True)
def _subtract(parents, parent_rows, out, n_pairs):
    """``out[n_pairs + i] = parents[parent_rows[i]] - out[i]`` (exact int64)."""
    n_cells = out.shape[1]
    for pair in prange(n_pairs):
        parent = parents[parent_rows[pair]]
        for cell in range(n_cells):
            out[n_pairs + pair, cell] = parent[cell] - out[pair, cell]


def _segments(begins, ends):
    return (
        np.ascontiguousarray(begins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
    )


def build_histograms(
    X_binned, quantized_gradients, quantized_hessians, sample_indices, begins, ends, n_bins
):
    """Histograms of a batch of nodes (same contract as the NumPy reference).

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order
    quantized_gradients, quantized_hessians : ndarray of shape (n_rows,), int32
    sample_indices : ndarray of shape (n_samples,), int32
        The row partition; node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : sequence of int, length n_nodes
    n_bins : int

    Returns
    -------
    histograms : ndarray of shape (n_nodes, n_features, n_bins, 3), int64
    """
    begins, ends = _segments(begins, ends)
    n_features = X_binned.shape[1]
    out = np.empty((len(begins), n_features * n_bins * HIST_FIELDS), dtype=HIST_DTYPE)
    if len(begins):
        _build(
            X_binned,
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            n_bins,
            out,
            threads(),
        )
    return out.reshape(len(begins), n_features, n_bins, HIST_FIELDS)


def build_children_histograms(
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    parents,
    parent_rows,
):
    """The histograms of sibling pairs: the smaller children built, the larger ones
    derived from their parents by subtraction, in one batch.

    Parameters
    ----------
    X_binned, quantized_gradients, quantized_hessians, sample_indices, n_bins
        As for :func:`build_histograms`.
    begins, ends : sequence of int, length n_pairs
        The segments of the children to build.
    parents : ndarray of shape (n_parents, n_features, n_bins, 3), int64
        A batch holding the parents' histograms.
    parent_rows : sequence of int, length n_pairs
        Row of ``parents`` holding the parent of pair ``i``.

    Returns
    -------
    histograms : ndarray of shape (2 * n_pairs, n_features, n_bins, 3), int64
        Rows ``0 .. n_pairs - 1``: the built children; row ``n_pairs + i``:
        ``parents[parent_rows[i]] - histograms[i]``.
    """
    begins, ends = _segments(begins, ends)
    n_pairs = len(begins)
    n_features = X_binned.shape[1]
    n_cells = n_features * n_bins * HIST_FIELDS
    out = np.empty((2 * n_pairs, n_cells), dtype=HIST_DTYPE)
    if n_pairs:
        _build(
            X_binned,
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            n_bins,
            out,
            threads(),
        )
        _subtract(
            np.ascontiguousarray(parents).reshape(len(parents), n_cells),
            np.ascontiguousarray(parent_rows, dtype=np.int64).reshape(-1),
            out,
            n_pairs,
        )
    return out.reshape(2 * n_pairs, n_features, n_bins, HIST_FIELDS)
