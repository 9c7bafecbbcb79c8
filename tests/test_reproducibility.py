"""Reproducibility: the same data, parameters and seed give byte-identical model files.

Across repeated runs in one process, across separate processes (with different
hash seeds and thread settings), across ``nthread`` / ``n_jobs`` values, and
across save -> load -> continue training versus one uninterrupted run; with row
sampling (bagging, GOSS, gradient-based where available), column sampling at
every level and both growth policies; on the NumPy backend and on the CUDA
backend under the CPU emulation.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _tiers import sampled

import gpuboost
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.params import PARAMETERS

REPO_ROOT = Path(__file__).resolve().parents[1]
N_ROUNDS = 8
#: Rounds trained before the save -> load -> continue split.
SPLIT_ROUND = 3
#: Seconds a training subprocess may take.
SUBPROCESS_TIMEOUT_S = 120

#: Parameters shared by every configuration (randomness at every level is on).
BASE_PARAMS = {
    "device": "cpu",
    "verbosity": 0,
    "max_depth": 4,
    "learning_rate": 0.3,
    "max_bin": 63,
    "seed": 11,
    "colsample_bytree": 0.8,
    "colsample_bylevel": 0.8,
    "colsample_bynode": 0.8,
}


def _configurations():
    """name -> params of every sampling strategy this gpuboost has."""
    configurations = {
        "bagging": {"subsample": 0.7},
        "lossguide": {
            "subsample": 0.6,
            "grow_policy": "lossguide",
            "max_leaves": 9,
            "max_depth": 0,
        },
        "multiclass": {"objective": "multi:softprob", "num_class": 3, "subsample": 0.8},
    }
    if "data_sample_strategy" in PARAMETERS:
        configurations["goss"] = {
            "data_sample_strategy": "goss",
            "top_rate": 0.2,
            "other_rate": 0.3,
        }
    if "sampling_method" in PARAMETERS:
        configurations["gradient_based"] = {"sampling_method": "gradient_based", "subsample": 0.5}
    return {name: dict(BASE_PARAMS, **params) for name, params in configurations.items()}


CONFIGURATIONS = _configurations()

#: Builds the data; the same text runs in this process and in the subprocesses.
DATA_SOURCE = textwrap.dedent("""
    import numpy as np

    def make_data(n_rows=600, n_features=8, seed=5):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n_rows, n_features))
        X[rng.random(X.shape) < 0.1] = np.nan
        signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) ** 2
        y_regression = signal + 0.3 * rng.normal(size=n_rows)
        y_classes = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3])).astype(float)
        weight = rng.uniform(0.5, 2.0, n_rows)
        return X, y_regression, y_classes, weight
""")
_namespace = {}
exec(compile(DATA_SOURCE, "<reproducibility data>", "exec"), _namespace)
make_data = _namespace["make_data"]

#: A training run in a fresh interpreter: params (JSON) in argv[1], model written to argv[2].
WORKER_SOURCE = DATA_SOURCE + textwrap.dedent("""
    import json, sys
    import gpuboost

    params = json.loads(sys.argv[1])
    X, y_regression, y_classes, weight = make_data()
    label = y_classes if params.get("objective", "").startswith("multi:") else y_regression
    dataset = gpuboost.Dataset(X, label=label, weight=weight, max_bin=params["max_bin"])
    booster = gpuboost.train(params, dataset, num_boost_round=int(sys.argv[3]))
    booster.save_model(sys.argv[2])
