"""Path smoothing (``path_smooth``, LightGBM's): every node's weight pulled towards its
parent's by ``gpuboost.core.gain.path_smoothed`` (docs/DESIGN.md, "Path smoothing") --
the definition against a node-by-node loop, the trained trees' values against the
definition, every growth path and backend the same bytes, the training margins those of
the trees, monotone constraints kept, refresh and the model file."""

import json

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both
from _tiers import sampled

import gpuboost
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.core.gain import path_smoothed


def _smoothed_naive(weights, counts, left, right, s, lower=None, upper=None):
    """Reference loop: nodes in id order (a parent before its children)."""
    out = np.array(weights, dtype=np.float64, copy=True)
    for parent in range(len(out)):
        if left[parent] < 0:
            continue
        for child in (left[parent], right[parent]):
            ratio = float(counts[child]) / s
            out[child] = out[child] * ratio / (ratio + 1.0) + out[parent] / (ratio + 1.0)
            if lower is not None:
                out[child] = np.minimum(np.maximum(out[child], lower[child]), upper[child])
    return out


def _random_tree(rng, n_splits):
    """Children arrays of a random binary tree whose children come after their parents,
    and counts that add up."""
    left, right, leaves = [-1], [-1], [0]
    for _ in range(n_splits):
        node = leaves.pop(int(rng.integers(len(leaves))))
        left[node], right[node] = len(left), len(left) + 1
        left += [-1, -1]
        right += [-1, -1]
        leaves += [left[node], right[node]]
    counts = np.zeros(len(left), dtype=np.int64)
    counts[leaves] = rng.integers(1, 60, size=len(leaves))
    for node in range(len(left) - 1, -1, -1):
        if left[node] >= 0:
            counts[node] = counts[left[node]] + counts[right[node]]
    return counts, np.array(left), np.array(right)


@pytest.mark.parametrize("n_outputs", [0, 3])
@pytest.mark.parametrize("bounded", [False, True])
def test_path_smoothed_is_the_node_by_node_loop(n_outputs, bounded):
    rng = np.random.default_rng(n_outputs + 2 * bounded)
    for n_splits, s in ((0, 1.0), (1, 20.0), (9, 3.5), (40, 0.25)):
        counts, left, right = _random_tree(rng, n_splits)
        shape = (len(counts),) if n_outputs == 0 else (len(counts), n_outputs)
        weights = rng.normal(size=shape)
        lower = upper = None
        if bounded:
            lower = -np.abs(rng.normal(size=len(counts))) * 0.5
            upper = np.abs(rng.normal(size=len(counts))) * 0.5
        got = path_smoothed(weights, counts, left, right, s, lower, upper)
        if n_outputs == 0:
            want = _smoothed_naive(weights, counts, left, right, s, lower, upper)
        else:
            want = np.stack(
                [
                    _smoothed_naive(weights[:, t], counts, left, right, s, lower, upper)
                    for t in range(n_outputs)
                ],
                axis=1,
            )
        assert got.tobytes() == want.tobytes()
        assert got[0].tobytes() == np.asarray(weights[0]).tobytes()  # the root is kept


def test_a_child_moves_towards_its_parent_by_its_row_count():
    counts, left, right = np.array([30, 10, 20]), np.array([1, -1, -1]), np.array([2, -1, -1])
    weights = np.array([1.0, 3.0, -2.0])
    # n / s = 10 / 10 = 1: halfway; 20 / 10 = 2: two thirds its own weight.
    out = path_smoothed(weights, counts, left, right, 10.0)
    assert out.tolist() == [1.0, 3.0 * 1.0 / 2.0 + 1.0 / 2.0, -2.0 * 2.0 / 3.0 + 1.0 / 3.0]
    # A tiny s leaves the weights (up to the rounding of n/s / (n/s + 1)).
    np.testing.assert_allclose(
        path_smoothed(weights, counts, left, right, 1e-9), weights, rtol=1e-9
    )


def _data(n_rows=600, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1] * X[:, 2]) + 0.5 * rng.normal(size=n_rows)
    return X, y


BASE = {"path_smooth": 12.0, "min_data_in_leaf": 1, "max_depth": 5, "verbosity": 0}


def test_trees_are_the_unsmoothed_trees_with_smoothed_values():
    """The split gains are not smoothed: the first tree has the structure of the one
    grown without smoothing, and its values (learning rate 1) are the definition's."""
    X, y = _data()
    params = dict(BASE, learning_rate=1.0)
    smooth = gpuboost.train(params, gpuboost.Dataset(X, label=y), 1).trees[0]
    plain = gpuboost.train(dict(params, path_smooth=0.0), gpuboost.Dataset(X, label=y), 1)
    plain = plain.trees[0]
    for name in ("feature", "threshold", "left_child", "right_child", "count", "cover", "gain"):
        np.testing.assert_array_equal(getattr(smooth, name), getattr(plain, name))
    want = path_smoothed(plain.value, plain.count, plain.left_child, plain.right_child, 12.0)
    assert smooth.value.tobytes() == want.tobytes()
    assert not np.array_equal(smooth.value, plain.value)


