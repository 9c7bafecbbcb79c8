"""``survival:cox`` (issue 31, point 1, Cox part): XGBoost's gradients and ``cox-nloglik``
to 1e-12 on fixed margins, Harrell's ``c-index``, held-out metrics within 1 % of
XGBoost's at equal settings, the same bytes on every backend, export to XGBoost."""

import math

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.metrics import get_metric
from gpuboost.objectives import get_objective
from gpuboost.objectives.survival import cox_gradients


def _survival_data(n_rows=1200, seed=1, decimals=2):
    """Exponential event times with a nonlinear risk, 30-40 % censored, times rounded
    (so that some are tied); negative labels mark censoring."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    risk = X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 * X[:, 2]
    event = rng.exponential(scale=np.exp(-risk))
    censor = rng.exponential(scale=1.5, size=n_rows)
    time = np.maximum(np.round(np.minimum(event, censor), decimals), 10.0**-decimals)
    return X, np.where(event <= censor, time, -time)


def _xgboost_gradients(y, p, w):
    """XGBoost's ``CoxRegression::GetGradient``, transliterated (Python floats)."""
    n = len(y)
    order = sorted(range(n), key=lambda i: abs(y[i]))  # stable, as its ArgSort
    exp_p_sum = 0.0
    for i in range(n):
        exp_p_sum += math.exp(p[order[i]])
    r_k = s_k = last_exp_p = last_abs_y = accumulated = 0.0
    grad, hess = np.zeros(n), np.zeros(n)
    for ind in order:
        exp_p, abs_y = math.exp(p[ind]), abs(y[ind])
        accumulated += last_exp_p
        if last_abs_y < abs_y:
            exp_p_sum -= accumulated
            accumulated = 0.0
        if y[ind] > 0:
            r_k += 1.0 / exp_p_sum
            s_k += 1.0 / (exp_p_sum * exp_p_sum)
        grad[ind] = (exp_p * r_k - float(y[ind] > 0)) * w[ind]
        hess[ind] = (exp_p * r_k - exp_p * exp_p * s_k) * w[ind]
        last_abs_y, last_exp_p = abs_y, exp_p
    return grad, hess


def _xgboost_cox_nloglik(y, hazard):
    """XGBoost's ``EvalCox``, transliterated."""
    n = len(y)
    order = sorted(range(n), key=lambda i: abs(y[i]))
    exp_p_sum = 0.0
    for i in range(n):
        exp_p_sum += hazard[i]
    out, accumulated, events = 0.0, 0.0, 0
    for position, ind in enumerate(order):
        if y[ind] > 0:
            out -= math.log(hazard[ind]) - math.log(exp_p_sum)
            events += 1
        accumulated += hazard[ind]
        if position == n - 1 or abs(y[ind]) < abs(y[order[position + 1]]):
            exp_p_sum -= accumulated
            accumulated = 0.0
    return out / events


def _harrell(y, hazard):
    """Harrell's C by every pair."""
    time, event = np.abs(y), y > 0
    earlier = (time[:, None] < time[None, :]) & event[:, None]
    concordant = (hazard[:, None] > hazard[None, :]) & earlier
    tied = (hazard[:, None] == hazard[None, :]) & earlier
    return (concordant.sum() + 0.5 * tied.sum()) / earlier.sum()


def test_gradients_and_loss_are_xgboosts_on_fixed_margins():
    X, y = _survival_data(600)
    margins = np.random.default_rng(2).normal(size=len(y))
    weight = np.random.default_rng(3).uniform(0.5, 2.0, size=len(y))
    assert len(np.unique(np.abs(y))) < len(y)  # tied times
    grad, hess = get_objective("survival:cox").gradients(np, y, margins, weight)
    expected_grad, expected_hess = _xgboost_gradients(list(y), list(margins), list(weight))
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hess, expected_hess, rtol=1e-12, atol=1e-12)
    unweighted = cox_gradients(y, margins)
    np.testing.assert_array_equal(unweighted[0] * weight, grad)
    hazard = np.exp(margins)
    assert get_metric("cox-nloglik")(y, hazard) == pytest.approx(
        _xgboost_cox_nloglik(list(y), list(hazard)), rel=1e-12
    )
    assert get_metric("c-index")(y, hazard) == pytest.approx(_harrell(y, hazard), rel=1e-15)
    rounded = np.round(hazard, 1)  # tied hazard ratios count one half
    assert get_metric("c-index")(y, rounded) == pytest.approx(_harrell(y, rounded), rel=1e-15)


