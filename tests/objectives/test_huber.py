"""Tests of reg:huber as Friedman's M-regression (gpuboost.objectives.regression.HuberError):
the per-leaf line search, the adaptive threshold (huber_alpha), training with them
and CPU/CUDA parity under the emulation."""

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both
from scipy.optimize import minimize_scalar

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.core.quantile import weighted_quantile
from gpuboost.objectives import get_objective
from gpuboost.objectives.regression import HuberError
from gpuboost.params import validate_params

#: How much closer to the exact minimum of a leaf's Huber loss Friedman's one-step
#: value must be than the leaf's median (fraction of the median's excess loss).
ONE_STEP_EXCESS_FRACTION = 0.1


def huber_loss(residuals, delta, weights=None):
    absolute = np.abs(residuals)
    loss = np.where(absolute <= delta, 0.5 * residuals**2, delta * (absolute - 0.5 * delta))
    return np.sum(loss if weights is None else weights * loss)


def friedman_leaf_value_naive(residuals, weights, delta):
    """The leaf value by its definition, summing in the given (row) order."""
    median = weighted_quantile(residuals, weights, 0.5)
    weights = np.ones(len(residuals)) if weights is None else weights
    clipped_sum, weight_sum = 0.0, 0.0
    for residual, weight in zip(residuals, weights):
        deviation = residual - median
        clipped_sum += weight * (np.sign(deviation) * min(abs(deviation), delta))
        weight_sum += weight
    return median + clipped_sum / weight_sum


def _refit(objective, residuals, weights, begins, ends, sample_indices=None):
    """refit_leaf_values on the NumPy backend with labels = residuals, margins 0."""
    n_rows = len(residuals)
    sample_indices = np.arange(n_rows, dtype=np.int32) if sample_indices is None else sample_indices
    return objective.refit_leaf_values(
        NumpyBackend(),
        residuals,
        np.zeros(n_rows),
        weights,
        sample_indices,
        np.asarray(begins),
        np.asarray(ends),
    )


# ---- the leaf value ------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_leaf_values_follow_the_definition_per_segment(weighted):
    rng = np.random.default_rng(1)
    residuals = rng.standard_t(df=2, size=300)
    weights = rng.uniform(0.1, 3.0, size=300) if weighted else None
    sample_indices = np.sort(rng.choice(300, size=250, replace=False)).astype(np.int32)
    begins, ends = np.array([0, 40, 41, 200]), np.array([40, 41, 200, 250])
    objective = HuberError(huber_delta=0.8)
    got = _refit(objective, residuals, weights, begins, ends, sample_indices)
    for value, begin, end in zip(got, begins, ends):
        rows = sample_indices[begin:end]
        expected = friedman_leaf_value_naive(
            residuals[rows], None if weights is None else weights[rows], 0.8
        )
        assert value == expected
    assert got[1] == residuals[sample_indices[40]]  # a one-row leaf: its residual


def test_leaf_value_is_the_exact_minimizer_when_no_residual_is_clipped():
    rng = np.random.default_rng(2)
    residuals = rng.uniform(-0.3, 0.3, size=25)
    delta = 5.0
    value = _refit(HuberError(huber_delta=delta), residuals, None, [0], [25])[0]
    exact = minimize_scalar(
        lambda c: huber_loss(residuals - c, delta),
        bounds=(-1, 1),
        method="bounded",
        options={"xatol": 1e-12},
    ).x
    assert abs(value - exact) < 1e-9
    np.testing.assert_allclose(value, residuals.mean(), rtol=0, atol=1e-15)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
def test_leaf_value_nearly_minimizes_the_leaf_loss_with_outliers(seed, weighted):
    rng = np.random.default_rng(10 + seed)
    residuals = rng.normal(size=40)
    residuals[:4] += 20.0 * rng.normal(size=4)
    weights = rng.uniform(0.5, 2.0, size=40) if weighted else None
    delta = float(np.quantile(np.abs(residuals), 0.9))
    value = _refit(HuberError(huber_delta=delta), residuals, weights, [0], [40])[0]
    exact = minimize_scalar(
        lambda c: huber_loss(residuals - c, delta, weights),
        bounds=(residuals.min(), residuals.max()),
        method="bounded",
        options={"xatol": 1e-12},
    )
    median = weighted_quantile(residuals, weights, 0.5)
    excess_median = huber_loss(residuals - median, delta, weights) - exact.fun
    excess_value = huber_loss(residuals - value, delta, weights) - exact.fun
    assert excess_median > 0
    assert excess_value <= ONE_STEP_EXCESS_FRACTION * excess_median
    assert abs(value - exact.x) < 0.1 * delta


