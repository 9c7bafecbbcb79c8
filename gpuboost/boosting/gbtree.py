"""Gradient boosting (``booster='gbtree'``): the setup and the round step.

One round, per output column and, with ``num_parallel_tree`` above 1, per tree of the
output's forest, all from the round's gradients (docs/DESIGN.md, "One round, top to
bottom"):
objective -> gradients/hessians -> row sampling (gpuboost.tree.sampling) ->
quantization -> for ``tree_method='approx'``, re-binning (gpuboost.tree.approx) ->
tree growth (histograms, split scan, partition: gpuboost.tree.grower) -> leaf
values (optionally refit) -> prediction update. With ``multi_strategy='multi_output_tree'``
and several outputs, one tree of vector leaves for every output instead
(:meth:`GBTreeLearner._grow_vector`, docs/DESIGN.md "Vector leaves"). Backend-agnostic:
every per-row array lives on the backend (``backend.xp``) and only split records and the
finished tree reach the host.
"""

import copy
import dataclasses
from functools import partial

import numpy as np

from ..core.gain import SplitParams
from ..core.quantize import GradientQuantiser
from ..core.random import host_rng
from ..data.convert import feature_positions, has_default_names
from ..model.booster import Booster
from ..objectives import (
    CUSTOM_OBJECTIVE_NAME,
    CustomObjective,
    binary_class_weights,
    get_objective,
)
from ..params import (
    PER_ROUND_PARAMS,
    round_values,
    tree_learning_rate,
    validate_params,
    with_objective,
)
from ..tree.approx import ApproxRebinner
from ..tree.constraints import InteractionConstraints, resolve_interactions, resolve_monotone
from ..tree.feature_sampler import FeatureSampler
from ..tree.grower import GrowthPolicy, TreeGrower
from ..tree.sampling import sample_rows, sampled_row_weights
from ..tree.splitters import (
    HISTOGRAM_METHODS_WITH_BUNDLING,
    HistogramSplitter,
    MultiOutputSplitter,
    TreeInput,
    make_splitter,
)
from .loop import (
    EvalSet,
    bind_binning,
    check_evals,
    eval_features,
    make_timer,
    metrics_of,
    record_metrics,
)

__all__ = [
    "GBTreeLearner",
    "ROW_STREAMS_PER_ROUND",
    "bind_targets",
    "check_vector_leaves",
    "feature_draws",
    "measures_dispersion",
    "check_trees_per_round",
    "split_settings",
    "training_objective",
    "uses_class_weights",
]

#: Objective names that ``scale_pos_weight`` / ``is_unbalance`` apply to.
BINARY_OBJECTIVE_PREFIX = "binary:"
#: Random streams: row sampling uses stream ``round * ROW_STREAMS_PER_ROUND + position``,
#: ``position`` the tree's place in its round (``p * n_outputs + output`` for the ``p``-th
#: tree of a forest; the output itself without forests); column sampling
#: ``host_rng(seed, round, position)``.
ROW_STREAMS_PER_ROUND = 1 << 16


def check_trees_per_round(n_outputs, num_parallel_tree):
    """Raise ValueError when a round would grow more trees than it has random streams."""
    if n_outputs * num_parallel_tree > ROW_STREAMS_PER_ROUND:
        raise ValueError(
            f"num_parallel_tree={num_parallel_tree} with {n_outputs} outputs grows "
            f"{n_outputs * num_parallel_tree} trees a round; at most {ROW_STREAMS_PER_ROUND} "
            f"are supported: lower num_parallel_tree."
        )


def _initial_margins(booster, dataset, init_model, data):
    """Host float64 (n_rows, n_outputs): base_margin of the Dataset, else the init
    model's margins over all its rounds on ``data`` (the Dataset's raw features in the
    init model's feature order), else the booster's base margin."""
    n_rows = dataset.n_rows
    if dataset.base_margin is not None:
        margins = np.asarray(dataset.base_margin, dtype=np.float64)
        if margins.size != n_rows * booster.n_outputs:
            raise ValueError(
                f"base_margin has {margins.size} values; expected n_rows * n_outputs "
                f"= {n_rows} * {booster.n_outputs}."
            )
        return margins.reshape(n_rows, booster.n_outputs).copy()
    if init_model is not None and init_model.trees:
        return init_model.margins_to_continue(data)
    return np.broadcast_to(booster.base_margin, (n_rows, booster.n_outputs)).copy()


