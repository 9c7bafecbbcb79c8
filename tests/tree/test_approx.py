"""Tests of gpuboost.tree.approx (tree_method='approx'): the hessian-weighted edges, the
per-tree re-binning on both backends, and training with it."""

import numpy as np
import pytest
from _parity import assert_predictions_match, assert_runs_match, train_on_both

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.core.bin_edges import FLOAT64_MAX, heavy_runs, midpoints
from gpuboost.data.binning import BinMapper
from gpuboost.tree.approx import (
    INT64_SAFE_BITS,
    ApproxRebinner,
    sketch_bin_mapper,
    weight_shift,
    weighted_edges,
    weighted_edges_naive,
)
from gpuboost.tree.tree import TREE_ARRAYS

MAX_BIN = 16


def _weights(rng, n, zeros=False):
    weights = rng.integers(1, 1 << 30, size=n, dtype=np.int64)
    if zeros:
        weights[rng.random(n) < 0.3] = 0
    return weights


# ---- the edges of one feature -----------------------------------------------------------
@pytest.mark.parametrize(
    "case",
    [
        "continuous",
        "ties",
        "zero_weights",
        "infinite_and_nan",
        "few_distinct",
        "signed_zeros",
        "heaped",
        "heaped_zero_weights",
    ],
)
def test_weighted_edges_equal_the_naive_loop(case):
    rng = np.random.default_rng(len(case))
    n = 500
    values = rng.normal(size=n)
    weights = _weights(rng, n, zeros=case == "zero_weights")
    if case == "ties":
        values = np.round(values * 8) / 8  # about 40 distinct values (more than MAX_BIN), ties
    if case == "infinite_and_nan":
        values[rng.random(n) < 0.1] = np.nan
        values[:5] = np.inf
        values[5:9] = -np.inf
    if case == "few_distinct":
        values = rng.integers(0, MAX_BIN, size=n).astype(np.float64)
    if case.startswith("heaped"):  # three values of a tenth of the rows each, at the ends too
        values[:150] = np.repeat([values.min(), 0.25, values.max()], 50)
        weights[:150] = 1 << 30
        if case == "heaped_zero_weights":
            weights[:] = 0
    if case == "signed_zeros":
        values = np.round(values)
        values[values == 0] = np.where(rng.random(np.sum(values == 0)) < 0.5, -0.0, 0.0)
        values = np.concatenate([values, rng.normal(size=40)])
        weights = np.concatenate([weights, _weights(rng, 40)])
    got = weighted_edges(np, values, weights, MAX_BIN)
    expected = weighted_edges_naive(values, weights, MAX_BIN)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float64 and len(got) <= MAX_BIN - 1
    assert np.all(np.isfinite(got)) and np.all(np.diff(got) > 0)


def test_unit_weights_give_numpys_averaged_inverted_cdf():
    rng = np.random.default_rng(3)
    values = rng.normal(size=1000)  # 1000 / 16 is not an integer: no averaging needed ...
    values = np.concatenate([values, values[:24]])  # ... 1024 / 16 is: averages appear
    percentiles = 100.0 * np.arange(1, MAX_BIN) / MAX_BIN
    expected = np.unique(np.percentile(values, percentiles, method="averaged_inverted_cdf"))
    got = weighted_edges(np, values, np.ones(len(values), dtype=np.int64), MAX_BIN)
    np.testing.assert_array_equal(got, expected)


def test_heavier_rows_pull_the_edges():
    values = np.arange(1000, dtype=np.float64)
    weights = np.ones(1000, dtype=np.int64)
    weights[:100] = 100  # the first tenth of the values carries ~92% of the weight
    edges = weighted_edges(np, values, weights, MAX_BIN)
    assert np.sum(edges < 100) >= 12
    # All weights zero: counted as unit weights.
    np.testing.assert_array_equal(
        weighted_edges(np, values, np.zeros(1000, dtype=np.int64), MAX_BIN),
        weighted_edges(np, values, np.ones(1000, dtype=np.int64), MAX_BIN),
    )


def test_a_value_holding_a_sixteenth_of_the_weight_gets_a_bin_of_its_own():
    """The rule of gpuboost.data.binning (core.bin_edges.with_heavy_values), by weight: a
    value of a tenth of the rows but little hessian stays with its neighbours; with the
    weight of its rows it gets an edge just below it and one at it."""
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.uniform(0.0, 2.0, size=900), np.ones(100)])
    light = np.ones(1000, dtype=np.int64)
    light[900:] = 0  # 0 % of the weight
    heavy = np.ones(1000, dtype=np.int64)
    below = midpoints(np.array([values[values < 1.0].max()]), np.array([1.0]))[0]
    for weights, own_bin in ((light, False), (heavy, True)):
        edges = weighted_edges(np, values, weights, MAX_BIN)
        np.testing.assert_array_equal(edges, weighted_edges_naive(values, weights, MAX_BIN))
        assert (below in edges and 1.0 in edges) == own_bin
    # Unit weights: the bins of gpuboost.data.binning (the same edges as 'hist').
    np.testing.assert_array_equal(
        weighted_edges(np, values, heavy, MAX_BIN),
        BinMapper(max_bin=MAX_BIN).fit(values[:, None]).bin_edges_[0],
    )


