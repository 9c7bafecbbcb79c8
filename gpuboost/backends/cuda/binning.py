"""Binning primitive of the CUDA backend (kernel ``bin_features`` of ``cuda/binning.cu``).

Raw float64 features are binned on the device, equal to ``BinMapper.transform``
(gpuboost.data.binning; NumPy version: :mod:`gpuboost.backends.numpy.binning`): one
thread per element in a grid-stride loop, a binary search over the feature's edges.
The Dataset's host copy ``X_binned`` is never computed. The edges of all features are
concatenated into one array copied to the device once per call.
"""

import numpy as np

from ...core.bin_edges import (
    canonical_values,
    distinct_midpoints,
    run_starts,
    sorted_bin_edges,
    weighted_bin_edges,
)
from ...core.dtypes import X_DTYPE
from ...core.profiling import nvtx_range
from ...core.segments import offsets
from .binned_rows import empty_binned, kernel_rows
from .launch import grid_stride_blocks, require_array

__all__ = [
    "bin_features",
    "bin_device_features",
    "device_bin_edges",
    "packed_edges",
    "BINNING_THREADS_PER_BLOCK",
    "BINNING_CHUNK_BYTES",
]

#: Kernel file (``cuda/binning.cu``) and its kernel.
KERNEL_FILE = "binning"
KERNEL = "bin_features"
WEIGHTED_RUNS_KERNEL = "weighted_run_totals"
#: Threads per block of ``bin_features`` (any 1-D launch shape works).
BINNING_THREADS_PER_BLOCK = 256
#: Largest chunk of raw float64 features copied to the device at once for binning.
BINNING_CHUNK_BYTES = 256 * 1024 * 1024
#: Largest block of sampled float64 values sorted at once for the bin edges
#: (:func:`device_bin_edges`: features are taken a block at a time).
EDGES_BLOCK_BYTES = 256 * 1024 * 1024


def packed_edges(bin_edges):
    """All features' bin edges concatenated, and the offsets of each feature's edges.

    Parameters
    ----------
    bin_edges : list of ndarray of float64
        ``BinMapper.bin_edges_``, one array per feature.

    Returns
    -------
    edges : ndarray of shape (n_edges + 1,), float64
        One spare entry keeps the array non-empty when no feature has an edge.
    edge_offsets : ndarray of shape (n_features + 1,), int64
        Feature ``f`` owns ``edges[edge_offsets[f]:edge_offsets[f + 1]]``.
    """
    edge_offsets = offsets([len(edges) for edges in bin_edges])
    edges = np.zeros(int(edge_offsets[-1]) + 1, dtype=X_DTYPE)
    if edge_offsets[-1]:
        edges[:-1] = np.concatenate(bin_edges)
    return edges, edge_offsets


def _binning_launcher(xp, launcher, n_rows, n_features, bin_mapper, what):
    """The output array of ``cuda/binning.cu`` and a function binning a chunk of rows
    into it: ``launch(features_chunk, first_row)``. Edges are copied to the device once."""
    if n_features != len(bin_mapper.bin_edges_):
        raise ValueError(
            f"{what} has {n_features} features, the BinMapper {len(bin_mapper.bin_edges_)}."
        )
    edges, edge_offsets = packed_edges(bin_mapper.bin_edges_)
    binned = empty_binned(xp, n_rows, n_features)  # the device layout (padded rows)
    if binned.size == 0:
        return binned, None
    rows, row_stride = kernel_rows(xp, binned)
    edges_device, offsets_device = xp.array(edges), xp.array(edge_offsets)

    def launch(chunk, first_row):
        launcher(
            KERNEL_FILE,
            KERNEL,
            grid_stride_blocks(chunk.size, BINNING_THREADS_PER_BLOCK),
            BINNING_THREADS_PER_BLOCK,
            (
                chunk,
                np.int64(chunk.shape[0]),
                np.int32(n_features),
                edges_device,
                offsets_device,
                np.int32(bin_mapper.missing_bin),
                np.int64(first_row),
                np.int64(row_stride),
                rows,
            ),
        )

    return binned, launch


