"""Tests of gpuboost.boosting.callback: early stopping, evaluation printing, checkpoints,
the protocol."""

import os

import pytest

import gpuboost
from gpuboost import Dataset
from gpuboost.boosting.callback import (
    CallbackContainer,
    EarlyStopping,
    EvaluationMonitor,
    TrainingCallback,
    TrainingCheckPoint,
)


class FakeModel:
    best_iteration = None
    best_score = None


def run_early_stopping(callback, scores, data_name="valid", metric_name="rmse"):
    """Feed ``scores`` round by round; returns the epoch at which it asked to stop (or None)."""
    model = FakeModel()
    log = {data_name: {metric_name: []}}
    for epoch, score in enumerate(scores):
        log[data_name][metric_name].append(score)
        if callback.after_iteration(model, epoch, log):
            return epoch, model
    return None, model


def fit(dataset, rounds, **kwargs):
    kwargs.setdefault("verbose_eval", False)
    return gpuboost.train(
        {"device": "cpu", "max_depth": 3}, dataset, num_boost_round=rounds, **kwargs
    )


@pytest.fixture
def datasets(regression_data):
    X, y = regression_data
    train_set = Dataset(X[:300], label=y[:300])
    return train_set, Dataset(X[300:], label=y[300:], reference=train_set)


# ---------------------------------------------------------------------------
# EarlyStopping
# ---------------------------------------------------------------------------


def test_early_stopping_minimizes():
    stopped, model = run_early_stopping(EarlyStopping(3), [5.0, 4.0, 4.5, 4.2, 4.1, 3.0])
    assert stopped == 4
    assert model.best_iteration == 1 and model.best_score == 4.0


def test_early_stopping_maximizes():
    callback = EarlyStopping(2, maximize=True)
    stopped, model = run_early_stopping(callback, [0.5, 0.7, 0.6, 0.7, 0.9])
    assert stopped == 3 and model.best_iteration == 1 and model.best_score == 0.7


def test_direction_defaults_from_the_metric():
    stopped, model = run_early_stopping(EarlyStopping(2), [0.6, 0.8, 0.7, 0.75], metric_name="auc")
    assert stopped == 3 and model.best_iteration == 1
    stopped, model = run_early_stopping(
        EarlyStopping(2), [0.6, 0.8, 0.7, 0.75], metric_name="logloss"
    )
    assert stopped == 2 and model.best_iteration == 0


def test_min_delta():
    scores = [1.0, 0.96, 0.92, 0.80, 0.79, 0.78]
    stopped, model = run_early_stopping(EarlyStopping(2, min_delta=0.1), scores)
    assert stopped == 2 and model.best_iteration == 0  # 0.96 and 0.92 are not 0.1 better
    stopped, model = run_early_stopping(EarlyStopping(2, min_delta=0.03), scores)
    assert stopped == 5 and model.best_iteration == 3 and model.best_score == 0.80
    stopped, model = run_early_stopping(EarlyStopping(2), scores)
    assert stopped is None and model.best_iteration == 5


def test_never_stops_while_improving():
    stopped, model = run_early_stopping(EarlyStopping(1), [5.0, 4.0, 3.0, 2.0])
    assert stopped is None and model.best_iteration == 3


def test_watched_set_and_metric():
    callback = EarlyStopping(1, data_name="train", metric_name="mae")
    log = {"train": {"rmse": [1.0], "mae": [2.0]}, "valid": {"rmse": [3.0], "mae": [4.0]}}
    model = FakeModel()
    assert not callback.after_iteration(model, 0, log)
    assert model.best_score == 2.0
    # Default: the last metric of the last set.
    model = FakeModel()
    EarlyStopping(1).after_iteration(model, 0, log)
    assert model.best_score == 4.0


@pytest.mark.parametrize(
    "kwargs, log, match",
    [
        ({}, {}, "evaluation set"),
        ({"data_name": "test"}, {"valid": {"rmse": [1.0]}}, "'test'"),
        ({"metric_name": "auc"}, {"valid": {"rmse": [1.0]}}, "'auc'"),
    ],
)
def test_early_stopping_errors(kwargs, log, match):
    with pytest.raises(ValueError, match=match):
        EarlyStopping(2, **kwargs).after_iteration(FakeModel(), 0, log)


def test_invalid_early_stopping_arguments():
    with pytest.raises(ValueError, match="early_stopping_rounds"):
        EarlyStopping(0)
    with pytest.raises(ValueError, match="min_delta"):
        EarlyStopping(2, min_delta=-0.1)


def test_save_best_truncates_the_model(datasets):
    train_set, valid_set = datasets
    result = {}
    booster = fit(
        train_set,
        200,
        evals=[(valid_set, "valid")],
        evals_result=result,
        callbacks=[EarlyStopping(3, save_best=True)],
    )
    best = booster.best_iteration
    assert len(result["valid"]["rmse"]) == best + 4
    assert booster.num_boosted_rounds() == best + 1
    assert booster.best_score == min(result["valid"]["rmse"])
    without = fit(train_set, 200, evals=[(valid_set, "valid")], callbacks=[EarlyStopping(3)])
    assert without.num_boosted_rounds() == best + 4
    assert without.trees[: best + 1] == booster.trees


# ---------------------------------------------------------------------------
# EvaluationMonitor
# ---------------------------------------------------------------------------


