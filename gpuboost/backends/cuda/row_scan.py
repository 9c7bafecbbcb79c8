"""Split scan of small nodes straight from their rows on the CUDA backend (kernel
``row_scan_features`` in ``cuda/row_scan.cu``; the definition:
``Backend.find_best_splits_of_rows``, ``build_histograms`` then ``find_best_splits``).

A node's global histogram is ``n_features * n_bins`` cells of 24 bytes (172 KB for 28
features x 256 bins) whatever its rows: deep in a tree, zeroing it, flushing into it,
subtracting it from the parent for the sibling and scanning it move about six such tables
per pair of children, more than the rows. Here one block per (node, feature group) adds
the node's rows to a shared-memory histogram (the layout of ``cuda/histogram.cu``) and
scans it in place with the split scan's code, and writes the node's record when one block
holds all its features (one launch per batch; with feature groups the per-feature bests
go through ``split_select_nodes`` as after ``split_scan_features``). No histogram in global
memory: per node only its rows (sample index, gradient, hessian,
bins) are read and ``n_features`` best candidates (48 B each) plus 3 sums written.

The records equal those of ``build_histograms`` + ``find_best_splits`` bit for bit: the
shared sums are exact integers and the scan is the same device code.

On a device with thread-block clusters (sm_90, and the emulation), a batch with a node
above ``ROW_SCAN_MAX_ROWS_PER_CELL * n_bins`` rows goes to ``row_scan_cluster`` instead:
a cluster of :data:`.histogram.CLUSTER_BLOCKS` blocks per node, each adding an eighth of
its rows to its own shared cells of all features, then scanning a slice of the features
over the cluster's summed cells (distributed shared memory); so nodes of up to
``CLUSTER_BLOCKS`` times as many rows are scanned from their rows with as many blocks.

:func:`row_scan_max_rows` is the backend's ``row_scan_max_rows`` (see its docstring for
the choice); nodes beyond the kernel's rows (:data:`MAX_NODE_ROWS`, ``CLUSTER_BLOCKS``
times that in clusters), or bins whose shared cells do not fit one feature, are left to
the definition (``find_best_splits_of_rows`` returns None).
"""

import numpy as np

from ...core.array import to_numpy
from ...core.dtypes import HIST_FIELDS, SAMPLE_INDEX_DTYPE
from ...core.gain import no_split_records
from ...core.segments import checked_segments
from .binned_rows import ROW_WORD_BYTES
from .carried_segments import segment_table
from .histogram import (
    MAX_ROWS_PER_PASS,
    SHARED_BYTES_PER_CELL,
    allow_dynamic_shared,
    check_row_inputs,
    device_cluster_blocks,
    device_limits,
    shared_feature_stride,
)
from .launch import MAX_GRID_X, ceil_div, require_array
from .split_scan import (
    FEATURE_BEST_WORDS,
    SCAN_MAX_THREADS,
    SplitScanScratch,
    checked_words,
    nothing_to_scan,
    records_from_words,
    scan_options,
    scan_scalars,
    scan_threads,
    select_words,
)

__all__ = [
    "find_best_splits_of_rows",
    "row_scan_words",
    "partitions_ahead",
    "row_scan_max_rows",
    "row_scan_groups",
    "ROW_SCAN_MAX_ROWS_PER_CELL",
    "MAX_NODE_ROWS",
]

#: Kernel file (``cuda/row_scan.cu``) and its kernels.
KERNEL_FILE = "row_scan"
KERNEL = "row_scan_features"
CLUSTER_KERNEL = "row_scan_cluster"
#: How many times the per-block bound a cluster of ``CLUSTER_BLOCKS`` blocks takes
#: (:func:`row_scan_max_rows`): each block of the cluster at most the rows of a block at
#: the per-block bound. Binary depth 8 at 200k x 28 (``device_ops.py``, round 1), bytes by
#: bound: with whole-row loads and the partition ahead 16,384 rows (4) 135.6 MB, 32,768
#: (8) 133.7 MB, 65,536 (16) 137.5 MB; before them 8,192 (2) 167.2 MB, 16,384 (4) 164.5
#: MB, 32,768 (8) 168.3 MB (a mean of two rounds).
CLUSTER_BOUND_FACTOR = 8
#: Dynamic shared bytes of ``row_scan_cluster`` after its planes: the scan's cells,
#: gains and keys (``ROW_SCAN_CLUSTER_SCRATCH_BYTES`` in row_scan.cu).
CLUSTER_SCRATCH_BYTES = 9216

