"""Shared small data sets (fixtures), and the tests folder on ``sys.path``.

The tests mirror the package (``tests/<subpackage>/test_<module>.py``) and are
imported in pytest's ``importlib`` mode (pyproject.toml), so test modules of the
same name in different folders do not clash. The helpers shared by several test
modules (``_parity``, ``_reference_data``, ``_timeouts``, ``_checkpoint_worker``,
``_objective_references``, ``_metric_references``, ``_cases``, ``_shap_references``)
live in this folder and are imported by name, which this file makes possible.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

from gpuboost.backends import get_backend
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.emulation import emulated_kernels

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


def _features(n_rows, n_features, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(n_rows) < 0.1, 1] = np.nan  # feature 1 has missing values
    return X, rng


@pytest.fixture
def regression_data():
    """(X, y): 400 rows, 5 features (feature 1 has NaN), y depends on features 0-2."""
    X, rng = _features(400, 5, seed=1)
    y = (
        2.0 * X[:, 0]
        + np.where(np.isnan(X[:, 1]), 1.5, np.sin(X[:, 1]))
        + 0.5 * (X[:, 2] > 0.3)
        + 0.1 * rng.normal(size=400)
    )
    return X, y


@pytest.fixture
def binary_data():
    """(X, y): 400 rows, 5 features (feature 1 has NaN), labels in {0, 1}."""
    X, rng = _features(400, 5, seed=2)
    logit = 2.0 * X[:, 0] - np.nan_to_num(X[:, 1]) + 0.3 * rng.normal(size=400)
    return X, (logit > 0).astype(np.float64)


@pytest.fixture
def multiclass_data():
    """(X, y): 450 rows, 4 features (feature 1 has NaN), labels in {0, 1, 2}."""
    X, rng = _features(450, 4, seed=3)
    score = X[:, 0] + 0.2 * rng.normal(size=450)
    return X, np.digitize(score, [-0.4, 0.4]).astype(np.float64)


@pytest.fixture
def emulated_cuda():
    """The CUDA backend on the CPU emulation of its kernels (``device='cuda'`` inside)."""
    with emulated_kernels():
        yield get_backend("cuda")


@pytest.fixture
def broken_histograms(monkeypatch):
    """The CUDA backend's histogram gradient sums one unit off: a primitive returning a
    wrong value (the model changes, training still runs), for the self-check tests."""
    build = CudaBackend.build_histograms

    def off_by_one(self, *args, **kwargs):
        histograms = build(self, *args, **kwargs)
        histograms[..., 0] += 1
        return histograms

    monkeypatch.setattr(CudaBackend, "build_histograms", off_by_one)
