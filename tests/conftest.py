"""Shared small data sets (fixtures), and the tests folder on ``sys.path``.

The tests mirror the package (``tests/<subpackage>/test_<module>.py``) and are
imported in pytest's ``importlib`` mode (pyproject.toml), so test modules of the
same name in different folders do not clash. The helpers shared by several test
modules (``_parity``, ``_reference_data``, ``_timeouts``, ``_checkpoint_worker``,
``_objective_references``, ``_metric_references``, ``_cases``, ``_shap_references``)
live in this folder and are imported by name, which this file makes possible.

Two tiers (issue 27, README "Quick setup"): ``python -m pytest -q`` runs every test not
marked ``slow`` (pyproject.toml's ``addopts`` holds ``-m "not slow"``), on one
pytest-xdist worker per core (``-n auto``); ``python -m pytest -q -m slow`` runs the slow
tier: the sanitizer over the CUDA kernels, the large parity matrices, and every test whose
small sibling runs in the fast tier. The plugin ``_warm_up`` builds the compiled kernels
on every core before the workers start, and ``_compile_report`` prints what the run
spent in Numba and g++.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuboost.backends import get_backend
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.backends.emulation.launcher import WORKERS_ENV_VAR

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from _tiers import longest_first  # noqa: E402  (from the tests folder, on sys.path now)

#: pytest rewrites every test module's asserts when it imports it, and caches the result
#: as bytecode (``__pycache__``, git-ignored) unless bytecode writing is off, as our
#: Dockerfile and many CI images turn it off (PYTHONDONTWRITEBYTECODE). Without the cache
#: each xdist worker of every run rewrites the ~150 modules again: 12.7 s of collection
#: instead of 5.0 s ("AMD EPYC", 2026-12-01). This process then writes the bytecode of
#: what it imports from the checkout (the tests, an editable gpuboost) too; the child
#: processes the tests start keep the caller's setting.
sys.dont_write_bytecode = False

pytest_plugins = ["_compile_report", "_warm_up"]

#: The marker expression of the fast tier (pyproject.toml's addopts).
FAST_TIER = "not slow"


def pytest_configure(config):
    """The suite shares the cores: with pytest-xdist's workers, and with the processes its
    tests start (Dask workers, the emulation's threads, child trainings). So Numba's
    OpenMP threads sleep when they wait instead of spinning: a spinning thread holds a
    core another process needs, and a parallel loop then waits for a descheduled thread
    (docs/guide/profiling.md, "CPU training on a busy machine": a 400-row training took
    6.7 s instead of 0.05 s beside one busy process). In an xdist worker of the fast
    tier, the emulation runs each launch on one OS thread (the other cores run other
    tests); the slow tier keeps one emulation thread per core, so that blocks and warps
    run truly concurrently there. Settings made by the caller are kept."""
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return
    if config.getoption("markexpr") == FAST_TIER:
        os.environ.setdefault(WORKERS_ENV_VAR, "1")


def pytest_collection_modifyitems(config, items):
    """The longest tests start first (tests/_tiers.py, ``STARTED_FIRST``), so that the
    xdist workers finish together."""
    longest_first(items)


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
