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

from ...core.categorical import BITSET_DTYPE, SPLIT_SET_WORDS
from ...core.dtypes import SAMPLE_INDEX_DTYPE, X_BINNED_DTYPE
from ...core.segments import checked_segments
from .launch import require_array, segment_table, segment_tiles

__all__ = [
    "binned_columns",
    "partition_rows",
    "move_partitioned_rows",
    "moving_moves_fewer_bytes",
    "TileStatus",
    "PARTITION_THREADS_PER_BLOCK",
    "PARTITION_ITEMS_PER_THREAD",
    "PARTITION_TILE_ROWS",
]

#: Kernel file (``cuda/partition.cu``) and its kernels.
KERNEL_FILE = "partition"
FLAG_KERNEL = "partition_flag_tiles"
SCATTER_KERNEL = "partition_scatter_tiles"
MOVE_KERNEL = "partition_move_tiles"
#: The split feature of a segment copied unchanged by ``partition_move_tiles``.
COPIED = -1
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
#: 64-bit words of a categorical split's left set in ``partition_flag_tiles``
#: (partition.cu: kPartitionSetWords): the ``SPLIT_SET_WORDS`` uint32 words, two at a time.
PARTITION_SET_WORDS = SPLIT_SET_WORDS * 32 // 64


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

    def discard(self):
        """Drop this thread's words (their memory returns to the pool); its next launch
        makes zeroed ones."""
        self._local.words = None

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
    left_sets=None,
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
    left_sets : ndarray of shape (n_nodes, SPLIT_SET_WORDS), uint32, optional (host)
        Categorical splits: the value bins going left of the nodes whose threshold bin
        is negative (bitset words, ``core.categorical``); the missing bin follows
        ``default_left``. Sent in the segment table's copy.

    Returns
    -------
    left_counts : xp array of shape (n_nodes,), int64, or None  # OUT
        Only with ``return_left_counts``.
    """
    checked = _checked_splits(
        xp, X_binned_columns, sample_indices, begins, ends, features, threshold_bins, default_left
    )
    n_rows, n_segments = checked["n_rows"], len(checked["begins"])
    first_tile, n_tiles = segment_tiles(checked["begins"], checked["ends"], PARTITION_TILE_ROWS)
    if n_tiles == 0:
        return xp.zeros(n_segments, dtype=np.int64) if return_left_counts else None
    sets = () if left_sets is None else (_set_words(left_sets, n_segments),)
    (
        segment_begins,
        segment_ends,
        segment_first_tile,
        split_features,
        split_bins,
        split_default_left,
        *split_sets,
    ) = _device_table(xp, checked, first_tile, sets, carry, carried_segments)
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
            split_sets[0] if split_sets else split_bins,  # numeric only: never read
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


def _set_words(left_sets, n_segments):
    """The left sets as the kernel's int64 row: segment ``s``'s ``PARTITION_SET_WORDS``
    words at ``PARTITION_SET_WORDS * s``, each two of the uint32 words (little-endian:
    bin ``b`` is bit ``b % 64`` of word ``b // 64``, as bit ``b % 32`` of uint32 word
    ``b // 32``)."""
    words = np.asarray(left_sets, dtype=BITSET_DTYPE)
    if words.ndim != 2 or words.shape[0] != n_segments or words.shape[1] > SPLIT_SET_WORDS:
        raise ValueError(
            f"left_sets needs shape ({n_segments}, <= {SPLIT_SET_WORDS}) (a set of at most "
            f"{SPLIT_SET_WORDS} uint32 words per segment), got {words.shape}."
        )
    padded = np.zeros((n_segments, SPLIT_SET_WORDS), dtype="<u4")
    padded[:, : words.shape[1]] = words
    return padded.view("<i8").astype(np.int64).reshape(-1)


def _checked_splits(
    xp, X_binned_columns, sample_indices, begins, ends, features, threshold_bins, default_left
):
    """The checked inputs of a partition as host int64 arrays (dict: ``begins``, ``ends``,
    ``features``, ``threshold_bins``, ``default_left``, and ``n_rows``, the bins' rows)."""
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
    return {
        "begins": begins,
        "ends": ends,
        "features": features,
        "threshold_bins": threshold_bins,
        "default_left": default_left,
        "n_rows": int(n_rows),
    }


def _device_table(xp, checked, first_tile, extra_rows, carry, carried_segments):
    """The per-segment table of a partition launch on the device, in one copy: begins,
    ends, first tiles, features, threshold bins, default_left, then ``extra_rows``
    (with ``carry``: another launch's table in the same copy, kept in
    ``carried_segments``)."""
    if (carry is None) != (carried_segments is None):
        raise ValueError("carry and carried_segments go together")
    table = [
        checked["begins"],
        checked["ends"],
        first_tile,
        checked["features"],
        checked["threshold_bins"],
        checked["default_left"],
        *extra_rows,
    ]
    if carry is None:
        return segment_table(xp, table)
    table, device_carry = segment_table(xp, table, trailing=carry)
    carried_segments.put(carry, device_carry)
    return table


def moving_moves_fewer_bytes(begins, ends, n_positions):
    """Whether :func:`move_partitioned_rows` moves no more index bytes than
    :func:`partition_rows` for these segments of ``n_positions`` positions: moving reads
    and writes every position's index once (8 bytes, the positions outside the segments
    copied), splitting in place reads, saves, reads back and writes the segments' (16
    bytes); the bins are read either way. So: when the segments hold at least half of the
    positions (a depthwise level, the first lossguide step), not when most positions are
    in earlier leaves (small trees of many classes, later lossguide steps)."""
    split_positions = int(np.sum(np.asarray(ends, np.int64) - np.asarray(begins, np.int64)))
    return 2 * split_positions >= int(n_positions)


def move_partitioned_rows(
    xp,
    launcher,
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    left_counts,
    missing_bin,
    *,
    status=None,
    carry=None,
    carried_segments=None,
    moved=None,
    written=None,
):
    """:func:`partition_rows` into a new array, in one launch (double buffering).

    ``partition_move_tiles`` writes every position of ``sample_indices`` to a new array:
    the listed segments split (stable; their right rows placed after ``left_counts[i]``
    left rows, so no launch has to count them first), every other position as it was
    (copied as segments that do not split). ``sample_indices`` is only read: 8 bytes of
    index per position and no scratch copy, where the in-place split moves 16 and needs a
    second launch (``cuda/partition.cu``).

    Parameters
    ----------
    xp, launcher, X_binned_columns, begins, ends, features, threshold_bins, default_left,
    missing_bin, status, carry, carried_segments
        As for :func:`partition_rows`.
    sample_indices : xp array of shape (n_positions,), int32  # IN
    left_counts : sequence of int, shape (n_nodes,) (host)
        The rows of each segment that go left (the split records' counts). They must be
        those of the rows: a wrong count leaves positions of the new array unwritten
        (the emulation's initcheck reports a read of them).
    moved : xp array of shape (n_positions,), int32, optional  # IN, OUT
        The array to write (default: a new one), whose ``written`` segments hold
        their partition already (``row_scan.row_scan_words``' partition ahead).
    written : (begins, ends), sequences of int (host), optional
        Segments of ``moved`` already written: neither split nor copied here (disjoint
        from the listed segments).

    Returns
    -------
    moved : xp array of shape (n_positions,), int32  # OUT
        The partition: ``sample_indices`` with the listed segments split.
    """
    checked = _checked_splits(
        xp, X_binned_columns, sample_indices, begins, ends, features, threshold_bins, default_left
    )
    left_counts = np.asarray(left_counts, dtype=np.int64).reshape(-1)
    lengths = checked["ends"] - checked["begins"]
    if len(left_counts) != len(lengths) or np.any(left_counts < 0) or np.any(left_counts > lengths):
        raise ValueError("left_counts needs one count per segment, in [0, its length].")
    n_positions = int(sample_indices.shape[0])
    if moved is None:
        moved = xp.empty(n_positions, dtype=SAMPLE_INDEX_DTYPE)
    else:
        require_array(xp, moved, SAMPLE_INDEX_DTYPE, "moved", ndim=1)
        if moved.shape != sample_indices.shape or moved is sample_indices:
            raise ValueError("moved must be another array of the shape of sample_indices")
    written_begins, written_ends = (
        (np.zeros(0, np.int64), np.zeros(0, np.int64)) if written is None else written
    )
    written_begins, written_ends = checked_segments(written_begins, written_ends, n_positions)
    # Every position in a segment, listed or written: the gaps between them are copied.
    span_begins = np.concatenate([checked["begins"], written_begins])
    span_ends = np.concatenate([checked["ends"], written_ends])
    checked_segments(span_begins, span_ends, n_positions, disjoint=True)
    listed = np.flatnonzero(span_ends > span_begins)
    listed = listed[np.argsort(span_begins[listed])]
    spans = np.column_stack([span_begins[listed], span_ends[listed]])
    bounds = np.concatenate([[0], spans.reshape(-1), [n_positions]])
    gap_begins, gap_ends = bounds[0::2], bounds[1::2]
    gaps = gap_ends > gap_begins
    gap_begins, gap_ends = gap_begins[gaps], gap_ends[gaps]
    n_gaps = len(gap_begins)
    every = {
        "begins": np.concatenate([checked["begins"], gap_begins]),
        "ends": np.concatenate([checked["ends"], gap_ends]),
        "features": np.concatenate([checked["features"], np.full(n_gaps, COPIED)]),
        "threshold_bins": np.concatenate([checked["threshold_bins"], np.zeros(n_gaps, np.int64)]),
        "default_left": np.concatenate([checked["default_left"], np.zeros(n_gaps, np.int64)]),
    }
    n_left = np.concatenate([left_counts, gap_ends - gap_begins])
    first_tile, n_tiles = segment_tiles(every["begins"], every["ends"], PARTITION_TILE_ROWS)
    if n_tiles == 0:
        return moved
    table = _device_table(xp, every, first_tile, (n_left,), carry, carried_segments)
    status = TileStatus() if status is None else status
    tile_status, epoch = status.next_launch(xp, n_tiles)
    launcher(
        KERNEL_FILE,
        MOVE_KERNEL,
        n_tiles,
        PARTITION_THREADS_PER_BLOCK,
        (
            X_binned_columns,
            np.int64(checked["n_rows"]),
            sample_indices,
            *table,
            np.int32(len(n_left)),
            np.int32(missing_bin),
            np.int64(epoch),
            tile_status,
            moved,
        ),
    )
    return moved