def _features_in_order(booster, dtrain):
    """Put the features of a copy of an init model in ``dtrain``'s order: when both carry
    feature names in different orders, renumber the trees' features and take
    dtrain's names (matched by name; missing or unknown names raise ValueError)."""
    if not dtrain.has_feature_names or has_default_names(booster.feature_names):
        return
    if booster.feature_names == dtrain.feature_names:
        return
    # positions[i]: where dtrain holds the init model's feature i.
    positions = feature_positions(dtrain.feature_names, booster.feature_names, "dtrain")
    for tree in booster.trees:
        internal = tree.feature >= 0
        tree.feature[internal] = positions[tree.feature[internal]]
    booster.feature_names = list(dtrain.feature_names)


def uses_class_weights(params):
    """Whether ``scale_pos_weight`` / ``is_unbalance`` weight the classes; ValueError
    when they are given for an objective other than a binary one."""
    if params["scale_pos_weight"] == 1.0 and not params["is_unbalance"]:
        return False
    objective = params["objective"]
    if not (isinstance(objective, str) and objective.startswith(BINARY_OBJECTIVE_PREFIX)):
        name = "a custom objective" if callable(objective) else repr(objective)
        raise ValueError(
            f"scale_pos_weight and is_unbalance weight the classes of a binary objective "
            f"('binary:logistic', 'binary:exponential'), not of {name}; pass sample "
            f"weights (Dataset(weight=...)) instead."
        )
    return True


def bind_targets(params, dtrain):
    """Record the training labels' number of targets in ``params['num_target']`` (in
    place; left 0 for one): a label of shape (n_rows, k) has k targets.

    Raises
    ------
    ValueError
        ``num_target`` given and not the labels' number of columns.
    """
    n_targets = getattr(dtrain, "n_targets", 1)
    given = params["num_target"]
    if given not in (0, n_targets) and not (given == 1 and n_targets == 1):
        raise ValueError(
            f"num_target={given}, but dtrain's label has {n_targets} column(s): leave "
            f"num_target out (it is read from the labels) or give labels of shape "
            f"(n_rows, {given})."
        )
    params["num_target"] = n_targets if n_targets > 1 else 0


def check_vector_leaves(params, dtrain, split_params, objective):
    """Raise ValueError naming what vector-leaf trees (``multi_strategy=
    'multi_output_tree'``) do not take: ``tree_method`` other than 'hist', categorical
    features, monotone constraints, gradient-based row sampling (GOSS,
    ``sampling_method='gradient_based'``), DART, objectives that refit their leaves."""
    problems = []
    if params["tree_method"] not in HISTOGRAM_METHODS_WITH_BUNDLING:
        problems.append(f"tree_method={params['tree_method']!r} (use 'hist')")
    if getattr(dtrain, "categories", None) is not None:
        problems.append("categorical features (encode them as numbers)")
    if split_params.monotone:
        problems.append("monotone_constraints")
    if params["data_sample_strategy"] == "goss" or params["sampling_method"] == "gradient_based":
        problems.append("gradient-based row sampling (GOSS, sampling_method='gradient_based')")
    if params["booster"] == "dart":
        problems.append("booster='dart'")
    if objective.has_leaf_refit:
        problems.append(f"objective {objective.name!r}, which refits its leaves")
    if problems:
        raise ValueError(
            f"multi_strategy='multi_output_tree' (vector leaves) does not take "
            f"{'; '.join(problems)}: change these, or train "
            f"multi_strategy='one_output_per_tree'."
        )


def training_objective(params):
    """The Objective of a training; a callable ``params['objective']`` becomes a
    :class:`CustomObjective` and the parameters record it by name (in place)."""
    if callable(params["objective"]):
        objective = CustomObjective(params["objective"], n_outputs=max(1, params["num_class"]))
        params["objective"] = CUSTOM_OBJECTIVE_NAME
        return objective
    return get_objective(params["objective"], params)


