"""Split-scan primitive of the CUDA backend (kernels in ``cuda/split_scan.cu``).

:func:`find_best_splits` returns exactly what
:func:`gpuboost.backends.numpy.split_scan.find_best_splits` returns, bit for bit (gains
included): the kernels recover float64 sums from the exact int64 histogram sums and
evaluate the formulas of ``cuda/gain.cuh``, which mirror ``gpuboost/core/gain.py``
operation by operation (compiled with
``--fmad=false``), and break ties in NumPy's argmax order. Works with
``xp = cupy`` on a GPU and the emulated device namespace under the CPU emulation.

One launch per batch: one block per (node, chunk of features) scans each feature's
bins in turn and keeps its best candidate; the last block of each node to finish (an
arrival counter per node, kept from launch to launch with a new epoch per launch as the
partition's :class:`~gpuboost.backends.cuda.partition.TileStatus`, so never cleared;
:class:`SplitScanScratch`) picks the node's best feature. Which block is last does not
change the record (it reads every feature's best in a fixed order). Only the ``n_nodes``
records (10 int64 words each) are copied to the host (:func:`split_scan_words` leaves them
on the device, so that a level scanned both from rows and from histograms copies its
records once: ``CudaBackend.find_best_splits_mixed``). (:func:`select_words`, the second
launch of a reduction over per-feature bests, remains for the row scan's feature groups.)

Traffic: a scan block copies each feature's cells to shared memory with coalesced
reads (a warp reads 32 consecutive int64 words; reading a cell's three fields per thread
would touch every sector three times), and sums feature 0 of its node once for the
parent sums, which every block of the node needs. :func:`scan_chunks` picks the chunks:
the fewest blocks that still give the GPU :data:`SCAN_MIN_BLOCKS` blocks, so that feature
0 is re-read as little as possible (1 / features_per_block of the histograms' bytes).
The pointers of absent options (feature mask, monotone constraints) get uninitialised
one-element placeholders (never read), so a launch issues no other device operation
(the scratch buffers are zeroed only when made or grown).
"""

import threading

import numpy as np

from ...core.array import to_numpy
from ...core.dtypes import HIST_DTYPE, HIST_FIELDS, MAX_BIN_LIMIT
from ...core.gain import SPLIT_GAIN_EPS, SPLIT_RECORD_DTYPE, no_split_records
from .launch import MAX_GRID_X, ceil_div
from .partition import TileStatus

__all__ = [
    "find_best_splits",
    "SplitScanScratch",
    "records_from_words",
    "scan_chunks",
    "scan_options",
    "scan_scalars",
    "gain_scalars",
    "select_words",
    "split_scan_words",
    "checked_words",
    "nothing_to_scan",
    "scan_threads",
    "RECORD_WORDS",
    "FEATURE_BEST_WORDS",
    "SCAN_MIN_BLOCKS",
]

#: Kernel file (``cuda/split_scan.cu``) and its kernels.
KERNEL_FILE = "split_scan"
SCAN_KERNEL = "split_scan_features"
SELECT_KERNEL = "split_select_nodes"

#: Most threads of a scan block (``SPLIT_SCAN_MAX_THREADS``): one per bin.
SCAN_MAX_THREADS = MAX_BIN_LIMIT + 1
#: Fewest threads of a block (one warp).
WARP_SIZE = 32
#: Threads of a select block (``SPLIT_SELECT_MAX_THREADS``), each striding over features.
SELECT_MAX_THREADS = 256
#: Scan blocks wanted per launch: 2 per SM of an H100 (132 SMs). Nodes get more blocks
#: (fewer features each) until a launch has this many, at most one per feature.
SCAN_MIN_BLOCKS = 264
#: int64 words of a per-(node, feature) best candidate (``FEATURE_BEST_WORDS``).
FEATURE_BEST_WORDS = 6
#: int64 words of a node record (``RECORD_WORDS``), in SPLIT_RECORD_DTYPE's order:
#: feature, bin, default_left, gain (float64 bits), left sums (3), node sums (3).
RECORD_WORDS = 10
_RECORD_FEATURE, _RECORD_BIN, _RECORD_DEFAULT_LEFT, _RECORD_GAIN_BITS = 0, 1, 2, 3
_RECORD_LEFT_SUMS = 4
_RECORD_NODE_SUMS = _RECORD_LEFT_SUMS + HIST_FIELDS
_LEFT_FIELDS = ("left_sum_gradients", "left_sum_hessians", "left_count")
_NODE_FIELDS = ("sum_gradients", "sum_hessians", "count")


