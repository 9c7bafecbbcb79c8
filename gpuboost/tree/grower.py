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

from ..core.array import get_array_module
from ..core.categorical import BITSET_DTYPE, SPLIT_SET_WORDS
from ..core.dtypes import NODE_DTYPE, SAMPLE_INDEX_DTYPE
from .constraints import UNBOUNDED, child_weights, children_bounds
from .tree import Tree

__all__ = [
    "TreeGrower",
    "GrownTree",
    "GrowthPolicy",
    "NodeTable",
    "DepthwiseDriver",
    "LossguideDriver",
    "LookaheadLossguideDriver",
    "DRIVERS",
]

#: Nodes a NodeTable makes room for at first (it doubles when full).
_INITIAL_NODE_CAPACITY = 64
#: ``NodeTable.histogram_batch`` of a node without a histogram.
NO_HISTOGRAM = -1
#: Most leaves a lossguide step expands speculatively (:class:`LossguideDriver`).
LOSSGUIDE_MAX_BATCH = 32
#: Most leaves a lossguide step expands ahead (:class:`LookaheadLossguideDriver`).
LOOKAHEAD_MAX_BATCH = 64
_NOTHING = np.zeros(0, dtype=np.int64)
#: Bits of a row id (``SAMPLE_INDEX_DTYPE``, non-negative) in a ``(leaf, row)`` sort key.
_ROW_BITS = 8 * np.dtype(SAMPLE_INDEX_DTYPE).itemsize - 1


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
    node_bounds : ndarray of shape (n_nodes, 2), float64, or None
        Under monotone constraints, every node's weight bounds ``(lower, upper)``
        (before the learning rate): refit leaf values are clipped to them.
    unsplit : dict of ndarrays of shape (n_unsplit,)
        The splits whose rows were never partitioned (``TreeGrower``'s
        ``defer_final_partition``): both children are leaves, so no histogram needed the
        rows in order, and the margin update routes them by the split
        (``Backend.add_split_leaf_values``). Keys ``parents`` (node ids), ``begins``,
        ``ends`` (the parent's segment), ``n_left``, ``features``, ``bins``,
        ``default_left``. Their children are not in ``leaf_nodes``. Empty unless deferred.
    """

    def __init__(
        self,
        tree,
        leaf_nodes,
        leaf_begins,
        leaf_ends,
        sample_indices,
        node_sums,
        node_bounds=None,
        unsplit=None,
    ):
        self.tree = tree
        self.leaf_nodes = leaf_nodes
        self.leaf_begins = leaf_begins
        self.leaf_ends = leaf_ends
        self.sample_indices = sample_indices
        self.node_sums = node_sums
        self.node_bounds = node_bounds
        self.unsplit = unsplit if unsplit is not None else unsplit_splits(None, [])


def unsplit_splits(nodes, parents):
    """:attr:`GrownTree.unsplit` of the nodes ``parents`` of ``nodes`` (a NodeTable)."""
    parents = np.asarray(parents, dtype=np.int64)
    if nodes is None:
        empty = np.zeros(0, dtype=np.int64)
        keys = ("parents", "begins", "ends", "n_left", "features", "bins", "default_left")
        return {key: empty for key in keys}
    return {
        "parents": parents,
        "begins": nodes.begin[parents].copy(),
        "ends": nodes.end[parents].copy(),
        "n_left": nodes.left_count[parents].copy(),
        "features": nodes.feature[parents].copy(),
        "bins": nodes.bin[parents].copy(),
        "default_left": nodes.default_left[parents].copy(),
    }


def most_new_nodes(rows, depths, max_depth):
    """An upper bound of the nodes the subtrees of nodes of ``rows`` rows at ``depths``
    add (at least one level's): two per split, splits fewer than a subtree's rows and
    than its ``2^levels`` below ``max_depth`` (0: no limit)."""
    bound = 2 * np.maximum(rows - 1, 1)
    if max_depth:
        levels = np.clip(max_depth - depths, 1, 62)
        bound = np.minimum(bound, (np.int64(1) << (levels + 1)) - 2)
    return max(int(bound.sum()), 2 * len(rows))


class NodeTable:
    """The nodes of a growing tree as host arrays, indexed by node id.

    Every per-node quantity is a column, so that a batch of nodes is created, split
    and evaluated with array operations, whatever its size (no Python object per node).

    Parameters
    ----------
    n_sums : int
        Integer sums per node (2: gradient and hessian; or one per class).
    capacity : int, optional
        Nodes the columns hold before they grow (doubling).

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
    bounds : ndarray of shape (capacity, 2), float64
        The node's weight bounds under monotone constraints (gpuboost.tree.constraints);
        ``(-inf, inf)`` otherwise.
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
    _OTHER_COLUMNS = ("default_left", "gain", "sums", "left_sums", "bounds", "left_sets")

    def __init__(self, n_sums, capacity=_INITIAL_NODE_CAPACITY):
        self.size = 0
        self.n_sums = n_sums
        for name in self._INT_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.int64))
        self.default_left = np.zeros(capacity, dtype=bool)
        self.gain = np.zeros(capacity, dtype=np.float64)
        self.sums = np.zeros((capacity, n_sums), dtype=np.int64)
        self.left_sums = np.zeros((capacity, n_sums), dtype=np.int64)
        self.bounds = np.zeros((capacity, 2), dtype=np.float64)
        #: Categorical splits: the bins going left (zero words: not categorical).
        self.left_sets = np.zeros((capacity, SPLIT_SET_WORDS), dtype=BITSET_DTYPE)

    def _columns(self):
        return (*self._INT_COLUMNS, *self._OTHER_COLUMNS)

    def _reserve(self, size):
        capacity = len(self.begin)
        if size <= capacity:
            return
        while capacity < size:
            capacity *= 2
        for name in self._columns():
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
        self.bounds[ids] = UNBOUNDED
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
        self.bounds[ids] = np.repeat(self.bounds[parents], 2, axis=0)
        self.left[ids] = self.right[ids] = -1
        self.feature[ids] = self.bin[ids] = -1
        self.left_sets[ids] = 0
        self.histogram_batch[ids] = NO_HISTOGRAM
        return ids

    def columns(self):
        """``{name: column}`` of every column (the arrays themselves, to be written by a
        backend that appends nodes: :meth:`adopt`)."""
        return {name: getattr(self, name) for name in self._columns()}

    def adopt(self, size):
        """Take the nodes a backend appended to the columns (:meth:`columns`) up to id
        ``size``: the columns it does not write are set as :meth:`add_children` sets
        them (``left_sets`` it writes, or leaves as a new table's: zero)."""
        new = slice(self.size, size)
        self.size = size
        self.bounds[new] = UNBOUNDED
        self.histogram_batch[new] = NO_HISTOGRAM

    def truncate(self, size):
        """Forget the nodes from id ``size`` on (the last ones added)."""
        self.size = size

    def renumber(self, kept, internal):
        """Keep the nodes ``kept`` only, node ``kept[i]`` becoming node ``i``; those marked
        in ``internal`` (bool, indexed by the old ids) keep their children, which must be
        kept too, and the others become leaves. Histograms are not kept."""
        kept = np.asarray(kept, dtype=np.int64)
        new_id = np.full(self.size, -1, dtype=np.int64)
        new_id[kept] = np.arange(len(kept))
        split = internal[kept]
        left = np.where(split, new_id[self.left[kept]], -1)
        right = np.where(split, new_id[self.right[kept]], -1)
        for name in self._columns():
            column = getattr(self, name)
            column[: len(kept)] = column[kept]
        self.size = len(kept)
        self.left[: self.size], self.right[: self.size] = left, right
        self.histogram_batch[: self.size] = NO_HISTOGRAM

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

    def __init__(self, max_leaves, nodes, max_batch=None):
        self.max_leaves = max_leaves
        self.nodes = nodes
        self.frontier = np.zeros(0, dtype=np.int64)

    def push(self, ids):
        """The next level (node ids in increasing order); nothing is taken back."""
        self.frontier = np.asarray(ids, dtype=np.int64)
        return _NOTHING

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

    def expansion_order(self):
        """None: the nodes are expanded in their ids' order as they are."""
        return None


