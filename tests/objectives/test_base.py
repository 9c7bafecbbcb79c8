"""The Objective contract (gpuboost.objectives.base), checked on every built-in
objective with xp = numpy: gradients against finite differences, weights, shapes,
base margins, label checks, base_score and the output transforms."""

import types

import numpy as np
import pytest
from _objective_references import (
    FD_STEP,
    FD_STEP_SECOND,
    N_SAMPLES,
    NONSMOOTH_CASES,
    NUM_CLASS,
    PARAMS,
    SMOOTH_CASES,
    central_difference,
    make_labels,
    make_raw,
    second_difference,
)

from gpuboost.core.dtypes import Y_DTYPE
from gpuboost.objectives import OBJECTIVES, get_objective

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
        grad, central_difference(loss, y, raw, FD_STEP), rtol=1e-7, atol=1e-9
    )
    np.testing.assert_allclose(
        hess, hessian_factor * second_difference(loss, y, raw, FD_STEP_SECOND), rtol=1e-6, atol=1e-8
    )


@pytest.mark.parametrize("name", OBJECTIVES)
def test_weights_scale_gradient_and_hessian(name):
    rng = np.random.default_rng(4)
    objective = get_objective(name, PARAMS)
    y = make_labels(name, rng)
    raw = make_raw(objective, rng)
    weight = rng.uniform(0, 3, N_SAMPLES)
    weight[0] = 0.0
    # Ranking objectives need the queries (gpuboost.objectives.ranking; test_ranking.py).
    dataset = (
        types.SimpleNamespace(label=y, group=np.array([N_SAMPLES // 4] * 4))
        if name.startswith("rank:")
        else None
    )
    grad, hess = objective.gradients(np, y, raw, None, dataset=dataset)
    weighted_grad, weighted_hess = objective.gradients(np, y, raw, weight, dataset=dataset)
    factor = weight if raw.ndim == 1 else weight[:, None]
    np.testing.assert_array_equal(weighted_grad, grad * factor)
    np.testing.assert_array_equal(weighted_hess, hess * factor)


def test_gradients_reject_wrong_raw_shape():
    y = np.zeros(5)
    with pytest.raises(ValueError, match="shape"):
        get_objective("reg:squarederror", {}).gradients(np, y, np.zeros((5, 2)), None)
    with pytest.raises(ValueError, match="shape"):
        get_objective("multi:softprob", {"num_class": 3}).gradients(np, y, np.zeros(5), None)


# ---------------------------------------------------------------------------
# Base margin
# ---------------------------------------------------------------------------

GRID_HALF_WIDTH = 1.0
GRID_POINTS = 4001


def constant_loss(loss, y, weight, constant):
    return np.sum(weight * loss(y, np.full_like(y, constant)))


def assert_grid_minimum(loss, y, weight, margin):
    """The weighted loss at ``margin`` is not above any point of a grid."""
    grid = np.linspace(margin - GRID_HALF_WIDTH, margin + GRID_HALF_WIDTH, GRID_POINTS)
    at_margin = constant_loss(loss, y, weight, margin)
    grid_losses = [constant_loss(loss, y, weight, c) for c in grid]
    assert at_margin <= min(grid_losses) + 1e-9 * max(1.0, abs(at_margin))


@pytest.mark.parametrize("name", sorted(set(SMOOTH_CASES) | {"reg:absoluteerror", "reg:quantile"}))
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


@pytest.mark.parametrize(
    "name",
    ["binary:logistic", "binary:exponential", "count:poisson", "reg:tweedie", "multi:softprob"],
)
def test_base_margin_finite_for_degenerate_labels(name):
    objective = get_objective(name, PARAMS)
    y = np.zeros(10)
    margin = objective.base_margin(y, None)
    assert np.isfinite(margin).all()
    if name.startswith("binary"):
        assert np.isfinite(objective.base_margin(np.ones(10), None)).all()


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
    if name == "survival:aft":  # intervals: a bad lower end (an upper end may be inf)
        y = np.column_stack([[1.0, 2.0, bad], [1.0, np.inf, 3.0]])
    with pytest.raises(ValueError, match=f"{name}.*NaN or infinite"):
        objective.check_labels(y)


@pytest.mark.parametrize(
    "name, labels, problem",
    [
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
    ],
)
def test_check_labels_rejects_out_of_domain(name, labels, problem):
    objective = get_objective(name, PARAMS)
    with pytest.raises(ValueError, match=f"{name}.*{problem}"):
        objective.check_labels(np.array(labels))


@pytest.mark.parametrize(
    "name, labels",
    [
        ("reg:squarederror", [-5.0, 0.0, 3.5]),
        ("count:poisson", [0.0, 3.0]),
        ("reg:tweedie", [0.0, 0.5]),
        ("reg:gamma", [1e-9, 2.0]),
        ("binary:logistic", [0.0, 0.3, 1.0]),
        ("binary:exponential", [0.0, 1.0]),
        ("multi:softprob", [0.0, 3.0, 2.0]),
    ],
)
def test_check_labels_accepts_valid(name, labels):
    get_objective(name, PARAMS).check_labels(np.array(labels))


# ---------------------------------------------------------------------------
# base_score_to_margin
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, base_score, expected",
    [
        ("reg:squarederror", -2.5, [-2.5]),
        ("reg:quantile", 3.0, [3.0]),
        ("binary:logistic", 0.5, [0.0]),
        ("binary:logistic", 0.75, [np.log(3.0)]),
        ("binary:exponential", 0.75, [0.5 * np.log(3.0)]),
        ("count:poisson", 1.0, [0.0]),
        ("reg:gamma", np.e, [1.0]),
        ("reg:tweedie", 2.0, [np.log(2.0)]),
        ("multi:softprob", 0.5, [0.5] * NUM_CLASS),
    ],
)
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


@pytest.mark.parametrize(
    "name, base_score",
    [
        ("binary:logistic", 0.0),
        ("binary:logistic", 1.0),
        ("binary:exponential", 1.2),
        ("count:poisson", 0.0),
        ("reg:gamma", -1.0),
        ("reg:tweedie", 0.0),
        ("reg:squarederror", np.nan),
        ("reg:squarederror", np.inf),
        ("reg:squarederror", "abc"),
    ],
)
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
        np.testing.assert_allclose(mean, 1 / (1 + np.exp(-2 * raw)), rtol=1e-14)
    elif name in ("count:poisson", "reg:gamma", "reg:tweedie", "survival:cox", "survival:aft"):
        np.testing.assert_allclose(mean, np.exp(raw), rtol=1e-15)
    else:
        np.testing.assert_array_equal(mean, raw)


def test_default_metrics_and_outputs():
    expected = {
        "reg:squarederror": "rmse",
        "reg:absoluteerror": "mae",
        "reg:huber": "rmse",
        "reg:quantile": "pinball@0.3",
        "reg:expectileerror": "expectile@0.5",
        "binary:logistic": "logloss",
        "binary:exponential": "logloss",
        "multi:softmax": "mlogloss",
        "multi:softprob": "mlogloss",
        "count:poisson": "poisson-nloglik",
        "reg:gamma": "gamma-nloglik",
        "reg:tweedie": "tweedie-nloglik@1.5",
        "rank:ndcg": "ndcg",
        "rank:map": "map",
        "rank:pairwise": "ndcg",
        "survival:cox": "cox-nloglik",
        "survival:aft": "aft-nloglik",
    }
    assert set(expected) == set(OBJECTIVES)
    for name, metric in expected.items():
        objective = get_objective(name, PARAMS)
        assert objective.name == name
        assert objective.default_metric == metric
        assert objective.n_outputs() == (NUM_CLASS if name.startswith("multi:") else 1)
