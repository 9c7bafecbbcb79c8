"""The CUDA backend's row partition (gpuboost.backends.cuda.partition,
``cuda/partition.cu``) against the naive reference.

Runs under the CPU emulation of the kernels (``GPUBOOST_EMULATE_CUDA=1``), so it
needs no GPU; every launch is checked (``check_launches``) and the results must
equal :func:`gpuboost.backends.numpy.partition.partition_rows_naive` exactly.
"""

import re

import numpy as np
import pytest

import gpuboost
from gpuboost import Dataset
from gpuboost.backends.categorical import partition_categorical as categorical_definition
from gpuboost.backends.cuda import partition as cuda_partition
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.sources import read_cuda_source
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.backends.emulation.sanitizer import SANITIZE_ENV_VAR, SanitizerError
from gpuboost.backends.numpy.partition import partition_rows_naive

MAX_BIN = 15
N_ROWS = 3000  # several partition tiles (PARTITION_TILE_ROWS) per large segment
N_FEATURES = 5


@pytest.fixture(scope="module")
def backend():
    """A CudaBackend on the emulated kernels, checking every launch."""
    with emulated_kernels():
        cuda = CudaBackend()
        cuda.check_launches = True
        yield cuda


@pytest.fixture(scope="module")
def dataset():
    """Binned data with missing values (feature 1) and a constant column (feature 4)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(N_ROWS, N_FEATURES))
    X[rng.random(N_ROWS) < 0.2, 1] = np.nan
    X[:, 4] = 2.5
    return Dataset(X, label=rng.normal(size=N_ROWS), max_bin=MAX_BIN)


def _run_both(
    backend,
    dataset,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    moved=False,
):
    """Partition with the CUDA backend and the naive reference; return both results.
    ``moved``: into a new array (``move_partitioned_rows``, given the reference's left
    counts; the input checked unchanged), else in place."""
    data = backend.prepare(dataset)
    expected = sample_indices.copy()
    expected_left = partition_rows_naive(
        dataset.X_binned,
        expected,
        begins,
        ends,
        features,
        threshold_bins,
        default_left,
        dataset.max_bin,
    )
    device_indices = backend.to_device(sample_indices)
    split = (begins, ends, features, threshold_bins, default_left)
    inputs = (backend.xp, backend.launcher, cuda_partition.binned_columns(backend.xp, data))
    if moved:
        result = cuda_partition.move_partitioned_rows(
            *inputs, device_indices, *split, expected_left, data.missing_bin
        )
        backend.synchronize()
        # the input is only read
        np.testing.assert_array_equal(backend.to_host(device_indices), sample_indices)
        return backend.to_host(result), expected_left, expected, expected_left
    left_counts = cuda_partition.partition_rows(
        *inputs, device_indices, *split, data.missing_bin, return_left_counts=True
    )
    backend.synchronize()
    return (backend.to_host(device_indices), backend.to_host(left_counts), expected, expected_left)


@pytest.mark.parametrize("moved", [False, True])
def test_partition_matches_naive_reference(backend, dataset, moved):
    """In place, and into a new array (the positions outside the segments copied)."""
    rng = np.random.default_rng(0)
    sample_indices = np.sort(rng.choice(N_ROWS, size=2600, replace=False)).astype(np.int32)
    # Segments: multi-tile, empty, one row, all-left (threshold at the top value bin),
    # missing left and right, on the feature with NaN; positions 2590.. untouched.
    begins = np.array([0, 1500, 1500, 1501, 1700, 2200, 2500], dtype=np.int64)
    ends = np.array([1500, 1500, 1501, 1700, 2200, 2500, 2590], dtype=np.int64)
    features = np.array([0, 2, 1, 1, 1, 3, 4], dtype=np.int64)
    threshold_bins = np.array([6, 3, 0, 4, 9, MAX_BIN - 2, 0], dtype=np.int64)
    default_left = np.array([False, True, True, True, False, False, True])
    got, got_left, expected, expected_left = _run_both(
        backend,
        dataset,
        sample_indices,
        begins,
        ends,
        features,
        threshold_bins,
        default_left,
        moved,
    )
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got_left, expected_left)
    # The test is not vacuous: rows moved, and both directions occur.
    assert not np.array_equal(got, sample_indices)
    assert 0 < expected_left[0] < ends[0] - begins[0]
    assert 0 < expected_left[4] < ends[4] - begins[4]


@pytest.mark.parametrize("seed, moved", [(1, False), (2, False), (3, False), (4, True), (5, True)])
def test_partition_random_batches(backend, dataset, seed, moved):
    rng = np.random.default_rng(seed)
    sample_indices = rng.permutation(N_ROWS).astype(np.int32)  # any order is kept stable
    cuts = np.sort(rng.choice(np.arange(1, N_ROWS), size=9, replace=False))
    bounds = np.concatenate([[0], cuts, [N_ROWS]])
    chosen = np.sort(rng.choice(len(bounds) - 1, size=6, replace=False))
    begins, ends = bounds[chosen], bounds[chosen + 1]
    features = rng.integers(0, N_FEATURES, size=len(chosen))
    threshold_bins = rng.integers(0, MAX_BIN - 1, size=len(chosen))
    default_left = rng.random(len(chosen)) < 0.5
    got, got_left, expected, expected_left = _run_both(
        backend,
        dataset,
        sample_indices,
        begins,
        ends,
        features,
        threshold_bins,
        default_left,
        moved,
    )
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got_left, expected_left)


@pytest.mark.parametrize("seed, max_bin", [(11, MAX_BIN), (12, 255), (13, 255)])
def test_categorical_splits_match_the_definition(backend, seed, max_bin):
    """The partition kernels with left sets (``partition_rows(left_sets=...)``, the CUDA
    backend's ``partition_categorical``): random sets over every bin, the missing bin's
    bit set in some (``default_left`` decides it), segments of several tiles, and the
    high words of a 256-bin set; the array-module definition's partition, stably."""
    rng = np.random.default_rng(seed)
    n_rows = 3 * cuda_partition.PARTITION_TILE_ROWS + 77
    X = rng.integers(0, max_bin, size=(n_rows, 3)).astype(np.float64)
    X[rng.random((n_rows, 3)) < 0.1] = np.nan
    dataset = Dataset(X, label=np.zeros(n_rows), max_bin=max_bin, categorical_features=[0, 1, 2])
    data = backend.prepare(dataset)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(1, n_rows), size=5, replace=False))
    begins, ends = np.concatenate([[0], cuts]), np.concatenate([cuts, [n_rows]])
    n_nodes = len(begins)
    features = rng.integers(0, 3, size=n_nodes)
    bits = rng.random((n_nodes, 256)) < rng.random((n_nodes, 1))
    bits[:, max_bin + 1 :] = False
    left_sets = np.packbits(bits, axis=1, bitorder="little").view("<u4").astype(np.uint32)
    default_left = rng.random(n_nodes) < 0.5
    expected = sample_indices.copy()
    categorical_definition(
        np, np.asarray, dataset.X_binned, expected, begins, ends, features, left_sets,
        default_left, data.missing_bin,
    )  # fmt: skip
    device_indices = backend.to_device(sample_indices)
    backend.partition_categorical(
        data, device_indices, begins, ends, features, left_sets, default_left
    )
    backend.synchronize()
    np.testing.assert_array_equal(backend.to_host(device_indices), expected)
    assert not np.array_equal(expected, sample_indices)  # rows moved
    if max_bin == 255:  # bins of the set's last 64-bit word occur
        assert (dataset.X_binned[:, features] >= 192).any()


