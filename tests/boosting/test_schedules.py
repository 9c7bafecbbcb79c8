"""Parameter schedules (issue 32, point 3): callbacks change the per-round parameters
between rounds (``Booster.set_param``, ``LearningRateScheduler``, ``reset_parameter``,
``train(learning_rates=)``), rounds counted from the start of the model; the model
records what every round was trained with, so a training resumed from a checkpoint
continues a schedule to the same bytes; every backend and a Dask cluster train the same
bytes."""

import json

import numpy as np
import pytest

import gpuboost
from gpuboost import Booster, LearningRateScheduler, TrainingCallback, reset_parameter
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.params import PER_ROUND_PARAMS


def _data(n_rows=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n_rows)
    return X, y


PARAMS = {"max_depth": 3, "verbosity": 0, "device": "cpu"}
RATES = [0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.1, 0.1]


def _train(rounds=8, params=PARAMS, **kwargs):
    X, y = _data()
    return gpuboost.train(params, gpuboost.Dataset(X, label=y), rounds, **kwargs)


class _SetRate(TrainingCallback):
    def before_iteration(self, model, epoch, evals_log):
        model.set_param({"eta": RATES[epoch]})  # an alias
        return False


def test_every_way_of_scheduling_the_rate_trains_the_same_model():
    by_list = _train(learning_rates=RATES)
    assert by_list.round_params == [dict(by_list.round_params[0], learning_rate=r) for r in RATES]
    for other in (
        _train(learning_rates=lambda r: RATES[r]),
        _train(callbacks=[LearningRateScheduler(RATES)]),
        _train(callbacks=[reset_parameter(learning_rate=RATES)]),
        _train(callbacks=[_SetRate()]),
    ):
        assert other.save_raw() == by_list.save_raw()
    constant = _train()
    assert constant.save_raw() != by_list.save_raw()
    document = json.loads(by_list.save_raw())
    assert document["version"] == 3
    assert document["learner"]["params"]["learning_rate"] == 0.1  # the last round's
    assert document["learner"]["round_params"][0] == {"learning_rate": 0.5}
    assert document["learner"]["round_params"][-1] == {}
    loaded = Booster.from_json(by_list.to_json())
    assert loaded.round_params == by_list.round_params and loaded.save_raw() == by_list.save_raw()
    # A schedule that changes nothing writes the file of no schedule (version 1).
    same = _train(learning_rates=[0.3] * 8)
    assert same.save_raw() == constant.save_raw() and json.loads(same.save_raw())["version"] == 1


def test_a_training_resumed_from_a_checkpoint_continues_the_schedule(tmp_path):
    X, y = _data()
    full = gpuboost.train(PARAMS, gpuboost.Dataset(X, label=y), 8, learning_rates=RATES)
    checkpoint = gpuboost.TrainingCheckPoint(tmp_path, interval=3)
    gpuboost.train(
        PARAMS, gpuboost.Dataset(X, label=y), 3, learning_rates=RATES, callbacks=[checkpoint]
    )
    resumed = gpuboost.train(
        PARAMS,
        gpuboost.Dataset(X, label=y),
        5,
        learning_rates=RATES,
        init_model=checkpoint.path,
    )
    assert resumed.save_raw() == full.save_raw()
    # Continuing a model with another rate records the first rounds' rate.
    first = _train(rounds=2, params=dict(PARAMS, learning_rate=0.5))
    more = gpuboost.train(
        dict(PARAMS, learning_rate=0.1), gpuboost.Dataset(X, label=y), 2, init_model=first
    )
    assert [values["learning_rate"] for values in more.round_params] == [0.5, 0.5, 0.1, 0.1]


def test_other_per_round_parameters_and_every_backend(monkeypatch):
    schedule = {
        "learning_rate": RATES,
        "reg_lambda": lambda r: 1.0 + r,
        "colsample_bynode": [1.0, 0.6] * 4,
        "subsample": [1.0, 0.7] * 4,
        "min_child_weight": [1, 5] * 4,
    }
    compiled = _train(callbacks=[reset_parameter(**schedule)])
    assert compiled.round_params[3]["reg_lambda"] == 4.0
    assert compiled.round_params[1]["subsample"] == 0.7
    with emulated_kernels():
        cuda = _train(params=dict(PARAMS, device="cuda"), callbacks=[reset_parameter(**schedule)])
    assert cuda.save_raw() == compiled.save_raw()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert _train(callbacks=[reset_parameter(**schedule)]).save_raw() == compiled.save_raw()


