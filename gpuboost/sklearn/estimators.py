"""scikit-learn style estimators: :class:`GBRegressor`, :class:`GBClassifier`, :class:`GBRanker`.

The estimators wrap :func:`gpuboost.train` and :class:`gpuboost.Booster` with
the scikit-learn conventions: hyperparameters are plain constructor arguments
(so ``get_params`` / ``set_params`` / ``clone`` / ``GridSearchCV`` work),
nothing is validated before ``fit``, fitted state lives in attributes ending
with ``_``, and ``predict`` before ``fit`` raises ``NotFittedError``.

scikit-learn is optional. When it is installed the estimators derive from
``sklearn.base.BaseEstimator`` and its mixins; otherwise from small local
classes that provide ``get_params``, ``set_params`` and ``score``.

Hyperparameters keep gpuboost's (XGBoost's) names and defaults; the few
scikit-learn spellings are ``n_estimators`` (boosting rounds),
``random_state`` (``seed``) and ``n_jobs`` (``nthread``). Any other training
parameter of :mod:`gpuboost.params` can be passed as an extra keyword
argument; it is stored, returned by ``get_params`` and validated at ``fit``.
"""
import inspect
import math
import numbers
import sys
import warnings

import numpy as np

from ..core.dtypes import X_DTYPE, Y_DTYPE
from ..data.convert import as_array, check_group, convert_features
from ..data.dataset import Dataset
from ..metrics import get_metric
from ..objectives import CUSTOM_OBJECTIVE_NAME, OBJECTIVES, get_objective
from ..params import canonical_name, validate_params
from ..boosting.train import train

try:
    from sklearn.base import BaseEstimator as _BaseEstimator
    from sklearn.base import ClassifierMixin as _ClassifierMixin
    from sklearn.base import RegressorMixin as _RegressorMixin
    from sklearn.exceptions import DataConversionWarning, NotFittedError
    SKLEARN_INSTALLED = True
except ImportError:  # scikit-learn is optional
    SKLEARN_INSTALLED = False

__all__ = ["GBRegressor", "GBClassifier", "GBRanker", "AdaBoostClassifier", "NotFittedError",
           "SKLEARN_INSTALLED"]

#: Prefix of the names of the evaluation sets in ``evals_result_``: "validation_0", ...
EVAL_SET_NAME_PREFIX = "validation_"
#: Probability of the positive class above which a binary classifier predicts it.
BINARY_DECISION_THRESHOLD = 0.5
#: Smallest number of classes a classifier is trained on.
MIN_CLASSES = 2
#: Number of unseen labels an error message shows.
MAX_LABELS_SHOWN = 10
#: Exclusive upper bound of a seed drawn from a ``numpy.random.RandomState`` / ``Generator``.
SEED_UPPER_BOUND = np.iinfo(np.int32).max
#: Default objective of each estimator (the classifier's depends on the class count).
DEFAULT_REGRESSION_OBJECTIVE = "reg:squarederror"
DEFAULT_BINARY_OBJECTIVE = "binary:logistic"
DEFAULT_MULTICLASS_OBJECTIVE = "multi:softprob"
DEFAULT_RANKING_OBJECTIVE = "rank:ndcg"
#: Metric of ``GBRanker.score`` and its default evaluation metric.
RANKING_SCORE_METRIC = "ndcg"
#: Objective name prefixes of the task families.
BINARY_PREFIX = "binary:"
MULTICLASS_PREFIX = "multi:"
RANKING_PREFIX = "rank:"


# --------------------------------------------------------------------------- #
# Fallbacks when scikit-learn is not installed
# --------------------------------------------------------------------------- #

if not SKLEARN_INSTALLED:

    class NotFittedError(ValueError, AttributeError):
        """Raised when an estimator is used before ``fit`` (as scikit-learn's)."""

    class DataConversionWarning(UserWarning):
        """Warns that the input data was converted (as scikit-learn's)."""

    class _BaseEstimator:
        """Minimal ``BaseEstimator``: parameters are the ``__init__`` arguments."""

        @classmethod
        def _get_param_names(cls):
            """Names of the explicit ``__init__`` arguments, sorted."""
            signature = inspect.signature(cls.__init__)
            return sorted(parameter.name for parameter in signature.parameters.values()
                          if parameter.name != "self"
                          and parameter.kind not in (parameter.VAR_KEYWORD,
                                                     parameter.VAR_POSITIONAL))

        def get_params(self, deep=True):
            """Get the parameters of this estimator.

            Parameters
            ----------
            deep : bool, default=True
                Unused (no nested estimators); kept for scikit-learn compatibility.

            Returns
            -------
            dict
                Parameter names mapped to their values.
            """
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            """Set the parameters of this estimator.

            Returns
            -------
            self
            """
            valid = self._get_param_names()
            for key, value in params.items():
                if key not in valid:
                    raise ValueError(f"Invalid parameter {key!r} for estimator "
                                     f"{type(self).__name__}. Valid parameters are: {valid}.")
                setattr(self, key, value)
            return self

        def __repr__(self):
            signature = inspect.signature(type(self).__init__)
            defaults = {parameter.name: parameter.default
                        for parameter in signature.parameters.values()}
            changed = []
            for key, value in self.get_params(deep=False).items():
                default = defaults.get(key, inspect.Parameter.empty)
                if default is inspect.Parameter.empty or not _same_value(value, default):
                    changed.append(f"{key}={value!r}")
            return f"{type(self).__name__}({', '.join(changed)})"

    class _RegressorMixin:
        """Minimal ``RegressorMixin``: ``score`` is the coefficient of determination."""

        _estimator_type = "regressor"

        def score(self, X, y, sample_weight=None):
            """Coefficient of determination R² of ``self.predict(X)`` against ``y``.

            Parameters
            ----------
            X : array-like of shape (n_samples, n_features)
            y : array-like of shape (n_samples,)
            sample_weight : array-like of shape (n_samples,), default=None

            Returns
            -------
            float
                1.0 for a perfect fit; it can be negative.
            """
            return _r2_score(y, self.predict(X), sample_weight)

    class _ClassifierMixin:
        """Minimal ``ClassifierMixin``: ``score`` is the accuracy."""

        _estimator_type = "classifier"

        def score(self, X, y, sample_weight=None):
            """(Weighted) accuracy of ``self.predict(X)`` against ``y``.

            Parameters
            ----------
            X : array-like of shape (n_samples, n_features)
            y : array-like of shape (n_samples,)
            sample_weight : array-like of shape (n_samples,), default=None

            Returns
            -------
            float
            """
            correct = (np.asarray(self.predict(X)) == np.asarray(y)).astype(Y_DTYPE)
            return float(np.average(correct, weights=sample_weight))


