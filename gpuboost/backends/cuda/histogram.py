"""Histogram primitive of the CUDA backend (kernels in ``cuda/histogram.cu``).

Builds the same int64 histograms as
:func:`gpuboost.backends.numpy.histogram.build_histograms` (exact integer sums, so
equal bit for bit) with one kernel launch for a whole batch of nodes. Works with
``xp = cupy`` on a GPU and the emulated device namespace under the CPU emulation
(``GPUBOOST_EMULATE_CUDA=1``).

Strategy (details in ``cuda/histogram.cu``):

* each block privatizes the histogram of a *feature group* in shared memory
  (16 bytes per (feature, bin) cell in four planes of 32-bit words, native 32-bit
  atomics, exact) for a chunk of one node's rows, then flushes the non-empty cells to
  global memory, consecutive threads on consecutive int64 words;
* on a device with thread-block clusters (sm_90, and the emulation), the blocks of a
  cluster of :data:`CLUSTER_BLOCKS` sum their shared histograms over distributed shared
  memory and flush once per cluster (``histogram_cluster_*``), a tenth of the tables;
* features are split into the fewest groups whose cells fit the device's
  opt-in shared-memory limit (one group for 28 features x 256 bins on sm_80);
* when not even one feature's bins fit, a global-memory-atomics kernel is used;
* the siblings of built children (:func:`build_children_histograms`) are
  ``parent - built``, written by one kernel into the same batch;
* the built half of a batch must be zero before the build adds into it. Depthwise, the
  grower says how many pairs the next level may build (``next_pairs``, an upper bound):
  the subtraction kernel of this level (the root's zeroing, for the first level) then
  also zeroes the built half of the next level's batch, which :class:`ZeroedBatches`
  keeps until that level takes it. One zeroing operation per tree instead of one per
  level, the same bytes where the bound is met (it is the nodes that may split).

Only per-node bounds and the block prefix (a few integers per node) cross from
host to device; the result stays on the device.
"""

import threading

import numpy as np

from ...core.dtypes import (
    GRAD_QUANT_DTYPE,
    HIST_DTYPE,
    HIST_FIELDS,
    SAMPLE_INDEX_DTYPE,
    X_BINNED_DTYPE,
)
from ...core.segments import checked_segments, offsets
from ..emulation.device_profiles import current_profile
from ..emulation.traffic import SECTOR_BYTES
from .binned_rows import word_rows
from .launch import EMULATED, MAX_GRID_X, ceil_div, require_array
from .occupancy import clusters_placeable
from .quantize import gradient_pairs

__all__ = [
    "build_histograms",
    "build_children_histograms",
    "children_build_table",
    "ZeroedBatches",
    "SiblingDebt",
    "SiblingDebts",
    "HistogramPlan",
    "plan_histograms",
    "device_limits",
    "device_cluster_blocks",
    "device_has_clusters",
    "shared_feature_stride",
    "allow_dynamic_shared",
    "check_row_inputs",
    "SHARED_BYTES_PER_CELL",
    "MAX_BLOCK_THREADS",
    "MAX_ROWS_PER_PASS",
]

#: Kernel file (``cuda/histogram.cu``) and its kernels.
KERNEL_FILE = "histogram"
SHARED_KERNEL = "histogram_shared_memory"
COLUMNS_KERNEL = "histogram_shared_columns"
CLUSTER_KERNEL = "histogram_cluster_memory"
CLUSTER_COLUMNS_KERNEL = "histogram_cluster_columns"
#: Kernel of a plan, by (plan.columns, plan flushes per cluster).
_SHARED_KERNELS = {
    (False, False): SHARED_KERNEL,
    (True, False): COLUMNS_KERNEL,
    (False, True): CLUSTER_KERNEL,
    (True, True): CLUSTER_COLUMNS_KERNEL,
}
GLOBAL_KERNEL = "histogram_global_memory"
SUBTRACT_KERNEL = "histogram_subtract_siblings"

#: Shared-memory bytes of one (feature, bin) cell: four 32-bit words, one in each
#: plane (``SHARED_WORDS_PER_CELL`` in histogram.cu).
SHARED_BYTES_PER_CELL = 16
#: Threads per block (``HISTOGRAM_MAX_BLOCK_THREADS`` in histogram.cu, its
#: ``__launch_bounds__``). Few blocks fit an SM when the shared histogram is
#: large, so blocks are large to keep enough warps in flight.
MAX_BLOCK_THREADS = 1024
#: Rows a block accumulates before it flushes (``MAX_ROWS_PER_PASS`` in
#: histogram.cu; only documented here: the kernel loops over passes itself).
MAX_ROWS_PER_PASS = 1 << 15
#: Blocks aimed for per streaming multiprocessor and feature group. Blocks take equal
#: ranges of the batch's rows (across nodes), so they need no extra waves to even out
#: unequal nodes; every block flushes its shared histogram, so fewer blocks move fewer
#: bytes. Two: one wave on an H100 (228 KiB of shared memory per SM holds two blocks of
#: 28 features x 257 cells x 16 B), two equal waves on an A100 (one per SM).
TARGET_BLOCKS_PER_SM = 2
#: Fewest rows per block: below this, clearing and flushing the block's shared
#: histogram (up to n_features x n_bins cells) costs more than the rows.
MIN_ROWS_PER_BLOCK = 1024
#: Bytes a block reads per position besides the bins, in the planner's estimate of a
#: build (:func:`build_bytes`): the position's row id (4) and its (gradient, hessian)
#: pair (8), both coalesced where the positions hold rows in order.
POSITION_BYTES = 4 + 8
#: Bytes a flushed cell adds into global memory (three int64 fields).
FLUSHED_CELL_BYTES = HIST_FIELDS * 8
#: Positions a warp takes at once in the columns kernel (its lanes' bins of one feature:
#: one sector when the block's first position is a multiple of it).
WARP_POSITIONS = 32
#: Dynamic shared memory a kernel may use without opting in (all CUDA devices).
DEFAULT_SHARED_BYTES = 48 * 1024
#: Blocks of a thread-block cluster of the cluster kernels (``HISTOGRAM_CLUSTER_BLOCKS``
#: in histogram.cu; 8, the portable cluster size of sm_90).
CLUSTER_BLOCKS = 8
#: Compute capability (major) from which a device has thread-block clusters.
CLUSTER_MIN_MAJOR = 9

