"""Tests of gpuboost.boosting.train: the boosting loop end to end on the NumPy backend."""

import json

import numpy as np
import pytest

import gpuboost
from gpuboost import Dataset, train
from gpuboost.backends import DeviceUnavailableError
from gpuboost.boosting.train import ROW_STREAMS_PER_ROUND
from gpuboost.core.quantile import weighted_quantile
from gpuboost.core.random import row_uniforms
from gpuboost.data.dataset import label_arguments
from gpuboost.objectives import OBJECTIVES

CPU = {"device": "cpu"}


def fit(params, dataset, rounds, **kwargs):
    kwargs.setdefault("verbose_eval", False)
    return train({**CPU, **params}, dataset, num_boost_round=rounds, **kwargs)


def split_structure(tree):
    return (
        tree.feature.tolist(),
        tree.threshold_bin.tolist(),
        tree.threshold.tolist(),
        tree.default_left.tolist(),
        tree.left_child.tolist(),
        tree.right_child.tolist(),
    )


def rmse(y, prediction):
    return float(np.sqrt(np.mean((y - prediction) ** 2)))


@pytest.fixture
def regression_sets(regression_data):
    X, y = regression_data
    train_set = Dataset(X[:300], label=y[:300])
    valid_set = Dataset(X[300:], label=y[300:], reference=train_set)
    return train_set, valid_set


# ---------------------------------------------------------------------------
# Determinism and learning
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"subsample": 0.7, "colsample_bytree": 0.8, "colsample_bynode": 0.6, "seed": 3},
        {"grow_policy": "lossguide", "max_leaves": 12, "max_depth": 0, "colsample_bylevel": 0.5},
    ],
)
def test_same_params_give_identical_bytes(regression_data, params):
    X, y = regression_data
    first = fit(params, Dataset(X, label=y), 8)
    second = fit(params, Dataset(X, label=y), 8)
    assert first.save_raw() == second.save_raw()


def test_seed_changes_a_sampled_model(regression_data):
    X, y = regression_data
    params = {"subsample": 0.5}
    assert (
        fit({**params, "seed": 1}, Dataset(X, label=y), 3).save_raw()
        != fit({**params, "seed": 2}, Dataset(X, label=y), 3).save_raw()
    )


def test_regression_learns(regression_sets):
    train_set, valid_set = regression_sets
    result = {}
    booster = fit(
        {"max_depth": 3},
        train_set,
        30,
        evals=[(train_set, "train"), (valid_set, "valid")],
        evals_result=result,
    )
    for name in ("train", "valid"):
        scores = result[name]["rmse"]
        assert len(scores) == 30
        assert scores[-1] < 0.4 * scores[0]
    assert np.all(np.diff(result["train"]["rmse"]) <= 1e-12)  # squared error never gets worse
    assert booster.num_boosted_rounds() == 30


def test_binary_learns(binary_data):
    X, y = binary_data
    dataset = Dataset(X, label=y)
    result = {}
    booster = fit(
        {"objective": "binary:logistic", "eval_metric": ["logloss", "error"]},
        dataset,
        20,
        evals=[(dataset, "train")],
        evals_result=result,
    )
    assert result["train"]["logloss"][-1] < 0.5 * result["train"]["logloss"][0]
    assert result["train"]["error"][-1] < 0.05
    accuracy = np.mean((booster.predict(X) > 0.5) == y)
    assert accuracy == pytest.approx(1 - result["train"]["error"][-1])


def test_multiclass_learns(multiclass_data):
    X, y = multiclass_data
    dataset = Dataset(X, label=y)
    result = {}
    booster = fit(
        {"objective": "multi:softprob", "num_class": 3, "eval_metric": ["mlogloss", "merror"]},
        dataset,
        15,
        evals=[(dataset, "train")],
        evals_result=result,
    )
    assert result["train"]["mlogloss"][-1] < 0.5 * result["train"]["mlogloss"][0]
    assert len(booster.trees) == 45
    probability = booster.predict(X)
    assert np.mean(np.argmax(probability, axis=1) == y) > 0.9


def test_evals_result_matches_the_predictions(regression_sets):
    train_set, valid_set = regression_sets
    result = {"stale": {}}
    booster = fit(
        {"max_depth": 2},
        train_set,
        5,
        evals=[(train_set, "train"), (valid_set, "valid")],
        evals_result=result,
    )
    assert list(result) == ["train", "valid"]
    for name, dataset in (("train", train_set), ("valid", valid_set)):
        assert list(result[name]) == ["rmse"]
        for round_index, score in enumerate(result[name]["rmse"]):
            prediction = booster.predict(dataset.data, iteration_range=(0, round_index + 1))
            assert score == pytest.approx(rmse(dataset.label, prediction), rel=1e-12)


