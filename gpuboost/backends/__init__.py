"""Backend selection: ``get_backend('auto' | 'cpu' | 'cuda' | 'cuda:N')``.

``numpy/``, ``cpu/`` and ``cuda/`` hold one module per primitive with the same names
(``binning``, ``histogram``, ``split_scan``, ``partition``, ``leaf``,
``segment_reduce``, ``predict``, ``shap``): ``numpy/`` the reference in NumPy, ``cpu/``
the same primitives compiled with Numba (what ``device='cpu'`` runs), ``cuda/`` the host
side of the CUDA kernels; ``emulation/`` runs the CUDA kernels on the CPU.
Importing this package never imports CuPy.
"""

from __future__ import annotations

import warnings

from ..errors import DeviceUnavailableError
from .base import Backend, DeviceData
from .cpu import CPU_KERNELS_ENV_VAR, CpuBackend, compiled_kernels_reason
from .cuda import CudaBackend
from .cuda.launch import CUPY, EMULATED, probe
from .emulation import emulation_enabled
from .numpy import NumpyBackend

__all__ = [
    "Backend",
    "DeviceData",
    "NumpyBackend",
    "CpuBackend",
    "CudaBackend",
    "get_backend",
    "cuda_available",
    "release_memory",
    "DeviceUnavailableError",
]

_NUMPY_BACKEND = NumpyBackend()
_CPU_BACKEND = CpuBackend()
#: Whether the fallback to the NumPy backend (Numba missing) was already reported.
_warned_fallback = False
#: Longest part of a probe error shown in a reason.
_MAX_PROBE_ERROR_CHARS = 300
#: Kernel mode -> None when the probe kernel compiled and ran, else why not (once per
#: process: gpuboost.backends.cuda.launch.probe).
_PROBE_RESULTS: dict[str, str | None] = {}
#: (emulated, device ordinal) -> CudaBackend: one per mode, so that switching the
#: emulation on or off (gpuboost.backends.emulation.emulated_kernels) takes effect.
_CUDA_BACKENDS: dict[tuple[bool, int], CudaBackend] = {}


def _probe_reason(mode: str) -> str | None:
    """None when a test kernel compiles and runs in ``mode``, else why not (cached)."""
    if mode not in _PROBE_RESULTS:
        try:
            probe(mode)
            _PROBE_RESULTS[mode] = None
        except Exception as error:  # the compiler's or the driver's, whatever its type
            detail = (str(error).strip().splitlines() or [""])[0][:_MAX_PROBE_ERROR_CHARS]
            _PROBE_RESULTS[mode] = (
                f"a test CUDA kernel does not compile or run here ({type(error).__name__}: "
                f"{detail}); CuPy compiles gpuboost's kernels at run time with NVRTC, which "
                f"the GPU extra installs: pip install 'gpuboost[cuda12]' (or cuda13)"
            )
    return _PROBE_RESULTS[mode]


def _cuda_reason() -> str | None:
    """None when a GPU is usable through CuPy -- a device is visible and a test kernel
    compiles and runs -- else why not (str). Under the emulation: whether the
    emulation compiles and runs the test kernel."""
    if emulation_enabled():
        return _probe_reason(EMULATED)
    try:
        import cupy
    except Exception as error:  # ImportError, or a broken CUDA install
        return (
            f"CuPy is not importable ({type(error).__name__}: {error}); install the GPU "
            f"extra: pip install 'gpuboost[cuda12]' (or cuda13)"
        )
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:
        return f"the CUDA runtime reports no usable device ({error})"
    if count < 1:
        return "no CUDA device is visible (check CUDA_VISIBLE_DEVICES and the driver)"
    return _probe_reason(CUPY)


def _cpu_backend() -> Backend:
    """The compiled CPU backend, or the NumPy reference when ``GPUBOOST_CPU_KERNELS=numpy``
    asks for it or Numba is missing (then with one warning per process)."""
    global _warned_fallback
    reason = compiled_kernels_reason()
    if reason is None:
        return _CPU_BACKEND
    if not _warned_fallback and f"{CPU_KERNELS_ENV_VAR}=numpy" not in reason:
        _warned_fallback = True
        warnings.warn(
            f"gpuboost runs the NumPy CPU backend, several times slower than the compiled "
            f"one: {reason}.",
            RuntimeWarning,
            stacklevel=3,
        )
    return _NUMPY_BACKEND


def cuda_available() -> bool:
    """Whether ``device='cuda'`` can run here: a GPU via CuPy on which a test kernel
    compiles and runs, or the CPU emulation."""
    return _cuda_reason() is None


def get_backend(device: str | None = "auto") -> Backend:
    """The backend for a ``device`` parameter value.

    'cpu' -> the compiled CPU backend (the NumPy reference with ``GPUBOOST_CPU_KERNELS=numpy``
    or without Numba). 'cuda' / 'cuda:N' -> CUDA (CuPy kernels; with
    ``GPUBOOST_EMULATE_CUDA=1`` the same Python code on emulated device arrays
    with the kernels emulated on the CPU). 'auto' -> CUDA when a real GPU is usable
    (CuPy sees a device and a test kernel compiles and runs on it), else CPU (never
    the emulation).

    Raises
    ------
    DeviceUnavailableError
        'cuda' without a usable GPU.
    """
    if device in (None, "cpu"):
        return _cpu_backend()
    if device == "auto":
        if not emulation_enabled() and _cuda_reason() is None:
            try:
                return get_backend("cuda")
            except DeviceUnavailableError:  # CuPy sees a GPU but the backend cannot load
                return _cpu_backend()
        return _cpu_backend()
    if device == "gpu" or device.startswith("gpu:"):
        device = "cuda" + device[3:]
    if device == "cuda" or device.startswith("cuda:"):
        ordinal = int(device.split(":", 1)[1]) if ":" in device else 0
        reason = _cuda_reason()
        if reason is not None:
            raise DeviceUnavailableError(
                f"device={device!r} was requested but {reason}. Use device='cpu' or device='auto'."
            )
        key = (emulation_enabled(), ordinal)
        if key not in _CUDA_BACKENDS:
            _CUDA_BACKENDS[key] = CudaBackend(ordinal)
        return _CUDA_BACKENDS[key]
    raise ValueError(f"Unknown device {device!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'.")


def release_memory() -> None:
    """Free pooled device memory of every CUDA backend created in this process."""
    for backend in _CUDA_BACKENDS.values():
        backend.release_memory()