#: Threads per block of the subtraction kernel (``SUBTRACT_BLOCK_THREADS`` in histogram.cu).
SUBTRACT_BLOCK_THREADS = 256
#: Words of a sibling histogram each thread of the subtraction kernel writes (about):
#: 28 features x 256 bins x 3 = 21,504 words per node, 11 blocks per pair.
SUBTRACT_WORDS_PER_THREAD = 8

#: Largest next-level batch reserved ahead (bytes); a larger one is zeroed when built.
MAX_RESERVED_BYTES = 256 * 1024 * 1024

_DEVICE_LIMITS = {}


class ZeroedBatches:
    """A children batch whose built half an earlier launch zeroed, kept until the next
    level takes it: per host thread (the launches of one thread are in stream order),
    one at a time. Nothing else refers to it, so its built half is zero whoever takes it
    (a later tree's levels, or nobody: the next reservation replaces it)."""

    def __init__(self):
        self._local = threading.local()

    def put(self, batch, zeroed_pairs):
        """Keep ``batch`` (xp int64 (rows, n_features, n_bins, 3)), whose rows
        ``0 .. zeroed_pairs - 1`` are zero (or will be, by a launch already issued)."""
        self._local.pending = (batch, int(zeroed_pairs))

    def clear(self):
        """Drop this thread's kept batch (its memory returns to the pool)."""
        self._local.pending = None

    def take(self, n_pairs, n_features, n_bins):
        """The kept batch's first ``2 * n_pairs`` rows when its shape fits and at least
        ``n_pairs`` rows are zero (then it is no longer kept), else None."""
        pending = getattr(self._local, "pending", None)
        self._local.pending = None
        if pending is None:
            return None
        batch, zeroed_pairs = pending
        fits = tuple(batch.shape[1:]) == (n_features, n_bins, HIST_FIELDS)
        if not fits or zeroed_pairs < n_pairs or batch.shape[0] < 2 * n_pairs:
            return None
        return batch[: 2 * n_pairs]


class SiblingDebt:
    """The sibling half of a children batch that :func:`build_children_histograms` left
    to the split scan (``sibling_debts``): rows ``n_pairs .. 2 n_pairs - 1`` of ``batch``
    are owed as ``parents[parent_rows[i]] - batch[i]``, and ``next_words`` zeros at the
    start of ``next_zeroed`` (the built half of the next level's batch, already handed to
    the :class:`ZeroedBatches`: the debt is paid before any later launch reads either).

    Paid once, by the scan of the batch's nodes (``split_scan_features`` with pairs: the
    parent and the built child read once, the sibling written once and never read back,
    against ``histogram_subtract_siblings`` then a scan that reads both halves), or by
    :meth:`pay` (that subtraction launch) before anything else reads the batch.
    """

    def __init__(self, batch, n_pairs, parents, parent_rows, next_zeroed, next_words):
        self.batch = batch
        self.n_pairs = int(n_pairs)
        self.parents = parents
        self.parent_rows = parent_rows
        self.next_zeroed = next_zeroed
        self.next_words = int(next_words)

    def kernel_arguments(self):
        """``(parents, parent_rows, n_pairs, next_words, next_zeroed)``, as both kernels
        that pay the debt take them."""
        return (
            self.parents,
            self.parent_rows,
            np.int32(self.n_pairs),
            np.int64(self.next_words),
            self.next_zeroed,
        )

    def pay(self, launcher):
        """Write the siblings and the zeros: one ``histogram_subtract_siblings`` launch."""
        node_words = int(np.prod(self.batch.shape[1:]))
        block_words = SUBTRACT_BLOCK_THREADS * SUBTRACT_WORDS_PER_THREAD
        blocks_per_pair = ceil_div(node_words, block_words)
        parents, parent_rows, n_pairs, next_words, next_zeroed = self.kernel_arguments()
        launcher(
            KERNEL_FILE,
            SUBTRACT_KERNEL,
            self.n_pairs * blocks_per_pair + ceil_div(self.next_words, block_words),
            SUBTRACT_BLOCK_THREADS,
            (
                parents,
                parent_rows,
                n_pairs,
                np.int64(node_words),
                np.int64(blocks_per_pair),
                next_words,
                self.batch,
                next_zeroed,
            ),
        )

    def first_row(self, histograms):
        """The row of :attr:`batch` where ``histograms`` (an xp array) starts when it is
        whole rows of the batch (the same memory, C-contiguous), else None."""
        if tuple(histograms.shape[1:]) != tuple(self.batch.shape[1:]):
            return None
        if not histograms.flags.c_contiguous or histograms.dtype != self.batch.dtype:
            return None
        offset = _address(histograms) - _address(self.batch)
        row_bytes = int(np.prod(self.batch.shape[1:])) * self.batch.itemsize
        if offset < 0 or offset % row_bytes:
            return None
        first = offset // row_bytes
        return first if first + histograms.shape[0] <= self.batch.shape[0] else None


