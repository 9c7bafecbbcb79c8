"""Export to and import from XGBoost's JSON model format (gpuboost/model/xgboost_format.py).

The threshold rule and the errors are tested without XGBoost; the exported files are
loaded by xgboost, treelite and shap when they are installed (the ``test`` extra
installs them; each test skips cleanly without its package). On float32 inputs every
row reaches the same leaf in every library, and margins agree to float32 rounding.
"""

import json

import numpy as np
import pytest
from _tiers import SLOW

import gpuboost
from gpuboost.data.dataset import label_arguments
from gpuboost.model.xgboost_format import (
    XGBOOST_OBJECTIVES,
    gpuboost_threshold,
    state_from_xgboost_json,
    xgboost_threshold,
)

#: Margins: XGBoost and Treelite sum float32 leaves in float32.
MARGIN_TOL = 2e-5
N_ROWS = 300

# objective -> extra params
OBJECTIVES = {
    "reg:squarederror": {},
    "reg:absoluteerror": {},
    "reg:quantile": {"quantile_alpha": 0.3},
    "reg:huber": {"huber_delta": 0.7},
    "binary:logistic": {},
    "multi:softprob": {"num_class": 3},
    "multi:softmax": {"num_class": 3},
    "count:poisson": {},
    "reg:gamma": {},
    "reg:tweedie": {"tweedie_variance_power": 1.3},
    "rank:ndcg": {},
    "rank:map": {},
    "rank:pairwise": {},
    "survival:cox": {},
    "survival:aft": {"aft_loss_distribution": "logistic", "aft_loss_distribution_scale": 1.4},
}


