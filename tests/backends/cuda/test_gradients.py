"""Tests of the CUDA gradients and quantization (gpuboost.backends.cuda.gradients,
cuda/gradients.cu; gpuboost.backends.cuda.quantize, cuda/quantize.cu), under the CPU
emulation: every result must equal its reference bit for bit (the objectives'
``gradients`` on NumPy arrays; :func:`gpuboost.core.quantize.quantize` per column)."""

import collections
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from _parity import assert_models_match

import gpuboost
from gpuboost.backends.cuda import gradients as cuda_gradients
from gpuboost.backends.cuda import quantize as cuda_quantize
from gpuboost.backends.cuda.launch import KernelLauncher
from gpuboost.backends.cuda.sources import cuda_source_dir
from gpuboost.backends.emulation import traffic
from gpuboost.core import quantize as core_quantize
from gpuboost.core.quantize import quantize, quantize_with_scale
from gpuboost.objectives import get_objective
from gpuboost.params import validate_params

pytestmark = pytest.mark.usefixtures("cuda_emulation")

#: Objectives with kernels, and their extra parameters.
KERNEL_CASES = [
    ("reg:squarederror", {}),
    ("binary:logistic", {}),
    ("multi:softprob", {"num_class": 3}),
    ("multi:softmax", {"num_class": 5}),
    ("multi:softprob", {"num_class": 700}),  # 2 rows a tile: the last tile has 1 row
    ("binary:exponential", {}),
    ("count:poisson", {}),
    ("count:poisson", {"max_delta_step": 0.3}),
    ("reg:gamma", {}),
    ("reg:tweedie", {"tweedie_variance_power": 1.3}),
]


def assert_same_bits(device_array, expected):
    result = device_array.get()
    assert result.shape == expected.shape and result.dtype == expected.dtype
    bits = np.dtype(f"uint{8 * expected.itemsize}")
    np.testing.assert_array_equal(result.view(bits), expected.view(bits))


def _case(rng, name, n_outputs, n_rows):
    shape = (n_rows, n_outputs) if n_outputs > 1 else (n_rows,)
    raw = rng.normal(size=shape) * rng.choice([1e-300, 1e-3, 1.0, 40.0, 800.0], size=shape)
    raw.flat[:6] = [0.0, -0.0, np.inf, -np.inf, 710.0, -745.5]  # signed zeros, exp extremes
    if n_outputs > 1:
        y = rng.integers(0, n_outputs, n_rows).astype(np.float64)
    elif name.startswith("binary"):
        y = rng.integers(0, 2, n_rows).astype(np.float64)
    else:
        y = rng.normal(size=n_rows) * 1e3
    return y, raw


@pytest.mark.filterwarnings("ignore:invalid value encountered", "ignore:overflow encountered")
@pytest.mark.parametrize("name, extra", KERNEL_CASES)
@pytest.mark.parametrize("weights", ["none", "random", "signed_zeros", "huge"])
def test_kernel_gradients_equal_the_objective(backend, name, extra, weights):
    rng = np.random.default_rng(abs(hash((name, weights))) % 2**32)
    objective = get_objective(name, validate_params(dict(objective=name, **extra)))
    n_rows = 3001
    y, raw = _case(rng, name, objective.n_outputs(), n_rows)
    weight = {
        "none": None,
        "random": rng.random(n_rows) * 5.0,
        "signed_zeros": np.where(rng.random(n_rows) < 0.5, 0.0, -0.0),
        "huge": rng.choice([1e308, 1e-308, 3.0], size=n_rows),
    }[weights]
    expected_g, expected_h = objective.gradients(np, y, raw, weight)
    xp = backend.xp
    device_weight = None if weight is None else xp.asarray(weight)
    grad, hess, block_maxima = cuda_gradients.gradients(
        xp, backend.launcher, objective, xp.asarray(y), xp.asarray(raw), device_weight
    )
    assert_same_bits(grad, expected_g)
    assert_same_bits(hess, expected_h)
    if objective.n_outputs() > 1:
        assert block_maxima is None
    else:  # the columns' maxima, NaN included (bits: NaN payloads may differ)
        largest = cuda_quantize.maxima_from_blocks(block_maxima)
        for found, column in zip(largest, (expected_g, expected_h)):
            reference = np.max(np.abs(column))
            assert found == reference or (np.isnan(found) and np.isnan(reference))
    via_backend = backend.gradients(objective, xp.asarray(y), xp.asarray(raw), device_weight)
    assert_same_bits(via_backend[0], expected_g)


