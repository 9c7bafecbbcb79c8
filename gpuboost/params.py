"""The parameter table: names, aliases, defaults, ranges and validation.

Every training parameter is declared once in :data:`PARAMETERS`. Names follow
XGBoost; common LightGBM (and a few scikit-learn) spellings are accepted as
aliases. :func:`validate_params` turns a user dict into a complete dict of
canonical names and raises ``ValueError`` naming any unknown parameter or any
value out of range. The documentation's parameter table (docs/parameters.md) is
generated from this module (``python -m gpuboost.params`` prints it).
"""

import json
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from .errors import value_repr

__all__ = [
    "PARAMETERS",
    "ALIASES",
    "validate_params",
    "given_names",
    "parameter_table_markdown",
    "with_objective",
    "validate_file_params",
    "PER_ROUND_PARAMS",
    "round_values",
    "checked_round_values",
    "tree_learning_rate",
]


@dataclass(frozen=True)
class Parameter:
    """One training parameter.

    Attributes
    ----------
    name : str
        Canonical (XGBoost) name.
    default : object
        Value used when the parameter is not given.
    kind : str
        'int', 'float', 'str', 'bool', 'any' (objective may be a callable),
        'metric' (a str or a list of str) or 'levels' (a float, or a strictly increasing
        list of floats: a float for one, a list of floats for several).
    low, high : float or None
        Inclusive bounds unless ``low_open`` / ``high_open``.
    choices : tuple or None
        Allowed values for 'str' parameters.
    aliases : tuple of str
        Other accepted spellings.
    doc : str
        One-line description for the parameter table.
    """

    name: str
    default: object
    kind: str
    doc: str
    low: float = None
    high: float = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = None
    aliases: tuple = field(default_factory=tuple)


