"""Leaf primitives of the CUDA backend (kernels in ``cuda/leaf.cu``): adding leaf values
to the rows' margins, routing the rows of splits that were never partitioned (both
children leaves) to their leaves' values in the same pass, and the weighted quantile of
every leaf's values (leaf refit of quantile objectives). NumPy versions:
:mod:`gpuboost.backends.numpy.leaf`.

Weighted quantile: the cumulative weights must round exactly as NumPy's sequential
``np.cumsum`` in sorted order, which no parallel scan does. The rows of every leaf are
therefore gathered and sorted on the device (a stable sort by value, ``-0.0``
canonicalized to ``+0.0`` so that a radix sort orders ties as NumPy's comparison sort
does, then a stable sort by leaf), and one thread per leaf sums the sorted weights
sequentially. With unit weights the cumulative weights are exact integers and the
thread binary-searches them instead. The sequential pass costs O(rows of the largest
leaf) per tree, only for quantile objectives with sample weights.
"""

import numpy as np

from ...core.array import to_numpy
from ...core.dtypes import SAMPLE_INDEX_DTYPE, X_BINNED_DTYPE, Y_DTYPE
from ...core.segments import checked_segments, offsets
from .launch import ceil_div, require_array, segment_table, segment_tiles

__all__ = [
    "add_leaf_values",
    "add_split_leaf_values",
    "add_tree_leaf_values",
    "segment_weighted_quantile",
    "LEAF_THREADS_PER_BLOCK",
    "LEAF_ITEMS_PER_THREAD",
    "LEAF_TILE_ROWS",
    "QUANTILE_THREADS_PER_BLOCK",
]

#: Kernel file (``cuda/leaf.cu``) and its kernels.
KERNEL_FILE = "leaf"
ADD_KERNEL = "add_leaf_values"
ADD_SPLIT_KERNEL = "add_split_leaf_values"
GATHER_KERNEL = "gather_segment_rows"
QUANTILE_KERNEL = "select_segment_quantiles"
# The tile geometry of the tiled kernels is compiled into leaf.cu and must equal the
# constants named there (tests/backends/cuda/test_leaf.py checks it).
#: Threads per block of the tiled kernels (leaf.cu: kLeafThreadsPerBlock).
LEAF_THREADS_PER_BLOCK = 128
#: Positions per thread and tile (leaf.cu: kLeafItemsPerThread).
LEAF_ITEMS_PER_THREAD = 8
#: Positions per tile.
LEAF_TILE_ROWS = LEAF_THREADS_PER_BLOCK * LEAF_ITEMS_PER_THREAD
#: Threads (one per leaf) per block of ``select_segment_quantiles`` (any block size).
QUANTILE_THREADS_PER_BLOCK = 128
#: Split feature of a leaf's own segment in ``add_split_leaf_values``' table: its rows
#: all get the segment's left value, no bin is read (leaf.cu).
LEAF_SEGMENT = -1
#: The same for a leaf's segment of ``ahead_indices`` (leaf.cu: kAheadLeafSegment).
AHEAD_LEAF_SEGMENT = -2


def add_leaf_values(xp, launcher, raw, output, sample_indices, begins, ends, values):
    """``raw[sample_indices[begin:end], output] += value`` for every leaf segment.

    One thread per position. Each row must appear at most once in the segments (true
    of a row partition).

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    raw : xp array of shape (n_rows, n_outputs), float64, C order  # IN, OUT
    output : int
        The column of ``raw`` to update.
    sample_indices : xp array of shape (n_positions,), int32  # IN
    begins, ends : sequence of int, shape (n_segments,) (host)
        Disjoint leaf segments.
    values : sequence of float, shape (n_segments,) (host)
        The value of every leaf.
    """
    require_array(xp, raw, Y_DTYPE, "raw", ndim=2)
    require_array(xp, sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0], disjoint=True)
    values = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    if len(values) != len(begins):
        raise ValueError("values needs one entry per segment.")
    n_outputs = raw.shape[1]
    if not 0 <= int(output) < n_outputs:
        raise ValueError(f"output must be in [0, {n_outputs}), got {output!r}.")
    first_tile, n_tiles = segment_tiles(begins, ends, LEAF_TILE_ROWS)
    if n_tiles == 0:
        return
    table = segment_table(xp, [begins, ends, first_tile, values.view(np.int64)])
    launcher(
        KERNEL_FILE,
        ADD_KERNEL,
        n_tiles,
        LEAF_THREADS_PER_BLOCK,
        (
            sample_indices,
            table[0],
            table[1],
            table[2],
            np.int32(len(begins)),
            table[3].view(np.float64),  # the values' bits (one copy for the whole table)
            np.int32(n_outputs),
            np.int32(output),
            raw,
        ),
    )


