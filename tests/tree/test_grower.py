"""Tests of gpuboost.tree.grower: depthwise and lossguide growth, column sampling, leaf values."""

import numpy as np
import pandas as pd
import pytest
from _tiers import SLOW, crossed

import gpuboost
from gpuboost.backends.base import Backend
from gpuboost.backends.cpu import row_levels, vector_levels
from gpuboost.backends.cpu.backend import CpuBackend
from gpuboost.backends.numpy.backend import NumpyBackend
from gpuboost.backends.numpy.predict import predict_leaves_binned
from gpuboost.core.gain import SplitParams, leaf_weight
from gpuboost.core.profiling import PhaseTimer
from gpuboost.core.quantize import GradientQuantiser, dequantize, quantize
from gpuboost.core.random import host_rng
from gpuboost.data.dataset import Dataset
from gpuboost.params import validate_params
from gpuboost.tree import grower as grower_module
from gpuboost.tree.feature_sampler import FeatureSampler
from gpuboost.tree.grower import GrowthPolicy, TreeGrower
from gpuboost.tree.splitters import HistogramSplitter, MultiOutputSplitter, SplitTable, TreeInput


class RecordingBackend(NumpyBackend):
    """NumPy backend that records the segments it builds and the masks it scans with."""

    def __init__(self):
        self.built_segments = []
        self.scans = []
        self.n_builds = self.n_subtractions = 0

    def build_histograms(
        self, data, quantized_gradients, quantized_hessians, sample_indices, begins, ends
    ):
        self.built_segments += list(zip(begins, ends))
        self.n_builds += 1
        return super().build_histograms(
            data, quantized_gradients, quantized_hessians, sample_indices, begins, ends
        )

    def subtract_histograms(self, parent, child):
        self.n_subtractions += 1
        return super().subtract_histograms(parent, child)

    def find_best_splits(
        self, data, histograms, scale_gradients, scale_hessians, split_params, feature_mask
    ):
        records = super().find_best_splits(
            data, histograms, scale_gradients, scale_hessians, split_params, feature_mask
        )
        self.scans.append((None if feature_mask is None else feature_mask.copy(), records))
        return records


class DirectHistogramGrower(TreeGrower):
    """Builds every node's histogram directly (no subtraction) before the split scan,
    checking on the way that the subtraction gave exactly the same histogram."""

    n_checked = 0

    def _find_splits_in_histograms(self, ids, mask):
        nodes = self.nodes
        if len(ids):
            direct = self.splitter.build_histograms(
                self.tree_input, nodes.begin[ids], nodes.end[ids]
            )
            for i, node in enumerate(ids):
                batch = self._batches[nodes.histogram_batch[node]]
                np.testing.assert_array_equal(direct[i], batch[nodes.histogram_row[node]])
                DirectHistogramGrower.n_checked += 1
            self._release(ids)
            self._keep_batch(direct, ids)
        super()._find_splits_in_histograms(ids, mask)


def make_problem(X, y, weight=None, max_bin=255):
    """Dataset and quantized squared-error gradients at margin 0."""
    dataset = Dataset(X, label=y, weight=weight, max_bin=max_bin)
    w = np.ones(len(y)) if weight is None else weight
    quantized_g, scale_g = quantize(np, (0.0 - y) * w)
    quantized_h, scale_h = quantize(np, w)
    return dataset, (quantized_g, quantized_h, scale_g, scale_h)


def grow(
    dataset,
    gradients,
    grower_class=TreeGrower,
    backend=None,
    sample_indices=None,
    timer=None,
    **user_params,
):
    # the shapes these tests check need leaves of any size (no minimum row count)
    params = validate_params({"device": "cpu", "min_data_in_leaf": 1, **user_params})
    backend = backend or NumpyBackend()
    data = backend.prepare(dataset)
    quantized_g, quantized_h, scale_g, scale_h = gradients
    if sample_indices is None:
        sample_indices = np.arange(dataset.n_rows, dtype=np.int32)
    sampler = FeatureSampler(dataset.n_features, params, host_rng(params["seed"], 0, 0))
    tree_input = TreeInput(
        quantized_g,
        quantized_h,
        GradientQuantiser(scale_g, scale_h),
        sample_indices,
        SplitParams.from_params(params),
        params["learning_rate"],
    )
    splitter = HistogramSplitter(backend, data, dataset.bin_mapper.thresholds_for_bins)
    grower = grower_class(
        splitter, tree_input, GrowthPolicy.from_params(params), sampler, timer or PhaseTimer()
    )
    return grower, grower.grow()


def node_depths(tree):
    depths = np.zeros(tree.n_nodes, dtype=int)
    for node in range(tree.n_nodes):
        if tree.feature[node] >= 0:
            depths[tree.left_child[node]] = depths[tree.right_child[node]] = depths[node] + 1
    return depths


@pytest.fixture
def problem(regression_data):
    X, y = regression_data
    return make_problem(X, y)


# ---------------------------------------------------------------------------
# Tree shape limits and node ids
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("max_depth", [1, 2, 4, 7])
def test_depthwise_respects_max_depth(problem, max_depth):
    dataset, gradients = problem
    _, grown = grow(dataset, gradients, max_depth=max_depth, min_child_weight=0.0)
    assert grown.tree.depth() == max_depth  # the data supports deeper trees
    assert grown.tree.n_leaves <= 2**max_depth


@pytest.mark.parametrize("max_leaves", [1, 2, 3, 5, 12])
def test_depthwise_max_leaves_expands_the_highest_gains_first(problem, max_leaves):
    dataset, gradients = problem
    grower, grown = grow(
        dataset, gradients, max_depth=6, max_leaves=max_leaves, min_child_weight=0.0
    )
    assert grown.tree.n_leaves == max_leaves
    nodes = grower.nodes
    ids = np.arange(nodes.size)
    partly_expanded_levels = 0
    for depth in np.unique(nodes.depth[ids]):
        level = ids[(nodes.depth[ids] == depth) & nodes.admissible(ids)]
        expanded = nodes.gain[level[nodes.left[level] >= 0]]
        skipped = nodes.gain[level[nodes.left[level] < 0]]
        if len(skipped) and len(expanded):
            assert expanded.min() >= skipped.max()
            partly_expanded_levels += 1
    assert partly_expanded_levels > 0 or max_leaves <= 2  # the budget did choose


