"""CPU emulation of the CUDA kernels in ``cuda/*.cu`` (no GPU needed).

The kernel sources are compiled with g++ against ``cuda_emu.h``, which runs
each block's threads concurrently on CPU threads (real barriers, real warp
exchanges, atomics), and launched through :class:`EmulatedModule` /
:class:`EmulatedKernel`, drop-in stand-ins for ``cupy.RawModule`` /
``cupy.RawKernel`` that check every argument against the kernel's C
signature. With ``GPUBOOST_EMULATE_CUDA=1``, ``device='cuda'`` runs the CUDA
backend through this emulation, on emulated device arrays
(:mod:`gpuboost.backends.emulation.device_array`) that follow CuPy's rules for what
crosses between host and device. See docs/EMULATION.md.
"""

import contextlib
import os

from .compiler import EmulationCompileError
from .launcher import (
    EmulatedKernel,
    EmulatedModule,
    KernelParameter,
    parse_cluster_dims,
    parse_kernel_signatures,
)

__all__ = [
    "emulated_kernels",
    "EmulatedModule",
    "EmulatedKernel",
    "EmulationCompileError",
    "KernelParameter",
    "parse_kernel_signatures",
    "parse_cluster_dims",
    "emulation_enabled",
    "EMULATE_ENV_VAR",
]

#: Environment variable that switches ``device='cuda'`` to the emulation.
EMULATE_ENV_VAR = "GPUBOOST_EMULATE_CUDA"


def emulation_enabled():
    """Return whether CUDA kernels run through the CPU emulation.

    Returns
    -------
    bool
        True when the environment variable ``GPUBOOST_EMULATE_CUDA`` is ``"1"``
        (read at every call, so tests may switch it).
    """
    return os.environ.get(EMULATE_ENV_VAR) == "1"


@contextlib.contextmanager
def emulated_kernels():
    """Run ``device='cuda'`` through the CPU emulation inside the ``with`` block.

    Sets ``GPUBOOST_EMULATE_CUDA=1`` and restores the previous value afterwards. The
    switch takes effect at once: ``gpuboost.backends.get_backend`` keeps one CUDA backend
    per mode, and compiled kernels are cached per mode
    (:mod:`gpuboost.backends.cuda.launch`), so nothing needs to be forgotten. Used by
    the test suite.
    """
    previous = os.environ.get(EMULATE_ENV_VAR)
    os.environ[EMULATE_ENV_VAR] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(EMULATE_ENV_VAR, None)
        else:
            os.environ[EMULATE_ENV_VAR] = previous
