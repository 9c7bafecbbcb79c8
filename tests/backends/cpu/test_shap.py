"""TreeSHAP of the compiled CPU backend (gpuboost/backends/cpu/shap.py) against
XGBoost's recursion (plain Python, gpuboost/backends/numpy/shap.py, what the NumPy
backend runs) and against brute-force Shapley
values, additivity, and the Booster's ``pred_contribs`` / ``pred_interactions``, on
numeric and on categorical splits."""

import numpy as np
import pytest
from _cases import categorical_shap_case, shap_case, small_categorical_tree
from _shap_references import brute_force_contributions, brute_force_interactions

import gpuboost
from gpuboost.backends import CpuBackend
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


# ---- categorical splits ---------------------------------------------------------------
#: Codes prediction sends along ``default_left`` (negative, fractional, infinite, past
#: every set's words, missing) or looks up past a set's categories (40, 63: unseen).
ODD_CODES = np.array([40.0, 63.0, 64.0, 1000.0, -1.0, 2.5, np.inf, -np.inf, np.nan])


def _odd_rows(codes):
    """``codes`` plus rows with every odd code in feature 0 and in feature 1."""
    extra = np.repeat(codes[:1], 2 * len(ODD_CODES), axis=0)
    extra[: len(ODD_CODES), 0] = ODD_CODES
    extra[len(ODD_CODES) :, 1] = ODD_CODES
    return np.ascontiguousarray(np.vstack([codes, extra]))


def _splits_a_feature_twice_on_a_path(trees):
    return any(
        tree.is_categorical[node]
        and any(
            tree.is_categorical[child] and tree.feature[child] == tree.feature[node]
            for child in (tree.left_child[node], tree.right_child[node])
        )
        for tree in trees
        for node in range(tree.n_nodes)
    )


@pytest.mark.parametrize("max_cat_to_onehot", [64, 1], ids=["one-vs-rest", "many-vs-many"])
@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic", "multi:softprob"])
def test_categorical_splits_equal_recursion_and_brute_force(objective, max_cat_to_onehot):
    booster, _, codes = categorical_shap_case(1, objective, max_cat_to_onehot=max_cat_to_onehot)
    trees, outputs, n = booster.trees, _outputs(booster), booster.n_outputs
    sizes = [len(t.category_set(i)) for t in trees for i in np.flatnonzero(t.is_categorical)]
    assert sizes and (max(sizes) == 1) == (max_cat_to_onehot == 64)
    X = _odd_rows(codes[:8])
    compiled = shap.predict_contributions(X, trees, outputs, n, n_threads=2)
    _close(compiled, reference.contributions_recursive(X, trees, outputs, n))
    _close(compiled, brute_force_contributions(X, trees, outputs, n), 1e-10)
    # additivity against the backends' prediction of the same codes
    margins = CpuBackend().predict_forest_raw(X, trees, outputs, np.zeros((len(X), n)))
    np.testing.assert_allclose(compiled.sum(axis=-1), margins, rtol=1e-9, atol=1e-12)
    rows = X[[0, 8, 9, 12, 17]]  # a plain row, codes 40, 63, -1 and missing
    interactions = shap.predict_interactions(rows, trees, outputs, n)
    _close(interactions, reference.interactions_recursive(rows, trees, outputs, n))
    _close(interactions, brute_force_interactions(rows, trees, outputs, n), 1e-10)
    _close(interactions.sum(axis=-1), compiled[[0, 8, 9, 12, 17]])


def test_categorical_paths_repeat_features_and_codes_past_a_set_go_right():
    """A path that splits the 40-category feature several times (its element is the
    intersection of sets and complements), and the 3-category feature's sets (one word)
    in trees whose widest set has two: code 40 on it is looked up (not in the set: right),
    as prediction does, code 64 takes the default direction."""
    booster, _, codes = categorical_shap_case(2, max_cat_to_onehot=1, n_rounds=6)
    trees, outputs = booster.trees, _outputs(booster)
    assert _splits_a_feature_twice_on_a_path(trees)
    X = _odd_rows(codes[:30])
    compiled = shap.predict_contributions(X, trees, outputs, 1)
    _close(compiled, reference.contributions_recursive(X, trees, outputs, 1))
    margins = CpuBackend().predict_forest_raw(X, trees, outputs, np.zeros((len(X), 1)))
    np.testing.assert_allclose(compiled.sum(axis=-1), margins, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic", "multi:softprob"])
def test_booster_categorical_contributions_add_up_with_missing_and_unseen_categories(objective):
    booster, X, _ = categorical_shap_case(3, objective, n_rounds=5)
    X = X[:60].copy()
    X[:10, 0] = 999.0  # a label the model has not seen: predicted as missing
    X[10:20, 1] = 5.0
    X[20:25, 0] = np.nan
    margin = booster.predict(X, output_margin=True)
    contributions = booster.predict(X, pred_contribs=True)
    assert contributions.shape == margin.shape + (X.shape[1] + 1,)
    np.testing.assert_allclose(contributions.sum(axis=-1), margin, rtol=1e-9, atol=1e-12)
    as_missing = X.copy()
    as_missing[:10, 0] = np.nan
    as_missing[10:20, 1] = np.nan
    np.testing.assert_array_equal(booster.predict(as_missing, pred_contribs=True), contributions)
    interactions = booster.predict(X[:15], pred_interactions=True)
    np.testing.assert_allclose(interactions.sum(axis=-1), contributions[:15], rtol=0, atol=1e-12)
    np.testing.assert_allclose(interactions, np.swapaxes(interactions, -1, -2), atol=1e-12)


def test_handmade_categorical_tree_equals_brute_force_and_prediction():
    tree = small_categorical_tree()
    # (row, its leaf's value): codes in and out of sets, missing, codes prediction sends
    # along the default (-1, 2.5, 64, 70, inf) and codes of feature 1 past its set's
    # one word that it looks up in the tree's second word (40, 63: right)
    cases = [
        ([2, 0], 1.0),
        ([33, 7], 1.0),
        ([1, 40], 2.0),
        ([5, 64], 2.0),
        ([40, 0], 3.0),
        ([np.nan, 0], 2.0),
        ([np.nan, np.nan], 2.0),
        ([9, -1], 3.0),
        ([2.5, 1], 2.0),
        ([70, 63], 2.0),
        ([9, 40], 4.0),
        ([9, 63], 4.0),
        ([9, 64], 3.0),
        ([9, np.nan], 3.0),
        ([9, 1], 4.0),
        ([np.inf, 0], 2.0),
    ]
    X = np.array([row for row, _ in cases], dtype=np.float64)
    compiled = shap.predict_contributions(X, [tree], [0], 1)
    _close(compiled, brute_force_contributions(X, [tree], [0], 1))
    _close(compiled, reference.contributions_recursive(X, [tree], [0], 1))
    leaves = CpuBackend().predict_forest_raw(X, [tree], [0], np.zeros((len(X), 1)))[:, 0]
    np.testing.assert_array_equal(leaves, [value for _, value in cases])
    np.testing.assert_allclose(compiled.sum(axis=-1)[:, 0], leaves, rtol=1e-12)
    _close(
        shap.predict_interactions(X, [tree], [0], 1), brute_force_interactions(X, [tree], [0], 1)
    )
