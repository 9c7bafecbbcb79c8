"""Tree traversal of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.predict`; CUDA: ``cuda/predict.cu``).

Raw traversal: ``x <= threshold`` goes left, NaN follows ``default_left``; binned
traversal: ``bin <= threshold_bin`` goes left, the missing bin follows
``default_left`` (docs/DESIGN.md, "Binning"). The forest is packed into flat node
arrays (one segment per tree, :func:`pack_forest`) and traversed in blocks of
:data:`ROWS_PER_BLOCK` rows: every tree in order for the rows of a block (so a tree's
nodes stay in cache while the block's rows go through it, and each row's margin gets
the trees' values added in tree order, as the reference adds them), blocks in parallel.
"""

import numpy as np

from ...core.segments import offsets
from .jit import kernel, prange

__all__ = [
    "pack_forest",
    "predict_tree_binned",
    "predict_tree_raw",
    "predict_forest_raw",
    "predict_forest_leaves",
    "ROWS_PER_BLOCK",
]

#: Rows that go through every tree together (a block's rows and a tree fit in L1/L2).
ROWS_PER_BLOCK = 64


def pack_forest(trees):
    """The trees' node arrays laid end to end.

    Returns
    -------
    packed : tuple
        ``(feature int64, threshold float64, threshold_bin int64, default_left bool,
        left_child int64, right_child int64, value float64, tree_offsets int64)``;
        tree ``t`` owns nodes ``tree_offsets[t] .. tree_offsets[t + 1] - 1``, with its
        children as indices inside its own segment.
    """

    def joined(name, dtype):
        if not trees:
            return np.zeros(0, dtype=dtype)
        return np.concatenate([getattr(tree, name) for tree in trees]).astype(dtype, copy=False)

    return (
        joined("feature", np.int64),
        joined("threshold", np.float64),
        joined("threshold_bin", np.int64),
        joined("default_left", np.bool_),
        joined("left_child", np.int64),
        joined("right_child", np.int64),
        joined("value", np.float64),
        offsets([tree.n_nodes for tree in trees]),
    )


@kernel
def _leaf_raw(X, row, base, feature, threshold, default_left, left_child, right_child):
    node = 0
    while feature[base + node] >= 0:
        value = X[row, feature[base + node]]
        if value != value:
            go_left = default_left[base + node]
        else:
            go_left = value <= threshold[base + node]
        node = left_child[base + node] if go_left else right_child[base + node]
    return node


@kernel
def _leaf_binned(
    X_binned, row, base, missing_bin, feature, threshold_bin, default_left, left, right
):
    node = 0
    while feature[base + node] >= 0:
        bin_ = X_binned[row, feature[base + node]]
        if bin_ == missing_bin:
            go_left = default_left[base + node]
        else:
            go_left = bin_ <= threshold_bin[base + node]
        node = left[base + node] if go_left else right[base + node]
    return node


@kernel(parallel=True)
def _forest_margins(
    X,
    feature,
    threshold,
    default_left,
    left_child,
    right_child,
    value,
    tree_offsets,
    tree_outputs,
    margins,
    rows_per_block,
):
    n_rows = X.shape[0]
    n_trees = tree_outputs.shape[0]
    n_blocks = (n_rows + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        last = min(n_rows, first + rows_per_block)
        for tree in range(n_trees):
            base = tree_offsets[tree]
            output = tree_outputs[tree]
            for row in range(first, last):
                leaf = _leaf_raw(
                    X, row, base, feature, threshold, default_left, left_child, right_child
                )
                margins[row, output] += value[base + leaf]


@kernel(parallel=True)
def _forest_leaves(
    X,
    feature,
    threshold,
    default_left,
    left_child,
    right_child,
    tree_offsets,
    out,
    rows_per_block,
):
    n_rows = X.shape[0]
    n_trees = tree_offsets.shape[0] - 1
    n_blocks = (n_rows + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        last = min(n_rows, first + rows_per_block)
        for tree in range(n_trees):
            base = tree_offsets[tree]
            for row in range(first, last):
                out[row, tree] = _leaf_raw(
                    X, row, base, feature, threshold, default_left, left_child, right_child
                )


@kernel(parallel=True)
def _tree_values_raw(X, feature, threshold, default_left, left, right, value, out):
    for row in prange(X.shape[0]):
        out[row] = value[_leaf_raw(X, row, 0, feature, threshold, default_left, left, right)]


@kernel(parallel=True)
def _tree_values_binned(
    X_binned, missing_bin, feature, threshold_bin, default_left, left, right, value, out
):
    for row in prange(X_binned.shape[0]):
        out[row] = value[
            _leaf_binned(
                X_binned, row, 0, missing_bin, feature, threshold_bin, default_left, left, right
            )
        ]


def predict_forest_raw(X, trees, tree_outputs, margins):
    """Add every tree's leaf value to ``margins[:, tree_output]``, tree by tree in order.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
    margins : ndarray of shape (n_rows, n_outputs), float64  # IN, OUT

    Returns
    -------
    margins : ndarray  # OUT
    """
    if not len(trees) or X.shape[0] == 0:
        return margins
    feature, threshold, _, default_left, left, right, value, tree_offsets = pack_forest(trees)
    _forest_margins(
        X,
        feature,
        threshold,
        default_left,
        left,
        right,
        value,
        tree_offsets,
        np.asarray(tree_outputs, dtype=np.int64).reshape(-1),
        margins,
        ROWS_PER_BLOCK,
    )
    return margins


def predict_forest_leaves(X, trees):
    """Leaf index of every row in every tree, shape (n_rows, n_trees) int32."""
    out = np.zeros((X.shape[0], len(trees)), dtype=np.int32)
    if not len(trees) or X.shape[0] == 0:
        return out
    feature, threshold, _, default_left, left, right, _, tree_offsets = pack_forest(trees)
    _forest_leaves(
        X, feature, threshold, default_left, left, right, tree_offsets, out, ROWS_PER_BLOCK
    )
    return out


def predict_tree_raw(X, tree):
    """Leaf value (float64) of every row of raw features ``X`` (n_rows, n_features)."""
    feature, threshold, _, default_left, left, right, value, _ = pack_forest([tree])
    out = np.empty(X.shape[0], dtype=np.float64)
    _tree_values_raw(X, feature, threshold, default_left, left, right, value, out)
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
    feature, _, threshold_bin, default_left, left, right, value, _ = pack_forest([tree])
    out = np.empty(X_binned.shape[0], dtype=np.float64)
    _tree_values_binned(
        X_binned, int(missing_bin), feature, threshold_bin, default_left, left, right, value, out
    )
    return out