def test_held_out_metrics_are_xgboosts_within_one_percent():
    xgboost = pytest.importorskip("xgboost")
    X, y = _survival_data(4000)
    train, test = slice(0, 3000), slice(3000, None)
    params = {"objective": "survival:cox", "max_depth": 3, "learning_rate": 0.1}
    ours = gpuboost.train(
        dict(params, device="cpu", verbosity=0), gpuboost.Dataset(X[train], label=y[train]), 100
    )
    dtest = xgboost.DMatrix(X[test], label=y[test])
    theirs = xgboost.train(
        dict(params, tree_method="hist", eval_metric="cox-nloglik"),
        xgboost.DMatrix(X[train], label=y[train]),
        100,
    )
    nloglik, cindex = get_metric("cox-nloglik"), get_metric("c-index")
    hazard, their_hazard = ours.predict(X[test]), theirs.predict(dtest)
    # Our metric is XGBoost's: on XGBoost's own predictions it gives its evaluation.
    their_value = float(theirs.eval(dtest).split(":")[1])
    assert nloglik(y[test], their_hazard) == pytest.approx(their_value, rel=1e-9)
    assert nloglik(y[test], hazard) <= 1.01 * nloglik(y[test], their_hazard)
    assert cindex(y[test], hazard) >= 0.99 * cindex(y[test], their_hazard)
    assert np.allclose(np.log(hazard), ours.predict(X[test], output_margin=True))


def test_every_backend_trains_the_same_cox_model(monkeypatch):
    X, y = _survival_data(500)
    params = {"objective": "survival:cox", "max_depth": 3, "subsample": 0.8, "verbosity": 0}

    def train(device):
        return gpuboost.train(dict(params, device=device), gpuboost.Dataset(X, label=y), 6)

    compiled = train("cpu")
    with emulated_kernels():
        assert train("cuda").save_raw() == compiled.save_raw()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert train("cpu").save_raw() == compiled.save_raw()


def test_labels_evaluation_and_export():
    X, y = _survival_data(400)
    with pytest.raises(ValueError, match="nonzero survival times"):
        gpuboost.train({"objective": "survival:cox"}, gpuboost.Dataset(X, label=np.zeros(400)), 1)
    history = {}
    dvalid = gpuboost.Dataset(X[300:], label=y[300:])
    model = gpuboost.train(
        {"objective": "survival:cox", "eval_metric": ["cox-nloglik", "c-index"], "device": "cpu"},
        gpuboost.Dataset(X[:300], label=y[:300]),
        30,
        evals=[(dvalid, "valid")],
        evals_result=history,
        early_stopping_rounds=5,
        verbose_eval=False,
    )
    assert set(history["valid"]) == {"cox-nloglik", "c-index"}
    assert model.best_score == max(history["valid"]["c-index"])  # maximized
    xgboost = pytest.importorskip("xgboost")
    exported = xgboost.Booster(model_file=bytearray(model.export_xgboost().encode()))
    matrix = xgboost.DMatrix(X.astype(np.float32))
    window = (0, model.num_boosted_rounds())
    np.testing.assert_allclose(
        exported.predict(matrix, iteration_range=window),
        model.predict(X.astype(np.float32), iteration_range=window),
        rtol=1e-5,
    )
    back = gpuboost.Booster.from_xgboost(exported)
    assert back.params["objective"] == "survival:cox"


def test_real_survival_tables_match_xgboost_within_one_percent():
    """lifelines' GBSG2 and Rossi (skipped without lifelines or xgboost)."""
    datasets = pytest.importorskip("lifelines.datasets")
    xgboost = pytest.importorskip("xgboost")
    nloglik, cindex = get_metric("cox-nloglik"), get_metric("c-index")
    params = {"objective": "survival:cox", "max_depth": 3, "learning_rate": 0.05}
    for frame, time_column, event_column in (
        (datasets.load_gbsg2(), "time", "cens"),
        (datasets.load_rossi(), "week", "arrest"),
    ):
        features = frame.drop(columns=[time_column, event_column])
        for column in features.columns:
            if features[column].dtype == object:
                features[column] = features[column].astype("category").cat.codes
        X = features.to_numpy(dtype=np.float64)
        time = frame[time_column].to_numpy(dtype=np.float64)
        y = np.where(frame[event_column].to_numpy() == 1, time, -time)
        order = np.random.default_rng(0).permutation(len(y))
        train, test = order[: 3 * len(y) // 4], order[3 * len(y) // 4 :]
        ours = gpuboost.train(
            # equal settings: XGBoost has no minimum leaf size
            dict(params, device="cpu", verbosity=0, min_data_in_leaf=1),
            gpuboost.Dataset(X[train], label=y[train]),
            100,
        )
        theirs = xgboost.train(
            dict(params, tree_method="hist"), xgboost.DMatrix(X[train], label=y[train]), 100
        )
        hazard = ours.predict(X[test])
        their_hazard = theirs.predict(xgboost.DMatrix(X[test]))
        assert nloglik(y[test], hazard) <= 1.01 * nloglik(y[test], their_hazard)
        assert cindex(y[test], hazard) >= 0.99 * cindex(y[test], their_hazard)