GROWTH = {
    "depthwise": {},
    "lossguide": {"grow_policy": "lossguide", "max_leaves": 13, "max_depth": 0},
    "vector_leaves": {"multi_strategy": "multi_output_tree"},
    "monotone": {"monotone_constraints": [1, 0, 0, 0, -1]},
    "exact": {"tree_method": "exact"},
}


def _labels(growth, y):
    return np.stack([y, -0.5 * y], axis=1) if growth == "vector_leaves" else y


@pytest.mark.parametrize("growth", sampled(sorted(GROWTH), {"depthwise", "vector_leaves", "exact"}))
def test_every_backend_and_the_training_margins_agree(growth, monkeypatch, emulated_cuda):
    """The same bytes on the compiled CPU kernels, the NumPy reference and CUDA (the
    emulation), and the training's own margins are the trees' (its training-set metric
    equals the metric of the model's predictions)."""
    X, y = _data()
    labels = _labels(growth, y)
    params = dict(BASE, **GROWTH[growth])
    devices = ("cpu",) if growth == "exact" else ("cpu", "cuda")
    runs = train_on_both(params, lambda: gpuboost.Dataset(X, label=labels), 6, devices=devices,
                         evaluate_train=True)  # fmt: skip
    assert_runs_match(runs)
    model = runs["cpu"].model
    history = runs["cpu"].evals_result["train"]["rmse"]
    predicted = np.asarray(model.predict(X)).reshape(labels.shape)
    rmse = gpuboost.metrics.get_metric("rmse")(labels, predicted)
    assert history[-1] == rmse
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    reference = gpuboost.train(dict(params, device="cpu"), gpuboost.Dataset(X, label=labels), 6)
    assert reference.save_raw() == model.save_raw()
    unsmoothed = gpuboost.train(dict(params, path_smooth=0.0), gpuboost.Dataset(X, label=labels), 6)
    assert unsmoothed.save_raw() != model.save_raw()


def test_monotone_constraints_hold_with_smoothed_values():
    X, y = _data()
    y = y + 2.0 * np.nan_to_num(X[:, 4])
    model = gpuboost.train(
        dict(BASE, monotone_constraints=[1, 0, 0, 0, -1], path_smooth=40.0),
        gpuboost.Dataset(X, label=y),
        10,
    )
    rng = np.random.default_rng(0)
    grid = np.linspace(-3.0, 3.0, 41)
    for feature, direction in ((0, 1), (4, -1)):
        rows = np.repeat(rng.normal(size=(30, 5)), len(grid), axis=0)
        rows[:, feature] = np.tile(grid, 30)
        steps = np.diff(model.predict(rows).reshape(30, len(grid)), axis=1)
        assert (direction * steps >= 0.0).all()


def test_refresh_on_the_training_data_gives_back_the_smoothed_model():
    X, y = _data()
    model = gpuboost.train(BASE, gpuboost.Dataset(X, label=y), 5)
    refreshed = gpuboost.train(
        {"process_type": "update", "updater": "refresh", "verbosity": 0},
        gpuboost.Dataset(X, label=y),
        5,
        init_model=model,
    )
    assert refreshed.save_raw() == model.save_raw()


def test_the_model_file_keeps_path_smooth_only_when_set(tmp_path):
    X, y = _data()
    model = gpuboost.train(BASE, gpuboost.Dataset(X, label=y), 3)
    path = tmp_path / "model.json"
    model.save_model(path)
    assert json.loads(path.read_text())["learner"]["params"]["path_smooth"] == 12.0
    loaded = gpuboost.Booster.load_model(path)
    resumed = gpuboost.train(BASE, gpuboost.Dataset(X, label=y), 2, init_model=loaded)
    at_once = gpuboost.train(BASE, gpuboost.Dataset(X, label=y), 5)
    assert resumed.save_raw() == at_once.save_raw()
    plain = gpuboost.train(dict(BASE, path_smooth=0.0), gpuboost.Dataset(X, label=y), 1)
    assert b"path_smooth" not in plain.save_raw()


def test_bad_values_and_adaboost_are_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="path_smooth"):
        gpuboost.train(dict(BASE, path_smooth=-1.0), gpuboost.Dataset(X, label=y), 1)
    with pytest.raises(ValueError, match="path_smooth"):
        gpuboost.train(
            {"booster": "adaboost", "path_smooth": 5.0, "verbosity": 0},
            gpuboost.Dataset(X, label=(y > 0).astype(float)),
            1,
        )
