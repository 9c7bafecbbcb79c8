"""Prediction primitive of the CUDA backend (kernels in ``cuda/predict.cu``).

Tree traversal on raw float64 features and on binned features, one thread per row
(grid-stride loops), equal to :mod:`gpuboost.backends.numpy.predict` bit for bit. The
trees are copied to the device as flat per-node tables (:func:`pack_trees`); a forest
is its trees' tables concatenated, and the forest kernel adds the trees' values to each
margin in tree order, as the NumPy backend does.
"""

import numpy as np

from ...core.dtypes import X_BINNED_DTYPE, X_DTYPE
from ...core.profiling import nvtx_range
from ...core.segments import offsets
from ..categorical import category_code_limit
from .binned_rows import kernel_rows
from .launch import grid_stride_blocks, require_array, segment_table

__all__ = [
    "pack_trees",
    "predict_tree_binned",
    "predict_tree_raw",
    "predict_forest_raw",
    "predict_forest_leaves",
    "PREDICT_THREADS_PER_BLOCK",
    "NODE_INT_ROWS",
    "NODE_FLOAT_ROWS",
]

#: Kernel file (``cuda/predict.cu``).
KERNEL_FILE = "predict"
#: Threads per block of the prediction kernels (any 1-D launch shape works).
PREDICT_THREADS_PER_BLOCK = 256
#: Rows of the packed int32 node table of predict.cu, in order: the tree's arrays, then
#: each node's category set (its first word in the forest's ``cat_bits``, its number of
#: words: 0 at a numeric split) and the tree's code limit
#: (:func:`gpuboost.backends.categorical.category_code_limit`).
NODE_INT_ROWS = (
    "feature",
    "left_child",
    "right_child",
    "threshold_bin",
    "default_left",
    "cat_begin",
    "cat_words",
    "code_limit",
)
#: Rows of the packed float64 node table of predict.cu, in order.
NODE_FLOAT_ROWS = ("threshold", "value")


def _node_ints(tree, cat_base):
    """The :data:`NODE_INT_ROWS` of one tree (host int64 rows), its sets' words starting
    at ``cat_base`` in the forest's ``cat_bits``."""
    internal = tree.feature >= 0
    words = np.where(internal, np.diff(tree.cat_offsets), 0)
    return np.stack(
        [
            tree.feature,
            tree.left_child,
            tree.right_child,
            tree.threshold_bin,
            tree.default_left,
            cat_base + tree.cat_offsets[:-1],
            words,
            np.full(tree.n_nodes, category_code_limit(tree)),
        ]
    ).astype(np.int64)


def pack_trees(xp, trees, n_features):
    """Device node tables of ``trees`` (the layout of ``cuda/predict.cu``).

    Returns
    -------
    node_ints : xp array of shape (len(NODE_INT_ROWS), n_nodes), int32
    node_floats : xp array of shape (len(NODE_FLOAT_ROWS), n_nodes), float64
    cat_bits : xp array of shape (max(1, n_words),), uint32
        The trees' category sets concatenated (one zero word when there are none).
    node_offsets : ndarray of shape (n_trees + 1,), int64 (host)
        Tree ``t`` owns nodes ``node_offsets[t] .. node_offsets[t + 1] - 1``.
    """
    for tree in trees:
        internal = tree.feature >= 0
        if np.any(tree.feature[internal] >= n_features):
            raise ValueError(
                f"A tree splits on feature {int(tree.feature.max())}, but the "
                f"data have {n_features} features."
            )
    node_offsets = offsets([tree.n_nodes for tree in trees])
    cat_bases = offsets([len(tree.cat_bits) for tree in trees])
    node_ints = np.concatenate(
        [_node_ints(tree, base) for tree, base in zip(trees, cat_bases[:-1])], axis=1
    )
    if np.abs(node_ints).max(initial=0) > np.iinfo(np.int32).max:
        raise ValueError("The trees' node tables exceed the int32 range of predict.cu.")
    node_floats = np.stack(
        [
            np.concatenate([getattr(tree, name) for tree in trees]).astype(np.float64)
            for name in NODE_FLOAT_ROWS
        ]
    )
    cat_bits = (
        np.concatenate([tree.cat_bits for tree in trees]).astype(np.uint32)
        if cat_bases[-1]
        else np.zeros(1, dtype=np.uint32)
    )
    node_ints = node_ints.astype(np.int32)
    return xp.array(node_ints), xp.array(node_floats), xp.array(cat_bits), node_offsets


def _launch_over_rows(launcher, kernel_name, n_rows, args):
    launcher(
        KERNEL_FILE,
        kernel_name,
        grid_stride_blocks(n_rows, PREDICT_THREADS_PER_BLOCK),
        PREDICT_THREADS_PER_BLOCK,
        args,
    )


def _check_features(xp, X):
    require_array(xp, X, X_DTYPE, "X (from prepare_features)", ndim=2)
    return X.shape


