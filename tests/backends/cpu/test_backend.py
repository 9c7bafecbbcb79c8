"""Tests of the compiled CPU backend as a whole: which backend ``device='cpu'`` gives
(``GPUBOOST_CPU_KERNELS``, the fallback without Numba), and that it trains the NumPy
reference's models byte for byte (the golden configurations on the reference)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import test_golden
from _platform import perturbed_platform

import gpuboost
from gpuboost.backends import CpuBackend, NumpyBackend, get_backend
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_cpu_device_runs_the_compiled_kernels(monkeypatch):
    monkeypatch.delenv(CPU_KERNELS_ENV_VAR, raising=False)
    assert type(get_backend("cpu")) is CpuBackend
    assert get_backend("auto") is get_backend("cpu")  # no GPU here


def test_the_numpy_reference_stays_selectable(monkeypatch):
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert type(get_backend("cpu")) is NumpyBackend


def test_an_unknown_kernel_choice_is_refused(monkeypatch):
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "fortran")
    with pytest.raises(ValueError, match="GPUBOOST_CPU_KERNELS='fortran'.*'numpy'"):
        get_backend("cpu")


def test_without_numba_the_numpy_backend_runs_with_one_warning():
    """A process where ``import numba`` fails: training works on the NumPy reference, and
    the fallback is reported once however many times the backend is asked for."""
    script = textwrap.dedent(
        """
        import sys, warnings
        sys.modules["numba"] = None  # makes `import numba` raise ImportError
        import numpy as np
        import gpuboost
        from gpuboost.backends import get_backend
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            X = np.arange(40.0).reshape(20, 2)
            dataset = gpuboost.Dataset(X, label=X[:, 0])
            for _ in range(3):
                gpuboost.train({"device": "cpu", "max_depth": 2}, dataset, 2)
            names = {type(get_backend("cpu")).__name__, type(get_backend("auto")).__name__}
        messages = [str(w.message) for w in caught if "Numba" in str(w.message)]
        print(names, len(messages))
        print(messages[0])
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    first, message = completed.stdout.splitlines()[:2]
    assert first == "{'NumpyBackend'} 1"
    assert "pip install numba" in message


@pytest.mark.parametrize("name", sorted(test_golden.CONFIGURATIONS))
def test_golden_models_on_the_numpy_reference(name, monkeypatch):
    """The golden hashes (tests/test_golden.py) hold for the compiled kernels there and for
    the NumPy reference here, with NumPy's and the C library's transcendental functions
    one ulp off and NumPy's float sums in another order (tests/_platform.py): both
    backends train the same bytes, whatever the platform's functions."""
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert type(get_backend("cpu")) is NumpyBackend
    with perturbed_platform(monkeypatch):
        assert test_golden._train_and_hash(name, "cpu") == test_golden.GOLDEN[name]


@pytest.mark.parametrize("nthread", [1, 2])
def test_compiled_and_reference_models_are_byte_identical_on_larger_data(nthread, monkeypatch):
    """Enough rows that histograms are summed in wide cells, cut across threads and
    partitioned in pieces, with missing values, weights and column sampling."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6000, 7))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 > 1).astype(np.float64)
    weight = rng.uniform(0.5, 2.0, size=len(y))
    params = {
        "objective": "binary:logistic",
        "max_depth": 7,
        "colsample_bynode": 0.8,
        "nthread": nthread,
    }

    def train():
        dataset = gpuboost.Dataset(X, label=y, weight=weight)
        return gpuboost.train(dict(params, device="cpu"), dataset, 5).save_raw()

    compiled = train()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert compiled == train()
