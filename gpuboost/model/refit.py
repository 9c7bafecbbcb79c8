"""Refitting a model's leaves on new data (LightGBM's ``Booster.refit``).

The structure (features, thresholds, default directions, categories) stays; every leaf
value is blended with the value the new data give it::

    leaf = decay_rate * old_leaf + (1 - decay_rate) * learning_rate * w(G, H)

tree after tree (a round's forest of ``num_parallel_tree`` trees per output from the
same gradients), round after round, where ``G`` and ``H`` sum the gradients and hessians
of the new rows reaching the leaf, computed at the margins of the refitted trees before
it (LightGBM's ``FitByExistingTree``), ``w`` is the training's leaf weight
(:func:`gpuboost.core.gain.leaf_weight`, with the round's parameters,
the learning rate divided by ``num_parallel_tree``,
``Booster.round_params``) and the sums are those of training: the gradients quantized
per tree and summed as integers (docs/DESIGN.md, "Quantization"). So the refit is the
same bytes on every backend and machine, and ``decay_rate=0`` on the training data
gives back the trained model (without row sampling or monotone constraints). A leaf no
new row reaches keeps ``decay_rate`` times its value.
"""

import numpy as np

from ..core.gain import SplitParams, leaf_weight, path_smoothed, split_gain
from ..core.quantize import GradientQuantiser
from ..params import tree_learning_rate
from ..tree.constraints import resolve_monotone
from ..tree.tree import TREE_ARRAYS, Tree

__all__ = ["updated_trees", "pruned_tree"]


def _check(booster, decay_rate, label):
    if not 0.0 <= float(decay_rate) <= 1.0:
        raise ValueError(f"decay_rate must be in [0, 1], got {decay_rate!r}.")
    if label is None:
        raise ValueError("refit needs labels: pass label= (or a Dataset with a label).")
    if booster.tree_weights is not None:
        raise ValueError("An AdaBoost model (booster='adaboost') has no leaf values to refit.")
    if booster.weight_drop is not None:
        raise ValueError(
            "A DART model (booster='dart') weighs its trees (weight_drop) by the dropouts "
            "of its training; refit and the update process do not redo them: train a new "
            "model instead."
        )
    if booster.vector_leaves:
        raise ValueError(
            "refit does not take vector-leaf models (multi_strategy='multi_output_tree') "
            "yet: train a new model on the new data."
        )
    objective = booster.objective
    if objective.has_leaf_refit:
        raise ValueError(
            f"objective {booster.params['objective']!r} sets its leaves to a quantile of the "
            "residuals, not a Newton step; refit supports the objectives whose leaves are "
            "Newton steps."
        )
    directions = resolve_monotone(
        booster.params["monotone_constraints"], booster.n_features, booster.feature_names
    )
    if any(directions):
        raise ValueError(
            "A model with monotone_constraints bounds its leaves by their ancestors'; "
            "refit does not: train a new model instead."
        )
    return objective


def _node_sums(tree, leaf_of, quantized_g, quantized_h):
    """Per node, the integer sums of the quantized gradients and hessians and the rows of
    the rows passing through it (leaves' sums, added up to the root)."""
    sums = np.zeros((tree.n_nodes, 3), dtype=np.int64)
    np.add.at(sums[:, 0], leaf_of, quantized_g.astype(np.int64))
    np.add.at(sums[:, 1], leaf_of, quantized_h.astype(np.int64))
    np.add.at(sums[:, 2], leaf_of, 1)
    for node in range(tree.n_nodes - 1, -1, -1):  # children are numbered after parents
        if not tree.is_leaf[node]:
            sums[node] += sums[tree.left_child[node]] + sums[tree.right_child[node]]
    return sums


