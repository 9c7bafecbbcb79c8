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

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ..core.array import get_array_module, to_numpy
from ..core.dtypes import Y_DTYPE
from ..data.convert import as_array, check_group, check_weight
from ..errors import value_repr
from ..metrics import get_metric
from ..model.booster import Booster
from ..objectives import OBJECTIVES, get_objective
from .base import (
    BINARY_DECISION_THRESHOLD,
    BINARY_PREFIX,
    COMMON_ATTRIBUTES_DOC,
    COMMON_PARAMETERS_DOC,
    DEFAULT_BINARY_OBJECTIVE,
    DEFAULT_MULTICLASS_OBJECTIVE,
    DEFAULT_RANKING_OBJECTIVE,
    DEFAULT_REGRESSION_OBJECTIVE,
    MAX_LABELS_SHOWN,
    MIN_CLASSES,
    MULTICLASS_PREFIX,
    RANKING_PREFIX,
    RANKING_SCORE_METRIC,
    BaseGBModel,
    restore_classes,
    sklearn_objective,
)
from .compat import SKLEARN_INSTALLED, NotFittedError
from .compat import ClassifierMixin as _ClassifierMixin
from .compat import RegressorMixin as _RegressorMixin
from .validation import (
    as_numeric_target,
    as_target_vector,
    class_weight_multipliers,
    has_missing_labels,
)

__all__ = ["GBRegressor", "GBClassifier", "GBRanker", "NotFittedError", "SKLEARN_INSTALLED"]


# --------------------------------------------------------------------------- #
# Regressor
# --------------------------------------------------------------------------- #


