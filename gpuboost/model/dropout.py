"""DART's dropouts (``booster='dart'``): which trees a round drops, and the weights after it.

A DART model (Rashmi and Gilad-Bachrach 2015, as XGBoost implements it) weighs every
tree: prediction adds ``weight_drop[i] * leaf`` of tree ``i``. Each round draws a set of
the existing trees to *drop* (:func:`dropped_trees`); the round's new trees are grown on
the gradients of the margins without them, then the dropped trees and the new ones are
weighed so that their sum keeps its scale (:func:`normalized_weights`)::

    k dropped trees, new trees grown with learning rate eta (n_new of them: the round's
    n_outputs * num_parallel_tree), lr = eta / n_new

    normalize_type  dropped trees' weights   new trees' weight
    'tree'          * k / (k + lr)           1 / (k + lr)
    'forest'        * 1 / (1 + lr)           1 / (1 + lr)
    no tree dropped unchanged                1

Every choice is XGBoost's ``Dart`` booster's, in its order, drawn from a host generator
of the seed and the round (:func:`gpuboost.core.random.host_rng`) instead of XGBoost's
global one: the same model on every machine and backend, and the drop set of round ``r``
is a function of the seed, ``r`` and the weights alone (so that ``Booster.predict(...,
training=True)`` can draw the set the next round would drop, and a resumed training
draws the same sets as an uninterrupted one). Weights are float64 (XGBoost's float32);
the weighted sampling's total is summed exactly (``math.fsum``).
"""

import math

from ..core.random import host_rng

__all__ = ["DROPOUT_STREAM", "dropped_trees", "normalized_weights"]

#: First stream id of :func:`dropped_trees`' generator: ``host_rng(seed, DROPOUT_STREAM,
#: round)``; column sampling uses ``host_rng(seed, round, position)``, apart from it as
#: long as no model reaches round ``DROPOUT_STREAM`` (1.1e9).
DROPOUT_STREAM = 0x44415254  # "DART"


def dropped_trees(weights, params, round_index):
    """The trees round ``round_index`` drops (XGBoost's ``DropTrees``).

    Parameters
    ----------
    weights : sequence of float
        Every existing tree's weight (``Booster.weight_drop``).
    params : dict
        Validated: ``seed``, ``rate_drop``, ``skip_drop``, ``one_drop``, ``sample_type``.
    round_index : int
        The round (counted from the start of the model).

    Returns
    -------
    list of int
        Increasing tree indices; empty when the round skips the dropout.

    Notes
    -----
    In order: with ``skip_drop > 0`` one uniform draw skips the round below
    ``skip_drop``; then one uniform per tree, tree ``i`` dropped below ``rate_drop``
    ('uniform') or ``rate_drop * n * w_i / sum(w)`` ('weighted'); with ``one_drop`` and
    nothing dropped, one tree drawn uniformly ('uniform') or in proportion to its
    weight ('weighted': the first tree whose running weight sum, added in tree order,
    exceeds a uniform times the total).
    """
    n_trees = len(weights)
    if n_trees == 0:
        return []
    rng = host_rng(params["seed"], DROPOUT_STREAM, round_index)
    if params["skip_drop"] > 0.0 and rng.random() < params["skip_drop"]:
        return []
    uniforms = rng.random(n_trees)
    rate = params["rate_drop"]
    weighted = params["sample_type"] == "weighted"
    total = math.fsum(weights) if weighted else 0.0
    dropped = [
        i
        for i in range(n_trees)
        if uniforms[i] < (rate * n_trees * weights[i] / total if weighted else rate)
    ]
    if params["one_drop"] and not dropped:
        if weighted:
            target = rng.random() * total
            running = 0.0
            chosen = n_trees - 1
            for i, weight in enumerate(weights):
                running += weight
                if running > target:
                    chosen = i
                    break
            dropped = [chosen]
        else:
            dropped = [int(rng.integers(n_trees))]
    return dropped


def normalized_weights(weights, dropped, n_new, learning_rate, normalize_type):
    """The weights after a round (XGBoost's ``NormalizeTrees``; see the module table).

    Parameters
    ----------
    weights : list of float
        The weights before the round, one per existing tree.
    dropped : list of int
        The round's dropped trees (:func:`dropped_trees`).
    n_new : int
        Trees the round added.
    learning_rate : float
        The round's learning rate.
    normalize_type : {'tree', 'forest'}

    Returns
    -------
    list of float
        ``len(weights) + n_new`` weights.
    """
    weights = list(weights)
    n_dropped = len(dropped)
    if n_dropped == 0:
        return weights + [1.0] * n_new
    lr = learning_rate / n_new
    if normalize_type == "forest":
        factor = 1.0 / (1.0 + lr)
        new_weight = factor
    else:
        factor = n_dropped / (n_dropped + lr)
        new_weight = 1.0 / (n_dropped + lr)
    for i in dropped:
        weights[i] *= factor
    return weights + [new_weight] * n_new
