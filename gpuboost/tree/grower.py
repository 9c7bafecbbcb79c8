"""Backend-agnostic tree growth: depthwise and lossguide.

Both policies share one step, :meth:`TreeGrower._expand` (docs/DESIGN.md,
"Growth"): partition the chosen nodes' rows, build the histogram of each node's
smaller child, derive its sibling by subtraction, and find the best split of
every new child. Only split records and per-node integer sums reach the host;
leaf values are computed on the host from those exact sums, identically for
every backend.
"""
import heapq

import numpy as np

from ..core.dtypes import NODE_DTYPE
from ..core.gain import leaf_weight
from .splitters.hist import HistogramSplitter
from .tree import Tree

__all__ = ["TreeGrower", "GrownTree", "FeatureSampler"]


class FeatureSampler:
    """Column sampling by tree, by level and by node (XGBoost semantics).

    Parameters
    ----------
    n_features : int
    params : dict
        Validated parameters (``colsample_bytree``, ``colsample_bylevel``,
        ``colsample_bynode``).
    rng : numpy.random.Generator
        Host generator for this tree; draws happen in node-expansion order, which
        is deterministic, so both backends draw the same features.
    """

    def __init__(self, n_features, params, rng):
        self.n_features = n_features
        self.by_level = params["colsample_bylevel"]
        self.by_node = params["colsample_bynode"]
        self.rng = rng
        self.tree_features = self._choose(np.arange(n_features), params["colsample_bytree"])
        self.level_features = {}
        self.trivial = (len(self.tree_features) == n_features and self.by_level >= 1.0
                        and self.by_node >= 1.0)

    def _choose(self, features, fraction):
        if fraction >= 1.0:
            return features
        n_chosen = max(1, int(fraction * len(features)))
        return np.sort(self.rng.choice(features, size=n_chosen, replace=False))

    def mask(self, depths):
        """Allowed features per node, shape (n_nodes, n_features) bool, or None (all)."""
        if self.trivial:
            return None
        masks = np.zeros((len(depths), self.n_features), dtype=bool)
        for i, depth in enumerate(depths):
            if depth not in self.level_features:
                self.level_features[depth] = self._choose(self.tree_features, self.by_level)
            masks[i, self._choose(self.level_features[depth], self.by_node)] = True
        return masks


class GrownTree:
    """A finished tree plus the row segments of its leaves.

    Attributes
    ----------
    tree : Tree
    leaf_nodes : ndarray of shape (n_leaves,), int
    leaf_begins, leaf_ends : ndarray of shape (n_leaves,), int
        Each leaf's segment of ``sample_indices``.
    sample_indices : backend array of shape (n_samples,), int32
    """

    def __init__(self, tree, leaf_nodes, leaf_begins, leaf_ends, sample_indices):
        self.tree = tree
        self.leaf_nodes = leaf_nodes
        self.leaf_begins = leaf_begins
        self.leaf_ends = leaf_ends
        self.sample_indices = sample_indices


class _HistogramRef:
    """Row ``row`` of a batch of node histograms ``array`` (n_nodes, n_features, n_bins, 3).

    Nodes refer to rows of the batches they were built or derived in, so that a
    level's histograms are gathered, subtracted and scanned as whole batches (a
    few device operations per level, not a few per node).
    """

    __slots__ = ("array", "row")

    def __init__(self, array, row):
        self.array, self.row = array, row


class _Node:
    __slots__ = ("id", "begin", "end", "depth", "sum_gradients", "sum_hessians", "count",
                 "record", "histogram", "left", "right")

    def __init__(self, node_id, begin, end, depth, sums):
        self.id = node_id
        self.begin, self.end, self.depth = begin, end, depth
        self.sum_gradients, self.sum_hessians, self.count = (int(v) for v in sums)
        self.record = None
        self.histogram = None
        self.left = self.right = -1