def _data(objective, seed=0, missing=True):
    """float32-valued features (NaN in features 1 and 3 when ``missing``) and labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, 5)).astype(np.float32).astype(np.float64)
    if missing:
        X[rng.random(N_ROWS) < 0.2, 1] = np.nan
        X[rng.random(N_ROWS) < 0.1, 3] = np.nan
    signal = X[:, 0] + np.nan_to_num(X[:, 1]) * X[:, 2] + 0.3 * rng.normal(size=N_ROWS)
    kwargs = {}
    if objective.startswith("binary:"):
        y = (signal > 0).astype(float)
    elif objective.startswith("multi:"):
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
    elif objective in ("count:poisson", "reg:tweedie"):
        y = rng.poisson(np.exp(0.5 * signal)).astype(float)
    elif objective == "reg:gamma":
        y = np.exp(0.5 * signal) * rng.gamma(2.0, size=N_ROWS)
    elif objective.startswith("rank:"):
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
        kwargs["group"] = [30] * (N_ROWS // 30)
    elif objective == "survival:cox":  # times, negative when censored
        y = np.exp(-0.5 * signal) * np.where(rng.random(N_ROWS) < 0.3, -1.0, 1.0)
    elif objective == "survival:aft":  # intervals: observed or right-censored times
        time = np.exp(0.5 * signal)
        y = np.column_stack([time, np.where(rng.random(N_ROWS) < 0.3, np.inf, time)])
    else:
        y = signal
    return X, y, kwargs


def _train(objective, seed=0, missing=True, n_rounds=5, **params):
    X, y, kwargs = _data(objective, seed, missing)
    params = {"objective": objective, "max_depth": 4, "device": "cpu", **params}
    params.update(OBJECTIVES[objective])
    dataset = gpuboost.Dataset(X, **label_arguments(y), **kwargs)
    return gpuboost.train(params, dataset, n_rounds), X


# ---- the threshold rule -------------------------------------------------------------
def _neighbours(value):
    """float32 values around ``value`` (and the specials), as float64."""
    with np.errstate(over="ignore"):
        f = np.float32(value)
    up, down = np.float32(np.inf), np.float32(-np.inf)
    values = [f, np.nextafter(f, up), np.nextafter(f, down)]
    values += [np.nextafter(values[1], up), np.nextafter(values[2], down)]
    values += [np.float32(np.nan), up, down, np.float32(0.0), np.float32(-0.0)]
    return np.array(values, dtype=np.float32)


@pytest.mark.parametrize("seed", range(5))
def test_threshold_conversion_is_exact_on_float32_inputs(seed):
    rng = np.random.default_rng(seed)
    thresholds = np.concatenate(
        [
            rng.normal(size=200) * 10.0 ** rng.integers(-40, 39, size=200),
            rng.normal(size=50).astype(np.float32).astype(np.float64),  # exact float32
            [0.0, -0.0, 1e-45, -1e-45, 3.4e38, -3.4e38, -1e300, 5e-324],
        ]
    )
    for t in thresholds:
        t_xgb = xgboost_threshold(t)
        assert t_xgb.dtype == np.float32
        x32 = _neighbours(t)
        ours = x32.astype(np.float64) <= t  # NaN: False (missing is handled apart)
        theirs = x32 < t_xgb  # XGBoost: float32 comparison
        np.testing.assert_array_equal(ours, theirs, err_msg=f"threshold {t!r}")
        # and back: the imported threshold sends the same float32 values left
        t_back = gpuboost_threshold(t_xgb)
        assert np.isfinite(t_back)
        np.testing.assert_array_equal(x32.astype(np.float64) <= t_back, theirs)


def test_threshold_at_the_float32_limit_is_refused():
    xgboost_threshold(3.4e38)  # below FLT_MAX: fine
    with pytest.raises(ValueError, match="largest float32"):
        xgboost_threshold(float(np.finfo(np.float32).max))
    with pytest.raises(ValueError, match="sends no value left"):
        gpuboost_threshold(-np.inf)


# ---- what cannot be exported, and what cannot be imported ----------------------------
def test_unexportable_models_raise_a_clear_error():
    X, y, _ = _data("binary:logistic")
    ada = gpuboost.train(
        {"booster": "adaboost", "objective": "binary:logistic"}, gpuboost.Dataset(X, label=y), 3
    )
    with pytest.raises(ValueError, match="AdaBoost"):
        ada.export_xgboost()
    exp = gpuboost.train({"objective": "binary:exponential"}, gpuboost.Dataset(X, label=y), 2)
    with pytest.raises(ValueError, match="no XGBoost equivalent"):
        exp.export_xgboost()

    def squared(margin, dataset):
        return margin - dataset.get_label(), np.ones_like(margin)

    custom = gpuboost.train({"objective": squared}, gpuboost.Dataset(X, label=y), 2)
    with pytest.raises(ValueError, match="no XGBoost equivalent"):
        custom.export_xgboost()


def _document(booster):
    return json.loads(booster.export_xgboost())


def test_unimportable_documents_raise_a_clear_error():
    booster, _ = _train("reg:squarederror", n_rounds=2)
    cases = [
        (lambda d: d["learner"]["gradient_booster"].update(name="gblinear"), "gbtree"),
        (
            lambda d: d["learner"]["gradient_booster"]["model"]["gbtree_model_param"].update(
                num_parallel_tree="3"
            ),
            "not whole rounds of 3",
        ),
        (
            lambda d: d["learner"]["gradient_booster"]["model"]["trees"][0].update(
                split_type=[1] + [0] * 30
            ),
            "categorical",
        ),
        (lambda d: d["learner"]["objective"].update(name="reg:logistic"), "reg:logistic"),
        (lambda d: d["learner"].pop("learner_model_param"), "learner_model_param"),
    ]
    for change, message in cases:
        document = _document(booster)
        change(document)
        with pytest.raises(ValueError, match=message):
            state_from_xgboost_json(json.dumps(document))
    with pytest.raises(ValueError, match="not valid JSON"):
        state_from_xgboost_json("{not json")


def test_export_writes_every_round_and_the_best_iteration(tmp_path):
    X, y, _ = _data("binary:logistic")
    data = gpuboost.Dataset(X[:200], label=y[:200])
    valid = gpuboost.Dataset(X[200:], label=y[200:], reference=data)
    booster = gpuboost.train(
        {"objective": "binary:logistic", "learning_rate": 1.0, "max_depth": 6},
        data,
        40,
        evals=[(valid, "valid")],
        early_stopping_rounds=3,
        verbose_eval=False,
    )
    path = tmp_path / "model.json"
    text = booster.export_xgboost(path)
    assert path.read_text() == text == booster.export_xgboost()  # deterministic
    document = json.loads(text)
    model = document["learner"]["gradient_booster"]["model"]
    assert len(model["trees"]) == booster.num_boosted_rounds()
    attributes = document["learner"]["attributes"]
    assert int(attributes["best_iteration"]) == booster.best_iteration
    back = gpuboost.Booster.from_xgboost(path)
    assert back.best_iteration == booster.best_iteration
    assert (
        back.feature_names == booster.feature_names and document["learner"]["feature_names"] == []
    )


def test_round_trip_through_the_xgboost_format_keeps_predictions():
    for objective in XGBOOST_OBJECTIVES:
        booster, X = _train(objective, n_rounds=3)
        back = gpuboost.Booster.from_xgboost(booster.export_xgboost())
        assert back.params["objective"] == objective
        np.testing.assert_array_equal(
            back.predict(X, pred_leaf=True), booster.predict(X, pred_leaf=True)
        )
        np.testing.assert_allclose(
            back.predict(X, output_margin=True),
            booster.predict(X, output_margin=True),
            rtol=MARGIN_TOL,
            atol=MARGIN_TOL,
        )


def _objectives_with_and_without_missing():
    """(objective, missing) of every objective: with missing values in the fast tier, and
    without them for squared error and logistic; the slow tier adds the other objectives
    without missing values (the same conversion, without default directions to check)."""
    return [
        pytest.param(
            objective,
            missing,
            marks=[] if missing or objective in ("reg:squarederror", "binary:logistic") else [SLOW],
        )
        for missing in (True, False)
        for objective in sorted(OBJECTIVES)
    ]


# ---- loading the export in XGBoost, Treelite and shap ---------------------------------
def _xgboost_dmatrix(xgb, X):
    return xgb.DMatrix(X.astype(np.float32), missing=np.nan)


@pytest.mark.parametrize("objective, missing", _objectives_with_and_without_missing())
def test_xgboost_loads_the_export_with_equal_predictions(tmp_path, objective, missing):
    xgb = pytest.importorskip("xgboost")
    booster, X = _train(objective, missing=missing)
    path = tmp_path / "model.json"
    booster.export_xgboost(path)
    model = xgb.Booster(model_file=str(path))
    data = _xgboost_dmatrix(xgb, X)
    np.testing.assert_array_equal(
        model.predict(data, pred_leaf=True).astype(np.int64), booster.predict(X, pred_leaf=True)
    )
    ours = booster.predict(X, output_margin=True)
    np.testing.assert_allclose(
        model.predict(data, output_margin=True), ours, rtol=MARGIN_TOL, atol=MARGIN_TOL
    )
    np.testing.assert_allclose(
        model.predict(data), booster.predict(X), rtol=MARGIN_TOL, atol=MARGIN_TOL
    )
    theirs = model.predict(data, pred_contribs=True)
    np.testing.assert_allclose(
        theirs, booster.predict(X, pred_contribs=True), rtol=MARGIN_TOL, atol=MARGIN_TOL
    )


@pytest.mark.parametrize("objective, missing", _objectives_with_and_without_missing())
def test_treelite_loads_the_export_with_equal_predictions(tmp_path, objective, missing):
    treelite = pytest.importorskip("treelite")
    booster, X = _train(objective, missing=missing)
    path = tmp_path / "model.json"
    booster.export_xgboost(path)
    model = treelite.frontend.load_xgboost_model(str(path))
    X32 = X.astype(np.float32)
    leaves = treelite.gtil.predict_leaf(model, X32)
    np.testing.assert_array_equal(leaves, booster.predict(X, pred_leaf=True))
    margins = treelite.gtil.predict(model, X32, pred_margin=True)
    ours = booster.predict(X, output_margin=True)
    np.testing.assert_allclose(margins.reshape(ours.shape), ours, rtol=MARGIN_TOL, atol=MARGIN_TOL)


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic", "multi:softprob"])
def test_shap_tree_explainer_on_the_export_equals_pred_contribs(tmp_path, objective):
    shap = pytest.importorskip("shap")
    xgb = pytest.importorskip("xgboost")
    booster, X = _train(objective)
    path = tmp_path / "model.json"
    booster.export_xgboost(path)
    explainer = shap.TreeExplainer(xgb.Booster(model_file=str(path)))
    values = np.asarray(explainer.shap_values(X[:60].astype(np.float32)))
    ours = booster.predict(X[:60], pred_contribs=True)
    if booster.n_outputs > 1:  # shap: (rows, features, classes)
        values = np.moveaxis(values, -1, 1)
    np.testing.assert_allclose(values, ours[..., :-1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        np.broadcast_to(explainer.expected_value, ours[..., -1].shape),
        ours[..., -1],
        rtol=1e-6,
        atol=1e-6,
    )


# ---- importing models XGBoost trained -------------------------------------------------
XGBOOST_TRAINED = [
    ("reg:squarederror", {}),
    ("reg:absoluteerror", {}),
    ("reg:quantileerror", {"quantile_alpha": 0.7}),
    ("reg:pseudohubererror", {"huber_slope": 0.5}),
    ("binary:logistic", {}),
    ("multi:softprob", {"num_class": 3}),
    ("count:poisson", {}),
    ("reg:gamma", {}),
    ("reg:tweedie", {"tweedie_variance_power": 1.2}),
    ("rank:ndcg", {}),
]


@pytest.mark.parametrize("objective, params", XGBOOST_TRAINED)
def test_import_of_xgboost_models_predicts_as_xgboost(tmp_path, objective, params):
    xgb = pytest.importorskip("xgboost")
    ours_name = {"reg:quantileerror": "reg:quantile", "reg:pseudohubererror": "reg:huber"}
    X, y, kwargs = _data(ours_name.get(objective, objective), seed=3)
    data = _xgboost_dmatrix(xgb, X)
    data.set_label(y)
    if "group" in kwargs:
        data.set_group(kwargs["group"])
    model = xgb.train({"objective": objective, "max_depth": 4, **params}, data, 6)
    for source in (model, str(tmp_path / "model.json")):
        model.save_model(str(tmp_path / "model.json"))
        booster = gpuboost.Booster.from_xgboost(source)
        np.testing.assert_array_equal(
            booster.predict(X, pred_leaf=True), model.predict(data, pred_leaf=True)
        )
        np.testing.assert_allclose(
            booster.predict(X, output_margin=True),
            model.predict(data, output_margin=True),
            rtol=MARGIN_TOL,
            atol=MARGIN_TOL,
        )
        np.testing.assert_allclose(
            booster.predict(X), model.predict(data), rtol=MARGIN_TOL, atol=MARGIN_TOL
        )
        # SHAP on the imported model: the same covers, so XGBoost's values
        np.testing.assert_allclose(
            booster.predict(X[:50], pred_contribs=True),
            model.predict(_xgboost_dmatrix(xgb, X[:50]), pred_contribs=True),
            rtol=MARGIN_TOL,
            atol=MARGIN_TOL,
        )


def test_import_of_an_xgboost_estimator():
    xgb = pytest.importorskip("xgboost")
    X, y, _ = _data("binary:logistic", seed=4)
    estimator = xgb.XGBClassifier(n_estimators=4, max_depth=3).fit(X.astype(np.float32), y)
    booster = gpuboost.Booster.from_xgboost(estimator)
    np.testing.assert_allclose(
        booster.predict(X), estimator.predict_proba(X.astype(np.float32))[:, 1], atol=MARGIN_TOL
    )


def _categorical_frame(pd, seed, n=1500):
    rng = np.random.default_rng(seed)
    big = rng.integers(0, 40, n)
    small = rng.choice(["a", "b", "c"], n)
    x = rng.normal(size=n).astype(np.float32)  # float32: both libraries see the same x
    y = np.random.default_rng(99).normal(size=40)[big] * 2 + (small == "a") + x
    frame = pd.DataFrame(
        {"big": pd.Categorical([f"k{v}" for v in big]), "small": pd.Categorical(small), "x": x}
    )
    frame.loc[rng.random(n) < 0.05, "big"] = np.nan
    return frame, y


def test_categorical_splits_export_to_xgboost_and_back(tmp_path):
    """Listed categories go right in XGBoost; its `cats` get gpuboost's labels, so XGBoost
    re-codes a DataFrame by label too (another category order predicts the same)."""
    xgb = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    frame, y = _categorical_frame(pd, 7)
    booster = gpuboost.train(
        {"device": "cpu", "max_depth": 4, "min_data_per_group": 10, "max_cat_to_onehot": 3},
        gpuboost.Dataset(frame, label=y),
        8,
    )
    assert sum(tree.is_categorical.sum() for tree in booster.trees) >= 8
    path = tmp_path / "model.json"
    booster.export_xgboost(path)
    exported = xgb.Booster(model_file=str(path))
    expected = booster.predict(frame, output_margin=True)
    reordered = frame.copy()
    reordered["big"] = reordered["big"].cat.reorder_categories(
        list(reversed(reordered["big"].cat.categories))
    )
    for data in (frame, reordered):
        matrix = xgb.DMatrix(data, enable_categorical=True)
        np.testing.assert_allclose(
            exported.predict(matrix, output_margin=True), expected, rtol=0, atol=MARGIN_TOL
        )
        np.testing.assert_array_equal(
            exported.predict(matrix, pred_leaf=True).astype(np.int32),
            booster.predict(frame, pred_leaf=True),
        )
    back = gpuboost.Booster.from_xgboost(str(path))
    assert back.categories == booster.categories
    np.testing.assert_allclose(back.predict(frame, output_margin=True), expected, atol=MARGIN_TOL)


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic", "multi:softprob"])
def test_shap_and_xgboost_on_a_categorical_export_equal_pred_contribs(tmp_path, objective):
    """shap's TreeExplainer without background data (``tree_path_dependent``, the
    default) computes an XGBoost model's values with XGBoost's own ``pred_contribs``,
    which takes categorical splits (given a DMatrix built with ``enable_categorical``);
    with background data (``interventional``) shap 0.51 cannot explain categorical
    XGBoost models (its C extension has no categorical splits), so that mode is not
    tested. XGBoost's interaction values are compared directly."""
    shap = pytest.importorskip("shap")
    xgb = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    frame, y = _categorical_frame(pd, 9, n=800)
    params = {"device": "cpu", "max_depth": 4, "min_data_per_group": 10, "max_cat_to_onehot": 3}
    if objective == "binary:logistic":
        y = (y > 0).astype(np.float64)
    elif objective == "multi:softprob":
        y, params["num_class"] = np.digitize(y, [-1.0, 1.0]).astype(np.float64), 3
    booster = gpuboost.train(dict(params, objective=objective), gpuboost.Dataset(frame, label=y), 6)
    assert sum(tree.is_categorical.sum() for tree in booster.trees) >= 6
    path = tmp_path / "model.json"
    booster.export_xgboost(path)
    model = xgb.Booster(model_file=str(path))
    rows = frame.iloc[:80]
    matrix = xgb.DMatrix(rows, enable_categorical=True)
    ours = booster.predict(rows, pred_contribs=True)
    explainer = shap.TreeExplainer(model)
    values = np.asarray(explainer.shap_values(matrix))
    if booster.n_outputs > 1:  # shap: (rows, features, classes)
        values = np.moveaxis(values, -1, 1)
    np.testing.assert_allclose(values, ours[..., :-1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        np.broadcast_to(explainer.expected_value, ours[..., -1].shape), ours[..., -1], atol=1e-6
    )
    interactions = model.predict(
        xgb.DMatrix(rows.iloc[:20], enable_categorical=True), pred_interactions=True
    )
    np.testing.assert_allclose(
        interactions, booster.predict(rows.iloc[:20], pred_interactions=True), atol=1e-6
    )


def test_import_of_categorical_xgboost_models():
    xgb = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    frame, y = _categorical_frame(pd, 8)
    data = xgb.DMatrix(frame, label=y, enable_categorical=True)
    model = xgb.train({"max_depth": 4, "max_cat_to_onehot": 4, "tree_method": "hist"}, data, 6)
    booster = gpuboost.Booster.from_xgboost(model)
    assert booster.categories[1] == ["a", "b", "c"]  # XGBoost's own labels (its cats)
    assert any(tree.has_categorical for tree in booster.trees)
    np.testing.assert_allclose(
        booster.predict(frame, output_margin=True),
        model.predict(data, output_margin=True),
        atol=MARGIN_TOL,
    )


def test_imported_models_run_on_the_cuda_backend(emulated_cuda):
    xgb = pytest.importorskip("xgboost")
    X, y, _ = _data("multi:softprob", seed=6)
    data = _xgboost_dmatrix(xgb, X)
    data.set_label(y)
    model = xgb.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3}, data, 3)
    booster = gpuboost.Booster.from_xgboost(model)
    on_cpu = (
        booster.predict(X[:40], output_margin=True),
        booster.predict(X[:40], pred_contribs=True),
    )
    booster.params["device"] = "cuda"
    on_cuda = (
        booster.predict(X[:40], output_margin=True),
        booster.predict(X[:40], pred_contribs=True),
    )
    np.testing.assert_array_equal(on_cuda[0], on_cpu[0])
    np.testing.assert_array_equal(on_cuda[1], on_cpu[1])
    np.testing.assert_allclose(
        on_cuda[1],
        model.predict(_xgboost_dmatrix(xgb, X[:40]), pred_contribs=True),
        atol=MARGIN_TOL,
    )


