"""Training objectives, by family, and the registry that builds them by name.

* :mod:`.base`: the :class:`Objective` interface, link mixins, shared helpers;
* :mod:`.regression`, :mod:`.classification`, :mod:`.ranking`: the built-in
  objectives;
* :mod:`.custom`: :class:`CustomObjective`, a user callable;
* :mod:`.registry`: :func:`get_objective` and :data:`OBJECTIVES`.
"""

from ..core.quantile import weighted_quantile
from .base import LOG_LINK_MEAN_FLOOR, Objective
from .classification import (
    HESSIAN_FLOOR,
    MIN_NUM_CLASS,
    MULTICLASS_HESSIAN_FACTOR,
    PROBABILITY_CLIP,
    ExponentialLoss,
    LogisticLoss,
    SoftmaxClassLoss,
    SoftmaxLoss,
    binary_class_weights,
)
from .custom import CUSTOM_OBJECTIVE_NAME, CustomObjective
from .ranking import (
    DEFAULT_TRUNCATION_LEVEL,
    RANK_SIGMOID,
    RANKING_OBJECTIVE_CLASSES,
    MAPLambdaRank,
    NDCGLambdaRank,
    PairwiseRank,
    lambdarank_gradients_naive,
)
from .registry import OBJECTIVES, get_objective
from .regression import (
    DEFAULT_HUBER_DELTA,
    DEFAULT_QUANTILE_ALPHA,
    DEFAULT_TWEEDIE_VARIANCE_POWER,
    POISSON_MAX_DELTA_STEP,
    TWEEDIE_VARIANCE_POWER_RANGE,
    AbsoluteError,
    ExpectileError,
    GammaLoss,
    HuberError,
    PoissonLoss,
    QuantileError,
    QuantileLevelsError,
    SquaredError,
    TweedieLoss,
)
from .survival import AFTLoss, CoxLoss

__all__ = [
    # interface and registry
    "Objective",
    "get_objective",
    "OBJECTIVES",
    "CustomObjective",
    "CUSTOM_OBJECTIVE_NAME",
    # regression
    "SquaredError",
    "AbsoluteError",
    "HuberError",
    "QuantileError",
    "QuantileLevelsError",
    "CoxLoss",
    "AFTLoss",
    "ExpectileError",
    "PoissonLoss",
    "GammaLoss",
    "TweedieLoss",
    # classification
    "LogisticLoss",
    "ExponentialLoss",
    "SoftmaxLoss",
    "SoftmaxClassLoss",
    "binary_class_weights",
    # ranking
    "NDCGLambdaRank",
    "MAPLambdaRank",
    "PairwiseRank",
    "RANKING_OBJECTIVE_CLASSES",
    "lambdarank_gradients_naive",
    # constants
    "HESSIAN_FLOOR",
    "MULTICLASS_HESSIAN_FACTOR",
    "POISSON_MAX_DELTA_STEP",
    "PROBABILITY_CLIP",
    "LOG_LINK_MEAN_FLOOR",
    "DEFAULT_HUBER_DELTA",
    "DEFAULT_QUANTILE_ALPHA",
    "DEFAULT_TWEEDIE_VARIANCE_POWER",
    "TWEEDIE_VARIANCE_POWER_RANGE",
    "MIN_NUM_CLASS",
    "DEFAULT_TRUNCATION_LEVEL",
    "RANK_SIGMOID",
    # moved to gpuboost.core.quantile; re-exported under its old objective-module name
    "weighted_quantile",
]
