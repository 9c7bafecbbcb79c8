"""Models with categorical splits: training, prediction by label, files, dumps, and the
same models on every backend (compiled CPU, NumPy reference, emulated CUDA)."""

import json

import numpy as np
import pandas as pd
import pytest
from _cases import small_categorical_tree
from _parity import assert_predictions_match, assert_runs_match, train_on_both

import gpuboost
from gpuboost import Booster
from gpuboost.backends.categorical import predict_leaves, predict_leaves_naive
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR

#: Parameters of the small categorical trainings.
PARAMS = {"max_depth": 4, "min_data_per_group": 5, "verbosity": 0}


def _data(n=600, seed=0, missing=True):
    """A 40-level category with random effects, a 3-level one and a numeric feature."""
    rng = np.random.default_rng(seed)
    big = rng.integers(0, 40, n)
    small = rng.choice(["a", "b", "c"], n)
    x = rng.normal(size=n)
    effects = np.random.default_rng(123).normal(size=40) * 2  # the same for every seed
    y = effects[big] + (small == "a") * 1.5 + x + 0.1 * rng.normal(size=n)
    frame = pd.DataFrame(
        {"big": pd.Categorical([f"k{v}" for v in big]), "small": pd.Categorical(small), "x": x}
    )
    if missing:
        frame.loc[rng.random(n) < 0.05, "big"] = np.nan
        frame.loc[rng.random(n) < 0.05, "x"] = np.nan
    return frame, y


@pytest.fixture(scope="module")
def model():
    frame, y = _data()
    booster = gpuboost.train(dict(PARAMS, device="cpu"), gpuboost.Dataset(frame, label=y), 8)
    return booster, frame, y


def test_categorical_splits_beat_integer_codes():
    frame, y = _data(n=1500, seed=3, missing=False)
    test_frame, test_y = _data(n=1500, seed=4, missing=False)
    test_frame["big"] = test_frame["big"].cat.set_categories(frame["big"].cat.categories)
    test_frame["small"] = test_frame["small"].cat.set_categories(frame["small"].cat.categories)
    params = dict(PARAMS, device="cpu", max_depth=3)
    native = gpuboost.train(params, gpuboost.Dataset(frame, label=y), 30)

    def codes(f):
        return np.column_stack([f["big"].cat.codes, f["small"].cat.codes, f["x"]]).astype(float)

    coded = gpuboost.train(params, gpuboost.Dataset(codes(frame), label=y), 30)
    rmse_native = np.sqrt(np.mean((native.predict(test_frame) - test_y) ** 2))
    rmse_codes = np.sqrt(np.mean((coded.predict(codes(test_frame)) - test_y) ** 2))
    assert rmse_native < 0.8 * rmse_codes
    assert any(tree.has_categorical for tree in native.trees)


def test_prediction_recodes_by_label(model):
    booster, frame, _ = model
    expected = booster.predict(frame)
    # Another category order, and the columns in another order (matched by name).
    reordered = frame[["x", "small", "big"]].copy()
    reordered["big"] = reordered["big"].cat.reorder_categories(
        list(reversed(reordered["big"].cat.categories))
    )
    np.testing.assert_array_equal(booster.predict(reordered), expected)
    # Strings instead of categories.
    as_text = frame.copy()
    as_text["small"] = as_text["small"].astype(object)
    np.testing.assert_array_equal(booster.predict(as_text), expected)
    # An unseen category predicts as missing (the default direction).
    unseen, missing = frame.head(20).copy(), frame.head(20).copy()
    unseen["big"] = unseen["big"].cat.add_categories(["never seen"])
    unseen["big"] = "never seen"
    missing["big"] = np.nan
    np.testing.assert_array_equal(booster.predict(unseen), booster.predict(missing))
    assert not np.array_equal(booster.predict(missing), expected[:20])


def test_save_load_and_version(model, tmp_path):
    booster, frame, _ = model
    path = tmp_path / "model.json"
    booster.save_model(path)
    document = json.loads(path.read_text())
    assert document["version"] == 2
    assert document["learner"]["categories"][0] == booster.categories[0]
    assert any("cat_bits" in tree for tree in document["trees"])
    loaded = Booster.load_model(path)
    assert loaded.save_raw() == booster.save_raw()
    np.testing.assert_array_equal(loaded.predict(frame), booster.predict(frame))
    # A model without categorical features keeps writing version 1.
    numeric = gpuboost.train({"device": "cpu"}, gpuboost.Dataset(np.eye(4), label=[1, 2, 3, 4]), 1)
    assert json.loads(numeric.save_raw())["version"] == 1