_P = Parameter
#: ``min_child_weight`` when not given (XGBoost's), and for the multiclass objectives
#: (LightGBM's ``min_sum_hessian_in_leaf``): with one tree per class, a class's hessians
#: ``p(1 - p)`` shrink towards 0 wherever the model is sure, and a bound of 1 stops the
#: trees there (issue 33: wine's held-out log loss 0.0651 at 1, 0.0453 at 1e-3).
DEFAULT_MIN_CHILD_WEIGHT = 1.0
MULTICLASS_MIN_CHILD_WEIGHT = 1e-3
#: ``split_penalty`` when not given, for the objectives whose gradient variance is the
#: dispersion times the hessian (squared error: the noise variance; logistic: 1), so that
#: a split's gain over the dispersion is its deviance reduction: 2 is Akaike's price of a
#: parameter (issue 33; docs/DESIGN.md, "Split penalty"). Every other objective: 0.
DEFAULT_SPLIT_PENALTY = 2.0
SPLIT_PENALTY_OBJECTIVES = ("reg:squarederror", "binary:logistic")
#: The objectives for which ``cat_smooth_estimate`` is on when not given: the estimate
#: takes the dispersion as the gradients' noise per unit of hessian, true of these
#: (issue 33: Cigarette's held-out RMSE 2.6x XGBoost's at LightGBM's fixed cat_smooth).
CAT_SMOOTH_ESTIMATE_OBJECTIVES = SPLIT_PENALTY_OBJECTIVES
#: ``min_data_in_leaf`` when not given: 1 (XGBoost's) where the split penalty is on, which
#: judges a small leaf by its gain; else 10 (issue 33).
PENALIZED_MIN_DATA_IN_LEAF = 1
DEFAULT_MIN_DATA_IN_LEAF = 10
PARAMETERS = {
    p.name: p
    for p in [
        _P(
            "objective",
            "reg:squarederror",
            "any",
            "learning task (see Objectives) or a callable (raw_margin, dataset) -> (grad, hess)",
            aliases=("objective_type", "app", "application", "loss"),
        ),
        _P(
            "eval_metric",
            None,
            "metric",
            "metric name or list of names; default depends on the objective",
            aliases=("metric", "metrics"),
        ),
        _P(
            "learning_rate",
            0.3,
            "float",
            "shrinkage applied to every leaf value",
            low=0.0,
            low_open=True,
            aliases=("eta", "shrinkage_rate"),
        ),
        _P(
            "max_depth",
            6,
            "int",
            "maximum tree depth; 0 = no limit (lossguide only)",
            low=0,
            aliases=("max_tree_depth",),
        ),
        _P(
            "max_leaves",
            0,
            "int",
            "maximum number of leaves per tree; 0 = no limit",
            low=0,
            aliases=("num_leaves", "max_leaf_nodes", "num_leaf"),
        ),
        _P(
            "max_bin",
            255,
            "int",
            "value bins per feature (one more bin holds missing values); a Dataset built "
            "without max_bin is binned with it; one built or already binned with another "
            "raises ValueError (it is never re-binned)",
            low=2,
            high=255,
            aliases=("max_bins",),
        ),
        _P(
            "grow_policy",
            "depthwise",
            "str",
            "'depthwise' (level by level) or 'lossguide' (best leaf first)",
            choices=("depthwise", "lossguide"),
        ),
        _P(
            "min_child_weight",
            None,
            "float",
            "minimum sum of hessians in a child; default 1, and 1e-3 (LightGBM's) for the "
            "multiclass objectives multi:softmax and multi:softprob, whose per-class hessians "
            "p(1 - p) are small: there min_data_in_leaf bounds the leaves",
            low=0.0,
            aliases=("min_sum_hessian_in_leaf", "min_sum_hessian", "min_hessian"),
        ),
        _P(
            "min_data_in_leaf",
            None,
            "int",
            "minimum number of rows in a child; default 1 (XGBoost's: no limit) where "
            "split_penalty is on, else 10 (LightGBM and scikit-learn: 20; AdaBoost's "
            "default is 1)",
            low=1,
            aliases=("min_child_samples", "min_samples_leaf", "min_data_per_leaf", "min_data"),
        ),
        _P(
            "reg_lambda",
            1.0,
            "float",
            "L2 regularization of leaf values",
            low=0.0,
            aliases=("lambda", "lambda_l2", "l2_regularization", "reg_l2"),
        ),
        _P(
            "reg_alpha",
            0.0,
            "float",
            "L1 regularization of leaf values (soft thresholding)",
            low=0.0,
            aliases=("alpha", "lambda_l1", "reg_l1"),
        ),
        _P(
            "gamma",
            0.0,
            "float",
            "minimum gain to make a split",
            low=0.0,
            aliases=("min_split_loss", "min_split_gain", "min_gain_to_split"),
        ),
        _P(
            "split_penalty",
            None,
            "float",
            "a split must gain more than gamma + split_penalty x the tree's dispersion "
            "sum(g^2) / sum(h) (the noise variance for squared error, about 1 for logistic): "
            "gain / dispersion is the split's deviance reduction, and 2 Akaike's price of "
            "a parameter; default 2 for reg:squarederror and binary:logistic, else 0 (off)",
            low=0.0,
        ),
        _P(
            "max_delta_step",
            0.0,
            "float",
            "clip leaf weights to this magnitude (0 = off)",
            low=0.0,
            aliases=("max_delta",),
        ),
        _P(
            "path_smooth",
            0.0,
            "float",
            "pull every node's weight towards its parent's: w (n/s) / (n/s + 1) + "
            "w_parent / (n/s + 1), n the node's rows, s this value (LightGBM's path_smooth, "
            "on node values; split gains unchanged; 0 = off)",
            low=0.0,
        ),
        _P(
            "subsample",
            1.0,
            "float",
            "fraction of rows sampled for each tree",
            low=0.0,
            high=1.0,
            low_open=True,
            aliases=("bagging_fraction", "sub_row"),
        ),
        _P(
            "sampling_method",
            "uniform",
            "str",
            "how subsample draws rows: 'uniform', or 'gradient_based' (XGBoost: kept with "
            "probability proportional to sqrt(g² + reg_lambda·h²), weighted by its inverse)",
            choices=("uniform", "gradient_based"),
        ),
        _P(
            "data_sample_strategy",
            "bagging",
            "str",
            "'bagging' (subsample / sampling_method) or 'goss' (LightGBM's gradient-based "
            "one-side sampling: top_rate, other_rate)",
            choices=("bagging", "goss"),
        ),
        _P(
            "top_rate",
            0.2,
            "float",
            "GOSS: fraction of rows kept for the largest |gradient|",
            low=0.0,
            high=1.0,
            high_open=True,
        ),
        _P(
            "other_rate",
            0.1,
            "float",
            "GOSS: fraction of all rows drawn from the others, up-weighted by "
            "(1 - top_rate) / other_rate; top_rate + other_rate <= 1",
            low=0.0,
            high=1.0,
            low_open=True,
        ),
        _P(
            "colsample_bytree",
            1.0,
            "float",
            "fraction of features sampled for each tree",
            low=0.0,
            high=1.0,
            low_open=True,
            aliases=("feature_fraction", "sub_feature"),
        ),
        _P(
            "colsample_bylevel",
            1.0,
            "float",
            "fraction of the tree's features sampled per depth",
            low=0.0,
            high=1.0,
            low_open=True,
        ),
        _P(
            "colsample_bynode",
            1.0,
            "float",
            "fraction of the level's features sampled per node",
            low=0.0,
            high=1.0,
            low_open=True,
            aliases=("feature_fraction_bynode",),
        ),
        _P(
            "monotone_constraints",
            None,
            "monotone",
            "per feature 1 (prediction non-decreasing in it), -1 (non-increasing) or 0: a list "
            '(one per feature), a dict by feature name or index, or XGBoost\'s "(1,0,-1)" '
            "string; tree_method 'hist' or 'approx' (see Constraints)",
            aliases=("monotone_constraint", "mc", "monotonic_cst"),
        ),
        _P(
            "interaction_constraints",
            None,
            "interaction",
            "lists of features (indices or names) allowed to interact: along a root-to-leaf "
            "path only features of sets holding every feature already used (XGBoost's rule; "
            "see Constraints)",
            aliases=("interaction_cst",),
        ),
        _P(
            "seed",
            0,
            "int",
            "seed of every random choice (row and column sampling; the binning sample of a "
            "Dataset built without seed)",
            low=0,
            aliases=("random_state", "random_seed", "seed_value"),
        ),
        _P(
            "base_score",
            None,
            "float",
            "initial prediction in output space (default: the objective's optimal constant)",
        ),
        _P(
            "scale_pos_weight",
            1.0,
            "float",
            "binary objectives: the weight of every positive row (label 1) is multiplied by "
            "this, e.g. sum(negative weights) / sum(positive weights) (XGBoost)",
            low=0.0,
            low_open=True,
        ),
        _P(
            "is_unbalance",
            False,
            "bool",
            "binary objectives: weight the rarer class up to the other's row count: positive "
            "rows by n_negative / n_positive, or negative ones by n_positive / n_negative "
            "(LightGBM); not with scale_pos_weight",
            aliases=("unbalance", "unbalanced_sets"),
        ),
        _P(
            "num_class",
            0,
            "int",
            "number of classes for multi:softmax / multi:softprob",
            low=0,
            aliases=("num_classes",),
        ),
        _P(
            "num_target",
            0,
            "int",
            "number of targets (label columns) of a multi-target model; 0 = from the "
            "training labels (a 2-D label of k columns: k targets); written by training",
            low=0,
            aliases=("num_targets", "n_targets"),
        ),
        _P(
            "multi_strategy",
            "one_output_per_tree",
            "str",
            "several outputs (targets, classes): 'one_output_per_tree' (a tree per output "
            "a round) or 'multi_output_tree' (one tree a round whose leaves hold a value "
            "per output, its split gain summed over the outputs; docs/DESIGN.md "
            "'Vector leaves')",
            choices=("one_output_per_tree", "multi_output_tree"),
        ),
        _P(
            "huber_delta",
            1.0,
            "float",
            "transition point of reg:huber",
            low=0.0,
            low_open=True,
            aliases=("huber_slope",),
        ),
        _P(
            "huber_alpha",
            None,
            "float",
            "reg:huber: if set, the transition point is re-estimated every round as this "
            "quantile of |residuals| (Friedman's M-regression); None = huber_delta",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        _P(
            "quantile_alpha",
            0.5,
            "levels",
            "quantile level of reg:quantile, or an increasing list of levels: one output "
            "each, predictions sorted so that they never cross",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        _P(
            "expectile_alpha",
            0.5,
            "levels",
            "expectile level of reg:expectileerror, or an increasing list of levels (as "
            "quantile_alpha)",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        _P(
            "aft_loss_distribution",
            "normal",
            "str",
            "survival:aft: the noise distribution of log(time) = margin + scale * Z: "
            "'normal', 'logistic' or 'extreme' (XGBoost's)",
            choices=("normal", "logistic", "extreme"),
        ),
        _P(
            "aft_loss_distribution_scale",
            1.0,
            "float",
            "survival:aft: the scale of the noise (rounded to float32, as XGBoost)",
            low=0.0,
            low_open=True,
        ),
        _P(
            "tweedie_variance_power",
            1.5,
            "float",
            "variance power of reg:tweedie",
            low=1.0,
            high=2.0,
            high_open=True,
        ),
        _P(
            "lambdarank_truncation_level",
            30,
            "int",
            "rank:*: pairs are formed between each of the top this many documents of a query "
            "(by current score) and every document ranked below it",
            low=1,
            aliases=("lambdarank_num_pair_per_sample",),
        ),
        _P(
            "tree_method",
            "hist",
            "str",
            "split finding: 'hist' (quantized histograms), "
            "'approx' (bins re-sketched every tree from hessian-weighted quantiles), "
            "'exact' (every distinct value is a candidate; sorted scans, O(n log n) per node: "
            "for small data)",
            choices=("hist", "auto", "approx", "exact"),
        ),
        _P(
            "enable_bundle",
            True,
            "bool",
            "exclusive feature bundling (hist): features never non-zero in the same row share "
            "one histogram column; used only when it leaves fewer columns",
            aliases=("is_enable_bundle",),
        ),
        _P(
            "max_conflict_rate",
            0.0,
            "float",
            "feature bundling: rows of a bundle where two members are non-zero, as a fraction "
            "of all rows; 0 = exact (the same model as without bundling)",
            low=0.0,
            high=1.0,
            high_open=True,
        ),
        _P(
            "max_cat_to_onehot",
            4,
            "int",
            "categorical features with at most this many categories (bins) are split "
            "one-vs-rest; more: many-vs-many (categories sorted by G/(H + cat_smooth))",
            low=1,
        ),
        _P(
            "max_cat_threshold",
            64,
            "int",
            "many-vs-many categorical splits: at most this many categories on the side "
            "scanned from (each end of the sorted order is scanned; XGBoost's 64, "
            "LightGBM's 32)",
            low=1,
        ),
        _P(
            "cat_smooth",
            3.0,
            "float",
            "many-vs-many categorical splits: categories are sorted by G / (H + cat_smooth); "
            "those with fewer rows in the node are left out of the sorted sets (with "
            "cat_smooth_estimate: the most each column's estimate may be; LightGBM's 10)",
            low=0.0,
        ),
        _P(
            "cat_smooth_estimate",
            None,
            "bool",
            "estimate cat_smooth per categorical column at every tree's root: "
            "min(cat_smooth, sigma^2 / tau^2) of a random-effects fit of the categories' "
            "sums with the tree's dispersion, so that the categories of a column whose "
            "effects exceed their noise are split however few rows each has; default True "
            "for reg:squarederror and binary:logistic (gradient variance = dispersion x "
            "hessian), else False (LightGBM's one cat_smooth)",
        ),
        _P(
            "cat_l2",
            1.0,
            "float",
            "many-vs-many categorical splits: extra L2 regularization (added to reg_lambda) "
            "of the children's scores (LightGBM's 10 smooths too much on small tables)",
            low=0.0,
        ),
        _P(
            "cat_penalty_factor",
            0.0,
            "float",
            "many-vs-many categorical splits must gain more than gamma + "
            "cat_penalty_factor x split_penalty x the tree's dispersion (one-vs-rest "
            "splits pay split_penalty, as numeric ones): 1 prices them as numeric splits, "
            "0 (default) leaves them to gamma, cat_l2 and cat_smooth",
            low=0.0,
        ),
        _P(
            "min_data_per_group",
            10,
            "int",
            "many-vs-many categorical splits: rows between two sets tried (and fewest rows "
            "left out of a set); LightGBM's 100 leaves nodes of a few hundred rows without "
            "such splits, and 25 passed over the sets that split panels of few rows per "
            "category",
            low=1,
        ),
        _P(
            "max_cat",
            255,
            "int",
            "value bins of a categorical feature (at most max_bin): with more categories, the "
            "max_cat - 1 most frequent keep a bin each and the rest share one 'other' bin",
            low=2,
            high=255,
        ),
        _P(
            "booster",
            "gbtree",
            "str",
            "model family: 'gbtree' (gradient boosting), 'dart' (gradient boosting with "
            "dropouts, gpuboost.boosting.dart) or 'adaboost' (discrete SAMME AdaBoost "
            "classifier, gpuboost.boosting.adaboost: learning_rate defaults to 1.0 and "
            "max_depth to 1 there)",
            choices=("gbtree", "dart", "adaboost"),
        ),
        _P(
            "num_parallel_tree",
            1,
            "int",
            "trees grown per output in each round from the same gradients, each with its "
            "own row and column samples and learning_rate / num_parallel_tree (a random "
            "forest per round; XGBoost's)",
            low=1,
        ),
        _P(
            "rate_drop",
            0.0,
            "float",
            "booster='dart': probability that a tree is dropped in a round",
            low=0.0,
            high=1.0,
        ),
        _P(
            "skip_drop",
            0.0,
            "float",
            "booster='dart': probability that a round drops no tree",
            low=0.0,
            high=1.0,
        ),
        _P(
            "one_drop",
            False,
            "bool",
            "booster='dart': drop at least one tree in every round that is not skipped",
        ),
        _P(
            "sample_type",
            "uniform",
            "str",
            "booster='dart': 'uniform' (every tree rate_drop) or 'weighted' (in proportion "
            "to its weight)",
            choices=("uniform", "weighted"),
        ),
        _P(
            "normalize_type",
            "tree",
            "str",
            "booster='dart': the new trees' weight with k dropped trees, 'tree' 1 / (k + "
            "learning_rate) (the dropped ones scaled by k / (k + learning_rate)) or 'forest' "
            "1 / (1 + learning_rate) (the dropped ones likewise)",
            choices=("tree", "forest"),
        ),
        _P(
            "process_type",
            "default",
            "str",
            "XGBoost's: 'default' grows new trees; 'update' applies `updater` to the trees of "
            "init_model's first num_boost_round rounds instead (gpuboost.boosting.update)",
            choices=("default", "update"),
        ),
        _P(
            "updater",
            "refresh",
            "str",
            "with process_type='update': 'refresh' (every node's statistics, and with "
            "refresh_leaf the leaf values, from dtrain's gradients), 'prune' (XGBoost's rule: "
            "bottom-up, a split of two leaves with gain below gamma, or deeper than max_depth, "
            "becomes a leaf), or both in order",
            choices=("refresh", "prune", "refresh,prune", "prune,refresh"),
        ),
        _P(
            "refresh_leaf",
            True,
            "bool",
            "with updater 'refresh': update the leaf values too (False: statistics only)",
        ),
        _P(
            "device",
            "auto",
            "str",
            "'auto' (GPU when usable, else CPU), 'cpu' or 'cuda' ('cuda:0' accepted)",
            choices=("auto", "cpu", "cuda", "gpu"),
        ),
        _P(
            "verbosity",
            1,
            "int",
            "0 silent, 1 warnings, 2 info (per-phase timings), 3 debug",
            low=0,
            high=3,
            aliases=("verbose",),
        ),
        _P(
            "nthread",
            0,
            "int",
            "threads of the NumPy backend (histograms, partition, split scan); 0 or -1 = all "
            "cores; results do not depend on it",
            low=-1,
            aliases=("n_jobs", "num_threads", "num_thread"),
        ),
    ]
}

#: alias -> canonical name
ALIASES = {}
for _param in PARAMETERS.values():
    for _alias in _param.aliases:
        ALIASES[_alias] = _param.name

#: Parameters a training may change between rounds (a callback's ``Booster.set_param``,
#: ``LearningRateScheduler``, ``reset_parameter``; ``train(learning_rates=)``): the model
#: records each round's values (``Booster.round_params``), rounds counted from the start
#: of the model, so a training resumed from a checkpoint continues a schedule exactly.
PER_ROUND_PARAMS = (
    "learning_rate",
    "reg_lambda",
    "reg_alpha",
    "gamma",
    "min_child_weight",
    "max_delta_step",
    "subsample",
    "colsample_bytree",
    "colsample_bylevel",
    "colsample_bynode",
)
#: Parameters that do not change the model; left out of saved models so that the
#: same training on either device gives the same bytes.
RUNTIME_ONLY = frozenset({"device", "verbosity", "nthread"})
#: Parameters of how a training runs, not of the model it gives (XGBoost's update
#: process): never saved.
PROCESS_ONLY = frozenset({"process_type", "updater", "refresh_leaf"})
#: Parameters added after version 1 of the model format: saved only when they differ
#: from their default, so that models not using them keep their bytes (and a file
#: without them loads to the defaults).
SAVED_WHEN_SET = frozenset(
    {
        "scale_pos_weight",
        "is_unbalance",
        "monotone_constraints",
        "interaction_constraints",
        "max_cat_to_onehot",
        "max_cat_threshold",
        "cat_smooth",
        "cat_smooth_estimate",
        "cat_l2",
        "cat_penalty_factor",
        "min_data_per_group",
        "max_cat",
        "num_parallel_tree",
        "rate_drop",
        "skip_drop",
        "one_drop",
        "sample_type",
        "normalize_type",
        "expectile_alpha",
        "aft_loss_distribution",
        "aft_loss_distribution_scale",
        "num_target",
        "multi_strategy",
        "path_smooth",
        "split_penalty",
    }
)
#: The value of a :data:`SAVED_WHEN_SET` parameter in a model file that lacks it, where its
#: default is resolved from other parameters instead (None in :data:`PARAMETERS`), or
#: where the default changed after files were written without it: the model was trained
#: with this value (a file written before the parameter existed or its default changed,
#: or with it off), and it is saved whenever it differs from this. The categorical
#: defaults changed together (issue 33): ``cat_penalty_factor`` 1 -> 0 (before it
#: existed, every split paid the penalty), ``cat_smooth`` 10 -> 3, ``cat_l2`` 3 -> 1,
#: ``max_cat_threshold`` 32 -> 64.
ABSENT_FROM_FILE = {
    "split_penalty": 0.0,
    "cat_smooth_estimate": False,
    "cat_penalty_factor": 1.0,
    "cat_smooth": 10.0,
    "cat_l2": 3.0,
    "max_cat_threshold": 32,
}
#: Parameters that only a model with categorical features saves (it applies to no other):
#: a file without categories lacks them and reads them as the objective's default, so
#: that the models of other data keep their bytes.
CATEGORICAL_ONLY = frozenset(
    {"cat_smooth_estimate", "cat_penalty_factor", "cat_smooth", "cat_l2", "max_cat_threshold"}
)


def canonical_name(name):
    """Return the canonical name of ``name`` or raise ValueError if unknown."""
    if name in PARAMETERS:
        return name
    if name in ALIASES:
        return ALIASES[name]
    close = sorted(n for n in list(PARAMETERS) + list(ALIASES) if n[:3] == str(name)[:3])
    hint = f" Did you mean one of {close}?" if close else ""
    raise ValueError(f"Unknown parameter {name!r}.{hint} Valid parameters: {sorted(PARAMETERS)}.")


def with_objective(params, objective):
    """The user's ``params`` with ``objective`` in place of theirs when given (``train(...,
    obj=)``: a custom objective), so that :func:`validate_params` resolves the defaults
    that depend on the objective for it (``split_penalty``, ``min_data_in_leaf``)."""
    if objective is None:
        return params
    kept = {
        key: value for key, value in (params or {}).items() if canonical_name(key) != "objective"
    }
    return dict(kept, objective=objective)


def given_names(params):
    """The canonical names of the parameters in a user dict (aliases resolved).

    Raises
    ------
    ValueError
        An unknown name.
    """
    return {canonical_name(key) for key in (params or {})}


#: Directions a monotone constraint may take.
MONOTONE_DIRECTIONS = (-1, 0, 1)


def _parse_text(name, value, example):
    """A string parameter value in JSON or Python-tuple syntax, parsed (XGBoost's
    ``"(1,0,-1)"``, ``"[[0, 1], [2, 3]]"``)."""
    text = value.strip().replace("(", "[").replace(")", "]")
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(
            f"Parameter {name!r} = {value!r} could not be read: write it like {example}."
        ) from None


def _feature_key(name, key):
    """A feature of a constraint: an int index or a str name."""
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (numbers.Integral, str)):
        raise ValueError(
            f"Parameter {name!r} names features by integer index or by name, got {value_repr(key)}."
        )
    return key if isinstance(key, str) else int(key)


def _check_monotone(name, value):
    """None, a list of directions (one per feature) or a dict feature -> direction."""
    if value is None:
        return None
    if isinstance(value, str):
        value = _parse_text(name, value, "'(1,0,-1)' or [1, 0, -1]")
    if isinstance(value, dict):
        items = [(_feature_key(name, key), direction) for key, direction in value.items()]
    elif isinstance(value, (list, tuple, np.ndarray)):
        items = list(
            enumerate(np.asarray(value).tolist() if isinstance(value, np.ndarray) else value)
        )
    else:
        raise ValueError(
            f"Parameter {name!r} must be a list (one direction per feature), a dict "
            f"feature -> direction or a string like '(1,0,-1)', got {value_repr(value)}."
        )
    for key, direction in items:
        if isinstance(direction, (bool, np.bool_)) or direction not in MONOTONE_DIRECTIONS:
            raise ValueError(
                f"Parameter {name!r}: the direction of feature {key!r} must be 1 "
                f"(increasing), -1 (decreasing) or 0 (none), got {value_repr(direction)}."
            )
    if isinstance(value, dict):
        return {key: int(direction) for key, direction in items}
    return [int(direction) for _, direction in items]


def _check_interaction(name, value):
    """None or a list of lists of features (indices or names)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = _parse_text(name, value, "'[[0, 1], [2, 3]]'")
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(group, (list, tuple, set, frozenset, np.ndarray)) for group in value
    ):
        raise ValueError(
            f"Parameter {name!r} must be a list of lists of features (indices or names), "
            f"e.g. [[0, 1], [2, 3]], got {value_repr(value)}."
        )
    groups = []
    for group in value:
        group = np.asarray(group).tolist() if isinstance(group, np.ndarray) else group
        keys = [_feature_key(name, key) for key in group]
        groups.append(sorted(set(keys), key=lambda key: (isinstance(key, str), key)))
    return groups


def _check_levels(param, value):
    """A 'levels' parameter: a float in range, or a strictly increasing list of them (a
    one-element list is its float; text in JSON or tuple syntax, as the command line
    gives it, is read first)."""
    if isinstance(value, str):
        value = _parse_text(param.name, value, "0.5 or [0.1, 0.5, 0.9]")
    if isinstance(value, (list, tuple, np.ndarray)):
        levels = [_check_value(_float_of(param), v) for v in list(value)]
        if not levels:
            raise ValueError(f"Parameter {param.name!r} must name at least one level, got [].")
        if any(b <= a for a, b in zip(levels, levels[1:])):
            raise ValueError(
                f"Parameter {param.name!r} must list increasing levels (one output each, in "
                f"order), got {value_repr(list(value))}."
            )
        return levels[0] if len(levels) == 1 else levels
    return _check_value(_float_of(param), value)


def _float_of(param):
    """``param`` as a 'float' parameter (one level)."""
    return Parameter(
        param.name,
        param.default,
        "float",
        param.doc,
        param.low,
        param.high,
        param.low_open,
        param.high_open,
    )


def _check_value(param, value):
    name = param.name
    if param.kind == "monotone":
        return _check_monotone(name, value)
    if param.kind == "interaction":
        return _check_interaction(name, value)
    if param.kind == "any":
        if callable(value):
            return value
        if not isinstance(value, str):
            raise ValueError(
                f"Parameter {name!r} must be a string or a callable, got {value_repr(value)}."
            )
        return value
    if param.kind == "levels":
        return _check_levels(param, value)
    if param.kind == "metric":
        if value is None:
            return None
        if isinstance(value, str):
            return [value]
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        raise ValueError(
            f"Parameter {name!r} must be a metric name or a list of names, got {value_repr(value)}."
        )
    if param.kind == "str":
        if not isinstance(value, str):
            raise ValueError(f"Parameter {name!r} must be a string, got {value_repr(value)}.")
        if name == "device" and (value.startswith("cuda:") or value.startswith("gpu:")):
            ordinal = value.split(":", 1)[1]
            if not ordinal.isdigit():
                raise ValueError(
                    f"Parameter 'device' must be 'auto', 'cpu', 'cuda' or 'cuda:N', got "
                    f"{value_repr(value)}."
                )
            return value
        if param.choices and value not in param.choices:
            raise ValueError(
                f"Parameter {name!r} must be one of {list(param.choices)}, got {value_repr(value)}."
            )
        return value
    if value is None and param.default is None and param.kind in ("int", "float", "bool"):
        return None  # resolved by validate_params (the objective's default)
    if param.kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"Parameter {name!r} must be True or False, got {value_repr(value)}.")
        return bool(value)
    if param.kind == "int":
        if isinstance(value, bool) and name != "verbosity":  # verbose=True is common usage
            raise ValueError(f"Parameter {name!r} must be an integer, got {value_repr(value)}.")
        if not isinstance(value, numbers.Integral):
            if isinstance(value, numbers.Real) and float(value).is_integer():
                value = int(value)
            else:
                raise ValueError(f"Parameter {name!r} must be an integer, got {value_repr(value)}.")
        value = int(value)
    elif param.kind == "float":
        if value is None:
            raise ValueError(f"Parameter {name!r} must be a number, got None.")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"Parameter {name!r} must be a number, got {value_repr(value)}.")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"Parameter {name!r} must be finite, got {value_repr(value)}.")
    if param.low is not None:
        if value < param.low or (param.low_open and value == param.low):
            raise ValueError(
                f"Parameter {name!r} = {value_repr(value)} is out of range: must be "
                f"{'>' if param.low_open else '>='} {param.low}."
            )
    if param.high is not None:
        if value > param.high or (param.high_open and value == param.high):
            raise ValueError(
                f"Parameter {name!r} = {value_repr(value)} is out of range: must be "
                f"{'<' if param.high_open else '<='} {param.high}."
            )
    return value


def validate_params(params):
    """Complete and validate a parameter dict.

    Parameters
    ----------
    params : dict or None
        User parameters, canonical names or aliases.

    Returns
    -------
    dict
        Every parameter of :data:`PARAMETERS` under its canonical name.

    Raises
    ------
    ValueError
        On an unknown name, a name given twice (directly and through an alias),
        or a value out of range.
    """
    params = dict(params or {})
    resolved = {}
    given_as = {}
    for key, value in params.items():
        name = canonical_name(key)
        if name in resolved:
            raise ValueError(f"Parameter {name!r} given twice (as {given_as[name]!r} and {key!r}).")
        resolved[name] = _check_value(PARAMETERS[name], value)
        given_as[name] = key
    out = {}
    for name, param in PARAMETERS.items():
        out[name] = (
            resolved[name]
            if name in resolved
            else (list(param.default) if isinstance(param.default, list) else param.default)
        )
    if out["device"] == "gpu":
        out["device"] = "cuda"
    objective = out["objective"]
    multiclass = isinstance(objective, str) and objective.startswith("multi:")
    if out["min_child_weight"] is None:
        out["min_child_weight"] = (
            MULTICLASS_MIN_CHILD_WEIGHT if multiclass else DEFAULT_MIN_CHILD_WEIGHT
        )
    if out["split_penalty"] is None:
        out["split_penalty"] = (
            DEFAULT_SPLIT_PENALTY if objective in SPLIT_PENALTY_OBJECTIVES else 0.0
        )
    if out["cat_smooth_estimate"] is None:
        out["cat_smooth_estimate"] = objective in CAT_SMOOTH_ESTIMATE_OBJECTIVES
    if out["min_data_in_leaf"] is None:
        out["min_data_in_leaf"] = (
            PENALIZED_MIN_DATA_IN_LEAF if out["split_penalty"] > 0 else DEFAULT_MIN_DATA_IN_LEAF
        )
    if multiclass:
        if out["num_class"] < 2:
            raise ValueError(
                f"Objective {objective!r} needs 'num_class' >= 2, got {out['num_class']}."
            )
    if out["data_sample_strategy"] == "goss":
        if out["top_rate"] + out["other_rate"] > 1.0:
            raise ValueError(
                f"GOSS needs top_rate + other_rate <= 1, got {out['top_rate']} + "
                f"{out['other_rate']}."
            )
        if out["subsample"] < 1.0 or out["sampling_method"] != "uniform":
            raise ValueError(
                "data_sample_strategy='goss' samples rows by itself (top_rate, "
                "other_rate); leave subsample at 1 and sampling_method 'uniform'."
            )
    if out["grow_policy"] == "depthwise" and out["max_depth"] == 0 and out["max_leaves"] == 0:
        raise ValueError(
            "grow_policy='depthwise' needs max_depth > 0 or max_leaves > 0 "
            "(both are 0: the tree would be unbounded)."
        )
    return out


def tree_learning_rate(params):
    """The shrinkage of one tree's leaf values: ``learning_rate / num_parallel_tree``
    (a round's forest adds the mean of its trees, as XGBoost's)."""
    return params["learning_rate"] / params["num_parallel_tree"]


def round_values(params):
    """The :data:`PER_ROUND_PARAMS` values of validated ``params`` (a new dict)."""
    return {name: params[name] for name in PER_ROUND_PARAMS}


def checked_round_values(values):
    """Validated values of some :data:`PER_ROUND_PARAMS` (canonical names, aliases
    allowed), for ``Booster.set_param`` and the model file.

    Raises
    ------
    ValueError
        A name that is not a per-round parameter, or a bad value.
    """
    checked = {}
    validated = validate_params(values)
    for name in values:
        canonical = canonical_name(name)
        if canonical not in PER_ROUND_PARAMS:
            raise ValueError(
                f"{name!r} cannot change between rounds; these can: {', '.join(PER_ROUND_PARAMS)}."
            )
        checked[canonical] = validated[canonical]
    return checked


def validate_file_params(params, categorical=True):
    """:func:`validate_params` of a model file's params: those of
    :data:`ABSENT_FROM_FILE` the file lacks take the value the model was trained with,
    not the default resolved for its objective (``categorical``: whether the model has
    categorical features; without, :data:`CATEGORICAL_ONLY` take the objective's)."""
    absent = {k: v for k, v in ABSENT_FROM_FILE.items() if categorical or k not in CATEGORICAL_ONLY}
    return validate_params({**absent, **params})


def model_params(params, categorical=True):
    """The subset of validated params stored in a model: no runtime-only or process
    ones, those of :data:`SAVED_WHEN_SET` only when not at their default, and those of
    :data:`CATEGORICAL_ONLY` only with ``categorical`` features."""
    return {
        k: v
        for k, v in params.items()
        if k not in RUNTIME_ONLY
        and k not in PROCESS_ONLY
        and not callable(v)
        and not (k in SAVED_WHEN_SET and v == ABSENT_FROM_FILE.get(k, PARAMETERS[k].default))
        and not (k in CATEGORICAL_ONLY and not categorical)
    }


def parameter_table_markdown():
    """The documentation's parameter table, generated from :data:`PARAMETERS`."""
    lines = ["| parameter | aliases | default | range | meaning |", "|---|---|---|---|---|"]
    for p in PARAMETERS.values():
        if p.choices:
            rng = ", ".join(repr(c) for c in p.choices)
        elif p.low is not None or p.high is not None:
            lo = "" if p.low is None else (f"{p.low} <" if p.low_open else f"{p.low} ≤")
            hi = "" if p.high is None else (f"< {p.high}" if p.high_open else f"≤ {p.high}")
            rng = f"{lo} x {hi}".strip()
        else:
            rng = ""
        lines.append(
            f"| `{p.name}` | {', '.join(f'`{a}`' for a in p.aliases)} | "
            f"`{p.default!r}` | {rng} | {p.doc} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(parameter_table_markdown())
