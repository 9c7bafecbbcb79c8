"""Segments: contiguous ranges ``[begin, end)`` of a position array.

A node owns a segment of the row partition (docs/DESIGN.md, "Row partition"), a
query owns a segment of the ranking rows, a tree owns a segment of the packed node
table. Every backend and module builds and checks segments with these helpers.
"""

import numpy as np

__all__ = ["offsets", "concat_ranges", "checked_segments"]


def offsets(lengths):
    """Exclusive prefix sums of segment lengths: segment ``i`` is ``[out[i], out[i + 1])``.

    Parameters
    ----------
    lengths : array-like of shape (n_segments,), int

    Returns
    -------
    ndarray of shape (n_segments + 1,), int64
        ``out[0] == 0`` and ``out[-1] == sum(lengths)``.
    """
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def concat_ranges(begins, ends):
    """Positions ``begins[0]..ends[0]-1, begins[1]..ends[1]-1, ...`` as one array.

    Parameters
    ----------
    begins, ends : ndarray of shape (n_segments,), int
        Half-open segment bounds.

    Returns
    -------
    positions : ndarray of shape (sum(ends - begins),), int64
    segment_of_position : ndarray of the same shape, int64
        Index of the segment each position belongs to.
    """
    begins = np.asarray(begins, dtype=np.int64)
    lengths = np.asarray(ends, dtype=np.int64) - begins
    total = int(lengths.sum())
    starts_in_output = offsets(lengths)[:-1]
    positions = np.repeat(begins - starts_in_output, lengths) + np.arange(total, dtype=np.int64)
    segment_of_position = np.repeat(np.arange(len(begins), dtype=np.int64), lengths)
    return positions, segment_of_position


def checked_segments(begins, ends, n_positions, disjoint=False):
    """Host int64 segment bounds, checked to lie inside ``[0, n_positions]``.

    Parameters
    ----------
    begins, ends : array-like of shape (n_segments,), int
    n_positions : int
    disjoint : bool
        Also require that no two non-empty segments overlap.

    Returns
    -------
    begins, ends : ndarray of shape (n_segments,), int64

    Raises
    ------
    ValueError
        Different lengths, a bound outside ``[0, n_positions]``, ``end < begin``,
        or (``disjoint``) overlapping segments.
    """
    begins = np.asarray(begins, dtype=np.int64).reshape(-1)
    ends = np.asarray(ends, dtype=np.int64).reshape(-1)
    if begins.shape != ends.shape:
        raise ValueError(f"begins and ends differ in length ({len(begins)} vs {len(ends)}).")
    if np.any(begins < 0) or np.any(ends < begins) or np.any(ends > n_positions):
        raise ValueError(f"Every segment must satisfy 0 <= begin <= end <= {n_positions}.")
    if disjoint:
        non_empty = ends > begins
        order = np.argsort(begins[non_empty], kind="stable")
        if np.any(ends[non_empty][order][:-1] > begins[non_empty][order][1:]):
            raise ValueError("Segments must not overlap.")
    return begins, ends
