"""The integer folds of :mod:`gpuboost.core.reproducible_sum` for NumPy arrays, compiled:
every fold's int64 sum in one parallel pass over the terms, where the array code makes
some six passes a fold. Each term goes through the array code's operations in its order
(``rint`` of the remainder scaled by two exact power-of-two factors, the remainder less
the integer scaled back), and integer sums are exact in any order and any partitioning
between threads, so the sums are the array code's. Registered with
:func:`gpuboost.core.reproducible_sum.use_host_loops` on import; it declines (None) when
the compiled kernels are off (``GPUBOOST_CPU_KERNELS=numpy``: the reference stays NumPy).
"""

import numpy as np

from ...core import reproducible_sum
from .jit import compiled_kernels_reason, kernel, prange, sized, threads

__all__ = ["fold_sums"]

#: Terms per thread's chunk.
CHUNK_TERMS = 1 << 16


@kernel(parallel=True)
def _fold_chunks(values, factors, chunk, out):
    """``out[c, f]``: fold ``f``'s integer sum over chunk ``c`` of ``values``."""
    n_folds = factors.shape[0]
    n_chunks = out.shape[0]
    for c in prange(n_chunks):
        begin = c * chunk
        end = min(begin + chunk, values.shape[0])
        for i in range(begin, end):
            remainder = values[i]
            for fold in range(n_folds):
                integer = np.rint((remainder * factors[fold, 0]) * factors[fold, 1])
                out[c, fold] += np.int64(integer)
                if fold < n_folds - 1:
                    remainder = remainder - (integer * factors[fold, 2]) * factors[fold, 3]


def fold_sums(values, factors):
    """The int64 sum of every fold (``factors``: per fold the two factors scaling down,
    the two scaling back), or None when the compiled kernels are off.

    Parameters
    ----------
    values : ndarray of shape (n,), float64, finite  # IN
    factors : ndarray of shape (n_folds, 4), float64  # IN

    Returns
    -------
    ndarray of shape (n_folds,), int64, or None
    """
    if compiled_kernels_reason() is not None:
        return None
    values = np.ascontiguousarray(values, dtype=np.float64)
    chunk = max(CHUNK_TERMS, -(-values.shape[0] // max(threads(), 1)))
    n_chunks = max(1, -(-values.shape[0] // chunk))
    out = np.zeros((n_chunks, factors.shape[0]), dtype=np.int64)
    sized(_fold_chunks, 5 * values.size)(values, np.ascontiguousarray(factors), chunk, out)
    return out.sum(axis=0)


reproducible_sum.use_host_loops({"fold_sums": fold_sums})