def _set_last_word_bit(tree, bit):
    """Set ``bit`` of the last word of the first category set (past every feature's
    categories: they number 3 or 40)."""
    node = next(
        n
        for n in range(len(tree["feature"]))
        if tree["cat_offsets"][n + 1] > tree["cat_offsets"][n]
    )
    tree["cat_bits"][tree["cat_offsets"][node + 1] - 1] |= 1 << bit


def _corrupted(booster, change):
    document = json.loads(booster.save_raw())
    tree = next(t for t in document["trees"] if "cat_bits" in t)
    change(document, tree)
    return json.dumps(document)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d, t: _set_last_word_bit(t, 31), "outside"),
        (lambda d, t: t["cat_bits"].append(1), "cat_offsets"),
        (lambda d, t: t.pop("cat_bits"), "come together"),
        (lambda d, t: t["cat_offsets"].__setitem__(0, 1), "cat_offsets"),
        (lambda d, t: d["learner"].pop("categories"), "categories"),
        (lambda d, t: d["learner"]["categories"].__setitem__(0, None), "numeric feature"),
        (
            lambda d, t: d["learner"]["categories"][0].append(d["learner"]["categories"][0][0]),
            "unique",
        ),
        (lambda d, t: d["learner"]["categories"][0].__setitem__(0, [1]), "strings and numbers"),
        (lambda d, t: d.__setitem__("version", 1), "version 2"),
        (lambda d, t: t["cat_bits"].__setitem__(0, 2**32), r"\[0, 2\*\*32\)"),
    ],
)
def test_invalid_category_sets_are_rejected(model, change, message):
    booster, _, _ = model
    with pytest.raises(ValueError, match=message):
        Booster.from_json(_corrupted(booster, change))


def test_a_categorical_feature_split_by_a_threshold_is_rejected(model):
    booster, _, _ = model

    def change(document, tree):
        node = next(
            n
            for n in range(len(tree["feature"]))
            if tree["cat_offsets"][n + 1] > tree["cat_offsets"][n]
        )
        size = tree["cat_offsets"][node + 1] - tree["cat_offsets"][node]
        begin = tree["cat_offsets"][node]
        del tree["cat_bits"][begin : begin + size]
        tree["cat_offsets"] = tree["cat_offsets"][: node + 1] + [
            v - size for v in tree["cat_offsets"][node + 1 :]
        ]

    with pytest.raises(ValueError, match="by a threshold"):
        Booster.from_json(_corrupted(booster, change))


def test_dumps_show_category_labels(model):
    booster, _, _ = model
    text = booster.get_dump()[0]
    assert "big in {'k" in text or "small in {'" in text
    tree = json.loads(booster.get_dump(dump_format="json")[0])
    assert tree["decision_type"] == "in" and all(
        isinstance(v, str) for v in tree["split_condition"]
    )


def test_vectorized_traversal_equals_the_loop(model):
    booster, frame, _ = model
    X = booster._check_features(frame)[0].copy()
    X[:5, 0] = [np.nan, 1e9, -3, 2.5, 39]  # missing, past the bitsets, negative, fraction
    for tree in booster.trees:
        np.testing.assert_array_equal(
            predict_leaves(np, np.asarray, X, tree), predict_leaves_naive(tree, X=X)
        )
    dataset = gpuboost.Dataset(frame)
    dataset.bind_binning(255)
    for tree in booster.trees:
        np.testing.assert_array_equal(
            predict_leaves(np, np.asarray, dataset.X_binned, tree, 255),
            predict_leaves_naive(tree, X_binned=dataset.X_binned, missing_bin=255),
        )


def test_the_loop_looks_codes_past_a_nodes_words_up_as_the_vectorized_traversal():
    """Feature 1's set is one word, the tree's widest two: codes 32 .. 63 go right (not
    in the set), 64 and beyond and invalid codes take the default (left at node 2)."""
    tree = small_categorical_tree()
    X = np.array([[7.0, value] for value in (0, 1, 32, 40, 63, 64, 1000, -1, 0.5, np.nan)])
    expected = [5, 6, 6, 6, 6, 5, 5, 5, 5, 5]
    np.testing.assert_array_equal(predict_leaves(np, np.asarray, X, tree), expected)
    np.testing.assert_array_equal(predict_leaves_naive(tree, X=X), expected)
    binned = X[:7].astype(np.uint8)  # bins 0 .. 63 and 64 (1000 -> 232): no missing bin
    np.testing.assert_array_equal(
        predict_leaves_naive(tree, X_binned=binned, missing_bin=255),
        predict_leaves(np, np.asarray, binned, tree, 255),
    )