@pytest.mark.parametrize("name", ["reg:squarederror", "binary:logistic"])
@pytest.mark.parametrize("n_rows", [1, 300, 400_000])
def test_quantizing_the_rounds_gradients_reuses_their_maxima(backend, name, n_rows):
    """backend.quantize_gradients(..., round_output=0) right after backend.gradients: the
    quantized columns of the reference from one launch (no maxima pass) and one sync;
    the maxima are used once."""
    rng = np.random.default_rng(n_rows)
    objective = get_objective(name, validate_params(dict(objective=name)))
    y, raw = _case(rng, name, 1, n_rows)
    raw[~np.isfinite(raw)] = 3.0
    weight = rng.random(n_rows) * 4.0
    expected_g, expected_h = objective.gradients(np, y, raw, weight)
    xp = backend.xp
    grad, hess = backend.gradients(objective, xp.asarray(y), xp.asarray(raw), xp.asarray(weight))
    with traffic.record_traffic() as log:
        (qg, scale_g), (qh, scale_h) = backend.quantize_gradients(grad, hess, 0)
    assert [event.name for event in log.events if event.launches] == ["quantize_column_pair"]
    assert sum(event.syncs for event in log.events) == 1
    for (quantized, scale), column in (((qg, scale_g), expected_g), ((qh, scale_h), expected_h)):
        reference, reference_scale = quantize(np, column)
        assert scale == reference_scale
        assert_same_bits(quantized, reference)
    with traffic.record_traffic() as log:  # the maxima were used: computed again
        assert backend.quantize_gradients(grad, hess, 0)[0][1] == scale_g
    assert sum(event.launches for event in log.events) == 2


#: name -> (extra parameters, kernels launched, kernels not launched) of a training.
TRAINING_CASES = {
    "logistic": (
        {"objective": "binary:logistic"},
        {"logistic_gradients", "quantize_column_pair"},
        {"column_pair_max_magnitudes"},  # the gradient kernel's maxima are used
    ),
    "squared_error_weighted": (
        {"objective": "reg:squarederror"},
        {"squared_error_gradients", "quantize_column_pair"},
        {"column_pair_max_magnitudes"},
    ),
    "goss": (  # multiplied columns: their own maxima
        {"objective": "reg:squarederror", "data_sample_strategy": "goss"},
        {"squared_error_gradients", "column_pair_max_magnitudes", "quantize_column_pair"},
        set(),
    ),
    "poisson": (  # exp in the kernel: no array code, the maxima used
        {"objective": "count:poisson"},
        {"poisson_gradients", "quantize_column_pair"},
        {"column_pair_max_magnitudes"},
    ),
    "softprob": (
        {"objective": "multi:softprob", "num_class": 3},
        {"softmax_exp_terms", "softmax_gradients", "column_pair_max_magnitudes"},
        set(),
    ),
}


@pytest.mark.parametrize("case", list(TRAINING_CASES))
def test_training_uses_the_kernels_and_matches_the_cpu(monkeypatch, case):
    """End to end: the models of the CPU backend, byte for byte, with the gradient and
    quantization kernels launched (and the maxima pass skipped where the gradient
    kernels' maxima serve)."""
    extra, launched, skipped = TRAINING_CASES[case]
    names = collections.Counter()
    original = KernelLauncher.__call__

    def spy(self, file_stem, kernel_name, *args, **kwargs):
        names[kernel_name] += 1
        return original(self, file_stem, kernel_name, *args, **kwargs)

    monkeypatch.setattr(KernelLauncher, "__call__", spy)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    signal = X[:, 0] + np.sin(X[:, 1]) + 0.3 * rng.normal(size=300)
    n_classes = extra.get("num_class", 2 if "logistic" in extra["objective"] else 0)
    y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))
    y = signal if n_classes == 0 else y.astype(np.float64)
    if extra["objective"] == "count:poisson":
        y = np.floor(np.abs(signal) * 2.0)
    weight = rng.uniform(0.2, 2.0, size=300) if "weighted" in case else None
    models = {}
    for device in ("cpu", "cuda"):
        params = dict(extra, device=device, max_depth=3, max_bin=15, seed=3)
        dataset = gpuboost.Dataset(X, label=y, weight=weight, max_bin=15)
        models[device] = gpuboost.train(params, dataset, num_boost_round=3, verbose_eval=False)
    assert_models_match(models["cpu"], models["cuda"])
    assert launched <= set(names), launched - set(names)
    assert not skipped & set(names)


