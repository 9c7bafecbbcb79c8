"""Accelerated failure time (AFT): the noise distributions, the loss and its derivatives
(docs/DESIGN.md, "Survival"), shared by ``survival:aft`` and ``aft-nloglik``.

The model: ``log T = F(x) + sigma * Z`` with ``Z`` of a standard normal, logistic or
extreme-value (Gumbel minimum) distribution, ``F`` the margin and ``sigma``
``aft_loss_distribution_scale``. A row's label is an interval ``[lower, upper]`` of
survival time: ``lower == upper`` an observed time, ``upper = inf`` right-censored,
``lower = 0`` left-censored, otherwise interval-censored. With ``z = (log t - F) /
sigma``, the loss is ``-log(pdf(z) / (sigma * t))`` for an observed time and ``-log(cdf(z_u)
- cdf(z_l))`` for an interval.

Everything below is XGBoost's ``AFTLoss`` and its three distributions
(``survival_util.h``, ``probability_distribution.h``), written from their definitions
operation for operation, so that a model trained here and one trained by XGBoost see the
same gradients: the same branches (censoring type), the same limits where a denominator
underflows (``GetLimitGradAtInfPred`` / ``GetLimitHessAtInfPred``: the gradient's and
hessian's limits as the margin goes to +-inf), the same clipping (gradients to [-15, 15],
hessians to [1e-16, 15]) and the same regularisation of the loss (``max(., 1e-12)`` under
the logarithm). The differences are the arithmetic's, not the formulas': ``exp``,
``log`` and ``erf`` are :mod:`gpuboost.core.strict_math`'s (the same bits on every
machine, where XGBoost uses the platform's), and everything is float64 (XGBoost stores
labels, predictions and gradients as float32). ``sigma`` is rounded to float32 first, as
XGBoost keeps the parameter.

Everything runs vectorized on the host (NumPy), in a fixed sequence of operations, so
every backend gets the same bits; as for ``survival:cox``.
"""

import math

import numpy as np

from . import strict_math

__all__ = [
    "AFT_DISTRIBUTIONS",
    "aft_sigma",
    "aft_loss",
    "aft_gradients",
    "MIN_GRADIENT",
    "MAX_GRADIENT",
    "MIN_HESSIAN",
    "MAX_HESSIAN",
    "DENOMINATOR_EPS",
    "SQRT2",
    "SQRT_2PI",
]

#: The noise distributions (``aft_loss_distribution``).
AFT_DISTRIBUTIONS = ("normal", "logistic", "extreme")
#: XGBoost's clipping of gradients and hessians, and its floor of denominators and of
#: the probability under the loss's logarithm.
MIN_GRADIENT, MAX_GRADIENT = -15.0, 15.0
MIN_HESSIAN, MAX_HESSIAN = 1e-16, 15.0
DENOMINATOR_EPS = 1e-12
#: sqrt(2) and sqrt(2 pi) as XGBoost computes them: the correctly rounded square roots
#: of 2.0 and of 2.0 * (pi rounded) (IEEE square roots: the same everywhere).
SQRT2 = math.sqrt(2.0)
SQRT_2PI = math.sqrt(2.0 * math.pi)

# Censoring types, in XGBoost's order.
_UNCENSORED, _RIGHT, _LEFT, _INTERVAL = 0, 1, 2, 3


def aft_sigma(scale):
    """``aft_loss_distribution_scale`` as XGBoost uses it: rounded to float32."""
    return float(np.float32(scale))


def _exp(x):
    return strict_math.exp(np, x)


# ---- the three distributions: (pdf, cdf, d pdf / dz, d2 pdf / dz2) -------------------
def _normal(z):
    pdf = _exp(-z * z / 2.0) / SQRT_2PI
    cdf = 0.5 * (1.0 + strict_math.erf(np, z / SQRT2))
    return pdf, cdf, -z * pdf, (z * z - 1.0) * pdf


