"""Tests of gpuboost.objective (with xp = numpy)."""
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.core.dtypes import Y_DTYPE
from gpuboost.objectives import OBJECTIVES, CustomObjective, Objective, get_objective

N_SAMPLES = 40
NUM_CLASS = 4
HUBER_DELTA = 0.7
QUANTILE_ALPHA = 0.3
FD_STEP = 1e-4          # finite difference step for gradients
FD_STEP_SECOND = 1e-3   # finite difference step for hessians
KINK_MARGIN = 1e-2      # keep |raw - y| and |raw - y| - delta away from 0
# Conventions (XGBoost floor and poisson step; exact softmax diagonal), restated to pin them down.
HESSIAN_FLOOR = 1e-16
MULTICLASS_HESSIAN_FACTOR = 1.0  # the exact diagonal of the softmax hessian
POISSON_MAX_DELTA_STEP = 0.7


# ---------------------------------------------------------------------------
# Reference losses (per row), written independently of the module.
# ---------------------------------------------------------------------------

def squared_loss(y, f):
    return 0.5 * (f - y) ** 2


def absolute_loss(y, f):
    return np.abs(f - y)


def huber_loss(y, f, delta=HUBER_DELTA):
    r = np.abs(f - y)
    return np.where(r <= delta, 0.5 * r ** 2, delta * (r - 0.5 * delta))


def pinball_loss(y, f, alpha=QUANTILE_ALPHA):
    return np.where(y >= f, alpha * (y - f), (1 - alpha) * (f - y))


def logistic_loss(y, f):
    p = 1.0 / (1.0 + np.exp(-f))
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def exponential_loss(y, f):
    return np.exp(-(2 * y - 1) * f)


def poisson_loss(y, f):
    return np.exp(f) - y * f


def gamma_loss(y, f):
    return y * np.exp(-f) + f


def make_tweedie_loss(rho):
    def tweedie_loss(y, f):
        if rho == 1.0:
            return poisson_loss(y, f)
        return (-y * np.exp((1 - rho) * f) / (1 - rho)
                + np.exp((2 - rho) * f) / (2 - rho))
    return tweedie_loss


def softmax_loss(y, f):
    """Cross-entropy of rows f (n, K) against class indices y."""
    shifted = f - f.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_p[np.arange(len(y)), y.astype(int)]


def make_labels(name, rng, n=N_SAMPLES):
    if name == "binary:logistic":
        return rng.uniform(0, 1, n)
    if name == "binary:exponential":
        return rng.integers(0, 2, n).astype(Y_DTYPE)
    if name.startswith("multi:"):
        return rng.integers(0, NUM_CLASS, n).astype(Y_DTYPE)
    if name == "count:poisson":
        return rng.poisson(2.0, n).astype(Y_DTYPE)
    if name in ("reg:gamma", "reg:tweedie"):
        return rng.gamma(2.0, 1.5, n)
    if name.startswith("rank:"):  # relevance grades
        return rng.integers(0, 4, n).astype(Y_DTYPE)
    return rng.normal(0, 2, n)


def make_raw(objective, rng, n=N_SAMPLES):
    k = objective.n_outputs()
    shape = (n,) if k == 1 else (n, k)
    return rng.normal(0, 1, shape)


PARAMS = {"num_class": NUM_CLASS, "huber_delta": HUBER_DELTA,
          "quantile_alpha": QUANTILE_ALPHA, "tweedie_variance_power": 1.5}

# name -> (reference loss, hessian = factor * second derivative of the loss,
#          or None when the hessian is the constant 1 instead)
SMOOTH_CASES = {
    "reg:squarederror": (squared_loss, 1.0),
    "binary:logistic": (logistic_loss, 1.0),
    "binary:exponential": (exponential_loss, 1.0),
    "count:poisson": (poisson_loss, np.exp(POISSON_MAX_DELTA_STEP)),
    "reg:gamma": (gamma_loss, 1.0),
    "reg:tweedie": (make_tweedie_loss(1.5), 1.0),
}
NONSMOOTH_CASES = {
    "reg:absoluteerror": absolute_loss,
    "reg:huber": huber_loss,
    "reg:quantile": pinball_loss,
}


