"""Leaf primitives of the NumPy backend (and their naive loop references): adding leaf
values to the rows' margins, and the weighted quantile of every leaf's values (leaf
refit of quantile objectives). CUDA version: ``cuda/leaf.cu``.

Leaves are segments ``[begins[s], ends[s])`` of ``sample_indices`` (docs/DESIGN.md,
"Row partition").
"""

import numpy as np

from ...core.quantile import weighted_quantile
from ...core.segments import concat_ranges

__all__ = ["add_leaf_values", "add_leaf_values_naive", "segment_weighted_quantile"]


def add_leaf_values(raw, output, sample_indices, begins, ends, values):
    """``raw[sample_indices[begin:end], output] += value`` for every leaf segment.

    Parameters
    ----------
    raw : ndarray of shape (n_rows, n_outputs), float64  # IN, OUT
    output : int
        The column of ``raw`` to update.
    sample_indices : ndarray of shape (n_positions,), int32  # IN
    begins, ends : array-like of int, shape (n_segments,)
        Leaf segments; each row appears at most once in them.
    values : array-like of float, shape (n_segments,)
    """
    positions, segment = concat_ranges(begins, ends)
    raw[sample_indices[positions], output] += np.asarray(values, dtype=np.float64)[segment]


def add_leaf_values_naive(raw, output, sample_indices, begins, ends, values):
    """Reference loop version of :func:`add_leaf_values`."""
    for begin, end, value in zip(begins, ends, values):
        for position in range(int(begin), int(end)):
            raw[int(sample_indices[position]), output] += float(value)


def segment_weighted_quantile(values, weights, sample_indices, begins, ends, alpha):
    """Per segment, ``weighted_quantile`` (gpuboost.core.quantile) of its rows' values.

    A loop over the segments, so it is also the naive reference.

    Parameters
    ----------
    values : ndarray of shape (n_rows,), float64  # IN
    weights : ndarray of shape (n_rows,), float64, or None  # IN
    sample_indices : ndarray of shape (n_positions,), int32  # IN
    begins, ends : array-like of int, shape (n_segments,)
        Non-empty leaf segments.
    alpha : float
        In ``[0, 1]``.

    Returns
    -------
    quantiles : ndarray of shape (n_segments,), float64  # OUT
    """
    out = np.empty(len(begins), dtype=np.float64)
    for i, (begin, end) in enumerate(zip(begins, ends)):
        rows = sample_indices[begin:end]
        out[i] = weighted_quantile(values[rows], None if weights is None else weights[rows], alpha)
    return out
