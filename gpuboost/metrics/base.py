"""Evaluation metrics.

Every metric is a callable :class:`Metric` object, obtained by name with
:func:`get_metric`::

    metric = get_metric("ndcg@5")
    value = metric(y, pred, weight=None, group=group)   # Python float

Names and definitions follow XGBoost's evaluation metrics. A name may carry a
parameter after ``@`` (``error@0.7``, ``ndcg@5``, ``tweedie-nloglik@1.2``).

Conventions
-----------
Inputs
    ``y`` holds the labels, shape (n_samples,). ``pred`` holds predictions in
    the objective's *mean* space (after the link/transform): probabilities of
    the positive class for ``logloss``, ``error`` and ``auc``, class
    probabilities of shape (n_samples, n_classes) for ``mlogloss`` and
    ``merror``, expected values (> 0) for ``poisson-nloglik``,
    ``gamma-nloglik`` and ``tweedie-nloglik``, raw values for ``rmse``,
    ``mae`` and ``pinball``. One-dimensional predictions may also be given
    with shape (n_samples, 1). Arrays may be NumPy or CuPy arrays; the
    computation runs with the array module of the inputs (see
    :func:`gpuboost._array.get_array_module`) and the result is copied back
    as a Python float.
Weights
    Element-wise metrics are weighted means ``sum(w * loss) / sum(w)``.
    Weights must be non-negative with a positive sum. ``group`` is ignored by
    every metric except ``ndcg`` and ``map``.
Ranking metrics (``ndcg``, ``map``)
    Need ``group``: the number of rows of each query, in row order, summing
    to n_samples (a ``ValueError`` is raised without it). Because queries have
    irregular sizes, ranking metrics copy their inputs to the host and are
    computed with NumPy. Documents of a query are ranked by decreasing
    prediction; tied predictions keep their original order within the query
    (stable sort), so results are deterministic. The metric is the mean over
    queries; when ``weight`` has one entry per query
    (``len(weight) == len(group)``) it is the weighted mean with these query
    weights, and per-row weights (``len(weight) == n_samples``) are ignored,
    as ranking weights are defined per query. Empty queries (size 0) are
    allowed and count like queries without relevant documents.
AUC
    Weighted ROC AUC; tied predictions count one half (trapezoid rule, the
    weighted mid-rank statistic). A row contributes ``w * y`` to the positive
    class and ``w * (1 - y)`` to the negative class (XGBoost's convention,
    identical to the usual definition for labels in {0, 1}); labels must lie
    in [0, 1]. When one class has zero total weight the AUC is undefined and
    ``float('nan')`` is returned instead of raising, so that training logs can
    carry on.
"""

import math

import numpy as np

from ..core.array import get_array_module, to_numpy
from ..core.dtypes import Y_DTYPE

__all__ = [
    "Metric",
    "RootMeanSquaredError",
    "MeanAbsoluteError",
    "LogLoss",
    "BinaryError",
    "ROCAUC",
    "MultiLogLoss",
    "MultiError",
    "PoissonNegLogLik",
    "GammaNegLogLik",
    "TweedieNegLogLik",
    "PinballLoss",
    "NDCG",
    "MeanAveragePrecision",
    "get_metric",
    "evaluate",
    "LOGLOSS_EPS",
    "MIN_EXPECTED_VALUE",
    "DEFAULT_ERROR_THRESHOLD",
    "DEFAULT_TWEEDIE_VARIANCE_POWER",
    "DEFAULT_PINBALL_ALPHA",
    "TWEEDIE_VARIANCE_POWER_RANGE",
]

#: Probabilities are clipped to ``[LOGLOSS_EPS, 1 - LOGLOSS_EPS]`` before the
#: logarithm in ``logloss`` and ``mlogloss``.
LOGLOSS_EPS = 1e-15
#: Expected values are clipped below at this value before the logarithm or the
#: division in ``poisson-nloglik``, ``gamma-nloglik`` and ``tweedie-nloglik``.
MIN_EXPECTED_VALUE = 1e-16
#: Probability above which ``error`` predicts the positive class.
DEFAULT_ERROR_THRESHOLD = 0.5
#: Tweedie variance power ``rho`` of plain ``tweedie-nloglik``.
DEFAULT_TWEEDIE_VARIANCE_POWER = 1.5
#: Allowed range ``[min, max)`` of the Tweedie variance power.
TWEEDIE_VARIANCE_POWER_RANGE = (1.0, 2.0)
#: Quantile ``alpha`` of plain ``pinball``.
DEFAULT_PINBALL_ALPHA = 0.5
#: Separates a metric's base name from its parameter: ``ndcg@5``.
PARAMETER_SEPARATOR = "@"
#: dtype of query offsets (cumulative query sizes) in ranking metrics.
_QUERY_OFFSET_DTYPE = np.int64