@pytest.mark.parametrize("max_leaves, max_depth", [(2, 6), (7, 6), (16, 3), (40, 0)])
def test_lossguide_respects_max_leaves_and_max_depth(problem, max_leaves, max_depth):
    dataset, gradients = problem
    _, grown = grow(
        dataset,
        gradients,
        grow_policy="lossguide",
        max_leaves=max_leaves,
        max_depth=max_depth,
        min_child_weight=0.0,
    )
    assert grown.tree.n_leaves <= max_leaves
    if max_depth:
        assert grown.tree.depth() <= max_depth
    if max_leaves <= 2**max_depth or max_depth == 0:
        assert grown.tree.n_leaves == max_leaves


@pytest.mark.parametrize("max_leaves", [4, 10, 25])
def test_lossguide_expands_the_best_leaf_first(problem, max_leaves):
    dataset, gradients = problem
    grower, grown = grow(
        dataset,
        gradients,
        grow_policy="lossguide",
        max_leaves=max_leaves,
        max_depth=0,
        min_child_weight=0.0,
    )
    nodes = grower.nodes
    internal = np.flatnonzero(nodes.left[: nodes.size] >= 0)
    expansion_order = internal[np.argsort(nodes.left[internal])]
    frontier = {0}
    for parent in expansion_order.tolist():
        candidates = [i for i in frontier if nodes.admissible(i)]
        best = max(candidates, key=lambda i: (float(nodes.gain[i]), -i))
        assert parent == best
        frontier.remove(parent)
        frontier |= {int(nodes.left[parent]), int(nodes.right[parent])}
    assert grown.tree.n_leaves == len(frontier) == max_leaves


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
def test_node_ids_in_expansion_order(problem, policy):
    dataset, gradients = problem
    _, grown = grow(
        dataset, gradients, grow_policy=policy, max_depth=5, max_leaves=20, min_child_weight=0.0
    )
    tree = grown.tree
    internal = np.flatnonzero(tree.feature >= 0)
    lefts, rights = tree.left_child[internal], tree.right_child[internal]
    np.testing.assert_array_equal(rights, lefts + 1)
    assert (lefts > internal).all()
    # Children ids are handed out pair by pair, 1, 3, 5, ...
    np.testing.assert_array_equal(np.sort(lefts), 1 + 2 * np.arange(len(internal)))
    if policy == "depthwise":
        depths = node_depths(tree)
        assert np.all(np.diff(depths) >= 0)  # level order
        # Within a level, parents are expanded in node-id order.
        np.testing.assert_array_equal(lefts, np.sort(lefts))


def test_single_leaf_when_no_split_isadmissible(problem):
    dataset, gradients = problem
    _, grown = grow(dataset, gradients, gamma=1e12, learning_rate=0.5)
    tree = grown.tree
    assert tree.n_nodes == 1 and tree.feature[0] == -1
    quantized_g, quantized_h, scale_g, scale_h = gradients
    G = dequantize(quantized_g.astype(np.int64).sum(), scale_g)
    H = dequantize(quantized_h.astype(np.int64).sum(), scale_h)
    assert tree.value[0] == 0.5 * leaf_weight(G, H, SplitParams())
    np.testing.assert_array_equal(grown.leaf_nodes, [0])


def test_empty_sample(problem):
    dataset, gradients = problem
    _, grown = grow(dataset, gradients, sample_indices=np.zeros(0, dtype=np.int32))
    assert grown.tree.n_nodes == 1 and grown.tree.value[0] == 0.0


@pytest.mark.parametrize("min_data_in_leaf, min_child_weight", [(20, 0.0), (1, 15.0)])
def test_leaves_respect_minimum_size(problem, min_data_in_leaf, min_child_weight):
    dataset, gradients = problem
    _, grown = grow(
        dataset,
        gradients,
        max_depth=8,
        min_data_in_leaf=min_data_in_leaf,
        min_child_weight=min_child_weight,
    )
    tree = grown.tree
    assert tree.n_leaves > 4
    assert (tree.count[tree.is_leaf] >= min_data_in_leaf).all()
    assert (tree.cover[tree.is_leaf] >= min_child_weight).all()


# ---------------------------------------------------------------------------
# Histogram subtraction
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
def test_subtraction_gives_the_same_tree_as_direct_histograms(regression_data, policy):
    X, y = regression_data
    weight = np.random.default_rng(0).uniform(0.2, 2.0, size=len(y))
    dataset, gradients = make_problem(X, y, weight=weight)
    params = dict(
        grow_policy=policy, max_depth=6, max_leaves=30, min_child_weight=0.0, reg_alpha=0.1
    )
    _, reference = grow(dataset, gradients, **params)
    DirectHistogramGrower.n_checked = 0
    _, direct = grow(dataset, gradients, grower_class=DirectHistogramGrower, **params)
    assert DirectHistogramGrower.n_checked > 20
    assert direct.tree == reference.tree
    np.testing.assert_array_equal(direct.sample_indices, reference.sample_indices)