@pytest.mark.parametrize(
    "params, kind",
    [
        ({"multi_strategy": "multi_output_tree"}, "targets"),
        ({}, "targets"),
        ({"objective": "binary:logistic", "multi_strategy": "multi_output_tree"}, "labels"),
        (
            {"objective": "multi:softprob", "num_class": 3, "multi_strategy": "multi_output_tree"},
            "classes",
        ),
        (
            {
                "multi_strategy": "multi_output_tree",
                "grow_policy": "lossguide",
                "max_leaves": 9,
                "max_depth": 0,
                "num_parallel_tree": 2,
                "subsample": 0.8,
            },
            "targets",
        ),
    ],
)
def test_several_targets_and_vector_leaves_export_to_xgboost(params, kind):
    """Several targets (a tree per target) and vector leaves (XGBoost's multi-target
    trees, ``size_leaf_vector`` k) load in XGBoost with our leaves and margins."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 5)).astype(np.float32)
    X[rng.random(400) < 0.1, 1] = np.nan
    base = X[:, 0] + np.nan_to_num(X[:, 1])
    targets = np.column_stack([base, 2 * X[:, 2], X[:, 0] - X[:, 3]]).astype(np.float64)
    label = {
        "targets": targets,
        "labels": (targets > 0).astype(np.float64),
        "classes": ((base > 0).astype(int) + (X[:, 2] > 0.5)).astype(np.float64),
    }[kind]
    booster = gpuboost.train(
        dict({"max_depth": 4, "device": "cpu", "verbosity": 0}, **params),
        gpuboost.Dataset(X, label=label),
        num_boost_round=4,
    )
    model = xgb.Booster()
    model.load_model(bytearray(booster.export_xgboost().encode()))
    data = _xgboost_dmatrix(xgb, X)
    np.testing.assert_array_equal(
        model.predict(data, pred_leaf=True).astype(np.int64), booster.predict(X, pred_leaf=True)
    )
    np.testing.assert_allclose(
        model.predict(data, output_margin=True),
        booster.predict(X, output_margin=True),
        rtol=MARGIN_TOL,
        atol=MARGIN_TOL,
    )
    np.testing.assert_allclose(
        model.predict(data), booster.predict(X), rtol=MARGIN_TOL, atol=MARGIN_TOL
    )
