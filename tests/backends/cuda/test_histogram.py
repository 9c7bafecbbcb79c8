"""Tests of the CUDA histogram primitive (gpuboost.backends.cuda.histogram,
cuda/histogram.cu).

The kernels run under the CPU emulation (``GPUBOOST_EMULATE_CUDA=1``; inputs and
outputs are emulated device arrays, which follow CuPy's rules) and must equal the NumPy
backend's histograms exactly, on every path: the shared-memory kernel with one or
several feature groups, several row blocks per node, several flush passes per block,
and the global-memory fallback.
"""

import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cuda import histogram as cuda_histogram
from gpuboost.backends.cuda import row_scan as cuda_row_scan
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.binned_rows import lay_out_binned
from gpuboost.backends.cuda.histogram import (
    CLUSTER_BLOCKS,
    MAX_BLOCK_THREADS,
    MAX_ROWS_PER_PASS,
    SHARED_BYTES_PER_CELL,
    ZeroedBatches,
    build_histograms,
    plan_histograms,
    shared_feature_stride,
)
from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.cuda.sources import cuda_source_dir
from gpuboost.backends.emulation import traffic
from gpuboost.backends.emulation.device_array import count_operations
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.backends.emulation.sanitizer import SANITIZE_ENV_VAR
from gpuboost.backends.numpy.histogram import build_histograms as numpy_build_histograms
from gpuboost.backends.numpy.histogram import build_histograms_naive
from gpuboost.core.dtypes import GRAD_QUANT_MAX, HIST_COUNT, HIST_DTYPE, HIST_GRAD, HIST_HESS

KERNEL_PATH = Path(cuda_source_dir()) / "histogram.cu"


pytestmark = pytest.mark.usefixtures("cuda_emulation")


def _build_on_device(
    X_binned,
    gradients,
    hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    device_layout=False,
    **options,
):
    """:func:`build_histograms` on device copies of the host inputs, copied back.
    ``device_layout``: the inputs as the backend holds them, the quantized columns the
    halves of one (n_rows, 2) array (the layout the quantize kernel writes, read in place)
    and the bins in padded rows (binned_rows.lay_out_binned); else two arrays (stacked
    first) and C-ordered bins."""
    device_arrays = [xp.asarray(array) for array in (X_binned, gradients, hessians, sample_indices)]
    if device_layout:
        pairs = xp.asarray(np.stack([gradients, hessians], axis=1))
        device_arrays[1:3] = pairs[:, 0], pairs[:, 1]
        device_arrays[0] = lay_out_binned(xp, device_arrays[0])
    launcher = KernelLauncher(EMULATED, check_launches=True)
    return xp.asnumpy(
        build_histograms(xp, launcher, *device_arrays, begins, ends, n_bins, **options)
    )


def _problem(rng, n_rows, n_features, max_bin, missing_fraction=0.1):
    """Row-major bins with missing values and one constant feature, quantized g and h."""
    n_value_bins = rng.integers(1, max_bin + 1, size=n_features)
    X_binned = np.empty((n_rows, n_features), dtype=np.uint8)
    for feature in range(n_features):
        X_binned[:, feature] = rng.integers(0, n_value_bins[feature], size=n_rows)
    X_binned[rng.random((n_rows, n_features)) < missing_fraction] = max_bin
    X_binned[:, -1] = 0  # a constant feature: every row in one bin
    gradients = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    hessians = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    return X_binned, gradients, hessians


def _segments(rng, n_samples, n_nodes):
    """Disjoint segments in random node order, some of them empty."""
    cuts = np.sort(rng.integers(0, n_samples + 1, size=2 * n_nodes))
    order = rng.permutation(n_nodes)
    return cuts[0::2][order], cuts[1::2][order]


def _reference(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins):
    return numpy_build_histograms(
        np.ascontiguousarray(X_binned.T), gradients, hessians, sample_indices, begins, ends, n_bins
    )


def _assert_histograms_equal(result, expected):
    assert result.dtype == HIST_DTYPE
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


#: Blocks per flushing cluster: the device's (the emulation's: clusters of
#: ``CLUSTER_BLOCKS``, ``histogram_cluster_*``) and 1 (every block flushes, as on sm_80).
CLUSTERING = pytest.mark.parametrize("cluster_blocks", [None, 1], ids=["clusters", "blocks"])


