"""Objectives by name: :func:`get_objective` and the list :data:`OBJECTIVES`.

Each objective class declares its name (``cls.name``) and builds itself from
validated parameters (``cls.from_params(params)``); this module only maps names
to the classes of the family modules.
"""

from .base import Objective
from .classification import ExponentialLoss, LogisticLoss, SoftmaxClassLoss, SoftmaxLoss
from .custom import CUSTOM_OBJECTIVE_NAME, CustomObjective
from .ranking import MAPLambdaRank, NDCGLambdaRank, PairwiseRank
from .regression import (
    AbsoluteError,
    ExpectileError,
    GammaLoss,
    HuberError,
    PoissonLoss,
    QuantileError,
    SquaredError,
    TweedieLoss,
)
from .survival import AFTLoss, CoxLoss

__all__ = ["get_objective", "OBJECTIVES"]

#: The built-in objective classes, in the order of :data:`OBJECTIVES`.
_OBJECTIVE_CLASSES = (
    SquaredError,
    AbsoluteError,
    HuberError,
    QuantileError,
    ExpectileError,
    LogisticLoss,
    ExponentialLoss,
    SoftmaxClassLoss,
    SoftmaxLoss,
    PoissonLoss,
    GammaLoss,
    TweedieLoss,
    NDCGLambdaRank,
    MAPLambdaRank,
    PairwiseRank,
    CoxLoss,
    AFTLoss,
)
#: name -> objective class.
_CLASS_BY_NAME = {cls.name: cls for cls in _OBJECTIVE_CLASSES}

#: Names accepted by :func:`get_objective` (a custom objective aside).
OBJECTIVES = tuple(_CLASS_BY_NAME)


def get_objective(name_or_callable, params=None):
    """Build an objective from its name (or a callable for a custom one).

    Parameters
    ----------
    name_or_callable : str, callable or Objective
        One of :data:`OBJECTIVES`; a callable ``func(raw_margin, dataset)
        -> (grad, hess)`` (wrapped in :class:`CustomObjective`); the name
        :data:`CUSTOM_OBJECTIVE_NAME`, which a saved model records for a
        callable (a :class:`CustomObjective` without a function); or an
        :class:`Objective` instance, returned unchanged.
    params : dict or None
        Already-validated parameter values, passed to the class's
        ``from_params``. Keys used: ``num_class`` (``multi:*``, and the number
        of outputs of a custom objective when greater than 1),
        ``huber_delta``, ``huber_alpha``, ``quantile_alpha``,
        ``tweedie_variance_power``, ``lambdarank_truncation_level``
        (``rank:*``), ``num_target`` (several targets: :meth:`Objective.with_targets`).
        Missing keys take the defaults; other keys are ignored.

    Returns
    -------
    objective : Objective

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid names) or a
        parameter is invalid for the objective.
    TypeError
        If ``name_or_callable`` is neither a string nor callable.
    """
    params = {} if params is None else params
    if isinstance(name_or_callable, Objective):
        return name_or_callable
    if isinstance(name_or_callable, str) and name_or_callable != CUSTOM_OBJECTIVE_NAME:
        objective_class = _CLASS_BY_NAME.get(name_or_callable)
        if objective_class is None:
            raise ValueError(
                f"unknown objective {name_or_callable!r}; valid objectives are: "
                f"{', '.join(OBJECTIVES)}"
            )
        return objective_class.from_params(params).with_targets(params.get("num_target", 0))
    if callable(name_or_callable) or name_or_callable == CUSTOM_OBJECTIVE_NAME:
        func = name_or_callable if callable(name_or_callable) else None
        return CustomObjective.from_params(params, func=func)
    raise TypeError(
        f"objective must be a string or a callable, got {type(name_or_callable).__name__}"
    )