def _address(array):
    """The device address of an xp array's first element."""
    return int(array.__cuda_array_interface__["data"][0])


class SiblingDebts:
    """The :class:`SiblingDebt` of this host thread, one at a time (launches of one
    thread are in stream order): kept from the build that leaves it until the scan that
    pays it, or paid by :meth:`settle` first (every other reader of histograms)."""

    def __init__(self):
        self._local = threading.local()

    def put(self, debt):
        """Keep ``debt`` (the thread's earlier debt must be settled)."""
        if getattr(self._local, "debt", None) is not None:
            raise RuntimeError("a sibling debt is already pending; settle it first")
        self._local.debt = debt

    def settle(self, launcher):
        """Pay this thread's debt, if any (one launch)."""
        debt = getattr(self._local, "debt", None)
        self._local.debt = None
        if debt is not None:
            debt.pay(launcher)

    def take(self, histograms, launcher):
        """``(debt, first)`` when ``histograms`` are rows of the owed batch from row
        ``first`` (the debt is then the caller's to pay), else None after settling."""
        debt = getattr(self._local, "debt", None)
        first = None if debt is None else debt.first_row(histograms)
        if first is None:
            self.settle(launcher)
            return None
        self._local.debt = None
        return debt, first


def _reserved_pairs(next_pairs, node_words, reserved_rows_before=0):
    """``next_pairs`` (int), or 0 when the next batch would exceed MAX_RESERVED_BYTES."""
    next_pairs = max(int(next_pairs), 0)
    table_bytes = node_words * np.dtype(HIST_DTYPE).itemsize
    if (reserved_rows_before + 2 * next_pairs) * table_bytes > MAX_RESERVED_BYTES:
        return 0
    return next_pairs


def shared_feature_stride(n_bins):
    """Cells per feature in a plane of the shared histogram: ``n_bins`` rounded up to
    an odd number, so lanes at the same bin of consecutive features hit consecutive
    shared-memory banks (``cuda/histogram.cu``)."""
    return int(n_bins) | 1


def device_limits(mode):
    """``(multiprocessor_count, max_shared_bytes_per_block_optin)`` of the device.

    On a GPU (``mode='cupy'``), from the current CuPy device (cached per device id);
    under the emulation, the emulated profile's (``GPUBOOST_EMULATE_DEVICE``,
    :mod:`gpuboost.backends.emulation.device_profiles`).
    """
    if mode == EMULATED:
        profile = current_profile()
        return profile.multiprocessors, profile.shared_per_block_optin
    import cupy

    device = cupy.cuda.Device()
    limits = _DEVICE_LIMITS.get(device.id)
    if limits is None:
        attributes = device.attributes
        limits = (
            int(attributes["MultiProcessorCount"]),
            int(attributes["MaxSharedMemoryPerBlockOptin"]),
        )
        _DEVICE_LIMITS[device.id] = limits
    return limits


def device_has_clusters(mode):
    """Whether the device has thread-block clusters: compute capability 9.0 and later;
    under the emulation, a profile with clusters (H100, H200)."""
    if mode == EMULATED:
        return current_profile().clusters
    import cupy

    return int(cupy.cuda.Device().compute_capability[:-1]) >= CLUSTER_MIN_MAJOR


def device_cluster_blocks(mode):
    """Blocks per cluster of the cluster kernels (histograms and the row scan) on the
    device: :data:`CLUSTER_BLOCKS` where it has thread-block clusters
    (:func:`device_has_clusters`) and can place them (:func:`.occupancy.clusters_placeable`),
    else 1 (the kernels that flush per block, which compute the same bytes)."""
    if not device_has_clusters(mode) or not clusters_placeable(mode, device_limits(mode)[1]):
        return 1
    return CLUSTER_BLOCKS


class HistogramPlan:
    """How one batch is launched (chosen on the host from the segment lengths).

    Attributes
    ----------
    use_shared : bool
        Shared-memory kernel (else the global-memory fallback).
    features_per_group, n_groups : int
        Feature tiling of the shared-memory kernel (``n_groups == 1``: no tiling).
    rows_per_block : int
        Rows of the batch (its nodes' rows one node after another) per row block.
    node_offsets : ndarray of shape (n_nodes + 1,), int64
        Prefix sum of the node lengths: node ``i`` holds the batch's rows
        ``node_offsets[i] .. node_offsets[i + 1] - 1``.
    blocks_per_group : int
        Row blocks per feature group (``ceil(batch rows / rows_per_block)``).
    shared_bytes : int
        Dynamic shared memory per block.
    columns : bool
        Read the bins column by column (``histogram_shared_columns``; the positions hold
        rows in increasing order), else gather rows of the row-major bins.
    cluster_blocks : int
        Blocks per thread-block cluster, which flushes once (``histogram_cluster_*``; 1:
        every block flushes its own). ``blocks_per_group`` is then a multiple of it.
    """

    def __init__(
        self,
        use_shared,
        features_per_group,
        n_groups,
        rows_per_block,
        node_offsets,
        shared_bytes,
        columns=False,
        cluster_blocks=1,
    ):
        self.columns = columns
        self.cluster_blocks = cluster_blocks
        self.use_shared = use_shared
        self.features_per_group = features_per_group
        self.n_groups = n_groups
        self.rows_per_block = rows_per_block
        self.node_offsets = node_offsets
        blocks = ceil_div(int(node_offsets[-1]), rows_per_block)
        self.blocks_per_group = int(ceil_div(blocks, cluster_blocks) * cluster_blocks)
        self.shared_bytes = shared_bytes

    @property
    def kernel(self):
        """The shared-memory kernel of the plan (of ``cuda/histogram.cu``)."""
        return _SHARED_KERNELS[(bool(self.columns), self.cluster_blocks > 1)]

    @property
    def flushing_units(self):
        """Units that flush a table per node piece, per feature group: the row blocks, or
        their clusters."""
        return self.blocks_per_group // self.cluster_blocks


