"""survival:aft's loss, gradient and hessian (gpuboost.core.aft) against a row-by-row
transcription of XGBoost's ``AFTLoss`` (survival_util.h, probability_distribution.h)
with the C library's exp / log / erf: equal to 1e-12 on fixed margins, every censoring
type, every distribution, the underflow limits included (issue 31)."""

import math

import numpy as np
import pytest

from gpuboost.core.aft import AFT_DISTRIBUTIONS, aft_gradients, aft_loss, aft_sigma

K_MIN_GRAD, K_MAX_GRAD, K_MIN_HESS, K_MAX_HESS, K_EPS = -15.0, 15.0, 1e-16, 15.0, 1e-12


def _pdf_cdf_grad_hess(name, z):
    if name == "normal":
        pdf = math.exp(-z * z / 2.0) / math.sqrt(2.0 * math.pi)
        cdf = 0.5 * (1 + math.erf(z / math.sqrt(2.0)))
        return pdf, cdf, -z * pdf, (z * z - 1.0) * pdf
    try:
        w = math.exp(z)
    except OverflowError:
        w = math.inf
    if name == "logistic":
        w2_inf = math.isinf(w) or math.isinf(w * w)
        pdf = 0.0 if w2_inf else w / ((1 + w) * (1 + w))
        cdf = 1.0 if math.isinf(w) else w / (1 + w)
        grad = 0.0 if math.isinf(w) else pdf * (1 - w) / (1 + w)
        hess = 0.0 if w2_inf else pdf * (w * w - 4 * w + 1) / ((1 + w) * (1 + w))
        return pdf, cdf, grad, hess
    pdf = 0.0 if math.isinf(w) else w * math.exp(-w)
    cdf = 1 - math.exp(-w)
    grad = 0.0 if math.isinf(w) else (1 - w) * pdf
    hess = 0.0 if (math.isinf(w) or math.isinf(w * w)) else (w * w - 3 * w + 1) * pdf
    return pdf, cdf, grad, hess


def _limit(name, censoring, sign, sigma, which):
    table = {
        ("normal", "grad"): {
            "unc": (K_MIN_GRAD, K_MAX_GRAD), "right": (K_MIN_GRAD, 0.0),
            "left": (0.0, K_MAX_GRAD), "int": (K_MIN_GRAD, K_MAX_GRAD),
        },
        ("normal", "hess"): {
            "unc": (1 / sigma**2, 1 / sigma**2), "right": (1 / sigma**2, K_MIN_HESS),
            "left": (K_MIN_HESS, 1 / sigma**2), "int": (1 / sigma**2, 1 / sigma**2),
        },
        ("logistic", "grad"): {
            "unc": (-1 / sigma, 1 / sigma), "right": (-1 / sigma, 0.0),
            "left": (0.0, 1 / sigma), "int": (-1 / sigma, 1 / sigma),
        },
        ("logistic", "hess"): {
            c: (K_MIN_HESS, K_MIN_HESS) for c in ("unc", "right", "left", "int")
        },
        ("extreme", "grad"): {
            "unc": (K_MIN_GRAD, 1 / sigma), "right": (K_MIN_GRAD, 0.0),
            "left": (0.0, 1 / sigma), "int": (K_MIN_GRAD, 1 / sigma),
        },
        ("extreme", "hess"): {
            "unc": (K_MAX_HESS, K_MIN_HESS), "right": (K_MAX_HESS, K_MIN_HESS),
            "left": (K_MIN_HESS, K_MIN_HESS), "int": (K_MAX_HESS, K_MIN_HESS),
        },
    }  # fmt: skip
    positive, negative = table[(name, which)][censoring]
    return positive if sign else negative


