"""Tree traversal of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.predict`; CUDA: ``cuda/predict.cu``).

Raw traversal: ``x <= threshold`` goes left, NaN follows ``default_left``; binned
traversal: ``bin <= threshold_bin`` goes left, the missing bin follows
``default_left`` (docs/DESIGN.md, "Binning").

The forest is packed into flat node arrays (one segment per tree, :class:`PackedForest`)
in which a leaf's two children are the leaf itself. Rows then go down a tree in lockstep,
one level at a time for :data:`ROWS_PER_BLOCK` rows, exactly ``depth`` steps each
without a branch on the data (the child is ``children[2 * node + goes_right]``), so
the CPU overlaps the rows' memory accesses instead of mispredicting every other branch.
Every tree in order for the rows of a block (a tree's nodes stay in cache while the
block goes through it, and each row's margin gets the trees' values added in tree
order, as the reference adds them); blocks in parallel.

Sparse rows (CSR, :func:`predict_forest_sparse`) go down the trees the same way, each
value read by a binary search over the row's stored columns (a row of a sparse matrix
stores few), an entry that is not stored reading as the absent value (0.0 or NaN):
the dense matrix is never built.
"""

import collections
import threading

import numpy as np

from ...core.segments import offsets
from ..categorical import has_categorical
from .jit import kernel, prange, sized

__all__ = [
    "PackedForest",
    "predict_tree_binned",
    "predict_tree_raw",
    "predict_forest_raw",
    "predict_forest_leaves",
    "predict_forest_sparse",
    "ROWS_PER_BLOCK",
]

#: Rows that go through a tree together.
ROWS_PER_BLOCK = 128


@kernel
def _depths(children, tree_offsets, out):
    """Depth of every tree (its deepest leaf), from the packed children."""
    for tree in range(tree_offsets.shape[0] - 1):
        base = tree_offsets[tree]
        n_nodes = tree_offsets[tree + 1] - base
        depth = np.zeros(n_nodes, dtype=np.int64)
        stack = np.empty(n_nodes, dtype=np.int64)
        stack[0] = 0
        size = 1
        deepest = 0
        while size:
            size -= 1
            node = stack[size]
            deepest = max(deepest, depth[node])
            left = children[2 * (base + node)]
            right = children[2 * (base + node) + 1]
            if left != node:  # not a leaf
                depth[left] = depth[right] = depth[node] + 1
                stack[size] = left
                stack[size + 1] = right
                size += 2
        out[tree] = deepest


class PackedForest:
    """The trees' node arrays laid end to end (tree ``t`` owns nodes
    ``tree_offsets[t] .. tree_offsets[t + 1] - 1``; child indices are local to the tree).

    Attributes
    ----------
    feature : ndarray of int64
        Split feature; 0 at leaves (read, never decisive).
    threshold : ndarray of float64
    threshold_bin : ndarray of int64
    default_left : ndarray of uint64 (0 / 1)
    children : ndarray of shape (2 * n_nodes,), uint64
        Left and right child of every node; a leaf's are the leaf itself.
    value : ndarray of float64
    tree_offsets : ndarray of shape (n_trees + 1,), int64
    depths : ndarray of shape (n_trees,), int64
    """

    def __init__(self, trees):
        def joined(name, dtype):
            if not trees:
                return np.zeros(0, dtype=dtype)
            return np.concatenate([getattr(tree, name) for tree in trees]).astype(dtype)

        feature = joined("feature", np.int64)
        leaf = feature < 0
        local = (
            np.concatenate([np.arange(tree.n_nodes, dtype=np.int64) for tree in trees])
            if trees
            else np.zeros(0, dtype=np.int64)
        )
        children = np.empty((len(feature), 2), dtype=np.int64)
        children[:, 0] = np.where(leaf, local, joined("left_child", np.int64))
        children[:, 1] = np.where(leaf, local, joined("right_child", np.int64))
        self.feature = np.where(leaf, 0, feature)
        self.threshold = joined("threshold", np.float64)
        self.threshold_bin = joined("threshold_bin", np.int64)
        self.default_left = joined("default_left", np.uint64)
        self.children = children.astype(np.uint64).ravel()
        self.value = joined("value", np.float64)
        self.tree_offsets = offsets([tree.n_nodes for tree in trees])
        self.depths = np.zeros(len(trees), dtype=np.int64)
        _depths(self.children, self.tree_offsets, self.depths)
        #: Whether a tree has a categorical split (the kernels here take none).
        self.has_categorical = has_categorical(trees)


