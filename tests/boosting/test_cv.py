"""Tests of gpuboost.boosting.cv: folds, per-round means and stds, early stopping."""

import numpy as np
import pytest

import gpuboost
from gpuboost import Dataset
from gpuboost.boosting.cv import make_folds
from gpuboost.core.reproducible_sum import reproducible_mean

PARAMS = {"device": "cpu", "max_depth": 3, "eval_metric": ["rmse", "mae"]}


def test_means_and_stds_are_those_of_the_folds_trained_alone(regression_data):
    X, y = regression_data
    dtrain = Dataset(X, label=y)
    result = gpuboost.cv(PARAMS, dtrain, num_boost_round=4, nfold=3, seed=7, as_pandas=False)
    assert list(result) == [
        "train-rmse-mean", "train-rmse-std", "test-rmse-mean", "test-rmse-std",
        "train-mae-mean", "train-mae-std", "test-mae-mean", "test-mae-std",
    ]  # fmt: skip
    assert all(len(values) == 4 for values in result.values())
    logs = []
    for train_rows, test_rows in make_folds(dtrain, 3, seed=7):
        log = {}
        gpuboost.train(
            PARAMS,
            dtrain.subset(train_rows),
            4,
            evals=[(dtrain.subset(train_rows), "train"), (dtrain.subset(test_rows), "test")],
            evals_result=log,
            verbose_eval=False,
        )
        logs.append(log)
    for set_name in ("train", "test"):
        for metric in ("rmse", "mae"):
            scores = np.array([log[set_name][metric] for log in logs])
            # Order-free sums (gpuboost.core.reproducible_sum): the folds' mean and std
            # within rounding of NumPy's, the same bits for any order of the folds.
            np.testing.assert_allclose(
                result[f"{set_name}-{metric}-mean"], np.mean(scores, axis=0), rtol=1e-15
            )
            np.testing.assert_allclose(
                result[f"{set_name}-{metric}-std"], np.std(scores, axis=0), rtol=1e-12
            )
            for round_index in range(scores.shape[1]):
                column = scores[::-1, round_index]
                assert result[f"{set_name}-{metric}-mean"][round_index] == float(
                    reproducible_mean(np, column)
                )


def test_folds_are_deterministic_partitions(regression_data):
    X, y = regression_data
    dtrain = Dataset(X, label=y)
    folds = make_folds(dtrain, 4, seed=3)
    tests = np.sort(np.concatenate([test for _, test in folds]))
    np.testing.assert_array_equal(tests, np.arange(len(y)))  # every row tested once
    for train_rows, test_rows in folds:
        assert len(np.intersect1d(train_rows, test_rows)) == 0
        assert len(train_rows) + len(test_rows) == len(y)
    again = make_folds(dtrain, 4, seed=3)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = make_folds(dtrain, 4, seed=4)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))
    first = gpuboost.cv(PARAMS, dtrain, 2, nfold=4, seed=3, as_pandas=False)
    assert first == gpuboost.cv(PARAMS, dtrain, 2, nfold=4, seed=3, as_pandas=False)


def test_stratified_folds_keep_the_class_proportions(binary_data):
    X, y = binary_data
    dtrain = Dataset(X, label=y)
    for _, test_rows in make_folds(dtrain, 5, stratified=True, seed=0):
        assert abs(y[test_rows].mean() - y.mean()) < 0.02
    result = gpuboost.cv(
        {"device": "cpu", "objective": "binary:logistic"}, dtrain, 3, stratified=True
    )
    assert list(result.columns) == [
        "train-logloss-mean", "train-logloss-std", "test-logloss-mean", "test-logloss-std"
    ]  # fmt: skip
    assert len(result) == 3


def test_ranking_folds_keep_queries_whole():
    rng = np.random.default_rng(0)
    group = rng.integers(3, 9, size=20)
    X = rng.normal(size=(int(group.sum()), 3))
    y = np.clip(np.round(X[:, 0] + 1), 0, 3)
    dtrain = Dataset(X, label=y, group=group)
    query = np.repeat(np.arange(20), group)
    for train_rows, test_rows in make_folds(dtrain, 4, seed=1):
        assert len(np.intersect1d(query[train_rows], query[test_rows])) == 0
    result = gpuboost.cv(
        {"device": "cpu", "objective": "rank:ndcg", "eval_metric": "ndcg@5"}, dtrain, 3, nfold=4
    )
    assert list(result.columns)[0] == "train-ndcg@5-mean" and len(result) == 3


def test_early_stopping_ends_at_the_best_round(regression_data):
    X, y = regression_data
    result = gpuboost.cv(
        {"device": "cpu", "learning_rate": 1.0, "max_depth": 6, "min_child_weight": 0.0},
        Dataset(X, label=y),
        200,
        nfold=3,
        early_stopping_rounds=3,
        as_pandas=False,
    )
    test_means = result["test-rmse-mean"]
    assert len(test_means) < 200 and int(np.argmin(test_means)) == len(test_means) - 1


def test_custom_metric_maximize_and_given_folds(regression_data):
    sklearn = pytest.importorskip("sklearn.model_selection")
    X, y = regression_data
    dtrain = Dataset(X, label=y)

    def r2(prediction, dataset):
        label = dataset.get_label()
        return "r2", 1 - np.sum((label - prediction) ** 2) / np.sum((label - label.mean()) ** 2)

    kfold = sklearn.KFold(3, shuffle=True, random_state=0)
    result = gpuboost.cv(
        {"device": "cpu", "learning_rate": 1.0, "max_depth": 6},
        dtrain,
        60,
        folds=kfold,
        custom_metric=r2,
        maximize=True,
        early_stopping_rounds=3,
        as_pandas=False,
    )
    scores = result["test-r2-mean"]
    assert int(np.argmax(scores)) == len(scores) - 1 > 1
    pairs = list(kfold.split(X, y))
    assert gpuboost.cv(PARAMS, dtrain, 2, folds=pairs, as_pandas=False) == gpuboost.cv(
        PARAMS, dtrain, 2, folds=kfold, as_pandas=False
    )


def test_bad_cv_inputs(regression_data):
    X, y = regression_data
    dtrain = Dataset(X, label=y)
    with pytest.raises(ValueError, match="nfold must be an integer >= 2"):
        gpuboost.cv(PARAMS, dtrain, 2, nfold=1)
    with pytest.raises(ValueError, match="class labels"):
        gpuboost.cv(PARAMS, dtrain, 2, stratified=True)
    with pytest.raises(ValueError, match="test indices"):
        gpuboost.cv(PARAMS, dtrain, 2, folds=[(np.arange(10), [])])
    ranked = Dataset(X[:40], label=np.ones(40), group=[10, 10, 10, 10])
    with pytest.raises(ValueError, match="not ranking"):
        gpuboost.cv({"objective": "rank:ndcg"}, ranked, 2, stratified=True)
    with pytest.raises(ValueError, match="query 0 has rows in both"):
        gpuboost.cv({"objective": "rank:ndcg"}, ranked, 2, folds=[(np.arange(5, 40), np.arange(5))])
    with pytest.raises(ValueError, match="no label"):
        gpuboost.cv(PARAMS, Dataset(X), 2)
