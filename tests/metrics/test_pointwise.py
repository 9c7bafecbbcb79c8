"""Pointwise metrics (gpuboost.metrics.pointwise): rmse, mae, pinball and the
negative log-likelihoods against naive loops, scikit-learn and hand-computed values."""

import math
import sys

import numpy as np
import pytest
from _metric_references import (
    _gamma_data,
    _positive_data,
    _regression_data,
    _weighted_mean_loop,
    _weights_or_none,
    assert_matches_naive_loop,
    naive_gamma,
    naive_mae,
    naive_pinball,
    naive_poisson,
    naive_rmse,
    naive_tweedie,
)

from gpuboost.metrics import TweedieNegLogLik, get_metric

POINTWISE_CASES = [
    ("rmse", _regression_data, naive_rmse),
    ("mae", _regression_data, naive_mae),
    ("poisson-nloglik", _positive_data, naive_poisson),
    ("gamma-nloglik", _gamma_data, naive_gamma),
    ("tweedie-nloglik", _positive_data, naive_tweedie(1.5)),
    ("tweedie-nloglik@1.2", _positive_data, naive_tweedie(1.2)),
    ("pinball", _regression_data, naive_pinball(0.5)),
    ("pinball@0.9", _regression_data, naive_pinball(0.9)),
]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name, make_data, reference", POINTWISE_CASES)
def test_metric_matches_naive_loop(rng, name, make_data, reference, weighted):
    assert_matches_naive_loop(rng, name, make_data, reference, weighted)


def test_poisson_uses_log_gamma_of_labels():
    # Poisson(mu=1) probability of y=3 is exp(-1) / 3!, so nloglik = 1 + log 6.
    value = get_metric("poisson-nloglik")(np.array([3.0]), np.array([1.0]))
    assert value == pytest.approx(1.0 + math.log(6.0))


def test_poisson_log_gamma_needs_neither_scipy_nor_cupyx(rng, monkeypatch):
    y, pred = _positive_data(rng)
    value = get_metric("poisson-nloglik")(y, pred)
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # an import would fail
    monkeypatch.setitem(sys.modules, "cupyx.scipy.special", None)
    assert get_metric("poisson-nloglik")(y, pred) == value  # strict_math.lgamma, same bits
    assert value == pytest.approx(naive_poisson(list(y), list(pred), None))


def test_tweedie_at_variance_power_one_is_poisson_without_label_term(rng):
    y, pred = _positive_data(rng)
    weight = _weights_or_none(rng, True)
    expected = _weighted_mean_loop([mu - a * math.log(mu) for a, mu in zip(y, pred)], weight)
    assert get_metric("tweedie-nloglik@1")(y, pred, weight) == pytest.approx(expected)
    # continuity: close to rho = 1, the loss differs only by the label term y / (1 - rho)
    rho = 1.0 + 1e-7
    near = get_metric(f"tweedie-nloglik@{rho!r}")(y, pred, weight)
    label_term = _weighted_mean_loop([a / (1 - rho) for a in y], weight)
    assert near + label_term == pytest.approx(expected, rel=1e-5)


# ---------------------------------------------------------------------------
# scikit-learn as a second reference
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
def test_against_sklearn(rng, weighted):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    weight = _weights_or_none(rng, weighted)

    y, pred = _regression_data(rng)
    assert get_metric("rmse")(y, pred, weight) == pytest.approx(
        math.sqrt(sklearn_metrics.mean_squared_error(y, pred, sample_weight=weight))
    )
    assert get_metric("mae")(y, pred, weight) == pytest.approx(
        sklearn_metrics.mean_absolute_error(y, pred, sample_weight=weight)
    )
    for alpha in (0.1, 0.5, 0.9):
        assert get_metric(f"pinball@{alpha}")(y, pred, weight) == pytest.approx(
            sklearn_metrics.mean_pinball_loss(y, pred, alpha=alpha, sample_weight=weight)
        )


@pytest.mark.parametrize("weighted", [False, True])
def test_likelihoods_against_sklearn_deviances(rng, weighted):
    """The negative log-likelihoods are half the unit deviance plus a label-only term."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    weight = _weights_or_none(rng, weighted)

    def mean(values):
        return _weighted_mean_loop(list(values), weight)

    y, mu = _positive_data(rng)
    y_log_y = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)
    log_factorial = [math.lgamma(a + 1) for a in y]
    poisson_deviance = sklearn_metrics.mean_poisson_deviance(y, mu, sample_weight=weight)
    assert get_metric("poisson-nloglik")(y, mu, weight) == pytest.approx(
        poisson_deviance / 2 + mean(log_factorial - y_log_y + y)
    )
    for rho in (1.2, 1.5, 1.8):
        tweedie_deviance = sklearn_metrics.mean_tweedie_deviance(
            y, mu, power=rho, sample_weight=weight
        )
        label_term = mean(y ** (2 - rho) / ((1 - rho) * (2 - rho)))
        assert get_metric(f"tweedie-nloglik@{rho}")(y, mu, weight) == pytest.approx(
            tweedie_deviance / 2 - label_term
        )

    y, mu = _gamma_data(rng)
    gamma_deviance = sklearn_metrics.mean_gamma_deviance(y, mu, sample_weight=weight)
    assert get_metric("gamma-nloglik")(y, mu, weight) == pytest.approx(
        gamma_deviance / 2 + mean(np.log(y)) + 1
    )


def test_constructor_validation():
    with pytest.raises(ValueError):
        TweedieNegLogLik(variance_power=2.0)
    assert TweedieNegLogLik(1.0).name == "tweedie-nloglik@1.0"
