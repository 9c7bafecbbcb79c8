"""Tests of the CUDA split scan (gpuboost.backends.cuda.split_scan, cuda/split_scan.cu,
cuda/gain.cuh).

The kernels run under the CPU emulation (``GPUBOOST_EMULATE_CUDA=1``; histograms
are emulated device arrays, which follow CuPy's rules) and must return exactly the
records of :func:`gpuboost.backends.numpy.split_scan.find_best_splits`: every field
equal, gains bit for bit, ties broken the same way.
"""

import dataclasses
import itertools
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cuda import partition as partition_module
from gpuboost.backends.cuda import split_scan as cuda_split
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.cuda.sources import cuda_source_dir
from gpuboost.backends.cuda.split_scan import find_best_splits
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.backends.emulation.device_array import count_operations
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.backends.numpy.histogram import build_histograms
from gpuboost.backends.numpy.split_scan import find_best_splits as numpy_find_best_splits
from gpuboost.backends.numpy.split_scan import find_best_splits_naive
from gpuboost.core.dtypes import GRAD_QUANT_MAX, HIST_COUNT, HIST_HESS
from gpuboost.core.gain import SPLIT_RECORD_DTYPE, SplitParams
from gpuboost.core.quantize import quantize
from gpuboost.tree.splitters.hist import HistogramSplitter

#: Every SplitParams option on and off (lambda 0 lets H + lambda <= 0 occur).
PARAM_GRID = [
    SplitParams(
        reg_lambda=lam,
        reg_alpha=alpha,
        max_delta_step=mds,
        min_child_weight=mcw,
        min_data_in_leaf=mdl,
        gamma=gamma,
    )
    for lam, alpha, mds, mcw, mdl, gamma in itertools.product(
        (0.0, 1.0), (0.0, 0.7), (0.0, 0.4), (0.0, 2.0), (1, 5), (0.0, 0.5)
    )
]


pytestmark = pytest.mark.usefixtures("cuda_emulation")


def assert_same_records(result, expected):
    """Every field equal; gains compared bit for bit."""
    assert result.dtype == expected.dtype == SPLIT_RECORD_DTYPE
    assert result.shape == expected.shape
    for name in SPLIT_RECORD_DTYPE.names:
        if name == "gain":
            np.testing.assert_array_equal(
                result[name].view(np.int64), expected[name].view(np.int64), err_msg=name
            )
        else:
            np.testing.assert_array_equal(result[name], expected[name], err_msg=name)


def _scan_on_device(histograms, *args, **kwargs):
    """:func:`find_best_splits` on a device copy of the host histograms."""
    launcher = KernelLauncher(EMULATED, check_launches=True)
    return find_best_splits(xp, launcher, xp.asarray(histograms), *args, **kwargs)


def both(histograms, scale_g, scale_h, n_value_bins, missing_bin, params, mask=None):
    result = _scan_on_device(histograms, scale_g, scale_h, n_value_bins, missing_bin, params, mask)
    expected = numpy_find_best_splits(
        histograms, scale_g, scale_h, n_value_bins, missing_bin, params, mask
    )
    assert_same_records(result, expected)
    return expected


