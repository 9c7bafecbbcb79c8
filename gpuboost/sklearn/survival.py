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

from typing import Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ..core.dtypes import Y_DTYPE
from ..metrics import ConcordanceIndex
from ..model.booster import Booster
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
    ) -> GBSurvival:
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, 2)
            Cox labels (times, negative for censored rows) or AFT intervals.
        sample_weight : array-like of shape (n_samples,), default=None
        eval_set : list of (X, y), default=None
            Evaluated after every round (``evals_result_``); the last one drives early
            stopping. Each ``y`` of the training ``y``'s kind.
        sample_weight_eval_set, verbose, init_model : see :meth:`GBRegressor.fit`
        base_margin, base_margin_eval_set, feature_weights : see :meth:`GBRegressor.fit`

        Returns
        -------
        self
        """
        name = type(self).__name__
        data = self._validate_features(X, reset=True)
        label = _survival_target(y, name)
        eval_set = self._check_eval_set(eval_set)
        eval_labels = [_survival_target(y_eval, name) for _, y_eval in eval_set]
        if any(e.ndim != label.ndim for e in eval_labels):
            raise ValueError(f"{name}: every eval_set y must be of the training y's kind.")
        params = self._training_params()
        params.setdefault("objective", SURVIVAL_OBJECTIVES[label.ndim])
        if params["objective"] not in SURVIVAL_OBJECTIVES.values():
            raise ValueError(
                f"{name} trains {sorted(SURVIVAL_OBJECTIVES.values())}, got objective "
                f"{params['objective']!r}; use GBRegressor for other objectives."
            )
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
