"""The GPU suite: the CUDA backend on a real GPU (skipped without one).

Run on a GPU machine with ``python -m pytest -q -m gpu`` (``benchmarks/gpu_check.sh``
does). Under the CPU emulation the same backend code is covered by
``tests/backends/cuda/`` in every CI run; these tests add what only hardware shows:
NVRTC compilation, real launches (checked after every launch), CuPy's array
semantics, the CPU/GPU model contract and device memory behaviour.
"""

import os

import numpy as np
import pandas as pd
import pytest
from _foreign_arrays import ArrayInterfaceOnly, DLPackOnly
from _parity import assert_models_match

import gpuboost
from gpuboost.backends.emulation import EMULATE_ENV_VAR

pytestmark = pytest.mark.gpu


def _gpu_or_skip():
    if os.environ.get(EMULATE_ENV_VAR) == "1":
        pytest.skip("the GPU suite needs a real GPU, not the emulation")
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as error:  # no driver
        pytest.skip(f"no usable CUDA device: {error}")
    return cupy


@pytest.fixture(autouse=True)
def checked_launches(monkeypatch):
    """Synchronize and check for errors after every kernel launch."""
    _gpu_or_skip()
    monkeypatch.setenv("GPUBOOST_CUDA_CHECK_LAUNCHES", "1")
    from gpuboost.backends import _CUDA_BACKENDS

    for backend in _CUDA_BACKENDS.values():
        backend.check_launches = True
    yield


def _data(n_rows=20_000, n_features=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 1]) ** 2 - np.nan_to_num(X[:, 2])
    return X, signal + rng.normal(size=n_rows)


PARAMS = [
    {"objective": "reg:squarederror"},
    {
        "objective": "reg:squarederror",
        "grow_policy": "lossguide",
        "max_leaves": 31,
        "max_depth": 0,
        "subsample": 0.7,
        "colsample_bynode": 0.6,
    },
    {"objective": "reg:quantile", "quantile_alpha": 0.3},
    {"objective": "reg:huber"},
    {"objective": "reg:squarederror", "data_sample_strategy": "goss"},
    {"objective": "reg:squarederror", "tree_method": "approx"},
    {"objective": "binary:logistic"},
    {"objective": "multi:softprob", "num_class": 3},
    {"objective": "count:poisson"},
    {"objective": "reg:squarederror", "num_parallel_tree": 3, "subsample": 0.8},
    {"objective": "binary:logistic", "booster": "dart", "rate_drop": 0.2},
]


@pytest.mark.parametrize("params", PARAMS, ids=[str(sorted(p.items())) for p in PARAMS])
def test_cpu_and_gpu_train_the_same_model(params):
    X, signal = _data()
    if params["objective"] == "binary:logistic":
        y = (signal > 0).astype(float)
    elif params["objective"].startswith("multi:"):
        y = np.digitize(signal, [-1.0, 1.0]).astype(float)
    elif params["objective"] == "count:poisson":
        y = np.floor(np.abs(signal))
    else:
        y = signal
    models = {}
    for device in ("cpu", "cuda"):
        dataset = gpuboost.Dataset(X, label=y)
        models[device] = gpuboost.train(
            {**params, "device": device, "max_depth": params.get("max_depth", 6), "seed": 3},
            dataset,
            10,
            verbose_eval=False,
        )
    assert_models_match(models["cpu"], models["cuda"])  # every objective, exp/log too
    np.testing.assert_array_equal(models["cpu"].predict(X), models["cuda"].predict(X))


def _categorical_frame(n_rows=20_000, seed=0):
    """A frame of a 200-level column of rare and frequent categories (with missing
    values), a 6-level and a 3-level one and two numeric columns, and its signal."""
    rng = np.random.default_rng(seed)
    levels = rng.choice(200, n_rows, p=rng.dirichlet(np.full(200, 0.8)))
    six, three = rng.integers(0, 6, n_rows), rng.integers(0, 3, n_rows)
    x1, x2 = rng.normal(size=n_rows), rng.uniform(-1, 1, n_rows)
    signal = (
        rng.normal(size=200)[levels] * np.where(x2 > 0, 1.0, -0.5)
        + rng.normal(size=6)[six]
        + 0.5 * (three == 1)
        + 0.8 * x1
    )
    frame = pd.DataFrame(
        {
            "many": pd.Categorical([f"l{v:03d}" for v in levels]),
            "six": pd.Categorical([f"s{v}" for v in six]),
            "three": pd.Categorical([f"t{v}" for v in three]),
            "x1": x1,
            "x2": x2,
        }
    )
    frame.loc[rng.random(n_rows) < 0.05, "many"] = np.nan
    return frame, signal + 0.5 * rng.normal(size=n_rows)