def test_other_objectives_keep_their_array_code(backend):
    objective = get_objective("reg:absoluteerror", validate_params({}))
    xp = backend.xp
    y = xp.asarray(np.arange(4.0))
    assert cuda_gradients.gradients(xp, backend.launcher, objective, y, y, None) is None
    many = cuda_gradients.SOFTMAX_TILE_VALUES + 1  # more classes than a tile holds
    softmax = get_objective("multi:softprob", validate_params({"num_class": many}))
    raw = xp.asarray(np.zeros((4, many)))
    assert cuda_gradients.gradients(xp, backend.launcher, softmax, y, raw, None) is None
    grad, _ = backend.gradients(objective, y, xp.asarray(np.array([1.0, 0.0, 5.0, 3.0])), None)
    np.testing.assert_array_equal(grad.get(), [1.0, -1.0, 1.0, 0.0])


@pytest.mark.parametrize("n_rows", [0, 1, 255, 257, 5000, 400_000])
def test_quantize_columns_equal_the_reference(backend, n_rows):
    """Sizes around a block and beyond MAXIMA_MAX_BLOCKS blocks (the grid-stride loop)."""
    rng = np.random.default_rng(n_rows)
    gradients = rng.normal(size=n_rows) * rng.choice([1e-300, 1.0, 1e300], size=n_rows)
    hessians = rng.random(n_rows) * 0.25
    if n_rows > 10:
        largest = np.max(np.abs(gradients))
        gradients[3:7] = [largest, -largest, 0.5 * largest / 2**30, -2.5 * largest / 2**30]  # ties
        hessians[-1] = 0.0
    xp = backend.xp
    (qg, scale_g), (qh, scale_h) = backend.quantize_gradients(
        xp.asarray(gradients), xp.asarray(hessians)
    )
    expected_g, expected_scale_g = quantize(np, gradients)
    expected_h, expected_scale_h = quantize(np, hessians)
    assert (scale_g, scale_h) == (expected_scale_g, expected_scale_h)
    assert_same_bits(qg, expected_g)
    assert_same_bits(qh, expected_h)
    # One (n_rows, 2) array of (gradient, hessian) rows, handed to the row-gathering
    # kernels as it is (no copy).
    pairs = cuda_quantize.gradient_pairs(xp, qg, qh)
    assert pairs.shape == (n_rows, 2) and pairs.flags.c_contiguous
    assert_same_bits(pairs, np.stack([expected_g, expected_h], axis=1))
    if n_rows:
        assert qg.strides == qh.strides == (cuda_quantize.PAIR_BYTES,)
        assert np.shares_memory(pairs._array, qg._array)
        assert np.shares_memory(pairs._array, qh._array)


def test_quantize_with_scales_lays_out_one_pair_array(backend):
    """Given scales (distributed training's global ones): the columns equal
    ``quantize_with_scale`` bit for bit and are the halves of one pair array, which
    ``gradient_pairs`` hands over without a copy (no stacking per histogram build)."""
    rng = np.random.default_rng(17)
    gradients, hessians = rng.normal(size=300), rng.random(300) * 0.25
    scale_g, scale_h = 2.0**28 / 3.5, 2.0**30 / 0.3  # not the columns' own scales
    xp = backend.xp
    qg, qh = backend.quantize_with_scales(
        xp.asarray(gradients), xp.asarray(hessians), scale_g, scale_h
    )
    assert_same_bits(qg, quantize_with_scale(np, gradients, scale_g))
    assert_same_bits(qh, quantize_with_scale(np, hessians, scale_h))
    with traffic.record_traffic() as log:
        pairs = cuda_quantize.gradient_pairs(xp, qg, qh)
    assert not log.events and np.shares_memory(pairs._array, qg._array)


def test_gradient_pairs_copy_only_columns_that_are_not_one_pair_array(backend):
    """The halves of a pair array in place; separate columns, swapped halves, columns of
    a wider array or a pair array not 8-byte aligned are stacked (one copy), equal."""
    xp = backend.xp
    host = np.arange(-30, 30, dtype=np.int32).reshape(20, 3)
    expected = host[:, :2]
    pairs = xp.asarray(np.ascontiguousarray(expected))
    with traffic.record_traffic() as log:
        same = cuda_quantize.gradient_pairs(xp, pairs[:, 0], pairs[:, 1])
    assert not log.events and np.shares_memory(same._array, pairs._array)
    wide = xp.asarray(host)
    flat = xp.asarray(np.ascontiguousarray(host[:, :2]).reshape(-1))
    unaligned = xp.empty(41, dtype=np.int32)
    unaligned[1:] = flat
    shifted = unaligned[1:].reshape(20, 2)
    cases = [
        (xp.asarray(host[:, 0]), xp.asarray(host[:, 1]), expected),
        (pairs[:, 1], pairs[:, 0], expected[:, ::-1]),
        (wide[:, 0], wide[:, 1], expected),
        (shifted[:, 0], shifted[:, 1], expected),
    ]
    for gradients, hessians, want in cases:
        with traffic.record_traffic() as log:
            got = cuda_quantize.gradient_pairs(xp, gradients, hessians)
        assert log.events  # a stack
        assert got.flags.c_contiguous and not np.shares_memory(got._array, gradients._array)
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize(
    "gradients, expected_scale",
    [
        (np.zeros(5), 1.0),  # all zero: scale 1
        (np.array([0.0, -0.0, 5e-324, -5e-324]), 1.0),  # subnormal maximum: scale 1
        (np.array([-3.0, 1.0, -0.0]), 2.0**28),  # the power of two below 2**30 / 3
    ],
)
def test_quantize_degenerate_columns(backend, gradients, expected_scale):
    xp = backend.xp
    (qg, scale_g), _ = backend.quantize_gradients(xp.asarray(gradients), xp.asarray(gradients))
    assert scale_g == expected_scale == quantize(np, gradients)[1]
    assert_same_bits(qg, quantize(np, gradients)[0])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("column", [0, 1])