def data_histograms(rng, n_nodes, n_features, max_bin, discrete=False):
    """Histograms of random binned data, as the grower builds them: missing values in
    some features, a constant feature, optionally few distinct gradients (many ties)."""
    n_rows = int(rng.integers(20 * n_nodes, 60 * n_nodes))
    n_value_bins = rng.integers(2, max_bin + 1, size=n_features)
    n_value_bins[-1] = 1  # constant feature
    X_binned = np.empty((n_rows, n_features), dtype=np.uint8)
    for feature in range(n_features):
        X_binned[:, feature] = rng.integers(0, n_value_bins[feature], size=n_rows)
    with_missing = rng.random(n_features) < 0.6
    X_binned[(rng.random((n_rows, n_features)) < 0.15) & with_missing] = max_bin
    if discrete:
        gradients = rng.integers(-2, 3, size=n_rows).astype(np.float64)
        hessians = rng.choice([0.0, 1.0, 2.0], size=n_rows)
    else:
        gradients = rng.normal(size=n_rows) + (X_binned[:, 0] % 3 == 0)
        hessians = rng.uniform(0.05, 1.0, size=n_rows)
    quantized_g, scale_g = quantize(np, gradients)
    quantized_h, scale_h = quantize(np, hessians)
    cuts = np.sort(rng.integers(0, n_rows + 1, size=n_nodes - 1))
    begins, ends = np.concatenate([[0], cuts]), np.concatenate([cuts, [n_rows]])
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        quantized_g,
        quantized_h,
        rng.permutation(n_rows).astype(np.int32),
        begins,
        ends,
        max_bin + 1,
    )
    return histograms, scale_g, scale_h, n_value_bins


@pytest.mark.parametrize("index", range(len(PARAM_GRID)))
def test_every_parameter_combination_on_data_histograms(index):
    params = PARAM_GRID[index]
    rng = np.random.default_rng(index)
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, 4, 5, 15)
    both(histograms, scale_g, scale_h, n_value_bins, 15, params)


@pytest.mark.parametrize("seed", range(6))
def test_masks_missing_values_and_ties(seed):
    rng = np.random.default_rng(100 + seed)
    max_bin = int(rng.choice([3, 15, 31]))
    n_nodes, n_features = int(rng.integers(1, 7)), int(rng.integers(2, 7))
    histograms, scale_g, scale_h, n_value_bins = data_histograms(
        rng, n_nodes, n_features, max_bin, discrete=seed % 2 == 1
    )
    mask = rng.random((n_nodes, n_features)) < 0.7
    params = PARAM_GRID[int(rng.integers(len(PARAM_GRID)))]
    expected = both(histograms, scale_g, scale_h, n_value_bins, max_bin, SplitParams(), mask)
    assert (expected["feature"] >= 0).any()  # not vacuous
    both(histograms, scale_g, scale_h, n_value_bins, max_bin, params, mask)
    both(
        histograms,
        scale_g,
        scale_h,
        n_value_bins,
        max_bin,
        params,
        np.zeros((n_nodes, n_features), dtype=bool),
    )


@pytest.mark.parametrize("seed", range(4))
def test_arbitrary_integer_histograms(seed):
    """Histograms that no data could give (features disagree on the node total, negative
    hessians and counts): the parent is feature 0's total, as in NumPy; H + lambda <= 0,
    signed zeros and NaN gains occur."""
    rng = np.random.default_rng(200 + seed)
    n_nodes, n_features, max_bin = 3, 4, 7
    histograms = rng.integers(
        -GRAD_QUANT_MAX, GRAD_QUANT_MAX, size=(n_nodes, n_features, max_bin + 1, 3)
    )
    histograms[..., HIST_COUNT] = rng.integers(-2, 30, size=histograms.shape[:3])
    histograms[:, 1, max_bin] = 0  # feature 1 without missing rows
    histograms[:, :, 0, HIST_HESS] = 0  # left children with H == 0: H + lambda == 0 at lambda 0
    n_value_bins = np.array([max_bin, 4, 1, max_bin])
    for params in (
        SplitParams(reg_lambda=0.0, min_child_weight=-1e30, min_data_in_leaf=-5),
        SplitParams(
            reg_lambda=0.0,
            reg_alpha=3.0,
            max_delta_step=0.25,
            min_child_weight=-1e30,
            min_data_in_leaf=-5,
        ),
        SplitParams(),
    ):
        both(histograms, 2.0**27, 3.0**17, n_value_bins, max_bin, params)


def test_gain_equal_to_gamma_is_not_enough():
    rng = np.random.default_rng(350)
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, 3, 4, 15)
    best = both(histograms, scale_g, scale_h, n_value_bins, 15, SplitParams())
    assert best["feature"][0] >= 0
    gamma = float(best["gain"][0])
    expected = both(histograms, scale_g, scale_h, n_value_bins, 15, SplitParams(gamma=gamma))
    assert expected["gain"][0] != gamma  # the candidate whose gain equals gamma lost


