"""The kernel warm-up (gpuboost/warmup.py, ``gpuboost compile``) and the build backend that
runs it at editable install (scripts/build_backend.py): docs/DESIGN.md, "Cold start".

The bar: after the warm-up, the README's kinds of training and prediction compile no
kernel. The fast test checks it in one process (warm-up, then the workloads: any
signature the warm-up missed is compiled again); the slow one across processes, as a
user meets it: ``gpuboost compile``, then a new process that must load every kernel from
the cache. The warm-up into an empty cache is CI's install itself (.ci/run installs with
``GPUBOOST_COMPILE_AT_INSTALL=strict``, so a warm-up that fails fails CI), which is why
the slow test does not pay a second compile from scratch: it runs on the cache the
install (or an earlier ``gpuboost compile``) filled, and compiles what is stale.
"""

import importlib.util
import os
import subprocess
import sys

import pytest
from _pytest_child import REPO_ROOT, child_environment

from gpuboost.cli import main
from gpuboost.warmup import warm_up

#: Kinds of training and prediction a user of the README runs, on other data, sizes and
#: settings than the warm-up's; prints the gpuboost kernel signatures it had to compile
#: (after the warm-up, when ``WARM_UP`` is set, in the same process).
_WORKLOADS = r"""
import os, sys
import numpy as np
import gpuboost
from gpuboost.backends.cpu import jit

if os.environ.get("WARM_UP"):
    from gpuboost.warmup import WARM_UP_GROUPS, warm_up_group
    for name in WARM_UP_GROUPS:
        warm_up_group(name)

def compiled():
    return {(k.py_func.__qualname__, str(s)) for k in jit.all_kernels()
            for s, n in k.stats.cache_misses.items() if n}

before = compiled()
rng = np.random.default_rng(42)
n, d = 2000, 12
X = rng.normal(size=(n, d))
X[rng.random(X.shape) < 0.05] = np.nan
score = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
binary = (score > 0).astype(float)
classes = np.digitize(score, [-0.5, 0.5]).astype(float)
split = 1500
dtrain = gpuboost.Dataset(X[:split], label=binary[:split])
dvalid = gpuboost.Dataset(X[split:], label=binary[split:], reference=dtrain)
booster = gpuboost.train({"objective": "binary:logistic", "eval_metric": ["logloss", "auc"]},
                         dtrain, 20, evals=[(dvalid, "valid")], early_stopping_rounds=5,
                         verbose_eval=False)
booster.predict(X[split:])
booster.predict(X[:50], pred_contribs=True)
for params in ({"objective": "reg:squarederror", "grow_policy": "lossguide", "max_leaves": 31},
               {"objective": "reg:huber", "huber_alpha": 0.9},
               {"objective": "binary:logistic", "tree_method": "approx"},
               {"objective": "reg:squarederror", "tree_method": "exact"},
               {"objective": "binary:logistic", "subsample": 0.3,
                "sampling_method": "gradient_based"}):
    label = binary if params["objective"].startswith("binary") else score
    gpuboost.train(dict(params, max_depth=6), gpuboost.Dataset(X, label=label), 10).predict(X)
gpuboost.train({"objective": "multi:softprob", "num_class": 3},
               gpuboost.Dataset(X, label=classes), 10).predict(X)
qid = np.repeat(np.arange(n // 50), 50)
gpuboost.GBRanker(objective="rank:ndcg", n_estimators=10).fit(X, classes, qid=qid).predict(X)
gpuboost.GBClassifier(n_estimators=10).fit(X.astype(np.float32), binary).predict_proba(X)
gpuboost.AdaBoostClassifier(n_estimators=10).fit(np.nan_to_num(X), binary)
Xf = np.asfortranarray(np.nan_to_num(X))
gpuboost.GBRegressor(n_estimators=10).fit(Xf, score).predict(Xf)
codes = X.copy()
codes[:, 0] = rng.integers(0, 20, n)
dcat = gpuboost.Dataset(codes, label=score, categorical_features=[0])
gpuboost.train({"max_depth": 6}, dcat, 10).predict(codes, pred_interactions=False)
print("\n".join(sorted(f"{name} {sig}" for name, sig in compiled() - before)))
"""