def plan_histograms(
    lengths,
    n_features,
    n_bins,
    shared_limit,
    sm_count,
    rows_per_block=None,
    force_global=False,
    ordered_rows=None,
    force_columns=False,
    cluster_blocks=1,
):
    """Choose the kernel, the feature groups and the row blocks of a batch.

    The row blocks cut the batch's rows (all nodes' rows, one node after another) into
    equal ranges, whichever nodes they span (a block flushes once per node in its
    range): about :data:`TARGET_BLOCKS_PER_SM` blocks per SM and feature group, one
    wave, so a level flushes about ``blocks + nodes`` shared histograms.

    With ``ordered_rows`` (the nodes' positions hold rows in increasing order), the bins
    may be read column by column instead (``plan.columns``): each feature group then
    reads its own bytes of the rows, so more groups of fewer features cost only the
    positions and gradient pairs read again per group, while each block, taking more
    rows, flushes a smaller table. Of the layouts and group counts, the plan takes the
    one :func:`build_bytes` estimates to move the fewest bytes (the fewest groups on a
    tie; the row-major gather unless the columns move fewer).

    Parameters
    ----------
    lengths : ndarray of shape (n_nodes,), int64
        Rows of each node.
    n_features, n_bins : int
    shared_limit : int
        Dynamic shared bytes a block may use.
    sm_count : int
        Streaming multiprocessors of the device.
    rows_per_block : int, optional
        Force the rows per block (tests); by default the batch's rows over
        ``TARGET_BLOCKS_PER_SM`` blocks per SM, at least ``MIN_ROWS_PER_BLOCK``.
    force_global : bool
        Use the global-memory kernel even when the shared one fits (tests).
    ordered_rows : tuple (n_rows, row_stride), optional
        The nodes' positions hold rows in increasing order, of ``n_rows`` rows whose
        row-major bins take ``row_stride`` bytes a row: the columns may be read.
    force_columns : bool
        With ``ordered_rows``, read the columns (in the groups that move the fewest
        bytes) even where gathering rows moves fewer (tests).
    cluster_blocks : int
        Blocks per thread-block cluster of the device (:func:`device_cluster_blocks`): the
        shared-memory kernels then flush once per cluster, and the row blocks of a group
        are a whole number of clusters; a batch of one row block is built by that block
        alone (the per-block kernel: it flushes once either way).

    Returns
    -------
    HistogramPlan
    """
    cell_bytes = shared_feature_stride(n_bins) * SHARED_BYTES_PER_CELL
    max_features_per_block = shared_limit // cell_bytes
    use_shared = max_features_per_block >= 1 and not force_global
    if use_shared:
        min_groups = ceil_div(n_features, max_features_per_block)
    else:
        min_groups = 1
    node_offsets = offsets(np.asarray(lengths, dtype=np.int64))
    n_positions = int(node_offsets[-1])
    if rows_per_block is not None and int(rows_per_block) < 1:
        raise ValueError(f"rows_per_block must be positive, got {rows_per_block}")
    if int(cluster_blocks) < 1:
        raise ValueError(f"cluster_blocks must be positive, got {cluster_blocks}")

    def layout(n_groups, columns):
        features_per_group = ceil_div(n_features, n_groups) if use_shared else n_features
        n_groups = ceil_div(n_features, features_per_group) if use_shared else 1
        if rows_per_block is None:
            target_blocks = max(1, (sm_count * TARGET_BLOCKS_PER_SM) // n_groups)
            block_rows = max(MIN_ROWS_PER_BLOCK, ceil_div(n_positions, target_blocks))
            if columns:  # whole warps of positions: a warp's bins start a sector
                block_rows = ceil_div(block_rows, WARP_POSITIONS) * WARP_POSITIONS
        else:
            block_rows = int(rows_per_block)
        shared_bytes = features_per_group * cell_bytes if use_shared else 0
        # One row block's rows: a cluster would flush once all the same, its other
        # blocks only clearing their tables and waiting at its barriers.
        clustered = use_shared and ceil_div(n_positions, block_rows) > 1
        return HistogramPlan(
            use_shared,
            features_per_group,
            n_groups,
            block_rows,
            node_offsets,
            shared_bytes,
            columns=columns,
            cluster_blocks=int(cluster_blocks) if clustered else 1,
        )

    plan = layout(min_groups, False)
    if ordered_rows is None or not use_shared or n_positions == 0:
        return plan
    n_rows, row_stride = (int(value) for value in ordered_rows)
    best = np.inf if force_columns else build_bytes(plan, n_features, n_bins, row_stride, n_rows)
    for n_groups in range(min_groups, n_features + 1):
        candidate = layout(n_groups, True)
        if candidate.n_groups != n_groups:  # the same balanced groups as fewer
            continue
        candidate_bytes = build_bytes(candidate, n_features, n_bins, row_stride, n_rows)
        if candidate_bytes < best:
            plan, best = candidate, candidate_bytes
    return plan


def build_bytes(plan, n_features, n_bins, row_stride, n_rows):
    """The bytes a build of ``plan`` moves over positions holding rows in increasing
    order (``n_rows`` rows in all), as the planner estimates them in the traffic model's
    terms (docs/DESIGN.md "GPU performance model"): every feature group reads each
    position's row id and gradient pair (:data:`POSITION_BYTES`) and the group's bins,
    and every block (or cluster of blocks) flushes its group's table once per node piece.

    The bins, row-major: ``row_stride`` bytes a position (consecutive rows share
    sectors) per group, or a sector where the positions skip more than a row's worth;
    column by column: a (row, feature) costs ``n_rows / positions`` bytes (the stretch of
    a column a warp's consecutive positions span), at most a sector. The flush: the
    pieces (``units + nodes - 1`` per group, a block's or a cluster's range cut at the
    node bounds: ``plan.flushing_units``) of ``features_per_group x n_bins`` cells of
    :data:`FLUSHED_CELL_BYTES` each.
    """
    n_positions = int(plan.node_offsets[-1])
    n_nodes = len(plan.node_offsets) - 1
    stretch = n_rows / max(n_positions, 1)  # rows per position
    if plan.columns:
        bin_bytes = n_positions * n_features * min(float(SECTOR_BYTES), stretch)
    else:
        row_bytes = min(float(max(SECTOR_BYTES, row_stride)), stretch * row_stride)
        bin_bytes = plan.n_groups * n_positions * row_bytes
    pieces = plan.flushing_units + max(n_nodes - 1, 0)
    flush_bytes = plan.n_groups * pieces * plan.features_per_group * n_bins * FLUSHED_CELL_BYTES
    return plan.n_groups * n_positions * POSITION_BYTES + bin_bytes + flush_bytes


def allow_dynamic_shared(kernel, shared_bytes):
    """Opt the kernel in to ``shared_bytes`` of dynamic shared memory (above 48 KiB)."""
    if (
        shared_bytes > DEFAULT_SHARED_BYTES - kernel.shared_size_bytes
        and kernel.max_dynamic_shared_size_bytes < shared_bytes
    ):
        kernel.max_dynamic_shared_size_bytes = int(shared_bytes)


def check_row_inputs(xp, X_binned, quantized_gradients, quantized_hessians, sample_indices):
    """Check the device arrays of a kernel that reads nodes' rows (dtypes, dimensions) and
    return what it reads: ``(rows, row_stride, pairs)``, the bins' allocation and row
    stride (:func:`.binned_rows.word_rows`: the padded device layout, no copy, or a
    C-contiguous matrix, copied into that layout unless its stride is whole words) and
    the ``(n_rows, 2)`` int32 (gradient, hessian) array
    (:func:`.quantize.gradient_pairs`: the columns' own pair array when they are its
    halves, as :func:`.quantize.quantize_columns` returns them, else one stacked copy)."""
    rows, row_stride = word_rows(xp, X_binned)
    require_array(xp, rows, X_BINNED_DTYPE, "X_binned", ndim=2)
    for name, column in (
        ("quantized_gradients", quantized_gradients),
        ("quantized_hessians", quantized_hessians),
    ):
        if not isinstance(column, xp.ndarray):
            raise TypeError(f"{name} must be a {xp.__name__} array, got {type(column).__name__}.")
        if column.dtype != GRAD_QUANT_DTYPE or column.ndim != 1:
            raise TypeError(
                f"{name} must be a {np.dtype(GRAD_QUANT_DTYPE).name} array with 1 "
                f"dimension(s), got {column.dtype} of shape {column.shape}."
            )
    if quantized_gradients.shape != quantized_hessians.shape:
        raise ValueError(
            f"quantized_gradients and quantized_hessians differ in shape: "
            f"{quantized_gradients.shape} and {quantized_hessians.shape}."
        )
    require_array(xp, sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
    pairs = gradient_pairs(xp, quantized_gradients, quantized_hessians)
    require_array(xp, pairs, GRAD_QUANT_DTYPE, "quantized pairs", ndim=2)
    return rows, row_stride, pairs


def build_histograms(
    xp,
    launcher,
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    *,
    shared_memory_limit=None,
    rows_per_block=None,
    block_threads=MAX_BLOCK_THREADS,
    force_global=False,
    next_pairs=0,
    zeroed_batches=None,
    binned_columns=None,
    force_columns=False,
    cluster_blocks=None,
):
    """Histograms of a batch of nodes, on the device, in one kernel launch.

    Parameters
    ----------
    xp : module
        ``cupy`` (GPU) or the emulated device namespace; every array argument
        lives there.
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X_binned : array of shape (n_rows, n_features), uint8  # IN
        The binned features **row-major** (``Dataset.X_binned``), the layout this
        kernel needs: rows are gathered through ``sample_indices``, and row-major
        lets consecutive threads read consecutive features of one row. C-contiguous,
        or the device layout with padded rows (:mod:`.binned_rows`, as
        ``DeviceData.arrays['X_binned']``).
    quantized_gradients, quantized_hessians : array of shape (n_rows,), int32  # IN
        Any strides. The kernel reads one (gradient, hessian) int2 per row: the columns
        as :func:`.quantize.quantize_columns` returns them (halves of one pair array)
        are read in place; other columns are first stacked into one (a copy).
    sample_indices : array of shape (n_samples,), int32  # IN
        The row partition; node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : sequence of int, length n_nodes (host)
        Segments inside ``[0, n_samples]``; they may overlap.
    n_bins : int
        Histogram width (``max_bin + 1``); every value of ``X_binned`` is below it.
    shared_memory_limit : int, optional
        Dynamic shared bytes a block may use; default: the device's opt-in limit
        (see :func:`device_limits`). Tests pass a small value to force feature
        tiling or the global-memory kernel.
    rows_per_block : int, optional
        Rows per block (see :func:`plan_histograms`).
    block_threads : int
        Threads per block, 1 .. :data:`MAX_BLOCK_THREADS`.
    force_global : bool
        Use the global-memory kernel.
    next_pairs : int
        Pairs the next level (:func:`build_children_histograms`) may build at most: with
        ``zeroed_batches``, its batch is allocated here and its built half zeroed by the
        same operation as these histograms, then kept in ``zeroed_batches``.
    zeroed_batches : ZeroedBatches, optional
    binned_columns : array of shape (n_features, n_rows), uint8, C order, optional  # IN
        The same bins column by column (:func:`.partition.binned_columns`), given only
        when every segment's positions hold rows in increasing order (a tree's
        ``sample_indices`` before its first partition): the build may then read them,
        coalesced, in feature groups that flush smaller tables (:func:`plan_histograms`).
        With rows out of order the sums are still right, only the reads scattered.
    force_columns : bool
        With ``binned_columns``, read them whatever the plan's estimate (tests).
    cluster_blocks : int, optional
        Blocks per thread-block cluster flushing one table (:func:`plan_histograms`);
        default: the device's (:func:`device_cluster_blocks`); 1 flushes per block.

    Returns
    -------
    histograms : array of shape (n_nodes, n_features, n_bins, 3), int64  # OUT
        Last axis: (sum_gradients, sum_hessians, count), equal to
        :func:`gpuboost.backends.numpy.histogram.build_histograms`.
    """
    binned_rows, row_stride, pairs = check_row_inputs(
        xp, X_binned, quantized_gradients, quantized_hessians, sample_indices
    )
    if binned_columns is not None:
        require_array(xp, binned_columns, X_BINNED_DTYPE, "binned_columns", ndim=2)
        if tuple(binned_columns.shape) != tuple(X_binned.shape)[::-1]:
            raise ValueError(
                f"binned_columns must have shape {tuple(X_binned.shape)[::-1]} (X_binned "
                f"transposed), got {tuple(binned_columns.shape)}"
            )
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0])
    n_nodes, n_features, n_bins = len(begins), int(X_binned.shape[1]), int(n_bins)
    shape = (n_features, n_bins, HIST_FIELDS)
    node_words = n_features * n_bins * HIST_FIELDS
    next_pairs = (
        _reserved_pairs(next_pairs, node_words, n_nodes) if zeroed_batches is not None else 0
    )
    if next_pairs:
        # One allocation [these nodes | next built half | next siblings], one zeroing.
        block = xp.empty((n_nodes + 2 * next_pairs, *shape), dtype=HIST_DTYPE)
        block[: n_nodes + next_pairs] = 0
        histograms = block[:n_nodes]
        zeroed_batches.put(block[n_nodes:], next_pairs)
    else:
        histograms = xp.zeros((n_nodes, *shape), dtype=HIST_DTYPE)
    _launch_build(
        xp,
        launcher,
        binned_rows,
        row_stride,
        pairs,
        sample_indices,
        begins,
        ends,
        histograms,
        shared_memory_limit=shared_memory_limit,
        rows_per_block=rows_per_block,
        block_threads=block_threads,
        force_global=force_global,
        binned_columns=binned_columns,
        force_columns=force_columns,
        cluster_blocks=cluster_blocks,
    )
    return histograms


