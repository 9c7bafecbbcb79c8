"""Gradients and hessians of the built-in pointwise objectives, compiled (the
definitions, and the reference, are the objectives' ``_gradients`` in
:mod:`gpuboost.objectives`).

Each kernel fuses an objective's arithmetic, its ``exp`` and the sample weights into one
pass over the rows, in the reference's float64 operation order. ``exp`` is
:mod:`gpuboost.backends.cpu.strict_math`'s, the compiled twin of the references'
:func:`gpuboost.core.strict_math.exp` (the same bits on every machine; docs/DESIGN.md,
"Platform-independent arithmetic"). Ranking and custom objectives keep their NumPy code
(:func:`gradients` returns None for them).
"""

import numpy as np

from ...core.dtypes import Y_DTYPE
from ...objectives.classification import (
    HESSIAN_FLOOR,
    MULTICLASS_HESSIAN_FACTOR,
    ExponentialLoss,
    LogisticLoss,
    SoftmaxClassLoss,
    SoftmaxLoss,
)
from ...objectives.regression import (
    AbsoluteError,
    GammaLoss,
    HuberError,
    PoissonLoss,
    QuantileError,
    SquaredError,
    TweedieLoss,
)
from .jit import kernel, prange, sized
from .scalar import clip, maximum, sign
from .strict_math import exp

__all__ = ["gradients", "COMPILED_OBJECTIVES"]


@kernel
def _weighted(grad, hess, weight, use_weight, row):
    if use_weight:
        return grad * weight[row], hess * weight[row]
    return grad, hess