def test_few_distinct_values_give_the_hist_midpoints():
    rng = np.random.default_rng(4)
    values = rng.choice([-3.0, 0.5, 1.0, 7.25, 1e300], size=300)
    edges = weighted_edges(np, values, _weights(rng, 300), MAX_BIN)
    np.testing.assert_array_equal(
        edges, BinMapper(max_bin=MAX_BIN).fit(values[:, None]).bin_edges_[0]
    )
    assert weighted_edges(np, np.full(5, np.nan), np.ones(5, dtype=np.int64), MAX_BIN).size == 0


def test_extreme_values_stay_finite():
    values = np.concatenate(
        [np.full(50, -FLOAT64_MAX), np.full(50, FLOAT64_MAX), np.linspace(-1, 1, 100)]
    )
    edges = weighted_edges(np, values, np.ones(200, dtype=np.int64), MAX_BIN)
    assert np.all(np.isfinite(edges)) and np.all(np.diff(edges) > 0)
    np.testing.assert_array_equal(edges, weighted_edges_naive(values, np.ones(200), MAX_BIN))


def test_weight_shift_keeps_the_products_in_int64():
    assert weight_shift(1_000_000, 255) == 0
    for n_rows in (1 << 25, 1 << 31):
        shift = weight_shift(n_rows, 255)
        assert shift > 0
        assert (n_rows * ((1 << 30) >> shift) * 255).bit_length() <= INT64_SAFE_BITS


