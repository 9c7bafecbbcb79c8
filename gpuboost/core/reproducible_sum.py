"""Float sums whose result does not depend on the order or the partitioning of the terms
(docs/DESIGN.md, "Platform-independent arithmetic").

A float sum rounds after every addition, so its result depends on the order of the
additions: NumPy's pairwise sum, CuPy's tree reductions and a sum over Dask partitions
give different last bits. Every float sum that reaches a user (metrics, eval histories,
early stopping, base scores, the ranking objectives' pair sums) is instead computed here
from exact integer sums, like the histograms:

1. ``e`` is the exponent of the largest magnitude ``M`` of the terms (``M < 2**e``;
   per output, for a sum along an axis), and ``W = 62 - bit_length(n)`` bits for ``n``
   terms, so that ``n`` integers below ``2**W`` sum exactly in int64.
2. Fold ``i`` (``i = 1 .. F``) cuts every term's remainder at the quantum ``q_i =
   2**(e - i W)``: ``a = rint(r / q_i)`` (an integer of at most ``W`` bits), ``r = r -
   a q_i`` (exact). The integers of each fold are summed in int64, exactly, in any
   order. ``F`` is the least with ``F W - bit_length(n) >= 62``, so the terms' remainders
   after the last fold sum to less than ``2**-62 M``.
3. The result is ``S_1 q_1 + S_2 q_2 + ... + S_F q_F`` in that order (each ``S_i`` is
   converted to float64 once, correctly rounded; the multiplications by powers of two are
   exact): a fixed sequence of basic operations on order-free integers, so the same bits
   on every machine and for every order of the terms.

The result is within a few ulps of the exact sum of the terms (plus ``2**-62 M``), far
closer than a float sum's ``n`` roundings. Non-finite terms give IEEE's answer, which no
order changes: NaN if there is a NaN or both infinities, else the infinity.

Only elementwise operations, ``max`` and integer ``sum``/``cumsum`` of the array module are
used, all exact on every platform, so the same code runs on NumPy and CuPy arrays (the
integer sums of CuPy run in another order than NumPy's and give the same integers).
"""

import numpy as np

from .strict_math import scale_by_power_of_two

__all__ = ["reproducible_sum", "reproducible_cumsum", "reproducible_mean"]

#: int64 accumulators: n terms below 2**W sum exactly when W + bit_length(n) <= 62.
ACCUMULATOR_BITS = 62
#: Compiled loops for NumPy arrays, registered by gpuboost.backends.cpu.reproducible_sum
#: when Numba is there: ``"fold_sums"(values, factors) -> int64 sums of every fold`` (or
#: None to decline), the integers of the array code in one pass.
_HOST_LOOPS = {}


def use_host_loops(loops):
    """Register compiled loops (see ``_HOST_LOOPS``); they must give the array code's
    integers."""
    _HOST_LOOPS.update(loops)


