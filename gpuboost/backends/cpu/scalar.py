"""NumPy's elementwise functions as compiled scalar functions, with NumPy's results on
every input (signed zeros and NaN included), for the kernels that must give the bits of
their NumPy references."""

from .jit import kernel

__all__ = ["sign", "maximum", "clip"]


@kernel
def sign(value):
    """``np.sign``: +-1.0, 0.0 for either zero (NumPy's sign of -0.0 is +0.0), NaN for NaN."""
    if value > 0.0:
        return 1.0
    if value < 0.0:
        return -1.0
    if value != value:
        return value
    return 0.0


@kernel
def maximum(first, second):
    """``np.maximum``: NaN if either is NaN; on equal values (+0.0 and -0.0) the second."""
    if first != first:
        return first
    if second != second:
        return second
    return first if first > second else second


@kernel
def clip(value, low, high):
    """``np.clip`` (NumPy's ``min(max(value, low), high)`` with NaN propagating)."""
    if value != value:
        return value
    bounded = value if value > low else low
    return bounded if bounded < high else high
