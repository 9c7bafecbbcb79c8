"""Partition and prediction with categorical splits, in array-module code.

Written once on ``xp`` (numpy for the CPU backends, CuPy -- or the emulation's
device arrays -- for the CUDA backend), so both backends run the same operations and
give the same bits (docs/DESIGN.md "Categorical features"). A backend sends here the
batches of categorical splits (:func:`partition_categorical`) and the trees with a
categorical split (:func:`predict_leaves`, :func:`predict_tree_values`,
:func:`predict_forest_values`); trees without one keep the backend's own kernels.

Traversal (:func:`predict_leaves`) goes level by level over all rows at once: at a
numeric split ``x <= threshold`` (binned: ``bin <= threshold_bin``) goes left; at a
categorical split the row's code (binned: its bin, which is its code or the "other"
bin's) is looked up in the node's bitset (:meth:`gpuboost.tree.tree.Tree.category_table`);
missing values -- and at a categorical split codes that are negative, not integers or
past the bitset -- follow ``default_left``.
"""

import numpy as np

from ..core.categorical import BITS_PER_WORD, bitset_contains, bitset_members

__all__ = [
    "has_categorical",
    "bins_going_left",
    "partition_categorical",
    "predict_leaves",
    "predict_tree_values",
    "predict_forest_values",
    "predict_forest_leaf_indices",
    "predict_leaves_naive",
    "category_code_limit",
    "goes_left",
]


def has_categorical(trees):
    """Whether any of ``trees`` has a categorical split."""
    return any(getattr(tree, "has_categorical", False) for tree in trees)


def bins_going_left(left_set, default_left, missing_bin):
    """Per bin, whether a categorical split sends its rows left (host ndarray of shape
    (missing_bin + 1,), bool): the bins of ``left_set`` (uint32 bitset words), and the
    missing bin when ``default_left``."""
    goes_left = np.zeros(missing_bin + 1, dtype=bool)
    goes_left[bitset_members(left_set)] = True
    goes_left[missing_bin] = bool(default_left)
    return goes_left


def partition_categorical(
    xp,
    to_device,
    X_binned,
    sample_indices,
    begins,
    ends,
    features,
    left_sets,
    default_left,
    missing_bin,
):
    """Split the segments ``[begins[i], ends[i])`` of ``sample_indices`` by categorical
    splits (in place, stable: each child keeps the rows' order).

    Parameters
    ----------
    xp : module
    to_device : callable
        Host ndarray -> array of ``xp`` (the backend's ``to_device``).
    X_binned : array of shape (n_rows, n_features), uint8, row-major
    sample_indices : array of shape (n_samples,), int32  # IN, OUT
    begins, ends, features : host int sequences, one per split
    left_sets : ndarray of shape (n_splits, n_words), uint32
        The bins going left.
    default_left : host bool sequence
    missing_bin : int
    """
    for i in range(len(begins)):
        begin, end = int(begins[i]), int(ends[i])
        if end <= begin:
            continue
        goes_left = bins_going_left(left_sets[i], default_left[i], missing_bin)
        segment = sample_indices[begin:end]
        bins = X_binned[segment, int(features[i])]
        left = to_device(goes_left)[bins.astype(np.int64)]
        left_rows = segment[left]
        right_rows = segment[~left]
        n_left = int(left_rows.shape[0])
        sample_indices[begin : begin + n_left] = left_rows
        sample_indices[begin + n_left : end] = right_rows


def _tree_arrays(to_device, tree, binned):
    threshold = tree.threshold_bin.astype(np.int64) if binned else tree.threshold
    return (
        to_device(tree.feature.astype(np.int64)),
        to_device(threshold),
        to_device(tree.default_left),
        to_device(tree.left_child.astype(np.int64)),
        to_device(tree.right_child.astype(np.int64)),
        to_device(tree.is_categorical),
        to_device(tree.category_table()),
    )