def _training_weights(params, dtrain):
    """dtrain's row weights times the class weights of ``scale_pos_weight`` /
    ``is_unbalance`` (host float64), or None when those leave them as they are."""
    if not uses_class_weights(params):
        return None
    multipliers = binary_class_weights(
        dtrain.label, params["scale_pos_weight"], params["is_unbalance"]
    )
    if multipliers is None or dtrain.weight is None:
        return multipliers
    return dtrain.weight * multipliers


def _make_booster(params, objective, dtrain, init_model, weight):
    """A new Booster, or a copy of ``init_model`` to continue (its features in dtrain's
    order); and that copy before any new round (None without ``init_model``)."""
    n_outputs = objective.n_outputs()
    if init_model is not None:
        if not isinstance(init_model, Booster):
            init_model = Booster.load_model(init_model)
        if init_model.tree_weights is not None:
            raise ValueError(
                "init_model is an AdaBoost model (booster='adaboost'); gradient "
                "boosting cannot continue it."
            )
        if init_model.n_features != dtrain.n_features:
            raise ValueError(
                f"init_model has {init_model.n_features} features, dtrain has {dtrain.n_features}."
            )
        if init_model.n_outputs != n_outputs:
            raise ValueError(
                f"init_model has {init_model.n_outputs} outputs, the objective needs {n_outputs}."
            )
        if init_model.params["num_parallel_tree"] != params["num_parallel_tree"]:
            raise ValueError(
                f"init_model grows {init_model.params['num_parallel_tree']} trees per output "
                f"a round (num_parallel_tree), these parameters "
                f"{params['num_parallel_tree']}: continue it with its num_parallel_tree."
            )
        if (
            init_model.params.get("multi_strategy", "one_output_per_tree")
            != params["multi_strategy"]
            and init_model.n_outputs > 1
        ):
            raise ValueError(
                f"init_model grows multi_strategy="
                f"{init_model.params.get('multi_strategy', 'one_output_per_tree')!r} trees, "
                f"these parameters {params['multi_strategy']!r}: continue it with its "
                f"multi_strategy."
            )
        if (init_model.weight_drop is not None) != (params["booster"] == "dart") and (
            init_model.trees
        ):
            raise ValueError(
                f"init_model is a {init_model.params['booster']!r} model and these parameters "
                f"train booster={params['booster']!r}: a DART model's trees are weighted "
                f"(weight_drop), so each continues only with its own booster."
            )
        booster = init_model.copy()
        booster._round_params = init_model.round_params  # before params are replaced
        _features_in_order(booster, dtrain)
        if booster.categories != dtrain.categories:
            raise ValueError(
                "init_model's categorical features (and their categories) differ from "
                "dtrain's; continue training on a Dataset built like the first one's."
            )
        booster.params = params
        booster._objective = None
        booster.best_iteration = booster.best_score = None  # stale: new rounds follow
        before = Booster(
            params,
            booster.n_outputs,
            booster.base_margin,
            booster.n_features,
            booster.feature_names,
            trees=list(booster.trees),  # the rounds of init_model only
            categories=booster.categories,
            weight_drop=booster.weight_drop,
        )
        return booster, before
    if params["base_score"] is not None:
        base_margin = objective.target_base_score_to_margin(params["base_score"])
    else:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            base_margin = objective.target_base_margin(dtrain.label, weight)
    if not np.all(np.isfinite(base_margin)):
        raise ValueError(
            f"The initial prediction (base margin) {np.asarray(base_margin).tolist()} "
            f"is not finite: the labels or weights overflow float64 in the "
            f"objective's optimal constant, or base_score is outside the "
            f"objective's range. Rescale labels or weights, or pass base_score."
        )
    booster = Booster(
        params,
        n_outputs,
        base_margin,
        dtrain.n_features,
        dtrain.feature_names,
        categories=dtrain.categories,
    )
    return booster, None