@pytest.mark.parametrize("colsample_bynode", [1.0, 0.6])
def test_batches_with_unsplittable_children_are_scanned_whole(
    regression_data, colsample_bynode, monkeypatch
):
    """Children too small to split share their batch with splittable siblings: the grower
    scans the whole batch and keeps the splittable nodes' records (with their own column
    samples), which gives the tree of direct, one-batch-per-node histograms."""
    X, y = regression_data
    dataset, gradients = make_problem(X, y)
    params = dict(max_depth=7, min_data_in_leaf=25, colsample_bynode=colsample_bynode, seed=0)
    taken = []
    original_take = SplitTable.take
    monkeypatch.setattr(
        SplitTable,
        "take",
        lambda table, rows: taken.append(len(rows)) or original_take(table, rows),
    )
    _, scanned_whole = grow(dataset, gradients, **params)
    assert taken  # the whole-batch path ran
    _, direct = grow(dataset, gradients, grower_class=DirectHistogramGrower, **params)
    assert scanned_whole.tree == direct.tree
    assert scanned_whole.tree.n_leaves > 8


def test_only_the_smaller_child_histogram_is_built(problem):
    dataset, gradients = problem
    backend = RecordingBackend()
    grower, grown = grow(dataset, gradients, backend=backend, max_depth=5, min_child_weight=0.0)
    nodes = grower.nodes
    ids = np.arange(nodes.size)
    segment_to_node = {(int(nodes.begin[i]), int(nodes.end[i])): i for i in ids}
    assert backend.built_segments[0] == (0, dataset.n_rows)
    built_nodes = [segment_to_node[tuple(map(int, s))] for s in backend.built_segments[1:]]
    internal = ids[nodes.left[ids] >= 0]
    parents = dict(zip(nodes.left[internal].tolist(), internal.tolist()))
    parents.update(zip(nodes.right[internal].tolist(), internal.tolist()))
    seen_parents = set()
    for node in built_nodes:
        parent = parents[node]
        assert parent not in seen_parents  # one build per pair
        seen_parents.add(parent)
        left, right = nodes.left[parent], nodes.right[parent]
        smaller = left if nodes.count[left] <= nodes.count[right] else right
        assert node == smaller
    assert len(built_nodes) > 5


def test_depthwise_growth_batches_each_level(problem):
    """One histogram build, one sibling subtraction and one split scan per level, however
    many nodes it has (on a GPU each backend call is a few launches, so per-node calls
    would make launch latency grow with the tree)."""
    dataset, gradients = problem
    backend = RecordingBackend()
    max_depth = 6
    grower, _ = grow(dataset, gradients, backend=backend, max_depth=max_depth, min_child_weight=0.0)
    depth_reached = int(grower.nodes.depth[: grower.nodes.size].max())
    assert depth_reached == max_depth and grower.nodes.size > 4 * max_depth
    assert backend.n_builds == max_depth  # the root, then one batch per level but the last
    assert backend.n_subtractions == max_depth - 1
    assert len(backend.scans) == max_depth


# ---------------------------------------------------------------------------
# Leaf values and leaf segments
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        dict(learning_rate=0.3),
        dict(learning_rate=0.7, reg_alpha=0.5, reg_lambda=2.0),
        dict(learning_rate=1.0, max_delta_step=0.3),
    ],
)
def test_leaf_value_is_learning_rate_times_leaf_weight(problem, params):
    dataset, gradients = problem
    quantized_g, quantized_h, scale_g, scale_h = gradients
    _, grown = grow(dataset, gradients, max_depth=4, **params)
    tree = grown.tree
    split_params = SplitParams.from_params(validate_params(params))
    for node, begin, end in zip(grown.leaf_nodes, grown.leaf_begins, grown.leaf_ends):
        rows = grown.sample_indices[begin:end]
        G = dequantize(quantized_g[rows].astype(np.int64).sum(), scale_g)
        H = dequantize(quantized_h[rows].astype(np.int64).sum(), scale_h)
        assert tree.value[node] == params["learning_rate"] * leaf_weight(G, H, split_params)
        assert tree.cover[node] == H and tree.count[node] == end - begin


def test_leaf_segments_partition_the_sample_in_row_order(problem):
    dataset, gradients = problem
    sample = np.sort(np.random.default_rng(1).choice(dataset.n_rows, 300, replace=False))
    _, grown = grow(dataset, gradients, sample_indices=sample.astype(np.int32), max_depth=5)
    tree = grown.tree
    assert tree.count[0] == 300
    order = np.argsort(grown.leaf_begins)
    np.testing.assert_array_equal(grown.leaf_begins[order][1:], grown.leaf_ends[order][:-1])
    assert grown.leaf_begins[order][0] == 0 and grown.leaf_ends[order][-1] == 300
    np.testing.assert_array_equal(np.sort(grown.sample_indices), sample)
    leaves = predict_leaves_binned(tree, dataset.X_binned, dataset.bin_mapper.missing_bin)
    for node, begin, end in zip(grown.leaf_nodes, grown.leaf_begins, grown.leaf_ends):
        rows = grown.sample_indices[begin:end]
        assert np.all(np.diff(rows) > 0)
        assert (leaves[rows] == node).all()
    np.testing.assert_array_equal(np.sort(grown.leaf_nodes), np.flatnonzero(tree.is_leaf))


def test_thresholds_come_from_the_bin_edges(problem):
    dataset, gradients = problem
    _, grown = grow(dataset, gradients, max_depth=4)
    tree = grown.tree
    for node in np.flatnonzero(tree.feature >= 0):
        assert tree.threshold[node] == dataset.bin_mapper.threshold_for_bin(
            int(tree.feature[node]), int(tree.threshold_bin[node])
        )
        assert tree.gain[node] > 0


def test_timer_sees_the_growth_phases(problem):
    dataset, gradients = problem
    timer = PhaseTimer(enabled=True)
    grow(dataset, gradients, timer=timer, max_depth=3)
    assert {"histogram", "split", "partition"} <= set(timer.seconds)


# ---------------------------------------------------------------------------
# Column sampling
# ---------------------------------------------------------------------------


def test_feature_sampler_without_sampling_gives_no_mask():
    params = validate_params({})
    sampler = FeatureSampler(5, params, host_rng(0))
    assert sampler.trivial and sampler.mask([0, 1, 2]) is None
    np.testing.assert_array_equal(sampler.tree_features, np.arange(5))


