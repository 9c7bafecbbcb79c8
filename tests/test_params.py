"""Tests of gpuboost.params: the parameter table, aliases, defaults and validation."""

import math

import numpy as np
import pytest

import gpuboost
from gpuboost.params import (
    ALIASES,
    CAT_SMOOTH_ESTIMATE_OBJECTIVES,
    DEFAULT_MIN_CHILD_WEIGHT,
    DEFAULT_MIN_DATA_IN_LEAF,
    DEFAULT_SPLIT_PENALTY,
    MULTICLASS_MIN_CHILD_WEIGHT,
    PARAMETERS,
    PENALIZED_MIN_DATA_IN_LEAF,
    PROCESS_ONLY,
    RUNTIME_ONLY,
    SAVED_WHEN_SET,
    canonical_name,
    model_params,
    parameter_table_markdown,
    validate_file_params,
    validate_params,
)


def _a_valid_value(param):
    """A valid non-default value of ``param`` (used to check alias mapping)."""
    if param.choices:
        return param.choices[-1] if param.choices[-1] != param.default else param.choices[0]
    if param.kind == "int":
        return int(param.low or 0) + 1 if param.high is None else int(param.high)
    if param.kind == "float":
        if param.high is not None:
            return (param.low + param.high) / 2
        return (param.low or 0.0) + 0.25
    if param.kind == "metric":
        return ["mae"]
    if param.kind == "any":
        return "reg:absoluteerror"
    if param.kind == "bool":
        return not param.default
    if param.kind == "monotone":
        return [1, 0, -1]
    if param.kind == "interaction":
        return [[0, 1], [2]]
    raise AssertionError(param)


def test_defaults_are_complete_and_valid():
    params = validate_params(None)
    assert set(params) == set(PARAMETERS)
    for name, param in PARAMETERS.items():
        if name not in (
            "min_child_weight",
            "split_penalty",
            "min_data_in_leaf",
            "cat_smooth_estimate",
        ):
            # the objective's (the tests below)
            assert params[name] == param.default
    assert validate_params({}) == params


@pytest.mark.parametrize(
    "objective, expected",
    [
        ("reg:squarederror", DEFAULT_MIN_CHILD_WEIGHT),
        ("binary:logistic", DEFAULT_MIN_CHILD_WEIGHT),
        ("rank:ndcg", DEFAULT_MIN_CHILD_WEIGHT),
        ("multi:softmax", MULTICLASS_MIN_CHILD_WEIGHT),
        ("multi:softprob", MULTICLASS_MIN_CHILD_WEIGHT),
    ],
)
def test_min_child_weight_defaults_to_the_objectives(objective, expected):
    """1 (XGBoost's), and 1e-3 for the multiclass objectives; a given value (or alias)
    always wins, and a custom objective takes 1."""
    assert (DEFAULT_MIN_CHILD_WEIGHT, MULTICLASS_MIN_CHILD_WEIGHT) == (1.0, 1e-3)
    params = {"objective": objective, "num_class": 3}
    assert validate_params(params)["min_child_weight"] == expected
    assert validate_params(dict(params, min_child_weight=0.5))["min_child_weight"] == 0.5
    assert validate_params(dict(params, min_sum_hessian_in_leaf=2))["min_child_weight"] == 2.0
    assert validate_params({"objective": lambda p, d: (p, p)})["min_child_weight"] == 1.0


@pytest.mark.parametrize(
    "objective, estimate",
    [
        ("reg:squarederror", True),
        ("binary:logistic", True),
        ("reg:absoluteerror", False),
        ("rank:ndcg", False),
        ("multi:softprob", False),
    ],
)
def test_cat_smooth_estimate_defaults_to_the_objectives(objective, estimate):
    """On for squared error and binary logistic loss (the gradient variance is the
    dispersion times the hessian), off for the others and custom objectives; a given
    value wins either way, None means the objective's, and a model file without it was
    trained with LightGBM's fixed cat_smooth."""
    assert CAT_SMOOTH_ESTIMATE_OBJECTIVES == ("reg:squarederror", "binary:logistic")
    params = {"objective": objective, "num_class": 3}
    assert validate_params(params)["cat_smooth_estimate"] is estimate
    assert validate_params(dict(params, cat_smooth_estimate=None))["cat_smooth_estimate"] is (
        estimate
    )
    for given in (True, False):
        resolved = validate_params(dict(params, cat_smooth_estimate=given))
        assert resolved["cat_smooth_estimate"] is given
    assert validate_params({"objective": lambda p, d: (p, p)})["cat_smooth_estimate"] is False
    assert validate_file_params(params)["cat_smooth_estimate"] is False
    with pytest.raises(ValueError, match="'cat_smooth_estimate' must be True or False"):
        validate_params({"cat_smooth_estimate": 1})


