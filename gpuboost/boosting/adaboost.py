"""Discrete AdaBoost (SAMME): ``train(params, ...)`` with ``booster='adaboost'``.

The algorithm (Zhu, Zou, Rosset and Hastie 2009, "Multi-class AdaBoost"; the
algorithm of scikit-learn's ``AdaBoostClassifier``) for ``K >= 2`` classes:
row weights start at the sample weights (1 without them); each round

1. fits a classification tree (the *weak learner*: depth ``max_depth``, stumps
   by default) to the weighted labels,
2. computes its weighted error ``eps`` (the weight of the rows it
   misclassifies over the total weight),
3. gives it the weight ``c = learning_rate * (log((1 - eps) / eps) + log(K - 1))``,
4. multiplies the weights of the misclassified rows by ``exp(c)``.

The model's score of class ``k`` is ``sum over rounds of c * [tree predicts k]``;
the prediction is the class of the largest score. Probabilities follow
scikit-learn (Zhu et al., eq. 15, with the symmetric class coding ``f_k = c`` if
the tree predicts ``k`` else ``-c / (K - 1)``, summed and divided by
``sum(c)``): ``softmax(f / (K - 1))``, which is
``softmax(K * score / ((K - 1)**2 * sum(c)))`` (a shift common to all classes
cancels), and for two classes ``sigmoid(2 * (score_1 - score_0) / sum(c))``.

Special rounds (as scikit-learn does): a perfect tree (``eps == 0``) is kept
with weight :data:`PERFECT_ROUND_TREE_WEIGHT` and training stops; a tree no
better than chance (``eps >= 1 - 1/K``) is discarded and training stops, and
if it is the first tree ``ValueError`` is raised.

The weak learner
----------------
A Gini classification tree, grown by the shared
:class:`gpuboost.tree.grower.TreeGrower` (depthwise, ``max_depth``) with a Gini
splitter (scikit-learn's criterion, the split scan on exact integer class
histograms; see :mod:`gpuboost.tree.splitters.gini`): by default
(``tree_method='exact'``) :class:`~gpuboost.tree.splitters.gini.ExactGiniSplitter`,
whose candidates are every threshold between two distinct training values of a
feature, as scikit-learn's are at a stump; with ``tree_method='hist'``
:class:`~gpuboost.tree.splitters.gini.GiniSplitter` on the ``max_bin`` bins (for
large tables: its histograms do not grow with the distinct values). A leaf predicts
the class of the largest weight (lowest class on ties); the tree's node class
sums (``GrownTree.node_sums``) give the weighted error.

Determinism: the error ``eps`` is computed from the exact integer class sums
of the leaves, the weight update multiplies by the host scalar ``exp(c)`` and
renormalizes by the maximum weight (not the sum, a float reduction whose order
differs between backends), and every float on the host is computed from
integers, so both backends give byte-identical models, also on a real GPU.
Renormalizing by the maximum instead of the sum changes nothing: the tree fit
and ``eps`` are invariant to a common factor. Rows whose weight falls below
``2**-30`` of the largest quantize to 0 and stop counting (scikit-learn clips
weights at ``2**-52`` of their sum instead).

The model
---------
A :class:`~gpuboost.Booster` with ``params['booster'] == 'adaboost'`` and
``tree_weights`` (the ``c`` of every round, saved in the model JSON). For two
classes it has one output and one tree per round whose leaves hold ``+c``
(class 1) or ``-c`` (class 0); for ``K > 2`` classes, ``K`` outputs and ``K``
trees per round with the same structure, tree ``k``'s leaves holding ``c``
where the weak learner predicts ``k`` and 0 elsewhere. The margins
(``predict(output_margin=True)``) are therefore the SAMME scores (for two
classes, their difference), computed by the ordinary tree ensemble
prediction of both backends; ``Booster.predict`` divides them by
:func:`samme_score_scale` before the objective's link, ``binary:logistic``'s
sigmoid or ``multi:softprob``'s softmax (``multi:softmax`` returns the class),
which gives scikit-learn's probabilities.

Parameters
----------
``objective`` selects the task and the link: ``binary:logistic`` (labels 0 and
1; the default unless ``num_class >= 3``), ``multi:softprob`` or
``multi:softmax`` (labels ``0 .. num_class - 1``); its gradients are not used.
Used: ``learning_rate`` (default **1.0** here), ``max_depth`` (default **1**,
at least 1), ``min_data_in_leaf`` (default **1**, scikit-learn's), ``num_class``,
``eval_metric`` (default ``error`` / ``merror``), ``tree_method`` (default
**'exact'**; ``'hist'``), ``max_bin`` and ``seed`` (through the Dataset; the bins
of ``'hist'``), ``device``, ``verbosity``, ``nthread``. Giving any other training parameter a
non-default value raises ``ValueError``. Not supported: ``init_model``, a
custom objective (``obj``), ``base_margin``.
"""