def test_all_256_bins():
    rng = np.random.default_rng(300)
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, 2, 3, 255)
    n_value_bins[0] = 255
    expected = both(histograms, scale_g, scale_h, n_value_bins, 255, SplitParams())
    assert (expected["feature"] >= 0).all()


def test_duplicate_features_pick_the_lowest():
    rng = np.random.default_rng(400)
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, 3, 6, 15)
    best = numpy_find_best_splits(histograms, scale_g, scale_h, n_value_bins, 15, SplitParams())[
        "feature"
    ]
    for node, feature in enumerate(best):  # copy each node's winner into every later feature
        if feature >= 0:
            histograms[node, feature + 1 :] = histograms[node, feature]
    n_value_bins[:] = n_value_bins.max()
    expected = both(histograms, scale_g, scale_h, n_value_bins, 15, SplitParams())
    np.testing.assert_array_equal(expected["feature"], best)
    mask = np.ones(histograms.shape[:2], dtype=bool)
    mask[:, 0] = False
    both(histograms, scale_g, scale_h, n_value_bins, 15, SplitParams(), mask)


def test_empty_bins_and_zero_missing_sums_tie():
    """Empty bins give equal candidates (lowest bin wins); a missing bin with rows but
    zero sums makes both directions tie (missing-right wins; default_left False)."""
    n_bins = 8
    histograms = np.zeros((2, 2, n_bins, 3), dtype=np.int64)
    for node in range(2):
        histograms[node, :, 0] = (-3 * 2**20, 2**20, 4)
        histograms[node, :, 5] = (3 * 2**20, 2**20, 4)  # bins 1-4 empty: thresholds 0-4 tie
    histograms[0, :, n_bins - 1] = (0, 0, 3)  # missing rows with zero sums
    histograms[1, 1, n_bins - 1] = (0, 0, 3)
    histograms[1, 0, 0, HIST_COUNT] += 3  # node 1: feature 0 holds the missing rows in bin 0
    n_value_bins = np.array([7, 7])
    expected = both(
        histograms,
        2.0**20,
        2.0**20,
        n_value_bins,
        n_bins - 1,
        SplitParams(reg_lambda=1.0, min_child_weight=0.0),
    )
    np.testing.assert_array_equal(expected["feature"], [0, 0])
    np.testing.assert_array_equal(expected["bin"], [0, 0])
    np.testing.assert_array_equal(expected["default_left"], [False, True])


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_infinite_gain_means_no_split():
    """NumPy keeps a node without a split when its best gain is +inf (not finite)."""
    histograms = np.zeros((1, 2, 4, 3), dtype=np.int64)
    histograms[0, :, 0] = (GRAD_QUANT_MAX, 1, 5)
    histograms[0, :, 1] = (-GRAD_QUANT_MAX, 1, 5)
    params = SplitParams(min_child_weight=0.0)
    finite = both(histograms, 1e-140, 1.0, np.array([3, 3]), 3, params)
    assert finite["feature"][0] == 0 and np.isfinite(finite["gain"][0])
    overflowing = both(histograms, 1e-190, 1.0, np.array([3, 3]), 3, params)
    assert overflowing["feature"][0] == -1 and overflowing["count"][0] == 10


def test_degenerate_batches():
    histograms = np.zeros((0, 3, 8, 3), dtype=np.int64)
    assert _scan_on_device(histograms, 1.0, 1.0, np.full(3, 7), 7, SplitParams()).shape == (0,)
    rng = np.random.default_rng(500)
    one_bin = rng.integers(-100, 100, size=(2, 3, 2, 3))  # max_bin 1: no candidate bins
    both(one_bin, 1.0, 1.0, np.ones(3, dtype=np.int64), 1, SplitParams())
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, 2, 3, 15)
    # a missing bin below the last column: the columns above it only count in the parent
    both(histograms, scale_g, scale_h, np.minimum(n_value_bins, 13), 14, SplitParams())