def test_partition_with_no_rows_is_a_no_op(backend, dataset):
    sample_indices = np.arange(10, dtype=np.int32)
    got, got_left, expected, _ = _run_both(
        backend, dataset, sample_indices, [3], [3], [0], [1], [True]
    )
    np.testing.assert_array_equal(got, sample_indices)
    np.testing.assert_array_equal(got_left, [0])
    got, _, _, _ = _run_both(backend, dataset, sample_indices, [], [], [], [], [])
    np.testing.assert_array_equal(got, sample_indices)


@pytest.mark.parametrize(
    "begins, ends, message",
    [
        ([0, 5], [6, 9], "overlap"),
        ([0], [11], "0 <= begin <= end"),
        ([4], [3], "0 <= begin <= end"),
    ],
)
def test_partition_rejects_bad_segments(backend, dataset, begins, ends, message):
    data = backend.prepare(dataset)
    sample_indices = backend.to_device(np.arange(10, dtype=np.int32))
    with pytest.raises(ValueError, match=message):
        backend.partition(
            data,
            sample_indices,
            begins,
            ends,
            [0] * len(begins),
            [1] * len(begins),
            [True] * len(begins),
        )


def test_partition_rejects_wrong_index_dtype(backend, dataset):
    data = backend.prepare(dataset)
    with pytest.raises(TypeError, match="int32"):
        backend.partition(
            data, backend.to_device(np.arange(10, dtype=np.int64)), [0], [10], [0], [1], [True]
        )