def updated_trees(booster, backend, features, dataset, margins, mode, decay_rate=0.0, rounds=None):
    """The trees of ``booster`` updated on ``dataset``, round after round, at the margins of
    the updated trees before each (see the module docstring).

    Parameters
    ----------
    booster : Booster
    backend : Backend
        Computes the leaves, gradients and quantization (every backend the same bytes).
    features : backend array of shape (n_rows, n_features)  # IN
        ``dataset``'s raw features in the model's order (``backend.prepare_features``).
    dataset : Dataset
        Labels, weights and queries of the new rows.
    margins : ndarray of shape (n_rows, n_outputs), float64 (host)  # IN / OUT
        The margins before the first tree (base margins); updated tree after tree.
    mode : {'refit', 'refresh', 'refresh_stats'}
        'refit': leaves blended with ``decay_rate`` (LightGBM's ``refit``); 'refresh'
        and 'refresh_stats': every node's cover, count, gain and value from the new rows
        (XGBoost's ``refresh`` updater with ``refresh_leaf`` 1 and 0: the leaves' values
        are kept with 0).
    decay_rate : float
        'refit': in [0, 1], the old value's share.
    rounds : int, optional
        Update the first ``rounds`` rounds only (default all); the others are returned
        as they are.

    Returns
    -------
    list of Tree
    """
    objective = _check(booster, decay_rate, dataset.label)
    objective.check_labels(dataset.label)
    decay = float(decay_rate)
    n_outputs, trees, per_round = booster.n_outputs, booster.trees, booster.trees_per_round
    n_rounds = booster.num_boosted_rounds() if rounds is None else int(rounds)
    leaves = backend.to_host(backend.predict_forest_leaves(features, trees[: n_rounds * per_round]))
    leaves = leaves.astype(np.int64)
    label = backend.to_device(dataset.label)
    weight = None if dataset.weight is None else backend.to_device(dataset.weight)
    updated = []
    for round_index, values in enumerate(booster.round_params[:n_rounds]):
        params = dict(booster.params, **values)
        split_params = SplitParams.from_params(params)
        on_device = backend.to_device(margins)
        view = on_device[:, 0] if n_outputs == 1 else on_device
        objective.begin_round(backend, label, view, weight)
        gradients, hessians = backend.gradients(objective, label, view, weight, dataset)
        gradients = gradients.reshape(-1, n_outputs)
        hessians = hessians.reshape(-1, n_outputs)
        for position in range(per_round):  # a round's forest: tree p adds to output p % k
            output = position % n_outputs
            index = round_index * per_round + position
            tree, leaf_of = trees[index], leaves[:, index]
            (quantized_g, scale_g), (quantized_h, scale_h) = backend.quantize_gradients(
                backend.xp.ascontiguousarray(gradients[:, output]),
                backend.xp.ascontiguousarray(hessians[:, output]),
            )
            sums = _node_sums(
                tree, leaf_of, backend.to_host(quantized_g), backend.to_host(quantized_h)
            )
            quantiser = GradientQuantiser(scale_g, scale_h)
            g, h = quantiser.gradients(sums[:, 0]), quantiser.hessians(sums[:, 1])
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                weights = leaf_weight(g, h, split_params)
                if split_params.path_smooth > 0.0:  # as the grower's node values
                    weights = path_smoothed(
                        weights, sums[:, 2], tree.left_child, tree.right_child,
                        split_params.path_smooth,
                    )  # fmt: skip
                new = tree_learning_rate(params) * weights
            leaf = tree.is_leaf
            value = tree.value.copy()
            if mode == "refit":
                value[leaf] = decay * value[leaf] + (1.0 - decay) * new[leaf]
                tree = tree.replaced(value=value)
            else:
                value[~leaf] = new[~leaf]
                if mode == "refresh":
                    value[leaf] = new[leaf]
                gain = tree.gain.copy()
                inner = np.flatnonzero(~leaf)
                left, right = tree.left_child[inner], tree.right_child[inner]
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    gain[inner] = split_gain(
                        g[left], h[left], g[right], h[right], g[inner], h[inner], split_params
                    )
                tree = tree.replaced(value=value, gain=gain, cover=h, count=sums[:, 2])
            updated.append(tree)
            margins[:, output] += value[leaf_of]
    return updated + list(trees[n_rounds * per_round :])


def pruned_tree(tree, gamma, max_depth):
    """XGBoost's ``prune`` updater: bottom-up, a split whose children are both leaves
    becomes a leaf (keeping its own value, its learning rate times its weight) when its
    gain is below ``gamma`` or its children lie deeper than ``max_depth`` (0: no bound),
    repeated upwards; the nodes left are renumbered in their order.

    Returns
    -------
    Tree
        ``tree`` itself when nothing is pruned.
    """
    feature = tree.feature.copy()
    left, right = tree.left_child.copy(), tree.right_child.copy()
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    for node in range(tree.n_nodes):
        if feature[node] >= 0:
            depth[left[node]] = depth[right[node]] = depth[node] + 1
    changed = True
    while changed:
        changed = False
        for node in range(tree.n_nodes - 1, -1, -1):
            if feature[node] < 0 or feature[left[node]] >= 0 or feature[right[node]] >= 0:
                continue
            too_deep = max_depth > 0 and depth[node] + 1 > max_depth
            if tree.gain[node] < gamma or too_deep:
                feature[node], left[node], right[node] = -1, -1, -1
                changed = True
    if np.array_equal(feature, tree.feature):
        return tree
    reached = np.zeros(tree.n_nodes, dtype=bool)
    stack = [0]
    while stack:
        node = stack.pop()
        reached[node] = True
        if feature[node] >= 0:
            stack += [int(left[node]), int(right[node])]
    kept = np.flatnonzero(reached)
    renumber = np.full(tree.n_nodes, -1, dtype=np.int64)
    renumber[kept] = np.arange(len(kept))
    arrays = {name: getattr(tree, name)[kept] for name in TREE_ARRAYS}
    inner = feature[kept] >= 0
    arrays["feature"] = feature[kept]
    arrays["left_child"] = np.where(inner, renumber[left[kept]], -1)
    arrays["right_child"] = np.where(inner, renumber[right[kept]], -1)
    for name, empty in (
        ("threshold_bin", 0),
        ("threshold", 0.0),
        ("default_left", False),
        ("gain", 0.0),
    ):
        arrays[name] = np.where(inner, arrays[name], empty)
    words = [
        tree.cat_bits[tree.cat_offsets[node] : tree.cat_offsets[node + 1]]
        if feature[node] >= 0
        else []
        for node in kept
    ]
    arrays["cat_offsets"] = np.concatenate([[0], np.cumsum([len(w) for w in words])])
    arrays["cat_bits"] = np.concatenate([np.asarray(w, dtype=np.uint32) for w in words] or [[]])
    return Tree(arrays)
