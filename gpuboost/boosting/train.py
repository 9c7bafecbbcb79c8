"""The boosting loop: ``gpuboost.train``.

One round, per output column (docs/DESIGN.md): objective -> gradients/hessians
-> row sampling (gpuboost.sampling) -> quantization -> for tree_method='approx',
re-binning (gpuboost.approx) -> tree growth (histograms, split scan, partition)
-> leaf values (optionally refit) -> prediction update -> metrics. Backend-agnostic: every
per-row array lives on the backend (``backend.xp``) and only split records and
the finished tree reach the host.
"""
import functools
import inspect
import traceback

import numpy as np

from ..tree.approx import ApproxRebinner
from ..backends import get_backend
from ..model.booster import Booster
from .callback import CallbackContainer, EarlyStopping, EvaluationMonitor
from ..data.dataset import Dataset
from ..tree.grower import FeatureSampler, TreeGrower
from ..metrics import get_metric
from ..objectives import CUSTOM_OBJECTIVE_NAME, CustomObjective, get_objective
from ..errors import GpuOutOfMemoryError
from ..params import validate_params
from ..core.random import host_rng
from ..tree.sampling import sample_rows, sampled_row_weights
from ..core.gain import SplitParams
from ..tree.splitters.hist import make_splitter
from ..core.profiling import PhaseTimer

__all__ = ["train"]

#: Random streams: row sampling uses stream ``round * ROW_STREAMS_PER_ROUND + output``.
ROW_STREAMS_PER_ROUND = 1 << 16
#: Verbosity from which per-phase timings are measured and printed.
VERBOSITY_TIMINGS = 2


class _EvalSet:
    """An evaluation set's raw features and running margins on the backend."""

    def __init__(self, backend, dataset, name, margins, is_train):
        self.dataset = dataset
        self.name = name
        self.features = None if is_train else backend.prepare_features(dataset.data)
        self.margins = margins
        self.label = backend.to_device(dataset.label)
        self.weight = None if dataset.weight is None else backend.to_device(dataset.weight)
        self.is_train = is_train


def _initial_margins(booster, dataset, init_model):
    """Host float64 (n_rows, n_outputs): base_margin of the Dataset, else the init
    model's margins over all its rounds, else the booster's base margin."""
    n_rows = dataset.n_rows
    if dataset.base_margin is not None:
        margins = np.asarray(dataset.base_margin, dtype=np.float64)
        if margins.size != n_rows * booster.n_outputs:
            raise ValueError(f"base_margin has {margins.size} values; expected n_rows * n_outputs "
                             f"= {n_rows} * {booster.n_outputs}.")
        return margins.reshape(n_rows, booster.n_outputs).copy()
    if init_model is not None and init_model.trees:
        margins = init_model.predict(dataset.data, output_margin=True,
                                     iteration_range=(0, init_model.num_boosted_rounds()))
        return np.asarray(margins, dtype=np.float64).reshape(n_rows, booster.n_outputs)
    return np.broadcast_to(booster.base_margin, (n_rows, booster.n_outputs)).copy()


def _make_booster(params, objective, dtrain, init_model):
    n_outputs = objective.n_outputs()
    if init_model is not None:
        if not isinstance(init_model, Booster):
            init_model = Booster.load_model(init_model)
        if init_model.tree_weights is not None:
            raise ValueError("init_model is an AdaBoost model (booster='adaboost'); gradient "
                             "boosting cannot continue it.")
        if init_model.n_features != dtrain.n_features:
            raise ValueError(f"init_model has {init_model.n_features} features, dtrain has "
                             f"{dtrain.n_features}.")
        if init_model.n_outputs != n_outputs:
            raise ValueError(f"init_model has {init_model.n_outputs} outputs, the objective "
                             f"needs {n_outputs}.")
        booster = init_model.copy()
        booster.params = params
        booster._objective = None
        booster.best_iteration = booster.best_score = None  # stale: new rounds follow
        return booster, init_model
    if params["base_score"] is not None:
        base_margin = objective.base_score_to_margin(params["base_score"])
    else:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            base_margin = objective.base_margin(dtrain.label, dtrain.weight)
    if not np.all(np.isfinite(base_margin)):
        raise ValueError(f"The initial prediction (base margin) {np.asarray(base_margin).tolist()} "
                         f"is not finite: the labels or weights overflow float64 in the "
                         f"objective's optimal constant, or base_score is outside the "
                         f"objective's range. Rescale labels or weights, or pass base_score.")
    return Booster(params, n_outputs, base_margin, dtrain.n_features, dtrain.feature_names), None


