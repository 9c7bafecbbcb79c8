"""Regression objectives (gpuboost.objectives.regression) with xp = numpy: Tweedie
powers, the non-smooth losses and their conventions at kinks, base margins, and the
leaf-refit settings. (Friedman's Huber leaf values: test_huber.py.)"""

import numpy as np
import pytest
from _objective_references import (
    FD_STEP,
    FD_STEP_SECOND,
    HUBER_DELTA,
    KINK_MARGIN,
    N_SAMPLES,
    NONSMOOTH_CASES,
    PARAMS,
    central_difference,
    make_tweedie_loss,
    second_difference,
)

from gpuboost.backends.emulation import device_array
from gpuboost.core.quantize import quantize
from gpuboost.objectives import OBJECTIVES, get_objective

# ---------------------------------------------------------------------------
# Gradients and hessians
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [1.0, 1.2, 1.8])
def test_tweedie_gradients_for_several_powers(rho):
    rng = np.random.default_rng(1)
    objective = get_objective("reg:tweedie", {"tweedie_variance_power": rho})
    loss = make_tweedie_loss(rho)
    y = rng.gamma(2.0, 1.5, N_SAMPLES)
    y[:5] = 0.0
    raw = rng.normal(0, 1, N_SAMPLES)
    grad, hess = objective.gradients(np, y, raw, None)
    np.testing.assert_allclose(
        grad, central_difference(loss, y, raw, FD_STEP), rtol=1e-7, atol=1e-9
    )
    np.testing.assert_allclose(
        hess, second_difference(loss, y, raw, FD_STEP_SECOND), rtol=1e-6, atol=1e-8
    )


@pytest.mark.parametrize("name", sorted(NONSMOOTH_CASES))
def test_nonsmooth_gradients_match_finite_differences(name):
    rng = np.random.default_rng(2)
    objective = get_objective(name, PARAMS)
    loss = NONSMOOTH_CASES[name]
    y = rng.normal(0, 2, N_SAMPLES)
    raw = rng.normal(0, 2, N_SAMPLES)
    residual = np.abs(raw - y)
    away_from_kinks = (residual > KINK_MARGIN) & (np.abs(residual - HUBER_DELTA) > KINK_MARGIN)
    grad, hess = objective.gradients(np, y, raw, None)
    np.testing.assert_allclose(
        grad[away_from_kinks],
        central_difference(loss, y, raw, FD_STEP)[away_from_kinks],
        rtol=1e-7,
        atol=1e-9,
    )
    # The hessian is the constant 1 (these losses have none, or a piecewise
    # one that Friedman's Huber treats as 1).
    np.testing.assert_array_equal(hess, np.ones(N_SAMPLES))


def test_gradients_at_kinks_follow_documented_conventions():
    y = np.array([1.0, 2.0, -3.0])
    raw = y.copy()
    absolute = get_objective("reg:absoluteerror", {})
    grad, _ = absolute.gradients(np, y, raw, None)
    np.testing.assert_array_equal(grad, [0.0, 0.0, 0.0])
    quantile = get_objective("reg:quantile", {"quantile_alpha": 0.25})
    grad, _ = quantile.gradients(np, y, raw, None)
    np.testing.assert_array_equal(grad, [0.75, 0.75, 0.75])
    grad, _ = get_objective("reg:huber", {"huber_delta": 1.0}).gradients(
        np, y, y + np.array([5.0, -5.0, 0.5]), None
    )
    np.testing.assert_array_equal(grad, [1.0, -1.0, 0.5])


# ---------------------------------------------------------------------------
# Base margin
# ---------------------------------------------------------------------------


def test_base_margin_squared_error_is_weighted_mean():
    y = np.array([1.0, 2.0, 10.0])
    weight = np.array([1.0, 1.0, 2.0])
    margin = get_objective("reg:squarederror", {}).base_margin(y, weight)
    np.testing.assert_allclose(margin, [23.0 / 4.0])


def test_base_margin_huber_is_weighted_median():
    y = np.array([0.0, 1.0, 2.0, 100.0])
    weight = np.array([1.0, 1.0, 3.0, 1.0])
    margin = get_objective("reg:huber", {}).base_margin(y, weight)
    np.testing.assert_array_equal(margin, [2.0])
    margin = get_objective("reg:huber", {}).base_margin(y, None)
    np.testing.assert_array_equal(margin, [1.0])


def test_base_margin_absolute_and_quantile_use_lower_quantile():
    y = np.array([4.0, 1.0, 1.0, 3.0, 2.0])
    weight = np.array([1.0, 0.5, 0.5, 1.0, 0.0])
    # sorted: 1 (0.5), 1 (0.5), 2 (0.0), 3 (1.0), 4 (1.0); total 3.
    absolute = get_objective("reg:absoluteerror", {})
    np.testing.assert_array_equal(absolute.base_margin(y, weight), [3.0])
    np.testing.assert_array_equal(absolute.base_margin(y, None), [2.0])
    quantile = get_objective("reg:quantile", {"quantile_alpha": 1.0 / 3.0})
    np.testing.assert_array_equal(quantile.base_margin(y, weight), [1.0])


# ---------------------------------------------------------------------------
# Leaf refit
# ---------------------------------------------------------------------------


def test_refit_alpha_and_residuals():
    assert get_objective("reg:absoluteerror", {}).refit_alpha == 0.5
    assert get_objective("reg:quantile", {"quantile_alpha": 0.9}).refit_alpha == 0.9
    for name in OBJECTIVES:
        if name not in ("reg:absoluteerror", "reg:quantile"):
            assert get_objective(name, PARAMS).refit_alpha is None
    residuals = get_objective("reg:absoluteerror", {}).refit_residuals(
        np, np.array([3.0, 1.0]), np.array([1.0, 1.5])
    )
    np.testing.assert_array_equal(residuals, [2.0, -0.5])


def test_nan_margins_are_refused_alike_on_both_array_modules():
    """reg:absoluteerror's gradient and the Huber refit's sign keep NaN on every array
    module (CuPy's sign(NaN) is 0: a NaN margin would train silently on a GPU), so the
    quantization refuses NaN margins on the CPU and on CUDA alike (issue 29)."""
    y = np.array([0.0, 1.0, 2.0])
    raw = np.array([0.5, np.nan, 1.0])
    objective = get_objective("reg:absoluteerror", {})
    for xp in (np, device_array.namespace):
        grad, _ = objective.gradients(xp, xp.asarray(y), xp.asarray(raw), None)
        grad = grad if xp is np else grad.get()
        assert np.isnan(grad[1]) and grad[0] == 1.0 and grad[2] == -1.0
        with pytest.raises(ValueError, match="NaN or inf"):
            quantize(xp, xp.asarray(grad))
