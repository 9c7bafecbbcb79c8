"""``gpuboost.dask.train``: gradient boosting over the workers of a Dask cluster.

The client runs the boosting loop (:func:`gpuboost.boosting.loop.run`, callbacks and
early stopping included) and grows every tree with the single-node
:class:`~gpuboost.tree.grower.TreeGrower` on a
:class:`~gpuboost.dask.splitter.DistributedSplitter`; the workers hold the rows and
every per-row array (:mod:`gpuboost.dask.worker`). A round, per output column:

1. gradients on the workers (``begin_round``); for an objective whose gradients sum
   over other rows (``survival:cox``'s risk sets), on the client from every row's
   margin in global order, each worker sent its rows' (``set_gradients``);
2. row sampling by global row id (GOSS: the ``n_top``-th largest ``|g|`` and the last
   tied row selected exactly across the workers by a radix select on counts);
3. the quantization scales from the global maxima of ``|g|``, ``|h|`` (one exchange);
4. the tree: one exchange per level (histograms summed as int64 on the client, the
   single-node split scan there);
5. the tree sent to the workers, which add it to their training and evaluation margins.

Everything the single-node trainer decides from sums over rows is decided here from
the same integer sums, so the model is byte-identical to ``gpuboost.train``'s on the
same rows, however they are partitioned (DESIGN "Distributed training").
"""

import numpy as np

from ..backends import get_backend
from ..backends.base import DeviceData
from ..boosting.gbtree import (
    ROW_STREAMS_PER_ROUND,
    _check_finite_tree,
    _make_booster,
    check_trees_per_round,
    feature_draws,
    measures_dispersion,
    round_settings,
    split_settings,
    training_objective,
    uses_class_weights,
)
from ..boosting.loop import (
    VERBOSITY_TIMINGS,
    bind_binning,
    check_evals,
    check_num_boost_round,
    make_timer,
    metrics_of,
    record_metrics,
    run_with_callbacks,
)
from ..boosting.update import refuse_update
from ..core.categorical import CategoricalParams
from ..core.quantize import GradientQuantiser, quantization_scale
from ..model.booster import Booster
from ..objectives import get_objective
from ..objectives.classification import class_multipliers, row_class_weights
from ..objectives.ranking import plan_query_chunks
from ..params import round_values, tree_learning_rate, validate_params, with_objective
from ..tree.grower import GrowthPolicy, TreeGrower
from ..tree.sampling import goss_top_count
from ..tree.splitters import TreeInput
from .comm import DEFAULT_TIMEOUT_SECONDS, Exchange
from .dataset import DaskDataset
from .splitter import DistributedSplitter
from .worker import RADIX_BITS, RADIX_SIZE, WorkerState

__all__ = ["train", "check_distributed_params"]

#: Key bits of the radix select (non-negative float64 bit patterns, global row ids).
_KEY_BITS = 64


def check_distributed_params(params):
    """Raise ValueError for what distributed training cannot make identical to one
    machine (yet), naming the parameter and what to do instead."""
    refusals = []
    if params["booster"] != "gbtree":
        refusals.append(
            f"booster={params['booster']!r}"
            + (
                " (its dropouts re-predict every tree each round)"
                if params["booster"] == "dart"
                else ""
            )
        )
    if params["tree_method"] in ("exact", "approx"):
        refusals.append(f"tree_method={params['tree_method']!r} (use 'hist')")
    if params["enable_bundle"] and params["max_conflict_rate"] > 0:
        refusals.append("enable_bundle with max_conflict_rate > 0 (use max_conflict_rate=0)")
    if params["sampling_method"] == "gradient_based" and params["subsample"] < 1.0:
        refusals.append(
            "sampling_method='gradient_based' (its threshold is solved over all rows' "
            "quantized gradient magnitudes)"
        )
    if params["multi_strategy"] == "multi_output_tree" or params["num_target"] > 1:
        refusals.append(
            "multi_strategy='multi_output_tree' or several targets (num_target; the "
            "workers' histograms and label columns are of one output a tree: train one "
            "model per target)"
        )
    objective = params["objective"]
    if not callable(objective):
        if get_objective(objective, params).has_leaf_refit:  # huber_alpha: reg:huber's
            refusals.append(
                f"objective={objective!r} (its leaf refit is a weighted quantile or "
                f"float sum over each leaf's rows on several workers)"
            )
    if refusals:
        raise ValueError(
            "gpuboost.dask.train cannot train this model byte-identical to one machine "
            "yet: " + "; ".join(refusals) + ". Train it with gpuboost.train on one machine."
        )


