"""Quantization of a tree's gradient and hessian columns on the CUDA backend (kernels in
``cuda/quantize.cu``).

The definition is :func:`gpuboost.core.quantize.quantize`, column by column:
``scale = quantization_scale(max|values|)`` and ``q = rint(values * scale)`` as int32.
Both columns go through two launches and one host synchronization (the reference's
array operations synchronize once per column, on ``float()`` of its maximum): one
kernel reduces both columns' magnitudes to one maximum per block (exact: a maximum does
not depend on order; ``cuda/column_maxima.cuh``), the host reads those few maxima at
once and computes the scales, and one kernel writes both quantized columns. When the
columns are a round's gradients as the gradient kernels wrote them
(:mod:`.gradients`), those kernels' block maxima are passed in and the first launch is
skipped.

Layout: the quantized columns are the two halves of one ``(n_rows, 2)`` int32 array
(gradient, hessian per row; :func:`quantize_columns` returns its columns as views), so the
kernels that gather rows through the partition (histogram, row scan) read a row's pair
with one 8-byte load, one 32-byte sector, instead of one sector in each of two columns.
:func:`gradient_pairs` gives those kernels the pair array: the columns' own when they are
its halves (no copy), else one stacked copy.
"""

import numpy as np

from ...core.array import to_numpy
from ...core.dtypes import GRAD_QUANT_DTYPE, Y_DTYPE
from ...core.quantize import quantization_scale
from .launch import ceil_div, grid_stride_blocks, require_array

__all__ = [
    "quantize_columns",
    "quantize_with_scales",
    "gradient_pairs",
    "PAIR_BYTES",
    "column_max_magnitudes",
    "maxima_blocks",
    "maxima_from_blocks",
    "QUANTIZE_THREADS_PER_BLOCK",
    "MAXIMA_MAX_BLOCKS",
]

#: Kernel file (``cuda/quantize.cu``) and its kernels.
KERNEL_FILE = "quantize"
MAXIMA_KERNEL = "column_pair_max_magnitudes"
QUANTIZE_KERNEL = "quantize_column_pair"
#: Threads per block of both kernels (quantize.cu: QUANTIZE_THREADS_PER_BLOCK).
QUANTIZE_THREADS_PER_BLOCK = 256
#: Most blocks of the maxima kernel (a grid-stride loop): enough to fill an H100 (132
#: SMs x 8 blocks of 256 threads) while the per-block maxima the host reads stay 16 KB.
MAXIMA_MAX_BLOCKS = 1024
#: Bytes of a row's (gradient, hessian) pair: two int32 read as one int2, whose address
#: the kernels need aligned to this.
PAIR_BYTES = 8


def maxima_blocks(n_rows):
    """Blocks of a grid-stride kernel over ``n_rows`` (> 0) rows that writes block
    maxima (at most :data:`MAXIMA_MAX_BLOCKS`)."""
    return int(min(ceil_div(n_rows, QUANTIZE_THREADS_PER_BLOCK), MAXIMA_MAX_BLOCKS))


def maxima_from_blocks(block_maxima):
    """``(max|gradients|, max|hessians|)`` (host floats, NaN when a column holds NaN) of
    the per-block magnitude bits ``block_maxima`` (xp array of shape (n_blocks, 2),
    uint64); copies them to the host (one synchronization)."""
    # Bits of non-negative doubles: their unsigned order is the numeric order (NaN last).
    largest = to_numpy(block_maxima).max(axis=0).view(np.float64)
    return float(largest[0]), float(largest[1])


def column_max_magnitudes(xp, launcher, gradients, hessians):
    """``(max|gradients|, max|hessians|)`` as host floats, NaN when a column holds NaN
    (as ``np.max(np.abs(...))``); one launch and one synchronization.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    gradients, hessians : xp arrays of shape (n_rows,), float64, C-contiguous  # IN
        ``n_rows > 0``.

    Returns
    -------
    (float, float)
    """
    n_rows = gradients.shape[0]
    n_blocks = maxima_blocks(n_rows)
    block_maxima = xp.empty((n_blocks, 2), dtype=np.uint64)  # (block, column) magnitude bits
    launcher(
        KERNEL_FILE,
        MAXIMA_KERNEL,
        n_blocks,
        QUANTIZE_THREADS_PER_BLOCK,
        (gradients, hessians, np.int64(n_rows), block_maxima),
    )
    return maxima_from_blocks(block_maxima)