def test_feature_sampler_nests_tree_level_and_node_sets():
    params = validate_params(
        {"colsample_bytree": 0.8, "colsample_bylevel": 0.6, "colsample_bynode": 0.5}
    )
    sampler = FeatureSampler(20, params, host_rng(3, 1, 0))
    assert len(sampler.tree_features) == 16
    depths = [0, 1, 1, 2, 2, 2, 2, 1]
    masks = sampler.mask(depths)
    assert masks.shape == (8, 20) and masks.dtype == bool
    for row, depth in zip(masks, depths):
        level = sampler.level_features[depth]
        assert len(level) == int(0.6 * 16)
        assert set(level) <= set(sampler.tree_features)
        assert row.sum() == int(0.5 * len(level))
        assert set(np.flatnonzero(row)) <= set(level)
    # Same generator seed: same draws.
    again = FeatureSampler(20, params, host_rng(3, 1, 0)).mask(depths)
    np.testing.assert_array_equal(again, masks)


def test_feature_sampler_keeps_at_least_one_feature():
    params = validate_params({"colsample_bynode": 0.01})
    masks = FeatureSampler(7, params, host_rng(0)).mask([0, 1, 1])
    np.testing.assert_array_equal(masks.sum(axis=1), [1, 1, 1])


def test_colsample_bytree_tiny_uses_one_feature_per_tree(regression_data):
    X, y = regression_data
    booster = gpuboost.train(  # no split penalty: every tree splits on its one feature
        {"device": "cpu", "colsample_bytree": 0.01, "max_depth": 4, "split_penalty": 0},
        gpuboost.Dataset(X, label=y),
        num_boost_round=12,
        verbose_eval=False,
    )
    used_anywhere = set()
    for tree in booster.trees:
        used = set(tree.feature[tree.feature >= 0].tolist())
        assert len(used) == 1
        used_anywhere |= used
    assert len(used_anywhere) > 1  # different trees draw different features


def test_colsample_bylevel_tiny_uses_one_feature_per_level(regression_data):
    X, y = regression_data
    booster = gpuboost.train(
        {"device": "cpu", "colsample_bylevel": 0.01, "max_depth": 4},
        gpuboost.Dataset(X, label=y),
        num_boost_round=8,
        verbose_eval=False,
    )
    levels_with_several_nodes = 0
    for tree in booster.trees:
        depths = node_depths(tree)
        for depth in set(depths[tree.feature >= 0].tolist()):
            at_depth = (depths == depth) & (tree.feature >= 0)
            assert len(set(tree.feature[at_depth].tolist())) == 1
            levels_with_several_nodes += int(at_depth.sum() > 1)
    assert levels_with_several_nodes > 0


def test_colsample_bynode_masks_are_honoured(problem):
    dataset, gradients = problem
    backend = RecordingBackend()
    grow(
        dataset, gradients, backend=backend, colsample_bynode=0.4, max_depth=5, min_child_weight=0.0
    )
    n_split_nodes = 0
    for mask, records in backend.scans:
        assert mask is not None
        np.testing.assert_array_equal(mask.sum(axis=1), 2)  # int(0.4 * 5)
        found = records["feature"] >= 0
        assert mask[np.flatnonzero(found), records["feature"][found]].all()
        n_split_nodes += int(found.sum())
    assert n_split_nodes > 5


#: Lossguide parameters of the speculation tests (the grower's drivers).
LOSSGUIDE_CASES = [
    {"max_leaves": 31, "max_depth": 0},
    {"max_leaves": 200, "max_depth": 0, "min_child_weight": 0.0, "reg_lambda": 0.0},
    {"max_leaves": 0, "max_depth": 7, "gamma": 0.05},
    {"max_leaves": 12, "max_depth": 4, "min_data_in_leaf": 20},
    {"max_leaves": 64, "max_depth": 0, "subsample": 0.7, "objective": "binary:logistic"},
    {"max_leaves": 40, "max_depth": 0, "enable_bundle": True},
]