def predict_tree_binned(xp, launcher, X_binned, missing_bin, tree):
    """Leaf value of every row, traversing on binned features.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X_binned : xp array of shape (n_rows, n_features), uint8  # IN
        C-contiguous or the padded device layout (:mod:`.binned_rows`).
    missing_bin : int
    tree : Tree

    Returns
    -------
    values : xp array of shape (n_rows,), float64  # OUT
    """
    with nvtx_range("predict_tree_binned"):
        rows, row_stride = kernel_rows(xp, X_binned)
        require_array(xp, rows, X_BINNED_DTYPE, "X_binned", ndim=2)
        n_rows, n_features = X_binned.shape
        values = xp.empty(n_rows, dtype=np.float64)
        if n_rows == 0:
            return values
        node_ints, node_floats, cat_bits, _ = pack_trees(xp, [tree], n_features)
        _launch_over_rows(
            launcher,
            "predict_tree_values_binned",
            n_rows,
            (
                rows,
                np.int64(n_rows),
                np.int64(row_stride),
                np.int32(missing_bin),
                node_ints,
                node_floats,
                cat_bits,
                np.int64(tree.n_nodes),
                values,
            ),
        )
        return values


def predict_tree_raw(xp, launcher, X, tree):
    """Leaf value of every row of raw features.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X : xp array of shape (n_rows, n_features), float64, C order  # IN
    tree : Tree

    Returns
    -------
    values : xp array of shape (n_rows,), float64  # OUT
    """
    with nvtx_range("predict_tree_raw"):
        n_rows, n_features = _check_features(xp, X)
        values = xp.empty(n_rows, dtype=np.float64)
        if n_rows == 0:
            return values
        node_ints, node_floats, cat_bits, _ = pack_trees(xp, [tree], n_features)
        _launch_over_rows(
            launcher,
            "predict_tree_values_raw",
            n_rows,
            (
                X,
                np.int64(n_rows),
                np.int32(n_features),
                node_ints,
                node_floats,
                cat_bits,
                np.int64(tree.n_nodes),
                values,
            ),
        )
        return values


def predict_forest_raw(xp, launcher, X, trees, tree_outputs, margins):
    """Add every tree's leaf value to ``margins[:, tree_output]``, tree by tree in order.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X : xp array of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
        The margin column of every tree.
    margins : xp array of shape (n_rows, n_outputs), float64  # IN, OUT
        Updated in place (through a contiguous copy when it is not C-contiguous).

    Returns
    -------
    margins : xp array  # OUT
    """
    with nvtx_range("predict_forest"):
        n_rows, n_features = _check_features(xp, X)
        trees = list(trees)
        tree_outputs = np.asarray(tree_outputs, dtype=np.int64).reshape(-1)
        if len(tree_outputs) != len(trees):
            raise ValueError("tree_outputs needs one entry per tree.")
        if margins.ndim != 2 or margins.shape[0] != n_rows:
            raise ValueError(f"margins must have shape ({n_rows}, n_outputs), got {margins.shape}.")
        n_outputs = margins.shape[1]
        if np.any(tree_outputs < 0) or np.any(tree_outputs >= n_outputs):
            raise ValueError(f"tree_outputs must be in [0, {n_outputs}).")
        if not trees or n_rows == 0:
            return margins
        contiguous = margins.dtype == np.float64 and margins.flags.c_contiguous
        work = margins if contiguous else xp.ascontiguousarray(margins, dtype=np.float64)
        node_ints, node_floats, cat_bits, node_offsets = pack_trees(xp, trees, n_features)
        tree_table = segment_table(xp, [node_offsets, tree_outputs])
        _launch_over_rows(
            launcher,
            "predict_forest_margins",
            n_rows,
            (
                X,
                np.int64(n_rows),
                np.int32(n_features),
                node_ints,
                node_floats,
                cat_bits,
                np.int64(node_offsets[-1]),
                tree_table[0],
                tree_table[1],
                np.int32(len(trees)),
                np.int32(n_outputs),
                work,
            ),
        )
        if work is not margins:
            margins[...] = work
        return margins


def predict_forest_leaves(xp, launcher, X, trees):
    """Leaf index of every row in every tree.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X : xp array of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree

    Returns
    -------
    leaves : xp array of shape (n_rows, n_trees), int32  # OUT
    """
    with nvtx_range("predict_forest_leaves"):
        n_rows, n_features = _check_features(xp, X)
        trees = list(trees)
        leaves = xp.empty((n_rows, len(trees)), dtype=np.int32)
        if not trees or n_rows == 0:
            return leaves
        node_ints, node_floats, cat_bits, node_offsets = pack_trees(xp, trees, n_features)
        _launch_over_rows(
            launcher,
            "predict_forest_leaf_indices",
            n_rows,
            (
                X,
                np.int64(n_rows),
                np.int32(n_features),
                node_ints,
                node_floats,
                cat_bits,
                np.int64(node_offsets[-1]),
                xp.array(node_offsets),
                np.int32(len(trees)),
                leaves,
            ),
        )
        return leaves
