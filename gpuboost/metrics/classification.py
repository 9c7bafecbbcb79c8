"""Classification metrics: ``logloss``, ``error``, ``auc`` (binary) and
``mlogloss``, ``merror`` (multiclass).

Binary metrics take probabilities of the positive class, shape (n_samples,);
multiclass metrics take class probabilities, shape (n_samples, n_classes).
See :mod:`gpuboost.metrics.base` for the conventions.
"""

import math

from ..core import strict_math
from ..core.dtypes import Y_DTYPE
from ..core.reproducible_sum import reproducible_cumsum, reproducible_mean, reproducible_sum
from .base import (
    Metric,
    _as_sample_weight,
    _as_single_output_predictions,
    _PointwiseMetric,
    metric_name,
)

__all__ = [
    "LogLoss",
    "BinaryError",
    "ROCAUC",
    "MultiLogLoss",
    "MultiError",
    "LOGLOSS_EPS",
    "DEFAULT_ERROR_THRESHOLD",
]

#: Probabilities are clipped to ``[LOGLOSS_EPS, 1 - LOGLOSS_EPS]`` before the
#: logarithm in ``logloss`` and ``mlogloss``.
LOGLOSS_EPS = 1e-15
#: Probability above which ``error`` predicts the positive class.
DEFAULT_ERROR_THRESHOLD = 0.5


def _as_class_probabilities(xp, pred, n_samples):
    """Return class probabilities of shape (n_samples, n_classes)."""
    pred = xp.asarray(pred, dtype=Y_DTYPE)
    if pred.ndim != 2 or pred.shape[0] != n_samples or pred.shape[1] < 1:
        raise ValueError(
            f"pred must have shape ({n_samples}, n_classes) for a multiclass "
            f"metric, got shape {pred.shape}"
        )
    return pred


# ---------------------------------------------------------------------------
# binary
# ---------------------------------------------------------------------------


class LogLoss(_PointwiseMetric):
    """``logloss``: weighted mean of ``-(y log p + (1 - y) log(1 - p))``.

    ``pred`` holds probabilities ``p`` of the positive class, clipped to
    ``[LOGLOSS_EPS, 1 - LOGLOSS_EPS]``. Labels may be soft (in [0, 1]).
    """

    name = "logloss"

    def _pointwise_loss(self, xp, y, pred):
        proba = xp.clip(pred, LOGLOSS_EPS, 1.0 - LOGLOSS_EPS)
        return -(y * strict_math.log(xp, proba) + (1.0 - y) * strict_math.log(xp, 1.0 - proba))


class BinaryError(_PointwiseMetric):
    """``error`` / ``error@t``: weighted rate of misclassified rows.

    A row is predicted positive when ``pred > threshold``. Its loss is
    ``1 - y`` when predicted positive and ``y`` otherwise (XGBoost's
    definition), i.e. 1 for a mistake and 0 for a hit with labels in {0, 1}.

    Parameters
    ----------
    threshold : float, default=DEFAULT_ERROR_THRESHOLD
        Probability threshold; must be finite.
    """

    def __init__(self, threshold=DEFAULT_ERROR_THRESHOLD):
        threshold = float(threshold)
        if not math.isfinite(threshold):
            raise ValueError(f"error threshold must be finite, got {threshold}")
        self.threshold = threshold
        self.name = metric_name(
            "error", None if threshold == DEFAULT_ERROR_THRESHOLD else threshold
        )

    def _pointwise_loss(self, xp, y, pred):
        return xp.where(pred > self.threshold, 1.0 - y, y)


class ROCAUC(Metric):
    """``auc``: weighted area under the ROC curve (see the module docstring).

    Rows are sorted by decreasing prediction; rows with equal predictions form
    one step of the curve, integrated with the trapezoid rule, so a tied
    (positive, negative) pair counts one half. Returns ``nan`` when the
    positive or the negative class has zero total weight.
    """

    name = "auc"
    higher_is_better = True

    def _evaluate(self, xp, y, pred, weight, group):
        n_samples = y.shape[0]
        pred = _as_single_output_predictions(xp, pred, n_samples)
        weight = _as_sample_weight(xp, weight, n_samples)
        if bool(xp.any((y < 0) | (y > 1))):
            raise ValueError("auc needs labels in [0, 1]")
        if weight is None:
            weight = xp.ones_like(y)

        order = xp.argsort(-pred)
        sorted_pred = pred[order]
        positive_weight = (weight * y)[order]
        negative_weight = (weight * (1.0 - y))[order]
        cumulative_positive = reproducible_cumsum(xp, positive_weight)
        cumulative_negative = reproducible_cumsum(xp, negative_weight)
        total_positive = cumulative_positive[-1]
        total_negative = cumulative_negative[-1]
        if not (float(total_positive) > 0 and float(total_negative) > 0):
            return float("nan")

        # Last row of every run of equal predictions: one point of the curve.
        is_run_end = xp.concatenate([sorted_pred[1:] != sorted_pred[:-1], xp.ones(1, dtype=bool)])
        zero = xp.zeros(1, dtype=Y_DTYPE)
        true_positive = xp.concatenate([zero, cumulative_positive[is_run_end]])
        false_positive = xp.concatenate([zero, cumulative_negative[is_run_end]])
        twice_area = reproducible_sum(
            xp,
            (false_positive[1:] - false_positive[:-1]) * (true_positive[1:] + true_positive[:-1]),
        )
        return twice_area / (2.0 * total_positive * total_negative)


# ---------------------------------------------------------------------------
# multiclass
# ---------------------------------------------------------------------------


class _MulticlassMetric(Metric):
    """Weighted mean of a per-row loss of class probabilities (n_samples, n_classes).

    Labels must be integers in ``[0, n_classes)``.
    """

    def _evaluate(self, xp, y, pred, weight, group):
        n_samples = y.shape[0]
        proba = _as_class_probabilities(xp, pred, n_samples)
        weight = _as_sample_weight(xp, weight, n_samples)
        n_classes = proba.shape[1]
        is_valid = (y >= 0) & (y < n_classes) & (y == xp.floor(y))
        if not bool(xp.all(is_valid)):
            raise ValueError(
                f"multiclass labels must be integers in [0, {n_classes}) to match "
                f"pred with {n_classes} columns"
            )
        labels = y.astype(xp.int64)
        return reproducible_mean(xp, self._pointwise_loss(xp, labels, proba), weight)

    def _pointwise_loss(self, xp, labels, proba):
        raise NotImplementedError


class MultiLogLoss(_MulticlassMetric):
    """``mlogloss``: weighted mean of ``-log(p[y])``.

    ``p[y]``, the probability of the true class, is clipped to
    ``[LOGLOSS_EPS, 1 - LOGLOSS_EPS]``.
    """

    name = "mlogloss"

    def _pointwise_loss(self, xp, labels, proba):
        true_class_proba = proba[xp.arange(labels.shape[0]), labels]
        return -strict_math.log(xp, xp.clip(true_class_proba, LOGLOSS_EPS, 1.0 - LOGLOSS_EPS))


class MultiError(_MulticlassMetric):
    """``merror``: weighted rate of rows whose most probable class is not ``y``.

    Ties between class probabilities go to the lowest class index.
    """

    name = "merror"

    def _pointwise_loss(self, xp, labels, proba):
        return (xp.argmax(proba, axis=1) != labels).astype(Y_DTYPE)