def _same_value(value, default):
    """Whether a parameter value equals its default (for the fallback ``__repr__``)."""
    try:
        return bool(value is default or value == default)
    except (TypeError, ValueError):  # array-like values compare element-wise
        return False


def _r2_score(y_true, y_pred, sample_weight=None):
    """Coefficient of determination; 1.0 (perfect) or 0.0 when ``y_true`` is constant."""
    y_true = np.asarray(y_true, dtype=Y_DTYPE).ravel()
    y_pred = np.asarray(y_pred, dtype=Y_DTYPE).ravel()
    weight = np.ones_like(y_true) if sample_weight is None else np.asarray(sample_weight,
                                                                           dtype=Y_DTYPE)
    residual = np.sum(weight * (y_true - y_pred) ** 2)
    total = np.sum(weight * (y_true - np.average(y_true, weights=weight)) ** 2)
    if total == 0:
        return 1.0 if residual == 0 else 0.0
    return float(1.0 - residual / total)


# --------------------------------------------------------------------------- #
# Input helpers
# --------------------------------------------------------------------------- #

def _column_names(X):
    """The column names of a DataFrame-like ``X`` when all are strings, else None."""
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    names = list(columns)
    if names and all(isinstance(name, str) for name in names):
        return names
    return None


def _as_feature_matrix(X):
    """``X`` as a C-contiguous 2-D float64 array (NaN = missing).

    Arrays of dtype object holding numbers are converted; complex numbers are
    rejected.
    """
    if X is None:
        raise ValueError("X is None; expected a 2-D array-like of shape (n_samples, n_features).")
    if not hasattr(X, "columns") and not _is_sparse(X):
        array = np.asarray(X)
        if np.iscomplexobj(array):
            raise ValueError("Complex data not supported: X must hold real numbers.")
        if array.dtype.kind == "O":
            # float() gives a clear TypeError for entries that are not numbers.
            array = np.asarray(array, dtype=X_DTYPE)
        X = array
    _check_matrix_shape(np.shape(X))
    return convert_features(X)[0]


def _check_matrix_shape(shape):
    """ValueError (in scikit-learn's wording) for a 1-D or empty ``X``."""
    if len(shape) == 1:
        raise ValueError(f"Expected a 2-D array for X, got a 1-D array of length {shape[0]}. "
                         f"Reshape your data either using X.reshape(-1, 1) if your data has a "
                         f"single feature or X.reshape(1, -1) if it contains a single sample.")
    if len(shape) == 2 and shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={tuple(shape)}) while a minimum "
                         f"of 1 is required.")
    if len(shape) == 2 and shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={tuple(shape)}) while a minimum "
                         f"of 1 is required.")


