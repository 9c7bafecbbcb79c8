"""Backend-agnostic tree growth: one grower for every splitter and both policies.

The loop (XGBoost's ``UpdateTree``)::

    push the root (histogram, best split)
    while the driver pops a batch of nodes to expand:
        apply their splits: partition their rows, build the smaller children's
        histograms, derive their siblings by subtraction, evaluate every new child
        push the children

:meth:`TreeGrower._expand` is that step (docs/DESIGN.md, "Growth"); a *driver*
(:class:`DepthwiseDriver`, :class:`LossguideDriver`) is the policy and knows
nothing but records and node ids; a *splitter* (gpuboost.tree.splitters) owns
histograms, split search, partition and node values. Only split records and
per-node integer sums reach the host; leaf values are computed on the host from
those exact sums, identically for every backend.

The row partition of a tree, for a node split into ``left`` and ``right``::

    sample_indices   [ .... node's segment [begin, end) ....  ]
                                  |  stable partition
                                  v
                     [ left [begin, begin + n_left) | right [begin + n_left, end) ]

each child keeping increasing row order (docs/DESIGN.md, "Row partition").
"""

import heapq
from dataclasses import dataclass

import numpy as np

from ..core.dtypes import NODE_DTYPE
from .tree import Tree

__all__ = [
    "TreeGrower",
    "GrownTree",
    "GrowthPolicy",
    "DepthwiseDriver",
    "LossguideDriver",
    "DRIVERS",
]


@dataclass(frozen=True)
class GrowthPolicy:
    """Which nodes a tree expands: ``grow_policy``, ``max_depth`` (0: none),
    ``max_leaves`` (0: none)."""

    grow_policy: str = "depthwise"
    max_depth: int = 6
    max_leaves: int = 0

    @classmethod
    def from_params(cls, params):
        """From validated training parameters (gpuboost.params)."""
        return cls(params["grow_policy"], params["max_depth"], params["max_leaves"])


class GrownTree:
    """A finished tree plus the row segments of its leaves.

    Attributes
    ----------
    tree : Tree
    leaf_nodes : ndarray of shape (n_leaves,), int
    leaf_begins, leaf_ends : ndarray of shape (n_leaves,), int
        Each leaf's segment of ``sample_indices``.
    sample_indices : backend array of shape (n_samples,), int32
    node_sums : ndarray of shape (n_nodes, n_sums), int64
        Every node's integer sums (gradient and hessian, or one per class).
    """

    def __init__(self, tree, leaf_nodes, leaf_begins, leaf_ends, sample_indices, node_sums):
        self.tree = tree
        self.leaf_nodes = leaf_nodes
        self.leaf_begins = leaf_begins
        self.leaf_ends = leaf_ends
        self.sample_indices = sample_indices
        self.node_sums = node_sums


class _HistogramRef:
    """Row ``row`` of a batch of node histograms ``array`` (first axis: the node).

    Nodes refer to rows of the batches they were built or derived in, so that a
    level's histograms are gathered, subtracted and scanned as whole batches (a
    few device operations per level, not a few per node).
    """

    __slots__ = ("array", "row")

    def __init__(self, array, row):
        self.array, self.row = array, row


class _Node:
    __slots__ = (
        "id",
        "begin",
        "end",
        "depth",
        "sums",
        "count",
        "record",
        "split",
        "histogram",
        "left",
        "right",
    )

    def __init__(self, node_id, begin, end, depth, sums, count):
        self.id = node_id
        self.begin, self.end, self.depth = begin, end, depth
        self.sums, self.count = sums, count
        self.record = None
        self.split = None
        self.histogram = None
        self.left = self.right = -1

    @property
    def admissible(self):
        """Whether the node has a split to apply."""
        return self.split is not None and self.split.feature >= 0