def _logistic(z):
    w = _exp(z)
    one_plus_w = 1.0 + w
    w_inf = np.isinf(w)
    w2_inf = w_inf | np.isinf(w * w)
    pdf = np.where(w2_inf, 0.0, w / (one_plus_w * one_plus_w))
    cdf = np.where(w_inf, 1.0, w / one_plus_w)
    grad = np.where(w_inf, 0.0, pdf * (1.0 - w) / one_plus_w)
    hess = np.where(w2_inf, 0.0, pdf * (w * w - 4.0 * w + 1.0) / (one_plus_w * one_plus_w))
    return pdf, cdf, grad, hess


def _extreme(z):
    w = _exp(z)
    w_inf = np.isinf(w)
    pdf = np.where(w_inf, 0.0, w * _exp(-w))
    cdf = 1.0 - _exp(-w)
    grad = np.where(w_inf, 0.0, (1.0 - w) * pdf)
    hess = np.where(w_inf | np.isinf(w * w), 0.0, (w * w - 3.0 * w + 1.0) * pdf)
    return pdf, cdf, grad, hess


_DISTRIBUTIONS = {"normal": _normal, "logistic": _logistic, "extreme": _extreme}


def _limits(distribution, censoring, positive, sigma):
    """XGBoost's ``GetLimitGradAtInfPred`` and ``GetLimitHessAtInfPred``: the gradient's
    and hessian's limits where the denominator underflowed (``positive``: the sign of
    the z-score, ``z > 0`` or ``z_u > 0 or z_l > 0``)."""
    right, left = censoring == _RIGHT, censoring == _LEFT
    inv_sigma, inv_sigma2 = 1.0 / sigma, 1.0 / (sigma * sigma)
    if distribution == "normal":
        grad_low, grad_high = MIN_GRADIENT, MAX_GRADIENT
    else:
        grad_low = -inv_sigma if distribution == "logistic" else MIN_GRADIENT
        grad_high = inv_sigma
    grad = np.where(positive, grad_low, grad_high)
    grad = np.where(right & ~positive, 0.0, grad)
    grad = np.where(left & positive, 0.0, grad)
    if distribution == "normal":
        hess = np.full(censoring.shape, inv_sigma2)
        hess = np.where(right & ~positive, MIN_HESSIAN, hess)
        hess = np.where(left & positive, MIN_HESSIAN, hess)
    elif distribution == "logistic":
        hess = np.full(censoring.shape, MIN_HESSIAN)
    else:
        hess = np.where(positive & ~left, MAX_HESSIAN, MIN_HESSIAN)
    return grad, hess


def _terms(bounds, margin, distribution, sigma):
    """The pieces of XGBoost's loss, gradient and hessian for every row at once."""
    lower, upper = bounds[:, 0], bounds[:, 1]
    pdf_of = _DISTRIBUTIONS[distribution]
    log_lower = strict_math.log(np, lower)
    log_upper = strict_math.log(np, upper)
    uncensored = lower == upper
    right = np.isinf(upper)
    left = lower <= 0.0
    # z of the observed times, and of each uncensored end of an interval (XGBoost sets
    # z = 0 at a censored end); the distribution evaluated once, on the z-scores used.
    z = (log_lower - margin) / sigma
    z_u = np.where(right, 0.0, (log_upper - margin) / sigma)
    z_l = np.where(left, 0.0, (log_lower - margin) / sigma)
    used = (uncensored, ~uncensored & ~right, ~uncensored & ~left)
    parts = [np.zeros((4, len(lower))) for _ in used]
    values = pdf_of(np.concatenate([score[rows] for score, rows in zip((z, z_u, z_l), used)]))
    start = 0
    for part, rows in zip(parts, used):
        count = int(rows.sum())
        for k in range(4):
            part[k][rows] = values[k][start : start + count]
        start += count
    (pdf, _, grad_pdf, hess_pdf), (pdf_u, cdf_u, grad_u, _), (pdf_l, cdf_l, grad_l, _) = parts
    censoring = np.where(left, _LEFT, np.where(right, _RIGHT, _INTERVAL))
    return {
        "lower": lower,
        "uncensored": uncensored,
        "pdf": pdf,
        "grad_pdf": grad_pdf,
        "hess_pdf": hess_pdf,
        "pdf_u": np.where(right, 0.0, pdf_u),
        "cdf_u": np.where(right, 1.0, cdf_u),
        "grad_u": np.where(right, 0.0, grad_u),
        "pdf_l": np.where(left, 0.0, pdf_l),
        "cdf_l": np.where(left, 0.0, cdf_l),
        "grad_l": np.where(left, 0.0, grad_l),
        "censoring": np.where(uncensored, _UNCENSORED, censoring),
        "positive": np.where(uncensored, z > 0.0, (z_u > 0.0) | (z_l > 0.0)),
    }


