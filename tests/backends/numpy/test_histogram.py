"""Tests of gpuboost.backends.numpy.histogram: the vectorized primitive against its naive
loop."""

import numpy as np
import pytest
from _cases import binned_problem as _random_problem
from _cases import random_segments as _random_segments

from gpuboost.backends.numpy.histogram import build_histograms, build_histograms_naive
from gpuboost.core.dtypes import GRAD_QUANT_MAX, HIST_COUNT, HIST_DTYPE, HIST_GRAD, HIST_HESS
from gpuboost.core.segments import concat_ranges


def _build_both(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins):
    fast = build_histograms(
        np.ascontiguousarray(X_binned.T), gradients, hessians, sample_indices, begins, ends, n_bins
    )
    naive = build_histograms_naive(
        X_binned, gradients, hessians, sample_indices, begins, ends, n_bins
    )
    return fast, naive


def test_concat_ranges():
    positions, segment = concat_ranges([5, 0, 9, 9], [7, 3, 9, 10])
    np.testing.assert_array_equal(positions, [5, 6, 0, 1, 2, 9])
    np.testing.assert_array_equal(segment, [0, 0, 1, 1, 1, 3])
    positions, segment = concat_ranges([], [])
    assert positions.shape == segment.shape == (0,)


@pytest.mark.parametrize("seed", range(6))
def test_matches_naive_on_random_nodes(seed):
    rng = np.random.default_rng(seed)
    max_bin = int(rng.choice([2, 7, 16, 255]))
    n_rows = int(rng.integers(1, 300))
    X_binned, gradients, hessians = _random_problem(rng, n_rows, int(rng.integers(1, 6)), max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _random_segments(rng, n_rows, int(rng.integers(1, 8)))
    fast, naive = _build_both(
        X_binned, gradients, hessians, sample_indices, begins, ends, max_bin + 1
    )
    assert fast.dtype == HIST_DTYPE
    assert fast.shape == (len(begins), X_binned.shape[1], max_bin + 1, 3)
    np.testing.assert_array_equal(fast, naive)


def test_empty_segments_give_zero_histograms():
    rng = np.random.default_rng(10)
    X_binned, gradients, hessians = _random_problem(rng, 50, 3, 15)
    sample_indices = np.arange(50, dtype=np.int32)
    begins, ends = [0, 10, 10, 50, 30], [0, 10, 30, 50, 50]
    fast, naive = _build_both(X_binned, gradients, hessians, sample_indices, begins, ends, 16)
    np.testing.assert_array_equal(fast, naive)
    for node in (0, 1, 3):
        assert not fast[node].any()
    assert fast[2, 0, :, HIST_COUNT].sum() == 20


def test_no_nodes():
    X_binned, gradients, hessians = _random_problem(np.random.default_rng(0), 20, 2, 7)
    fast, naive = _build_both(
        X_binned, gradients, hessians, np.arange(20, dtype=np.int32), [], [], 8
    )
    assert fast.shape == naive.shape == (0, 2, 8, 3)


def test_many_nodes():
    rng = np.random.default_rng(11)
    n_rows = 600
    X_binned, gradients, hessians = _random_problem(rng, n_rows, 4, 31)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    bounds = np.sort(rng.choice(np.arange(1, n_rows), size=149, replace=False))
    begins = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [n_rows]])
    fast, naive = _build_both(X_binned, gradients, hessians, sample_indices, begins, ends, 32)
    np.testing.assert_array_equal(fast, naive)
    # Every row is in exactly one node: the node histograms add up to the whole set.
    whole, _ = _build_both(X_binned, gradients, hessians, sample_indices, [0], [n_rows], 32)
    np.testing.assert_array_equal(fast.sum(axis=0), whole[0])


def test_sums_are_exact_where_int32_would_overflow():
    n_rows = 64
    X_binned = np.zeros((n_rows, 1), dtype=np.uint8)
    gradients = np.full(n_rows, GRAD_QUANT_MAX, dtype=np.int32)
    hessians = np.full(n_rows, GRAD_QUANT_MAX, dtype=np.int32)
    fast, naive = _build_both(
        X_binned, gradients, hessians, np.arange(n_rows, dtype=np.int32), [0], [n_rows], 4
    )
    np.testing.assert_array_equal(fast, naive)
    assert fast[0, 0, 0, HIST_GRAD] == n_rows * GRAD_QUANT_MAX
    assert fast[0, 0, 0, HIST_HESS] == n_rows * GRAD_QUANT_MAX


def test_every_feature_holds_the_node_totals():
    rng = np.random.default_rng(12)
    X_binned, gradients, hessians = _random_problem(rng, 200, 5, 63, missing_fraction=0.3)
    rows = rng.choice(200, size=120, replace=False).astype(np.int32)
    fast, _ = _build_both(X_binned, gradients, hessians, rows, [0], [120], 64)
    expected = [gradients[rows].astype(np.int64).sum(), hessians[rows].astype(np.int64).sum(), 120]
    np.testing.assert_array_equal(fast[0].sum(axis=1), np.tile(expected, (5, 1)))
    # Missing rows land in the missing bin (the last column).
    np.testing.assert_array_equal(fast[0, :, 63, HIST_COUNT], (X_binned[rows] == 63).sum(axis=0))


def test_does_not_depend_on_row_order_within_a_node():
    rng = np.random.default_rng(13)
    X_binned, gradients, hessians = _random_problem(rng, 300, 3, 255)
    rows = np.arange(300, dtype=np.int32)
    ordered, _ = _build_both(X_binned, gradients, hessians, rows, [0], [300], 256)
    shuffled, _ = _build_both(X_binned, gradients, hessians, rng.permutation(rows), [0], [300], 256)
    np.testing.assert_array_equal(ordered, shuffled)