class DepthwiseDriver:
    """Level by level: every admissible node of a level, in node-id order; if
    ``max_leaves`` would be exceeded, the highest-gain nodes first (ties: lowest id).

    Parameters
    ----------
    max_leaves : int
        0: no limit.
    gain_of : callable (node) -> float
    """

    def __init__(self, max_leaves, gain_of):
        self.max_leaves = max_leaves
        self.gain_of = gain_of
        self.frontier = []

    def push(self, nodes):
        """The next level."""
        self.frontier = list(nodes)

    def pop(self, n_leaves):
        """``(nodes to expand now, nodes that will never be expanded)``."""
        frontier, self.frontier = self.frontier, []
        batch = [node for node in frontier if node.admissible]
        if self.max_leaves:
            budget = self.max_leaves - n_leaves
            if len(batch) > budget:
                best = sorted(batch, key=lambda node: (-self.gain_of(node), node.id))[:budget]
                batch = sorted(best, key=lambda node: node.id)
        chosen = {node.id for node in batch}
        return batch, [node for node in frontier if node.id not in chosen]


class LossguideDriver:
    """Best leaf first (largest gain; ties: lowest node id), one leaf per step.

    Parameters
    ----------
    max_leaves : int
        0: no limit.
    gain_of : callable (node) -> float
    """

    def __init__(self, max_leaves, gain_of):
        self.max_leaves = max_leaves
        self.gain_of = gain_of
        self.heap = []
        self.waiting = {}

    def push(self, nodes):
        """Candidates (the admissible ones wait in the heap)."""
        for node in nodes:
            if node.admissible:
                heapq.heappush(self.heap, (-float(self.gain_of(node)), node.id))
                self.waiting[node.id] = node

    def pop(self, n_leaves):
        """``(nodes to expand now, nodes that will never be expanded)``."""
        if not self.heap or (self.max_leaves and n_leaves >= self.max_leaves):
            dropped, self.waiting, self.heap = list(self.waiting.values()), {}, []
            return [], dropped
        _, node_id = heapq.heappop(self.heap)
        return [self.waiting.pop(node_id)], []


#: ``grow_policy`` -> driver class.
DRIVERS = {"depthwise": DepthwiseDriver, "lossguide": LossguideDriver}