def build_children_histograms(
    xp,
    launcher,
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    parents,
    parent_rows,
    *,
    next_pairs=0,
    zeroed_batches=None,
    carry=None,
    carried_segments=None,
    table_ahead=None,
    sibling_debts=None,
    **options,
):
    """Histograms of sibling pairs as one batch: the smaller children built, their
    siblings by subtraction, written into one allocation.

    Equal to stacking :func:`build_histograms` of the segments and
    ``parents[parent_rows] - built`` (``Backend.build_children_histograms``), without
    the gathered copy of the parents, the difference array and the concatenation: the
    batch is allocated once (or taken from ``zeroed_batches``, its first half already
    zero), its first half zeroed and filled by the build kernel, its second half written
    by one ``histogram_subtract_siblings`` launch that reads each parent by row; that
    launch also zeroes the built half of the next level's batch when ``next_pairs`` is
    given (kept in ``zeroed_batches``). One host-to-device copy carries the build's node
    table and ``parent_rows`` (and ``carry``: another scan's segment table).

    Parameters
    ----------
    xp, launcher, X_binned, quantized_gradients, quantized_hessians, sample_indices, n_bins
        As for :func:`build_histograms`.  # IN
    begins, ends : sequence of int, length n_pairs (host)
        The segments of the children to build.
    parents : array of shape (n_parent_rows, n_features, n_bins, 3), int64, C order  # IN
        A batch holding the parents' histograms.
    parent_rows : sequence of int, length n_pairs (host)
        Row of ``parents`` holding the parent of pair ``i``.
    next_pairs : int
        Pairs the next level may build at most (0: unknown or none).
    zeroed_batches : ZeroedBatches, optional
        Where this batch may come from and the next level's goes (none: this batch's
        built half is zeroed by an operation, and nothing is reserved).
    carry : ndarray of shape (2 * m,), int64, optional (host)
        A segment table (:func:`.carried_segments.segment_table`: the level's row-scanned
        segments) sent in this build's copy; its device view is put in
        ``carried_segments`` (both or neither; nothing is kept when there is no pair).
    carried_segments : gpuboost.backends.cuda.carried_segments.CarriedSegments, optional
    table_ahead : gpuboost.backends.cuda.carried_segments.CarriedSegments, optional
        Where the level's partition may have sent this build's node table
        (:func:`children_build_table`): then the build copies nothing.
    sibling_debts : SiblingDebts, optional
        Where the sibling half goes unwritten, as a :class:`SiblingDebt` that the split
        scan of the batch pays (none: written here, by one subtraction launch).
    **options
        ``shared_memory_limit``, ``rows_per_block``, ``block_threads``,
        ``force_global``, ``cluster_blocks`` of :func:`build_histograms`.

    Returns
    -------
    histograms : array of shape (2 * n_pairs, n_features, n_bins, 3), int64  # OUT
        Row ``i``: the histogram of segment ``i``; row ``n_pairs + i``:
        ``parents[parent_rows[i]] - histograms[i]`` (exact).
    """
    binned_rows, row_stride, pairs = check_row_inputs(
        xp, X_binned, quantized_gradients, quantized_hessians, sample_indices
    )
    require_array(xp, parents, HIST_DTYPE, "parents", ndim=4)
    n_features, n_bins = int(X_binned.shape[1]), int(n_bins)
    if tuple(parents.shape[1:]) != (n_features, n_bins, HIST_FIELDS):
        raise ValueError(
            f"parents must have shape (n, {n_features}, {n_bins}, {HIST_FIELDS}), "
            f"got {tuple(parents.shape)}"
        )
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0])
    n_pairs = len(begins)
    rows = np.asarray(parent_rows, dtype=np.int64).reshape(-1)
    if len(rows) != n_pairs:
        raise ValueError(f"{len(rows)} parent rows for {n_pairs} pairs")
    if n_pairs and not (0 <= rows.min() and rows.max() < parents.shape[0]):
        raise ValueError(f"parent_rows must lie in [0, {parents.shape[0]})")
    if (carry is None) != (carried_segments is None):
        raise ValueError("carry and carried_segments go together")
    carry = np.zeros(0, dtype=np.int64) if carry is None else np.asarray(carry, dtype=np.int64)
    shape = (n_features, n_bins, HIST_FIELDS)
    node_words = n_features * n_bins * HIST_FIELDS
    if n_pairs == 0 or node_words == 0:
        return xp.empty((2 * n_pairs, *shape), dtype=HIST_DTYPE)
    histograms = None
    if zeroed_batches is not None:
        histograms = zeroed_batches.take(n_pairs, n_features, n_bins)
    if histograms is None:
        histograms = xp.empty((2 * n_pairs, *shape), dtype=HIST_DTYPE)
        histograms[:n_pairs] = 0  # the build adds into the first half; the second is written
    next_pairs = _reserved_pairs(next_pairs, node_words) if zeroed_batches is not None else 0
    # The next level's batch; a one-word placeholder (never written) without one.
    next_batch = xp.empty((2 * next_pairs, *shape) if next_pairs else 1, dtype=HIST_DTYPE)
    next_words = next_pairs * node_words
    device_rows = _launch_build(
        xp,
        launcher,
        binned_rows,
        row_stride,
        pairs,
        sample_indices,
        begins,
        ends,
        histograms,
        trailing=_children_trailing(rows, carry),
        table_ahead=table_ahead,
        **options,
    )
    if carried_segments is not None:
        carried_segments.put(carry, device_rows[n_pairs:])
    debt = SiblingDebt(histograms, n_pairs, parents, device_rows, next_batch, next_words)
    if next_pairs:
        zeroed_batches.put(next_batch, next_pairs)
    if sibling_debts is None:
        debt.pay(launcher)
    else:
        sibling_debts.put(debt)
    return histograms