# ---- identity link -----------------------------------------------------------------
@kernel(parallel=True)
def _squared_error(y, raw, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        grad[row], hess[row] = _weighted(raw[row] - y[row], 1.0, weight, use_weight, row)


@kernel(parallel=True)
def _absolute_error(y, raw, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        grad[row], hess[row] = _weighted(sign(raw[row] - y[row]), 1.0, weight, use_weight, row)


@kernel(parallel=True)
def _huber(y, raw, delta, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        residual = clip(raw[row] - y[row], -delta, delta)
        grad[row], hess[row] = _weighted(residual, 1.0, weight, use_weight, row)


@kernel(parallel=True)
def _quantile(y, raw, above, below, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        value = above if raw[row] >= y[row] else below
        grad[row], hess[row] = _weighted(value, 1.0, weight, use_weight, row)


# ---- sigmoid and softmax -----------------------------------------------------------
@kernel(parallel=True)
def _logistic(y, raw, weight, use_weight, grad, hess):
    """gpuboost.objectives.base._sigmoid (``e = exp(-|raw|)``) and LogisticLoss."""
    for row in prange(y.shape[0]):
        e = exp(-abs(raw[row]))
        one_plus_e = 1.0 + e
        probability = 1.0 / one_plus_e if raw[row] >= 0 else e / one_plus_e
        h = maximum(probability * (1.0 - probability), HESSIAN_FLOOR)
        grad[row], hess[row] = _weighted(probability - y[row], h, weight, use_weight, row)


@kernel(parallel=True)
def _softmax_terms(raw, out):
    """``out = exp(raw - row max)`` (gpuboost.objectives.base._softmax)."""
    for row in prange(raw.shape[0]):
        largest = raw[row, 0]
        for k in range(1, raw.shape[1]):
            value = raw[row, k]
            # np.max: NaN propagates.
            if value > largest or value != value:
                largest = value
                if value != value:
                    break
        for k in range(raw.shape[1]):
            out[row, k] = exp(raw[row, k] - largest)


@kernel(parallel=True)
def _softmax(y, exp_shifted, weight, use_weight, grad, hess):
    """gpuboost.objectives.base._softmax and SoftmaxLoss (classes summed in order)."""
    n_classes = exp_shifted.shape[1]
    for row in prange(y.shape[0]):
        row_sum = exp_shifted[row, 0]
        for k in range(1, n_classes):
            row_sum = row_sum + exp_shifted[row, k]
        for k in range(n_classes):
            probability = exp_shifted[row, k] / row_sum
            one_hot = 1.0 if y[row] == k else 0.0
            h = maximum(
                MULTICLASS_HESSIAN_FACTOR * probability * (1.0 - probability), HESSIAN_FLOOR
            )
            grad[row, k], hess[row, k] = _weighted(
                probability - one_hot, h, weight, use_weight, row
            )


# ---- exponential terms -------------------------------------------------------------
@kernel(parallel=True)
def _exponential(y, raw, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        e = exp(-(2.0 * y[row] - 1.0) * raw[row])
        grad[row], hess[row] = _weighted(-(2.0 * y[row] - 1.0) * e, e, weight, use_weight, row)


@kernel(parallel=True)
def _poisson(y, raw, max_delta_step, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        grad[row], hess[row] = _weighted(
            exp(raw[row]) - y[row], exp(raw[row] + max_delta_step), weight, use_weight, row
        )


@kernel(parallel=True)
def _gamma(y, raw, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        scaled_label = y[row] * exp(-raw[row])
        grad[row], hess[row] = _weighted(1.0 - scaled_label, scaled_label, weight, use_weight, row)


@kernel(parallel=True)
def _tweedie(y, raw, one_minus_rho, two_minus_rho, weight, use_weight, grad, hess):
    for row in prange(y.shape[0]):
        exp_one = exp(one_minus_rho * raw[row])
        exp_two = exp(two_minus_rho * raw[row])
        g = -y[row] * exp_one + exp_two
        h = -y[row] * one_minus_rho * exp_one + two_minus_rho * exp_two
        grad[row], hess[row] = _weighted(g, h, weight, use_weight, row)


# ---- dispatch ------------------------------------------------------------------------
def _pointwise(objective, y, raw, weight_args, grad, hess):
    kind = type(objective)
    if kind is SquaredError:
        sized(_squared_error)(y, raw, *weight_args, grad, hess)
    elif kind is AbsoluteError:
        sized(_absolute_error)(y, raw, *weight_args, grad, hess)
    elif kind is HuberError:
        sized(_huber)(y, raw, float(objective.round_delta), *weight_args, grad, hess)
    elif kind is QuantileError:
        alpha = objective.quantile_alpha
        sized(_quantile)(y, raw, 1.0 - alpha, -alpha, *weight_args, grad, hess)
    elif kind is LogisticLoss:
        sized(_logistic)(y, raw, *weight_args, grad, hess)
    elif kind is ExponentialLoss:
        sized(_exponential)(y, raw, *weight_args, grad, hess)
    elif kind is PoissonLoss:
        sized(_poisson)(y, raw, float(objective.max_delta_step), *weight_args, grad, hess)
    elif kind is GammaLoss:
        sized(_gamma)(y, raw, *weight_args, grad, hess)
    elif kind is TweedieLoss:
        rho = objective.tweedie_variance_power
        sized(_tweedie)(y, raw, 1.0 - rho, 2.0 - rho, *weight_args, grad, hess)
    elif kind in (SoftmaxLoss, SoftmaxClassLoss):
        exp_shifted = np.empty_like(raw)
        sized(_softmax_terms)(raw, exp_shifted)
        sized(_softmax)(y, exp_shifted, *weight_args, grad, hess)
    else:
        return False
    return True


#: The objective classes with a compiled kernel (exact classes, not subclasses).
COMPILED_OBJECTIVES = (
    SquaredError,
    AbsoluteError,
    HuberError,
    QuantileError,
    LogisticLoss,
    ExponentialLoss,
    PoissonLoss,
    GammaLoss,
    TweedieLoss,
    SoftmaxLoss,
    SoftmaxClassLoss,
)


def gradients(objective, y, raw, weight):
    """``objective.gradients(numpy, y, raw, weight)``, compiled; None when the objective
    has no kernel (ranking, custom, subclasses).

    Parameters
    ----------
    objective : gpuboost.objectives.Objective
    y : ndarray of shape (n_rows,), float64
    raw : ndarray of shape (n_rows,) or (n_rows, n_outputs), float64
    weight : ndarray of shape (n_rows,), float64, or None

    Returns
    -------
    (grad, hess) : ndarrays of the shape of ``raw``, float64, or None
    """
    if type(objective) not in COMPILED_OBJECTIVES:
        return None
    y = np.ascontiguousarray(y, dtype=Y_DTYPE)
    raw = np.ascontiguousarray(raw, dtype=Y_DTYPE)
    objective._check_raw_shape(y, raw)
    use_weight = weight is not None
    weight = (
        np.ascontiguousarray(weight, dtype=Y_DTYPE) if use_weight else np.ones(1, dtype=Y_DTYPE)
    )
    grad = np.empty_like(raw)
    hess = np.empty_like(raw)
    _pointwise(objective, y, raw, (weight, use_weight), grad, hess)
    return grad, hess
