"""The CUDA backend's leaf primitives (gpuboost.backends.cuda.leaf, ``cuda/leaf.cu``)
against the NumPy backend, under the CPU emulation of the kernels.
"""

import re

import numpy as np
import pytest
from _cases import binned_problem, messy_features
from _parity import bits

import gpuboost
from gpuboost.backends import NumpyBackend
from gpuboost.backends.base import DeviceData
from gpuboost.backends.cuda import leaf as cuda_leaf
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.sources import read_cuda_source
from gpuboost.backends.emulation.device_array import count_operations
from gpuboost.backends.numpy.binning import binned_layout
from gpuboost.tree.splitters.hist import HistogramSplitter

pytestmark = pytest.mark.usefixtures("cuda_emulation")


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


@pytest.mark.parametrize("seed", [0, 1])
def test_add_split_leaf_values_matches_partition_then_add(backend, seed):
    """The one-launch route-and-add gives the margins of its definition
    (Backend.add_split_leaf_values: partition, then add over the children's segments) bit
    for bit, and leaves the rows where they were."""
    rng = np.random.default_rng(seed)
    n_rows, max_bin = 2600, 9  # segments longer than one tile (LEAF_TILE_ROWS)
    X_binned, _, _ = binned_problem(rng, n_rows, 4, max_bin, missing_fraction=0.2)
    host = DeviceData(n_rows, 4, max_bin + 1, max_bin, None, None, None, binned_layout(X_binned))
    sample_indices = rng.permutation(n_rows)[:2500].astype(np.int32)
    begins = np.array([1500, 0, 1490, 2100, 2101], dtype=np.int64)  # one empty, one row
    ends = np.array([2100, 1490, 1490, 2101, 2450], dtype=np.int64)
    features = np.array([1, 0, 2, 3, 1], dtype=np.int64)
    bins = np.array([3, 5, 0, 8, 0], dtype=np.int64)
    default_left = np.array([True, False, True, False, False])
    n_left = np.array(
        [
            int(
                np.sum(
                    (X_binned[sample_indices[b:e], f] <= t)
                    | ((X_binned[sample_indices[b:e], f] == max_bin) & d)
                )
            )
            for b, e, f, t, d in zip(begins, ends, features, bins, default_left)
        ]
    )
    assert 0 < n_left[0] < ends[0] - begins[0] and 0 < n_left[1] < ends[1] - begins[1]
    left_values, right_values = rng.normal(size=(2, len(begins)))
    start = rng.normal(size=(n_rows, 2))
    args = (begins, ends, n_left, features, bins, default_left, left_values, right_values)
    expected = start.copy()
    NumpyBackend().add_split_leaf_values(host, expected, 1, sample_indices.copy(), *args)
    device = DeviceData(
        n_rows, 4, max_bin + 1, max_bin, None, None, None, {"X_binned": backend.to_device(X_binned)}
    )
    raw, routed = backend.to_device(start), backend.to_device(sample_indices)
    backend.add_split_leaf_values(device, raw, 1, routed, *args)
    backend.synchronize()
    np.testing.assert_array_equal(bits(backend.to_host(raw)), bits(expected))
    np.testing.assert_array_equal(backend.to_host(routed), sample_indices)
    assert (expected != start).sum() == (ends - begins).sum()