@pytest.mark.parametrize(
    "objective, penalty",
    [
        ("reg:squarederror", DEFAULT_SPLIT_PENALTY),
        ("binary:logistic", DEFAULT_SPLIT_PENALTY),
        ("reg:absoluteerror", 0.0),
        ("rank:ndcg", 0.0),
        ("multi:softprob", 0.0),
    ],
)
def test_split_penalty_and_min_data_in_leaf_default_to_the_objectives(objective, penalty):
    """2 for squared error and binary logistic loss, with leaves of any size; 0 and 10-row
    leaves for the others and for custom objectives; given values win, and a penalty
    given to another objective brings the small leaves with it."""
    assert (DEFAULT_SPLIT_PENALTY, PENALIZED_MIN_DATA_IN_LEAF, DEFAULT_MIN_DATA_IN_LEAF) == (
        2,
        1,
        10,
    )
    params = {"objective": objective, "num_class": 3}
    resolved = validate_params(params)
    leaves = PENALIZED_MIN_DATA_IN_LEAF if penalty else DEFAULT_MIN_DATA_IN_LEAF
    assert (resolved["split_penalty"], resolved["min_data_in_leaf"]) == (penalty, leaves)
    off = validate_params(dict(params, split_penalty=0))
    assert (off["split_penalty"], off["min_data_in_leaf"]) == (0.0, DEFAULT_MIN_DATA_IN_LEAF)
    on = validate_params(dict(params, split_penalty=4, min_child_samples=5))
    assert (on["split_penalty"], on["min_data_in_leaf"]) == (4.0, 5)
    custom = validate_params({"objective": lambda p, d: (p, p)})
    assert (custom["split_penalty"], custom["min_data_in_leaf"]) == (0.0, 10)


def test_canonical_names_map_to_themselves():
    for name in PARAMETERS:
        assert canonical_name(name) == name


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_every_alias_maps_to_its_canonical_name(alias):
    canonical = ALIASES[alias]
    assert canonical_name(alias) == canonical
    value = _a_valid_value(PARAMETERS[canonical])
    params = validate_params({alias: value})
    expected = validate_params({canonical: value})[canonical]
    assert params[canonical] == expected
    assert alias not in params or alias == canonical


def test_aliases_are_unique_and_not_canonical_names():
    declared = [a for p in PARAMETERS.values() for a in p.aliases]
    assert len(declared) == len(set(declared)) == len(ALIASES)
    assert not set(ALIASES) & set(PARAMETERS)


def test_known_alias_examples():
    assert validate_params({"eta": 0.1})["learning_rate"] == 0.1
    assert validate_params({"num_leaves": 31})["max_leaves"] == 31
    assert validate_params({"lambda": 2.0})["reg_lambda"] == 2.0
    assert validate_params({"random_state": 7})["seed"] == 7
    assert validate_params({"min_child_samples": 5})["min_data_in_leaf"] == 5
    assert validate_params({"feature_fraction": 0.5})["colsample_bytree"] == 0.5


def test_bool_parameters_accept_only_booleans():
    assert validate_params({"enable_bundle": False})["enable_bundle"] is False
    assert validate_params({"enable_bundle": np.bool_(True)})["enable_bundle"] is True
    for bad in (1, "yes", None):
        with pytest.raises(ValueError, match="enable_bundle.*True or False"):
            validate_params({"enable_bundle": bad})


def test_unknown_parameter_is_named():
    with pytest.raises(ValueError, match="'max_dept'"):
        validate_params({"max_dept": 3})
    with pytest.raises(ValueError, match="Did you mean"):
        validate_params({"max_dept": 3})


@pytest.mark.parametrize(
    "params",
    [
        {"eta": 0.1, "learning_rate": 0.2},
        {"eta": 0.1, "shrinkage_rate": 0.1},
        {"lambda": 1.0, "reg_lambda": 1.0},
    ],
)
def test_parameter_given_twice_raises(params):
    with pytest.raises(ValueError, match="given twice"):
        validate_params(params)


