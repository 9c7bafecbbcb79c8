"""Tests of the row scan's partition ahead (gpuboost.backends.cuda.partition_ahead,
``row_scan_cluster`` with ``ahead_indices``): the scan writes each node's rows split by
its record exactly as the partition would, nothing for nodes without a split or beyond
the saved rows; the partition and the margin update take those segments only for the
very split the scan used; trainings use it and give the CPU backend's models."""

import numpy as np
import pytest
from _cases import row_scan_problem
from _tiers import SLOW

import gpuboost
from gpuboost.backends.cuda import leaf as cuda_leaf
from gpuboost.backends.cuda import partition_ahead
from gpuboost.backends.cuda import row_scan as cuda_row_scan
from gpuboost.backends.cuda.binned_rows import lay_out_binned
from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.cuda.partition import move_partitioned_rows
from gpuboost.backends.cuda.split_scan import records_from_words
from gpuboost.backends.emulation import traffic
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.core.gain import SPLIT_RECORD_DTYPE, SplitParams

pytestmark = pytest.mark.usefixtures("cuda_emulation", "clusters")  # the ahead needs clusters

#: Filler of the ahead array: positions the scan must not write keep it.
UNWRITTEN = -7


def _goes_left(X_binned, rows, feature, threshold_bin, default_left, missing_bin):
    bins = X_binned[rows, feature].astype(np.int64)
    return (bins <= threshold_bin) | ((bins == missing_bin) & bool(default_left))


def _split_segment(X_binned, rows, feature, threshold_bin, default_left, missing_bin):
    """The stable split of ``rows`` (NumPy): left rows, then right rows, each in order."""
    left = _goes_left(X_binned, rows, feature, threshold_bin, default_left, missing_bin)
    return np.concatenate([rows[left], rows[~left]])


def _scan_ahead(problem, max_bin, launcher=None):
    """Row scan of ``problem`` with the partition ahead: (host records, host ahead array)."""
    X_binned, gradients, hessians, sample_indices, begins, ends, n_value_bins = problem[:7]
    pairs = xp.asarray(np.stack([gradients, hessians], axis=1))
    ahead = xp.full(len(sample_indices), UNWRITTEN, dtype=np.int32)
    words = cuda_row_scan.row_scan_words(
        xp,
        launcher or KernelLauncher(EMULATED, check_launches=True),
        lay_out_binned(xp, xp.asarray(X_binned)),
        pairs[:, 0],
        pairs[:, 1],
        xp.asarray(sample_indices),
        begins,
        ends,
        max_bin + 1,
        n_value_bins,
        max_bin,
        3.5e-3,
        1.25e-2,
        SplitParams(reg_lambda=1.0, min_data_in_leaf=2),
        ahead_indices=ahead,
    )
    return records_from_words(words.get()), ahead.get()


def _check_ahead(problem, max_bin):
    """The scan's ahead array: a node with a split holds its rows split by its record
    (stable), a node without one and every position outside the nodes the filler."""
    X_binned, sample_indices, begins, ends = problem[0], problem[3], problem[4], problem[5]
    records, ahead = _scan_ahead(problem, max_bin)
    split = 0
    covered = np.zeros(len(sample_indices), dtype=bool)
    for node, (begin, end) in enumerate(zip(begins.tolist(), ends.tolist())):
        covered[begin:end] = True
        record = records[node]
        if record["feature"] < 0:
            np.testing.assert_array_equal(ahead[begin:end], UNWRITTEN)
            continue
        split += 1
        how = (record["feature"], record["bin"], record["default_left"], max_bin)
        rows = sample_indices[begin:end]
        np.testing.assert_array_equal(ahead[begin:end], _split_segment(X_binned, rows, *how))
        assert record["left_count"] == _goes_left(X_binned, rows, *how).sum()
    assert split  # not vacuous
    np.testing.assert_array_equal(ahead[~covered], UNWRITTEN)


@pytest.mark.parametrize(
    "seed, n_rows, n_features, max_bin, n_nodes",
    [(0, 300, 5, 7, 4), (1, 2000, 3, 255, 3), (2, 5000, 28, 255, 6), (3, 40, 1, 2, 5)],
)
def test_the_scan_writes_each_split_node_as_the_partition_would(
    kernel_launches, seed, n_rows, n_features, max_bin, n_nodes
):
    """Nodes of any size go to the cluster kernel when partitioned ahead; a node with a
    split has its positions hold its rows split by its record (stable), a node without
    keeps the filler."""
    problem = row_scan_problem(seed, n_rows, n_features, max_bin, n_nodes, 0.2, False, False)
    _check_ahead(problem, max_bin)
    assert [name for name, _ in kernel_launches] == [cuda_row_scan.CLUSTER_KERNEL]