def central_difference(loss, y, f, step):
    """Fourth-order central first difference of ``loss`` in ``f``."""
    return (-loss(y, f + 2 * step) + 8 * loss(y, f + step)
            - 8 * loss(y, f - step) + loss(y, f - 2 * step)) / (12 * step)


def second_difference(loss, y, f, step):
    """Fourth-order central second difference of ``loss`` in ``f``."""
    numerator = (-loss(y, f + 2 * step) + 16 * loss(y, f + step)
                 - 30 * loss(y, f) + 16 * loss(y, f - step)
                 - loss(y, f - 2 * step))
    return numerator / (12 * step ** 2)


# ---------------------------------------------------------------------------
# Gradients and hessians
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SMOOTH_CASES))
def test_smooth_gradients_match_finite_differences(name):
    rng = np.random.default_rng(0)
    objective = get_objective(name, PARAMS)
    loss, hessian_factor = SMOOTH_CASES[name]
    y = make_labels(name, rng)
    raw = make_raw(objective, rng)
    grad, hess = objective.gradients(np, y, raw, None)
    assert grad.dtype == Y_DTYPE and hess.dtype == Y_DTYPE
    assert grad.shape == raw.shape and hess.shape == raw.shape
    np.testing.assert_allclose(
        grad, central_difference(loss, y, raw, FD_STEP), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        hess, hessian_factor * second_difference(loss, y, raw, FD_STEP_SECOND),
        rtol=1e-6, atol=1e-8)


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
        grad, central_difference(loss, y, raw, FD_STEP), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        hess, second_difference(loss, y, raw, FD_STEP_SECOND),
        rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(NONSMOOTH_CASES))
def test_nonsmooth_gradients_match_finite_differences(name):
    rng = np.random.default_rng(2)
    objective = get_objective(name, PARAMS)
    loss = NONSMOOTH_CASES[name]
    y = rng.normal(0, 2, N_SAMPLES)
    raw = rng.normal(0, 2, N_SAMPLES)
    residual = np.abs(raw - y)
    away_from_kinks = ((residual > KINK_MARGIN)
                       & (np.abs(residual - HUBER_DELTA) > KINK_MARGIN))
    grad, hess = objective.gradients(np, y, raw, None)
    np.testing.assert_allclose(
        grad[away_from_kinks],
        central_difference(loss, y, raw, FD_STEP)[away_from_kinks],
        rtol=1e-7, atol=1e-9)
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
        np, y, y + np.array([5.0, -5.0, 0.5]), None)
    np.testing.assert_array_equal(grad, [1.0, -1.0, 0.5])


