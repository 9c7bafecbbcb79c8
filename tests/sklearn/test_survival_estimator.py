"""GBSurvival (issue 31): the scikit-learn estimator for survival:cox and survival:aft."""

import numpy as np
import pytest

import gpuboost
from gpuboost.metrics import ConcordanceIndex
from gpuboost.sklearn.survival import concordance_labels


def _data(n_rows=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    time = rng.exponential(np.exp(0.5 + X[:, 0]))
    censored = rng.random(n_rows) < 0.3
    cox = np.where(censored, -time, time)
    intervals = np.column_stack([time, np.where(censored, np.inf, time)])
    return X, cox, intervals


@pytest.mark.parametrize("kind", ["cox", "aft"])
def test_trains_the_objective_of_the_labels_kind_as_train_does(kind):
    X, cox, intervals = _data()
    y = cox if kind == "cox" else intervals
    model = gpuboost.GBSurvival(n_estimators=15, max_depth=3, device="cpu").fit(X, y)
    objective = {"cox": "survival:cox", "aft": "survival:aft"}[kind]
    assert model.get_booster().params["objective"] == objective
    data = (
        gpuboost.Dataset(X, label=cox)
        if kind == "cox"
        else gpuboost.Dataset(
            X, label_lower_bound=intervals[:, 0], label_upper_bound=intervals[:, 1]
        )
    )
    booster = gpuboost.train(
        {"objective": objective, "max_depth": 3, "device": "cpu", "verbosity": 0}, data, 15
    )
    np.testing.assert_array_equal(model.predict(X), booster.predict(X))
    np.testing.assert_array_equal(
        model.predict(X, output_margin=True), booster.predict(X, output_margin=True)
    )
    labels, risk = concordance_labels(y, model.predict(X))
    assert model.score(X, y) == ConcordanceIndex()(labels, risk) > 0.6


def test_concordance_of_intervals_keeps_observed_and_right_censored_rows():
    y = np.array([[2.0, 2.0], [3.0, np.inf], [0.0, 4.0], [1.0, 5.0], [4.0, 4.0]])
    labels, risk = concordance_labels(y, np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(labels, [2.0, -3.0, 4.0])
    np.testing.assert_array_equal(risk, [-1.0, -2.0, -5.0])  # a longer time: a lower risk


def test_eval_set_early_stopping_and_errors():
    X, cox, intervals = _data()
    model = gpuboost.GBSurvival(n_estimators=200, early_stopping_rounds=5, device="cpu")
    model.fit(X[:300], intervals[:300], eval_set=[(X[300:], intervals[300:])])
    assert list(model.evals_result_["validation_0"]) == ["aft-nloglik"]
    assert model.best_iteration < 199
    with pytest.raises(ValueError, match="of the training y's kind"):
        gpuboost.GBSurvival(n_estimators=2).fit(
            X[:300], intervals[:300], eval_set=[(X[300:], cox[300:])]
        )
    with pytest.raises(ValueError, match="use GBRegressor"):
        gpuboost.GBSurvival(n_estimators=2, objective="reg:squarederror").fit(X, cox)
    with pytest.raises(ValueError, match="shape"):
        gpuboost.GBSurvival(n_estimators=2).fit(X, np.ones((len(X), 3)))
    with pytest.raises(ValueError, match="label_lower_bound= and label_upper_bound="):
        gpuboost.GBSurvival(n_estimators=2, objective="survival:aft").fit(X, cox)