def _lossguide_data():
    """``(X, signal)``: 3000 x 8 with missing values and a sparse binary column."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 8))
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 7] = rng.integers(0, 2, size=3000) * (rng.random(3000) < 0.1)
    return X, np.sin(3 * np.nan_to_num(X[:, 0])) + np.nan_to_num(X[:, 1] * X[:, 2] ** 2)


def _lossguide_tiers(cases, slow_on_cpu):
    """(params, device) of every case on both kernels, ids as pytest made them
    (``cpu-params3``): the fast tier runs the compiled kernels on every case but
    ``slow_on_cpu`` and the NumPy reference on the smallest case (the drivers are the
    same code on both); the slow tier the rest."""
    smallest = 3  # {"max_leaves": 12, "max_depth": 4, ...}
    return [
        pytest.param(
            params,
            device,
            id=f"{device}-params{index}",
            marks=[]
            if (device == "cpu" and index not in slow_on_cpu) or index == smallest
            else [SLOW],
        )
        for device in ("cpu", "numpy-reference")
        for index, params in enumerate(cases)
    ]


@pytest.mark.parametrize("params, device", _lossguide_tiers(LOSSGUIDE_CASES, slow_on_cpu=(1,)))
def test_speculative_lossguide_batches_grow_the_one_leaf_per_step_trees(
    params, device, monkeypatch
):
    """Lossguide steps that expand several leaves (kept up to the prefix one-leaf steps
    would also take, the rest undone) give the same model bytes as one leaf per step,
    and batches of more than one leaf are both kept and cut on this data."""
    if device == "numpy-reference":
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    X, signal = _lossguide_data()
    y = (signal > 0).astype(float) if "objective" in params else signal
    # min_data_in_leaf=1, no split penalty: the leaf cap, not the leaf size, ends the trees
    full = {"device": "cpu", "grow_policy": "lossguide", "seed": 3, "min_data_in_leaf": 1,
            "split_penalty": 0, **params}  # fmt: skip
    kept, cut = [], []
    push = grower_module.LossguideDriver.push

    def recording_push(driver, ids):
        size = len(driver.batch)
        taken_back = push(driver, ids)
        (cut if len(taken_back) else kept).append(size)
        return taken_back

    monkeypatch.setattr(grower_module.LossguideDriver, "push", recording_push)
    speculative = gpuboost.train(full, Dataset(X, label=y), 4).save_raw()
    assert any(size > 1 for size in kept) and cut
    monkeypatch.setattr(grower_module, "LOSSGUIDE_MAX_BATCH", 1)
    kept.clear()
    one_by_one = gpuboost.train(full, Dataset(X, label=y), 4).save_raw()
    assert max(kept) == 1
    assert speculative == one_by_one


@pytest.mark.parametrize(
    "params, device",
    _lossguide_tiers(
        [
            *LOSSGUIDE_CASES,
            {"max_leaves": 2, "max_depth": 0},
            {"max_leaves": 31, "max_depth": 0, "monotone_constraints": [1, 0, -1, 0, 0, 0, 0, 0]},
            {"max_leaves": 31, "max_depth": 0, "interaction_constraints": [[0, 1], [2, 3, 4]]},
            {"max_leaves": 24, "max_depth": 0, "objective": "reg:huber", "huber_delta": 0.5},
        ],
        slow_on_cpu=(1,),
    ),
)
def test_lossguide_expanded_ahead_is_the_one_leaf_per_step_tree(params, device, monkeypatch):
    """Lossguide steps that expand every leaf the one-leaf order may still reach
    (LookaheadLossguideDriver: nothing taken back, the order replayed from the gains, the
    unused expansions dropped at the end) give the model bytes and the final row
    partition of one leaf per step, in fewer steps than leaves, with expansions that
    were dropped."""
    if device == "numpy-reference":
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    X, signal = _lossguide_data()
    y = (signal > 0).astype(float) if params.get("objective") == "binary:logistic" else signal
    # min_data_in_leaf=1, no split penalty: the leaf cap, not the leaf size, ends the trees
    full = {"device": "cpu", "grow_policy": "lossguide", "seed": 3, "min_data_in_leaf": 1,
            "split_penalty": 0, **params}  # fmt: skip
    steps, partitions, splits = [], [], []
    pop = grower_module.LookaheadLossguideDriver.pop
    grow = grower_module.TreeGrower.grow

    def recording_pop(driver, n_leaves):
        batch, dropped = pop(driver, n_leaves)
        if len(batch):
            steps.append(len(batch))
        return batch, dropped

    def recording_grow(grower):
        grown = grow(grower)
        partitions.append(np.array(grown.sample_indices))
        splits.append(grown.tree.n_leaves - 1)
        return grown

    assert not CpuBackend.expands_lossguide_ahead and not NumpyBackend.expands_lossguide_ahead
    monkeypatch.setattr(grower_module.LookaheadLossguideDriver, "pop", recording_pop)
    monkeypatch.setattr(grower_module.TreeGrower, "grow", recording_grow)
    monkeypatch.setattr(Backend, "expands_lossguide_ahead", True)
    ahead = gpuboost.train(full, Dataset(X, label=y), 4).save_raw()
    ahead_partitions, partitions[:] = list(partitions), []
    if sum(splits) > 2 * len(splits):
        assert len(steps) < sum(splits), "no step expanded several leaves"
        if params["max_leaves"] and not params["max_depth"]:  # the leaf cap binds
            assert sum(steps) > sum(splits), "no expansion ahead was dropped"
    steps.clear()
    monkeypatch.setattr(Backend, "expands_lossguide_ahead", False)
    monkeypatch.setattr(grower_module, "LOSSGUIDE_MAX_BATCH", 1)
    one_by_one = gpuboost.train(full, Dataset(X, label=y), 4).save_raw()
    assert not steps
    assert ahead == one_by_one
    assert len(partitions) == len(ahead_partitions)
    for rows, one_leaf_rows in zip(ahead_partitions, partitions):
        np.testing.assert_array_equal(rows, one_leaf_rows)


@pytest.mark.parametrize("device", ["cpu", "numpy"])
def test_final_splits_route_their_rows_instead_of_partitioning(monkeypatch, device):
    """Depthwise, the splits whose children are both leaves leave their rows where they
    are and the margins are updated by routing them (Backend.add_split_leaf_values): the
    same model bytes and the same evaluation log as partitioning every split."""
    if device == "numpy":
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (X[:, 0] + np.nan_to_num(X[:, 1]) * X[:, 2] > 0).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 3, "device": "cpu", "verbosity": 0}
    calls = []
    routed = Backend.add_split_leaf_values

    def counting(self, *args):
        calls.append(len(args[4]))
        return routed(self, *args)

    def fit():
        dtrain = gpuboost.Dataset(X, label=y)
        log = {}
        booster = gpuboost.train(params, dtrain, 4, evals=[(dtrain, "train")], evals_result=log)
        return booster.save_raw(), log

    monkeypatch.setattr(Backend, "add_split_leaf_values", counting)
    if device == "cpu":
        monkeypatch.setattr(CpuBackend, "add_split_leaf_values", counting)
    deferred = fit()
    assert calls and all(n > 0 for n in calls)  # every tree routed some splits' rows
    monkeypatch.setattr(HistogramSplitter, "defers_final_partition", False)
    calls.clear()
    assert fit() == deferred
    assert not calls


@pytest.mark.parametrize("seed", range(6))
def test_lossguide_expanded_ahead_breaks_ties_as_one_leaf_per_step(seed, monkeypatch):
    """Mirrored halves (feature 0 tells them apart, labels negated: the gradients of one
    half are those of the other negated) give every node of one half the gains of its
    mirror node, exactly: with a leaf cap, which tied leaf is expanded first decides the
    tree, and the replay's ties (lowest one-leaf id) must be those of one leaf per step."""
    rng = np.random.default_rng(seed)
    n_half, n_features = int(rng.integers(100, 400)), int(rng.integers(1, 5))
    X_half = rng.integers(0, int(rng.integers(3, 9)), size=(n_half, n_features)).astype(float)
    y_half = rng.normal(size=n_half) + 0.5
    X = np.column_stack([np.repeat([0.0, 1.0], n_half), np.vstack([X_half, X_half])])
    y = np.concatenate([y_half, -y_half])
    params = {
        "device": "cpu",
        "grow_policy": "lossguide",
        "max_leaves": int(rng.integers(6, 24)),
        "max_depth": int(rng.choice([0, 0, 5])),
        "min_child_weight": 0.0,
        "base_score": 0.0,
        "max_bin": 16,
    }
    trees = []
    grow = grower_module.TreeGrower.grow

    def recording_grow(grower):
        grown = grow(grower)
        trees.append(grown.tree)
        return grown

    monkeypatch.setattr(grower_module.TreeGrower, "grow", recording_grow)
    monkeypatch.setattr(Backend, "expands_lossguide_ahead", True)
    ahead = gpuboost.train(params, Dataset(X, label=y, max_bin=16), 1).save_raw()
    root = trees[0]  # splits the halves apart: its children tie, and so do their mirrors
    assert root.feature[0] == 0 and root.count[1] == root.count[2] == n_half
    monkeypatch.setattr(Backend, "expands_lossguide_ahead", False)
    monkeypatch.setattr(grower_module, "LOSSGUIDE_MAX_BATCH", 1)
    assert ahead == gpuboost.train(params, Dataset(X, label=y, max_bin=16), 1).save_raw()