class GBRegressor(_RegressorMixin, BaseGBModel):
    __doc__ = (
        """Gradient-boosted trees for regression (scikit-learn API).
"""
        + COMMON_PARAMETERS_DOC.format(
            objective_doc="Default 'reg:squarederror'. A callable ``objective(y_true, "
            "raw_margin) -> (grad, hess)`` is a custom objective; predictions "
            "are then raw margins."
        )
        + COMMON_ATTRIBUTES_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from gpuboost import GBRegressor
    >>> X = np.random.default_rng(0).random((200, 3))
    >>> model = GBRegressor(n_estimators=10, device="cpu").fit(X, X[:, 0])
    >>> model.predict(X[:2]).shape
    (2,)
"""
    )

    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: Optional[ArrayLike] = None,
        eval_set: Optional[Sequence[Tuple[ArrayLike, ArrayLike]]] = None,
        sample_weight_eval_set: Optional[Sequence[ArrayLike]] = None,
        verbose: Union[bool, int] = False,
        init_model: Union[Booster, str, None] = None,
        base_margin: Optional[ArrayLike] = None,
        base_margin_eval_set: Optional[Sequence[ArrayLike]] = None,
        feature_weights: Optional[ArrayLike] = None,
    ) -> BaseGBModel:
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks missing values. A pandas DataFrame's string column names
            are kept (``feature_names_in_``).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Several targets: one model of ``n_targets`` outputs (a tree per target a
            round, or with ``multi_strategy='multi_output_tree'`` one tree of vector
            leaves; docs/DESIGN.md "Vector leaves"); ``predict`` then returns shape
            (n_samples, n_targets).
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
        feature_weights : array-like of shape (n_features,), default=None
            Column-sampling weights (``Dataset.feature_weights``, XGBoost's): with a
            ``colsample_*`` below 1, features are drawn in proportion to them.

        Returns
        -------
        self
        """
        data = self._validate_features(X, reset=True)
        label = self._target(y)
        eval_set = self._check_eval_set(eval_set)
        eval_labels = [self._target(y_eval, label) for _, y_eval in eval_set]
        params = self._training_params()
        obj = None
        if callable(self.objective):
            obj = sklearn_objective(self.objective)
            params.pop("objective")
        else:
            self._set_objective(params, label)
        return self._fit_booster(
            data,
            label,
            params,
            sample_weight=sample_weight,
            base_margin=base_margin,
            eval_set=eval_set,
            eval_labels=eval_labels,
            sample_weight_eval_set=sample_weight_eval_set,
            base_margin_eval_set=base_margin_eval_set,
            verbose=verbose,
            init_model=init_model,
            feature_weights=feature_weights,
            obj=obj,
        )

    def _target(self, y, train_label=None):
        """``y`` as the training's labels (``train_label``: the training set's, when ``y``
        is an evaluation set's): shape (n_samples,), or (n_samples, k) for k targets."""
        return as_numeric_target(y, type(self).__name__, several=True)

    def _set_objective(self, params, label):
        """The default objective into ``params``; ValueError for one this estimator does
        not train."""
        params.setdefault("objective", DEFAULT_REGRESSION_OBJECTIVE)
        if str(params["objective"]).startswith(MULTICLASS_PREFIX):
            raise ValueError(
                f"{type(self).__name__} cannot use the multiclass objective "
                f"{params['objective']!r}; use GBClassifier."
            )

    def predict(
        self,
        X: ArrayLike,
        output_margin: bool = False,
        iteration_range: Optional[Tuple[int, int]] = None,
        base_margin: Optional[ArrayLike] = None,
    ) -> np.ndarray:
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
        return self.booster_.objective.output(get_array_module(margins), margins)


# --------------------------------------------------------------------------- #
# Classifier
# --------------------------------------------------------------------------- #


class GBClassifier(_ClassifierMixin, BaseGBModel):
    __doc__ = (
        """Gradient-boosted trees for binary and multiclass classification.

    Labels may be of any sortable type (ints, floats, strings, bools); they are
    encoded to ``0 .. n_classes_ - 1`` in the order of ``classes_``.
"""
        + COMMON_PARAMETERS_DOC.format(
            objective_doc="Default 'binary:logistic' for two classes, 'multi:softprob' "
            "for more. A callable ``objective(y_encoded, raw_margin) -> "
            "(grad, hess)`` is a custom objective; probabilities are then the "
            "sigmoid (binary) or softmax of the margins."
        )
        + COMMON_ATTRIBUTES_DOC
        + """    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_classes_ : int
"""
    )

    _managed_params = frozenset({"num_class"})
    _supports_class_weight = True

    def _restore_fitted_attributes(self, booster, state):
        super()._restore_fitted_attributes(booster, state)
        restore_classes(self, booster, state)
        multilabel = booster.objective.n_targets > 1
        self._label_columns = booster.n_outputs if multilabel else None

    @property
    def _multilabel(self):
        """Whether the model is multi-label: a 0/1 column per label (``binary:logistic``
        of several targets)."""
        return getattr(self, "_label_columns", None) is not None

    def _indicator(self, y, what, n_labels=None):
        """A multi-label target (n_samples, k) of 0/1 values as float64; ValueError for
        other values, or ``n_labels`` columns expected and others given."""
        y = np.asarray(y)
        if y.dtype.kind == "b":
            y = y.astype(Y_DTYPE)
        if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
            raise ValueError(
                f"{what}: a 2-D y is a multi-label indicator matrix, of 0/1 (or bool) values "
                f"only; for several classes pass one label per row."
            )
        if n_labels is not None and y.shape[1] != n_labels:
            raise ValueError(f"{what} has {y.shape[1]} label columns, the model {n_labels}.")
        return np.ascontiguousarray(y, dtype=Y_DTYPE)

    def _encode_labels(self, y, what):
        """Encode labels of an eval set with the fitted ``classes_``."""
        if self._multilabel:
            return self._indicator(y, what, self.n_classes_)
        y = as_target_vector(y, type(self).__name__)
        if has_missing_labels(y):
            raise ValueError(f"{what} contains missing or infinite (NaN, inf or None) labels.")
        try:
            positions = np.searchsorted(self.classes_, y)
        except TypeError:  # labels of a type that does not compare with classes_
            positions = np.zeros(len(y), dtype=np.intp)
        positions = np.minimum(positions, len(self.classes_) - 1)
        unseen = self.classes_[positions] != y
        if np.any(unseen):
            examples = list(dict.fromkeys(np.asarray(y)[unseen].tolist()))[:MAX_LABELS_SHOWN]
            raise ValueError(
                f"{what} has labels not seen in training, e.g. {examples}; the "
                f"classes are {self.classes_.tolist()}."
            )
        return positions.astype(Y_DTYPE)

    def _fit_classes(self, y):
        """Set ``classes_`` / ``n_classes_`` and return the encoded labels (float64); for
        a multi-label indicator matrix (n_samples, k) the labels are its columns,
        ``classes_ = [0 .. k - 1]``."""
        name = type(self).__name__
        self._label_columns = None
        array = None if y is None else as_array(y)
        if array is not None and array.ndim == 2 and array.shape[1] > 1:
            indicator = self._indicator(array, "y")
            self._label_columns = indicator.shape[1]
            self.classes_ = np.arange(indicator.shape[1])
            self.n_classes_ = indicator.shape[1]
            return indicator
        y = as_target_vector(y, name)
        if has_missing_labels(y):
            raise ValueError(
                "y contains missing or infinite (NaN, inf or None) labels; every "
                "sample needs a class label."
            )
        if y.dtype.kind == "f" and not np.all(y == np.round(y)):
            raise ValueError(
                f"Unknown label type: continuous. {name} needs discrete class "
                f"labels (ints, strings, or integral floats); for a continuous "
                f"target use GBRegressor."
            )
        try:
            classes, encoded = np.unique(y, return_inverse=True)
        except TypeError as error:
            raise TypeError(
                f"The labels of y cannot be sorted ({error}); use labels of one type."
            ) from None
        if len(classes) < MIN_CLASSES:
            raise ValueError(
                f"{name} needs samples of at least {MIN_CLASSES} classes in the "
                f"data, but the data contains only one class: {value_repr(classes[0])}."
            )
        self.classes_ = classes
        self.n_classes_ = len(classes)
        return encoded.reshape(-1).astype(Y_DTYPE)

    def _classification_objective(self, params):
        """Fill in ``objective`` and ``num_class`` for ``n_classes_`` classes."""
        name = type(self).__name__
        if self._multilabel:  # a 0/1 target per label
            objective = params.setdefault("objective", DEFAULT_BINARY_OBJECTIVE)
            if callable(objective) or objective != DEFAULT_BINARY_OBJECTIVE:
                raise ValueError(
                    f"{name} trains a multi-label y (an indicator matrix) with "
                    f"{DEFAULT_BINARY_OBJECTIVE!r}, got objective={objective!r}."
                )
            return None
        multiclass = self.n_classes_ > MIN_CLASSES
        if callable(self.objective):
            params.pop("objective")
            if multiclass:
                params["num_class"] = self.n_classes_
            return sklearn_objective(self.objective)
        default = DEFAULT_MULTICLASS_OBJECTIVE if multiclass else DEFAULT_BINARY_OBJECTIVE
        objective = params.setdefault("objective", default)
        if not isinstance(objective, str):
            raise ValueError(f"objective must be a string or a callable, got {objective!r}.")
        if objective.startswith(MULTICLASS_PREFIX):
            params["num_class"] = self.n_classes_
        elif not objective.startswith(BINARY_PREFIX):
            raise ValueError(
                f"{name} needs a classification objective ('binary:*' or "
                f"'multi:*'), got {objective!r}."
            )
        elif multiclass:
            raise ValueError(
                f"The binary objective {objective!r} cannot fit "
                f"{self.n_classes_} classes; use {DEFAULT_MULTICLASS_OBJECTIVE!r} "
                f"or objective=None."
            )
        return None

    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: Optional[ArrayLike] = None,
        eval_set: Optional[Sequence[Tuple[ArrayLike, ArrayLike]]] = None,
        sample_weight_eval_set: Optional[Sequence[ArrayLike]] = None,
        verbose: Union[bool, int] = False,
        init_model: Union[Booster, str, None] = None,
        base_margin: Optional[ArrayLike] = None,
        base_margin_eval_set: Optional[Sequence[ArrayLike]] = None,
        feature_weights: Optional[ArrayLike] = None,
    ) -> BaseGBModel:
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks missing values.
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            Class labels; at least two distinct classes. Or a multi-label indicator
            matrix of 0/1 (or bool) columns: one ``binary:logistic`` target per label
            (``multi_strategy='multi_output_tree'``: one tree of vector leaves a round);
            ``predict`` then returns the 0/1 matrix, ``predict_proba`` each label's
            probability, shape (n_samples, n_labels).
        sample_weight : array-like of shape (n_samples,), default=None
        eval_set : list of (X, y), default=None
            ``y`` uses the same labels as the training ``y``.
        sample_weight_eval_set : list of array-like, default=None
        verbose : bool or int, default=False
        init_model : Booster, fitted estimator or path, default=None
        base_margin : array-like of shape (n_samples,) or (n_samples, n_classes), default=None
        base_margin_eval_set : list of array-like, default=None
        feature_weights : array-like of shape (n_features,), default=None
            Column-sampling weights (``Dataset.feature_weights``, XGBoost's): with a
            ``colsample_*`` below 1, features are drawn in proportion to them.

        Returns
        -------
        self
        """
        data = self._validate_features(X, reset=True)
        label = self._fit_classes(y)
        if self._multilabel and self.class_weight is not None:
            raise ValueError("class_weight weighs classes, not the labels of a multi-label y.")
        multipliers = (
            None
            if self._multilabel
            else class_weight_multipliers(self.class_weight, self.classes_, label)
        )
        if multipliers is not None:  # class_weight: sample-weight multipliers
            sample_weight = (
                multipliers
                if sample_weight is None
                else check_weight(sample_weight, len(label)) * multipliers
            )
        eval_set = self._check_eval_set(eval_set)
        eval_labels = [
            self._encode_labels(y_eval, f"eval_set[{index}]")
            for index, (_, y_eval) in enumerate(eval_set)
        ]
        params = self._training_params()
        obj = self._classification_objective(params)
        return self._fit_booster(
            data,
            label,
            params,
            sample_weight=sample_weight,
            base_margin=base_margin,
            eval_set=eval_set,
            eval_labels=eval_labels,
            sample_weight_eval_set=sample_weight_eval_set,
            base_margin_eval_set=base_margin_eval_set,
            verbose=verbose,
            init_model=init_model,
            feature_weights=feature_weights,
            obj=obj,
        )

    def predict_proba(
        self,
        X: ArrayLike,
        iteration_range: Optional[Tuple[int, int]] = None,
        base_margin: Optional[ArrayLike] = None,
    ) -> np.ndarray:
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        iteration_range : (int, int), default=None
        base_margin : array-like, default=None

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        margins = self._predict_margins(X, iteration_range, base_margin)
        if self._uses_custom_objective():
            if margins.ndim == 1:
                objective = get_objective(DEFAULT_BINARY_OBJECTIVE)
            else:
                objective = get_objective(
                    DEFAULT_MULTICLASS_OBJECTIVE, {"num_class": margins.shape[1]}
                )
        else:
            objective = self.booster_.objective
        xp = get_array_module(margins)  # device input: device probabilities
        probabilities = objective.mean(xp, margins).astype(Y_DTYPE, copy=False)
        if probabilities.ndim == 1:
            return xp.stack([1.0 - probabilities, probabilities], axis=1)
        return probabilities

    def predict(
        self,
        X: ArrayLike,
        output_margin: bool = False,
        iteration_range: Optional[Tuple[int, int]] = None,
        base_margin: Optional[ArrayLike] = None,
    ) -> np.ndarray:
        """Predict class labels (or raw margins).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        output_margin : bool, default=False
            Return the raw margins, (n_samples,) for binary or
            (n_samples, n_classes) for multiclass models.
        iteration_range : (int, int), default=None
        base_margin : array-like, default=None

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        if output_margin:
            return self._predict_margins(X, iteration_range, base_margin)
        probabilities = to_numpy(self.predict_proba(X, iteration_range, base_margin))
        if self._multilabel:  # each label on its own
            return (probabilities > BINARY_DECISION_THRESHOLD).astype(np.intp)
        if probabilities.shape[1] == MIN_CLASSES:
            indices = (probabilities[:, 1] > BINARY_DECISION_THRESHOLD).astype(np.intp)
        else:
            indices = np.argmax(probabilities, axis=1)
        return self.classes_[indices]


# --------------------------------------------------------------------------- #
# Ranker
# --------------------------------------------------------------------------- #


class GBRanker(BaseGBModel):
    __doc__ = (
        """Gradient-boosted trees for learning to rank.

    Rows come in queries: ``fit`` takes ``group`` (query sizes) or ``qid``
    (per-row query ids, each query's rows contiguous). ``score`` is the mean
    NDCG over the queries.
"""
        + COMMON_PARAMETERS_DOC.format(
            objective_doc="Default 'rank:ndcg' (LambdaMART); also 'rank:map', "
            "'rank:pairwise' (gpuboost.objectives.ranking) or a pointwise objective such "
            "as 'reg:squarederror'."
        )
        + COMMON_ATTRIBUTES_DOC
        + """
    Notes
    -----
    ``sample_weight`` holds one weight per row. ``eval_metric`` defaults to
    'ndcg'.
"""
    )

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
                f"{', '.join(OBJECTIVES)})."
            )
        params.setdefault("eval_metric", RANKING_SCORE_METRIC)

    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        group: Optional[ArrayLike] = None,
        qid: Optional[ArrayLike] = None,
        sample_weight: Optional[ArrayLike] = None,
        eval_set: Optional[Sequence[Tuple[ArrayLike, ArrayLike]]] = None,
        eval_group: Optional[Sequence[ArrayLike]] = None,
        eval_qid: Optional[Sequence[ArrayLike]] = None,
        sample_weight_eval_set: Optional[Sequence[ArrayLike]] = None,
        verbose: Union[bool, int] = False,
        init_model: Union[Booster, str, None] = None,
        base_margin: Optional[ArrayLike] = None,
        base_margin_eval_set: Optional[Sequence[ArrayLike]] = None,
        feature_weights: Optional[ArrayLike] = None,
    ) -> BaseGBModel:
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
        feature_weights : array-like of shape (n_features,), default=None
            Column-sampling weights (``Dataset.feature_weights``, XGBoost's): with a
            ``colsample_*`` below 1, features are drawn in proportion to them.

        Returns
        -------
        self
        """
        name = type(self).__name__
        if (group is None) == (qid is None):
            raise ValueError(
                f"{name}.fit needs the queries: pass exactly one of group (query "
                f"sizes) and qid (per-row query ids)."
            )
        eval_set = self._check_eval_set(eval_set)
        if eval_set and (eval_group is None) == (eval_qid is None):
            raise ValueError(
                "With eval_set, pass exactly one of eval_group and eval_qid (the "
                "queries of each evaluation set)."
            )
        params = self._training_params()
        self._ranking_objective(params)
        data = self._validate_features(X, reset=True)
        label = as_numeric_target(y, name)
        eval_labels = [as_numeric_target(y_eval, name) for _, y_eval in eval_set]
        return self._fit_booster(
            data,
            label,
            params,
            sample_weight=sample_weight,
            base_margin=base_margin,
            eval_set=eval_set,
            eval_labels=eval_labels,
            sample_weight_eval_set=sample_weight_eval_set,
            base_margin_eval_set=base_margin_eval_set,
            verbose=verbose,
            init_model=init_model,
            feature_weights=feature_weights,
            group=group,
            qid=qid,
            eval_groups=eval_group,
            eval_qids=eval_qid,
        )

    def predict(
        self,
        X: ArrayLike,
        output_margin: bool = False,
        iteration_range: Optional[Tuple[int, int]] = None,
        base_margin: Optional[ArrayLike] = None,
    ) -> np.ndarray:
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
        return self.booster_.objective.output(get_array_module(margins), margins)

    def score(
        self,
        X: ArrayLike,
        y: ArrayLike,
        group: Optional[ArrayLike] = None,
        qid: Optional[ArrayLike] = None,
    ) -> float:
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
            raise ValueError(f"{name}.score needs the queries: pass exactly one of group and qid.")
        predictions = self.predict(X)
        label = as_numeric_target(y, name)
        query_sizes = check_group(group, qid, len(predictions))
        return float(get_metric(RANKING_SCORE_METRIC)(label, predictions, group=query_sizes))
