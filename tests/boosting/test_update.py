"""XGBoost's update process (``process_type='update'``; issue 32, point 4): ``refresh``
recomputes every node's statistics (and leaves) from new data -- on the training data it
gives back the trained model byte for byte --, ``prune`` removes exactly the splits
XGBoost's prune updater removes; every backend the same bytes."""

import json

import numpy as np
import pytest

import gpuboost
from gpuboost import Booster
from gpuboost.backends.emulation import emulated_kernels

UPDATE = {"process_type": "update", "verbosity": 0}


def _data(n_rows=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1] * X[:, 2]) + 0.3 * rng.normal(size=n_rows)
    return X, y


GROWTH = {
    "depthwise": {"max_depth": 4},
    "lossguide": {"grow_policy": "lossguide", "max_leaves": 12, "max_depth": 0},
}


def _model(growth, X, y, device="cpu", **extra):
    params = dict(GROWTH[growth], verbosity=0, device=device, **extra)
    return gpuboost.train(
        params, gpuboost.Dataset(X, label=y), 6, learning_rates=[0.5, 0.4, 0.3, 0.3, 0.2, 0.1]
    )


def _update(model, X, y, rounds=6, device="cpu", **params):
    return gpuboost.train(
        dict(UPDATE, device=device, **params),
        gpuboost.Dataset(X, label=y),
        rounds,
        init_model=model,
    )


@pytest.mark.parametrize("growth", sorted(GROWTH))
def test_refreshing_on_the_training_data_gives_back_the_model(growth):
    X, y = _data()
    model = _model(growth, X, y)
    assert _update(model, X, y, updater="refresh").save_raw() == model.save_raw()
    multiclass = gpuboost.train(
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 3, "verbosity": 0},
        gpuboost.Dataset(X, label=np.digitize(y, [-0.5, 0.5]).astype(float)),
        4,
    )
    labels = np.digitize(y, [-0.5, 0.5]).astype(float)
    assert _update(multiclass, X, labels, rounds=4).save_raw() == multiclass.save_raw()


def test_refreshing_on_new_data_changes_the_statistics_and_keeps_the_structure():
    X, y = _data()
    model = _model("depthwise", X, y)
    X_new, y_new = _data(seed=1)
    refreshed = _update(model, X_new, y_new + 0.5, updater="refresh")
    stats_only = _update(model, X_new, y_new + 0.5, updater="refresh", refresh_leaf=False)
    for old, new, kept in zip(model.trees, refreshed.trees, stats_only.trees):
        for name in ("feature", "threshold", "left_child", "right_child", "default_left"):
            np.testing.assert_array_equal(getattr(old, name), getattr(new, name))
        assert not np.array_equal(old.cover, new.cover)
        np.testing.assert_array_equal(new.cover, kept.cover)
        np.testing.assert_array_equal(kept.value[kept.is_leaf], old.value[old.is_leaf])
        assert not np.array_equal(new.value[new.is_leaf], old.value[old.is_leaf])
    # Only the first rounds asked for: the others are kept.
    partly = _update(model, X_new, y_new + 0.5, rounds=2, updater="refresh")
    assert partly.trees[2:] == model.trees[2:] and partly.trees[:2] == refreshed.trees[:2]


def test_every_backend_refreshes_the_same_bytes():
    X, y = _data()
    X_new, y_new = _data(seed=2)
    model = _model("lossguide", X, y)
    compiled = _update(model, X_new, y_new, updater="refresh,prune", gamma=1.0)
    with emulated_kernels():
        on_cuda = _update(model, X_new, y_new, device="cuda", updater="refresh,prune", gamma=1.0)
    assert on_cuda.save_raw() == compiled.save_raw()


def _gamma_between_gains(model):
    gains = np.sort(np.concatenate([t.gain[~t.is_leaf] for t in model.trees]))
    middle = len(gains) // 2
    return float((gains[middle - 1] + gains[middle]) / 2)


@pytest.mark.filterwarnings("ignore:.*manually specified the `updater`")
@pytest.mark.parametrize("growth", sorted(GROWTH))
def test_pruning_removes_the_splits_xgboosts_prune_removes(growth, tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    model = _model(growth, X, y)
    gamma = _gamma_between_gains(model)
    pruned = _update(model, X, y, updater="prune", gamma=gamma, max_depth=3)
    assert sum(t.n_leaves for t in pruned.trees) < sum(t.n_leaves for t in model.trees)
    assert Booster.from_json(pruned.to_json()).save_raw() == pruned.save_raw()  # a valid file
    path = tmp_path / "model.json"
    model.export_xgboost(path)
    theirs = xgb.train(
        {"process_type": "update", "updater": "prune", "gamma": gamma, "max_depth": 3, "eta": 1.0},
        xgb.DMatrix(X.astype(np.float32), label=y),
        6,
        xgb_model=str(path),
    )
    their_trees = json.loads(theirs.save_raw("json"))["learner"]["gradient_booster"]["model"][
        "trees"
    ]
    for ours, tree in zip(pruned.trees, their_trees):
        alive = [  # XGBoost keeps pruned nodes as deleted ones: count the reachable leaves
            node
            for node in range(len(tree["left_children"]))
            if tree["left_children"][node] == -1 and _reachable(tree, node)
        ]
        assert ours.n_leaves == len(alive)
    X32 = X.astype(np.float32)
    np.testing.assert_allclose(
        theirs.predict(xgb.DMatrix(X32), output_margin=True),
        pruned.predict(X32, output_margin=True),
        rtol=1e-6,
        atol=1e-6,
    )


def _reachable(tree, target):
    stack = [0]
    while stack:
        node = stack.pop()
        if node == target:
            return True
        if tree["left_children"][node] != -1:
            stack += [tree["left_children"][node], tree["right_children"][node]]
    return False


def test_what_the_update_process_refuses():
    X, y = _data(n_rows=200)
    model = _model("depthwise", X, y)
    with pytest.raises(ValueError, match="pass init_model="):
        gpuboost.train(UPDATE, gpuboost.Dataset(X, label=y), 2)
    with pytest.raises(ValueError, match="num_boost_round=7, but init_model has 6"):
        _update(model, X, y, rounds=7)
    with pytest.raises(ValueError, match="evals, callbacks"):
        gpuboost.train(
            UPDATE, gpuboost.Dataset(X, label=y), 2, init_model=model, early_stopping_rounds=2
        )
    assert "process_type" not in json.loads(_update(model, X, y).save_raw())["learner"]["params"]


def test_what_grows_new_trees_refuses_the_update_process():
    X, y = _data(n_rows=200)
    with pytest.raises(ValueError, match="gpuboost.cv grows new trees"):
        gpuboost.cv(UPDATE, gpuboost.Dataset(X, label=y), 2, nfold=2)
    adaboost = gpuboost.train(
        {"booster": "adaboost", "objective": "binary:logistic", "verbosity": 0},
        gpuboost.Dataset(X, label=y > 0),
        2,
    )
    with pytest.raises(ValueError, match="AdaBoost model"):
        _update(adaboost, X, y > 0, rounds=1, updater="prune")