def test_device_copy_of_n_value_bins_and_wrong_shapes():
    rng = np.random.default_rng(600)
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, 2, 3, 7)
    expected = numpy_find_best_splits(histograms, scale_g, scale_h, n_value_bins, 7, SplitParams())
    result = _scan_on_device(
        histograms, scale_g, scale_h, n_value_bins.astype(np.int32), 7, SplitParams()
    )
    assert_same_records(result, expected)
    with pytest.raises(ValueError, match="n_value_bins"):
        _scan_on_device(histograms, scale_g, scale_h, n_value_bins[:2], 7, SplitParams())
    with pytest.raises(ValueError, match="feature_mask"):
        _scan_on_device(
            histograms,
            scale_g,
            scale_h,
            n_value_bins,
            7,
            SplitParams(),
            np.ones((3, 3), dtype=bool),
        )
    with pytest.raises(ValueError, match="shape"):
        _scan_on_device(histograms[..., :2], scale_g, scale_h, n_value_bins, 7, SplitParams())
    assert (expected["feature"] >= 0).any()


def test_python_constants_match_the_kernel_file():
    source = "".join(
        (Path(cuda_source_dir()) / name).read_text()
        for name in ("split_scan.cu", "split_candidates.cuh")
    )

    def constant(name):
        match = re.search(rf"constexpr\s+\w+\s+{name}\s*=\s*(\d+);", source)
        assert match, name
        return int(match.group(1))

    assert constant("SPLIT_SCAN_MAX_THREADS") == cuda_split.SCAN_MAX_THREADS
    assert constant("SPLIT_SELECT_MAX_THREADS") == cuda_split.SELECT_MAX_THREADS
    assert constant("FEATURE_BEST_LEFT_SUMS") + 3 == cuda_split.FEATURE_BEST_WORDS
    assert constant("RECORD_LEFT_SUMS") + 6 == cuda_split.RECORD_WORDS


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernel_file_compiles_with_nvcc_without_warnings(arch):
    """split_scan.cu, and with it gain.cuh."""
    path = Path(cuda_source_dir()) / "split_scan.cu"
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


def test_overflowing_gain_keeps_inf_in_the_record():
    # Node 0: the children's gradient sums square beyond float64 (gain +inf); node 1 the same
    # bins at a sane scale. Both backends give node 0 no split and keep gain +inf.
    histograms = np.zeros((2, 1, 4, 3), dtype=np.int64)
    histograms[:, 0, 0] = (2**30, 2**20, 10)
    histograms[:, 0, 1] = (-(2**30), 2**20, 10)
    n_value_bins = np.array([3])
    overflowing = both(histograms[:1], 1e-150, 2.0**20, n_value_bins, 3, SplitParams())
    assert overflowing["feature"][0] == -1 and overflowing["gain"][0] == np.inf
    sane = both(histograms[1:], 2.0**30, 2.0**20, n_value_bins, 3, SplitParams())
    assert sane["feature"][0] == 0 and np.isfinite(sane["gain"][0])
    naive = find_best_splits_naive(histograms[:1], 1e-150, 2.0**20, n_value_bins, 3, SplitParams())
    assert naive["feature"][0] == -1 and naive["gain"][0] == np.inf