# ---- re-binning on both backends ----------------------------------------------------------
def _messy(n_rows, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    X[rng.random(n_rows) < 0.1, 1] = np.nan
    X[:3, 0] = np.inf
    X[:, 3] = 2.0  # constant
    return X, rng


def test_rebin_equals_the_mappers_transform_on_both_backends(emulated_cuda):
    X, rng = _messy(300, 5)
    dataset = Dataset(X, label=np.zeros(300), max_bin=MAX_BIN)
    hessians = rng.integers(0, 1 << 30, size=300).astype(np.int32)
    sample = np.sort(rng.choice(300, size=200, replace=False)).astype(np.int32)
    mapper = sketch_bin_mapper(np, X, hessians, sample, MAX_BIN)
    assert mapper.bin_edges_[0].tolist() != dataset.bin_mapper.bin_edges_[0].tolist()
    cuda = CudaBackend()
    cuda.check_launches = True
    for backend in (NumpyBackend(), cuda):
        data = backend.prepare(dataset)
        rebinned = backend.rebin(data, backend.prepare_features(X), mapper)
        np.testing.assert_array_equal(
            backend.to_host(rebinned.arrays["X_binned"]), mapper.transform(X)
        )
        np.testing.assert_array_equal(rebinned.n_value_bins, mapper.n_value_bins_)
        assert (rebinned.n_rows, rebinned.n_bins, rebinned.missing_bin) == (
            300,
            MAX_BIN + 1,
            MAX_BIN,
        )
        assert rebinned.label is data.label


@pytest.mark.parametrize("sampled", [False, True])
def test_presorted_rebinner_sketches_the_same_edges(sampled):
    X, rng = _messy(400, 6)
    X[:, 2] = np.round(X[:, 2] * 4) / 4  # ties
    X[rng.random(400) < 0.3, 2] = -0.0
    dataset = Dataset(X, label=np.zeros(400), max_bin=MAX_BIN)
    rebinner = ApproxRebinner(NumpyBackend(), dataset, MAX_BIN)
    for _ in range(3):
        hessians = rng.integers(0, 1 << 30, size=400).astype(np.int32)
        sample = np.sort(rng.choice(400, size=250, replace=False)) if sampled else np.arange(400)
        sample = sample.astype(np.int32)
        got = rebinner.sketch(hessians, sample).bin_edges_
        expected = sketch_bin_mapper(np, X, hessians, sample, MAX_BIN).bin_edges_
        for got_edges, expected_edges in zip(got, expected):
            np.testing.assert_array_equal(got_edges, expected_edges)


# ---- training -------------------------------------------------------------------------------
def _train(X, y, params, device="cpu", rounds=6, max_bin=MAX_BIN, weight=None):
    dataset = Dataset(X, label=y, weight=weight, max_bin=max_bin)
    return gpuboost.train(
        {"device": device, "max_depth": 4, "max_bin": max_bin, **params},
        dataset,
        num_boost_round=rounds,
        verbose_eval=False,
    )


def _same_trees(model_a, model_b):
    return all(
        np.array_equal(getattr(a, name), getattr(b, name))
        for a, b in zip(model_a.trees, model_b.trees)
        for name in TREE_ARRAYS
    )


@pytest.mark.parametrize(
    "params",
    [
        {"objective": "binary:logistic"},
        {"objective": "binary:logistic", "subsample": 0.8, "seed": 3},
        {"objective": "multi:softprob", "num_class": 3},
    ],
)
def test_approx_equals_hist_with_fewer_distinct_values_than_bins(params):
    rng = np.random.default_rng(6)
    X = rng.integers(-5, 6, size=(400, 4)).astype(np.float64)  # 11 distinct values
    X[rng.random(400) < 0.1, 2] = np.nan
    score = X[:, 0] + 0.5 * np.nan_to_num(X[:, 2]) + rng.normal(size=400)
    y = np.digitize(score, [-1, 1]) if "num_class" in params else score > 0
    hist = _train(X, y.astype(np.float64), params)
    approx = _train(X, y.astype(np.float64), {**params, "tree_method": "approx"})
    assert _same_trees(hist, approx)
    assert sum(tree.n_leaves for tree in hist.trees) > 2 * len(hist.trees)


def test_approx_re_sketches_on_continuous_data_and_learns(binary_data):
    X, y = binary_data
    hist = _train(X, y, {"objective": "binary:logistic"}, rounds=15)
    approx = _train(X, y, {"objective": "binary:logistic", "tree_method": "approx"}, rounds=15)
    # The first round's hessians are all equal (constant base margin): the same edges.
    assert np.array_equal(hist.trees[0].threshold, approx.trees[0].threshold)
    assert not _same_trees(hist, approx)
    for model in (hist, approx):
        accuracy = np.mean((model.predict(X) > 0.5) == y)
        assert accuracy > 0.9
    # Thresholds of later trees are not all hist edges: the edges moved.
    hist_edges = set(np.concatenate(Dataset(X, label=y, max_bin=MAX_BIN).bin_mapper.bin_edges_))
    internal = approx.trees[-1].feature >= 0
    assert not set(approx.trees[-1].threshold[internal]) <= hist_edges


@pytest.mark.parametrize(
    "params, weighted",
    [
        ({"objective": "binary:logistic", "tree_method": "approx"}, False),
        (
            {
                "objective": "reg:squarederror",
                "tree_method": "approx",
                "subsample": 0.7,
                "grow_policy": "lossguide",
                "max_leaves": 6,
                "max_depth": 0,
            },
            True,
        ),
        (
            {
                "objective": "binary:logistic",
                "tree_method": "approx",
                "data_sample_strategy": "goss",
                "top_rate": 0.3,
                "other_rate": 0.3,
            },
            False,
        ),
    ],
    ids=["logistic", "weighted_sampled_lossguide", "goss"],
)
def test_cpu_and_cuda_give_identical_approx_models(
    emulated_cuda, regression_data, binary_data, params, weighted
):
    X, y = binary_data if params["objective"] == "binary:logistic" else regression_data
    weight = np.random.default_rng(8).uniform(0.5, 2.0, size=len(y)) if weighted else None
    runs = train_on_both(
        {"max_depth": 4, "max_bin": MAX_BIN, **params},
        lambda: Dataset(X, label=y, weight=weight, max_bin=MAX_BIN),
        3,
    )
    assert_runs_match(runs)
    assert_predictions_match(runs["cpu"].model, runs["cuda"].model, X)


@pytest.mark.parametrize("seed", range(6))
def test_heavy_values_are_found_among_the_quantile_positions(seed):
    """core.bin_edges.heavy_runs looking at the quantile positions only (as approx's
    per-tree edges do) finds every value holding 1 / max_bin of the integer weight."""
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(MAX_BIN + 1, 400))
    weights = rng.integers(0, 50, size=n_distinct, dtype=np.int64)
    heavy = rng.choice(n_distinct, size=int(rng.integers(0, 6)), replace=False)
    weights[heavy] = rng.integers(1, 4000, size=len(heavy))
    if seed == 0:
        weights[[0, -1]] = 10**6  # the smallest and the largest value heavy
    if seed == 1:  # the largest value holds exactly 1 / MAX_BIN: no quantile position on it
        weights[-1] = 0
        weights[-2] += (MAX_BIN - 1) * 1000 - weights.sum() % ((MAX_BIN - 1) * 1000)
        weights[-1] = weights.sum() // (MAX_BIN - 1)
    run_totals = np.cumsum(weights)
    total = int(run_totals[-1])
    targets = np.arange(1, MAX_BIN, dtype=np.int64) * total
    positions = np.searchsorted(run_totals * MAX_BIN, targets, side="left")
    expected = heavy_runs(np, run_totals, total, MAX_BIN)
    found = heavy_runs(np, run_totals, total, MAX_BIN, candidates=positions)
    np.testing.assert_array_equal(np.unique(found), expected)
    assert np.all(np.diff(found) >= 0)
    if seed == 1:
        assert weights[-1] * MAX_BIN == total and expected[-1] == n_distinct - 1