@pytest.mark.parametrize(
    "name, value",
    [
        ("learning_rate", 0.0),
        ("learning_rate", -0.1),
        ("max_depth", -1),
        ("max_bin", 1),
        ("max_bin", 256),
        ("subsample", 0.0),
        ("subsample", 1.5),
        ("colsample_bytree", 0.0),
        ("colsample_bynode", 1.01),
        ("min_data_in_leaf", 0),
        ("quantile_alpha", 1.0),
        ("quantile_alpha", 0.0),
        ("tweedie_variance_power", 2.0),
        ("tweedie_variance_power", 0.5),
        ("verbosity", 4),
        ("nthread", -2),
        ("reg_lambda", -1.0),
        ("huber_delta", 0.0),
    ],
)
def test_out_of_range_value_is_named(name, value):
    with pytest.raises(ValueError, match=f"'{name}'.*out of range"):
        validate_params({name: value})


@pytest.mark.parametrize(
    "name, value",
    [
        ("learning_rate", math.inf),
        ("learning_rate", math.nan),
        ("learning_rate", "0.1"),
        ("learning_rate", True),
        ("max_depth", 2.5),
        ("max_depth", "3"),
        ("max_depth", math.nan),
        ("grow_policy", "bestfirst"),
        ("grow_policy", 1),
        ("device", "tpu"),
        ("device", "cuda:x"),
        ("objective", 3),
        ("eval_metric", 3),
        ("eval_metric", ["rmse", 1]),
        ("reg_alpha", None),
    ],
)
def test_wrong_type_or_choice_is_named(name, value):
    with pytest.raises(ValueError, match=f"'{name}'"):
        validate_params({name: value})


def test_numeric_conversions():
    params = validate_params(
        {"max_depth": 4.0, "learning_rate": 1, "seed": np.int64(3), "reg_alpha": np.float32(0.5)}
    )
    assert params["max_depth"] == 4 and type(params["max_depth"]) is int
    assert params["learning_rate"] == 1.0 and type(params["learning_rate"]) is float
    assert params["seed"] == 3 and type(params["seed"]) is int
    assert params["reg_alpha"] == 0.5


def test_inclusive_bounds_are_accepted():
    params = validate_params(
        {
            "subsample": 1.0,
            "max_bin": 255,
            "min_child_weight": 0.0,
            "tweedie_variance_power": 1.0,
            "verbosity": 3,
            "nthread": -1,
        }
    )
    assert params["max_bin"] == 255 and params["tweedie_variance_power"] == 1.0


def test_metric_parameter_becomes_a_list():
    assert validate_params({"eval_metric": "rmse"})["eval_metric"] == ["rmse"]
    assert validate_params({"metric": ("rmse", "mae")})["eval_metric"] == ["rmse", "mae"]
    assert validate_params({})["eval_metric"] is None


def test_objective_may_be_a_callable():
    def objective(margin, dataset):
        return margin, margin

    assert validate_params({"objective": objective})["objective"] is objective


def test_device_spellings():
    assert validate_params({"device": "gpu"})["device"] == "cuda"
    assert validate_params({"device": "cuda:1"})["device"] == "cuda:1"
    assert validate_params({"device": "cpu"})["device"] == "cpu"


def test_multiclass_needs_num_class():
    with pytest.raises(ValueError, match="num_class"):
        validate_params({"objective": "multi:softprob"})
    with pytest.raises(ValueError, match="num_class"):
        validate_params({"objective": "multi:softmax", "num_class": 1})
    assert validate_params({"objective": "multi:softmax", "num_class": 3})["num_class"] == 3


def test_unbounded_depthwise_tree_is_rejected():
    with pytest.raises(ValueError, match="depthwise"):
        validate_params({"max_depth": 0})
    assert validate_params({"max_depth": 0, "max_leaves": 8})["max_depth"] == 0
    assert validate_params({"max_depth": 0, "grow_policy": "lossguide"})["max_depth"] == 0


def test_validate_does_not_modify_its_input():
    user = {"eta": 0.5, "eval_metric": ["rmse"]}
    validate_params(user)
    assert user == {"eta": 0.5, "eval_metric": ["rmse"]}


def test_model_params_drops_runtime_only_ones_and_callables():
    params = validate_params(
        {"device": "cpu", "verbosity": 0, "nthread": 2, "objective": lambda m, d: (m, m)}
    )
    kept = model_params(params)
    assert RUNTIME_ONLY == {"device", "verbosity", "nthread"}
    assert not set(kept) & RUNTIME_ONLY
    assert "objective" not in kept
    assert PROCESS_ONLY == {"process_type", "updater", "refresh_leaf"}  # never saved
    # ... and the categorical ones whose defaults changed after files were written without
    # them (ABSENT_FROM_FILE), only by models with categorical features.
    changed = {"cat_penalty_factor", "cat_smooth", "cat_l2", "max_cat_threshold"}
    assert set(kept) == (
        set(PARAMETERS) - RUNTIME_ONLY - PROCESS_ONLY - SAVED_WHEN_SET - {"objective"} | changed
    )
    assert not set(model_params(params, categorical=False)) & changed
    for name, value in kept.items():
        assert value == params[name]
    # Parameters newer than the format are saved when set (models not using them keep
    # their bytes).
    assert model_params(validate_params({"scale_pos_weight": 2.0}))["scale_pos_weight"] == 2.0
    assert model_params(validate_params({"is_unbalance": True}))["is_unbalance"] is True