def round_settings(learner, fixed=()):
    """``(params, split_params)`` of a learner's next round: its run's ``params``, with
    the :data:`gpuboost.params.PER_ROUND_PARAMS` its Booster holds now (callbacks change
    them between rounds: ``Booster.set_param``), and the split parameters of those (the
    run's monotone directions kept).

    Raises
    ------
    ValueError
        One of ``fixed`` (parameters the learner cannot change between rounds) changed.
    """
    values = round_values(learner.booster.params)
    params = dict(learner.params, **values)
    initial = round_values(learner.params)
    if values == initial:
        return params, learner.split_params
    for name in fixed:
        if values[name] != initial[name]:
            raise ValueError(
                f"{name} cannot change between rounds here ({learner.label or 'this training'}"
                f"); the parameters that can: "
                f"{', '.join(n for n in PER_ROUND_PARAMS if n not in fixed)}."
            )
    return params, dataclasses.replace(
        SplitParams.from_params(params), monotone=learner.split_params.monotone
    )


def measures_dispersion(split_params, splitter):
    """Whether a tree's dispersion is measured: for its split penalty, or for a splitter
    that ``estimates_cat_smooth`` (docs/DESIGN.md, "Split penalty", "Categorical
    features")."""
    return split_params.split_penalty > 0.0 or getattr(splitter, "estimates_cat_smooth", False)


def _dispersion(backend, split_params, splitter, columns, quantisers, rows):
    """The tree's dispersion where :func:`measures_dispersion`, else 0: that of every
    output's quantized ``(gradients, hessians)`` column pair in ``columns`` over ``rows``,
    summed over the outputs (a vector tree's gain sums theirs), with each output's
    quantiser."""
    if not measures_dispersion(split_params, splitter):
        return 0.0
    return sum(
        quantiser.dispersion(backend.dispersion_sums(gradients, hessians, rows))
        for (gradients, hessians), quantiser in zip(columns, quantisers)
    )


def _check_finite_tree(tree, round_index):
    """Raise ValueError when a grown tree holds inf/NaN (float64 overflow of sums)."""
    for name in ("value", "gain", "cover", "threshold"):
        values = getattr(tree, name)
        if not np.all(np.isfinite(values)):
            raise ValueError(
                f"Round {round_index}: the tree's {name!r} overflowed float64 (inf or NaN). "
                f"Sums of weighted gradients or hessians exceed the float64 range: scale "
                f"the sample weights or labels down."
            )


def feature_draws(dtrain, params, round_index, position, interaction_groups):
    """``(FeatureSampler, InteractionConstraints or None)`` of the tree at ``position`` of
    round ``round_index`` (its feature draws' random stream; also gpuboost.dask's)."""
    sampler = FeatureSampler(
        dtrain.n_features,
        params,
        partial(host_rng, params["seed"], round_index, position),
        dtrain.feature_weights,
    )
    interactions = (
        None
        if interaction_groups is None
        else InteractionConstraints(interaction_groups, dtrain.n_features)
    )
    return sampler, interactions


def split_settings(params, dtrain):
    """``(SplitParams, interaction groups or None)`` of a training: the split parameters
    with the monotone directions resolved on dtrain's features, and the interaction
    constraints' groups (also gpuboost.dask's).

    Raises
    ------
    ValueError
        Constraints with ``tree_method='exact'``; monotone constraints with categorical
        features.
    """
    split_params = dataclasses.replace(
        SplitParams.from_params(params),
        monotone=resolve_monotone(
            params["monotone_constraints"], dtrain.n_features, dtrain.feature_names
        ),
    )
    interaction_groups = resolve_interactions(
        params["interaction_constraints"], dtrain.n_features, dtrain.feature_names
    )
    if params["tree_method"] == "exact" and (
        split_params.monotone or interaction_groups is not None
    ):
        raise ValueError(
            "monotone_constraints and interaction_constraints work with "
            "tree_method='hist' or 'approx', not 'exact': choose one of those."
        )
    if split_params.monotone and getattr(dtrain, "categories", None) is not None:
        raise ValueError(
            "monotone_constraints cannot be combined with categorical features yet "
            "(the categorical split scan does not bound the children's values): "
            "encode the categories as numbers (Dataset(..., categorical_features=None)) "
            "or leave monotone_constraints out."
        )
    return split_params, interaction_groups