def test_zero_rounds_give_the_base_margin(regression_data):
    X, y = regression_data
    booster = fit({}, Dataset(X, label=y), 0)
    assert booster.num_boosted_rounds() == 0
    np.testing.assert_allclose(booster.predict(X), np.full(len(y), y.mean()), rtol=1e-12)


def test_multiclass_trees_add_to_their_own_output(multiclass_data):
    X, y = multiclass_data
    booster = fit(
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 2}, Dataset(X, label=y), 2
    )
    margin = booster.predict(X, output_margin=True)
    leaves = booster.predict(X, pred_leaf=True)
    expected = np.tile(booster.base_margin, (len(X), 1))
    for index, tree in enumerate(booster.trees):
        expected[:, index % 3] += tree.value[leaves[:, index]]
    np.testing.assert_array_equal(margin, expected)


def test_subsample_grows_each_tree_on_the_hashed_rows(regression_data):
    X, y = regression_data
    booster = fit({"subsample": 0.6, "seed": 11}, Dataset(X, label=y), 3)
    for round_index, tree in enumerate(booster.trees):
        kept = row_uniforms(np, 11, round_index * ROW_STREAMS_PER_ROUND, len(y)) < 0.6
        assert tree.count[0] == kept.sum() < len(y)


# ---------------------------------------------------------------------------
# Weights, base scores and margins
# ---------------------------------------------------------------------------


def test_weight_two_equals_duplicated_rows(regression_data):
    X, y = regression_data
    X, y = X[:200], y[:200]  # fewer distinct values than bins: identical bin edges
    # min_data_in_leaf counts rows, which duplicating doubles and weights do not
    # The split penalty takes weights as relative (docs/DESIGN.md, "Split penalty"):
    # weight 2 is not two copies there; without it, it is.
    params = {"max_depth": 4, "base_score": 0.5, "min_data_in_leaf": 1, "split_penalty": 0}
    weighted = fit(params, Dataset(X, label=y, weight=np.full(200, 2.0)), 5)
    duplicated = fit(params, Dataset(np.vstack([X, X]), label=np.concatenate([y, y])), 5)
    for a, b in zip(weighted.trees, duplicated.trees):
        assert split_structure(a) == split_structure(b)
        np.testing.assert_array_equal(a.value, b.value)
        np.testing.assert_array_equal(a.cover, b.cover)
        np.testing.assert_array_equal(a.gain, b.gain)
        np.testing.assert_array_equal(2 * a.count, b.count)


def test_integer_weights_approximate_duplicated_rows(regression_data):
    X, y = regression_data
    X, y = X[:200], y[:200]
    weight = np.random.default_rng(4).integers(1, 4, size=200).astype(np.float64)
    repeat = weight.astype(int)
    # rows count, weights do not; the split penalty takes weights as relative
    params = {"max_depth": 3, "min_data_in_leaf": 1, "split_penalty": 0}
    weighted = fit(params, Dataset(X, label=y, weight=weight), 5)
    duplicated = fit(params, Dataset(np.repeat(X, repeat, axis=0), label=np.repeat(y, repeat)), 5)
    np.testing.assert_allclose(weighted.base_margin, duplicated.base_margin, rtol=1e-12)
    for a, b in zip(weighted.trees, duplicated.trees):
        assert split_structure(a) == split_structure(b)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(a.cover, b.cover, rtol=1e-6)


def test_weights_change_the_model(regression_data):
    X, y = regression_data
    weight = np.where(X[:, 0] > 0, 10.0, 0.1)
    assert (
        fit({}, Dataset(X, label=y, weight=weight), 3).save_raw()
        != fit({}, Dataset(X, label=y), 3).save_raw()
    )


def test_base_score(regression_data, binary_data):
    X, y = regression_data
    assert fit({}, Dataset(X, label=y), 1).base_margin[0] == pytest.approx(y.mean(), rel=1e-12)
    assert fit({"base_score": 3.0}, Dataset(X, label=y), 1).base_margin[0] == 3.0
    booster = fit(
        {"base_score": 0.8, "objective": "binary:logistic"},
        Dataset(binary_data[0], label=binary_data[1]),
        0,
    )
    assert booster.base_margin[0] == pytest.approx(np.log(0.8 / 0.2), rel=1e-12)
    np.testing.assert_allclose(booster.predict(binary_data[0]), 0.8, rtol=1e-12)


def test_constant_base_margin_equals_base_score(regression_data):
    X, y = regression_data
    from_margin = fit({"max_depth": 3}, Dataset(X, label=y, base_margin=np.full(len(y), 0.7)), 4)
    from_score = fit({"max_depth": 3, "base_score": 0.7}, Dataset(X, label=y), 4)
    assert from_margin.trees == from_score.trees