class LossguideDriver:
    """Best leaf first (largest gain; ties: lowest node id), one leaf per step, or a
    *speculative batch* of the best leaves per step that gives the same tree.

    A batch ``b[0], b[1], ...`` popped in heap order is expanded in one step; then
    :meth:`push` keeps its longest prefix that one-leaf-at-a-time growth would also have
    expanded next, in that order: ``b[i]`` is kept while no admissible child of
    ``b[0..i-1]`` comes before it in the heap order (the leaves still in the heap all
    come after the batch). Children get ids in the order their parents are expanded, so
    the kept prefix numbers its children exactly as single steps would; the rest of the
    batch is taken back (the grower undoes those expansions) and waits in the heap
    again. The result is the same tree, bit for bit, whatever the batch sizes
    (``tests/tree/test_grower.py``). The batch size adapts: it doubles while whole
    batches are kept (up to :data:`LOSSGUIDE_MAX_BATCH`), and falls to one more than the
    kept prefix's length when one is cut (falling to the prefix's length took 20% more
    steps on a Higgs-like 50k x 28, 255 leaves, for 3% fewer speculative expansions).
    With ``max_batch=1`` the driver is the plain one-leaf-per-step policy.

    Parameters
    ----------
    max_leaves : int
        0: no limit.
    nodes : NodeTable
    max_batch : int, default=1
        Most leaves per step (1: no speculation).
    """

    def __init__(self, max_leaves, nodes, max_batch=1):
        self.max_leaves = max_leaves
        self.nodes = nodes
        self.heap = []
        self.waiting = set()
        self.max_batch = max_batch
        self.batch_size = min(2, max_batch)
        self.batch = np.zeros(0, dtype=np.int64)

    def _key(self, node):
        return (-float(self.nodes.gain[node]), int(node))

    def _wait(self, ids):
        for node in ids:
            heapq.heappush(self.heap, self._key(node))
            self.waiting.add(int(node))

    def push(self, ids):
        """The children of the last batch, two per batch node in its order (or the root);
        returns the batch nodes taken back (their expansion must be undone)."""
        ids = np.asarray(ids, dtype=np.int64)
        batch, self.batch = self.batch, np.zeros(0, dtype=np.int64)
        kept = len(batch)
        first_child = None
        for i in range(len(batch)):
            if i and first_child is not None and first_child < self._key(batch[i]):
                kept = i
                break
            pair = ids[2 * i : 2 * i + 2]
            for child in pair[self.nodes.admissible(pair)].tolist():
                key = self._key(child)
                first_child = key if first_child is None else min(first_child, key)
        if len(batch):
            grown = 2 * self.batch_size if kept == len(batch) else kept + 1
            self.batch_size = min(grown, self.max_batch)
            ids = ids[: 2 * kept]
        self._wait(ids[self.nodes.admissible(ids)].tolist())
        taken_back = batch[kept:]
        self._wait(taken_back.tolist())
        return taken_back

    def pop(self, n_leaves):
        """``(ids to expand now, ids that will never be expanded)``."""
        budget = self.max_leaves - n_leaves if self.max_leaves else len(self.heap)
        if not self.heap or budget <= 0:
            dropped = np.array(sorted(self.waiting), dtype=np.int64)
            self.waiting, self.heap = set(), []
            return np.zeros(0, dtype=np.int64), dropped
        size = max(1, min(self.batch_size, budget, len(self.heap)))
        batch = [heapq.heappop(self.heap)[1] for _ in range(size)]
        self.waiting.difference_update(batch)
        self.batch = np.array(batch, dtype=np.int64)
        return self.batch, np.zeros(0, dtype=np.int64)

    def expansion_order(self):
        """None: the kept expansions are the one-leaf order's, ids included."""
        return None