def _power_of_two_at_least(value, lowest, highest):
    threads = lowest
    while threads < value:
        threads *= 2
    return min(threads, highest)


def scan_threads(n_bins):
    """Threads of a scan block: the power of two >= ``n_bins`` (one per bin), at least
    a warp."""
    return _power_of_two_at_least(n_bins, WARP_SIZE, SCAN_MAX_THREADS)


def scan_chunks(n_nodes, n_features):
    """``(features_per_block, chunks_per_node)`` of a scan launch over ``n_nodes`` nodes:
    ``chunks_per_node`` blocks per node, each scanning ``features_per_block`` consecutive
    features (the last chunk fewer): about :data:`SCAN_MIN_BLOCKS` blocks in all (at
    least half as many; rounding) where the features allow it, else one per feature."""
    wanted = max(1, min(n_features, ceil_div(SCAN_MIN_BLOCKS, max(n_nodes, 1))))
    features_per_block = ceil_div(n_features, wanted)
    return features_per_block, ceil_div(n_features, features_per_block)


def records_from_words(words):
    """SPLIT_RECORD_DTYPE records from the (n_nodes, RECORD_WORDS) int64 host array."""
    records = np.zeros(words.shape[0], dtype=SPLIT_RECORD_DTYPE)
    records["feature"] = words[:, _RECORD_FEATURE]
    records["bin"] = words[:, _RECORD_BIN]
    records["default_left"] = words[:, _RECORD_DEFAULT_LEFT] != 0
    records["gain"] = np.ascontiguousarray(words[:, _RECORD_GAIN_BITS]).view(np.float64)
    for offset, name in enumerate(_LEFT_FIELDS):
        records[name] = words[:, _RECORD_LEFT_SUMS + offset]
    for offset, name in enumerate(_NODE_FIELDS):
        records[name] = words[:, _RECORD_NODE_SUMS + offset]
    return records


class SplitScanScratch:
    """The device buffers of :func:`find_best_splits`, kept from launch to launch.

    * the nodes' arrival counters: a :class:`~gpuboost.backends.cuda.partition.TileStatus`
      (a new epoch per launch, so never cleared);
    * the per-(node, feature) best candidates, ``FEATURE_BEST_WORDS`` int64 each: the
      scan's blocks publish them with atomics and a node's last block reads them with
      atomics, and an atomic reads its word, so the words must have been written once
      (``xp.empty`` memory would be an uninitialised read); every launch writes all the
      words its last blocks read before they read them.

    Both are zeroed only when made or grown (powers of two): no clearing operation per
    launch. One per backend (device), a buffer per host thread, as ``TileStatus``.
    """

    def __init__(self):
        self.arrivals = TileStatus()
        self._local = threading.local()

    def discard(self):
        """Drop this thread's buffers (their memory returns to the pool)."""
        self.arrivals.discard()
        self._local.feature_best = None

    def feature_best(self, xp, n_nodes, n_features):
        """An xp int64 array of shape (n_nodes * n_features, FEATURE_BEST_WORDS), a view
        of this thread's buffer (its contents: earlier launches')."""
        n_words = n_nodes * n_features * FEATURE_BEST_WORDS
        words = getattr(self._local, "feature_best", None)
        if words is None or words.shape[0] < n_words:
            size = 1 << max(n_words - 1, 1).bit_length()  # grow by powers of two
            words = xp.zeros(size, dtype=np.int64)
            self._local.feature_best = words
        return words[:n_words].reshape(n_nodes * n_features, FEATURE_BEST_WORDS)