class TreeGrower:
    """Grow one tree from quantized gradients.

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    data : DeviceData
        The training data as the backend holds it.
    quantized_gradients, quantized_hessians : backend arrays of shape (n_rows,), int32
    scale_gradients, scale_hessians : float
    sample_indices : backend array of shape (n_samples,), int32
        Rows used for this tree (modified in place: it becomes the row partition).
    params : dict
        Validated parameters.
    split_params : gpuboost.split.SplitParams
    feature_sampler : FeatureSampler
    thresholds : callable (feature, bin) -> float
        Raw threshold of a binned split (``BinMapper.threshold_for_bin``).
    timer : gpuboost._profiling.PhaseTimer
    splitter : splitter, optional
        How node statistics, splits and partitions are computed (gpuboost.splitter);
        default: a :class:`~gpuboost.splitter.HistogramSplitter` on ``data`` and
        ``thresholds``.
    """

    def __init__(self, backend, data, quantized_gradients, quantized_hessians, scale_gradients,
                 scale_hessians, sample_indices, params, split_params, feature_sampler,
                 thresholds, timer, splitter=None):
        self.backend = backend
        self.data = data
        self.quantized_gradients = quantized_gradients
        self.quantized_hessians = quantized_hessians
        self.scale_gradients = scale_gradients
        self.scale_hessians = scale_hessians
        self.sample_indices = sample_indices
        self.max_depth = params["max_depth"]
        self.max_leaves = params["max_leaves"]
        self.grow_policy = params["grow_policy"]
        self.learning_rate = params["learning_rate"]
        self.split_params = split_params
        self.feature_sampler = feature_sampler
        self.thresholds = thresholds
        self.splitter = splitter if splitter is not None else \
            HistogramSplitter(backend, data, thresholds)
        self.timer = timer
        self.nodes = []
        self.n_leaves = 0

    # ---- helpers ------------------------------------------------------------
    def _can_split(self, node):
        params = self.split_params
        return ((self.max_depth == 0 or node.depth < self.max_depth)
                and node.count >= 2 * params.min_data_in_leaf
                and node.sum_hessians / self.scale_hessians >= 2 * params.min_child_weight)

    def _new_node(self, begin, end, depth, sums):
        node = _Node(len(self.nodes), begin, end, depth, sums)
        self.nodes.append(node)
        return node

    def _gather_histograms(self, references):
        """One batch array holding the referenced histogram rows, in order.

        A view of their batch when the rows are consecutive in it (no device
        operation); one gather when they share a batch; one concatenation otherwise.
        """
        arrays = {id(reference.array) for reference in references}
        if len(arrays) == 1:
            array = references[0].array
            rows = [reference.row for reference in references]
            if rows == list(range(rows[0], rows[0] + len(rows))):
                return array if len(rows) == int(array.shape[0]) else \
                    array[rows[0]:rows[0] + len(rows)]
            return array[np.asarray(rows, dtype=np.int64)]
        return self.splitter.stack_histograms(
            [reference.array[reference.row:reference.row + 1] for reference in references])

    def _find_splits(self, nodes):
        """Set ``node.record`` for every node (all have histograms).

        The feature masks are drawn in the order of ``nodes`` (the random stream
        does not depend on how histograms are batched); the scan sees the nodes
        in the order of their histogram rows, so that a whole batch needs no gather.
        """
        if not nodes:
            return
        with self.timer.phase("split"):
            mask = self.feature_sampler.mask([node.depth for node in nodes])
        order = sorted(range(len(nodes)), key=lambda i: (id(nodes[i].histogram.array),
                                                         nodes[i].histogram.row))
        ordered = [nodes[i] for i in order]
        histograms = self._gather_histograms([node.histogram for node in ordered])
        with self.timer.phase("split"):
            records = self.splitter.find_best_splits(
                self, ordered, histograms, None if mask is None else mask[order])
        for node, record in zip(ordered, records):
            node.record = record

    def _build(self, nodes):
        """Histograms of ``nodes`` as one batch; returns the batch array."""
        with self.timer.phase("histogram"):
            return self.splitter.build_histograms(self, nodes)

    # ---- the shared step ----------------------------------------------------
    def _expand(self, parents):
        """Split ``parents`` (each with an admissible record); return the new children."""
        records = [p.record for p in parents]
        with self.timer.phase("partition"):
            self.splitter.partition(self, np.array([p.begin for p in parents], dtype=np.int64),
                                    np.array([p.end for p in parents], dtype=np.int64), records)
        children = []
        smaller, larger, pairs_needing = [], [], []
        for parent, record in zip(parents, records):
            n_left = int(record["left_count"])
            left_sums = (int(record["left_sum_gradients"]), int(record["left_sum_hessians"]),
                         n_left)
            right_sums = (parent.sum_gradients - left_sums[0], parent.sum_hessians - left_sums[1],
                          parent.count - n_left)
            left = self._new_node(parent.begin, parent.begin + n_left, parent.depth + 1, left_sums)
            right = self._new_node(parent.begin + n_left, parent.end, parent.depth + 1, right_sums)
            parent.left, parent.right = left.id, right.id
            self.n_leaves += 1
            children += [left, right]
            if self._can_split(left) or self._can_split(right):
                small, large = (left, right) if left.count <= right.count else (right, left)
                smaller.append(small)
                larger.append(large)
                pairs_needing.append(parent)
            else:
                parent.histogram = None
        if smaller:
            built = self._build(smaller)
            with self.timer.phase("histogram"):
                # The larger siblings by subtraction, all pairs at once; then one
                # batch [smaller..., larger...] for the split scan.
                parents_histograms = self._gather_histograms(
                    [parent.histogram for parent in pairs_needing])
                larger_histograms = self.splitter.subtract_histograms(parents_histograms, built)
                level = self.splitter.stack_histograms([built, larger_histograms])
                n_pairs = len(smaller)
                for i, (small, large, parent) in enumerate(zip(smaller, larger, pairs_needing)):
                    small.histogram = _HistogramRef(level, i)
                    large.histogram = _HistogramRef(level, n_pairs + i)
                    parent.histogram = None
        splittable = [c for c in children if c.histogram is not None and self._can_split(c)]
        self._find_splits(splittable)
        for child in children:
            if child not in splittable:
                child.histogram = None
        return children

    # ---- policies -----------------------------------------------------------
    def grow(self):
        """Grow the tree; returns a :class:`GrownTree`."""
        n_samples = int(self.sample_indices.shape[0])
        root = _Node(0, 0, n_samples, 0, (0, 0, n_samples))
        self.nodes = [root]
        self.n_leaves = 1
        root.histogram = _HistogramRef(self._build([root]), 0)
        self._find_splits([root])
        root.sum_gradients = int(root.record["sum_gradients"])
        root.sum_hessians = int(root.record["sum_hessians"])
        if not self._can_split(root):
            root.record = None
        if self.grow_policy == "depthwise":
            self._grow_depthwise(root)
        else:
            self._grow_lossguide(root)
        return self._finish()

    def admissible(self, node):
        return node.record is not None and node.record["feature"] >= 0

    def _grow_depthwise(self, root):
        frontier = [root]
        while frontier:
            candidates = [n for n in frontier if self.admissible(n)]
            if self.max_leaves:
                budget = self.max_leaves - self.n_leaves
                if len(candidates) > budget:
                    best = sorted(candidates, key=lambda n: (-n.record["gain"], n.id))[:budget]
                    candidates = sorted(best, key=lambda n: n.id)
            for node in frontier:
                if node not in candidates:
                    node.histogram = None
            if not candidates:
                break
            frontier = self._expand(candidates)

    def _grow_lossguide(self, root):
        heap = []

        def push(node):
            if self.admissible(node):
                heapq.heappush(heap, (-float(node.record["gain"]), node.id))

        push(root)
        while heap and (not self.max_leaves or self.n_leaves < self.max_leaves):
            _, node_id = heapq.heappop(heap)
            for child in self._expand([self.nodes[node_id]]):
                push(child)
        for node in self.nodes:
            node.histogram = None

    # ---- the finished tree --------------------------------------------------
    def _finish(self):
        n_nodes = len(self.nodes)
        sum_g = np.array([n.sum_gradients for n in self.nodes], dtype=np.float64)
        sum_h = np.array([n.sum_hessians for n in self.nodes], dtype=np.float64)
        gradients = sum_g / self.scale_gradients
        hessians = sum_h / self.scale_hessians
        values = self.learning_rate * leaf_weight(gradients, hessians, self.split_params)
        feature = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        threshold_bin = np.zeros(n_nodes, dtype=np.int32)
        threshold = np.zeros(n_nodes, dtype=np.float64)
        default_left = np.zeros(n_nodes, dtype=bool)
        gain = np.zeros(n_nodes, dtype=np.float64)
        left_child = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        right_child = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        for node in self.nodes:
            if node.left < 0:
                continue
            record = node.record
            feature[node.id] = record["feature"]
            threshold[node.id], threshold_bin[node.id] = self.splitter.split_threshold(
                int(record["feature"]), int(record["bin"]))
            default_left[node.id] = record["default_left"]
            gain[node.id] = record["gain"]
            left_child[node.id], right_child[node.id] = node.left, node.right
        tree = Tree({
            "feature": feature, "threshold_bin": threshold_bin, "threshold": threshold,
            "default_left": default_left, "left_child": left_child, "right_child": right_child,
            "value": values, "gain": gain, "cover": hessians,
            "count": np.array([n.count for n in self.nodes], dtype=np.int64)})
        leaves = [n for n in self.nodes if n.left < 0]
        return GrownTree(tree, np.array([n.id for n in leaves], dtype=np.int64),
                         np.array([n.begin for n in leaves], dtype=np.int64),
                         np.array([n.end for n in leaves], dtype=np.int64), self.sample_indices)