# ---------------------------------------------------------------------------
# input checking helpers
# ---------------------------------------------------------------------------


def _as_labels(xp, y):
    """Return labels as a float64 array of shape (n_samples,)."""
    y = xp.asarray(y, dtype=Y_DTYPE)
    if y.ndim != 1:
        raise ValueError(f"y must have shape (n_samples,), got shape {y.shape}")
    if y.shape[0] == 0:
        raise ValueError("cannot evaluate a metric on zero samples")
    return y


def _as_single_output_predictions(xp, pred, n_samples):
    """Return predictions of shape (n_samples,) (also accepts (n_samples, 1))."""
    pred = xp.asarray(pred, dtype=Y_DTYPE)
    if pred.ndim == 2 and pred.shape[1] == 1:
        pred = pred[:, 0]
    if pred.shape != (n_samples,):
        raise ValueError(
            f"pred must have shape ({n_samples},) to match y, got shape {pred.shape}"
        )
    return pred


def _as_class_probabilities(xp, pred, n_samples):
    """Return class probabilities of shape (n_samples, n_classes)."""
    pred = xp.asarray(pred, dtype=Y_DTYPE)
    if pred.ndim != 2 or pred.shape[0] != n_samples or pred.shape[1] < 1:
        raise ValueError(
            f"pred must have shape ({n_samples}, n_classes) for a multiclass "
            f"metric, got shape {pred.shape}"
        )
    return pred


def _as_sample_weight(xp, weight, n_samples):
    """Return per-row weights of shape (n_samples,), or None.

    Raises ValueError for a wrong shape, negative weights or a zero sum.
    """
    if weight is None:
        return None
    weight = xp.asarray(weight, dtype=Y_DTYPE)
    if weight.shape != (n_samples,):
        raise ValueError(
            f"weight must have shape ({n_samples},) to match y, got shape "
            f"{weight.shape}"
        )
    if bool(xp.any(weight < 0)):
        raise ValueError("weights must be non-negative")
    if not float(xp.sum(weight)) > 0:
        raise ValueError("the sum of the weights must be positive")
    return weight


def _weighted_mean(xp, values, weight):
    """Return ``sum(weight * values) / sum(weight)`` (plain mean without weights).

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
    weight : ndarray of shape (n_samples,) or None

    Returns
    -------
    mean : 0-d ndarray
    """
    if weight is None:
        return xp.mean(values)
    return xp.sum(weight * values) / xp.sum(weight)


def _log_gamma(xp, values):
    """Element-wise ``log(Gamma(values))`` with the array module ``xp``.

    NumPy and CuPy have no common log-gamma function; this uses
    ``cupyx.scipy.special.gammaln`` for CuPy arrays, ``scipy.special.gammaln``
    for NumPy arrays when SciPy is installed, and ``math.lgamma`` element by
    element otherwise.
    """
    if xp is not np:
        from cupyx.scipy.special import gammaln

        return gammaln(values)
    try:
        from scipy.special import gammaln
    except ImportError:
        return np.vectorize(math.lgamma, otypes=[Y_DTYPE])(values)
    return gammaln(values)


def _format_parameter(value):
    """Shortest text of a metric parameter (``0.7`` -> ``'0.7'``, ``5`` -> ``'5'``)."""
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return repr(float(value))


# ---------------------------------------------------------------------------
# base classes
# ---------------------------------------------------------------------------


