"""XGBoost's update process (``process_type='update'``): the trees of an existing model
changed on new data instead of new trees grown.

``train({"process_type": "update", "updater": "refresh,prune", ...}, dtrain, n,
init_model=model)`` returns a copy of ``model`` whose first ``n`` rounds went through the
updaters, in the order named:

* ``refresh``: round after round, at the margins of the refreshed rounds before it (the
  base margin first), dtrain's gradients are quantized and summed per node as in
  training; every node's cover, row count, gain and value (its learning rate times its
  weight) are recomputed from them, and with ``refresh_leaf`` the leaves' values too
  (:func:`gpuboost.model.refit.updated_trees`). On the training data it gives back the
  trained model.
* ``prune``: XGBoost's bottom-up rule with the call's ``gamma`` and ``max_depth``
  (:func:`gpuboost.model.refit.pruned_tree`).

The rounds beyond ``n`` are kept as they are. Each round keeps its own parameters
(``Booster.round_params``). Evaluation sets, callbacks and early stopping belong to
growing trees and are refused here.
"""

from ..model.booster import Booster
from ..model.refit import pruned_tree

__all__ = ["update_model", "refuse_update"]


def refuse_update(params, where):
    """ValueError when validated ``params`` ask for the update process in ``where``, which
    grows new trees (cross-validation, Dask)."""
    if params["process_type"] == "update":
        raise ValueError(
            f"{where} grows new trees; process_type='update' changes an existing model's on "
            "one machine: gpuboost.train(params, dtrain, n, init_model=model)."
        )


def update_model(params, dtrain, num_boost_round, init_model, backend):
    """The updated copy of ``init_model`` (see the module docstring).

    Parameters
    ----------
    params : dict
        Validated; ``process_type='update'``.
    dtrain : Dataset
    num_boost_round : int
        Rounds of ``init_model`` to update, from the first.
    init_model : Booster or path
    backend : Backend

    Returns
    -------
    Booster

    Raises
    ------
    ValueError
        No ``init_model``, fewer rounds in it than ``num_boost_round``, an AdaBoost model.
    """
    if init_model is None:
        raise ValueError(
            "process_type='update' changes the trees of an existing model: pass "
            "init_model= (a Booster or a model file)."
        )
    model = init_model if isinstance(init_model, Booster) else Booster.load_model(init_model)
    if model.tree_weights is not None:
        raise ValueError(
            "init_model is an AdaBoost model (booster='adaboost'), whose rounds are weighted "
            "votes: process_type='update' updates gradient-boosted trees."
        )
    if num_boost_round > model.num_boosted_rounds():
        raise ValueError(
            f"process_type='update' updates existing rounds: num_boost_round="
            f"{num_boost_round}, but init_model has {model.num_boosted_rounds()}."
        )
    updated = model.copy()
    for updater in params["updater"].split(","):
        if updater == "refresh":
            mode = "refresh" if params["refresh_leaf"] else "refresh_stats"
            updated = updated._updated(dtrain, mode, rounds=num_boost_round, backend=backend)
        else:
            n_trees = num_boost_round * updated.trees_per_round
            updated.trees = [
                pruned_tree(tree, params["gamma"], params["max_depth"])
                for tree in updated.trees[:n_trees]
            ] + updated.trees[n_trees:]
    return updated