@pytest.mark.parametrize(
    "params",
    [
        {"objective": "reg:squarederror"},  # cat_smooth estimated per tree (the default)
        {"objective": "binary:logistic"},
        {"objective": "multi:softprob", "num_class": 3},
        {"objective": "reg:squarederror", "max_cat_to_onehot": 8, "cat_smooth_estimate": False},
    ],
    ids=lambda params: str(sorted(params.items())),
)
def test_cpu_and_gpu_train_the_same_model_with_categorical_features(params):
    """Categorical splits on the GPU: the host scan on the copied slice, the partition
    and the traversal by bitsets on the device -- the CPU backend's bytes, and the same
    predictions on new data with a label the training never saw."""
    frame, signal = _categorical_frame()
    if params["objective"] == "binary:logistic":
        y = (signal > 0).astype(float)
    elif params["objective"].startswith("multi:"):
        y = np.digitize(signal, [-1.0, 1.0]).astype(float)
    else:
        y = signal
    models = {
        device: gpuboost.train(
            {**params, "device": device, "max_depth": 6, "seed": 3},
            gpuboost.Dataset(frame, label=y),
            10,
            verbose_eval=False,
        )
        for device in ("cpu", "cuda")
    }
    assert_models_match(models["cpu"], models["cuda"])
    assert any(tree.has_categorical for tree in models["cpu"].trees)
    new = frame.head(2000).copy()
    new["many"] = new["many"].cat.add_categories(["unseen"])
    new.loc[::7, "many"] = "unseen"
    np.testing.assert_array_equal(models["cpu"].predict(new), models["cuda"].predict(new))


def test_device_memory_does_not_grow_over_many_fits():
    cupy = _gpu_or_skip()
    X, y = _data(5_000, 8)
    pool = cupy.get_default_memory_pool()

    def fit():
        gpuboost.train(
            {"device": "cuda", "max_depth": 4}, gpuboost.Dataset(X, label=y), 5, verbose_eval=False
        )
        gpuboost.release_memory()

    for _ in range(3):  # warm-up: compiled modules, pool
        fit()
    baseline = pool.total_bytes()
    for _ in range(50):
        fit()
    assert pool.total_bytes() <= baseline + (1 << 20)


def test_out_of_memory_is_a_clear_error_and_leaves_memory_as_it_was():
    cupy = _gpu_or_skip()
    from gpuboost.errors import GpuOutOfMemoryError

    X, y = _data(200_000, 16)
    pool = cupy.get_default_memory_pool()
    gpuboost.release_memory()
    before = pool.used_bytes()
    pool.set_limit(size=2 << 20)  # far below what 200k x 16 needs
    try:
        with pytest.raises(GpuOutOfMemoryError, match="bytes"):
            gpuboost.train({"device": "cuda"}, gpuboost.Dataset(X, label=y), 2, verbose_eval=False)
    finally:
        pool.set_limit(size=0)
    assert pool.used_bytes() == before
    # The backend still works afterwards.
    gpuboost.train(
        {"device": "cuda", "max_depth": 3},
        gpuboost.Dataset(X[:1000], label=y[:1000]),
        2,
        verbose_eval=False,
    )


