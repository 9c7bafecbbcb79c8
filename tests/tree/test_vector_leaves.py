"""Several targets and vector-leaf trees (multi_strategy='multi_output_tree';
docs/DESIGN.md "Vector leaves"): the split scan against its one-output definition and
its loop version, training on every backend, the model file, predictions, SHAP and what
is refused."""

import json

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cpu.backend import CpuBackend
from gpuboost.backends.cpu.jit import forced_variant
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.backends.numpy.backend import NumpyBackend
from gpuboost.backends.numpy.split_scan import find_best_splits
from gpuboost.core.gain import SplitParams
from gpuboost.core.quantize import quantize
from gpuboost.core.vector_split import (
    find_best_vector_splits,
    find_best_vector_splits_naive,
    output_fields,
)
from gpuboost.data.dataset import Dataset
from gpuboost.plotting import tree_to_dot
from gpuboost.warmup import VARIANTS


def _data(n_rows=400, n_features=5, n_targets=3, seed=0, missing=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    if missing:
        X[rng.random(n_rows) < 0.1, 1] = np.nan
    base = X[:, 0] + np.where(np.isnan(X[:, 1]), 0.5, X[:, 1] > 0.3)
    Y = np.column_stack(
        [base * (t + 1) + X[:, 2] * t + 0.1 * rng.normal(size=n_rows) for t in range(n_targets)]
    )
    return X, Y


def _histograms(X, Y, n_nodes=3, seed=1):
    """Histograms of random row segments of ``k`` squared-error outputs (NumPy backend),
    and their scales."""
    backend = NumpyBackend()
    data = backend.prepare(Dataset(X, label=Y[:, 0], max_bin=31))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X)).astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(1, len(X)), size=n_nodes - 1, replace=False))
    begins, ends = np.r_[0, cuts], np.r_[cuts, len(X)]
    columns, scales = [], []
    for t in range(Y.shape[1]):
        quantized_g, scale_g = quantize(np, 0.3 * t - Y[:, t])
        quantized_h, scale_h = quantize(np, np.full(len(X), 1.0 + t))
        columns += [quantized_g, quantized_h]
        scales.append((scale_g, scale_h))
    pairs = np.column_stack(columns)
    histograms = backend.build_output_histograms(data, pairs, order, begins, ends)
    return data, histograms, scales


@pytest.mark.parametrize(
    "params",
    [
        SplitParams(),
        SplitParams(reg_alpha=0.5, reg_lambda=2.0, max_delta_step=0.7, min_child_weight=5.0),
        SplitParams(gamma=3.0, min_data_in_leaf=20),
    ],
)
def test_one_output_scan_is_the_one_output_scan(params):
    X, Y = _data(n_targets=1)
    data, histograms, scales = _histograms(X, Y)
    records = find_best_splits(
        histograms.per_output(np)[0], *scales[0], data.n_value_bins, data.missing_bin, params
    )
    table = find_best_vector_splits(
        np, histograms, scales, data.n_value_bins, data.missing_bin, params
    )
    np.testing.assert_array_equal(table["feature"], records["feature"])
    np.testing.assert_array_equal(table["bin"], records["bin"])
    np.testing.assert_array_equal(table["default_left"], records["default_left"])
    np.testing.assert_array_equal(table["gain"], records["gain"])  # the same bits
    found = records["feature"] >= 0
    assert found.any()
    left = table["left_fields"][found]
    for field, name in zip(output_fields(0), ("left_sum_gradients", "left_sum_hessians")):
        np.testing.assert_array_equal(left[:, field], records[name][found])
    np.testing.assert_array_equal(left[:, output_fields(0)[2]], records["left_count"][found])
    grad = output_fields(0)[0]
    np.testing.assert_array_equal(table["fields"][:, grad], records["sum_gradients"])


@pytest.mark.parametrize("n_targets", [2, 3])
@pytest.mark.parametrize(
    "params", [SplitParams(), SplitParams(reg_alpha=0.3, max_delta_step=0.5, min_child_weight=40.0)]
)
def test_vector_scan_is_its_loop_version(n_targets, params):
    X, Y = _data(n_targets=n_targets, seed=n_targets)
    data, histograms, scales = _histograms(X, Y, n_nodes=4)
    table = find_best_vector_splits(
        np, histograms, scales, data.n_value_bins, data.missing_bin, params
    )
    naive = find_best_vector_splits_naive(
        histograms, scales, data.n_value_bins, data.missing_bin, params
    )
    for name in table:
        np.testing.assert_array_equal(table[name], naive[name], err_msg=name)
    assert (table["feature"] >= 0).any()