# ---------------------------------------------------------------------------
# Small levels grown by the backend in one call (gpuboost.backends.cpu.row_levels)
# ---------------------------------------------------------------------------


#: The ways the levels are handed to the backend in the tests below.
LEVEL_VARIANTS = ["below the root", "mixed levels", "one level per call", "every node large"]


def _small_levels_fit(X, y, params, rounds=6):
    """Model bytes, training margins and the row partitions of every tree."""
    partitions = []
    original_grow = TreeGrower.grow

    def recording_grow(self):
        grown = original_grow(self)
        partitions.append(np.array(grown.sample_indices))
        return grown

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TreeGrower, "grow", recording_grow)
        dtrain = Dataset(X, label=y)
        booster = gpuboost.train({"device": "cpu", **params}, dtrain, rounds)
    return booster.save_raw(), booster.predict(dtrain, output_margin=True), partitions


#: Rows of the tests of levels grown in one call: every node small, or large ones too.
LEVEL_ROWS = [700, 6000]

#: The numeric test's parameters.
SMALL_LEVEL_PARAMS = [
    {"objective": "reg:squarederror"},
    {"objective": "binary:logistic", "max_depth": 9, "min_child_weight": 0.5},
    {"objective": "reg:absoluteerror", "reg_alpha": 0.5, "max_delta_step": 0.7, "gamma": 0.1},
    {"objective": "reg:squarederror", "min_data_in_leaf": 7, "max_depth": 12},
    {
        "objective": "binary:logistic",
        "colsample_bytree": 0.5,
        "subsample": 0.7,
        "max_bin": 63,
        "max_depth": 12,
    },
    {"objective": "multi:softprob", "num_class": 3, "max_depth": 5},
]


@pytest.mark.parametrize(
    "n_rows, params, variant", crossed(LEVEL_ROWS, SMALL_LEVEL_PARAMS, LEVEL_VARIANTS)
)
def test_small_levels_grown_in_one_call_are_the_loops(monkeypatch, n_rows, params, variant):
    """The compiled CPU backend grows the subtrees of small nodes in one call (in these
    small trees every node below the root; or, with a smaller size, the small nodes of
    levels that also have larger ones, renumbered afterwards); the grower's level loop
    is its definition: the same model bytes, training margins (deferred final splits
    routed) and row partitions, also when the node table runs out of room after every
    level, and when every child counts as large (histograms over all threads, siblings
    by subtraction, row_levels.LARGE_ROWS_PER_BIN)."""
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, 9))
    X[rng.random(X.shape) < 0.05] = np.nan
    score = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    if params["objective"] == "binary:logistic":
        y = (score + rng.normal(size=n_rows) > 0).astype(float)
    elif params["objective"] == "multi:softprob":
        y = np.digitize(score, [-0.5, 0.5]).astype(float)
    else:
        y = score + 0.3 * rng.normal(size=n_rows)
    _assert_variant_is_the_loops(monkeypatch, X, y, params, variant, "grows_levels_from_rows")


def _assert_variant_is_the_loops(monkeypatch, X, y, params, variant, backend_switch):
    """:func:`_assert_levels_are_the_loops` in one of :data:`LEVEL_VARIANTS`, the loop
    taken by turning ``CpuBackend.<backend_switch>`` off."""
    if variant == "one level per call":
        monkeypatch.setattr(TreeGrower, "_most_new_nodes", lambda self, parents: 2 * len(parents))
    if variant == "every node large":
        monkeypatch.setattr(row_levels, "LARGE_ROWS_PER_BIN", 0)
    _assert_levels_are_the_loops(
        monkeypatch,
        X,
        y,
        params,
        HistogramSplitter if variant == "mixed levels" else None,
        lambda: monkeypatch.setattr(CpuBackend, backend_switch, False),
    )


