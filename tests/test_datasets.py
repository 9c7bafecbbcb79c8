"""Tests of gpuboost.datasets: the HIGGS-like generator."""

import hashlib

import numpy as np
import pytest
from _platform import perturbed_platform

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


class _UniformOnly:
    """A generator that draws uniform doubles and nothing else (``normal``,
    ``lognormal``, ``uniform``, ``choice`` ... are AttributeErrors)."""

    def __init__(self, generator):
        self._generator = generator

    def random(self, size=None):
        return self._generator.random(size)


def test_higgs_like_data_is_the_same_with_another_platforms_functions(monkeypatch):
    """The same bytes with NumPy's and the C library's transcendental functions moved by
    one ulp (tests/_platform.py) and a random stream that gives uniform doubles only:
    nothing in the generator depends on the platform's ``exp`` / ``sin`` / ``tanh`` or on
    NumPy's ``normal``, which differ between CPUs (docs/DESIGN.md, "Platform-independent
    arithmetic")."""
    n_rows = 3000
    X, y = make_higgs_like(n_rows, n_features=30, seed=5)
    default_rng = np.random.default_rng
    with perturbed_platform(monkeypatch):
        monkeypatch.setattr(np.random, "default_rng", lambda s: _UniformOnly(default_rng(s)))
        X_again, y_again = make_higgs_like(n_rows, n_features=30, seed=5)
    assert X_again.tobytes() == X.tobytes() and y_again.tobytes() == y.tobytes()


#: SHA-256 of ``make_higgs_like(2000, n_features=30, seed=1)``'s X then y bytes: one value
#: for every machine, as the golden hashes (tests/test_golden.py). A change meant to alter
#: the data updates it and says so in its commit.
GOLDEN_DATA = "3cc1020fdbaa8255ef0d0b2e001d4283784a27d24e7b19575d6eccf8741404c0"


def test_higgs_like_data_golden_bytes():
    X, y = make_higgs_like(2000, n_features=30, seed=1)
    assert hashlib.sha256(X.tobytes() + y.tobytes()).hexdigest() == GOLDEN_DATA


def test_standard_normal_moments():
    """Box-Muller's values: mean 0, variance 1, normal tails (four standard errors)."""
    z = datasets._standard_normal(np.random.default_rng(2), 200_000)
    assert abs(z.mean()) < 4 / np.sqrt(z.size)
    assert abs(z.var() - 1.0) < 4 * np.sqrt(2 / z.size)
    assert abs(np.mean(np.abs(z) > 1.959964) - 0.05) < 4 * np.sqrt(0.05 * 0.95 / z.size)
