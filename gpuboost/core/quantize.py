"""Fixed-point quantization of gradients and hessians (array-module agnostic).

The determinism contract (docs/DESIGN.md, "Quantization"): per round and per
output column, ``scale`` is the largest power of two at most
``GRAD_QUANT_MAX / max|values|`` (1.0 when all values are zero) and
``q = rint(values * scale)`` as int32. Every later reduction is an
exact integer sum, so histograms do not depend on summation order and the NumPy
and CUDA backends agree bit for bit. Float sums are recovered as
``sum_q / scale`` (float64 division), which a power of two makes exact and equal to
``sum_q * (1 / scale)``: the compiled split scan multiplies.
"""

import math

import numpy as np

from .array import to_numpy
from .dtypes import GRAD_QUANT_DTYPE, GRAD_QUANT_MAX

__all__ = [
    "quantization_scale",
    "is_power_of_two",
    "quantize",
    "quantize_with_scale",
    "dequantize",
    "GradientQuantiser",
    "SQUARE_SPLIT_BITS",
    "dispersion_sums",
    "DISPERSION_CHUNK_ROWS",
]

#: :func:`dispersion_sums` splits ``q = high * 2**SQUARE_SPLIT_BITS + low`` (``0 <= low <
#: 2**SQUARE_SPLIT_BITS``): with ``|q| <= GRAD_QUANT_MAX = 2**30`` every product of two
#: parts is at most 2**30 in magnitude, so their int64 sums are exact up to 2**33 rows.
SQUARE_SPLIT_BITS = 15


def quantization_scale(max_abs):
    """Scale mapping ``[-max_abs, max_abs]`` onto ``[-GRAD_QUANT_MAX, GRAD_QUANT_MAX]``.

    Parameters
    ----------
    max_abs : float
        Largest absolute value of the column (host float).

    Returns
    -------
    scale : float
        The largest power of two at most ``GRAD_QUANT_MAX / max_abs`` (so the largest
        quantized magnitude lies in ``(GRAD_QUANT_MAX / 2, GRAD_QUANT_MAX]``), or 1.0
        when ``max_abs`` is 0 or so small (subnormal) that the ratio overflows; the
        column then quantizes to zeros. A power of two makes ``x / scale`` exact and
        equal to ``x * (1 / scale)`` for every integer sum ``x``.
    """
    max_abs = float(max_abs)
    if not np.isfinite(max_abs):
        raise ValueError(
            "Gradients or hessians contain NaN or inf; the objective produced "
            "non-finite values (check labels, weights and margins)."
        )
    ratio = float(GRAD_QUANT_MAX) / max_abs if max_abs > 0.0 else 1.0
    if not np.isfinite(ratio):
        # max_abs below GRAD_QUANT_MAX / DBL_MAX (subnormal): the column is
        # numerically zero; quantizing with scale 1 gives all zeros.
        return 1.0
    # ratio = m * 2**e with 0.5 <= m < 1 (exact): 2**(e - 1) <= ratio.
    return math.ldexp(1.0, math.frexp(ratio)[1] - 1)


def is_power_of_two(scale):
    """Whether ``scale`` is a power of two (as :func:`quantization_scale` returns), so
    that dividing by it equals multiplying by ``1 / scale`` bit for bit."""
    scale = float(scale)
    return scale > 0.0 and np.isfinite(scale) and math.frexp(scale)[0] == 0.5


def quantize(xp, values):
    """Quantize one column of gradients or hessians.

    Parameters
    ----------
    xp : module
        Array module of ``values`` (numpy or cupy).
    values : ndarray of shape (n_rows,), float64
        Gradients or hessians (already multiplied by sample weights).

    Returns
    -------
    quantized : ndarray of shape (n_rows,), int32
        ``rint(values * scale)``.
    scale : float
        The scale used (host float).
    """
    max_abs = float(xp.max(xp.abs(values))) if values.size else 0.0
    scale = quantization_scale(max_abs)
    return quantize_with_scale(xp, values, scale), scale


def quantize_with_scale(xp, values, scale):
    """``rint(values * scale)`` as int32, with a scale chosen elsewhere (distributed
    training: :func:`quantization_scale` of the maximum over every worker's rows, so
    that each worker quantizes its rows exactly as one machine would).

    Parameters
    ----------
    xp : module
    values : ndarray of shape (n_rows,), float64
    scale : float
        At most ``GRAD_QUANT_MAX / max|values|``.

    Returns
    -------
    ndarray of shape (n_rows,), int32
    """
    return xp.rint(values * scale).astype(GRAD_QUANT_DTYPE)


def dequantize(sum_quantized, scale):
    """Float value of an integer sum: ``sum_quantized / scale`` (float64)."""
    return np.float64(sum_quantized) / np.float64(scale)


#: Rows of one step of :func:`dispersion_sums`: its int64 temporaries (about 40 bytes a
#: row) stay below 40 MiB whatever the number of rows, inside the CUDA backend's
#: per-row budget for temporaries (gpuboost.backends.cuda.memory).
DISPERSION_CHUNK_ROWS = 1 << 20