def test_training_rows_follow_their_leaves(model):
    """The partition (categorical splits on bins) and the raw traversal agree: the margins
    of the training rows equal the prediction of the trained model."""
    frame, y = _data(seed=5)
    dataset = gpuboost.Dataset(frame, label=y)
    result = {}
    booster = gpuboost.train(
        dict(PARAMS, device="cpu", subsample=0.7),
        dataset,
        5,
        evals=[(dataset, "train")],
        evals_result=result,
        verbose_eval=False,
    )
    rmse = np.sqrt(np.mean((booster.predict(frame) - y) ** 2))
    assert result["train"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"grow_policy": "lossguide", "max_leaves": 12, "max_depth": 0},
        {"max_cat_to_onehot": 64, "max_cat": 16, "colsample_bynode": 0.7},
        {"cat_penalty_factor": 0.0},
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
    ],
)
def test_cpu_and_emulated_cuda_give_the_same_model(params, emulated_cuda, monkeypatch):
    frame, y = _data(n=300, seed=6)
    if params.get("num_class"):
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(float)
    runs = train_on_both(dict(PARAMS, **params), lambda: gpuboost.Dataset(frame, label=y), 3)
    assert any(tree.has_categorical for tree in runs["cpu"].model.trees)
    assert_runs_match(runs)
    cpu, cuda = runs["cpu"].model, runs["cuda"].model
    cuda.params["device"] = "cuda"
    assert_predictions_match(
        cpu, cuda, frame, kinds=({}, {"output_margin": True}, {"pred_leaf": True})
    )
    # ... and the NumPy reference trains the same bytes as the compiled CPU backend.
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    reference = train_on_both(
        dict(PARAMS, **params), lambda: gpuboost.Dataset(frame, label=y), 3, devices=("cpu",)
    )
    assert reference["cpu"].model.save_raw() == cpu.save_raw()


def test_methods_without_categorical_support_refuse():
    frame, y = _data(n=100)
    for method in ("exact", "approx"):
        with pytest.raises(ValueError, match=f"tree_method='{method}' does not support"):
            gpuboost.train(
                {"device": "cpu", "tree_method": method}, gpuboost.Dataset(frame, label=y), 1
            )
    with pytest.raises(ValueError, match="adaboost' does not support categorical"):
        gpuboost.train(
            {"device": "cpu", "booster": "adaboost", "objective": "binary:logistic"},
            gpuboost.Dataset(frame, label=(y > 0).astype(float)),
            1,
        )


def test_numeric_models_refuse_category_columns():
    frame, y = _data(n=100)
    booster = gpuboost.train(
        {"device": "cpu"}, gpuboost.Dataset(frame[["x"]].fillna(0).to_numpy(), label=y), 1
    )
    with pytest.raises(TypeError, match="categorical"):
        booster.predict(frame[["big"]])


def test_an_eval_set_with_categories_of_its_own_is_recoded_by_label():
    """An evaluation Dataset built without reference=dtrain numbers its categories itself
    (another order, a label training never saw): its metric is the metric of the
    model's predictions on it, as with reference=dtrain."""
    frame, y = _data()
    valid, valid_y = _data(n=300, seed=9)
    valid["big"] = valid["big"].cat.reorder_categories(valid["big"].cat.categories[::-1])
    valid["small"] = valid["small"].cat.add_categories(["unseen"])
    valid.loc[valid.index[:20], "small"] = "unseen"
    dtrain = gpuboost.Dataset(frame, label=y)
    results = {}
    for name, dvalid in (
        ("own", gpuboost.Dataset(valid, label=valid_y)),
        ("reference", gpuboost.Dataset(valid, label=valid_y, reference=dtrain)),
    ):
        assert (dvalid.categories == dtrain.categories) == (name == "reference")
        log = {}
        booster = gpuboost.train(
            dict(PARAMS, device="cpu"), dtrain, 5, evals=[(dvalid, "valid")], evals_result=log
        )
        results[name] = log["valid"]["rmse"]
        rmse = np.sqrt(np.mean((booster.predict(valid) - valid_y) ** 2))
        assert results[name][-1] == pytest.approx(rmse, rel=1e-12)
    assert results["own"] == results["reference"]


