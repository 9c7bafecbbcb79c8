"""Tests of gpuboost.backends.numpy.leaf: adding leaf values against its naive loop, and
the per-segment weighted quantile against ``weighted_quantile`` of each segment."""

import numpy as np
import pytest

from gpuboost.backends.numpy.leaf import (
    add_leaf_values,
    add_leaf_values_naive,
    segment_weighted_quantile,
)
from gpuboost.core.quantile import weighted_quantile


def _segments(rng, n_positions, n_segments):
    cuts = np.sort(rng.choice(np.arange(1, n_positions), size=n_segments - 1, replace=False))
    bounds = np.concatenate([[0], cuts, [n_positions]])
    return bounds[:-1], bounds[1:]


@pytest.mark.parametrize("seed", range(3))
def test_add_leaf_values_matches_naive(seed):
    rng = np.random.default_rng(seed)
    n_rows = 500
    sample_indices = rng.permutation(n_rows)[:450].astype(np.int32)
    begins, ends = _segments(rng, 450, 6)
    begins, ends = begins[[0, 2, 3, 5]], ends[[0, 2, 3, 5]]  # some rows get nothing
    values = rng.normal(size=4)
    start = rng.normal(size=(n_rows, 2))
    got, expected = start.copy(), start.copy()
    add_leaf_values(got, 1, sample_indices, begins, ends, values)
    add_leaf_values_naive(expected, 1, sample_indices, begins, ends, values)
    np.testing.assert_array_equal(got.view(np.int64), expected.view(np.int64))
    assert (got != start).sum() == (ends - begins).sum()


@pytest.mark.parametrize("weighted", [False, True])
def test_segment_weighted_quantile_is_the_quantile_of_each_segment(weighted):
    rng = np.random.default_rng(7)
    n_rows = 300
    values = np.round(rng.normal(size=n_rows) * 2) / 2
    weights = rng.uniform(0.1, 2.0, size=n_rows) if weighted else None
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _segments(rng, n_rows, 5)
    got = segment_weighted_quantile(values, weights, sample_indices, begins, ends, 0.3)
    for segment, (begin, end) in enumerate(zip(begins, ends)):
        rows = sample_indices[begin:end]
        expected = weighted_quantile(values[rows], None if weights is None else weights[rows], 0.3)
        assert got[segment] == expected
    assert got.dtype == np.float64 and len(np.unique(got)) > 1
