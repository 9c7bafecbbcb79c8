"""Tests of gpuboost.backends.numpy.predict: raw, binned and naive traversal agree."""

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.numpy import predict as predictor_module
from gpuboost.backends.numpy.predict import (
    predict_forest_leaves,
    predict_forest_raw,
    predict_leaves_binned,
    predict_leaves_naive,
    predict_leaves_raw,
    predict_tree_binned,
    predict_tree_raw,
)
from gpuboost.tree.tree import Tree

MISSING_BIN = 255


def trained_trees(X, y, **params):
    dataset = gpuboost.Dataset(X, label=y)
    booster = gpuboost.train(
        {"device": "cpu", "max_depth": 5, **params}, dataset, num_boost_round=4, verbose_eval=False
    )
    return dataset, booster.trees


def hand_tree():
    """f0 <= 0 (NaN right) -> leaf 1 | f1 <= 2 (NaN left) -> leaves 3, 4."""
    return Tree(
        {
            "feature": [0, -1, 1, -1, -1],
            "threshold_bin": [4, 0, 9, 0, 0],
            "threshold": [0.0, 0.0, 2.0, 0.0, 0.0],
            "default_left": [False, False, True, False, False],
            "left_child": [1, -1, 3, -1, -1],
            "right_child": [2, -1, 4, -1, -1],
            "value": [0.0, 1.0, 0.0, 3.0, 4.0],
            "gain": [1.0, 0.0, 1.0, 0.0, 0.0],
            "cover": [1.0] * 5,
            "count": [1] * 5,
        }
    )


def test_raw_binned_and_naive_agree_on_training_data(regression_data):
    X, y = regression_data
    X = X.copy()
    X[::37, 0] = np.inf
    X[5::41, 2] = -np.inf
    dataset, trees = trained_trees(X, y)
    X_binned = dataset.X_binned
    missing_bin = dataset.bin_mapper.missing_bin
    split_features = set()
    for tree in trees:
        assert tree.n_leaves > 1
        raw = predict_leaves_raw(tree, dataset.data)
        binned = predict_leaves_binned(tree, X_binned, missing_bin)
        np.testing.assert_array_equal(raw, binned)
        np.testing.assert_array_equal(raw, predict_leaves_naive(tree, X=dataset.data))
        np.testing.assert_array_equal(
            raw, predict_leaves_naive(tree, X_binned=X_binned, missing_bin=missing_bin)
        )
        assert raw.dtype == np.int64
        assert tree.is_leaf[raw].all()
        split_features |= set(tree.feature[tree.feature >= 0].tolist())
    assert 1 in split_features  # NaN rows of feature 1 are routed by default_left


def test_raw_and_binned_agree_on_new_data_binned_with_the_training_edges(binary_data):
    X, y = binary_data
    dataset, trees = trained_trees(X, y, objective="binary:logistic")
    rng = np.random.default_rng(3)
    X_new = rng.normal(size=(300, X.shape[1])) * 2
    X_new[rng.random(X_new.shape) < 0.1] = np.nan
    X_new_binned = dataset.bin_mapper.transform(X_new)
    for tree in trees:
        raw = predict_leaves_raw(tree, X_new)
        np.testing.assert_array_equal(
            raw, predict_leaves_binned(tree, X_new_binned, dataset.bin_mapper.missing_bin)
        )
        np.testing.assert_array_equal(raw, predict_leaves_naive(tree, X=X_new))


def test_nan_follows_default_left():
    tree = hand_tree()
    X = np.array(
        [
            [-1.0, 0.0],  # left at the root
            [np.nan, 0.0],  # NaN at the root: default right -> node 2 -> 1.0 <= 2 -> 3
            [1.0, np.nan],  # NaN at node 2: default left -> 3
            [1.0, 5.0],  # -> 4
            [0.0, 2.0],  # equal to thresholds goes left -> 1
            [np.nan, np.nan],  # right then left -> 3
            [np.inf, np.inf],  # -> 4
        ]
    )
    expected = [1, 3, 3, 4, 1, 3, 4]
    np.testing.assert_array_equal(predict_leaves_raw(tree, X), expected)
    np.testing.assert_array_equal(predict_leaves_naive(tree, X=X), expected)
    X_binned = np.array(
        [
            [0, 0],
            [MISSING_BIN, 0],
            [5, MISSING_BIN],
            [5, 10],
            [4, 9],
            [MISSING_BIN, MISSING_BIN],
            [254, 254],
        ],
        dtype=np.uint8,
    )
    np.testing.assert_array_equal(predict_leaves_binned(tree, X_binned, MISSING_BIN), expected)
    np.testing.assert_array_equal(
        predict_leaves_naive(tree, X_binned=X_binned, missing_bin=MISSING_BIN), expected
    )