def test_second_gpu_trains_and_predicts_the_cpus_bytes():
    """On a machine with two GPUs, ``device='cuda:1'`` runs every entry point on its own
    device (the emulation's several devices check the same in CI:
    tests/backends/cuda/test_devices.py)."""
    cupy = _gpu_or_skip()
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU: nothing to check on cuda:1")
    X, signal = _data(n_rows=5000)
    y = (signal > 0).astype(float)
    models = {}
    for device in ("cpu", "cuda:1"):
        history = {}
        dataset = gpuboost.Dataset(X, label=y)
        models[device] = gpuboost.train(
            {"objective": "binary:logistic", "device": device, "eval_metric": "auc"},
            dataset,
            5,
            evals=[(dataset, "train")],
            evals_result=history,
            verbose_eval=False,
        )
        models[device].history = history
    assert_models_match(models["cpu"], models["cuda:1"])
    assert models["cpu"].history == models["cuda:1"].history
    for kind in ({}, {"pred_leaf": True}, {"pred_contribs": True}, {"pred_interactions": True}):
        np.testing.assert_array_equal(
            models["cpu"].predict(X[:200], **kind), models["cuda:1"].predict(X[:200], **kind)
        )


def test_device_input_trains_and_predicts_without_a_host_copy():
    """CuPy arrays (and objects exporting them through ``__cuda_array_interface__`` and
    DLPack) train the model of their host copy with the edges computed on the GPU, and
    their predictions are CuPy arrays with the host's values (the emulation checks the
    same, and that nothing is copied, in CI: tests/backends/cuda/test_device_input.py)."""
    cupy = _gpu_or_skip()
    X, signal = _data(n_rows=30_000)
    y = (signal > 0).astype(float)
    weight = np.random.default_rng(1).random(len(X)) + 0.1
    params = {"objective": "binary:logistic", "max_depth": 6}
    host = gpuboost.train(
        dict(params, device="cpu"), gpuboost.Dataset(X, label=y, weight=weight), 5
    )
    for wrap in (
        cupy.asarray,
        lambda a: ArrayInterfaceOnly(cupy.asarray(a)),
        lambda a: DLPackOnly(cupy.asarray(a)),
    ):
        dataset = gpuboost.Dataset(wrap(X), label=cupy.asarray(y), weight=weight)
        model = gpuboost.train(dict(params, device="cuda"), dataset, 5)
        assert dataset._features is None  # never copied to the host
        assert_models_match(host, model)
    for kind in ({}, {"output_margin": True}, {"pred_leaf": True}, {"pred_contribs": True}):
        on_device = model.predict(cupy.asarray(X[:500]), **kind)
        assert isinstance(on_device, cupy.ndarray)
        np.testing.assert_array_equal(on_device.get(), host.predict(X[:500], **kind))
    cudf = pytest.importorskip("cudf")
    frame = pd.DataFrame(X[:, :4], columns=list("abcd"))
    frame["colour"] = pd.Categorical(np.where(X[:, 4] > 0, "red", "blue"))
    host = gpuboost.train(dict(params, device="cpu"), gpuboost.Dataset(frame, label=y), 5)
    device = gpuboost.train(
        dict(params, device="cuda"), gpuboost.Dataset(cudf.from_pandas(frame), label=y), 5
    )
    assert_models_match(host, device)


def test_cluster_kernels_are_placeable_where_the_gpu_has_clusters():
    """The driver's cuOccupancyMaxActiveClusters answers for every cluster kernel (at
    its heaviest launch) on a compute capability 9.0+ GPU; the backend uses clusters
    exactly where it says at least one fits (the emulation's model and fallback: CI,
    tests/backends/cuda/test_occupancy.py)."""
    _gpu_or_skip()
    from gpuboost.backends.cuda import histogram, occupancy
    from gpuboost.backends.cuda.launch import CUPY, get_kernel

    if not histogram.device_has_clusters(CUPY):
        pytest.skip("no thread-block clusters below compute capability 9.0")
    optin = histogram.device_limits(CUPY)[1]
    answers = {}
    for file_stem, name in occupancy.CLUSTER_KERNELS:
        kernel = get_kernel(CUPY, file_stem, name)
        answers[name] = occupancy.max_active_clusters(
            CUPY, file_stem, name, kernel.max_threads_per_block, optin - kernel.shared_size_bytes
        )
    print("max active clusters at the heaviest launch:", answers)
    placeable = all(count >= 1 for count in answers.values())
    assert occupancy.clusters_placeable(CUPY, optin) == placeable
    assert histogram.device_cluster_blocks(CUPY) == (histogram.CLUSTER_BLOCKS if placeable else 1)
