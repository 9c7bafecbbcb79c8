"""The boosting loop and its scaffolding, shared by every model family.

:func:`run` is the loop (XGBoost's ``train``)::

    booster = callbacks.before_training(learner.booster)
    for round in rounds:
        if callbacks.before_iteration(...): stop
        learner.update(round)                      # one round: the family's step
        if callbacks.after_iteration(...): stop    # evaluates the eval sets first
    callbacks.after_training(booster)

A *learner* (:class:`gpuboost.boosting.gbtree.GBTreeLearner`,
:class:`gpuboost.boosting.adaboost.AdaBoostLearner`) owns a family's setup and
round step; everything else here is the same for both: checking the training
data and the evaluation sets, the evaluation sets' running margins, metrics
recorded into ``evals_log``, the callback list (printing, early stopping), the
phase timer and the end of training.
"""

import numpy as np

from ..core.profiling import PhaseTimer
from ..data.categorical import recode_categories
from ..data.convert import select_features
from ..data.dataset import Dataset
from ..errors import value_repr
from ..metrics import get_metric
from ..params import given_names
from .callback import CallbackContainer, EarlyStopping, EvaluationMonitor

__all__ = [
    "VERBOSITY_TIMINGS",
    "EvalSet",
    "bind_binning",
    "check_dtrain",
    "check_num_boost_round",
    "check_evals",
    "eval_features",
    "record_metrics",
    "metrics_of",
    "make_timer",
    "make_callbacks",
    "run",
    "run_with_callbacks",
]

#: Verbosity from which per-phase timings are measured and printed.
VERBOSITY_TIMINGS = 2


class EvalSet:
    """An evaluation set's raw features, labels and running margins on the backend.

    Attributes
    ----------
    dataset : Dataset
    name : str
    is_train : bool
        The training Dataset itself (its margins are the training margins; its raw
        features are never copied).
    features : backend array of shape (n_rows, n_features), float64, or None
        ``backend.prepare_features`` of the raw features in the training data's
        feature order (:func:`eval_features`; None for the training set).
    label, weight : backend arrays of shape (n_rows,), float64 (weight may be None)
    margins : backend array of shape (n_rows, n_outputs), float64

    Parameters
    ----------
    backend : Backend
    dataset : Dataset
    name : str
    margins : backend array of shape (n_rows, n_outputs), float64
    is_train : bool
    data : ndarray of shape (n_rows, n_features), float64, optional
        The raw features in the training data's order (:func:`eval_features`);
        unused for the training set.
    """

    def __init__(self, backend, dataset, name, margins, is_train, data=None):
        self.dataset = dataset
        self.name = name
        self.is_train = is_train
        self.features = None if is_train else backend.prepare_features(data)
        self.margins = margins
        self.label = backend.to_device(dataset.label)
        self.weight = None if dataset.weight is None else backend.to_device(dataset.weight)


def check_dtrain(dtrain):
    """Raise unless ``dtrain`` is a Dataset with labels."""
    if not isinstance(dtrain, Dataset):
        raise TypeError(f"dtrain must be a gpuboost.Dataset, got {type(dtrain).__name__}.")
    if dtrain.label is None:
        raise ValueError("dtrain has no label: pass label= to Dataset.")


def bind_binning(params, given_params, dtrain):
    """Bin ``dtrain`` as the training parameters say (``Dataset.bind_binning``).

    A ``max_bin`` named in ``given_params`` must be the Dataset's (else ValueError);
    without one the Dataset's own is used (255 when it has none) and written into
    ``params``, so that the saved model states the bins it was grown on. ``seed``
    seeds the binning subsample of a Dataset built without one.

    Parameters
    ----------
    params : dict
        Validated parameters; ``params['max_bin']`` is updated in place.
    given_params : dict or None
        The user's parameters (to tell a given ``max_bin`` from the default).
    dtrain : Dataset
    """
    asked = params["max_bin"] if "max_bin" in given_names(given_params) else None
    params["max_bin"] = dtrain.bind_binning(asked, params["seed"], params["max_cat"]).max_bin


def check_num_boost_round(num_boost_round):
    """Raise unless ``num_boost_round`` is a non-negative integer."""
    if (
        isinstance(num_boost_round, bool)
        or not isinstance(num_boost_round, (int, np.integer))
        or num_boost_round < 0
    ):
        raise ValueError(
            f"num_boost_round must be a non-negative integer, got {value_repr(num_boost_round)}."
        )


def check_evals(evals, dtrain, dataset_type=Dataset):
    """The ``(Dataset, name)`` pairs of ``evals``, checked: unique names, labels, the
    training data's number of features. ``dataset_type``: the class of the sets
    (gpuboost.dask passes its DaskDataset)."""
    checked = []
    names = set()
    for item in evals:
        if not (
            isinstance(item, (tuple, list))
            and len(item) == 2
            and isinstance(item[0], dataset_type)
            and isinstance(item[1], str)
        ):
            raise TypeError(f"evals must be a list of ({dataset_type.__name__}, name) pairs.")
        dataset, name = item
        if name in names:
            raise ValueError(f"Evaluation set name {name!r} is used twice.")
        names.add(name)
        if dataset.label is None:
            raise ValueError(f"Evaluation set {name!r} has no label.")
        if dataset.n_features != dtrain.n_features:
            raise ValueError(
                f"Evaluation set {name!r} has {dataset.n_features} features, dtrain "
                f"has {dtrain.n_features}."
            )
        checked.append((dataset, name))
    return checked


