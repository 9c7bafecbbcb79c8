"""Numba for the compiled CPU backend: whether it is used, and the one way kernels are compiled.

Every kernel of :mod:`gpuboost.backends.cpu` is a function decorated with :func:`kernel`:
``numba.njit`` with

* ``nogil=True``: a training in one Python thread does not block others;
* ``cache=True``: the machine code is written next to the module (``__pycache__``) or,
  where that folder is read-only, to Numba's user-wide cache (``NUMBA_CACHE_DIR``, else
  ``~/.cache/numba``), so a second process loads it instead of compiling again;
* ``fastmath=False`` (Numba's default, never changed here): LLVM may neither reassociate
  float operations nor contract ``a * b + c`` into a fused multiply-add, so every float64
  expression is evaluated in the operation order of its NumPy reference
  (docs/DESIGN.md, "Quantization") and gives the same bits;
* ``error_model='numpy'``: a float division by zero gives inf/NaN as in NumPy instead of
  raising (the formulas guard every division that matters, as the NumPy ones do);
* ``boundscheck=False``: indices are validated once, on the Python side.

Parallel kernels (``parallel=True``) loop with :data:`prange` over independent pieces of
work that write disjoint outputs, and every sum they form is an integer sum, so their
results never depend on the number of threads (:func:`set_threads`).

Each parallel kernel also has a serial twin (``kernel.serial``: the same function
compiled without ``parallel``, ``prange`` then being ``range``), which gives the same
bits. :func:`sized` picks the twin on one thread (``nthread=1``: a parallel kernel
still goes through the thread pool, 40-80 us a call), and for the isolated calls whose
work it is told (a one-row prediction, binning a few rows, a metric of a small eval
set) below :data:`SERIAL_WORK`. The training loop's kernels are not told: measured on
2 cores, their parallel versions are faster than the twins even at 1,000 rows (the
pool's threads spin between calls that follow each other closely, and a row scan or a
split scan of a few nodes is mostly per-bin work, not per-row), and twins mixed into
the loop let the pool fall asleep and cost every following parallel call a wake-up.

Processes that start on a cold cache at once compile each kernel once: the first
compiles it under a file lock and the others load it from the cache
(:func:`_compile_once_across_processes`).

Numba invalidates a cached kernel only when the file defining it changes, not when a
function it calls (the scalar helpers of :mod:`.scalar`, the intrinsic below), a global
it reads (a constant of another module: ``MULTICLASS_HESSIAN_FACTOR``, the strict
``exp``'s table, a dtype) or the compile options here change: the compiled code holds
their values of the day it was compiled. So the cache is tied to the sources of
:data:`KERNEL_SOURCES`, the package and every gpuboost module it imports from: on
import, when their fingerprint (:func:`kernel_sources_fingerprint`) differs from the one
the cached kernels were built from, the package's cached kernels are deleted
(:func:`discard_stale_kernel_cache`).

Which CPU primitives run: the compiled ones unless ``GPUBOOST_CPU_KERNELS=numpy``
(:data:`CPU_KERNELS_ENV_VAR`) asks for the NumPy reference, or Numba cannot be imported
(then :func:`compiled_kernels_reason` says why and the backend warns once).
Without Numba this module still imports: :func:`kernel` returns the Python function
unchanged (never called by the library then) and :data:`prange` is ``range``.
"""

import contextlib
import hashlib
import os
import threading
import types
from pathlib import Path

from ...core.file_lock import exclusive

__all__ = [
    "CPU_KERNELS_ENV_VAR",
    "CPU_KERNEL_CHOICES",
    "NUMBA_AVAILABLE",
    "NUMBA_IMPORT_ERROR",
    "kernel",
    "all_kernels",
    "sized",
    "SERIAL_WORK",
    "prange",
    "threads",
    "compiled_kernels_reason",
    "set_threads",
    "max_threads",
    "vector_add_cell",
    "vector_add4",
    "prefetch",
    "KERNEL_SOURCES",
    "kernel_source_files",
    "kernel_sources_fingerprint",
    "forced_variant",
    "discard_stale_kernel_cache",
]