def quantize_columns(xp, launcher, gradients, hessians, block_maxima=None):
    """Quantize a gradient and a hessian column, each as
    :func:`gpuboost.core.quantize.quantize` does.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    gradients, hessians : xp arrays of shape (n_rows,), float64  # IN
        Non-contiguous columns are copied first.
    block_maxima : xp array of shape (n_blocks, 2), uint64, optional  # IN
        The columns' magnitude bits reduced per block, as the gradient kernels write
        them (``cuda/column_maxima.cuh``); computed here when None.

    Returns
    -------
    (quantized_gradients, scale_gradients), (quantized_hessians, scale_hessians)
        xp arrays of shape (n_rows,), int32 (# OUT), and host floats. The two arrays
        are the columns of one ``(n_rows, 2)`` int32 array (strided views, stride 8
        bytes), which :func:`gradient_pairs` hands to the row-gathering kernels.

    Raises
    ------
    ValueError
        A column holds NaN or inf (:func:`~gpuboost.core.quantize.quantization_scale`).
    """
    gradients, hessians = _checked_columns(xp, gradients, hessians)
    n_rows = gradients.shape[0]
    if n_rows == 0:
        max_g = max_h = 0.0
    elif block_maxima is not None:
        max_g, max_h = maxima_from_blocks(block_maxima)
    else:
        max_g, max_h = column_max_magnitudes(xp, launcher, gradients, hessians)
    scale_g, scale_h = quantization_scale(max_g), quantization_scale(max_h)
    quantized_g, quantized_h = _quantize_pairs(xp, launcher, gradients, hessians, scale_g, scale_h)
    return (quantized_g, scale_g), (quantized_h, scale_h)


def quantize_with_scales(xp, launcher, gradients, hessians, scale_gradients, scale_hessians):
    """Quantize a gradient and a hessian column with given scales, each as
    :func:`gpuboost.core.quantize.quantize_with_scale` does, into one pair array as
    :func:`quantize_columns` lays it out (one launch, no synchronization).

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    gradients, hessians : xp arrays of shape (n_rows,), float64  # IN
        Non-contiguous columns are copied first.
    scale_gradients, scale_hessians : float

    Returns
    -------
    quantized_gradients, quantized_hessians : xp arrays of shape (n_rows,), int32  # OUT
        The columns of one ``(n_rows, 2)`` int32 array (:func:`gradient_pairs`).
    """
    gradients, hessians = _checked_columns(xp, gradients, hessians)
    return _quantize_pairs(xp, launcher, gradients, hessians, scale_gradients, scale_hessians)


def _checked_columns(xp, gradients, hessians):
    """The two float64 columns, contiguous, of one length (else ValueError)."""
    gradients = xp.ascontiguousarray(gradients)
    hessians = xp.ascontiguousarray(hessians)
    require_array(xp, gradients, Y_DTYPE, "gradients", ndim=1)
    require_array(xp, hessians, Y_DTYPE, "hessians", ndim=1)
    if hessians.shape[0] != gradients.shape[0]:
        raise ValueError(
            f"gradients and hessians differ in length: {gradients.shape[0]} and "
            f"{hessians.shape[0]}."
        )
    return gradients, hessians


def _quantize_pairs(xp, launcher, gradients, hessians, scale_g, scale_h):
    """``rint(column * scale)`` of both (checked) columns into one ``(n_rows, 2)`` int32
    array; returns its two columns (views)."""
    n_rows = gradients.shape[0]
    pairs = xp.empty((n_rows, 2), dtype=GRAD_QUANT_DTYPE)  # (row, gradient | hessian)
    if n_rows:
        launcher(
            KERNEL_FILE,
            QUANTIZE_KERNEL,
            grid_stride_blocks(n_rows, QUANTIZE_THREADS_PER_BLOCK),
            QUANTIZE_THREADS_PER_BLOCK,
            (
                gradients,
                hessians,
                np.int64(n_rows),
                np.float64(scale_g),
                np.float64(scale_h),
                pairs,
            ),
        )
    return pairs[:, 0], pairs[:, 1]


def _address(array):
    """Device address of the first element of ``array`` (CuPy or emulated)."""
    return int(array.__cuda_array_interface__["data"][0])


def gradient_pairs(xp, quantized_gradients, quantized_hessians):
    """The ``(n_rows, 2)`` int32 array of (gradient, hessian) rows that the
    row-gathering kernels read (one 8-byte load per row).

    Parameters
    ----------
    xp : module
    quantized_gradients, quantized_hessians : xp arrays of shape (n_rows,), int32  # IN
        Any strides.

    Returns
    -------
    pairs : xp array of shape (n_rows, 2), int32, C order, 8-byte aligned
        The array whose columns the two arguments are, when they are (the layout
        :func:`quantize_columns` writes: no copy); otherwise a new one stacked from
        them (one copy, e.g. for direct callers with two separate columns).
    """
    n_rows = quantized_gradients.shape[0]
    pairs = quantized_gradients.base
    if (
        pairs is not None
        and isinstance(pairs, xp.ndarray)
        and pairs.dtype == GRAD_QUANT_DTYPE
        and pairs.shape == (n_rows, 2)
        and pairs.flags.c_contiguous
        and quantized_hessians.shape == (n_rows,)
        and quantized_gradients.strides == quantized_hessians.strides == (PAIR_BYTES,)
        and _address(pairs) % PAIR_BYTES == 0
        and _address(quantized_gradients) == _address(pairs)
        and _address(quantized_hessians) == _address(pairs) + pairs.itemsize
    ):
        return pairs
    return xp.stack([quantized_gradients, quantized_hessians], axis=1)