def _is_sparse(X):
    """Whether ``X`` is a scipy.sparse matrix or array (without importing scipy)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def _as_target_vector(y, estimator_name):
    """``y`` as a 1-D array of its own dtype; a column vector is raveled with a warning."""
    if y is None:
        raise ValueError(f"{estimator_name} requires y to be passed, but the target y is None.")
    y = as_array(y)  # pandas nullable numbers -> float64 with NaN
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change "
                      "the shape of y to (n_samples,), for example using ravel().",
                      DataConversionWarning, stacklevel=3)
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array of shape (n_samples,), got an array of shape "
                         f"{y.shape} instead; {estimator_name} supports a single target.")
    return y


def _as_numeric_target(y, estimator_name):
    """A regression or ranking target as float64 (finiteness is checked by Dataset)."""
    y = _as_target_vector(y, estimator_name)
    if y.dtype.kind == "O":
        try:
            y = y.astype(Y_DTYPE)
        except (TypeError, ValueError):
            raise ValueError(f"{estimator_name} needs numeric targets; y holds values that are "
                             f"not numbers (dtype object).") from None
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{estimator_name} needs numeric targets, got y of dtype {y.dtype}.")
    return y.astype(Y_DTYPE)


def _has_missing_labels(y):
    """Whether a label array holds NaN, infinity or None (for any dtype)."""
    if y.dtype.kind == "f":
        return not bool(np.isfinite(y).all())
    if y.dtype.kind == "O":
        return any(value is None or value != value for value in y)
    return False


def _as_seed(random_state):
    """The integer seed of a ``random_state`` argument (None means 0)."""
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(SEED_UPPER_BOUND))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(SEED_UPPER_BOUND))
    return random_state


def _check_positive_int(value, name, allow_none=False):
    if allow_none and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if allow_none else ''}, "
                         f"got {value!r}.")
    return int(value)


def _per_eval_set(values, n_eval_sets, name):
    """A list with one entry per evaluation set (None -> all None)."""
    if values is None:
        return [None] * n_eval_sets
    values = list(values)
    if len(values) != n_eval_sets:
        raise ValueError(f"{name} has {len(values)} entries, but eval_set has {n_eval_sets}.")
    return values


# --------------------------------------------------------------------------- #
# The shared estimator
# --------------------------------------------------------------------------- #

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
_TRAINING_PARAM_TO_ESTIMATOR = {param: argument
                                for argument, param in _ESTIMATOR_TO_TRAINING_PARAM.items()}


class _GBModel(_BaseEstimator):
    """Shared implementation of the gpuboost estimators (see :class:`GBRegressor`)."""

    #: Training parameters the estimator sets itself (not accepted as extra keywords).
    _managed_params = frozenset()

    def __init__(self, *, n_estimators=100, max_depth=6, max_leaves=0, max_bin=255,
                 grow_policy="depthwise", learning_rate=0.3, min_child_weight=1.0,
                 min_data_in_leaf=1, reg_lambda=1.0, reg_alpha=0.0, gamma=0.0,
                 max_delta_step=0.0, subsample=1.0, colsample_bytree=1.0,
                 colsample_bylevel=1.0, colsample_bynode=1.0, random_state=0, objective=None,
                 eval_metric=None, early_stopping_rounds=None, device="auto", verbosity=1,
                 n_jobs=None, **kwargs):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.max_bin = max_bin
        self.grow_policy = grow_policy
        self.learning_rate = learning_rate
        self.min_child_weight = min_child_weight
        self.min_data_in_leaf = min_data_in_leaf
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
                value = _as_seed(value)
            if value is None and argument in ("n_jobs", "eval_metric", "objective"):
                continue
            params[name] = value
        for key, value in self._extra_params.items():
            name = canonical_name(key)
            if name in _TRAINING_PARAM_TO_ESTIMATOR:
                what = f"an alias of {name!r}, which is " if key != name else ""
                raise ValueError(
                    f"Parameter {key!r} is {what}set by the "
                    f"{_TRAINING_PARAM_TO_ESTIMATOR[name]!r} argument of {type(self).__name__}; "
                    f"use that argument instead.")
            if name in self._managed_params:
                raise ValueError(f"Parameter {key!r} is set by {type(self).__name__} itself "
                                 f"(from the training data); do not pass it.")
            params[key] = value
        return params

    # -- fitting ----------------------------------------------------------- #

    def _validate_features(self, X, *, reset):
        """Convert ``X``; at fit (``reset``) record ``n_features_in_`` and the names."""
        names = _column_names(X)
        if not reset:
            self._check_feature_names(names)
        data = _as_feature_matrix(X)
        if reset:
            self.n_features_in_ = data.shape[1]
            if names is not None:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif data.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {data.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")
        return data

    def _check_feature_names(self, names):
        """Compare the column names of a predict-time ``X`` with those seen at fit."""
        fitted_names = getattr(self, "feature_names_in_", None)
        estimator_name = type(self).__name__
        if fitted_names is None and names is None:
            return
        if fitted_names is None:
            warnings.warn(f"X has feature names, but {estimator_name} was fitted without "
                          f"feature names", UserWarning, stacklevel=4)
            return
        if names is None:
            warnings.warn(f"X does not have valid feature names, but {estimator_name} was "
                          f"fitted with feature names", UserWarning, stacklevel=4)
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
                f"- {name}\n" for name in unseen)
        if missing:
            message += "Feature names seen at fit time, yet now missing:\n" + "".join(
                f"- {name}\n" for name in missing)
        raise ValueError(message)

    def _eval_datasets(self, dtrain, eval_set, eval_labels, sample_weight_eval_set,
                       base_margin_eval_set, eval_groups=None, eval_qids=None):
        """Build ``(Dataset, name)`` pairs of the evaluation sets."""
        n_sets = len(eval_set)
        weights = _per_eval_set(sample_weight_eval_set, n_sets, "sample_weight_eval_set")
        margins = _per_eval_set(base_margin_eval_set, n_sets, "base_margin_eval_set")
        groups = _per_eval_set(eval_groups, n_sets, "eval_group")
        qids = _per_eval_set(eval_qids, n_sets, "eval_qid")
        evals = []
        for index, ((X_eval, _), label) in enumerate(zip(eval_set, eval_labels)):
            data = self._validate_features(X_eval, reset=False)
            dataset = Dataset(data, label=label, weight=weights[index], group=groups[index],
                              qid=qids[index], base_margin=margins[index], reference=dtrain)
            evals.append((dataset, f"{EVAL_SET_NAME_PREFIX}{index}"))
        return evals

    @staticmethod
    def _check_eval_set(eval_set):
        """``eval_set`` as a list of (X, y) pairs."""
        if eval_set is None:
            return []
        if isinstance(eval_set, tuple) and len(eval_set) == 2 and not isinstance(
                eval_set[0], tuple):
            raise ValueError("eval_set must be a list of (X, y) pairs, e.g. "
                             "eval_set=[(X_valid, y_valid)], not a single pair.")
        eval_set = list(eval_set)
        for item in eval_set:
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise ValueError("eval_set must be a list of (X, y) pairs.")
        return eval_set

    def _fit_booster(self, X, label, params, *, sample_weight, base_margin, eval_set,
                     eval_labels, sample_weight_eval_set, base_margin_eval_set, verbose,
                     init_model, obj=None, group=None, qid=None, eval_groups=None,
                     eval_qids=None):
        """Validate everything, train, and set the fitted attributes; returns self."""
        n_estimators = _check_positive_int(self.n_estimators, "n_estimators")
        early_stopping_rounds = _check_positive_int(self.early_stopping_rounds,
                                                    "early_stopping_rounds", allow_none=True)
        if early_stopping_rounds is not None and not eval_set:
            raise ValueError("early_stopping_rounds needs at least one evaluation set: pass "
                             "eval_set=[(X_valid, y_valid)] to fit.")
        params = validate_params(params)
        if params["booster"] == "adaboost" and type(self).__name__ != "AdaBoostClassifier":
            raise ValueError(f"{type(self).__name__} trains gradient-boosted trees; for "
                             f"booster='adaboost' use gpuboost.AdaBoostClassifier.")
        feature_names = (None if getattr(self, "feature_names_in_", None) is None
                         else list(self.feature_names_in_))
        dtrain = Dataset(X, label=label, weight=sample_weight, group=group, qid=qid,
                         base_margin=base_margin, feature_names=feature_names,
                         max_bin=params["max_bin"], seed=params["seed"])
        evals = self._eval_datasets(dtrain, eval_set, eval_labels, sample_weight_eval_set,
                                    base_margin_eval_set, eval_groups, eval_qids)
        if isinstance(init_model, _GBModel):
            init_model = init_model.get_booster()
        evals_result = {}
        self.booster_ = train(params, dtrain, num_boost_round=n_estimators, evals=evals,
                              obj=obj, early_stopping_rounds=early_stopping_rounds,
                              evals_result=evals_result, verbose_eval=verbose,
                              init_model=init_model)
        self.evals_result_ = evals_result
        return self

    # -- fitted state ------------------------------------------------------ #

    def __sklearn_is_fitted__(self):
        return hasattr(self, "booster_")

    def _check_is_fitted(self):
        if not hasattr(self, "booster_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 f"'fit' with appropriate arguments before using this "
                                 f"estimator.")

    def get_booster(self):
        """The trained :class:`~gpuboost.Booster`.

        Returns
        -------
        Booster
        """
        self._check_is_fitted()
        return self.booster_

    def evals_result(self):
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
        """Normalized 'gain' importance of every feature, shape (n_features_in_,).

        Sums to 1, or all zeros when the model has no split.
        """
        importance = self.get_booster().feature_importance("gain")
        total = importance.sum()
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
            data = Dataset(data, base_margin=base_margin)
        return self.booster_.predict(data, output_margin=True, iteration_range=iteration_range)

    def apply(self, X, iteration_range=None):
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
        tags.input_tags.sparse = True  # densified (absent entries are 0.0, not missing)
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}


_COMMON_PARAMETERS_DOC = """
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
    min_child_weight : float, default=1.0
        Minimum sum of hessians in a child.
    min_data_in_leaf : int, default=1
        Minimum number of rows in a child.
    reg_lambda : float, default=1.0
        L2 regularization of leaf values.
    reg_alpha : float, default=0.0
        L1 regularization of leaf values.
    gamma : float, default=0.0
        Minimum gain of a split.
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
    eval_metric : str or list of str, default=None
        Metrics computed on ``eval_set``; default: the objective's. The last
        one drives early stopping.
    early_stopping_rounds : int, default=None
        Stop when the last metric on the last ``eval_set`` has not improved
        for this many rounds (needs ``eval_set``). Predictions then use the
        rounds up to ``best_iteration``.
    device : {{'auto', 'cpu', 'cuda', 'cuda:N'}}, default='auto'
    verbosity : int, default=1
        0 silent, 1 warnings, 2 info, 3 debug.
    n_jobs : int, default=None
        Accepted for compatibility (gpuboost's ``nthread``).
    **kwargs
        Any other gpuboost training parameter (e.g. ``base_score``,
        ``huber_delta``); validated at ``fit``.
"""

_COMMON_ATTRIBUTES_DOC = """
    Attributes
    ----------
    booster_ : Booster
        The trained model (also ``get_booster()``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Normalized 'gain' importance.
    evals_result_ : dict
        ``{"validation_<i>": {metric: [score per round]}}`` (also ``evals_result()``).
    best_iteration, best_score
        Set by early stopping, else None.
"""


def _sklearn_objective(func):
    """Adapt ``func(y_true, raw_margin) -> (grad, hess)`` to :func:`gpuboost.train`'s ``obj``."""

    def objective(raw_margin, dataset):
        return func(dataset.get_label(), raw_margin)

    return objective


# --------------------------------------------------------------------------- #
# Regressor
# --------------------------------------------------------------------------- #

class GBRegressor(_RegressorMixin, _GBModel):
    __doc__ = ("""Gradient-boosted trees for regression (scikit-learn API).
""" + _COMMON_PARAMETERS_DOC.format(
        objective_doc="Default 'reg:squarederror'. A callable ``objective(y_true, "
                      "raw_margin) -> (grad, hess)`` is a custom objective; predictions "
                      "are then raw margins.")
        + _COMMON_ATTRIBUTES_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from gpuboost import GBRegressor
    >>> X = np.random.default_rng(0).random((200, 3))
    >>> model = GBRegressor(n_estimators=10, device="cpu").fit(X, X[:, 0])
    >>> model.predict(X[:2]).shape
    (2,)
""")

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            verbose=False, init_model=None, base_margin=None, base_margin_eval_set=None):
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks missing values. A pandas DataFrame's string column names
            are kept (``feature_names_in_``).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        eval_set : list of (X, y), default=None
            Evaluated after every round (``evals_result_``); the last one
            drives early stopping.
        sample_weight_eval_set : list of array-like, default=None
            One weight array (or None) per ``eval_set`` entry.
        verbose : bool or int, default=False
            Print the evaluation every round (True) or every ``verbose`` rounds.
        init_model : Booster, fitted estimator or path, default=None
            Continue training this model.
        base_margin : array-like of shape (n_samples,), default=None
            Initial raw predictions.
        base_margin_eval_set : list of array-like, default=None
            One base margin (or None) per ``eval_set`` entry.

        Returns
        -------
        self
        """
        name = type(self).__name__
        data = self._validate_features(X, reset=True)
        label = _as_numeric_target(y, name)
        eval_set = self._check_eval_set(eval_set)
        eval_labels = [_as_numeric_target(y_eval, name) for _, y_eval in eval_set]
        params = self._training_params()
        obj = None
        if callable(self.objective):
            obj = _sklearn_objective(self.objective)
            params.pop("objective")
        else:
            params.setdefault("objective", DEFAULT_REGRESSION_OBJECTIVE)
            if str(params["objective"]).startswith(MULTICLASS_PREFIX):
                raise ValueError(f"{name} cannot use the multiclass objective "
                                 f"{params['objective']!r}; use GBClassifier.")
        return self._fit_booster(data, label, params, sample_weight=sample_weight,
                                 base_margin=base_margin, eval_set=eval_set,
                                 eval_labels=eval_labels,
                                 sample_weight_eval_set=sample_weight_eval_set,
                                 base_margin_eval_set=base_margin_eval_set, verbose=verbose,
                                 init_model=init_model, obj=obj)

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None):
        """Predict targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        output_margin : bool, default=False
            Return raw margins (before the objective's link).
        iteration_range : (int, int), default=None
            Rounds ``[begin, end)`` to use; default all (up to
            ``best_iteration`` after early stopping).
        base_margin : array-like of shape (n_samples,), default=None
            Initial raw predictions (when the model was trained with one).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        margins = self._predict_margins(X, iteration_range, base_margin)
        if output_margin or self._uses_custom_objective():
            return margins
        return self.booster_.objective.output(np, margins)


# --------------------------------------------------------------------------- #
# Classifier
# --------------------------------------------------------------------------- #

class GBClassifier(_ClassifierMixin, _GBModel):
    __doc__ = ("""Gradient-boosted trees for binary and multiclass classification.

    Labels may be of any sortable type (ints, floats, strings, bools); they are
    encoded to ``0 .. n_classes_ - 1`` in the order of ``classes_``.
""" + _COMMON_PARAMETERS_DOC.format(
        objective_doc="Default 'binary:logistic' for two classes, 'multi:softprob' "
                      "for more. A callable ``objective(y_encoded, raw_margin) -> "
                      "(grad, hess)`` is a custom objective; probabilities are then the "
                      "sigmoid (binary) or softmax of the margins.")
        + _COMMON_ATTRIBUTES_DOC + """    classes_ : ndarray of shape (n_classes_,)
        The class labels, sorted.
    n_classes_ : int
""")

    _managed_params = frozenset({"num_class"})

    def _encode_labels(self, y, what):
        """Encode labels of an eval set with the fitted ``classes_``."""
        y = _as_target_vector(y, type(self).__name__)
        if _has_missing_labels(y):
            raise ValueError(f"{what} contains missing or infinite (NaN, inf or None) labels.")
        try:
            positions = np.searchsorted(self.classes_, y)
        except TypeError:  # labels of a type that does not compare with classes_
            positions = np.zeros(len(y), dtype=np.intp)
        positions = np.minimum(positions, len(self.classes_) - 1)
        unseen = self.classes_[positions] != y
        if np.any(unseen):
            examples = list(dict.fromkeys(np.asarray(y)[unseen].tolist()))[:MAX_LABELS_SHOWN]
            raise ValueError(f"{what} has labels not seen in training, e.g. {examples}; the "
                             f"classes are {self.classes_.tolist()}.")
        return positions.astype(Y_DTYPE)

    def _fit_classes(self, y):
        """Set ``classes_`` / ``n_classes_`` and return the encoded labels (float64)."""
        name = type(self).__name__
        y = _as_target_vector(y, name)
        if _has_missing_labels(y):
            raise ValueError("y contains missing or infinite (NaN, inf or None) labels; every "
                             "sample needs a class label.")
        if y.dtype.kind == "f" and not np.all(y == np.round(y)):
            raise ValueError(f"Unknown label type: continuous. {name} needs discrete class "
                             f"labels (ints, strings, or integral floats); for a continuous "
                             f"target use GBRegressor.")
        try:
            classes, encoded = np.unique(y, return_inverse=True)
        except TypeError as error:
            raise TypeError(f"The labels of y cannot be sorted ({error}); use labels of one "
                            f"type.") from None
        if len(classes) < MIN_CLASSES:
            raise ValueError(f"{name} needs samples of at least {MIN_CLASSES} classes in the "
                             f"data, but the data contains only one class: {classes[0]!r}.")
        self.classes_ = classes
        self.n_classes_ = len(classes)
        return encoded.reshape(-1).astype(Y_DTYPE)

    def _classification_objective(self, params):
        """Fill in ``objective`` and ``num_class`` for ``n_classes_`` classes."""
        name = type(self).__name__
        multiclass = self.n_classes_ > MIN_CLASSES
        if callable(self.objective):
            params.pop("objective")
            if multiclass:
                params["num_class"] = self.n_classes_
            return _sklearn_objective(self.objective)
        default = DEFAULT_MULTICLASS_OBJECTIVE if multiclass else DEFAULT_BINARY_OBJECTIVE
        objective = params.setdefault("objective", default)
        if not isinstance(objective, str):
            raise ValueError(f"objective must be a string or a callable, got {objective!r}.")
        if objective.startswith(MULTICLASS_PREFIX):
            params["num_class"] = self.n_classes_
        elif not objective.startswith(BINARY_PREFIX):
            raise ValueError(f"{name} needs a classification objective ('binary:*' or "
                             f"'multi:*'), got {objective!r}.")
        elif multiclass:
            raise ValueError(f"The binary objective {objective!r} cannot fit "
                             f"{self.n_classes_} classes; use {DEFAULT_MULTICLASS_OBJECTIVE!r} "
                             f"or objective=None.")
        return None

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            verbose=False, init_model=None, base_margin=None, base_margin_eval_set=None):
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks missing values.
        y : array-like of shape (n_samples,)
            Class labels; at least two distinct classes.
        sample_weight : array-like of shape (n_samples,), default=None
        eval_set : list of (X, y), default=None
            ``y`` uses the same labels as the training ``y``.
        sample_weight_eval_set : list of array-like, default=None
        verbose : bool or int, default=False
        init_model : Booster, fitted estimator or path, default=None
        base_margin : array-like of shape (n_samples,) or (n_samples, n_classes_), default=None
        base_margin_eval_set : list of array-like, default=None

        Returns
        -------
        self
        """
        data = self._validate_features(X, reset=True)
        label = self._fit_classes(y)
        eval_set = self._check_eval_set(eval_set)
        eval_labels = [self._encode_labels(y_eval, f"eval_set[{index}]")
                       for index, (_, y_eval) in enumerate(eval_set)]
        params = self._training_params()
        obj = self._classification_objective(params)
        return self._fit_booster(data, label, params, sample_weight=sample_weight,
                                 base_margin=base_margin, eval_set=eval_set,
                                 eval_labels=eval_labels,
                                 sample_weight_eval_set=sample_weight_eval_set,
                                 base_margin_eval_set=base_margin_eval_set, verbose=verbose,
                                 init_model=init_model, obj=obj)

    def predict_proba(self, X, iteration_range=None, base_margin=None):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        iteration_range : (int, int), default=None
        base_margin : array-like, default=None

        Returns
        -------
        ndarray of shape (n_samples, n_classes_)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        margins = self._predict_margins(X, iteration_range, base_margin)
        if self._uses_custom_objective():
            if margins.ndim == 1:
                objective = get_objective(DEFAULT_BINARY_OBJECTIVE)
            else:
                objective = get_objective(DEFAULT_MULTICLASS_OBJECTIVE,
                                          {"num_class": margins.shape[1]})
        else:
            objective = self.booster_.objective
        probabilities = np.asarray(objective.mean(np, margins), dtype=Y_DTYPE)
        if probabilities.ndim == 1:
            return np.column_stack([1.0 - probabilities, probabilities])
        return probabilities

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None):
        """Predict class labels (or raw margins).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        output_margin : bool, default=False
            Return the raw margins, (n_samples,) for binary or
            (n_samples, n_classes_) for multiclass models.
        iteration_range : (int, int), default=None
        base_margin : array-like, default=None

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        if output_margin:
            return self._predict_margins(X, iteration_range, base_margin)
        probabilities = self.predict_proba(X, iteration_range, base_margin)
        if probabilities.shape[1] == MIN_CLASSES:
            indices = (probabilities[:, 1] > BINARY_DECISION_THRESHOLD).astype(np.intp)
        else:
            indices = np.argmax(probabilities, axis=1)
        return self.classes_[indices]


# --------------------------------------------------------------------------- #
# Ranker
# --------------------------------------------------------------------------- #

class GBRanker(_GBModel):
    __doc__ = ("""Gradient-boosted trees for learning to rank.

    Rows come in queries: ``fit`` takes ``group`` (query sizes) or ``qid``
    (per-row query ids, each query's rows contiguous). ``score`` is the mean
    NDCG over the queries.
""" + _COMMON_PARAMETERS_DOC.format(
        objective_doc="Default 'rank:ndcg' (LambdaMART); also 'rank:map', "
                      "'rank:pairwise' (gpuboost.objectives.ranking) or a pointwise objective such "
                      "as 'reg:squarederror'.")
        + _COMMON_ATTRIBUTES_DOC + """
    Notes
    -----
    ``sample_weight`` holds one weight per row. ``eval_metric`` defaults to
    'ndcg'.
""")

    def _ranking_objective(self, params):
        """Fill in the objective; ValueError for unavailable ranking objectives."""
        name = type(self).__name__
        if callable(self.objective):
            raise ValueError(f"{name} does not support a callable objective.")
        objective = params.setdefault("objective", DEFAULT_RANKING_OBJECTIVE)
        if not isinstance(objective, str):
            raise ValueError(f"objective must be a string, got {objective!r}.")
        if objective.startswith(MULTICLASS_PREFIX):
            raise ValueError(f"{name} cannot use the multiclass objective {objective!r}.")
        if objective.startswith(RANKING_PREFIX) and objective not in OBJECTIVES:
            raise ValueError(
                f"Unknown ranking objective {objective!r} (available objectives: "
                f"{', '.join(OBJECTIVES)}).")
        params.setdefault("eval_metric", RANKING_SCORE_METRIC)

    def fit(self, X, y, group=None, qid=None, sample_weight=None, eval_set=None,
            eval_group=None, eval_qid=None, sample_weight_eval_set=None, verbose=False,
            init_model=None, base_margin=None, base_margin_eval_set=None):
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance labels (non-negative numbers).
        group : array-like of shape (n_queries,), default=None
            Query sizes in row order. Give ``group`` or ``qid``.
        qid : array-like of shape (n_samples,), default=None
            Query id of every row; each query's rows must be contiguous.
        sample_weight : array-like of shape (n_samples,), default=None
        eval_set : list of (X, y), default=None
        eval_group, eval_qid : list of array-like, default=None
            The queries of each ``eval_set`` entry (one of the two).
        sample_weight_eval_set : list of array-like, default=None
        verbose : bool or int, default=False
        init_model : Booster, fitted estimator or path, default=None
        base_margin : array-like of shape (n_samples,), default=None
        base_margin_eval_set : list of array-like, default=None

        Returns
        -------
        self
        """
        name = type(self).__name__
        if (group is None) == (qid is None):
            raise ValueError(f"{name}.fit needs the queries: pass exactly one of group (query "
                             f"sizes) and qid (per-row query ids).")
        eval_set = self._check_eval_set(eval_set)
        if eval_set and (eval_group is None) == (eval_qid is None):
            raise ValueError("With eval_set, pass exactly one of eval_group and eval_qid (the "
                             "queries of each evaluation set).")
        params = self._training_params()
        self._ranking_objective(params)
        data = self._validate_features(X, reset=True)
        label = _as_numeric_target(y, name)
        eval_labels = [_as_numeric_target(y_eval, name) for _, y_eval in eval_set]
        return self._fit_booster(data, label, params, sample_weight=sample_weight,
                                 base_margin=base_margin, eval_set=eval_set,
                                 eval_labels=eval_labels,
                                 sample_weight_eval_set=sample_weight_eval_set,
                                 base_margin_eval_set=base_margin_eval_set, verbose=verbose,
                                 init_model=init_model, group=group, qid=qid,
                                 eval_groups=eval_group, eval_qids=eval_qid)

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None):
        """Ranking scores (higher ranks first).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        output_margin : bool, default=False
        iteration_range : (int, int), default=None
        base_margin : array-like of shape (n_samples,), default=None

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        margins = self._predict_margins(X, iteration_range, base_margin)
        if output_margin:
            return margins
        return self.booster_.objective.output(np, margins)

    def score(self, X, y, group=None, qid=None):
        """Mean NDCG over the queries of ``X`` (all positions).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Non-negative relevance labels.
        group : array-like of shape (n_queries,), default=None
        qid : array-like of shape (n_samples,), default=None
            Give ``group`` or ``qid``.

        Returns
        -------
        float
            In [0, 1]; higher is better.
        """
        name = type(self).__name__
        if (group is None) == (qid is None):
            raise ValueError(f"{name}.score needs the queries: pass exactly one of group and "
                             f"qid.")
        predictions = self.predict(X)
        label = _as_numeric_target(y, name)
        query_sizes = check_group(group, qid, len(predictions))
        return float(get_metric(RANKING_SCORE_METRIC)(label, predictions, group=query_sizes))


# --------------------------------------------------------------------------- #
# AdaBoost
# --------------------------------------------------------------------------- #

class AdaBoostClassifier(_ClassifierMixin, _BaseEstimator):
    """Discrete AdaBoost (SAMME) on gpuboost's histogram trees (scikit-learn API).

    The algorithm of scikit-learn's ``AdaBoostClassifier`` (SAMME, its only
    algorithm since scikit-learn 1.6) with Gini classification trees of depth
    ``max_depth`` as weak learners, trained by :func:`gpuboost.train` with
    ``booster='adaboost'`` on either backend (see :mod:`gpuboost.adaboost`).
    Labels may be of any sortable type; NaN features are missing values.

    Parameters
    ----------
    n_estimators : int, default=50
        Largest number of trees; training stops earlier after a perfect tree
        or at a tree no better than chance.
    learning_rate : float, default=1.0
        Multiplies every tree weight.
    max_depth : int, default=1
        Depth of the weak learners (1: stumps).
    min_data_in_leaf : int, default=1
        Minimum number of rows in a leaf of a weak learner.
    max_bin : int, default=255
        Value bins per feature (2 to 255). Features with at most ``max_bin``
        distinct values are split exactly where scikit-learn splits them.
    device : {'auto', 'cpu', 'cuda', 'cuda:N'}, default='auto'
    verbosity : int, default=1

    Attributes
    ----------
    booster_ : Booster
        The trained model (``tree_weights`` holds the tree weights).
    classes_ : ndarray of shape (n_classes_,)
    n_classes_ : int
    n_features_in_ : int
    estimator_weights_ : ndarray of shape (n_trees,)
        The weight of every tree.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Every tree's normalized Gini gains per feature, averaged with the tree
        weights (scikit-learn's definition).

    Examples
    --------
    >>> import numpy as np
    >>> from gpuboost import AdaBoostClassifier
    >>> X = np.random.default_rng(0).random((200, 3))
    >>> model = AdaBoostClassifier(n_estimators=10, device="cpu").fit(X, X[:, 0] > 0.5)
    >>> model.predict(X[:2]).shape
    (2,)
    """

    def __init__(self, n_estimators=50, learning_rate=1.0, max_depth=1, min_data_in_leaf=1,
                 max_bin=255, device="auto", verbosity=1):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_data_in_leaf = min_data_in_leaf
        self.max_bin = max_bin
        self.device = device
        self.verbosity = verbosity

    def _encode_classes(self, y):
        """Set ``classes_`` / ``n_classes_``; return the labels as class indices (float64)."""
        name = type(self).__name__
        y = _as_target_vector(y, name)
        if _has_missing_labels(y):
            raise ValueError("y contains missing or infinite (NaN, inf or None) labels.")
        if y.dtype.kind == "f" and not np.all(y == np.round(y)):
            raise ValueError(f"Unknown label type: continuous. {name} needs discrete class "
                             f"labels.")
        classes, encoded = np.unique(y, return_inverse=True)
        if len(classes) < MIN_CLASSES:
            raise ValueError(f"{name} needs samples of at least {MIN_CLASSES} classes, but the "
                             f"data contains only one class: {classes[0]!r}.")
        self.classes_ = classes
        self.n_classes_ = len(classes)
        return encoded.reshape(-1).astype(Y_DTYPE)

    def fit(self, X, y, sample_weight=None):
        """Train the ensemble.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Initial row weights.

        Returns
        -------
        self
        """
        n_estimators = _check_positive_int(self.n_estimators, "n_estimators")
        names = _column_names(X)
        data = _as_feature_matrix(X)
        label = self._encode_classes(y)
        params = {"booster": "adaboost", "learning_rate": self.learning_rate,
                  "max_depth": self.max_depth, "min_data_in_leaf": self.min_data_in_leaf,
                  "max_bin": self.max_bin, "device": self.device, "verbosity": self.verbosity}
        if self.n_classes_ > MIN_CLASSES:
            params["num_class"] = self.n_classes_
        dtrain = Dataset(data, label=label, weight=sample_weight, feature_names=names,
                         max_bin=validate_params(params)["max_bin"])
        self.booster_ = train(params, dtrain, num_boost_round=n_estimators, verbose_eval=False)
        self.n_features_in_ = data.shape[1]
        self.estimator_weights_ = np.asarray(self.booster_.tree_weights, dtype=Y_DTYPE)
        return self

    def __sklearn_is_fitted__(self):
        return hasattr(self, "booster_")

    def get_booster(self):
        """The trained :class:`~gpuboost.Booster`."""
        if not hasattr(self, "booster_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 f"'fit' with appropriate arguments before using this "
                                 f"estimator.")
        return self.booster_

    def _checked_features(self, X):
        self.get_booster()
        data = _as_feature_matrix(X)
        if data.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {data.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")
        return data

    def decision_function(self, X):
        """scikit-learn's SAMME decision function.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive: ``classes_[1]``),
        else (n_samples, n_classes_)
            The symmetric class coding summed over the trees and divided by the
            sum of the tree weights.
        """
        data = self._checked_features(X)
        scores = self.booster_.predict(data, output_margin=True)
        total_weight = math.fsum(self.booster_.tree_weights)
        if self.n_classes_ == MIN_CLASSES:  # scores = score_1 - score_0
            return 2.0 * scores / total_weight
        # f_k = sum(c [tree says k] - c / (K - 1) [tree says another class]) / sum(c)
        #     = (K * score_k / sum(c) - 1) / (K - 1)
        return (self.n_classes_ * scores / total_weight - 1.0) / (self.n_classes_ - 1)

    def predict_proba(self, X):
        """Class probabilities (scikit-learn's SAMME probabilities).

        Returns
        -------
        ndarray of shape (n_samples, n_classes_)
        """
        data = self._checked_features(X)
        probabilities = self.booster_.predict(data)
        if probabilities.ndim == 1:
            return np.column_stack([1.0 - probabilities, probabilities])
        return probabilities

    def predict(self, X):
        """Class labels: the class of the largest SAMME score.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        decision = self.decision_function(X)
        if decision.ndim == 1:
            return self.classes_[(decision > 0).astype(np.intp)]
        return self.classes_[np.argmax(decision, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a missing value
        tags.input_tags.sparse = True  # densified (absent entries are 0.0, not missing)
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}

    @property
    def feature_importances_(self):
        """scikit-learn's importances, shape (n_features_in_,).

        Every tree's Gini gains per feature, normalized to sum to 1, averaged
        over the trees with the tree weights.
        """
        booster = self.get_booster()
        importance = np.zeros(self.n_features_in_)
        for round_index, tree_weight in enumerate(booster.tree_weights):
            tree = booster.trees[round_index * booster.n_outputs]  # the outputs share the splits
            internal = tree.feature >= 0
            gains = np.bincount(tree.feature[internal], weights=tree.gain[internal],
                                minlength=self.n_features_in_)
            if gains.sum() > 0:
                importance += tree_weight * gains / gains.sum()
        total = importance.sum()
        return importance / total if total > 0 else importance
