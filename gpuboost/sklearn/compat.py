"""scikit-learn compatibility: its base classes when it is installed, small local
stand-ins (``get_params``, ``set_params``, ``score``, ``NotFittedError``) otherwise."""

import inspect

import numpy as np

from ..core.dtypes import Y_DTYPE
from ..core.reproducible_sum import reproducible_mean, reproducible_sum

try:
    from sklearn.base import BaseEstimator as _BaseEstimator
    from sklearn.base import ClassifierMixin as _ClassifierMixin
    from sklearn.base import RegressorMixin as _RegressorMixin
    from sklearn.exceptions import DataConversionWarning, NotFittedError

    SKLEARN_INSTALLED = True
except ImportError:  # scikit-learn is optional
    SKLEARN_INSTALLED = False


__all__ = [
    "SKLEARN_INSTALLED",
    "NotFittedError",
    "DataConversionWarning",
    "BaseEstimator",
    "ClassifierMixin",
    "RegressorMixin",
]


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
    weight = (
        np.ones_like(y_true) if sample_weight is None else np.asarray(sample_weight, dtype=Y_DTYPE)
    )
    errors = y_true - y_pred
    residual = float(reproducible_sum(np, weight * (errors * errors)))
    deviations = y_true - float(reproducible_mean(np, y_true, weight))
    total = float(reproducible_sum(np, weight * (deviations * deviations)))
    if total == 0:
        return 1.0 if residual == 0 else 0.0
    return float(1.0 - residual / total)


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
            return sorted(
                parameter.name
                for parameter in signature.parameters.values()
                if parameter.name != "self"
                and parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
            )

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
                    raise ValueError(
                        f"Invalid parameter {key!r} for estimator "
                        f"{type(self).__name__}. Valid parameters are: {valid}."
                    )
                setattr(self, key, value)
            return self

        def __repr__(self):
            signature = inspect.signature(type(self).__init__)
            defaults = {
                parameter.name: parameter.default for parameter in signature.parameters.values()
            }
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
            weight = None if sample_weight is None else np.asarray(sample_weight, dtype=Y_DTYPE)
            return float(reproducible_mean(np, correct, weight))


BaseEstimator, ClassifierMixin, RegressorMixin = _BaseEstimator, _ClassifierMixin, _RegressorMixin
