"""A platform's float functions as a GPU computes them: not NumPy's bits.

CuPy's ``exp``, ``log``, ``pow`` ... are CUDA's math library, which differs from NumPy's
(and from one CPU's C library to another's) in the last bit, and CuPy's float sums,
means and running sums reduce in another order than NumPy's pairwise sums, so they
round differently. An emulation that computed them with NumPy would hide every code
path that depends on them from the CPU == CUDA parity tests (docs/DESIGN.md,
"Platform-independent arithmetic"; docs/EMULATION.md). So the emulated device namespace
(:mod:`.device_array`) computes them here:

* :func:`perturbed_ufunc_result`: a transcendental ufunc's NumPy result moved by one ulp
  (up or down by the lowest bit of the argument), except the results a GPU gets exactly
  too: NaN, the infinities, zeros and integers (``exp(0) = 1``, ``log2(8) = 3``).
* :func:`reordered_sum`, :func:`reordered_cumsum`: float sums in another order: the
  terms reversed along the reduced axis (NumPy's pairwise sum of the reversed terms)
  and running sums in blocks of :data:`SCAN_BLOCK` (each block's sequential sums plus
  the sum of the blocks before, as a parallel scan adds). Integer sums are exact and
  stay NumPy's.

The same functions perturb NumPy itself in the tests of the NumPy reference backend
(``tests/_platform.py``).
"""

import numpy as np

__all__ = [
    "CUPY_NAN_UFUNCS",
    "cupy_nan_result",
    "TRANSCENDENTAL_UFUNCS",
    "FLOAT_REDUCTIONS",
    "perturbed_ufunc_result",
    "reordered_sum",
    "reordered_cumsum",
    "SCAN_BLOCK",
]

#: Ufuncs whose results the CUDA math library (and C libraries) round differently from
#: NumPy's: not correctly rounded, so implementations differ in the last bit. ``sqrt``,
#: ``+ - * /`` and the comparisons are correctly rounded everywhere and stay NumPy's.
TRANSCENDENTAL_UFUNCS = frozenset(
    "exp exp2 expm1 log log2 log10 log1p power float_power sin cos tan arcsin arccos "
    "arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh cbrt hypot logaddexp "
    "logaddexp2".split()
)
#: ``xp`` functions and array methods whose float results depend on the order of a sum.
FLOAT_REDUCTIONS = frozenset(
    "sum mean nansum nanmean cumsum nancumsum average var std nanvar nanstd dot vdot "
    "inner matmul tensordot einsum trace prod cumprod nanprod".split()
)
#: Ufuncs whose NaN results are CuPy's, not NumPy's: ``sign(NaN)`` is 0 (CuPy computes
#: ``(x > 0) - (x < 0)``), and ``maximum`` / ``minimum`` (a NaN operand) and ``fmax`` /
#: ``fmin`` (two NaN operands; one NaN gives the other operand in both) return the
#: canonical NaN rather than a NaN operand (CUDA's ``fmax`` / ``fmin``), so NaN payloads
#: differ. (``where`` copies its operands' bits in both: nothing to emulate.)
CUPY_NAN_UFUNCS = frozenset(("sign", "maximum", "minimum", "fmax", "fmin"))
#: The canonical quiet NaN a GPU produces.
CANONICAL_NAN = np.array(0x7FF8000000000000, dtype=np.int64).view(np.float64)
#: Running sums are formed in blocks of this many terms (:func:`reordered_cumsum`).
SCAN_BLOCK = 4
# NumPy's own, taken at import: the tests replace the module attributes by the functions
# here (tests/_platform.py).
_SUM, _CUMSUM, _FLIP, _NEXTAFTER = np.sum, np.cumsum, np.flip, np.nextafter


def _is_float(array):
    return np.asarray(array).dtype.kind in "fc"


def perturbed_ufunc_result(result, argument):
    """``result`` (a float array or scalar) moved by one ulp where a GPU may round
    otherwise (module docstring); ``argument``: the ufunc's first input."""
    if not _is_float(result):
        return result
    values = np.asarray(result)
    if values.dtype.kind == "c":
        return result
    argument = np.broadcast_to(np.asarray(argument, dtype=values.dtype), values.shape)
    low_bit = argument.view(np.dtype(f"u{values.itemsize}")) & 1
    with np.errstate(invalid="ignore"):
        exact = ~np.isfinite(values) | (values == np.floor(values))
        moved = np.where(low_bit == 1, _NEXTAFTER(values, np.inf), _NEXTAFTER(values, -np.inf))
        perturbed = np.where(exact, values, moved).astype(values.dtype, copy=False)
    if np.ndim(result) == 0 and not isinstance(result, np.ndarray):
        return perturbed.dtype.type(perturbed)
    return perturbed


def cupy_nan_result(name, result, operands):
    """``result`` of NumPy's ufunc ``name`` (one of :data:`CUPY_NAN_UFUNCS`) as CuPy gives
    it for NaN operands."""
    values = np.asarray(result)
    if values.dtype.kind != "f":
        return result
    if name == "sign":
        argument = np.broadcast_to(np.asarray(operands[0]), values.shape)
        fixed = np.where(argument != argument, values.dtype.type(0.0), values)
    else:
        fixed = np.where(values != values, CANONICAL_NAN.astype(values.dtype), values)
    fixed = fixed.astype(values.dtype, copy=False)
    if np.ndim(result) == 0 and not isinstance(result, np.ndarray):
        return fixed.dtype.type(fixed)
    return fixed


def reordered_sum(array, axis=None, dtype=None, keepdims=False, **kwargs):
    """``np.sum`` with the terms reversed along ``axis`` (all axes for None); NumPy's own
    for integers and for the keywords ``out``, ``initial``, ``where``."""
    array = np.asarray(array)
    is_float = _is_float(array) or (dtype is not None and np.dtype(dtype).kind in "fc")
    if not is_float or kwargs or array.ndim == 0:
        return _SUM(array, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    axes = tuple(range(array.ndim)) if axis is None else axis
    return _SUM(_FLIP(array, axis=axes), axis=axis, dtype=dtype, keepdims=keepdims)


def reordered_cumsum(array, axis=None, dtype=None, **kwargs):
    """``np.cumsum`` as a blocked scan: within blocks of :data:`SCAN_BLOCK` terms
    sequentially, then each block's sums plus the total of the blocks before it; NumPy's
    own for integers and with ``out``."""
    array = np.asarray(array)
    if axis is None:
        array, axis = array.ravel(), 0
    is_float = _is_float(array) or (dtype is not None and np.dtype(dtype).kind in "fc")
    if not is_float or kwargs:
        return _CUMSUM(array, axis=axis, dtype=dtype, **kwargs)
    moved = np.moveaxis(np.asarray(array, dtype=dtype), axis, -1)
    n = moved.shape[-1]
    pad = (-n) % SCAN_BLOCK
    padded = np.concatenate([moved, np.zeros(moved.shape[:-1] + (pad,), moved.dtype)], axis=-1)
    blocks = padded.reshape(moved.shape[:-1] + (-1, SCAN_BLOCK))
    within = _CUMSUM(blocks, axis=-1)
    before = _CUMSUM(within[..., -1], axis=-1) - within[..., -1]
    result = (within + before[..., None]).reshape(padded.shape)[..., :n]
    return np.moveaxis(result, -1, axis)
