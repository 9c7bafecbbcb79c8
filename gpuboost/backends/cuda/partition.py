"""Row-partition primitive of the CUDA backend (kernels in ``cuda/partition.cu``).

The same stable in-place split as
:func:`gpuboost.backends.numpy.partition.partition_rows` (docs/DESIGN.md, "Row
partition"): per-tile go-left masks (a bit per position) and the left rows of each
segment through each tile (a decoupled look-back, :class:`TileStatus`), then a stable
scatter (ranks from the masks' popcounts); two launches.
One small host-to-device copy of the segment table per batch of nodes, no device-to-host
copy. The kernels read the bins from a column-major copy (:func:`binned_columns`, made
once per DeviceData: ``n_features`` bytes per row), where a warp's bins of a dense
segment share sectors (``cuda/partition.cu``, access pattern).
"""

import threading

import numpy as np

from ...core.dtypes import SAMPLE_INDEX_DTYPE, X_BINNED_DTYPE
from ...core.segments import checked_segments
from .launch import require_array, segment_table, segment_tiles

__all__ = [
    "binned_columns",
    "partition_rows",
    "TileStatus",
    "PARTITION_THREADS_PER_BLOCK",
    "PARTITION_ITEMS_PER_THREAD",
    "PARTITION_TILE_ROWS",
]

#: Kernel file (``cuda/partition.cu``) and its kernels.
KERNEL_FILE = "partition"
FLAG_KERNEL = "partition_flag_tiles"
SCATTER_KERNEL = "partition_scatter_tiles"
# The tile geometry is compiled into partition.cu and must equal the constants named
# there (tests/backends/cuda/test_partition.py checks it).
#: Threads per block of both kernels (partition.cu: kPartitionThreadsPerBlock).
PARTITION_THREADS_PER_BLOCK = 128
#: Positions per thread and tile (partition.cu: kPartitionItemsPerThread).
PARTITION_ITEMS_PER_THREAD = 8
#: Positions per tile.
PARTITION_TILE_ROWS = PARTITION_THREADS_PER_BLOCK * PARTITION_ITEMS_PER_THREAD
#: Go-left mask words (32 positions each) per tile (partition.cu: kPartitionChunksPerTile).
PARTITION_CHUNKS_PER_TILE = PARTITION_TILE_ROWS // 32


#: ``DeviceData.arrays`` key of the column-major bins.
BINNED_COLUMNS_KEY = "X_binned_columns"


def binned_columns(xp, data):
    """The bins of ``data`` column by column, as the partition kernels read them: made from
    ``data.arrays['X_binned']`` at first use and kept in ``data.arrays``.

    Parameters
    ----------
    xp : module
    data : gpuboost.backends.base.DeviceData

    Returns
    -------
    X_binned_columns : xp array of shape (n_features, n_rows), uint8, C order
    """
    columns = data.arrays.get(BINNED_COLUMNS_KEY)
    if columns is None:
        columns = xp.ascontiguousarray(data.arrays["X_binned"].T)
        data.arrays[BINNED_COLUMNS_KEY] = columns
    return columns


#: Epochs of the status words are in [1, MAX_STATUS_EPOCH] (31 bits, partition.cu).
MAX_STATUS_EPOCH = 2**31 - 1


class TileStatus:
    """The status words of ``partition_flag_tiles``' look-back, kept from launch to launch.

    Every launch gets a new epoch, so the words of earlier launches read as unpublished
    and a buffer is zeroed only when it is made (or grown, or the epochs wrap around):
    no clearing launch per partition. One per backend (device), with a buffer per host
    thread: the launches of one thread are in stream order, and two threads launching on
    different streams (CuPy's per-thread default streams) never share status words.
    """

    def __init__(self):
        self._local = threading.local()

    def next_launch(self, xp, n_tiles):
        """``(words, epoch)`` for a launch over ``n_tiles`` tiles: an xp array of at
        least ``n_tiles`` uint64 words and the launch's epoch (an int)."""
        local = self._local
        words = getattr(local, "words", None)
        epoch = getattr(local, "epoch", 0) + 1
        if words is None or words.shape[0] < n_tiles or epoch > MAX_STATUS_EPOCH:
            epoch = 1
            size = 1 << max(int(n_tiles) - 1, 1).bit_length()  # grow by powers of two
            words = xp.zeros(size, dtype=np.uint64)
        local.words, local.epoch = words, epoch
        return words, epoch

    @property
    def epoch(self):
        """The epoch of this thread's last launch (0 before the first)."""
        return getattr(self._local, "epoch", 0)


