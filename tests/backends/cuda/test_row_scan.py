"""Tests of the CUDA row scan (gpuboost.backends.cuda.row_scan, cuda/row_scan.cu): the
split records of small nodes built and scanned in shared memory equal the NumPy
reference's (build_histograms + find_best_splits) bit for bit, with one feature group or
several, and trainings that scan small nodes from their rows on the emulated CUDA backend
give the CPU backend's models byte for byte."""

import dataclasses

import numpy as np
import pytest
from _cases import row_scan_problem, row_scan_split_params
from _tiers import SLOW
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuboost
from gpuboost.backends.cuda import backend as cuda_backend_module
from gpuboost.backends.cuda import row_scan as cuda_row_scan
from gpuboost.backends.cuda.binned_rows import lay_out_binned
from gpuboost.backends.cuda.histogram import (
    CLUSTER_BLOCKS,
    SHARED_BYTES_PER_CELL,
    shared_feature_stride,
)
from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.emulation.device_array import count_operations
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.backends.numpy.histogram import build_histograms
from gpuboost.backends.numpy.split_scan import find_best_splits as reference_scan
from gpuboost.core.gain import SplitParams

pytestmark = pytest.mark.usefixtures("cuda_emulation")


def _check(problem, max_bin, params, shared_memory_limit=None, device_layout=False):
    """The row scan's records equal the histogram scan's. ``device_layout``: the inputs as
    the backend holds them, the quantized columns the halves of one (n_rows, 2) array (as
    the quantize kernel writes them, read in place) and the bins in padded rows
    (binned_rows.lay_out_binned); else two separate columns (stacked into one first) and
    C-ordered bins."""
    (
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_value_bins,
        mask,
        bounds,
        mono,
    ) = problem
    if mono:
        params = dataclasses.replace(params, monotone=mono)
    scales = (3.5e-3, 1.25e-2)
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        max_bin + 1,
    )
    expected = reference_scan(
        histograms, *scales, n_value_bins, max_bin, params, mask, node_bounds=bounds
    )
    device_X = xp.asarray(X_binned)
    if device_layout:
        pairs = xp.asarray(np.stack([gradients, hessians], axis=1))
        device_g, device_h = pairs[:, 0], pairs[:, 1]
        device_X = lay_out_binned(xp, device_X)
    else:
        device_g, device_h = xp.asarray(gradients), xp.asarray(hessians)
    got = cuda_row_scan.find_best_splits_of_rows(
        xp,
        KernelLauncher(EMULATED, check_launches=True),
        device_X,
        device_g,
        device_h,
        xp.asarray(sample_indices),
        begins,
        ends,
        max_bin + 1,
        n_value_bins,
        max_bin,
        *scales,
        params,
        mask,
        bounds,
        shared_memory_limit=shared_memory_limit,
    )
    assert got is not None
    assert got.tobytes() == expected.tobytes()


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 300),
    n_features=st.integers(1, 5),
    max_bin=st.sampled_from([2, 7, 255]),
    n_nodes=st.integers(1, 4),
    missing_fraction=st.sampled_from([0.0, 0.2]),
    params=row_scan_split_params,
    with_mask=st.booleans(),
    monotone=st.booleans(),
    device_layout=st.booleans(),
)
def test_records_equal_the_histogram_scan(
    seed,
    n_rows,
    n_features,
    max_bin,
    n_nodes,
    missing_fraction,
    params,
    with_mask,
    monotone,
    device_layout,
):
    problem = row_scan_problem(
        seed, n_rows, n_features, max_bin, n_nodes, missing_fraction, with_mask, monotone
    )
    _check(problem, max_bin, params, device_layout=device_layout)


@pytest.mark.parametrize("features_per_group", [1, 2, 3])
def test_feature_groups_give_the_same_records(features_per_group):
    """Cells that do not fit one block: the features split into groups, one block each."""
    max_bin = 31
    limit = features_per_group * shared_feature_stride(max_bin + 1) * SHARED_BYTES_PER_CELL
    expected_groups = {1: (1, 7), 2: (2, 4), 3: (3, 3)}[features_per_group]
    assert cuda_row_scan.row_scan_groups(7, max_bin + 1, limit) == expected_groups
    problem = row_scan_problem(11, 500, 7, max_bin, 5, 0.1, True, True)
    params = SplitParams(reg_lambda=1.0, min_data_in_leaf=3)
    _check(problem, max_bin, params, limit, device_layout=features_per_group == 2)