def add_split_leaf_values(
    xp,
    launcher,
    raw,
    output,
    X_binned_columns,
    missing_bin,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    left_values,
    right_values,
):
    """``raw[row, output] += left_values[i]`` or ``right_values[i]`` for every row of
    segment ``i``, as it goes at split ``i`` (``bin <= threshold_bins[i]``, the missing
    bin by ``default_left[i]``); the rows are not moved (one launch; the definition:
    ``Backend.add_split_leaf_values``, a partition then :func:`add_leaf_values`).

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    raw : xp array of shape (n_rows, n_outputs), float64, C order  # IN, OUT
    output : int
        The column of ``raw`` to update.
    X_binned_columns : xp array of shape (n_features, n_rows), uint8, C order  # IN
        The bins column by column (:func:`.partition.binned_columns`).
    missing_bin : int
    sample_indices : xp array of shape (n_positions,), int32  # IN
    begins, ends : sequence of int, shape (n_segments,) (host)
        Disjoint segments (each row at most once) of the unpartitioned splits.
    features, threshold_bins : sequence of int, shape (n_segments,) (host)
    default_left : sequence of bool, shape (n_segments,) (host)
    left_values, right_values : sequence of float, shape (n_segments,) (host)
        The values of each split's left and right leaf.
    """
    _add_routed_values(
        xp,
        launcher,
        raw,
        output,
        X_binned_columns,
        missing_bin,
        sample_indices,
        begins,
        ends,
        features,
        threshold_bins,
        default_left,
        left_values,
        right_values,
        lowest_feature=0,
    )


def add_tree_leaf_values(
    xp,
    launcher,
    raw,
    output,
    X_binned_columns,
    missing_bin,
    sample_indices,
    leaf_begins,
    leaf_ends,
    leaf_values,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    left_values,
    right_values,
    ahead_leaves=None,
):
    """:func:`add_leaf_values` over the leaves' segments and :func:`add_split_leaf_values`
    over the unpartitioned splits' segments, in one launch with one table copy: the
    leaves' segments are rows of the splits' table whose feature is
    :data:`LEAF_SEGMENT` (every row gets the leaf's value, no bin read). The same
    margins: one addition per row either way.

    Parameters
    ----------
    xp, launcher, output, X_binned_columns, missing_bin, sample_indices
        As for :func:`add_split_leaf_values`.
    raw : xp array of shape (n_rows, n_outputs), float64, C order  # IN, OUT
    leaf_begins, leaf_ends : sequence of int, shape (n_leaves,) (host)
        The leaves' segments.
    leaf_values : sequence of float, shape (n_leaves,) (host)
    begins, ends, features, threshold_bins, default_left, left_values, right_values
        The unpartitioned splits, as for :func:`add_split_leaf_values` (disjoint from
        the leaves' segments).
    ahead_leaves : (ahead_indices, begins, ends, values), optional
        More leaves, whose rows are those of ``ahead_indices`` (an int32 xp array of
        the shape of ``sample_indices``: a row scan's partition ahead,
        :mod:`.partition_ahead`) at their segments (host sequences; disjoint from the
        other segments), in the table as :data:`AHEAD_LEAF_SEGMENT` rows.
    """
    leaf_values = np.ascontiguousarray(leaf_values, dtype=np.float64).reshape(-1)
    leaf_begins = np.asarray(leaf_begins, dtype=np.int64).reshape(-1)
    leaf_ends = np.asarray(leaf_ends, dtype=np.int64).reshape(-1)
    if not len(leaf_begins) == len(leaf_ends) == len(leaf_values):
        raise ValueError("values needs one entry per segment.")
    features = np.asarray(features, dtype=np.int64).reshape(-1)
    if np.any(features < 0):
        raise ValueError("Split features must not be negative.")
    leaf_kinds = np.full(len(leaf_values), LEAF_SEGMENT, dtype=np.int64)
    ahead_indices = sample_indices
    if ahead_leaves is not None:
        ahead_indices, ahead_begins, ahead_ends, ahead_values = ahead_leaves
        ahead_values = np.ascontiguousarray(ahead_values, dtype=np.float64).reshape(-1)
        leaf_begins = np.concatenate([leaf_begins, np.asarray(ahead_begins, np.int64)])
        leaf_ends = np.concatenate([leaf_ends, np.asarray(ahead_ends, np.int64)])
        leaf_values = np.concatenate([leaf_values, ahead_values])
        leaf_kinds = np.concatenate(
            [leaf_kinds, np.full(len(ahead_values), AHEAD_LEAF_SEGMENT, dtype=np.int64)]
        )
    no_split = np.zeros(len(leaf_values), dtype=np.int64)
    _add_routed_values(
        xp,
        launcher,
        raw,
        output,
        X_binned_columns,
        missing_bin,
        sample_indices,
        np.concatenate([leaf_begins, np.asarray(begins, dtype=np.int64).reshape(-1)]),
        np.concatenate([leaf_ends, np.asarray(ends, dtype=np.int64).reshape(-1)]),
        np.concatenate([leaf_kinds, features]),
        np.concatenate([no_split, np.asarray(threshold_bins, dtype=np.int64).reshape(-1)]),
        np.concatenate([no_split.astype(bool), np.asarray(default_left, dtype=bool).reshape(-1)]),
        np.concatenate([leaf_values, np.asarray(left_values, dtype=np.float64).reshape(-1)]),
        np.concatenate([leaf_values, np.asarray(right_values, dtype=np.float64).reshape(-1)]),
        lowest_feature=AHEAD_LEAF_SEGMENT,
        ahead_indices=ahead_indices,
    )