def test_launch_constants_match_kernel_source():
    """The Python tile geometry must be the one compiled into partition.cu (leaf.cu:
    test_leaf.py)."""

    def constant(source, name):
        return int(re.search(rf"constexpr int32_t {name} = (\d+);", source).group(1))

    partition = read_cuda_source("partition.cu")
    assert (
        constant(partition, "kPartitionThreadsPerBlock")
        == cuda_partition.PARTITION_THREADS_PER_BLOCK
    )
    assert (
        constant(partition, "kPartitionItemsPerThread") == cuda_partition.PARTITION_ITEMS_PER_THREAD
    )
    assert constant(partition, "kPartitionSetWords") == cuda_partition.PARTITION_SET_WORDS


def test_binned_columns_are_made_once_per_data(backend):
    """The partition reads a column-major copy of the bins, made at its first call and
    kept with the data."""
    rng = np.random.default_rng(11)
    dataset = Dataset(rng.normal(size=(N_ROWS, N_FEATURES)), max_bin=MAX_BIN)
    data = backend.prepare(dataset)
    assert cuda_partition.BINNED_COLUMNS_KEY not in data.arrays
    sample_indices = backend.to_device(np.arange(N_ROWS, dtype=np.int32))
    backend.partition(data, sample_indices, [0], [N_ROWS], [1], [4], [True])
    columns = data.arrays[cuda_partition.BINNED_COLUMNS_KEY]
    np.testing.assert_array_equal(backend.to_host(columns), dataset.X_binned.T)
    assert cuda_partition.binned_columns(backend.xp, data) is columns


def test_tile_status_is_reused_across_launches(backend, dataset, monkeypatch):
    """The look-back's status words are kept from launch to launch: words of an earlier
    launch (an older epoch) never count, also when the epochs wrap around."""
    monkeypatch.setattr(cuda_partition, "MAX_STATUS_EPOCH", 3)
    status = cuda_partition.TileStatus()
    data = backend.prepare(dataset)
    columns = cuda_partition.binned_columns(backend.xp, data)
    rng = np.random.default_rng(12)
    epochs = []
    for step in range(6):
        sample_indices = rng.permutation(N_ROWS).astype(np.int32)
        begins, ends = np.array([0, 2100 + 100 * step]), np.array([2100 + 100 * step, N_ROWS])
        features, bins = rng.integers(0, N_FEATURES, size=2), rng.integers(0, MAX_BIN - 1, size=2)
        default_left = np.array([True, False])
        expected = sample_indices.copy()
        expected_left = partition_rows_naive(
            dataset.X_binned, expected, begins, ends, features, bins, default_left, MAX_BIN
        )
        got = backend.to_device(sample_indices)
        left_counts = cuda_partition.partition_rows(
            backend.xp,
            backend.launcher,
            columns,
            got,
            begins,
            ends,
            features,
            bins,
            default_left,
            data.missing_bin,
            status=status,
            return_left_counts=True,
        )
        np.testing.assert_array_equal(backend.to_host(got), expected)
        np.testing.assert_array_equal(backend.to_host(left_counts), expected_left)
        epochs.append(status.epoch)
    assert epochs == [1, 2, 3, 1, 2, 3]


def test_moved_partition_with_no_segments_copies_every_position(backend, dataset):
    sample_indices = np.random.default_rng(3).permutation(N_ROWS).astype(np.int32)
    got, _, _, _ = _run_both(backend, dataset, sample_indices, [], [], [], [], [], moved=True)
    np.testing.assert_array_equal(got, sample_indices)
    got, _, _, _ = _run_both(
        backend, dataset, sample_indices, [5, 2000], [5, 2001], [0, 1], [3, 3], [True, False], True
    )
    np.testing.assert_array_equal(got, sample_indices)
    # an empty segment listed after a non-empty one that begins where it does
    begins, ends = [700, 700, 0], [1900, 700, 300]
    got, _, expected, _ = _run_both(
        backend, dataset, sample_indices, begins, ends, [0, 2, 3], [6, 1, 8], [True] * 3, True
    )
    np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(got, sample_indices)


def test_moved_partition_rejects_counts_that_do_not_fit(backend, dataset):
    data = backend.prepare(dataset)
    sample_indices = backend.to_device(np.arange(10, dtype=np.int32))
    for counts in ([11], [-1], [1, 2]):
        with pytest.raises(ValueError, match="left_counts"):
            backend.partition(data, sample_indices, [0], [10], [0], [1], [True], left_counts=counts)


