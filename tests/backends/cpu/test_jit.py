"""Tests of gpuboost.backends.cpu.jit: the kernel cache (a second process compiles
nothing; a read-only install caches in NUMBA_CACHE_DIR; a source change discards the
cached kernels) and the serial twins of the parallel kernels (same bits)."""

import ast
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cpu import jit

REPO_ROOT = Path(__file__).resolve().parents[3]

#: Prints "<kernels compiled> <kernels loaded from the cache>" after a few trainings.
_TRAIN_AND_COUNT = textwrap.dedent(
    """
    import numpy as np
    import gpuboost
    from gpuboost.backends.cpu.jit import all_kernels

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
    compiled = sum(sum(k.stats.cache_misses.values()) for k in all_kernels())
    loaded = sum(sum(k.stats.cache_hits.values()) for k in all_kernels())
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
        used = _bin.serial  # 40 values: the serial twin (jit.sized)
        print(sum(used.stats.cache_misses.values()), sum(used.stats.cache_hits.values()))
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


def _module_level_imports(statements):
    """The ``from ... import`` statements run when the module is imported: at module
    level, in top-level ``try`` and ``if`` blocks, but not under ``if TYPE_CHECKING``
    nor in functions (whose imports make no module global a kernel could read)."""
    for node in statements:
        if isinstance(node, ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from _module_level_imports(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            handlers = [statement for handler in node.handlers for statement in handler.body]
            yield from _module_level_imports(node.body + handlers + node.orelse)


def _imported_gpuboost_modules(path, gpuboost_dir):
    """The gpuboost modules (files) ``path`` imports from when it is imported, package
    ``__init__`` files aside (set of Path)."""
    package = path.parent
    found = set()
    for node in _module_level_imports(ast.parse(path.read_text()).body):
        if node.level:
            base = package.parents[node.level - 2] if node.level > 1 else package
        elif (node.module or "").split(".")[0] == "gpuboost":
            base = gpuboost_dir.parent
        else:
            continue
        module = base.joinpath(*(node.module or "").split(".")) if node.module else base
        for alias in node.names:  # `from .package import module`
            if (module / f"{alias.name}.py").is_file():
                found.add(module / f"{alias.name}.py")
        if module.with_suffix(".py").is_file():
            found.add(module.with_suffix(".py"))
    return found


def test_the_kernel_fingerprint_covers_every_module_the_kernels_import():
    """A kernel holds the values of the globals it read when it was compiled, from any
    module the kernel modules import, directly or not: each must be in KERNEL_SOURCES."""
    gpuboost_dir = Path(jit.__file__).resolve().parents[2]
    covered = set(jit.kernel_source_files())
    to_visit = sorted((gpuboost_dir / "backends" / "cpu").glob("*.py"))
    reached = set()
    while to_visit:
        path = to_visit.pop()
        if path not in reached:
            reached.add(path)
            to_visit.extend(_imported_gpuboost_modules(path, gpuboost_dir))
    missing = sorted(str(path.relative_to(gpuboost_dir)) for path in reached - covered)
    assert not missing, f"add these to gpuboost.backends.cpu.jit.KERNEL_SOURCES: {missing}"
    assert gpuboost_dir / "objectives" / "classification.py" in reached


def test_a_constant_the_kernels_import_changes_the_fingerprint(tmp_path):
    """Editing a constant of another module that a kernel reads (the multiclass hessian
    factor, compiled into the gradients kernel) makes the cached kernels stale; editing
    a module no kernel imports from does not."""
    gpuboost_dir = Path(jit.__file__).resolve().parents[2]
    copy = tmp_path / "gpuboost"
    shutil.copytree(gpuboost_dir, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    fingerprint = jit.kernel_sources_fingerprint(copy)
    assert fingerprint == jit.kernel_sources_fingerprint()  # the same sources
    estimators = copy / "sklearn" / "estimators.py"
    estimators.write_text(estimators.read_text() + "\n# an edit no kernel sees\n")
    assert jit.kernel_sources_fingerprint(copy) == fingerprint
    classification = copy / "objectives" / "classification.py"
    source = classification.read_text()
    assert "MULTICLASS_HESSIAN_FACTOR = 1.0" in source
    classification.write_text(source.replace("FACTOR = 1.0", "FACTOR = 2.0"))
    assert jit.kernel_sources_fingerprint(copy) != fingerprint


@pytest.mark.parametrize("value", ["numpy", " NumPy ", "numba"])
def test_kernel_choice_values(value, monkeypatch):
    monkeypatch.setenv(jit.CPU_KERNELS_ENV_VAR, value)
    reason = jit.compiled_kernels_reason()
    assert (reason is None) == (value.strip().lower() == "numba")


def test_sized_picks_the_serial_twin_for_small_work_or_one_thread():
    kernel = jit.all_kernels()[0]
    parallel = next(k for k in jit.all_kernels() if k.serial is not k)
    assert kernel.serial is not None
    assert jit.sized(parallel, jit.SERIAL_WORK - 1) is parallel.serial
    previous_threads = jit.threads()
    try:
        jit.set_threads(2)
        if jit.max_threads() >= 2:
            assert jit.sized(parallel, jit.SERIAL_WORK) is parallel
            assert jit.sized(parallel) is parallel  # no estimate: the training loop's
        jit.set_threads(1)
        assert jit.sized(parallel, 10**9) is parallel.serial
        with jit.forced_variant("parallel"):
            assert jit.sized(parallel, 1) is parallel
        with jit.forced_variant("serial"):
            assert jit.sized(parallel, 10**9) is parallel.serial
    finally:
        jit.set_threads(previous_threads)
    with pytest.raises(ValueError, match="variant must be"):
        with jit.forced_variant("both"):
            pass


@pytest.mark.parametrize(
    "params",
    [
        {"objective": "binary:logistic", "max_depth": 5},
        {"objective": "multi:softprob", "num_class": 3, "grow_policy": "lossguide"},
        {"objective": "reg:squarederror", "subsample": 0.7, "colsample_bynode": 0.6},
    ],
)
def test_the_serial_twins_give_the_parallel_kernels_bits(params):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 9))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.digitize(np.nan_to_num(X[:, 0]) + X[:, 1] * X[:, 2], [-0.5, 0.5]).astype(float)
    if params["objective"] == "binary:logistic":
        y = (y > 0).astype(float)
    models = []
    for variant in ("parallel", "serial"):
        with jit.forced_variant(variant):
            booster = gpuboost.train(
                dict(params, device="cpu", seed=3), gpuboost.Dataset(X, label=y), 6
            )
            models.append(
                (
                    booster.save_raw(),
                    booster.predict(X).tobytes(),
                    booster.predict(X[:200], pred_contribs=True).tobytes(),
                )
            )
    assert models[0] == models[1]