@pytest.mark.parametrize("seed", [0, 1])
def test_add_tree_leaf_values_in_one_launch(backend, seed):
    """Leaves' segments and unpartitioned splits' segments (disjoint) in one launch and
    one host-to-device copy: the margins of the definition (Backend.add_tree_leaf_values:
    add_leaf_values, then add_split_leaf_values) bit for bit; no split: add_leaf_values."""
    rng = np.random.default_rng(10 + seed)
    n_rows, max_bin = 2600, 9
    X_binned, _, _ = binned_problem(rng, n_rows, 4, max_bin, missing_fraction=0.2)
    host = DeviceData(n_rows, 4, max_bin + 1, max_bin, None, None, None, binned_layout(X_binned))
    sample_indices = rng.permutation(n_rows)[:2500].astype(np.int32)
    leaf_begins = np.array([600, 2450, 1490, 2101], dtype=np.int64)  # one empty
    leaf_ends = np.array([1490, 2500, 1490, 2103], dtype=np.int64)
    leaf_values = rng.normal(size=len(leaf_begins))
    begins = np.array([1500, 0, 2103], dtype=np.int64)  # longer than a tile, one row
    ends = np.array([2101, 600, 2104], dtype=np.int64)
    features = np.array([1, 0, 3], dtype=np.int64)
    bins = np.array([3, 5, 8], dtype=np.int64)
    default_left = np.array([True, False, False])
    n_left = np.array(
        [
            int(
                np.sum(
                    (X_binned[sample_indices[b:e], f] <= t)
                    | ((X_binned[sample_indices[b:e], f] == max_bin) & d)
                )
            )
            for b, e, f, t, d in zip(begins, ends, features, bins, default_left)
        ]
    )
    left_values, right_values = rng.normal(size=(2, len(begins)))
    splits = (begins, ends, n_left, features, bins, default_left, left_values, right_values)
    no_splits = tuple(np.zeros(0, dtype=a.dtype) for a in splits)
    start = rng.normal(size=(n_rows, 2))
    leaves = (leaf_begins, leaf_ends, leaf_values)
    device = DeviceData(
        n_rows, 4, max_bin + 1, max_bin, None, None, None, {"X_binned": backend.to_device(X_binned)}
    )
    routed = backend.to_device(sample_indices)
    for arguments in (splits, no_splits):
        expected = start.copy()
        NumpyBackend().add_tree_leaf_values(
            host, expected, 1, sample_indices.copy(), *leaves, *arguments
        )
        raw = backend.to_device(start)
        backend.add_tree_leaf_values(device, raw, 1, routed, *leaves, *arguments)  # warm
        raw = backend.to_device(start)
        with count_operations() as counts:
            backend.add_tree_leaf_values(device, raw, 1, routed, *leaves, *arguments)
        assert counts["kernel"] == 1 and counts["to_device"] == 1 and counts["array_op"] == 0
        np.testing.assert_array_equal(bits(backend.to_host(raw)), bits(expected))
        np.testing.assert_array_equal(backend.to_host(routed), sample_indices)
        n_added = (leaf_ends - leaf_begins).sum() + (arguments[1] - arguments[0]).sum()
        assert (expected != start).sum() == n_added
    with pytest.raises(ValueError, match="must not be negative"):
        backend.add_tree_leaf_values(
            device,
            raw,
            1,
            routed,
            *leaves,
            begins,
            ends,
            n_left,
            -features,
            bins,
            default_left,
            left_values,
            right_values,
        )


def test_deferred_last_partition_gives_the_same_models(monkeypatch):
    """Depthwise on CUDA the last splits' rows are routed by add_tree_leaf_values (one
    launch with the leaves, no partition): the model bytes and evaluation log of the CPU
    backend, and of partitioning every split on CUDA."""
    rng = np.random.default_rng(8)
    X = messy_features(2500, seed=11)
    y = (X[:, 0] + np.nan_to_num(X[:, 1]) * X[:, 2] > 0).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 4, "max_bin": 31, "verbosity": 0}
    weight = rng.uniform(0.5, 2.0, size=len(y))
    calls = []
    routed = CudaBackend.add_tree_leaf_values

    def counting(self, *args):
        calls.append(len(args[7]))  # the unpartitioned splits' segments
        return routed(self, *args)

    def fit(device):
        dtrain = gpuboost.Dataset(X, label=y, weight=weight)
        log = {}
        booster = gpuboost.train(
            dict(params, device=device), dtrain, 4, evals=[(dtrain, "train")], evals_result=log
        )
        return booster.save_raw(), log

    monkeypatch.setattr(CudaBackend, "add_tree_leaf_values", counting)
    deferred = fit("cuda")
    assert calls and all(n > 0 for n in calls)  # every tree routed some splits' rows
    assert deferred == fit("cpu")
    monkeypatch.setattr(HistogramSplitter, "defers_final_partition", False)
    calls.clear()
    assert fit("cuda") == deferred
    assert calls and not any(calls)


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
        expected = numpy_backend.segment_weighted_quantile(
            values, weights, sample_indices, begins, ends, alpha
        )
        got = backend.segment_weighted_quantile(
            device_values, device_weights, device_indices, begins, ends, alpha
        )
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


def test_launch_constants_match_kernel_source():
    """The Python tile geometry must be the one compiled into leaf.cu."""

    def constant(source, name):
        return int(re.search(rf"constexpr int32_t {name} = (\d+);", source).group(1))

    leaf = read_cuda_source("leaf.cu")
    assert constant(leaf, "kLeafThreadsPerBlock") == cuda_leaf.LEAF_THREADS_PER_BLOCK
    assert constant(leaf, "kLeafItemsPerThread") == cuda_leaf.LEAF_ITEMS_PER_THREAD