def test_dataset_base_margin_is_the_starting_point(regression_data):
    X, y = regression_data
    # Margins that already equal the labels: zero gradients, trees of one zero leaf.
    booster = fit({}, Dataset(X, label=y, base_margin=y), 3)
    assert all(tree.n_nodes == 1 and tree.value[0] == 0.0 for tree in booster.trees)
    np.testing.assert_array_equal(booster.predict(Dataset(X, base_margin=y)), y)


def test_base_margin_of_an_eval_set_is_used(regression_sets):
    train_set, valid_set = regression_sets
    offset = np.full(valid_set.n_rows, 5.0)
    shifted = Dataset(
        valid_set.data, label=valid_set.label + 5.0, base_margin=offset, reference=train_set
    )
    result = {}
    fit(
        {"base_score": 0.0},
        train_set,
        3,
        evals=[(valid_set, "plain"), (shifted, "shifted")],
        evals_result=result,
    )
    np.testing.assert_allclose(result["shifted"]["rmse"], result["plain"]["rmse"], rtol=1e-9)


def test_wrong_base_margin_size_raises(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="base_margin"):
        fit(
            {"objective": "multi:softprob", "num_class": 3},
            Dataset(X, label=(y > 0).astype(float), base_margin=np.zeros(len(y))),
            1,
        )