def _plan(
    launcher,
    lengths,
    n_features,
    n_bins,
    shared_memory_limit,
    rows_per_block,
    force_global,
    ordered_rows=None,
    force_columns=False,
    cluster_blocks=None,
):
    """``(plan, shared kernel)`` of a build of nodes of ``lengths`` rows on this device:
    the shared-memory kernel the plan launches (``plan.kernel``: the columns or gathered
    rows, flushed per block or per cluster; one template, the same static shared memory).
    ``cluster_blocks``: None for the device's (:func:`device_cluster_blocks`)."""
    sm_count, optin_limit = device_limits(launcher.mode)
    if cluster_blocks is None:
        cluster_blocks = device_cluster_blocks(launcher.mode)
    # More than one row block's rows (at least MIN_ROWS_PER_BLOCK a block) for a cluster.
    block_rows = MIN_ROWS_PER_BLOCK if rows_per_block is None else int(rows_per_block)
    clusters = int(cluster_blocks) > 1 and int(np.sum(lengths)) > block_rows
    likely = _SHARED_KERNELS[(ordered_rows is not None, clusters)]
    kernel = launcher.kernel(KERNEL_FILE, likely)
    if shared_memory_limit is None:
        shared_memory_limit = optin_limit - kernel.shared_size_bytes
    plan = plan_histograms(
        lengths,
        n_features,
        n_bins,
        int(shared_memory_limit),
        sm_count,
        rows_per_block=rows_per_block,
        force_global=force_global,
        ordered_rows=ordered_rows,
        force_columns=force_columns,
        cluster_blocks=cluster_blocks,
    )
    if plan.kernel != likely:
        kernel = launcher.kernel(KERNEL_FILE, plan.kernel)
    return plan, kernel


