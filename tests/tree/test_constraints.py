"""Monotone and interaction constraints (gpuboost.tree.constraints, the constrained split
scans): predictions monotone along grids of each constrained feature, interaction sets
respected on every root-to-leaf path, on both backends (CPU and emulated CUDA) with
byte-identical models."""

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both

import gpuboost
from gpuboost import Dataset
from gpuboost.params import validate_params
from gpuboost.tree.constraints import (
    InteractionConstraints,
    children_bounds,
    resolve_interactions,
    resolve_monotone,
)

#: Grid of each swept feature and random rows swept.
GRID = np.linspace(-3.0, 3.0, 41)
N_SWEPT_ROWS = 60


def _data(seed=0, n_rows=600, n_features=5):
    """A target non-monotone in features 0 and 2 (so constraints change the model), with
    missing values."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    y = (
        np.sin(2.0 * X[:, 0])
        + X[:, 0]
        + X[:, 1] ** 2
        - X[:, 2]
        + np.cos(3.0 * X[:, 2])
        + X[:, 3] * X[:, 4]
        + rng.normal(scale=0.2, size=n_rows)
    )
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


def _worst_violation(model, feature, direction, seed=1):
    """The most negative step of ``direction * prediction`` along the grid of
    ``feature``, over random rows (>= 0 when monotone)."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(N_SWEPT_ROWS, model.n_features))
    swept = np.repeat(rows, len(GRID), axis=0)
    swept[:, feature] = np.tile(GRID, N_SWEPT_ROWS)
    predictions = model.predict(swept).reshape(N_SWEPT_ROWS, len(GRID))
    return float((direction * np.diff(predictions, axis=1)).min())


def _paths(tree):
    """The features on every root-to-leaf path of a Tree (list of sets)."""
    paths, stack = [], [(0, frozenset())]
    while stack:
        node, used = stack.pop()
        if tree.left_child[node] < 0:
            paths.append(used)
            continue
        used = used | {int(tree.feature[node])}
        stack += [(int(tree.left_child[node]), used), (int(tree.right_child[node]), used)]
    return paths


MONOTONE = [1, 0, -1, 0, 0]


@pytest.mark.parametrize(
    "policy", [{"grow_policy": "depthwise"}, {"grow_policy": "lossguide", "max_leaves": 24}]
)
def test_monotone_predictions_on_both_backends(emulated_cuda, policy):
    X, y = _data()
    params = {"max_depth": 5, "monotone_constraints": MONOTONE, "learning_rate": 0.5, **policy}
    runs = train_on_both(params, lambda: Dataset(X, label=y), 8)
    assert_runs_match(runs)
    model = runs["cpu"].model
    for feature, direction in ((0, 1), (2, -1)):
        assert _worst_violation(model, feature, direction) >= 0.0
    free = gpuboost.train(
        {k: v for k, v in params.items() if k != "monotone_constraints"}, Dataset(X, label=y), 8
    )
    # Not vacuous: without the constraint the model breaks monotonicity in both features.
    assert _worst_violation(free, 0, 1) < 0.0
    assert _worst_violation(free, 2, -1) < 0.0


@pytest.mark.parametrize(
    "extra",
    [
        {"reg_alpha": 0.5, "max_delta_step": 0.7},
        {"tree_method": "approx"},
        {"enable_bundle": True, "colsample_bynode": 0.8},
        {"objective": "reg:absoluteerror"},  # leaf refit: clipped to the bounds
    ],
)
def test_monotone_with_other_options(emulated_cuda, extra):
    X, y = _data(seed=3)
    params = {"max_depth": 4, "monotone_constraints": MONOTONE, "learning_rate": 0.7, **extra}
    runs = train_on_both(params, lambda: Dataset(X, label=y), 5)
    assert_runs_match(runs)
    for feature, direction in ((0, 1), (2, -1)):
        assert _worst_violation(runs["cpu"].model, feature, direction) >= 0.0


