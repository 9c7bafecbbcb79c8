"""Classification objectives: ``binary:logistic``, ``binary:exponential``, ``multi:*``.

Predictions are probabilities (``multi:softmax`` predicts class indices from
``output`` and probabilities from ``mean``). The interface and the conventions
shared by every objective are in :mod:`gpuboost.objectives.base`.
"""

import numbers

import numpy as np

from ..core import strict_math
from ..core.dtypes import Y_DTYPE
from ..core.reproducible_sum import reproducible_mean, reproducible_sum
from .base import Objective, _host_label_and_weight, _sigmoid, _softmax

__all__ = [
    "binary_class_weights",
    "class_multipliers",
    "row_class_weights",
    "LogisticLoss",
    "ExponentialLoss",
    "SoftmaxLoss",
    "SoftmaxClassLoss",
    "HESSIAN_FLOOR",
    "MULTICLASS_HESSIAN_FACTOR",
    "PROBABILITY_CLIP",
    "MIN_NUM_CLASS",
]

#: Lower bound on the hessian of ``binary:logistic`` and ``multi:*`` (as in
#: XGBoost), so that saturated rows still have a positive hessian.
HESSIAN_FLOOR = 1e-16
#: Multiclass hessian ``MULTICLASS_HESSIAN_FACTOR * p * (1 - p)``: 1.0 takes the
#: exact diagonal of the softmax cross-entropy's hessian (scikit-learn HGB's
#: choice). XGBoost uses 2.0, an upper bound that halves the Newton step; on the
#: reference multiclass data (100 rounds, eta 0.1) that left test mlogloss at
#: 1.3755 against 1.2827 with the exact diagonal.
MULTICLASS_HESSIAN_FACTOR = 1.0
#: Probabilities (weighted label means, class priors) are clipped to
#: ``[PROBABILITY_CLIP, 1 - PROBABILITY_CLIP]`` before the inverse link is
#: applied in ``base_margin``, so that a pure label set gives a finite margin.
PROBABILITY_CLIP = 1e-7
#: Smallest ``num_class`` of the multiclass objectives.
MIN_NUM_CLASS = 2


# ---------------------------------------------------------------------------
# Binary classification
# ---------------------------------------------------------------------------


def _clipped_weighted_mean(y, weight, who):
    """Weighted label mean clipped into ``[PROBABILITY_CLIP, 1 - CLIP]``."""
    y, weight = _host_label_and_weight(y, weight, who)
    probability = float(reproducible_mean(np, y, weight))
    return float(np.clip(probability, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP))


def _check_probability(objective, base_score):
    return objective._check_base_score(
        base_score, lambda v: 0.0 < v < 1.0, "in the open interval (0, 1)"
    )


def binary_class_weights(label, scale_pos_weight=1.0, is_unbalance=False):
    """Per-row weight multipliers of the two classes of a binary objective.

    Parameters
    ----------
    label : ndarray of shape (n_rows,), float64
        Labels 0 and 1 (``binary:*`` objectives).
    scale_pos_weight : float, default=1.0
        Multiplier of the rows of label 1 (XGBoost's ``scale_pos_weight``).
    is_unbalance : bool, default=False
        LightGBM's ``is_unbalance``: the class with fewer rows is multiplied by the
        ratio of the row counts (``n_negative / n_positive`` for the positive rows, or
        ``n_positive / n_negative`` for the negative ones); nothing when a class is
        absent.

    Returns
    -------
    ndarray of shape (n_rows,), float64, or None
        None when every multiplier is 1.

    Raises
    ------
    ValueError
        Both ``scale_pos_weight != 1`` and ``is_unbalance``.
    """
    positive = np.asarray(label) > 0.5
    n_positive = int(np.count_nonzero(positive))
    multipliers = class_multipliers(
        n_positive, positive.size - n_positive, scale_pos_weight, is_unbalance
    )
    return row_class_weights(label, multipliers)


def row_class_weights(label, multipliers):
    """Each row's multiplier of ``multipliers = (negative, positive)`` (labels above 0.5
    are positive), ndarray of shape (n_rows,), float64; None for None."""
    if multipliers is None:
        return None
    return np.where(np.asarray(label) > 0.5, multipliers[1], multipliers[0])