def test_flipping_default_left_moves_only_missing_rows():
    tree = hand_tree()
    X = np.array([[np.nan, 1.0], [-3.0, 1.0], [3.0, np.nan]])
    before = predict_leaves_raw(tree, X)
    tree.default_left[:] = ~tree.default_left
    after = predict_leaves_raw(tree, X)
    np.testing.assert_array_equal(before, [3, 1, 3])
    np.testing.assert_array_equal(after, [1, 1, 4])


def test_single_leaf_tree():
    tree = Tree(
        {
            "feature": [-1],
            "threshold_bin": [0],
            "threshold": [0.0],
            "default_left": [0],
            "left_child": [-1],
            "right_child": [-1],
            "value": [0.5],
            "gain": [0.0],
            "cover": [0.0],
            "count": [0],
        }
    )
    X = np.zeros((4, 2))
    np.testing.assert_array_equal(predict_leaves_raw(tree, X), np.zeros(4))
    np.testing.assert_array_equal(predict_leaves_binned(tree, X.astype(np.uint8), 255), np.zeros(4))


def test_chunked_traversal_matches_whole(regression_data, monkeypatch):
    X, y = regression_data
    dataset, trees = trained_trees(X, y)
    whole_raw = [predict_leaves_raw(tree, dataset.data) for tree in trees]
    whole_binned = [
        predict_leaves_binned(tree, dataset.X_binned, dataset.bin_mapper.missing_bin)
        for tree in trees
    ]
    monkeypatch.setattr(predictor_module, "ROWS_PER_CHUNK", 37)
    for tree, raw, binned in zip(trees, whole_raw, whole_binned):
        np.testing.assert_array_equal(predict_leaves_raw(tree, dataset.data), raw)
        np.testing.assert_array_equal(
            predict_leaves_binned(tree, dataset.X_binned, dataset.bin_mapper.missing_bin), binned
        )


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
def test_traversal_on_deep_trees(regression_data, policy):
    X, y = regression_data
    dataset, trees = trained_trees(
        X,
        y,
        grow_policy=policy,
        max_depth=0 if policy == "lossguide" else 12,
        max_leaves=64,
        min_child_weight=0.0,
        split_penalty=0.0,  # deep trees, whatever the noise
    )
    assert max(tree.depth() for tree in trees) > 6
    for tree in trees:
        np.testing.assert_array_equal(
            predict_leaves_raw(tree, dataset.data),
            predict_leaves_binned(tree, dataset.X_binned, dataset.bin_mapper.missing_bin),
        )


def test_tree_and_forest_primitives_are_built_on_the_traversals(regression_data):
    """predict_tree_* are the leaf values of the traversals; the forest adds the trees'
    values to each tree's margin column in tree order."""
    X, y = regression_data
    dataset, trees = trained_trees(X, y)
    X_binned, missing_bin = dataset.X_binned, dataset.bin_mapper.missing_bin
    outputs = [0, 1, 0, 1]
    margins = np.full((len(X), 2), 0.5)
    expected = margins.copy()
    for tree, output in zip(trees, outputs):
        values = predict_tree_raw(X, tree)
        np.testing.assert_array_equal(values, tree.value[predict_leaves_naive(tree, X=X)])
        np.testing.assert_array_equal(predict_tree_binned(X_binned, missing_bin, tree), values)
        expected[:, output] += values
    assert predict_forest_raw(X, trees, outputs, margins) is margins
    np.testing.assert_array_equal(margins, expected)
    leaves = predict_forest_leaves(X, trees)
    assert leaves.shape == (len(X), len(trees)) and leaves.dtype == np.int32
    for index, tree in enumerate(trees):
        np.testing.assert_array_equal(leaves[:, index], predict_leaves_raw(tree, X))
