"""Leaf primitives of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.leaf`; CUDA: ``cuda/leaf.cu``): adding every leaf's
value to the margins of its rows, and, for splits whose rows were never partitioned
(both children leaves), routing each row by the split and adding its child's value in
one pass (the definition: ``Backend.add_split_leaf_values``). The weighted quantiles of
the leaf refit stay the NumPy backend's (a sort per leaf, run once per tree).
"""

import numpy as np

from .jit import kernel, prange, sized
from .partition import goes_left

__all__ = ["add_leaf_values", "add_leaf_vectors", "add_split_leaf_values"]


@kernel(parallel=True)
def _add(raw, output, sample_indices, begins, ends, values):
    for segment in prange(begins.shape[0]):
        value = values[segment]
        for position in range(begins[segment], ends[segment]):
            raw[sample_indices[position], output] += value


def add_leaf_values(raw, output, sample_indices, begins, ends, values):
    """``raw[sample_indices[begin:end], output] += value`` for every leaf segment.

    Parameters
    ----------
    raw : ndarray of shape (n_rows, n_outputs), float64  # IN, OUT
    output : int
    sample_indices : ndarray of shape (n_positions,), int32  # IN
    begins, ends : array-like of int, shape (n_segments,)
        Leaf segments; each row appears at most once in them, so every row gets one
        addition and the threads never write the same element.
    values : array-like of float, shape (n_segments,)
    """
    sized(_add)(
        raw,
        int(output),
        sample_indices,
        np.ascontiguousarray(begins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(values, dtype=np.float64).reshape(-1),
    )


@kernel(parallel=True)
def _add_vectors(raw, sample_indices, begins, ends, values):
    for segment in prange(begins.shape[0]):
        for position in range(begins[segment], ends[segment]):
            row = sample_indices[position]
            for output in range(values.shape[1]):
                raw[row, output] += values[segment, output]


def add_leaf_vectors(raw, sample_indices, begins, ends, values):
    """``raw[sample_indices[begin:end], :] += values[segment]`` for every leaf segment
    (vector leaves: a row's k margins, side by side, updated at once).

    Parameters
    ----------
    raw : ndarray of shape (n_rows, k), float64, C order  # IN, OUT
    sample_indices, begins, ends
        As for :func:`add_leaf_values`.
    values : array-like of float, shape (n_segments, k)
    """
    sized(_add_vectors)(
        raw,
        sample_indices,
        np.ascontiguousarray(begins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(values, dtype=np.float64).reshape(len(begins), raw.shape[1]),
    )


@kernel(parallel=True)
def _add_split(
    raw,
    output,
    X_binned_columns,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    missing_bin,
    left_values,
    right_values,
):
    for segment in prange(begins.shape[0]):
        column = X_binned_columns[features[segment]]
        threshold = threshold_bins[segment]
        to_left = default_left[segment]
        left_value = left_values[segment]
        right_value = right_values[segment]
        for position in range(begins[segment], ends[segment]):
            row = sample_indices[position]
            left = goes_left(column[np.uint64(row)], threshold, to_left, missing_bin)
            raw[row, output] += left_value if left else right_value


def add_split_leaf_values(
    raw,
    output,
    X_binned_columns,
    missing_bin,
    sample_indices,
    begins,
    ends,
    features,
    threshold_bins,
    default_left,
    left_values,
    right_values,
):
    """``raw[row, output] += left_values[i] or right_values[i]`` for every row of segment
    ``i``, as it goes at split ``i`` (``bin <= threshold_bins[i]``, the missing bin by
    ``default_left[i]``); the rows are not moved.

    Parameters
    ----------
    raw : ndarray of shape (n_rows, n_outputs), float64  # IN, OUT
    output : int
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8  # IN
    missing_bin : int
    sample_indices : ndarray of shape (n_positions,), int32  # IN
    begins, ends, features, threshold_bins, default_left : array-like, shape (n_segments,)
        Disjoint segments (each row at most once) and their splits.
    left_values, right_values : array-like of float, shape (n_segments,)
    """
    sized(_add_split)(
        raw,
        int(output),
        X_binned_columns,
        sample_indices,
        np.ascontiguousarray(begins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(features, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(threshold_bins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(default_left, dtype=np.int64).reshape(-1),
        int(missing_bin),
        np.ascontiguousarray(left_values, dtype=np.float64).reshape(-1),
        np.ascontiguousarray(right_values, dtype=np.float64).reshape(-1),
    )
