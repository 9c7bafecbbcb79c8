"""Leaf primitives of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.leaf`; CUDA: ``cuda/leaf.cu``): adding every leaf's
value to the margins of its rows. The weighted quantiles of the leaf refit stay the
NumPy backend's (a sort per leaf, run once per tree).
"""

import numpy as np

from .jit import kernel, prange

__all__ = ["add_leaf_values"]


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
    _add(
        raw,
        int(output),
        sample_indices,
        np.ascontiguousarray(begins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(values, dtype=np.float64).reshape(-1),
    )
