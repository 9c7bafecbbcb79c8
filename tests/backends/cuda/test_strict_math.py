"""Tests of the platform-independent functions on the CUDA backend
(gpuboost.backends.cuda.strict_math; cuda/strict_math.cu and .cuh) under the CPU
emulation: the kernels give gpuboost.core.strict_math's bits for every argument."""

import numpy as np
import pytest

from gpuboost.backends.cuda import strict_math as cuda_strict_math
from gpuboost.core import strict_math

pytestmark = pytest.mark.usefixtures("cuda_emulation")


def _arguments(rng, n):
    bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
             709.782712893384, -745.1332191019412, 1024.0, -1075.0, 1.0]  # fmt: skip
    return np.concatenate([bits, rng.uniform(-1200.0, 1200.0, n), rng.normal(0, 3, n), edges])


@pytest.mark.parametrize("function", sorted(cuda_strict_math.FUNCTIONS))
def test_kernels_give_the_reference_bits(backend, function):
    x = _arguments(np.random.default_rng(5), 20_000)
    result = cuda_strict_math.apply(backend.xp, backend.launcher, function, backend.xp.asarray(x))
    expected = getattr(strict_math, function)(np, x)
    np.testing.assert_array_equal(result.get().view(np.uint64), expected.view(np.uint64))


def test_shapes_and_errors(backend):
    xp = backend.xp
    grid = xp.asarray(np.linspace(-3.0, 3.0, 12).reshape(3, 4))
    result = cuda_strict_math.apply(xp, backend.launcher, "exp", grid)
    assert result.shape == (3, 4)
    np.testing.assert_array_equal(result.get(), strict_math.exp(np, grid.get()))
    assert cuda_strict_math.apply(xp, backend.launcher, "log", xp.zeros(0)).shape == (0,)
    with pytest.raises(ValueError, match="unknown function 'sin'"):
        cuda_strict_math.apply(xp, backend.launcher, "sin", grid)
