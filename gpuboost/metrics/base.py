"""Evaluation metrics: the :class:`Metric` interface and its shared input checks.

The metrics live by family: :mod:`gpuboost.metrics.pointwise` (``rmse``,
``mae``, ``pinball``, the negative log-likelihoods), :mod:`gpuboost.metrics.classification`
(``logloss``, ``error``, ``auc``, ``mlogloss``, ``merror``) and
:mod:`gpuboost.metrics.ranking` (``ndcg``, ``map``); :mod:`gpuboost.metrics.registry`
builds them by name.

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
    :func:`gpuboost.core.array.get_array_module`) and the result is copied back
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

import numpy as np

from ..core.array import get_array_module
from ..core.dtypes import Y_DTYPE
from ..core.reproducible_sum import reproducible_mean

__all__ = ["Metric", "PARAMETER_SEPARATOR", "LEVEL_SEPARATOR", "metric_name"]

#: Separates a metric's base name from its parameter: ``ndcg@5``.
PARAMETER_SEPARATOR = "@"
#: Separates the levels of a metric of several: ``pinball@0.1,0.5,0.9``.
LEVEL_SEPARATOR = ","


# ---------------------------------------------------------------------------
# input checking helpers
# ---------------------------------------------------------------------------


def _as_labels(xp, y, bounds=False, targets=False):
    """Return labels as a float64 array of shape (n_samples,), or with ``bounds`` the
    interval labels of shape (n_samples, 2), or with ``targets`` also several targets'
    labels of shape (n_samples, k)."""
    y = xp.asarray(y, dtype=Y_DTYPE)
    if targets and not bounds and y.ndim == 2 and y.shape[1] > 1 and y.shape[0] > 0:
        return y
    if bounds:
        if y.ndim != 2 or y.shape[1] != 2 or y.shape[0] == 0:
            raise ValueError(
                "this metric needs interval labels of shape (n_samples, 2) (a Dataset's "
                f"label_lower_bound / label_upper_bound), got shape {y.shape}"
            )
        return y
    if y.ndim == 2 and y.shape[1] == 2:
        raise ValueError(
            "the labels are intervals (label_lower_bound / label_upper_bound), which only "
            "the survival:aft metrics take (aft-nloglik, interval-regression-accuracy)"
        )
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
        raise ValueError(f"pred must have shape ({n_samples},) to match y, got shape {pred.shape}")
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
            f"weight must have shape ({n_samples},) to match y, got shape {weight.shape}"
        )
    if bool(xp.any(weight < 0)):
        raise ValueError("weights must be non-negative")
    if not float(xp.sum(weight)) > 0:
        raise ValueError("the sum of the weights must be positive")
    return weight


def metric_name(base_name, parameter=None):
    """Canonical name of a metric: ``base_name`` or ``base_name@parameter``.

    Parameters
    ----------
    base_name : str
        ``'error'``, ``'pinball'``, ``'ndcg'``, ...
    parameter : int, float or None, default=None
        Written as an integer for an int (``'ndcg@5'``), else as
        ``repr(float(parameter))`` (``'pinball@0.9'``, ``'tweedie-nloglik@1.0'``);
        None gives the plain base name.

    Returns
    -------
    name : str
    """
    if parameter is None:
        return base_name
    return base_name + PARAMETER_SEPARATOR + _format_parameter(parameter)


def _format_parameter(value):
    """Shortest text of a metric parameter (``0.7`` -> ``'0.7'``, ``5`` -> ``'5'``; a
    sequence of levels -> ``'0.1,0.5,0.9'``)."""
    if isinstance(value, (list, tuple)):
        return LEVEL_SEPARATOR.join(_format_parameter(v) for v in value)
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
        XGBoost and :mod:`gpuboost.objectives` spell them), for ``error`` only
        when the threshold is not 0.5 (``'error'``, ``'error@0.7'``), for
        ``ndcg`` and ``map`` when k is given (``'ndcg@5'``). Parameters are
        written as ``repr(float(value))`` (``'pinball@0.9'``,
        ``'tweedie-nloglik@1.0'``) or as an integer for k.
        ``get_metric(metric.name)`` returns an equivalent metric with the same
        name.
    higher_is_better : bool
        True for ``auc``, ``ndcg`` and ``map``; False for losses and errors.
    takes_label_bounds : bool
        Whether ``y`` holds interval labels, shape (n_samples, 2) (``survival:aft``).
    takes_margins : bool
        Whether ``pred`` holds margins rather than predictions in the mean space (the
        ``survival:aft`` metrics, as XGBoost's); the training loop passes each what it
        takes.
    """

    name = None
    higher_is_better = False
    takes_label_bounds = False
    takes_margins = False
    #: Whether ``y`` may hold several targets, shape (n_samples, k), with predictions of
    #: that shape (the pointwise metrics: the weighted mean over every row and target).
    takes_targets = False

    def for_training(self, params):
        """The metric as a training with validated ``params`` evaluates it (the metrics
        whose definition depends on the objective's parameters take them from there,
        as XGBoost's ``aft-nloglik``); ``self`` for the others."""
        return self

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
        y = _as_labels(xp, y, self.takes_label_bounds, self.takes_targets)
        return float(self._evaluate(xp, y, pred, weight, group))

    def _evaluate(self, xp, y, pred, weight, group):
        """Compute the metric; ``y`` is already a checked float64 array."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


class _PointwiseMetric(Metric):
    """Weighted mean of a per-row loss of one-dimensional predictions; for several
    targets (``y`` and ``pred`` of shape (n_samples, k)) the weighted mean over every
    row and target (XGBoost's), the rows' entries in row-major order, each with its
    row's weight."""

    takes_targets = True

    def _evaluate(self, xp, y, pred, weight, group):
        n_samples = y.shape[0]
        if y.ndim == 2:  # several targets: one entry per row and target
            pred = xp.asarray(pred, dtype=Y_DTYPE)
            if pred.shape != y.shape:
                raise ValueError(
                    f"pred must have shape {y.shape} to match y (several targets), got "
                    f"shape {pred.shape}; interval labels (label_lower_bound / "
                    f"label_upper_bound): only the survival:aft metrics take them "
                    f"(aft-nloglik, interval-regression-accuracy)"
                )
            weight = _as_sample_weight(xp, weight, n_samples)
            n_targets = y.shape[1]
            y, pred = y.reshape(-1), pred.reshape(-1)
            weight = None if weight is None else xp.repeat(weight, n_targets)
            n_samples = y.shape[0]
        pred = _as_single_output_predictions(xp, pred, n_samples)
        weight = _as_sample_weight(xp, weight, n_samples)
        mean_loss = reproducible_mean(xp, self._pointwise_loss(xp, y, pred), weight)
        return self._finalize(xp, mean_loss)

    def _pointwise_loss(self, xp, y, pred):
        """Per-row loss, ndarray of shape (n_samples,)."""
        raise NotImplementedError

    def _finalize(self, xp, mean_loss):
        """Map the weighted mean loss to the reported value (identity)."""
        return mean_loss


class _LevelsMetric(Metric):
    """A loss at one level, or the mean of one loss per level of several (``pinball``,
    ``expectile``): ``name@a`` on predictions of shape (n_samples,), ``name@a,b,...`` on
    predictions of shape (n_samples, n_levels), column ``j`` at level ``j``; the weighted
    mean of each column's per-row loss, then their sum in column order divided by the
    number of levels.

    Parameters
    ----------
    levels : float or sequence of float
        In (0, 1), increasing.
    """

    base_name = None
    default_level = 0.5

    def __init__(self, levels=None):
        levels = self.default_level if levels is None else levels
        levels = tuple(float(v) for v in np.atleast_1d(levels))
        if not levels or not all(0.0 < v < 1.0 for v in levels):
            raise ValueError(
                f"{self.base_name} levels must satisfy 0 < alpha < 1, got {list(levels)}"
            )
        if any(b <= a for a, b in zip(levels, levels[1:])):
            raise ValueError(f"{self.base_name} levels must increase, got {list(levels)}")
        self.levels = levels
        self.name = metric_name(self.base_name, levels[0] if len(levels) == 1 else levels)

    def _evaluate(self, xp, y, pred, weight, group):
        n_samples, n_levels = y.shape[0], len(self.levels)
        weight = _as_sample_weight(xp, weight, n_samples)
        if n_levels == 1:
            pred = _as_single_output_predictions(xp, pred, n_samples)
            return reproducible_mean(xp, self._level_loss(xp, y, pred, self.levels[0]), weight)
        pred = xp.asarray(pred, dtype=np.float64)
        if pred.shape != (n_samples, n_levels):
            raise ValueError(
                f"metric {self.name!r}: predictions must have shape {(n_samples, n_levels)} "
                f"(one column per level), got {pred.shape}"
            )
        total = 0.0
        for column, level in enumerate(self.levels):
            loss = self._level_loss(xp, y, xp.ascontiguousarray(pred[:, column]), level)
            total += float(reproducible_mean(xp, loss, weight))
        return total / n_levels

    def _level_loss(self, xp, y, pred, level):
        """Per-row loss at ``level``, shape (n_samples,)."""
        raise NotImplementedError
