"""Loading and launching the raw CUDA kernels of ``cuda/*.cu``.

Two modes run the same kernel sources:

* :data:`CUPY`: ``cupy.RawModule`` on a GPU (compiled by NVRTC);
* :data:`EMULATED`: the CPU emulation (:class:`gpuboost.backends.emulation.EmulatedModule`,
  compiled by g++), chosen with ``GPUBOOST_EMULATE_CUDA=1``
  (:func:`gpuboost.backends.emulation.emulation_enabled`).

Every kernel file is compiled once per process and mode with :func:`compile_options`
(:data:`NVCC_OPTIONS`: ``--fmad=false`` so float arithmetic rounds exactly as NumPy's;
and the hash of all kernel sources, so that CuPy's kernel cache never serves kernels
compiled from older headers), and every kernel
object is fetched from its module once per ``(mode, file, kernel)``. The caches are
keyed by mode, so switching the emulation on or off (``emulated_kernels()``) needs no
invalidation. Kernels share CuPy's calling convention
``kernel(grid, block, args, shared_mem=0)``; scalars must be NumPy scalars of the C
type (``np.int32(n)`` for ``int``).

A :class:`KernelLauncher` (one per backend) launches the kernels of one mode and, with
``check_launches``, synchronizes after every launch so that a failing kernel is
reported by name. The launch-geometry helpers shared by the host code of several
primitives (grid sizes, segment tiles, packed segment tables, argument checks) live
here too.
"""

import os

import numpy as np

from ...core.segments import offsets
from ..emulation import EmulatedModule, emulation_enabled
from ..emulation.device_array import namespace as emulated_namespace
from .sources import cuda_source_dir, source_hash

__all__ = [
    "NVCC_OPTIONS",
    "SOURCE_HASH_MACRO",
    "compile_options",
    "probe",
    "PROBE_KERNEL",
    "EMULATED",
    "CUPY",
    "MODES",
    "CHECK_LAUNCHES_ENV_VAR",
    "GRID_STRIDE_MAX_BLOCKS",
    "MAX_GRID_X",
    "current_mode",
    "array_module",
    "get_module",
    "get_kernel",
    "clear_cache",
    "KernelLauncher",
    "default_launcher",
    "ceil_div",
    "grid_stride_blocks",
    "segment_tiles",
    "padded",
    "segment_table",
    "require_array",
]

#: Compiler options for every kernel file (NVRTC through CuPy, or g++ emulation).
NVCC_OPTIONS = ("--fmad=false", "-std=c++17")

#: Macro defined in every kernel compilation to the hash of all kernel sources.
SOURCE_HASH_MACRO = "GPUBOOST_SOURCE_HASH"

#: Kernels run on a GPU through CuPy.
CUPY = "cupy"
#: Kernels run in the CPU emulation.
EMULATED = "emulated"
MODES = (CUPY, EMULATED)

#: Environment variable: "1" synchronizes and checks for errors after every launch.
CHECK_LAUNCHES_ENV_VAR = "GPUBOOST_CUDA_CHECK_LAUNCHES"

#: Most blocks of a grid-stride kernel (binning, prediction): enough to fill any
#: current GPU several times over; larger inputs loop.
GRID_STRIDE_MAX_BLOCKS = 4096
#: Largest gridDim.x.
MAX_GRID_X = 2**31 - 1

#: (mode, file stem) -> compiled module.
_MODULES = {}
#: (mode, file stem, kernel name) -> kernel object.
_KERNELS = {}


def current_mode():
    """The mode new backends use: :data:`EMULATED` when ``GPUBOOST_EMULATE_CUDA=1``
    (read at every call), else :data:`CUPY`."""
    return EMULATED if emulation_enabled() else CUPY


def _check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def array_module(mode):
    """The array module of ``mode``: ``cupy``, or under the emulation the emulated device
    namespace (:data:`gpuboost.backends.emulation.device_array.namespace`: NumPy
    computing, CuPy's rules for what crosses between host and device)."""
    _check_mode(mode)
    if mode == EMULATED:
        return emulated_namespace
    import cupy

    return cupy