from functools import partial

import numpy as np

from ..core import strict_math
from ..core.dtypes import GRAD_QUANT_DTYPE, Y_DTYPE
from ..core.gain import SplitParams
from ..core.quantize import GradientQuantiser
from ..core.random import host_rng
from ..model.booster import Booster, samme_score_scale
from ..objectives import get_objective
from ..params import DEFAULT_MIN_CHILD_WEIGHT, given_names, round_values, validate_params
from ..tree.feature_sampler import FeatureSampler
from ..tree.grower import GrowthPolicy, TreeGrower
from ..tree.splitters import ExactGiniSplitter, GiniSplitter, TreeInput
from ..tree.tree import TREE_ARRAYS, Tree
from .loop import (
    EvalSet,
    bind_binning,
    check_evals,
    eval_features,
    make_timer,
    metrics_of,
    record_metrics,
)

__all__ = [
    "AdaBoostLearner",
    "adaboost_params",
    "samme_score_scale",
    "PERFECT_ROUND_TREE_WEIGHT",
    "ADABOOST_PARAMETERS",
    "ADABOOST_DEFAULTS",
]

#: The ``booster`` parameter value that selects this module.
ADABOOST = "adaboost"
#: Weight of a perfect tree (``eps == 0``), after which training stops
#: (scikit-learn's value).
PERFECT_ROUND_TREE_WEIGHT = 1.0
#: Training parameters the SAMME loop uses (others must keep their defaults).
ADABOOST_PARAMETERS = frozenset(
    {
        "booster",
        "objective",
        "num_class",
        "eval_metric",
        "learning_rate",
        "max_depth",
        "min_data_in_leaf",
        "max_bin",
        "seed",
        "device",
        "verbosity",
        "nthread",
        "tree_method",
    }
)
#: Defaults that differ from gradient boosting's (scikit-learn's AdaBoostClassifier).
ADABOOST_DEFAULTS = {
    "learning_rate": 1.0,
    "max_depth": 1,
    "min_data_in_leaf": 1,
    "tree_method": "exact",
    # Not the multiclass objectives' 1e-3 (gpuboost.params): the weak learners' own.
    "min_child_weight": DEFAULT_MIN_CHILD_WEIGHT,
    # Stumps judged by their gain alone, as scikit-learn's are.
    "split_penalty": 0.0,
}
#: ``tree_method`` values the weak learner implements: every distinct value a
#: threshold ('exact'), or the Dataset's bins ('hist', 'auto').
ADABOOST_TREE_METHODS = ("exact", "hist", "auto")
#: Objectives (links) an AdaBoost model can have, and the default ones.
ADABOOST_OBJECTIVES = ("binary:logistic", "multi:softprob", "multi:softmax")
BINARY_OBJECTIVE = "binary:logistic"
MULTICLASS_OBJECTIVE = "multi:softprob"
#: Default evaluation metric for two classes / more.
BINARY_METRIC = "error"
MULTICLASS_METRIC = "merror"


# ---------------------------------------------------------------------------
# Parameters and the score scale
# ---------------------------------------------------------------------------


def adaboost_params(given_params):
    """Validate parameters for ``booster='adaboost'``; apply its defaults.

    Parameters
    ----------
    given_params : dict or None
        The user's parameters (any aliases).

    Returns
    -------
    dict
        All parameters under canonical names, ``booster == 'adaboost'``, the
        objective filled in.

    Raises
    ------
    ValueError
        A parameter the SAMME loop does not use has a non-default value,
        ``max_depth < 1``, or the objective is not a classification link.
    """
    given_params = dict(given_params or {})
    given = given_names(given_params)
    params = validate_params(given_params)
    defaults = validate_params(None)
    unused = sorted(
        name for name in given if name not in ADABOOST_PARAMETERS and params[name] != defaults[name]
    )
    if unused:
        raise ValueError(
            f"booster='adaboost' does not use the parameters {unused}; remove them "
            f"(it uses {sorted(ADABOOST_PARAMETERS)})."
        )
    for name, value in ADABOOST_DEFAULTS.items():
        if name not in given:
            params[name] = value
    params["booster"] = ADABOOST
    if params["tree_method"] not in ADABOOST_TREE_METHODS:
        raise ValueError(
            f"booster='adaboost' grows exact or histogram trees: tree_method must be one "
            f"of {list(ADABOOST_TREE_METHODS)}, got {params['tree_method']!r}."
        )
    if params["max_depth"] < 1:
        raise ValueError(
            f"booster='adaboost' grows depth-limited trees: max_depth must be >= 1, "
            f"got {params['max_depth']}."
        )
    if "objective" not in given:
        params["objective"] = MULTICLASS_OBJECTIVE if params["num_class"] > 2 else BINARY_OBJECTIVE
    objective = params["objective"]
    if objective not in ADABOOST_OBJECTIVES:
        raise ValueError(
            f"booster='adaboost' trains a classifier: objective must be one of "
            f"{list(ADABOOST_OBJECTIVES)} (the link of its probabilities), got "
            f"{objective!r}."
        )
    if objective == BINARY_OBJECTIVE and params["num_class"] > 2:
        raise ValueError(
            f"objective {BINARY_OBJECTIVE!r} has two classes, but num_class is "
            f"{params['num_class']}; use {MULTICLASS_OBJECTIVE!r}."
        )
    return params


