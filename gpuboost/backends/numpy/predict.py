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
    "predict_forest_sparse",
    "predict_leaves_sparse",
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


def _sparse_reader(indptr, indices, data, n_features, absent):
    """``columns_at(rows, features)`` of :func:`_traverse` on CSR rows: each entry looked
    up by one binary search over the stored entries' keys ``row * n_features + column``
    (sorted in canonical CSR), ``absent`` where nothing is stored."""
    counts = np.diff(np.asarray(indptr, dtype=np.int64))
    keys = np.repeat(np.arange(len(counts), dtype=np.int64), counts) * int(n_features)
    keys += np.asarray(indices, dtype=np.int64)
    values = np.asarray(data, dtype=np.float64)

    def columns_at(rows, features):
        wanted = rows.astype(np.int64) * int(n_features) + features
        if not len(keys):
            return np.full(len(wanted), absent, dtype=np.float64)
        at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        return np.where(keys[at] == wanted, values[at], absent)

    return columns_at


def predict_leaves_sparse(tree, indptr, indices, data, n_features, absent):
    """Leaf index of every row of a CSR matrix, on raw features, never densified.

    Parameters
    ----------
    tree : Tree
    indptr : ndarray of shape (n_rows + 1,), int
    indices : ndarray of shape (nnz,), int
        Column of every stored entry; sorted within each row, no duplicates (canonical).
    data : ndarray of shape (nnz,), float64 or float32
    n_features : int
    absent : float
        The value of an entry that is not stored: 0.0, or NaN (missing).

    Returns
    -------
    leaves : ndarray of shape (n_rows,), int64
        Those of the dense matrix (``absent`` where nothing is stored).
    """

    def go_left(values, nodes):
        return (values <= tree.threshold[nodes]) | (np.isnan(values) & tree.default_left[nodes])

    reader = _sparse_reader(indptr, indices, data, n_features, absent)
    return _traverse(tree, reader, len(indptr) - 1, go_left)


def predict_forest_sparse(indptr, indices, data, n_features, absent, trees, tree_outputs, margins):
    """:func:`predict_forest_raw` of a CSR matrix (see :func:`predict_leaves_sparse`):
    the same margins as on the dense matrix, bit for bit."""
    for tree, output in zip(trees, tree_outputs):
        leaves = predict_leaves_sparse(tree, indptr, indices, data, n_features, absent)
        margins[:, output] += tree.value[leaves]
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