@pytest.mark.parametrize("seed", range(4))
def test_monotone_constraints(seed):
    """Directions per feature and bounds per node: the records of the NumPy scan."""
    rng = np.random.default_rng(600 + seed)
    n_nodes, n_features, max_bin = 4, 5, 15
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, n_nodes, n_features, max_bin)
    directions = (1, -1, 0, 1, -1)
    lower = np.where(rng.random(n_nodes) < 0.5, -np.inf, -rng.random(n_nodes))
    upper = np.where(rng.random(n_nodes) < 0.5, np.inf, rng.random(n_nodes))
    bounds = np.stack([lower, upper], axis=1)
    n_found = 0
    for params in PARAM_GRID[seed::9]:
        params = dataclasses.replace(params, monotone=directions)
        arguments = (histograms, scale_g, scale_h, n_value_bins, max_bin, params, None)
        result = _scan_on_device(*arguments, node_bounds=bounds)
        expected = numpy_find_best_splits(*arguments, node_bounds=bounds)
        assert_same_records(result, expected)
        n_found += int((expected["feature"] >= 0).sum())
    assert n_found > 0


def test_scan_chunks_cover_every_feature_once():
    for n_nodes in (1, 2, 5, 64, 128, 1000):
        for n_features in (1, 3, 28, 300):
            per_block, chunks = cuda_split.scan_chunks(n_nodes, n_features)
            assert (chunks - 1) * per_block < n_features <= chunks * per_block
            if n_nodes * n_features >= cuda_split.SCAN_MIN_BLOCKS:
                assert 2 * n_nodes * chunks >= cuda_split.SCAN_MIN_BLOCKS  # rounding
    assert cuda_split.scan_chunks(128, 28) == (10, 3)
    assert cuda_split.scan_chunks(1, 28) == (1, 28)


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")
@pytest.mark.parametrize("min_blocks", [1, 2, 7])
def test_blocks_scanning_several_features(monkeypatch, min_blocks):
    """Chunks of several features per block (fewer blocks than features): masks (whole
    masked chunks too), monotone constraints, and features that disagree on the node
    total (every chunk takes feature 0's, as NumPy)."""
    monkeypatch.setattr(cuda_split, "SCAN_MIN_BLOCKS", min_blocks)
    rng = np.random.default_rng(700 + min_blocks)
    n_nodes, n_features, max_bin = 3, 7, 15
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, n_nodes, n_features, max_bin)
    assert cuda_split.scan_chunks(n_nodes, n_features)[0] > 1
    mask = rng.random((n_nodes, n_features)) < 0.6
    mask[0, :4] = False
    for params in PARAM_GRID[::11]:
        both(histograms, scale_g, scale_h, n_value_bins, max_bin, params)
        both(histograms, scale_g, scale_h, n_value_bins, max_bin, params, mask)
    directions = (1, -1, 0, 1, -1, 0, 1)
    bounds = np.stack([-rng.random(n_nodes), rng.random(n_nodes)], axis=1)
    params = SplitParams(monotone=directions)
    arguments = (histograms, scale_g, scale_h, n_value_bins, max_bin, params, mask)
    assert_same_records(
        _scan_on_device(*arguments, node_bounds=bounds),
        numpy_find_best_splits(*arguments, node_bounds=bounds),
    )
    arbitrary = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX, size=histograms.shape)
    arbitrary[..., HIST_COUNT] = rng.integers(-2, 30, size=histograms.shape[:3])
    both(arbitrary, 2.0**27, 3.0**17, n_value_bins, max_bin, SplitParams(reg_lambda=0.0))