#: Shared bytes of ``row_scan_cluster``'s partition ahead before its saved rows (the
#: ``AheadSplit`` of row_scan.cu: the node's split and the block's left rows).
AHEAD_SPLIT_BYTES = 16

#: Most rows of a node scanned from its rows: the shared cells hold one pass of the
#: histogram kernel (``MAX_ROWS_PER_PASS``: the packed count word must not wrap).
MAX_NODE_ROWS = MAX_ROWS_PER_PASS
#: The parents whose children are scanned from their rows: at most this many rows per bin
#: of one feature, ``16 * n_bins`` (4,096 rows for 256 bins). See :func:`row_scan_max_rows`.
ROW_SCAN_MAX_ROWS_PER_CELL = 16


def row_scan_groups(n_features, n_bins, shared_limit):
    """``(features_per_group, n_groups)``: the fewest balanced feature groups whose shared
    cells (``shared_feature_stride(n_bins)`` cells of ``SHARED_BYTES_PER_CELL`` bytes per
    feature) fit ``shared_limit`` dynamic bytes; ``(0, 0)`` when not one feature fits."""
    max_features = int(shared_limit) // (shared_feature_stride(n_bins) * SHARED_BYTES_PER_CELL)
    if max_features < 1 or n_features < 1:
        return 0, 0
    n_groups = ceil_div(n_features, max_features)
    return ceil_div(n_features, n_groups), n_groups


def cluster_shared_bytes(n_features, n_bins):
    """Dynamic shared bytes of a ``row_scan_cluster`` block before the partition ahead:
    every feature's shared cells (8-byte aligned), :data:`CLUSTER_SCRATCH_BYTES`, then
    every feature's best candidate (``FEATURE_BEST_WORDS`` int64; rank 0's are the
    node's)."""
    planes = int(n_features) * shared_feature_stride(n_bins) * SHARED_BYTES_PER_CELL
    bests = int(n_features) * FEATURE_BEST_WORDS * np.dtype(np.int64).itemsize
    return ceil_div(planes, 8) * 8 + CLUSTER_SCRATCH_BYTES + bests


def cluster_blocks(launcher, n_features, n_bins):
    """Blocks per node of ``row_scan_cluster`` on this device: the device's cluster size
    (:func:`.histogram.device_cluster_blocks`) where a block's shared memory holds every
    feature's cells and the scratch (the kernel has no static shared memory), else 0 (no
    cluster scan)."""
    blocks = device_cluster_blocks(launcher.mode)
    _, optin_limit = device_limits(launcher.mode)
    if blocks <= 1 or n_features < 1 or cluster_shared_bytes(n_features, n_bins) > optin_limit:
        return 0
    return blocks


#: Bytes of a sample index.
SAMPLE_INDEX_BYTES = np.dtype(SAMPLE_INDEX_DTYPE).itemsize


def _ahead_row_bytes(n_features):
    """Shared bytes a saved row costs the partition ahead: its index and its bins' words."""
    return SAMPLE_INDEX_BYTES + ROW_WORD_BYTES * ceil_div(int(n_features), ROW_WORD_BYTES)


def partitions_ahead(launcher, n_features, n_bins, begins, ends):
    """Whether a row scan of these segments partitions its nodes ahead
    (``row_scan_cluster`` with ``ahead_indices``: each node's rows split by its record
    into a new array): a batch the cluster kernel takes (each node at most ``clusters *
    MAX_NODE_ROWS`` rows, on a device with clusters) where a block can keep at least one
    row beside its cells. Then every node is: a block keeps the first rows of its share
    in shared memory (:func:`_ahead_layout`) and reads the split feature's byte of the
    others again."""
    lengths = np.asarray(ends, dtype=np.int64) - np.asarray(begins, dtype=np.int64)
    clusters = cluster_blocks(launcher, n_features, n_bins)
    if not clusters or not len(lengths) or int(lengths.max()) > clusters * MAX_NODE_ROWS:
        return False
    capacity, _ = _ahead_layout(launcher, n_features, n_bins, int(lengths.max()), clusters)
    return capacity > 0