def predict_leaves(xp, to_device, values, tree, missing_bin=None):
    """Leaf index of every row (array of ``xp``, shape (n_rows,), int64).

    ``values``: raw features (float64 or float32, NaN missing; ``missing_bin`` None) or
    binned features (uint8, with ``missing_bin``), shape (n_rows, n_features).
    """
    binned = missing_bin is not None
    feature, threshold, default_left, left, right, is_cat, table = _tree_arrays(
        to_device, tree, binned
    )
    n_bits = table.shape[1] * BITS_PER_WORD
    n_rows = values.shape[0]
    rows = xp.arange(n_rows, dtype=np.int64)
    nodes = xp.zeros(n_rows, dtype=np.int64)
    for _ in range(tree.depth()):
        node_feature = feature[nodes]
        internal = node_feature >= 0
        x = values[rows, xp.where(internal, node_feature, 0)]
        if binned:
            x = x.astype(np.int64)
            missing = x == missing_bin
            numeric_left = x <= threshold[nodes]
            code_ok = (~missing) & (x < n_bits)
            code = xp.where(code_ok, x, 0)
        else:
            x = x.astype(np.float64)
            missing = xp.isnan(x)
            numeric_left = x <= threshold[nodes]
            code_ok = (~missing) & (x >= 0) & (x < n_bits) & (xp.floor(x) == x)
            code = xp.where(code_ok, x, 0.0).astype(np.int64)
        categorical = is_cat[nodes]
        in_set = bitset_contains(xp, table, nodes, code)
        use_default = missing | (categorical & ~code_ok)
        goes_left = xp.where(
            use_default, default_left[nodes], xp.where(categorical, in_set, numeric_left)
        )
        nodes = xp.where(internal, xp.where(goes_left, left[nodes], right[nodes]), nodes)
    return nodes


def category_code_limit(tree):
    """The codes ``[0, limit)`` that :func:`predict_leaves` looks up in ``tree``'s
    category sets (the width of :meth:`~gpuboost.tree.tree.Tree.category_table` in
    bits); any other value at a categorical split takes ``default_left``."""
    return tree.category_table().shape[1] * BITS_PER_WORD


def goes_left(tree, node, value, code_limit):
    """Whether the raw value ``value`` (float, NaN missing) goes left at the internal
    ``node`` of ``tree``: one step of :func:`predict_leaves` for one row (its scalar
    reference; ``code_limit`` from :func:`category_code_limit`)."""
    value = float(value)
    if np.isnan(value):
        return bool(tree.default_left[node])
    begin, end = int(tree.cat_offsets[node]), int(tree.cat_offsets[node + 1])
    if end == begin:
        return bool(value <= tree.threshold[node])
    if not (0.0 <= value < code_limit and np.floor(value) == value):
        return bool(tree.default_left[node])
    word = int(value) // BITS_PER_WORD
    if word >= end - begin:  # past the node's words: zero padding, not in the set
        return False
    return bool((int(tree.cat_bits[begin + word]) >> (int(value) % BITS_PER_WORD)) & 1)


def predict_tree_values(xp, to_device, values, tree, missing_bin=None):
    """Leaf value (float64) of every row (see :func:`predict_leaves`)."""
    return to_device(tree.value)[predict_leaves(xp, to_device, values, tree, missing_bin)]


def predict_forest_values(xp, to_device, X, trees, tree_outputs, margins):
    """Add every tree's leaf value to ``margins[:, output]``, tree by tree in order
    (the order of every backend's forest prediction); returns ``margins``."""
    for tree, output in zip(trees, tree_outputs):
        margins[:, int(output)] += predict_tree_values(xp, to_device, X, tree)
    return margins


def predict_forest_leaf_indices(xp, to_device, X, trees):
    """Leaf index of every row in every tree, shape (n_rows, n_trees) int32."""
    out = xp.zeros((X.shape[0], len(trees)), dtype=np.int32)
    for i, tree in enumerate(trees):
        out[:, i] = predict_leaves(xp, to_device, X, tree).astype(np.int32)
    return out


def predict_leaves_naive(tree, X=None, X_binned=None, missing_bin=None):
    """Reference loop traversal (one row at a time) on raw or binned features."""
    data = X if X is not None else X_binned
    leaves = np.empty(data.shape[0], dtype=np.int64)
    categorical = tree.is_categorical
    code_limit = category_code_limit(tree) if categorical.any() else 0
    for row in range(data.shape[0]):
        node = 0
        while tree.feature[node] >= 0:
            value = data[row, tree.feature[node]]
            if X is not None:
                is_missing = bool(np.isnan(value))
            else:
                is_missing = int(value) == missing_bin
            if categorical[node]:
                # Codes below the tree's limit are looked up (past the node's own words:
                # not in its set, right); others take the default, as predict_leaves.
                members = set(tree.category_set(node).tolist())
                valid = (
                    not is_missing
                    and float(value) >= 0
                    and float(value) == int(value)
                    and int(value) < code_limit
                )
                left = bool(tree.default_left[node]) if not valid else int(value) in members
            elif is_missing:
                left = bool(tree.default_left[node])
            elif X is not None:
                left = bool(value <= tree.threshold[node])
            else:
                left = int(value) <= tree.threshold_bin[node]
            node = tree.left_child[node] if left else tree.right_child[node]
        leaves[row] = node
    return leaves
