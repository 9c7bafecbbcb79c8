"""Training callbacks (XGBoost's protocol): early stopping, evaluation printing,
checkpoints.

``evals_log`` is ``{data_name: {metric_name: [score per round]}}``. A callback's
``after_iteration`` returns True to stop training.
"""

import os

from ..errors import value_repr
from ..metrics import get_metric

__all__ = [
    "metric_maximized",
    "TrainingCallback",
    "EarlyStopping",
    "EvaluationMonitor",
    "TrainingCheckPoint",
    "LearningRateScheduler",
    "reset_parameter",
    "CallbackContainer",
]


def metric_maximized(metric_name):
    """Whether higher scores of ``metric_name`` are better: a built-in metric's own
    direction; False (lower is better) for any other name, e.g. a custom metric."""
    try:
        return get_metric(metric_name).higher_is_better
    except ValueError:  # not a built-in metric
        return False


class TrainingCallback:
    """Base class: override any of the hooks."""

    def before_training(self, model):
        """Called once before the first round; returns the model."""
        return model

    def after_training(self, model):
        """Called once after the last round; returns the model."""
        return model

    def before_iteration(self, model, epoch, evals_log):
        """Called before round ``epoch``; return True to stop."""
        return False

    def after_iteration(self, model, epoch, evals_log):
        """Called after round ``epoch``; return True to stop."""
        return False


class EarlyStopping(TrainingCallback):
    """Stop when the watched score has not improved for ``rounds`` rounds.

    Parameters
    ----------
    rounds : int
        Patience, >= 1.
    metric_name, data_name : str, optional
        The score watched; default the last metric of the last evaluation set.
    maximize : bool, optional
        Whether higher scores are better. None: from the metric -- built-in metrics
        know their direction (auc, ndcg, map are maximized); any other name (a custom
        metric) is minimized.
    min_delta : float
        Minimum improvement that counts.
    save_best : bool
        Truncate the model to the best round at the end.
    """

    def __init__(
        self,
        rounds,
        metric_name=None,
        data_name=None,
        maximize=None,
        min_delta=0.0,
        save_best=False,
    ):
        if int(rounds) < 1:
            raise ValueError(f"early_stopping_rounds must be >= 1, got {value_repr(rounds)}.")
        if min_delta < 0:
            raise ValueError("min_delta must be >= 0.")
        self.rounds = int(rounds)
        self.metric_name = metric_name
        self.data_name = data_name
        self.maximize = maximize
        self.min_delta = min_delta
        self.save_best = save_best
        self.best_score = None
        self.best_iteration = None

    def after_iteration(self, model, epoch, evals_log):
        if not evals_log:
            raise ValueError("Early stopping needs at least one evaluation set in `evals`.")
        data_name = self.data_name or list(evals_log)[-1]
        if data_name not in evals_log:
            raise ValueError(
                f"Early stopping data {data_name!r} is not among the evaluation "
                f"sets {list(evals_log)}."
            )
        metrics = evals_log[data_name]
        metric_name = self.metric_name or list(metrics)[-1]
        if metric_name not in metrics:
            raise ValueError(
                f"Early stopping metric {metric_name!r} is not evaluated; metrics: {list(metrics)}."
            )
        score = metrics[metric_name][-1]
        if self.maximize is None:
            self.maximize = metric_maximized(metric_name)
        improved = self.best_score is None or (
            score > self.best_score + self.min_delta
            if self.maximize
            else score < self.best_score - self.min_delta
        )
        if improved:
            self.best_score = score
            self.best_iteration = epoch
        model.best_iteration = self.best_iteration
        model.best_score = self.best_score
        return epoch - self.best_iteration >= self.rounds

    def after_training(self, model):
        if self.save_best and self.best_iteration is not None:
            model._keep_rounds(self.best_iteration + 1)
        return model


class EvaluationMonitor(TrainingCallback):
    """Print ``[round]\\tdata-metric:score ...`` every ``period`` rounds (and the last)."""

    def __init__(self, period=1, printer=print):
        self.period = max(1, int(period))
        self.printer = printer
        self._last_line = None
        self._last_printed_epoch = None

    def _line(self, epoch, evals_log):
        parts = [f"[{epoch}]"]
        for data_name, metrics in evals_log.items():
            for metric_name, scores in metrics.items():
                parts.append(f"{data_name}-{metric_name}:{scores[-1]:.5f}")
        return "\t".join(parts)

    def after_iteration(self, model, epoch, evals_log):
        if not evals_log:
            return False
        self._last_line = (epoch, self._line(epoch, evals_log))
        if epoch % self.period == 0:
            self.printer(self._last_line[1])
            self._last_printed_epoch = epoch
        return False

    def after_training(self, model):
        if self._last_line is not None and self._last_line[0] != self._last_printed_epoch:
            self.printer(self._last_line[1])
        return model


