"""Same bytes on every platform (docs/DESIGN.md, "Platform-independent arithmetic"):
training with another platform's float functions -- NumPy's and the C library's
transcendental functions moved by one ulp, NumPy's float sums in another order
(tests/_platform.py) -- gives the same model bytes, eval history, best iteration, best
score and predictions, on the NumPy reference and on the compiled CPU kernels; and
emulated CUDA, whose device namespace always computes these functions as a GPU may
(gpuboost.backends.emulation.platform_math), gives the CPU's.

Each case trains with a training and a validation set, several metrics and early
stopping, on the platform-free data of tests/test_golden.py.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_golden
from _platform import perturbed_platform
from _tiers import SLOW, sampled

import gpuboost
from gpuboost.backends.cpu.jit import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels

#: name -> (data of tests/test_golden.py, parameters)
CASES = {
    "binary:logistic": ("binary", {"eval_metric": ["logloss", "auc", "error"]}),
    "multi:softprob": ("multiclass", {"num_class": 3, "eval_metric": ["mlogloss", "merror"]}),
    "count:poisson": ("count", {"eval_metric": ["poisson-nloglik", "rmse"]}),
    "reg:gamma": ("positive", {"eval_metric": ["gamma-nloglik", "mae"]}),
    "reg:tweedie": (
        "tweedie",
        {"tweedie_variance_power": 1.3, "eval_metric": ["tweedie-nloglik@1.3"]},
    ),
    "binary:exponential": ("binary", {"eval_metric": ["logloss", "auc"]}),
    "rank:ndcg": ("ranking", {"eval_metric": ["ndcg@5", "map"]}),
    "adaboost": (
        "multiclass",
        {
            "booster": "adaboost",
            "num_class": 3,
            "objective": "multi:softprob",
            "eval_metric": ["mlogloss"],
        },
    ),
}
N_ROUNDS = 25
REPO_ROOT = Path(__file__).resolve().parents[1]
EARLY_STOPPING_ROUNDS = 4


def _datasets(data_name):
    if data_name == "ranking":
        X, y, group = test_golden._ranking_data()
        cut = int(group[:22].sum())
        return (
            gpuboost.Dataset(X[:cut], label=y[:cut], group=group[:22]),
            gpuboost.Dataset(X[cut:], label=y[cut:], group=group[22:]),
            X[cut:],
        )
    X, y = test_golden.DATA[data_name]()
    weight = np.random.default_rng(3).uniform(0.5, 2.0, 260)
    return (
        gpuboost.Dataset(X[:260], label=y[:260], weight=weight),
        gpuboost.Dataset(X[260:], label=y[260:]),
        X[260:],
    )


def train_and_describe(name, device):
    """Everything a user sees of one training: model bytes, history, best round and
    score, predictions (as bits)."""
    data_name, params = CASES[name]
    params = dict(params, device=device, verbosity=0, max_depth=3, learning_rate=0.5)
    if "booster" not in params:
        params["objective"] = name
    dtrain, dvalid, X_valid = _datasets(data_name)
    history = {}
    booster = gpuboost.train(
        params,
        dtrain,
        num_boost_round=N_ROUNDS,
        evals=[(dtrain, "train"), (dvalid, "valid")],
        early_stopping_rounds=EARLY_STOPPING_ROUNDS,
        evals_result=history,
        verbose_eval=False,
    )
    raw = booster.save_raw()
    return {
        "model": raw if isinstance(raw, bytes) else raw.encode(),
        "history": json.dumps(history),
        "best": (booster.best_iteration, repr(booster.best_score)),
        "predictions": np.ascontiguousarray(booster.predict(X_valid)).tobytes(),
    }


def _assert_same(result, expected):
    for key in expected:
        assert result[key] == expected[key], key


@pytest.mark.parametrize("kernels", ["numba", "numpy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_another_platforms_functions_change_nothing(name, kernels, monkeypatch):
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, kernels)
    expected = train_and_describe(name, "cpu")
    history = json.loads(expected["history"])
    assert len(history["valid"]) == len(CASES[name][1]["eval_metric"])  # every metric ran
    with perturbed_platform(monkeypatch):
        _assert_same(train_and_describe(name, "cpu"), expected)


#: The cases emulated CUDA trains in the fast tier (the slow tier runs the others).
EMULATED_IN_THE_FAST_TIER = {"binary:logistic", "count:poisson", "rank:ndcg", "multi:softprob"}


@pytest.mark.parametrize("name", sampled(sorted(CASES), EMULATED_IN_THE_FAST_TIER))
def test_emulated_cuda_gives_the_cpu_bytes(name):
    expected = train_and_describe(name, "cpu")
    with emulated_kernels():
        _assert_same(train_and_describe(name, "cuda"), expected)


def test_the_perturbation_is_seen_by_code_that_uses_the_platform(monkeypatch):
    """The perturbed platform does change what uses it (the tests above are not vacuous)."""
    values = np.linspace(0.1, 3.0, 50)
    terms = np.array([1.0, 2.0**-53, 2.0**-53])  # 1.0 left to right, not right to left
    plain = (np.exp(values), np.log(values), float(np.sum(terms)))
    with perturbed_platform(monkeypatch):
        perturbed = (np.exp(values), np.log(values), float(np.sum(terms)))
    assert not np.array_equal(plain[0], perturbed[0])
    assert not np.array_equal(plain[1], perturbed[1])
    assert plain[2] != perturbed[2]


# ---- other CPU code paths: NumPy without its SIMD loops, Numba for a generic x86-64 -------
_HASHES_SCRIPT = """
import json, sys
sys.path.insert(0, "tests")
import numpy as np
from numpy._core import _multiarray_umath as umath
import test_golden
from gpuboost.backends import get_backend
names = json.loads(sys.argv[1])
disabled = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
print(json.dumps({
    "backend": type(get_backend("cpu")).__name__,
    "simd_left": disabled,
    "numba_cpu": __import__("numba").config.CPU_NAME,
    "hashes": {name: test_golden._train_and_hash(name, "cpu") for name in names},
}))
"""


def _numpy_dispatch_features():
    """NumPy's run-time dispatched CPU features that this CPU has (those
    NPY_DISABLE_CPU_FEATURES may turn off; the baseline cannot be)."""
    from numpy._core import _multiarray_umath as umath

    return [name for name in umath.__cpu_dispatch__ if umath.__cpu_features__.get(name)]


def _hashes_in_a_subprocess(names, env, tmp_path):
    completed = subprocess.run(
        [sys.executable, "-c", _HASHES_SCRIPT, json.dumps(sorted(names))],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.splitlines()[-1])


#: Golden configurations of the fast tier's run (NumPy reference, no SIMD).
WITHOUT_SIMD_FAST = ("logistic_goss", "poisson", "softprob", "tweedie", "rank_ndcg")


@pytest.mark.parametrize(
    "kernels, numba_cpu, names",
    [
        ("numpy", None, WITHOUT_SIMD_FAST),
        pytest.param("numba", "generic", tuple(test_golden.CONFIGURATIONS), marks=SLOW),
    ],
)
def test_golden_hashes_without_numpys_simd_and_with_generic_compiled_code(
    kernels, numba_cpu, names, tmp_path
):
    """The golden hashes with NumPy's dispatched SIMD loops off (NPY_DISABLE_CPU_FEATURES)
    and, in the slow tier, the compiled kernels built for a generic x86-64
    (NUMBA_CPU_NAME=generic: no AVX, other vectorization; in a cache folder of its own)."""
    features = _numpy_dispatch_features()
    env = {CPU_KERNELS_ENV_VAR: kernels, "NPY_DISABLE_CPU_FEATURES": " ".join(features)}
    if numba_cpu is not None:
        env.update(NUMBA_CPU_NAME=numba_cpu, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    result = _hashes_in_a_subprocess(names, env, tmp_path)
    assert result["backend"] == ("CpuBackend" if kernels == "numba" else "NumpyBackend")
    assert result["simd_left"] == []  # every dispatched feature was off
    assert result["numba_cpu"] == numba_cpu
    assert result["hashes"] == {name: test_golden.GOLDEN[name] for name in names}
