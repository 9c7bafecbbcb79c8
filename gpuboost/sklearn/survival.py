"""The survival estimator (scikit-learn API): :class:`GBSurvival`, for ``survival:cox``
and ``survival:aft`` (issue 31).

scikit-learn has no survival estimator of its own and XGBoost's scikit-learn API none
either; the conventions here are gpuboost's, on the same shared :mod:`.base` as
:class:`~gpuboost.sklearn.GBRegressor`:

* ``y`` of shape (n_samples,): Cox labels, survival times with censored rows negative
  (XGBoost's convention); the objective defaults to ``survival:cox``.
* ``y`` of shape (n_samples, 2): intervals ``[lower, upper]`` of survival time
  (``upper = inf`` right-censored, ``lower = 0`` left-censored); the objective
  defaults to ``survival:aft``.
* ``predict`` (:meth:`GBRegressor.predict`) gives what XGBoost's model gives: hazard
  ratios (Cox) or survival times (AFT); ``output_margin=True`` their logarithms.
* ``score`` is Harrell's concordance index (``c-index``), higher is better.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.dtypes import Y_DTYPE
from ..metrics import ConcordanceIndex
from .base import COMMON_ATTRIBUTES_DOC, COMMON_PARAMETERS_DOC
from .estimators import GBRegressor

__all__ = ["GBSurvival", "SURVIVAL_OBJECTIVES"]

#: The objectives GBSurvival trains: by the shape of ``y`` (1-D: Cox, 2-D: AFT).
SURVIVAL_OBJECTIVES = {1: "survival:cox", 2: "survival:aft"}


def _survival_target(y, estimator_name):
    """``y`` as float64 of shape (n,) (Cox) or (n, 2) (AFT intervals)."""
    target = np.asarray(y)
    if target.dtype.kind not in "biuf":
        raise ValueError(
            f"{estimator_name} needs numeric survival times, got dtype {target.dtype}."
        )
    if target.ndim == 2 and target.shape[1] == 1:
        target = target[:, 0]
    if not (target.ndim == 1 or (target.ndim == 2 and target.shape[1] == 2)):
        raise ValueError(
            f"{estimator_name} takes y of shape (n_samples,) (Cox: times, negative for "
            f"censored rows) or (n_samples, 2) (AFT: [lower, upper] intervals), got "
            f"shape {target.shape}."
        )
    return target.astype(Y_DTYPE)


def concordance_labels(y, prediction):
    """Cox-style labels and risk scores for Harrell's C-index of a survival prediction.

    Parameters
    ----------
    y : ndarray of shape (n,) or (n, 2)
        Cox labels, or AFT intervals: a row with ``lower == upper`` is an event at
        that time, one with ``upper = inf`` censored at ``lower``; left- and
        interval-censored rows (no single time) are left out.
    prediction : ndarray of shape (n,)
        Hazard ratios (Cox) or survival times (AFT: a longer time is a lower risk).

    Returns
    -------
    labels, risk : ndarrays
        Cox-convention labels and risk scores of the rows kept.
    """
    if y.ndim == 1:
        return y, prediction
    lower, upper = y[:, 0], y[:, 1]
    event = lower == upper
    kept = (event | np.isinf(upper)) & (lower > 0.0)
    labels = np.where(event, lower, -lower)[kept]
    return labels, -prediction[kept]


class GBSurvival(GBRegressor):
    __doc__ = (
        """Gradient-boosted trees for survival analysis (scikit-learn API):
    ``survival:cox`` or ``survival:aft`` (module docstring for the conventions).
"""
        + COMMON_PARAMETERS_DOC.format(
            objective_doc="Default: 'survival:cox' for y of shape (n_samples,), "
            "'survival:aft' for y of shape (n_samples, 2)."
        )
        + COMMON_ATTRIBUTES_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from gpuboost import GBSurvival
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((300, 3))
    >>> time = rng.exponential(np.exp(X[:, 0]))
    >>> bounds = np.column_stack([time, np.where(X[:, 1] < 0.3, np.inf, time)])
    >>> model = GBSurvival(n_estimators=10, device="cpu").fit(X, bounds)
    >>> model.predict(X[:2]).shape
    (2,)
"""
    )

    #: A label of shape (n_samples, 2) holds intervals (survival:aft).
    _label_bounds = None

    def fit(self, X: ArrayLike, y: ArrayLike, **kwargs) -> GBSurvival:
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, 2)
            Cox labels (times, negative for censored rows) or AFT intervals ``[lower,
            upper]``; every ``eval_set`` ``y`` of the same kind.
        **kwargs
            ``sample_weight``, ``eval_set``, ``sample_weight_eval_set``, ``verbose``,
            ``init_model``, ``base_margin``, ``base_margin_eval_set``,
            ``feature_weights``: as :meth:`GBRegressor.fit`.

        Returns
        -------
        self
        """
        return super().fit(X, y, **kwargs)

    def _target(self, y, train_label=None):
        name = type(self).__name__
        target = _survival_target(y, name)
        if train_label is not None and target.ndim != train_label.ndim:
            raise ValueError(f"{name}: every eval_set y must be of the training y's kind.")
        return target

    def _set_objective(self, params, label):
        params.setdefault("objective", SURVIVAL_OBJECTIVES[label.ndim])
        if params["objective"] not in SURVIVAL_OBJECTIVES.values():
            raise ValueError(
                f"{type(self).__name__} trains {sorted(SURVIVAL_OBJECTIVES.values())}, got "
                f"objective {params['objective']!r}; use GBRegressor for other objectives."
            )

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight=None) -> float:
        """Harrell's concordance index of the predictions (``c-index``; higher is
        better). For AFT intervals, the observed and right-censored rows count
        (:func:`concordance_labels`); ``sample_weight`` is not used (the index has no
        weights).

        Returns
        -------
        float
        """
        labels, risk = concordance_labels(_survival_target(y, type(self).__name__), self.predict(X))
        return ConcordanceIndex()(labels, risk)
