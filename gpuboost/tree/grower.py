"""Backend-agnostic tree growth: one grower for every splitter and both policies.

The loop (XGBoost's ``UpdateTree``)::

    push the root (histogram, best split)
    while the driver pops a batch of nodes to expand:
        apply their splits: partition their rows, build the smaller children's
        histograms, derive their siblings by subtraction, evaluate every new child
        push the children

:meth:`TreeGrower._expand` is that step (docs/DESIGN.md, "Growth"); a *driver*
(:class:`DepthwiseDriver`, :class:`LossguideDriver`) is the policy and knows
nothing but node ids and gains; a *splitter* (gpuboost.tree.splitters) owns
histograms, split search, partition and node values. Only split records and
per-node integer sums reach the host; leaf values are computed on the host from
those exact sums, identically for every backend.

Nodes are rows of a :class:`NodeTable` (arrays indexed by node id), and every step
works on whole batches of nodes with array operations: the host work of a level does
not grow with its number of nodes (a few operations on arrays of that length), and a
batch is one call of each backend primitive.

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

from ..core.categorical import BITSET_DTYPE, SPLIT_SET_WORDS
from ..core.dtypes import NODE_DTYPE
from .tree import Tree

__all__ = [
    "TreeGrower",
    "GrownTree",
    "GrowthPolicy",
    "NodeTable",
    "DepthwiseDriver",
    "LossguideDriver",
    "DRIVERS",
]

#: Nodes a NodeTable makes room for at first (it doubles when full).
_INITIAL_NODE_CAPACITY = 64
#: ``NodeTable.histogram_batch`` of a node without a histogram.
NO_HISTOGRAM = -1


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


class NodeTable:
    """The nodes of a growing tree as host arrays, indexed by node id.

    Every per-node quantity is a column, so that a batch of nodes is created, split
    and evaluated with array operations, whatever its size (no Python object per node).

    Parameters
    ----------
    n_sums : int
        Integer sums per node (2: gradient and hessian; or one per class).

    Attributes
    ----------
    size : int
        Number of nodes; the columns below are valid up to ``size``.
    begin, end : ndarray of int64
        The node's segment of the row partition.
    depth, count : ndarray of int64
    sums : ndarray of shape (capacity, n_sums), int64
    left, right : ndarray of int64
        Children ids; -1 for a leaf.
    feature, bin, default_left, gain, left_sums, left_count
        The node's best split (:class:`~gpuboost.tree.splitters.SplitTable`), feature
        -1 when it has none to apply (not evaluated, or no admissible split).
    histogram_batch, histogram_row : ndarray of int64
        Where the node's histogram is: row ``histogram_row`` of the grower's batch
        ``histogram_batch`` (:data:`NO_HISTOGRAM` when it has none).
    """

    _INT_COLUMNS = (
        "begin",
        "end",
        "depth",
        "count",
        "left",
        "right",
        "feature",
        "bin",
        "left_count",
        "histogram_batch",
        "histogram_row",
    )

    def __init__(self, n_sums):
        self.size = 0
        self.n_sums = n_sums
        capacity = _INITIAL_NODE_CAPACITY
        for name in self._INT_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.int64))
        self.default_left = np.zeros(capacity, dtype=bool)
        self.gain = np.zeros(capacity, dtype=np.float64)
        self.sums = np.zeros((capacity, n_sums), dtype=np.int64)
        self.left_sums = np.zeros((capacity, n_sums), dtype=np.int64)
        #: Categorical splits: the bins going left (zero words: not categorical).
        self.left_sets = np.zeros((capacity, SPLIT_SET_WORDS), dtype=BITSET_DTYPE)

    def _reserve(self, size):
        capacity = len(self.begin)
        if size <= capacity:
            return
        while capacity < size:
            capacity *= 2
        for name in (*self._INT_COLUMNS, "default_left", "gain", "sums", "left_sums", "left_sets"):
            old = getattr(self, name)
            new = np.zeros((capacity,) + old.shape[1:], dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def add(self, begin, end, depth, sums, count):
        """Append nodes (arrays of one length); returns their ids."""
        n_new = len(begin)
        ids = np.arange(self.size, self.size + n_new, dtype=np.int64)
        self._reserve(self.size + n_new)
        self.size += n_new
        self.begin[ids], self.end[ids], self.depth[ids] = begin, end, depth
        self.sums[ids], self.count[ids] = sums, count
        self.left[ids] = self.right[ids] = -1
        self.feature[ids] = self.bin[ids] = -1
        self.left_sets[ids] = 0
        self.histogram_batch[ids] = NO_HISTOGRAM
        return ids

    def add_children(self, parents, middles, left_sums, left_counts):
        """Append the two children of each of ``parents`` (left then right, pair by pair)
        split at positions ``middles`` with the left children's sums and counts; returns
        their ids."""
        n_new = 2 * len(parents)
        ids = np.arange(self.size, self.size + n_new, dtype=np.int64)
        self._reserve(self.size + n_new)
        self.size += n_new
        lefts, rights = ids[0::2], ids[1::2]
        self.begin[lefts], self.end[lefts] = self.begin[parents], middles
        self.begin[rights], self.end[rights] = middles, self.end[parents]
        self.depth[ids] = np.repeat(self.depth[parents] + 1, 2)
        self.sums[lefts], self.count[lefts] = left_sums, left_counts
        self.sums[rights] = self.sums[parents] - left_sums
        self.count[rights] = self.count[parents] - left_counts
        self.left[ids] = self.right[ids] = -1
        self.feature[ids] = self.bin[ids] = -1
        self.left_sets[ids] = 0
        self.histogram_batch[ids] = NO_HISTOGRAM
        return ids

    def set_splits(self, ids, table):
        """Record the :class:`~gpuboost.tree.splitters.SplitTable` rows of nodes ``ids``."""
        self.feature[ids] = table.feature
        self.bin[ids] = table.bin
        self.default_left[ids] = table.default_left
        self.gain[ids] = table.gain
        self.left_sums[ids] = table.left_sums
        self.left_count[ids] = table.left_count
        self.left_sets[ids] = 0 if table.left_sets is None else table.left_sets

    def admissible(self, ids):
        """Which of the nodes have a split to apply (bool array)."""
        return self.feature[ids] >= 0


class DepthwiseDriver:
    """Level by level: every admissible node of a level, in node-id order; if
    ``max_leaves`` would be exceeded, the highest-gain nodes first (ties: lowest id).

    Parameters
    ----------
    max_leaves : int
        0: no limit.
    nodes : NodeTable
    """

    def __init__(self, max_leaves, nodes):
        self.max_leaves = max_leaves
        self.nodes = nodes
        self.frontier = np.zeros(0, dtype=np.int64)

    def push(self, ids):
        """The next level (node ids in increasing order)."""
        self.frontier = np.asarray(ids, dtype=np.int64)

    def pop(self, n_leaves):
        """``(ids to expand now, ids that will never be expanded)``."""
        frontier, self.frontier = self.frontier, np.zeros(0, dtype=np.int64)
        chosen = self.nodes.admissible(frontier)
        if self.max_leaves:
            budget = self.max_leaves - n_leaves
            candidates = frontier[chosen]
            if len(candidates) > budget:
                best = np.lexsort((candidates, -self.nodes.gain[candidates]))[:budget]
                chosen = np.isin(frontier, candidates[best])
        return frontier[chosen], frontier[~chosen]


class LossguideDriver:
    """Best leaf first (largest gain; ties: lowest node id), one leaf per step.

    Parameters
    ----------
    max_leaves : int
        0: no limit.
    nodes : NodeTable
    """

    def __init__(self, max_leaves, nodes):
        self.max_leaves = max_leaves
        self.nodes = nodes
        self.heap = []
        self.waiting = set()

    def push(self, ids):
        """Candidates (the admissible ones wait in the heap)."""
        ids = np.asarray(ids, dtype=np.int64)
        ids = ids[self.nodes.admissible(ids)]
        for node, gain in zip(ids.tolist(), self.nodes.gain[ids].tolist()):
            heapq.heappush(self.heap, (-gain, node))
            self.waiting.add(node)

    def pop(self, n_leaves):
        """``(ids to expand now, ids that will never be expanded)``."""
        if not self.heap or (self.max_leaves and n_leaves >= self.max_leaves):
            dropped = np.array(sorted(self.waiting), dtype=np.int64)
            self.waiting, self.heap = set(), []
            return np.zeros(0, dtype=np.int64), dropped
        _, node = heapq.heappop(self.heap)
        self.waiting.discard(node)
        return np.array([node], dtype=np.int64), np.zeros(0, dtype=np.int64)


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

    Attributes
    ----------
    nodes : NodeTable
        The tree's nodes (after :meth:`grow`: the finished tree's).
    """

    def __init__(self, splitter, tree_input, policy, feature_sampler, timer):
        self.splitter = splitter
        self.tree_input = tree_input
        self.policy = policy
        self.feature_sampler = feature_sampler
        self.timer = timer
        self.nodes = None
        self.n_leaves = 0
        #: Histogram batches (backend arrays, first axis the node), the node of each of
        #: their rows, and the number of nodes still referring to each; a batch is
        #: released when none does.
        self._batches = []
        self._batch_nodes = []
        self._batch_users = []

    @property
    def sample_indices(self):
        return self.tree_input.sample_indices

    # ---- helpers ------------------------------------------------------------
    def _can_split(self, ids):
        """Which nodes may be split: depth below ``max_depth`` and sums that allow it."""
        nodes = self.nodes
        allowed = self.splitter.can_split(self.tree_input, nodes.sums[ids], nodes.count[ids])
        if self.policy.max_depth:
            allowed = allowed & (nodes.depth[ids] < self.policy.max_depth)
        return allowed

    def _keep_batch(self, histograms, ids):
        """Register a batch whose row ``i`` is the histogram of node ``ids[i]``."""
        self.nodes.histogram_batch[ids] = len(self._batches)
        self.nodes.histogram_row[ids] = np.arange(len(ids))
        self._batches.append(histograms)
        self._batch_nodes.append(ids)
        self._batch_users.append(len(ids))

    def _release(self, ids):
        """Forget the histograms of nodes ``ids``; free the batches no node uses any more."""
        batches = self.nodes.histogram_batch[ids]
        batches = batches[batches != NO_HISTOGRAM]
        self.nodes.histogram_batch[ids] = NO_HISTOGRAM
        users = np.bincount(batches)
        for batch in np.flatnonzero(users).tolist():
            self._batch_users[batch] -= int(users[batch])
            if self._batch_users[batch] == 0:
                self._batches[batch] = self._batch_nodes[batch] = None

    def _histograms_of(self, ids):
        """``(batch array, rows)`` holding the histograms of ``ids``: their own batch when
        they share one (no copy), else one concatenation."""
        batches = self.nodes.histogram_batch[ids]
        rows = self.nodes.histogram_row[ids]
        if np.all(batches == batches[0]):
            return self._batches[int(batches[0])], rows
        stacked = self.splitter.stack_histograms(
            [self._batches[int(b)][int(r) : int(r) + 1] for b, r in zip(batches, rows)]
        )
        return stacked, np.arange(len(ids))

    def _find_splits(self, ids):
        """Evaluate the nodes ``ids`` (all have histograms, in one batch) and record
        their splits.

        The feature masks are drawn in the order of ``ids`` (node-id order: the random
        stream does not depend on how histograms are batched). The scan sees the nodes
        in the order of their histogram rows, so that a whole batch needs no gather:
        when ``ids`` are not consecutive rows of their batch, the whole batch is scanned
        (the other nodes' results are dropped), which costs less than gathering the rows.
        """
        if not len(ids):
            return
        nodes = self.nodes
        with self.timer.phase("split"):
            mask = self.feature_sampler.mask(nodes.depth[ids].tolist())
            array, rows = self._histograms_of(ids)
            order = np.argsort(rows, kind="stable")
            ordered, rows = ids[order], rows[order]
            first = int(rows[0])
            if np.array_equal(rows, np.arange(first, first + len(rows))):
                scanned, histograms = ordered, array[first : first + len(rows)]
                if mask is not None:
                    mask = mask[order]
                taken = None
            else:
                scanned, histograms = self._batch_nodes[nodes.histogram_batch[ids[0]]], array
                if mask is not None:
                    full = np.ones((len(scanned), mask.shape[1]), dtype=bool)
                    full[rows] = mask[order]
                    mask = full
                taken = rows
            table = self.splitter.find_best_splits(
                self.tree_input, nodes.begin[scanned], nodes.end[scanned], histograms, mask
            )
        nodes.set_splits(ordered, table if taken is None else table.take(taken))

    # ---- the shared step ----------------------------------------------------
    def _expand(self, parents):
        """Split the nodes ``parents`` (each admissible); return the new children's ids."""
        nodes, tree = self.nodes, self.tree_input
        with self.timer.phase("partition"):
            left_sets = nodes.left_sets[parents]
            categorical = {"left_sets": left_sets} if left_sets.any() else {}
            self.splitter.partition(
                tree,
                nodes.begin[parents],
                nodes.end[parents],
                nodes.feature[parents],
                nodes.bin[parents],
                nodes.default_left[parents],
                **categorical,
            )
        # Children ids in pairs, left then right, in the order of the parents.
        n_left = nodes.left_count[parents]
        begin = nodes.begin[parents]
        children = nodes.add_children(parents, begin + n_left, nodes.left_sums[parents], n_left)
        lefts, rights = children[0::2], children[1::2]
        nodes.left[parents], nodes.right[parents] = lefts, rights
        self.n_leaves += len(parents)
        splittable = self._can_split(children)
        pairs = np.flatnonzero(splittable[0::2] | splittable[1::2])
        if len(pairs):
            # The smaller child of each pair built (ties: left), the larger by subtraction.
            left_is_smaller = nodes.count[lefts[pairs]] <= nodes.count[rights[pairs]]
            smaller = np.where(left_is_smaller, lefts[pairs], rights[pairs])
            larger = np.where(left_is_smaller, rights[pairs], lefts[pairs])
            with self.timer.phase("histogram"):
                parent_batch, parent_rows = self._histograms_of(parents[pairs])
                level = self.splitter.build_children_histograms(
                    tree, nodes.begin[smaller], nodes.end[smaller], parent_batch, parent_rows
                )
            self._keep_batch(level, np.concatenate([smaller, larger]))
        self._release(parents)
        with_histogram = nodes.histogram_batch[children] != NO_HISTOGRAM
        self._find_splits(children[with_histogram & splittable])
        self._release(children[~splittable])
        return children

    # ---- the loop -----------------------------------------------------------
    def grow(self):
        """Grow the tree; returns a :class:`GrownTree`."""
        tree = self.tree_input
        n_samples = int(self.sample_indices.shape[0])
        begins, ends = np.array([0], dtype=np.int64), np.array([n_samples], dtype=np.int64)
        with self.timer.phase("histogram"):
            root_histogram = self.splitter.build_histograms(tree, begins, ends)
        with self.timer.phase("split"):
            mask = self.feature_sampler.mask([0])
            table = self.splitter.find_best_splits(tree, begins, ends, root_histogram, mask)
        self.nodes = nodes = NodeTable(table.sums.shape[1])
        root = nodes.add(begins, ends, [0], table.sums, [n_samples])
        nodes.set_splits(root, table)
        self._batches, self._batch_nodes, self._batch_users = [], [], []
        self._keep_batch(root_histogram, root)
        self.n_leaves = 1
        if not self._can_split(root)[0]:
            nodes.feature[root] = -1
        driver = DRIVERS[self.policy.grow_policy](self.policy.max_leaves, nodes)
        driver.push(root)
        while True:
            batch, dropped = driver.pop(self.n_leaves)
            self._release(dropped)
            if not len(batch):
                break
            driver.push(self._expand(batch))
        return self._finish()

    # ---- the finished tree --------------------------------------------------
    def _finish(self):
        nodes = self.nodes
        n_nodes = nodes.size
        self._release(np.arange(n_nodes))
        sums = nodes.sums[:n_nodes].copy()
        values, cover = self.splitter.node_values(self.tree_input, sums)
        internal = np.flatnonzero(nodes.left[:n_nodes] >= 0)
        feature = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        feature[internal] = nodes.feature[internal]
        threshold = np.zeros(n_nodes, dtype=np.float64)
        threshold_bin = np.zeros(n_nodes, dtype=np.int32)
        threshold[internal], threshold_bin[internal] = self.splitter.split_thresholds(
            nodes.feature[internal], nodes.bin[internal]
        )
        default_left = np.zeros(n_nodes, dtype=bool)
        default_left[internal] = nodes.default_left[internal]
        category_sets = {}
        left_sets = nodes.left_sets[:n_nodes].copy()
        left_sets[nodes.left[:n_nodes] < 0] = 0
        if left_sets.any():  # categorical splits: their sets over category codes
            categorical = left_sets.any(axis=1)
            threshold[categorical], threshold_bin[categorical] = 0.0, 0
            offsets, bits = self.splitter.category_sets(feature, left_sets)
            category_sets = {"cat_offsets": offsets, "cat_bits": bits}
        gain = np.zeros(n_nodes, dtype=np.float64)
        gain[internal] = nodes.gain[internal]
        tree = Tree(
            {
                "feature": feature,
                "threshold_bin": threshold_bin,
                "threshold": threshold,
                "default_left": default_left,
                "left_child": nodes.left[:n_nodes],
                "right_child": nodes.right[:n_nodes],
                "value": values,
                "gain": gain,
                "cover": cover,
                "count": nodes.count[:n_nodes],
                **category_sets,
            }
        )
        leaves = np.flatnonzero(nodes.left[:n_nodes] < 0)
        return GrownTree(
            tree,
            leaves,
            nodes.begin[leaves].copy(),
            nodes.end[leaves].copy(),
            self.sample_indices,
            sums,
        )
