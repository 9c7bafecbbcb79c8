"""Tests of gpuboost.backends.cpu.jit: the kernel cache (a second process compiles
nothing; a read-only install caches in NUMBA_CACHE_DIR; a source change discards the
cached kernels)."""

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuboost.backends.cpu import jit

REPO_ROOT = Path(__file__).resolve().parents[3]

#: Prints "<kernels compiled> <kernels loaded from the cache>" after a few trainings.
_TRAIN_AND_COUNT = textwrap.dedent(
    """
    import importlib, pkgutil
    import numpy as np
    import gpuboost
    import gpuboost.backends.cpu as cpu
    from numba.core.dispatcher import Dispatcher

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X[::7, 1] = np.nan
    y = (X[:, 0] > 0).astype(float)
    train = gpuboost.Dataset(X[:200], label=y[:200])
    valid = gpuboost.Dataset(X[200:], label=y[200:], reference=train)
    for params in (
        {"objective": "binary:logistic", "subsample": 0.8},
        {"objective": "multi:softprob", "num_class": 2, "grow_policy": "lossguide"},
    ):
        booster = gpuboost.train(
            dict(params, device="cpu", max_depth=3), train, 3, evals=[(valid, "valid")],
            verbose_eval=False,
        )
        booster.predict(X)
    compiled = loaded = 0
    for module in pkgutil.iter_modules(cpu.__path__):
        for value in vars(importlib.import_module("gpuboost.backends.cpu." + module.name)).values():
            if isinstance(value, Dispatcher):
                compiled += sum(value.stats.cache_misses.values())
                loaded += sum(value.stats.cache_hits.values())
    print(compiled, loaded)
    """
)


def _run(script, env_changes, python_path=REPO_ROOT):
    env = dict(os.environ, PYTHONPATH=str(python_path), **env_changes)
    env.pop("GPUBOOST_CPU_KERNELS", None)
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=python_path,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.split()


def test_a_second_process_compiles_nothing():
    _run(_TRAIN_AND_COUNT, {})  # fills the cache if this checkout's is cold
    compiled, loaded = map(int, _run(_TRAIN_AND_COUNT, {}))
    assert compiled == 0
    assert loaded >= 10


def test_a_read_only_install_caches_in_numba_cache_dir(tmp_path):
    """The package folder is read-only (a system install): Numba writes its cache to
    NUMBA_CACHE_DIR instead, and the next process loads the kernel from there."""
    install = tmp_path / "site-packages"
    shutil.copytree(
        REPO_ROOT / "gpuboost", install / "gpuboost", ignore=shutil.ignore_patterns("__pycache__")
    )
    for path in [install, *install.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    cache = tmp_path / "numba-cache"
    script = textwrap.dedent(
        """
        import numpy as np
        from gpuboost.backends.cpu.binning import bin_features, _bin
        from gpuboost.data.binning import BinMapper
        X = np.arange(40.0).reshape(20, 2)
        assert (bin_features(X, BinMapper(max_bin=7).fit(X)) < 7).all()
        print(sum(_bin.stats.cache_misses.values()), sum(_bin.stats.cache_hits.values()))
        """
    )
    environment = {"NUMBA_CACHE_DIR": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        assert _run(script, environment, install) == ["1", "0"]
        assert any(cache.rglob("*.nbc"))
        assert _run(script, environment, install) == ["0", "1"]
    finally:
        for path in [install, *install.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_cached_kernels_of_other_sources_are_discarded(tmp_path):
    (tmp_path / "histogram._build-60.py311.nbi").write_bytes(b"index")
    (tmp_path / "histogram._build-60.py311.1.nbc").write_bytes(b"code")
    (tmp_path / "unrelated.pyc").write_bytes(b"bytecode")
    assert jit.discard_stale_kernel_cache(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gpuboost_kernels.fingerprint",
        "unrelated.pyc",
    ]
    (tmp_path / "histogram._build-60.py311.nbi").write_bytes(b"index")
    assert jit.discard_stale_kernel_cache(tmp_path) == 0  # built from these sources
    assert (tmp_path / "histogram._build-60.py311.nbi").exists()


@pytest.mark.parametrize("value", ["numpy", " NumPy ", "numba"])
def test_kernel_choice_values(value, monkeypatch):
    monkeypatch.setenv(jit.CPU_KERNELS_ENV_VAR, value)
    reason = jit.compiled_kernels_reason()
    assert (reason is None) == (value.strip().lower() == "numba")
