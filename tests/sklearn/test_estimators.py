"""Tests of gpuboost.sklearn: GBRegressor, GBClassifier, GBRanker."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuboost
from gpuboost.metrics import get_metric
from gpuboost.objectives import OBJECTIVES
from gpuboost.sklearn import GBClassifier, GBRanker, GBRegressor, NotFittedError

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

#: Few rounds keep every fit in the tests fast.
FEW_ROUNDS = 10


@pytest.fixture(scope="module")
def regression_data():
    X, y = make_regression(n_samples=600, n_features=6, n_informative=4, noise=5.0, random_state=0)
    return X[:450], y[:450], X[450:], y[450:]


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=600, n_features=6, n_informative=4, random_state=0)
    return X[:450], y[:450], X[450:], y[450:]


@pytest.fixture(scope="module")
def multiclass_data():
    X, y = make_classification(
        n_samples=600,
        n_features=6,
        n_informative=4,
        n_classes=3,
        n_clusters_per_class=1,
        random_state=0,
    )
    return X, y


# --------------------------------------------------------------------------- #
# Regression
# --------------------------------------------------------------------------- #


def test_regressor_fits_make_regression(regression_data):
    X_train, y_train, X_test, y_test = regression_data
    model = GBRegressor(n_estimators=50, max_depth=3, learning_rate=0.2).fit(X_train, y_train)
    assert model.score(X_test, y_test) > 0.8
    assert model.n_features_in_ == X_train.shape[1]
    assert not hasattr(model, "feature_names_in_")
    assert model.predict(X_test).shape == (len(X_test),)
    assert isinstance(model.get_booster(), gpuboost.Booster)
    assert model.get_booster() is model.booster_


def test_predict_equals_booster_predict(regression_data):
    X_train, y_train, X_test, _ = regression_data
    model = GBRegressor(n_estimators=FEW_ROUNDS).fit(X_train, y_train)
    np.testing.assert_array_equal(model.predict(X_test), model.booster_.predict(X_test))
    np.testing.assert_array_equal(
        model.predict(X_test, iteration_range=(0, 3)),
        model.booster_.predict(X_test, iteration_range=(0, 3)),
    )


def squared_error(y_true, raw_margin):
    """A custom objective (module level, so that models using it can be pickled)."""
    return raw_margin - y_true, np.ones_like(raw_margin)


def test_custom_objective_matches_builtin_squared_error(regression_data):
    X_train, y_train, X_test, _ = regression_data
    custom = GBRegressor(n_estimators=5, objective=squared_error).fit(X_train, y_train)
    # The custom objective starts from margin 0, so compare with base_score=0; it has no
    # split penalty (docs/DESIGN.md, "Split penalty").
    builtin = GBRegressor(n_estimators=5, base_score=0.0, split_penalty=0).fit(X_train, y_train)
    np.testing.assert_allclose(custom.predict(X_test), builtin.predict(X_test), rtol=1e-12)
    restored = pickle.loads(pickle.dumps(custom))
    np.testing.assert_array_equal(restored.predict(X_test), custom.predict(X_test))


def test_regressor_rejects_multiclass_objective(regression_data):
    X_train, y_train, _, _ = regression_data
    with pytest.raises(ValueError, match="GBClassifier"):
        GBRegressor(objective="multi:softprob", num_class=3).fit(X_train, y_train)


def test_nan_label_is_rejected(regression_data):
    X_train, y_train, _, _ = regression_data
    y = y_train.copy()
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GBRegressor(n_estimators=2).fit(X_train, y)


def test_y_none_and_wrong_shapes_are_rejected(regression_data):
    X_train, y_train, _, _ = regression_data
    with pytest.raises(ValueError, match="requires y"):
        GBRegressor().fit(X_train, None)
    with pytest.raises(ValueError, match="multi-label indicator matrix"):
        GBClassifier().fit(X_train, np.column_stack([y_train, y_train]))
    with pytest.raises(ValueError, match="1d array"):
        GBRegressor().fit(X_train, y_train[:, None, None])
    with pytest.raises(ValueError, match="Reshape your data"):
        GBRegressor().fit(X_train[:, 0], y_train)
    with pytest.raises(ValueError, match="rows"):
        GBRegressor().fit(X_train, y_train[:-1])


def test_sample_weight_moves_the_prediction():
    # Every point appears twice, with targets +1 and -1: the weights decide the mean.
    rng = np.random.default_rng(0)
    X_half = rng.random((200, 2))
    X = np.vstack([X_half, X_half])
    y = np.concatenate([np.ones(200), -np.ones(200)])
    weight = np.concatenate([np.full(200, 9.0), np.ones(200)])
    unweighted = GBRegressor(n_estimators=20).fit(X, y).predict(X_half)
    weighted = GBRegressor(n_estimators=20).fit(X, y, sample_weight=weight).predict(X_half)
    np.testing.assert_allclose(unweighted, 0.0, atol=1e-6)
    # Weighted mean: (9 * 1 - 1) / 10 = 0.8.
    np.testing.assert_allclose(weighted, 0.8, atol=1e-6)


def test_base_margin_is_used_in_fit_and_predict(regression_data):
    X_train, y_train, X_test, _ = regression_data
    offset = 100.0
    model = GBRegressor(n_estimators=FEW_ROUNDS).fit(
        X_train, y_train + offset, base_margin=np.full(len(X_train), offset)
    )
    with_margin = model.predict(X_test, base_margin=np.full(len(X_test), offset))
    without_margin = model.predict(X_test)
    np.testing.assert_allclose(
        with_margin - without_margin, offset - model.booster_.base_margin[0], rtol=1e-9
    )


def test_init_model_continues_training(regression_data):
    X_train, y_train, _, _ = regression_data
    first = GBRegressor(n_estimators=4).fit(X_train, y_train)
    second = GBRegressor(n_estimators=3).fit(X_train, y_train, init_model=first)
    assert second.booster_.num_boosted_rounds() == 7
    assert first.booster_.num_boosted_rounds() == 4


# --------------------------------------------------------------------------- #
# Classification
# --------------------------------------------------------------------------- #


def test_binary_classifier_fits_make_classification(binary_data):
    X_train, y_train, X_test, y_test = binary_data
    model = GBClassifier(n_estimators=30, max_depth=3).fit(X_train, y_train)
    assert model.score(X_test, y_test) > 0.85
    probabilities = model.predict_proba(X_test)
    assert probabilities.shape == (len(X_test), 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert roc_auc_score(y_test, probabilities[:, 1]) > 0.9
    np.testing.assert_array_equal(
        model.predict(X_test), model.classes_[(probabilities[:, 1] > 0.5).astype(int)]
    )
    assert model.n_classes_ == 2
    assert model.predict(X_test, output_margin=True).shape == (len(X_test),)


def test_multiclass_probabilities_sum_to_one(multiclass_data):
    X, y = multiclass_data
    model = GBClassifier(n_estimators=FEW_ROUNDS).fit(X, y)
    probabilities = model.predict_proba(X)
    assert probabilities.shape == (len(X), 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), np.argmax(probabilities, axis=1))
    assert model.score(X, y) > 0.9
    assert model.booster_.params["objective"] == "multi:softprob"
    assert model.predict(X, output_margin=True).shape == (len(X), 3)
    assert model.apply(X).shape == (len(X), 3 * FEW_ROUNDS)


def test_multi_softmax_still_gives_probabilities(multiclass_data):
    X, y = multiclass_data
    softprob = GBClassifier(n_estimators=5).fit(X, y)
    softmax = GBClassifier(n_estimators=5, objective="multi:softmax").fit(X, y)
    np.testing.assert_allclose(softmax.predict_proba(X), softprob.predict_proba(X))
    np.testing.assert_array_equal(softmax.predict(X), softprob.predict(X))


@pytest.mark.parametrize(
    "labels",
    [
        np.array(["cat", "dog", "emu"]),
        np.array([3, 10, 42]),
        np.array([-1.0, 0.0, 2.0]),
        np.array(["spam", "ham", "eggs"], dtype=object),
    ],
    ids=["str", "int", "float", "object"],
)
def test_classes_of_any_label_type(multiclass_data, labels):
    X, y = multiclass_data
    named = labels[y]
    model = GBClassifier(n_estimators=5).fit(X, named)
    np.testing.assert_array_equal(model.classes_, np.unique(labels))
    assert model.classes_.dtype == np.unique(labels).dtype
    reference = GBClassifier(n_estimators=5).fit(X, np.searchsorted(np.unique(labels), named))
    np.testing.assert_array_equal(model.predict_proba(X), reference.predict_proba(X))
    assert set(model.predict(X)) <= set(labels)
    assert model.score(X, named) == reference.score(X, np.searchsorted(np.unique(labels), named))


def test_binary_string_labels(binary_data):
    X_train, y_train, X_test, y_test = binary_data
    names = np.array(["no", "yes"])
    model = GBClassifier(n_estimators=FEW_ROUNDS).fit(X_train, names[y_train])
    assert list(model.classes_) == ["no", "yes"]
    assert set(model.predict(X_test)) <= {"no", "yes"}
    assert model.score(X_test, names[y_test]) > 0.8


def test_classifier_label_errors(binary_data):
    X_train, y_train, _, _ = binary_data
    with pytest.raises(ValueError, match="only one class"):
        GBClassifier().fit(X_train, np.zeros(len(X_train)))
    with pytest.raises(ValueError, match="continuous"):
        GBClassifier().fit(X_train, y_train + 0.5)
    labels = y_train.astype(float)
    labels[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GBClassifier().fit(X_train, labels)
    with pytest.raises(ValueError, match="classification objective"):
        GBClassifier(objective="reg:squarederror").fit(X_train, y_train)
    with pytest.raises(ValueError, match="multi:softprob"):
        GBClassifier(objective="binary:logistic").fit(X_train, np.arange(len(X_train)) % 3)
    with pytest.raises(ValueError, match="num_class"):
        GBClassifier(num_class=2).fit(X_train, y_train)


def test_eval_set_labels_are_encoded_like_training(binary_data):
    X_train, y_train, X_test, y_test = binary_data
    names = np.array(["a", "b"])
    model = GBClassifier(n_estimators=5, eval_metric="error").fit(
        X_train, names[y_train], eval_set=[(X_test, names[y_test])]
    )
    errors = model.evals_result()["validation_0"]["error"]
    assert len(errors) == 5
    assert errors[-1] == pytest.approx(1.0 - model.score(X_test, names[y_test]))
    with pytest.raises(ValueError, match="not seen in training"):
        GBClassifier(n_estimators=2).fit(
            X_train, names[y_train], eval_set=[(X_test, np.full(len(X_test), "z"))]
        )


def test_custom_classification_objective(binary_data):
    X_train, y_train, X_test, y_test = binary_data

    def logistic(y_true, raw_margin):
        probability = 1.0 / (1.0 + np.exp(-raw_margin))
        return probability - y_true, probability * (1.0 - probability)

    model = GBClassifier(n_estimators=FEW_ROUNDS, objective=logistic).fit(X_train, y_train)
    probabilities = model.predict_proba(X_test)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert model.score(X_test, y_test) > 0.8


# --------------------------------------------------------------------------- #
# Early stopping and evaluation
# --------------------------------------------------------------------------- #


def test_early_stopping_on_noisy_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = X[:, 0] + 3.0 * rng.normal(size=600)
    patience = 5
    model = GBRegressor(n_estimators=200, early_stopping_rounds=patience).fit(
        X[:400], y[:400], eval_set=[(X[:400], y[:400]), (X[400:], y[400:])]
    )
    history = model.evals_result_["validation_1"]["rmse"]
    assert model.best_iteration < 200
    assert len(history) == model.best_iteration + 1 + patience
    assert model.best_score == min(history)
    assert model.best_score == history[model.best_iteration]
    # Predictions use the rounds up to the best one.
    np.testing.assert_array_equal(
        model.predict(X[400:]),
        model.booster_.predict(X[400:], iteration_range=(0, model.best_iteration + 1)),
    )


def test_no_early_stopping_without_it():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    model = GBRegressor(n_estimators=3).fit(X, X[:, 0])
    assert model.best_iteration is None and model.best_score is None
    assert model.evals_result() == {}
    with pytest.raises(ValueError, match="eval_set"):
        GBRegressor(early_stopping_rounds=2).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="list of"):
        GBRegressor(n_estimators=2).fit(X, X[:, 0], eval_set=(X, X[:, 0]))
    with pytest.raises(ValueError, match="n_estimators"):
        GBRegressor(n_estimators=0).fit(X, X[:, 0])


def test_verbose_prints_evaluation(capsys, regression_data):
    X_train, y_train, X_test, y_test = regression_data
    GBRegressor(n_estimators=3).fit(X_train, y_train, eval_set=[(X_test, y_test)], verbose=True)
    printed = capsys.readouterr().out
    assert "validation_0-rmse" in printed
    GBRegressor(n_estimators=3).fit(X_train, y_train, eval_set=[(X_test, y_test)])
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------- #
# Parameters, cloning, pickling
# --------------------------------------------------------------------------- #


def test_get_params_set_params_clone_round_trip():
    model = GBRegressor(n_estimators=7, max_depth=4, huber_delta=2.5)
    params = model.get_params()
    assert params["n_estimators"] == 7 and params["max_depth"] == 4
    assert params["huber_delta"] == 2.5
    assert params["learning_rate"] == 0.3 and params["random_state"] == 0
    assert params["objective"] is None and params["device"] == "auto"
    copy = clone(model)
    assert copy.get_params() == params
    assert copy is not model
    copy.set_params(max_depth=2, quantile_alpha=0.9)
    assert copy.get_params()["max_depth"] == 2
    assert copy.get_params()["quantile_alpha"] == 0.9
    assert model.get_params() == params  # the original is untouched
    assert "huber_delta=2.5" in repr(model)


def test_extra_params_are_validated_at_fit_only():
    X = np.random.default_rng(0).random((50, 2))
    model = GBRegressor(not_a_parameter=1)  # no error before fit
    with pytest.raises(ValueError, match="not_a_parameter"):
        model.fit(X, X[:, 0])
    with pytest.raises(ValueError, match="learning_rate"):
        GBRegressor(eta=0.1).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="random_state"):
        GBRegressor(seed=3).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="max_depth"):
        GBRegressor(max_depth=-1).fit(X, X[:, 0])


def test_extra_param_reaches_training():
    X = np.random.default_rng(0).random((200, 2))
    y = X[:, 0]
    model = GBRegressor(n_estimators=3, objective="reg:quantile", quantile_alpha=0.9).fit(X, y)
    assert model.booster_.params["quantile_alpha"] == 0.9
    assert model.booster_.params["objective"] == "reg:quantile"


@pytest.mark.parametrize("Estimator", [GBRegressor, GBClassifier])
def test_pickle_round_trip_gives_identical_predictions(Estimator, binary_data):
    X_train, y_train, X_test, _ = binary_data
    model = Estimator(n_estimators=FEW_ROUNDS).fit(X_train, y_train)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X_test), model.predict(X_test))
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(restored.predict_proba(X_test), model.predict_proba(X_test))
    assert restored.get_params() == model.get_params()


def test_grid_search_cv(binary_data):
    X_train, y_train, _, _ = binary_data
    search = GridSearchCV(
        GBClassifier(n_estimators=5), {"max_depth": [1, 3], "learning_rate": [0.1, 0.5]}, cv=2
    )
    search.fit(X_train, y_train)
    assert search.best_params_["max_depth"] in (1, 3)
    assert len(search.cv_results_["params"]) == 4
    assert search.best_estimator_.n_estimators == 5
    assert 0.5 < search.best_score_ <= 1.0


def test_random_state_changes_sampled_models(regression_data):
    X_train, y_train, X_test, _ = regression_data
    kwargs = dict(n_estimators=5, subsample=0.5, colsample_bytree=0.5)
    first = GBRegressor(random_state=1, **kwargs).fit(X_train, y_train).predict(X_test)
    again = GBRegressor(random_state=1, **kwargs).fit(X_train, y_train).predict(X_test)
    other = GBRegressor(random_state=2, **kwargs).fit(X_train, y_train).predict(X_test)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    GBRegressor(random_state=None, n_estimators=1).fit(X_train, y_train)


# --------------------------------------------------------------------------- #
# Fitted state and input validation
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("Estimator", [GBRegressor, GBClassifier, GBRanker])
def test_use_before_fit_raises_not_fitted(Estimator):
    X = np.zeros((3, 2))
    model = Estimator()
    with pytest.raises(NotFittedError):
        model.predict(X)
    with pytest.raises(NotFittedError):
        model.get_booster()
    with pytest.raises(NotFittedError):
        model.apply(X)
    assert not hasattr(model, "feature_importances_")
    assert not hasattr(model, "best_iteration")
    assert isinstance(NotFittedError("x"), ValueError)


def test_feature_count_mismatch_at_predict(regression_data):
    X_train, y_train, X_test, _ = regression_data
    model = GBRegressor(n_estimators=2).fit(X_train, y_train)
    with pytest.raises(ValueError, match="X has 5 features, but GBRegressor is expecting 6"):
        model.predict(X_test[:, :5])
    with pytest.raises(ValueError, match="Reshape your data"):
        model.predict(X_test[0])


def test_feature_importances(regression_data):
    X_train, y_train, _, _ = regression_data
    model = GBRegressor(n_estimators=FEW_ROUNDS).fit(X_train, y_train)
    importances = model.feature_importances_
    assert importances.shape == (X_train.shape[1],)
    assert importances.sum() == pytest.approx(1.0)
    assert np.all(importances >= 0)
    total_gain = model.booster_.feature_importance("total_gain")
    np.testing.assert_allclose(importances, total_gain / total_gain.sum())
    influence = model.booster_.feature_importance("relative_influence")
    np.testing.assert_allclose(importances, influence / influence.sum())
    constant = GBRegressor(n_estimators=2).fit(np.ones((20, 3)), np.arange(20.0))
    np.testing.assert_array_equal(constant.feature_importances_, np.zeros(3))


def test_missing_values_in_features(regression_data):
    X_train, y_train, X_test, _ = regression_data
    X_missing = X_train.copy()
    X_missing[::4, 0] = np.nan
    model = GBRegressor(n_estimators=FEW_ROUNDS).fit(X_missing, y_train)
    X_test_missing = X_test.copy()
    X_test_missing[:, 0] = np.nan
    assert np.all(np.isfinite(model.predict(X_test_missing)))


def test_pandas_dataframe_feature_names(regression_data):
    pandas = pytest.importorskip("pandas")
    X_train, y_train, X_test, _ = regression_data
    names = [f"col_{i}" for i in range(X_train.shape[1])]
    frame = pandas.DataFrame(X_train, columns=names)
    model = GBRegressor(n_estimators=FEW_ROUNDS).fit(frame, pandas.Series(y_train))
    np.testing.assert_array_equal(model.feature_names_in_, names)
    assert model.booster_.feature_names == names
    test_frame = pandas.DataFrame(X_test, columns=names)
    np.testing.assert_array_equal(model.predict(test_frame), model.booster_.predict(X_test))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(X_test)
    with pytest.raises(ValueError, match="same order"):
        model.predict(test_frame[names[::-1]])
    with pytest.raises(ValueError, match="unseen at fit time"):
        model.predict(test_frame.rename(columns={"col_0": "other"}))
    # Refitting without names forgets them.
    model.fit(X_train, y_train)
    assert not hasattr(model, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        model.predict(test_frame)


# --------------------------------------------------------------------------- #
# Ranking
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def ranking_data():
    rng = np.random.default_rng(0)
    n_queries, query_size = 20, 15
    X = rng.normal(size=(n_queries * query_size, 4))
    relevance = np.clip(np.round(X[:, 0] + 0.3 * rng.normal(size=len(X)) + 1), 0, 3)
    qid = np.repeat(np.arange(n_queries), query_size)
    return X, relevance, qid, np.full(n_queries, query_size)


def test_ranker_default_objective(ranking_data):
    X, relevance, _, group = ranking_data
    ranker = GBRanker(n_estimators=FEW_ROUNDS)
    assert ranker.get_params()["objective"] is None
    if "rank:ndcg" in OBJECTIVES:
        ranker.fit(X, relevance, group=group)
        assert ranker.booster_.params["objective"] == "rank:ndcg"
    else:
        with pytest.raises(ValueError, match="not available yet"):
            ranker.fit(X, relevance, group=group)


def test_pointwise_ranker_scores_with_ndcg(ranking_data):
    X, relevance, qid, group = ranking_data
    ranker = GBRanker(n_estimators=FEW_ROUNDS, objective="reg:squarederror")
    ranker.fit(X, relevance, qid=qid, eval_set=[(X, relevance)], eval_group=[group])
    score = ranker.score(X, relevance, group=group)
    assert score == ranker.score(X, relevance, qid=qid)
    assert score == pytest.approx(get_metric("ndcg")(relevance, ranker.predict(X), group=group))
    reversed_score = get_metric("ndcg")(relevance, -ranker.predict(X), group=group)
    assert score > reversed_score
    assert list(ranker.evals_result_["validation_0"]) == ["ndcg"]


def test_ranker_needs_queries(ranking_data):
    X, relevance, qid, group = ranking_data
    ranker = GBRanker(objective="reg:squarederror", n_estimators=2)
    with pytest.raises(ValueError, match="group"):
        ranker.fit(X, relevance)
    with pytest.raises(ValueError, match="exactly one"):
        ranker.fit(X, relevance, group=group, qid=qid)
    with pytest.raises(ValueError, match="eval_group"):
        ranker.fit(X, relevance, group=group, eval_set=[(X, relevance)])
    ranker.fit(X, relevance, group=group)
    with pytest.raises(ValueError, match="group"):
        ranker.score(X, relevance)
    with pytest.raises(ValueError, match="multiclass"):
        GBRanker(objective="multi:softprob").fit(X, relevance, group=group)


# --------------------------------------------------------------------------- #
# Package integration
# --------------------------------------------------------------------------- #


def test_lazy_package_attributes():
    assert gpuboost.GBRegressor is GBRegressor
    assert gpuboost.GBClassifier is GBClassifier
    assert gpuboost.GBRanker is GBRanker


def test_works_without_scikit_learn():
    script = textwrap.dedent("""
        import sys
        sys.modules["sklearn"] = None  # makes `import sklearn` fail
        import numpy as np
        from gpuboost import sklearn as api
        assert not api.SKLEARN_INSTALLED
        rng = np.random.default_rng(0)
        X = rng.random((200, 3))
        model = api.GBRegressor(n_estimators=5, max_depth=2, huber_delta=2.0)
        assert model.get_params()["max_depth"] == 2
        assert model.get_params()["huber_delta"] == 2.0
        model.set_params(max_depth=3)
        assert model.max_depth == 3
        assert "max_depth=3" in repr(model)
        try:
            model.predict(X)
        except api.NotFittedError as error:
            assert isinstance(error, ValueError)
        else:
            raise AssertionError("predict before fit did not raise")
        assert model.fit(X, X[:, 0]).score(X, X[:, 0]) > 0.9
        classifier = api.GBClassifier(n_estimators=5).fit(X, np.where(X[:, 0] > 0.5, "a", "b"))
        assert classifier.score(X, np.where(X[:, 0] > 0.5, "a", "b")) > 0.9
        print("ok")
    """)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize(
    "class_weight, per_class",
    [("balanced", None), ({0: 1.0, 1: 4.0}, [1.0, 4.0]), ({1: 0.5}, [1.0, 0.5])],
)
def test_class_weight_equals_explicit_sample_weights(binary_data, class_weight, per_class):
    X, y, _, _ = binary_data
    if per_class is None:  # scikit-learn's 'balanced'
        per_class = len(y) / (2 * np.bincount(y.astype(int)))
    sample_weight = np.linspace(0.5, 1.5, len(y))
    weighted = GBClassifier(n_estimators=4, class_weight=class_weight).fit(
        X, y, sample_weight=sample_weight
    )
    explicit = GBClassifier(n_estimators=4).fit(
        X, y, sample_weight=sample_weight * np.asarray(per_class)[y.astype(int)]
    )
    assert weighted.get_booster().save_raw() == explicit.get_booster().save_raw()
    if isinstance(class_weight, dict):  # labels are matched as the values of y
        labels = np.where(y == 1, "yes", "no")
        named = {"yes" if k == 1 else "no": v for k, v in class_weight.items()}
        by_name = GBClassifier(n_estimators=4, class_weight=named).fit(
            X, labels, sample_weight=sample_weight
        )
        assert by_name.get_booster().save_raw() == explicit.get_booster().save_raw()


def test_bad_class_weight(binary_data, regression_data):
    X, y, _, _ = binary_data
    for class_weight, message in [
        ({2: 1.0}, "label 2, which is not a class"),
        ({1: -1.0}, r"class_weight\[1\] must be a finite number >= 0, got -1.0"),
        ("balance", "'balanced', a dict"),
    ]:
        with pytest.raises(ValueError, match=message):
            GBClassifier(n_estimators=2, class_weight=class_weight).fit(X, y)
    X_reg, y_reg, _, _ = regression_data
    with pytest.raises(ValueError, match="class_weight applies to classifiers"):
        GBRegressor(n_estimators=2, class_weight="balanced").fit(X_reg, y_reg)


class RoundRecorder(gpuboost.TrainingCallback):
    def __init__(self):
        self.rounds = []

    def after_iteration(self, model, epoch, evals_log):
        self.rounds.append(epoch)
        return epoch >= 2  # stops after round 2


def test_callbacks_argument(regression_data, tmp_path):
    X, y, _, _ = regression_data
    recorder = RoundRecorder()
    checkpoint = gpuboost.TrainingCheckPoint(tmp_path, interval=1)
    model = GBRegressor(n_estimators=8, callbacks=[recorder, checkpoint]).fit(X, y)
    assert recorder.rounds == [0, 1, 2] and model.get_booster().num_boosted_rounds() == 3
    assert gpuboost.Booster.load_model(checkpoint.path) == model.get_booster()
    cloned = clone(model)
    assert cloned.get_params()["callbacks"][0] is not recorder  # cloned, not shared


def test_callable_eval_metric(regression_data, binary_data):
    from sklearn.metrics import log_loss, mean_absolute_error

    X, y, X_valid, y_valid = regression_data
    weight = np.linspace(1.0, 2.0, len(y_valid))
    model = GBRegressor(n_estimators=5, eval_metric=mean_absolute_error).fit(
        X, y, eval_set=[(X_valid, y_valid)], sample_weight_eval_set=[weight]
    )
    scores = model.evals_result()["validation_0"]["mean_absolute_error"]
    expected = [
        mean_absolute_error(
            y_valid, model.predict(X_valid, iteration_range=(0, r + 1)), sample_weight=weight
        )
        for r in range(5)
    ]
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    # Classifier: the probability of the positive class; early stopping minimizes it.
    Xb, yb, Xb_valid, yb_valid = binary_data
    classifier = GBClassifier(
        n_estimators=200, learning_rate=0.5, eval_metric=log_loss, early_stopping_rounds=3
    ).fit(Xb, yb, eval_set=[(Xb_valid, yb_valid)])
    losses = classifier.evals_result()["validation_0"]["log_loss"]
    assert classifier.best_iteration == int(np.argmin(losses)) < len(losses) - 1
    np.testing.assert_allclose(
        losses[0], log_loss(yb_valid, classifier.predict_proba(Xb_valid, iteration_range=(0, 1)))
    )


@pytest.mark.parametrize("labels", ["ints", "strings"])
def test_save_model_and_load_model(binary_data, tmp_path, labels):
    pd = pytest.importorskip("pandas")
    X, y, X_test, _ = binary_data
    columns = [f"x{i}" for i in range(X.shape[1])]
    target = y.astype(int) if labels == "ints" else np.where(y == 1, "spam", "ham")
    model = GBClassifier(n_estimators=4).fit(pd.DataFrame(X, columns=columns), target)
    model.save_model(tmp_path / "model.json")
    loaded = GBClassifier().load_model(tmp_path / "model.json")
    assert loaded.get_booster() == model.get_booster()  # the attribute is not kept
    assert list(loaded.classes_) == list(model.classes_) and loaded.n_classes_ == 2
    assert list(loaded.feature_names_in_) == columns and loaded.n_features_in_ == 6
    frame = pd.DataFrame(X_test, columns=columns)
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    np.testing.assert_array_equal(loaded.predict_proba(frame), model.predict_proba(frame))
    with pytest.raises(ValueError, match="holds a GBClassifier"):
        GBRegressor().load_model(tmp_path / "model.json")


def test_load_model_of_a_native_booster_and_of_adaboost(binary_data, regression_data, tmp_path):
    X, y, X_test, _ = binary_data
    booster = gpuboost.train(
        {"objective": "binary:logistic", "device": "cpu"}, gpuboost.Dataset(X, label=y), 3
    )
    booster.save_model(tmp_path / "native.json")
    loaded = GBClassifier().load_model(tmp_path / "native.json")
    assert list(loaded.classes_) == [0, 1] and loaded.evals_result() == {}
    np.testing.assert_array_equal(loaded.predict_proba(X_test)[:, 1], booster.predict(X_test))
    Xr, yr, Xr_test, _ = regression_data
    regressor = GBRegressor(n_estimators=3).fit(Xr, yr)
    regressor.save_model(tmp_path / "regressor.json")
    again = GBRegressor().load_model(tmp_path / "regressor.json")
    np.testing.assert_array_equal(again.predict(Xr_test), regressor.predict(Xr_test))
    ada = gpuboost.AdaBoostClassifier(n_estimators=3).fit(X, y)
    ada.save_model(tmp_path / "ada.json")
    ada_loaded = gpuboost.AdaBoostClassifier().load_model(tmp_path / "ada.json")
    np.testing.assert_array_equal(ada_loaded.predict(X_test), ada.predict(X_test))
    np.testing.assert_array_equal(ada_loaded.estimator_weights_, ada.estimator_weights_)
    with pytest.raises(ValueError, match="not an AdaBoost model"):
        gpuboost.AdaBoostClassifier().load_model(tmp_path / "native.json")


def test_categorical_columns():
    """String columns with enable_categorical (and pandas category columns by default)
    are categorical features, read by label at prediction; eval sets too."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(11)
    frame = pd.DataFrame(
        {"c": rng.choice(["a", "b", "c", "d", "e", "f"], 600), "x": rng.normal(size=600)}
    )
    y = frame["c"].isin(["a", "c", "e"]).to_numpy(float) * 2 + frame["x"].to_numpy()
    with pytest.raises(TypeError, match="enable_categorical=True"):
        gpuboost.GBRegressor(n_estimators=2, device="cpu").fit(frame, y)
    model = gpuboost.GBRegressor(
        n_estimators=10, device="cpu", enable_categorical=True, min_data_per_group=10
    ).fit(frame, y, eval_set=[(frame, y)])
    assert model.booster_.categories[0] is not None
    as_category = frame.astype({"c": "category"})
    np.testing.assert_array_equal(model.predict(as_category), model.predict(frame))
    assert np.sqrt(np.mean((model.predict(frame) - y) ** 2)) < 0.5
    by_default = gpuboost.GBRegressor(n_estimators=10, device="cpu", min_data_per_group=10)
    np.testing.assert_array_equal(
        by_default.fit(as_category, y).predict(frame), model.predict(frame)
    )
    assert clone(model).get_params()["enable_categorical"] is True


def test_the_top_level_names_every_estimator_lazily():
    """gpuboost's lazy estimator names (``gpuboost._ESTIMATORS``) and gpuboost.sklearn's
    ``__all__`` list the same estimators."""
    import gpuboost.sklearn as api

    assert set(gpuboost._ESTIMATORS) == set(api.__all__) - {"NotFittedError", "SKLEARN_INSTALLED"}
    for name in gpuboost._ESTIMATORS:
        assert getattr(gpuboost, name) is getattr(api, name)