class LookaheadLossguideDriver:
    """Best leaf first, as :class:`LossguideDriver` grows it, found by expanding ahead:
    nothing is taken back; the one-leaf order is replayed from the known gains and the
    expansions it never reaches are dropped when the tree is done.

    A node's split, gain and children do not depend on when it is expanded (no random
    draw per node: :meth:`TreeGrower._speculation_limit`), so the one-leaf policy's order
    can be replayed on the host over an expanded-ahead tree: pop the heap's best node
    (largest gain; ties: lowest id of the one-leaf order, which the replay assigns as it
    goes: the children of the k-th expansion get ids ``2k + 1`` and ``2k + 2``) while
    it has been expanded, and stop at the first that has not. That node is expanded next,
    with other open nodes the replay may still reach, in one step.

    Which nodes it may reach: call ``e(v)`` the smallest gain on the path from the root
    to ``v``. Best-first growth expands nodes in non-increasing ``e`` (docs/DESIGN.md,
    "Growth", has the argument), so a node with at least ``max_leaves - 1`` known nodes
    of larger ``e`` is never expanded, nor are its descendants (their ``e`` are no
    larger): it is dropped at once.
    Every other open node goes into the step, up to ``max_batch``, the replay's next
    node first, then by decreasing ``e`` (ties: the order they were added). Steps are
    about the depth of the tree instead of its leaves, for expansions the replay may not
    use (their histograms, partitions and scans): the trade for a backend whose step
    costs launches and a synchronisation whatever its size (CUDA:
    ``expands_lossguide_ahead``).

    The grower adopts the replayed order when the tree is done
    (:meth:`TreeGrower._adopt_order`): the expanded nodes outside it become leaves again,
    their segments sorted back (:meth:`TreeGrower._restore_order`).

    Parameters
    ----------
    max_leaves : int
        0: no limit.
    nodes : NodeTable
    max_batch : int
        Most nodes expanded in one step.
    """

    def __init__(self, max_leaves, nodes, max_batch=LOOKAHEAD_MAX_BATCH):
        self.max_leaves = max_leaves
        self.nodes = nodes
        self.max_batch = max(1, int(max_batch))
        self.heap = []  # (-gain, one-leaf id, node) of the nodes the replay may pop
        self.order = []  # the nodes the replay popped, in its order
        self.next_id = 1
        self.bottleneck = {}  # node -> e(node), admissible nodes only
        self.open = {}  # admissible nodes not expanded nor dropped -> the order they came
        self.batch = _NOTHING

    def _replayable(self, node, one_leaf_id):
        heapq.heappush(self.heap, (-float(self.nodes.gain[node]), one_leaf_id, int(node)))

    def push(self, ids):
        """The children of the last batch, two per batch node in its order (or the root);
        nothing is taken back."""
        ids = np.asarray(ids, dtype=np.int64)
        nodes = self.nodes
        admissible = nodes.admissible(ids)
        if not len(self.batch):  # the root
            parents_e = np.full(len(ids), np.inf)
            for node in ids[admissible].tolist():
                self._replayable(node, 0)
        else:
            parents_e = np.repeat([self.bottleneck[int(p)] for p in self.batch], 2)
        self.batch = _NOTHING
        for node, parent_e in zip(ids[admissible].tolist(), parents_e[admissible].tolist()):
            self.bottleneck[node] = min(parent_e, float(nodes.gain[node]))
            self.open[node] = None  # a dict: an ordered set
        return _NOTHING

    def _replay(self):
        """Pop the one-leaf order as far as the expanded nodes tell it; True when the
        tree is complete."""
        nodes = self.nodes
        while self.heap:
            if self.max_leaves and 1 + len(self.order) >= self.max_leaves:
                return True
            node = self.heap[0][2]
            if nodes.left[node] < 0:
                return False
            heapq.heappop(self.heap)
            self.order.append(node)
            children = (int(nodes.left[node]), int(nodes.right[node]))
            for offset, child in enumerate(children):
                if nodes.feature[child] >= 0:
                    self._replayable(child, self.next_id + offset)
            self.next_id += 2
        return True

    def pop(self, n_leaves):
        """``(ids to expand now, ids that will never be expanded)``; ``n_leaves`` (the
        grower's count, expansions ahead included) is not used: the replay counts."""
        if self._replay():
            dropped = np.array(sorted(self.open), dtype=np.int64)
            self.open = {}
            return _NOTHING, dropped
        following = self.heap[0][2]
        open_nodes = np.array(list(self.open), dtype=np.int64)
        open_e = np.array([self.bottleneck[node] for node in open_nodes.tolist()])
        dropped = _NOTHING
        if self.max_leaves:
            known = np.sort(np.fromiter(self.bottleneck.values(), dtype=np.float64))
            larger = len(known) - np.searchsorted(known, open_e, side="right")
            never = larger >= self.max_leaves - 1
            dropped = np.sort(open_nodes[never])
            open_nodes, open_e = open_nodes[~never], open_e[~never]
        ranked = open_nodes[np.argsort(-open_e, kind="stable")]
        ranked = ranked[ranked != following][: self.max_batch - 1]
        batch = np.concatenate([[following], ranked]).astype(np.int64)
        for node in (*dropped.tolist(), *batch.tolist()):
            del self.open[node]
        self.batch = batch
        return batch, dropped

    def expansion_order(self):
        """The nodes the one-leaf policy expands, in its order (int64 array)."""
        return np.array(self.order, dtype=np.int64)


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
    interactions : gpuboost.tree.constraints.InteractionConstraints, optional
        Interaction constraints (a fresh one per tree): their feature masks are
        intersected with column sampling's. Monotone constraints come with
        ``tree_input.split_params.monotone`` (the nodes' bounds: ``NodeTable.bounds``).

    Attributes
    ----------
    nodes : NodeTable
        The tree's nodes (after :meth:`grow`: the finished tree's).
    """

    def __init__(
        self,
        splitter,
        tree_input,
        policy,
        feature_sampler,
        timer,
        interactions=None,
        defer_final_partition=False,
    ):
        self.splitter = splitter
        #: Leave the rows of a split whose children are both final leaves unpartitioned
        #: (depthwise, numeric splits, a splitter that allows it): the caller updates the
        #: margins by routing those rows (XGBoost's FinalisePosition) and needs no leaf's
        #: rows otherwise (no leaf refit).
        self.defer_final_partition = (
            defer_final_partition
            and policy.grow_policy == "depthwise"
            and getattr(splitter, "defers_final_partition", False)
        )
        #: Parents of at most this many rows have their children's splits found from
        #: the rows (the splitter's ``find_best_splits_of_rows``): no histogram is kept
        #: for those children, nor for their descendants, which are smaller still
        #: (depthwise, a splitter that offers it; 0: never).
        self.row_scan_max_rows = (
            int(splitter.row_scan_max_rows())
            if policy.grow_policy == "depthwise" and hasattr(splitter, "row_scan_max_rows")
            else 0
        )
        #: Tell the builds how many pairs the next level may build (depthwise, a
        #: splitter that prepares that level's batch ahead: ``next_pairs``).
        self.reserve_histograms = policy.grow_policy == "depthwise" and bool(
            getattr(splitter, "reserves_histograms", False)
        )
        #: Tell a level's build which of its nodes are scanned from their rows (a
        #: splitter that sends their segments with the build's data: ``row_segments``).
        self.carry_row_segments = self.row_scan_max_rows > 0 and bool(
            getattr(splitter, "carries_row_segments", False)
        )
        #: Send a step's histogram-build table with its partition (a splitter whose
        #: ``partition`` takes ``then_build``: one host-to-device copy fewer per step).
        self.carry_build_tables = bool(getattr(splitter, "carries_build_tables", False))
        #: Tell the root's build that its positions hold rows in increasing order (the
        #: sampled rows' order, gpuboost.tree.sampling.sample_rows; a splitter whose
        #: ``build_histograms`` takes ``rows_in_order``).
        self.root_rows_in_order = bool(getattr(splitter, "takes_rows_in_order", False))
        #: Give the partition the split records' left counts (a splitter whose
        #: ``partition`` takes ``left_counts``): it may then move the rows into a new
        #: array in one pass over the indices.
        self.move_partitioned_rows = bool(getattr(splitter, "moves_partitioned_rows", False))
        self._unsplit = []
        #: Nodes whose speculative expansion was taken back (:meth:`_undo`), their rows
        #: left partitioned.
        self._disordered = set()
        self.tree_input = tree_input
        self.policy = policy
        self.feature_sampler = feature_sampler
        self.timer = timer
        self.interactions = interactions
        self.monotone = np.asarray(tree_input.split_params.monotone, dtype=np.int64)
        #: Grow the subtrees of the small nodes (:attr:`levels_max_rows`) in splitter
        #: calls (its ``grow_levels_from_rows``: the backend runs the level loop of
        #: :meth:`_expand` for them, bit for bit) instead of a step per level:
        #: depthwise without a leaf budget, no monotone or interaction constraints, no
        #: feature drawn by level or node.
        self.levels_from_rows = (
            policy.grow_policy == "depthwise"
            and not policy.max_leaves
            and bool(getattr(splitter, "grows_levels_from_rows", False))
            and interactions is None
            and not len(self.monotone)
            and not feature_sampler.draws_per_node
        )
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
    def _mask(self, ids):
        """Allowed features of nodes ``ids``: column sampling's (drawn in the order of
        ``ids``), intersected with the interaction constraints'; None when all."""
        mask = self.feature_sampler.mask(self.nodes.depth[ids].tolist())
        if self.interactions is None:
            return mask
        allowed = self.interactions.mask(ids)
        return allowed if mask is None else mask & allowed

    def _bounds(self, ids):
        """The (len(ids), 2) weight bounds of nodes ``ids`` under monotone constraints;
        None without them (the scans then take the unconstrained formulas)."""
        return self.nodes.bounds[ids] if len(self.monotone) else None

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

    def _next_level(self, ids=None, root_rows=0):
        """The ``next_pairs`` keyword of a depthwise build whose batch holds the nodes
        ``ids`` (None: the root of ``root_rows`` rows, not yet in the node table), where
        the splitter takes it: the pairs the next level may build, at most one per node
        that may split with splittable children (depth), none where that level is sure
        to be scanned from its rows."""
        if not self.reserve_histograms:
            return {}
        max_depth = self.policy.max_depth
        if ids is None:
            children_split = not max_depth or max_depth > 1
            return {"next_pairs": int(children_split and root_rows > self.row_scan_max_rows)}
        nodes = self.nodes
        candidates = ids[self._can_split(ids)]
        if max_depth:
            candidates = candidates[nodes.depth[candidates] + 1 < max_depth]
        small = nodes.count[candidates] <= self.row_scan_max_rows
        return {"next_pairs": int((~small).sum())}

    def _row_segments(self, scanned):
        """The ``row_segments`` keyword of a level's build where the splitter takes it:
        the segments of ``scanned``, the level's nodes :meth:`_find_splits` scans from
        their rows (in its order), none when there are none."""
        if not self.carry_row_segments or not len(scanned):
            return {}
        return {"row_segments": (self.nodes.begin[scanned], self.nodes.end[scanned])}

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

    def _find_splits(self, ids, from_rows=None):
        """Evaluate the nodes ``ids`` and record their splits: those marked in
        ``from_rows`` (bool, as ``ids``) from their rows, the others (all with
        histograms, in one batch) from their histograms; a level with both kinds in one
        splitter call where the splitter offers it (``find_best_splits_mixed``: on CUDA
        one copy of the level's records to the host).

        The feature masks are drawn in the order of ``ids`` (node-id order: the random
        stream does not depend on how histograms are batched, nor on which nodes are
        scanned from their rows).
        """
        if not len(ids):
            return
        with self.timer.phase("split"):
            mask = self._mask(ids)
        if from_rows is None or not from_rows.any():
            self._find_splits_in_histograms(ids, mask)
            return
        nodes, scanned = self.nodes, ids[from_rows]
        row_mask = None if mask is None else mask[from_rows]
        row_bounds = self._bounds(scanned)
        ids = ids[~from_rows]
        mask = None if mask is None else mask[~from_rows]
        mixed = getattr(self.splitter, "find_best_splits_mixed", None)
        if len(ids) and mixed is not None and getattr(self.splitter, "scans_mixed_levels", False):
            with self.timer.phase("split"):
                ordered, in_scan, histograms, mask, taken = self._histogram_scan(ids, mask)
                row_table, table = mixed(
                    self.tree_input,
                    nodes.begin[scanned],
                    nodes.end[scanned],
                    row_mask,
                    nodes.begin[in_scan],
                    nodes.end[in_scan],
                    histograms,
                    mask,
                    row_bounds,
                    self._bounds(in_scan),
                )
            nodes.set_splits(scanned, row_table)
            nodes.set_splits(ordered, table if taken is None else table.take(taken))
            return
        with self.timer.phase("row_scan"):
            table = self.splitter.find_best_splits_of_rows(
                self.tree_input,
                nodes.begin[scanned],
                nodes.end[scanned],
                row_mask,
                *(() if row_bounds is None else (row_bounds,)),
            )
        nodes.set_splits(scanned, table)
        self._find_splits_in_histograms(ids, mask)

    def _histogram_scan(self, ids, mask):
        """How the nodes ``ids`` (with histograms; ``mask`` their feature masks) are
        scanned: ``(ordered, scanned, histograms, mask, taken)``, the scan of the nodes
        ``scanned`` (``histograms``, their feature masks ``mask``) giving the records of
        ``ordered`` (``ids`` in the order of their histogram rows) as they are when
        ``taken`` is None, else at its rows ``taken``.

        The scan sees the nodes in the order of their histogram rows, so that a whole
        batch needs no gather: when ``ids`` are not consecutive rows of their batch, the
        whole batch is scanned (the other nodes' results are dropped), which costs less
        than gathering the rows.
        """
        nodes = self.nodes
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
        return ordered, scanned, histograms, mask, taken

    def _find_splits_in_histograms(self, ids, mask):
        """:meth:`_find_splits` of nodes with histograms, ``mask`` their feature masks
        (:meth:`_histogram_scan`)."""
        if not len(ids):
            return
        nodes = self.nodes
        with self.timer.phase("split"):
            ordered, scanned, histograms, mask, taken = self._histogram_scan(ids, mask)
            bounds = self._bounds(scanned)
            extra = () if bounds is None else (bounds,)
            table = self.splitter.find_best_splits(
                self.tree_input, nodes.begin[scanned], nodes.end[scanned], histograms, mask, *extra
            )
        nodes.set_splits(ordered, table if taken is None else table.take(taken))

    # ---- the shared step ----------------------------------------------------
    def _expand(self, parents):
        """Split the nodes ``parents`` (each admissible); return the new children's ids."""
        nodes, tree = self.nodes, self.tree_input
        # Children ids in pairs, left then right, in the order of the parents (their
        # segments from the split records' left counts, which the partition realises).
        n_left = nodes.left_count[parents]
        begin = nodes.begin[parents]
        children = nodes.add_children(parents, begin + n_left, nodes.left_sums[parents], n_left)
        lefts, rights = children[0::2], children[1::2]
        splittable = self._can_split(children)
        moved = parents
        if self.defer_final_partition:
            final = ~(splittable[0::2] | splittable[1::2])
            final &= ~nodes.left_sets[parents].any(axis=1)
            self._unsplit.append(parents[final])
            moved = parents[~final]
        pairs = np.flatnonzero(splittable[0::2] | splittable[1::2])
        # Small parents: their children are scanned from their rows (no histograms).
        from_rows = np.zeros(len(children), dtype=bool)
        is_small = nodes.count[parents[pairs]] <= self.row_scan_max_rows
        small = pairs[is_small]
        from_rows[2 * small], from_rows[2 * small + 1] = True, True
        pairs = pairs[~is_small]
        # The smaller child of each pair built (ties: left), the larger by subtraction.
        left_is_smaller = nodes.count[lefts[pairs]] <= nodes.count[rights[pairs]]
        smaller = np.where(left_is_smaller, lefts[pairs], rights[pairs])
        larger = np.where(left_is_smaller, rights[pairs], lefts[pairs])
        row_segments = self._row_segments(children[from_rows & splittable])
        build = {}
        if len(pairs):
            with self.timer.phase("histogram"):
                parent_batch, parent_rows = self._histograms_of(parents[pairs])
            if self.carry_build_tables:  # the build's table in the partition's copy
                segments = row_segments.get("row_segments")
                build = {
                    "then_build": (nodes.begin[smaller], nodes.end[smaller], parent_rows, segments)
                }
        with self.timer.phase("partition"):
            left_sets = nodes.left_sets[moved]
            categorical = {"left_sets": left_sets} if left_sets.any() else {}
            counts = {"left_counts": nodes.left_count[moved]} if self.move_partitioned_rows else {}
            if len(moved):
                self.splitter.partition(
                    tree,
                    nodes.begin[moved],
                    nodes.end[moved],
                    nodes.feature[moved],
                    nodes.bin[moved],
                    nodes.default_left[moved],
                    **categorical,
                    **build,
                    **counts,
                )
        nodes.left[parents], nodes.right[parents] = lefts, rights
        if self.interactions is not None:
            self.interactions.split(parents, nodes.feature[parents], children)
        if len(self.monotone):
            directions = self.monotone[nodes.feature[parents]]
            lower, upper = nodes.bounds[parents, 0], nodes.bounds[parents, 1]
            left_w, right_w = child_weights(
                tree.quantiser,
                tree.split_params,
                nodes.sums[parents],
                nodes.left_sums[parents],
                lower,
                upper,
            )
            left_lower, left_upper, right_lower, right_upper = children_bounds(
                lower, upper, directions, left_w, right_w
            )
            nodes.bounds[lefts, 0], nodes.bounds[lefts, 1] = left_lower, left_upper
            nodes.bounds[rights, 0], nodes.bounds[rights, 1] = right_lower, right_upper
        self.n_leaves += len(parents)
        if len(pairs):
            with self.timer.phase("histogram"):
                batch = np.concatenate([smaller, larger])
                level = self.splitter.build_children_histograms(
                    tree,
                    nodes.begin[smaller],
                    nodes.end[smaller],
                    parent_batch,
                    parent_rows,
                    **self._next_level(batch),
                    **row_segments,
                )
            self._keep_batch(level, batch)
        with_histogram = nodes.histogram_batch[children] != NO_HISTOGRAM
        evaluated = splittable & (with_histogram | from_rows)
        self._find_splits(children[evaluated], from_rows[evaluated])
        self._release(children[~splittable])
        return children

    # ---- the loop -----------------------------------------------------------
    def grow(self):
        """Grow the tree; returns a :class:`GrownTree`."""
        tree = self.tree_input
        n_samples = int(self.sample_indices.shape[0])
        begins, ends = np.array([0], dtype=np.int64), np.array([n_samples], dtype=np.int64)
        #: Nodes of at most this many rows have their subtrees grown by the splitter
        #: (:meth:`_grow_levels_from_rows`; its ``levels_from_rows_max_rows``, which
        #: may depend on the tree's rows).
        self.levels_max_rows = (
            self.splitter.levels_from_rows_max_rows(n_samples) if self.levels_from_rows else 0
        )
        self._batches, self._batch_nodes, self._batch_users = [], [], []
        if (
            self.levels_from_rows
            and n_samples <= self.levels_max_rows
            and getattr(self.splitter, "grows_root_in_levels", True)
        ):
            # The whole tree in splitter calls, the root's histogram and split included
            # (the loop would hand them the root's subtree at once).
            n_sums = self.splitter.n_sums
            # Room for the whole tree: no table growth.
            most = most_new_nodes(np.array([n_samples]), np.array([0]), self.policy.max_depth)
            self.nodes = NodeTable(n_sums, capacity=1 + most)
            root = self.nodes.add(begins, ends, [0], np.zeros((1, n_sums)), [n_samples])
            self.n_leaves = 1
            self._grow_levels_from_rows(root, scan_parents=True)
            return self._finish()
        with self.timer.phase("histogram"):
            in_order = {"rows_in_order": True} if self.root_rows_in_order else {}
            root_histogram = self.splitter.build_histograms(
                tree, begins, ends, **self._next_level(root_rows=n_samples), **in_order
            )
        with self.timer.phase("split"):
            mask = self.feature_sampler.mask([0])  # the root: no interaction constraint yet
            extra = (np.array([UNBOUNDED]),) if len(self.monotone) else ()
            table = self.splitter.find_best_splits(tree, begins, ends, root_histogram, mask, *extra)
        self.nodes = nodes = NodeTable(table.sums.shape[1])
        root = nodes.add(begins, ends, [0], table.sums, [n_samples])
        nodes.set_splits(root, table)
        self._keep_batch(root_histogram, root)
        self.n_leaves = 1
        if not self._can_split(root)[0]:
            nodes.feature[root] = -1
        driver = self._driver()
        driver.push(root)
        grown_later, numbered_later = [], False  # levels' small nodes (levels_from_rows)
        while True:
            batch, dropped = driver.pop(self.n_leaves)
            self._release(dropped)
            if not len(batch):
                break
            if self.levels_from_rows:  # small nodes: their subtrees in one call, below
                small = nodes.count[batch] <= self.levels_max_rows
                if small.any():
                    self._release(batch[small])
                    grown_later.append(batch[small])
                    batch = batch[~small]
                    if not len(batch):
                        break
                    numbered_later = True  # larger nodes of this level expanded first
            taken_back = driver.push(self._expand(batch))
            self._undo(batch, taken_back)
        order = driver.expansion_order()
        if order is not None:
            self._adopt_order(order)
        if grown_later:
            self._grow_levels_from_rows(np.concatenate(grown_later))
            if numbered_later:
                self._number_by_levels()
        return self._finish()

    def _grow_levels_from_rows(self, parents, scan_parents=False):
        """Grow the whole subtrees of ``parents`` (admissible leaves, each of at most
        :attr:`levels_max_rows` rows, in increasing id order) in splitter calls
        (:attr:`levels_from_rows`): the nodes, partition and deferred splits
        :meth:`_expand` gives them level by level. Depthwise without a leaf budget, a
        node's subtree does not depend on the other nodes, nor on when it is grown;
        only the ids do, which :meth:`_number_by_levels` makes the loop's where the
        small nodes of several levels, or of a level with larger ones, are grown
        together after the larger ones. With ``scan_parents`` (the root of a small
        tree) the parents' sums and splits are found by the first call too, as
        :meth:`grow` finds the root's (a root that cannot split stays a leaf)."""
        nodes = self.nodes
        mask = self.feature_sampler.mask([0])  # the tree's features: no draw
        with self.timer.phase("row_scan"):
            while len(parents):
                if not scan_parents:  # a tree grown whole has room for all its nodes
                    nodes._reserve(nodes.size + self._most_new_nodes(parents))
                size, parents, unsplit = self.splitter.grow_levels_from_rows(
                    self.tree_input,
                    nodes.columns(),
                    nodes.size,
                    parents,
                    None if mask is None else mask[0],
                    self.policy.max_depth,
                    self.defer_final_partition,
                    scan_parents,
                )
                scan_parents = False
                self.n_leaves += (size - nodes.size) // 2
                nodes.adopt(size)
                self._unsplit.append(unsplit)

    def _number_by_levels(self):
        """Renumber the finished nodes as depthwise growth numbers them: level by level,
        each level's children in the order of their parents, left then right (after
        subtrees grown ahead of their level, :meth:`_grow_levels_from_rows`); the
        deferred splits then in increasing id order, as the loop records them."""
        nodes = self.nodes
        self._release(np.arange(nodes.size))
        internal = nodes.left[: nodes.size] >= 0
        order, level = [], np.zeros(1, dtype=np.int64)
        while len(level):
            order.append(level)
            parents = level[internal[level]]
            level = np.empty(2 * len(parents), dtype=np.int64)
            level[0::2], level[1::2] = nodes.left[parents], nodes.right[parents]
        kept = np.concatenate(order)
        new_id = np.empty(nodes.size, dtype=np.int64)
        new_id[kept] = np.arange(len(kept))
        nodes.renumber(kept, internal)
        if self._unsplit:
            self._unsplit = [np.sort(new_id[np.concatenate(self._unsplit)])]

    def _most_new_nodes(self, parents):
        """An upper bound of the nodes the subtrees of ``parents`` add (at least one
        level's): :func:`most_new_nodes` of their rows and depths."""
        nodes = self.nodes
        return most_new_nodes(nodes.count[parents], nodes.depth[parents], self.policy.max_depth)

    # ---- speculative lossguide steps (LossguideDriver) ----------------------
    def _driver(self):
        """The policy's driver: lossguide expands ahead (:class:`LookaheadLossguideDriver`)
        where the splitter asks for it (``expands_lossguide_ahead``) and speculation is
        exact, else speculative batches taken back in part (:class:`LossguideDriver`)."""
        speculation = self._speculation_limit()
        max_leaves = self.policy.max_leaves
        if speculation > 1 and getattr(self.splitter, "expands_lossguide_ahead", False):
            return LookaheadLossguideDriver(max_leaves, self.nodes, LOOKAHEAD_MAX_BATCH)
        return DRIVERS[self.policy.grow_policy](max_leaves, self.nodes, speculation)

    def _speculation_limit(self):
        """Most leaves per lossguide step: :data:`LOSSGUIDE_MAX_BATCH` when an expansion
        can be undone exactly (the splitter's partition changes nothing but the order of
        ``sample_indices``, a host or a device array; no random feature sampling per
        node, whose draws would move), else 1 (and 1 for depthwise, which never
        speculates)."""
        if (
            self.policy.grow_policy == "lossguide"
            and getattr(self.splitter, "partition_in_sample_indices", False)
            and self.feature_sampler.trivial
        ):
            return LOSSGUIDE_MAX_BATCH
        return 1

    def _undo(self, batch, taken_back):
        """Take back the expansion of nodes ``taken_back`` (the tail of ``batch``, whose
        children are the last nodes added): forget their children; free the histograms
        of the expansions kept.

        Their rows stay partitioned, costing no device operation: a segment holds its rows
        in increasing order (docs/DESIGN.md, "Row partition") and the partition is
        stable, so partitioning a taken-back node again by its (unchanged) split leaves
        its rows where they are, as partitioning its sorted segment would put them. Only
        the taken-back nodes that end as leaves keep a partitioned segment;
        :meth:`_restore_order` sorts those when the tree is finished.
        """
        n_back = len(taken_back)
        self._release(batch[: len(batch) - n_back])
        if not n_back:
            return
        nodes = self.nodes
        self._disordered.update(taken_back.tolist())
        size = nodes.size - 2 * n_back
        self._release(np.arange(size, nodes.size))
        nodes.truncate(size)
        nodes.left[taken_back] = nodes.right[taken_back] = -1
        self.n_leaves -= n_back

    def _adopt_order(self, order):
        """Make the tree the one-leaf policy grows the node table
        (:class:`LookaheadLossguideDriver`): ``order`` are the nodes it expands, in its
        order; the root and their children are kept, renumbered as that policy numbers
        them (the children of ``order[k]`` are ``2k + 1`` and ``2k + 2``). The nodes
        expanded ahead that it keeps as leaves have their rows partitioned, as after
        :meth:`_undo`: :meth:`_restore_order` sorts them."""
        nodes = self.nodes
        order = np.asarray(order, dtype=np.int64)
        self._release(np.arange(nodes.size))
        kept = np.zeros(1 + 2 * len(order), dtype=np.int64)
        kept[1::2], kept[2::2] = nodes.left[order], nodes.right[order]
        internal = np.zeros(nodes.size, dtype=bool)
        internal[order] = True
        ahead = (nodes.left[kept] >= 0) & ~internal[kept]
        nodes.renumber(kept, internal)
        self._disordered.update(np.flatnonzero(ahead).tolist())
        self.n_leaves = len(kept) - len(order)

    def _restore_order(self):
        """Sort the segments of the leaves whose expansion was taken back (:meth:`_undo`,
        :meth:`_adopt_order`): every leaf's rows in increasing order, as one-leaf-per-step
        growth leaves them (float sums over a leaf's rows, as a refit's, follow that
        order). Once per tree: one in-place sort for one such leaf; for several, one sort
        of ``(leaf, row)`` keys over all their positions (a copy of the positions and
        the leaves' key offsets to the array's device, a gather, a sort, a scatter), so
        that the array operations do not grow with the leaves."""
        nodes = self.nodes
        leaves = [node for node in sorted(self._disordered) if nodes.left[node] < 0]
        self._disordered = set()
        rows = self.sample_indices
        if len(leaves) == 1:
            rows[nodes.begin[leaves[0]] : nodes.end[leaves[0]]].sort()
        if len(leaves) < 2:
            return
        begins, ends = nodes.begin[leaves], nodes.end[leaves]
        lengths = ends - begins
        starts = np.repeat(begins - np.cumsum(lengths) + lengths, lengths)
        table = np.empty((2, int(lengths.sum())), dtype=np.int64)
        table[0] = starts + np.arange(table.shape[1])  # positions
        table[1] = np.repeat(np.arange(len(leaves), dtype=np.int64) << _ROW_BITS, lengths)
        xp = get_array_module(rows)
        table = xp.asarray(table)
        keys = table[1] + rows[table[0]]
        keys.sort()
        rows[table[0]] = keys & ((1 << _ROW_BITS) - 1)

    # ---- the finished tree --------------------------------------------------
    def _finish(self):
        self._restore_order()
        nodes = self.nodes
        n_nodes = nodes.size
        if self._batches:
            self._release(np.arange(n_nodes))
        sums = nodes.sums[:n_nodes].copy()
        bounds = self._bounds(np.arange(n_nodes))
        extra = {} if bounds is None else {"node_bounds": bounds}
        if self.tree_input.split_params.path_smooth > 0.0:  # weights pulled to the parents'
            extra["path"] = (nodes.count[:n_nodes], nodes.left[:n_nodes], nodes.right[:n_nodes])
        values, cover = self.splitter.node_values(self.tree_input, sums, **extra)
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
        unsplit = np.concatenate(self._unsplit) if self._unsplit else np.zeros(0, dtype=np.int64)
        routed = np.zeros(n_nodes, dtype=bool)
        routed[nodes.left[unsplit]] = True
        routed[nodes.right[unsplit]] = True
        leaves = np.flatnonzero((nodes.left[:n_nodes] < 0) & ~routed)
        return GrownTree(
            tree,
            leaves,
            nodes.begin[leaves].copy(),
            nodes.end[leaves].copy(),
            self.sample_indices,
            sums,
            bounds,
            unsplit_splits(nodes, unsplit),
        )