class GBTreeLearner:
    """Gradient boosting: the setup of a run and its round step (see the module docstring).

    Parameters
    ----------
    given_params : dict
        The user's parameters (validated here).
    dtrain : Dataset
    evals : sequence of (Dataset, str)
    obj : callable or None
        Custom objective ``obj(raw_margin, dtrain) -> (grad, hess)``.
    custom_metric : callable or None
    init_model : Booster or path or None
    backend : Backend
    """

    label = ""
    done = False

    def __init__(self, given_params, dtrain, evals, obj, custom_metric, init_model, backend):
        params = validate_params(with_objective(given_params, obj))
        bind_binning(params, given_params, dtrain)
        bind_targets(params, dtrain)
        weight = _training_weights(params, dtrain)
        objective = training_objective(params)
        objective.check_labels(dtrain.label)
        evals = check_evals(evals, dtrain)
        for dataset, _ in evals:
            if dataset is not dtrain:
                objective.check_labels(dataset.label)
        self.params, self.dtrain, self.backend, self.objective = params, dtrain, backend, objective
        self.custom_metric = custom_metric
        booster, init_model = _make_booster(
            params, objective, dtrain, init_model, dtrain.weight if weight is None else weight
        )
        booster._objective = objective
        self.booster = booster
        check_trees_per_round(booster.n_outputs, params["num_parallel_tree"])
        self.start_round = booster.num_boosted_rounds()
        self.timer = make_timer(params, backend)

        self.data = backend.prepare(dtrain)
        if weight is not None:  # class weights: a copy, the Dataset's cache stays as it is
            self.data = copy.copy(self.data)
            self.data.weight = backend.to_device(weight)
        self.margins = backend.to_device(
            _initial_margins(
                booster,
                dtrain,
                init_model,
                dtrain.features_for(backend) if init_model is not None else None,
            )
        )
        self.eval_sets = []
        for dataset, name in evals:
            if dataset is dtrain:
                self.eval_sets.append(EvalSet(backend, dataset, name, self.margins, True))
                continue
            data = eval_features(dataset, name, dtrain, backend)
            margins = _initial_margins(booster, dataset, init_model, data)
            self.eval_sets.append(
                EvalSet(backend, dataset, name, backend.to_device(margins), False, data)
            )
        self.metrics = metrics_of(params, objective.default_metric)
        self.split_params, self.interaction_groups = split_settings(params, dtrain)
        self.policy = GrowthPolicy.from_params(params)
        self.rebinner = (
            ApproxRebinner(backend, dtrain, dtrain.bin_mapper.max_bin)
            if params["tree_method"] == "approx"
            else None
        )
        # tree_method='exact' or feature bundles; None ('approx'): one per tree.
        if booster.vector_leaves:
            check_vector_leaves(params, dtrain, self.split_params, objective)
            self.splitter = MultiOutputSplitter(
                backend, self.data, dtrain.bin_mapper.thresholds_for_bins, booster.n_outputs
            )
        else:
            self.splitter = make_splitter(params, backend, self.data, dtrain)

    def update(self, round_index):
        """Grow one round's trees (``num_parallel_tree`` per output) and update the margins."""
        self.booster.append_round(*self._grow_round(round_index, *round_settings(self)))
        return True

    def _grow_round(self, round_index, params, split_params):
        """The trees of one round (:attr:`Booster.trees_per_round`, forest after forest),
        the margins updated tree after tree; returns ``(trees, PER_ROUND_PARAMS values)``."""
        backend, xp, timer = self.backend, self.backend.xp, self.timer
        n_outputs = self.booster.n_outputs
        label, weight = self.data.label, self.data.weight
        with timer.phase("gradients"):
            margin_view = self.margins[:, 0] if n_outputs == 1 else self.margins
            self.objective.begin_round(backend, label, margin_view, weight)
            gradients, hessians = backend.gradients(
                self.objective, label, margin_view, weight, self.dtrain
            )
            if n_outputs == 1:
                gradients, hessians = gradients.reshape(-1, 1), hessians.reshape(-1, 1)
        # Leaf refits (quantile leaves) start from the round's margins, whichever tree of
        # a forest they refit (the margins move tree after tree).
        refit_margins = self.margins
        if self.objective.has_leaf_refit and params["num_parallel_tree"] > 1:
            refit_margins = self.margins.copy()
        # Output after output, each column copied once for its whole forest; the trees
        # take their places forest after forest (the outputs' trees are independent:
        # each reads and updates its own margin column, so the order changes no byte).
        n_parallel = params["num_parallel_tree"]
        if self.booster.vector_leaves:  # one tree for every output, forest after forest
            trees = [
                self._grow_vector(round_index, position, gradients, hessians, params, split_params)
                for position in range(n_parallel)
            ]
            return trees, round_values(params)
        trees = [None] * (n_outputs * n_parallel)
        for output in range(n_outputs):  # plain loops: a comprehension's closure would keep
            column_g = xp.ascontiguousarray(gradients[:, output])  # the arrays of a failed
            column_h = xp.ascontiguousarray(hessians[:, output])  # round alive
            for position in range(output, len(trees), n_outputs):  # (test_resources.py)
                trees[position] = self._grow(
                    round_index,
                    output,
                    position,
                    column_g,
                    column_h,
                    params,
                    split_params,
                    refit_margins,
                )
        return trees, round_values(params)

    def _grow(
        self, round_index, output, position, column_g, column_h, params, split_params, refit_margins
    ):
        """One tree of one output, ``position`` in its round (the round's ``params`` and
        ``split_params``): sample, quantize, grow, refit (at ``refit_margins``), update
        the margins."""
        backend, xp, timer = self.backend, self.backend.xp, self.timer
        learning_rate = tree_learning_rate(params)
        with timer.phase("sample"):  # gpuboost.tree.sampling: bagging, GOSS, gradient-based
            sample_indices, multipliers = sample_rows(
                backend,
                params,
                column_g,
                column_h,
                params["seed"],
                round_index * ROW_STREAMS_PER_ROUND + position,
            )
            if multipliers is not None:  # before quantization: integer sums stay exact
                column_g, column_h = column_g * multipliers, column_h * multipliers
        with timer.phase("quantize"):
            (quantized_g, scale_g), (quantized_h, scale_h) = backend.quantize_gradients(
                column_g, column_h, output if multipliers is None else None
            )
        splitter = self.splitter
        if self.rebinner is not None:  # tree_method='approx': this tree's own bins
            with timer.phase("sketch"):
                tree_data, thresholds = self.rebinner.rebin(self.data, quantized_h, sample_indices)
            splitter = HistogramSplitter(backend, tree_data, thresholds)
        quantiser = GradientQuantiser(scale_g, scale_h)
        dispersion = _dispersion(
            backend,
            split_params,
            splitter,
            [(quantized_g, quantized_h)],
            [quantiser],
            sample_indices,
        )
        tree_input = TreeInput(
            quantized_g,
            quantized_h,
            quantiser,
            sample_indices,
            split_params.penalized(dispersion),
            learning_rate,
            dispersion=dispersion,
        )
        sampler, interactions = feature_draws(
            self.dtrain, params, round_index, position, self.interaction_groups
        )
        grown = TreeGrower(
            splitter,
            tree_input,
            self.policy,
            sampler,
            timer,
            interactions,
            defer_final_partition=not self.objective.has_leaf_refit,
        ).grow()
        tree = grown.tree
        if self.objective.has_leaf_refit:
            with timer.phase("leaf_values"):
                # Leaves without rows or without weight keep their Newton value (0).
                has_weight = tree.cover[grown.leaf_nodes] > 0
                leaves = grown.leaf_nodes[has_weight]
                if len(leaves):
                    refit = self.objective.refit_leaf_values(
                        backend,
                        self.data.label,
                        xp.ascontiguousarray(refit_margins[:, output]),
                        sampled_row_weights(self.data.weight, multipliers),
                        grown.sample_indices,
                        grown.leaf_begins[has_weight],
                        grown.leaf_ends[has_weight],
                        output,
                    )
                    if grown.node_bounds is not None:  # monotone constraints: stay in bounds
                        bounds = grown.node_bounds[leaves]
                        refit = np.clip(refit, bounds[:, 0], bounds[:, 1])
                    tree.value[leaves] = learning_rate * refit
        with timer.phase("predict_update"):
            if grown.sample_indices.shape[0] == self.dtrain.n_rows:  # every row is in a leaf
                # The leaves' segments, and the unpartitioned splits whose rows are
                # routed by the split (GrownTree.unsplit), in one backend call.
                unsplit = grown.unsplit
                parents = unsplit["parents"]
                backend.add_tree_leaf_values(
                    splitter.partition_data if len(parents) else None,
                    self.margins,
                    output,
                    grown.sample_indices,
                    grown.leaf_begins,
                    grown.leaf_ends,
                    tree.value[grown.leaf_nodes],
                    unsplit["begins"],
                    unsplit["ends"],
                    unsplit["n_left"],
                    unsplit["features"],
                    unsplit["bins"],
                    unsplit["default_left"],
                    tree.value[tree.left_child[parents]],
                    tree.value[tree.right_child[parents]],
                )
            else:
                self.margins[:, output] += splitter.predict_training_rows(tree)
            for eval_set in self.eval_sets:
                if not eval_set.is_train:
                    eval_set.margins[:, output] += backend.predict_tree_raw(eval_set.features, tree)
        _check_finite_tree(tree, round_index)
        return tree

    def _grow_vector(self, round_index, position, gradients, hessians, params, split_params):
        """One vector-leaf tree, ``position`` in its round, of every output's gradient
        and hessian columns ``gradients``, ``hessians`` (n_rows, k): sample, quantize
        each output, grow, update every output's margins (docs/DESIGN.md "Vector
        leaves")."""
        backend, timer = self.backend, self.timer
        with timer.phase("sample"):  # uniform row sampling only (check_vector_leaves)
            sample_indices, multipliers = sample_rows(
                backend,
                params,
                gradients[:, 0],
                hessians[:, 0],
                params["seed"],
                round_index * ROW_STREAMS_PER_ROUND + position,
            )
        with timer.phase("quantize"):
            if multipliers is not None:  # before quantization: sums stay exact
                gradients = gradients * multipliers[:, None]
                hessians = hessians * multipliers[:, None]
            pairs, scales = backend.quantize_output_pairs(gradients, hessians)
            quantisers = [GradientQuantiser(*scale) for scale in scales]
        columns = [(pairs[:, 2 * k], pairs[:, 2 * k + 1]) for k in range(len(quantisers))]
        dispersion = _dispersion(
            backend, split_params, self.splitter, columns, quantisers, sample_indices
        )
        tree_input = TreeInput(
            pairs[:, 0],
            pairs[:, 1],
            quantisers[0],
            sample_indices,
            split_params.penalized(dispersion),
            tree_learning_rate(params),
            output_pairs=pairs,
            output_quantisers=tuple(quantisers),
            dispersion=dispersion,
        )
        sampler, interactions = feature_draws(
            self.dtrain, params, round_index, position, self.interaction_groups
        )
        grown = TreeGrower(
            self.splitter, tree_input, self.policy, sampler, timer, interactions
        ).grow()
        tree = grown.tree
        with timer.phase("predict_update"):
            if grown.sample_indices.shape[0] != self.dtrain.n_rows:  # rows left out
                self.margins += self.splitter.predict_training_rows(tree)
            else:  # every row in a leaf
                backend.add_leaf_vectors(
                    self.margins,
                    grown.sample_indices,
                    grown.leaf_begins,
                    grown.leaf_ends,
                    tree.value[grown.leaf_nodes],
                )
            for output in range(tree.n_outputs):
                for eval_set in self.eval_sets:
                    if not eval_set.is_train:
                        eval_set.margins[:, output] += backend.predict_tree_raw(
                            eval_set.features, tree.output_tree(output)
                        )
        _check_finite_tree(tree, round_index)
        return tree

    def evaluate(self, evals_log):
        """Record every metric of every evaluation set for the round just grown."""
        xp = self.backend.xp
        with self.timer.phase("metric"):
            for eval_set in self.eval_sets:
                margins = (
                    eval_set.margins[:, 0] if self.booster.n_outputs == 1 else eval_set.margins
                )
                record_metrics(
                    evals_log,
                    eval_set,
                    self.objective.mean(xp, margins),
                    self.metrics,
                    self.custom_metric,
                    self.backend,
                    margins=margins,
                )

    def after_training(self, booster):
        return booster