#: The forests packed last, by the identities of their trees (most recent last), each
#: with the trees themselves (held, so that no other tree can take their ids while
#: cached): a model predicting one row at a time would otherwise pack every tree again
#: on every call, most of its latency (issue 30). Trees are not modified once grown
#: (docs/DESIGN.md, "Small data and latency").
_PACKED = collections.OrderedDict()
_PACKED_LOCK = threading.Lock()
#: Forests kept: a few models used in turn (train and eval predictions, slices).
PACKED_FORESTS_KEPT = 8


def forest_of(trees):
    """The :class:`PackedForest` of ``trees`` (a sequence of Tree), packed once and
    kept while it is among the :data:`PACKED_FORESTS_KEPT` used last."""
    key = tuple(map(id, trees))
    with _PACKED_LOCK:
        entry = _PACKED.get(key)
        if entry is not None:
            _PACKED.move_to_end(key)
            return entry[1]
    forest = PackedForest(list(trees))
    with _PACKED_LOCK:
        _PACKED[key] = (tuple(trees), forest)
        while len(_PACKED) > PACKED_FORESTS_KEPT:
            _PACKED.popitem(last=False)
    return forest


@kernel
def _descend_raw(X, first, n_rows, base, depth, feature, threshold, default_left, children, nodes):
    """``nodes[i]``: the leaf (local id) of row ``first + i`` in the tree at ``base``."""
    base = np.uint64(base)
    first = np.uint64(first)
    for i in range(n_rows):
        nodes[i] = 0
    for _ in range(depth):
        for i in range(np.uint64(n_rows)):
            node = base + nodes[i]
            value = np.float64(X[first + i, np.uint64(feature[node])])
            goes_left = np.uint64(value <= threshold[node]) | (
                np.uint64(value != value) & default_left[node]
            )
            nodes[i] = children[np.uint64(2) * node + np.uint64(1) - goes_left]


@kernel
def _sparse_value(indptr, indices, data, row, column, absent):
    """Entry ``(row, column)`` of a canonical CSR matrix (float64), ``absent`` if not stored."""
    low = indptr[row]
    end = indptr[row + np.uint64(1)]
    high = end
    while low < high:
        middle = (low + high) // np.uint64(2)
        if indices[middle] < column:
            low = middle + np.uint64(1)
        else:
            high = middle
    if low < end and indices[low] == column:
        return np.float64(data[low])
    return absent


@kernel
def _descend_sparse(
    indptr,
    indices,
    data,
    absent,
    first,
    n_rows,
    base,
    depth,
    feature,
    threshold,
    default_left,
    children,
    nodes,
):
    """:func:`_descend_raw` on the rows of a CSR matrix."""
    base = np.uint64(base)
    first = np.uint64(first)
    for i in range(n_rows):
        nodes[i] = 0
    for _ in range(depth):
        for i in range(np.uint64(n_rows)):
            node = base + nodes[i]
            value = _sparse_value(indptr, indices, data, first + i, feature[node], absent)
            goes_left = np.uint64(value <= threshold[node]) | (
                np.uint64(value != value) & default_left[node]
            )
            nodes[i] = children[np.uint64(2) * node + np.uint64(1) - goes_left]


@kernel
def _descend_binned(
    X_binned,
    first,
    n_rows,
    base,
    depth,
    missing_bin,
    feature,
    threshold_bin,
    default_left,
    children,
    nodes,
):
    """:func:`_descend_raw` on binned features."""
    base = np.uint64(base)
    first = np.uint64(first)
    for i in range(n_rows):
        nodes[i] = 0
    for _ in range(depth):
        for i in range(np.uint64(n_rows)):
            node = base + nodes[i]
            bin_ = np.int64(X_binned[first + i, np.uint64(feature[node])])
            goes_left = np.uint64(bin_ <= threshold_bin[node]) | (
                np.uint64(bin_ == missing_bin) & default_left[node]
            )
            nodes[i] = children[np.uint64(2) * node + np.uint64(1) - goes_left]


