"""Refitting a model's leaves on new data (LightGBM's ``Booster.refit``).

The structure (features, thresholds, default directions, categories) stays; every leaf
value is blended with the value the new data give it::

    leaf = decay_rate * old_leaf + (1 - decay_rate) * learning_rate * w(G, H)

tree after tree, round after round, where ``G`` and ``H`` sum the gradients and hessians
of the new rows reaching the leaf, computed at the margins of the refitted trees before
it (LightGBM's ``FitByExistingTree``), ``w`` is the training's leaf weight
(:func:`gpuboost.core.gain.leaf_weight`, with the round's parameters,
``Booster.round_params``) and the sums are those of training: the gradients quantized
per tree and summed as integers (docs/DESIGN.md, "Quantization"). So the refit is the
same bytes on every backend and machine, and ``decay_rate=0`` on the training data
gives back the trained model (without row sampling or monotone constraints). A leaf no
new row reaches keeps ``decay_rate`` times its value.
"""

import numpy as np

from ..core.gain import SplitParams, leaf_weight
from ..core.quantize import GradientQuantiser
from ..tree.constraints import resolve_monotone
from ..tree.tree import TREE_ARRAYS, Tree

__all__ = ["refit_trees"]


def _check(booster, decay_rate, label):
    if not 0.0 <= float(decay_rate) <= 1.0:
        raise ValueError(f"decay_rate must be in [0, 1], got {decay_rate!r}.")
    if label is None:
        raise ValueError("refit needs labels: pass label= (or a Dataset with a label).")
    if booster.tree_weights is not None:
        raise ValueError("An AdaBoost model (booster='adaboost') has no leaf values to refit.")
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


def refit_trees(booster, backend, features, dataset, margins, decay_rate):
    """The trees of ``booster`` with leaf values refitted on ``dataset`` (see the module
    docstring).

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
    decay_rate : float
        In [0, 1]: the old value's share.

    Returns
    -------
    list of Tree
    """
    objective = _check(booster, decay_rate, dataset.label)
    objective.check_labels(dataset.label)
    decay = float(decay_rate)
    n_outputs, trees = booster.n_outputs, booster.trees
    leaves = backend.to_host(backend.predict_forest_leaves(features, trees)).astype(np.int64)
    label = backend.to_device(dataset.label)
    weight = None if dataset.weight is None else backend.to_device(dataset.weight)
    refitted = []
    for round_index, values in enumerate(booster.round_params):
        params = dict(booster.params, **values)
        split_params = SplitParams.from_params(params)
        on_device = backend.to_device(margins)
        view = on_device[:, 0] if n_outputs == 1 else on_device
        objective.begin_round(backend, label, view, weight)
        gradients, hessians = backend.gradients(objective, label, view, weight, dataset)
        gradients = gradients.reshape(-1, n_outputs)
        hessians = hessians.reshape(-1, n_outputs)
        for output in range(n_outputs):
            index = round_index * n_outputs + output
            tree, leaf_of = trees[index], leaves[:, index]
            (quantized_g, scale_g), (quantized_h, scale_h) = backend.quantize_gradients(
                backend.xp.ascontiguousarray(gradients[:, output]),
                backend.xp.ascontiguousarray(hessians[:, output]),
            )
            sums = np.zeros((tree.n_nodes, 2), dtype=np.int64)
            np.add.at(sums[:, 0], leaf_of, backend.to_host(quantized_g).astype(np.int64))
            np.add.at(sums[:, 1], leaf_of, backend.to_host(quantized_h).astype(np.int64))
            quantiser = GradientQuantiser(scale_g, scale_h)
            with np.errstate(divide="ignore", invalid="ignore"):
                new = params["learning_rate"] * leaf_weight(
                    quantiser.gradients(sums[:, 0]), quantiser.hessians(sums[:, 1]), split_params
                )
            value = tree.value.copy()
            leaf = tree.is_leaf
            value[leaf] = decay * value[leaf] + (1.0 - decay) * new[leaf]
            arrays = {name: getattr(tree, name) for name in TREE_ARRAYS}
            arrays.update(value=value, cat_offsets=tree.cat_offsets, cat_bits=tree.cat_bits)
            refitted.append(Tree(arrays))
            margins[:, output] += value[leaf_of]
    return refitted