# ---------------------------------------------------------------------------
# Refit of leaf values (absolute error, quantile)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "objective, params, alpha",
    [
        ("reg:absoluteerror", {}, 0.5),
        ("reg:quantile", {"quantile_alpha": 0.2}, 0.2),
        ("reg:quantile", {"quantile_alpha": 0.9}, 0.9),
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_refit_leaf_values_are_weighted_quantiles_of_residuals(
    regression_data, objective, params, alpha, weighted
):
    X, y = regression_data
    weight = np.random.default_rng(8).uniform(0.5, 2.0, size=len(y)) if weighted else None
    booster = fit(
        {"objective": objective, "max_depth": 3, "learning_rate": 0.5, **params},
        Dataset(X, label=y, weight=weight),
        3,
    )
    leaves = booster.predict(X, pred_leaf=True)
    for round_index, tree in enumerate(booster.trees):
        margin = (
            booster.base_margin[0]
            if round_index == 0
            else booster.predict(X, output_margin=True, iteration_range=(0, round_index))
        )
        residuals = y - margin
        for leaf in np.flatnonzero(tree.is_leaf):
            rows = leaves[:, round_index] == leaf
            quantile = weighted_quantile(
                residuals[rows], None if weight is None else weight[rows], alpha
            )
            assert tree.value[leaf] == 0.5 * quantile


# ---------------------------------------------------------------------------
# Objectives
# ---------------------------------------------------------------------------


def labels_for(objective, X):
    signal = X[:, 0] + 0.5 * X[:, 2]
    if objective.startswith("binary:"):
        return (signal > 0).astype(np.float64), {}
    if objective.startswith("multi:"):
        return np.digitize(signal, [-0.5, 0.5]).astype(np.float64), {"num_class": 3}
    if objective in ("count:poisson", "reg:tweedie"):
        return np.floor(np.exp(signal)), {}
    if objective == "reg:gamma":
        return np.exp(signal), {}
    if objective == "survival:aft":  # observed and right-censored times
        time = np.exp(signal)
        return np.column_stack([time, np.where(X[:, 1] > 0.5, np.inf, time)]), {}
    return signal, {}


# Ranking objectives need queries and improve a higher-is-better metric: tests/test_ranking.py.
@pytest.mark.parametrize("objective", [name for name in OBJECTIVES if not name.startswith("rank:")])
def test_every_objective_trains_and_improves(regression_data, objective):
    X, _ = regression_data
    y, extra = labels_for(objective, X)
    dataset = Dataset(X, **label_arguments(y))
    result = {}
    booster = fit(
        {"objective": objective, "max_depth": 3, **extra},
        dataset,
        8,
        evals=[(dataset, "train")],
        evals_result=result,
    )
    (scores,) = result["train"].values()
    assert scores[-1] < scores[0]
    prediction = booster.predict(X)
    assert np.isfinite(prediction).all()
    assert booster.params["objective"] == objective


# ---------------------------------------------------------------------------
# Early stopping, printing, custom objective and metric
# ---------------------------------------------------------------------------


def test_early_stopping(regression_sets):
    train_set, valid_set = regression_sets
    noisy_valid = Dataset(
        valid_set.data,
        label=valid_set.label + np.random.default_rng(5).normal(size=valid_set.n_rows) * 2,
        reference=train_set,
    )
    result = {}
    booster = fit(
        {"learning_rate": 1.0, "max_depth": 6, "min_child_weight": 0.0},
        train_set,
        200,
        evals=[(train_set, "train"), (noisy_valid, "valid")],
        early_stopping_rounds=3,
        evals_result=result,
    )
    scores = result["valid"]["rmse"]
    best = booster.best_iteration
    assert booster.num_boosted_rounds() == len(scores) == best + 4 < 200
    assert booster.best_score == scores[best] == min(scores)
    assert min(scores[best + 1 :]) >= scores[best]
    X = noisy_valid.data
    np.testing.assert_array_equal(
        booster.predict(X), booster.predict(X, iteration_range=(0, best + 1))
    )


def test_early_stopping_maximizes_auc(binary_data):
    X, y = binary_data
    train_set = Dataset(X[:250], label=y[:250])
    valid_set = Dataset(X[250:], label=1 - y[250:], reference=train_set)  # gets worse
    result = {}
    booster = fit(
        {"objective": "binary:logistic", "eval_metric": ["logloss", "auc"]},
        train_set,
        50,
        evals=[(valid_set, "valid")],
        early_stopping_rounds=2,
        evals_result=result,
    )
    auc = result["valid"]["auc"]
    assert booster.best_score == max(auc) == auc[booster.best_iteration]
    assert len(auc) == booster.best_iteration + 3


def test_early_stopping_needs_an_eval_set(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="evaluation set"):
        fit({}, Dataset(X, label=y), 5, early_stopping_rounds=2)


def test_verbose_eval_prints_xgboost_style_lines(regression_sets, capsys):
    train_set, valid_set = regression_sets
    result = {}
    fit(
        {},
        train_set,
        3,
        evals=[(train_set, "train"), (valid_set, "valid")],
        verbose_eval=True,
        evals_result=result,
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for epoch, line in enumerate(lines):
        assert line == (
            f"[{epoch}]\ttrain-rmse:{result['train']['rmse'][epoch]:.5f}"
            f"\tvalid-rmse:{result['valid']['rmse'][epoch]:.5f}"
        )


def test_verbose_eval_period_and_silence(regression_sets, capsys):
    train_set, _ = regression_sets
    fit({}, train_set, 6, evals=[(train_set, "train")], verbose_eval=4)
    printed = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert printed == ["[0]", "[4]", "[5]"]
    fit({}, train_set, 3, evals=[(train_set, "train")], verbose_eval=False)
    fit({}, train_set, 3)  # no eval sets: nothing to print
    assert capsys.readouterr().out == ""


def test_custom_objective_equals_the_built_in_squared_error(regression_data):
    X, y = regression_data
    seen_datasets = []

    def squared_error(margin, dataset):
        seen_datasets.append(dataset)
        return margin - dataset.get_label(), np.ones_like(margin)

    # a custom objective has no split penalty (docs/DESIGN.md, "Split penalty")
    params = {"max_depth": 4, "base_score": 0.0, "subsample": 0.8, "split_penalty": 0}
    dataset = Dataset(X, label=y)
    custom = fit(params, dataset, 5, obj=squared_error)
    built_in = fit(params, Dataset(X, label=y), 5)
    assert custom.trees == built_in.trees
    assert len(seen_datasets) == 5 and all(d is dataset for d in seen_datasets)
    np.testing.assert_array_equal(custom.predict(X), built_in.predict(X))
    via_params = fit({**params, "objective": squared_error}, dataset, 5)
    assert via_params.trees == built_in.trees


def test_custom_objective_with_several_outputs(multiclass_data):
    X, y = multiclass_data
    n_classes = 3

    def softmax_loss(margin, dataset):
        shifted = np.exp(margin - margin.max(axis=1, keepdims=True))
        probability = shifted / shifted.sum(axis=1, keepdims=True)
        onehot = np.eye(n_classes)[dataset.get_label().astype(int)]
        return probability - onehot, np.maximum(2 * probability * (1 - probability), 1e-16)

    booster = fit(
        {"num_class": n_classes, "max_depth": 3}, Dataset(X, label=y), 5, obj=softmax_loss
    )
    assert booster.n_outputs == 3 and len(booster.trees) == 15
    margin = booster.predict(X, output_margin=True)
    assert np.mean(np.argmax(margin, axis=1) == y) > 0.85


def test_custom_metric(regression_sets):
    train_set, valid_set = regression_sets
    calls = []

    def mean_absolute_error(prediction, dataset):
        calls.append(dataset)
        assert isinstance(prediction, np.ndarray)
        return "my-mae", float(np.mean(np.abs(prediction - dataset.get_label())))

    result = {}
    fit(
        {"eval_metric": ["rmse", "mae"]},
        train_set,
        4,
        evals=[(train_set, "train"), (valid_set, "valid")],
        custom_metric=mean_absolute_error,
        evals_result=result,
    )
    for name in ("train", "valid"):
        assert list(result[name]) == ["rmse", "mae", "my-mae"]
        np.testing.assert_allclose(result[name]["my-mae"], result[name]["mae"], rtol=1e-12)
    assert len(calls) == 8


def test_custom_metric_drives_early_stopping(regression_sets):
    train_set, valid_set = regression_sets

    def rounds_metric(prediction, dataset):
        rounds_metric.calls += 1
        return "stalls", 1.0 if rounds_metric.calls > 2 else 2.0 - rounds_metric.calls

    rounds_metric.calls = 0
    booster = fit(
        {},
        train_set,
        50,
        evals=[(valid_set, "valid")],
        custom_metric=rounds_metric,
        early_stopping_rounds=2,
    )
    assert booster.best_iteration == 1 and booster.num_boosted_rounds() == 4


def test_early_stopping_maximizes_a_custom_metric_when_told(regression_sets):
    train_set, valid_set = regression_sets

    def r2(prediction, dataset):  # higher is better
        label = dataset.get_label()
        return "r2", 1.0 - np.sum((label - prediction) ** 2) / np.sum((label - label.mean()) ** 2)

    kwargs = {"evals": [(valid_set, "valid")], "custom_metric": r2, "early_stopping_rounds": 3}
    history = {}
    maximized = fit(
        {"learning_rate": 0.3}, train_set, 40, evals_result=history, maximize=True, **kwargs
    )
    scores = history["valid"]["r2"]
    assert maximized.best_iteration == int(np.argmax(scores)) > 5
    assert maximized.best_score == max(scores)
    # Told nothing, a custom metric is minimized (documented): round 0 is kept.
    assert fit({"learning_rate": 0.3}, train_set, 40, **kwargs).best_iteration == 0
    # maximize=False turns a built-in metric that is maximized around.
    auc_set = Dataset(valid_set.data, label=(valid_set.label > 0).astype(float))
    params = {"objective": "binary:logistic", "eval_metric": "auc"}
    binary_train = Dataset(train_set.data, label=(train_set.label > 0).astype(float))
    assert (
        fit(
            params,
            binary_train,
            20,
            evals=[(auc_set, "v")],
            early_stopping_rounds=2,
            maximize=False,
        ).best_iteration
        == 0
    )


# ---------------------------------------------------------------------------
# Continued training
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"subsample": 0.7, "colsample_bytree": 0.7, "colsample_bynode": 0.6, "seed": 5},
        {"grow_policy": "lossguide", "max_leaves": 8, "subsample": 0.8},
    ],
)
def test_continued_training_equals_uninterrupted(regression_data, tmp_path, params):
    X, y = regression_data
    uninterrupted = fit(params, Dataset(X, label=y), 20)
    first = fit(params, Dataset(X, label=y), 10)
    path = tmp_path / "first.json"
    first.save_model(path)
    continued = fit(params, Dataset(X, label=y), 10, init_model=gpuboost.Booster.load_model(path))
    assert continued.save_raw() == uninterrupted.save_raw()
    from_path = fit(params, Dataset(X, label=y), 10, init_model=str(path))
    assert from_path.save_raw() == uninterrupted.save_raw()
    assert first.num_boosted_rounds() == 10  # the init model is not modified