def eval_features(dataset, name, dtrain, backend=None):
    """The raw features of evaluation set ``name`` in ``dtrain``'s feature order (where
    ``backend`` reads them: ``Dataset.features_for``; host features without it).

    Columns are matched by name when both Datasets carry feature names
    (``Dataset.has_feature_names``), else by position. Categorical columns are re-coded
    by label to ``dtrain``'s codes when the evaluation set has categories of its own (built
    without ``reference=dtrain``), as prediction does.

    Returns
    -------
    ndarray of shape (n_rows, dtrain.n_features), float32 or float64 (``Dataset.features``),
    C order

    Raises
    ------
    ValueError
        Missing or unknown feature names (listed); a feature categorical in one Dataset
        and numeric in the other.
    """
    names = dataset.feature_names if dataset.has_feature_names else None
    expected = dtrain.feature_names if dtrain.has_feature_names else None
    features = dataset.features if backend is None else dataset.features_for(backend)
    if expected is not None:
        features = select_features(features, names, expected, f"evaluation set {name!r}")
    if dataset.categories == dtrain.categories:
        return features
    own = dataset.categories or [None] * dataset.n_features
    if expected is not None and names is not None:
        by_name = dict(zip(names, own))
        own = [by_name[feature] for feature in expected]
    target = dtrain.categories or [None] * dtrain.n_features
    return np.ascontiguousarray(recode_categories(features, own, target))


def record_metrics(evals_log, eval_set, prediction, metrics, custom_metric, backend, margins=None):
    """Append every metric of one evaluation set to ``evals_log[eval_set.name]``.

    Parameters
    ----------
    evals_log : dict
        ``{set_name: {metric_name: [score per round]}}``, updated in place.
    eval_set : EvalSet
    prediction : backend array
        Predictions in the objective's mean space.
    metrics : list of gpuboost.metrics.Metric
    custom_metric : callable or None
        ``custom_metric(host_prediction, dataset) -> (name, value)``.
    backend : Backend
    margins : backend array, optional
        The margins, for the metrics that take them (``Metric.takes_margins``).
    """
    scores = evals_log.setdefault(eval_set.name, {})
    for metric in metrics:
        if metric.takes_margins and margins is None:
            raise ValueError(f"metric {metric.name!r} is not available in this training")
        value = metric(
            eval_set.label,
            margins if metric.takes_margins else prediction,
            eval_set.weight,
            eval_set.dataset.group,
        )
        scores.setdefault(metric.name, []).append(float(value))
    if custom_metric is not None:
        name, value = custom_metric(backend.to_host(prediction), eval_set.dataset)
        if name in (metric.name for metric in metrics):
            raise ValueError(
                f"custom_metric returned the name {name!r}, which is also a "
                f"built-in metric being evaluated; rename it."
            )
        scores.setdefault(name, []).append(float(value))


def metrics_of(params, default_metric):
    """The Metric objects of ``params['eval_metric']`` (default: ``default_metric``)."""
    return [
        get_metric(name).for_training(params)
        for name in (params["eval_metric"] or [default_metric])
    ]


def make_timer(params, backend):
    """The phase timer of a run: enabled from ``verbosity >= VERBOSITY_TIMINGS``."""
    return PhaseTimer(
        enabled=params["verbosity"] >= VERBOSITY_TIMINGS, synchronize=backend.synchronize
    )


def make_callbacks(
    callbacks, has_eval_sets, verbose_eval, early_stopping_rounds, maximize, evaluate
):
    """The callback container of a run: the user's callbacks, then the evaluation
    printer (``verbose_eval``) and early stopping (``early_stopping_rounds``, with
    ``maximize``: None lets the watched metric decide, see
    :func:`gpuboost.boosting.callback.metric_maximized`).

    ``evaluate(evals_log)`` records the round's metrics; the container calls it
    before the callbacks' ``after_iteration``.
    """
    callback_list = list(callbacks)
    if verbose_eval and has_eval_sets:
        callback_list.append(EvaluationMonitor(period=1 if verbose_eval is True else verbose_eval))
    if early_stopping_rounds is not None:
        callback_list.append(EarlyStopping(early_stopping_rounds, maximize=maximize))
    return CallbackContainer(callback_list, evaluate=evaluate if has_eval_sets else None)


def run(learner, container, num_boost_round, evals_result, timer, backend):
    """The boosting loop (see the module docstring); returns the trained Booster.

    Parameters
    ----------
    learner : GBTreeLearner or AdaBoostLearner
        ``booster``, ``start_round``, ``update(round) -> bool`` (False: the round
        was discarded and training ends at once), ``done`` (no further round),
        ``after_training(booster) -> booster``, ``label`` (for the timings line).
    container : CallbackContainer
    num_boost_round : int
    evals_result : dict or None
        Filled with ``{set_name: {metric: [score per round]}}``.
    timer : PhaseTimer
    backend : Backend
    """
    booster = container.before_training(learner.booster)
    start = learner.start_round
    for round_index in range(start, start + num_boost_round):
        if container.before_iteration(booster, round_index):
            break
        if not learner.update(round_index):
            break
        if container.after_iteration(booster, round_index) or learner.done:
            break
    booster = learner.after_training(container.after_training(booster))
    if evals_result is not None:
        evals_result.clear()
        evals_result.update(container.history)
    if timer.enabled:
        print(f"[gpuboost] {backend.name} backend {learner.label}phase timings: {timer.report()}")
    return booster


def run_with_callbacks(
    learner,
    num_boost_round,
    callbacks,
    verbose_eval,
    early_stopping_rounds,
    maximize,
    evals_result,
    backend,
):
    """:func:`run` with the callback container of :func:`make_callbacks` (the end of
    ``gpuboost.train`` and of ``gpuboost.dask.train``)."""
    container = make_callbacks(
        callbacks,
        bool(learner.eval_sets),
        verbose_eval,
        early_stopping_rounds,
        maximize,
        learner.evaluate,
    )
    return run(learner, container, num_boost_round, evals_result, learner.timer, backend)
