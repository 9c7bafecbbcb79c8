"""Tests of gpuboost.backends.numpy.partition: the stable row partition against its naive
loop."""

import numpy as np
import pytest
from _cases import random_segments as disjoint_segments

from gpuboost.backends.numpy import partition as partition_module
from gpuboost.backends.numpy.histogram import build_histograms
from gpuboost.backends.numpy.partition import (
    goes_left,
    partition_rows,
    partition_rows_naive,
    partition_rows_threaded,
)
from gpuboost.backends.numpy.split_scan import find_best_splits
from gpuboost.core.gain import SplitParams
from gpuboost.core.quantize import quantize


def random_binned(rng, n_rows, n_features, max_bin, missing_fraction=0.15):
    X_binned = rng.integers(0, max_bin, size=(n_rows, n_features)).astype(np.uint8)
    X_binned[rng.random((n_rows, n_features)) < missing_fraction] = max_bin
    return X_binned


def partition_both(
    X_binned, sample_indices, begins, ends, features, thresholds, default_left, missing_bin
):
    fast_indices = sample_indices.copy()
    naive_indices = sample_indices.copy()
    n_left = partition_rows(
        np.ascontiguousarray(X_binned.T),
        fast_indices,
        begins,
        ends,
        features,
        thresholds,
        default_left,
        missing_bin,
    )
    n_left_naive = partition_rows_naive(
        X_binned, naive_indices, begins, ends, features, thresholds, default_left, missing_bin
    )
    np.testing.assert_array_equal(fast_indices, naive_indices)
    np.testing.assert_array_equal(n_left, n_left_naive)
    assert n_left.dtype == np.int64 and fast_indices.dtype == sample_indices.dtype
    return fast_indices, n_left


def test_goes_left():
    bins = np.array([0, 3, 4, 9, 9])
    np.testing.assert_array_equal(goes_left(bins, 3, False, 9), [True, True, False, False, False])
    np.testing.assert_array_equal(goes_left(bins, 3, True, 9), [True, True, False, True, True])
    np.testing.assert_array_equal(
        goes_left(bins, np.array([0, 0, 5, 5, 5]), np.array([0, 0, 0, 1, 0], dtype=bool), 9),
        [True, False, True, True, False],
    )