# ---- the threshold ---------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_huber_alpha_sets_delta_to_the_quantile_of_absolute_residuals(weighted):
    rng = np.random.default_rng(3)
    y, margins = rng.normal(size=200), rng.normal(size=200)
    weights = rng.uniform(0.2, 2.0, size=200) if weighted else None
    objective = get_objective(
        "reg:huber", validate_params({"objective": "reg:huber", "huber_alpha": 0.8})
    )
    objective.begin_round(NumpyBackend(), y, margins, weights)
    assert objective.round_delta == weighted_quantile(np.abs(y - margins), weights, 0.8)
    grad, _ = objective.gradients(np, y, margins, weights)
    unweighted = grad if weights is None else grad / weights
    np.testing.assert_allclose(np.abs(unweighted).max(), objective.round_delta)
    fixed = HuberError(huber_delta=0.25)
    fixed.begin_round(NumpyBackend(), y, margins, weights)
    assert fixed.round_delta == 0.25


@pytest.mark.parametrize("value", [0.0, 1.0, -0.5, True])
def test_invalid_huber_alpha_raises(value):
    with pytest.raises(ValueError, match="huber_alpha"):
        HuberError(huber_alpha=value)
    if not isinstance(value, bool):
        with pytest.raises(ValueError, match="huber_alpha"):
            validate_params({"huber_alpha": value})


# ---- training ------------------------------------------------------------------------------
def _fit(params, X, y, rounds, weight=None, device="cpu"):
    return gpuboost.train(
        {
            "device": device,
            "objective": "reg:huber",
            "max_depth": 3,
            "learning_rate": 0.5,
            **params,
        },
        Dataset(X, label=y, weight=weight),
        num_boost_round=rounds,
        verbose_eval=False,
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_trained_leaves_are_friedmans_values(regression_data, weighted):
    X, y = regression_data
    weight = np.random.default_rng(4).uniform(0.5, 2.0, size=len(y)) if weighted else None
    booster = _fit({"huber_delta": 0.5}, X, y, rounds=3, weight=weight)
    leaves = booster.predict(X, pred_leaf=True)
    for round_index, tree in enumerate(booster.trees):
        margin = (
            booster.predict(X, output_margin=True, iteration_range=(0, round_index))
            if round_index
            else np.full(len(y), booster.base_margin[0])
        )
        residuals = y - margin
        for leaf in np.flatnonzero(tree.is_leaf):
            rows = np.flatnonzero(leaves[:, round_index] == leaf)  # partition order
            expected = friedman_leaf_value_naive(
                residuals[rows], None if weight is None else weight[rows], 0.5
            )
            assert tree.value[leaf] == 0.5 * expected


def test_huber_is_robust_to_outliers(regression_data):
    X, y = regression_data
    noisy = y.copy()
    noisy[::20] += 30.0  # 5% gross outliers
    squared = gpuboost.train(
        {"device": "cpu", "max_depth": 3, "learning_rate": 0.3},
        Dataset(X, label=noisy),
        num_boost_round=30,
        verbose_eval=False,
    )
    fixed = _fit({"huber_delta": 1.0, "learning_rate": 0.3}, X, noisy, rounds=30)
    adaptive = _fit({"huber_alpha": 0.9, "learning_rate": 0.3}, X, noisy, rounds=30)
    clean = np.arange(len(y)) % 20 != 0

    def error(model):
        return np.sqrt(np.mean((model.predict(X)[clean] - y[clean]) ** 2))

    assert error(fixed) < 0.5 * error(squared)
    assert error(adaptive) < 0.5 * error(squared)


# ---- CPU / CUDA parity (emulated kernels) ----------------------------------------------------
@pytest.mark.parametrize(
    "params, weighted",
    [
        ({"huber_delta": 0.7}, False),
        ({"huber_alpha": 0.85}, True),
        (
            {
                "huber_alpha": 0.9,
                "data_sample_strategy": "goss",
                "top_rate": 0.3,
                "other_rate": 0.3,
            },
            True,
        ),
    ],
    ids=["fixed_delta", "adaptive_weighted", "adaptive_goss_weighted"],
)
def test_cpu_and_cuda_give_identical_huber_models(emulated_cuda, regression_data, params, weighted):
    X, y = regression_data
    weight = np.random.default_rng(5).uniform(0.2, 2.0, size=len(y)) if weighted else None
    runs = train_on_both(
        {"objective": "reg:huber", "max_depth": 3, "learning_rate": 0.5, **params},
        lambda: Dataset(X, label=y, weight=weight),
        3,
    )
    assert_runs_match(runs)
    trees = runs["cpu"].model.trees
    assert sum(tree.n_leaves for tree in trees) > 2 * len(trees)
