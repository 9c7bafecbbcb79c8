"""Loading the raw CUDA kernels of ``cuda/*.cu``: CuPy on a GPU, the CPU
emulation (``GPUBOOST_EMULATE_CUDA=1``) otherwise.

Every kernel file is compiled once per process with :data:`NVCC_OPTIONS`
(``--fmad=false`` so float arithmetic rounds exactly as NumPy's) and cached. The
returned kernels share CuPy's calling convention
``kernel(grid, block, args, shared_mem=0)``; scalars must be NumPy scalars of
the C type (``np.int32(n)`` for ``int``).
"""

from .sources import cuda_source_dir

__all__ = ["NVCC_OPTIONS", "array_module", "get_kernel", "emulated", "clear_cache"]

#: Compiler options for every kernel file (NVRTC through CuPy, or g++ emulation).
NVCC_OPTIONS = ("--fmad=false", "-std=c++17")

_MODULES = {}


def emulated():
    """True when kernels run through the CPU emulation."""
    from ..emulation import emulation_enabled
    return emulation_enabled()


def array_module():
    """``cupy`` on a GPU; under the emulation, the emulated device namespace
    (:data:`gpuboost.emulation.device_array.namespace`: NumPy computing, CuPy's
    rules for what crosses between host and device)."""
    if emulated():
        from ..emulation.device_array import namespace
        return namespace
    import cupy
    return cupy


def _load_module(file_stem):
    source_dir = cuda_source_dir()
    path = source_dir / f"{file_stem}.cu"
    options = NVCC_OPTIONS + (f"-I{source_dir}",)
    if emulated():
        from ..emulation import EmulatedModule
        return EmulatedModule(path=str(path), options=options, device_arrays_only=True)
    import cupy
    return cupy.RawModule(code=path.read_text(), options=options)


def get_kernel(file_stem, kernel_name):
    """The kernel ``kernel_name`` of ``cuda/<file_stem>.cu`` (compiled once, cached)."""
    module = _MODULES.get(file_stem)
    if module is None:
        module = _load_module(file_stem)
        _MODULES[file_stem] = module
    return module.get_function(kernel_name)


def clear_cache():
    """Forget compiled modules (tests; after switching emulation on or off)."""
    _MODULES.clear()