@pytest.mark.usefixtures("clusters")
@pytest.mark.parametrize(
    "n_rows, n_nodes, max_bin",
    [(15_000, 3, 255), (40_000, 1, 255), (1_500, 4, 15)],
    ids=["nodes-above-one-block", "node-above-one-pass", "small-bins"],
)
def test_large_nodes_are_scanned_by_a_cluster(kernel_launches, n_rows, n_nodes, max_bin):
    """A batch with a node above one block's rows (16 x n_bins) goes to
    ``row_scan_cluster``: 8 blocks per node, each an eighth of the rows, the features
    scanned over the cluster's summed cells; a node above MAX_NODE_ROWS too (each block
    then holds fewer than a pass). The records equal the histogram scan's."""
    problem = list(row_scan_problem(n_rows, n_rows, 5, max_bin, n_nodes, 0.1, True, True))
    cuts = np.linspace(0, n_rows, n_nodes + 1).astype(np.int64)  # nodes of n_rows / n_nodes
    problem[4], problem[5] = cuts[:-1], cuts[1:]
    lengths = cuts[1:] - cuts[:-1]
    assert lengths.max() > cuda_row_scan.ROW_SCAN_MAX_ROWS_PER_CELL * (max_bin + 1)
    if n_rows > cuda_row_scan.MAX_NODE_ROWS:
        assert lengths.max() > cuda_row_scan.MAX_NODE_ROWS
    _check(problem, max_bin, SplitParams(reg_lambda=1.0, min_data_in_leaf=3), device_layout=True)
    assert [name for name, _ in kernel_launches] == [cuda_row_scan.CLUSTER_KERNEL]


@pytest.mark.usefixtures("clusters")
def test_the_cluster_scan_raises_the_row_bound_where_the_cells_fit():
    """With clusters (the emulated device) the bound is 8 x 16 x n_bins rows; without room
    for every feature's cells in one block the cluster scan is not used."""
    launcher = KernelLauncher(EMULATED)
    assert cuda_row_scan.cluster_blocks(launcher, 28, 256) == CLUSTER_BLOCKS
    assert cuda_row_scan.row_scan_max_rows(launcher, 28, 256) == 8 * 16 * 256
    assert cuda_row_scan.cluster_shared_bytes(28, 256) == 28 * 257 * 16 + 9216 + 28 * 48
    assert cuda_row_scan.cluster_blocks(launcher, 100, 256) == 0  # 411 KB of cells
    assert cuda_row_scan.row_scan_max_rows(launcher, 100, 256) == 16 * 256


def test_no_room_or_too_many_rows_is_left_to_the_definition():
    problem = row_scan_problem(3, 50, 3, 7, 2, 0.1, False, False)
    X_binned, gradients, hessians, sample_indices, begins, ends, n_value_bins = problem[:7]
    arguments = (
        xp,
        KernelLauncher(EMULATED),
        xp.asarray(X_binned),
        xp.asarray(gradients),
        xp.asarray(hessians),
        xp.asarray(sample_indices),
    )
    common = (8, n_value_bins, 7, 1e-3, 1e-3, SplitParams())
    too_small = shared_feature_stride(8) * SHARED_BYTES_PER_CELL - 1
    assert (
        cuda_row_scan.find_best_splits_of_rows(
            *arguments, begins, ends, *common, shared_memory_limit=too_small
        )
        is None
    )
    assert cuda_row_scan.row_scan_groups(3, 8, too_small) == (0, 0)
    beyond = CLUSTER_BLOCKS * cuda_row_scan.MAX_NODE_ROWS + 1  # no row is read first
    indices = xp.asarray(np.zeros(beyond, dtype=np.int32))
    assert (
        cuda_row_scan.find_best_splits_of_rows(*arguments[:5], indices, [0], [beyond], *common)
        is None
    )


def _model(device, params, X, y, weight, rounds=3):
    booster = gpuboost.train(
        {"device": device, "verbosity": 0, **params},
        gpuboost.Dataset(X, label=y, weight=weight),
        rounds,
    )
    return booster.save_raw()


@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 8},
        pytest.param(
            {"max_depth": 6, "colsample_bynode": 0.5, "colsample_bylevel": 0.8, "subsample": 0.7},
            marks=SLOW,
        ),
        pytest.param(
            {"max_depth": 7, "monotone_constraints": "(1,-1,0,0,1,0)", "min_child_weight": 3.0},
            marks=SLOW,
        ),
        pytest.param(
            {"max_depth": 6, "objective": "multi:softprob", "num_class": 3, "max_delta_step": 0.7},
            marks=SLOW,
        ),
    ],
)
def test_models_equal_the_cpu_models(params, monkeypatch, kernel_launches):
    """Parents of at most 8 x 256 rows (two rows per cell, 4 times that in clusters: the
    second level on) scanned from their rows on the emulated GPU, batches with a node
    above 512 rows by ``row_scan_cluster``, others by ``row_scan_features``: the CPU
    backend's models, byte for byte."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = X[:, 0] - 2 * np.nan_to_num(X[:, 1]) + rng.normal(size=2000)
    if params.get("num_class"):
        y = np.digitize(y, [-1.0, 1.0]).astype(float)
    else:
        y = (y > 0).astype(float)
    weight = rng.random(2000) + 0.5
    calls = []
    original = cuda_row_scan.find_best_splits_of_rows

    def counted(*args, **kwargs):
        records = original(*args, **kwargs)
        calls.append(records is not None)
        return records

    monkeypatch.setattr(cuda_backend_module, "find_best_splits_of_rows", counted)
    monkeypatch.setattr(cuda_row_scan, "ROW_SCAN_MAX_ROWS_PER_CELL", 2)
    assert _model("cuda", params, X, y, weight) == _model("cpu", params, X, y, weight)
    assert calls and all(calls)
    launched = {name for name, _ in kernel_launches}
    assert {cuda_row_scan.CLUSTER_KERNEL, cuda_row_scan.KERNEL} & launched


def test_batches_the_kernel_cannot_take_use_the_definition(monkeypatch):
    """``find_best_splits_of_rows`` returning None (too many rows, no shared room): the
    backend builds the histograms and scans them; the model is still the CPU's."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(1500, 5))
    y = (X[:, 0] + rng.normal(size=1500) > 0).astype(float)
    calls = []

    def refused(*args, **kwargs):
        calls.append(1)

    monkeypatch.setattr(cuda_backend_module, "find_best_splits_of_rows", refused)
    params = {"max_depth": 7}
    assert _model("cuda", params, X, y, None) == _model("cpu", params, X, y, None)
    assert calls


