"""Random forests and boosted forests (issue 32, point 2): ``num_parallel_tree`` trees per
output and round from the same gradients, each with its own row and column samples and
``learning_rate / num_parallel_tree``; ``GBRFRegressor`` / ``GBRFClassifier`` with
XGBoost's forest defaults; the same bytes on every backend, in the model file (version 4),
slicing, refit, the update process and XGBoost's format."""

import json

import numpy as np
import pytest

import gpuboost
from gpuboost import Booster
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels


def _data(n_rows=600, seed=0, classes=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 6))
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n_rows)
    if classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1])).astype(float)
    return X, y


FOREST = {
    "max_depth": 3,
    "num_parallel_tree": 4,
    "subsample": 0.7,
    "colsample_bynode": 0.6,
    "verbosity": 0,
    "device": "cpu",
}
MULTICLASS = dict(FOREST, objective="multi:softprob", num_class=3)


def _train(params=FOREST, rounds=3, classes=0, **kwargs):
    X, y = _data(classes=classes)
    return gpuboost.train(params, gpuboost.Dataset(X, label=y), rounds, **kwargs)


def test_a_round_grows_a_forest_per_output_in_forest_order():
    model = _train(MULTICLASS, classes=3)
    assert model.trees_per_round == 12 and len(model.trees) == 36
    assert model.num_boosted_rounds() == 3
    # Every tree of a forest differs (its own row and column samples).
    dumps = model.dump_model()
    assert len(set(dumps[:12])) == 12
    # Tree i adds to output i % n_outputs: leaving out output 1's trees changes output 1 only.
    X, _ = _data()
    full = model.predict(X, output_margin=True)
    without = model.copy()
    without.trees = [t.replaced(value=t.value * (i % 3 != 1)) for i, t in enumerate(model.trees)]
    margins = without.predict(X, output_margin=True)
    assert np.array_equal(margins[:, [0, 2]], full[:, [0, 2]])
    assert np.all(margins[:, 1] == model.base_margin[1]) and np.any(full[:, 1] != margins[:, 1])
    document = json.loads(model.save_raw())
    assert document["version"] == 4 and document["learner"]["params"]["num_parallel_tree"] == 4
    loaded = Booster.from_json(model.to_json())
    assert loaded.save_raw() == model.save_raw()
    assert np.array_equal(loaded.predict(X, output_margin=True), full)


def test_leaves_are_the_learning_rate_over_the_forest_size():
    """Without sampling every tree of a round's forest is the same tree, its leaves
    ``learning_rate / num_parallel_tree`` times the Newton step: the forest adds what one
    tree with the whole learning rate adds."""
    params = {"max_depth": 3, "verbosity": 0, "device": "cpu", "learning_rate": 0.4}
    single = _train(params, rounds=1)
    forest = _train(dict(params, num_parallel_tree=4), rounds=1)
    for tree in forest.trees:
        assert np.array_equal(tree.feature, single.trees[0].feature)
        leaves = tree.is_leaf
        assert np.array_equal(tree.value[leaves], (0.4 / 4) * (single.trees[0].value[leaves] / 0.4))


def test_one_tree_per_round_is_unchanged():
    """``num_parallel_tree=1`` is today's model, byte for byte (it is not even saved)."""
    plain = _train({"max_depth": 3, "subsample": 0.7, "verbosity": 0, "device": "cpu"})
    same = _train(
        {"max_depth": 3, "subsample": 0.7, "verbosity": 0, "device": "cpu", "num_parallel_tree": 1}
    )
    assert same.save_raw() == plain.save_raw()
    assert json.loads(plain.save_raw())["version"] == 1


@pytest.mark.parametrize("params", [FOREST, MULTICLASS], ids=["regression", "multiclass"])
def test_every_backend_grows_the_same_forest(params, monkeypatch):
    classes = params.get("num_class", 0)
    compiled = _train(params, classes=classes)
    with emulated_kernels():
        cuda = _train(dict(params, device="cuda"), classes=classes)
    assert cuda.save_raw() == compiled.save_raw()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert _train(params, classes=classes).save_raw() == compiled.save_raw()


def test_quantile_leaves_refit_every_tree_from_the_rounds_margins():
    """Leaf refits (``reg:absoluteerror``) start each tree of a forest from the round's
    margins, not from the forest's earlier trees: without sampling all are the same."""
    params = {"max_depth": 3, "verbosity": 0, "device": "cpu", "objective": "reg:absoluteerror"}
    forest = _train(dict(params, num_parallel_tree=3), rounds=2)
    for r in range(2):
        first = forest.trees[3 * r]
        for tree in forest.trees[3 * r + 1 : 3 * r + 3]:
            assert tree == first


def test_slicing_early_stopping_and_continued_training_count_rounds():
    X, y = _data()
    dtrain = gpuboost.Dataset(X[:400], label=y[:400])
    dvalid = gpuboost.Dataset(X[400:], label=y[400:])
    model = gpuboost.train(FOREST, dtrain, 6)
    part = model[2:5]
    assert part.num_boosted_rounds() == 3 and len(part.trees) == 12
    assert np.array_equal(
        part.predict(X, output_margin=True) - part.base_margin[0],
        model.predict(X, output_margin=True, iteration_range=(2, 5)) - model.base_margin[0],
    )
    first = gpuboost.train(FOREST, dtrain, 3)
    resumed = gpuboost.train(FOREST, dtrain, 3, init_model=first)
    assert resumed.save_raw() == model.save_raw()
    with pytest.raises(ValueError, match="num_parallel_tree"):
        gpuboost.train(dict(FOREST, num_parallel_tree=2), dtrain, 1, init_model=first)
    stopped = gpuboost.train(
        dict(FOREST, learning_rate=1.0),
        dtrain,
        30,
        evals=[(dvalid, "valid")],
        early_stopping_rounds=2,
        verbose_eval=False,
        callbacks=[gpuboost.EarlyStopping(2, save_best=True)],
    )
    assert len(stopped.trees) == 4 * stopped.num_boosted_rounds()
    assert Booster.from_json(stopped.to_json()).num_boosted_rounds() == stopped.num_boosted_rounds()