def find_best_splits(
    xp,
    launcher,
    histograms,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    split_params,
    feature_mask=None,
    node_bounds=None,
    scratch=None,
    siblings=None,
):
    """Best split of every node of a batch, computed on the device.

    Parameters
    ----------
    xp : module
        ``cupy`` (GPU) or the emulated device namespace.
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    histograms : xp array of shape (n_nodes, n_features, n_bins, 3), int64  # IN
        C-contiguous (a copy is made otherwise). ``n_bins <= MAX_BIN_LIMIT + 1``.
    scale_gradients, scale_hessians : float
        Quantization scales of this round's column.
    n_value_bins : array of shape (n_features,), int
        Host or xp array (an xp int32 array is used as is, so a backend can keep
        a device copy; anything else is copied to the device each call).
    missing_bin : int
    split_params : gpuboost.core.gain.SplitParams
    feature_mask : host ndarray of shape (n_nodes, n_features), bool, optional
        Features allowed at each node; all when None.
    node_bounds : host ndarray of shape (n_nodes, 2), float64, optional
        The nodes' weight bounds under monotone constraints (``split_params.monotone``);
        unbounded when None.
    scratch : SplitScanScratch, optional
        The arrival counters and per-feature bests, kept from launch to launch (a backend
        keeps one, so that they are zeroed only when made or grown); a new one (zeroed
        here) when None.
    siblings : tuple ``(debt, first)``, optional
        The sibling debt of the batch ``histograms`` belongs to, which this scan pays
        (:func:`split_scan_words`).

    Returns
    -------
    records : host ndarray of shape (n_nodes,), SPLIT_RECORD_DTYPE  # OUT
        Equal to :func:`gpuboost.backends.numpy.split_scan.find_best_splits` field by
        field (:func:`split_scan_words`, then one copy to the host).
    """
    words = split_scan_words(
        xp,
        launcher,
        histograms,
        scale_gradients,
        scale_hessians,
        n_value_bins,
        missing_bin,
        split_params,
        feature_mask,
        node_bounds,
        scratch=scratch,
        siblings=siblings,
    )
    if words is None:
        return no_split_records(int(histograms.shape[0]))
    return records_from_words(to_numpy(words))


def nothing_to_scan(n_nodes, missing_bin):
    """Whether a scan of ``n_nodes`` nodes has nothing to evaluate (no node, or no
    candidate bin below ``missing_bin``): its records are ``no_split_records(n_nodes)``,
    as the NumPy split scan's."""
    return n_nodes == 0 or int(missing_bin) - 1 <= 0