def test_monotone_by_name_string_and_numpy_backend(monkeypatch):
    """The dict-by-name and "(1,0,-1)" forms give the list's model; the NumPy reference
    backend gives the compiled backend's bytes."""
    X, y = _data(seed=5)
    names = [f"f{i}" for i in range(5)]
    params = {"max_depth": 4}
    by_list = gpuboost.train(
        dict(params, monotone_constraints=MONOTONE), Dataset(X, y, feature_names=names), 4
    )
    by_name = gpuboost.train(
        dict(params, monotone_constraints={"f0": 1, "f2": -1}),
        Dataset(X, y, feature_names=names),
        4,
    )
    by_text = gpuboost.train(dict(params, mc="(1,0,-1,0,0)"), Dataset(X, y, feature_names=names), 4)
    for other in (by_name, by_text):
        for a, b in zip(by_list.trees, other.trees):
            assert a.value.tobytes() == b.value.tobytes()
            np.testing.assert_array_equal(a.feature, b.feature)
    monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    reference = gpuboost.train(
        dict(params, monotone_constraints=MONOTONE), Dataset(X, y, feature_names=names), 4
    )
    assert reference.save_raw() == by_list.save_raw()


def test_monotone_constraints_are_saved_and_loaded():
    X, y = _data(seed=6)
    model = gpuboost.train({"max_depth": 3, "monotone_constraints": MONOTONE}, Dataset(X, y), 2)
    loaded = gpuboost.Booster.from_json(model.save_raw().decode())
    assert loaded.params["monotone_constraints"] == MONOTONE
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def _check_interactions(model, groups):
    n_paths = 0
    for tree in model.trees:
        for used in _paths(tree):
            n_paths += len(used) > 1
            assert len(used) <= 1 or any(used <= set(group) for group in groups), used
    assert n_paths > 0  # paths with interactions exist: not vacuous


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
def test_interaction_constraints_on_both_backends(emulated_cuda, policy):
    X, y = _data(seed=2)
    groups = [[0, 1], [2, 3, 4], [1, 4]]
    params = {
        "max_depth": 5,
        "grow_policy": policy,
        "max_leaves": 20,
        "interaction_constraints": groups,
        "colsample_bynode": 0.9,
    }
    runs = train_on_both(params, lambda: Dataset(X, label=y), 6)
    assert_runs_match(runs)
    _check_interactions(runs["cpu"].model, groups)
    free = gpuboost.train({"max_depth": 5}, Dataset(X, label=y), 6)
    with pytest.raises(AssertionError):
        _check_interactions(free, groups)


def test_interaction_constraints_by_name_and_with_monotone():
    X, y = _data(seed=4)
    names = [f"f{i}" for i in range(5)]
    params = {
        "max_depth": 4,
        "interaction_constraints": '[["f0", "f1"], ["f2", "f3", "f4"]]',
        "monotone_constraints": MONOTONE,
    }
    model = gpuboost.train(params, Dataset(X, y, feature_names=names), 6)
    _check_interactions(model, [[0, 1], [2, 3, 4]])
    assert _worst_violation(model, 0, 1) >= 0.0
    assert _worst_violation(model, 2, -1) >= 0.0


def test_interaction_masks_follow_xgboost_rule():
    """Root: every feature; then the path's features and every set holding all of them."""
    constraints = InteractionConstraints([[0, 1], [1, 2], [1, 3, 4]], 6)
    np.testing.assert_array_equal(constraints.mask([0])[0], [True] * 6)
    constraints.split([0], [1], [1, 2])  # root on feature 1: sets holding 1 are all open
    np.testing.assert_array_equal(constraints.mask([1])[0], [1, 1, 1, 1, 1, 0])
    constraints.split([1], [0], [3, 4])  # then 0: only {0, 1}
    np.testing.assert_array_equal(constraints.mask([3, 4]), [[1, 1, 0, 0, 0, 0]] * 2)
    constraints.split([2], [5], [5, 6])  # feature 5 is in no set: the path's features only
    np.testing.assert_array_equal(constraints.mask([5])[0], [0, 1, 0, 0, 0, 1])


def test_children_bounds_cut_at_the_midpoint():
    lower, upper = np.array([-np.inf, -1.0, 0.0]), np.array([np.inf, 1.0, 2.0])
    bounds = children_bounds(
        lower, upper, np.array([1, -1, 0]), np.array([-2.0, 0.5, 1.0]), np.array([4.0, -0.5, 1.5])
    )
    np.testing.assert_array_equal(bounds[0], [-np.inf, 0.0, 0.0])  # left lower
    np.testing.assert_array_equal(bounds[1], [1.0, 1.0, 2.0])  # left upper
    np.testing.assert_array_equal(bounds[2], [1.0, -1.0, 0.0])  # right lower
    np.testing.assert_array_equal(bounds[3], [np.inf, 0.0, 2.0])  # right upper