def test_continued_multiclass_training_equals_uninterrupted(multiclass_data):
    X, y = multiclass_data
    params = {
        "objective": "multi:softprob",
        "num_class": 3,
        "max_depth": 3,
        "subsample": 0.8,
        "colsample_bylevel": 0.5,
    }
    uninterrupted = fit(params, Dataset(X, label=y), 6)
    first = fit(params, Dataset(X, label=y), 3)
    continued = fit(params, Dataset(X, label=y), 3, init_model=first.copy())
    assert continued.save_raw() == uninterrupted.save_raw()


def test_continued_training_evaluates_from_the_init_model(regression_sets):
    train_set, valid_set = regression_sets
    evals = [(train_set, "train"), (valid_set, "valid")]
    whole = {}
    fit({}, train_set, 6, evals=evals, evals_result=whole)
    first = fit({}, train_set, 3)
    second = {}
    fit({}, train_set, 3, evals=evals, evals_result=second, init_model=first)
    for name in ("train", "valid"):
        np.testing.assert_allclose(second[name]["rmse"], whole[name]["rmse"][3:], rtol=1e-12)


def test_continuing_an_early_stopped_model_uses_the_new_rounds(regression_sets):
    train_set, valid_set = regression_sets
    stopped = fit(
        {"learning_rate": 1.0, "max_depth": 6, "min_child_weight": 0.0},
        train_set,
        100,
        evals=[(valid_set, "valid")],
        early_stopping_rounds=2,
    )
    assert stopped.best_iteration is not None
    continued = fit({}, train_set, 3, init_model=stopped)
    assert continued.num_boosted_rounds() == stopped.num_boosted_rounds() + 3
    assert continued.best_iteration is None and continued.best_score is None
    X = valid_set.data
    np.testing.assert_array_equal(
        continued.predict(X), continued.predict(X, iteration_range=(0, len(continued)))
    )
    assert stopped.best_iteration is not None  # the init model keeps its own


