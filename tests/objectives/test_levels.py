"""Several quantiles and expectiles in one model (issue 31, points 3 and 4): one output per
level of ``quantile_alpha`` / ``expectile_alpha`` lists, trained as the one-level models
are, predictions rearranged so that they never cross (gpuboost.objectives.regression);
``reg:expectileerror`` with XGBoost's gradients; the same bytes on every backend; the
model file's version 5."""

import json

import numpy as np
import pytest

import gpuboost
from gpuboost import Booster
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.metrics import get_metric
from gpuboost.objectives import ExpectileError, get_objective
from gpuboost.objectives.regression import rearranged

LEVELS = [0.1, 0.5, 0.9]


def _data(n_rows=900, seed=0):
    """Heteroscedastic: the spread grows with feature 1, so the levels' trees differ
    and unconstrained levels cross."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    y = X[:, 0] + (0.2 + np.abs(X[:, 1])) * rng.normal(size=n_rows)
    return X, y


def _train(params, rounds=20, rows=slice(0, 600)):
    X, y = _data()
    base = {"max_depth": 3, "verbosity": 0, "device": "cpu"}
    return gpuboost.train(dict(base, **params), gpuboost.Dataset(X[rows], label=y[rows]), rounds)


@pytest.mark.parametrize(
    "objective, parameter, metric",
    [
        ("reg:quantile", "quantile_alpha", "pinball"),
        ("reg:expectileerror", "expectile_alpha", "expectile"),
    ],
)
def test_levels_never_cross_and_lose_no_more_than_one_model_per_level(objective, parameter, metric):
    X, y = _data()
    model = _train({"objective": objective, parameter: LEVELS})
    assert model.n_outputs == 3 and json.loads(model.save_raw())["version"] == 5
    margins = model.predict(X[600:], output_margin=True)
    predictions = model.predict(X[600:])
    assert np.all(np.diff(predictions, axis=1) >= 0)  # never cross
    singles = [_train({"objective": objective, parameter: level}) for level in LEVELS]
    for column, single in enumerate(singles):
        # Without row or column sampling output j is the one-level model of level j.
        assert np.array_equal(margins[:, column], single.predict(X[600:], output_margin=True))
    assert np.any(np.diff(margins, axis=1) < 0)  # the separate models do cross here
    combined = get_metric(f"{metric}@0.1,0.5,0.9")
    separate = np.column_stack([s.predict(X[600:]) for s in singles])
    assert combined(y[600:], predictions) < combined(y[600:], separate)
    assert combined(y[600:], predictions) == pytest.approx(
        np.mean(
            [get_metric(f"{metric}@{a}")(y[600:], predictions[:, j]) for j, a in enumerate(LEVELS)]
        ),
        rel=1e-15,
    )


def test_rearrangement_sorts_and_never_raises_the_loss():
    rng = np.random.default_rng(3)
    y = rng.normal(size=400)
    raw = rng.normal(size=(400, 4))
    out = rearranged(np, raw)
    assert np.array_equal(out, np.sort(raw, axis=1))
    assert np.array_equal(rearranged(np, out), out)  # sorted rows stay as they are
    levels = (0.05, 0.3, 0.6, 0.95)
    for name in ("pinball", "expectile"):
        metric = get_metric(f"{name}@" + ",".join(map(str, levels)))
        for rows in (slice(None), slice(0, 1), slice(5, 6)):
            assert metric(y[rows], out[rows]) <= metric(y[rows], raw[rows])


def test_expectile_gradients_are_xgboosts():
    """``s * (F - y)`` and ``s`` with ``s = 1 - alpha`` where ``F >= y`` else ``alpha``
    (XGBoost's ``ExpectileRegression::GetGradient`` for one level)."""
    y = np.array([1.0, 2.0, -1.0, 0.5])
    raw = np.array([1.5, 2.0, -3.0, 0.0])
    grad, hess = ExpectileError(0.8).gradients(np, y, raw, None)
    scale = np.array([1 - 0.8, 1 - 0.8, 0.8, 0.8])
    assert np.array_equal(grad, scale * (raw - y)) and np.array_equal(hess, scale)
    several = ExpectileError([0.2, 0.8])
    grad, hess = several.gradients(np, y, np.column_stack([raw, raw]), np.full(4, 2.0))
    assert np.array_equal(grad[:, 1], 2.0 * scale * (raw - y))
    assert np.array_equal(hess[:, 0], 2.0 * np.array([0.8, 0.8, 0.2, 0.2]))
    # Base margin: the mean and one Newton step of the level's loss from it.
    labels = np.array([0.0, 1.0, 2.0, 10.0])
    margin = several.base_margin(labels, None)
    assert margin[0] < labels.mean() < margin[1]
    assert ExpectileError(0.5).base_margin(labels, None)[0] == pytest.approx(labels.mean())


@pytest.mark.parametrize(
    "params",
    [
        {"objective": "reg:quantile", "quantile_alpha": LEVELS, "subsample": 0.8},
        {"objective": "reg:expectileerror", "expectile_alpha": [0.2, 0.8], "colsample_bynode": 0.7},
        {"objective": "reg:expectileerror", "expectile_alpha": 0.7},
    ],
    ids=["quantiles", "expectiles", "expectile"],
)
def test_every_backend_trains_the_same_bytes(params, monkeypatch):
    compiled = _train(params, rounds=6)
    with emulated_kernels():
        cuda = _train(dict(params, device="cuda"), rounds=6)
    assert cuda.save_raw() == compiled.save_raw()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert _train(params, rounds=6).save_raw() == compiled.save_raw()


def test_the_parameters_the_file_and_the_export_check_the_levels():
    for bad in ([0.5, 0.1], [0.1, 0.1], [0.0, 0.5], []):
        with pytest.raises(ValueError, match="quantile_alpha"):
            gpuboost.train(
                {"objective": "reg:quantile", "quantile_alpha": bad}, gpuboost.Dataset(*_data()), 1
            )
    assert get_objective("reg:quantile", {"quantile_alpha": [0.3]}).n_outputs() == 1
    model = _train({"objective": "reg:quantile", "quantile_alpha": LEVELS}, rounds=3)
    document = json.loads(model.save_raw())
    assert document["learner"]["params"]["quantile_alpha"] == LEVELS
    assert Booster.from_json(model.to_json()).save_raw() == model.save_raw()
    for version in (1, 4):
        broken = dict(document, version=version)
        with pytest.raises(ValueError, match="version 5"):
            Booster.from_json(json.dumps(broken))
    broken = json.loads(json.dumps(document))
    broken["learner"]["params"]["quantile_alpha"] = [0.9, 0.1]
    with pytest.raises(ValueError, match="increasing"):
        Booster.from_json(json.dumps(broken))
    with pytest.raises(ValueError, match="never cross"):
        model.export_xgboost()
    with pytest.raises(ValueError, match="no XGBoost equivalent"):
        _train({"objective": "reg:expectileerror"}, rounds=1).export_xgboost()


def test_evaluation_estimators_and_explanations_take_several_levels():
    pytest.importorskip("sklearn")
    X, y = _data()
    history = {}
    gpuboost.train(
        {"objective": "reg:quantile", "quantile_alpha": LEVELS, "device": "cpu", "max_depth": 3},
        gpuboost.Dataset(X[:600], label=y[:600]),
        4,
        evals=[(gpuboost.Dataset(X[600:], label=y[600:]), "valid")],
        evals_result=history,
        verbose_eval=False,
    )
    assert list(history["valid"]) == ["pinball@0.1,0.5,0.9"]
    estimator = gpuboost.GBRegressor(
        objective="reg:expectileerror", expectile_alpha=[0.25, 0.75], n_estimators=5, device="cpu"
    ).fit(X, y)
    predictions = estimator.predict(X)
    assert predictions.shape == (len(X), 2) and np.all(predictions[:, 0] <= predictions[:, 1])
    booster = estimator.get_booster()
    contributions = booster.predict(X[:10], pred_contribs=True)
    assert contributions.shape == (10, 2, X.shape[1] + 1)
    assert np.allclose(contributions.sum(axis=2), booster.predict(X[:10], output_margin=True))