class TreeGrower:
    """Grow one tree.

    Parameters
    ----------
    splitter : gpuboost.tree.splitters.Splitter
        How node statistics, splits, partitions and node values are computed.
    tree_input : gpuboost.tree.splitters.TreeInput
        This tree's quantized gradients (or class columns), scales, rows and split
        parameters; ``tree_input.sample_indices`` becomes the row partition.
    policy : GrowthPolicy
    feature_sampler : gpuboost.tree.feature_sampler.FeatureSampler
    timer : gpuboost.core.profiling.PhaseTimer
    """

    def __init__(self, splitter, tree_input, policy, feature_sampler, timer):
        self.splitter = splitter
        self.tree_input = tree_input
        self.policy = policy
        self.feature_sampler = feature_sampler
        self.timer = timer
        self.nodes = []
        self.n_leaves = 0

    @property
    def sample_indices(self):
        return self.tree_input.sample_indices

    # ---- helpers ------------------------------------------------------------
    def _can_split(self, node):
        return (
            self.policy.max_depth == 0 or node.depth < self.policy.max_depth
        ) and self.splitter.can_split(self.tree_input, node.sums, node.count)

    def _new_node(self, begin, end, depth, sums, count):
        node = _Node(len(self.nodes), begin, end, depth, sums, count)
        self.nodes.append(node)
        return node

    def _gain(self, node):
        return self.splitter.record_gain(self.tree_input, node.record)

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
                return (
                    array
                    if len(rows) == int(array.shape[0])
                    else array[rows[0] : rows[0] + len(rows)]
                )
            return array[np.asarray(rows, dtype=np.int64)]
        return self.splitter.stack_histograms(
            [reference.array[reference.row : reference.row + 1] for reference in references]
        )

    def _find_splits(self, nodes):
        """Set ``node.record`` and ``node.split`` for every node (all have histograms).

        The feature masks are drawn in the order of ``nodes`` (the random stream
        does not depend on how histograms are batched); the scan sees the nodes
        in the order of their histogram rows, so that a whole batch needs no gather.
        """
        if not nodes:
            return
        with self.timer.phase("split"):
            mask = self.feature_sampler.mask([node.depth for node in nodes])
        order = sorted(
            range(len(nodes)), key=lambda i: (id(nodes[i].histogram.array), nodes[i].histogram.row)
        )
        ordered = [nodes[i] for i in order]
        histograms = self._gather_histograms([node.histogram for node in ordered])
        with self.timer.phase("split"):
            records = self.splitter.find_best_splits(
                self.tree_input, ordered, histograms, None if mask is None else mask[order]
            )
        for node, record in zip(ordered, records):
            node.record = record
            node.split = self.splitter.split_of(record)

    def _build(self, nodes):
        """Histograms of ``nodes`` as one batch; returns the batch array."""
        with self.timer.phase("histogram"):
            return self.splitter.build_histograms(self.tree_input, nodes)

    # ---- the shared step ----------------------------------------------------
    def _expand(self, parents):
        """Split ``parents`` (each admissible); return the new children."""
        with self.timer.phase("partition"):
            self.splitter.partition(
                self.tree_input,
                np.array([p.begin for p in parents], dtype=np.int64),
                np.array([p.end for p in parents], dtype=np.int64),
                [p.record for p in parents],
            )
        children = []
        smaller, larger, pairs_needing = [], [], []
        for parent in parents:
            split = parent.split
            n_left = split.left_count
            right_sums = tuple(total - left for total, left in zip(parent.sums, split.left_sums))
            left = self._new_node(
                parent.begin, parent.begin + n_left, parent.depth + 1, split.left_sums, n_left
            )
            right = self._new_node(
                parent.begin + n_left,
                parent.end,
                parent.depth + 1,
                right_sums,
                parent.count - n_left,
            )
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
                    [parent.histogram for parent in pairs_needing]
                )
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

    # ---- the loop -----------------------------------------------------------
    def grow(self):
        """Grow the tree; returns a :class:`GrownTree`."""
        n_samples = int(self.sample_indices.shape[0])
        root = _Node(0, 0, n_samples, 0, (), n_samples)
        self.nodes = [root]
        self.n_leaves = 1
        root.histogram = _HistogramRef(self._build([root]), 0)
        self._find_splits([root])
        root.sums = self.splitter.record_sums(root.record)[0]
        if not self._can_split(root):
            root.record = root.split = None
        driver = DRIVERS[self.policy.grow_policy](self.policy.max_leaves, self._gain)
        driver.push([root])
        while True:
            batch, dropped = driver.pop(self.n_leaves)
            for node in dropped:
                node.histogram = None
            if not batch:
                break
            driver.push(self._expand(batch))
        return self._finish()

    # ---- the finished tree --------------------------------------------------
    def _finish(self):
        n_nodes = len(self.nodes)
        sums = np.array([node.sums for node in self.nodes], dtype=np.int64)
        values, cover = self.splitter.node_values(self.tree_input, sums)
        feature = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        threshold_bin = np.zeros(n_nodes, dtype=np.int32)
        threshold = np.zeros(n_nodes, dtype=np.float64)
        default_left = np.zeros(n_nodes, dtype=bool)
        gain = np.zeros(n_nodes, dtype=np.float64)
        left_child = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        right_child = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        for node in self.nodes:
            node.histogram = None
            if node.left < 0:
                continue
            split = node.split
            feature[node.id] = split.feature
            threshold[node.id], threshold_bin[node.id] = self.splitter.split_threshold(
                split.feature, split.bin
            )
            default_left[node.id] = split.default_left
            gain[node.id] = self.splitter.record_gain(self.tree_input, node.record)
            left_child[node.id], right_child[node.id] = node.left, node.right
        tree = Tree(
            {
                "feature": feature,
                "threshold_bin": threshold_bin,
                "threshold": threshold,
                "default_left": default_left,
                "left_child": left_child,
                "right_child": right_child,
                "value": values,
                "gain": gain,
                "cover": cover,
                "count": np.array([n.count for n in self.nodes], dtype=np.int64),
            }
        )
        leaves = [n for n in self.nodes if n.left < 0]
        return GrownTree(
            tree,
            np.array([n.id for n in leaves], dtype=np.int64),
            np.array([n.begin for n in leaves], dtype=np.int64),
            np.array([n.end for n in leaves], dtype=np.int64),
            self.sample_indices,
            sums,
        )
