"""Tests of gpuboost.tree.splitters.exact: ranks, the exact split scan and partition
against their naive loops, tree_method='exact' against 'hist' (identical trees on few
distinct values), its optimality on continuous data, and CPU/CUDA parity (kernels under the
CPU emulation)."""

import json

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both

import gpuboost
from gpuboost import Dataset
from gpuboost.core.bin_edges import FLOAT64_MAX
from gpuboost.core.dtypes import GRAD_QUANT_MAX
from gpuboost.core.gain import SPLIT_RECORD_DTYPE, SplitParams
from gpuboost.tree.splitters.exact import (
    MISSING_RANK,
    FeatureRanks,
    find_best_splits_exact,
    find_best_splits_exact_naive,
    partition_exact,
    partition_exact_naive,
)


# ---- ranks --------------------------------------------------------------------------
def test_ranks_of_values_with_ties_missing_and_infinities():
    X = np.array([[3.0, np.inf], [-1.0, 2.0], [3.0, np.nan], [0.5, -np.inf], [np.nan, FLOAT64_MAX]])
    ranks = FeatureRanks(X)
    np.testing.assert_array_equal(ranks.ranks[:, 0], [2, 0, 2, 1, MISSING_RANK])
    # inf is clipped to the largest float, as binning does: it ties with FLOAT64_MAX.
    np.testing.assert_array_equal(ranks.ranks[:, 1], [2, 1, MISSING_RANK, 0, 2])
    np.testing.assert_array_equal(ranks.n_distinct, [3, 3])
    assert ranks.threshold(0, 0) == -0.25 and ranks.threshold(0, 1) == 1.75
    with pytest.raises(IndexError):
        ranks.threshold(0, 2)


def test_thresholds_equal_lossless_bin_edges():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(300, 3)) * 7.3 * 4) / 4  # about 100 distinct values
    X[:, 2] = rng.integers(0, 5, size=300) * 1e300  # midpoints near the float64 limit
    dataset = Dataset(X)
    ranks = FeatureRanks(X)
    for feature in range(3):
        assert ranks.n_distinct[feature] == dataset.bin_mapper.n_value_bins_[feature]
        edges = [ranks.threshold(feature, r) for r in range(ranks.n_distinct[feature] - 1)]
        np.testing.assert_array_equal(edges, dataset.bin_mapper.bin_edges_[feature])


def test_rows_of_weight_zero_change_no_threshold():
    """The distinct values are those of the rows of positive weight (as the bin edges
    are): weights give the thresholds of repeated rows, and every row, of weight 0 too,
    has the rank that sends it where its value does (``rank <= r`` iff ``x <= t_r``)."""
    rng = np.random.default_rng(2)
    X = np.round(rng.normal(size=(200, 3)), 2)
    X[rng.random(X.shape) < 0.1] = np.nan
    weight = rng.integers(0, 3, size=200).astype(np.float64)
    ranks = FeatureRanks(X, weight)
    repeated = FeatureRanks(np.repeat(X, weight.astype(int), axis=0))
    for feature in range(3):
        np.testing.assert_array_equal(
            ranks.distinct_values[feature], repeated.distinct_values[feature]
        )
        thresholds = np.array(
            [ranks.threshold(feature, r) for r in range(ranks.n_distinct[feature] - 1)]
        )
        present = ~np.isnan(X[:, feature])
        row_ranks = ranks.ranks[present, feature]
        for r, threshold in enumerate(thresholds):
            np.testing.assert_array_equal(row_ranks <= r, X[present, feature] <= threshold)
    unweighted_values = FeatureRanks(X).distinct_values
    assert any(len(a) > len(b) for a, b in zip(unweighted_values, ranks.distinct_values))