def bin_features(xp, launcher, data, bin_mapper):
    """Bin host features on the device, copying them in chunks of at most
    :data:`BINNING_CHUNK_BYTES`.

    Parameters
    ----------
    xp : module
        ``cupy`` or the emulated device namespace.
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    data : ndarray of shape (n_rows, n_features), float64 (host)  # IN
    bin_mapper : BinMapper
        Fitted.

    Returns
    -------
    binned : xp array of shape (n_rows, n_features), uint8  # OUT
        Equal to ``bin_mapper.transform(data)``, in the device layout (rows padded:
        :func:`.binned_rows.empty_binned`).
    """
    data = np.ascontiguousarray(data, dtype=X_DTYPE)
    n_rows, n_features = data.shape
    binned, launch = _binning_launcher(xp, launcher, n_rows, n_features, bin_mapper, "data")
    if binned.size == 0:
        return binned
    chunk_rows = max(1, BINNING_CHUNK_BYTES // (n_features * data.itemsize))
    with nvtx_range("binning"):
        for start in range(0, n_rows, chunk_rows):
            stop = min(start + chunk_rows, n_rows)
            chunk = xp.array(data[start:stop])
            launch(chunk, start)
            del chunk
    return binned


def bin_device_features(xp, launcher, raw_features, bin_mapper):
    """Bin features already on the device, in one launch (tree_method='approx' re-bins
    the training data for every tree).

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    raw_features : xp array of shape (n_rows, n_features), float64, C order  # IN
    bin_mapper : BinMapper
        Fitted.

    Returns
    -------
    binned : xp array of shape (n_rows, n_features), uint8  # OUT
        Equal to ``bin_mapper.transform`` of the features, in the device layout
        (:func:`.binned_rows.empty_binned`).
    """
    require_array(xp, raw_features, X_DTYPE, "raw_features", ndim=2)
    n_rows, n_features = raw_features.shape
    binned, launch = _binning_launcher(xp, launcher, n_rows, n_features, bin_mapper, "raw_features")
    if binned.size:
        launch(raw_features, 0)
    return binned


def device_bin_edges(xp, launcher, features, sample_rows, weights, max_bin):
    """The bin edges of features on the device (``BinMapper.fit`` of them, bit for bit):
    the rows of the sample are gathered and sorted per feature on the device, and only the
    values the definition needs (at most ``4 * max_bin`` per feature, or the distinct
    values of a feature that has at most ``max_bin``) are copied to the host, so the
    bytes copied to the host do not grow with the rows.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    features : xp array of shape (n_rows, n_features), float32 or float64  # IN
        NaN is missing.
    sample_rows : ndarray of shape (n_sampled,), int64 (host)
        ``BinMapper.binning_rows``: the rows that shape the edges, increasing.
    weights : ndarray of shape (n_sampled,), float64 (host), or None
        Their positive weights (None: unit).
    max_bin : int

    Returns
    -------
    list of ndarray, float64 (host)
        Per feature, the edges of :func:`gpuboost.data.binning.sorted_bin_edges` (no
        weights) or :func:`~gpuboost.data.binning.weighted_bin_edges`.
    """
    n_features = int(features.shape[1])
    n_sampled = len(sample_rows)
    rows = xp.asarray(np.asarray(sample_rows, dtype=np.int64))
    device_weights = None if weights is None else xp.asarray(np.asarray(weights, X_DTYPE))
    block = max(1, EDGES_BLOCK_BYTES // max(1, 8 * n_sampled * (2 if weights is None else 4)))
    edges = []
    with nvtx_range("bin_edges"):
        for begin in range(0, n_features, block):
            end = min(begin + block, n_features)
            values = canonical_values(xp, features[rows, begin:end].astype(X_DTYPE)).T
            present = ~xp.isnan(values)
            counts = present.sum(axis=1).astype(np.int64)
            # Missing values last, whatever a sort does with NaN.
            values = xp.ascontiguousarray(xp.where(present, values, np.inf))
            host_counts = xp.asnumpy(counts)
            if weights is None:
                ordered = xp.sort(values, axis=1)
                for column in range(end - begin):
                    n = int(host_counts[column])
                    edges.append(sorted_bin_edges(xp, ordered[column, :n], max_bin))
                continue
            order = xp.argsort(values, axis=1, kind="stable")
            ordered = xp.ascontiguousarray(xp.take_along_axis(values, order, axis=1))
            ordered_weights = xp.ascontiguousarray(device_weights[order])
            totals = xp.empty(ordered.shape, dtype=X_DTYPE)
            launcher(
                KERNEL_FILE,
                WEIGHTED_RUNS_KERNEL,
                grid_stride_blocks(end - begin, BINNING_THREADS_PER_BLOCK),
                BINNING_THREADS_PER_BLOCK,
                (
                    ordered,
                    ordered_weights,
                    counts,
                    np.int64(n_sampled),
                    np.int32(end - begin),
                    totals,
                ),
            )
            for column in range(end - begin):
                n = int(host_counts[column])
                if n == 0:
                    edges.append(np.zeros(0, dtype=X_DTYPE))
                    continue
                starts = run_starts(xp, ordered[column, :n])
                if int(starts.shape[0]) <= max_bin:
                    edges.append(distinct_midpoints(ordered[column, starts]))
                    continue
                ends = xp.concatenate([starts[1:] - 1, xp.full(1, n - 1, dtype=starts.dtype)])
                edges.append(
                    weighted_bin_edges(xp, ordered[column, starts], totals[column, ends], max_bin)
                )
    return edges