def test_slicing_keeps_each_rounds_parameters():
    model = _train(learning_rates=RATES)
    assert [v["learning_rate"] for v in model[2:5].round_params] == RATES[2:5]
    assert Booster.from_json(model[2:5].to_json()).round_params == model[2:5].round_params


def test_what_cannot_be_scheduled_is_refused():
    with pytest.raises(ValueError, match="has 3 values, none for round 3"):
        _train(learning_rates=RATES[:3])
    model = _train(rounds=1)
    with pytest.raises(ValueError, match="set_param\\('max_depth'\\) would change"):
        model.set_param("max_depth", 4)
    with pytest.raises(ValueError, match="learning_rate"):
        model.set_param("learning_rate", -1.0)
    model.set_param("device", "cpu")  # runtime parameters may change
    X, y = _data()
    with pytest.raises(ValueError, match="booster='adaboost' trains every round"):
        gpuboost.train(
            {"booster": "adaboost", "objective": "binary:logistic", "verbosity": 0},
            gpuboost.Dataset(X, label=y > 0),
            3,
            learning_rates=[1.0, 0.5, 0.5],
        )


def _document(model):
    return json.loads(model.to_json())


def test_the_model_file_checks_the_recorded_rounds():
    model = _train(learning_rates=RATES)
    good = _document(model)
    corruptions = [
        (lambda d: d["learner"]["round_params"].pop(), "one object per round"),
        (lambda d: d["learner"]["round_params"].__setitem__(1, {"max_depth": 2}), "cannot change"),
        (
            lambda d: d["learner"]["round_params"].__setitem__(1, {"gamma": -1}),
            "round_params\\[1\\]",
        ),
        (lambda d: d["learner"]["round_params"].__setitem__(1, [0.4]), "not an object"),
        (lambda d: d.__setitem__("version", 1), "needs version 3"),
        (lambda d: d["learner"].__setitem__("round_params", [{}] * 8), "records no round"),
        (
            lambda d: d["learner"]["round_params"].__setitem__(7, {"learning_rate": 0.1}),
            "repeats params' value of 'learning_rate'",
        ),
    ]
    for corrupt, message in corruptions:
        document = json.loads(json.dumps(good))
        corrupt(document)
        with pytest.raises(ValueError, match=message):
            Booster.from_json(json.dumps(document))
    without = json.loads(json.dumps(good))
    del without["learner"]["round_params"]
    with pytest.raises(ValueError, match="present in a version 3 file"):
        Booster.from_json(json.dumps(without))
    assert set(PER_ROUND_PARAMS) >= {"learning_rate", "reg_lambda", "subsample"}


def test_a_scheduled_model_exports_to_xgboost_with_its_predictions(tmp_path):
    """The rates are in the leaf values: XGBoost predicts the export of a scheduled model
    (with feature weights and early stopping too) as gpuboost does."""
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    dtrain = gpuboost.Dataset(X[:400], label=y[:400], feature_weights=[1, 2, 3, 0.5, 1])
    dvalid = gpuboost.Dataset(X[400:], label=y[400:], reference=dtrain)
    model = gpuboost.train(
        dict(PARAMS, colsample_bynode=0.6),
        dtrain,
        8,
        evals=[(dvalid, "valid")],
        early_stopping_rounds=3,
        learning_rates=RATES,
        verbose_eval=False,
    )
    path = tmp_path / "model.json"
    model.export_xgboost(path)
    X32 = X.astype(np.float32)  # the export's thresholds are exact for float32 input
    theirs = xgb.Booster(model_file=str(path)).predict(xgb.DMatrix(X32), output_margin=True)
    ours = model.predict(X32, output_margin=True, iteration_range=(0, model.num_boosted_rounds()))
    np.testing.assert_allclose(theirs, ours, rtol=1e-6, atol=1e-6)


def test_save_best_keeps_the_best_rounds_parameters():
    """``EarlyStopping(save_best=True)`` drops the later rounds' recorded parameters with
    their trees, so the model saves and loads."""
    X, y = _data()
    dtrain = gpuboost.Dataset(X[:400], label=y[:400])
    dvalid = gpuboost.Dataset(X[400:], label=y[400:])
    model = gpuboost.train(
        PARAMS,
        dtrain,
        40,
        evals=[(dvalid, "valid")],
        learning_rates=lambda r: 0.9 if r % 2 else 0.8,
        callbacks=[gpuboost.EarlyStopping(2, save_best=True)],
        verbose_eval=False,
    )
    assert model.num_boosted_rounds() < 40
    assert len(model.round_params) == model.num_boosted_rounds()
    assert Booster.from_json(model.to_json()).save_raw() == model.save_raw()