@pytest.mark.parametrize("capacity", [1, 7, 40])
def test_rows_past_the_kept_ones_are_read_again(monkeypatch, capacity):
    """A block keeps the first rows of its share in shared memory (as many as fit); the
    side of each later row comes from its split byte read again: the same partition."""
    layout = cuda_row_scan._ahead_layout

    def small(*args):
        kept, flag_words = layout(*args)
        return min(kept, capacity), flag_words

    monkeypatch.setattr(cuda_row_scan, "_ahead_layout", small)
    problem = row_scan_problem(4, 1200, 6, 31, 3, 0.1, False, False)
    _check_ahead(problem, 31)


def test_no_clusters_no_partition_ahead(monkeypatch):
    launcher = KernelLauncher(EMULATED)
    assert cuda_row_scan.partitions_ahead(launcher, 28, 256, [0], [5000])
    monkeypatch.setattr(cuda_row_scan, "device_cluster_blocks", lambda mode: 1)
    assert not cuda_row_scan.partitions_ahead(launcher, 28, 256, [0], [5000])


def test_the_move_leaves_written_segments_and_copies_or_splits_the_rest():
    rng = np.random.default_rng(3)
    n_rows, n_features = 400, 3
    X_binned = rng.integers(0, 8, size=(n_rows, n_features)).astype(np.uint8)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    columns = xp.asarray(np.ascontiguousarray(X_binned.T))
    device_indices = xp.asarray(sample_indices)
    moved = xp.full(n_rows, UNWRITTEN, dtype=np.int32)
    begins, ends, features, bins = [0, 250], [100, 330], [1, 2], [3, 5]
    lefts = [
        int(np.sum(X_binned[sample_indices[b:e], f] <= t))
        for b, e, f, t in zip(begins, ends, features, bins)
    ]
    splits = (columns, device_indices, begins, ends, features, bins, [False, False], lefts, 7)
    launcher = KernelLauncher(EMULATED, check_launches=True)
    result = move_partitioned_rows(
        xp, launcher, *splits, moved=moved, written=([120, 340], [200, 390])
    )
    assert result is moved
    got = moved.get()
    for begin, end in ((120, 200), (340, 390)):
        np.testing.assert_array_equal(got[begin:end], UNWRITTEN)
    for b, e, f, t in zip(begins, ends, features, bins):
        np.testing.assert_array_equal(
            got[b:e], _split_segment(X_binned, sample_indices[b:e], f, t, False, 7)
        )
    copied = np.r_[100:120, 200:250, 330:340, 390:400]
    np.testing.assert_array_equal(got[copied], sample_indices[copied])
    with pytest.raises(ValueError, match="overlap"):
        move_partitioned_rows(xp, launcher, *splits, moved=moved, written=([90], [120]))


def _records(*rows):
    records = np.zeros(len(rows), dtype=SPLIT_RECORD_DTYPE)
    for record, (feature, threshold_bin, default_left, left_count) in zip(records, rows):
        record["feature"], record["bin"] = feature, threshold_bin
        record["default_left"], record["left_count"] = default_left, left_count
    return records


def test_a_step_takes_the_proposal_once_for_the_same_arrays_and_splits():
    launcher = KernelLauncher(EMULATED)
    X_binned = lay_out_binned(xp, xp.asarray(np.zeros((50, 3), dtype=np.uint8)))
    sample_indices = xp.asarray(np.arange(50, dtype=np.int32))
    state = partition_ahead.PartitionAhead()
    indices = state.indices_for(xp, launcher, 3, 16, sample_indices, [0, 20], [20, 50])
    assert indices is not None and indices.shape == sample_indices.shape
    records = _records((1, 4, True, 7), (-1, -1, False, 0))
    state.keep(indices, sample_indices, X_binned, [0, 20], [20, 50], records)
    assert state.take(xp.asarray(np.arange(50, dtype=np.int32)), X_binned) is None  # other
    assert state.take(sample_indices, X_binned) is None  # a step took or discarded it
    state.keep(indices, sample_indices, X_binned, [0, 20], [20, 50], records)
    rows = state.take(sample_indices, X_binned)
    assert rows.indices is indices
    written = rows.written(
        [0, 0, 0, 20],
        [20, 20, 20, 50],
        [1, 1, 2, 0],
        [4, 4, 4, 0],
        [True, False, True, 1],
        [7, 7, 7, 10],
    )
    np.testing.assert_array_equal(written, [True, False, False, False])
    state.keep(indices, sample_indices, X_binned, [0, 20], [20, 50], records)
    state.discard()
    assert state.take(sample_indices, X_binned) is None


