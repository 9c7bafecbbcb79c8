"""The CUDA backend against the NumPy backend: device selection, host/device copies, and
end-to-end training parity (byte-identical models). The primitives are tested one by
one in the mirrored modules (test_binning, test_histogram, test_split_scan,
test_partition, test_leaf, test_segment_reduce, test_predict, test_memory, test_launch).

Everything here runs under the CPU emulation of the kernels
(``GPUBOOST_EMULATE_CUDA=1``), on every CI run, without a GPU. The helper
:func:`assert_models_match` is meant to be reused by a GPU suite: on a real GPU the
contract is the same, byte-identical models for every objective (docs/DESIGN.md,
"Platform-independent arithmetic").
"""

import collections
import json
import sys
import types

import numpy as np
import pytest
from _cases import messy_features
from _parity import assert_models_match, assert_predictions_match

import gpuboost
from gpuboost import Dataset, DeviceUnavailableError, backends
from gpuboost.backends import get_backend
from gpuboost.backends.cuda import launch
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.launch import KernelLauncher
from gpuboost.backends.emulation import EMULATE_ENV_VAR

N_ROWS = 400
N_FEATURES = 6
MAX_BIN = 31


pytestmark = pytest.mark.usefixtures("cuda_emulation")


# ---- devices, copies -------------------------------------------------------------
def test_device_cuda_without_gpu_raises(monkeypatch):
    """Emulation off and no CuPy: device='cuda' fails clearly, 'auto' falls back."""
    monkeypatch.delenv(EMULATE_ENV_VAR, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    with pytest.raises(DeviceUnavailableError, match="CuPy is not importable") as caught:
        get_backend("cuda")
    assert "device='cpu'" in str(caught.value)
    assert get_backend("auto") is get_backend("cpu")
    dataset = Dataset(np.zeros((10, 2)), label=np.zeros(10))
    with pytest.raises(DeviceUnavailableError, match="device='cuda'"):
        gpuboost.train({"device": "cuda"}, dataset, num_boost_round=1)


def _cupy_seeing_one_gpu(raw_module):
    """A stand-in for CuPy on a machine with one visible GPU (no GPU here)."""
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime), RawModule=raw_module)


