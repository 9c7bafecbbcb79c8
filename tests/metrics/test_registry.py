"""The metric registry (gpuboost.metrics.registry): names, '@' parameters, errors,
and evaluate()."""

import pytest
from _metric_references import _binary_data, _weights_or_none

from gpuboost.metrics import NDCG, Metric, evaluate, get_metric


@pytest.mark.parametrize(
    "name, canonical_name, higher_is_better",
    [
        ("rmse", "rmse", False),
        ("mae", "mae", False),
        ("logloss", "logloss", False),
        ("error", "error", False),
        ("error@0.7", "error@0.7", False),
        ("error@0.5", "error", False),
        ("auc", "auc", True),
        ("mlogloss", "mlogloss", False),
        ("merror", "merror", False),
        ("poisson-nloglik", "poisson-nloglik", False),
        ("gamma-nloglik", "gamma-nloglik", False),
        ("tweedie-nloglik", "tweedie-nloglik@1.5", False),
        ("tweedie-nloglik@1.5", "tweedie-nloglik@1.5", False),
        ("tweedie-nloglik@1.20", "tweedie-nloglik@1.2", False),
        ("pinball", "pinball@0.5", False),
        ("pinball@0.9", "pinball@0.9", False),
        ("pinball@.25", "pinball@0.25", False),
        ("tweedie-nloglik@1", "tweedie-nloglik@1.0", False),
        ("ndcg@05", "ndcg@5", True),
        ("ndcg", "ndcg", True),
        ("ndcg@5", "ndcg@5", True),
        ("map", "map", True),
        ("map@3", "map@3", True),
    ],
)
def test_names_and_direction(name, canonical_name, higher_is_better):
    metric = get_metric(name)
    assert isinstance(metric, Metric)
    assert metric.name == canonical_name
    assert metric.higher_is_better is higher_is_better
    assert get_metric(metric.name).name == canonical_name


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError) as error:
        get_metric("accuracy")
    message = str(error.value)
    assert "accuracy" in message
    for valid in (
        "rmse",
        "auc",
        "ndcg@<k>",
        "tweedie-nloglik@<rho>",
        "pinball@<alpha>",
    ):
        assert valid in message


@pytest.mark.parametrize(
    "name",
    [
        "rmse@3",
        "auc@0.5",
        "error@",
        "error@abc",
        "error@nan",
        "ndcg@0",
        "ndcg@-1",
        "ndcg@2.5",
        "map@x",
        "tweedie-nloglik@2",
        "tweedie-nloglik@0.9",
        "pinball@0",
        "pinball@1",
        "RMSE",
        "",
    ],
)
def test_invalid_names_raise(name):
    with pytest.raises(ValueError):
        get_metric(name)


def test_evaluate_returns_names_and_values_in_order(rng):
    y, pred = _binary_data(rng)
    weight = _weights_or_none(rng, True)
    names = ["auc", "error@0.7", "logloss"]
    results = evaluate(names, y, pred, weight=weight)
    assert [name for name, _ in results] == names
    for (_, value), name in zip(results, names):
        assert value == get_metric(name)(y, pred, weight=weight)
    assert evaluate("rmse", y, pred) == [("rmse", get_metric("rmse")(y, pred))]
    assert evaluate([NDCG(2)], y[:4], pred[:4], group=[4])[0][0] == "ndcg@2"