def _check_evals(evals, dtrain):
    checked = []
    names = set()
    for item in evals:
        if not (isinstance(item, (tuple, list)) and len(item) == 2
                and isinstance(item[0], Dataset) and isinstance(item[1], str)):
            raise TypeError("evals must be a list of (Dataset, name) pairs.")
        dataset, name = item
        if name in names:
            raise ValueError(f"Evaluation set name {name!r} is used twice.")
        names.add(name)
        if dataset.label is None:
            raise ValueError(f"Evaluation set {name!r} has no label.")
        if dataset.n_features != dtrain.n_features:
            raise ValueError(f"Evaluation set {name!r} has {dataset.n_features} features, dtrain "
                             f"has {dtrain.n_features}.")
        checked.append((dataset, name))
    return checked


def record_metrics(evals_log, eval_set, prediction, metrics, custom_metric, backend):
    """Append every metric of one evaluation set to ``evals_log[eval_set.name]``.

    Parameters
    ----------
    evals_log : dict
        ``{set_name: {metric_name: [score per round]}}``, updated in place.
    eval_set : object with ``name``, ``label``, ``weight`` and ``dataset``
    prediction : backend array
        Predictions in the objective's mean space.
    metrics : list of gpuboost.metrics.Metric
    custom_metric : callable or None
        ``custom_metric(host_prediction, dataset) -> (name, value)``.
    backend : Backend
    """
    scores = evals_log.setdefault(eval_set.name, {})
    for metric in metrics:
        value = metric(eval_set.label, prediction, eval_set.weight, eval_set.dataset.group)
        scores.setdefault(metric.name, []).append(float(value))
    if custom_metric is not None:
        name, value = custom_metric(backend.to_host(prediction), eval_set.dataset)
        if name in (metric.name for metric in metrics):
            raise ValueError(f"custom_metric returned the name {name!r}, which is also a "
                             f"built-in metric being evaluated; rename it.")
        scores.setdefault(name, []).append(float(value))


def finish_training(container, booster, evals_log, evals_result, timer, backend, label=""):
    """End of a training loop (gradient boosting and AdaBoost): the callbacks'
    ``after_training``, ``evals_result`` filled from ``evals_log``, and the phase
    timings printed when enabled. Returns the booster ``after_training`` gives."""
    booster = container.after_training(booster)
    if evals_result is not None:
        evals_result.clear()
        evals_result.update(evals_log)
    if timer.enabled:
        print(f"[gpuboost] {backend.name} backend {label}phase timings: {timer.report()}")
    return booster


def _check_finite_tree(tree, round_index):
    """Raise ValueError when a grown tree holds inf/NaN (float64 overflow of sums)."""
    for name in ("value", "gain", "cover", "threshold"):
        values = getattr(tree, name)
        if not np.all(np.isfinite(values)):
            raise ValueError(
                f"Round {round_index}: the tree's {name!r} overflowed float64 (inf or NaN). "
                f"Sums of weighted gradients or hessians exceed the float64 range: scale "
                f"the sample weights or labels down.")