def compile_options(source_dir=None):
    """The options every kernel file is compiled with, in both modes:
    :data:`NVCC_OPTIONS`, the include folder, and ``-DGPUBOOST_SOURCE_HASH=<hash of
    every .cu / .cuh>`` (:func:`gpuboost.backends.cuda.sources.source_hash`), so that a
    changed header changes the key of CuPy's kernel cache (and of the emulation's)."""
    source_dir = cuda_source_dir() if source_dir is None else source_dir
    return NVCC_OPTIONS + (
        f"-I{source_dir}",
        f"-D{SOURCE_HASH_MACRO}={source_hash(source_dir)}",
    )


def _load_module(mode, file_stem):
    source_dir = cuda_source_dir()
    path = source_dir / f"{file_stem}.cu"
    options = compile_options(source_dir)
    if mode == EMULATED:
        return EmulatedModule(path=str(path), options=options, device_arrays_only=True)
    import cupy

    return cupy.RawModule(code=path.read_text(), options=options)


#: A kernel compiled and run before ``device='auto'`` picks the GPU (:func:`probe`): it
#: proves that kernels compile here (CuPy needs NVRTC, which the driver lacks) and run.
PROBE_SOURCE = r"""
extern "C" __global__ void gpuboost_probe(int* out) {
  out[threadIdx.x] = static_cast<int>(threadIdx.x) + 1;
}
"""
PROBE_KERNEL = "gpuboost_probe"
#: Threads of the probe's one block.
PROBE_THREADS = 32


def probe(mode):
    """Compile :data:`PROBE_SOURCE` in ``mode``, run it and check what it wrote.

    Raises
    ------
    Exception
        Whatever the compiler (NVRTC through CuPy, or g++ in the emulation) or the
        launch raised; RuntimeError when the kernel ran but wrote wrong values.
    """
    _check_mode(mode)
    xp = array_module(mode)
    if mode == EMULATED:
        module = EmulatedModule(code=PROBE_SOURCE, options=NVCC_OPTIONS, device_arrays_only=True)
    else:
        import cupy

        module = cupy.RawModule(code=PROBE_SOURCE, options=NVCC_OPTIONS)
    out = xp.zeros(PROBE_THREADS, dtype=np.int32)
    module.get_function(PROBE_KERNEL)((1,), (PROBE_THREADS,), (out,))
    if not np.array_equal(xp.asnumpy(out), np.arange(1, PROBE_THREADS + 1)):
        raise RuntimeError("a test kernel compiled and ran, but computed wrong values")


def get_module(mode, file_stem):
    """The compiled module of ``cuda/<file_stem>.cu`` in ``mode`` (compiled once, cached)."""
    _check_mode(mode)
    key = (mode, file_stem)
    module = _MODULES.get(key)
    if module is None:
        module = _load_module(mode, file_stem)
        _MODULES[key] = module
    return module


def get_kernel(mode, file_stem, kernel_name):
    """The kernel ``kernel_name`` of ``cuda/<file_stem>.cu`` in ``mode``: fetched from
    its module once, then cached (``cupy.RawKernel`` or ``EmulatedKernel``)."""
    key = (mode, file_stem, kernel_name)
    kernel = _KERNELS.get(key)
    if kernel is None:
        kernel = get_module(mode, file_stem).get_function(kernel_name)
        _KERNELS[key] = kernel
    return kernel


def clear_cache():
    """Forget every compiled module and kernel object (of both modes)."""
    _KERNELS.clear()
    _MODULES.clear()


class KernelLauncher:
    """Launches the kernels of one mode.

    Parameters
    ----------
    mode : {'cupy', 'emulated'}
    check_launches : bool
        On a GPU, synchronize after every launch and raise a RuntimeError naming the
        kernel when it failed (launches are asynchronous: otherwise a fault surfaces
        at the next synchronizing call). The emulation raises at the launch anyway.
    """

    def __init__(self, mode, check_launches=False):
        _check_mode(mode)
        self.mode = mode
        self.check_launches = bool(check_launches)

    def __repr__(self):
        return f"KernelLauncher(mode={self.mode!r}, check_launches={self.check_launches})"

    def kernel(self, file_stem, kernel_name):
        """The cached kernel object (for its attributes, e.g. ``shared_size_bytes``)."""
        return get_kernel(self.mode, file_stem, kernel_name)

    def __call__(self, file_stem, kernel_name, grid, block, args, *, shared_mem=0):
        """Launch ``kernel_name`` of ``cuda/<file_stem>.cu`` on a 1-D grid.

        Parameters
        ----------
        file_stem, kernel_name : str
        grid, block : int
            Blocks, and threads per block.
        args : sequence
            Device arrays and NumPy scalars, in the kernel's parameter order.
        shared_mem : int
            Dynamic shared memory per block, in bytes.
        """
        kernel = self.kernel(file_stem, kernel_name)
        kernel((int(grid),), (int(block),), tuple(args), shared_mem=int(shared_mem))
        if self.check_launches and self.mode == CUPY:
            import cupy

            try:
                cupy.cuda.runtime.deviceSynchronize()
            except cupy.cuda.runtime.CUDARuntimeError as error:
                raise RuntimeError(
                    f"CUDA kernel {file_stem}.cu:{kernel_name} failed: {error}"
                ) from error


