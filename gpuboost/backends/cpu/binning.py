"""Binning primitive of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.binning`, ``BinMapper.transform``; CUDA:
``cuda/binning.cu``).

Raw features -> uint8 bins with a fitted ``BinMapper`` (docs/DESIGN.md, "Binning"):
``searchsorted(edges, x, side='left')`` of each value among its feature's edges,
computed as a two-level count (:func:`padded_edges`), and the missing bin for NaN; rows
in parallel. Float32 features are
read as they are (their float64 values are exact), so no float64 copy is made.
"""

import numpy as np

from ...core.dtypes import X_BINNED_DTYPE
from .jit import compiled_kernels_reason, kernel, prange, sized

__all__ = [
    "bin_features",
    "bin_dense",
    "padded_edges",
    "binned_layout",
    "entry_bin",
    "TRANSPOSE_TILE",
]


#: Edges per block of the two-level count (:func:`padded_edges`).
EDGE_BLOCK = 16


def padded_edges(bin_mapper):
    """The edges as the counting kernel reads them: ``(edges, pivots)``.

    ``edges`` (n_features, width) float64: feature ``f``'s edges, then +inf up to
    ``width``, a multiple of :data:`EDGE_BLOCK` with room for at least one +inf;
    ``pivots`` (n_features, width / EDGE_BLOCK): the last edge of every block.

    Because the edges are sorted, ``searchsorted(edges, x, side='left')`` is the number
    of edges below ``x``: the number of blocks whose pivot is below ``x`` (a block wholly
    below it), times the block size, plus the edges below ``x`` in the next block. Both
    counts are fixed-length loops of independent comparisons, which the compiler turns
    into vector compares, where a binary search is a chain of dependent loads (about 5x
    slower here). The +inf padding is below no value, NaN included, and keeps the
    second block in the feature's row.
    """
    edges = bin_mapper.bin_edges_
    longest = max((len(e) for e in edges), default=0)
    width = EDGE_BLOCK * (longest // EDGE_BLOCK + 1)
    padded = np.full((len(edges), width), np.inf)
    for feature, feature_edges in enumerate(edges):
        padded[feature, : len(feature_edges)] = feature_edges
    pivots = np.ascontiguousarray(padded[:, EDGE_BLOCK - 1 :: EDGE_BLOCK])
    return padded, pivots


@kernel(parallel=True)
def _bin(X, edges, pivots, missing_bin, out):
    n_rows, n_features = X.shape
    n_blocks = pivots.shape[1]
    for row in prange(n_rows):
        for feature in range(n_features):
            value = np.float64(X[row, feature])
            blocks = 0
            for block in range(n_blocks):
                blocks += 1 if pivots[feature, block] < value else 0
            first = blocks * EDGE_BLOCK
            below = 0
            for edge in range(first, first + EDGE_BLOCK):
                below += 1 if edges[feature, edge] < value else 0
            out[row, feature] = missing_bin if value != value else first + below


def bin_features(X, bin_mapper):
    """``bin_mapper.transform(X)``, compiled.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64 or float32  # IN
    bin_mapper : BinMapper
        Fitted, with ``n_features`` features.

    Returns
    -------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order  # OUT
    """
    if X.ndim != 2 or X.shape[1] != bin_mapper.n_features_:
        raise ValueError(
            f"X has shape {X.shape}, but the BinMapper was fitted with "
            f"{bin_mapper.n_features_} features."
        )
    if X.dtype != np.float32:
        X = np.asarray(X, dtype=np.float64)
    edges, pivots = padded_edges(bin_mapper)
    out = np.empty(X.shape, dtype=X_BINNED_DTYPE)
    sized(_bin, 10 * X.size)(X, edges, pivots, int(bin_mapper.missing_bin), out)
    return out


def bin_dense(X, bin_mapper):
    """``bin_mapper.transform(X)`` by the compiled kernel when the compiled CPU kernels
    are in use (:func:`gpuboost.backends.cpu.jit.compiled_kernels_reason`), else by the
    NumPy reference itself: the same bins either way. What ``Dataset.X_binned`` runs.
    """
    if compiled_kernels_reason() is None:
        return bin_features(X, bin_mapper)
    return bin_mapper.transform(X)


#: Rows and columns of one tile of :func:`binned_layout`'s transpose (64 x 64 bytes of
#: uint8 each way: both tiles stay in the L1 cache).
TRANSPOSE_TILE = 64


@kernel(parallel=True)
def _transpose(X, out):
    n_rows, n_columns = X.shape
    for tile in prange((n_rows + TRANSPOSE_TILE - 1) // TRANSPOSE_TILE):
        first_row = tile * TRANSPOSE_TILE
        end_row = min(first_row + TRANSPOSE_TILE, n_rows)
        for first_column in range(0, n_columns, TRANSPOSE_TILE):
            end_column = min(first_column + TRANSPOSE_TILE, n_columns)
            for column in range(first_column, end_column):
                for row in range(first_row, end_row):
                    out[column, row] = X[row, column]


def binned_layout(X_binned):
    """:func:`gpuboost.backends.numpy.binning.binned_layout` (the same arguments and
    entries) with the feature-major copy made by a tiled transpose in parallel, where
    NumPy's strided copy of a wide matrix runs at a fraction of the memory bandwidth
    (1.8 s for 1M rows x 420 bundles)."""
    X_binned = np.ascontiguousarray(X_binned)
    columns = np.empty((X_binned.shape[1], X_binned.shape[0]), dtype=X_binned.dtype)
    sized(_transpose, X_binned.size)(X_binned, columns)
    return {"X_binned": X_binned, "X_binned_columns": columns}


@kernel
def entry_bin(feature_edges, value, missing_bin):
    """The bin of one stored value, as ``BinMapper.transform_sparse`` bins it: the missing
    bin for NaN, else ``searchsorted(edges, value, side='left')``."""
    if np.isnan(value):
        return np.int64(missing_bin)
    return np.int64(np.searchsorted(feature_edges, value))
