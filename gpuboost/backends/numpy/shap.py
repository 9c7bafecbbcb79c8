"""SHAP values of the NumPy backend: XGBoost's recursive ``TreeShap`` in plain Python.

:func:`tree_shap_recursive` walks one tree node by node for one row (with
XGBoost's conditioning on one feature, from which the interaction values are
derived), in float64. It is the reference the compiled kernels
(:mod:`gpuboost.backends.cpu.shap`, ``cuda/shap.cu``) are tested against, and what
the NumPy backend runs (:func:`predict_contributions`, :func:`predict_interactions`:
slow, one row at a time; the compiled CPU backend and the CUDA backend evaluate every
path of the forest for blocks of rows instead). Its values agree with the compiled
kernels' to rounding (the sums are taken in another order). Definitions and output
shapes as in :mod:`gpuboost.backends.cpu.shap` (docs/DESIGN.md, "SHAP").
"""

import numpy as np

from ...core.shap_paths import child_fractions, tree_expected_value
from ..categorical import category_code_limit, goes_left

__all__ = [
    "predict_contributions",
    "predict_interactions",
    "tree_shap_recursive",
    "contributions_recursive",
    "interactions_recursive",
]


# ---- the plain-Python reference: XGBoost's recursive TreeShap -----------------------
class _PathElement:
    __slots__ = ("feature", "zero_fraction", "one_fraction", "weight")

    def __init__(self, feature=-1, zero_fraction=0.0, one_fraction=0.0, weight=0.0):
        self.feature = feature
        self.zero_fraction = zero_fraction
        self.one_fraction = one_fraction
        self.weight = weight

    def copy(self):
        return _PathElement(self.feature, self.zero_fraction, self.one_fraction, self.weight)


def _extend_path(path, zero_fraction, one_fraction, feature):
    depth = len(path)
    path.append(_PathElement(feature, zero_fraction, one_fraction, 1.0 if depth == 0 else 0.0))
    for i in range(depth - 1, -1, -1):
        path[i + 1].weight += one_fraction * path[i].weight * (i + 1) / (depth + 1)
        path[i].weight = zero_fraction * path[i].weight * (depth - i) / (depth + 1)


def _unwind_path(path, index):
    depth = len(path) - 1
    one_fraction, zero_fraction = path[index].one_fraction, path[index].zero_fraction
    next_one_portion = path[depth].weight
    for i in range(depth - 1, -1, -1):
        if one_fraction != 0:
            tmp = path[i].weight
            path[i].weight = next_one_portion * (depth + 1) / ((i + 1) * one_fraction)
            next_one_portion = tmp - path[i].weight * zero_fraction * (depth - i) / (depth + 1)
        else:
            path[i].weight = path[i].weight * (depth + 1) / (zero_fraction * (depth - i))
    for i in range(index, depth):
        path[i].feature = path[i + 1].feature
        path[i].zero_fraction = path[i + 1].zero_fraction
        path[i].one_fraction = path[i + 1].one_fraction
    path.pop()


def _unwound_path_sum(path, index):
    depth = len(path) - 1
    one_fraction, zero_fraction = path[index].one_fraction, path[index].zero_fraction
    next_one_portion = path[depth].weight
    total = 0.0
    for i in range(depth - 1, -1, -1):
        if one_fraction != 0:
            tmp = next_one_portion * (depth + 1) / ((i + 1) * one_fraction)
            total += tmp
            next_one_portion = path[i].weight - tmp * zero_fraction * ((depth - i) / (depth + 1))
        elif zero_fraction != 0:
            total += (path[i].weight / zero_fraction) / ((depth - i) / (depth + 1))
    return total