def _add_routed_values(
    xp,
    launcher,
    raw,
    output,
    X_binned_columns,
    missing_bin,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    left_values,
    right_values,
    *,
    lowest_feature,
    ahead_indices=None,
):
    """Check the arguments of :func:`add_split_leaf_values` (features from
    ``lowest_feature``: :data:`LEAF_SEGMENT` admits leaves' segments,
    :data:`AHEAD_LEAF_SEGMENT` also those of ``ahead_indices``), copy the segment table
    to the device and launch ``add_split_leaf_values``."""
    require_array(xp, raw, Y_DTYPE, "raw", ndim=2)
    require_array(xp, X_binned_columns, X_BINNED_DTYPE, "X_binned_columns", ndim=2)
    require_array(xp, sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
    if ahead_indices is None:
        ahead_indices = sample_indices
    require_array(xp, ahead_indices, SAMPLE_INDEX_DTYPE, "ahead_indices", ndim=1)
    if ahead_indices.shape != sample_indices.shape:
        raise ValueError("ahead_indices must have the shape of sample_indices")
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0], disjoint=True)
    n_segments = len(begins)
    n_features, n_rows = X_binned_columns.shape
    features = np.asarray(features, dtype=np.int64).reshape(-1)
    threshold_bins = np.asarray(threshold_bins, dtype=np.int64).reshape(-1)
    default_left = np.asarray(default_left, dtype=bool).reshape(-1).astype(np.int64)
    left_values = np.ascontiguousarray(left_values, dtype=np.float64).reshape(-1)
    right_values = np.ascontiguousarray(right_values, dtype=np.float64).reshape(-1)
    if not (
        len(features)
        == len(threshold_bins)
        == len(default_left)
        == len(left_values)
        == len(right_values)
        == n_segments
    ):
        raise ValueError(
            "features, threshold_bins, default_left, left_values and right_values need one "
            "entry per segment."
        )
    if np.any(features < lowest_feature) or np.any(features >= n_features):
        raise ValueError(f"Split features must be in [{lowest_feature}, {n_features}).")
    n_outputs = raw.shape[1]
    if not 0 <= int(output) < n_outputs:
        raise ValueError(f"output must be in [0, {n_outputs}), got {output!r}.")
    first_tile, n_tiles = segment_tiles(begins, ends, LEAF_TILE_ROWS)
    if n_tiles == 0:
        return
    # One copy of the whole table; the leaf values travel as the bits of int64 rows.
    table = segment_table(
        xp,
        [
            begins,
            ends,
            first_tile,
            features,
            threshold_bins,
            default_left,
            left_values.view(np.int64),
            right_values.view(np.int64),
        ],
    )
    launcher(
        KERNEL_FILE,
        ADD_SPLIT_KERNEL,
        n_tiles,
        LEAF_THREADS_PER_BLOCK,
        (
            X_binned_columns,
            np.int64(n_rows),
            sample_indices,
            ahead_indices,
            table[0],
            table[1],
            table[2],
            table[3],
            table[4],
            table[5],
            np.int32(n_segments),
            np.int32(missing_bin),
            table[6].view(np.float64),
            table[7].view(np.float64),
            np.int32(n_outputs),
            np.int32(output),
            raw,
        ),
    )


