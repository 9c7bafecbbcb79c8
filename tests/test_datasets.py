"""Tests of gpuboost.datasets: the HIGGS-like generator."""

import numpy as np
import pytest

from gpuboost import datasets
from gpuboost.datasets import make_higgs_like


def test_higgs_like_data_is_deterministic_and_chunked():
    n_rows = datasets.GENERATOR_CHUNK_ROWS + 1000  # two chunks
    X, y = make_higgs_like(n_rows, seed=3)
    assert X.shape == (n_rows, 28) and X.dtype == np.float64 and X.flags.c_contiguous
    X_again, y_again = make_higgs_like(n_rows, seed=3)
    np.testing.assert_array_equal(X, X_again)
    np.testing.assert_array_equal(y, y_again)
    X_prefix, y_prefix = make_higgs_like(500, seed=3)
    np.testing.assert_array_equal(X[:500], X_prefix)
    np.testing.assert_array_equal(y[:500], y_prefix)
    X_other, _ = make_higgs_like(500, seed=4)
    assert not np.array_equal(X_other, X_prefix)
    assert set(np.unique(y)) == {0.0, 1.0}
    assert 0.4 < y.mean() < 0.6
    assert np.all(np.isfinite(X))
    # Momenta positive, angles in [-pi, pi], three b-tag values, masses >= 0.
    lepton_pt, lepton_phi, jet_btag = X[:, 0], X[:, 2], X[:, 8]
    assert np.all(lepton_pt > 0)
    assert np.all(np.abs(lepton_phi) <= np.pi)
    assert set(np.unique(jet_btag)) == set(datasets.BTAG_VALUES)
    assert np.all(X[:, datasets.HIGGS_LOW_LEVEL_FEATURES :] >= 0)


def test_higgs_like_feature_counts():
    X_small, y_small = make_higgs_like(200, n_features=5, seed=0)
    X_full, y_full = make_higgs_like(200, seed=0)
    np.testing.assert_array_equal(X_small, X_full[:, :5])
    np.testing.assert_array_equal(y_small, y_full)
    X_wide, _ = make_higgs_like(200, n_features=30, seed=0)
    np.testing.assert_array_equal(X_wide[:, :28], X_full)
    assert X_wide.shape == (200, 30)
    with pytest.raises(ValueError):
        make_higgs_like(0)