def _assert_levels_are_the_loops(monkeypatch, X, y, params, mixed, take_the_loop):
    """Train with the levels grown in splitter calls (with ``mixed``, a splitter class:
    only nodes of at most a twentieth of the rows, the larger ones by the loop, then
    renumbered), then again after ``take_the_loop()``: the same model bytes, training
    margins and row partitions, and calls made only the first time."""
    calls, renumbered = [], []
    original = TreeGrower._grow_levels_from_rows

    def counting(self, parents, **kwargs):
        calls.append(len(parents))
        return original(self, parents, **kwargs)

    monkeypatch.setattr(TreeGrower, "_grow_levels_from_rows", counting)
    if mixed is not None:
        numbering = TreeGrower._number_by_levels
        monkeypatch.setattr(
            mixed, "levels_from_rows_max_rows", lambda self, n_samples: len(X) // 20
        )
        monkeypatch.setattr(
            TreeGrower, "_number_by_levels", lambda self: renumbered.append(numbering(self))
        )
    model, margins, partitions = _small_levels_fit(X, y, params)
    assert calls, "no level was grown in one call"
    assert bool(renumbered) == (mixed is not None)
    take_the_loop()
    calls.clear()
    loop_model, loop_margins, loop_partitions = _small_levels_fit(X, y, params)
    assert not calls
    assert model == loop_model
    np.testing.assert_array_equal(margins, loop_margins)
    assert len(partitions) == len(loop_partitions)
    for rows, loop_rows in zip(partitions, loop_partitions):
        np.testing.assert_array_equal(rows, loop_rows)


@pytest.mark.parametrize(
    "params",
    [
        {"grow_policy": "lossguide", "max_leaves": 8},
        {"max_leaves": 8},
        {"monotone_constraints": [1, 0, 0]},
        {"interaction_constraints": [[0, 1], [2]]},
        {"colsample_bylevel": 0.6},
        {"colsample_bynode": 0.6},
        {"device": "numpy"},
    ],
)
def test_small_levels_take_the_loop_where_the_backend_does_not_grow_them(monkeypatch, params):
    """Leaf budgets, constraints and features drawn per level or node need the grower's
    loop (as does the reference backend, categorical features included)."""
    calls = []
    monkeypatch.setattr(
        TreeGrower,
        "_grow_levels_from_rows",
        lambda self, parents, **kwargs: calls.append(parents),
    )
    reference = params.get("device") == "numpy"
    if reference:
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
        params = {}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = X[:, 0] + X[:, 1] * X[:, 2]
    gpuboost.train({"device": "cpu", "max_depth": 4, **params}, Dataset(X, label=y), 2)
    assert not calls
    if reference:
        codes = X.copy()
        codes[:, 0] = rng.integers(0, 5, len(y))
        gpuboost.train({"device": "cpu"}, Dataset(codes, label=y, categorical_features=[0]), 2)
        assert not calls


def _categorical_levels_data(n_rows, objective):
    """A frame of a 40-level column (missing values, rare levels), a 3-level and a
    6-level one and numeric columns (missing values), and a label."""
    rng = np.random.default_rng(n_rows + 1)
    many = rng.choice(40, n_rows, p=rng.dirichlet(np.full(40, 0.7)))
    three, six = rng.integers(0, 3, n_rows), rng.integers(0, 6, n_rows)
    numeric = rng.normal(size=(n_rows, 3))
    numeric[rng.random(numeric.shape) < 0.05] = np.nan
    score = (
        rng.normal(size=40)[many] * np.where(np.nan_to_num(numeric[:, 1]) > 0, 1.0, -0.5)
        + rng.normal(size=6)[six]
        + 0.5 * (three == 2)
        + np.nan_to_num(numeric[:, 0])
    )
    frame = pd.DataFrame(
        {
            "many": pd.Categorical.from_codes(
                np.where(rng.random(n_rows) < 0.05, -1, many), [f"m{i}" for i in range(40)]
            ),
            "x0": numeric[:, 0],
            "three": pd.Categorical.from_codes(three, ["a", "b", "c"]),
            "x1": numeric[:, 1],
            "six": pd.Categorical.from_codes(six, [f"s{i}" for i in range(6)]),
            "x2": numeric[:, 2],
        }
    )
    if objective == "binary:logistic":
        return frame, (score + rng.normal(size=n_rows) > 0).astype(float)
    if objective == "multi:softprob":
        return frame, np.digitize(score, [-0.5, 0.5]).astype(float)
    return frame, score + 0.3 * rng.normal(size=n_rows)


#: The categorical test's parameters.
CATEGORICAL_LEVEL_PARAMS = [
    {"objective": "reg:squarederror"},  # cat_smooth estimated per tree
    {"objective": "binary:logistic", "max_depth": 8},
    {
        "objective": "reg:squarederror",
        "cat_smooth_estimate": False,
        "cat_smooth": 2,
        "min_data_per_group": 3,
        "max_cat_threshold": 8,
        "max_cat_to_onehot": 1,
        "min_data_in_leaf": 7,
        "gamma": 0.05,
        "cat_penalty_factor": 0.3,
    },
    {"objective": "reg:squarederror", "max_cat_to_onehot": 64, "max_depth": 5},
    {
        "objective": "binary:logistic",
        "colsample_bytree": 0.6,
        "subsample": 0.7,
        "max_bin": 31,
        "max_depth": 10,
    },
    {"objective": "multi:softprob", "num_class": 3, "max_depth": 4},
]


@pytest.mark.parametrize(
    "n_rows, params, variant", crossed(LEVEL_ROWS, CATEGORICAL_LEVEL_PARAMS, LEVEL_VARIANTS)
)
def test_categorical_levels_grown_in_one_call_are_the_loops(monkeypatch, n_rows, params, variant):
    """With categorical features the compiled CPU backend grows the levels below the
    root in one call too (the root scanned by the loop, which estimates the tree's
    cat_smooth): many-vs-many and one-vs-rest splits from the large nodes' histograms
    and the small nodes' scratch ones, categorical partitions (never deferred), the
    better of the numeric and categorical splits; the loop's model bytes, margins and
    row partitions, in every variant of the numeric test above."""
    X, y = _categorical_levels_data(n_rows, params["objective"])
    _assert_variant_is_the_loops(
        monkeypatch, X, y, params, variant, "grows_categorical_levels_from_rows"
    )