def segment_weighted_quantile(xp, launcher, values, weights, sample_indices, begins, ends, alpha):
    """Per segment, ``gpuboost.core.quantile.weighted_quantile`` of its rows' values
    (see the module docstring for how the cumulative weights round as NumPy's).

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    values : xp array of shape (n_rows,), float64  # IN
    weights : xp array of shape (n_rows,), float64, or None  # IN
    sample_indices : xp array of shape (n_positions,), int32  # IN
    begins, ends : sequence of int, shape (n_segments,) (host)
        Disjoint, non-empty leaf segments.
    alpha : float
        In ``[0, 1]``.

    Returns
    -------
    quantiles : ndarray of shape (n_segments,), float64 (host)  # OUT
    """
    alpha = float(alpha)
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"weighted_quantile: alpha must be in [0, 1], got {alpha!r}")
    require_array(xp, sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0], disjoint=True)
    n_segments = len(begins)
    if n_segments == 0:
        return np.zeros(0, dtype=np.float64)
    lengths = ends - begins
    if np.any(lengths == 0):
        raise ValueError("weighted_quantile: values must be a non-empty 1-D array, got shape (0,)")
    output_offsets = offsets(lengths)
    n_gathered = int(output_offsets[-1])
    first_tile, n_tiles = segment_tiles(begins, ends, LEAF_TILE_ROWS)
    table = segment_table(xp, [begins, ends, first_tile, output_offsets])
    rows = xp.empty(n_gathered, dtype=SAMPLE_INDEX_DTYPE)
    segment_of = xp.empty(n_gathered, dtype=np.int32)
    launcher(
        KERNEL_FILE,
        GATHER_KERNEL,
        n_tiles,
        LEAF_THREADS_PER_BLOCK,
        (
            sample_indices,
            table[0],
            table[1],
            table[2],
            table[3],
            np.int32(n_segments),
            rows,
            segment_of,
        ),
    )
    gathered = xp.asarray(values, dtype=Y_DTYPE)[rows]
    if bool(xp.isnan(gathered).any()):
        raise ValueError("weighted_quantile: values contain NaN")
    # Stable sort by value, then stable sort by segment: within each segment the
    # values ascend and ties keep their order, as NumPy's stable argsort. Adding
    # +0.0 turns -0.0 into +0.0 so that a radix sort sees the ties NumPy sees.
    order = xp.argsort(gathered + 0.0, kind="stable")
    order = order[xp.argsort(segment_of[order], kind="stable")]
    sorted_values = xp.ascontiguousarray(gathered[order])
    if weights is None:
        sorted_weights, has_weights = sorted_values, 0  # not read by the kernel
    else:
        sorted_weights = xp.ascontiguousarray(xp.asarray(weights, dtype=Y_DTYPE)[rows][order])
        has_weights = 1
    quantiles = xp.empty(n_segments, dtype=np.float64)
    launcher(
        KERNEL_FILE,
        QUANTILE_KERNEL,
        ceil_div(n_segments, QUANTILE_THREADS_PER_BLOCK),
        QUANTILE_THREADS_PER_BLOCK,
        (
            sorted_values,
            sorted_weights,
            np.int32(has_weights),
            table[3],
            np.int32(n_segments),
            np.float64(alpha),
            quantiles,
        ),
    )
    return to_numpy(quantiles)