def children_build_table(launcher, begins, ends, n_features, n_bins, parent_rows, carry=None):
    """The host table :func:`build_children_histograms` (default options) copies to the
    device for these pairs, ``[begins | node_offsets | parent_rows | carry]`` (int64),
    or None when it copies none (no pair, no row, no feature or bin): what the level's
    partition sends ahead in its own copy (``partition_rows``' ``carry``), so that the
    build, given the cache (``table_ahead``), copies nothing.

    Parameters
    ----------
    launcher : KernelLauncher
    begins, ends : sequence of int, length n_pairs (host)
        The segments of the children the build will build.
    n_features, n_bins : int
        Of the build's bins.
    parent_rows : sequence of int, length n_pairs (host)
    carry : ndarray of shape (2 * m,), int64, optional (host)
        The build's ``carry``.
    """
    begins = np.asarray(begins, dtype=np.int64).reshape(-1)
    lengths = np.asarray(ends, dtype=np.int64).reshape(-1) - begins
    if not n_bins or _builds_nothing(lengths, n_features):
        return None
    plan, _ = _plan(launcher, lengths, int(n_features), int(n_bins), None, None, False)
    return _node_table(begins, plan, _children_trailing(parent_rows, carry))


def _children_trailing(parent_rows, carry):
    """What a children build sends after its node table: ``[parent_rows | carry]``
    (int64; ``carry`` None: none)."""
    carry = np.zeros(0, dtype=np.int64) if carry is None else np.asarray(carry, dtype=np.int64)
    return np.concatenate([np.asarray(parent_rows, dtype=np.int64).reshape(-1), carry])


