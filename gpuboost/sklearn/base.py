"""The shared estimator: hyperparameters, ``fit`` on gpuboost.train, fitted attributes."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ..boosting.train import train
from ..core.reproducible_sum import reproducible_sum
from ..data.categorical import encode_features
from ..data.dataset import Dataset, label_arguments
from ..data.device import device_features
from ..model.booster import Booster
from ..objectives import CUSTOM_OBJECTIVE_NAME
from ..params import canonical_name, validate_params, with_objective
from .compat import BaseEstimator as _BaseEstimator
from .compat import NotFittedError
from .validation import (
    as_feature_matrix,
    as_seed,
    as_sparse_feature_matrix,
    check_positive_int,
    column_names,
    per_eval_set,
)

#: Booster attribute that holds an estimator's fitted attributes (JSON) in the model
#: files of :meth:`ModelFileMixin.save_model` (XGBoost's name).
SKLEARN_ATTRIBUTE = "scikit_learn"

#: Prefix of the names of the evaluation sets in ``evals_result_``: "validation_0", ...
EVAL_SET_NAME_PREFIX = "validation_"
#: Probability of the positive class above which a binary classifier predicts it.
BINARY_DECISION_THRESHOLD = 0.5
#: Smallest number of classes a classifier is trained on.
MIN_CLASSES = 2
#: Number of unseen labels an error message shows.
MAX_LABELS_SHOWN = 10
#: Default objective of each estimator (the classifier's depends on the class count).
DEFAULT_REGRESSION_OBJECTIVE = "reg:squarederror"
DEFAULT_BINARY_OBJECTIVE = "binary:logistic"
DEFAULT_MULTICLASS_OBJECTIVE = "multi:softprob"
DEFAULT_RANKING_OBJECTIVE = "rank:ndcg"
#: Metric of ``GBRanker.score`` and its default evaluation metric.
RANKING_SCORE_METRIC = "ndcg"
#: The importance type ``feature_importances_`` normalizes (Booster.feature_importance).
FEATURE_IMPORTANCES_TYPE = "total_gain"
#: Objective name prefixes of the task families.
BINARY_PREFIX = "binary:"
MULTICLASS_PREFIX = "multi:"
RANKING_PREFIX = "rank:"


#: Estimator arguments passed to the training parameters, with their gpuboost names.
_ESTIMATOR_TO_TRAINING_PARAM = {
    "max_depth": "max_depth",
    "max_leaves": "max_leaves",
    "max_bin": "max_bin",
    "grow_policy": "grow_policy",
    "learning_rate": "learning_rate",
    "min_child_weight": "min_child_weight",
    "min_data_in_leaf": "min_data_in_leaf",
    "reg_lambda": "reg_lambda",
    "reg_alpha": "reg_alpha",
    "gamma": "gamma",
    "split_penalty": "split_penalty",
    "max_delta_step": "max_delta_step",
    "subsample": "subsample",
    "colsample_bytree": "colsample_bytree",
    "colsample_bylevel": "colsample_bylevel",
    "colsample_bynode": "colsample_bynode",
    "random_state": "seed",
    "objective": "objective",
    "eval_metric": "eval_metric",
    "device": "device",
    "verbosity": "verbosity",
    "n_jobs": "nthread",
}
#: gpuboost parameter name -> the estimator argument that sets it.
_TRAINING_PARAM_TO_ESTIMATOR = {
    param: argument for argument, param in _ESTIMATOR_TO_TRAINING_PARAM.items()
}


def _json_labels(classes, estimator_name):
    """``classes_`` as a JSON list (numbers, strings, booleans), for a model file."""
    labels = np.asarray(classes).tolist()
    try:
        json.dumps(labels)
    except TypeError:
        raise ValueError(
            f"{estimator_name}.save_model: the class labels {labels[:5]} are not numbers, "
            f"strings or booleans, so they cannot be stored in a model file."
        ) from None
    return labels


class ModelFileMixin:
    """``save_model`` / ``load_model`` of a fitted estimator: the Booster's JSON model
    file, with the estimator's fitted attributes (``n_features_in_``,
    ``feature_names_in_``, ``classes_``) in its attribute :data:`SKLEARN_ATTRIBUTE`;
    ``to_onnx``: the model as ONNX."""

    def save_model(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the fitted model to ``path`` (JSON, atomically; Booster.save_model).

        Parameters
        ----------
        path : str or path
        """
        booster = self.get_booster().copy()
        state = {"estimator": type(self).__name__, "n_features_in_": int(self.n_features_in_)}
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            state["feature_names_in_"] = [str(name) for name in names]
        if hasattr(self, "classes_"):
            state["classes_"] = _json_labels(self.classes_, type(self).__name__)
        booster.set_attr(**{SKLEARN_ATTRIBUTE: json.dumps(state, sort_keys=True)})
        booster.save_model(path)

    def to_onnx(self, path: Union[str, "os.PathLike[str]", None] = None) -> bytes:
        """The fitted model as ONNX (:meth:`gpuboost.Booster.to_onnx`), written to
        ``path`` if given; a classifier's ``label`` output holds its ``classes_``
        (integers, else strings).

        Returns
        -------
        bytes
        """
        labels = getattr(self, "classes_", None)
        return self.get_booster().to_onnx(path, None if labels is None else list(labels))

    def load_model(self, path: Union[str, "os.PathLike[str]"]) -> Any:
        """Load a model file into this estimator, which is then fitted.

        Files written by :meth:`save_model` restore the fitted attributes; any other
        gpuboost model file (``Booster.save_model``) loads too, with classes
        ``0 .. n_classes - 1`` for a classifier. The hyperparameters are not changed.

        Parameters
        ----------
        path : str or path

        Returns
        -------
        self

        Raises
        ------
        ValueError
            The file was saved from another kind of estimator, or is no valid model.
        """
        booster = Booster.load_model(path)
        text = booster.attr(SKLEARN_ATTRIBUTE)
        state = json.loads(text) if text else {}
        booster.set_attr(**{SKLEARN_ATTRIBUTE: None})
        saved_from = state.get("estimator", type(self).__name__)
        if saved_from != type(self).__name__:
            raise ValueError(
                f"{os.fspath(path)} holds a {saved_from}; load it with {saved_from}().load_model."
            )
        self.booster_ = booster
        self.n_features_in_ = int(state.get("n_features_in_", booster.n_features))
        if "feature_names_in_" in state:
            self.feature_names_in_ = np.asarray(state["feature_names_in_"], dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._restore_fitted_attributes(booster, state)
        return self

    def _restore_fitted_attributes(self, booster, state):
        """Set the estimator's own fitted attributes from a loaded model."""


def restore_classes(estimator, booster, state):
    """Set ``classes_`` / ``n_classes_`` of a classifier from a loaded model (the saved
    labels, else ``0 .. n_classes - 1``)."""
    default = list(range(2 if booster.n_outputs == 1 else booster.n_outputs))
    estimator.classes_ = np.asarray(state.get("classes_", default))
    estimator.n_classes_ = len(estimator.classes_)


class BaseGBModel(ModelFileMixin, _BaseEstimator):
    """Shared implementation of the gpuboost estimators (see :class:`GBRegressor`)."""

    #: Training parameters the estimator sets itself (not accepted as extra keywords).
    _managed_params = frozenset()
    #: Whether ``class_weight`` applies (classifiers).
    _supports_class_weight = False
    #: Whether a label of shape (n, 2) holds intervals (``label_arguments``' ``bounds``:
    #: False, several targets; None, intervals, for the survival estimator).
    _label_bounds = False

    def __init__(
        self,
        *,
        n_estimators=100,
        max_depth=6,
        max_leaves=0,
        max_bin=255,
        grow_policy="depthwise",
        learning_rate=0.3,
        min_child_weight=None,
        min_data_in_leaf=None,
        reg_lambda=1.0,
        reg_alpha=0.0,
        gamma=0.0,
        split_penalty=None,
        max_delta_step=0.0,
        subsample=1.0,
        colsample_bytree=1.0,
        colsample_bylevel=1.0,
        colsample_bynode=1.0,
        random_state=0,
        objective=None,
        eval_metric=None,
        early_stopping_rounds=None,
        device="auto",
        verbosity=1,
        n_jobs=None,
        class_weight=None,
        callbacks=None,
        enable_categorical=False,
        categorical_features="auto",
        **kwargs,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.max_bin = max_bin
        self.grow_policy = grow_policy
        self.learning_rate = learning_rate
        self.min_child_weight = min_child_weight
        self.min_data_in_leaf = min_data_in_leaf
        self.split_penalty = split_penalty
        self.reg_lambda = reg_lambda
        self.reg_alpha = reg_alpha
        self.gamma = gamma
        self.max_delta_step = max_delta_step
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.colsample_bylevel = colsample_bylevel
        self.colsample_bynode = colsample_bynode
        self.random_state = random_state
        self.objective = objective
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.device = device
        self.verbosity = verbosity
        self.n_jobs = n_jobs
        self.class_weight = class_weight
        self.callbacks = callbacks
        self.enable_categorical = enable_categorical
        self.categorical_features = categorical_features
        self._extra_params = dict(kwargs)

    # -- parameters -------------------------------------------------------- #

    def get_params(self, deep=True):
        """Get the parameters of this estimator, extra keyword parameters included.

        Parameters
        ----------
        deep : bool, default=True
            Unused (no nested estimators).

        Returns
        -------
        dict
        """
        params = super().get_params(deep=deep)
        params.update(getattr(self, "_extra_params", {}))
        return params

    def set_params(self, **params):
        """Set parameters; names that are not constructor arguments become extra parameters.

        Like the constructor, this validates nothing: an extra name that is
        not a gpuboost training parameter (or alias) raises ValueError at ``fit``.

        Returns
        -------
        self
        """
        explicit = set(super().get_params(deep=False))
        extra = {key: value for key, value in params.items() if key not in explicit}
        super().set_params(**{key: value for key, value in params.items() if key in explicit})
        if not hasattr(self, "_extra_params"):
            self._extra_params = {}
        self._extra_params.update(extra)
        return self

    def _default_objective(self, n_classes):
        """Objective used when ``objective`` is None."""
        raise NotImplementedError

    def _training_params(self):
        """The gpuboost training parameters of the current hyperparameters, validated.

        The objective (and ``num_class``) are filled in by the subclass.
        """
        params = {}
        for argument, name in _ESTIMATOR_TO_TRAINING_PARAM.items():
            value = getattr(self, argument)
            if argument == "random_state":
                value = as_seed(value)
            if value is None and argument in ("n_jobs", "eval_metric", "objective"):
                continue
            if argument == "eval_metric" and callable(value):
                continue  # a scikit-learn style metric: _custom_metric
            params[name] = value
        for key, value in self._extra_params.items():
            name = canonical_name(key)
            if name in _TRAINING_PARAM_TO_ESTIMATOR:
                what = f"an alias of {name!r}, which is " if key != name else ""
                raise ValueError(
                    f"Parameter {key!r} is {what}set by the "
                    f"{_TRAINING_PARAM_TO_ESTIMATOR[name]!r} argument of {type(self).__name__}; "
                    f"use that argument instead."
                )
            if name in self._managed_params:
                raise ValueError(
                    f"Parameter {key!r} is set by {type(self).__name__} itself "
                    f"(num_class from the training data, num_parallel_tree from "
                    f"n_estimators in the forests); do not pass it."
                )
            params[key] = value
        return params

    def _custom_metric(self):
        """A callable ``eval_metric`` as :func:`gpuboost.train`'s ``custom_metric``."""
        return sklearn_metric(self.eval_metric) if callable(self.eval_metric) else None

    # -- fitting ----------------------------------------------------------- #

    def _validate_features(self, X, *, reset):
        """Convert ``X``; at fit (``reset``) record ``n_features_in_`` and the names.

        ``X`` with categorical columns (``categorical_features``, ``enable_categorical``;
        gpuboost.data.categorical) is checked through its codes but returned as given:
        the Dataset and the Booster read its categories by label. Device input
        (gpuboost.data.device) is checked where it lives and returned as given."""
        device = device_features(X)
        if device is not None:
            return self._record_features(X, device.names, device.array.shape[1], reset)
        names = column_names(X)
        if not reset:
            self._check_feature_names(names)
        model = None if reset else getattr(self, "booster_", None)
        categories = None if model is None else model.categories
        if categories is not None:  # a fitted model reads its categories by label
            encoded = X
            if np.ndim(X) == 2 and np.shape(X)[1] == len(categories):
                encoded = encode_features(X, categories=categories)[0]
        else:
            encoded, categories = encode_features(
                X, self.categorical_features, self.enable_categorical
            )
        data = as_sparse_feature_matrix(encoded)
        if data is None:
            data = as_feature_matrix(encoded)
        if categories is not None:
            data = X
        return self._record_features(data, names, np.shape(data)[1], reset)

    def _record_features(self, data, names, n_features, reset):
        """At fit (``reset``) record ``n_features_in_`` and the names; later check the
        number of features. Returns ``data``."""
        if reset:
            self.n_features_in_ = n_features
            if names is not None:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input."
            )
        return data

    def _check_feature_names(self, names):
        """Compare the column names of a predict-time ``X`` with those seen at fit."""
        fitted_names = getattr(self, "feature_names_in_", None)
        estimator_name = type(self).__name__
        if fitted_names is None and names is None:
            return
        if fitted_names is None:
            warnings.warn(
                f"X has feature names, but {estimator_name} was fitted without feature names",
                UserWarning,
                stacklevel=4,
            )
            return
        if names is None:
            warnings.warn(
                f"X does not have valid feature names, but {estimator_name} was "
                f"fitted with feature names",
                UserWarning,
                stacklevel=4,
            )
            return
        fitted_names = list(fitted_names)
        if names == fitted_names:
            return
        message = "The feature names should match those that were passed during fit.\n"
        unseen = sorted(set(names) - set(fitted_names))
        missing = sorted(set(fitted_names) - set(names))
        if not unseen and not missing:
            message += "Feature names must be in the same order as they were in fit.\n"
        if unseen:
            message += "Feature names unseen at fit time:\n" + "".join(
                f"- {name}\n" for name in unseen
            )
        if missing:
            message += "Feature names seen at fit time, yet now missing:\n" + "".join(
                f"- {name}\n" for name in missing
            )
        raise ValueError(message)

    def _eval_datasets(
        self,
        dtrain,
        eval_set,
        eval_labels,
        sample_weight_eval_set,
        base_margin_eval_set,
        eval_groups=None,
        eval_qids=None,
    ):
        """Build ``(Dataset, name)`` pairs of the evaluation sets."""
        n_sets = len(eval_set)
        weights = per_eval_set(sample_weight_eval_set, n_sets, "sample_weight_eval_set")
        margins = per_eval_set(base_margin_eval_set, n_sets, "base_margin_eval_set")
        groups = per_eval_set(eval_groups, n_sets, "eval_group")
        qids = per_eval_set(eval_qids, n_sets, "eval_qid")
        evals = []
        for index, ((X_eval, _), label) in enumerate(zip(eval_set, eval_labels)):
            data = self._validate_features(X_eval, reset=False)
            dataset = Dataset(
                data,
                **label_arguments(label, self._label_bounds),
                weight=weights[index],
                group=groups[index],
                qid=qids[index],
                base_margin=margins[index],
                reference=dtrain,
            )
            evals.append((dataset, f"{EVAL_SET_NAME_PREFIX}{index}"))
        return evals

    @staticmethod
    def _check_eval_set(eval_set):
        """``eval_set`` as a list of (X, y) pairs."""
        if eval_set is None:
            return []
        if (
            isinstance(eval_set, tuple)
            and len(eval_set) == 2
            and not isinstance(eval_set[0], tuple)
        ):
            raise ValueError(
                "eval_set must be a list of (X, y) pairs, e.g. "
                "eval_set=[(X_valid, y_valid)], not a single pair."
            )
        eval_set = list(eval_set)
        for item in eval_set:
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise ValueError("eval_set must be a list of (X, y) pairs.")
        return eval_set

    def _check_init_model(self, init_model):
        """Raise ValueError for an ``init_model`` this estimator cannot continue (none
        here; the forests refuse every one). Single-node and Dask ``fit`` call it."""

    def _checked_rounds(self, eval_set):
        """``(n_estimators, early_stopping_rounds)``, checked (early stopping needs an
        evaluation set)."""
        n_estimators = check_positive_int(self.n_estimators, "n_estimators")
        early_stopping_rounds = check_positive_int(
            self.early_stopping_rounds, "early_stopping_rounds", allow_none=True
        )
        if early_stopping_rounds is not None and not eval_set:
            raise ValueError(
                "early_stopping_rounds needs at least one evaluation set: pass "
                "eval_set=[(X_valid, y_valid)] to fit."
            )
        return n_estimators, early_stopping_rounds

    def _fit_booster(
        self,
        X,
        label,
        params,
        *,
        sample_weight,
        base_margin,
        eval_set,
        eval_labels,
        sample_weight_eval_set,
        base_margin_eval_set,
        verbose,
        init_model,
        obj=None,
        group=None,
        qid=None,
        eval_groups=None,
        eval_qids=None,
        feature_weights=None,
    ):
        """Validate everything, train, and set the fitted attributes; returns self."""
        if self.class_weight is not None and not self._supports_class_weight:
            raise ValueError(
                f"class_weight applies to classifiers; {type(self).__name__} takes "
                f"sample_weight instead."
            )
        self._check_init_model(init_model)
        n_estimators, early_stopping_rounds = self._checked_rounds(eval_set)
        params = validate_params(with_objective(params, obj))
        if params["booster"] == "adaboost" and type(self).__name__ != "AdaBoostClassifier":
            raise ValueError(
                f"{type(self).__name__} trains gradient-boosted trees; for "
                f"booster='adaboost' use gpuboost.AdaBoostClassifier."
            )
        feature_names = (
            None
            if getattr(self, "feature_names_in_", None) is None
            else list(self.feature_names_in_)
        )
        dtrain = Dataset(
            X,
            **label_arguments(label, self._label_bounds),
            weight=sample_weight,
            group=group,
            qid=qid,
            base_margin=base_margin,
            feature_names=feature_names,
            max_bin=params["max_bin"],
            seed=params["seed"],
            categorical_features=self.categorical_features,
            enable_categorical=self.enable_categorical,
            feature_weights=feature_weights,
        )
        evals = self._eval_datasets(
            dtrain,
            eval_set,
            eval_labels,
            sample_weight_eval_set,
            base_margin_eval_set,
            eval_groups,
            eval_qids,
        )
        if isinstance(init_model, BaseGBModel):
            init_model = init_model.get_booster()
        evals_result = {}
        self.booster_ = train(
            params,
            dtrain,
            num_boost_round=n_estimators,
            evals=evals,
            obj=obj,
            custom_metric=self._custom_metric(),
            early_stopping_rounds=early_stopping_rounds,
            evals_result=evals_result,
            verbose_eval=verbose,
            init_model=init_model,
            callbacks=list(self.callbacks or ()),
        )
        self.evals_result_ = evals_result
        return self

    # -- fitted state ------------------------------------------------------ #

    def _restore_fitted_attributes(self, booster, state):
        self.evals_result_ = {}  # not in the model file

    def __sklearn_is_fitted__(self):
        return hasattr(self, "booster_")

    def _check_is_fitted(self):
        if not hasattr(self, "booster_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call "
                f"'fit' with appropriate arguments before using this "
                f"estimator."
            )

    def get_booster(self) -> Booster:
        """The trained :class:`~gpuboost.Booster`.

        Returns
        -------
        Booster
        """
        self._check_is_fitted()
        return self.booster_

    def evals_result(self) -> Dict[str, Dict[str, List[float]]]:
        """Evaluation history: ``{"validation_<i>": {metric: [score per round]}}``.

        Returns
        -------
        dict
            Empty when ``fit`` had no ``eval_set``.
        """
        self._check_is_fitted()
        return self.evals_result_

    @property
    def best_iteration(self):
        """Round index of the best evaluation score (early stopping), else None."""
        return self.get_booster().best_iteration

    @property
    def best_score(self):
        """Best evaluation score (early stopping), else None."""
        return self.get_booster().best_score

    @property
    def feature_importances_(self):
        """Normalized total gain of every feature, shape (n_features,).

        ``feature_importance('total_gain')`` divided by its sum (equal to Friedman's
        normalized relative influence, and to scikit-learn's impurity-based
        importances); XGBoost's estimators normalize the average gain instead. Sums to
        1, or all zeros when the model has no split.
        """
        importance = self.get_booster().feature_importance(FEATURE_IMPORTANCES_TYPE)
        total = float(reproducible_sum(np, importance))
        if total > 0:
            return importance / total
        return np.zeros_like(importance)

    def _uses_custom_objective(self):
        """Whether the model was trained with a callable objective (margins have no link)."""
        return self.get_booster().params.get("objective") == CUSTOM_OBJECTIVE_NAME

    def _predict_margins(self, X, iteration_range, base_margin):
        """Raw margins of the model: (n_samples,) or (n_samples, n_outputs)."""
        self._check_is_fitted()
        data = self._validate_features(X, reset=False)
        if base_margin is not None:
            data = Dataset(
                data,
                base_margin=base_margin,
                categorical_features=self.categorical_features,
                enable_categorical=self.enable_categorical,
            )
        return self.booster_.predict(data, output_margin=True, iteration_range=iteration_range)

    def apply(self, X: ArrayLike, iteration_range: Optional[Tuple[int, int]] = None) -> np.ndarray:
        """Index of the leaf every sample reaches in every tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        iteration_range : (int, int), default=None
            Rounds ``[begin, end)`` to use; default all (up to the best
            iteration after early stopping).

        Returns
        -------
        ndarray of shape (n_samples, n_trees), int32
        """
        self._check_is_fitted()
        data = self._validate_features(X, reset=False)
        return self.booster_.predict(data, pred_leaf=True, iteration_range=iteration_range)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True  # kept sparse by the Dataset (absent entries are 0.0)
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}