""")


def train(params, n_rounds=N_ROUNDS, init_model=None, data=None):
    X, y_regression, y_classes, weight = data if data is not None else make_data()
    label = y_classes if params.get("objective", "").startswith("multi:") else y_regression
    dataset = gpuboost.Dataset(X, label=label, weight=weight, max_bin=params["max_bin"])
    return gpuboost.train(params, dataset, num_boost_round=n_rounds, init_model=init_model)


def trained_in_subprocess(params, path, env_changes):
    env = dict(os.environ, **env_changes)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    completed = subprocess.run(
        [sys.executable, "-c", WORKER_SOURCE, json.dumps(params), str(path), str(N_ROUNDS)],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        cwd=REPO_ROOT,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr
    return path.read_bytes()


@pytest.fixture(scope="module")
def reference_models():
    """name -> model bytes of one uninterrupted run in this process."""
    return {name: train(params).save_raw() for name, params in CONFIGURATIONS.items()}


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_repeated_runs_are_byte_identical(name, reference_models):
    assert train(CONFIGURATIONS[name]).save_raw() == reference_models[name]


def test_the_seed_matters(reference_models):
    """Guards the other tests: sampling is really on, so identical bytes are not trivial."""
    for name, params in CONFIGURATIONS.items():
        assert train(dict(params, seed=12)).save_raw() != reference_models[name], name


@pytest.mark.parametrize(
    "name",
    sampled(sorted(CONFIGURATIONS), {"multiclass"}),  # slow: the others
)
def test_separate_processes_give_the_same_bytes(name, reference_models, tmp_path):
    # Different hash seeds (dict / set order) and thread settings in each process.
    for index, env_changes in enumerate(
        [{"PYTHONHASHSEED": "1", "OMP_NUM_THREADS": "1"}, {"PYTHONHASHSEED": "2"}]
    ):
        model = trained_in_subprocess(CONFIGURATIONS[name], tmp_path / f"{index}.json", env_changes)
        assert model == reference_models[name], env_changes


@pytest.mark.parametrize("nthread", [1, 2, 3, 0, -1])
def test_nthread_does_not_change_the_model(nthread, reference_models):
    for name in ("bagging", "multiclass"):
        params = dict(CONFIGURATIONS[name], nthread=nthread)
        assert train(params).save_raw() == reference_models[name], name


def test_n_jobs_of_the_estimators_does_not_change_the_model():
    X, y, _, weight = make_data()
    models = [
        gpuboost.GBRegressor(
            n_estimators=N_ROUNDS,
            n_jobs=n_jobs,
            subsample=0.7,
            colsample_bynode=0.8,
            random_state=3,
            device="cpu",
        )
        .fit(X, y, sample_weight=weight)
        .get_booster()
        .save_raw()
        for n_jobs in (None, 1, 2, -1)
    ]
    assert len(set(models)) == 1


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_save_load_continue_equals_one_run(name, reference_models, tmp_path):
    params = CONFIGURATIONS[name]
    path = tmp_path / "first.json"
    train(params, SPLIT_ROUND).save_model(path)
    resumed = train(params, N_ROUNDS - SPLIT_ROUND, init_model=gpuboost.Booster.load_model(path))
    assert resumed.save_raw() == reference_models[name]
    # A path works as init_model too, and so does continuing in several steps.
    second = tmp_path / "second.json"
    train(params, 2, init_model=str(path)).save_model(second)
    resumed = train(params, N_ROUNDS - SPLIT_ROUND - 2, init_model=str(second))
    assert resumed.save_raw() == reference_models[name]


# ---- the CUDA backend under the emulation ------------------------------------------
@pytest.fixture(scope="module")
def emulated_cuda():
    with emulated_kernels():
        yield


#: Tiny data for the emulated kernels.
CUDA_DATA_SHAPE = {"n_rows": 80, "n_features": 4}
CUDA_ROUNDS = 4


@pytest.mark.parametrize(
    "name", ["bagging", "multiclass"] + (["goss"] if "goss" in CONFIGURATIONS else [])
)
def test_emulated_cuda_runs_and_resumes_reproducibly(emulated_cuda, name, tmp_path):
    data = make_data(**CUDA_DATA_SHAPE)
    params = dict(CONFIGURATIONS[name], device="cuda")
    first = train(params, CUDA_ROUNDS, data=data).save_raw()
    assert train(params, CUDA_ROUNDS, data=data).save_raw() == first
    path = tmp_path / "cuda.json"
    train(params, 1, data=data).save_model(path)
    resumed = train(params, CUDA_ROUNDS - 1, init_model=str(path), data=data)
    assert resumed.save_raw() == first
    # and the NumPy backend grows the same model
    assert train(dict(params, device="cpu"), CUDA_ROUNDS, data=data).save_raw() == first