def split_scan_words(
    xp,
    launcher,
    histograms,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    split_params,
    feature_mask=None,
    node_bounds=None,
    *,
    scratch=None,
    words=None,
    siblings=None,
):
    """Launch the split scan of a batch; its records stay on the device.

    Arguments as :func:`find_best_splits`'s, and

    words : xp array of shape (n_nodes, RECORD_WORDS), int64, optional  # OUT
        Where the records go (a view of a larger array, so that two scans share one
        copy to the host: ``CudaBackend.find_best_splits_mixed``); a new array when None.
    siblings : tuple ``(debt, first)``, optional
        ``histograms`` is rows ``first .. first + n_nodes - 1`` of the children batch
        ``debt.batch`` whose sibling half is still owed
        (:class:`~gpuboost.backends.cuda.histogram.SiblingDebt`): the launch pays it,
        one block per (pair, chunk) writing the sibling's histogram as it scans the pair
        (``split_scan_features`` with pairs), and zeroes the next level's built half the
        debt names. The whole batch is scanned (the rows outside ``histograms`` with all
        features and unbounded, their records dropped); the records are those of
        ``histograms`` once paid. The caller forgets the debt.

    Returns
    -------
    words : xp array of shape (n_nodes, RECORD_WORDS), int64, or None  # OUT
        The records as words (:func:`records_from_words` reads them on the host),
        written by the launch; None when there is nothing to scan
        (:func:`nothing_to_scan`: the records are ``no_split_records``, no launch).
    """
    if histograms.ndim != 4 or histograms.shape[3] != HIST_FIELDS:
        raise ValueError(
            f"histograms must have shape (n_nodes, n_features, n_bins, "
            f"{HIST_FIELDS}), got {histograms.shape}"
        )
    n_nodes, n_features, n_bins, _ = (int(size) for size in histograms.shape)
    missing_bin = int(missing_bin)
    # As the NumPy split scan: no candidate bins (or no node) -> records with zero sums.
    if nothing_to_scan(n_nodes, missing_bin):
        if siblings is not None:
            siblings[0].pay(launcher)
        return None
    if n_features == 0:
        raise ValueError("histograms have no feature")
    if not 0 <= missing_bin < n_bins:
        raise ValueError(f"missing_bin={missing_bin} is not a bin of {n_bins}-bin histograms")
    if n_bins > SCAN_MAX_THREADS:
        raise ValueError(f"at most {SCAN_MAX_THREADS} bins are supported, got {n_bins}")
    words = checked_words(xp, words, n_nodes)
    if siblings is None:
        histograms = xp.ascontiguousarray(histograms, dtype=HIST_DTYPE)
        record_first, n_pairs, next_words = 0, 0, 0
        unused = xp.empty(1, dtype=np.int64)  # the pair pointers: placeholders, never read
        pair_arguments = (unused, unused, np.int32(0), np.int64(0), unused)
    else:
        debt, record_first = siblings
        histograms, n_pairs, next_words = debt.batch, debt.n_pairs, debt.next_words
        pair_arguments = debt.kernel_arguments()
        feature_mask, node_bounds = _whole_batch_options(
            int(histograms.shape[0]), record_first, n_nodes, n_features, feature_mask, node_bounds
        )
    n_scanned = int(histograms.shape[0])
    n_units = n_pairs if n_pairs else n_scanned
    features_per_block, chunks_per_node = scan_chunks(n_units, n_features)
    zero_blocks = ceil_div(next_words, scan_threads(n_bins) * ZERO_WORDS_PER_THREAD)
    if n_units * chunks_per_node + zero_blocks > MAX_GRID_X:
        raise ValueError(f"{n_units} nodes x {chunks_per_node} blocks exceed the grid limit")
    options = scan_options(
        xp, n_value_bins, n_scanned, n_features, split_params, feature_mask, node_bounds
    )
    scratch = SplitScanScratch() if scratch is None else scratch
    node_arrivals, epoch = scratch.arrivals.next_launch(xp, n_units)
    feature_best = scratch.feature_best(xp, n_scanned, n_features)
    launcher(
        KERNEL_FILE,
        SCAN_KERNEL,
        n_units * chunks_per_node + zero_blocks,
        scan_threads(n_bins),
        (
            histograms,
            np.int32(n_scanned),
            *pair_arguments,
            *options,
            np.int32(n_features),
            np.int32(features_per_block),
            np.int32(chunks_per_node),
            *scan_scalars(n_bins, missing_bin, scale_gradients, scale_hessians, split_params),
            np.int64(epoch),
            node_arrivals,
            feature_best,
            np.int32(record_first),
            np.int32(n_nodes),
            words,
        ),
    )
    return words


#: Words of the next level's batch each thread of a zeroing block of the scan writes
#: (about).
ZERO_WORDS_PER_THREAD = 8


def _whole_batch_options(n_rows, first, n_nodes, n_features, feature_mask, node_bounds):
    """``(feature_mask, node_bounds)`` of the nodes ``first .. first + n_nodes - 1`` of a
    batch of ``n_rows``, spread over the whole batch: the other rows get every feature
    and no bounds (their records are dropped). None stays None."""
    if feature_mask is not None:
        whole = np.ones((n_rows, n_features), dtype=bool)
        whole[first : first + n_nodes] = np.asarray(feature_mask, dtype=bool).reshape(
            n_nodes, n_features
        )
        feature_mask = whole
    if node_bounds is not None:
        whole = np.tile(np.array([[-np.inf, np.inf]]), (n_rows, 1))
        whole[first : first + n_nodes] = np.asarray(node_bounds, dtype=np.float64).reshape(
            n_nodes, 2
        )
        node_bounds = whole
    return feature_mask, node_bounds


def checked_words(xp, words, n_nodes):
    """``words`` (an xp (n_nodes, RECORD_WORDS) int64 C-contiguous array a scan writes),
    checked; a new uninitialised one when None (every launch writes all its words)."""
    if words is None:
        return xp.empty((n_nodes, RECORD_WORDS), dtype=np.int64)
    if words.shape != (n_nodes, RECORD_WORDS) or words.dtype != np.int64:
        raise ValueError(
            f"words must be ({n_nodes}, {RECORD_WORDS}) int64, got {words.shape} {words.dtype}"
        )
    return words


