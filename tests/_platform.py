"""Another platform's float functions, for the NumPy reference backend: a context
manager that replaces NumPy's and the C library's transcendental functions by results
one ulp away, and NumPy's float sums (not its sequential running sums) by sums in
another order
(gpuboost.backends.emulation.platform_math, which the emulated device namespace uses
always). Training must not notice (docs/DESIGN.md, "Platform-independent arithmetic").

Module attributes are replaced (``np.exp``, ``np.sum``, ``math.log`` ...), so code that
looks them up at call time sees the perturbed ones; ndarray methods (``a.sum()``) cannot
be replaced and stay NumPy's (the emulated device arrays perturb those too).
"""

import contextlib
import math

import numpy as np

from gpuboost.backends.emulation.platform_math import (
    TRANSCENDENTAL_UFUNCS,
    perturbed_ufunc_result,
    reordered_sum,
)

#: The C library functions of :mod:`math` that are not correctly rounded.
MATH_FUNCTIONS = (
    "exp exp2 expm1 log log2 log10 log1p pow sin cos tan atan atan2 sinh cosh tanh "
    "lgamma gamma erf erfc cbrt".split()
)


def _perturbed_ufunc(ufunc):
    def perturbed(*args, **kwargs):
        if kwargs.get("out") is not None:
            result = ufunc(*args, **kwargs)
            outputs = kwargs["out"] if isinstance(kwargs["out"], tuple) else (kwargs["out"],)
            for output in outputs:
                output[...] = perturbed_ufunc_result(output, args[0])
            return result
        return perturbed_ufunc_result(ufunc(*args, **kwargs), args[0])

    perturbed.__name__ = ufunc.__name__
    return perturbed


def _perturbed_math(function):
    def perturbed(*args):
        result = function(*args)
        if isinstance(result, float):
            return float(perturbed_ufunc_result(np.float64(result), np.float64(args[0])))
        return result

    perturbed.__name__ = function.__name__
    return perturbed


_ORIGINAL_MEAN = np.mean


def _reordered_mean(array, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    array = np.asarray(array)
    if (
        out is not None
        or kwargs
        or array.dtype.kind not in "fc"
        or not isinstance(axis, (int, type(None)))
    ):
        return _ORIGINAL_MEAN(array, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)
    total = reordered_sum(array, axis=axis, dtype=dtype, keepdims=keepdims)
    return total / (array.size if axis is None else array.shape[axis])


@contextlib.contextmanager
def perturbed_platform(monkeypatch):
    """Within the block, NumPy's and :mod:`math`'s transcendental functions return
    results one ulp away, and ``np.sum`` / ``np.mean`` add floats in another order.

    ``np.cumsum`` stays: a running sum on the host is sequential on every NumPy build
    (``add.accumulate`` is defined element after element), and the NumPy reference's
    fixed-order sums (leaf refits, weighted quantiles) use it as the CUDA kernels' one
    thread per segment do. The emulated device namespace reorders ``cumsum``, as CuPy's
    parallel scans do."""
    for name in sorted(TRANSCENDENTAL_UFUNCS):
        if hasattr(np, name):
            monkeypatch.setattr(np, name, _perturbed_ufunc(getattr(np, name)))
    for name in MATH_FUNCTIONS:
        if hasattr(math, name):
            monkeypatch.setattr(math, name, _perturbed_math(getattr(math, name)))
    monkeypatch.setattr(np, "sum", reordered_sum)
    monkeypatch.setattr(np, "mean", _reordered_mean)
    yield