class _EvalSet:
    """An evaluation set on the client: its labels and weights (for the metrics), the
    running margins gathered in global row order each round."""

    def __init__(self, name, label, weight, index, is_train, offsets, group):
        self.name, self.label, self.weight = name, label, weight
        self.index, self.is_train, self.offsets = index, is_train, offsets
        self.dataset = self  # record_metrics reads eval_set.dataset.group
        self.group = group


class _VirtualRows:
    """``TreeInput.sample_indices`` on the client: only the global sample count (the
    rows themselves are on the workers)."""

    def __init__(self, n_samples):
        self.shape = (int(n_samples),)


class DaskLearner:
    """Gradient boosting on the workers: the setup and the round step of
    :func:`gpuboost.boosting.loop.run` (the interface of ``GBTreeLearner``)."""

    label = "dask "
    done = False

    def __init__(
        self, client, given_params, dtrain, evals, init_model, timeout, bytes_log, obj=None
    ):
        params = validate_params(with_objective(given_params, obj))
        refuse_update(params, "gpuboost.dask.train")
        check_distributed_params(params)
        bind_binning(params, given_params, dtrain)
        multipliers = _class_multipliers(params, dtrain)
        custom = params["objective"] if callable(params["objective"]) else None
        objective = training_objective(params)
        self.params, self.dtrain, self.objective = params, dtrain, objective
        self.backend = backend = get_backend("cpu")  # the client's split scan
        backend.configure(params)
        self.timer = make_timer(params, backend)
        if init_model is not None and not isinstance(init_model, Booster):
            init_model = Booster.load_model(init_model)
        # The base margin from the labels (gathered) only when the model takes it from them.
        needs_labels = init_model is None and params["base_score"] is None
        weight = None
        if needs_labels:  # with the class weights of the gathered labels, as on one machine
            weight = dtrain.weight
            class_weights = row_class_weights(dtrain.label, multipliers)
            if class_weights is not None:
                weight = class_weights if weight is None else weight * class_weights
        booster, before = _make_booster(params, objective, dtrain, init_model, weight)
        booster._objective = objective
        self.booster = booster
        check_trees_per_round(booster.n_outputs, params["num_parallel_tree"])
        self.start_round = booster.num_boosted_rounds()
        self.metrics = metrics_of(params, objective.default_metric)
        self.split_params, self.interaction_groups = split_settings(params, dtrain)
        self.policy = GrowthPolicy.from_params(params)
        self.bytes_log = bytes_log
        self._bytes_before = 0

        workers = dtrain.workers()
        self.exchange = Exchange(client, workers, timeout)
        bin_mapper = dtrain.bind_binning()
        self.eval_sets, eval_parts = self._place_evals(evals, workers)
        setup = {
            "params": _portable(params),
            "bin_mapper": bin_mapper.to_dict(),
            "base_margins": np.asarray(booster.base_margin, dtype=np.float64),
            "init_model": None if before is None else before.to_json(),
            "n_outputs": booster.n_outputs,
            "class_multipliers": multipliers,
            "custom_objective": custom,
        }
        #: Each worker's training partitions, in its row order.
        self._train_layout = [dtrain.partitions_of(address) for address in workers]
        #: Each worker's global row ids, in its row order (an objective whose gradients
        #: the client computes: :meth:`_send_gradients`).
        self._train_rows = None
        if not objective.row_local_gradients:
            offsets = dtrain.row_offsets
            self._train_rows = [
                np.concatenate(
                    [np.arange(offsets[p], offsets[p + 1]) for p in parts]
                    or [np.zeros(0, dtype=np.int64)]
                )
                for parts in self._train_layout
            ]
        self.chunk_plan = None
        if hasattr(objective, "chunk_maxima"):  # ranking (gpuboost.objectives.ranking)
            if dtrain.group is None:
                raise ValueError(
                    f"objective {params['objective']!r} needs the queries of the training "
                    f"data: pass group= (query sizes) to DaskDataset."
                )
            self.chunk_plan = plan_query_chunks(dtrain.group, objective.truncation_level)
        per_worker = []
        for index, address in enumerate(workers):
            held = dtrain.partitions_of(address)
            parts = [dtrain.partitions[i] for i in held]
            worker_setup = dict(setup, row_offsets=[int(dtrain.row_offsets[i]) for i in held])
            if dtrain.group is not None:
                worker_setup.update(self._worker_queries(held))
            per_worker.append(
                (
                    worker_setup,
                    [part["X"] for part in parts],
                    [part["label"] for part in parts],
                    [part["weight"] for part in parts] if dtrain.has_weight else None,
                    [part["base_margin"] for part in parts] if dtrain.has_base_margin else None,
                    eval_parts[index],
                )
            )
        try:
            self.worker_rows = self.exchange.start(WorkerState, per_worker)
        except BaseException:
            self.exchange.close()
            raise
        data = DeviceData(
            dtrain.n_rows,
            dtrain.n_features,
            bin_mapper.n_bins,
            bin_mapper.missing_bin,
            bin_mapper.n_value_bins_,
            None,
            None,
            {},
        )
        self.splitter = DistributedSplitter(
            self.exchange, backend, data, bin_mapper.thresholds_for_bins
        )
        if dtrain.categories is not None:  # the single-node categorical scan (client)
            self.splitter.set_categorical(
                dtrain.categories, bin_mapper.n_value_bins_, CategoricalParams.from_params(params)
            )

    def _worker_queries(self, held):
        """A worker's query sizes and, for ranking, its queries of each chunk of the
        whole data's plan (local query indices) with the chunks' ids."""
        dtrain = self.dtrain
        queries = np.concatenate([np.arange(*dtrain.query_ranges[i], dtype=np.int64) for i in held])
        setup = {"group": dtrain.group[queries]}
        if self.chunk_plan is not None:
            plan, ids = [], []
            for chunk, chunk_queries in enumerate(self.chunk_plan):
                local = np.searchsorted(queries, chunk_queries)
                mine = (local < len(queries)) & (
                    queries[np.minimum(local, len(queries) - 1)] == chunk_queries
                )
                if mine.any():
                    plan.append(local[mine])
                    ids.append(chunk)
            setup.update(chunk_plan=plan, chunk_ids=np.asarray(ids, dtype=np.int64))
        return setup

    def _place_evals(self, evals, workers):
        """The client-side evaluation sets, and per worker the partitions of each
        evaluation set it evaluates (its own, else dealt to the training workers)."""
        eval_sets, per_worker = [], [[] for _ in workers]
        self._eval_layout = []
        for dataset, name in check_evals(evals, self.dtrain, DaskDataset):
            is_train = dataset is self.dtrain
            if dataset.categories != self.dtrain.categories:
                raise ValueError(
                    f"Evaluation set {name!r} has other categorical features or categories "
                    f"than dtrain: build it with DaskDataset(..., reference=dtrain), which "
                    f"re-codes its categories by label against dtrain's."
                )
            label = dataset.label
            self.objective.check_labels(label)
            if is_train:
                eval_sets.append(
                    _EvalSet(
                        name, label, dataset.weight, -1, True, dataset.row_offsets, dataset.group
                    )
                )
                self._eval_layout.append(
                    [self.dtrain.partitions_of(address) for address in workers]
                )
                continue
            index = len(per_worker[0])
            assigned = [[] for _ in workers]
            for part_index, part in enumerate(dataset.partitions):
                owner = (
                    workers.index(part["worker"])
                    if part["worker"] in workers
                    else part_index % len(workers)
                )
                assigned[owner].append(part_index)
            for worker_index, parts in enumerate(assigned):
                chosen = [dataset.partitions[i] for i in parts]
                per_worker[worker_index].append(
                    (
                        [part["X"] for part in chosen],
                        [part["label"] for part in chosen],
                        [part["weight"] for part in chosen] if dataset.has_weight else None,
                    )
                )
            eval_sets.append(
                _EvalSet(
                    name, label, dataset.weight, index, False, dataset.row_offsets, dataset.group
                )
            )
            self._eval_layout.append(assigned)
        return eval_sets, per_worker

    # ---- one round -------------------------------------------------------------
    def update(self, round_index):
        """Grow one round's trees (one per output) and update the workers' margins."""
        timer = self.timer
        with timer.phase("gradients"):  # travels with the first exchange of the round
            if not self.objective.row_local_gradients:  # survival:cox: over every row
                self._send_gradients()
            elif self.chunk_plan is None:
                self.exchange.defer("begin_round")
            else:  # ranking: the fixed-point scales from every worker's pair maxima
                maxima = self.exchange.call(
                    "computing ranking gradients", "ranking_maxima", len(self.chunk_plan)
                )
                self.exchange.defer("begin_round", np.max(maxima, axis=0))
        # The workers sample the rows with the run's subsample; the client grows the
        # trees with the round's other parameters (callbacks' schedules).
        params, split_params = round_settings(self, fixed=("subsample",))
        trees = []
        n_outputs = self.booster.n_outputs
        for position in range(n_outputs * params["num_parallel_tree"]):  # forest after forest
            trees.append(
                self._grow(round_index, position % n_outputs, position, params, split_params)
            )
        self.booster.append_round(trees, round_values(params))
        total = self.exchange.bytes_exchanged
        round_bytes, self._bytes_before = total - self._bytes_before, total
        if self.bytes_log is not None:
            self.bytes_log.append(round_bytes)
        if self.params["verbosity"] >= VERBOSITY_TIMINGS:
            print(
                f"[gpuboost.dask] round {round_index}: {round_bytes} bytes exchanged with "
                f"{len(self.exchange.workers)} workers"
            )
        return True

    def _goss_threshold(self, output):
        """``(threshold bits, last tied global row id, top_rate, other_rate)``: the
        ``n_top``-th largest ``|g|`` over all workers and the last of its tied rows that
        GOSS keeps (ties: lower global row id first), both exact (radix selects)."""
        params = self.params
        n_top = goss_top_count(self.dtrain.n_rows, params["top_rate"])
        rates = (params["top_rate"], params["other_rate"])
        if n_top >= self.dtrain.n_rows:
            return (-1, -1) + rates  # every key is above -1
        if n_top == 0:
            return (np.iinfo(np.int64).max, -1) + rates
        threshold, n_tied = self._radix_select(output, "magnitude", 0, n_top, largest=True)
        last_tied, _ = self._radix_select(output, "tied_rows", threshold, n_tied, largest=False)
        return (threshold, last_tied) + rates

    def _radix_select(self, output, key_kind, threshold, rank, largest):
        """The ``rank``-th (1-based) largest or smallest key over every worker's keys, by
        ``RADIX_BITS`` bits at a time (count exchanges); returns ``(key, rank among the
        keys equal to it)``."""
        prefix = 0
        for shift in range(_KEY_BITS - RADIX_BITS, -1, -RADIX_BITS):
            counts = np.sum(
                self.exchange.call(
                    "selecting GOSS's top rows",
                    "radix_counts",
                    output,
                    key_kind,
                    threshold,
                    prefix,
                    shift,
                ),
                axis=0,
            )
            digits = range(RADIX_SIZE - 1, -1, -1) if largest else range(RADIX_SIZE)
            for digit in digits:
                if counts[digit] >= rank:
                    break
                rank -= int(counts[digit])
            prefix = (prefix << RADIX_BITS) | digit
        return prefix, rank

    def _grow(self, round_index, output, position, params, split_params):
        """One tree of one output, ``position`` in its round, with the round's ``params``
        and ``split_params`` (see the module docstring)."""
        timer = self.timer
        stream = round_index * ROW_STREAMS_PER_ROUND + position
        with timer.phase("sample"):
            goss = (
                self._goss_threshold(output) if params["data_sample_strategy"] == "goss" else None
            )
            maxima = self.exchange.call("sampling rows", "sample", output, stream, goss)
        scale_g = quantization_scale(max(m[0] for m in maxima))
        scale_h = quantization_scale(max(m[1] for m in maxima))
        n_samples = sum(m[2] for m in maxima)
        quantiser = GradientQuantiser(scale_g, scale_h)
        measured = measures_dispersion(split_params, self.splitter)
        dispersion = 0.0
        if measured:  # the workers quantize now; their exact integer parts add up
            parts = self.exchange.call(
                "measuring the gradients' dispersion", "dispersion", scale_g, scale_h, n_samples
            )
            sums = tuple(sum(part[i] for part in parts) for i in range(len(parts[0])))
            dispersion = quantiser.dispersion(sums)
        self.splitter.begin_tree(scale_g, scale_h, n_samples, quantized=measured)
        tree_input = TreeInput(
            None,
            None,
            quantiser,
            _VirtualRows(n_samples),
            split_params.penalized(dispersion),
            tree_learning_rate(params),
            dispersion=dispersion,
        )
        sampler, interactions = feature_draws(
            self.dtrain, params, round_index, position, self.interaction_groups
        )
        tree = (
            TreeGrower(self.splitter, tree_input, self.policy, sampler, timer, interactions)
            .grow()
            .tree
        )
        with timer.phase("predict_update"):  # travels with the next exchange
            self.exchange.defer("end_tree", output, tree)
        _check_finite_tree(tree, round_index)
        return tree

    # ---- evaluation ------------------------------------------------------------
    def _gathered_margins(self, eval_set, position, action="evaluating"):
        """The set's margins in global row order (host (n_rows, n_outputs));
        ``eval_set`` None: the training rows'."""
        if eval_set is None:
            index, offsets, layout = -1, self.dtrain.row_offsets, self._train_layout
        else:
            index, offsets, layout = eval_set.index, eval_set.offsets, self._eval_layout[position]
        pieces = self.exchange.call(action, "eval_margins", index)
        margins = np.empty((int(offsets[-1]), self.booster.n_outputs))
        for parts, piece in zip(layout, pieces):
            start = 0
            for part in parts:
                begin, end = offsets[part], offsets[part + 1]
                margins[begin:end] = piece[start : start + end - begin]
                start += end - begin
        return margins

    def _send_gradients(self):
        """The round's gradients and hessians of an objective whose gradients are not
        row-local (``survival:cox``: sums over risk sets of every worker's rows):
        computed here by the single-node code on every row's margin, label and weight in
        global row order (the same bits as one machine), each worker sent its rows'."""
        dtrain, backend, objective = self.dtrain, self.backend, self.objective
        margins = self._gathered_margins(None, None, "gathering the training margins")
        n_rows, n_outputs = margins.shape
        view = margins[:, 0] if n_outputs == 1 else margins
        label, weight = dtrain.label, dtrain.weight
        objective.begin_round(backend, label, view, weight)
        gradients, hessians = backend.gradients(objective, label, view, weight)
        gradients = np.asarray(gradients).reshape(n_rows, n_outputs)
        hessians = np.asarray(hessians).reshape(n_rows, n_outputs)
        per_worker = [(gradients[rows], hessians[rows]) for rows in self._train_rows]
        self.exchange.call("sending the gradients", "set_gradients", per_worker=per_worker)

    def evaluate(self, evals_log):
        """Every metric of every evaluation set, on the margins of all workers, computed
        by the single-node metric code on the rows in global order (identical values)."""
        with self.timer.phase("metric"):
            for position, eval_set in enumerate(self.eval_sets):
                margins = self._gathered_margins(eval_set, position)
                if self.booster.n_outputs == 1:
                    margins = margins[:, 0]
                record_metrics(
                    evals_log,
                    eval_set,
                    self.objective.mean(np, margins),
                    self.metrics,
                    None,
                    self.backend,
                    margins=margins,
                )

    def after_training(self, booster):
        return booster