def aft_loss(bounds, margin, distribution="normal", sigma=1.0):
    """XGBoost's AFT loss of every row (unweighted).

    Parameters
    ----------
    bounds : ndarray of shape (n, 2), float64
        ``[lower, upper]`` survival-time intervals (validated labels).
    margin : ndarray of shape (n,), float64
        Predicted log survival times.
    distribution : {'normal', 'logistic', 'extreme'}
    sigma : float
        The scale, already as :func:`aft_sigma` gives it.

    Returns
    -------
    ndarray of shape (n,), float64
    """
    with np.errstate(all="ignore"):
        t = _terms(bounds, margin, distribution, sigma)
        observed = np.fmax(t["pdf"] / (sigma * t["lower"]), DENOMINATOR_EPS)
        interval = np.fmax(t["cdf_u"] - t["cdf_l"], DENOMINATOR_EPS)
        return -strict_math.log(np, np.where(t["uncensored"], observed, interval))


def aft_gradients(bounds, margin, distribution="normal", sigma=1.0):
    """XGBoost's AFT gradient and hessian of every row (unweighted).

    Parameters
    ----------
    bounds, margin, distribution, sigma
        As :func:`aft_loss`.

    Returns
    -------
    grad, hess : ndarrays of shape (n,), float64
    """
    with np.errstate(all="ignore"):
        t = _terms(bounds, margin, distribution, sigma)
        uncensored = t["uncensored"]
        pdf, grad_pdf, hess_pdf = t["pdf"], t["grad_pdf"], t["hess_pdf"]
        cdf_diff = t["cdf_u"] - t["cdf_l"]
        pdf_diff = t["pdf_u"] - t["pdf_l"]
        grad_diff = t["grad_u"] - t["grad_l"]
        # Gradient: numerator / denominator.
        numerator = np.where(uncensored, grad_pdf, pdf_diff)
        denominator = np.where(uncensored, sigma * pdf, sigma * cdf_diff)
        grad = numerator / denominator
        # Hessian (an interval's denominator is the gradient's, squared).
        numerator_h = np.where(
            uncensored,
            -(pdf * hess_pdf - grad_pdf * grad_pdf),
            -(cdf_diff * grad_diff - pdf_diff * pdf_diff),
        )
        denominator_h = np.where(uncensored, sigma * sigma * pdf * pdf, denominator * denominator)
        hess = numerator_h / denominator_h
        grad_limit, hess_limit = _limits(distribution, t["censoring"], t["positive"], sigma)
        grad = np.where((denominator < DENOMINATOR_EPS) & ~np.isfinite(grad), grad_limit, grad)
        hess = np.where((denominator_h < DENOMINATOR_EPS) & ~np.isfinite(hess), hess_limit, hess)
        return np.clip(grad, MIN_GRADIENT, MAX_GRADIENT), np.clip(hess, MIN_HESSIAN, MAX_HESSIAN)