def class_multipliers(n_positive, n_negative, scale_pos_weight=1.0, is_unbalance=False):
    """The multipliers ``(negative rows, positive rows)`` of :func:`binary_class_weights`
    from the class counts (row-wise, so a distributed trainer applies them per worker
    from the global counts), or None when both are 1. Same parameters and ValueError."""
    if is_unbalance and scale_pos_weight != 1.0:
        raise ValueError(
            "Give is_unbalance or scale_pos_weight, not both: both weight the positive rows."
        )
    if is_unbalance:
        if n_positive == 0 or n_negative == 0 or n_positive == n_negative:
            return None
        if n_positive < n_negative:
            return 1.0, n_negative / n_positive
        return n_positive / n_negative, 1.0
    if scale_pos_weight == 1.0:
        return None
    return 1.0, float(scale_pos_weight)


class LogisticLoss(Objective):
    """``binary:logistic``: cross-entropy with the sigmoid link.

    Loss ``log(1 + exp(F)) - y * F`` with labels in ``[0, 1]`` (fractional
    labels allowed, as in XGBoost); with ``p = sigmoid(F)``:
    ``grad = p - y``, ``hess = max(p * (1 - p), HESSIAN_FLOOR)``.
    Prediction: ``p``. Base margin: log-odds of the weighted label mean,
    clipped to ``[PROBABILITY_CLIP, 1 - PROBABILITY_CLIP]``.
    """

    supports_targets = True

    name = "binary:logistic"
    default_metric = "logloss"

    def _check_label_domain(self, y):
        bad = (y < 0) | (y > 1)
        if bad.any():
            self._label_error("labels must be in [0, 1]", y, bad)

    def _gradients(self, xp, y, raw):
        probability = _sigmoid(xp, raw)
        hess = xp.maximum(probability * (1.0 - probability), HESSIAN_FLOOR)
        return probability - y, hess

    def base_margin(self, y, weight):
        probability = _clipped_weighted_mean(y, weight, self.name)
        return np.array([strict_math.log(np, probability / (1.0 - probability))], dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        probability = _check_probability(self, base_score)
        return np.array([strict_math.log(np, probability / (1.0 - probability))], dtype=Y_DTYPE)

    def output(self, xp, raw):
        return _sigmoid(xp, xp.asarray(raw, dtype=Y_DTYPE))


class ExponentialLoss(Objective):
    """``binary:exponential``: the AdaBoost loss ``exp(-(2y - 1) F)``.

    Labels are 0 or 1; with ``s = 2y - 1`` and ``e = exp(-s F)``:
    ``grad = -s e``, ``hess = e``. Prediction: the probability
    ``1 / (1 + exp(-2F))``. Base margin: half the log-odds of the weighted
    label mean (clipped as for ``binary:logistic``), the exact minimizer.
    """

    name = "binary:exponential"
    default_metric = "logloss"

    def _check_label_domain(self, y):
        bad = (y != 0) & (y != 1)
        if bad.any():
            self._label_error("labels must be 0 or 1", y, bad)

    def _gradients(self, xp, y, raw):
        sign = 2.0 * y - 1.0
        exp_loss = strict_math.exp(xp, -sign * raw)
        return -sign * exp_loss, exp_loss

    def base_margin(self, y, weight):
        probability = _clipped_weighted_mean(y, weight, self.name)
        return np.array(
            [0.5 * strict_math.log(np, probability / (1.0 - probability))], dtype=Y_DTYPE
        )

    def base_score_to_margin(self, base_score):
        probability = _check_probability(self, base_score)
        return np.array(
            [0.5 * strict_math.log(np, probability / (1.0 - probability))], dtype=Y_DTYPE
        )

    def output(self, xp, raw):
        return _sigmoid(xp, 2.0 * xp.asarray(raw, dtype=Y_DTYPE))


# ---------------------------------------------------------------------------
# Multiclass
# ---------------------------------------------------------------------------


class SoftmaxLoss(Objective):
    """``multi:softprob``: softmax cross-entropy over ``num_class`` classes.

    Labels are class indices ``0 .. num_class - 1`` (stored as float64).
    Loss ``-log p_y`` with ``p = softmax(F)`` row-wise; for class ``k``:
    ``grad_k = p_k - [y == k]``,
    ``hess_k = max(MULTICLASS_HESSIAN_FACTOR * p_k * (1 - p_k),
    HESSIAN_FLOOR)`` (the diagonal of the softmax hessian).
    Prediction: the probabilities, shape (n_samples, num_class).
    Base margin: log of the weighted class priors (clipped to
    ``[PROBABILITY_CLIP, 1]``), centered to mean 0.

    Parameters
    ----------
    num_class : int
        Number of classes, at least 2.
    """

    name = "multi:softprob"
    default_metric = "mlogloss"

    def __init__(self, num_class):
        if (
            isinstance(num_class, bool)
            or not isinstance(num_class, numbers.Integral)
            or num_class < MIN_NUM_CLASS
        ):
            raise ValueError(
                f"objective {self.name!r}: num_class must be an integer >= "
                f"{MIN_NUM_CLASS}, got {num_class!r}"
            )
        self.num_class = int(num_class)

    @classmethod
    def from_params(cls, params):
        """Build from validated parameters (``num_class``, required).

        Raises
        ------
        ValueError
            If ``num_class`` is missing or below ``MIN_NUM_CLASS``.
        """
        num_class = params.get("num_class")
        if num_class is None:
            raise ValueError(
                f"objective {cls.name!r} requires the parameter num_class "
                f"(an integer >= {MIN_NUM_CLASS})"
            )
        return cls(num_class=num_class)

    def n_outputs(self):
        return self.num_class

    def get_params(self):
        return {"num_class": self.num_class}

    def _check_label_domain(self, y):
        bad = y != np.floor(y)
        if bad.any():
            self._label_error("labels must be integer class indices", y, bad)
        bad = (y < 0) | (y >= self.num_class)
        if bad.any():
            self._label_error(f"labels must be in [0, num_class) = [0, {self.num_class})", y, bad)

    def _gradients(self, xp, y, raw):
        probability = _softmax(xp, raw)
        classes = xp.arange(self.num_class, dtype=Y_DTYPE)
        one_hot = (y[:, None] == classes[None, :]).astype(Y_DTYPE)
        hess = xp.maximum(
            MULTICLASS_HESSIAN_FACTOR * probability * (1.0 - probability), HESSIAN_FLOOR
        )
        return probability - one_hot, hess

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        class_weight = np.bincount(y.astype(np.intp), weights=weight, minlength=self.num_class)
        priors = np.clip(class_weight / float(reproducible_sum(np, weight)), PROBABILITY_CLIP, 1.0)
        log_priors = strict_math.log(np, priors)
        return (log_priors - float(reproducible_mean(np, log_priors))).astype(Y_DTYPE)

    def base_score_to_margin(self, base_score):
        """``base_score`` added to every class margin (XGBoost semantics).

        A shift common to all classes leaves the probabilities unchanged
        (uniform), so any finite value is accepted and used as the margin.
        """
        value = self._check_base_score(base_score, lambda v: True, "finite")
        return np.full(self.num_class, value, dtype=Y_DTYPE)

    def output(self, xp, raw):
        return _softmax(xp, xp.asarray(raw, dtype=Y_DTYPE))


class SoftmaxClassLoss(SoftmaxLoss):
    """``multi:softmax``: as ``multi:softprob``, predicting class indices.

    :meth:`output` returns the index of the largest margin of each row
    (lowest index on ties) as float64, shape (n_samples,); :meth:`mean`
    returns the probabilities, shape (n_samples, num_class).
    """

    name = "multi:softmax"

    def output(self, xp, raw):
        raw = xp.asarray(raw, dtype=Y_DTYPE)
        return xp.argmax(raw, axis=1).astype(Y_DTYPE)

    def mean(self, xp, raw):
        return _softmax(xp, xp.asarray(raw, dtype=Y_DTYPE))