#: Environment variable choosing the CPU primitives: ``'numba'`` (default) or ``'numpy'``.
CPU_KERNELS_ENV_VAR = "GPUBOOST_CPU_KERNELS"
#: Its accepted values; the first is the default.
CPU_KERNEL_CHOICES = ("numba", "numpy")

try:
    import numba as _numba
except Exception as error:  # ImportError, or a broken install (llvmlite)
    _numba = None
    NUMBA_IMPORT_ERROR = f"{type(error).__name__}: {error}"
else:
    NUMBA_IMPORT_ERROR = None

#: Whether Numba could be imported.
NUMBA_AVAILABLE = _numba is not None

#: The folder of the kernel modules and the one Numba caches them in (when writable).
_PACKAGE_DIR = Path(__file__).resolve().parent
_CACHE_DIR = _PACKAGE_DIR / "__pycache__"
#: The gpuboost folder.
_GPUBOOST_DIR = _PACKAGE_DIR.parent.parent
#: The sources whose values compiled kernels can hold, relative to the gpuboost folder
#: (a folder stands for its ``*.py`` files): this package and every gpuboost module it
#: imports from at module level, directly or through those modules' own imports
#: (package ``__init__`` files aside). Declared rather than found on import, which
#: would parse ~60 files (0.3 s of every import); tests/backends/cpu/test_jit.py
#: checks the list against the imports.
KERNEL_SOURCES = (
    "backends/cpu",
    "backends/numpy",
    "backends/base.py",
    "backends/categorical.py",
    "core",
    "objectives",
    "metrics/base.py",
    "errors.py",
    "params.py",
)
#: File (in the cache folder) holding the fingerprint the cached kernels were built from.
_FINGERPRINT_FILE = "gpuboost_kernels.fingerprint"
#: Suffixes of Numba's cache files (index and compiled code).
_NUMBA_CACHE_SUFFIXES = (".nbi", ".nbc", ".lock")


def kernel_source_files(root=_GPUBOOST_DIR):
    """The files of :data:`KERNEL_SOURCES` under ``root`` (a gpuboost folder), sorted
    (list of Path)."""
    root = Path(root)
    files = []
    for source in KERNEL_SOURCES:
        path = root / source
        files.extend(path.glob("*.py") if path.suffix != ".py" else [path])
    return sorted(files)


