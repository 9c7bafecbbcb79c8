"""DART (``booster='dart'``): gradient boosting whose rounds drop trees (XGBoost's ``Dart``).

A round of :class:`DartLearner`::

    dropped = dropped_trees(weights, params, round)       # gpuboost.model.dropout
    margins = base + sum of weight_i * tree_i, i not dropped (when any is dropped)
    trees   = the gbtree round on those margins' gradients   # GBTreeLearner._grow_round
    weights = normalized_weights(weights, dropped, ...)     # dropped scaled, new appended
    margins = base + sum of weight_i * tree_i               # every tree (when any dropped)

The margins are recomputed from the trees by the prediction code itself
(``Booster._prediction_trees``, ``backend.predict_forest_raw``), so the training, the
evaluation sets' metrics and ``Booster.predict`` add the same products in the same order;
a round that drops nothing adds its trees' values to the running margins as gbtree does
(weight 1: the same bits). Recomputing costs one prediction of every tree per dropping
round, as XGBoost's. The learner needs the raw training features (a dense copy of sparse
input).
"""

from ..model.dropout import dropped_trees, normalized_weights
from .gbtree import GBTreeLearner, _initial_margins, round_settings

__all__ = ["DartLearner"]


class DartLearner(GBTreeLearner):
    """DART: :class:`GBTreeLearner`'s setup and trees, with the dropouts of the module
    docstring (same parameters)."""

    label = "dart "

    def __init__(self, given_params, dtrain, evals, obj, custom_metric, init_model, backend):
        super().__init__(given_params, dtrain, evals, obj, custom_metric, init_model, backend)
        booster = self.booster
        if booster.weight_drop is None:  # a new model (an init_model's are its own)
            booster.weight_drop = []
        self.train_features = backend.prepare_features(dtrain.features_for(backend))
        # Every set's margins before any tree: its base_margin, else the model's.
        self.train_base = _initial_margins(booster, dtrain, None, None)
        self.eval_bases = [
            None if eval_set.is_train else _initial_margins(booster, eval_set.dataset, None, None)
            for eval_set in self.eval_sets
        ]

    def _margins(self, features, base, dropped=()):
        """Backend array (n_rows, n_outputs): ``base`` plus every tree but ``dropped``,
        weighted, as ``Booster.predict`` adds them."""
        booster, backend = self.booster, self.backend
        trees, outputs = booster._prediction_trees(0, len(booster.trees), frozenset(dropped))
        return backend.predict_forest_raw(features, trees, outputs, backend.to_device(base.copy()))

    def update(self, round_index):
        """One round: drop, grow on the remaining trees' margins, renormalize."""
        params, split_params = round_settings(self)
        booster = self.booster
        dropped = dropped_trees(booster.weight_drop, params, round_index)
        if dropped:
            with self.timer.phase("dropout"):
                self.margins = self._margins(self.train_features, self.train_base, dropped)
        trees, values = self._grow_round(round_index, params, split_params)
        booster.weight_drop = normalized_weights(
            booster.weight_drop,
            dropped,
            len(trees),
            params["learning_rate"],
            params["normalize_type"],
        )
        booster.append_round(trees, values)
        if dropped:
            with self.timer.phase("dropout"):
                self.margins = self._margins(self.train_features, self.train_base)
                for eval_set, base in zip(self.eval_sets, self.eval_bases):
                    eval_set.margins = (
                        self.margins
                        if eval_set.is_train
                        else self._margins(eval_set.features, base)
                    )
        return True
