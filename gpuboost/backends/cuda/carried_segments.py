"""Segments sent to the device ahead, in another launch's host-to-device copy.

The same cache serves a level's histogram build, whose node table (its segments, the
blocks' row offsets, the parents' rows, the row-scan carry) the host knows before the
level's partition: the partition sends it in its own segment-table copy
(``partition_rows``' ``carry``) and the build takes it (:meth:`CarriedSegments.take_table`)
instead of copying it again.

A depthwise level that scans some children from their rows (:mod:`.row_scan`) and the
others from histograms builds the histograms first (:func:`.histogram.build_children_histograms`,
one host-to-device copy of its node table), then scans both kinds
(``CudaBackend.find_best_splits_mixed``). The row scan needs its own node table
(``begins | ends``, int64): sending it in the build's copy instead of one of its own saves
a copy (a launch on the stream) per such level. The grower knows the row-scanned
segments before it builds (``row_segments=`` of the build), the build appends them to
its copy and keeps the device view here; the row scan takes it when its segments are
those (compared on the host, so a view kept for other segments is never used).

Layout of a kept table: one int64 device array of length ``2 * n``,
``[begins[0] .. begins[n - 1] | ends[0] .. ends[n - 1]]``, as :func:`.row_scan.row_scan_words`
reads it (``node_table[:n]``, ``node_table[n:]``).

Per host thread (a backend serves every training on its device, in any thread; the
launches of one thread are in stream order), one table at a time.
"""

import threading

import numpy as np

__all__ = ["CarriedSegments", "segment_table"]


def segment_table(begins, ends):
    """The host table ``[begins | ends]`` (int64, length ``2 * n``) of ``n`` segments.

    Parameters
    ----------
    begins, ends : sequence of int, length n (host)

    Returns
    -------
    ndarray of shape (2 * n,), int64
    """
    begins = np.asarray(begins, dtype=np.int64).reshape(-1)
    ends = np.asarray(ends, dtype=np.int64).reshape(-1)
    if begins.shape != ends.shape:
        raise ValueError(f"{len(begins)} begins for {len(ends)} ends")
    return np.concatenate([begins, ends])


class CarriedSegments:
    """A segment table sent to the device in another copy, kept until a scan takes it."""

    def __init__(self):
        self._local = threading.local()

    def put(self, table, device_table):
        """Keep ``device_table`` (xp int64 (2 * n,)), the device copy of the host
        ``table`` (:func:`segment_table`), written by a copy already issued."""
        self._local.pending = (np.array(table, dtype=np.int64), device_table)

    def clear(self):
        """Drop this thread's kept table."""
        self._local.pending = None

    def take(self, begins, ends):
        """The kept device table when it holds exactly the segments ``begins``/``ends``
        (then it is no longer kept), else None (the kept one is dropped)."""
        return self.take_table(segment_table(begins, ends))

    def take_table(self, table):
        """The kept device table when its host values equal ``table`` (any int64 host
        table, as a partition sends a histogram build's: ``partition_rows``' ``carry``),
        else None; either way no table is kept any more."""
        pending = getattr(self._local, "pending", None)
        self._local.pending = None
        if pending is None:
            return None
        kept, device_table = pending
        return device_table if np.array_equal(kept, table) else None
