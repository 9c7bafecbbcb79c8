"""Binning primitive of the NumPy backend (and its naive loop reference).

Raw float64 features -> uint8 bins with a fitted ``BinMapper``
(gpuboost.data.binning; docs/DESIGN.md, "Binning"), and the layouts of the binned
matrix that the other NumPy primitives read. The training data are binned by the
Dataset itself (``Dataset.X_binned``); :func:`bin_features` is what the backend's
``rebin`` does (tree_method='approx'). CUDA version: ``cuda/binning.cu``.
"""

import numpy as np

__all__ = ["bin_features", "bin_features_naive", "binned_layout"]


def bin_features(X, bin_mapper):
    """Bin raw features, ``bin_mapper.transform(X)``.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64  # IN
    bin_mapper : BinMapper
        Fitted.

    Returns
    -------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order  # OUT
    """
    return bin_mapper.transform(X)


def bin_features_naive(X, bin_mapper):
    """Reference loop version of :func:`bin_features` (``BinMapper.transform_naive``)."""
    return bin_mapper.transform_naive(X)


def binned_layout(X_binned):
    """The ``DeviceData.arrays`` entries of a row-major binned matrix.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order  # IN

    Returns
    -------
    dict
        ``'X_binned'``: the matrix itself (binned prediction, naive references);
        ``'X_binned_columns'``: a feature-major copy, shape (n_features, n_rows), so that
        gathering one feature's bins for a row set is contiguous (histograms,
        partition).
    """
    return {"X_binned": X_binned, "X_binned_columns": np.ascontiguousarray(X_binned.T)}
