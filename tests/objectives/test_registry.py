"""The objective registry (gpuboost.objectives.registry): names, parameters, errors."""

import pytest

from gpuboost.objectives import (
    CUSTOM_OBJECTIVE_NAME,
    OBJECTIVES,
    CustomObjective,
    Objective,
    get_objective,
)
from gpuboost.params import PARAMETERS, validate_params


def test_get_objective_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="unknown objective") as info:
        get_objective("reg:linear", {})
    for name in OBJECTIVES:
        assert name in str(info.value)


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("multi:softprob", {}, "num_class"),
        ("multi:softmax", {"num_class": 1}, "num_class"),
        ("multi:softmax", {"num_class": 2.5}, "num_class"),
        ("reg:huber", {"huber_delta": 0.0}, "huber_delta"),
        ("reg:quantile", {"quantile_alpha": 1.0}, "quantile_alpha"),
        ("reg:quantile", {"quantile_alpha": 0.0}, "quantile_alpha"),
        ("reg:tweedie", {"tweedie_variance_power": 2.0}, "tweedie_variance_power"),
        ("reg:tweedie", {"tweedie_variance_power": 0.9}, "tweedie_variance_power"),
    ],
)
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


# ---------------------------------------------------------------------------
# the name table
# ---------------------------------------------------------------------------

#: The names, in the order of OBJECTIVES (the error message lists them in it).
EXPECTED_OBJECTIVES = (
    "reg:squarederror",
    "reg:absoluteerror",
    "reg:huber",
    "reg:quantile",
    "reg:expectileerror",
    "binary:logistic",
    "binary:exponential",
    "multi:softmax",
    "multi:softprob",
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
    "rank:ndcg",
    "rank:map",
    "rank:pairwise",
    "survival:cox",
    "survival:aft",
)


#: Objective parameters whose default the parameter table owns.
TABLE_OWNED_DEFAULTS = (
    "huber_delta",
    "huber_alpha",
    "quantile_alpha",
    "tweedie_variance_power",
    "lambdarank_truncation_level",
)


def test_objectives_names_and_order():
    assert OBJECTIVES == EXPECTED_OBJECTIVES


@pytest.mark.parametrize("name", OBJECTIVES)
def test_registry_builds_every_objective_from_validated_params(name):
    params = validate_params(
        {"objective": name, "num_class": 3 if name.startswith("multi:") else 0}
    )
    objective = get_objective(name, params)
    assert isinstance(objective, Objective)
    assert objective.name == name
    assert type(objective).from_params(params).get_params() == objective.get_params()
    assert objective.n_outputs() == (3 if name.startswith("multi:") else 1)
    # Validated params and missing keys both give the parameter table's defaults.
    for key, value in objective.get_params().items():
        if key in TABLE_OWNED_DEFAULTS:
            assert value == PARAMETERS[key].default
            assert type(objective).from_params({}).get_params()[key] == value


def test_unknown_name_error_message_is_unchanged():
    with pytest.raises(ValueError) as info:
        get_objective("reg:linear", {})
    assert str(info.value) == (
        "unknown objective 'reg:linear'; valid objectives are: " + ", ".join(EXPECTED_OBJECTIVES)
    )


def test_custom_by_callable_and_by_name():
    def func(raw, dataset):
        return raw, raw

    objective = get_objective(func, {"num_class": 3})
    assert isinstance(objective, CustomObjective) and objective.func is func
    assert objective.n_outputs() == 3
    assert objective.name == CUSTOM_OBJECTIVE_NAME == "custom"
    loaded = get_objective(CUSTOM_OBJECTIVE_NAME, {"num_class": 0})
    assert isinstance(loaded, CustomObjective) and loaded.func is None
    assert loaded.n_outputs() == 1
    assert CUSTOM_OBJECTIVE_NAME not in OBJECTIVES
