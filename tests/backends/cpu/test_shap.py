"""TreeSHAP of the compiled CPU backend (gpuboost/backends/cpu/shap.py) against
XGBoost's recursion (plain Python, gpuboost/backends/numpy/shap.py, what the NumPy
backend runs) and against brute-force Shapley
values, additivity, and the Booster's ``pred_contribs`` / ``pred_interactions``."""

import numpy as np
import pytest
from _cases import shap_case
from _shap_references import brute_force_contributions, brute_force_interactions

import gpuboost
from gpuboost.backends.cpu import shap
from gpuboost.backends.numpy import shap as reference
from gpuboost.tree.tree import TREE_ARRAYS, Tree

RTOL = 1e-12


def _outputs(booster):
    return [i % booster.n_outputs for i in range(len(booster.trees))]


def _close(actual, expected, rtol=RTOL):
    scale = max(np.abs(expected).max(), 1.0)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize(
    "objective, params",
    [
        ("reg:squarederror", {}),
        ("binary:logistic", {"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 12}),
        ("multi:softprob", {"subsample": 0.7, "reg_lambda": 0.0, "min_child_weight": 0.0}),
    ],
)
def test_compiled_kernel_equals_recursion_and_brute_force(objective, params):
    booster, X = shap_case(1, objective, **params)
    X = X[:12]
    outputs = _outputs(booster)
    n = booster.n_outputs
    compiled = shap.predict_contributions(X, booster.trees, outputs, n, n_threads=2)
    _close(compiled, reference.contributions_recursive(X, booster.trees, outputs, n))
    _close(compiled, brute_force_contributions(X, booster.trees, outputs, n), 1e-10)
    interactions = shap.predict_interactions(X[:4], booster.trees, outputs, n)
    _close(interactions, reference.interactions_recursive(X[:4], booster.trees, outputs, n))
    _close(interactions, brute_force_interactions(X[:4], booster.trees, outputs, n), 1e-10)
    _close(interactions.sum(axis=-1), compiled[:4])


@pytest.mark.parametrize("objective", ["reg:squarederror", "multi:softprob"])
def test_booster_contributions_add_up_to_the_margin(objective):
    booster, X = shap_case(2, objective, n_rounds=6)
    margin = booster.predict(X, output_margin=True)
    contributions = booster.predict(X, pred_contribs=True)
    n_features = X.shape[1]
    if booster.n_outputs == 1:
        assert contributions.shape == (len(X), n_features + 1)
    else:
        assert contributions.shape == (len(X), 3, n_features + 1)
    np.testing.assert_allclose(contributions.sum(axis=-1), margin, rtol=1e-9, atol=1e-12)
    # the bias: the base margin plus the trees' expected values, the same for every row
    assert np.ptp(contributions[..., -1], axis=0).max() == 0.0
    # features no tree splits on get exactly zero (feature 5 is constant)
    assert np.all(contributions[..., 5] == 0.0)
    interactions = booster.predict(X[:20], pred_interactions=True)
    assert interactions.shape == contributions[:20].shape + (n_features + 1,)
    np.testing.assert_allclose(interactions.sum(axis=-1), contributions[:20], rtol=0, atol=1e-12)
    np.testing.assert_allclose(interactions, np.swapaxes(interactions, -1, -2), atol=1e-12)


def test_missing_values_follow_the_default_direction():
    booster, X = shap_case(3)
    X = X[:50].copy()
    X[:, 1] = np.nan
    outputs = _outputs(booster)
    _close(
        booster.predict(X, pred_contribs=True)[:, None, :]
        - np.r_[np.zeros(X.shape[1]), booster.base_margin][None, None, :],
        reference.contributions_recursive(X, booster.trees, outputs, 1),
    )


def test_iteration_range_and_row_base_margin():
    booster, X = shap_case(4, n_rounds=5)
    part = booster.predict(X[:30], pred_contribs=True, iteration_range=(1, 3))
    margin = booster.predict(X[:30], output_margin=True, iteration_range=(1, 3))
    np.testing.assert_allclose(part.sum(axis=-1), margin, rtol=1e-9, atol=1e-12)
    data = gpuboost.Dataset(X[:30], base_margin=np.arange(30.0))
    shifted = booster.predict(data, pred_contribs=True)
    full = booster.predict(X[:30], pred_contribs=True)
    np.testing.assert_array_equal(shifted[:, :-1], full[:, :-1])
    np.testing.assert_allclose(
        shifted[:, -1], full[:, -1] - booster.base_margin[0] + np.arange(30.0)
    )


def test_results_do_not_depend_on_the_number_of_threads():
    booster, X = shap_case(5, n_rows=1200)
    outputs = _outputs(booster)
    one = shap.predict_contributions(X, booster.trees, outputs, 1, n_threads=1)
    two = shap.predict_contributions(X, booster.trees, outputs, 1, n_threads=2)
    np.testing.assert_array_equal(one, two)


def test_a_model_without_trees_has_only_the_bias():
    booster, X = shap_case(6, n_rounds=1)
    contributions = booster.predict(X[:5], pred_contribs=True, iteration_range=(0, 0))
    assert contributions.shape == (5, X.shape[1] + 1)
    empty = shap.predict_contributions(X[:5], [], [], 1)
    assert np.all(empty == 0.0)
    assert np.all(shap.predict_interactions(X[:5], [], [], 1) == 0.0)


def test_zero_cover_nodes_and_repeated_features_on_a_handmade_tree():
    # x0 <= 0 -> (x1 <= 1 -> leaf 3 | x0 <= -1 -> leaf 5 | leaf 6) | leaf 2; node 4 and
    # its leaves have zero cover (weights by count), leaf 6 no rows at all (halves).
    arrays = {name: np.zeros(7, dtype=dtype) for name, dtype in TREE_ARRAYS.items()}
    arrays.update(
        feature=[0, 1, -1, -1, 0, -1, -1],
        threshold=[0.0, 1.0, 0, 0, -1.0, 0, 0],
        default_left=[1, 0, 0, 0, 1, 0, 0],
        left_child=[1, 3, -1, -1, 5, -1, -1],
        right_child=[2, 4, -1, -1, 6, -1, -1],
        value=[0, 0, 2.0, -1.0, 0, 0.5, 3.0],
        cover=[6.0, 4.0, 2.0, 4.0, 0.0, 0.0, 0.0],
        count=[6, 4, 2, 4, 0, 0, 0],
    )
    tree = Tree(arrays)
    X = np.array(
        [[-2.0, 2.0], [-0.5, 2.0], [-0.5, 0.0], [1.0, np.nan], [np.nan, np.nan], [np.nan, 5.0]]
    )
    compiled = shap.predict_contributions(X, [tree], [0], 1)
    _close(compiled, reference.contributions_recursive(X, [tree], [0], 1))
    _close(compiled, brute_force_contributions(X, [tree], [0], 1))
    _close(
        shap.predict_interactions(X, [tree], [0], 1), brute_force_interactions(X, [tree], [0], 1)
    )
