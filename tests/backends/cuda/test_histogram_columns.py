"""Tests of the histogram build from the column-major bins (``histogram_shared_columns``
and ``histogram_cluster_columns`` in cuda/histogram.cu; gpuboost.backends.cuda.histogram.
plan_histograms with ``ordered_rows``), the root's build: equal to the NumPy backend's
histograms bit for bit on every path (feature groups, row blocks, flush passes, rows in
and out of order, flushed per block or per cluster), and chosen where it moves fewer
bytes than gathering rows.
"""

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cuda import histogram as cuda_histogram
from gpuboost.backends.cuda import row_scan as cuda_row_scan
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.binned_rows import lay_out_binned
from gpuboost.backends.cuda.histogram import (
    CLUSTER_BLOCKS,
    MAX_ROWS_PER_PASS,
    SHARED_BYTES_PER_CELL,
    build_bytes,
    build_histograms,
    plan_histograms,
    shared_feature_stride,
)
from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.backends.numpy.histogram import build_histograms as numpy_build_histograms
from gpuboost.core.dtypes import GRAD_QUANT_MAX, HIST_COUNT, HIST_GRAD

pytestmark = pytest.mark.usefixtures("cuda_emulation")


def _problem(rng, n_rows, n_features, max_bin):
    X_binned = rng.integers(0, max_bin + 1, size=(n_rows, n_features)).astype(np.uint8)
    X_binned[:, 0] = 0  # a constant feature
    gradients = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    hessians = rng.integers(0, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    return X_binned, gradients, hessians


def _build(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins, **options):
    """The columns build on device copies (the backend's layout: padded rows, one pair
    array), copied back, and the NumPy backend's histograms."""
    pairs = xp.asarray(np.stack([gradients, hessians], axis=1))
    device_rows = lay_out_binned(xp, xp.asarray(X_binned))
    columns = xp.asarray(np.ascontiguousarray(X_binned.T))
    launcher = KernelLauncher(EMULATED, check_launches=True)
    result = build_histograms(
        xp,
        launcher,
        device_rows,
        pairs[:, 0],
        pairs[:, 1],
        xp.asarray(sample_indices),
        begins,
        ends,
        n_bins,
        binned_columns=columns,
        **options,
    )
    expected = numpy_build_histograms(
        np.ascontiguousarray(X_binned.T), gradients, hessians, sample_indices, begins, ends, n_bins
    )
    return xp.asnumpy(result), expected


#: Blocks per flushing cluster: the device's (the emulation's: clusters) and 1 (every
#: block flushes, as on sm_80), with the kernel each launches.
CLUSTERING = pytest.mark.parametrize(
    "cluster_blocks, kernel",
    [
        (None, cuda_histogram.CLUSTER_COLUMNS_KERNEL),
        (1, cuda_histogram.COLUMNS_KERNEL),
    ],
    ids=["clusters", "blocks"],
)


@pytest.mark.usefixtures("clusters")
@CLUSTERING
@pytest.mark.parametrize(
    "order, segments, options",
    [
        ("all", "root", {}),
        ("all", "root", {"rows_per_block": 37, "block_threads": 96}),
        ("sampled", "root", {"rows_per_block": 100}),
        ("sampled", "several", {"rows_per_block": 64, "block_threads": 33}),
        ("shuffled", "several", {"rows_per_block": 50}),
        ("all", "root", {"features_per_block": 2}),
        ("sampled", "several", {"features_per_block": 3, "rows_per_block": 41}),
    ],
)
def test_columns_build_equals_numpy(
    kernel_launches, order, segments, options, cluster_blocks, kernel
):
    """Rows in order (all of them, a sorted sample) and out of order (still exact, only
    slower), one node or several (overlapping, one empty), feature groups forced by a
    small shared-memory limit, row blocks and block sizes that cut unevenly."""
    rng = np.random.default_rng(len(order) * 7 + len(options))
    n_rows, n_features, max_bin = 700, 7, 31
    X_binned, gradients, hessians = _problem(rng, n_rows, n_features, max_bin)
    sample_indices = {
        "all": np.arange(n_rows),
        "sampled": np.flatnonzero(rng.random(n_rows) < 0.6),
        "shuffled": rng.permutation(n_rows),
    }[order].astype(np.int32)
    n = len(sample_indices)
    begins, ends = ([0], [n]) if segments == "root" else ([0, n // 3, 5, n], [n // 2, n, 9, n])
    options = dict(options)
    features_per_block = options.pop("features_per_block", None)
    if features_per_block is not None:
        stride = shared_feature_stride(max_bin + 1)
        options["shared_memory_limit"] = features_per_block * stride * SHARED_BYTES_PER_CELL
    result, expected = _build(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        max_bin + 1,
        force_columns=True,
        cluster_blocks=cluster_blocks,
        **options,
    )
    if "rows_per_block" not in options:  # one row block (700 rows): never a cluster
        kernel = cuda_histogram.COLUMNS_KERNEL
    assert [name for name, _ in kernel_launches] == [kernel]
    np.testing.assert_array_equal(result, expected)
    assert expected[..., HIST_COUNT].sum() == n_features * sum(e - b for b, e in zip(begins, ends))


@CLUSTERING
@pytest.mark.parametrize("sign", [1, -1])
def test_columns_build_over_several_flush_passes(sign, cluster_blocks, kernel):
    """A block of more rows than one pass holds, at |q| = GRAD_QUANT_MAX in one bin: the
    packed shared words reach their bounds, as in the row-major kernel."""
    n_rows = 2 * MAX_ROWS_PER_PASS + 5
    X_binned = np.zeros((n_rows, 2), dtype=np.uint8)
    X_binned[-3:, 1] = 2
    gradients = np.full(n_rows, sign * GRAD_QUANT_MAX, dtype=np.int32)
    hessians = np.full(n_rows, GRAD_QUANT_MAX, dtype=np.int32)
    sample_indices = np.arange(n_rows, dtype=np.int32)
    result, expected = _build(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        [0],
        [n_rows],
        4,
        rows_per_block=n_rows,
        force_columns=True,
        cluster_blocks=cluster_blocks,
    )
    np.testing.assert_array_equal(result, expected)
    assert expected[0, 0, 0, HIST_COUNT] == n_rows > MAX_ROWS_PER_PASS
    assert int(expected[0, 0, 0, HIST_GRAD]) == sign * n_rows * GRAD_QUANT_MAX


def test_bad_columns_are_refused():
    X_binned = np.zeros((10, 3), dtype=np.uint8)
    pairs = xp.asarray(np.ones((10, 2), dtype=np.int32))
    launcher = KernelLauncher(EMULATED, check_launches=True)
    for columns, error in (
        (xp.asarray(X_binned), ValueError),  # not transposed
        (xp.asarray(np.zeros((3, 10), dtype=np.int32)), TypeError),
    ):
        with pytest.raises(error, match="binned_columns"):
            build_histograms(
                xp,
                launcher,
                xp.asarray(X_binned),
                pairs[:, 0],
                pairs[:, 1],
                xp.asarray(np.arange(10, dtype=np.int32)),
                [0],
                [10],
                4,
                binned_columns=columns,
            )


# The plan: an sm_80 block's shared-memory limit, 108 SMs (the emulated device).
SHARED_LIMIT = 163 * 1024
SM_COUNT = 108


@pytest.mark.parametrize(
    "n_rows, cluster_blocks, groups",
    [(5_000, 1, 1), (200_000, 1, 4), (10_000_000, 1, 1), (200_000, CLUSTER_BLOCKS, 1)],
)
def test_the_plan_reads_columns_in_the_groups_that_move_the_fewest_bytes(
    n_rows, cluster_blocks, groups
):
    """28 features of 256 bins, rows in order (32-byte padded rows): at 200k rows 4
    groups of 7 features, 54 blocks each of 3,704 rows (flushing a quarter of a table
    each) move fewer bytes than gathering rows in 196 blocks of 1,024 rows; at 10M rows
    a block's rows outweigh its table and one group reads the columns (28 bytes a row
    against 32). Flushed per cluster of 8 blocks, the tables are few and one group wins
    at 200k rows too. Every other group count is estimated to move more."""
    lengths = np.array([n_rows])
    ordered = (n_rows, 32)
    clusters = {"cluster_blocks": cluster_blocks}
    plan = plan_histograms(
        lengths, 28, 256, SHARED_LIMIT, SM_COUNT, ordered_rows=ordered, **clusters
    )
    gathered = plan_histograms(lengths, 28, 256, SHARED_LIMIT, SM_COUNT, **clusters)
    assert plan.columns and not gathered.columns
    assert plan.n_groups == groups and gathered.n_groups == 1
    assert plan.n_groups * plan.blocks_per_group <= SM_COUNT * 2 or plan.rows_per_block == 1024
    chosen = build_bytes(plan, 28, 256, 32, n_rows)
    assert chosen < build_bytes(gathered, 28, 256, 32, n_rows)
    for n_groups in (1, 2, 3, 4, 7, 14, 28):
        other = plan_histograms(
            lengths,
            28,
            256,
            SHARED_LIMIT // n_groups,
            SM_COUNT,
            ordered_rows=ordered,
            force_columns=True,
            **clusters,
        )
        assert build_bytes(other, 28, 256, 32, n_rows) >= chosen


def test_the_plan_gathers_rows_where_columns_cost_more():
    """A sparse sample (one row in 40): a column's bins of consecutive positions are
    a sector apart, so gathering the 32-byte rows is cheaper; the global-memory
    fallback never reads columns."""
    lengths = np.array([5_000])
    sparse = plan_histograms(lengths, 28, 256, SHARED_LIMIT, SM_COUNT, ordered_rows=(200_000, 32))
    assert not sparse.columns
    fallback = plan_histograms(
        lengths, 28, 256, SHARED_LIMIT, SM_COUNT, force_global=True, ordered_rows=(5_000, 32)
    )
    assert not fallback.columns and not fallback.use_shared


@pytest.mark.usefixtures("clusters")
def test_training_builds_each_root_from_the_columns(kernel_launches, monkeypatch):
    """Depthwise and lossguide training on CUDA: each tree's root (and only it) is built
    from the columns, and the models equal the CPU backend's byte for byte. (The row
    scan's per-block bound, 1,024 rows, also with clusters, so that levels below the root
    of these 4,000 rows build histograms.)"""
    monkeypatch.setattr(cuda_row_scan, "CLUSTER_BOUND_FACTOR", 1)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(4000, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(float)
    for grow_policy in ("depthwise", "lossguide"):
        params = {
            "objective": "binary:logistic",
            "max_depth": 4 if grow_policy == "depthwise" else 0,
            "max_leaves": 0 if grow_policy == "depthwise" else 12,
            "grow_policy": grow_policy,
            "max_bin": 63,
            "verbosity": 0,
        }
        kernel_launches.clear()
        models = [
            gpuboost.train(dict(params, device=device), gpuboost.Dataset(X, label=y), 3).save_raw()
            for device in ("cuda", "cpu")
        ]
        assert models[0] == models[1]
        launches = [name for name, _ in kernel_launches]
        assert launches.count(cuda_histogram.CLUSTER_COLUMNS_KERNEL) == 3
        assert launches.count(cuda_histogram.CLUSTER_KERNEL) >= 3


def test_a_backend_that_does_not_take_the_order_is_not_told(monkeypatch):
    """The flag reaches a backend only where it takes it (``takes_rows_in_order``)."""
    seen = []
    original = CudaBackend.build_histograms

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("rows_in_order"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CudaBackend, "build_histograms", spy)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3))
    y = X[:, 0] > 0
    params = {"objective": "binary:logistic", "max_depth": 2, "verbosity": 0, "device": "cuda"}
    gpuboost.train(params, gpuboost.Dataset(X, label=y), 1)
    assert seen == [True]
    monkeypatch.setattr(CudaBackend, "takes_rows_in_order", False)
    seen.clear()
    gpuboost.train(params, gpuboost.Dataset(X, label=y), 1)
    assert seen == [None]