def _scheduled_value(name, schedule, round_index):
    """``schedule(round_index)``, or ``schedule[round_index]`` of a list (rounds counted
    from the start of the model)."""
    if callable(schedule):
        return schedule(round_index)
    if round_index >= len(schedule):
        raise ValueError(
            f"The schedule of {name!r} has {len(schedule)} values, none for round "
            f"{round_index} (rounds count from the start of the model, init_model's "
            "included): give one value per round, or a function of the round."
        )
    return schedule[round_index]


class LearningRateScheduler(TrainingCallback):
    """Change the learning rate before every round (XGBoost's callback of that name).

    Parameters
    ----------
    learning_rates : sequence of float, or callable
        ``learning_rates[r]``, or ``learning_rates(r)``, is the rate of round ``r``,
        counted from the start of the model (an ``init_model``'s rounds included), so a
        training resumed from a checkpoint continues the schedule where it stopped. Each
        round's rate is recorded in the model (``Booster.round_params``).
    """

    def __init__(self, learning_rates):
        self.learning_rates = (
            learning_rates if callable(learning_rates) else [float(r) for r in learning_rates]
        )

    def before_iteration(self, model, epoch, evals_log):
        rate = _scheduled_value("learning_rate", self.learning_rates, epoch)
        model.set_param("learning_rate", rate)
        return False


def reset_parameter(**schedules):
    """A callback that sets parameters before every round (LightGBM's
    ``reset_parameter``): ``reset_parameter(learning_rate=[...], reg_lambda=lambda r:
    ...)``, each a sequence indexed by the round or a function of it. Rounds count from
    the start of the model (LightGBM counts from the start of the call); the parameters
    that may change between rounds are :data:`gpuboost.params.PER_ROUND_PARAMS`.

    Returns
    -------
    TrainingCallback
    """
    schedules = {
        name: schedule if callable(schedule) else list(schedule)
        for name, schedule in schedules.items()
    }

    class ResetParameter(TrainingCallback):
        def before_iteration(self, model, epoch, evals_log):
            model.set_param(
                {
                    name: _scheduled_value(name, schedule, epoch)
                    for name, schedule in schedules.items()
                }
            )
            return False

    return ResetParameter()


class TrainingCheckPoint(TrainingCallback):
    """Save the model atomically every ``interval`` rounds (and at the end).

    Parameters
    ----------
    directory : str or path
        Created if missing.
    name : str
        File stem; files are ``<name>.json`` (the latest checkpoint, replaced
        atomically, so a crash never leaves a partial file).
    interval : int
        Rounds between checkpoints.
    """

    def __init__(self, directory, name="checkpoint", interval=10):
        if int(interval) < 1:
            raise ValueError("interval must be >= 1.")
        self.directory = os.fspath(directory)
        self.name = name
        self.interval = int(interval)
        os.makedirs(self.directory, exist_ok=True)

    @property
    def path(self):
        """Path of the latest checkpoint."""
        return os.path.join(self.directory, f"{self.name}.json")

    def after_iteration(self, model, epoch, evals_log):
        if (epoch + 1) % self.interval == 0:
            model.save_model(self.path)
        return False

    def after_training(self, model):
        model.save_model(self.path)
        return model


class CallbackContainer:
    """Runs a list of callbacks; any True from an ``*_iteration`` hook stops training.

    Parameters
    ----------
    callbacks : sequence of TrainingCallback
    evaluate : callable (evals_log) -> None, optional
        Records the round's metrics into ``evals_log``; called at the start of
        :meth:`after_iteration`, before the callbacks see the log (XGBoost's
        container evaluates the same way).

    Attributes
    ----------
    history : dict
        ``evals_log``: ``{data_name: {metric_name: [score per round]}}``.
    """

    def __init__(self, callbacks, evaluate=None):
        self.callbacks = list(callbacks)
        for callback in self.callbacks:
            if not isinstance(callback, TrainingCallback):
                raise TypeError(
                    f"callbacks must be TrainingCallback instances, got {type(callback).__name__}."
                )
        self.evaluate = evaluate
        self.history = {}

    def before_training(self, model):
        for callback in self.callbacks:
            model = callback.before_training(model)
        return model

    def after_training(self, model):
        for callback in self.callbacks:
            model = callback.after_training(model)
        return model

    def before_iteration(self, model, epoch):
        return any([c.before_iteration(model, epoch, self.history) for c in self.callbacks])

    def after_iteration(self, model, epoch):
        if self.evaluate is not None:
            self.evaluate(self.history)
        return any([c.after_iteration(model, epoch, self.history) for c in self.callbacks])