def _builds_nothing(lengths, n_features):
    """Whether a build of nodes of ``lengths`` rows on ``n_features`` launches nothing."""
    return len(lengths) == 0 or n_features == 0 or int(np.sum(lengths)) == 0


def _node_table(begins, plan, trailing):
    """The host node table of a build: ``[begins | node_offsets | trailing]`` (int64)."""
    return np.concatenate([begins, plan.node_offsets, trailing])


def _launch_build(
    xp,
    launcher,
    binned_rows,
    row_stride,
    pairs,
    sample_indices,
    begins,
    ends,
    histograms,
    *,
    shared_memory_limit=None,
    rows_per_block=None,
    block_threads=MAX_BLOCK_THREADS,
    force_global=False,
    trailing=None,
    table_ahead=None,
    binned_columns=None,
    force_columns=False,
    cluster_blocks=None,
):
    """Add the histograms of the segments ``begins``/``ends`` (checked, int64) of the rows'
    (gradient, hessian) ``pairs``, bins ``binned_rows`` of ``row_stride`` bytes a row
    (:func:`check_row_inputs`) into rows
    ``0 .. n_nodes - 1`` of ``histograms`` (zero there; shape (>= n_nodes, n_features,
    n_bins, 3), int64, C order), in one launch (none when there are no rows).

    ``trailing`` (int64 host values) travels in the same host-to-device copy as the
    node table; returns its device copy (``None`` without ``trailing``). With
    ``table_ahead`` (a :class:`.carried_segments.CarriedSegments`), the copy is skipped
    when it holds the same table, sent by an earlier launch
    (:func:`children_build_table`). ``binned_columns``: the bins column by column
    ((n_features, n_rows) uint8, C order), given only where the segments' positions hold
    rows in increasing order: the plan may read them (:func:`plan_histograms`;
    ``force_columns``: it does). ``cluster_blocks``: blocks per flushing cluster, None for
    the device's (:func:`device_cluster_blocks`; tests pass 1 for the per-block flush).
    """
    if not 1 <= block_threads <= MAX_BLOCK_THREADS:
        raise ValueError(f"block_threads must be in [1, {MAX_BLOCK_THREADS}], got {block_threads}")
    trailing = np.zeros(0, dtype=np.int64) if trailing is None else trailing
    n_features = int(histograms.shape[1])
    n_bins = int(histograms.shape[2])
    n_nodes = len(begins)
    lengths = ends - begins
    if _builds_nothing(lengths, n_features):
        return xp.asarray(trailing) if len(trailing) else None

    ordered_rows = None
    if binned_columns is not None:
        ordered_rows = (int(binned_columns.shape[1]), row_stride)
    plan, kernel = _plan(
        launcher,
        lengths,
        n_features,
        n_bins,
        shared_memory_limit,
        rows_per_block,
        force_global,
        ordered_rows,
        force_columns,
        cluster_blocks,
    )
    n_blocks = plan.blocks_per_group * plan.n_groups
    if n_blocks > MAX_GRID_X:
        raise ValueError(f"{n_blocks} blocks exceed the grid limit; raise rows_per_block")
    # One host-to-device copy: [begins | node_offsets | trailing], or none when a launch
    # before sent it (table_ahead).
    host_table = _node_table(begins, plan, trailing)
    node_table = None if table_ahead is None else table_ahead.take_table(host_table)
    if node_table is None:
        node_table = xp.asarray(host_table)
    node_begins = node_table[:n_nodes]
    node_offsets = node_table[n_nodes : 2 * n_nodes + 1]
    bins = (binned_rows, np.int64(row_stride))
    if plan.columns:
        bins = (binned_columns, np.int64(binned_columns.shape[1]))
    common = bins + (
        pairs,
        sample_indices,
        node_begins,
        node_offsets,
        np.int32(n_nodes),
        np.int32(n_features),
        np.int32(n_bins),
    )
    if plan.use_shared:
        allow_dynamic_shared(kernel, plan.shared_bytes)
        launcher(
            KERNEL_FILE,
            plan.kernel,
            n_blocks,
            block_threads,
            common
            + (
                np.int32(plan.features_per_group),
                np.int32(shared_feature_stride(n_bins)),
                np.int64(plan.blocks_per_group),
                np.int64(plan.rows_per_block),
                histograms,
            ),
            shared_mem=plan.shared_bytes,
        )
    else:
        launcher(
            KERNEL_FILE,
            GLOBAL_KERNEL,
            n_blocks,
            block_threads,
            common + (np.int64(plan.rows_per_block), histograms),
        )
    return node_table[2 * n_nodes + 1 :] if len(trailing) else None