@pytest.mark.parametrize("seed", range(8))
def test_matches_naive_on_random_segments(seed):
    rng = np.random.default_rng(seed)
    max_bin = int(rng.choice([2, 9, 255]))
    n_rows = int(rng.integers(2, 400))
    n_features = int(rng.integers(1, 5))
    X_binned = random_binned(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    n_nodes = int(rng.integers(1, 10))
    begins, ends = disjoint_segments(rng, n_rows, n_nodes)
    # Positions outside the listed segments must not move.
    outside = np.ones(n_rows, dtype=bool)
    for begin, end in zip(begins, ends):
        outside[begin:end] = False
    features = rng.integers(0, n_features, size=n_nodes)
    thresholds = rng.integers(0, max(1, max_bin - 1), size=n_nodes)
    default_left = rng.random(n_nodes) < 0.5
    result, n_left = partition_both(
        X_binned, sample_indices, begins, ends, features, thresholds, default_left, max_bin
    )
    np.testing.assert_array_equal(result[outside], sample_indices[outside])
    for node, (begin, end) in enumerate(zip(begins, ends)):
        # The segment holds the same rows, left ones first.
        assert sorted(result[begin:end]) == sorted(sample_indices[begin:end])
        rows = result[begin:end]
        left = goes_left(
            X_binned[rows, features[node]], thresholds[node], default_left[node], max_bin
        )
        assert left[: n_left[node]].all() and not left[n_left[node] :].any()


def test_split_is_stable():
    rng = np.random.default_rng(20)
    n_rows, max_bin = 500, 31
    X_binned = random_binned(rng, n_rows, 3, max_bin)
    # The grower keeps every segment in increasing row order.
    rows = np.sort(rng.choice(n_rows, size=300, replace=False)).astype(np.int32)
    begins, ends = np.array([0, 120, 200]), np.array([120, 200, 300])
    result, n_left = partition_both(
        X_binned,
        rows,
        begins,
        ends,
        np.array([0, 2, 1]),
        np.array([10, 0, 30]),
        np.array([True, False, False]),
        max_bin,
    )
    for node, (begin, end) in enumerate(zip(begins, ends)):
        middle = begin + n_left[node]
        for child in (result[begin:middle], result[middle:end]):
            assert np.all(np.diff(child) > 0)


@pytest.mark.parametrize(
    "begins, ends",
    [
        ([0, 5], [5, 5]),  # empty segment last
        ([0, 3, 3], [3, 3, 8]),  # empty segment in the middle
        ([2], [2]),  # only an empty segment
        ([5, 0], [5, 4]),  # empty segment first, at the end of the data
    ],
)
def test_empty_segments(begins, ends):
    rng = np.random.default_rng(21)
    X_binned = random_binned(rng, 8, 2, 7)
    sample_indices = np.arange(8, dtype=np.int32)
    n_nodes = len(begins)
    _, n_left = partition_both(
        X_binned,
        sample_indices,
        np.array(begins),
        np.array(ends),
        np.zeros(n_nodes, dtype=np.int64),
        np.full(n_nodes, 3),
        np.ones(n_nodes, dtype=bool),
        7,
    )
    for node in range(n_nodes):
        if begins[node] == ends[node]:
            assert n_left[node] == 0


def test_no_nodes():
    sample_indices = np.arange(4, dtype=np.int32)
    n_left = partition_rows(np.zeros((1, 4), dtype=np.uint8), sample_indices, [], [], [], [], [], 7)
    assert n_left.shape == (0,)
    np.testing.assert_array_equal(sample_indices, np.arange(4))


@pytest.mark.parametrize("seed", range(4))
def test_counts_equal_the_split_records_left_count(seed):
    rng = np.random.default_rng(30 + seed)
    n_rows, n_features, max_bin = 600, 4, 15
    X_binned = random_binned(rng, n_rows, n_features, max_bin, missing_fraction=0.2)
    gradients = np.where(X_binned[:, seed % n_features] < 7, -1.0, 1.0) + rng.normal(size=n_rows)
    quantized_g, scale_g = quantize(np, gradients)
    quantized_h, scale_h = quantize(np, rng.uniform(0.5, 1.0, size=n_rows))
    sample_indices = np.sort(rng.choice(n_rows, size=500, replace=False)).astype(np.int32)
    begins, ends = np.array([0, 140, 300]), np.array([140, 300, 500])
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        quantized_g,
        quantized_h,
        sample_indices,
        begins,
        ends,
        max_bin + 1,
    )
    records = find_best_splits(
        histograms,
        scale_g,
        scale_h,
        np.full(n_features, max_bin),
        max_bin,
        SplitParams(min_child_weight=0.0),
    )
    assert (records["feature"] >= 0).all()
    result, n_left = partition_both(
        X_binned,
        sample_indices,
        begins,
        ends,
        records["feature"],
        records["bin"],
        records["default_left"],
        max_bin,
    )
    np.testing.assert_array_equal(n_left, records["left_count"])
    for node, begin in enumerate(begins):
        left_rows = result[begin : begin + n_left[node]]
        assert quantized_g[left_rows].astype(np.int64).sum() == records["left_sum_gradients"][node]
        assert quantized_h[left_rows].astype(np.int64).sum() == records["left_sum_hessians"][node]


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_threaded_partition_matches_naive(monkeypatch, n_threads):
    """The nodes split among threads give the single-thread result."""
    monkeypatch.setattr(partition_module, "PARALLEL_PARTITION_MIN_ROWS", 16)
    rng = np.random.default_rng(40 + n_threads)
    n_rows, max_bin = 600, 15
    X_binned = random_binned(rng, n_rows, 3, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = disjoint_segments(rng, n_rows, 7)
    features = rng.integers(0, 3, size=7)
    thresholds = rng.integers(0, max_bin - 1, size=7)
    default_left = rng.random(7) < 0.5
    expected = sample_indices.copy()
    partition_rows_naive(
        X_binned, expected, begins, ends, features, thresholds, default_left, max_bin
    )
    got = sample_indices.copy()
    partition_rows_threaded(
        np.ascontiguousarray(X_binned.T),
        got,
        begins,
        ends,
        features,
        thresholds,
        default_left,
        max_bin,
        n_threads,
    )
    np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(got, sample_indices)
