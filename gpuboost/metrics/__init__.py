"""Evaluation metrics, by family, and the registry that builds them by name.

* :mod:`.base`: the :class:`Metric` interface and the shared input checks;
* :mod:`.pointwise`, :mod:`.classification`, :mod:`.ranking`: the metrics;
* :mod:`.registry`: :func:`get_metric`, :func:`evaluate` and the name table.
"""

from .base import PARAMETER_SEPARATOR, Metric
from .classification import (
    DEFAULT_ERROR_THRESHOLD,
    LOGLOSS_EPS,
    ROCAUC,
    BinaryError,
    LogLoss,
    MultiError,
    MultiLogLoss,
)
from .pointwise import (
    DEFAULT_PINBALL_ALPHA,
    DEFAULT_TWEEDIE_VARIANCE_POWER,
    MIN_EXPECTED_VALUE,
    TWEEDIE_VARIANCE_POWER_RANGE,
    ExpectileLoss,
    GammaNegLogLik,
    MeanAbsoluteError,
    PinballLoss,
    PoissonNegLogLik,
    RootMeanSquaredError,
    TweedieNegLogLik,
)
from .ranking import NDCG, MeanAveragePrecision
from .registry import evaluate, get_metric, valid_metric_names
from .survival import (
    AFTNegLogLik,
    ConcordanceIndex,
    CoxNegLogLik,
    IntervalRegressionAccuracy,
)

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
    "ExpectileLoss",
    "NDCG",
    "MeanAveragePrecision",
    "CoxNegLogLik",
    "ConcordanceIndex",
    "AFTNegLogLik",
    "IntervalRegressionAccuracy",
    "get_metric",
    "evaluate",
    "valid_metric_names",
    "LOGLOSS_EPS",
    "MIN_EXPECTED_VALUE",
    "DEFAULT_ERROR_THRESHOLD",
    "DEFAULT_TWEEDIE_VARIANCE_POWER",
    "DEFAULT_PINBALL_ALPHA",
    "TWEEDIE_VARIANCE_POWER_RANGE",
    "PARAMETER_SEPARATOR",
]
