"""Brute-force Shapley values of tree ensembles (the definition, for small trees).

The value function is TreeSHAP's conditional expectation over the tree's cover:
``v(S)`` follows the row's branch at nodes splitting on a feature of ``S`` and the
cover-weighted average of both branches elsewhere. The Shapley values and the
Shapley interaction index are then sums over every subset of the features
(``2**n_features`` evaluations of ``v`` per row and tree).
"""

import itertools
import math

import numpy as np

from gpuboost.backends.categorical import category_code_limit, goes_left
from gpuboost.core.shap_paths import child_fractions

__all__ = ["conditional_expectation", "brute_force_contributions", "brute_force_interactions"]


def conditional_expectation(tree, x, subset, node=0):
    """``v(subset)``: the expected leaf value with the features of ``subset`` fixed to ``x``
    (at their splits, numeric or categorical, the branch prediction takes)."""
    if tree.feature[node] < 0:
        return float(tree.value[node])
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    feature = int(tree.feature[node])
    if feature in subset:
        left_branch = goes_left(tree, node, x[feature], category_code_limit(tree))
        return conditional_expectation(tree, x, subset, left if left_branch else right)
    f_left, f_right = child_fractions(tree, node)
    return f_left * conditional_expectation(tree, x, subset, left) + f_right * (
        conditional_expectation(tree, x, subset, right)
    )


def _values(tree, x, n_features):
    return {
        subset: conditional_expectation(tree, x, frozenset(subset))
        for size in range(n_features + 1)
        for subset in itertools.combinations(range(n_features), size)
    }


def brute_force_contributions(X, trees, tree_outputs, n_outputs):
    """(n_rows, n_outputs, n_features + 1): Shapley values, last column ``v({})``."""
    n_rows, m = X.shape
    out = np.zeros((n_rows, n_outputs, m + 1))
    for tree, output in zip(trees, tree_outputs):
        for row in range(n_rows):
            v = _values(tree, X[row], m)
            out[row, output, m] += v[()]
            for i in range(m):
                others = [f for f in range(m) if f != i]
                for size in range(m):
                    weight = math.factorial(size) * math.factorial(m - size - 1) / math.factorial(m)
                    for subset in itertools.combinations(others, size):
                        with_i = tuple(sorted(subset + (i,)))
                        out[row, output, i] += weight * (v[with_i] - v[subset])
    return out


def brute_force_interactions(X, trees, tree_outputs, n_outputs):
    """(n_rows, n_outputs, n_features + 1, n_features + 1): the Shapley interaction
    index off the diagonal (half of it on each side), each row completed on the
    diagonal so that it sums to the Shapley value; bias entry ``v({})``."""
    n_rows, m = X.shape
    out = np.zeros((n_rows, n_outputs, m + 1, m + 1))
    phi = brute_force_contributions(X, trees, tree_outputs, n_outputs)
    for tree, output in zip(trees, tree_outputs):
        for row in range(n_rows):
            v = _values(tree, X[row], m)
            for i, j in itertools.permutations(range(m), 2):
                others = [f for f in range(m) if f not in (i, j)]
                for size in range(m - 1):
                    weight = (
                        math.factorial(size)
                        * math.factorial(m - size - 2)
                        / (2 * math.factorial(m - 1))
                    )
                    for subset in itertools.combinations(others, size):
                        key = lambda *extra, s=subset: tuple(sorted(s + extra))  # noqa: E731
                        out[row, output, i, j] += weight * (
                            v[key(i, j)] - v[key(i)] - v[key(j)] + v[key()]
                        )
    for i in range(m):
        out[:, :, i, i] = phi[:, :, i] - out[:, :, i, :].sum(axis=-1)
    out[:, :, m, m] = phi[:, :, m]
    return out