@pytest.mark.parametrize("name", ["multi:softprob", "multi:softmax"])
def test_softmax_gradients_match_finite_differences(name):
    rng = np.random.default_rng(3)
    objective = get_objective(name, PARAMS)
    y = make_labels(name, rng)
    raw = make_raw(objective, rng)
    grad, hess = objective.gradients(np, y, raw, None)
    assert grad.shape == (N_SAMPLES, NUM_CLASS) == hess.shape
    for k in range(NUM_CLASS):
        def loss_of_column(labels, column, k=k):
            shifted = raw.copy()
            shifted[:, k] = column
            return softmax_loss(labels, shifted)
        column = raw[:, k]
        np.testing.assert_allclose(
            grad[:, k], central_difference(loss_of_column, y, column, FD_STEP),
            rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(
            hess[:, k],
            MULTICLASS_HESSIAN_FACTOR
            * second_difference(loss_of_column, y, column, FD_STEP_SECOND),
            rtol=1e-6, atol=1e-8)
    # Gradients of each row sum to zero.
    np.testing.assert_allclose(grad.sum(axis=1), 0.0, atol=1e-12)


@pytest.mark.parametrize("name", OBJECTIVES)
def test_weights_scale_gradient_and_hessian(name):
    rng = np.random.default_rng(4)
    objective = get_objective(name, PARAMS)
    y = make_labels(name, rng)
    raw = make_raw(objective, rng)
    weight = rng.uniform(0, 3, N_SAMPLES)
    weight[0] = 0.0
    # Ranking objectives need the queries (gpuboost.ranking; tests/test_ranking.py).
    dataset = types.SimpleNamespace(label=y, group=np.array([N_SAMPLES // 4] * 4)) \
        if name.startswith("rank:") else None
    grad, hess = objective.gradients(np, y, raw, None, dataset=dataset)
    weighted_grad, weighted_hess = objective.gradients(np, y, raw, weight, dataset=dataset)
    factor = weight if raw.ndim == 1 else weight[:, None]
    np.testing.assert_array_equal(weighted_grad, grad * factor)
    np.testing.assert_array_equal(weighted_hess, hess * factor)


def test_gradients_reject_wrong_raw_shape():
    y = np.zeros(5)
    with pytest.raises(ValueError, match="shape"):
        get_objective("reg:squarederror", {}).gradients(
            np, y, np.zeros((5, 2)), None)
    with pytest.raises(ValueError, match="shape"):
        get_objective("multi:softprob", {"num_class": 3}).gradients(
            np, y, np.zeros(5), None)


def test_logistic_hessian_floor():
    objective = get_objective("binary:logistic", {})
    grad, hess = objective.gradients(np, np.array([1.0, 0.0]),
                                     np.array([800.0, -800.0]), None)
    np.testing.assert_array_equal(grad, [0.0, 0.0])
    np.testing.assert_array_equal(hess, [HESSIAN_FLOOR, HESSIAN_FLOOR])


# ---------------------------------------------------------------------------
# Base margin
# ---------------------------------------------------------------------------

GRID_HALF_WIDTH = 1.0
GRID_POINTS = 4001


def constant_loss(loss, y, weight, constant):
    return np.sum(weight * loss(y, np.full_like(y, constant)))


def assert_grid_minimum(loss, y, weight, margin):
    """The weighted loss at ``margin`` is not above any point of a grid."""
    grid = np.linspace(margin - GRID_HALF_WIDTH, margin + GRID_HALF_WIDTH,
                       GRID_POINTS)
    at_margin = constant_loss(loss, y, weight, margin)
    grid_losses = [constant_loss(loss, y, weight, c) for c in grid]
    assert at_margin <= min(grid_losses) + 1e-9 * max(1.0, abs(at_margin))


@pytest.mark.parametrize("name", sorted(
    set(SMOOTH_CASES) | {"reg:absoluteerror", "reg:quantile"}))
def test_base_margin_minimizes_weighted_constant_loss(name):
    rng = np.random.default_rng(5)
    objective = get_objective(name, PARAMS)
    if name in SMOOTH_CASES:
        loss = SMOOTH_CASES[name][0]
    else:
        loss = NONSMOOTH_CASES[name]
    y = make_labels(name, rng)
    weight = rng.uniform(0.1, 3, N_SAMPLES)
    for w in (None, weight):
        margin = objective.base_margin(y, w)
        assert margin.shape == (1,) and margin.dtype == Y_DTYPE
        unit = np.ones(N_SAMPLES) if w is None else w
        assert_grid_minimum(loss, y, unit, margin[0])


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


def test_base_margin_logistic_and_exponential_values():
    y = np.array([1.0, 0.0, 0.0, 0.0])
    weight = np.array([3.0, 1.0, 1.0, 1.0])   # weighted mean 0.5
    np.testing.assert_allclose(
        get_objective("binary:logistic", {}).base_margin(y, weight), [0.0],
        atol=1e-15)
    y_unweighted_mean = 0.25
    expected = np.log(y_unweighted_mean / (1 - y_unweighted_mean))
    np.testing.assert_allclose(
        get_objective("binary:logistic", {}).base_margin(y, None), [expected])
    np.testing.assert_allclose(
        get_objective("binary:exponential", {}).base_margin(y, None),
        [0.5 * expected])


@pytest.mark.parametrize("name", ["binary:logistic", "binary:exponential",
                                  "count:poisson", "reg:tweedie",
                                  "multi:softprob"])
def test_base_margin_finite_for_degenerate_labels(name):
    objective = get_objective(name, PARAMS)
    y = np.zeros(10)
    margin = objective.base_margin(y, None)
    assert np.isfinite(margin).all()
    if name.startswith("binary"):
        assert np.isfinite(objective.base_margin(np.ones(10), None)).all()


@pytest.mark.parametrize("name", ["multi:softprob", "multi:softmax"])
def test_base_margin_softmax_matches_weighted_priors(name):
    rng = np.random.default_rng(6)
    objective = get_objective(name, PARAMS)
    y = make_labels(name, rng, n=200)
    weight = rng.uniform(0.1, 3, 200)
    margin = objective.base_margin(y, weight)
    assert margin.shape == (NUM_CLASS,) and margin.dtype == Y_DTYPE
    np.testing.assert_allclose(margin.mean(), 0.0, atol=1e-12)
    priors = np.bincount(y.astype(int), weights=weight) / weight.sum()
    probability = np.exp(margin) / np.exp(margin).sum()
    np.testing.assert_allclose(probability, priors, rtol=1e-12)

    def total_loss(m):
        return np.sum(weight * softmax_loss(y, np.tile(m, (len(y), 1))))
    at_margin = total_loss(margin)
    for _ in range(20):
        perturbed = margin + rng.normal(0, 0.05, NUM_CLASS)
        assert at_margin <= total_loss(perturbed)


def test_base_margin_rejects_bad_weights():
    objective = get_objective("reg:squarederror", {})
    with pytest.raises(ValueError, match="non-negative"):
        objective.base_margin(np.ones(3), np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="total weight"):
        objective.base_margin(np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match="shape"):
        objective.base_margin(np.ones(3), np.ones(2))


# ---------------------------------------------------------------------------
# check_labels
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", OBJECTIVES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_labels_rejects_non_finite(name, bad):
    objective = get_objective(name, PARAMS)
    y = np.array([0.0, 1.0, bad])
    with pytest.raises(ValueError, match=f"{name}.*NaN or infinite"):
        objective.check_labels(y)


@pytest.mark.parametrize("name, labels, problem", [
    ("count:poisson", [1.0, -0.5], "non-negative"),
    ("reg:tweedie", [0.0, -2.0], "non-negative"),
    ("reg:gamma", [1.0, 0.0], "positive"),
    ("reg:gamma", [1.0, -1.0], "positive"),
    ("binary:logistic", [0.0, 1.5], r"in \[0, 1\]"),
    ("binary:logistic", [-0.1, 1.0], r"in \[0, 1\]"),
    ("binary:exponential", [0.0, 0.5], "0 or 1"),
    ("binary:exponential", [2.0, 1.0], "0 or 1"),
    ("multi:softprob", [0.0, 1.5], "integer"),
    ("multi:softmax", [0.0, float(NUM_CLASS)], "num_class"),
    ("multi:softprob", [-1.0, 0.0], "num_class"),
])
def test_check_labels_rejects_out_of_domain(name, labels, problem):
    objective = get_objective(name, PARAMS)
    with pytest.raises(ValueError, match=f"{name}.*{problem}"):
        objective.check_labels(np.array(labels))


@pytest.mark.parametrize("name, labels", [
    ("reg:squarederror", [-5.0, 0.0, 3.5]),
    ("count:poisson", [0.0, 3.0]),
    ("reg:tweedie", [0.0, 0.5]),
    ("reg:gamma", [1e-9, 2.0]),
    ("binary:logistic", [0.0, 0.3, 1.0]),
    ("binary:exponential", [0.0, 1.0]),
    ("multi:softprob", [0.0, 3.0, 2.0]),
])
def test_check_labels_accepts_valid(name, labels):
    get_objective(name, PARAMS).check_labels(np.array(labels))


# ---------------------------------------------------------------------------
# base_score_to_margin
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, base_score, expected", [
    ("reg:squarederror", -2.5, [-2.5]),
    ("reg:quantile", 3.0, [3.0]),
    ("binary:logistic", 0.5, [0.0]),
    ("binary:logistic", 0.75, [np.log(3.0)]),
    ("binary:exponential", 0.75, [0.5 * np.log(3.0)]),
    ("count:poisson", 1.0, [0.0]),
    ("reg:gamma", np.e, [1.0]),
    ("reg:tweedie", 2.0, [np.log(2.0)]),
    ("multi:softprob", 0.5, [0.5] * NUM_CLASS),
])
def test_base_score_to_margin(name, base_score, expected):
    objective = get_objective(name, PARAMS)
    margin = objective.base_score_to_margin(base_score)
    assert margin.shape == (objective.n_outputs(),)
    assert margin.dtype == Y_DTYPE
    np.testing.assert_allclose(margin, expected, rtol=1e-15)
    # output() inverts the link (the probability space of logistic, the mean
    # of log-link objectives).
    if objective.n_outputs() == 1:
        np.testing.assert_allclose(objective.output(np, margin), [base_score])


@pytest.mark.parametrize("name, base_score", [
    ("binary:logistic", 0.0), ("binary:logistic", 1.0),
    ("binary:exponential", 1.2), ("count:poisson", 0.0),
    ("reg:gamma", -1.0), ("reg:tweedie", 0.0),
    ("reg:squarederror", np.nan), ("reg:squarederror", np.inf),
    ("reg:squarederror", "abc"),
])
def test_base_score_to_margin_rejects_out_of_domain(name, base_score):
    with pytest.raises(ValueError, match=f"{name}.*base_score"):
        get_objective(name, PARAMS).base_score_to_margin(base_score)


# ---------------------------------------------------------------------------
# output / mean
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", OBJECTIVES)
def test_output_and_mean_shapes_and_ranges(name):
    rng = np.random.default_rng(7)
    objective = get_objective(name, PARAMS)
    raw = make_raw(objective, rng) * 5
    output = objective.output(np, raw)
    mean = objective.mean(np, raw)
    assert output.dtype == Y_DTYPE and mean.dtype == Y_DTYPE
    if name == "multi:softmax":
        assert output.shape == (N_SAMPLES,)
        np.testing.assert_array_equal(output, np.argmax(raw, axis=1))
    else:
        assert output.shape == raw.shape
        np.testing.assert_array_equal(output, mean)
    if name.startswith("multi:"):
        assert mean.shape == (N_SAMPLES, NUM_CLASS)
        assert (mean >= 0).all() and (mean <= 1).all()
        np.testing.assert_allclose(mean.sum(axis=1), 1.0, rtol=1e-14)
        expected = np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(mean, expected, rtol=1e-12)
    elif name == "binary:logistic":
        np.testing.assert_allclose(mean, 1 / (1 + np.exp(-raw)), rtol=1e-14)
    elif name == "binary:exponential":
        np.testing.assert_allclose(mean, 1 / (1 + np.exp(-2 * raw)),
                                   rtol=1e-14)
    elif name in ("count:poisson", "reg:gamma", "reg:tweedie"):
        np.testing.assert_allclose(mean, np.exp(raw), rtol=1e-15)
    else:
        np.testing.assert_array_equal(mean, raw)


HUGE_MARGIN = 1e4


def test_sigmoid_stable_for_huge_margins():
    raw = np.array([-HUGE_MARGIN, -800.0, 0.0, 800.0, HUGE_MARGIN])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        for name in ("binary:logistic", "binary:exponential"):
            probability = get_objective(name, {}).output(np, raw)
            np.testing.assert_array_equal(probability[[0, 1]], [0.0, 0.0])
            np.testing.assert_array_equal(probability[[2]], [0.5])
            np.testing.assert_array_equal(probability[[3, 4]], [1.0, 1.0])
        y = np.array([0.0, 1.0, 0.5, 0.0, 1.0])
        grad, hess = get_objective("binary:logistic", {}).gradients(
            np, y, raw, None)
    assert np.isfinite(grad).all() and (hess >= HESSIAN_FLOOR).all()


@pytest.mark.parametrize("name", ["multi:softprob", "multi:softmax"])
def test_softmax_stable_for_huge_margins(name):
    objective = get_objective(name, {"num_class": 3})
    raw = np.array([[HUGE_MARGIN, -HUGE_MARGIN, 0.0],
                    [-HUGE_MARGIN, -HUGE_MARGIN, -HUGE_MARGIN],
                    [HUGE_MARGIN, HUGE_MARGIN, -HUGE_MARGIN]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        probability = objective.mean(np, raw)
        grad, hess = objective.gradients(np, np.array([1.0, 0.0, 2.0]), raw,
                                         None)
    expected = np.array([[1.0, 0.0, 0.0],
                         [1 / 3, 1 / 3, 1 / 3],
                         [0.5, 0.5, 0.0]])
    np.testing.assert_allclose(probability, expected, rtol=1e-15)
    assert np.isfinite(grad).all() and np.isfinite(hess).all()
    np.testing.assert_allclose(grad[0], [1.0, -1.0, 0.0])


def test_refit_alpha_and_residuals():
    assert get_objective("reg:absoluteerror", {}).refit_alpha == 0.5
    assert get_objective(
        "reg:quantile", {"quantile_alpha": 0.9}).refit_alpha == 0.9
    for name in OBJECTIVES:
        if name not in ("reg:absoluteerror", "reg:quantile"):
            assert get_objective(name, PARAMS).refit_alpha is None
    residuals = get_objective("reg:absoluteerror", {}).refit_residuals(
        np, np.array([3.0, 1.0]), np.array([1.0, 1.5]))
    np.testing.assert_array_equal(residuals, [2.0, -0.5])


def test_default_metrics_and_outputs():
    expected = {
        "reg:squarederror": "rmse", "reg:absoluteerror": "mae",
        "reg:huber": "rmse", "reg:quantile": "pinball@0.3",
        "binary:logistic": "logloss", "binary:exponential": "logloss",
        "multi:softmax": "mlogloss", "multi:softprob": "mlogloss",
        "count:poisson": "poisson-nloglik", "reg:gamma": "gamma-nloglik",
        "reg:tweedie": "tweedie-nloglik@1.5",
        "rank:ndcg": "ndcg", "rank:map": "map", "rank:pairwise": "ndcg",
    }
    assert set(expected) == set(OBJECTIVES)
    for name, metric in expected.items():
        objective = get_objective(name, PARAMS)
        assert objective.name == name
        assert objective.default_metric == metric
        assert objective.n_outputs() == (
            NUM_CLASS if name.startswith("multi:") else 1)


# ---------------------------------------------------------------------------
# CustomObjective
# ---------------------------------------------------------------------------

def squared_error_func(raw, dataset):
    labels = dataset["label"]
    return raw - labels, np.ones_like(raw)


def test_custom_objective_passes_margins_and_dataset():
    dataset = {"label": np.array([1.0, 2.0, 3.0])}
    seen = []

    def func(raw, data):
        seen.append((raw, data))
        return squared_error_func(raw, data)

    objective = get_objective(func, {})
    assert isinstance(objective, CustomObjective)
    raw = np.array([0.0, 0.0, 1.0])
    weight = np.array([5.0, 5.0, 5.0])
    grad, hess = objective.gradients(np, dataset["label"], raw, weight,
                                     dataset=dataset)
    assert seen[0][1] is dataset
    np.testing.assert_array_equal(seen[0][0], raw)
    # Weights are not applied to custom gradients (XGBoost semantics).
    np.testing.assert_array_equal(grad, [-1.0, -2.0, -2.0])
    np.testing.assert_array_equal(hess, [1.0, 1.0, 1.0])
    assert grad.dtype == Y_DTYPE
    np.testing.assert_array_equal(objective.output(np, raw), raw)
    np.testing.assert_array_equal(objective.base_margin(raw, None), [0.0])


def test_custom_objective_multiclass_flat_result_is_reshaped():
    n, k = 3, 2
    flat = np.arange(n * k, dtype=np.int64)

    def func(raw, dataset):
        return flat, flat.astype(np.float32) + 1

    objective = get_objective(func, {"num_class": k})
    assert objective.n_outputs() == k
    grad, hess = objective.gradients(np, np.zeros(n), np.zeros((n, k)), None)
    np.testing.assert_array_equal(grad, flat.reshape(n, k))
    np.testing.assert_array_equal(hess, flat.reshape(n, k) + 1)
    assert grad.dtype == Y_DTYPE and hess.dtype == Y_DTYPE


@pytest.mark.parametrize("result, message", [
    ((np.zeros(3), np.ones(4)), "hess of shape"),
    ((np.zeros((3, 1)), np.ones(3)), "grad of shape"),
    ((np.array([0.0, np.nan, 0.0]), np.ones(3)), "grad with NaN"),
    ((np.zeros(3), np.array([1.0, np.inf, 1.0])), "hess with NaN or infinite"),
    ((np.array(["a", "b", "c"]), np.ones(3)), "float64"),
    ((np.zeros(3, dtype=complex), np.ones(3)), "complex"),
    (np.zeros(3), "pair"),
    ((np.zeros(3),), "pair"),
])
def test_custom_objective_validates_result(result, message):
    objective = CustomObjective(lambda raw, dataset: result)
    with pytest.raises(ValueError, match=message):
        objective.gradients(np, np.zeros(3), np.zeros(3), None)


def test_custom_objective_multiclass_rejects_wrong_flat_size():
    objective = CustomObjective(
        lambda raw, dataset: (np.zeros(5), np.ones(6)), n_outputs=2)
    with pytest.raises(ValueError, match=r"grad of shape \(5,\)"):
        objective.gradients(np, np.zeros(3), np.zeros((3, 2)), None)


# ---------------------------------------------------------------------------
# get_objective
# ---------------------------------------------------------------------------

def test_get_objective_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="unknown objective") as info:
        get_objective("reg:linear", {})
    for name in OBJECTIVES:
        assert name in str(info.value)


@pytest.mark.parametrize("name, params, message", [
    ("multi:softprob", {}, "num_class"),
    ("multi:softmax", {"num_class": 1}, "num_class"),
    ("multi:softmax", {"num_class": 2.5}, "num_class"),
    ("reg:huber", {"huber_delta": 0.0}, "huber_delta"),
    ("reg:quantile", {"quantile_alpha": 1.0}, "quantile_alpha"),
    ("reg:quantile", {"quantile_alpha": 0.0}, "quantile_alpha"),
    ("reg:tweedie", {"tweedie_variance_power": 2.0}, "tweedie_variance_power"),
    ("reg:tweedie", {"tweedie_variance_power": 0.9}, "tweedie_variance_power"),
])
def test_get_objective_invalid_parameters(name, params, message):
    with pytest.raises(ValueError, match=message):
        get_objective(name, params)


def test_get_objective_defaults_and_passthrough():
    assert get_objective("reg:huber", {}).huber_delta == 1.0
    assert get_objective("reg:quantile", {}).quantile_alpha == 0.5
    assert get_objective("reg:tweedie", {}).tweedie_variance_power == 1.5
    assert get_objective("reg:squarederror", None).get_params() == {}
    objective = get_objective("reg:gamma", {})
    assert get_objective(objective, {}) is objective
    assert isinstance(objective, Objective)
    with pytest.raises(TypeError):
        get_objective(3, {})
