"""The compiled CPU backend: the NumPy backend's hot primitives compiled with Numba.

One module per primitive, with the names of the NumPy and CUDA backends' modules
(``binning``, ``histogram``, ``split_scan``, ``partition``, ``leaf``, ``predict``) plus
``quantize`` and ``gradients``, and the compiled loops of gpuboost.core's
``strict_math`` and ``reproducible_sum`` for NumPy arrays (registered on import);
``jit`` compiles them all the same way and decides whether they are used; ``backend`` is
:class:`CpuBackend`. The NumPy backend (gpuboost.backends.numpy) stays the reference every
kernel is tested against.
"""

from . import reproducible_sum, strict_math  # noqa: F401 (they register compiled loops)
from .backend import CpuBackend
from .jit import CPU_KERNELS_ENV_VAR, compiled_kernels_reason

__all__ = ["CpuBackend", "CPU_KERNELS_ENV_VAR", "compiled_kernels_reason"]