def scan_options(xp, n_value_bins, n_nodes, n_features, split_params, feature_mask, node_bounds):
    """The device arguments ``(n_value_bins, feature_mask, has_mask, monotone, node_bounds,
    has_monotone)`` of a scan kernel (``split_scan_features``, ``row_scan_features``),
    checked; absent options get uninitialised one-element placeholders (never read)."""
    if isinstance(n_value_bins, xp.ndarray) and n_value_bins.dtype == np.int32:
        value_bins = xp.ascontiguousarray(n_value_bins)
    else:
        value_bins = xp.asarray(np.asarray(n_value_bins, dtype=np.int32))
    if value_bins.shape != (n_features,):
        raise ValueError(f"n_value_bins must have shape ({n_features},), got {value_bins.shape}")
    if feature_mask is None:
        has_mask = np.int32(0)
        mask = xp.empty(1, dtype=np.uint8)  # placeholder, never read
    else:
        host_mask = np.asarray(feature_mask, dtype=bool)
        if host_mask.shape != (n_nodes, n_features):
            raise ValueError(
                f"feature_mask must have shape ({n_nodes}, {n_features}), got {host_mask.shape}"
            )
        has_mask = np.int32(1)
        mask = xp.asarray(host_mask.astype(np.uint8))

    if split_params.monotone:
        if len(split_params.monotone) != n_features:
            raise ValueError(
                f"split_params.monotone has {len(split_params.monotone)} directions for "
                f"{n_features} features"
            )
        has_monotone = np.int32(1)
        monotone = xp.asarray(np.asarray(split_params.monotone, dtype=np.int8))
        bounds = (
            np.tile(np.array([[-np.inf, np.inf]]), (n_nodes, 1))
            if node_bounds is None
            else np.asarray(node_bounds, dtype=np.float64).reshape(n_nodes, 2)
        )
        bounds = xp.asarray(np.ascontiguousarray(bounds))
    else:
        has_monotone = np.int32(0)
        monotone = xp.empty(1, dtype=np.int8)  # placeholders, never read
        bounds = xp.empty(2, dtype=np.float64)
    return value_bins, mask, has_mask, monotone, bounds, has_monotone


def scan_scalars(n_bins, missing_bin, scale_gradients, scale_hessians, split_params):
    """The trailing scalars of a scan kernel, from ``n_bins`` to ``split_gain_eps``."""
    return (
        np.int32(n_bins),
        np.int32(missing_bin),
        np.float64(scale_gradients),
        np.float64(scale_hessians),
        *gain_scalars(split_params),
    )


def gain_scalars(params):
    """A scan kernel's ``SplitParams`` arguments, ``reg_lambda`` to ``split_gain_eps``
    (``gain.cuh``'s order), for every scan kernel (one-target and vector-leaf)."""
    return (
        np.float64(params.reg_lambda),
        np.float64(params.reg_alpha),
        np.float64(params.max_delta_step),
        np.float64(params.min_child_weight),
        np.int64(params.min_data_in_leaf),
        np.float64(params.gamma),
        np.float64(SPLIT_GAIN_EPS),
    )


def select_words(launcher, feature_best, node_sums, words):
    """Launch ``split_select_nodes`` on the per-(node, feature) bests ``feature_best``
    ((n_nodes * n_features, FEATURE_BEST_WORDS) int64, IN; written by an earlier launch)
    and ``node_sums`` ((n_nodes, 3) int64, IN) into ``words`` ((n_nodes, RECORD_WORDS)
    int64, OUT); return ``words`` (on the device)."""
    n_nodes = int(words.shape[0])
    n_features = int(feature_best.shape[0]) // max(n_nodes, 1)
    select_threads = _power_of_two_at_least(n_features, WARP_SIZE, SELECT_MAX_THREADS)
    launcher(
        KERNEL_FILE,
        SELECT_KERNEL,
        n_nodes,
        select_threads,
        (feature_best, node_sums, np.int32(n_features), words),
    )
    return words