def partition_rows(
    xp,
    launcher,
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    missing_bin,
    *,
    status=None,
    return_left_counts=False,
    carry=None,
    carried_segments=None,
):
    """Split several nodes' segments at once, stably and in place.

    Parameters
    ----------
    xp : module
        ``cupy`` or the emulated device namespace.
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X_binned_columns : xp array of shape (n_features, n_rows), uint8, C order  # IN
        The bins column by column (:func:`binned_columns`).
    sample_indices : xp array of shape (n_positions,), int32  # IN, OUT
        Every listed segment is reordered: its rows going left first, then the others,
        each in their original order.
    begins, ends : sequence of int, shape (n_nodes,) (host)
        The segments of the nodes being split (disjoint).
    features, threshold_bins : sequence of int, shape (n_nodes,) (host)
    default_left : sequence of bool, shape (n_nodes,) (host)
    missing_bin : int
    status : TileStatus, optional
        The look-back's status words (the backend's; a new one when not given).
    carry : ndarray of shape (m,), int64, optional (host)
        Another launch's table sent in the segment table's copy (the level's histogram
        build: :func:`.histogram.children_build_table`), its device copy kept in
        ``carried_segments`` (:mod:`.carried_segments`).
    carried_segments : CarriedSegments, optional
        With ``carry``.
    return_left_counts : bool
        Also return the rows sent left per segment (for tests; training knows them from
        the split records).

    Returns
    -------
    left_counts : xp array of shape (n_nodes,), int64, or None  # OUT
        Only with ``return_left_counts``.
    """
    require_array(xp, X_binned_columns, X_BINNED_DTYPE, "X_binned_columns", ndim=2)
    require_array(xp, sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
    n_features, n_rows = X_binned_columns.shape
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0], disjoint=True)
    n_segments = len(begins)
    features = np.asarray(features, dtype=np.int64).reshape(-1)
    threshold_bins = np.asarray(threshold_bins, dtype=np.int64).reshape(-1)
    default_left = np.asarray(default_left, dtype=bool).reshape(-1).astype(np.int64)
    if not (len(features) == len(threshold_bins) == len(default_left) == n_segments):
        raise ValueError("features, threshold_bins and default_left need one entry per segment.")
    if np.any(features < 0) or np.any(features >= n_features):
        raise ValueError(f"Split features must be in [0, {n_features}).")
    if (carry is None) != (carried_segments is None):
        raise ValueError("carry and carried_segments go together")
    first_tile, n_tiles = segment_tiles(begins, ends, PARTITION_TILE_ROWS)
    if n_tiles == 0:
        return xp.zeros(n_segments, dtype=np.int64) if return_left_counts else None
    table = [begins, ends, first_tile, features, threshold_bins, default_left]
    if carry is None:
        table = segment_table(xp, table)
    else:
        table, device_carry = segment_table(xp, table, trailing=carry)
        carried_segments.put(carry, device_carry)
    (
        segment_begins,
        segment_ends,
        segment_first_tile,
        split_features,
        split_bins,
        split_default_left,
    ) = table
    n_positions = sample_indices.shape[0]
    saved_rows = xp.empty(n_positions, dtype=SAMPLE_INDEX_DTYPE)
    left_masks = xp.empty(n_tiles * PARTITION_CHUNKS_PER_TILE, dtype=np.uint32)
    tile_lefts_through = xp.empty(n_tiles, dtype=np.int64)
    status = TileStatus() if status is None else status
    tile_status, epoch = status.next_launch(xp, n_tiles)
    launcher(
        KERNEL_FILE,
        FLAG_KERNEL,
        n_tiles,
        PARTITION_THREADS_PER_BLOCK,
        (
            X_binned_columns,
            np.int64(n_rows),
            sample_indices,
            segment_begins,
            segment_ends,
            segment_first_tile,
            split_features,
            split_bins,
            split_default_left,
            np.int32(n_segments),
            np.int32(missing_bin),
            np.int64(epoch),
            tile_status,
            saved_rows,
            left_masks,
            tile_lefts_through,
        ),
    )
    launcher(
        KERNEL_FILE,
        SCATTER_KERNEL,
        n_tiles,
        PARTITION_THREADS_PER_BLOCK,
        (
            saved_rows,
            left_masks,
            tile_lefts_through,
            segment_begins,
            segment_ends,
            segment_first_tile,
            np.int32(n_segments),
            sample_indices,
        ),
    )
    if not return_left_counts:
        return None
    # The last tile of a segment holds its left count; empty segments own no tile.
    through = xp.concatenate([xp.zeros(1, dtype=np.int64), tile_lefts_through])
    last = xp.array(np.where(first_tile[1:] > first_tile[:-1], first_tile[1:], 0))
    return through[last]
