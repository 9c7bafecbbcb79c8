"""Per-segment float64 sums in a fixed sequential order (NumPy primitive).

The definition, shared by every backend (``cuda/segment_reduce.cu`` reproduces
it bit for bit): segment ``s`` is the positions ``begins[s] .. ends[s] - 1`` of
``sample_indices`` (a leaf of the row partition, docs/DESIGN.md), and its sum is
accumulated in float64 from ``+0.0`` in increasing position order::

    total = 0.0
    for position in range(begins[s], ends[s]):
        total = total + values[sample_indices[position]]

No pairwise or parallel reduction is involved, so the rounding is fully
determined (an empty segment sums to ``+0.0``). Used where a float sum over the
rows of a leaf feeds the model (the Huber leaf refit), so that both backends
give the same bits.
"""

import numpy as np

from ...core.segments import checked_segments

__all__ = ["segment_sums", "segment_sums_naive"]


def segment_sums(values, sample_indices, begins, ends):
    """Sequential float64 sum of every segment's values (see the module docstring).

    Parameters
    ----------
    values : ndarray of shape (n_rows,), float64  # IN
    sample_indices : ndarray of shape (n_positions,), int32  # IN
    begins, ends : array-like of int, shape (n_segments,)

    Returns
    -------
    sums : ndarray of shape (n_segments,), float64  # OUT
    """
    values = np.asarray(values, dtype=np.float64)
    begins, ends = checked_segments(begins, ends, len(sample_indices))
    sums = np.zeros(len(begins), dtype=np.float64)
    for segment, (begin, end) in enumerate(zip(begins, ends)):
        if end > begin:
            # np.cumsum adds strictly left to right (np.sum would sum pairwise). Starting
            # the sum at +0.0 only changes the sign of an all-zero sum, which "+ 0.0" fixes.
            sums[segment] = np.cumsum(values[sample_indices[begin:end]])[-1] + 0.0
    return sums


def segment_sums_naive(values, sample_indices, begins, ends):
    """Reference for :func:`segment_sums`: the loop of the module docstring."""
    sums = np.zeros(len(begins), dtype=np.float64)
    for segment, (begin, end) in enumerate(zip(begins, ends)):
        total = np.float64(0.0)
        for position in range(int(begin), int(end)):
            total = total + np.float64(values[int(sample_indices[position])])
        sums[segment] = total
    return sums