@pytest.mark.parametrize("n_nodes", [5, 60])
@pytest.mark.parametrize("n_targets", [1, 3])
@pytest.mark.parametrize(
    "params",
    [
        SplitParams(),
        SplitParams(reg_alpha=0.3, max_delta_step=0.5, min_child_weight=40.0, gamma=1.0),
        SplitParams(min_data_in_leaf=0, min_child_weight=0.0),
    ],
)
def test_compiled_backend_is_the_definition(n_targets, params, n_nodes):
    """The compiled CPU backend's histograms (every output in one pass, children with
    their siblings) and scan (with and without a feature mask)
    give the definition's integers and table; with 60 nodes of about 7 rows most bins
    are empty (the compiled scan evaluates only bin 0 and the bins that hold rows)."""
    X, Y = _data(n_targets=n_targets, seed=4 + n_targets)
    data, histograms, scales = _histograms(X, Y, n_nodes=n_nodes)
    if n_nodes > 5:
        empty = histograms.counts[:, :, :-1] == 0
        assert empty.mean() > 0.5 and empty[:, :, 0].any()
    cpu = CpuBackend()
    cpu_data = cpu.prepare(Dataset(X, label=Y[:, 0], max_bin=31))
    rng = np.random.default_rng(2)
    pairs = np.column_stack(
        [rng.integers(-9 if field % 2 == 0 else 0, 9, len(X)) for field in range(2 * n_targets)]
    ).astype(np.int32)
    order = rng.permutation(len(X)).astype(np.int32)
    begins, ends = [0, 50, 50], [50, 50, 300]
    reference = NumpyBackend()
    built = [
        backend.build_output_histograms(backend_data, pairs, order, begins, ends)
        for backend_data, backend in ((data, reference), (cpu_data, cpu))
    ]
    np.testing.assert_array_equal(built[1].cells, built[0].cells)  # the padding too
    np.testing.assert_array_equal(built[1].counts, built[0].counts)
    cases = ((data, reference, built[0]), (cpu_data, cpu, built[1]))
    children = [
        backend.build_output_children_histograms(
            backend_data, pairs, order, [300, 320], [320, 400], parents, [2, 0]
        )
        for backend_data, backend, parents in cases
    ]
    np.testing.assert_array_equal(children[1].cells, children[0].cells)
    np.testing.assert_array_equal(children[1].counts, children[0].counts)
    mask = rng.random((len(histograms), X.shape[1])) < 0.6
    for feature_mask in (None, mask):
        definition = find_best_vector_splits(
            np, histograms, scales, data.n_value_bins, data.missing_bin, params, feature_mask
        )
        for variant in VARIANTS:  # the parallel kernel and its serial twin
            with forced_variant(variant):
                table = cpu.find_best_vector_splits(
                    cpu_data, histograms, scales, params, feature_mask
                )
            for name in table:
                np.testing.assert_array_equal(table[name], definition[name], err_msg=name)
        # not vacuous (nodes of about 7 rows have no 40 of hessian: no split there)
        assert (definition["feature"] >= 0).any() or params.min_child_weight == 40.0 < n_nodes


