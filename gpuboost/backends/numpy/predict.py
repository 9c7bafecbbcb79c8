"""Tree traversal of the NumPy backend (and its naive loop reference).

Raw traversal: ``x <= threshold`` goes left, NaN follows ``default_left``.
Binned traversal: ``bin <= threshold_bin`` goes left, the missing bin follows
``default_left``. On training data the two agree (docs/DESIGN.md, "Binning").
The backend's primitives (:func:`predict_tree_binned`, :func:`predict_tree_raw`,
:func:`predict_forest_raw`, :func:`predict_forest_leaves`; CUDA version:
``cuda/predict.cu``) are built on the leaf-index traversals.
"""

import numpy as np

from .partition import goes_left

__all__ = [
    "predict_leaves_raw",
    "predict_leaves_binned",
    "predict_leaves_naive",
    "predict_tree_binned",
    "predict_tree_raw",
    "predict_forest_raw",
    "predict_forest_leaves",
    "ROWS_PER_CHUNK",
]

#: Rows traversed together (keeps the working set in cache).
ROWS_PER_CHUNK = 1 << 16


def _traverse(tree, columns_at, n_rows, go_left_of):
    nodes = np.zeros(n_rows, dtype=np.int64)
    active = np.flatnonzero(tree.feature[nodes] >= 0)
    while len(active):
        current = nodes[active]
        features = tree.feature[current]
        values = columns_at(active, features)
        left = go_left_of(values, current)
        nodes[active] = np.where(left, tree.left_child[current], tree.right_child[current])
        still = tree.feature[nodes[active]] >= 0
        active = active[still]
    return nodes


def predict_leaves_raw(tree, X):
    """Leaf index of every row, traversing on raw float features.

    Parameters
    ----------
    tree : Tree
    X : ndarray of shape (n_rows, n_features), float64, C order

    Returns
    -------
    leaves : ndarray of shape (n_rows,), int64
    """
    out = np.empty(X.shape[0], dtype=np.int64)
    for start in range(0, X.shape[0], ROWS_PER_CHUNK):
        chunk = X[start : start + ROWS_PER_CHUNK]

        def go_left(values, nodes):
            return (values <= tree.threshold[nodes]) | (np.isnan(values) & tree.default_left[nodes])

        out[start : start + len(chunk)] = _traverse(
            tree, lambda rows, features, chunk=chunk: chunk[rows, features], len(chunk), go_left
        )
    return out


def predict_leaves_binned(tree, X_binned, missing_bin):
    """Leaf index of every row, traversing on binned features.

    Parameters
    ----------
    tree : Tree
    X_binned : ndarray of shape (n_rows, n_features), uint8
    missing_bin : int

    Returns
    -------
    leaves : ndarray of shape (n_rows,), int64
    """
    out = np.empty(X_binned.shape[0], dtype=np.int64)
    for start in range(0, X_binned.shape[0], ROWS_PER_CHUNK):
        chunk = X_binned[start : start + ROWS_PER_CHUNK]

        def go_left(bins, nodes):
            return goes_left(bins, tree.threshold_bin[nodes], tree.default_left[nodes], missing_bin)

        out[start : start + len(chunk)] = _traverse(
            tree, lambda rows, features, chunk=chunk: chunk[rows, features], len(chunk), go_left
        )
    return out


def predict_tree_binned(X_binned, missing_bin, tree):
    """Leaf value of every row, traversing on binned features.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8  # IN
    missing_bin : int
    tree : Tree

    Returns
    -------
    values : ndarray of shape (n_rows,), float64  # OUT
    """
    return tree.value[predict_leaves_binned(tree, X_binned, missing_bin)]


def predict_tree_raw(X, tree):
    """Leaf value of every row of raw features ``X`` (n_rows, n_features) float64."""
    return tree.value[predict_leaves_raw(tree, X)]


def predict_forest_raw(X, trees, tree_outputs, margins):
    """Add every tree's leaf value to ``margins[:, tree_output]``, tree by tree in order.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
        The margin column of every tree.
    margins : ndarray of shape (n_rows, n_outputs), float64  # IN, OUT
        Updated in place.

    Returns
    -------
    margins : ndarray  # OUT
    """
    for tree, output in zip(trees, tree_outputs):
        margins[:, output] += tree.value[predict_leaves_raw(tree, X)]
    return margins


def predict_forest_leaves(X, trees):
    """Leaf index of every row in every tree, shape (n_rows, n_trees) int32."""
    out = np.empty((X.shape[0], len(trees)), dtype=np.int32)
    for i, tree in enumerate(trees):
        out[:, i] = predict_leaves_raw(tree, X)
    return out


def predict_leaves_naive(tree, X=None, X_binned=None, missing_bin=None):
    """Reference loop traversal on raw (``X``) or binned (``X_binned``) features."""
    data = X if X is not None else X_binned
    leaves = np.empty(data.shape[0], dtype=np.int64)
    for row in range(data.shape[0]):
        node = 0
        while tree.feature[node] >= 0:
            value = data[row, tree.feature[node]]
            if X is not None:
                is_missing = np.isnan(value)
                left = not is_missing and value <= tree.threshold[node]
            else:
                is_missing = int(value) == missing_bin
                left = not is_missing and int(value) <= tree.threshold_bin[node]
            if is_missing:
                left = bool(tree.default_left[node])
            node = tree.left_child[node] if left else tree.right_child[node]
        leaves[row] = node
    return leaves