def test_a_wrong_left_count_leaves_positions_the_sanitizer_names(backend, dataset, monkeypatch):
    """A left count that is not the rows' (the grower's records are): positions of the
    new array stay unwritten, and initcheck reports the first read of them."""
    monkeypatch.setenv(SANITIZE_ENV_VAR, "initcheck")
    data = backend.prepare(dataset)
    sample_indices = backend.to_device(np.arange(N_ROWS, dtype=np.int32))
    columns = cuda_partition.binned_columns(backend.xp, data)
    arguments = (sample_indices, [0], [N_ROWS], [0], [6], [True])
    true_left = partition_rows_naive(
        dataset.X_binned,
        np.arange(N_ROWS, dtype=np.int32),
        [0],
        [N_ROWS],
        [0],
        [6],
        [True],
        MAX_BIN,
    )
    right = cuda_partition.move_partitioned_rows(
        backend.xp, backend.launcher, columns, *arguments, true_left, data.missing_bin
    )
    assert int(right.sum()) == N_ROWS * (N_ROWS - 1) // 2  # every position written once
    wrong = cuda_partition.move_partitioned_rows(
        backend.xp, backend.launcher, columns, *arguments, true_left - 5, data.missing_bin
    )
    with pytest.raises(SanitizerError, match="never written"):
        wrong.sum()


@pytest.mark.parametrize("grow_policy", ["depthwise", "lossguide"])
def test_partitions_move_rows_where_that_moves_fewer_bytes(monkeypatch, grow_policy):
    """Training passes the split records' left counts; each partition whose segments
    hold at least half of the positions is one ``partition_move_tiles`` launch into a new
    array (tree.sample_indices replaced), the others split in place (a lossguide step
    splitting a few leaves). Models equal the CPU backend's byte for byte."""
    decisions = []
    original_partition = CudaBackend.partition

    def spy(self, data, sample_indices, begins, ends, *args, left_counts=None, **kwargs):
        moved = original_partition(
            self, data, sample_indices, begins, ends, *args, left_counts=left_counts, **kwargs
        )
        split = int(np.sum(np.asarray(ends) - np.asarray(begins)))
        decisions.append((left_counts is not None, split, int(sample_indices.shape[0]), moved))
        return moved

    monkeypatch.setattr(CudaBackend, "partition", spy)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 5))
    X[rng.random(3000) < 0.1, 2] = np.nan
    y = (X[:, 0] + np.nan_to_num(X[:, 2]) * X[:, 1] > 0).astype(float)
    params = {
        "objective": "binary:logistic",
        "grow_policy": grow_policy,
        "max_depth": 5 if grow_policy == "depthwise" else 0,
        "max_leaves": 0 if grow_policy == "depthwise" else 20,
        "max_bin": 31,
        "subsample": 0.8,
        "verbosity": 0,
    }
    with emulated_kernels():
        models = [
            gpuboost.train(dict(params, device=d), gpuboost.Dataset(X, label=y), 3).save_raw()
            for d in ("cuda", "cpu")
        ]
    assert models[0] == models[1]
    assert decisions and all(counted for counted, _, _, _ in decisions)
    for _, split, positions, moved in decisions:
        assert (moved is not None) == (2 * split >= positions)
    moves = sum(moved is not None for _, _, _, moved in decisions)
    assert moves >= 3  # every tree's first split moves all of its positions
    if grow_policy == "lossguide":
        assert moves < len(decisions)


def test_moving_moves_fewer_bytes_from_half_of_the_positions():
    assert cuda_partition.moving_moves_fewer_bytes([0], [50], 100)
    assert cuda_partition.moving_moves_fewer_bytes([0, 70], [30, 100], 100)
    assert not cuda_partition.moving_moves_fewer_bytes([0, 70], [30, 89], 100)
    assert cuda_partition.moving_moves_fewer_bytes([], [], 0)


def test_depthwise_levels_with_categorical_splits_equal_the_cpu_backend():
    """A level splitting some nodes by categories (in place, by array operations) and
    others numerically (moved into the new array, the categorical segments copied as
    they were split): the model equals the CPU backend's byte for byte."""
    rng = np.random.default_rng(4)
    n_rows = 4000
    big, small, x = rng.integers(0, 30, n_rows), rng.integers(0, 3, n_rows), rng.normal(size=n_rows)
    y = np.random.default_rng(9).normal(size=30)[big] * 2 + 1.5 * (small == 0) + x
    X = np.column_stack([big + 100.0, small * 10.0, x, rng.normal(size=n_rows)])
    X[rng.random(n_rows) < 0.05, 0] = np.nan
    params = {"max_depth": 5, "min_data_per_group": 5, "max_cat_to_onehot": 1, "verbosity": 0}
    with emulated_kernels():
        boosters = [
            gpuboost.train(
                dict(params, device=device),
                gpuboost.Dataset(X, label=y, categorical_features=[0, 1]),
                3,
            )
            for device in ("cuda", "cpu")
        ]
    assert boosters[0].save_raw() == boosters[1].save_raw()
    assert any(tree.has_categorical for tree in boosters[1].trees)
    numeric = [tree.feature[(tree.feature >= 2)] for tree in boosters[1].trees]
    assert sum(len(features) for features in numeric) > 0