def test_quantize_rejects_non_finite_values(backend, bad, column):
    xp = backend.xp
    columns = [np.ones(700), np.ones(700)]
    columns[column][650] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        backend.quantize_gradients(xp.asarray(columns[0]), xp.asarray(columns[1]))


def test_quantize_gradients_syncs_once(backend):
    """Both scales from one copy to the host: two launches, one synchronization."""
    xp = backend.xp
    values = xp.asarray(np.linspace(-1.0, 2.0, 1000))
    with traffic.record_traffic() as log:
        backend.quantize_gradients(values, values)
    assert sum(event.syncs for event in log.events) == 1
    assert sum(event.launches for event in log.events) == 2


def test_dispersion_sums_sync_once_whatever_the_chunks(backend, monkeypatch):
    """The split penalty's integer sums on the device: the reference's parts of every
    chunk stay on the device and come back in one copy (one synchronization), the same
    integers as NumPy's."""
    monkeypatch.setattr(core_quantize, "DISPERSION_CHUNK_ROWS", 1000)
    rng = np.random.default_rng(8)
    q_g = rng.integers(-(2**30), 2**30 + 1, size=3500).astype(np.int32)
    q_h = rng.integers(0, 2**30 + 1, size=3500).astype(np.int32)
    rows = rng.permutation(3500)[:2500].astype(np.int32)
    xp = backend.xp
    with traffic.record_traffic() as log:
        parts = backend.dispersion_sums(xp.asarray(q_g), xp.asarray(q_h), xp.asarray(rows))
    assert sum(event.syncs for event in log.events) == 1
    assert parts == core_quantize.dispersion_sums(np, q_g, q_h, rows, chunk_rows=1 << 20)


def test_python_constants_match_the_kernel_files():
    for module, constant, stem in (
        (cuda_quantize, "QUANTIZE_THREADS_PER_BLOCK", "quantize"),
        (cuda_gradients, "GRADIENT_THREADS_PER_BLOCK", "gradients"),
    ):
        text = (Path(cuda_source_dir()) / f"{stem}.cu").read_text()
        assert f"constexpr int {constant} = {getattr(module, constant)};" in text
    text = (Path(cuda_source_dir()) / "gradients.cu").read_text()
    assert f"constexpr int32_t SOFTMAX_TILE_VALUES = {cuda_gradients.SOFTMAX_TILE_VALUES};" in text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("stem", ["gradients", "quantize"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernel_files_compile_with_nvcc_without_warnings(stem, arch):
    path = Path(cuda_source_dir()) / f"{stem}.cu"
    command = [
        "nvcc",
        "-std=c++17",
        "--fmad=false",
        f"-arch={arch}",
        "-cubin",
        "-o",
        "/dev/null",
        "-Werror",
        "all-warnings",
        f"-I{cuda_source_dir()}",
        str(path),
    ]
    completed = subprocess.run(command, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_kept_maxima_belong_to_the_thread_that_computed_them(backend):
    """A backend serves every training on its device: another thread's gradients do not
    lend their maxima to this thread's columns."""
    xp = backend.xp
    objective = get_objective("reg:squarederror", validate_params({}))
    y = xp.asarray(np.zeros(500))
    small, _ = backend.gradients(objective, y, xp.asarray(np.linspace(-1.0, 1.0, 500)), None)
    large = {}

    def other_training():
        large["grad"] = backend.gradients(objective, y, xp.asarray(np.full(500, 8.0)), None)

    worker = threading.Thread(target=other_training)
    worker.start()
    worker.join()
    (_, scale_g), _ = backend.quantize_gradients(small, xp.ones(500), 0)
    assert scale_g == quantize(np, np.linspace(-1.0, 1.0, 500))[1]