@kernel(parallel=True)
def _forest_margins(
    X,
    feature,
    threshold,
    default_left,
    children,
    value,
    tree_offsets,
    depths,
    tree_outputs,
    margins,
    rows_per_block,
):
    n_rows = X.shape[0]
    n_blocks = (n_rows + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        count = min(n_rows, first + rows_per_block) - first
        nodes = np.empty(rows_per_block, dtype=np.uint64)
        for tree in range(tree_outputs.shape[0]):
            base = tree_offsets[tree]
            _descend_raw(
                X,
                first,
                count,
                base,
                depths[tree],
                feature,
                threshold,
                default_left,
                children,
                nodes,
            )
            output = tree_outputs[tree]
            for i in range(count):
                margins[first + i, output] += value[base + np.int64(nodes[i])]


@kernel(parallel=True)
def _forest_margins_sparse(
    indptr,
    indices,
    data,
    absent,
    feature,
    threshold,
    default_left,
    children,
    value,
    tree_offsets,
    depths,
    tree_outputs,
    margins,
    rows_per_block,
):
    n_rows = indptr.shape[0] - 1
    n_blocks = (n_rows + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        count = min(n_rows, first + rows_per_block) - first
        nodes = np.empty(rows_per_block, dtype=np.uint64)
        for tree in range(tree_outputs.shape[0]):
            base = tree_offsets[tree]
            _descend_sparse(
                indptr,
                indices,
                data,
                absent,
                first,
                count,
                base,
                depths[tree],
                feature,
                threshold,
                default_left,
                children,
                nodes,
            )
            output = tree_outputs[tree]
            for i in range(count):
                margins[first + i, output] += value[base + np.int64(nodes[i])]


@kernel(parallel=True)
def _forest_leaves(
    X, feature, threshold, default_left, children, tree_offsets, depths, out, rows_per_block
):
    n_rows = X.shape[0]
    n_blocks = (n_rows + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        count = min(n_rows, first + rows_per_block) - first
        nodes = np.empty(rows_per_block, dtype=np.uint64)
        for tree in range(depths.shape[0]):
            _descend_raw(
                X,
                first,
                count,
                tree_offsets[tree],
                depths[tree],
                feature,
                threshold,
                default_left,
                children,
                nodes,
            )
            for i in range(count):
                out[first + i, tree] = nodes[i]


@kernel(parallel=True)
def _tree_values(X, feature, threshold, default_left, children, value, depth, out, rows_per_block):
    n_rows = X.shape[0]
    n_blocks = (n_rows + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        count = min(n_rows, first + rows_per_block) - first
        nodes = np.empty(rows_per_block, dtype=np.uint64)
        _descend_raw(X, first, count, 0, depth, feature, threshold, default_left, children, nodes)
        for i in range(count):
            out[first + i] = value[nodes[i]]


@kernel(parallel=True)
def _tree_values_binned(
    X_binned,
    missing_bin,
    feature,
    threshold_bin,
    default_left,
    children,
    value,
    depth,
    out,
    rows_per_block,
):
    n_rows = X_binned.shape[0]
    n_blocks = (n_rows + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        count = min(n_rows, first + rows_per_block) - first
        nodes = np.empty(rows_per_block, dtype=np.uint64)
        _descend_binned(
            X_binned,
            first,
            count,
            0,
            depth,
            missing_bin,
            feature,
            threshold_bin,
            default_left,
            children,
            nodes,
        )
        for i in range(count):
            out[first + i] = value[nodes[i]]


def _features(X):
    """Float32 features as they are (exact in float64), anything else float64; C order."""
    X = np.asarray(X)
    return np.ascontiguousarray(X, dtype=np.float32 if X.dtype == np.float32 else np.float64)


def predict_forest_raw(X, trees, tree_outputs, margins):
    """Add every tree's leaf value to ``margins[:, tree_output]``, tree by tree in order.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64 or float32  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
    margins : ndarray of shape (n_rows, n_outputs), float64  # IN, OUT

    Returns
    -------
    margins : ndarray  # OUT
    """
    if not len(trees) or X.shape[0] == 0:
        return margins
    forest = forest_of(trees)
    sized(_forest_margins, 10 * X.shape[0] * len(trees))(
        _features(X),
        forest.feature,
        forest.threshold,
        forest.default_left,
        forest.children,
        forest.value,
        forest.tree_offsets,
        forest.depths,
        np.asarray(tree_outputs, dtype=np.int64).reshape(-1),
        margins,
        ROWS_PER_BLOCK,
    )
    return margins


def predict_forest_sparse(indptr, indices, data, n_features, absent, trees, tree_outputs, margins):
    """:func:`predict_forest_raw` of the rows of a CSR matrix, never densified (NumPy
    reference: :func:`gpuboost.backends.numpy.predict.predict_forest_sparse`).

    Parameters
    ----------
    indptr : ndarray of shape (n_rows + 1,), int  # IN
    indices : ndarray of shape (nnz,), int  # IN
        Columns of the stored entries, sorted within each row, no duplicates (canonical).
    data : ndarray of shape (nnz,), float64 or float32  # IN
    n_features : int
    absent : float
        Value of an entry that is not stored: 0.0, or NaN (missing).
    trees, tree_outputs, margins
        As for :func:`predict_forest_raw`; the margins are those of the dense matrix
        (``absent`` where nothing is stored), bit for bit.

    Returns
    -------
    margins : ndarray  # OUT
    """
    n_rows = len(indptr) - 1
    if not len(trees) or n_rows == 0:
        return margins
    forest = forest_of(trees)
    sized(_forest_margins_sparse, 10 * n_rows * len(trees))(
        np.ascontiguousarray(indptr, dtype=np.uint64),
        np.ascontiguousarray(indices),
        _features(data),
        np.float64(absent),
        forest.feature,
        forest.threshold,
        forest.default_left,
        forest.children,
        forest.value,
        forest.tree_offsets,
        forest.depths,
        np.asarray(tree_outputs, dtype=np.int64).reshape(-1),
        margins,
        ROWS_PER_BLOCK,
    )
    return margins


def predict_forest_leaves(X, trees):
    """Leaf index of every row in every tree, shape (n_rows, n_trees) int32."""
    out = np.zeros((X.shape[0], len(trees)), dtype=np.int32)
    if not len(trees) or X.shape[0] == 0:
        return out
    forest = forest_of(trees)
    sized(_forest_leaves, 10 * X.shape[0] * len(trees))(
        _features(X),
        forest.feature,
        forest.threshold,
        forest.default_left,
        forest.children,
        forest.tree_offsets,
        forest.depths,
        out,
        ROWS_PER_BLOCK,
    )
    return out


def predict_tree_raw(X, tree):
    """Leaf value (float64) of every row of raw features ``X`` (n_rows, n_features)."""
    forest = PackedForest([tree])
    out = np.empty(X.shape[0], dtype=np.float64)
    sized(_tree_values, 10 * X.shape[0])(
        _features(X),
        forest.feature,
        forest.threshold,
        forest.default_left,
        forest.children,
        forest.value,
        int(forest.depths[0]),
        out,
        ROWS_PER_BLOCK,
    )
    return out


def predict_tree_binned(X_binned, missing_bin, tree):
    """Leaf value of every row, traversing on binned features.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8  # IN
    missing_bin : int
    tree : Tree

    Returns
    -------
    values : ndarray of shape (n_rows,), float64  # OUT
    """
    forest = PackedForest([tree])
    out = np.empty(X_binned.shape[0], dtype=np.float64)
    sized(_tree_values_binned, 10 * X_binned.shape[0])(
        np.ascontiguousarray(X_binned),
        int(missing_bin),
        forest.feature,
        forest.threshold_bin,
        forest.default_left,
        forest.children,
        forest.value,
        int(forest.depths[0]),
        out,
        ROWS_PER_BLOCK,
    )
    return out