def test_auto_falls_back_to_the_cpu_when_no_kernel_compiles(monkeypatch, regression_data):
    """A visible GPU without NVRTC: the test kernel does not compile, so 'auto' trains on
    the CPU and 'cuda' says why."""

    def without_nvrtc(code, options):
        raise OSError("libnvrtc.so.12: cannot open shared object file")

    monkeypatch.delenv(EMULATE_ENV_VAR, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", _cupy_seeing_one_gpu(without_nvrtc))
    monkeypatch.setattr(backends, "_PROBE_RESULTS", {})
    assert not gpuboost.cuda_available()
    assert get_backend("auto").name == "cpu"
    with pytest.raises(DeviceUnavailableError, match=r"test CUDA kernel.*libnvrtc.*\[cuda12\]"):
        get_backend("cuda")
    X, y = regression_data
    auto = gpuboost.train({"max_depth": 2}, Dataset(X, label=y), 2)
    cpu = gpuboost.train({"max_depth": 2, "device": "cpu"}, Dataset(X, label=y), 2)
    assert auto.save_raw() == cpu.save_raw()


def test_cuda_is_unavailable_when_the_emulation_cannot_compile_the_test_kernel(monkeypatch):
    monkeypatch.setattr(
        launch,
        "PROBE_SOURCE",
        'extern "C" __global__ void gpuboost_probe(int* out) { out[0] = not_declared; }',
    )
    monkeypatch.setattr(backends, "_PROBE_RESULTS", {})
    with pytest.raises(DeviceUnavailableError, match="EmulationCompileError"):
        get_backend("cuda")
    monkeypatch.setattr(backends, "_PROBE_RESULTS", {})
    monkeypatch.undo()
    assert get_backend("cuda").name == "cuda"


def test_host_device_copies_are_copies(backend):
    host = np.arange(6.0)
    device = backend.to_device(host)
    host[0] = 99.0
    back = backend.to_host(device)
    back[1] = -1.0
    np.testing.assert_array_equal(backend.to_host(device), np.arange(6.0))
    backend.synchronize()
    backend.release_memory()


# ---- end-to-end parity --------------------------------------------------------------
def _labels(kind, X, rng):
    signal = (
        np.nan_to_num(X[:, 0], posinf=3.0, neginf=-3.0)
        + np.where(np.isnan(X[:, 1]), 1.0, np.sin(np.nan_to_num(X[:, 1])))
        + 0.5 * (X[:, 2] > 0.2)
        + 0.3 * rng.normal(size=len(X))
    )
    if kind == "binary":
        return (signal > 0.4).astype(np.float64)
    if kind == "multiclass":
        return np.digitize(signal, [-0.3, 0.9]).astype(np.float64)
    return signal


#: name -> (params, label kind, sample weights?, rounds)
PARITY_CASES = {
    "depthwise": ({"max_depth": 4}, "regression", False, 4),
    "lossguide": (
        {"grow_policy": "lossguide", "max_leaves": 7, "max_depth": 0},
        "regression",
        False,
        4,
    ),
    "depthwise_max_leaves": ({"max_depth": 4, "max_leaves": 5}, "regression", False, 3),
    "regularized": (
        {
            "max_depth": 3,
            "max_delta_step": 0.4,
            "reg_alpha": 0.8,
            "reg_lambda": 3.0,
            "gamma": 0.05,
            "min_child_weight": 2.0,
            "min_data_in_leaf": 3,
        },
        "regression",
        False,
        4,
    ),
    "sampled": (
        {
            "max_depth": 4,
            "subsample": 0.7,
            "colsample_bytree": 0.8,
            "colsample_bylevel": 0.8,
            "colsample_bynode": 0.7,
            "seed": 11,
        },
        "regression",
        False,
        4,
    ),
    "weighted": ({"max_depth": 3}, "regression", True, 3),
    "tiny_subsample": (
        {"max_depth": 3, "subsample": 0.03, "min_data_in_leaf": 1, "split_penalty": 0},
        "regression",
        False,
        3,
    ),
    "logistic": ({"objective": "binary:logistic", "max_depth": 3}, "binary", False, 4),
    "softprob": (
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
        "multiclass",
        False,
        3,
    ),
    "quantile_refit": (
        {"objective": "reg:quantile", "quantile_alpha": 0.3, "max_depth": 3},
        "regression",
        False,
        3,
    ),
    "quantile_refit_weighted_sampled": (
        {"objective": "reg:quantile", "quantile_alpha": 0.7, "max_depth": 3, "subsample": 0.8},
        "regression",
        True,
        3,
    ),
    "huber_refit_weighted": (
        {"objective": "reg:huber", "huber_delta": 0.8, "max_depth": 3},
        "regression",
        True,
        3,
    ),
    "huber_alpha": (
        {"objective": "reg:huber", "huber_alpha": 0.7, "max_depth": 3},
        "regression",
        False,
        3,
    ),
    "approx": ({"tree_method": "approx", "max_depth": 3}, "regression", False, 3),
    "goss": (
        {"data_sample_strategy": "goss", "top_rate": 0.3, "other_rate": 0.2, "max_depth": 3},
        "regression",
        False,
        3,
    ),
    "gradient_based": (
        {"subsample": 0.5, "sampling_method": "gradient_based", "max_depth": 3},
        "regression",
        False,
        3,
    ),
}


def _parity_data(kind, weighted):
    rng = np.random.default_rng(2024)
    X = messy_features(N_ROWS, seed=10)
    y = _labels(kind, X, rng)
    weight = rng.uniform(0.2, 2.0, size=N_ROWS) if weighted else None
    return X, y, weight


def _train_both(params, X, y, weight, rounds, **train_kwargs):
    models = {}
    for device in ("cpu", "cuda"):
        dataset = Dataset(X, label=y, weight=weight, max_bin=MAX_BIN)
        models[device] = gpuboost.train(
            dict(params, device=device, max_bin=MAX_BIN),
            dataset,
            num_boost_round=rounds,
            verbose_eval=False,
            **train_kwargs,
        )
        if device == "cuda":
            assert dataset._X_binned is None, "training on cuda binned on the host"
    return models["cpu"], models["cuda"]


@pytest.fixture
def launched_kernels(monkeypatch):
    """Launch counts of the kernels the CUDA backend launches (through its
    ``KernelLauncher``); the training backend checks every launch meanwhile."""
    names = collections.Counter()
    original = KernelLauncher.__call__

    def spy(self, file_stem, kernel_name, *args, **kwargs):
        names[kernel_name] += 1
        return original(self, file_stem, kernel_name, *args, **kwargs)

    monkeypatch.setattr(KernelLauncher, "__call__", spy)
    monkeypatch.setattr(get_backend("cuda"), "check_launches", True)
    return names


@pytest.mark.parametrize("case", list(PARITY_CASES))
def test_training_parity(case, launched_kernels):
    params, kind, weighted, rounds = PARITY_CASES[case]
    X, y, weight = _parity_data(kind, weighted)
    cpu_model, cuda_model = _train_both(params, X, y, weight, rounds)
    assert_models_match(cpu_model, cuda_model)
    assert cpu_model.num_boosted_rounds() == rounds
    assert sum(tree.n_leaves for tree in cpu_model.trees) > 2 * len(cpu_model.trees)
    assert_predictions_match(cpu_model, cuda_model, messy_features(150, seed=12))
    expected_kernels = {
        "bin_features",
        "predict_forest_margins",
        "predict_forest_leaf_indices",
    }
    # splits of at least half of the positions into a new array (every tree's first),
    # smaller ones in place (a lossguide step splitting a few leaves)
    expected_kernels.add("partition_move_tiles")
    if params.get("grow_policy") == "lossguide":
        expected_kernels |= {"partition_flag_tiles", "partition_scatter_tiles"}
    sampled = params.get("subsample", 1.0) < 1.0 or "top_rate" in params
    if sampled:
        expected_kernels.add("predict_tree_values_binned")
    else:  # leaves' rows by their segments, or routed by the last (unpartitioned) splits
        assert {"add_leaf_values", "add_split_leaf_values"} & set(launched_kernels)
    if "quantile" in case or "huber" in case:
        expected_kernels.add("select_segment_quantiles")
    if case == "huber_refit_weighted":
        expected_kernels.add("segment_sequential_sums")
    assert expected_kernels <= set(launched_kernels), expected_kernels - set(launched_kernels)
    if case == "approx":  # the training data are re-binned on the device for every tree
        assert launched_kernels["bin_features"] > rounds


def test_training_parity_with_evals_and_early_stopping():
    X, y, _ = _parity_data("regression", False)
    rng = np.random.default_rng(77)
    X_valid = messy_features(200, seed=13)
    y_valid = _labels("regression", X_valid, rng) + rng.normal(scale=2.0, size=200)
    models, results = {}, {}
    for device in ("cpu", "cuda"):
        dtrain = Dataset(X, label=y, max_bin=MAX_BIN)
        dvalid = Dataset(X_valid, label=y_valid, reference=dtrain)
        results[device] = {}
        models[device] = gpuboost.train(
            {
                "device": device,
                "max_depth": 4,
                "learning_rate": 0.9,
                "eval_metric": ["rmse", "mae"],
            },
            dtrain,
            num_boost_round=12,
            evals=[(dtrain, "train"), (dvalid, "valid")],
            early_stopping_rounds=2,
            evals_result=results[device],
            verbose_eval=False,
        )
    assert_models_match(models["cpu"], models["cuda"])
    assert json.dumps(results["cpu"]) == json.dumps(results["cuda"])
    assert models["cpu"].best_iteration is not None
    assert models["cpu"].num_boosted_rounds() < 12, "early stopping did not trigger"
    assert_predictions_match(models["cpu"], models["cuda"], X_valid)


def test_training_parity_with_feature_bundles(monkeypatch):
    """Mutually exclusive sparse features are bundled (gpuboost.data.bundling); the bundled
    histograms and the partition on decoded bins run on the CUDA backend too."""
    layouts = []
    original = CudaBackend.binned_layout

    def spy(self, X_binned):
        layouts.append(X_binned.shape)
        return original(self, X_binned)

    monkeypatch.setattr(CudaBackend, "binned_layout", spy)
    rng = np.random.default_rng(16)
    X = np.zeros((N_ROWS, 8))
    X[np.arange(N_ROWS), rng.integers(0, 6, N_ROWS)] = rng.normal(size=N_ROWS) + 3.0
    X[:, 6:] = rng.normal(size=(N_ROWS, 2))
    y = X[:, 0] - X[:, 1] + X[:, 6] + 0.1 * rng.normal(size=N_ROWS)
    cpu_model, cuda_model = _train_both({"max_depth": 3}, X, y, None, 3)
    assert_models_match(cpu_model, cuda_model)
    assert layouts and layouts[0][1] < X.shape[1], "no features were bundled"
    assert_predictions_match(cpu_model, cuda_model, X[:50])


def test_assert_models_match_detects_differences():
    X, y, _ = _parity_data("binary", False)
    dataset = Dataset(X, label=y, max_bin=MAX_BIN)
    model = gpuboost.train(
        {"objective": "binary:logistic", "device": "cpu", "max_depth": 2},
        dataset,
        num_boost_round=2,
    )
    other = model.copy()
    other.trees[1].value[other.trees[1].is_leaf] *= 1.0 + 1e-15
    with pytest.raises(AssertionError, match="tree 1"):
        assert_models_match(model, other)
    other = model.copy()
    other.trees[0].threshold_bin[0] += 1
    with pytest.raises(AssertionError, match="tree 0"):
        assert_models_match(model, other)