def test_eval_sets_and_init_model_match_columns_by_name(binary_data):
    pd = pytest.importorskip("pandas")
    X, y = binary_data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    order = ["c", "e", "a", "d", "b"]
    params = {"objective": "binary:logistic"}
    dtrain = Dataset(frame[:300], label=y[:300])
    logs = []
    for valid in (frame[300:], frame[300:][order]):
        evals_result = {}
        fit(
            params,
            dtrain,
            4,
            evals=[(Dataset(valid, label=y[300:]), "v")],
            evals_result=evals_result,
        )
        logs.append(evals_result)
    assert logs[0] == logs[1]
    # Continuing on a Dataset whose columns are permuted: the same model as one run.
    first = fit(params, dtrain, 2)
    continued = fit(params, Dataset(frame[:300][order], label=y[:300]), 2, init_model=first)
    assert continued.feature_names == order
    whole = fit(params, dtrain, 4)
    np.testing.assert_array_equal(continued.predict(frame), whole.predict(frame))
    with pytest.raises(ValueError, match=r"evaluation set 'v'.*missing \['a'\]"):
        renamed = Dataset(frame[300:].rename(columns={"a": "z"}), label=y[300:])
        fit(params, dtrain, 1, evals=[(renamed, "v")])
    with pytest.raises(ValueError, match=r"dtrain.*not in the model \['z'\]"):
        fit(
            params,
            Dataset(frame[:300].rename(columns={"a": "z"}), label=y[:300]),
            1,
            init_model=first,
        )


def test_refit_objective_with_an_empty_row_sample(regression_data):
    X, y = regression_data
    booster = fit(
        {"objective": "reg:quantile", "subsample": 0.001}, Dataset(X[:100], label=y[:100]), 3
    )
    assert booster.num_boosted_rounds() == 3


def test_init_model_must_match(regression_data, multiclass_data):
    X, y = regression_data
    first = fit({}, Dataset(X, label=y), 2)
    with pytest.raises(ValueError, match="features"):
        fit({}, Dataset(X[:, :4], label=y), 2, init_model=first)
    Xm, ym = multiclass_data
    with pytest.raises(ValueError, match="outputs"):
        fit(
            {"objective": "multi:softprob", "num_class": 3},
            Dataset(Xm[:, :4].copy(), label=ym),
            2,
            init_model=fit({}, Dataset(Xm, label=ym), 1),
        )


def test_max_bin_parameter_bins_a_dataset_not_binned_yet(regression_data):
    X, y = regression_data
    small = fit({"max_bin": 4}, Dataset(X, label=y), 3)
    assert small.params["max_bin"] == 4
    assert small.save_raw() == fit({"max_bin": 4}, Dataset(X, label=y, max_bin=4), 3).save_raw()
    for tree in small.trees:
        assert tree.threshold_bin.max() <= 2  # 4 value bins: splits after bins 0..2
    assert small.save_raw() != fit({}, Dataset(X, label=y), 3).save_raw()
    # Without max_bin in the parameters the Dataset's is used, and the model says so.
    assert fit({}, Dataset(X, label=y, max_bin=15), 1).params["max_bin"] == 15
    # A validation set built with reference= before training follows its reference.
    dtrain = Dataset(X[:300], label=y[:300])
    dvalid = Dataset(X[300:], label=y[300:], reference=dtrain)
    assert dtrain.max_bin is None
    fit({"max_bin": 8}, dtrain, 1, evals=[(dvalid, "valid")])
    assert dtrain.max_bin == dvalid.max_bin == 8 and dvalid.bin_mapper is dtrain.bin_mapper