def test_refit_and_the_update_process_take_a_round_forest_by_forest():
    X, y = _data()
    no_sampling = {"max_depth": 3, "num_parallel_tree": 3, "verbosity": 0, "device": "cpu"}
    model = gpuboost.train(no_sampling, gpuboost.Dataset(X, label=y), 3)
    # Refitting on the training data at decay 0 gives back the model (no sampling).
    refitted = model.refit(X, y, decay_rate=0.0)
    for old, new in zip(model.trees, refitted.trees):
        assert np.allclose(old.value, new.value, rtol=1e-12, atol=1e-15)
    refreshed = gpuboost.train(
        dict(no_sampling, process_type="update", updater="refresh"),
        gpuboost.Dataset(X[:300], label=y[:300]),
        2,
        init_model=model,
    )
    assert len(refreshed.trees) == len(model.trees)
    assert refreshed.trees[6:] == model.trees[6:] and refreshed.trees[0] != model.trees[0]


def test_the_model_file_checks_forests():
    document = json.loads(_train().save_raw())
    broken = json.loads(json.dumps(document))
    broken["version"] = 3
    with pytest.raises(ValueError, match="version 4"):
        Booster.from_json(json.dumps(broken))
    broken = json.loads(json.dumps(document))
    broken["trees"] = broken["trees"][:-1]
    with pytest.raises(ValueError, match="whole number of rounds of 4"):
        Booster.from_json(json.dumps(broken))
    broken = json.loads(json.dumps(document))
    broken["learner"]["params"]["num_parallel_tree"] = 0
    with pytest.raises(ValueError, match="num_parallel_tree"):
        Booster.from_json(json.dumps(broken))


def test_xgboost_reads_and_writes_forests(tmp_path):
    xgboost = pytest.importorskip("xgboost")
    X, y = _data(classes=3)
    X = X.astype(np.float32)
    model = _train(MULTICLASS, classes=3)
    path = tmp_path / "forest.json"
    model.export_xgboost(path)
    theirs = xgboost.Booster(model_file=str(path))
    assert theirs.num_boosted_rounds() == 3
    matrix = xgboost.DMatrix(X)
    for window in [(0, 3), (1, 2)]:
        ours = model.predict(X, output_margin=True, iteration_range=window)
        assert np.allclose(
            theirs.predict(matrix, output_margin=True, iteration_range=window), ours, atol=1e-6
        )
    trained = xgboost.train(
        {
            "objective": "multi:softprob",
            "num_class": 3,
            "num_parallel_tree": 3,
            "subsample": 0.8,
            "max_depth": 2,
        },
        xgboost.DMatrix(X, label=y),
        3,
    )
    imported = Booster.from_xgboost(trained)
    assert imported.params["num_parallel_tree"] == 3 and imported.num_boosted_rounds() == 3
    assert np.allclose(
        imported.predict(X, output_margin=True),
        trained.predict(matrix, output_margin=True),
        atol=1e-6,
    )


def test_forest_estimators_have_xgboosts_defaults_and_one_round():
    pytest.importorskip("sklearn")
    from sklearn.base import clone

    X, y = _data(classes=2)
    classifier = gpuboost.GBRFClassifier(n_estimators=8, max_depth=3, device="cpu")
    params = classifier.get_params()
    assert (params["learning_rate"], params["subsample"], params["colsample_bynode"]) == (
        1.0,
        0.8,
        0.8,
    )
    assert params["reg_lambda"] == 1e-5 and clone(classifier).get_params() == params
    classifier.fit(X, y)
    booster = classifier.get_booster()
    assert booster.num_boosted_rounds() == 1 and len(booster.trees) == 8
    same = gpuboost.train(
        {
            "objective": "binary:logistic",
            "max_depth": 3,
            "learning_rate": 1.0,
            "subsample": 0.8,
            "colsample_bynode": 0.8,
            "reg_lambda": 1e-5,
            "num_parallel_tree": 8,
            "device": "cpu",
            "verbosity": 0,
        },
        gpuboost.Dataset(X, label=y),
        1,
    )
    assert np.array_equal(booster.predict(X), same.predict(X))
    assert classifier.predict_proba(X).shape == (len(X), 2)
    regressor = gpuboost.GBRFRegressor(n_estimators=5, device="cpu").fit(*_data())
    assert len(regressor.get_booster().trees) == 5
    with pytest.raises(ValueError, match="early_stopping_rounds"):
        gpuboost.GBRFRegressor(early_stopping_rounds=2, device="cpu").fit(X, y, eval_set=[(X, y)])
    with pytest.raises(ValueError, match="num_parallel_tree"):
        gpuboost.GBRFRegressor(num_parallel_tree=3, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="init_model"):
        gpuboost.GBRFRegressor(n_estimators=2, device="cpu").fit(X, y, init_model=booster)
