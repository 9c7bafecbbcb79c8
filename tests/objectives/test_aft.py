"""``survival:aft`` (issue 31, point 1, AFT part): interval labels on the Dataset, XGBoost's
``aft-nloglik`` / ``interval-regression-accuracy``, held-out metrics within 1 % of
XGBoost's at equal settings, the same bytes on every backend, export to XGBoost. The
loss / gradient / hessian formulas themselves: tests/core/test_aft.py."""

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.metrics import AFTNegLogLik, get_metric

DISTRIBUTIONS = ("normal", "logistic", "extreme")


def _aft_data(n_rows=1500, seed=0):
    """Log-normal times with a nonlinear log-mean; a quarter observed, the rest right-,
    left- or interval-censored."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    time = np.exp(1.0 + X[:, 0] - 0.5 * X[:, 1] ** 2 + 0.4 * rng.normal(size=n_rows))
    kind = rng.integers(0, 4, n_rows)
    lower = np.where(kind == 2, 0.0, np.where(kind == 3, time * 0.7, time))
    upper = np.where(kind == 1, np.inf, np.where(kind == 3, time * 1.5, time))
    return X, lower, upper


def _dataset(X, lower, upper):
    return gpuboost.Dataset(X, label_lower_bound=lower, label_upper_bound=upper)


def _xgboost_matrix(xgboost, X, lower, upper, base_margin=None):
    matrix = xgboost.DMatrix(X, base_margin=base_margin)
    matrix.set_float_info("label_lower_bound", lower)
    matrix.set_float_info("label_upper_bound", upper)
    return matrix


def test_interval_labels_on_the_dataset():
    X, lower, upper = _aft_data(50)
    data = _dataset(X, lower, upper)
    assert data.has_label_bounds and data.label.shape == (50, 2)
    np.testing.assert_array_equal(data.label_lower_bound, lower)
    np.testing.assert_array_equal(data.label_upper_bound, upper)
    part = data.subset(np.arange(10, 20))
    np.testing.assert_array_equal(part.label_upper_bound, upper[10:20])
    assert "label bounds" in repr(data)
    with pytest.raises(ValueError, match="without its other half"):
        gpuboost.Dataset(X, label_lower_bound=lower)
    with pytest.raises(ValueError, match="not both"):
        gpuboost.Dataset(X, label=lower, label_lower_bound=lower, label_upper_bound=upper)
    with pytest.raises(ValueError, match="negative value"):
        _dataset(X, lower - 100.0, upper)
    with pytest.raises(ValueError, match="below label_lower_bound"):
        _dataset(X, np.full(50, 5.0), np.full(50, 1.0))
    with pytest.raises(ValueError, match="NaN"):
        _dataset(X, np.full(50, np.nan), upper)
    # Objectives and metrics say which labels they take.
    with pytest.raises(ValueError, match="only 'survival:aft' takes"):
        gpuboost.train({"objective": "reg:squarederror"}, data, 1)
    with pytest.raises(ValueError, match="label_lower_bound= and label_upper_bound="):
        gpuboost.train({"objective": "survival:aft"}, gpuboost.Dataset(X, label=lower + 1), 1)
    with pytest.raises(ValueError, match="only the survival:aft metrics"):
        gpuboost.train(
            {"objective": "survival:aft", "eval_metric": "rmse"}, data, 1, evals=[(data, "t")]
        )
    with pytest.raises(ValueError, match="aft_loss_distribution"):
        gpuboost.train({"objective": "survival:aft", "aft_loss_distribution": "weibull"}, data, 1)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_metrics_are_xgboosts_on_its_margins(distribution):
    """On the same margins (XGBoost's base_margin, learning rate 0), our aft-nloglik and
    interval-regression-accuracy give XGBoost's evaluation (its labels are float32, as
    are ours here)."""
    xgboost = pytest.importorskip("xgboost")
    X, lower, upper = _aft_data(800, seed=1)
    margins = np.random.default_rng(2).normal(1.0, 1.0, 800).astype(np.float32)
    params = {
        "objective": "survival:aft",
        "aft_loss_distribution": distribution,
        "aft_loss_distribution_scale": 1.3,
        "learning_rate": 0.0,
        "eval_metric": ["aft-nloglik", "interval-regression-accuracy"],
        "verbosity": 0,
    }
    matrix = _xgboost_matrix(xgboost, X, lower, upper, base_margin=margins)
    history = {}  # XGBoost's evaluation during training: with the training's scale
    xgboost.train(params, matrix, 1, evals=[(matrix, "eval")], evals_result=history)
    evaluation = {name: values[0] for name, values in history["eval"].items()}
    bounds = np.column_stack([lower.astype(np.float32), upper.astype(np.float32)])
    metric = AFTNegLogLik().for_training(params)
    assert metric(bounds, margins) == pytest.approx(evaluation["aft-nloglik"], rel=1e-9)
    accuracy = get_metric("interval-regression-accuracy")(bounds, margins)
    assert accuracy == pytest.approx(evaluation["interval-regression-accuracy"], abs=2e-3)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_held_out_metrics_are_xgboosts_within_one_percent(distribution):
    xgboost = pytest.importorskip("xgboost")
    X, lower, upper = _aft_data(3000, seed=3)
    train, test = slice(0, 2200), slice(2200, None)
    params = {
        "objective": "survival:aft",
        "aft_loss_distribution": distribution,
        "aft_loss_distribution_scale": 1.2,
        "max_depth": 3,
        "learning_rate": 0.1,
    }
    ours = gpuboost.train(
        dict(params, device="cpu", verbosity=0), _dataset(X[train], lower[train], upper[train]), 100
    )
    theirs = xgboost.train(
        dict(params, tree_method="hist"),
        _xgboost_matrix(xgboost, X[train], lower[train], upper[train]),
        100,
    )
    bounds = np.column_stack([lower[test], upper[test]])
    metric = AFTNegLogLik().for_training(params)
    our_margins = ours.predict(X[test], output_margin=True)
    their_margins = theirs.predict(xgboost.DMatrix(X[test]), output_margin=True)
    assert metric(bounds, our_margins) <= 1.01 * metric(bounds, their_margins)
    np.testing.assert_allclose(ours.predict(X[test]), np.exp(our_margins), rtol=1e-15)


def test_every_backend_trains_the_same_aft_model(monkeypatch):
    X, lower, upper = _aft_data(400)
    params = {
        "objective": "survival:aft",
        "aft_loss_distribution": "normal",
        "max_depth": 3,
        "subsample": 0.8,
        "verbosity": 0,
    }

    def train(device):
        return gpuboost.train(dict(params, device=device), _dataset(X, lower, upper), 6)

    compiled = train("cpu")
    with emulated_kernels():
        assert train("cuda").save_raw() == compiled.save_raw()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert train("cpu").save_raw() == compiled.save_raw()


def test_evaluation_early_stopping_file_and_export(tmp_path):
    X, lower, upper = _aft_data(600)
    history = {}
    params = {
        "objective": "survival:aft",
        "aft_loss_distribution": "logistic",
        "aft_loss_distribution_scale": 0.8,
        "eval_metric": ["interval-regression-accuracy", "aft-nloglik"],
        "device": "cpu",
    }
    model = gpuboost.train(
        params,
        _dataset(X[:450], lower[:450], upper[:450]),
        40,
        evals=[(_dataset(X[450:], lower[450:], upper[450:]), "valid")],
        evals_result=history,
        early_stopping_rounds=5,
        verbose_eval=False,
    )
    assert set(history["valid"]) == {"interval-regression-accuracy", "aft-nloglik"}
    assert model.best_score == min(history["valid"]["aft-nloglik"])  # the last metric
    path = tmp_path / "aft.json"
    model.save_model(path)
    again = gpuboost.Booster.load_model(path)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert again.params["aft_loss_distribution"] == "logistic"
    xgboost = pytest.importorskip("xgboost")
    exported = xgboost.Booster(model_file=bytearray(model.export_xgboost().encode()))
    X32 = X.astype(np.float32)
    window = (0, model.num_boosted_rounds())
    np.testing.assert_allclose(
        exported.predict(xgboost.DMatrix(X32), iteration_range=window),
        model.predict(X32, iteration_range=window),
        rtol=1e-5,
    )
    back = gpuboost.Booster.from_xgboost(exported)
    assert back.params["objective"] == "survival:aft"
    assert back.params["aft_loss_distribution"] == "logistic"
    assert back.params["aft_loss_distribution_scale"] == pytest.approx(0.8, rel=1e-7)


def test_real_survival_tables_match_xgboost_within_one_percent():
    """lifelines' Rossi (right-censored) and diabetes (interval-censored) tables
    (skipped without lifelines or xgboost)."""
    datasets = pytest.importorskip("lifelines.datasets")
    xgboost = pytest.importorskip("xgboost")
    rossi = datasets.load_rossi()
    diabetes = datasets.load_diabetes()
    tables = (
        (
            rossi.drop(columns=["week", "arrest"]).to_numpy(dtype=np.float64),
            rossi["week"].to_numpy(dtype=np.float64),
            np.where(rossi["arrest"] == 1, rossi["week"], np.inf).astype(np.float64),
        ),
        (
            (diabetes[["gender"]] == "male").to_numpy(dtype=np.float64),
            diabetes["left"].to_numpy(dtype=np.float64),
            diabetes["right"].to_numpy(dtype=np.float64),
        ),
    )
    params = {"objective": "survival:aft", "max_depth": 3, "learning_rate": 0.05}
    metric = AFTNegLogLik().for_training(params)
    for X, lower, upper in tables:
        order = np.random.default_rng(0).permutation(len(lower))
        train, test = order[: 3 * len(order) // 4], order[3 * len(order) // 4 :]
        ours = gpuboost.train(
            dict(params, device="cpu", verbosity=0),
            _dataset(X[train], lower[train], upper[train]),
            100,
        )
        theirs = xgboost.train(
            dict(params, tree_method="hist"),
            _xgboost_matrix(xgboost, X[train], lower[train], upper[train]),
            100,
        )
        bounds = np.column_stack([lower[test], upper[test]])
        ours_value = metric(bounds, ours.predict(X[test], output_margin=True))
        theirs_value = metric(bounds, theirs.predict(xgboost.DMatrix(X[test]), output_margin=True))
        assert ours_value <= 1.01 * theirs_value
