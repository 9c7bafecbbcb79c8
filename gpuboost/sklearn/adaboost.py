"""``AdaBoostClassifier``: SAMME AdaBoost in the scikit-learn API (gpuboost.boosting.adaboost)."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from ..boosting.train import train
from ..core.dtypes import Y_DTYPE
from ..core.reproducible_sum import reproducible_sum
from ..data.dataset import Dataset
from ..errors import value_repr
from ..model.booster import Booster
from ..params import validate_params
from .base import MIN_CLASSES, ModelFileMixin, restore_classes
from .compat import BaseEstimator as _BaseEstimator
from .compat import ClassifierMixin as _ClassifierMixin
from .compat import NotFittedError
from .validation import (
    as_feature_matrix,
    as_target_vector,
    check_positive_int,
    column_names,
    has_missing_labels,
)

__all__ = ["AdaBoostClassifier"]


# --------------------------------------------------------------------------- #
# AdaBoost
# --------------------------------------------------------------------------- #


class AdaBoostClassifier(ModelFileMixin, _ClassifierMixin, _BaseEstimator):
    """Discrete AdaBoost (SAMME) on gpuboost's Gini trees (scikit-learn API).

    The algorithm of scikit-learn's ``AdaBoostClassifier`` (SAMME, its only
    algorithm since scikit-learn 1.6) with Gini classification trees of depth
    ``max_depth`` as weak learners, trained by :func:`gpuboost.train` with
    ``booster='adaboost'`` on either backend (see :mod:`gpuboost.boosting.adaboost`).
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
    tree_method : {'exact', 'hist'}, default='exact'
        ``'exact'``: every threshold between two distinct training values of a
        feature is a candidate, as in scikit-learn's trees (the same stumps);
        ``'hist'``: the ``max_bin`` bins of each feature (for large tables: its
        histograms do not grow with the number of distinct values).
    max_bin : int, default=255
        Value bins per feature (2 to 255) of ``tree_method='hist'``. Features with at
        most ``max_bin`` distinct values are split exactly where scikit-learn splits
        them.
    device : {'auto', 'cpu', 'cuda', 'cuda:N'}, default='auto'
    verbosity : int, default=1

    Attributes
    ----------
    booster_ : Booster
        The trained model (``tree_weights`` holds the tree weights).
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    n_features_in_ : int
    estimator_weights_ : ndarray of shape (n_trees,)
        The weight of every tree.
    feature_importances_ : ndarray of shape (n_features,)
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

    def __init__(
        self,
        n_estimators=50,
        learning_rate=1.0,
        max_depth=1,
        min_data_in_leaf=1,
        tree_method="exact",
        max_bin=255,
        device="auto",
        verbosity=1,
    ):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_data_in_leaf = min_data_in_leaf
        self.tree_method = tree_method
        self.max_bin = max_bin
        self.device = device
        self.verbosity = verbosity

    def _encode_classes(self, y):
        """Set ``classes_`` / ``n_classes_``; return the labels as class indices (float64)."""
        name = type(self).__name__
        y = as_target_vector(y, name)
        if has_missing_labels(y):
            raise ValueError("y contains missing or infinite (NaN, inf or None) labels.")
        if y.dtype.kind == "f" and not np.all(y == np.round(y)):
            raise ValueError(f"Unknown label type: continuous. {name} needs discrete class labels.")
        classes, encoded = np.unique(y, return_inverse=True)
        if len(classes) < MIN_CLASSES:
            raise ValueError(
                f"{name} needs samples of at least {MIN_CLASSES} classes, but the "
                f"data contains only one class: {value_repr(classes[0])}."
            )
        self.classes_ = classes
        self.n_classes_ = len(classes)
        return encoded.reshape(-1).astype(Y_DTYPE)

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike] = None
    ) -> AdaBoostClassifier:
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
        n_estimators = check_positive_int(self.n_estimators, "n_estimators")
        names = column_names(X)
        data = as_feature_matrix(X)
        label = self._encode_classes(y)
        params = {
            "booster": "adaboost",
            "learning_rate": self.learning_rate,
            "max_depth": self.max_depth,
            "min_data_in_leaf": self.min_data_in_leaf,
            "tree_method": self.tree_method,
            "max_bin": self.max_bin,
            "device": self.device,
            "verbosity": self.verbosity,
        }
        if self.n_classes_ > MIN_CLASSES:
            params["num_class"] = self.n_classes_
        dtrain = Dataset(
            data,
            label=label,
            weight=sample_weight,
            feature_names=names,
            max_bin=validate_params(params)["max_bin"],
        )
        self.booster_ = train(params, dtrain, num_boost_round=n_estimators, verbose_eval=False)
        self.n_features_in_ = data.shape[1]
        self.estimator_weights_ = np.asarray(self.booster_.tree_weights, dtype=Y_DTYPE)
        return self

    def __sklearn_is_fitted__(self):
        return hasattr(self, "booster_")

    def _restore_fitted_attributes(self, booster, state):
        if booster.tree_weights is None:
            raise ValueError(
                "The model file holds gradient-boosted trees, not an AdaBoost model "
                "(booster='adaboost'); load it with GBClassifier."
            )
        restore_classes(self, booster, state)
        self.estimator_weights_ = np.asarray(booster.tree_weights, dtype=Y_DTYPE)

    def get_booster(self) -> Booster:
        """The trained :class:`~gpuboost.Booster`."""
        if not hasattr(self, "booster_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call "
                f"'fit' with appropriate arguments before using this "
                f"estimator."
            )
        return self.booster_

    def _checked_features(self, X):
        self.get_booster()
        data = as_feature_matrix(X)
        if data.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {data.shape[1]} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input."
            )
        return data

    def decision_function(self, X):
        """scikit-learn's SAMME decision function.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive: ``classes_[1]``),
        else (n_samples, n_classes)
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

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities (scikit-learn's SAMME probabilities).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        data = self._checked_features(X)
        probabilities = self.booster_.predict(data)
        if probabilities.ndim == 1:
            return np.column_stack([1.0 - probabilities, probabilities])
        return probabilities

    def predict(self, X: ArrayLike) -> np.ndarray:
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
        tags.input_tags.sparse = True  # absent entries are 0.0, not missing
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}

    @property
    def feature_importances_(self):
        """scikit-learn's importances, shape (n_features,).

        Every tree's Gini gains per feature, normalized to sum to 1, averaged
        over the trees with the tree weights.
        """
        booster = self.get_booster()
        importance = np.zeros(self.n_features_in_)
        for round_index, tree_weight in enumerate(booster.tree_weights):
            tree = booster.trees[round_index * booster.n_outputs]  # the outputs share the splits
            internal = tree.feature >= 0
            gains = np.bincount(
                tree.feature[internal], weights=tree.gain[internal], minlength=self.n_features_in_
            )
            gain_total = float(reproducible_sum(np, gains))
            if gain_total > 0:
                importance += tree_weight * gains / gain_total
        total = float(reproducible_sum(np, importance))
        return importance / total if total > 0 else importance