# ---- the split scan and the partition against their naive loops --------------------
def _random_problem(rng, n_rows, n_features, n_distinct):
    X = rng.integers(0, n_distinct, size=(n_rows, n_features)) * 0.5 - 3.0
    X[rng.random((n_rows, n_features)) < 0.15] = np.nan
    X[:, 0] = rng.normal(size=n_rows)  # all distinct
    gradients = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    hessians = rng.integers(0, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    return FeatureRanks(X), gradients, hessians


PARAMS = [
    SplitParams(),
    SplitParams(reg_lambda=0.0, min_child_weight=0.0),
    SplitParams(
        reg_lambda=3.0,
        reg_alpha=0.5,
        max_delta_step=0.3,
        min_child_weight=3.0,
        min_data_in_leaf=4,
        gamma=0.1,
    ),
]


@pytest.mark.parametrize("seed", range(12))
def test_split_scan_matches_naive(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_features = int(rng.integers(10, 150)), int(rng.integers(1, 5))
    ranks, gradients, hessians = _random_problem(rng, n_rows, n_features, int(rng.integers(1, 12)))
    sample_indices = rng.permutation(n_rows).astype(np.int32)[
        : int(rng.integers(n_rows // 2, n_rows + 1))
    ]
    cuts = np.sort(rng.integers(0, len(sample_indices) + 1, size=2 * int(rng.integers(1, 5))))
    begins, ends = cuts[0::2], cuts[1::2]
    begins, ends = begins[ends > begins], ends[ends > begins]  # nodes are never empty
    if len(begins) == 0:
        begins, ends = np.array([0]), np.array([len(sample_indices)])
    mask = rng.random((len(begins), n_features)) < 0.7 if seed % 2 else None
    params = PARAMS[seed % len(PARAMS)]
    scale_g, scale_h = float(rng.uniform(1e3, 1e6)), float(rng.uniform(1e3, 1e6))
    fast = find_best_splits_exact(
        np,
        ranks.ranks,
        ranks.n_distinct,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        scale_g,
        scale_h,
        params,
        mask,
    )
    naive = find_best_splits_exact_naive(
        ranks, gradients, hessians, sample_indices, begins, ends, scale_g, scale_h, params, mask
    )
    assert fast.dtype == SPLIT_RECORD_DTYPE
    for name in SPLIT_RECORD_DTYPE.names:
        np.testing.assert_array_equal(fast[name], naive[name], err_msg=name)


def test_split_scan_candidates_around_the_nodes_values():
    """Missing rows alone left (r = 0, below the node's values), every non-missing row left
    (r = rank of the node's largest value) and thresholds between the node's values are
    candidates, as in 'hist' with one bin per distinct value."""
    X = np.array([[0.0], [1.0], [2.0], [3.0], [np.nan], [np.nan]])
    ranks = FeatureRanks(X)
    params = SplitParams(reg_lambda=0.0, min_child_weight=0.0)
    hessians = np.ones(6, dtype=np.int32)
    gradients = np.array([5, 5, 5, 0, -5, -5], dtype=np.int32)

    def best(node_rows, grads=gradients):
        node_rows = np.asarray(node_rows, dtype=np.int32)
        return find_best_splits_exact(
            np,
            ranks.ranks,
            ranks.n_distinct,
            grads,
            hessians,
            node_rows,
            [0],
            [len(node_rows)],
            1.0,
            1.0,
            params,
        )[0]

    # Values 1, 2 and two missing: "missing alone left" (r = 0) ties with "values left,
    # missing right" (r = 2) and comes first (lower threshold).
    record = best([1, 2, 4, 5])
    assert (record["feature"], record["bin"], record["default_left"]) == (0, 0, True)
    assert (record["left_count"], record["left_sum_gradients"], record["gain"]) == (2, -10, 100)
    # Values 0, 2 and two missing: no threshold below 0.0, so r = 2, missing right.
    record = best([0, 2, 4, 5])
    assert (record["bin"], record["default_left"], record["left_count"]) == (2, False, 2)
    # Between the node's values 1.0 and 2.0: r = 1 (t_1 = 1.5); no missing values, so
    # they would go to the larger child (ties: left). Equal gradients: no split.
    record = best([1, 2], np.array([0, 7, -3, 0, 0, 0], dtype=np.int32))
    assert (record["bin"], record["left_count"], record["default_left"]) == (1, 1, True)
    assert best([1, 2], np.zeros(6, dtype=np.int32))["feature"] == -1


@pytest.mark.parametrize("seed", range(5))
def test_partition_matches_naive(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_features = int(rng.integers(1, 200)), 3
    ranks, _, _ = _random_problem(rng, n_rows, n_features, 6)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    cuts = np.sort(rng.integers(0, n_rows + 1, size=6))
    begins, ends = cuts[0::2], cuts[1::2]
    order = rng.permutation(3)
    begins, ends = begins[order], ends[order]
    features = rng.integers(0, n_features, size=3)
    thresholds = rng.integers(0, 6, size=3)
    default_left = rng.random(3) < 0.5
    fast, naive = sample_indices.copy(), sample_indices.copy()
    n_left = partition_exact(
        np, ranks.ranks, fast, begins, ends, features, thresholds, default_left
    )
    n_left_naive = partition_exact_naive(
        ranks.ranks, naive, begins, ends, features, thresholds, default_left
    )
    np.testing.assert_array_equal(fast, naive)
    np.testing.assert_array_equal(n_left, n_left_naive)


# ---- training -----------------------------------------------------------------------
def few_distinct_values(n_rows, seed):
    """Features with 2 to 60 distinct values (fewer than max_bin), NaN in two of them."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.integers(0, 20, n_rows) * 0.5,
            np.round(rng.normal(size=n_rows), 1),
            rng.integers(0, 2, n_rows).astype(float),
            rng.integers(0, 60, n_rows) * -1.5,
            np.full(n_rows, 4.0),
        ]
    )
    X[rng.random(n_rows) < 0.1, 1] = np.nan
    X[rng.random(n_rows) < 0.05, 3] = np.nan
    y = (
        X[:, 0]
        + 2.0 * np.nan_to_num(X[:, 1], nan=1.0)
        + (X[:, 3] < -40)
        + 0.2 * rng.normal(size=n_rows)
    )
    return X, y


def _document(booster):
    """The model JSON without tree_method (the one field that differs)."""
    document = json.loads(booster.save_raw())
    document["learner"]["params"].pop("tree_method")
    return json.dumps(document, sort_keys=True)


@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 5},
        {"grow_policy": "lossguide", "max_leaves": 11, "max_depth": 0, "min_data_in_leaf": 3},
        {
            "max_depth": 4,
            "subsample": 0.7,
            "colsample_bynode": 0.6,
            "colsample_bytree": 0.8,
            "reg_alpha": 0.5,
            "max_delta_step": 0.7,
            "gamma": 0.05,
            "seed": 3,
        },
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
    ],
    ids=["depthwise", "lossguide", "sampled_regularized", "multiclass"],
)
def test_exact_equals_hist_with_fewer_distinct_values_than_bins(params):
    X, y = few_distinct_values(400, seed=1)
    if params.get("objective", "").startswith("multi"):
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(float)
    models = {
        method: gpuboost.train(
            dict(params, device="cpu", tree_method=method), Dataset(X, label=y), num_boost_round=4
        )
        for method in ("hist", "exact")
    }
    assert _document(models["exact"]) == _document(models["hist"])
    assert sum(tree.n_leaves for tree in models["exact"].trees) > 2 * len(models["exact"].trees)


def test_exact_finds_the_split_hist_misses():
    """A step at a value no quantile edge of 8 bins is near: 'exact' puts its root split
    right there, 'hist' cannot."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.0, 1.0, size=600)
    step = 0.3123
    y = np.where(x > step, 1.0, 0.0)
    X = x.reshape(-1, 1)
    models = {
        method: gpuboost.train(
            {
                "device": "cpu",
                "tree_method": method,
                "max_bin": 8,
                "max_depth": 1,
                "learning_rate": 1.0,
                "reg_lambda": 0.0,
            },
            Dataset(X, label=y, max_bin=8),
            num_boost_round=1,
        )
        for method in ("hist", "exact")
    }
    below, above = x[x <= step].max(), x[x > step].min()
    exact_tree, hist_tree = models["exact"].trees[0], models["hist"].trees[0]
    assert below < exact_tree.threshold[0] < above
    assert not below < hist_tree.threshold[0] < above
    assert exact_tree.gain[0] > hist_tree.gain[0]
    # Exact up to the quantization of the gradients (half a quantum of the largest of
    # about 2**29 per row).
    np.testing.assert_allclose(models["exact"].predict(X), y, atol=1e-8)
    # The tree's threshold bin is the bin of its threshold under the Dataset's 8 bins.
    edges = Dataset(X, max_bin=8).bin_mapper.bin_edges_[0]
    assert exact_tree.threshold_bin[0] == np.searchsorted(edges, exact_tree.threshold[0])


def test_exact_gains_are_at_least_those_of_hist_on_continuous_data():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(500, 4))
    X[rng.random(500) < 0.1, 2] = np.nan
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + np.nan_to_num(X[:, 2]) + 0.1 * rng.normal(size=500)
    models = {
        method: gpuboost.train(
            {"device": "cpu", "tree_method": method, "max_bin": 16, "max_depth": 1},
            Dataset(X, label=y, max_bin=16),
            num_boost_round=1,
        )
        for method in ("hist", "exact")
    }
    assert models["exact"].trees[0].gain[0] >= models["hist"].trees[0].gain[0]
    deep = gpuboost.train(
        {"device": "cpu", "tree_method": "exact", "max_depth": 6},
        Dataset(X, label=y),
        num_boost_round=20,
    )
    assert float(np.sqrt(np.mean((deep.predict(X) - y) ** 2))) < 0.3 * float(np.std(y))


def test_exact_model_round_trips_with_many_distinct_values(tmp_path):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(400, 2))  # 400 distinct values: ranks beyond 255
    y = X[:, 0] * 3 + X[:, 1]
    model = gpuboost.train(
        {"device": "cpu", "tree_method": "exact", "max_depth": 8},
        Dataset(X, label=y),
        num_boost_round=3,
    )
    path = tmp_path / "exact.json"
    model.save_model(path)
    loaded = gpuboost.Booster.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    internal = model.trees[0].feature >= 0
    assert model.trees[0].threshold_bin[internal].max() <= 255


# ---- both backends (CUDA kernels under the CPU emulation) ---------------------------
@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 4},
        {
            "grow_policy": "lossguide",
            "max_leaves": 7,
            "max_depth": 0,
            "subsample": 0.8,
            "colsample_bynode": 0.7,
            "reg_alpha": 0.3,
        },
    ],
    ids=["depthwise", "lossguide_sampled"],
)
def test_cpu_and_cuda_train_the_same_exact_model(emulated_cuda, params):
    X, y = few_distinct_values(200, seed=2)
    X[:, 4] = np.random.default_rng(3).normal(size=200)  # 200 distinct values
    assert_runs_match(
        train_on_both(dict(params, tree_method="exact"), lambda: Dataset(X, label=y), 3)
    )
