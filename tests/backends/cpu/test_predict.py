"""Tests of gpuboost.backends.cpu.predict: compiled traversal on raw and binned features
against the NumPy reference and the naive loop, on random trees (hypothesis)."""

import numpy as np
import pytest
from _cases import random_tree
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuboost
from gpuboost.backends.cpu import predict as compiled
from gpuboost.backends.numpy import predict as reference
from gpuboost.backends.numpy.predict import predict_leaves_naive

MAX_BIN = 31


def _features(rng, n_rows, n_features):
    """Raw values around the thresholds (exactly on some), NaN and +-inf, and their bins."""
    X = rng.integers(-2, MAX_BIN + 2, size=(n_rows, n_features)) + rng.choice(
        [0.0, 0.5, 0.25], size=(n_rows, n_features)
    )
    X[rng.random(X.shape) < 0.1] = np.nan
    X[rng.random(X.shape) < 0.03] = np.inf
    X[rng.random(X.shape) < 0.03] = -np.inf
    X_binned = np.clip(np.ceil(np.nan_to_num(X - 0.5, nan=0.0)), 0, MAX_BIN - 1)
    X_binned = np.where(np.isnan(X), MAX_BIN, X_binned).astype(np.uint8)
    return X, X_binned


def _bits(values):
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 300),
    n_trees=st.integers(0, 5),
    n_outputs=st.integers(1, 3),
    max_depth=st.integers(0, 6),
)
def test_matches_the_reference_and_the_naive_loop(seed, n_rows, n_trees, n_outputs, max_depth):
    rng = np.random.default_rng(seed)
    n_features = 4
    trees = [random_tree(rng, n_features, MAX_BIN, max_depth) for _ in range(n_trees)]
    outputs = rng.integers(0, n_outputs, size=n_trees)
    X, X_binned = _features(rng, n_rows, n_features)
    start = rng.normal(size=(n_rows, n_outputs)) * rng.choice([0.0, 1.0], size=(n_rows, 1))
    margins = compiled.predict_forest_raw(X, trees, outputs, start.copy())
    np.testing.assert_array_equal(
        _bits(margins), _bits(reference.predict_forest_raw(X, trees, outputs, start.copy()))
    )
    leaves = compiled.predict_forest_leaves(X, trees)
    np.testing.assert_array_equal(leaves, reference.predict_forest_leaves(X, trees))
    assert leaves.dtype == np.int32 and leaves.shape == (n_rows, n_trees)
    for index, tree in enumerate(trees):
        np.testing.assert_array_equal(leaves[:, index], predict_leaves_naive(tree, X=X))
        np.testing.assert_array_equal(
            _bits(compiled.predict_tree_raw(X, tree)),
            _bits(reference.predict_tree_raw(X, tree)),
        )
        binned = compiled.predict_tree_binned(X_binned, MAX_BIN, tree)
        np.testing.assert_array_equal(
            _bits(binned), _bits(reference.predict_tree_binned(X_binned, MAX_BIN, tree))
        )
        naive = predict_leaves_naive(tree, X_binned=X_binned, missing_bin=MAX_BIN)
        np.testing.assert_array_equal(_bits(binned), _bits(tree.value[naive]))


def test_float32_features_are_read_without_a_copy_and_agree():
    rng = np.random.default_rng(3)
    trees = [random_tree(rng, 4, MAX_BIN, 5) for _ in range(3)]
    X, _ = _features(rng, 200, 4)
    X32 = X.astype(np.float32)
    margins = compiled.predict_forest_raw(X32, trees, [0, 0, 0], np.zeros((200, 1)))
    expected = reference.predict_forest_raw(
        X32.astype(np.float64), trees, [0, 0, 0], np.zeros((200, 1))
    )
    np.testing.assert_array_equal(_bits(margins), _bits(expected))


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 300),
    n_trees=st.integers(0, 5),
    absent=st.sampled_from([0.0, np.nan]),
    sparse_dtype=st.sampled_from([np.float64, np.float32]),
)
def test_sparse_rows_give_the_margins_of_the_dense_rows(
    seed, n_rows, n_trees, absent, sparse_dtype
):
    """CSR traversal (compiled and NumPy reference) == dense traversal of the same matrix,
    its absent entries 0.0 or NaN; stored zeros and NaN stay what they are."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(seed)
    n_features = 7
    trees = [random_tree(rng, n_features, MAX_BIN, 5) for _ in range(n_trees)]
    outputs = rng.integers(0, 2, size=n_trees)
    X, _ = _features(rng, n_rows, n_features)
    X = X.astype(sparse_dtype)
    stored = rng.random(X.shape) < rng.choice([0.0, 0.1, 0.5])
    X[rng.random(X.shape) < 0.05] = 0.0  # stored zeros among the stored entries
    # Stored entries hold 0.0 and NaN too (explicit zeros, missing values).
    rows = scipy_sparse.coo_matrix((X[stored], np.nonzero(stored)), shape=X.shape).tocsr()
    dense = np.where(stored, X, absent).astype(np.float64)
    start = rng.normal(size=(n_rows, 2))
    expected = reference.predict_forest_raw(dense, trees, outputs, start.copy())
    args = (rows.indptr, rows.indices, rows.data, n_features, absent, trees, outputs)
    np.testing.assert_array_equal(
        _bits(compiled.predict_forest_sparse(*args, start.copy())), _bits(expected)
    )
    np.testing.assert_array_equal(
        _bits(reference.predict_forest_sparse(*args, start.copy())), _bits(expected)
    )


def test_a_forest_is_packed_once_and_kept_for_the_models_used_last():
    rng = np.random.default_rng(8)
    trees = [random_tree(rng, 4, MAX_BIN, 4) for _ in range(6)]
    X, _ = _features(rng, 50, 4)
    forest = compiled.forest_of(trees)
    assert compiled.forest_of(list(trees)) is forest  # another list of the same trees
    assert compiled.forest_of(trees[:3]) is not forest  # a slice is another forest
    # the kept forest predicts what a fresh packing does
    outputs = np.zeros(len(trees), dtype=np.int64)
    start = np.zeros((50, 1))
    kept = compiled.predict_forest_raw(X, trees, outputs, start.copy())
    np.testing.assert_array_equal(
        _bits(kept), _bits(reference.predict_forest_raw(X, trees, outputs, start.copy()))
    )
    # the forests used least recently go once more than PACKED_FORESTS_KEPT are used
    for size in range(compiled.PACKED_FORESTS_KEPT + 1):
        compiled.forest_of([random_tree(rng, 4, MAX_BIN, 2) for _ in range(size + 1)])
    assert compiled.forest_of(trees) is not forest
    assert len(compiled._PACKED) <= compiled.PACKED_FORESTS_KEPT


def test_one_row_predictions_equal_those_of_the_whole_matrix():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(float)
    booster = gpuboost.train(
        {"objective": "binary:logistic", "device": "cpu"}, gpuboost.Dataset(X, label=y), 20
    )
    whole = booster.predict(X[:30])
    one_by_one = np.concatenate([booster.predict(X[i : i + 1]) for i in range(30)])
    np.testing.assert_array_equal(_bits(one_by_one), _bits(whole))
