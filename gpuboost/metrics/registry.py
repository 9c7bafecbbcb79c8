"""Metrics by name: :func:`get_metric`, :func:`evaluate` and the name table.

A name may carry a parameter after ``@`` (``error@0.7``, ``ndcg@5``,
``tweedie-nloglik@1.2``); the table says which metrics take one and how the
text after ``@`` is parsed.
"""

import math

from .base import LEVEL_SEPARATOR, PARAMETER_SEPARATOR, Metric
from .classification import ROCAUC, BinaryError, LogLoss, MultiError, MultiLogLoss
from .pointwise import (
    ExpectileLoss,
    GammaNegLogLik,
    MeanAbsoluteError,
    PinballLoss,
    PoissonNegLogLik,
    RootMeanSquaredError,
    TweedieNegLogLik,
)
from .ranking import NDCG, MeanAveragePrecision
from .survival import (
    AFTNegLogLik,
    ConcordanceIndex,
    CoxNegLogLik,
    IntervalRegressionAccuracy,
)

__all__ = ["get_metric", "evaluate", "valid_metric_names"]


def _parse_float(base_name, text):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"metric '{base_name}' needs a number after '{PARAMETER_SEPARATOR}', got {text!r}"
        ) from None
    if not math.isfinite(value):
        raise ValueError(f"metric '{base_name}' needs a finite parameter, got {text!r}")
    return value


def _parse_levels(base_name, text):
    """One level (a float) or several (``a,b,...``: a tuple of floats)."""
    values = tuple(_parse_float(base_name, part) for part in text.split(LEVEL_SEPARATOR))
    return values[0] if len(values) == 1 else values


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
    "pinball": (PinballLoss, _parse_levels),
    "expectile": (ExpectileLoss, _parse_levels),
    "ndcg": (NDCG, _parse_positive_int),
    "map": (MeanAveragePrecision, _parse_positive_int),
    "cox-nloglik": (CoxNegLogLik, None),
    "c-index": (ConcordanceIndex, None),
    "aft-nloglik": (AFTNegLogLik, None),
    "interval-regression-accuracy": (IntervalRegressionAccuracy, None),
}

#: Placeholder shown for each parameterized metric in the list of valid names.
_PARAMETER_PLACEHOLDERS = {
    "error": "threshold",
    "tweedie-nloglik": "rho",
    "pinball": "alpha",
    "expectile": "alpha",
    "ndcg": "k",
    "map": "k",
}


def valid_metric_names():
    """Every accepted spelling of an ``eval_metric`` name, in the registry's order.

    Returns
    -------
    list of str
        Each metric's name and, for a metric with a parameter, its ``name@<placeholder>``
        forms (the placeholder names the parameter: threshold, rho, alpha, k).
    """
    names = []
    for base_name, (_, parser) in _METRICS.items():
        names.append(base_name)
        if parser is not None:
            placeholder = _PARAMETER_PLACEHOLDERS[base_name]
            names.append(f"{base_name}{PARAMETER_SEPARATOR}<{placeholder}>")
            if parser is _parse_levels:
                names.append(f"{base_name}{PARAMETER_SEPARATOR}<alpha>,<alpha>...")
    return names


def get_metric(name):
    """Return the metric called ``name``.

    Parameters
    ----------
    name : str
        ``rmse``, ``mae``, ``logloss``, ``error`` (threshold 0.5) or
        ``error@t``, ``auc``, ``mlogloss``, ``merror``, ``poisson-nloglik``,
        ``gamma-nloglik``, ``tweedie-nloglik`` (rho 1.5) or
        ``tweedie-nloglik@rho`` (1 <= rho < 2), ``pinball`` (alpha 0.5) or
        ``pinball@alpha`` (0 < alpha < 1; ``pinball@a,b,...`` for several levels, one
        prediction column each), ``expectile`` / ``expectile@alpha`` (likewise),
        ``ndcg`` / ``ndcg@k``, ``map`` /
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
        raise ValueError(f"unknown metric {name!r}; valid names: {', '.join(valid_metric_names())}")
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
