"""The platform-independent ``exp``, ``exp2``, ``log``, ``log2`` and ``erf`` of
:mod:`gpuboost.core.strict_math` as compiled scalar functions: the same operations in
the same order, so the same bits for every argument (docs/DESIGN.md,
"Platform-independent arithmetic"). Numba compiles them without fastmath, so LLVM
neither reassociates them nor contracts a product and a sum into a fused multiply-add;
no math library is called. ``tests/core/test_strict_math.py`` compares every function
with the vectorized one, bit for bit.
"""

import math

import numpy as np

from ...core import strict_math
from ...core.strict_math import (
    ERF_FRACTION_TERMS,
    ERF_ONE_LIMIT,
    ERF_SERIES_LIMIT,
    ERF_SERIES_TERMS,
    EXP_CLAMP,
    EXP_COEFFICIENTS,
    EXP_LN2_OVER_N_HI,
    EXP_LN2_OVER_N_LO,
    EXP_N_OVER_LN2,
    EXP_TABLE_HI,
    EXP_TABLE_LO,
    EXP_TABLE_SIZE,
    HIGH_WORD_MASK,
    INV_LN2_HI,
    INV_LN2_LO,
    INV_SQRT_PI,
    LN2,
    LN2_HI,
    LN2_LO,
    LOG_COEFFICIENTS,
    ROUND_SHIFT,
    SPLITTER,
    SQRT2,
    TWO_54,
    TWO_OVER_SQRT_PI,
)
from .jit import compiled_kernels_reason, kernel, prange, sized

__all__ = ["exp", "exp2", "log", "log2", "erf"]

_C2, _C3, _C4, _C5, _C6 = EXP_COEFFICIENTS
(_L1, _L2, _L3, _L4, _L5, _L6, _L7, _L8, _L9, _L10, _L11) = LOG_COEFFICIENTS
_SMALLEST_NORMAL = float.fromhex("0x1p-1022")
_INV_TABLE_SIZE = 1.0 / EXP_TABLE_SIZE


@kernel
def _power_of_two(k):
    return np.int64((k + 1023) << 52).view(np.float64)


@kernel
def _clamped(x):
    if x > EXP_CLAMP:
        return EXP_CLAMP
    if x < -EXP_CLAMP:
        return -EXP_CLAMP
    return x


@kernel
def _exp_finish(n_float, r):
    n = np.int64(n_float)
    j = n & (EXP_TABLE_SIZE - 1)
    k = n >> 6
    p = r + (r * r) * (_C2 + r * (_C3 + r * (_C4 + r * (_C5 + r * _C6))))
    table_hi = EXP_TABLE_HI[j]
    y = table_hi + (EXP_TABLE_LO[j] + table_hi * p)
    half = k >> 1
    return (y * _power_of_two(half)) * _power_of_two(k - half)


@kernel
def exp(x):
    """``gpuboost.core.strict_math.exp`` of one float64."""
    if x != x:
        return x
    clamped = _clamped(x)
    n_float = (clamped * EXP_N_OVER_LN2 + ROUND_SHIFT) - ROUND_SHIFT
    r = (clamped - n_float * EXP_LN2_OVER_N_HI) - n_float * EXP_LN2_OVER_N_LO
    return _exp_finish(n_float, r)


@kernel
def exp2(x):
    """``gpuboost.core.strict_math.exp2`` of one float64."""
    if x != x:
        return x
    clamped = _clamped(x)
    n_float = (clamped * float(EXP_TABLE_SIZE) + ROUND_SHIFT) - ROUND_SHIFT
    r = (clamped - n_float * _INV_TABLE_SIZE) * LN2
    return _exp_finish(n_float, r)