def dispersion_sums(xp, quantized_gradients, quantized_hessians, rows=None, chunk_rows=None):
    """Exact integer parts of ``sum q_g**2`` and ``sum q_h`` over ``rows`` (every row
    when None): ``(high_high, high_low, low_low, sum_hessians)``, Python ints, the int64
    sums of ``high**2``, ``high * low`` and ``low**2`` (:data:`SQUARE_SPLIT_BITS`). Integer
    sums do not depend on their order, and the parts of several row blocks (Dask workers)
    add up to those of all their rows. :meth:`GradientQuantiser.dispersion` turns them
    into the dispersion (docs/DESIGN.md, "Split penalty").

    The rows are taken ``chunk_rows`` at a time (:data:`DISPERSION_CHUNK_ROWS` when None),
    the parts added up in ``xp``'s int64 scalars and read back together at the end (one
    copy to the host, one synchronization on a GPU, whatever the number of chunks): the
    same integers as one pass, with temporaries bounded by the chunk.

    Parameters
    ----------
    xp : module
    quantized_gradients, quantized_hessians : ndarray of shape (n_rows,), int32
    rows : ndarray of int or None
    chunk_rows : int, optional

    Returns
    -------
    tuple of 4 int
    """
    chunk_rows = DISPERSION_CHUNK_ROWS if chunk_rows is None else int(chunk_rows)
    n = quantized_gradients.shape[0] if rows is None else rows.shape[0]
    totals = [xp.zeros((), dtype=np.int64) for _ in range(4)]
    for begin in range(0, n, chunk_rows):
        end = min(begin + chunk_rows, n)
        if rows is None:
            gradients = quantized_gradients[begin:end]
            hessians = quantized_hessians[begin:end]
        else:
            gradients = quantized_gradients[rows[begin:end]]
            hessians = quantized_hessians[rows[begin:end]]
        values = gradients.astype(np.int64)
        high = values >> SQUARE_SPLIT_BITS  # floor division by 2**15 (arithmetic shift)
        low = values & ((1 << SQUARE_SPLIT_BITS) - 1)  # in [0, 2**15)
        del values
        totals[0] += xp.sum(high * high)
        totals[1] += xp.sum(high * low)
        totals[2] += xp.sum(low * low)
        totals[3] += xp.sum(hessians.astype(np.int64))
    return tuple(int(total) for total in to_numpy(xp.stack(totals)))


class GradientQuantiser:
    """The scales of one tree's quantized gradients and hessians (one value type).

    Parameters
    ----------
    scale_gradients, scale_hessians : float
        From :func:`quantize` of the gradient and of the hessian column.

    Integer sums are turned back into floats only through this object:
    ``G = sum_q / scale_gradients``, ``H = sum_q / scale_hessians`` (float64
    division, docs/DESIGN.md "Quantization").
    """

    __slots__ = ("scale_gradients", "scale_hessians")

    def __init__(self, scale_gradients, scale_hessians):
        self.scale_gradients = float(scale_gradients)
        self.scale_hessians = float(scale_hessians)

    def gradients(self, sums):
        """Float64 gradient sums of integer sums (scalar or array)."""
        return np.asarray(sums, dtype=np.float64) / self.scale_gradients

    def hessians(self, sums):
        """Float64 hessian sums of integer sums (scalar or array)."""
        return np.asarray(sums, dtype=np.float64) / self.scale_hessians

    def dispersion(self, sums):
        """The dispersion ``sum g**2 / sum h`` of a tree's rows from their
        :func:`dispersion_sums` (several blocks' summed part by part): the noise variance
        per unit of hessian (for squared error the residuals' mean square; about 1 for a
        calibrated logistic model). The exact integer ``sum q_g**2`` is rounded once to
        float64, then divided by the gradients' scale twice (powers of two) and by
        ``H``: the same bits on every machine (docs/DESIGN.md, "Split penalty"). 0 when
        ``sum h`` is 0.

        Parameters
        ----------
        sums : tuple of 4 int

        Returns
        -------
        float
        """
        high_high, high_low, low_low, sum_hessians = (int(value) for value in sums)
        if sum_hessians <= 0:
            return 0.0
        square_sum = (
            (high_high << (2 * SQUARE_SPLIT_BITS)) + (high_low << (SQUARE_SPLIT_BITS + 1)) + low_low
        )
        scale_g = self.scale_gradients  # divided by twice: scale_g**2 may overflow
        return ((float(square_sum) / scale_g) / scale_g) / (
            float(sum_hessians) / self.scale_hessians
        )

    def __eq__(self, other):
        return isinstance(other, GradientQuantiser) and (
            self.scale_gradients,
            self.scale_hessians,
        ) == (other.scale_gradients, other.scale_hessians)

    def __repr__(self):
        return f"GradientQuantiser({self.scale_gradients!r}, {self.scale_hessians!r})"