def test_parameter_table_lists_every_parameter_and_alias():
    table = parameter_table_markdown()
    lines = table.splitlines()
    assert lines[0].startswith("| parameter |")
    assert len(lines) == 2 + len(PARAMETERS)
    for line, param in zip(lines[2:], PARAMETERS.values()):
        assert line.startswith(f"| `{param.name}` |")
        for alias in param.aliases:
            assert f"`{alias}`" in line
        assert param.doc in line
    assert "0.0 < x ≤ 1.0" in table  # subsample's range


def test_trainings_record_the_min_child_weight_they_used():
    """The resolved value reaches the trees and the model: a multiclass booster, the
    scikit-learn classifier on three classes (its default None) and a binary one; AdaBoost
    keeps 1 on three classes (its weak learners' own)."""
    rng = np.random.default_rng(0)
    X = rng.random((120, 3))
    y = np.floor(X[:, 0] * 3)
    three = {"objective": "multi:softprob", "num_class": 3, "verbosity": 0}
    booster = gpuboost.train(three, gpuboost.Dataset(X, label=y), 2)
    assert booster.params["min_child_weight"] == MULTICLASS_MIN_CHILD_WEIGHT
    loaded = gpuboost.Booster.from_json(booster.save_raw().decode())
    assert loaded.params["min_child_weight"] == MULTICLASS_MIN_CHILD_WEIGHT
    classifier = gpuboost.GBClassifier(n_estimators=2, device="cpu").fit(X, y)
    assert classifier.get_booster().params["min_child_weight"] == MULTICLASS_MIN_CHILD_WEIGHT
    binary = gpuboost.GBClassifier(n_estimators=2, device="cpu").fit(X, y > 0)
    assert binary.get_booster().params["min_child_weight"] == DEFAULT_MIN_CHILD_WEIGHT
    ada = gpuboost.train(dict(three, booster="adaboost"), gpuboost.Dataset(X, label=y), 2)
    assert ada.params["min_child_weight"] == DEFAULT_MIN_CHILD_WEIGHT


def test_models_record_the_split_penalty_and_files_without_it_were_trained_without_it():
    """A penalized model saves its penalty and reads it back; an unpenalized one (a
    multiclass model, or one trained with 0) writes no key, as files written before the
    penalty existed, and such a file reads back with 0, not with the objective's
    default."""
    rng = np.random.default_rng(1)
    X = rng.random((150, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=150)
    data = gpuboost.Dataset(X, label=y)
    penalized = gpuboost.train({"objective": "reg:squarederror", "verbosity": 0}, data, 2)
    text = penalized.save_raw().decode()
    assert '"split_penalty"' in text
    assert gpuboost.Booster.from_json(text).params["split_penalty"] == DEFAULT_SPLIT_PENALTY
    plain = gpuboost.train({"split_penalty": 0, "verbosity": 0}, data, 2)
    text = plain.save_raw().decode()
    assert '"split_penalty"' not in text
    loaded = gpuboost.Booster.from_json(text)
    assert (loaded.params["split_penalty"], loaded.params["min_data_in_leaf"]) == (0.0, 10)
    assert loaded.save_raw() == plain.save_raw()


def test_a_custom_objective_given_as_obj_takes_the_custom_objectives_defaults():
    """``train(..., obj=)`` and the scikit-learn estimators' callable objective resolve
    the defaults for the custom objective (no split penalty, 10-row leaves), not for the
    objective it replaces."""
    rng = np.random.default_rng(2)
    X = rng.random((100, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=100)

    def squared_error(margin, dtrain):
        return margin - dtrain.get_label(), np.ones_like(margin)

    data = gpuboost.Dataset(X, label=y)
    given = {"objective": "reg:squarederror", "verbosity": 0}
    booster = gpuboost.train(given, data, 2, obj=squared_error)
    assert (booster.params["split_penalty"], booster.params["min_data_in_leaf"]) == (0.0, 10)
    estimator = gpuboost.GBRegressor(n_estimators=2, objective=lambda t, p: (p - t, 1.0 + 0 * p))
    params = estimator.fit(X, y).get_booster().params
    assert (params["split_penalty"], params["min_data_in_leaf"]) == (0.0, 10)