def _class_multipliers(params, dtrain):
    """``(negative, positive)`` row multipliers of ``scale_pos_weight`` / ``is_unbalance``
    (None: none), from the global class counts; the workers apply them to their rows
    (:func:`gpuboost.objectives.classification.row_class_weights`)."""
    if not uses_class_weights(params):
        return None
    n_positive = dtrain.count_positive() if params["is_unbalance"] else 0
    return class_multipliers(
        n_positive, dtrain.n_rows - n_positive, params["scale_pos_weight"], params["is_unbalance"]
    )


def _portable(params):
    """The validated parameters as plain values for the workers."""
    return dict(params)


def train(
    client,
    params,
    dtrain,
    num_boost_round=100,
    evals=(),
    early_stopping_rounds=None,
    evals_result=None,
    verbose_eval=True,
    callbacks=(),
    init_model=None,
    maximize=None,
    timeout=DEFAULT_TIMEOUT_SECONDS,
    bytes_log=None,
    obj=None,
):
    """Train on the workers of a Dask cluster; the same model as :func:`gpuboost.train`
    on the same rows, byte for byte.

    Parameters
    ----------
    client : distributed.Client
    params : dict
        As :func:`gpuboost.train`'s (``device``: each worker's backend, e.g. 'cuda' on
        dask-cuda workers). Refused with ValueError: what cannot be made identical yet
        (:func:`check_distributed_params`).
    dtrain : DaskDataset
    num_boost_round, early_stopping_rounds, evals_result, verbose_eval, callbacks,
    init_model, maximize
        As :func:`gpuboost.train`'s; ``evals`` are ``(DaskDataset, name)`` pairs.
    timeout : float
        Seconds one exchange with the workers may take; a worker that dies or does not
        answer within it fails the training with a RuntimeError naming it.
    bytes_log : list, optional
        Appended the bytes exchanged with the workers in each round.
    obj : callable, optional
        A custom objective ``obj(raw_margin, dataset) -> (grad, hess)`` (or a callable
        ``params['objective']``), as :func:`gpuboost.train`'s. Each worker calls it on
        its own rows: ``dataset`` is a Dataset of the worker's rows (in global row
        order), so the model is single-node's when a row's gradient depends on that row
        only (and each worker's hessians of an output must not be all <= 0).

    Returns
    -------
    Booster
    """
    if not isinstance(dtrain, DaskDataset):
        raise TypeError(f"dtrain must be a gpuboost.dask.DaskDataset, got {type(dtrain).__name__}.")
    if not dtrain.has_label:
        raise ValueError("dtrain has no label: pass label= to DaskDataset.")
    check_num_boost_round(num_boost_round)
    learner = DaskLearner(client, params, dtrain, evals, init_model, timeout, bytes_log, obj)
    try:
        return run_with_callbacks(
            learner,
            num_boost_round,
            callbacks,
            verbose_eval,
            early_stopping_rounds,
            maximize,
            evals_result,
            learner.backend,
        )
    finally:
        learner.exchange.close()