def _n_classes(n_outputs):
    return 2 if n_outputs == 1 else n_outputs


# ---------------------------------------------------------------------------
# The SAMME round
# ---------------------------------------------------------------------------


def _with_values(tree, values):
    """A copy of ``tree`` (its structure, gain, cover and count) with per-node ``values``."""
    arrays = {name: getattr(tree, name) for name in TREE_ARRAYS}
    arrays["value"] = np.asarray(values, dtype=np.float64)
    return Tree(arrays)


def _output_trees(tree, node_class, tree_weight, n_outputs):
    """The round's trees: one per output (see "The model" in the module docstring)."""
    if n_outputs == 1:
        return [_with_values(tree, np.where(node_class == 1, tree_weight, -tree_weight))]
    return [
        _with_values(tree, np.where(node_class == k, tree_weight, 0.0)) for k in range(n_outputs)
    ]


def _check_labels(label, n_classes):
    bad = (label != np.floor(label)) | (label < 0) | (label >= n_classes)
    if np.any(bad):
        raise ValueError(
            f"booster='adaboost' with {n_classes} classes needs labels in "
            f"{{0, ..., {n_classes - 1}}}; found e.g. {float(label[bad][0])!r}."
        )


class AdaBoostLearner:
    """SAMME AdaBoost: the setup of a run and its round step (see the module docstring).

    Parameters
    ----------
    given_params : dict
        The user's parameters (see the module docstring; validated here by
        :func:`adaboost_params`).
    dtrain : Dataset
        Labels 0/1 (binary) or ``0 .. num_class - 1``; its sample weights are the
        initial row weights.
    evals : sequence of (Dataset, str)
    obj, init_model
        Not supported (ValueError when given).
    custom_metric : callable or None
    backend : Backend

    Raises
    ------
    ValueError
        Unsupported parameters or inputs, invalid labels; from :meth:`update`, a
        first tree no better than chance.
    """

    label = "AdaBoost "
    start_round = 0

    def __init__(self, given_params, dtrain, evals, obj, custom_metric, init_model, backend):
        params = adaboost_params(given_params)
        bind_binning(params, given_params, dtrain)
        if dtrain.categories is not None:
            raise ValueError(
                "booster='adaboost' does not support categorical features (its Gini trees "
                "split by thresholds): use booster='gbtree', or encode the categories as "
                "numbers (categorical_features=None)."
            )
        if obj is not None:
            raise ValueError("booster='adaboost' does not take a custom objective (obj).")
        if init_model is not None:
            raise ValueError("booster='adaboost' cannot continue an init_model.")
        if dtrain.base_margin is not None:
            raise ValueError("booster='adaboost' does not take a base_margin.")
        objective = get_objective(params["objective"], params)
        n_outputs = objective.n_outputs()
        self.n_classes = _n_classes(n_outputs)
        evals = check_evals(evals, dtrain)
        for dataset, name in [(dtrain, "dtrain")] + evals:
            _check_labels(dataset.label, self.n_classes)
            if dataset.base_margin is not None:
                raise ValueError(
                    f"booster='adaboost' does not take a base_margin (evaluation "
                    f"set {name!r} has one)."
                )
        self.params, self.dtrain, self.backend, self.objective = params, dtrain, backend, objective
        self.custom_metric = custom_metric
        self.timer = make_timer(params, backend)
        self.data = backend.prepare(dtrain)
        self.label_device = backend.to_device(dtrain.label)
        initial = np.ones(dtrain.n_rows) if dtrain.weight is None else dtrain.weight
        self.row_weights = backend.to_device(initial / np.max(initial))
        self.booster = Booster(
            params,
            n_outputs,
            np.zeros(n_outputs),
            dtrain.n_features,
            dtrain.feature_names,
            tree_weights=[],
        )
        self.booster._objective = objective
        self.eval_sets = [
            EvalSet(
                backend,
                dataset,
                name,
                backend.to_device(np.zeros((dataset.n_rows, n_outputs), dtype=Y_DTYPE)),
                dataset is dtrain,
                None if dataset is dtrain else eval_features(dataset, name, dtrain, backend),
            )
            for dataset, name in evals
        ]
        self.metrics = metrics_of(params, BINARY_METRIC if n_outputs == 1 else MULTICLASS_METRIC)
        self.splitter = (
            ExactGiniSplitter(backend, dtrain)
            if params["tree_method"] == "exact"
            else GiniSplitter(backend, self.data, dtrain.bin_mapper.thresholds_for_bins)
        )
        self.split_params = SplitParams.from_params(params)
        self.policy = GrowthPolicy("depthwise", params["max_depth"], 0)
        self.class_values = backend.xp.arange(self.n_classes, dtype=Y_DTYPE)
        self.done = False

    def _grow(self, round_index):
        """The round's Gini tree: its grown tree and every node's class."""
        xp = self.backend.xp
        with self.timer.phase("quantize"):
            quantized, scale = self.backend.quantize(self.row_weights)
            class_columns = []  # a plain loop, no closure holding device arrays
            for k in range(self.n_classes):
                class_columns.append(
                    xp.where(self.label_device == self.class_values[k], quantized, 0).astype(
                        GRAD_QUANT_DTYPE
                    )
                )
        tree_input = TreeInput(
            None,
            None,
            GradientQuantiser(scale, scale),
            xp.arange(self.data.n_rows, dtype=np.int32),
            self.split_params,
            class_columns=tuple(class_columns),
        )
        sampler = FeatureSampler(
            self.dtrain.n_features,
            self.params,
            partial(host_rng, self.params["seed"], round_index, 0),
            self.dtrain.feature_weights,
        )
        grown = TreeGrower(self.splitter, tree_input, self.policy, sampler, self.timer).grow()
        return grown, np.argmax(grown.node_sums, axis=1)

    def update(self, round_index):
        """One SAMME round; False when its tree is no better than chance (discarded)."""
        xp, backend, booster = self.backend.xp, self.backend, self.booster
        if round_values(booster.params) != round_values(self.params):
            raise ValueError(
                "booster='adaboost' trains every round with the same parameters: a "
                "schedule (callbacks' set_param, learning_rates) is not supported."
            )
        grown, node_class = self._grow(round_index)
        leaves = grown.leaf_nodes
        total = int(sum(int(v) for v in grown.node_sums[0]))
        correct = sum(int(grown.node_sums[leaf, node_class[leaf]]) for leaf in leaves)
        weighted_error = total - correct
        error = weighted_error / total
        perfect = weighted_error == 0
        if perfect:
            tree_weight = PERFECT_ROUND_TREE_WEIGHT
        elif error >= 1.0 - 1.0 / self.n_classes:
            if not booster.trees:
                raise ValueError(
                    f"The first AdaBoost tree is no better than chance (weighted "
                    f"error {error:.6g} >= 1 - 1/{self.n_classes}); the ensemble "
                    f"cannot be fit."
                )
            return False
        else:
            tree_weight = self.params["learning_rate"] * (
                float(strict_math.log(np, (1.0 - error) / error))
                + float(strict_math.log(np, self.n_classes - 1.0))
            )
        structure = grown.tree
        trees = _output_trees(structure, node_class, tree_weight, booster.n_outputs)
        booster.append_round(trees)
        booster.tree_weights.append(tree_weight)
        with self.timer.phase("predict_update"):
            predicted = self.splitter.predict_training_rows(_with_values(structure, node_class))
            for eval_set in self.eval_sets:
                for output, tree in enumerate(trees):
                    if eval_set.is_train:
                        eval_set.margins[:, output] += self.splitter.predict_training_rows(tree)
                    else:
                        eval_set.margins[:, output] += backend.predict_tree_raw(
                            eval_set.features, tree
                        )
            if not perfect:
                boosted = xp.where(
                    predicted != self.label_device,
                    self.row_weights * float(strict_math.exp(np, tree_weight)),
                    self.row_weights,
                )
                self.row_weights = boosted / xp.max(boosted)
        self.done = perfect
        return True

    def evaluate(self, evals_log):
        """Record every metric of every evaluation set (metrics see the probabilities)."""
        booster = self.booster
        with self.timer.phase("metric"):
            score_scale = samme_score_scale(booster.tree_weights, booster.n_outputs)
            for eval_set in self.eval_sets:
                scores = eval_set.margins[:, 0] if booster.n_outputs == 1 else eval_set.margins
                record_metrics(
                    evals_log,
                    eval_set,
                    self.objective.mean(self.backend.xp, scores / score_scale),
                    self.metrics,
                    self.custom_metric,
                    self.backend,
                )

    def after_training(self, booster):
        booster.tree_weights = booster.tree_weights[: booster.num_boosted_rounds()]  # save_best
        return booster