def _clear_finished_frames(error):
    """Drop the local variables of the finished frames of ``error``'s traceback chain."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


def _device_memory_restored_on_out_of_memory(train_function):
    """Decorator of :func:`train`: a CUDA out-of-memory error leaves device memory as
    it was before the call.

    The arrays the failed call allocated are referenced only by the finished frames
    of the error's traceback; those are cleared, so the arrays are freed even while
    the caller holds the exception. Device copies of Datasets cached by this call are
    dropped and the memory pool returns its unused blocks.
    """
    signature = inspect.signature(train_function)

    @functools.wraps(train_function)
    def wrapper(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        evals = arguments.get("evals", ())
        datasets = [arguments["dtrain"]] + ([item[0] for item in evals if isinstance(
            item, (tuple, list)) and item] if isinstance(evals, (tuple, list)) else [])
        cached_before = [(dataset, set(dataset._backend_cache)) for dataset in datasets
                         if isinstance(dataset, Dataset)]
        try:
            return train_function(*args, **kwargs)
        except MemoryError as error:
            # backend.guard() (around the boosting loop) has already turned a CUDA
            # out-of-memory error into GpuOutOfMemoryError; free what the call left.
            if not isinstance(error, GpuOutOfMemoryError):
                raise
            for dataset, keys in cached_before:
                for key in set(dataset._backend_cache) - keys:
                    del dataset._backend_cache[key]
            _clear_finished_frames(error)
            get_backend(validate_params(arguments["params"])["device"]).release_memory()
            raise
    return wrapper


@_device_memory_restored_on_out_of_memory
def train(params, dtrain, num_boost_round=100, evals=(), obj=None, custom_metric=None,
          early_stopping_rounds=None, evals_result=None, verbose_eval=True, callbacks=(),
          init_model=None):
    """Train a gradient-boosted tree model.

    Parameters
    ----------
    params : dict
        Training parameters (see ``gpuboost.params`` / the README table).
    dtrain : Dataset
        Training data with labels.
    num_boost_round : int
        Boosting rounds (one tree per output each).
    evals : sequence of (Dataset, str)
        Evaluated after every round; the last metric of the last set drives
        early stopping.
    obj : callable, optional
        Custom objective ``obj(raw_margin, dtrain) -> (grad, hess)``; overrides
        ``params['objective']`` for training.
    custom_metric : callable, optional
        ``custom_metric(pred, dataset) -> (name, value)`` evaluated on every set
        (pred: the objective's mean-space predictions as host NumPy), lower is better.
    early_stopping_rounds : int, optional
        Stop when the watched score has not improved for this many rounds; sets
        ``best_iteration`` and ``best_score`` on the Booster.
    evals_result : dict, optional
        Filled with ``{set_name: {metric: [score per round]}}``.
    verbose_eval : bool or int
        Print the evaluation every round (True) or every ``verbose_eval`` rounds.
    callbacks : sequence of TrainingCallback
    init_model : Booster or path, optional
        Continue training from this model.

    Returns
    -------
    Booster

    Raises
    ------
    GpuOutOfMemoryError
        The GPU ran out of memory (the message names the sizes); device memory is
        then as it was before the call.
    """
    if not isinstance(dtrain, Dataset):
        raise TypeError(f"dtrain must be a gpuboost.Dataset, got {type(dtrain).__name__}.")
    if dtrain.label is None:
        raise ValueError("dtrain has no label: pass label= to Dataset.")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be a non-negative integer, got {num_boost_round!r}.")
    given_params = params
    params = validate_params(params)
    if params["booster"] == "adaboost":  # the SAMME loop: gpuboost/adaboost.py
        from .adaboost import train_adaboost
        return train_adaboost(given_params, dtrain, num_boost_round, evals, obj, custom_metric,
                              early_stopping_rounds, evals_result, verbose_eval, callbacks,
                              init_model)
    if obj is not None:
        params["objective"] = obj
    if callable(params["objective"]):
        objective = CustomObjective(params["objective"], n_outputs=max(1, params["num_class"]))
        params["objective"] = CUSTOM_OBJECTIVE_NAME
    else:
        objective = get_objective(params["objective"], params)
    objective.check_labels(dtrain.label)
    backend = get_backend(params["device"])
    backend.configure(params)
    evals = _check_evals(evals, dtrain)
    for dataset, _ in evals:
        if dataset is not dtrain:
            objective.check_labels(dataset.label)

    with backend.guard("training"):
        booster, init_model = _make_booster(params, objective, dtrain, init_model)
        booster._objective = objective
        n_outputs = booster.n_outputs
        start_round = booster.num_boosted_rounds()
        timer = PhaseTimer(enabled=params["verbosity"] >= VERBOSITY_TIMINGS,
                           synchronize=backend.synchronize)

        data = backend.prepare(dtrain)
        xp = backend.xp
        label = data.label  # already on the device (DeviceData)
        weight = data.weight
        raw = backend.to_device(_initial_margins(booster, dtrain, init_model))
        eval_sets = []
        for dataset, name in evals:
            is_train = dataset is dtrain
            margins = raw if is_train else backend.to_device(
                _initial_margins(booster, dataset, init_model))
            eval_sets.append(_EvalSet(backend, dataset, name, margins, is_train))
        metric_names = params["eval_metric"] or [objective.default_metric]
        metrics = [get_metric(name) for name in metric_names]

        callback_list = list(callbacks)
        if verbose_eval and eval_sets:
            callback_list.append(EvaluationMonitor(period=1 if verbose_eval is True else verbose_eval))
        if early_stopping_rounds is not None:
            callback_list.append(EarlyStopping(  # a custom metric is watched: lower is better
                early_stopping_rounds, maximize=False if custom_metric is not None else None))
        container = CallbackContainer(callback_list)
        booster = container.before_training(booster)
        evals_log = {}
        split_params = SplitParams.from_params(params)
        thresholds = dtrain.bin_mapper.threshold_for_bin
        seed = params["seed"]
        rebinner = ApproxRebinner(backend, dtrain, dtrain.bin_mapper.max_bin) \
            if params["tree_method"] == "approx" else None
        # tree_method='exact' or feature bundles (gpuboost.splitter); None: plain histograms.
        splitter = make_splitter(params, backend, data, dtrain)

        for round_index in range(start_round, start_round + num_boost_round):
            if container.before_iteration(booster, round_index, evals_log):
                break
            with timer.phase("gradients"):
                margin_view = raw[:, 0] if n_outputs == 1 else raw
                objective.begin_round(backend, label, margin_view, weight)
                gradients, hessians = objective.gradients(xp, label, margin_view, weight, dataset=dtrain)
                if n_outputs == 1:
                    gradients, hessians = gradients.reshape(-1, 1), hessians.reshape(-1, 1)
            trees = []
            for output in range(n_outputs):
                column_g = xp.ascontiguousarray(gradients[:, output])
                column_h = xp.ascontiguousarray(hessians[:, output])
                with timer.phase("sample"):  # gpuboost.sampling: bagging, GOSS, gradient-based
                    sample_indices, multipliers = sample_rows(
                        backend, params, column_g, column_h, seed,
                        round_index * ROW_STREAMS_PER_ROUND + output)
                    if multipliers is not None:  # before quantization: integer sums stay exact
                        column_g, column_h = column_g * multipliers, column_h * multipliers
                with timer.phase("quantize"):
                    quantized_g, scale_g = backend.quantize(column_g)
                    quantized_h, scale_h = backend.quantize(column_h)
                tree_data, tree_thresholds = data, thresholds
                if rebinner is not None:  # tree_method='approx': this tree's own bins
                    with timer.phase("sketch"):
                        tree_data, tree_thresholds = rebinner.rebin(data, quantized_h, sample_indices)
                sampler = FeatureSampler(dtrain.n_features, params, host_rng(seed, round_index, output))
                grower = TreeGrower(backend, tree_data, quantized_g, quantized_h, scale_g, scale_h,
                                    sample_indices, params, split_params, sampler, tree_thresholds,
                                    timer, splitter=splitter)
                grown = grower.grow()
                tree = grown.tree
                if objective.has_leaf_refit:
                    with timer.phase("leaf_values"):
                        # Leaves without rows or without weight keep their Newton value (0).
                        has_weight = tree.cover[grown.leaf_nodes] > 0
                        leaves = grown.leaf_nodes[has_weight]
                        if len(leaves):
                            refit = objective.refit_leaf_values(
                                backend, label, xp.ascontiguousarray(raw[:, output]),
                                sampled_row_weights(weight, multipliers), grown.sample_indices,
                                grown.leaf_begins[has_weight], grown.leaf_ends[has_weight])
                            tree.value[leaves] = params["learning_rate"] * refit
                with timer.phase("predict_update"):
                    if grown.sample_indices.shape[0] == dtrain.n_rows:  # every row is in a leaf
                        backend.add_leaf_values(raw, output, grown.sample_indices, grown.leaf_begins,
                                                grown.leaf_ends, tree.value[grown.leaf_nodes])
                    else:
                        raw[:, output] += grower.splitter.predict_training_rows(tree)
                    for eval_set in eval_sets:
                        if not eval_set.is_train:
                            eval_set.margins[:, output] += backend.predict_tree_raw(eval_set.features,
                                                                                    tree)
                _check_finite_tree(tree, round_index)
                trees.append(tree)
            booster.append_round(trees)

            if eval_sets:
                with timer.phase("metric"):
                    for eval_set in eval_sets:
                        margins = eval_set.margins[:, 0] if n_outputs == 1 else eval_set.margins
                        record_metrics(evals_log, eval_set, objective.mean(xp, margins),
                                       metrics, custom_metric, backend)
            if container.after_iteration(booster, round_index, evals_log):
                break

        return finish_training(container, booster, evals_log, evals_result, timer, backend)