def test_evaluation_monitor_period_prints_the_last_round():
    lines = []
    monitor = EvaluationMonitor(period=3, printer=lines.append)
    log = {"train": {"rmse": []}, "valid": {"rmse": [], "mae": []}}
    for epoch in range(8):
        log["train"]["rmse"].append(1.0 / (epoch + 1))
        log["valid"]["rmse"].append(2.0 / (epoch + 1))
        log["valid"]["mae"].append(0.123456789)
        assert monitor.after_iteration(None, epoch, log) is False
    monitor.after_training(None)
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[3]", "[6]", "[7]"]
    assert lines[0] == "[0]\ttrain-rmse:1.00000\tvalid-rmse:2.00000\tvalid-mae:0.12346"


def test_evaluation_monitor_does_not_repeat_the_last_line():
    lines = []
    monitor = EvaluationMonitor(period=2, printer=lines.append)
    log = {"train": {"rmse": []}}
    for epoch in range(5):
        log["train"]["rmse"].append(float(epoch))
        monitor.after_iteration(None, epoch, log)
    monitor.after_training(None)
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[2]", "[4]"]


def test_evaluation_monitor_without_evals_prints_nothing():
    lines = []
    monitor = EvaluationMonitor(printer=lines.append)
    monitor.after_iteration(None, 0, {})
    monitor.after_training(None)
    assert lines == []


def test_evaluation_monitor_in_training(datasets, capsys):
    train_set, _ = datasets
    fit(train_set, 5, evals=[(train_set, "train")], callbacks=[EvaluationMonitor(period=2)])
    printed = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert printed == ["[0]", "[2]", "[4]"]


# ---------------------------------------------------------------------------
# TrainingCheckPoint
# ---------------------------------------------------------------------------


class CheckpointReader(TrainingCallback):
    """Records the rounds of the checkpoint file after every round."""

    def __init__(self, path):
        self.path = path
        self.rounds_on_disk = []

    def after_iteration(self, model, epoch, evals_log):
        rounds = (
            gpuboost.Booster.load_model(self.path).num_boosted_rounds()
            if os.path.exists(self.path)
            else None
        )
        self.rounds_on_disk.append(rounds)
        return False


def test_checkpoint_every_interval_and_at_the_end(datasets, tmp_path):
    train_set, _ = datasets
    folder = tmp_path / "new" / "checkpoints"
    checkpoint = TrainingCheckPoint(folder, name="model", interval=3)
    assert folder.is_dir()
    reader = CheckpointReader(checkpoint.path)
    booster = fit(train_set, 7, callbacks=[checkpoint, reader])
    assert reader.rounds_on_disk == [None, None, 3, 3, 3, 6, 6]
    assert checkpoint.path == os.path.join(folder, "model.json")
    with open(checkpoint.path, "rb") as handle:
        assert handle.read() == booster.save_raw()
    assert os.listdir(folder) == ["model.json"]


def test_checkpoint_interval_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="interval"):
        TrainingCheckPoint(tmp_path, interval=0)


# ---------------------------------------------------------------------------
# The protocol
# ---------------------------------------------------------------------------


class Recorder(TrainingCallback):
    def __init__(self, stop_after=None, stop_before=None):
        self.stop_after, self.stop_before = stop_after, stop_before
        self.events = []

    def before_training(self, model):
        self.events.append("before_training")
        return model

    def after_training(self, model):
        self.events.append("after_training")
        return model

    def before_iteration(self, model, epoch, evals_log):
        self.events.append(("before", epoch))
        return epoch == self.stop_before

    def after_iteration(self, model, epoch, evals_log):
        self.events.append(("after", epoch, model.num_boosted_rounds()))
        return epoch == self.stop_after


def test_custom_callback_stops_after_an_iteration(datasets):
    train_set, _ = datasets
    recorder = Recorder(stop_after=2)
    booster = fit(train_set, 10, callbacks=[recorder])
    assert booster.num_boosted_rounds() == 3
    assert recorder.events == [
        "before_training",
        ("before", 0),
        ("after", 0, 1),
        ("before", 1),
        ("after", 1, 2),
        ("before", 2),
        ("after", 2, 3),
        "after_training",
    ]


def test_custom_callback_stops_before_an_iteration(datasets):
    train_set, _ = datasets
    recorder = Recorder(stop_before=4)
    booster = fit(train_set, 10, callbacks=[recorder])
    assert booster.num_boosted_rounds() == 4
    assert recorder.events[-2:] == [("before", 4), "after_training"]


def test_every_callback_runs_even_when_one_stops(datasets):
    train_set, _ = datasets
    stopper, watcher = Recorder(stop_after=1), Recorder()
    fit(train_set, 10, callbacks=[stopper, watcher])
    assert watcher.events[-2:] == [("after", 1, 2), "after_training"]


def test_training_hooks_can_replace_the_model(datasets):
    train_set, _ = datasets

    class Tagger(TrainingCallback):
        def after_training(self, model):
            copy = model.copy()
            copy.set_attr(tagged="yes")
            return copy

    booster = fit(train_set, 2, callbacks=[Tagger()])
    assert booster.attr("tagged") == "yes"


def test_container_rejects_other_objects():
    with pytest.raises(TypeError, match="TrainingCallback"):
        CallbackContainer([lambda model: model])
    base = TrainingCallback()
    assert base.before_training("m") == "m" and base.after_training("m") == "m"
    assert base.before_iteration("m", 0, {}) is False and base.after_iteration("m", 0, {}) is False
