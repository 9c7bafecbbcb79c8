"""The CUDA backend against the NumPy backend: binning, leaf primitives, errors, and
end-to-end training parity (byte-identical models).

Everything here runs under the CPU emulation of the kernels
(``GPUBOOST_EMULATE_CUDA=1``), on every CI run, without a GPU. The helper
:func:`assert_models_match` is meant to be reused by a GPU suite: on a real GPU
the contract for objectives that use ``exp``/``log`` on the device (logistic,
softmax) is an identical tree structure with leaf values equal to 1e-12
relative (``transcendental=True``); everything else is byte-identical.
"""
import collections
import json
import sys

import numpy as np
import pytest

from gpuboost.backends.emulation import emulated_kernels
import gpuboost
from gpuboost import Dataset, DeviceUnavailableError
from gpuboost.backends import NumpyBackend, get_backend
from gpuboost.backends.cuda import backend as cuda_backend
from gpuboost.backends.cuda.backend import CudaBackend, GpuOutOfMemoryError, device_bytes_per_row
from gpuboost.backends.emulation import EMULATE_ENV_VAR

from _parity import assert_models_match, assert_predictions_match, bits

N_ROWS = 400
N_FEATURES = 6
MAX_BIN = 31


# ---- fixtures ---------------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def emulation():
    """Kernels run in the CPU emulation for this whole module."""
    with emulated_kernels():
        yield


@pytest.fixture(scope="module")
def backend(emulation):
    """A CudaBackend on the emulated kernels, checking every launch."""
    cuda = CudaBackend()
    cuda.check_launches = True
    return cuda


