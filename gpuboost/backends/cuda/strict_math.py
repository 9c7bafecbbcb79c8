"""The platform-independent ``exp``, ``exp2``, ``log`` and ``log2`` on the CUDA backend
(``cuda/strict_math.cuh``, applied elementwise by ``cuda/strict_math.cu``).

The definitions are :mod:`gpuboost.core.strict_math`; the kernels give its bits for
every argument (docs/DESIGN.md, "Platform-independent arithmetic") in one pass over the
array, where the vectorized definition takes some forty array operations.
"""

import numpy as np

from ...core.dtypes import Y_DTYPE
from .launch import grid_stride_blocks

__all__ = ["apply", "FUNCTIONS", "STRICT_MATH_THREADS_PER_BLOCK"]

#: Kernel file (``cuda/strict_math.cu``).
KERNEL_FILE = "strict_math"
#: Threads per block (strict_math.cu: STRICT_MATH_THREADS_PER_BLOCK).
STRICT_MATH_THREADS_PER_BLOCK = 256
#: The functions, each with its kernel.
FUNCTIONS = {
    "exp": "strict_exp_values",
    "exp2": "strict_exp2_values",
    "log": "strict_log_values",
    "log2": "strict_log2_values",
}


def apply(xp, launcher, function, x):
    """``gpuboost.core.strict_math.<function>(xp, x)`` by one kernel, bit for bit.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    function : {'exp', 'exp2', 'log', 'log2'}
    x : xp array of any shape, float64  # IN

    Returns
    -------
    xp array of the shape of ``x``, float64  # OUT
    """
    if function not in FUNCTIONS:
        raise ValueError(f"unknown function {function!r}; expected one of {sorted(FUNCTIONS)}")
    x = xp.ascontiguousarray(xp.asarray(x, dtype=Y_DTYPE))
    out = xp.empty(x.size, dtype=Y_DTYPE)  # 1-D: the kernel writes every element
    if x.size:
        blocks = grid_stride_blocks(x.size, STRICT_MATH_THREADS_PER_BLOCK)
        launcher(
            KERNEL_FILE,
            FUNCTIONS[function],
            blocks,
            STRICT_MATH_THREADS_PER_BLOCK,
            (x.reshape(-1), np.int64(x.size), out),
        )
    return out.reshape(x.shape)
