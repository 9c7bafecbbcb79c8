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

from ...core.aft import (
    AFT_DISTRIBUTIONS,
    DENOMINATOR_EPS,
    MAX_GRADIENT,
    MAX_HESSIAN,
    MIN_GRADIENT,
    MIN_HESSIAN,
    SQRT2,
    SQRT_2PI,
)
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
from ...objectives.survival import AFTLoss
from .jit import kernel, prange, sized
from .recycled import recycled_empty
from .scalar import clip, maximum, sign
from .strict_math import erf, exp, log

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


# ---- survival:aft (gpuboost.core.aft, element by element) ----------------------------
@kernel
def _aft_distribution(distribution, z):
    """(pdf, cdf, d pdf / dz, d2 pdf / dz2) of the standard normal (0), logistic (1) or
    extreme-value (2) distribution at ``z``, as ``core.aft``'s vectorized functions."""
    if distribution == 0:
        pdf = exp(-z * z / 2.0) / SQRT_2PI
        cdf = 0.5 * (1.0 + erf(z / SQRT2))
        return pdf, cdf, -z * pdf, (z * z - 1.0) * pdf
    w = exp(z)
    w_inf = np.isinf(w)
    w2_inf = w_inf or np.isinf(w * w)
    if distribution == 1:
        one_plus_w = 1.0 + w
        pdf = 0.0 if w2_inf else w / (one_plus_w * one_plus_w)
        cdf = 1.0 if w_inf else w / one_plus_w
        grad = 0.0 if w_inf else pdf * (1.0 - w) / one_plus_w
        hess = 0.0 if w2_inf else pdf * (w * w - 4.0 * w + 1.0) / (one_plus_w * one_plus_w)
        return pdf, cdf, grad, hess
    pdf = 0.0 if w_inf else w * exp(-w)
    cdf = 1.0 - exp(-w)
    grad = 0.0 if w_inf else (1.0 - w) * pdf
    hess = 0.0 if w2_inf else (w * w - 3.0 * w + 1.0) * pdf
    return pdf, cdf, grad, hess


@kernel
def _aft_limits(distribution, right, left, positive, sigma):
    """``core.aft._limits`` for one row."""
    inv_sigma = 1.0 / sigma
    if distribution == 0:
        low, high = MIN_GRADIENT, MAX_GRADIENT
    else:
        low = -inv_sigma if distribution == 1 else MIN_GRADIENT
        high = inv_sigma
    grad = low if positive else high
    if (right and not positive) or (left and positive):
        grad = 0.0
    if distribution == 0:
        hess = 1.0 / (sigma * sigma)
        if (right and not positive) or (left and positive):
            hess = MIN_HESSIAN
    elif distribution == 1:
        hess = MIN_HESSIAN
    else:
        hess = MAX_HESSIAN if positive and not left else MIN_HESSIAN
    return grad, hess


@kernel(parallel=True)
def _aft(bounds, raw, distribution, sigma, weight, use_weight, grad, hess):
    for row in prange(raw.shape[0]):
        lower, upper, margin = bounds[row, 0], bounds[row, 1], raw[row]
        log_lower, log_upper = log(lower), log(upper)
        uncensored = lower == upper
        right = np.isinf(upper)
        left = lower <= 0.0
        z = (log_lower - margin) / sigma
        z_u = 0.0 if right else (log_upper - margin) / sigma
        z_l = 0.0 if left else (log_lower - margin) / sigma
        pdf = grad_pdf = hess_pdf = 0.0
        pdf_u = cdf_u = grad_u = pdf_l = cdf_l = grad_l = 0.0
        if uncensored:
            pdf, _, grad_pdf, hess_pdf = _aft_distribution(distribution, z)
            positive = z > 0.0
        else:
            if not right:
                pdf_u, cdf_u, grad_u, _ = _aft_distribution(distribution, z_u)
            if not left:
                pdf_l, cdf_l, grad_l, _ = _aft_distribution(distribution, z_l)
            positive = z_u > 0.0 or z_l > 0.0
        if right:
            pdf_u, cdf_u, grad_u = 0.0, 1.0, 0.0
        cdf_diff = cdf_u - cdf_l
        pdf_diff = pdf_u - pdf_l
        grad_diff = grad_u - grad_l
        if uncensored:
            numerator, denominator = grad_pdf, sigma * pdf
            numerator_h = -(pdf * hess_pdf - grad_pdf * grad_pdf)
            denominator_h = sigma * sigma * pdf * pdf
        else:
            numerator, denominator = pdf_diff, sigma * cdf_diff
            numerator_h = -(cdf_diff * grad_diff - pdf_diff * pdf_diff)
            denominator_h = denominator * denominator
        g = numerator / denominator
        h = numerator_h / denominator_h
        # The censoring type as core.aft orders it: observed, else left, else right.
        left_type = left and not uncensored
        right_type = right and not uncensored and not left
        grad_limit, hess_limit = _aft_limits(distribution, right_type, left_type, positive, sigma)
        if denominator < DENOMINATOR_EPS and not np.isfinite(g):
            g = grad_limit
        if denominator_h < DENOMINATOR_EPS and not np.isfinite(h):
            h = hess_limit
        g = clip(g, MIN_GRADIENT, MAX_GRADIENT)
        h = clip(h, MIN_HESSIAN, MAX_HESSIAN)
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
    elif kind is AFTLoss:
        distribution = AFT_DISTRIBUTIONS.index(objective.aft_loss_distribution)
        sized(_aft)(y, raw, distribution, objective.sigma, *weight_args, grad, hess)
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
    AFTLoss,
)


def gradients(objective, y, raw, weight):
    """``objective.gradients(numpy, y, raw, weight)``, compiled; None when the objective
    has no kernel (ranking, custom, subclasses).

    Several targets (``objective.n_targets > 1``, labels and margins (n_rows, k)): the
    objectives that take them are elementwise, so the kernel runs over the flattened
    arrays, each row's weight repeated for its k targets (the reference's operations on
    every element, the same bits).

    Parameters
    ----------
    objective : gpuboost.objectives.Objective
    y : ndarray of shape (n_rows,) or (n_rows, k), float64
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
    shape = raw.shape
    if objective.n_targets > 1:
        if not objective.supports_targets or y.shape != shape:
            return None
        y, raw = y.reshape(-1), raw.reshape(-1)
        if use_weight:
            weight = np.repeat(weight, shape[1])
    # Recycled: fresh arrays of megabytes every round cost more in page faults than the
    # kernel (11 ms against 0.5 ms for 150k rows x 4 targets).
    grad = recycled_empty(raw.shape, Y_DTYPE)
    hess = recycled_empty(raw.shape, Y_DTYPE)
    _pointwise(objective, y, raw, (weight, use_weight), grad, hess)
    return grad.reshape(shape), hess.reshape(shape)