def kernel_sources_fingerprint(root=_GPUBOOST_DIR):
    """SHA-256 of the sources of :data:`KERNEL_SOURCES` under ``root`` and of the Numba
    version (str)."""
    root = Path(root)
    digest = hashlib.sha256(str(getattr(_numba, "__version__", None)).encode())
    for path in kernel_source_files(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def discard_stale_kernel_cache(cache_dir=_CACHE_DIR):
    """Delete the cached kernels in ``cache_dir`` unless they were built from the current
    sources (see the module docstring); returns the number of files deleted. Does
    nothing where the folder is missing or read-only (Numba then caches elsewhere)."""
    cache_dir = Path(cache_dir)
    stamp = cache_dir / _FINGERPRINT_FILE
    fingerprint = kernel_sources_fingerprint()
    try:
        if stamp.read_text() == fingerprint:
            return 0
    except OSError:
        pass
    if not cache_dir.is_dir() or not os.access(cache_dir, os.W_OK):
        return 0
    removed = 0
    for path in cache_dir.iterdir():
        if path.suffix in _NUMBA_CACHE_SUFFIXES:
            try:
                path.unlink()
                removed += 1
            except OSError:  # another process removed it first
                pass
    try:
        stamp.write_text(fingerprint)
    except OSError:
        pass
    return removed


if _numba is not None:
    discard_stale_kernel_cache()


#: Work below which :func:`sized` picks a parallel kernel's serial twin for a call with
#: a size estimate, in estimated nanoseconds of the serial kernel (each call site weighs
#: its rows or trees by their cost). Measured on 2 cores, an isolated call (a
#: prediction, binning, a metric) wakes the pool for 40-80 us, and two threads gain
#: little more than that below about 150 us of serial work.
SERIAL_WORK = 150_000

#: Which variant :func:`sized` returns regardless of the work: None (by the work),
#: 'parallel' or 'serial' (the warm-up compiles both, gpuboost.warmup).
_forced_variant = threading.local()


def _compile(python_function, parallel):
    dispatcher = _numba.njit(
        nogil=True,
        cache=True,
        parallel=parallel,
        boundscheck=False,
        error_model="numpy",
    )(python_function)
    _compile_once_across_processes(dispatcher)
    return dispatcher


def _serial_copy(python_function):
    """``python_function`` under another qualified name (``<name>_serial``), so that
    Numba caches its serial compile in files of its own."""
    copy = types.FunctionType(
        python_function.__code__,
        python_function.__globals__,
        f"{python_function.__name__}_serial",
        python_function.__defaults__,
        python_function.__closure__,
    )
    copy.__qualname__ = f"{python_function.__qualname__}_serial"
    copy.__module__ = python_function.__module__
    copy.__doc__ = python_function.__doc__
    return copy


#: Every kernel compiled through :func:`kernel`, serial twins included (Numba dispatchers).
_KERNELS = []


def all_kernels():
    """Every kernel of the package defined so far, serial twins included (list of Numba
    dispatchers; empty without Numba): for reports of what was compiled or loaded."""
    return list(_KERNELS)


def kernel(function=None, *, parallel=False):
    """Compile ``function`` with Numba as every CPU kernel is (see the module docstring).

    Usable as ``@kernel`` or ``@kernel(parallel=True)``; a parallel kernel carries its
    serial twin as ``.serial`` (call it through :func:`sized`).
    """

    def decorate(python_function):
        if _numba is None:
            python_function.serial = python_function
            return python_function
        dispatcher = _compile(python_function, parallel)
        _KERNELS.append(dispatcher)
        dispatcher.serial = dispatcher
        if parallel:
            dispatcher.serial = _compile(_serial_copy(python_function), False)
            _KERNELS.append(dispatcher.serial)
        return dispatcher

    return decorate if function is None else decorate(function)


def sized(parallel_kernel, work=None):
    """``parallel_kernel`` or its serial twin: the twin when kernels run on one thread
    (:func:`threads`), or for ``work`` (estimated nanoseconds of serial work; None: no
    estimate, the parallel kernel) below :data:`SERIAL_WORK`. Both give the same bits;
    only the time differs."""
    forced = getattr(_forced_variant, "value", None)
    if forced is not None:
        return parallel_kernel.serial if forced == "serial" else parallel_kernel
    if threads() == 1 or (work is not None and work < SERIAL_WORK):
        return parallel_kernel.serial
    return parallel_kernel


@contextlib.contextmanager
def forced_variant(variant):
    """Within the block, :func:`sized` returns ``variant`` ('parallel', 'serial', or
    None: by the work) in the calling thread."""
    if variant not in (None, "parallel", "serial"):
        raise ValueError(f"variant must be None, 'parallel' or 'serial', got {variant!r}.")
    previous = getattr(_forced_variant, "value", None)
    _forced_variant.value = variant
    try:
        yield
    finally:
        _forced_variant.value = previous


#: Per thread: whether a kernel's compile is under way (its callees compile unlocked).
_compiling = threading.local()


def _compile_once_across_processes(dispatcher):
    """Compile each kernel once however many processes start on a cold cache at once
    (pytest-xdist's workers, a Dask cluster's worker processes): a kernel called with new
    argument types compiles under a lock of its own next to its cache files
    (:func:`gpuboost.core.file_lock.exclusive`), so the other processes wait, then load
    it from Numba's cache instead of compiling it too. The helpers a kernel calls compile
    inside its compile without a lock of their own: a thread holding a helper's lock
    while waiting for Numba's compiler lock, held by a thread compiling a kernel that
    calls the helper, would never get it."""
    cache = getattr(dispatcher, "_cache", None)
    try:
        lock_path = Path(cache._cache_path) / f"{cache._impl.filename_base}.lock"
    except AttributeError:  # a Numba without these internals: compile as it does
        return
    compile_in_this_process = dispatcher.compile

    def compile_once(signature):
        if getattr(_compiling, "active", False):  # a callee of a kernel being compiled
            return compile_in_this_process(signature)
        _compiling.active = True
        try:
            with exclusive(lock_path):  # Numba's compile looks in its cache first
                return compile_in_this_process(signature)
        finally:
            _compiling.active = False

    dispatcher.compile = compile_once


#: ``numba.prange`` (``range`` without Numba).
prange = _numba.prange if _numba is not None else range


def compiled_kernels_reason():
    """None when the compiled CPU kernels are to be used, else why not (str).

    Raises
    ------
    ValueError
        ``GPUBOOST_CPU_KERNELS`` holds a value other than 'numba' or 'numpy'.
    """
    choice = os.environ.get(CPU_KERNELS_ENV_VAR, CPU_KERNEL_CHOICES[0]).strip().lower()
    if choice not in CPU_KERNEL_CHOICES:
        raise ValueError(
            f"{CPU_KERNELS_ENV_VAR}={choice!r} is not one of {CPU_KERNEL_CHOICES}: "
            f"unset it (compiled kernels) or set it to 'numpy' (the NumPy reference)."
        )
    if choice == "numpy":
        return f"{CPU_KERNELS_ENV_VAR}=numpy selects the NumPy reference"
    if _numba is None:
        return (
            f"Numba is not importable ({NUMBA_IMPORT_ERROR}); install it "
            f"(pip install numba) for the compiled CPU kernels"
        )
    return None


def max_threads():
    """The most threads a parallel kernel may use (Numba's ``NUMBA_NUM_THREADS``)."""
    return 1 if _numba is None else int(_numba.config.NUMBA_NUM_THREADS)


#: The setting :func:`set_threads` made last, per calling thread (Numba keeps its own
#: per thread too): remembered so that the calls the backend makes around every kernel
#: (about 40 per tree) cost no query of Numba (``numba.get_num_threads``, about 10 us).
#: A ``numba.set_num_threads`` made by someone else in between is not seen; only the
#: speed could differ, as no result depends on the number of threads.
_setting = threading.local()


def threads():
    """The threads a parallel kernel launched now from the calling thread runs on.

    Kernels take it as an argument: a kernel calling ``numba.get_num_threads`` itself
    could not be cached."""
    if _numba is None:
        return 1
    remembered = getattr(_setting, "n_threads", None)
    return int(_numba.get_num_threads()) if remembered is None else remembered


def set_threads(n_threads):
    """Threads of the parallel kernels launched from the calling thread (clipped to
    ``[1, max_threads()]``; Numba keeps this setting per calling thread)."""
    if _numba is None:
        return
    n_threads = max(1, min(int(n_threads), max_threads()))
    if getattr(_setting, "n_threads", None) != n_threads:
        if _numba.get_num_threads() != n_threads:
            _numba.set_num_threads(n_threads)
        _setting.n_threads = n_threads


def _add_cell_python(cells, cell, gradient, hessian):
    """What :func:`vector_add_cell` does, in Python (without Numba)."""
    cells[cell] += gradient
    cells[cell + 1] += hessian
    cells[cell + 2] += 1


def _add4_python(cells, cell, first, second, third, fourth):
    """What :func:`vector_add4` does, in Python (without Numba)."""
    cells[cell : cell + 4] += (first, second, third, fourth)


def _prefetch_python(array, index):
    """What :func:`prefetch` does, in Python (nothing)."""


if _numba is None:
    vector_add_cell = _add_cell_python
    vector_add4 = _add4_python
    prefetch = _prefetch_python
else:
    from llvmlite import ir as _ir
    from numba.extending import intrinsic as _intrinsic

    @_intrinsic
    def vector_add_cell(typingctx, cells, cell, gradient, hessian):
        """``cells[cell:cell + 4] += (gradient, hessian, 1, 0)`` as one 4 x int64 vector
        load, add and store (one 256-bit ``vpaddq`` on AVX2; LLVM splits it where the
        CPU has narrower vectors). ``cells`` is a 1-D int64 array whose element ``cell``
        is 32-byte aligned; ``cell`` an unsigned index."""
        signature = _numba.types.void(
            cells, _numba.types.uint64, _numba.types.int64, _numba.types.int64
        )

        def codegen(context, builder, signature, arguments):
            array, index, gradient_value, hessian_value = arguments
            data = context.make_array(signature.args[0])(context, builder, array).data
            vector_type = _ir.VectorType(_ir.IntType(64), 4)
            pointer = builder.bitcast(builder.gep(data, [index]), vector_type.as_pointer())
            increment = _ir.Constant(vector_type, [0, 0, 1, 0])
            increment = builder.insert_element(
                increment, gradient_value, _ir.Constant(_ir.IntType(32), 0)
            )
            increment = builder.insert_element(
                increment, hessian_value, _ir.Constant(_ir.IntType(32), 1)
            )
            old = builder.load(pointer, align=32)
            builder.store(builder.add(old, increment), pointer, align=32)
            return context.get_dummy_value()

        return signature, codegen

    @_intrinsic
    def vector_add4(typingctx, cells, cell, first, second, third, fourth):
        """``cells[cell:cell + 4] += (first, second, third, fourth)`` as one 4 x int64
        vector load, add and store (``cells`` a 1-D int64 array, ``cell`` unsigned).
        Unaligned accesses are allowed; 32-byte aligned ones are faster (a vector never
        straddles a cache line). Values that stay the same over a loop are built into a
        vector register once, outside it."""
        int64 = _numba.types.int64
        signature = _numba.types.void(cells, _numba.types.uint64, int64, int64, int64, int64)

        def codegen(context, builder, signature, arguments):
            array, index = arguments[:2]
            data = context.make_array(signature.args[0])(context, builder, array).data
            vector_type = _ir.VectorType(_ir.IntType(64), 4)
            pointer = builder.bitcast(builder.gep(data, [index]), vector_type.as_pointer())
            increment = _ir.Constant(vector_type, [0, 0, 0, 0])
            for lane, value in enumerate(arguments[2:]):
                increment = builder.insert_element(
                    increment, value, _ir.Constant(_ir.IntType(32), lane)
                )
            builder.store(builder.add(builder.load(pointer, align=8), increment), pointer, align=8)
            return context.get_dummy_value()

        return signature, codegen

    @_intrinsic
    def prefetch(typingctx, array, index):
        """Ask the CPU to bring ``array[index]`` into its caches (``llvm.prefetch``, read,
        high locality), so that a load of it a few iterations later does not wait for
        memory; a hint without effect on results. ``index`` an unsigned element index."""
        signature = _numba.types.void(array, _numba.types.uint64)

        def codegen(context, builder, signature, arguments):
            from numba.core import cgutils

            data = context.make_array(signature.args[0])(context, builder, arguments[0]).data
            byte_pointer = _ir.IntType(8).as_pointer()
            int32 = _ir.IntType(32)
            function = cgutils.get_or_insert_function(
                builder.module,
                _ir.FunctionType(_ir.VoidType(), [byte_pointer, int32, int32, int32]),
                "llvm.prefetch.p0",
            )
            address = builder.bitcast(builder.gep(data, [arguments[1]]), byte_pointer)
            # (address, read, locality 3 = keep in all levels, data cache)
            builder.call(
                function,
                [address, _ir.Constant(int32, 0), _ir.Constant(int32, 3), _ir.Constant(int32, 1)],
            )
            return context.get_dummy_value()

        return signature, codegen
