"""Quantization of the compiled CPU backend (the reference, for every backend:
:func:`gpuboost.core.quantize.quantize`).

Two passes over the column (:func:`quantize_pairs`: over every output's columns of a
vector-leaf tree at once, written row by row as the pairs its histograms read): its
largest magnitude (NaN propagating, so that
:func:`~gpuboost.core.quantize.quantization_scale` rejects it as the reference does),
then ``rint(value * scale)`` (float64 multiply, round half to even) as int32
(docs/DESIGN.md, "Quantization"). Both in parallel over row ranges.
"""

import numpy as np

from ...core.dtypes import GRAD_QUANT_DTYPE
from ...core.quantize import SQUARE_SPLIT_BITS, quantization_scale
from .jit import kernel, prange, sized, threads
from .recycled import recycled_empty

__all__ = ["quantize", "quantize_pairs", "dispersion_sums"]


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


@kernel(parallel=True)
def _max_abs_columns(gradients, hessians, n_threads):
    """Per column of ``gradients`` and ``hessians`` (n_rows, k) its largest magnitude,
    NaN where it holds one (as :func:`_max_abs`): (2k,) float64, ``(g_0, h_0, g_1,
    ...)``. Maxima and NaN counts kept apart, so that the row loop has no branch."""
    n_rows, n_outputs = gradients.shape
    maxima = np.zeros((n_threads, 2 * n_outputs), dtype=np.float64)
    nans = np.zeros((n_threads, 2 * n_outputs), dtype=np.int64)
    for thread in prange(n_threads):
        largest = np.zeros(2 * n_outputs, dtype=np.float64)
        count = np.zeros(2 * n_outputs, dtype=np.int64)
        for row in range(thread * n_rows // n_threads, (thread + 1) * n_rows // n_threads):
            for output in range(n_outputs):
                for column, value in (
                    (2 * output, gradients[row, output]),
                    (2 * output + 1, hessians[row, output]),
                ):
                    magnitude = abs(value)
                    largest[column] = max(largest[column], magnitude)
                    count[column] += magnitude != magnitude
        maxima[thread] = largest
        nans[thread] = count
    result = np.zeros(2 * n_outputs, dtype=np.float64)
    for column in range(2 * n_outputs):
        largest = 0.0
        for thread in range(n_threads):
            largest = max(largest, maxima[thread, column])
            if nans[thread, column]:
                largest = np.nan
                break
        result[column] = largest
    return result


@kernel(parallel=True)
def _round_pairs(gradients, hessians, scales, out):
    n_outputs = gradients.shape[1]
    for row in prange(gradients.shape[0]):
        for output in range(n_outputs):
            out[row, 2 * output] = np.int32(np.rint(gradients[row, output] * scales[2 * output]))
            out[row, 2 * output + 1] = np.int32(
                np.rint(hessians[row, output] * scales[2 * output + 1])
            )


def quantize_pairs(gradients, hessians, n_threads=None):
    """Quantize every output's gradient and hessian column of a vector-leaf tree, each as
    :func:`quantize` does (the same integers and scales), in one pass for all columns.

    Parameters
    ----------
    gradients, hessians : ndarray of shape (n_rows, k), float64
    n_threads : int, optional
        As for :func:`quantize`.

    Returns
    -------
    pairs : ndarray of shape (n_rows, 2k), int32
        Row ``r``: ``(g_0, h_0, g_1, h_1, ...)`` quantized.
    scales : list of k ``(scale_gradients, scale_hessians)``
    """
    gradients = np.ascontiguousarray(gradients, dtype=np.float64)
    hessians = np.ascontiguousarray(hessians, dtype=np.float64)
    n_rows, n_outputs = gradients.shape
    n_ranges = threads() if n_threads is None else int(n_threads)
    if n_rows:
        maxima = sized(_max_abs_columns)(gradients, hessians, max(1, min(n_ranges, n_rows)))
    else:
        maxima = np.zeros(2 * n_outputs)
    column_scales = np.array([quantization_scale(largest) for largest in maxima])
    pairs = recycled_empty((n_rows, 2 * n_outputs), GRAD_QUANT_DTYPE)  # no page faults
    sized(_round_pairs)(gradients, hessians, column_scales, pairs)
    return pairs, [tuple(float(scale) for scale in pair) for pair in column_scales.reshape(-1, 2)]


@kernel(parallel=True)
def _dispersion_parts(quantized_g, quantized_h, rows, n_threads):
    """Per range of ``rows`` the int64 sums of ``high**2``, ``high * low``, ``low**2``
    and ``q_h`` (``q_g = high * 2**SQUARE_SPLIT_BITS + low``), added over the ranges:
    (4,) int64. Integer sums: the same whatever the ranges."""
    n_rows = rows.shape[0]
    parts = np.zeros((n_threads, 4), dtype=np.int64)
    mask = (1 << SQUARE_SPLIT_BITS) - 1
    for thread in prange(n_threads):
        high_high = high_low = low_low = hessians = np.int64(0)
        for i in range(thread * n_rows // n_threads, (thread + 1) * n_rows // n_threads):
            row = rows[i]
            value = np.int64(quantized_g[row])
            high = value >> SQUARE_SPLIT_BITS
            low = value & mask
            high_high += high * high
            high_low += high * low
            low_low += low * low
            hessians += np.int64(quantized_h[row])
        parts[thread, 0] = high_high
        parts[thread, 1] = high_low
        parts[thread, 2] = low_low
        parts[thread, 3] = hessians
    return parts.sum(axis=0)


def dispersion_sums(quantized_g, quantized_h, rows):
    """:func:`gpuboost.core.quantize.dispersion_sums` in one compiled pass over ``rows``
    (the reference makes five int64 arrays of them; about 8 % of a 1M-row training's
    time), the same four Python ints."""
    rows = np.arange(quantized_g.shape[0], dtype=np.int64) if rows is None else rows
    n_ranges = max(1, min(threads(), int(rows.shape[0])))
    parts = sized(_dispersion_parts, work=2 * int(rows.shape[0]))(
        quantized_g, quantized_h, rows, n_ranges
    )
    return tuple(int(part) for part in parts)