_VECTOR = {"multi_strategy": "multi_output_tree"}


#: The vector-leaf test's parameters and variants.
VECTOR_LEVEL_PARAMS = [
    {"objective": "reg:squarederror"},
    {"objective": "binary:logistic", "max_depth": 8, "min_child_weight": 0.5},
    {"reg_alpha": 0.5, "max_delta_step": 0.7, "gamma": 0.1, "min_data_in_leaf": 7},
    {"colsample_bytree": 0.5, "subsample": 0.7, "max_bin": 63, "max_depth": 10},
    {"objective": "multi:softprob", "num_class": 3, "max_depth": 5},
]
VECTOR_LEVEL_VARIANTS = ["whole trees", "mixed levels", "node table full", "level buffers full"]


@pytest.mark.parametrize(
    "n_rows, params, variant", crossed(LEVEL_ROWS, VECTOR_LEVEL_PARAMS, VECTOR_LEVEL_VARIANTS)
)
def test_vector_levels_grown_in_one_call_are_the_loops(monkeypatch, n_rows, params, variant):
    """The compiled CPU backend grows a vector-leaf tree's levels in one call
    (gpuboost.backends.cpu.vector_levels: whole trees; or, with a smaller size, the
    small nodes of levels that also have larger ones, renumbered afterwards); the
    grower's level loop is its definition: the same model bytes, training margins and
    row partitions, also when the node table runs out of room after every level, and
    when the level buffers do (the next call builds both children of every parent)."""
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, 7))
    X[rng.random(X.shape) < 0.05] = np.nan
    base = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    noise = rng.normal(size=(n_rows, 3))
    if params.get("objective") == "binary:logistic":  # multi-label
        y = (base[:, None] + noise > 0).astype(float)
    elif params.get("objective") == "multi:softprob":
        y = np.digitize(base, [-0.5, 0.5]).astype(float)
    else:
        y = base[:, None] * [1.0, 0.5, -2.0] + np.nan_to_num(X[:, 3:6]) + 0.3 * noise
    if variant == "node table full":
        monkeypatch.setattr(TreeGrower, "_most_new_nodes", lambda self, parents: 2 * len(parents))
    if variant == "level buffers full":  # two rows a parent: a level or two per call
        monkeypatch.setattr(vector_levels, "LEVEL_BUFFER_BYTES", 0)
    _assert_levels_are_the_loops(
        monkeypatch,
        X,
        y,
        {**_VECTOR, **params},
        None if variant == "whole trees" else MultiOutputSplitter,
        lambda: monkeypatch.setattr(CpuBackend, "grows_vector_levels", lambda self, data: False),
    )


@pytest.mark.parametrize(
    "params",
    [
        {"grow_policy": "lossguide", "max_leaves": 8},
        {"max_leaves": 8},
        {"interaction_constraints": [[0, 1], [2]]},
        {"colsample_bylevel": 0.6},
        {"colsample_bynode": 0.6},
        {"device": "numpy"},
    ],
)
def test_vector_levels_take_the_loop_where_the_backend_does_not_grow_them(monkeypatch, params):
    """Vector-leaf trees with a leaf budget, interaction constraints or features drawn
    per level or node take the grower's loop (as does the reference backend), with the
    same trees as ever."""
    calls = []
    monkeypatch.setattr(
        TreeGrower,
        "_grow_levels_from_rows",
        lambda self, parents, **kwargs: calls.append(parents),
    )
    if params.get("device") == "numpy":
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
        params = {}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = np.column_stack([X[:, 0] + X[:, 1] * X[:, 2], X[:, 2]])
    gpuboost.train({"device": "cpu", "max_depth": 4, **_VECTOR, **params}, Dataset(X, label=y), 2)
    assert not calls


@pytest.mark.parametrize(
    "case",
    ["constant label", "root below the minimum leaf size", "stumps", "one row", "weights"],
)
@pytest.mark.parametrize("targets", [1, 3])
def test_trees_grown_whole_from_the_root_are_the_loops(monkeypatch, case, targets):
    """A small tree is grown whole in the splitter call, its root's sums and split
    included: the loop's model bytes also where the root cannot split (no split found,
    too few rows for two leaves), for stumps, a single row and weighted rows; one-target
    trees and vector-leaf ones."""
    rng = np.random.default_rng(7)
    n_rows = 1 if case == "one row" else 300
    X = rng.normal(size=(n_rows, 4))
    y = np.ones(n_rows) if case == "constant label" else X[:, 0] + 0.1 * rng.normal(size=n_rows)
    params = {"device": "cpu", "max_depth": 1 if case == "stumps" else 5}
    if targets > 1:
        y = np.column_stack([y * (t + 1) for t in range(targets)])
        params.update(_VECTOR)
    if case == "root below the minimum leaf size":
        params["min_data_in_leaf"] = n_rows // 2 + 1
    weight = rng.uniform(0.1, 3.0, size=n_rows) if case == "weights" else None
    calls = []
    original = TreeGrower._grow_levels_from_rows

    def counting(self, parents, **kwargs):
        calls.append(kwargs.get("scan_parents", False))
        return original(self, parents, **kwargs)

    monkeypatch.setattr(TreeGrower, "_grow_levels_from_rows", counting)
    model = gpuboost.train(params, Dataset(X, label=y, weight=weight), 3).save_raw()
    assert calls and all(calls)
    monkeypatch.setattr(CpuBackend, "grows_levels_from_rows", False)
    monkeypatch.setattr(CpuBackend, "grows_vector_levels", lambda self, data: False)
    calls.clear()
    assert model == gpuboost.train(params, Dataset(X, label=y, weight=weight), 3).save_raw()
    assert not calls
