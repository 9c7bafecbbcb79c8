"""DART (issue 32, point 1): ``booster='dart'`` with XGBoost's parameters and weights
(gpuboost.model.dropout, gpuboost.boosting.dart), deterministic given the seed, the same
bytes on every backend and when resumed, ``predict(training=True)``, the model file
(version 4, ``weight_drop``) and XGBoost's format."""

import json

import numpy as np
import pytest

import gpuboost
from gpuboost import Booster
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.metrics import get_metric
from gpuboost.model.dropout import dropped_trees, normalized_weights
from gpuboost.params import validate_params


def _data(n_rows=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n_rows) > 0).astype(float)
    return X, y


DART = {
    "booster": "dart",
    "objective": "binary:logistic",
    "max_depth": 3,
    "rate_drop": 0.3,
    "subsample": 0.8,
    "verbosity": 0,
    "device": "cpu",
}


def _train(params=DART, rounds=8, **kwargs):
    X, y = _data()
    return gpuboost.train(params, gpuboost.Dataset(X, label=y), rounds, **kwargs)


def test_the_weights_follow_xgboosts_normalization():
    # 'tree': dropped trees * k / (k + lr), new ones 1 / (k + lr), lr = eta / n_new.
    weights = normalized_weights([1.0, 0.5, 1.0], [0, 2], 2, 0.3, "tree")
    lr = 0.3 / 2
    assert weights == [2 / (2 + lr), 0.5, 2 / (2 + lr), 1 / (2 + lr), 1 / (2 + lr)]
    weights = normalized_weights([1.0, 0.5, 1.0], [1], 1, 0.3, "forest")
    assert weights == [1.0, 0.5 / 1.3, 1.0, 1 / 1.3]
    assert normalized_weights([0.25], [], 3, 0.3, "tree") == [0.25, 1.0, 1.0, 1.0]


def test_the_drop_sets_follow_the_parameters():
    params = validate_params({"rate_drop": 0.5, "seed": 3})
    weights = [1.0] * 200
    sets = [dropped_trees(weights, params, r) for r in range(20)]
    assert sets[4] == dropped_trees(weights, params, 4)  # a function of (seed, round, weights)
    assert 0.4 < np.mean([len(s) for s in sets]) / 200 < 0.6
    assert all(s == sorted(set(s)) for s in sets)
    assert dropped_trees([], params, 0) == []
    skipped = validate_params({"rate_drop": 0.5, "skip_drop": 1.0})
    assert dropped_trees(weights, skipped, 0) == []
    never = validate_params({"rate_drop": 0.0, "one_drop": True})
    assert all(len(dropped_trees(weights, never, r)) == 1 for r in range(5))
    weighted = validate_params({"rate_drop": 0.5, "sample_type": "weighted", "one_drop": True})
    lopsided = [1e-9] * 199 + [1.0]
    assert dropped_trees(lopsided, dict(weighted, rate_drop=0.0), 0) == [199]
    counts = np.bincount(
        np.concatenate([dropped_trees(lopsided, weighted, r) for r in range(50)]), minlength=200
    )
    assert counts[199] == 50 and counts[:199].sum() == 0


def test_no_dropout_is_gradient_boosting():
    """With nothing ever dropped every weight is 1 and the trees are gbtree's."""
    dart = _train(dict(DART, rate_drop=0.0))
    gbtree = _train({k: v for k, v in DART.items() if k not in ("booster", "rate_drop")})
    assert dart.weight_drop == [1.0] * 8
    assert dart.trees == gbtree.trees
    X, _ = _data()
    assert np.array_equal(dart.predict(X), gbtree.predict(X))


def test_every_rounds_metrics_are_those_of_the_model_and_the_seed_decides():
    X, y = _data()
    dtrain = gpuboost.Dataset(X[:400], label=y[:400])
    dvalid = gpuboost.Dataset(X[400:], label=y[400:])
    history = {}
    model = gpuboost.train(
        dict(DART, eval_metric="logloss"),
        dtrain,
        10,
        evals=[(dtrain, "train"), (dvalid, "valid")],
        evals_result=history,
        verbose_eval=False,
    )
    assert len(set(model.weight_drop)) > 2  # rounds dropped trees
    logloss = get_metric("logloss")
    for name, rows in (("train", slice(0, 400)), ("valid", slice(400, None))):
        # The last round's: the weights change as later rounds drop trees.
        prediction = model.predict(X[rows])
        assert history[name]["logloss"][-1] == float(logloss(y[rows], prediction, None, None))
    again = gpuboost.train(DART, dtrain, 10)
    assert again.weight_drop == model.weight_drop and again.trees == model.trees
    other = gpuboost.train(dict(DART, seed=1), dtrain, 10)
    assert other.weight_drop != model.weight_drop


@pytest.mark.parametrize(
    "extra",
    [{}, {"sample_type": "weighted", "normalize_type": "forest", "one_drop": True}],
    ids=["uniform-tree", "weighted-forest"],
)
def test_every_backend_trains_the_same_dart_model(extra, monkeypatch):
    params = dict(DART, **extra)
    compiled = _train(params)
    with emulated_kernels():
        cuda = _train(dict(params, device="cuda"))
    assert cuda.save_raw() == compiled.save_raw()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert _train(params).save_raw() == compiled.save_raw()