class Metric:
    """Base class of evaluation metrics.

    Attributes
    ----------
    name : str
        Canonical name, including the parameter: always for
        ``tweedie-nloglik`` and ``pinball`` (``'tweedie-nloglik@1.5'``, as
        XGBoost and :mod:`gpuboost.objective` spell them), for ``error`` only
        when the threshold is not 0.5 (``'error'``, ``'error@0.7'``), for
        ``ndcg`` and ``map`` when k is given (``'ndcg@5'``). Parameters are
        written as ``repr(float(value))`` (``'pinball@0.9'``,
        ``'tweedie-nloglik@1.0'``) or as an integer for k.
        ``get_metric(metric.name)`` returns an equivalent metric with the same
        name.
    higher_is_better : bool
        True for ``auc``, ``ndcg`` and ``map``; False for losses and errors.
    """

    name = None
    higher_is_better = False

    def __call__(self, y, pred, weight=None, group=None):
        """Evaluate the metric.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels.
        pred : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predictions in the objective's mean space (see the module
            docstring for the meaning per metric).
        weight : array-like of shape (n_samples,) or (n_groups,), default=None
            Sample weights; per-query weights for ranking metrics.
        group : array-like of int of shape (n_groups,), default=None
            Query sizes, required by ranking metrics and ignored by the others.

        Returns
        -------
        value : float
        """
        xp = get_array_module(y, pred, weight)
        y = _as_labels(xp, y)
        return float(self._evaluate(xp, y, pred, weight, group))

    def _evaluate(self, xp, y, pred, weight, group):
        """Compute the metric; ``y`` is already a checked float64 array."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


class _PointwiseMetric(Metric):
    """Weighted mean of a per-row loss of one-dimensional predictions."""

    def _evaluate(self, xp, y, pred, weight, group):
        n_samples = y.shape[0]
        pred = _as_single_output_predictions(xp, pred, n_samples)
        weight = _as_sample_weight(xp, weight, n_samples)
        mean_loss = _weighted_mean(xp, self._pointwise_loss(xp, y, pred), weight)
        return self._finalize(xp, mean_loss)

    def _pointwise_loss(self, xp, y, pred):
        """Per-row loss, ndarray of shape (n_samples,)."""
        raise NotImplementedError

    def _finalize(self, xp, mean_loss):
        """Map the weighted mean loss to the reported value (identity)."""
        return mean_loss


# ---------------------------------------------------------------------------
# regression and binary classification
# ---------------------------------------------------------------------------


class RootMeanSquaredError(_PointwiseMetric):
    """``rmse``: ``sqrt(sum(w * (y - pred)**2) / sum(w))``; ``pred`` raw."""

    name = "rmse"

    def _pointwise_loss(self, xp, y, pred):
        return (y - pred) ** 2

    def _finalize(self, xp, mean_loss):
        return xp.sqrt(mean_loss)


class MeanAbsoluteError(_PointwiseMetric):
    """``mae``: weighted mean of ``|y - pred|``; ``pred`` raw."""

    name = "mae"

    def _pointwise_loss(self, xp, y, pred):
        return xp.abs(y - pred)


class LogLoss(_PointwiseMetric):
    """``logloss``: weighted mean of ``-(y log p + (1 - y) log(1 - p))``.

    ``pred`` holds probabilities ``p`` of the positive class, clipped to
    ``[LOGLOSS_EPS, 1 - LOGLOSS_EPS]``. Labels may be soft (in [0, 1]).
    """

    name = "logloss"

    def _pointwise_loss(self, xp, y, pred):
        proba = xp.clip(pred, LOGLOSS_EPS, 1.0 - LOGLOSS_EPS)
        return -(y * xp.log(proba) + (1.0 - y) * xp.log(1.0 - proba))


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
        self.name = "error"
        if threshold != DEFAULT_ERROR_THRESHOLD:
            self.name += PARAMETER_SEPARATOR + _format_parameter(threshold)

    def _pointwise_loss(self, xp, y, pred):
        return xp.where(pred > self.threshold, 1.0 - y, y)


class PinballLoss(_PointwiseMetric):
    """``pinball`` / ``pinball@alpha``: quantile (pinball) loss.

    Per-row loss ``alpha * (y - pred)`` when ``y >= pred`` and
    ``(1 - alpha) * (pred - y)`` otherwise; ``pred`` raw.

    Parameters
    ----------
    alpha : float, default=DEFAULT_PINBALL_ALPHA
        Target quantile, ``0 < alpha < 1``.
    """

    def __init__(self, alpha=DEFAULT_PINBALL_ALPHA):
        alpha = float(alpha)
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"pinball alpha must satisfy 0 < alpha < 1, got {alpha}")
        self.alpha = alpha
        self.name = "pinball" + PARAMETER_SEPARATOR + _format_parameter(alpha)

    def _pointwise_loss(self, xp, y, pred):
        residual = y - pred
        return xp.where(
            residual >= 0, self.alpha * residual, (self.alpha - 1.0) * residual
        )


class PoissonNegLogLik(_PointwiseMetric):
    """``poisson-nloglik``: Poisson negative log-likelihood.

    Per-row loss ``lgamma(y + 1) + mu - y * log(mu)`` with the expected value
    ``mu = max(pred, MIN_EXPECTED_VALUE)``. ``lgamma`` comes from
    ``cupyx.scipy.special`` for CuPy arrays and from SciPy (or ``math.lgamma``
    row by row when SciPy is missing) for NumPy arrays.
    """

    name = "poisson-nloglik"

    def _pointwise_loss(self, xp, y, pred):
        expected = xp.maximum(pred, MIN_EXPECTED_VALUE)
        return _log_gamma(xp, y + 1.0) + expected - y * xp.log(expected)


class GammaNegLogLik(_PointwiseMetric):
    """``gamma-nloglik``: gamma negative log-likelihood with dispersion 1.

    Per-row loss ``y / mu + log(mu)`` with ``mu = max(pred,
    MIN_EXPECTED_VALUE)``; with unit dispersion the label-only term of the
    exponential-family form vanishes (XGBoost's definition).
    """

    name = "gamma-nloglik"

    def _pointwise_loss(self, xp, y, pred):
        expected = xp.maximum(pred, MIN_EXPECTED_VALUE)
        return y / expected + xp.log(expected)


class TweedieNegLogLik(_PointwiseMetric):
    """``tweedie-nloglik`` / ``tweedie-nloglik@rho``: Tweedie negative log-likelihood.

    Per-row loss, up to a label-only term (XGBoost's definition),
    ``-y * mu**(1 - rho) / (1 - rho) + mu**(2 - rho) / (2 - rho)`` with
    ``mu = max(pred, MIN_EXPECTED_VALUE)``. At ``rho = 1`` the first term
    diverges by the label-only constant ``y / (1 - rho)``; its limit with
    that constant dropped, ``mu - y * log(mu)``, is used.

    Parameters
    ----------
    variance_power : float, default=DEFAULT_TWEEDIE_VARIANCE_POWER
        ``rho``, in ``TWEEDIE_VARIANCE_POWER_RANGE`` = [1, 2).
    """

    def __init__(self, variance_power=DEFAULT_TWEEDIE_VARIANCE_POWER):
        variance_power = float(variance_power)
        low, high = TWEEDIE_VARIANCE_POWER_RANGE
        if not low <= variance_power < high:
            raise ValueError(
                f"tweedie variance power must be in [{low}, {high}), got "
                f"{variance_power}"
            )
        self.variance_power = variance_power
        self.name = (
            "tweedie-nloglik" + PARAMETER_SEPARATOR + _format_parameter(variance_power)
        )

    def _pointwise_loss(self, xp, y, pred):
        expected = xp.maximum(pred, MIN_EXPECTED_VALUE)
        log_expected = xp.log(expected)
        rho = self.variance_power
        if rho == TWEEDIE_VARIANCE_POWER_RANGE[0]:
            return expected - y * log_expected
        first = y * xp.exp((1.0 - rho) * log_expected) / (1.0 - rho)
        second = xp.exp((2.0 - rho) * log_expected) / (2.0 - rho)
        return second - first


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
        cumulative_positive = xp.cumsum(positive_weight)
        cumulative_negative = xp.cumsum(negative_weight)
        total_positive = cumulative_positive[-1]
        total_negative = cumulative_negative[-1]
        if not (float(total_positive) > 0 and float(total_negative) > 0):
            return float("nan")

        # Last row of every run of equal predictions: one point of the curve.
        is_run_end = xp.concatenate(
            [sorted_pred[1:] != sorted_pred[:-1], xp.ones(1, dtype=bool)]
        )
        zero = xp.zeros(1, dtype=Y_DTYPE)
        true_positive = xp.concatenate([zero, cumulative_positive[is_run_end]])
        false_positive = xp.concatenate([zero, cumulative_negative[is_run_end]])
        twice_area = xp.sum(
            (false_positive[1:] - false_positive[:-1])
            * (true_positive[1:] + true_positive[:-1])
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
        return _weighted_mean(xp, self._pointwise_loss(xp, labels, proba), weight)

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
        return -xp.log(xp.clip(true_class_proba, LOGLOSS_EPS, 1.0 - LOGLOSS_EPS))


class MultiError(_MulticlassMetric):
    """``merror``: weighted rate of rows whose most probable class is not ``y``.

    Ties between class probabilities go to the lowest class index.
    """

    name = "merror"

    def _pointwise_loss(self, xp, labels, proba):
        return (xp.argmax(proba, axis=1) != labels).astype(Y_DTYPE)


# ---------------------------------------------------------------------------
# ranking (host side, NumPy)
# ---------------------------------------------------------------------------


class _RankingMetric(Metric):
    """Mean over queries of a per-query ranking score, computed on the host.

    Parameters
    ----------
    k : int or None, default=None
        Number of top positions evaluated; None evaluates all positions.
    """

    higher_is_better = True
    _base_name = None

    def __init__(self, k=None):
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
                raise ValueError(
                    f"{self._base_name}@k needs an integer k >= 1, got {k!r}"
                )
            k = int(k)
        self.k = k
        self.name = self._base_name
        if k is not None:
            self.name += PARAMETER_SEPARATOR + _format_parameter(k)

    def _evaluate(self, xp, y, pred, weight, group):
        n_samples = y.shape[0]
        labels = to_numpy(y)
        scores = to_numpy(_as_single_output_predictions(xp, pred, n_samples))
        group_sizes = self._check_group(group, n_samples)
        query_weight = self._check_query_weight(weight, group_sizes, n_samples)
        if np.any(labels < 0):
            raise ValueError(f"{self._base_name} needs non-negative relevance labels")

        n_queries = group_sizes.shape[0]
        query_offsets = np.zeros(n_queries + 1, dtype=_QUERY_OFFSET_DTYPE)
        np.cumsum(group_sizes, out=query_offsets[1:])
        query_of_row = np.repeat(np.arange(n_queries), group_sizes)
        # Rows are contiguous per query, so sorting by (query, -score) with a
        # stable sort ranks each query by decreasing score, ties in row order.
        ranked_rows = np.lexsort((-scores, query_of_row))
        # 0-based position of each ranked row within its query.
        positions = np.arange(n_samples) - query_offsets[query_of_row]
        if self.k is None:
            in_top_k = np.ones(n_samples, dtype=bool)
        else:
            in_top_k = positions < self.k
        per_query = self._score_queries(
            labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets
        )
        if query_weight is None:
            return per_query.mean()
        return np.sum(query_weight * per_query) / np.sum(query_weight)

    def _score_queries(
        self, labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets
    ):
        """Per-query scores, ndarray of shape (n_queries,).

        Parameters
        ----------
        labels : ndarray of shape (n_samples,)
            Relevance labels in row order.
        ranked_rows : ndarray of shape (n_samples,)
            Row ids in ranked order: query by query, decreasing score.
        positions, in_top_k, query_of_row : ndarray of shape (n_samples,)
            For the i-th ranked row: its 0-based position in the query,
            whether that position is among the top k, and its query id.
        query_offsets : ndarray of shape (n_queries + 1,)
            First ranked row of each query, then n_samples.
        """
        raise NotImplementedError

    def _check_group(self, group, n_samples):
        """Return query sizes as an int64 array of shape (n_groups,)."""
        if group is None:
            raise ValueError(
                f"ranking metric '{self.name}' needs group (the query sizes)"
            )
        group_sizes = to_numpy(group)
        if group_sizes.ndim != 1:
            raise ValueError(
                f"group must have shape (n_groups,), got shape {group_sizes.shape}"
            )
        if group_sizes.dtype.kind not in "iu":
            if not np.all(group_sizes == np.floor(group_sizes)):
                raise ValueError("group sizes must be integers")
        group_sizes = group_sizes.astype(_QUERY_OFFSET_DTYPE)
        if np.any(group_sizes < 0):
            raise ValueError("group sizes must be non-negative")
        if int(group_sizes.sum()) != n_samples:
            raise ValueError(
                f"group sizes sum to {int(group_sizes.sum())}, expected {n_samples} "
                f"(the number of samples)"
            )
        return group_sizes

    def _check_query_weight(self, weight, group_sizes, n_samples):
        """Return per-query weights of shape (n_groups,), or None.

        Per-row weights (``len(weight) == n_samples != len(group)``) are
        ignored (None is returned).
        """
        if weight is None:
            return None
        weight = to_numpy(weight).astype(Y_DTYPE)
        n_queries = group_sizes.shape[0]
        if weight.shape == (n_queries,):
            if np.any(weight < 0) or not np.sum(weight) > 0:
                raise ValueError(
                    "query weights must be non-negative with a positive sum"
                )
            return weight
        if weight.shape == (n_samples,):
            return None
        raise ValueError(
            f"weight for a ranking metric must have one entry per query "
            f"({n_queries},) or per row ({n_samples},), got shape {weight.shape}"
        )


class NDCG(_RankingMetric):
    """``ndcg`` / ``ndcg@k``: normalized discounted cumulative gain.

    ``DCG@k = sum over the top k ranked documents of (2**rel - 1) /
    log2(rank + 1)`` with rank counted from 1; the ideal DCG@k ranks the
    labels in decreasing order. A query whose ideal DCG is 0 (no document with
    positive relevance) scores 1. Ties in predictions keep the original row
    order within the query.

    Parameters
    ----------
    k : int or None, default=None
        Number of top positions; None (plain ``ndcg``) uses all of them.
    """

    _base_name = "ndcg"

    def _score_queries(
        self, labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets
    ):
        n_queries = query_offsets.shape[0] - 1
        discount = np.where(in_top_k, 1.0 / np.log2(positions + 2.0), 0.0)
        dcg = np.bincount(
            query_of_row,
            weights=_exponential_gain(labels[ranked_rows]) * discount,
            minlength=n_queries,
        )
        ideal_rows = np.lexsort((-labels, query_of_row))
        ideal_dcg = np.bincount(
            query_of_row,
            weights=_exponential_gain(labels[ideal_rows]) * discount,
            minlength=n_queries,
        )
        has_gain = ideal_dcg > 0
        return np.where(has_gain, dcg / np.where(has_gain, ideal_dcg, 1.0), 1.0)


class MeanAveragePrecision(_RankingMetric):
    """``map`` / ``map@k``: mean average precision.

    Documents with relevance > 0 are relevant. For a query with ``R``
    relevant documents, ``AP@k = sum over relevant documents ranked in the top
    k of precision@rank / min(R, k)`` (XGBoost's definition). A query without
    relevant documents scores 1 (XGBoost's convention). Ties in predictions
    keep the original row order within the query.

    Parameters
    ----------
    k : int or None, default=None
        Number of top positions; None (plain ``map``) uses all of them.
    """

    _base_name = "map"

    def _score_queries(
        self, labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets
    ):
        n_queries = query_offsets.shape[0] - 1
        is_relevant = (labels[ranked_rows] > 0).astype(_QUERY_OFFSET_DTYPE)
        cumulative_hits = np.cumsum(is_relevant)
        hits_before_query = np.concatenate([[0], cumulative_hits])[query_offsets[:-1]]
        hits_up_to_position = cumulative_hits - hits_before_query[query_of_row]
        precision = hits_up_to_position / (positions + 1.0)
        precision_sum = np.bincount(
            query_of_row,
            weights=precision * (is_relevant * in_top_k),
            minlength=n_queries,
        )
        n_relevant = np.bincount(query_of_row, weights=is_relevant, minlength=n_queries)
        n_counted = n_relevant if self.k is None else np.minimum(n_relevant, self.k)
        has_relevant = n_relevant > 0
        return np.where(
            has_relevant, precision_sum / np.where(has_relevant, n_counted, 1.0), 1.0
        )


def _exponential_gain(relevance):
    """NDCG gain ``2**relevance - 1``, ndarray of the same shape."""
    return np.exp2(relevance) - 1.0


# ---------------------------------------------------------------------------
# names
# ---------------------------------------------------------------------------


def _parse_float(base_name, text):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"metric '{base_name}' needs a number after '{PARAMETER_SEPARATOR}', "
            f"got {text!r}"
        ) from None
    if not math.isfinite(value):
        raise ValueError(f"metric '{base_name}' needs a finite parameter, got {text!r}")
    return value


def _parse_positive_int(base_name, text):
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"metric '{base_name}' needs an integer k >= 1 after "
            f"'{PARAMETER_SEPARATOR}', got {text!r}"
        ) from None
    return value


#: Base name -> (metric class, parser of the text after '@', or None when the
#: metric takes no parameter).
_METRICS = {
    "rmse": (RootMeanSquaredError, None),
    "mae": (MeanAbsoluteError, None),
    "logloss": (LogLoss, None),
    "error": (BinaryError, _parse_float),
    "auc": (ROCAUC, None),
    "mlogloss": (MultiLogLoss, None),
    "merror": (MultiError, None),
    "poisson-nloglik": (PoissonNegLogLik, None),
    "gamma-nloglik": (GammaNegLogLik, None),
    "tweedie-nloglik": (TweedieNegLogLik, _parse_float),
    "pinball": (PinballLoss, _parse_float),
    "ndcg": (NDCG, _parse_positive_int),
    "map": (MeanAveragePrecision, _parse_positive_int),
}

#: Placeholder shown for each parameterized metric in the list of valid names.
_PARAMETER_PLACEHOLDERS = {
    "error": "threshold",
    "tweedie-nloglik": "rho",
    "pinball": "alpha",
    "ndcg": "k",
    "map": "k",
}


def _valid_names():
    """Human-readable list of accepted metric names."""
    names = []
    for base_name, (_, parser) in _METRICS.items():
        names.append(base_name)
        if parser is not None:
            placeholder = _PARAMETER_PLACEHOLDERS[base_name]
            names.append(f"{base_name}{PARAMETER_SEPARATOR}<{placeholder}>")
    return ", ".join(names)


def get_metric(name):
    """Return the metric called ``name``.

    Parameters
    ----------
    name : str
        ``rmse``, ``mae``, ``logloss``, ``error`` (threshold 0.5) or
        ``error@t``, ``auc``, ``mlogloss``, ``merror``, ``poisson-nloglik``,
        ``gamma-nloglik``, ``tweedie-nloglik`` (rho 1.5) or
        ``tweedie-nloglik@rho`` (1 <= rho < 2), ``pinball`` (alpha 0.5) or
        ``pinball@alpha`` (0 < alpha < 1), ``ndcg`` / ``ndcg@k``, ``map`` /
        ``map@k`` (k >= 1; without k all positions).

    Returns
    -------
    metric : Metric

    Raises
    ------
    ValueError
        For an unknown name (the message lists the valid names) or an invalid
        parameter.
    """
    if not isinstance(name, str):
        raise TypeError(f"metric name must be a str, got {type(name).__name__}")
    base_name, separator, parameter_text = name.partition(PARAMETER_SEPARATOR)
    if base_name not in _METRICS:
        raise ValueError(f"unknown metric {name!r}; valid names: {_valid_names()}")
    metric_class, parse_parameter = _METRICS[base_name]
    if not separator:
        return metric_class()
    if parse_parameter is None:
        raise ValueError(f"metric '{base_name}' takes no parameter, got {name!r}")
    return metric_class(parse_parameter(base_name, parameter_text))


def evaluate(metric_names, y, pred, weight=None, group=None):
    """Evaluate several metrics on the same predictions.

    Parameters
    ----------
    metric_names : str, Metric or sequence of str / Metric
        Metric names (see :func:`get_metric`) or metric objects.
    y : array-like of shape (n_samples,)
    pred : array-like of shape (n_samples,) or (n_samples, n_classes)
    weight : array-like of shape (n_samples,) or (n_groups,), default=None
    group : array-like of int of shape (n_groups,), default=None

    Returns
    -------
    results : list of (str, float)
        ``(metric.name, value)`` in the order of ``metric_names``.
    """
    if isinstance(metric_names, (str, Metric)):
        metric_names = [metric_names]
    results = []
    for metric in metric_names:
        if not isinstance(metric, Metric):
            metric = get_metric(metric)
        results.append((metric.name, metric(y, pred, weight=weight, group=group)))
    return results