def _folds(n_terms):
    """``(W, F)``: bits per fold and folds for ``n_terms`` terms (module docstring)."""
    length = max(int(n_terms), 1).bit_length()
    width = ACCUMULATOR_BITS - length
    return width, -(-(ACCUMULATOR_BITS + length) // width)


def _power_factors(k):
    """``2.0**k`` as two float factors whose product, applied in order, is exact: one
    factor and 1.0 where ``2.0**k`` is a normal float64."""
    if -1022 <= k <= 1023:
        return float(2.0**k), 1.0
    return float(2.0 ** (k >> 1)), float(2.0 ** (k - (k >> 1)))


def _fold_sums(xp, values, axis, running=False):
    """The folded sums of finite ``values`` (module docstring, steps 1 to 3): along
    ``axis``, or running sums of a 1-D array (``running``)."""
    largest = xp.max(xp.abs(values), axis=axis, keepdims=axis is not None)
    exponent = ((largest.view(np.int64) >> 52) & 0x7FF) - 1022  # largest < 2**exponent
    n_terms = values.size if axis is None else values.shape[axis]
    width, n_folds = _folds(n_terms)
    if axis is None:  # one quantum: scalings by host powers of two

        def scale(array, k):
            first, second = _power_factors(k)
            return (array * first) * second

        exponent = int(exponent)
        shifts = [exponent - fold * width for fold in range(1, n_folds + 1)]  # quanta 2**shift
        loop = _HOST_LOOPS.get("fold_sums") if xp is np and not running else None
        if loop is not None:  # the integer sums of every fold in one compiled pass
            factors = np.array([[*_power_factors(-k), *_power_factors(k)] for k in shifts])
            sums = loop(values.ravel(), factors)
            if sums is not None:
                total = None
                for shift, folded in zip(shifts, sums):
                    term = scale(np.int64(folded).astype(np.float64), shift)
                    total = term if total is None else total + term
                return total
    else:
        scale = scale_by_power_of_two
    reduce = xp.cumsum if running else (lambda a: xp.sum(a, axis=axis))
    total = None
    remainder = values
    for fold in range(1, n_folds + 1):
        shift = exponent - fold * width  # quantum 2**shift
        integers = xp.rint(scale(remainder, -shift))
        if fold < n_folds:
            remainder = remainder - scale(integers, shift)
        folded = reduce(integers.astype(np.int64)).astype(np.float64)
        term = scale(folded, shift if axis is None else xp.squeeze(shift, axis=axis))
        total = term if total is None else total + term
    return total


def _non_finite(xp, values, finite, axis):
    """Per output: the IEEE sum of the non-finite terms alone (order-free), and whether
    there is one."""
    only = xp.where(finite, 0.0, values)
    with np.errstate(invalid="ignore"):
        return xp.sum(only, axis=axis), xp.any(~finite, axis=axis)


def reproducible_sum(xp, values, axis=None):
    """Sum of ``values`` (along ``axis``), the same bits for any order of the terms.

    Parameters
    ----------
    xp : module
        The array module of ``values`` (``numpy`` or ``cupy``).
    values : array of any shape, float64
    axis : int or None
        None: one sum of every element.

    Returns
    -------
    xp array, float64
        0-d for ``axis=None``, else the shape of ``values`` without ``axis``. An empty sum
        is 0.0.
    """
    values = xp.asarray(values, dtype=np.float64)
    if values.size == 0:
        return xp.sum(values, axis=axis)
    with np.errstate(invalid="ignore", over="ignore"):
        if bool(xp.isfinite(xp.max(xp.abs(values)))):  # no NaN, no inf (the common case)
            return _fold_sums(xp, values, axis)
        finite = xp.isfinite(values)
        total = _fold_sums(xp, xp.where(finite, values, 0.0), axis)
        non_finite, any_non_finite = _non_finite(xp, values, finite, axis)
        return xp.where(any_non_finite, non_finite, total)


def reproducible_cumsum(xp, values):
    """Running sums of a 1-D ``values``, each the same bits for any order of the terms
    before it (one quantum for the whole array, from its largest magnitude).

    Parameters
    ----------
    xp : module
    values : array of shape (n,), float64, finite

    Returns
    -------
    xp array of shape (n,), float64
    """
    values = xp.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"reproducible_cumsum needs a 1-D array, got shape {values.shape}")
    if values.size == 0:
        return values.copy()
    if not bool(xp.all(xp.isfinite(values))):
        raise ValueError("reproducible_cumsum needs finite values")
    with np.errstate(invalid="ignore", over="ignore"):
        return _fold_sums(xp, values, None, running=True)


def reproducible_mean(xp, values, weight=None):
    """``sum(weight * values) / sum(weight)`` (``sum(values) / n`` without weights), each
    sum a :func:`reproducible_sum`.

    Parameters
    ----------
    xp : module
    values : array of shape (n,), float64
    weight : array of shape (n,), float64, or None

    Returns
    -------
    xp array of shape (), float64
    """
    values = xp.asarray(values, dtype=np.float64)
    if weight is None:
        return reproducible_sum(xp, values) / float(values.size)
    return reproducible_sum(xp, weight * values) / reproducible_sum(xp, weight)