def _ahead_layout(launcher, n_features, n_bins, largest, clusters):
    """``(capacity, flag_words)`` of a partition ahead whose largest node has ``largest``
    rows: the rows a ``row_scan_cluster`` block keeps (its index and bins' words; at most
    its share, as many as fit the device's shared memory beside the cells, the scratch,
    the bests, the split and a bit per row of the share) and the 32-bit words of those
    bits."""
    share = ceil_div(int(largest), int(clusters))
    flag_words = ceil_div(share, 32)
    _, optin_limit = device_limits(launcher.mode)
    free = (
        optin_limit - cluster_shared_bytes(n_features, n_bins) - AHEAD_SPLIT_BYTES - 4 * flag_words
    )
    return min(share, max(free, 0) // _ahead_row_bytes(n_features)), flag_words


def _shared_limit(launcher):
    """Dynamic shared bytes a ``row_scan_features`` block may use: the device's opt-in
    limit less the kernel's static shared memory (the scan's cells and arg-max)."""
    _, optin_limit = device_limits(launcher.mode)
    return optin_limit - launcher.kernel(KERNEL_FILE, KERNEL).shared_size_bytes


def row_scan_max_rows(launcher, n_features, n_bins):
    """The most rows of a parent whose children are scanned from their rows
    (``Backend.row_scan_max_rows``): ``ROW_SCAN_MAX_ROWS_PER_CELL * n_bins`` (4,096 rows
    for 256 bins), 0 when one feature's shared cells do not fit a block.

    The choice. A pair of children costs the histogram path about six tables of
    ``n_features * n_bins * 24`` bytes in global memory whatever its rows (the built
    child's zeroing and flush, the subtraction's parent and child reads and sibling write,
    two scan reads: about 1 MB for 28 x 256), against about 40 bytes per row here (sample
    index, gradient, hessian, the row's bins), so by traffic the rows win up to ~25,000 rows
    per pair. The limit is parallelism: one block per node (and feature group) runs its
    node's rows alone, 256 threads adding ``rows * n_features`` pairs to shared memory,
    and a level with fewer nodes than SMs leaves SMs idle (132 on an H100). Below
    ``16 * n_bins`` rows a child is at most 16 rows a thread per feature, about the cost
    of the block's fixed work (zeroing ``n_features * n_bins`` cells and scanning them), so
    a block is short; and the first level routed here has at least ``n_rows / 4,096``
    nodes (49 at 200,000 rows, 128 in the next level), while a level of bigger nodes
    would put a few long blocks on a mostly idle device where the histogram kernel spreads
    every node's rows over all SMs.

    With thread-block clusters (:func:`cluster_blocks`) a node takes a cluster of 8 blocks
    (``row_scan_cluster``), each with at most the rows of one block at the bound above:
    the bound is :data:`CLUSTER_BOUND_FACTOR` (8) times that, 32,768 rows for 256 bins.
    By traffic the rows win up to about that: a pair's tables (about 0.7 MB with the
    cluster flush) against the larger child's rows read instead of subtracted (about 72 B
    a gathered row with whole-row loads, less the partition the scan does ahead); the
    measurements at 200k rows are at the constant.
    """
    features_per_group, _ = row_scan_groups(n_features, n_bins, _shared_limit(launcher))
    if features_per_group == 0:
        return 0
    per_block = min(ROW_SCAN_MAX_ROWS_PER_CELL * int(n_bins), MAX_NODE_ROWS)
    if cluster_blocks(launcher, n_features, n_bins):
        return per_block * CLUSTER_BOUND_FACTOR
    return per_block


def find_best_splits_of_rows(
    xp,
    launcher,
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    split_params,
    feature_mask=None,
    node_bounds=None,
    *,
    shared_memory_limit=None,
    scratch=None,
    ahead_indices=None,
):
    """Best split of every node of a batch from its rows, on the device, no histogram kept.

    Parameters
    ----------
    xp : module
        ``cupy`` (GPU) or the emulated device namespace.
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X_binned : array of shape (n_rows, n_features), uint8  # IN
        Row-major bins (``Dataset.X_binned``): C-contiguous or the padded device layout
        (:mod:`.binned_rows`).
    quantized_gradients, quantized_hessians : array of shape (n_rows,), int32  # IN
        As for :func:`.histogram.build_histograms` (read as one int2 per row; copied
        into one pair array unless they are the halves of one).
    sample_indices : array of shape (n_samples,), int32  # IN
        Node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : sequence of int, length n_nodes (host)
    n_bins : int
        Histogram width (``max_bin + 1``), at most ``MAX_BIN_LIMIT + 1``.
    n_value_bins, missing_bin, scale_gradients, scale_hessians, split_params,
    feature_mask, node_bounds
        As for :func:`gpuboost.backends.cuda.split_scan.find_best_splits`.
    shared_memory_limit : int, optional
        Dynamic shared bytes a block may use (tests force feature groups with a small
        value); default: the device's opt-in limit less the kernel's static shared memory.
    scratch : gpuboost.backends.cuda.split_scan.SplitScanScratch, optional
        Where the per-(node, feature) bests go (published with atomics, so in memory
        written before: see there); a new one when None.
    ahead_indices : array of shape (n_samples,), int32, optional  # OUT
        The partition ahead (:func:`row_scan_words`).

    Returns
    -------
    records : host ndarray of shape (n_nodes,), SPLIT_RECORD_DTYPE or None  # OUT
        Those of ``build_histograms`` + ``find_best_splits`` of the same segments, bit
        for bit; None when this kernel cannot take the batch (a node above
        :data:`MAX_NODE_ROWS` rows, or not one feature's cells fit the shared memory):
        the caller then uses the definition. (:func:`row_scan_words`, then one copy.)
    """
    if nothing_to_scan(len(begins), missing_bin):  # as the split scan
        return no_split_records(len(begins))
    words = row_scan_words(
        xp,
        launcher,
        X_binned,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        begins,
        ends,
        n_bins,
        n_value_bins,
        missing_bin,
        scale_gradients,
        scale_hessians,
        split_params,
        feature_mask,
        node_bounds,
        shared_memory_limit=shared_memory_limit,
        scratch=scratch,
        ahead_indices=ahead_indices,
    )
    return None if words is None else records_from_words(to_numpy(words))


def row_scan_words(
    xp,
    launcher,
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    split_params,
    feature_mask=None,
    node_bounds=None,
    *,
    shared_memory_limit=None,
    scratch=None,
    words=None,
    node_table=None,
    ahead_indices=None,
):
    """Launch the row scan of a batch (:func:`find_best_splits_of_rows`, whose arguments
    it takes, for a batch with something to scan: ``split_scan.nothing_to_scan`` false);
    the records stay on the device.

    words : xp array of shape (n_nodes, RECORD_WORDS), int64, optional  # OUT
        Where the records go (a view of a larger array, so that two scans share one
        copy to the host: ``CudaBackend.find_best_splits_mixed``); a new array when None.
    node_table : xp array of shape (2 * n_nodes,), int64, optional  # IN
        ``[begins | ends]`` already on the device (:mod:`.carried_segments`: sent in the
        level's histogram-build copy); None: copied here (one host-to-device copy).
    ahead_indices : xp array of shape (n_samples,), int32, optional  # OUT
        The partition ahead (where :func:`partitions_ahead`): the nodes that have a split get their
        positions of this array written with their rows split by their records, as
        ``partition.move_partitioned_rows`` writes them once the records are applied
        (the scan kernel in clusters for any node size then); other positions are not
        written. None: no partition ahead.

    Returns
    -------
    words : xp array of shape (n_nodes, RECORD_WORDS), int64, or None  # OUT
        ``words``, written by the launches; None (no launch) when this kernel cannot
        take the batch.
    """
    rows, row_stride, pairs = check_row_inputs(
        xp, X_binned, quantized_gradients, quantized_hessians, sample_indices
    )
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0])
    n_nodes = len(begins)
    n_features, n_bins, missing_bin = int(X_binned.shape[1]), int(n_bins), int(missing_bin)
    if nothing_to_scan(n_nodes, missing_bin):
        raise ValueError("nothing to scan: no node, or no candidate bin")
    if n_features == 0:
        raise ValueError("X_binned has no feature")
    if not 0 <= missing_bin < n_bins:
        raise ValueError(f"missing_bin={missing_bin} is not a bin of {n_bins}-bin histograms")
    if n_bins > SCAN_MAX_THREADS:
        raise ValueError(f"at most {SCAN_MAX_THREADS} bins are supported, got {n_bins}")
    if shared_memory_limit is None:
        shared_memory_limit = _shared_limit(launcher)
    features_per_group, n_groups = row_scan_groups(n_features, n_bins, shared_memory_limit)
    largest = int((ends - begins).max())
    clusters = cluster_blocks(launcher, n_features, n_bins)
    feature_stride = shared_feature_stride(n_bins)
    ahead = ahead_indices is not None and partitions_ahead(
        launcher, n_features, n_bins, begins, ends
    )
    if ahead:
        require_array(xp, ahead_indices, SAMPLE_INDEX_DTYPE, "ahead_indices", ndim=1)
        if ahead_indices.shape != sample_indices.shape:
            raise ValueError("ahead_indices must have the shape of sample_indices")
    if ahead or (
        clusters
        and min(ROW_SCAN_MAX_ROWS_PER_CELL * n_bins, MAX_NODE_ROWS) < largest
        and largest <= clusters * MAX_NODE_ROWS
    ):  # a cluster per node, every feature in each block
        kernel, blocks_per_node = CLUSTER_KERNEL, clusters
        # The rows a block keeps for the partition ahead, and its bits of their sides.
        capacity, flag_words = (
            _ahead_layout(launcher, n_features, n_bins, largest, clusters) if ahead else (0, 0)
        )
        grouping = ()
        ahead_arguments = (
            np.int32(capacity),
            np.int32(flag_words),
            ahead_indices if ahead else sample_indices,
        )
        outputs = ()  # the bests stay in the cluster's shared memory
        shared_bytes = cluster_shared_bytes(n_features, n_bins)
        if ahead:
            shared_bytes += (
                AHEAD_SPLIT_BYTES + 4 * flag_words + capacity * _ahead_row_bytes(n_features)
            )
    elif n_groups and largest <= MAX_NODE_ROWS:  # a block per (node, feature group)
        kernel, blocks_per_node = KERNEL, n_groups
        grouping = (np.int32(features_per_group), np.int32(n_groups))
        ahead_arguments = ()
        scratch = SplitScanScratch() if scratch is None else scratch
        outputs = (scratch.feature_best(xp, n_nodes, n_features),)
        shared_bytes = features_per_group * feature_stride * SHARED_BYTES_PER_CELL
    else:
        return None
    if n_nodes * blocks_per_node > MAX_GRID_X:
        raise ValueError(f"{n_nodes} nodes x {blocks_per_node} blocks exceed the grid limit")
    options = scan_options(
        xp, n_value_bins, n_nodes, n_features, split_params, feature_mask, node_bounds
    )
    node_table = _device_node_table(xp, node_table, begins, ends)
    node_sums = xp.empty((n_nodes, HIST_FIELDS), dtype=np.int64)
    words = checked_words(xp, words, n_nodes)
    allow_dynamic_shared(launcher.kernel(KERNEL_FILE, kernel), shared_bytes)
    launcher(
        KERNEL_FILE,
        kernel,
        n_nodes * blocks_per_node,
        scan_threads(n_bins),
        (
            rows,
            np.int64(row_stride),
            pairs,
            sample_indices,
            node_table[:n_nodes],
            node_table[n_nodes:],
            np.int32(n_features),
            *grouping,
            np.int32(feature_stride),
            *options,
            *scan_scalars(n_bins, missing_bin, scale_gradients, scale_hessians, split_params),
            *ahead_arguments,
            *outputs,
            node_sums,
            words,
        ),
        shared_mem=shared_bytes,
    )
    if kernel == CLUSTER_KERNEL or n_groups == 1:  # the kernel wrote the records
        return words
    return select_words(launcher, *outputs, node_sums, words)


def _device_node_table(xp, node_table, begins, ends):
    """``[begins | ends]`` on the device: ``node_table`` (checked) or one copy of them."""
    n_nodes = len(begins)
    if node_table is None:
        return xp.asarray(segment_table(begins, ends))  # one host-to-device copy
    if node_table.shape != (2 * n_nodes,) or node_table.dtype != np.int64:
        raise ValueError(f"node_table must be int64 of shape ({2 * n_nodes},)")
    return node_table
