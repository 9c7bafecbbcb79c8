"""Quantization of the compiled CPU backend (the reference, for every backend:
:func:`gpuboost.core.quantize.quantize`).

Two passes over the column: its largest magnitude (NaN propagating, so that
:func:`~gpuboost.core.quantize.quantization_scale` rejects it as the reference does),
then ``rint(value * scale)`` (float64 multiply, round half to even) as int32
(docs/DESIGN.md, "Quantization"). Both in parallel over row ranges.
"""

import numpy as np

from ...core.dtypes import GRAD_QUANT_DTYPE
from ...core.quantize import quantization_scale
from .jit import kernel, prange, sized, threads

__all__ = ["quantize"]


@kernel(parallel=True)
def _max_abs(values, n_threads):
    n_rows = values.shape[0]
    maxima = np.zeros(n_threads, dtype=np.float64)
    for thread in prange(n_threads):
        largest = 0.0
        for row in range(thread * n_rows // n_threads, (thread + 1) * n_rows // n_threads):
            magnitude = abs(values[row])
            if magnitude > largest or magnitude != magnitude:
                largest = magnitude
                if magnitude != magnitude:
                    break
        maxima[thread] = largest
    largest = 0.0
    for thread in range(n_threads):
        if maxima[thread] > largest or maxima[thread] != maxima[thread]:
            largest = maxima[thread]
            if largest != largest:
                break
    return largest


@kernel(parallel=True)
def _round(values, scale, out):
    for row in prange(values.shape[0]):
        out[row] = np.int32(np.rint(values[row] * scale))


def quantize(values, n_threads=None):
    """Quantize one column: ``(int32 array, scale)`` as
    :func:`gpuboost.core.quantize.quantize` does.

    Parameters
    ----------
    values : ndarray of shape (n_rows,), float64
    n_threads : int, optional
        Ranges of rows the maximum is taken over in parallel (default: the threads of
        the parallel kernels); does not change the result.

    Returns
    -------
    quantized : ndarray of shape (n_rows,), int32
    scale : float
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    n_rows = values.shape[0]
    n_ranges = threads() if n_threads is None else int(n_threads)
    max_abs = sized(_max_abs)(values, max(1, min(n_ranges, n_rows))) if n_rows else 0.0
    scale = quantization_scale(max_abs)
    quantized = np.empty(n_rows, dtype=GRAD_QUANT_DTYPE)
    sized(_round)(values, scale, quantized)
    return quantized, scale