def test_an_eval_set_with_a_numeric_column_for_a_categorical_one_is_refused():
    frame, y = _data()
    valid = frame.assign(big=frame["big"].cat.codes.astype(float))
    with pytest.raises(ValueError, match="Feature 0 is categorical"):
        gpuboost.train(
            dict(PARAMS, device="cpu"),
            gpuboost.Dataset(frame, label=y),
            2,
            evals=[(gpuboost.Dataset(valid, label=y), "valid")],
        )


def test_at_defaults_a_few_hundred_rows_get_many_vs_many_sets():
    """Issue 33's default ``min_data_per_group=10`` (LightGBM's is 100): on 240 rows a
    12-level category (20 rows each) is split by sets of several categories, and the
    held-out error is lower than with 100, which tries almost no set on nodes this size."""
    rng = np.random.default_rng(4)
    n = 480
    codes = rng.integers(0, 12, n)
    effects = np.random.default_rng(5).normal(size=12) * 2
    frame = pd.DataFrame({"big": pd.Categorical([f"k{v}" for v in codes]), "x": rng.normal(size=n)})
    y = effects[codes] + 0.5 * frame["x"].to_numpy() + 0.3 * rng.normal(size=n)
    train, test = slice(0, 240), slice(240, None)
    errors, sets = {}, {}
    for group in (None, 100):
        params = (
            {"verbosity": 0} if group is None else {"verbosity": 0, "min_data_per_group": group}
        )
        booster = gpuboost.train(params, gpuboost.Dataset(frame[train], label=y[train]), 30)
        errors[group] = float(np.sqrt(np.mean((booster.predict(frame[test]) - y[test]) ** 2)))
        sets[group] = [
            len(node["split_condition"])
            for node in _nodes(json.loads(booster.get_dump(dump_format="json")[0]))
            if node.get("split") == "big"
        ]
    assert max(sets[None]) > 1, sets  # a set of several categories, at defaults
    assert errors[None] < 0.9 * errors[100], errors


def _nodes(node):
    yield node
    for child in node.get("children", []):
        yield from _nodes(child)


def _few_rows_each(n_categories=48, rows_each=11, seed=7):
    """Cigarette's shape: a category of ``n_categories`` levels with ``rows_each`` rows
    each (about 8 in a 75 % training split, below LightGBM's ``cat_smooth`` of 10) and a
    strong effect, plus a weak numeric feature. The first ``rows_each - 3`` rows of every
    level train, the last 3 test."""
    rng = np.random.default_rng(seed)
    codes = np.tile(np.arange(n_categories), rows_each)
    effects = np.random.default_rng(seed + 1).normal(size=n_categories) * 2.0
    x = rng.normal(size=codes.size)
    y = effects[codes] + 0.3 * x + 0.3 * rng.normal(size=codes.size)
    frame = pd.DataFrame({"state": pd.Categorical([f"s{c:02d}" for c in codes]), "x": x})
    train = np.arange(codes.size) < (rows_each - 3) * n_categories
    return frame, y, train


def test_cat_smooth_estimate_splits_categories_of_a_few_rows():
    """Issue 33: with 8 training rows per category, LightGBM's fixed ``cat_smooth=10``
    leaves every category out of the many-vs-many order (the column is never split);
    the per-tree estimate (on at defaults for squared error) gives the column's strong
    effects a small ``cat_smooth`` and splits it, with a held-out error many times
    lower (both with LightGBM's ``cat_smooth``, the estimate's cap)."""
    frame, y, train = _few_rows_each()
    errors, used = {}, {}
    for estimate in (None, False):
        params = {"verbosity": 0, "learning_rate": 0.1, "cat_smooth": 10}
        if estimate is not None:
            params["cat_smooth_estimate"] = estimate
        booster = gpuboost.train(params, gpuboost.Dataset(frame[train], label=y[train]), 60)
        errors[estimate] = float(
            np.sqrt(np.mean((booster.predict(frame[~train]) - y[~train]) ** 2))
        )
        used[estimate] = sum(int(np.count_nonzero(tree.is_categorical)) for tree in booster.trees)
    assert used[False] == 0 and used[None] > 0, used
    assert errors[None] < 0.5 * errors[False], errors