def test_max_bin_parameter_conflicting_with_the_dataset_raises(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="built with max_bin=15.*ask for max_bin=4"):
        fit({"max_bin": 4}, Dataset(X, label=y, max_bin=15), 1)
    binned = Dataset(X, label=y)
    binned.X_binned  # binned with the default, 255
    with pytest.raises(ValueError, match="already binned with max_bin=255.*max_bin=4"):
        fit({"max_bin": 4}, binned, 1)
    trained = Dataset(X, label=y)
    fit({"max_bins": 32}, trained, 1)  # the alias counts as given
    with pytest.raises(ValueError, match="already binned with max_bin=32"):
        fit({"max_bin": 64}, trained, 1)
    assert fit({}, trained, 1).params["max_bin"] == 32


# ---------------------------------------------------------------------------
# Parameter and input errors
# ---------------------------------------------------------------------------


def test_unknown_parameter_is_named(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="'max_dpth'"):
        fit({"max_dpth": 3}, Dataset(X, label=y), 1)


@pytest.mark.parametrize(
    "name, value", [("learning_rate", -0.1), ("subsample", 2.0), ("max_bin", 300), ("eta", 0.0)]
)
def test_out_of_range_value_is_named(regression_data, name, value):
    X, y = regression_data
    with pytest.raises(ValueError, match="learning_rate|subsample|max_bin"):
        fit({name: value}, Dataset(X, label=y), 1)


def test_alias_given_twice(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="given twice"):
        fit({"eta": 0.1, "learning_rate": 0.1}, Dataset(X, label=y), 1)


def test_cuda_without_a_gpu_raises_device_unavailable(regression_data, monkeypatch):
    monkeypatch.setenv("GPUBOOST_EMULATE_CUDA", "0")
    if gpuboost.cuda_available():
        pytest.skip("a usable GPU is present")
    X, y = regression_data
    for device in ("cuda", "cuda:0", "gpu"):
        with pytest.raises(DeviceUnavailableError, match="cpu"):
            train({"device": device}, Dataset(X, label=y), 1, verbose_eval=False)


def test_auto_device_trains_without_a_gpu(regression_data, monkeypatch):
    monkeypatch.setenv("GPUBOOST_EMULATE_CUDA", "0")
    if gpuboost.cuda_available():
        pytest.skip("a usable GPU is present")
    X, y = regression_data
    auto = train({}, Dataset(X, label=y), 3, verbose_eval=False)
    assert auto.save_raw() == fit({}, Dataset(X, label=y), 3).save_raw()


def test_bad_training_inputs(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="no label"):
        fit({}, Dataset(X), 1)
    with pytest.raises(TypeError, match="Dataset"):
        fit({}, X, 1)
    for rounds in (-1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="num_boost_round"):
            fit({}, Dataset(X, label=y), rounds)


@pytest.mark.parametrize(
    "call, shown",
    [
        (lambda X, y: Dataset(X, weight=np.r_[np.ones(len(X) - 1), -1.0]), "(-1.0)"),
        (lambda X, y: Dataset(X, group=np.array([len(X) - 0.5, 0.5])), "got 399.5 at"),
        (lambda X, y: fit({}, Dataset(X, label=y), np.int64(-1)), "got -1."),
        (lambda X, y: fit({"max_depth": np.float64(2.5)}, Dataset(X, label=y), 1), "got 2.5."),
        (
            lambda X, y: fit({}, Dataset(X, label=y), 2).predict(
                X, iteration_range=(np.int64(0), np.int64(9))
            ),
            "(0, 9)",
        ),
    ],
)
def test_error_messages_print_plain_numbers(regression_data, call, shown):
    X, y = regression_data
    with pytest.raises(ValueError) as error:
        call(X, y)
    assert shown in str(error.value) and "np." not in str(error.value)


def test_bad_eval_sets(regression_data):
    X, y = regression_data
    dataset = Dataset(X, label=y)
    with pytest.raises(ValueError, match="'narrow' has 4 features"):
        fit({}, dataset, 1, evals=[(Dataset(X[:, :4], label=y), "narrow")])
    with pytest.raises(ValueError, match="no label"):
        fit({}, dataset, 1, evals=[(Dataset(X), "unlabelled")])
    with pytest.raises(ValueError, match="twice"):
        fit({}, dataset, 1, evals=[(dataset, "a"), (dataset, "a")])
    with pytest.raises(TypeError, match="pairs"):
        fit({}, dataset, 1, evals=[dataset])
    with pytest.raises(TypeError, match="pairs"):
        fit({}, dataset, 1, evals=[("a", dataset)])