@pytest.mark.parametrize("min_blocks", [1, 7, 264])
def test_one_launch_per_batch_with_reused_scratch(monkeypatch, min_blocks):
    """One kernel launch and one copy to the host per batch once the scratch buffers are
    made (the node's last block selects: no second launch, no clearing operation); the
    arrival counters of earlier launches (finished, or left half-counted by a launch that
    never finished) and earlier launches' per-feature bests do not change the records."""
    monkeypatch.setattr(cuda_split, "SCAN_MIN_BLOCKS", min_blocks)
    rng = np.random.default_rng(800 + min_blocks)
    launcher = KernelLauncher(EMULATED, check_launches=True)
    scratch = cuda_split.SplitScanScratch()
    max_bin = 15
    batches = [data_histograms(rng, n_nodes, 6, max_bin) for n_nodes in (5, 2, 5, 3)]
    # Make the buffers for the largest batch, so that no later launch grows them.
    histograms, scale_g, scale_h, n_value_bins = batches[0]
    find_best_splits(
        xp,
        launcher,
        xp.asarray(histograms),
        scale_g,
        scale_h,
        n_value_bins,
        max_bin,
        SplitParams(),
        scratch=scratch,
    )
    for index, (histograms, scale_g, scale_h, n_value_bins) in enumerate(batches):
        if index == 2:  # an interrupted launch of the last epoch: counts, not all blocks
            words, epoch = scratch.arrivals.next_launch(xp, 1)
            words[...] = xp.asarray(np.full(words.shape, (epoch << 32) | 1, dtype=np.uint64))
        device_histograms = xp.asarray(histograms)
        device_bins = xp.asarray(np.asarray(n_value_bins, dtype=np.int32))
        params = PARAM_GRID[int(rng.integers(len(PARAM_GRID)))]
        with count_operations() as counts:
            result = find_best_splits(
                xp,
                launcher,
                device_histograms,
                scale_g,
                scale_h,
                device_bins,
                max_bin,
                params,
                scratch=scratch,
            )
        assert dict(counts) == {"kernel": 1, "array_op": 0, "to_device": 0, "to_host": 1, "sync": 1}
        expected = numpy_find_best_splits(
            histograms, scale_g, scale_h, n_value_bins, max_bin, params
        )
        assert_same_records(result, expected)


def test_arrival_epochs_wrap_around(monkeypatch):
    """When the epochs run out the counters are made again (zeroed) from epoch 1."""
    monkeypatch.setattr(partition_module, "MAX_STATUS_EPOCH", 3)
    rng = np.random.default_rng(900)
    scratch = cuda_split.SplitScanScratch()
    histograms, scale_g, scale_h, n_value_bins = data_histograms(rng, 3, 4, 7)
    expected = numpy_find_best_splits(histograms, scale_g, scale_h, n_value_bins, 7, SplitParams())
    epochs = []
    for _ in range(5):
        result = _scan_on_device(
            histograms, scale_g, scale_h, n_value_bins, 7, SplitParams(), scratch=scratch
        )
        assert_same_records(result, expected)
        epochs.append(scratch.arrivals.epoch)
    assert epochs == [1, 2, 3, 1, 2]


@pytest.mark.parametrize("estimate", [True, False])
def test_a_categorical_level_copies_its_records_and_slice_at_once(monkeypatch, estimate):
    """With categorical features the CUDA backend returns a level's split records and
    its categorical histogram slice in one copy (``copies_categorical_with_records``):
    one synchronization per scanned level, the root's ``cat_smooth`` estimate included;
    the model is the CPU backend's byte for byte."""

    rng = np.random.default_rng(5)
    n_rows = 3000
    big, x = rng.integers(0, 40, n_rows), rng.normal(size=n_rows)
    y = rng.normal(size=40)[big] + x
    X = np.column_stack([big.astype(np.float64), x, rng.normal(size=n_rows)])
    X[rng.random(n_rows) < 0.05, 0] = np.nan
    params = {"max_depth": 4, "cat_smooth_estimate": estimate, "verbosity": 0}
    scans = []
    scan = HistogramSplitter.find_best_splits

    def counted(self, *args, **kwargs):
        with count_operations() as counts:
            table = scan(self, *args, **kwargs)
        if isinstance(self.backend, CudaBackend):
            scans.append(counts["sync"])
        return table

    monkeypatch.setattr(HistogramSplitter, "find_best_splits", counted)
    with emulated_kernels():
        boosters = [
            gpuboost.train(
                dict(params, device=device),
                gpuboost.Dataset(X, label=y, categorical_features=[0]),
                2,
            )
            for device in ("cuda", "cpu")
        ]
    assert boosters[0].save_raw() == boosters[1].save_raw()
    assert any(tree.has_categorical for tree in boosters[0].trees)
    assert len(scans) >= 6 and set(scans) == {1}, scans