def default_launcher():
    """A :class:`KernelLauncher` of :func:`current_mode`, checking launches when
    ``GPUBOOST_CUDA_CHECK_LAUNCHES=1``."""
    return KernelLauncher(current_mode(), os.environ.get(CHECK_LAUNCHES_ENV_VAR) == "1")


# ---- launch geometry ---------------------------------------------------------------
def ceil_div(numerator, denominator):
    """``ceil(numerator / denominator)`` for non-negative integers (scalars or arrays)."""
    return -(-numerator // denominator)


def grid_stride_blocks(n_items, threads_per_block):
    """Blocks of a grid-stride kernel over ``n_items`` (> 0) items."""
    return int(min(ceil_div(n_items, threads_per_block), GRID_STRIDE_MAX_BLOCKS))


def segment_tiles(begins, ends, tile_rows):
    """Tiles of ``tile_rows`` positions per segment (a tile never spans two segments;
    the device side is ``cuda/segments.cuh``).

    Parameters
    ----------
    begins, ends : ndarray of shape (n_segments,), int64
    tile_rows : int

    Returns
    -------
    first_tile : ndarray of shape (n_segments + 1,), int64
        Segment ``s`` owns tiles ``first_tile[s] .. first_tile[s + 1] - 1``.
    n_tiles : int
    """
    first_tile = offsets(ceil_div(ends - begins, tile_rows))
    return first_tile, int(first_tile[-1])


def padded(values, width):
    """``values`` as int64, padded with zeros to ``width`` entries."""
    out = np.zeros(width, dtype=np.int64)
    out[: len(values)] = values
    return out


def segment_table(xp, rows, trailing=None):
    """Per-segment int64 rows copied to the device in one transfer.

    Parameters
    ----------
    xp : module
    rows : sequence of 1-D int arrays
        Each padded with zeros to the longest (see :func:`padded`).
    trailing : ndarray of shape (m,), int64, optional (host)
        Other values sent in the same copy, after the rows.

    Returns
    -------
    table : xp array of shape (len(rows), width), int64
        ``table[i]`` is row ``i`` (C-contiguous, a kernel pointer argument).
    trailing : xp array of shape (m,), int64
        Only with ``trailing``: its device copy (a view of the same allocation).
    """
    width = max(len(row) for row in rows)
    host = np.stack([padded(row, width) for row in rows])
    if trailing is None:
        return xp.array(host)
    device = xp.array(np.concatenate([host.reshape(-1), np.asarray(trailing, dtype=np.int64)]))
    return device[: host.size].reshape(host.shape), device[host.size :]


def require_array(xp, array, dtype, name, ndim=None):
    """Check that ``array`` is what a kernel pointer argument expects.

    Raises
    ------
    TypeError
        Not an ``xp`` array (a device array), or the wrong dtype or rank.
    ValueError
        Not C-contiguous.
    """
    if not isinstance(array, xp.ndarray):
        raise TypeError(
            f"{name} must be a {xp.__name__} array (a device array), got {type(array).__name__}."
        )
    rank = "" if ndim is None else f" with {ndim} dimension(s)"
    if array.dtype != dtype or (ndim is not None and array.ndim != ndim):
        raise TypeError(
            f"{name} must be a {np.dtype(dtype).name} array{rank}, got "
            f"{array.dtype} of shape {array.shape}."
        )
    if not array.flags.c_contiguous:
        raise ValueError(
            f"{name} must be C-contiguous, got an array of shape {array.shape} that is not."
        )
