"""ONNX export (issue 34, point 4): ``Booster.to_onnx`` and the estimators' ``to_onnx``
give an ``ai.onnx.ml`` tree ensemble that ONNX Runtime predicts as gpuboost does, to
float32 rounding (skipped without onnx and onnxruntime)."""

import numpy as np
import pytest

import gpuboost
from gpuboost.data.dataset import label_arguments
from gpuboost.model.onnx_format import onnx_threshold


def test_thresholds_keep_every_float32_inputs_branch():
    rng = np.random.default_rng(0)
    thresholds = np.concatenate(
        [rng.normal(size=300) * 10.0 ** rng.integers(-30, 30, size=300), [0.0, -0.0, 1e300]]
    )
    for t in thresholds:
        f = np.float32(onnx_threshold(t))
        with np.errstate(over="ignore"):
            below = np.nextafter(f, np.float32(-np.inf))
            above = np.nextafter(f, np.float32(np.inf))
        for x in (below, f, above):
            assert (float(x) <= t) == (x <= f)


def _data(n_rows=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    return X, signal, rng


def _labels(kind, signal, rng):
    if kind == "binary":
        return (signal > 0).astype(float)
    if kind == "classes":
        return np.digitize(signal, [-0.5, 0.5]).astype(float)
    if kind == "count":
        return rng.poisson(np.exp(0.3 * signal)).astype(float)
    if kind == "intervals":  # survival:aft: observed and right-censored times
        time = np.exp(0.3 * signal)
        return np.column_stack([time, np.where(rng.random(len(time)) < 0.3, np.inf, time)])
    return signal


CASES = {
    "regression": ({"objective": "reg:squarederror"}, "value"),
    "huber": ({"objective": "reg:huber"}, "value"),
    "binary": ({"objective": "binary:logistic"}, "binary"),
    "exponential": ({"objective": "binary:exponential"}, "binary"),
    "multiclass": ({"objective": "multi:softprob", "num_class": 3}, "classes"),
    "softmax": ({"objective": "multi:softmax", "num_class": 3}, "classes"),
    "poisson": ({"objective": "count:poisson"}, "count"),
    "aft": ({"objective": "survival:aft", "aft_loss_distribution": "logistic"}, "intervals"),
    "quantiles": ({"objective": "reg:quantile", "quantile_alpha": [0.1, 0.5, 0.9]}, "value"),
    "ranking": ({"objective": "rank:ndcg"}, "classes"),
    "dart_forest": (
        {
            "objective": "binary:logistic",
            "booster": "dart",
            "rate_drop": 0.3,
            "num_parallel_tree": 2,
            "subsample": 0.8,
        },
        "binary",
    ),
    "adaboost": ({"booster": "adaboost", "num_class": 3, "objective": "multi:softprob"}, "classes"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_onnx_runtime_predicts_what_gpuboost_predicts(case, tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    params, kind = CASES[case]
    X, signal, rng = _data()
    y = _labels(kind, signal, rng)
    extra = {"group": [40] * 10} if case == "ranking" else {}
    booster = gpuboost.train(
        dict(params, device="cpu", max_depth=4, verbosity=0),
        gpuboost.Dataset(X, **label_arguments(y), **extra),
        15,
    )
    path = tmp_path / "model.onnx"
    data = booster.to_onnx(path)
    assert path.read_bytes() == data
    outputs = ort.InferenceSession(data).run(None, {"input": X})
    ours = booster.predict(X)
    objective = booster.params["objective"]
    if objective == "multi:softmax":
        np.testing.assert_array_equal(outputs[0], ours)
        return
    if objective.startswith("binary:"):
        theirs = outputs[1][:, 1]
        np.testing.assert_array_equal(outputs[0], (ours > 0.5).astype(np.int64))
    elif objective.startswith("multi:"):
        theirs = outputs[1]
    else:
        theirs = outputs[0].reshape(ours.shape)
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)


def test_what_the_export_refuses_and_the_estimators():
    pytest.importorskip("onnx")
    X, signal, rng = _data()
    custom = gpuboost.train(
        {"device": "cpu", "verbosity": 0},
        gpuboost.Dataset(X, label=signal),
        2,
        obj=lambda raw, data: (raw - data.label, np.ones_like(raw)),
    )
    with pytest.raises(ValueError, match="no ONNX export"):
        custom.to_onnx()
    import pandas as pd

    frame = pd.DataFrame({"a": X[:, 0], "c": pd.Categorical(rng.choice(["x", "y", "z"], len(X)))})
    categorical = gpuboost.train(
        {"device": "cpu", "verbosity": 0, "max_cat_to_onehot": 1},
        gpuboost.Dataset(frame, label=signal + (frame["c"] == "x")),
        3,
    )
    if any(tree.has_categorical for tree in categorical.trees):
        with pytest.raises(ValueError, match="categorical splits"):
            categorical.to_onnx()
    pytest.importorskip("sklearn")
    ort = pytest.importorskip("onnxruntime")
    labels = np.where(signal > 0, "up", "down")
    estimator = gpuboost.GBClassifier(n_estimators=5, device="cpu").fit(X, labels)
    outputs = ort.InferenceSession(estimator.to_onnx()).run(None, {"input": X})
    np.testing.assert_array_equal(outputs[0], estimator.predict(X))


@pytest.mark.parametrize(
    "make, kind",
    [
        (lambda: gpuboost.GBRegressor(n_estimators=8, device="cpu"), "value"),
        (
            lambda: gpuboost.GBRegressor(n_estimators=8, device="cpu", objective="count:poisson"),
            "count",
        ),
        (
            lambda: gpuboost.GBRegressor(
                n_estimators=8, device="cpu", objective="reg:quantile", quantile_alpha=[0.2, 0.8]
            ),
            "value",
        ),
        (lambda: gpuboost.GBClassifier(n_estimators=8, device="cpu"), "strings"),
        (lambda: gpuboost.GBRFClassifier(n_estimators=8, device="cpu"), "classes"),
        (lambda: gpuboost.AdaBoostClassifier(n_estimators=8, device="cpu"), "classes"),
    ],
    ids=["regressor", "poisson", "quantiles", "classifier", "forest", "adaboost"],
)
def test_a_pipeline_converts_with_skl2onnx(make, kind):
    """``gpuboost.onnx.register_skl2onnx()``: a Pipeline (StandardScaler, gpuboost
    estimator) converts as a whole; ONNX Runtime's output equals the estimator's
    prediction on the scaler's ONNX output (the scaler itself computes in float32, so
    the trees are compared on the features they receive)."""
    skl2onnx = pytest.importorskip("skl2onnx")
    ort = pytest.importorskip("onnxruntime")
    import onnx
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import gpuboost.onnx

    gpuboost.onnx.register_skl2onnx()
    X, signal, rng = _data()
    X = np.nan_to_num(X)
    y = _labels(kind, signal, rng) if kind != "strings" else np.where(signal > 0, "up", "down")
    estimator = make()
    pipeline = make_pipeline(StandardScaler(), estimator).fit(X, y)
    classifier = hasattr(estimator, "classes_")
    model = skl2onnx.convert_sklearn(
        pipeline,
        initial_types=[("input", skl2onnx.common.data_types.FloatTensorType([None, X.shape[1]]))],
        options={id(estimator): {"zipmap": False}} if classifier else None,
        target_opset={"": 17, "ai.onnx.ml": 3},
    )
    scaled = model.graph.node[0].output[0]
    model.graph.output.append(
        onnx.helper.make_tensor_value_info(scaled, onnx.TensorProto.FLOAT, [None, X.shape[1]])
    )
    outputs = ort.InferenceSession(model.SerializeToString()).run(None, {"input": X})
    features = outputs[-1]
    if classifier:
        np.testing.assert_array_equal(outputs[0], estimator.predict(features))
        np.testing.assert_allclose(
            outputs[1], estimator.predict_proba(features), rtol=1e-5, atol=1e-6
        )
    else:
        expected = estimator.predict(features)
        np.testing.assert_allclose(
            outputs[0].reshape(expected.shape), expected, rtol=1e-5, atol=1e-6
        )