def _xgboost_row(name, lower, upper, pred, sigma):
    """(loss, grad, hess) of one row, XGBoost's branches with the C library."""
    log_lower = math.log(lower) if lower > 0 else -math.inf
    log_upper = math.log(upper) if math.isfinite(upper) else math.inf
    if lower == upper:
        z = (log_lower - pred) / sigma
        pdf, _, gpdf, hpdf = _pdf_cdf_grad_hess(name, z)
        loss = -math.log(max(pdf / (sigma * lower), K_EPS))
        censoring, sign = "unc", z > 0
        num, den = gpdf, sigma * pdf
        num_h, den_h = -(pdf * hpdf - gpdf * gpdf), sigma * sigma * pdf * pdf
    else:
        z_u = z_l = 0.0
        censoring = "int"
        if math.isinf(upper):
            pdf_u, cdf_u, g_u, censoring = 0.0, 1.0, 0.0, "right"
        else:
            z_u = (log_upper - pred) / sigma
            pdf_u, cdf_u, g_u, _ = _pdf_cdf_grad_hess(name, z_u)
        if lower <= 0.0:
            pdf_l, cdf_l, g_l, censoring = 0.0, 0.0, 0.0, "left"
        else:
            z_l = (log_lower - pred) / sigma
            pdf_l, cdf_l, g_l, _ = _pdf_cdf_grad_hess(name, z_l)
        loss = -math.log(max(cdf_u - cdf_l, K_EPS))
        sign = z_u > 0 or z_l > 0
        num, den = pdf_u - pdf_l, sigma * (cdf_u - cdf_l)
        cdf_diff, pdf_diff, grad_diff = cdf_u - cdf_l, pdf_u - pdf_l, g_u - g_l
        num_h = -(cdf_diff * grad_diff - pdf_diff * pdf_diff)
        den_h = (sigma * cdf_diff) ** 2

    def ratio(n, d):
        if d == 0.0:
            return math.nan if n == 0.0 else math.copysign(math.inf, n)
        return n / d

    grad, hess = ratio(num, den), ratio(num_h, den_h)
    if den < K_EPS and not math.isfinite(grad):
        grad = _limit(name, censoring, sign, sigma, "grad")
    if den_h < K_EPS and not math.isfinite(hess):
        hess = _limit(name, censoring, sign, sigma, "hess")
    return loss, min(max(grad, K_MIN_GRAD), K_MAX_GRAD), min(max(hess, K_MIN_HESS), K_MAX_HESS)


def _bounds_and_margins(rng, n):
    time = np.exp(rng.normal(1.0, 1.0, n))
    kind = rng.integers(0, 4, n)  # observed, right-, left-, interval-censored
    lower = np.where(kind == 2, 0.0, time)
    widened = time * np.exp(rng.uniform(0.1, 2, n))
    upper = np.where(kind == 1, np.inf, np.where(kind == 3, widened, time))
    upper = np.where(kind == 2, time, upper)
    margin = rng.normal(1.0, 2.5, n)
    margin[:8] = [40.0, -40.0, 400.0, -400.0, 1e3, -1e3, 0.0, 5.0]  # the limits' branches
    return np.column_stack([lower, upper]), margin


@pytest.mark.parametrize("distribution", AFT_DISTRIBUTIONS)
@pytest.mark.parametrize("scale", [1.0, 0.5, 1.7])
def test_loss_gradient_hessian_are_xgboosts(distribution, scale):
    bounds, margin = _bounds_and_margins(np.random.default_rng(0), 600)
    sigma = aft_sigma(scale)
    loss = aft_loss(bounds, margin, distribution, sigma)
    grad, hess = aft_gradients(bounds, margin, distribution, sigma)
    expected = np.array(
        [_xgboost_row(distribution, lo, up, m, sigma) for (lo, up), m in zip(bounds, margin)]
    )
    np.testing.assert_allclose(loss, expected[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, expected[:, 1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hess, expected[:, 2], rtol=1e-12, atol=1e-12)


def test_sigma_is_xgboosts_float32():
    assert aft_sigma(1.2) == float(np.float32(1.2)) != 1.2