def _data(n_rows=2000, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (X[:, 0] - 2 * np.nan_to_num(X[:, 1]) + rng.normal(size=n_rows) > 0).astype(float)
    return X, y


def _model(device, params, X, y, rounds=3):
    booster = gpuboost.train(
        {"device": device, "verbosity": 0, **params}, gpuboost.Dataset(X, label=y), rounds
    )
    return booster.save_raw()


@pytest.mark.parametrize("params", [{"max_depth": 6}, {"max_depth": 5, "subsample": 0.8}])
def test_trainings_take_partitions_and_last_levels_from_the_scan(monkeypatch, params):
    """Levels scanned from their rows (the row-scan bound lowered) are partitioned ahead:
    the next partition and the last level's margin update take their segments, and the
    models are the CPU backend's, byte for byte."""
    taken = {"partition": 0, "leaves": 0}
    original_written = partition_ahead.AheadRows.written
    original_leaves = cuda_leaf.add_tree_leaf_values

    def counted_written(self, *args):
        written = original_written(self, *args)
        taken["partition"] += int(written.sum())
        return written

    def counted_leaves(*args, ahead_leaves=None, **kwargs):
        if ahead_leaves is not None:
            taken["leaves"] += len(ahead_leaves[1])
        return original_leaves(*args, ahead_leaves=ahead_leaves, **kwargs)

    monkeypatch.setattr(partition_ahead.AheadRows, "written", counted_written)
    monkeypatch.setattr("gpuboost.backends.cuda.backend.add_tree_leaf_values", counted_leaves)
    monkeypatch.setattr(cuda_row_scan, "ROW_SCAN_MAX_ROWS_PER_CELL", 2)
    X, y = _data()
    assert _model("cuda", params, X, y) == _model("cpu", params, X, y)
    assert taken["partition"] > 0
    # Sampled rows: the margins of every row are updated by prediction, not by segments.
    assert (taken["leaves"] > 0) == ("subsample" not in params)


def _partition_and_update_bytes(monkeypatch, ahead):
    """Device bytes of the partition and margin-update kernels of a training (the traffic
    model), with or without the partition ahead, and its model."""
    if not ahead:
        monkeypatch.setattr(partition_ahead, "partitions_ahead", lambda *args: False)
    X, y = _data(4000, seed=9)
    with traffic.record_traffic() as log:
        model = _model("cuda", {"max_depth": 6}, X, y, rounds=2)
    kernels = ("partition_move_tiles", "add_split_leaf_values")
    return sum(e.bytes for e in log.events if e.name in kernels), model


@SLOW  # fast sibling: test_trainings_take_partitions_and_last_levels_from_the_scan
def test_the_partition_ahead_moves_fewer_bytes(monkeypatch):
    """The next partitions and the last level's margin update read no bin of a row the
    scan partitioned ahead: fewer bytes under the traffic model, the same model."""
    monkeypatch.setattr(cuda_row_scan, "ROW_SCAN_MAX_ROWS_PER_CELL", 2)
    with_ahead, model = _partition_and_update_bytes(monkeypatch, ahead=True)
    without, plain = _partition_and_update_bytes(monkeypatch, ahead=False)
    assert model == plain
    assert with_ahead < 0.75 * without


def _kept_splits_naive(begins, ends, records):
    """Reference of PartitionAhead.keep's ``splits``, one node at a time (for tests)."""
    splits = {}
    for node in np.flatnonzero(records["feature"] >= 0).tolist():
        record = records[node]
        key = (
            int(begins[node]),
            int(ends[node]),
            int(record["feature"]),
            int(record["bin"]),
            bool(record["default_left"]),
            int(record["left_count"]),
        )
        splits[key] = node
    return splits


@pytest.mark.parametrize("n_nodes", [0, 1, 5, 128])
def test_keep_records_the_split_nodes_as_the_naive_loop(n_nodes):
    rng = np.random.default_rng(n_nodes)
    records = np.zeros(n_nodes, dtype=SPLIT_RECORD_DTYPE)
    records["feature"] = rng.integers(-1, 28, n_nodes)  # -1: no split
    records["bin"] = rng.integers(0, 255, n_nodes)
    records["default_left"] = rng.random(n_nodes) < 0.5
    records["left_count"] = rng.integers(0, 1000, n_nodes)
    begins = np.arange(n_nodes, dtype=np.int64) * 1000
    ends = begins + rng.integers(0, 1000, n_nodes)
    kept = partition_ahead.PartitionAhead()
    indices, sample_indices, X_binned = object(), object(), object()
    kept.keep(indices, sample_indices, X_binned, begins, ends, records)
    rows = kept.take(sample_indices, X_binned)
    expected = _kept_splits_naive(begins, ends, records)
    assert rows.splits == expected and list(rows.splits.values()) == list(expected.values())
    for key, expected_key in zip(rows.splits, expected):
        assert [type(part) for part in key] == [type(part) for part in expected_key]
    assert rows.indices is indices
