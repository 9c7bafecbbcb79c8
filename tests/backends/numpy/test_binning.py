"""Tests of gpuboost.backends.numpy.binning: the backend's binning against its naive loop,
and the layouts of a binned matrix."""

import numpy as np

from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.backends.numpy.binning import bin_features, bin_features_naive, binned_layout


def _features(seed, n_rows=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    X[rng.random(n_rows) < 0.2, 1] = np.nan
    X[rng.random(n_rows) < 0.05, 0] = np.inf
    X[:, 3] = np.round(X[:, 3])
    return X


def test_bin_features_matches_naive_and_dataset():
    X = _features(0)
    dataset = Dataset(X, label=np.zeros(len(X)), max_bin=15)
    other = _features(1)
    binned = bin_features(other, dataset.bin_mapper)
    assert binned.dtype == np.uint8 and binned.flags.c_contiguous
    np.testing.assert_array_equal(binned, bin_features_naive(other, dataset.bin_mapper))
    np.testing.assert_array_equal(bin_features(X, dataset.bin_mapper), dataset.X_binned)
    assert (binned == dataset.bin_mapper.missing_bin).any() and (binned == 0).any()


def test_binned_layout_and_rebin():
    X = _features(2)
    dataset = Dataset(X, label=np.ones(len(X)), max_bin=15)
    layout = binned_layout(dataset.X_binned)
    assert layout["X_binned"] is dataset.X_binned
    np.testing.assert_array_equal(layout["X_binned_columns"], dataset.X_binned.T)
    assert layout["X_binned_columns"].flags.c_contiguous
    backend = NumpyBackend()
    data = backend.prepare(dataset)
    mapper = Dataset(X[::-1] * 2.0, label=np.ones(len(X)), max_bin=15).bin_mapper
    rebinned = backend.rebin(data, backend.prepare_features(X), mapper)
    np.testing.assert_array_equal(rebinned.arrays["X_binned"], bin_features_naive(X, mapper))
    assert rebinned.label is data.label