def _unbalanced_data():
    """3,000 rows whose trees split unevenly: with parents of at most 4 * 256 rows scanned
    from their rows (one row per cell, 4 times that in clusters), some levels mix the two
    kinds of nodes."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(3000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (X[:, 0] - 2 * np.nan_to_num(X[:, 1]) + rng.normal(size=3000) > 0.3).astype(float)
    return X, y, rng.random(3000) + 0.5


@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 8},
        pytest.param({"max_depth": 7, "colsample_bynode": 0.5, "subsample": 0.8}, marks=SLOW),
        pytest.param(
            {"max_depth": 7, "monotone_constraints": "(1,-1,0,0,1,0)", "min_child_weight": 2.0},
            marks=SLOW,
        ),
    ],
)
def test_mixed_levels_copy_their_records_once(params, monkeypatch):
    """Parents of at most 4 * 256 rows (of 3,000): levels with nodes scanned from their
    rows and nodes scanned from histograms. Each such level is one
    ``find_best_splits_mixed`` call whose records come to the host in one copy (one
    sync, the row scan's and the histogram scan's launches; the row scan's node table
    came with the level's histogram build, no copy of its own), and the models are the
    CPU backend's byte for byte."""
    X, y, weight = _unbalanced_data()
    original = cuda_backend_module.CudaBackend.find_best_splits_mixed
    counts_of_calls = []
    original_words = cuda_backend_module.row_scan_words
    carried = []

    def recorded(*args, **kwargs):
        carried.append(kwargs.get("node_table") is not None)
        return original_words(*args, **kwargs)

    monkeypatch.setattr(cuda_backend_module, "row_scan_words", recorded)

    def counted(self, *args, **kwargs):
        with count_operations() as counts:
            result = original(self, *args, **kwargs)
        counts_of_calls.append(dict(counts))
        return result

    monkeypatch.setattr(cuda_backend_module.CudaBackend, "find_best_splits_mixed", counted)
    monkeypatch.setattr(cuda_row_scan, "ROW_SCAN_MAX_ROWS_PER_CELL", 1)
    monkeypatch.setattr(cuda_row_scan, "CLUSTER_BOUND_FACTOR", 4)  # levels of both kinds
    assert _model("cuda", params, X, y, weight) == _model("cpu", params, X, y, weight)
    assert counts_of_calls
    for counts in counts_of_calls:
        assert counts["to_host"] == counts["sync"] == 1
        assert counts["kernel"] >= 2  # the row scan's and the histogram scan's
    assert len(carried) == len(counts_of_calls) and all(carried)


def test_mixed_levels_the_kernel_cannot_take_use_the_definition(monkeypatch):
    """``row_scan_words`` refusing a mixed level's rows: the backend's definition (the row
    part built from histograms, both scans copied); the model is still the CPU's."""
    X, y, weight = _unbalanced_data()
    refusals = {"mixed": 0, "rows": 0}

    def refuser(kind):
        def refused(*args, **kwargs):
            refusals[kind] += 1

        return refused

    monkeypatch.setattr(cuda_backend_module, "row_scan_words", refuser("mixed"))
    monkeypatch.setattr(cuda_backend_module, "find_best_splits_of_rows", refuser("rows"))
    monkeypatch.setattr(cuda_row_scan, "ROW_SCAN_MAX_ROWS_PER_CELL", 1)
    monkeypatch.setattr(cuda_row_scan, "CLUSTER_BOUND_FACTOR", 4)  # levels of both kinds
    params = {"max_depth": 7}
    assert _model("cuda", params, X, y, weight) == _model("cpu", params, X, y, weight)
    assert refusals["mixed"] and refusals["rows"] >= refusals["mixed"]
