"""The bin-edge definition (gpuboost.data.binning.sorted_bin_edges) equals NumPy's
``np.percentile(..., method="averaged_inverted_cdf")`` rule it spells out: the reference
below computes the edges as the definition reads, through NumPy's own percentile, and the
weighted quantiles through ``np.unique`` and ``np.bincount``; then a bin of its own for
every value holding at least ``1 / max_bin`` of the rows (or weight) where the edges
allow (gpuboost.core.bin_edges.with_heavy_values)."""

import numpy as np
import pytest

from gpuboost.core.bin_edges import FLOAT64_MAX, midpoints
from gpuboost.data.binning import _find_bin_edges


def _reference_edges(values, max_bin, weights=None):
    """The edges through ``np.percentile`` (unweighted) or ``np.unique`` + ``np.bincount``
    (weighted), on values with ``-0.0`` made ``+0.0``."""
    values = np.clip(values, -FLOAT64_MAX, FLOAT64_MAX) + 0.0
    distinct = np.unique(values)
    if len(distinct) <= max_bin:
        return midpoints(distinct[:-1], distinct[1:])
    percentiles = 100.0 * np.arange(1, max_bin) / max_bin
    with np.errstate(over="ignore", invalid="ignore"):
        if weights is not None:
            distinct, inverse = np.unique(values, return_inverse=True)
            cumulative = np.cumsum(np.bincount(inverse.ravel(), weights=weights))
            position = cumulative[-1] * (percentiles / 100.0)
            last = len(distinct) - 1
            lower = distinct[np.minimum(np.searchsorted(cumulative, position, "left"), last)]
            upper = distinct[np.minimum(np.searchsorted(cumulative, position, "right"), last)]
            edges = np.where(lower == upper, lower, upper - (upper - lower) * 0.5)
            overflowed = ~np.isfinite(edges)
            edges[overflowed] = midpoints(lower[overflowed], upper[overflowed])
            held = np.diff(np.concatenate([[0.0], cumulative]))  # as the definition reads
            heavy = held * max_bin >= cumulative[-1]
            return _with_heavy(np.unique(edges), distinct, heavy, max_bin)
        edges = np.percentile(values, percentiles, method="averaged_inverted_cdf")
        overflowed = ~np.isfinite(edges)
        if overflowed.any():
            lower = np.percentile(values, percentiles[overflowed], method="lower")
            higher = np.percentile(values, percentiles[overflowed], method="higher")
            edges[overflowed] = midpoints(lower, higher)
    distinct, counts = np.unique(values, return_counts=True)
    return _with_heavy(np.unique(edges), distinct, counts * max_bin >= len(values), max_bin)


def _with_heavy(edges, distinct, heavy, max_bin):
    """``edges`` and, for each heavy distinct value, the midpoint below it (not for the
    smallest) and the value itself (not for the largest); the edges alone if they would
    then number ``max_bin`` or more."""
    index = np.flatnonzero(heavy)
    below = [midpoints(distinct[i - 1 : i], distinct[i : i + 1])[0] for i in index if i > 0]
    own = [distinct[i] for i in index if i < len(distinct) - 1]
    every = np.unique(np.concatenate([edges, below, own]))
    return every if len(every) <= max_bin - 1 else edges


def _cases():
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 255, 256, 257, 300, 1000, 4096, 20000):
        yield rng.normal(size=n)
        yield rng.integers(0, 40, size=n).astype(float)  # many ties
        yield np.round(rng.exponential(size=n), 1)
        yield rng.integers(0, 300, size=n).astype(float) * 0.5
    big = rng.uniform(-1.0, 1.0, size=3000) * FLOAT64_MAX
    yield np.concatenate([big, [np.inf, -np.inf, FLOAT64_MAX, -FLOAT64_MAX]])
    yield np.concatenate([rng.normal(size=500), np.full(500, -0.0), np.zeros(500)])


@pytest.mark.parametrize("max_bin", [2, 3, 16, 63, 255])
def test_the_edges_are_numpys_percentiles(max_bin):
    for values in _cases():
        expected = _reference_edges(values, max_bin)
        got = _find_bin_edges(values.copy(), max_bin)
        assert got.tobytes() == expected.tobytes(), (len(values), max_bin)


@pytest.mark.parametrize("max_bin", [2, 16, 255])
def test_the_weighted_edges_are_the_weighted_order_statistics(max_bin):
    rng = np.random.default_rng(1)
    for values in _cases():
        for weights in (
            rng.random(len(values)) + 0.01,
            rng.integers(1, 5, size=len(values)).astype(float),
            np.full(len(values), 0.1),
        ):
            expected = _reference_edges(values, max_bin, weights)
            got = _find_bin_edges(values.copy(), max_bin, weights)
            assert got.tobytes() == expected.tobytes(), (len(values), max_bin)


def test_unit_weights_give_the_unweighted_edges():
    values = np.random.default_rng(2).normal(size=5000).round(2)
    unweighted = _find_bin_edges(values, 64)
    assert _find_bin_edges(values, 64, np.ones(5000)).tobytes() == unweighted.tobytes()


def test_negative_zero_never_becomes_an_edge():
    values = np.concatenate([np.full(300, -0.0), np.arange(1.0, 301.0), -np.arange(1.0, 301.0)])
    edges = _find_bin_edges(values, 4)
    assert 0.0 in edges and not np.signbit(edges[edges == 0.0]).any()


def test_a_value_many_rows_share_gets_a_bin_of_its_own():
    """A heaped value (10 % of the rows at 1.0 among 2,000 distinct values): a quantile
    edge alone would put it with its lower neighbours; with an edge just below it and one
    at it, a split can send it either way."""
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.uniform(0.0, 2.0, size=2000), np.ones(222)])
    edges = _find_bin_edges(values, 32)
    below = values[values < 1.0].max()
    assert midpoints(np.array([below]), np.array([1.0]))[0] in edges and 1.0 in edges
    bins = np.searchsorted(edges, values, side="left")
    assert np.unique(bins[values == 1.0]).size == 1
    assert (bins[values != 1.0] != bins[values == 1.0][0]).all()  # its bin holds it alone
    # Too many heavy values for max_bin - 1 edges: the quantile edges alone.
    # (12 values of 100 rows each among 1,300: each holds more than 1/16 of them.)
    mixed = np.concatenate([np.repeat(np.arange(12.0), 100), rng.uniform(0.0, 12.0, size=100)])
    quantiles = np.percentile(mixed, 100.0 * np.arange(1, 16) / 16, method="averaged_inverted_cdf")
    assert _find_bin_edges(mixed, 16).tobytes() == np.unique(quantiles).tobytes()