@pytest.mark.parametrize(
    "objective, labels, extra",
    [
        ("binary:logistic", [0, 1, 2], {}),
        ("binary:exponential", [0, 0.5, 1], {}),
        ("multi:softprob", [0, 1, 3], {"num_class": 3}),
        ("multi:softmax", [0, 1.5, 2], {"num_class": 3}),
        ("count:poisson", [0, -1, 2], {}),
        ("reg:gamma", [1, 0, 2], {}),
        ("reg:tweedie", [1, -0.5, 2], {}),
    ],
)
def test_labels_outside_the_objective_domain(objective, labels, extra):
    X = np.arange(30.0).reshape(-1, 1)
    y = np.resize(np.asarray(labels, dtype=float), 30)
    with pytest.raises(ValueError, match="label"):
        fit({"objective": objective, **extra}, Dataset(X, label=y), 1)
    # Bad labels in an evaluation set are caught too.
    good = np.resize(np.asarray(labels[:1], dtype=float), 30)
    with pytest.raises(ValueError, match="label"):
        fit(
            {"objective": objective, **extra},
            Dataset(X, label=good),
            1,
            evals=[(Dataset(X, label=y), "bad")],
        )


def test_non_finite_gradients_raise(regression_data):
    X, y = regression_data

    def exploding(margin, dataset):
        return np.full_like(margin, np.inf), np.ones_like(margin)

    with pytest.raises(ValueError):
        fit({}, Dataset(X, label=y), 1, obj=exploding)


# ---------------------------------------------------------------------------
# Class imbalance: scale_pos_weight, is_unbalance
# ---------------------------------------------------------------------------


@pytest.fixture
def unbalanced_data():
    """(X, y): few distinct values per feature (bin edges independent of weights), 25%
    positives."""
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(400, 4)), 1)
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0.7).astype(np.float64)
    return X, y


@pytest.mark.parametrize("objective", ["binary:logistic", "binary:exponential"])
def test_scale_pos_weight_equals_explicit_weights(unbalanced_data, objective):
    X, y = unbalanced_data
    weight = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
    params = {"objective": objective, "max_depth": 3}
    scaled = fit({**params, "scale_pos_weight": 3.5}, Dataset(X, label=y, weight=weight), 4)
    explicit = fit(params, Dataset(X, label=y, weight=weight * np.where(y == 1, 3.5, 1.0)), 4)
    assert scaled.trees == explicit.trees
    np.testing.assert_array_equal(scaled.base_margin, explicit.base_margin)
    assert scaled.params["scale_pos_weight"] == 3.5
    assert scaled.save_raw() != fit(params, Dataset(X, label=y, weight=weight), 4).save_raw()


def test_is_unbalance_equals_explicit_weights(unbalanced_data):
    X, y = unbalanced_data
    n_positive, n_negative = int(y.sum()), int((1 - y).sum())
    assert n_positive < n_negative
    params = {"objective": "binary:logistic", "max_depth": 3}
    unbalanced = fit({**params, "is_unbalance": True}, Dataset(X, label=y), 4)
    explicit_weight = np.where(y == 1, n_negative / n_positive, 1.0)
    explicit = fit(params, Dataset(X, label=y, weight=explicit_weight), 4)
    assert unbalanced.trees == explicit.trees
    # More positives than negatives: the negative rows are weighted up instead.
    flipped = fit({**params, "is_unbalance": True}, Dataset(X, label=1 - y), 4)
    explicit = fit(params, Dataset(X, label=1 - y, weight=explicit_weight), 4)
    assert flipped.trees == explicit.trees


def test_class_imbalance_parameters_saved_only_when_set(unbalanced_data, tmp_path):
    X, y = unbalanced_data
    plain = json.loads(fit({"objective": "binary:logistic"}, Dataset(X, label=y), 1).save_raw())
    assert "scale_pos_weight" not in plain["learner"]["params"]
    booster = fit({"objective": "binary:logistic", "is_unbalance": True}, Dataset(X, label=y), 1)
    booster.save_model(tmp_path / "model.json")
    assert gpuboost.Booster.load_model(tmp_path / "model.json").params["is_unbalance"] is True


@pytest.mark.parametrize(
    "params, message",
    [
        ({"scale_pos_weight": 2.0}, "binary objective.*'reg:squarederror'"),
        ({"is_unbalance": True, "objective": "multi:softprob", "num_class": 2}, "binary"),
        (
            {"objective": "binary:logistic", "scale_pos_weight": 2.0, "is_unbalance": True},
            "not both",
        ),
        ({"objective": "binary:logistic", "scale_pos_weight": 0.0}, "scale_pos_weight"),
        ({"booster": "adaboost", "scale_pos_weight": 2.0}, "does not use"),
    ],
)
def test_bad_class_imbalance_parameters(unbalanced_data, params, message):
    X, y = unbalanced_data
    with pytest.raises(ValueError, match=message):
        fit(params, Dataset(X, label=y), 1)
    with pytest.raises(ValueError, match="custom objective"):
        fit(
            {"scale_pos_weight": 2.0}, Dataset(X, label=y), 1, obj=lambda m, d: (m, np.ones_like(m))
        )
