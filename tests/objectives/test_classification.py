"""Classification objectives (gpuboost.objectives.classification) with xp = numpy:
softmax gradients, the hessian floor, base margins and numerical stability."""

import numpy as np
import pytest
from _objective_references import (
    FD_STEP,
    FD_STEP_SECOND,
    HESSIAN_FLOOR,
    MULTICLASS_HESSIAN_FACTOR,
    N_SAMPLES,
    NUM_CLASS,
    PARAMS,
    central_difference,
    make_labels,
    make_raw,
    second_difference,
    softmax_loss,
)

from gpuboost.core.dtypes import Y_DTYPE
from gpuboost.objectives import get_objective

# ---------------------------------------------------------------------------
# Gradients and hessians
# ---------------------------------------------------------------------------


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
            grad[:, k], central_difference(loss_of_column, y, column, FD_STEP), rtol=1e-7, atol=1e-9
        )
        np.testing.assert_allclose(
            hess[:, k],
            MULTICLASS_HESSIAN_FACTOR
            * second_difference(loss_of_column, y, column, FD_STEP_SECOND),
            rtol=1e-6,
            atol=1e-8,
        )
    # Gradients of each row sum to zero.
    np.testing.assert_allclose(grad.sum(axis=1), 0.0, atol=1e-12)


def test_logistic_hessian_floor():
    objective = get_objective("binary:logistic", {})
    grad, hess = objective.gradients(np, np.array([1.0, 0.0]), np.array([800.0, -800.0]), None)
    np.testing.assert_array_equal(grad, [0.0, 0.0])
    np.testing.assert_array_equal(hess, [HESSIAN_FLOOR, HESSIAN_FLOOR])


# ---------------------------------------------------------------------------
# Base margin
# ---------------------------------------------------------------------------


def test_base_margin_logistic_and_exponential_values():
    y = np.array([1.0, 0.0, 0.0, 0.0])
    weight = np.array([3.0, 1.0, 1.0, 1.0])  # weighted mean 0.5
    np.testing.assert_allclose(
        get_objective("binary:logistic", {}).base_margin(y, weight), [0.0], atol=1e-15
    )
    y_unweighted_mean = 0.25
    expected = np.log(y_unweighted_mean / (1 - y_unweighted_mean))
    np.testing.assert_allclose(
        get_objective("binary:logistic", {}).base_margin(y, None), [expected]
    )
    np.testing.assert_allclose(
        get_objective("binary:exponential", {}).base_margin(y, None), [0.5 * expected]
    )


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


# ---------------------------------------------------------------------------
# Numerical stability
# ---------------------------------------------------------------------------

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
        grad, hess = get_objective("binary:logistic", {}).gradients(np, y, raw, None)
    assert np.isfinite(grad).all() and (hess >= HESSIAN_FLOOR).all()


@pytest.mark.parametrize("name", ["multi:softprob", "multi:softmax"])
def test_softmax_stable_for_huge_margins(name):
    objective = get_objective(name, {"num_class": 3})
    raw = np.array(
        [
            [HUGE_MARGIN, -HUGE_MARGIN, 0.0],
            [-HUGE_MARGIN, -HUGE_MARGIN, -HUGE_MARGIN],
            [HUGE_MARGIN, HUGE_MARGIN, -HUGE_MARGIN],
        ]
    )
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        probability = objective.mean(np, raw)
        grad, hess = objective.gradients(np, np.array([1.0, 0.0, 2.0]), raw, None)
    expected = np.array([[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0.0]])
    np.testing.assert_allclose(probability, expected, rtol=1e-15)
    assert np.isfinite(grad).all() and np.isfinite(hess).all()
    np.testing.assert_allclose(grad[0], [1.0, -1.0, 0.0])