def test_vector_scan_sums_the_outputs_gains():
    """The chosen split maximizes the summed gain, which can differ from each output's
    best: two outputs that want different features."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 2))
    Y = np.column_stack([X[:, 0] > 0, 3.0 * (X[:, 1] > 0)]).astype(np.float64)
    data, histograms, scales = _histograms(X, Y, n_nodes=1)
    table = find_best_vector_splits(
        np, histograms, scales, data.n_value_bins, data.missing_bin, SplitParams()
    )
    assert table["feature"][0] == 1  # the larger target's feature


def _train(params, X, Y, rounds=6, **dataset_args):
    return gpuboost.train(
        {"device": "cpu", "verbosity": 0, **params},
        Dataset(X, label=Y, **dataset_args),
        num_boost_round=rounds,
    )


def test_vector_leaf_model_predicts_what_it_trained():
    X, Y = _data()
    evals_result = {}
    booster = gpuboost.train(
        {"device": "cpu", "multi_strategy": "multi_output_tree", "max_depth": 4},
        Dataset(X, label=Y),
        num_boost_round=8,
        evals=[(Dataset(X, label=Y), "train")],
        evals_result=evals_result,
        verbose_eval=False,
    )
    assert booster.vector_leaves and booster.n_outputs == 3
    assert len(booster.trees) == 8 and booster.trees[0].value.shape[1] == 3
    prediction = booster.predict(X)
    assert prediction.shape == (len(X), 3)
    rmse = np.sqrt(np.mean((prediction - Y) ** 2))
    assert evals_result["train"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)
    assert evals_result["train"]["rmse"][-1] < evals_result["train"]["rmse"][0]
    # pred_leaf: one leaf per tree; the vector of that leaf is each output's addition
    leaves = booster.predict(X, pred_leaf=True)
    assert leaves.shape == (len(X), 8)
    margin = booster.base_margin + sum(
        tree.value[leaves[:, i]] for i, tree in enumerate(booster.trees)
    )
    np.testing.assert_allclose(booster.predict(X, output_margin=True), margin, rtol=1e-12)
    # iteration ranges count rounds (one tree each)
    assert booster.predict(X, iteration_range=(0, 3)).shape == (len(X), 3)


def test_vector_leaf_model_file_round_trip_and_validation(tmp_path):
    X, Y = _data()
    booster = _train({"multi_strategy": "multi_output_tree"}, X, Y)
    path = tmp_path / "model.json"
    booster.save_model(path)
    text = path.read_text()
    document = json.loads(text)
    assert document["version"] == 6
    assert len(document["trees"][0]["value"][0]) == 3
    loaded = gpuboost.Booster.load_model(path)
    assert loaded.save_raw() == booster.save_raw()
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    broken = json.loads(text)
    broken["trees"][1]["value"][0] = broken["trees"][1]["value"][0][:2]
    with pytest.raises(ValueError, match="one list of 3 numbers per node"):
        gpuboost.Booster.from_json(json.dumps(broken))
    broken = json.loads(text)
    broken["version"] = 5
    with pytest.raises(ValueError, match="version 6"):
        gpuboost.Booster.from_json(json.dumps(broken))
    broken = json.loads(text)
    broken["trees"].append(broken["trees"][0])
    broken["trees"][0]["value"] = [v[0] for v in broken["trees"][0]["value"]]
    with pytest.raises(ValueError, match="one list of 3 numbers per node"):
        gpuboost.Booster.from_json(json.dumps(broken))


def test_several_targets_one_tree_per_output_are_the_single_target_models():
    X, Y = _data()
    params = {"max_depth": 3}
    booster = _train(params, X, Y)
    assert not booster.vector_leaves and len(booster.trees) == 6 * 3
    for t in range(3):
        single = _train(params, X, Y[:, t])
        assert booster.trees[t::3] == single.trees
        np.testing.assert_array_equal(booster.predict(X)[:, t], single.predict(X))


def test_backends_and_emulated_cuda_give_the_same_bytes(monkeypatch):
    X, Y = _data(n_targets=2)
    params = {"multi_strategy": "multi_output_tree", "max_depth": 3, "subsample": 0.7}
    reference = _train(params, X, Y).save_raw()
    monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    assert _train(params, X, Y).save_raw() == reference
    with emulated_kernels():
        assert _train(dict(params, device="cuda"), X, Y).save_raw() == reference


def test_shap_values_per_target_sum_to_the_margins():
    X, Y = _data(n_rows=200)
    booster = _train({"multi_strategy": "multi_output_tree", "max_depth": 3}, X, Y)
    contributions = booster.predict(X[:20], pred_contribs=True)
    assert contributions.shape == (20, 3, X.shape[1] + 1)
    np.testing.assert_allclose(
        contributions.sum(axis=2), booster.predict(X[:20], output_margin=True), atol=1e-9
    )


def test_multiclass_and_multilabel_vector_leaves():
    X, Y = _data()
    classes = np.digitize(Y[:, 0], np.quantile(Y[:, 0], [0.3, 0.6])).astype(np.float64)
    booster = _train(
        {"objective": "multi:softprob", "num_class": 3, "multi_strategy": "multi_output_tree"},
        X,
        classes,
    )
    probabilities = booster.predict(X)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert (probabilities.argmax(axis=1) == classes).mean() > 0.7
    labels = (Y > np.median(Y, axis=0)).astype(np.float64)
    params = {"objective": "binary:logistic", "multi_strategy": "multi_output_tree"}
    booster = _train(params, X, labels)
    assert booster.predict(X).shape == labels.shape
    assert ((booster.predict(X) > 0.5) == labels).mean() > 0.8


def test_dumps_show_vector_leaves():
    X, Y = _data()
    booster = _train({"multi_strategy": "multi_output_tree", "max_depth": 2}, X, Y, rounds=1)
    text = booster.dump_model()[0]
    assert ":leaf=[" in text
    tree = json.loads(booster.dump_model(format="json")[0])
    leaf = tree["children"][0]["children"][0]
    assert isinstance(leaf["leaf"], list) and len(leaf["leaf"]) == 3
    assert "leaf=[" in tree_to_dot(booster, 0)  # plot_tree's and graphviz's labels
    pytest.importorskip("pandas")
    frame = booster.trees_to_dataframe()
    leaves = frame[frame["Feature"] == "Leaf"]
    assert all(len(v) == 3 for v in leaves["Gain"])


def test_sklearn_regressor_takes_several_targets():
    X, Y = _data()
    for strategy in ("one_output_per_tree", "multi_output_tree"):
        model = gpuboost.GBRegressor(n_estimators=5, device="cpu", multi_strategy=strategy).fit(
            X, Y
        )
        assert model.predict(X).shape == Y.shape


@pytest.mark.parametrize(
    "params, match",
    [
        ({"tree_method": "exact"}, "tree_method='exact'"),
        ({"monotone_constraints": "(1,0,0,0,0)"}, "monotone_constraints"),
        ({"data_sample_strategy": "goss"}, "gradient-based row sampling"),
        ({"booster": "dart"}, "booster='dart'"),
    ],
)
def test_vector_leaves_refuse_what_they_do_not_take(params, match):
    X, Y = _data()
    with pytest.raises(ValueError, match=match):
        _train(dict(params, multi_strategy="multi_output_tree"), X, Y)


def test_refusals_of_several_targets():
    X, Y = _data()
    per_target = _train({}, X, Y, rounds=2)
    with pytest.raises(ValueError, match="continue it with its multi_strategy"):
        gpuboost.train(
            {"device": "cpu", "multi_strategy": "multi_output_tree"},
            Dataset(X, label=Y),
            num_boost_round=1,
            init_model=per_target,
        )
    with pytest.raises(ValueError, match="takes one label per row"):
        _train({"objective": "reg:absoluteerror"}, X, Y)
    with pytest.raises(ValueError, match="num_target=2"):
        _train({"num_target": 2}, X, Y)
    booster = _train({"multi_strategy": "multi_output_tree"}, X, Y, rounds=2)
    with pytest.raises(ValueError, match="refit does not take vector-leaf"):
        booster.refit(X, Y)
    categorical = np.column_stack([X[:, :4], np.arange(len(X)) % 4])
    with pytest.raises(ValueError, match="categorical features"):
        _train(
            {"multi_strategy": "multi_output_tree"},
            categorical,
            Y,
            categorical_features=[4],
        )


def test_distributed_training_refuses_several_targets():
    pytest.importorskip("distributed")
    from gpuboost.dask.train import check_distributed_params
    from gpuboost.params import validate_params

    for params in ({"multi_strategy": "multi_output_tree"}, {"num_target": 3}):
        with pytest.raises(ValueError, match="multi_output_tree' or several targets"):
            check_distributed_params(validate_params(params))


@pytest.mark.parametrize(
    "objective, strategy",
    [
        ("reg:squarederror", "multi_output_tree"),
        ("reg:squarederror", "one_output_per_tree"),
        ("binary:logistic", "multi_output_tree"),
        ("count:poisson", "multi_output_tree"),
    ],
)
def test_onnx_export_of_several_targets(objective, strategy):
    """Each target's prediction, its own link, never sorted (as several levels are)."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    X, Y = _data(n_rows=300)
    X = X.astype(np.float32)
    label = {
        "reg:squarederror": Y,
        "binary:logistic": (Y > np.median(Y, axis=0)).astype(np.float64),
        "count:poisson": np.round(np.abs(Y)),
    }[objective]
    booster = _train({"objective": objective, "multi_strategy": strategy}, X, label)
    session = ort.InferenceSession(booster.to_onnx())
    outputs = session.run(None, {session.get_inputs()[0].name: X})
    np.testing.assert_allclose(outputs[0], booster.predict(X), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("strategy", ["one_output_per_tree", "multi_output_tree"])
def test_sklearn_classifier_takes_a_multilabel_indicator(strategy, tmp_path):
    X, Y = _data()
    labels = Y > np.median(Y, axis=0)  # bool indicator matrix
    model = gpuboost.GBClassifier(n_estimators=8, device="cpu", multi_strategy=strategy)
    model.fit(X, labels, eval_set=[(X, labels)])
    assert list(model.classes_) == [0, 1, 2]
    probabilities = model.predict_proba(X)
    assert probabilities.shape == labels.shape
    np.testing.assert_array_equal(model.predict(X), (probabilities > 0.5).astype(int))
    assert model.score(X, labels) > 0.5  # subset accuracy
    path = tmp_path / "model.json"
    model.save_model(path)
    loaded = gpuboost.GBClassifier()
    loaded.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert model.fit(X, labels[:, 0]).predict(X).shape == (len(X),)  # refit on one label
    with pytest.raises(ValueError, match="multi-label indicator matrix"):
        model.fit(X, 2 * labels)
    with pytest.raises(ValueError, match="class_weight"):
        gpuboost.GBClassifier(class_weight="balanced").fit(X, labels)
