"""The partition ahead of a row scan, from the scan to the step that uses it.

A depthwise level's nodes scanned from their rows (``cuda/row_scan.cu``:
``row_scan_cluster``) are split by the records they get before the host has applied
them: each block of a node's cluster keeps the first rows of its share (index and bins'
words, as many as its shared memory holds beside the cells) while it adds them to the
cells, and once rank 0 has the node's record the blocks write the rows, split by it,
into a new index array (``ahead_indices``). No bin is read from global memory for a kept
row, where ``partition_move_tiles`` reads a 32-byte sector per scattered row; a row past
the kept ones has its index and split byte read again, as that kernel would (docs/
DESIGN.md, "GPU performance model": the byte bar).
What is written is only a proposal: the host decides which nodes split (depth, leaves,
the splitter's checks), so a later step takes a segment from it only when it splits that
node by the very record the scan used::

    sample_indices   | node a (scanned)     | node b (scanned)     | c (histogram) |
    ahead_indices    | a's rows split by    | b's rows split by    | (unwritten)   |
                     | a's record: L... R...| b's record           |               |

    the next partition, splitting a by its record, b not at all, c by its record:
    moved = ahead_indices: a kept as written; b copied from sample_indices over the
    proposal; c split by partition_move_tiles (one launch for b and c)

Two steps take it: :meth:`CudaBackend.partition` (the next level's partition moves the
rows into ``ahead_indices``, writing only the segments not partitioned ahead) and
:meth:`CudaBackend.add_tree_leaf_values` (a tree's last level, whose splits are never
partitioned: their rows are added to the margins as the leaves' segments of
``ahead_indices``, no bin read). Each takes the proposal once (:meth:`PartitionAhead.take`),
for the same ``sample_indices`` array and the same bins only; any other step discards it.
"""

import threading

import numpy as np

from .row_scan import partitions_ahead

__all__ = ["AheadRows", "PartitionAhead"]


class AheadRows:
    """The rows a row scan partitioned ahead, and the splits it partitioned them by.

    Attributes
    ----------
    indices : xp array of shape (n_positions,), int32
        ``ahead_indices``: the partitioned nodes' positions written, the others not.
    source : xp array of shape (n_positions,), int32
        The ``sample_indices`` the scan read.
    X_binned : xp array
        The bins the scan read (``DeviceData.arrays['X_binned']``).
    splits : dict of tuple to int
        ``(begin, end, feature, threshold_bin, default_left, left_count)`` of every node
        partitioned ahead -> its index in the scan's batch.
    """

    def __init__(self, indices, source, X_binned, splits):
        self.indices = indices
        self.source = source
        self.X_binned = X_binned
        self.splits = splits

    def written(self, begins, ends, features, threshold_bins, default_left, left_counts):
        """Which of these splits (host sequences, one entry per segment) the scan
        partitioned ahead exactly so: their segments of :attr:`indices` hold the split.

        Returns
        -------
        bool ndarray of shape (n_segments,)
        """
        keys = zip(
            np.asarray(begins, np.int64).tolist(),
            np.asarray(ends, np.int64).tolist(),
            np.asarray(features, np.int64).tolist(),
            np.asarray(threshold_bins, np.int64).tolist(),
            np.asarray(default_left, bool).tolist(),
            np.asarray(left_counts, np.int64).tolist(),
        )
        return np.array([key in self.splits for key in keys], dtype=bool).reshape(-1)


class PartitionAhead:
    """The partition ahead of the row scans, one per backend (device): per host thread,
    the last scan's :class:`AheadRows` until a step takes or discards it."""

    def __init__(self):
        self._local = threading.local()

    def indices_for(self, xp, launcher, n_features, n_bins, sample_indices, begins, ends):
        """The array a row scan of these segments partitions ahead into (a new one), or
        None when it partitions no node ahead (:func:`.row_scan.partitions_ahead`). Discards
        what an earlier scan left."""
        self.discard()
        if not partitions_ahead(launcher, n_features, n_bins, begins, ends):
            return None
        return xp.empty(sample_indices.shape, dtype=sample_indices.dtype)

    def keep(self, indices, sample_indices, X_binned, begins, ends, records):
        """Keep what the scan with ``indices`` (from :meth:`indices_for`: every node of the
        scan partitioned ahead) wrote: the nodes that have a split, by their ``records``
        (host SPLIT_RECORD_DTYPE, one per segment)."""
        if indices is None:
            return
        nodes = np.flatnonzero(records["feature"] >= 0)
        split = records[nodes]
        keys = zip(  # whole columns to Python scalars: a level's nodes in a few calls
            np.asarray(begins, np.int64).reshape(-1)[nodes].tolist(),
            np.asarray(ends, np.int64).reshape(-1)[nodes].tolist(),
            split["feature"].tolist(),
            split["bin"].tolist(),
            split["default_left"].tolist(),
            split["left_count"].tolist(),
        )
        splits = dict(zip(keys, nodes.tolist()))
        self._local.rows = AheadRows(indices, sample_indices, X_binned, splits)

    def take(self, sample_indices, X_binned):
        """The :class:`AheadRows` of the last scan when it read ``sample_indices`` and
        ``X_binned`` (these very arrays), else None; forgotten either way."""
        rows = getattr(self._local, "rows", None)
        self._local.rows = None
        if rows is None or rows.source is not sample_indices or rows.X_binned is not X_binned:
            return None
        return rows

    def discard(self):
        """Forget this thread's partition ahead (a step that cannot use it)."""
        self._local.rows = None