@pytest.mark.parametrize(
    "params, match",
    [
        ({"monotone_constraints": [1, 2]}, "must be 1"),
        ({"monotone_constraints": "(1,0"}, "could not be read"),
        ({"monotone_constraints": 3}, "must be a list"),
        ({"monotone_constraints": [True]}, "must be 1"),
        ({"interaction_constraints": [0, 1]}, "list of lists"),
        ({"interaction_constraints": [[0, 1.5]]}, "integer index or by name"),
    ],
)
def test_bad_constraint_parameters_raise(params, match):
    with pytest.raises(ValueError, match=match):
        validate_params(params)


def test_constraints_resolved_against_the_data():
    assert resolve_monotone(None, 3, None) == ()
    assert resolve_monotone([0, 0, 0], 3, None) == ()
    assert resolve_monotone({"b": -1, 0: 1}, 3, ["a", "b", "c"]) == (1, -1, 0)
    with pytest.raises(ValueError, match="one direction per feature"):
        resolve_monotone([1, 0], 3, None)
    with pytest.raises(ValueError, match="does not have|do not have"):
        resolve_monotone({"z": 1}, 3, ["a", "b", "c"])
    with pytest.raises(ValueError, match="3 features"):
        resolve_interactions([[0, 3]], 3, None)
    assert resolve_interactions([["c", 0]], 3, ["a", "b", "c"]) == [[0, 2]]


def test_exact_refuses_constraints():
    X, y = _data(seed=7, n_rows=100)
    for params in ({"monotone_constraints": MONOTONE}, {"interaction_constraints": [[0, 1]]}):
        with pytest.raises(ValueError, match="tree_method='hist' or 'approx'"):
            gpuboost.train(dict(params, tree_method="exact"), Dataset(X, y), 1)


def test_cli_reads_bracketed_constraint_values():
    from gpuboost.cli import parse_param

    assert parse_param("monotone_constraints=(1,0,-1)") == ("monotone_constraints", "(1,0,-1)")
    assert parse_param("interaction_constraints=[[0,1],[2,3]]")[1] == "[[0,1],[2,3]]"
    assert validate_params({"mc": "(1,0,-1)"})["monotone_constraints"] == [1, 0, -1]
    assert validate_params({"interaction_constraints": "[[0,1],[2,3]]"})[
        "interaction_constraints"
    ] == [[0, 1], [2, 3]]


def test_scikit_learn_estimator_takes_the_constraints():
    pandas = pytest.importorskip("pandas")
    X, y = _data(seed=8)
    X = pandas.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    model = gpuboost.GBRegressor(
        n_estimators=6,
        max_depth=4,
        monotone_constraints={"f0": 1, "f2": -1},
        interaction_constraints=[["f0", "f1"], ["f2", "f3", "f4"]],
    ).fit(X, y)
    booster = model.get_booster()
    assert _worst_violation(booster, 0, 1) >= 0.0
    _check_interactions(booster, [[0, 1], [2, 3, 4]])


def test_monotone_constraints_with_categorical_features_are_refused():
    """The categorical split scan does not bound the children's values: training with
    both raises instead of breaking monotonicity silently."""
    pandas = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pandas.DataFrame(
        {
            "x": rng.normal(size=200),
            "c": pandas.Categorical(rng.choice(["a", "b", "c"], size=200)),
        }
    )
    y = frame["x"].to_numpy() + (frame["c"] == "a").to_numpy()
    with pytest.raises(ValueError, match="monotone_constraints cannot be combined"):
        gpuboost.train({"monotone_constraints": [1, 0]}, Dataset(frame, label=y), 2)


def test_sparse_input_with_categorical_features_is_refused():
    sparse = pytest.importorskip("scipy.sparse")
    X = sparse.random(50, 4, density=0.3, format="csr", random_state=0)
    with pytest.raises(ValueError, match="Categorical features need dense input"):
        Dataset(X, label=np.zeros(50), categorical_features=[1])
