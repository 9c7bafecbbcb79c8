"""Tests of gpuboost.backends.cpu.gradients: the compiled gradients and hessians of every
built-in pointwise objective equal the objective's own NumPy formulas bit for bit
(hypothesis); the others are left to NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends import CpuBackend
from gpuboost.backends.cpu.gradients import COMPILED_OBJECTIVES, gradients
from gpuboost.objectives import CustomObjective, get_objective
from gpuboost.objectives.regression import HuberError


def _intervals(rng, n):
    """survival:aft labels: observed, right-, left- and interval-censored times."""
    time = np.exp(rng.normal(size=n))
    kind = rng.integers(0, 4, n)
    lower = np.where(kind == 2, 0.0, time)
    upper = np.where(kind == 1, np.inf, np.where(kind == 3, time * 1.8, time))
    return np.column_stack([lower, upper]).reshape(n, 2)


#: name (``objective/variant``) -> (params, labels from a generator and a row count)
CASES = {
    "reg:squarederror": ({}, lambda rng, n: rng.normal(size=n) * 10),
    "reg:absoluteerror": ({}, lambda rng, n: np.round(rng.normal(size=n))),
    "reg:huber": ({"huber_delta": 0.7}, lambda rng, n: rng.normal(size=n) * 3),
    "reg:quantile": ({"quantile_alpha": 0.3}, lambda rng, n: np.round(rng.normal(size=n))),
    "binary:logistic": ({}, lambda rng, n: rng.choice([0.0, 1.0, 0.25], size=n)),
    "binary:exponential": ({}, lambda rng, n: rng.choice([0.0, 1.0], size=n)),
    "multi:softprob": ({"num_class": 4}, lambda rng, n: rng.integers(0, 4, n).astype(float)),
    "multi:softmax": ({"num_class": 3}, lambda rng, n: rng.integers(0, 3, n).astype(float)),
    "count:poisson": ({}, lambda rng, n: rng.poisson(2.0, n).astype(float)),
    "reg:gamma": ({}, lambda rng, n: rng.gamma(2.0, size=n) + 1e-3),
    "reg:tweedie": ({"tweedie_variance_power": 1.3}, lambda rng, n: rng.poisson(1.0, n) * 1.5),
    "survival:aft/normal": ({"aft_loss_distribution_scale": 0.7}, _intervals),
    "survival:aft/logistic": ({"aft_loss_distribution": "logistic"}, _intervals),
    "survival:aft/extreme": (
        {"aft_loss_distribution": "extreme", "aft_loss_distribution_scale": 1.3},
        _intervals,
    ),
}


def _bits(values):
    return np.ascontiguousarray(values).view(np.int64)


def test_every_pointwise_built_in_objective_has_a_case():
    kinds = {type(get_objective(name.split("/")[0], params)) for name, (params, _) in CASES.items()}
    assert kinds == set(COMPILED_OBJECTIVES)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 400),
    margin_scale=st.sampled_from([0.0, 1.0, 30.0, 800.0]),
    weighted=st.booleans(),
)
@pytest.mark.parametrize("name", sorted(CASES))
def test_equal_to_the_objective_bit_for_bit(name, seed, n_rows, margin_scale, weighted):
    params, labels = CASES[name]
    objective = get_objective(name.split("/")[0], params)
    rng = np.random.default_rng(seed)
    y = labels(rng, n_rows).astype(np.float64)
    shape = (n_rows,) if objective.n_outputs() == 1 else (n_rows, objective.n_outputs())
    raw = rng.normal(size=shape) * margin_scale
    raw[rng.random(shape) < 0.1] = -0.0
    weight = rng.uniform(0.0, 3.0, size=n_rows) if weighted else None
    with np.errstate(all="ignore"):  # margins of 800 overflow exp in both
        compiled = gradients(objective, y, raw, weight)
        expected = objective.gradients(np, y, raw, weight)
    for got, want in zip(compiled, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(_bits(got), _bits(want))


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 300),
    n_targets=st.integers(2, 5),
    weighted=st.booleans(),
)
@pytest.mark.parametrize(
    "name", ["reg:squarederror", "binary:logistic", "count:poisson", "reg:gamma", "reg:tweedie"]
)
def test_several_targets_equal_the_objective_bit_for_bit(name, seed, n_rows, n_targets, weighted):
    """Labels and margins (n, k): the flattened kernel, each row's weight repeated, gives
    the objective's array code's bits."""
    params, labels = CASES[name]
    objective = get_objective(name, params).with_targets(n_targets)
    rng = np.random.default_rng(seed)
    y = np.column_stack([labels(rng, n_rows) for _ in range(n_targets)]).reshape(n_rows, n_targets)
    raw = rng.normal(size=(n_rows, n_targets)) * 30.0
    weight = rng.uniform(0.0, 3.0, size=n_rows) if weighted else None
    with np.errstate(all="ignore"):
        compiled = gradients(objective, y, raw, weight)
        expected = objective.gradients(np, y, raw, weight)
    for got, want in zip(compiled, expected):
        assert got.shape == want.shape == (n_rows, n_targets)
        np.testing.assert_array_equal(_bits(got), _bits(want))


def test_huber_uses_the_delta_of_the_round():
    objective = HuberError(huber_delta=5.0)
    objective.round_delta = 0.25
    y, raw = np.zeros(4), np.array([-1.0, -0.1, 0.2, 3.0])
    grad, _ = gradients(objective, y, raw, None)
    np.testing.assert_array_equal(grad, [-0.25, -0.1, 0.2, 0.25])


def test_other_objectives_are_left_to_numpy():
    rng = np.random.default_rng(0)
    y, raw = rng.normal(size=20), rng.normal(size=20)
    custom = CustomObjective(lambda margin, dataset: (margin - 1.0, np.ones_like(margin)))
    assert gradients(custom, y, raw, None) is None
    ranking = get_objective("rank:ndcg", {})
    assert gradients(ranking, y, raw, None) is None

    class Subclass(type(get_objective("reg:squarederror", {}))):
        pass

    assert gradients(Subclass(), y, raw, None) is None
    backend = CpuBackend()
    grad, hess = backend.gradients(Subclass(), y, raw, None)
    np.testing.assert_array_equal(grad, raw - y)


def test_wrong_margin_shapes_are_refused_as_by_the_objective():
    objective = get_objective("multi:softprob", {"num_class": 3})
    with pytest.raises(ValueError, match="raw predictions must have shape"):
        gradients(objective, np.zeros(5), np.zeros(5), None)