def _messy_features(n_rows, seed):
    """NaN in features 1 and 3, +/-inf in feature 0, feature 5 constant."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, N_FEATURES))
    X[rng.random(n_rows) < 0.15, 1] = np.nan
    X[rng.random(n_rows) < 0.05, 3] = np.nan
    X[rng.random(n_rows) < 0.02, 0] = np.inf
    X[rng.random(n_rows) < 0.02, 0] = -np.inf
    X[:, 4] = np.round(X[:, 4], 1)  # ties, fewer distinct values than bins
    X[:, 5] = -3.0
    return X


# ---- binning --------------------------------------------------------------------
def test_device_binning_equals_host_binning(backend):
    X = _messy_features(N_ROWS, seed=1)
    X[:, 2] = np.nan  # a feature with no value at all
    dataset = Dataset(X, label=np.zeros(N_ROWS), max_bin=MAX_BIN)
    binned = backend.to_host(backend.bin_features(dataset.data, dataset.bin_mapper))
    backend.synchronize()
    expected = dataset.bin_mapper.transform(X)
    assert binned.dtype == np.uint8 and binned.flags.c_contiguous
    np.testing.assert_array_equal(binned, expected)
    # Not vacuous: many bins, the missing bin, both ends of the range are all used.
    assert len(np.unique(expected[:, 0])) > 10
    assert (expected == MAX_BIN).any() and (expected == 0).any()


def test_device_binning_on_edges_and_in_chunks(backend, monkeypatch):
    """Values exactly on an edge go to the bin below it; chunking does not matter."""
    X = _messy_features(N_ROWS, seed=2)
    mapper = Dataset(X, label=np.zeros(N_ROWS), max_bin=MAX_BIN).bin_mapper
    on_edges = np.stack([np.resize(edges if len(edges) else [0.0], N_ROWS)
                         for edges in mapper.bin_edges_], axis=1)
    monkeypatch.setattr(cuda_backend, "BINNING_CHUNK_BYTES", 8 * N_FEATURES * 37)
    binned = backend.to_host(backend.bin_features(on_edges, mapper))
    np.testing.assert_array_equal(binned, mapper.transform(on_edges))


def test_prepare_bins_on_the_device(backend):
    X = _messy_features(N_ROWS, seed=3)
    dataset = Dataset(X, label=np.arange(N_ROWS, dtype=np.float64),
                      weight=np.linspace(0.5, 1.5, N_ROWS), max_bin=MAX_BIN)
    data = backend.prepare(dataset)
    assert dataset._X_binned is None, "the CUDA backend must not bin on the host"
    np.testing.assert_array_equal(backend.to_host(data.arrays["X_binned"]), dataset.X_binned)
    np.testing.assert_array_equal(backend.to_host(data.label), dataset.label)
    np.testing.assert_array_equal(backend.to_host(data.weight), dataset.weight)
    assert (data.n_rows, data.n_features, data.n_bins, data.missing_bin) == \
        (N_ROWS, N_FEATURES, MAX_BIN + 1, MAX_BIN)
    assert backend.prepare(dataset) is data  # cached on the Dataset


# ---- leaf primitives ------------------------------------------------------------
def _leaf_segments(rng, n_positions, n_segments):
    cuts = np.sort(rng.choice(np.arange(1, n_positions), size=n_segments - 1, replace=False))
    bounds = np.concatenate([[0], cuts, [n_positions]])
    return bounds[:-1], bounds[1:]


def test_add_leaf_values_matches_numpy(backend):
    rng = np.random.default_rng(4)
    n_rows, n_outputs = 2500, 3  # segments longer than one tile (LEAF_TILE_ROWS)
    sample_indices = rng.permutation(n_rows)[:2300].astype(np.int32)
    begins, ends = _leaf_segments(rng, 2300, 5)
    begins, ends = begins[[0, 1, 3, 4]], ends[[0, 1, 3, 4]]  # one segment left out
    values = rng.normal(size=4)
    start = rng.normal(size=(n_rows, n_outputs))
    expected = start.copy()
    NumpyBackend().add_leaf_values(expected, 1, sample_indices, begins, ends, values)
    raw = backend.to_device(start)
    backend.add_leaf_values(raw, 1, backend.to_device(sample_indices), begins, ends, values)
    backend.synchronize()
    np.testing.assert_array_equal(bits(backend.to_host(raw)), bits(expected))
    assert (expected != start).sum() == (ends - begins).sum()


def _quantile_case(rng, n_rows, ties):
    values = rng.normal(size=n_rows)
    if ties:
        values = np.round(values * 2) / 2  # many equal values
        values[rng.random(n_rows) < 0.1] = -0.0  # signed zeros tie with +0.0
    return values


@pytest.mark.parametrize("weighted", [False, True], ids=["unit_weights", "float_weights"])
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
def test_segment_quantile_matches_numpy(backend, weighted, ties):
    rng = np.random.default_rng(5 + 2 * weighted + ties)
    n_rows = 2200
    values = _quantile_case(rng, n_rows, ties)
    weights = None
    if weighted:
        weights = rng.choice([0.1, 0.3, 0.7, 1.3, 0.0], size=n_rows)  # inexact binary sums
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _leaf_segments(rng, n_rows, 6)
    numpy_backend, device_indices = NumpyBackend(), backend.to_device(sample_indices)
    device_values = backend.to_device(values)
    device_weights = None if weights is None else backend.to_device(weights)
    for alpha in (0.0, 0.1, 0.5, 0.77, 1.0):
        expected = numpy_backend.segment_weighted_quantile(values, weights, sample_indices,
                                                            begins, ends, alpha)
        got = backend.segment_weighted_quantile(device_values, device_weights, device_indices,
                                                begins, ends, alpha)
        assert isinstance(got, np.ndarray) and got.dtype == np.float64
        np.testing.assert_array_equal(bits(got), bits(expected), err_msg=f"alpha={alpha}")
    assert len(np.unique(expected)) > 1


def test_segment_quantile_one_row_and_errors(backend):
    values = backend.to_device(np.array([3.0, -1.0, 2.0, np.nan]))
    indices = backend.to_device(np.arange(4, dtype=np.int32))
    got = backend.segment_weighted_quantile(values, None, indices, [0, 1], [1, 3], 0.5)
    np.testing.assert_array_equal(got, [3.0, -1.0])
    with pytest.raises(ValueError, match="non-empty"):
        backend.segment_weighted_quantile(values, None, indices, [0, 2], [2, 2], 0.5)
    with pytest.raises(ValueError, match="NaN"):
        backend.segment_weighted_quantile(values, None, indices, [0], [4], 0.5)
    with pytest.raises(ValueError, match="alpha"):
        backend.segment_weighted_quantile(values, None, indices, [0], [3], 1.5)


def test_segment_sums_match_numpy(backend):
    rng = np.random.default_rng(14)
    n_rows = 1500
    values = rng.normal(size=n_rows) * 10.0 ** rng.integers(-8, 8, size=n_rows)
    values[:20] = -0.0  # an all-negative-zero segment sums to +0.0
    sample_indices = np.concatenate([np.arange(20), 20 + rng.permutation(n_rows - 20)])
    sample_indices = sample_indices.astype(np.int32)
    begins = np.array([0, 20, 20, 700, 1400])
    ends = np.array([20, 20, 700, 1400, 1500])
    expected = NumpyBackend().segment_sums(values, sample_indices, begins, ends)
    got = backend.segment_sums(backend.to_device(values), backend.to_device(sample_indices),
                               begins, ends)
    np.testing.assert_array_equal(bits(got), bits(expected))
    assert bits(got)[0] == bits(np.array([0.0]))[0]


def test_rebin_matches_host_transform(backend):
    X = _messy_features(N_ROWS, seed=15)
    dataset = Dataset(X, label=np.ones(N_ROWS), max_bin=MAX_BIN)
    data = backend.prepare(dataset)
    other = Dataset(X[::-1] * 1.5, label=np.ones(N_ROWS), max_bin=MAX_BIN).bin_mapper
    rebinned = backend.rebin(data, backend.prepare_features(X), other)
    np.testing.assert_array_equal(backend.to_host(rebinned.arrays["X_binned"]),
                                  other.transform(X))
    assert not np.array_equal(other.transform(X), dataset.X_binned)
    assert rebinned.label is data.label
    np.testing.assert_array_equal(rebinned.n_value_bins, other.n_value_bins_)


# ---- memory, devices, errors ------------------------------------------------------
def test_device_bytes_per_row_matches_the_documented_example():
    parts = device_bytes_per_row(28)
    assert sum(parts.values()) == 109
    assert "109 bytes per row" in cuda_backend.__doc__
    with_weights_and_classes = device_bytes_per_row(28, n_outputs=3, has_weight=True)
    assert sum(with_weights_and_classes.values()) == 109 + 8 + 2 * 24


class _FakeCupyOutOfMemory(MemoryError):
    """Stands in for cupy.cuda.memory.OutOfMemoryError (same message format)."""


def test_out_of_memory_is_reraised_with_sizes_and_advice(monkeypatch):
    backend = CudaBackend()
    monkeypatch.setattr(backend, "_out_of_memory_errors", (_FakeCupyOutOfMemory,))

    def fail(*args, **kwargs):
        raise _FakeCupyOutOfMemory("Out of memory allocating 1,234,567 bytes "
                                   "(allocated so far: 42 bytes).")

    monkeypatch.setattr(backend, "bin_features", fail)
    X = _messy_features(N_ROWS, seed=9)
    with pytest.raises(GpuOutOfMemoryError) as caught:
        backend.prepare(Dataset(X, label=np.zeros(N_ROWS), max_bin=MAX_BIN))
    error = caught.value
    assert isinstance(error, MemoryError)
    message = str(error)
    per_row = sum(device_bytes_per_row(N_FEATURES).values())
    for expected in (f"{N_ROWS:,} rows x {N_FEATURES} features", "1,234,567 bytes requested",
                     f"{per_row} bytes per row", "fewer rows", "max_bin", "device='cpu'"):
        assert expected in message, (expected, message)
    assert (error.requested_bytes, error.bytes_per_row, error.data_shape) == \
        (1234567, per_row, (N_ROWS, N_FEATURES))
    assert isinstance(error.__cause__, _FakeCupyOutOfMemory)


def test_device_cuda_without_gpu_raises(monkeypatch):
    """Emulation off and no CuPy: device='cuda' fails clearly, 'auto' falls back."""
    monkeypatch.delenv(EMULATE_ENV_VAR, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    with pytest.raises(DeviceUnavailableError, match="CuPy is not importable") as caught:
        get_backend("cuda")
    assert "device='cpu'" in str(caught.value)
    assert get_backend("auto").name == "numpy"
    dataset = Dataset(np.zeros((10, 2)), label=np.zeros(10))
    with pytest.raises(DeviceUnavailableError, match="device='cuda'"):
        gpuboost.train({"device": "cuda"}, dataset, num_boost_round=1)


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
    signal = (np.nan_to_num(X[:, 0], posinf=3.0, neginf=-3.0)
              + np.where(np.isnan(X[:, 1]), 1.0, np.sin(np.nan_to_num(X[:, 1])))
              + 0.5 * (X[:, 2] > 0.2) + 0.3 * rng.normal(size=len(X)))
    if kind == "binary":
        return (signal > 0.4).astype(np.float64)
    if kind == "multiclass":
        return np.digitize(signal, [-0.3, 0.9]).astype(np.float64)
    return signal


#: name -> (params, label kind, sample weights?, rounds)
PARITY_CASES = {
    "depthwise": ({"max_depth": 4}, "regression", False, 4),
    "lossguide": ({"grow_policy": "lossguide", "max_leaves": 7, "max_depth": 0},
                  "regression", False, 4),
    "depthwise_max_leaves": ({"max_depth": 4, "max_leaves": 5}, "regression", False, 3),
    "regularized": ({"max_depth": 3, "max_delta_step": 0.4, "reg_alpha": 0.8, "reg_lambda": 3.0,
                     "gamma": 0.05, "min_child_weight": 2.0, "min_data_in_leaf": 3},
                    "regression", False, 4),
    "sampled": ({"max_depth": 4, "subsample": 0.7, "colsample_bytree": 0.8,
                 "colsample_bylevel": 0.8, "colsample_bynode": 0.7, "seed": 11},
                "regression", False, 4),
    "weighted": ({"max_depth": 3}, "regression", True, 3),
    "tiny_subsample": ({"max_depth": 3, "subsample": 0.03}, "regression", False, 3),
    "logistic": ({"objective": "binary:logistic", "max_depth": 3}, "binary", False, 4),
    "softprob": ({"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
                 "multiclass", False, 3),
    "quantile_refit": ({"objective": "reg:quantile", "quantile_alpha": 0.3, "max_depth": 3},
                       "regression", False, 3),
    "quantile_refit_weighted_sampled": ({"objective": "reg:quantile", "quantile_alpha": 0.7,
                                         "max_depth": 3, "subsample": 0.8},
                                        "regression", True, 3),
    "huber_refit_weighted": ({"objective": "reg:huber", "huber_delta": 0.8, "max_depth": 3},
                             "regression", True, 3),
    "huber_alpha": ({"objective": "reg:huber", "huber_alpha": 0.7, "max_depth": 3},
                    "regression", False, 3),
    "approx": ({"tree_method": "approx", "max_depth": 3}, "regression", False, 3),
    "goss": ({"data_sample_strategy": "goss", "top_rate": 0.3, "other_rate": 0.2,
              "max_depth": 3}, "regression", False, 3),
    "gradient_based": ({"subsample": 0.5, "sampling_method": "gradient_based", "max_depth": 3},
                       "regression", False, 3),
}


def _parity_data(kind, weighted):
    rng = np.random.default_rng(2024)
    X = _messy_features(N_ROWS, seed=10)
    y = _labels(kind, X, rng)
    weight = rng.uniform(0.2, 2.0, size=N_ROWS) if weighted else None
    return X, y, weight


def _train_both(params, X, y, weight, rounds, **train_kwargs):
    models = {}
    for device in ("cpu", "cuda"):
        dataset = Dataset(X, label=y, weight=weight, max_bin=MAX_BIN)
        models[device] = gpuboost.train(dict(params, device=device, max_bin=MAX_BIN), dataset,
                                        num_boost_round=rounds, verbose_eval=False,
                                        **train_kwargs)
        if device == "cuda":
            assert dataset._X_binned is None, "training on cuda binned on the host"
    return models["cpu"], models["cuda"]


@pytest.fixture
def launched_kernels(monkeypatch):
    """Launch counts of the kernels the CUDA backend launches through ``_launch``; the
    training backend checks every launch meanwhile."""
    names = collections.Counter()
    original = CudaBackend._launch

    def spy(self, file_stem, kernel_name, *args, **kwargs):
        names[kernel_name] += 1
        return original(self, file_stem, kernel_name, *args, **kwargs)

    monkeypatch.setattr(CudaBackend, "_launch", spy)
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
    assert_predictions_match(cpu_model, cuda_model, _messy_features(150, seed=12))
    expected_kernels = {"bin_features", "partition_flag_tiles", "partition_scatter_tiles",
                        "predict_forest_margins", "predict_forest_leaf_indices"}
    sampled = params.get("subsample", 1.0) < 1.0 or "top_rate" in params
    expected_kernels.add("predict_tree_values_binned" if sampled else "add_leaf_values")
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
    X_valid = _messy_features(200, seed=13)
    y_valid = _labels("regression", X_valid, rng) + rng.normal(scale=2.0, size=200)
    models, results = {}, {}
    for device in ("cpu", "cuda"):
        dtrain = Dataset(X, label=y, max_bin=MAX_BIN)
        dvalid = Dataset(X_valid, label=y_valid, reference=dtrain)
        results[device] = {}
        models[device] = gpuboost.train(
            {"device": device, "max_depth": 4, "learning_rate": 0.9,
             "eval_metric": ["rmse", "mae"]},
            dtrain, num_boost_round=12, evals=[(dtrain, "train"), (dvalid, "valid")],
            early_stopping_rounds=2, evals_result=results[device], verbose_eval=False)
    assert_models_match(models["cpu"], models["cuda"])
    assert json.dumps(results["cpu"]) == json.dumps(results["cuda"])
    assert models["cpu"].best_iteration is not None
    assert models["cpu"].num_boosted_rounds() < 12, "early stopping did not trigger"
    assert_predictions_match(models["cpu"], models["cuda"], X_valid)


def test_training_parity_with_feature_bundles(monkeypatch):
    """Mutually exclusive sparse features are bundled (gpuboost.bundling); the bundled
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
    model = gpuboost.train({"objective": "binary:logistic", "device": "cpu", "max_depth": 2},
                           dataset, num_boost_round=2)
    other = model.copy()
    other.trees[1].value[other.trees[1].is_leaf] *= 1.0 + 1e-15
    with pytest.raises(AssertionError, match="tree 1"):
        assert_models_match(model, other)
    assert_models_match(model, other, transcendental=True)
    other.trees[1].value[other.trees[1].is_leaf] *= 1.0 + 1e-9
    with pytest.raises(AssertionError):
        assert_models_match(model, other, transcendental=True)
    other = model.copy()
    other.trees[0].threshold_bin[0] += 1
    with pytest.raises(AssertionError):
        assert_models_match(model, other, transcendental=True)