@kernel
def _log_parts(x):
    """(k, f, hfsq, s * (hfsq + R)) of a positive finite x."""
    adjust = 0
    if x < _SMALLEST_NORMAL:
        x = x * TWO_54
        adjust = 54
    bits = np.float64(x).view(np.int64)
    k = ((bits >> 52) & 0x7FF) - 1023 - adjust
    m = np.int64((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000).view(np.float64)
    if m > SQRT2:
        m = m * 0.5
        k += 1
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    series = _L11
    series = _L10 + z * series
    series = _L9 + z * series
    series = _L8 + z * series
    series = _L7 + z * series
    series = _L6 + z * series
    series = _L5 + z * series
    series = _L4 + z * series
    series = _L3 + z * series
    series = _L2 + z * series
    series = _L1 + z * series
    series = z * series
    hfsq = 0.5 * f * f
    return np.float64(k), f, hfsq, s * (hfsq + series)


@kernel
def _log_special(x):
    if x == 0.0:
        return -np.inf
    if x > 0.0:
        return x  # +inf
    return np.nan


@kernel
def log(x):
    """``gpuboost.core.strict_math.log`` of one float64."""
    if not (x > 0.0 and x < np.inf):
        return _log_special(x)
    k, f, hfsq, correction = _log_parts(x)
    return k * LN2_HI - ((hfsq - (correction + k * LN2_LO)) - f)


@kernel
def log2(x):
    """``gpuboost.core.strict_math.log2`` of one float64."""
    if not (x > 0.0 and x < np.inf):
        return _log_special(x)
    k, f, hfsq, correction = _log_parts(x)
    hi = np.int64(np.float64(f - hfsq).view(np.int64) & HIGH_WORD_MASK).view(np.float64)
    lo = ((f - hi) - hfsq) + correction
    value_hi = hi * INV_LN2_HI
    value_lo = (lo + hi) * INV_LN2_LO + lo * INV_LN2_HI
    w = k + value_hi
    value_lo = value_lo + ((k - w) + value_hi)
    return value_lo + w


# ---- erf (arguments below ERF_ONE_LIMIT: Veltkamp's split needs no scaling) -------------
@kernel
def _exp_minus_square(a):
    square = a * a
    c = SPLITTER * a
    a_hi = c - (c - a)
    a_lo = a - a_hi
    error = ((a_hi * a_hi - square) + a_hi * a_lo + a_lo * a_hi) + a_lo * a_lo
    return exp(-square) * (1.0 - error), square


@kernel
def _erf_series(a):
    factor, square = _exp_minus_square(a)
    ratio = square + square
    term = 1.0
    total = 1.0
    for n in range(ERF_SERIES_TERMS):
        term = (term * ratio) / (2 * n + 3)
        total = total + term
    return ((TWO_OVER_SQRT_PI * a) * factor) * total


@kernel
def _erfc_fraction(a):
    factor, _ = _exp_minus_square(a)
    fraction = a
    for k in range(ERF_FRACTION_TERMS, 0, -1):
        fraction = a + (k * 0.5) / fraction
    return (INV_SQRT_PI * factor) / fraction


@kernel
def erf(x):
    if x != x:
        return x
    a = abs(x)
    if a < ERF_SERIES_LIMIT:
        value = _erf_series(a)
    elif a < ERF_ONE_LIMIT:
        value = 1.0 - _erfc_fraction(a)
    else:
        value = 1.0
    return math.copysign(value, x)


# ---- whole NumPy arrays: the vectorized functions' compiled loops ------------------------
@kernel(parallel=True)
def _exp_loop(x, out):
    for i in prange(x.shape[0]):
        out[i] = exp(x[i])


@kernel(parallel=True)
def _exp2_loop(x, out):
    for i in prange(x.shape[0]):
        out[i] = exp2(x[i])


@kernel(parallel=True)
def _log_loop(x, out):
    for i in prange(x.shape[0]):
        out[i] = log(x[i])


@kernel(parallel=True)
def _log2_loop(x, out):
    for i in prange(x.shape[0]):
        out[i] = log2(x[i])


@kernel(parallel=True)
def _erf_loop(x, out):
    for i in prange(x.shape[0]):
        out[i] = erf(x[i])


def _array_function(loop):
    """``f(x)`` for a float64 NumPy array of any shape by ``loop``, or None when the
    compiled kernels are off (``GPUBOOST_CPU_KERNELS=numpy``: the reference stays NumPy)."""

    def apply(x):
        if compiled_kernels_reason() is not None:
            return None
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty_like(flat)
        sized(loop, 3 * flat.size)(flat, out)
        return out.reshape(np.shape(x))

    return apply


# The vectorized functions of gpuboost.core.strict_math call these on NumPy arrays: the
# same bits (tests/core/test_strict_math.py), one pass instead of some forty.
strict_math.use_host_loops(
    {
        "exp": _array_function(_exp_loop),
        "exp2": _array_function(_exp2_loop),
        "log": _array_function(_log_loop),
        "log2": _array_function(_log2_loop),
        "erf": _array_function(_erf_loop),
    }
)