def test_a_resumed_training_draws_the_same_dropouts():
    X, y = _data()
    dtrain = gpuboost.Dataset(X, label=y)
    whole = gpuboost.train(DART, dtrain, 8)
    first = gpuboost.train(DART, dtrain, 4)
    resumed = gpuboost.train(DART, dtrain, 4, init_model=Booster.from_json(first.to_json()))
    assert resumed.save_raw() == whole.save_raw()
    with pytest.raises(ValueError, match="its own booster"):
        gpuboost.train(
            {k: v for k, v in DART.items() if k != "booster"}, dtrain, 1, init_model=first
        )


def test_training_predictions_leave_out_the_next_rounds_dropouts():
    model = _train(dict(DART, one_drop=True))
    X, _ = _data()
    dropped = dropped_trees(model.weight_drop, model.params, model.num_boosted_rounds())
    assert dropped
    kept = model.copy()
    kept.weight_drop = [0.0 if i in dropped else w for i, w in enumerate(model.weight_drop)]
    training = model.predict(X, output_margin=True, training=True)
    assert np.allclose(training, kept.predict(X, output_margin=True), rtol=0, atol=1e-12)
    assert not np.allclose(training, model.predict(X, output_margin=True))
    assert np.array_equal(training, model.predict(X, output_margin=True, training=True))
    gbtree = _train({"max_depth": 3, "verbosity": 0, "device": "cpu"})
    assert np.array_equal(gbtree.predict(X, training=True), gbtree.predict(X))


def test_slicing_and_shap_use_the_weights():
    model = _train()
    X, _ = _data()
    part = model[2:6]
    assert part.weight_drop == model.weight_drop[2:6]
    assert np.array_equal(
        part.predict(X, output_margin=True),
        model.predict(X, output_margin=True, iteration_range=(2, 6)),
    )
    contributions = model.predict(X[:20], pred_contribs=True)
    assert np.allclose(contributions.sum(axis=1), model.predict(X[:20], output_margin=True))


def test_the_model_file_checks_the_weights():
    model = _train()
    document = json.loads(model.save_raw())
    assert document["version"] == 4 and len(document["learner"]["weight_drop"]) == 8
    assert Booster.from_json(model.to_json()).save_raw() == model.save_raw()
    corruptions = [
        (lambda d: d["learner"].pop("weight_drop"), "present exactly when params 'booster'"),
        (lambda d: d["learner"]["weight_drop"].pop(), "one positive finite number per tree"),
        (lambda d: d["learner"]["weight_drop"].__setitem__(0, -1.0), "positive finite"),
        (lambda d: d["learner"]["weight_drop"].__setitem__(0, "1"), "positive finite"),
        (lambda d: d.__setitem__("version", 3), "version 4"),
    ]
    for corrupt, message in corruptions:
        broken = json.loads(json.dumps(document))
        corrupt(broken)
        with pytest.raises(ValueError, match=message):
            Booster.from_json(json.dumps(broken))


def test_what_dart_refuses():
    model = _train()
    X, y = _data()
    with pytest.raises(ValueError, match="DART model"):
        model.refit(X, y)
    with pytest.raises(ValueError, match="DART model"):
        gpuboost.train(
            dict(DART, process_type="update", updater="refresh"),
            gpuboost.Dataset(X, label=y),
            2,
            init_model=model,
        )
    pruned = gpuboost.train(
        dict(DART, process_type="update", updater="prune", gamma=1e9),
        gpuboost.Dataset(X, label=y),
        8,
        init_model=model,
    )
    assert all(tree.n_nodes == 1 for tree in pruned.trees)
    assert pruned.weight_drop == model.weight_drop


def test_xgboost_reads_and_writes_dart(tmp_path):
    xgboost = pytest.importorskip("xgboost")
    X, y = _data()
    X = X.astype(np.float32)
    model = _train(dict(DART, num_parallel_tree=2))
    path = tmp_path / "dart.json"
    model.export_xgboost(path)
    theirs = xgboost.Booster(model_file=str(path))
    matrix = xgboost.DMatrix(X)
    assert np.allclose(
        theirs.predict(matrix, output_margin=True), model.predict(X, output_margin=True), atol=1e-6
    )
    assert np.allclose(theirs.predict(matrix), model.predict(X), atol=1e-6)
    # XGBoost's DART with every tree dropped in every round has no random choice: the
    # weights are its normalization alone, as gpuboost's.
    params = {
        "booster": "dart",
        "objective": "binary:logistic",
        "max_depth": 2,
        "rate_drop": 1.0,
        "learning_rate": 0.3,
    }
    trained = xgboost.train(params, xgboost.DMatrix(X, label=y), 5)
    imported = Booster.from_xgboost(trained)
    ours = gpuboost.train(dict(params, device="cpu", verbosity=0), gpuboost.Dataset(X, label=y), 5)
    assert np.allclose(imported.weight_drop, ours.weight_drop, rtol=1e-6)
    assert np.allclose(
        imported.predict(X, output_margin=True),
        trained.predict(matrix, output_margin=True),
        atol=1e-6,
    )


def test_the_estimators_and_cross_validation_take_dart():
    pytest.importorskip("sklearn")
    X, y = _data()
    estimator = gpuboost.GBClassifier(
        n_estimators=5, max_depth=3, booster="dart", rate_drop=0.3, device="cpu"
    ).fit(X, y)
    assert estimator.get_booster().weight_drop is not None
    results = gpuboost.cv(DART, gpuboost.Dataset(X, label=y), 4, nfold=3)
    assert len(results["test-logloss-mean"]) == 4