def test_cat_smooth_estimate_in_the_model_file():
    """A categorical model saves ``cat_smooth_estimate`` when on, and a categorical file
    without it (written before it existed) reads as off, LightGBM's fixed
    ``cat_smooth``; a model without categorical features never writes it (its bytes do
    not change) and reads the objective's default."""
    frame, y, _ = _few_rows_each()
    booster = gpuboost.train({"verbosity": 0}, gpuboost.Dataset(frame, label=y), 2)
    document = json.loads(booster.save_raw())
    assert document["learner"]["params"]["cat_smooth_estimate"] is True
    assert Booster.from_json(booster.to_json()).save_raw() == booster.save_raw()
    del document["learner"]["params"]["cat_smooth_estimate"]
    assert Booster.from_json(json.dumps(document)).params["cat_smooth_estimate"] is False
    off = gpuboost.train(
        {"verbosity": 0, "cat_smooth_estimate": False}, gpuboost.Dataset(frame, label=y), 2
    )
    assert "cat_smooth_estimate" not in json.loads(off.save_raw())["learner"]["params"]
    numeric = gpuboost.train({"verbosity": 0}, gpuboost.Dataset(np.eye(4), label=[1, 2, 3, 4]), 1)
    assert "cat_smooth_estimate" not in json.loads(numeric.save_raw())["learner"]["params"]
    assert Booster.from_json(numeric.to_json()).params["cat_smooth_estimate"] is True


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic"])
def test_cat_penalty_factor_prices_the_categorical_splits_alone(objective):
    """A split penalty too high for any split leaves one-leaf trees at factor 1; at factor
    0 the many-vs-many splits pay none of it (their gamma is the user's, 0) and the trees
    split on the 40-level column only (the 3-level one, split one-vs-rest, pays the
    numeric price); at 0.5 they pay half, still too much."""
    frame, y = _data(n=600, seed=3)
    if objective == "binary:logistic":
        y = (y > np.median(y)).astype(float)
    params = dict(PARAMS, objective=objective, split_penalty=1e9)
    dataset = gpuboost.Dataset(frame, label=y)
    features = {}
    for factor in (1.0, 0.5, 0.0):
        booster = gpuboost.train(dict(params, cat_penalty_factor=factor), dataset, 3)
        split = [t.feature[~t.is_leaf] for t in booster.trees]
        features[factor] = set(np.concatenate(split).tolist())
        categorical = np.concatenate([t.is_categorical[~t.is_leaf] for t in booster.trees])
        assert categorical.all(), factor
    assert features[1.0] == set() and features[0.5] == set(), features
    assert features[0.0] == {0}, features


def test_changed_categorical_defaults_in_the_model_file():
    """The categorical defaults of 2026-12-01 (issue 33) are saved by categorical models;
    a categorical file without them was trained with the earlier values and reads those;
    a model without categorical features writes none of them (its bytes do not change)."""
    earlier = {
        "cat_penalty_factor": 1.0,
        "cat_smooth": 10.0,
        "cat_l2": 3.0,
        "max_cat_threshold": 32,
    }
    frame, y, _ = _few_rows_each()
    booster = gpuboost.train({"verbosity": 0}, gpuboost.Dataset(frame, label=y), 2)
    document = json.loads(booster.save_raw())
    saved = {name: document["learner"]["params"][name] for name in earlier}
    assert saved == {
        "cat_penalty_factor": 0.0,
        "cat_smooth": 3.0,
        "cat_l2": 1.0,
        "max_cat_threshold": 64,
    }
    for name in earlier:
        del document["learner"]["params"][name]
    loaded = Booster.from_json(json.dumps(document)).params
    assert {name: loaded[name] for name in earlier} == earlier
    old = gpuboost.train(dict(earlier, verbosity=0), gpuboost.Dataset(frame, label=y), 2)
    assert not set(earlier) & set(json.loads(old.save_raw())["learner"]["params"])
    numeric = gpuboost.train({"verbosity": 0}, gpuboost.Dataset(np.eye(4), label=[1, 2, 3, 4]), 1)
    assert not set(earlier) & set(json.loads(numeric.save_raw())["learner"]["params"])


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic"])
def test_cat_smooth_estimate_continues_and_resumes_to_the_same_bytes(objective, tmp_path):
    """The estimate is each tree's own (from its root histogram): training continued
    from a saved model gives the bytes of one uninterrupted run."""
    frame, y, _ = _few_rows_each()
    if objective == "binary:logistic":
        y = (y > np.median(y)).astype(float)
    params = {"verbosity": 0, "objective": objective}
    whole = gpuboost.train(params, gpuboost.Dataset(frame, label=y), 8)
    assert any(tree.has_categorical for tree in whole.trees)
    path = tmp_path / "first.json"
    gpuboost.train(params, gpuboost.Dataset(frame, label=y), 5).save_model(path)
    resumed = gpuboost.train(params, gpuboost.Dataset(frame, label=y), 3, init_model=str(path))
    assert resumed.save_raw() == whole.save_raw()