def _python(arguments, environment):
    """stdout of ``python *arguments`` run from the repository root (asserts success)."""
    completed = subprocess.run(
        [sys.executable, *arguments],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout.strip()


def _run_workloads(environment):
    return _python(["-c", _WORKLOADS], environment)


def test_warm_up_covers_the_readme_workloads():
    environment = child_environment()
    environment["WARM_UP"] = "1"
    compiled = _run_workloads(environment)
    assert compiled == "", f"signatures the warm-up does not compile:\n{compiled}"


@pytest.mark.slow
def test_compile_command_fills_the_cache_that_a_new_process_loads():
    environment = child_environment()
    said = _python(["-m", "gpuboost", "compile", "--processes", "2"], environment)
    assert "the CPU kernels are compiled and cached" in said
    compiled = _run_workloads(environment)
    assert compiled == "", f"compiled in a new process after the warm-up:\n{compiled}"


def test_warm_up_without_compiled_kernels_does_nothing(monkeypatch):
    monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    said = []
    assert warm_up(say=said.append) == 0.0
    assert said and "GPUBOOST_CPU_KERNELS=numpy" in said[0]


def test_compile_command_refuses_a_bad_process_count(capsys):
    assert main(["compile", "--processes", "0"]) == 2
    assert "--processes must be >= 1" in capsys.readouterr().err


def test_warm_up_groups_run_in_child_processes_and_report_failures(monkeypatch):
    # Two parts the child processes cannot find (each looks its parts up by name in its
    # own import of gpuboost.warmup): the failure is reported, not passed over.
    monkeypatch.setattr(
        "gpuboost.warmup.WARM_UP_GROUPS", {"no such part": print, "nor this one": print}
    )
    said = []
    with pytest.raises(RuntimeError, match="the kernel warm-up failed in ") as failure:
        warm_up(processes=2, say=said.append)
    message = str(failure.value)
    # one child trains both parts, the other predicts them and trains with the serial
    # twins; each fails on its first
    assert "no such part (train, parallel), nor this one (train, parallel): " in message
    assert "no such part (predict, parallel), nor this one (predict, parallel), " in message
    assert "KeyError: 'no such part'" in message
    assert len(said) == 2


def _build_backend():
    pytest.importorskip("setuptools")
    spec = importlib.util.spec_from_file_location(
        "gpuboost_build_backend", REPO_ROOT / "scripts" / "build_backend.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_backend_compiles_at_editable_install_unless_told_not_to(monkeypatch):
    backend = _build_backend()
    monkeypatch.delenv(backend.COMPILE_AT_INSTALL_ENV_VAR, raising=False)
    requirements = backend.get_requires_for_build_editable()
    assert {"numpy", "scipy"} <= set(requirements)
    assert any(r.startswith("numba") for r in requirements)
    monkeypatch.setenv(backend.COMPILE_AT_INSTALL_ENV_VAR, "0")
    assert not any(r.startswith("numba") for r in backend.get_requires_for_build_editable())
    # every other hook is setuptools' own
    from setuptools import build_meta

    for hook in ("build_wheel", "build_sdist", "get_requires_for_build_wheel"):
        assert getattr(backend, hook) is getattr(build_meta, hook)


def test_build_backend_fails_the_install_on_a_failed_warm_up_only_when_strict(monkeypatch, capsys):
    backend = _build_backend()

    def failing_warm_up(*args, **kwargs):
        return subprocess.CompletedProcess(args, 1, stdout="KeyError: 'a kernel'")

    monkeypatch.setattr(backend.subprocess, "run", failing_warm_up)
    monkeypatch.delenv(backend.COMPILE_AT_INSTALL_ENV_VAR, raising=False)
    backend._warm_up()  # a warning: pip goes on
    said = capsys.readouterr().err
    assert "warning: the kernel warm-up failed; the kernels compile at first use" in said
    assert "KeyError: 'a kernel'" in said
    monkeypatch.setenv(backend.COMPILE_AT_INSTALL_ENV_VAR, "strict")
    with pytest.raises(RuntimeError, match="the kernel warm-up failed .*strict.*\n.*'a kernel'"):
        backend._warm_up()


def test_the_sdist_carries_the_build_backend():
    manifest = (REPO_ROOT / "MANIFEST.in").read_text()
    assert "include scripts/build_backend.py" in manifest
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    assert 'build-backend = "build_backend"' in pyproject
    assert 'backend-path = ["scripts"]' in pyproject
    assert os.path.exists(REPO_ROOT / "scripts" / "build_backend.py")