def tree_shap_recursive(
    tree,
    x,
    phi,
    condition=0,
    condition_feature=-1,
    node=0,
    parent_path=(),
    zero_fraction=1.0,
    one_fraction=1.0,
    feature=-1,
    condition_fraction=1.0,
    code_limit=None,
):
    """Add one tree's SHAP values for row ``x`` to ``phi`` (XGBoost's ``TreeShap``).

    Parameters
    ----------
    tree : Tree
    x : ndarray of shape (n_features,), float64
    phi : ndarray of shape (n_features + 1,), float64  # IN, OUT
        The expected value is not added (see :func:`contributions_recursive`).
    condition : {0, 1, -1}
        0: plain SHAP values; 1 / -1: conditioned on ``condition_feature`` being
        present / absent (the interaction values' building block).
    condition_feature : int
    node, parent_path, zero_fraction, one_fraction, feature, condition_fraction
        The recursion's state (defaults: the root).
    code_limit : int, optional
        The tree's :func:`~gpuboost.backends.categorical.category_code_limit` (computed
        when None): the hot branch is the one prediction takes
        (:func:`~gpuboost.backends.categorical.goes_left`), numeric or categorical.
    """
    if condition_fraction == 0:
        return
    if code_limit is None:
        code_limit = category_code_limit(tree)
    path = [element.copy() for element in parent_path]
    if condition == 0 or condition_feature != feature:
        _extend_path(path, zero_fraction, one_fraction, feature)
    if tree.feature[node] < 0:
        value = float(tree.value[node])
        for i in range(1, len(path)):
            w = _unwound_path_sum(path, i)
            element = path[i]
            phi[element.feature] += (
                w * (element.one_fraction - element.zero_fraction) * value * condition_fraction
            )
        return
    split = int(tree.feature[node])
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    f_left, f_right = child_fractions(tree, node)
    if goes_left(tree, node, x[split], code_limit):
        hot, cold, hot_zero, cold_zero = left, right, f_left, f_right
    else:
        hot, cold, hot_zero, cold_zero = right, left, f_right, f_left
    incoming_zero, incoming_one = 1.0, 1.0
    for index in range(len(path)):
        if path[index].feature == split:
            incoming_zero, incoming_one = path[index].zero_fraction, path[index].one_fraction
            _unwind_path(path, index)
            break
    hot_condition, cold_condition = condition_fraction, condition_fraction
    if condition > 0 and split == condition_feature:
        cold_condition = 0.0
    elif condition < 0 and split == condition_feature:
        hot_condition *= hot_zero
        cold_condition *= cold_zero
    for child, zero, one, fraction in (
        (hot, hot_zero * incoming_zero, incoming_one, hot_condition),
        (cold, cold_zero * incoming_zero, 0.0, cold_condition),
    ):
        tree_shap_recursive(
            tree,
            x,
            phi,
            condition,
            condition_feature,
            child,
            path,
            zero,
            one,
            split,
            fraction,
            code_limit,
        )


def contributions_recursive(X, trees, tree_outputs, n_outputs, condition=0, condition_feature=-1):
    """Reference of :func:`predict_contributions` (XGBoost's recursion, row by row)."""
    n_rows, n_features = X.shape
    out = np.zeros((n_rows, n_outputs, n_features + 1))
    for tree, output in zip(trees, tree_outputs):
        if condition == 0:
            out[:, output, n_features] += tree_expected_value(tree)
        code_limit = category_code_limit(tree)
        for row in range(n_rows):
            tree_shap_recursive(
                tree, X[row], out[row, output], condition, condition_feature, code_limit=code_limit
            )
    return out


def interactions_recursive(X, trees, tree_outputs, n_outputs):
    """Reference of :func:`predict_interactions`: XGBoost's construction from the
    contributions conditioned on each feature present and absent."""
    n_rows, n_features = X.shape
    diagonal = contributions_recursive(X, trees, tree_outputs, n_outputs)
    out = np.zeros((n_rows, n_outputs, n_features + 1, n_features + 1))
    for i in range(n_features + 1):
        on = contributions_recursive(X, trees, tree_outputs, n_outputs, 1, i)
        off = contributions_recursive(X, trees, tree_outputs, n_outputs, -1, i)
        for k in range(n_features + 1):
            if k != i:
                out[:, :, i, k] = (on[:, :, k] - off[:, :, k]) / 2.0
        out[:, :, i, i] = diagonal[:, :, i] - out[:, :, i, :].sum(axis=-1)  # [i, i] is 0 here
    return out


def predict_contributions(X, trees, tree_outputs, n_outputs, n_threads=1):
    """:func:`contributions_recursive` with the compiled kernel's signature
    (``n_threads`` unused): float64 (n_rows, n_outputs, n_features + 1)."""
    return contributions_recursive(np.asarray(X, dtype=np.float64), trees, tree_outputs, n_outputs)


def predict_interactions(X, trees, tree_outputs, n_outputs, n_threads=1):
    """:func:`interactions_recursive` with the compiled kernel's signature
    (``n_threads`` unused): float64 (n_rows, n_outputs, n_features + 1, n_features + 1)."""
    return interactions_recursive(np.asarray(X, dtype=np.float64), trees, tree_outputs, n_outputs)
