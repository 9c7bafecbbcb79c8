"""Binning primitive of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.binning`, ``BinMapper.transform``; CUDA:
``cuda/binning.cu``).

Raw features -> uint8 bins with a fitted ``BinMapper`` (docs/DESIGN.md, "Binning"):
a binary search of each value among its feature's edges, ``searchsorted(edges, x,
side='left')``, and the missing bin for NaN; rows in parallel. Float32 features are
read as they are (their float64 values are exact), so no float64 copy is made.
"""

import numpy as np

from ...core.dtypes import X_BINNED_DTYPE
from ...core.segments import offsets
from .jit import kernel, prange

__all__ = ["bin_features", "packed_edges"]


def packed_edges(bin_mapper):
    """``(edges, edge_offsets)``: every feature's edges end to end (float64) and
    feature ``f``'s slice ``edge_offsets[f] .. edge_offsets[f + 1] - 1`` (int64)."""
    edges = bin_mapper.bin_edges_
    packed = np.concatenate(edges).astype(np.float64) if len(edges) else np.zeros(0)
    return packed, offsets([len(e) for e in edges])


@kernel(parallel=True)
def _bin(X, edges, edge_offsets, missing_bin, out):
    n_rows, n_features = X.shape
    for row in prange(n_rows):
        for feature in range(n_features):
            value = X[row, feature]
            if value != value:
                out[row, feature] = missing_bin
                continue
            low = edge_offsets[feature]
            first = low
            high = edge_offsets[feature + 1]
            while low < high:  # first edge >= value
                middle = (low + high) >> 1
                if edges[middle] < value:
                    low = middle + 1
                else:
                    high = middle
            out[row, feature] = low - first


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
    edges, edge_offsets = packed_edges(bin_mapper)
    out = np.empty(X.shape, dtype=X_BINNED_DTYPE)
    _bin(X, edges, edge_offsets, int(bin_mapper.missing_bin), out)
    return out