COMMON_PARAMETERS_DOC = """
    Parameters
    ----------
    n_estimators : int, default=100
        Number of boosting rounds.
    max_depth : int, default=6
        Maximum tree depth; 0 means no limit (lossguide only).
    max_leaves : int, default=0
        Maximum number of leaves per tree; 0 means no limit.
    max_bin : int, default=255
        Value bins per feature (2 to 255).
    grow_policy : {{'depthwise', 'lossguide'}}, default='depthwise'
    learning_rate : float, default=0.3
    min_child_weight : float, default=None
        Minimum sum of hessians in a child; None: 1, and 1e-3 for multiclass
        classification (LightGBM's), where ``min_data_in_leaf`` bounds the leaves.
    min_data_in_leaf : int, default=None
        Minimum number of rows in a child; None: 1 (no limit, as XGBoost) where
        ``split_penalty`` is on, else 10.
    reg_lambda : float, default=1.0
        L2 regularization of leaf values.
    reg_alpha : float, default=0.0
        L1 regularization of leaf values.
    gamma : float, default=0.0
        Minimum gain of a split.
    split_penalty : float, default=None
        A split must gain more than ``gamma`` plus this times the tree's gradient
        dispersion ``sum(g^2) / sum(h)`` (2: Akaike's criterion); None: 2 for squared
        error and binary logistic loss, else 0 (off).
    max_delta_step : float, default=0.0
        Clip leaf values to this magnitude (0 = off).
    subsample : float, default=1.0
        Fraction of rows sampled for each tree.
    colsample_bytree, colsample_bylevel, colsample_bynode : float, default=1.0
        Fractions of features sampled per tree, per depth and per node.
    random_state : int, RandomState, Generator or None, default=0
        Seed of every random choice; None means 0.
    objective : str or callable, default=None
        Training objective (see ``gpuboost.objectives.OBJECTIVES``); None picks
        the estimator's default. {objective_doc}
    eval_metric : str, list of str or callable, default=None
        Metrics computed on ``eval_set``; default: the objective's. The last
        one drives early stopping. A callable is a scikit-learn style metric
        ``metric(y_true, y_pred)`` (``sample_weight=`` is passed when the set has
        weights; ``y_pred``: predicted values, the positive class's probability, or
        the class probabilities), recorded under its ``__name__``; early stopping
        takes lower values as better (pass the negative of a score).
    early_stopping_rounds : int, default=None
        Stop when the last metric on the last ``eval_set`` has not improved
        for this many rounds (needs ``eval_set``). Predictions then use the
        rounds up to ``best_iteration``.
    device : {{'auto', 'cpu', 'cuda', 'cuda:N'}}, default='auto'
    verbosity : int, default=1
        0 silent, 1 warnings, 2 info, 3 debug.
    n_jobs : int, default=None
        Accepted for compatibility (gpuboost's ``nthread``).
    class_weight : dict, 'balanced' or None, default=None
        GBClassifier only: multiplies the sample weight of every training row by its
        class's weight, ``{{label: weight}}`` (other labels 1) or 'balanced'
        (``n_samples / (n_classes * count of the class)``, scikit-learn's). Evaluation
        sets keep their own weights. For binary objectives the training parameters
        ``scale_pos_weight`` and ``is_unbalance`` do the same on the positive class.
    callbacks : list of TrainingCallback, default=None
        Called during training (gpuboost.boosting.callback), e.g.
        ``TrainingCheckPoint``; cloned with the estimator.
    enable_categorical : bool, default=False
        Take string columns of ``X`` as categorical features (XGBoost's name).
    categorical_features : 'auto', None or list of str or int, default='auto'
        The categorical columns of ``X`` (:class:`~gpuboost.Dataset`): 'auto' takes
        pandas ``category`` columns. Predictions read them by label.
    **kwargs
        Any other gpuboost training parameter (e.g. ``base_score``,
        ``huber_delta``); validated at ``fit``.
"""

COMMON_ATTRIBUTES_DOC = """
    Attributes
    ----------
    booster_ : Booster
        The trained model (also ``get_booster()``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (n_features,)
        Normalized total gain of each feature (scikit-learn's convention).
    evals_result_ : dict
        ``{"validation_<i>": {metric: [score per round]}}`` (also ``evals_result()``).
    best_iteration, best_score
        Set by early stopping, else None.
"""


def sklearn_metric(metric):
    """Adapt a scikit-learn style ``metric(y_true, y_pred, sample_weight=None)`` to
    :func:`gpuboost.train`'s ``custom_metric``."""
    name = getattr(metric, "__name__", type(metric).__name__)

    def custom_metric(prediction, dataset):
        weight = dataset.get_weight()
        if weight is None:
            return name, float(metric(dataset.get_label(), prediction))
        return name, float(metric(dataset.get_label(), prediction, sample_weight=weight))

    return custom_metric


def sklearn_objective(func):
    """Adapt ``func(y_true, raw_margin) -> (grad, hess)`` to :func:`gpuboost.train`'s ``obj``."""

    def objective(raw_margin, dataset):
        return func(dataset.get_label(), raw_margin)

    return objective