@CLUSTERING
@pytest.mark.parametrize("seed", range(4))
def test_default_plan_matches_numpy_and_naive(seed, cluster_blocks, kernel_launches):
    """Seeds 1 and 3 pass the inputs in the device layout (pair array, padded rows). With
    clusters, more rows than two row blocks hold, and a node of all of them (one block's
    rows are never clustered)."""
    rng = np.random.default_rng(seed)
    max_bin = int(rng.choice([2, 15, 63]))
    n_rows = int(rng.integers(50, 300))
    if cluster_blocks is None:
        n_rows += 2 * cuda_histogram.MIN_ROWS_PER_BLOCK
    X_binned, gradients, hessians = _problem(rng, n_rows, int(rng.integers(2, 7)), max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _segments(rng, n_rows, int(rng.integers(1, 6)))
    if cluster_blocks is None:  # and a node of every row (segments may overlap)
        begins, ends = np.append(begins, 0), np.append(ends, n_rows)
    result = _build_on_device(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        max_bin + 1,
        seed % 2 == 1,
        cluster_blocks=cluster_blocks,
    )
    expected = _reference(X_binned, gradients, hessians, sample_indices, begins, ends, max_bin + 1)
    _assert_histograms_equal(result, expected)
    naive = build_histograms_naive(
        X_binned, gradients, hessians, sample_indices, begins, ends, max_bin + 1
    )
    np.testing.assert_array_equal(result, naive)
    assert expected[..., HIST_COUNT].sum() > 0  # not vacuous
    # the device's clusters (none on a profile without them: tests/.../test_device_profiles.py)
    clusters = cluster_blocks is None and cuda_histogram.device_cluster_blocks(EMULATED) > 1
    kernel = cuda_histogram.CLUSTER_KERNEL if clusters else cuda_histogram.SHARED_KERNEL
    assert [name for name, _ in kernel_launches] == [kernel]


@CLUSTERING
@pytest.mark.parametrize(
    "rows_per_block, block_threads", [(1, 32), (7, 1), (13, 96), (64, 5), (1000, MAX_BLOCK_THREADS)]
)
def test_row_blocks_and_thread_counts(rows_per_block, block_threads, cluster_blocks):
    """Several blocks per node (one flush each) and block sizes that do not divide
    the pairs evenly, including fewer threads than features."""
    rng = np.random.default_rng(rows_per_block)
    n_rows, n_features, max_bin = 240, 7, 31
    X_binned, gradients, hessians = _problem(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _segments(rng, n_rows, 5)
    result = _build_on_device(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        max_bin + 1,
        rows_per_block=rows_per_block,
        block_threads=block_threads,
        cluster_blocks=cluster_blocks,
    )
    _assert_histograms_equal(
        result, _reference(X_binned, gradients, hessians, sample_indices, begins, ends, max_bin + 1)
    )


@pytest.mark.parametrize("features_per_block", [1, 2, 3, 4])
def test_feature_groups_forced_by_a_small_shared_memory_limit(features_per_block):
    rng = np.random.default_rng(10 + features_per_block)
    n_rows, n_features, max_bin = 200, 7, 15
    n_bins = max_bin + 1
    limit = features_per_block * shared_feature_stride(n_bins) * SHARED_BYTES_PER_CELL
    lengths = np.array([n_rows], dtype=np.int64)
    plan = plan_histograms(lengths, n_features, n_bins, limit, sm_count=1)
    assert plan.use_shared
    assert plan.n_groups == -(-n_features // features_per_block)
    assert plan.features_per_group * plan.n_groups >= n_features
    assert plan.features_per_group <= features_per_block
    X_binned, gradients, hessians = _problem(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _segments(rng, n_rows, 4)
    result = _build_on_device(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_bins,
        device_layout=features_per_block % 2 == 0,
        shared_memory_limit=limit,
        rows_per_block=17,
        block_threads=64,
    )
    _assert_histograms_equal(
        result, _reference(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins)
    )


@pytest.mark.parametrize("how", ["limit_below_one_feature", "forced"])
def test_global_memory_fallback(how):
    rng = np.random.default_rng(20)
    n_rows, n_features, max_bin = 180, 5, 15
    n_bins = max_bin + 1
    X_binned, gradients, hessians = _problem(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _segments(rng, n_rows, 4)
    options = (
        {"shared_memory_limit": shared_feature_stride(n_bins) * SHARED_BYTES_PER_CELL - 1}
        if how == "limit_below_one_feature"
        else {"force_global": True}
    )
    plan = plan_histograms(
        ends - begins,
        n_features,
        n_bins,
        options.get("shared_memory_limit", 1 << 20),
        sm_count=1,
        force_global=options.get("force_global", False),
    )
    assert not plan.use_shared
    result = _build_on_device(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_bins,
        device_layout=how == "forced",
        rows_per_block=23,
        block_threads=48,
        **options,
    )
    _assert_histograms_equal(
        result, _reference(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins)
    )


@CLUSTERING
def test_many_nodes_with_empty_and_overlapping_segments(cluster_blocks):
    rng = np.random.default_rng(30)
    n_rows, n_features, max_bin = 150, 3, 7
    X_binned, gradients, hessians = _problem(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins = rng.integers(0, n_rows + 1, size=60)
    ends = np.minimum(n_rows, begins + rng.integers(0, 12, size=60))
    begins[[0, 17, 59]] = ends[[0, 17, 59]]  # empty first, middle and last nodes
    result = _build_on_device(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        list(begins),
        list(ends),
        max_bin + 1,
        rows_per_block=4,
        block_threads=32,
        cluster_blocks=cluster_blocks,
    )
    expected = _reference(X_binned, gradients, hessians, sample_indices, begins, ends, max_bin + 1)
    _assert_histograms_equal(result, expected)
    assert not expected[[0, 17, 59]].any()
    assert expected[..., HIST_COUNT].sum() == n_features * (ends - begins).sum()


@CLUSTERING
@pytest.mark.parametrize("sign", [1, -1])
def test_extreme_values_over_several_flush_passes(sign, cluster_blocks):
    """Every row at |q| = GRAD_QUANT_MAX in one bin, more rows than one pass holds:
    the packed shared-memory words reach their documented bounds."""
    n_rows = 2 * MAX_ROWS_PER_PASS + 5
    X_binned = np.zeros((n_rows, 1), dtype=np.uint8)
    X_binned[-3:, 0] = 2  # a few rows elsewhere
    gradients = np.full(n_rows, sign * GRAD_QUANT_MAX, dtype=np.int32)
    hessians = np.full(n_rows, -sign * GRAD_QUANT_MAX, dtype=np.int32)
    hessians[::7] = sign * GRAD_QUANT_MAX
    sample_indices = np.arange(n_rows, dtype=np.int32)
    begins, ends = [0, 5], [n_rows, n_rows]
    result = _build_on_device(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        4,
        rows_per_block=n_rows,
        cluster_blocks=cluster_blocks,
    )
    expected = _reference(X_binned, gradients, hessians, sample_indices, begins, ends, 4)
    _assert_histograms_equal(result, expected)
    assert expected[0, 0, 0, HIST_COUNT] > MAX_ROWS_PER_PASS
    assert abs(int(expected[0, 0, 0, HIST_GRAD])) == (n_rows - 3) * GRAD_QUANT_MAX
    assert expected[0, 0, 0, HIST_HESS] != 0


@pytest.mark.usefixtures("clusters")
def test_a_cluster_sums_a_piece_over_several_cluster_passes(kernel_launches):
    """A node of more rows than a cluster's pass holds (CLUSTER_BLOCKS x MAX_ROWS_PER_PASS),
    at |q| = GRAD_QUANT_MAX in one bin, cut by a second node inside the cluster's range:
    every block's share of a pass is summed across the cluster exactly."""
    n_rows = CLUSTER_BLOCKS * MAX_ROWS_PER_PASS + 777
    X_binned = np.zeros((n_rows, 1), dtype=np.uint8)
    X_binned[::5, 0] = 1
    gradients = np.full(n_rows, GRAD_QUANT_MAX, dtype=np.int32)
    gradients[1::2] = -GRAD_QUANT_MAX + 1
    hessians = np.full(n_rows, GRAD_QUANT_MAX, dtype=np.int32)
    sample_indices = np.arange(n_rows, dtype=np.int32)
    begins, ends = [0, 100], [n_rows - 50, 300]
    result = _build_on_device(
        X_binned, gradients, hessians, sample_indices, begins, ends, 2, rows_per_block=n_rows
    )
    assert kernel_launches == [(cuda_histogram.CLUSTER_KERNEL, CLUSTER_BLOCKS)]  # one cluster
    expected = _reference(X_binned, gradients, hessians, sample_indices, begins, ends, 2)
    _assert_histograms_equal(result, expected)
    assert expected[0, 0, :, HIST_COUNT].sum() == n_rows - 50 > CLUSTER_BLOCKS * MAX_ROWS_PER_PASS


@pytest.mark.usefixtures("clusters")
def test_the_emulated_device_flushes_per_cluster_and_plans_whole_clusters():
    """The emulation has clusters (the model is of an H100): the plan's row blocks of a
    group are a whole number of clusters, and the flush estimate counts clusters."""
    assert cuda_histogram.device_cluster_blocks(EMULATED) == CLUSTER_BLOCKS
    lengths = np.array([200_000, 3_000], dtype=np.int64)
    per_block = plan_histograms(lengths, 28, 256, 163 * 1024, sm_count=108)
    clustered = plan_histograms(
        lengths, 28, 256, 163 * 1024, sm_count=108, cluster_blocks=CLUSTER_BLOCKS
    )
    assert per_block.kernel == cuda_histogram.SHARED_KERNEL and per_block.cluster_blocks == 1
    assert clustered.kernel == cuda_histogram.CLUSTER_KERNEL
    assert clustered.rows_per_block == per_block.rows_per_block
    assert clustered.blocks_per_group % CLUSTER_BLOCKS == 0
    assert 0 <= clustered.blocks_per_group - per_block.blocks_per_group < CLUSTER_BLOCKS
    assert clustered.flushing_units == clustered.blocks_per_group // CLUSTER_BLOCKS
    assert per_block.flushing_units == per_block.blocks_per_group
    table = 28 * 256 * cuda_histogram.FLUSHED_CELL_BYTES
    saved = cuda_histogram.build_bytes(per_block, 28, 256, 32, 203_000) - (
        cuda_histogram.build_bytes(clustered, 28, 256, 32, 203_000)
    )
    assert saved == (per_block.flushing_units - clustered.flushing_units) * table
    fallback = plan_histograms(
        lengths, 28, 256, 163 * 1024, sm_count=108, force_global=True, cluster_blocks=8
    )
    assert not fallback.use_shared and fallback.cluster_blocks == 1
    with pytest.raises(ValueError, match="cluster_blocks"):
        plan_histograms(lengths, 28, 256, 163 * 1024, sm_count=108, cluster_blocks=0)


@pytest.mark.usefixtures("clusters")
@pytest.mark.parametrize("rows_per_block", [None, 100])
def test_a_batch_of_one_row_block_is_not_clustered(rows_per_block, kernel_launches):
    """A batch whose rows fill one row block is built by that block alone (the per-block
    kernel, one block per group), never by a cluster of blocks that would find no rows;
    one more row makes two blocks, and a cluster. The histograms are the same."""
    block_rows = rows_per_block or cuda_histogram.MIN_ROWS_PER_BLOCK
    options = {"sm_count": 108, "cluster_blocks": CLUSTER_BLOCKS, "rows_per_block": rows_per_block}
    for lengths in ([block_rows], [block_rows // 3, block_rows - block_rows // 3]):
        plan = plan_histograms(np.array(lengths), 28, 256, 163 * 1024, **options)
        assert plan.kernel == cuda_histogram.SHARED_KERNEL, lengths
        assert (plan.cluster_blocks, plan.blocks_per_group, plan.flushing_units) == (1, 1, 1)
    plan = plan_histograms(np.array([block_rows + 1]), 28, 256, 163 * 1024, **options)
    assert plan.kernel == cuda_histogram.CLUSTER_KERNEL
    assert (plan.cluster_blocks, plan.blocks_per_group) == (CLUSTER_BLOCKS, CLUSTER_BLOCKS)
    rng = np.random.default_rng(5)
    for n_rows, kernel in (
        (block_rows, cuda_histogram.SHARED_KERNEL),
        (block_rows + 1, cuda_histogram.CLUSTER_KERNEL),
    ):
        X_binned, gradients, hessians = _problem(rng, n_rows, 3, 7)
        sample_indices = rng.permutation(n_rows).astype(np.int32)
        begins, ends = np.array([0, 5]), np.array([5, n_rows])
        kernel_launches.clear()
        result = _build_on_device(
            X_binned,
            gradients,
            hessians,
            sample_indices,
            begins,
            ends,
            8,
            rows_per_block=rows_per_block,
        )
        assert [name for name, _ in kernel_launches] == [kernel]
        expected = _reference(X_binned, gradients, hessians, sample_indices, begins, ends, 8)
        _assert_histograms_equal(result, expected)


def test_training_on_a_device_without_clusters_equals_the_cpu_model(monkeypatch, kernel_launches):
    """A device without thread-block clusters (sm_80): the per-block histogram kernels and
    the per-block row scan only, and the CPU backend's models byte for byte."""
    for module in (cuda_histogram, cuda_row_scan):
        monkeypatch.setattr(module, "device_cluster_blocks", lambda mode: 1)
    rng = np.random.default_rng(9)
    X = rng.normal(size=(6000, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=6000) > 0).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 6, "max_bin": 63, "verbosity": 0}
    models = [
        gpuboost.train(dict(params, device=device), gpuboost.Dataset(X, label=y), 3).save_raw()
        for device in ("cuda", "cpu")
    ]
    assert models[0] == models[1]
    names = {name for name, _ in kernel_launches}
    assert cuda_histogram.SHARED_KERNEL in names and cuda_row_scan.KERNEL in names
    assert not [name for name in names if "cluster" in name]


@pytest.mark.parametrize("capability, blocks", [("80", 1), ("86", 1), ("90", 8), ("100", 8)])
@pytest.mark.parametrize("placeable", [True, False])
def test_a_gpu_has_clusters_from_compute_capability_9(monkeypatch, capability, blocks, placeable):
    """On a GPU (CuPy), the histogram and row-scan kernels run in clusters from compute
    capability 9.0 (H100) on, where the driver says a cluster can be placed
    (:mod:`gpuboost.backends.cuda.occupancy`), per block otherwise (A100: sm_80)."""
    device = types.SimpleNamespace(
        compute_capability=capability,
        id=0,
        attributes={"MultiProcessorCount": 132, "MaxSharedMemoryPerBlockOptin": 227 * 1024},
    )
    fake_cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=lambda: device))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(cuda_histogram, "_DEVICE_LIMITS", {})
    asked = []
    monkeypatch.setattr(
        cuda_histogram, "clusters_placeable", lambda *args: asked.append(args) or placeable
    )
    assert cuda_histogram.device_has_clusters("cupy") == (blocks > 1)
    assert cuda_histogram.device_cluster_blocks("cupy") == (blocks if placeable else 1)
    assert bool(asked) == (blocks > 1)  # asked only where clusters exist


def test_no_nodes_no_rows_and_no_features():
    rng = np.random.default_rng(40)
    X_binned, gradients, hessians = _problem(rng, 20, 3, 7)
    sample_indices = np.arange(20, dtype=np.int32)
    empty = _build_on_device(X_binned, gradients, hessians, sample_indices, [], [], 8)
    assert empty.shape == (0, 3, 8, 3) and empty.dtype == HIST_DTYPE
    zero_rows = _build_on_device(X_binned, gradients, hessians, sample_indices, [4, 9], [4, 9], 8)
    assert zero_rows.shape == (2, 3, 8, 3) and not zero_rows.any()


def test_rejects_wrong_dtypes_and_segments():
    rng = np.random.default_rng(50)
    X_binned, gradients, hessians = _problem(rng, 20, 3, 7)
    sample_indices = np.arange(20, dtype=np.int32)
    with pytest.raises(TypeError, match="X_binned"):
        _build_on_device(
            X_binned.astype(np.int32), gradients, hessians, sample_indices, [0], [20], 8
        )
    with pytest.raises(TypeError, match="sample_indices"):
        _build_on_device(
            X_binned, gradients, hessians, sample_indices.astype(np.int64), [0], [20], 8
        )
    with pytest.raises(ValueError, match="C-contiguous"):
        _build_on_device(
            np.asfortranarray(X_binned), gradients, hessians, sample_indices, [0], [20], 8
        )
    with pytest.raises(ValueError, match="segment"):
        _build_on_device(X_binned, gradients, hessians, sample_indices, [5], [21], 8)
    with pytest.raises(ValueError, match="block_threads"):
        _build_on_device(
            X_binned,
            gradients,
            hessians,
            sample_indices,
            [0],
            [20],
            8,
            block_threads=MAX_BLOCK_THREADS + 1,
        )


def test_plan_fits_28_features_of_256_bins_in_one_group_on_sm80():
    """The layout's headline: 28 x 256 cells in one block under sm_80's opt-in limit."""
    sm80_optin_bytes = 163 * 1024
    plan = plan_histograms(
        np.array([10**6], dtype=np.int64), 28, 256, sm80_optin_bytes, sm_count=108
    )
    assert plan.use_shared and plan.n_groups == 1
    assert plan.shared_bytes == 28 * 257 * SHARED_BYTES_PER_CELL <= sm80_optin_bytes
    assert plan.blocks_per_group >= 108  # enough blocks to fill the device
    small = plan_histograms(
        np.array([10, 0, 3000], dtype=np.int64), 4, 64, sm80_optin_bytes, sm_count=108
    )
    np.testing.assert_array_equal(small.node_offsets, [0, 10, 10, 3010])
    assert small.blocks_per_group == -(-3010 // small.rows_per_block)
    assert small.rows_per_block >= cuda_histogram.MIN_ROWS_PER_BLOCK


def _cu_constant(name):
    """A constant of histogram.cu or of its shared-histogram header."""
    source = KERNEL_PATH.read_text() + (KERNEL_PATH.parent / "histogram_shared.cuh").read_text()
    match = re.search(rf"constexpr\s+\w+\s+{name}\s*=\s*([^;]+);", source)
    assert match, name
    return match.group(1)


def test_python_constants_match_the_kernel_file():
    assert int(_cu_constant("HISTOGRAM_MAX_BLOCK_THREADS")) == MAX_BLOCK_THREADS
    assert int(_cu_constant("SUBTRACT_BLOCK_THREADS")) == cuda_histogram.SUBTRACT_BLOCK_THREADS
    # The kernel's occupancy bound holds the blocks per SM the plan aims for.
    assert int(_cu_constant("HISTOGRAM_MIN_BLOCKS_PER_SM")) == cuda_histogram.TARGET_BLOCKS_PER_SM
    assert int(_cu_constant("SHARED_WORDS_PER_CELL")) * 4 == SHARED_BYTES_PER_CELL
    assert int(_cu_constant("HISTOGRAM_CLUSTER_BLOCKS")) == cuda_histogram.CLUSTER_BLOCKS
    assert _cu_constant("MAX_ROWS_PER_PASS") == "int64_t{1} << 15"
    assert MAX_ROWS_PER_PASS == 1 << 15


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernel_file_compiles_with_nvcc_without_warnings(arch):
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
        str(KERNEL_PATH),
    ]
    completed = subprocess.run(command, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.parametrize(
    "seed, options",
    [
        (0, {}),
        (4, {"max_bin": 255}),  # 3,840 words per node: two subtraction blocks per pair
        (1, {"rows_per_block": 9, "block_threads": 64}),
        (2, {"shared_memory_limit": 2 * 17 * SHARED_BYTES_PER_CELL, "rows_per_block": 13}),
        (3, {"force_global": True, "rows_per_block": 11, "block_threads": 32}),
    ],
)
def test_children_histograms_equal_built_and_subtracted(seed, options):
    """build_children_histograms == [build_histograms | parents[rows] - built], with
    parent rows out of order and repeated, and an empty child."""
    rng = np.random.default_rng(60 + seed)
    options = dict(options)
    n_rows, n_features, max_bin = 260, 5, options.pop("max_bin", 15)
    n_bins = max_bin + 1
    X_binned, gradients, hessians = _problem(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _segments(rng, n_rows, 5)
    begins[2] = ends[2]  # an empty child: its sibling is its parent
    n_parents = 7
    parents = rng.integers(-(2**40), 2**40, size=(n_parents, n_features, n_bins, 3))
    parent_rows = np.array([6, 0, 3, 3, 5])
    launcher = KernelLauncher(EMULATED, check_launches=True)
    device_arrays = [xp.asarray(a) for a in (X_binned, gradients, hessians, sample_indices)]
    result = xp.asnumpy(
        cuda_histogram.build_children_histograms(
            xp,
            launcher,
            *device_arrays,
            begins,
            ends,
            n_bins,
            xp.asarray(parents),
            parent_rows,
            **options,
        )
    )
    built = _reference(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins)
    expected = np.concatenate([built, parents[parent_rows] - built])
    _assert_histograms_equal(result, expected)
    assert built[..., HIST_COUNT].sum() > 0  # not vacuous
    np.testing.assert_array_equal(result[5 + 2], parents[3])


def test_children_histograms_without_pairs_or_rows_and_bad_parents():
    rng = np.random.default_rng(70)
    X_binned, gradients, hessians = _problem(rng, 20, 3, 7)
    launcher = KernelLauncher(EMULATED, check_launches=True)
    device_arrays = [
        xp.asarray(a) for a in (X_binned, gradients, hessians, np.arange(20, dtype=np.int32))
    ]
    parents = rng.integers(-100, 100, size=(2, 3, 8, 3))
    build = cuda_histogram.build_children_histograms
    empty = build(xp, launcher, *device_arrays, [], [], 8, xp.asarray(parents), [])
    assert empty.shape == (0, 3, 8, 3)
    no_rows = xp.asnumpy(
        build(xp, launcher, *device_arrays, [4, 9], [4, 9], 8, xp.asarray(parents), [1, 0])
    )
    np.testing.assert_array_equal(no_rows, np.concatenate([np.zeros_like(parents), parents[::-1]]))
    no_features = build(
        xp,
        launcher,
        xp.asarray(np.zeros((20, 0), dtype=np.uint8)),
        *device_arrays[1:],
        [0],
        [5],
        8,
        xp.asarray(np.zeros((1, 0, 8, 3), dtype=np.int64)),
        [0],
    )
    assert no_features.shape == (2, 0, 8, 3)
    with pytest.raises(ValueError, match="parent_rows"):
        build(xp, launcher, *device_arrays, [0], [5], 8, xp.asarray(parents), [2])
    with pytest.raises(ValueError, match="parents must have shape"):
        build(xp, launcher, *device_arrays, [0], [5], 16, xp.asarray(parents), [0])


def test_levels_take_the_batch_zeroed_by_the_level_before(monkeypatch):
    """Depthwise levels with ``next_pairs``: the root's zeroing also zeroes the first
    level's built half, and each subtraction launch the next level's, so the levels
    issue no array operation; every batch equals the reference histograms of its
    segments. A level needing more pairs than reserved, or none reserved, zeroes its
    own. Under initcheck ``xp.empty`` memory is poisoned: a built half left unzeroed
    would be reported (and sum wrong)."""
    monkeypatch.setenv(SANITIZE_ENV_VAR, "initcheck")
    rng = np.random.default_rng(90)
    n_rows, n_features, max_bin = 300, 4, 15
    n_bins = max_bin + 1
    X_binned, gradients, hessians = _problem(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    device_arrays = [xp.asarray(a) for a in (X_binned, gradients, hessians, sample_indices)]
    # The gradient pairs as quantization lays them out (no stacking operation per build).
    pairs = xp.asarray(np.stack([gradients, hessians], axis=1))
    device_arrays[1:3] = pairs[:, 0], pairs[:, 1]
    launcher = KernelLauncher(EMULATED, check_launches=True)
    zeroed = ZeroedBatches()

    def expected(segments):
        begins, ends = np.array(segments, dtype=np.int64).T
        return _reference(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins)

    with count_operations() as counts:
        batch = build_histograms(
            xp,
            launcher,
            *device_arrays,
            [0],
            [n_rows],
            n_bins,
            next_pairs=1,
            zeroed_batches=zeroed,
        )
    assert counts["array_op"] == 1 and counts["kernel"] == 1
    _assert_histograms_equal(xp.asnumpy(batch), expected([(0, n_rows)]))
    # (built segments, parent rows, next_pairs, the batch's segments, zeroing operations)
    levels = [
        ([(0, 120)], [0], 2, [(0, 120), (120, 300)], 0),
        ([(0, 50), (200, 300)], [0, 1], 3, [(0, 50), (200, 300), (50, 120), (120, 200)], 0),
        ([(50, 60)], [2], 0, [(50, 60), (60, 120)], 0),  # fewer pairs than reserved
        ([(60, 70)], [1], 1, [(60, 70), (70, 120)], 1),  # nothing reserved
        ([(70, 80), (60, 61)], [1, 0], 0, [(70, 80), (60, 61), (80, 120), (61, 70)], 1),  # too few
    ]
    for built, parent_rows, next_pairs, segments, zeroings in levels:
        begins, ends = np.array(built, dtype=np.int64).T
        with count_operations() as counts:
            batch = cuda_histogram.build_children_histograms(
                xp,
                launcher,
                *device_arrays,
                begins,
                ends,
                n_bins,
                batch,
                parent_rows,
                next_pairs=next_pairs,
                zeroed_batches=zeroed,
            )
        assert counts["array_op"] == zeroings and counts["kernel"] == 2, segments
        _assert_histograms_equal(xp.asnumpy(batch), expected(segments))
        assert expected(built)[..., HIST_COUNT].sum() > 0  # not vacuous
    assert zeroed.take(1, n_features, n_bins) is None  # the last level reserved none
    zeroed.put(batch, 1)
    zeroed.clear()  # (CudaBackend.release_memory)
    assert zeroed.take(1, n_features, n_bins) is None
    zeroed.put(batch, 1)
    assert zeroed.take(1, n_features, n_bins).shape == (2, n_features, n_bins, 3)


@pytest.mark.parametrize("grow_policy", ["depthwise", "lossguide"])
def test_depthwise_trees_zero_histograms_once(monkeypatch, grow_policy):
    """Training depthwise on CUDA: the root's build zeroes once (its histogram and the
    first level's built half) and no level's build issues an array operation; lossguide
    zeroes each batch (no next level to reserve for). The models equal the CPU's."""
    # the row scan's per-block bound (512 rows) also with clusters: several levels of
    # these 3,000 rows are then built from histograms
    monkeypatch.setattr(cuda_row_scan, "CLUSTER_BOUND_FACTOR", 1)
    rng = np.random.default_rng(91)
    X = rng.normal(size=(3000, 5))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 5, "max_bin": 31, "verbosity": 0}
    params = dict(
        params, grow_policy=grow_policy, max_leaves=0 if grow_policy == "depthwise" else 24
    )
    array_ops = {"build_histograms": [], "build_children_histograms": []}
    for name, calls in array_ops.items():
        original = getattr(CudaBackend, name)

        def counted(self, *args, _original=original, _calls=calls, **kwargs):
            with count_operations() as counts:
                result = _original(self, *args, **kwargs)
            _calls.append(counts["array_op"])
            return result

        monkeypatch.setattr(CudaBackend, name, counted)

    def fit(device):
        booster = gpuboost.train(dict(params, device=device), gpuboost.Dataset(X, label=y), 3)
        return booster.save_raw()

    assert fit("cuda") == fit("cpu")
    roots, levels = array_ops["build_histograms"], array_ops["build_children_histograms"]
    # the first root also makes the bins' column-major copy its build reads (one per data)
    assert roots == [2, 1, 1]
    assert len(levels) >= 3 * 3
    if grow_policy == "depthwise":
        assert not any(levels)
    else:
        assert all(n == 1 for n in levels)


def _histogram_load_sectors(X_binned, pairs, sample_indices):
    """Global load sectors of one node's histogram build (one block) under the traffic
    model."""
    launcher = KernelLauncher(EMULATED, check_launches=True)
    with traffic.record_traffic() as log:
        build_histograms(
            xp,
            launcher,
            X_binned,
            pairs[:, 0],
            pairs[:, 1],
            xp.asarray(sample_indices),
            [0],
            [len(sample_indices)],
            2,
            block_threads=64,
            cluster_blocks=1,
        )
    (event,) = [event for event in log.events if event.name == "histogram_shared_memory"]
    return event.counters["global_load_sectors"]


def test_a_gathered_row_reads_its_gradient_pair_in_one_sector():
    """Rows 8 apart (their (gradient, hessian) pairs 64 bytes apart): one sector per row
    for the pair (two when gradient and hessian were two int32 columns, or a pair loaded
    field by field), against one per 4 consecutive rows. 32 features of bin 0: every
    row's bins are one sector either way, and both builds flush the same cells."""
    n_rows, spacing, n_features = 8192, 8, 32
    X_binned = xp.asarray(np.zeros((n_rows, n_features), dtype=np.uint8))
    pairs = xp.asarray(np.ones((n_rows, 2), dtype=np.int32))
    node_rows = n_rows // spacing
    scattered = np.arange(0, n_rows, spacing, dtype=np.int32)
    consecutive = np.arange(node_rows, dtype=np.int32)
    extra = _histogram_load_sectors(X_binned, pairs, scattered) - _histogram_load_sectors(
        X_binned, pairs, consecutive
    )
    pairs_per_sector = traffic.SECTOR_BYTES // 8
    assert extra == node_rows - node_rows // pairs_per_sector
