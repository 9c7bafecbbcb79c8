"""Compile CUDA kernel sources into CPU shared libraries with g++.

The source is compiled as C++20 with the emulation header ``cuda_emu.h``
force-included (``-include``), so the same ``cuda/*.cu`` text that nvcc and
NVRTC compile runs on the CPU. ``-ffp-contract=off`` keeps ``a * b + c`` two
roundings, as nvcc's ``--fmad=false`` does, so float results match NumPy's.

A module has two flavours: the plain one, and the *instrumented* one
(:data:`INSTRUMENTATION_FLAGS`) in which g++ calls a hook before every memory access,
for the sanitizer and the traffic model (``instrument.h``). The plain flavour is
what runs unless ``GPUBOOST_SANITIZE`` is set or the traffic model records.

Compiled libraries are cached in :func:`cache_dir` under a hash of everything
that affects the build: the source, the emulation headers, the local headers
the source includes (``#include "..."``, followed recursively), the flags (so the
flavours are cached apart) and the compiler version. Concurrent compilations
(several processes, or threads) are safe and happen once: a library is built under a
lock of its own (:func:`gpuboost.core.file_lock.exclusive`), and written to a private
temporary file renamed into place.
"""

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from ...core.file_lock import exclusive

__all__ = [
    "EmulationCompileError",
    "EMULATION_HEADER",
    "BASE_FLAGS",
    "INSTRUMENTATION_FLAGS",
    "cache_dir",
    "compile_shared_library",
    "compile_statistics",
]

#: Folder of this package, holding ``cuda_emu.h``.
EMULATION_DIR = Path(__file__).resolve().parent
#: The header that maps CUDA onto C++ threads.
EMULATION_HEADER = EMULATION_DIR / "cuda_emu.h"
#: Every header of the emulation (cuda_emu.h and the instrumentation it includes).
EMULATION_HEADERS = ("cuda_emu.h", "instrument.h")
#: Environment variable naming the cache folder.
CACHE_ENV_VAR = "GPUBOOST_EMULATION_CACHE"
#: Environment variable naming the C++ compiler (default ``g++``).
COMPILER_ENV_VAR = "GPUBOOST_EMULATION_CXX"
DEFAULT_COMPILER = "g++"
#: Cache folder used unless ``GPUBOOST_EMULATION_CACHE`` is set.
DEFAULT_CACHE_DIR = Path("~/.cache/gpuboost/emulation")
#: Flags of every emulation build. ``-fvisibility=hidden`` and
#: ``-fno-gnu-unique`` keep each library's state (static ``__shared__``
#: variables, launch bookkeeping) private even when several are loaded;
#: ``-fno-strict-aliasing`` tolerates the pointer reinterpretation common in
#: kernels, which GPU compilers accept.
BASE_FLAGS = (
    "-std=c++20",
    "-O2",
    "-pthread",
    "-shared",
    "-fPIC",
    "-ffp-contract=off",
    "-fno-strict-aliasing",
    "-fvisibility=hidden",
    "-fno-gnu-unique",
    "-DGPUBOOST_EMULATION",
)
#: Flags of the instrumented flavour (sanitizer, traffic model; see instrument.h):
#: g++ calls ``__asan_{load,store}*_noabort`` before every access it cannot prove to be a
#: named variable's (no shadow memory, no stack or global redzones); ``-g1`` keeps line
#: numbers for the messages; no vectorization and no loops turned into memset / memcpy
#: calls, so that each GPU thread's accesses stay its own, one at a time, as on a GPU.
INSTRUMENTATION_FLAGS = (
    "-fsanitize=kernel-address",
    "-fsanitize-recover=kernel-address",
    "--param",
    "asan-instrumentation-with-call-threshold=0",
    "--param",
    "asan-stack=0",
    "--param",
    "asan-globals=0",
    "-g1",
    "-gdwarf-4",
    "-fno-tree-vectorize",
    "-fno-tree-loop-distribute-patterns",
    "-fno-weak",
    "-DGPUBOOST_EMU_INSTRUMENTED",
)
#: Longest time one compilation may take, in seconds.
COMPILE_TIMEOUT_SECONDS = 600
#: Hex digits of the SHA-256 used in cache file names.
CACHE_KEY_LENGTH = 32
#: Version tag of the cache layout; bump when the build changes incompatibly.
CACHE_FORMAT_VERSION = "1"

#: What this process compiled: libraries built by g++ and their seconds, and libraries
#: found in the cache (:func:`compile_statistics`).
_STATISTICS = {"compiled": 0, "seconds": 0.0, "cached": 0}
_STATISTICS_LOCK = threading.Lock()

_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


def compile_statistics():
    """What this process's emulation builds cost, for the test suite's report (dict).

    Returns
    -------
    dict
        ``compiled``: libraries g++ built; ``seconds``: their wall-clock time, summed;
        ``cached``: libraries found already built in :func:`cache_dir`.
    """
    with _STATISTICS_LOCK:
        return dict(_STATISTICS)


def _count(what, seconds=0.0):
    with _STATISTICS_LOCK:
        _STATISTICS[what] += 1
        _STATISTICS["seconds"] += seconds


class EmulationCompileError(RuntimeError):
    """g++ rejected a kernel source (the message holds the compiler output)."""


def _is_writable_dir(path):
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def cache_dir():
    """Return the folder that holds compiled emulation libraries.

    Returns
    -------
    pathlib.Path
        ``$GPUBOOST_EMULATION_CACHE`` when set, else
        ``~/.cache/gpuboost/emulation``; if that folder cannot be created or
        written, a per-user folder in the system temporary directory.
    """
    configured = os.environ.get(CACHE_ENV_VAR)
    if configured:
        path = Path(configured).expanduser()
        if not _is_writable_dir(path):
            raise EmulationCompileError(f"{CACHE_ENV_VAR}={configured!r} is not a writable folder")
        return path
    path = DEFAULT_CACHE_DIR.expanduser()
    if _is_writable_dir(path):
        return path
    fallback = Path(tempfile.gettempdir()) / f"gpuboost-emulation-{os.getuid()}"
    if not _is_writable_dir(fallback):
        raise EmulationCompileError(f"no writable cache folder ({path}, {fallback})")
    return fallback


def compiler_executable():
    """Return the path of the C++ compiler used for emulation builds.

    Raises
    ------
    EmulationCompileError
        If the compiler is not on ``PATH``.
    """
    name = os.environ.get(COMPILER_ENV_VAR, DEFAULT_COMPILER)
    found = shutil.which(name)
    if found is None:
        raise EmulationCompileError(
            f"C++ compiler {name!r} not found on PATH (set {COMPILER_ENV_VAR})"
        )
    return found


@functools.lru_cache(maxsize=None)
def _compiler_version(executable):
    result = subprocess.run([executable, "--version"], capture_output=True, text=True, check=False)
    return result.stdout


def _local_include_files(source, search_dirs):
    """Files reached through ``#include "..."`` from ``source``, recursively.

    Includes are resolved against ``search_dirs`` in order, the way the
    compiler resolves them for a source file that lives in the first one.
    """
    found = {}
    pending = [source]
    while pending:
        text = pending.pop()
        for name in _LOCAL_INCLUDE.findall(text):
            for folder in search_dirs:
                candidate = (Path(folder) / name).resolve()
                if candidate.is_file():
                    if candidate not in found:
                        found[candidate] = candidate.read_bytes()
                        pending.append(found[candidate].decode("utf-8", "replace"))
                    break
    return found


def _cache_key(source, flags, include_dirs, executable):
    digest = hashlib.sha256()
    for part in (
        CACHE_FORMAT_VERSION,
        _compiler_version(executable),
        "\0".join(flags),
        source,
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    for header in EMULATION_HEADERS:
        digest.update((EMULATION_DIR / header).read_bytes())
    for path, content in sorted(_local_include_files(source, include_dirs).items()):
        digest.update(str(path).encode())
        digest.update(b"\0")
        digest.update(content)
    return digest.hexdigest()[:CACHE_KEY_LENGTH]


def compile_shared_library(
    source, *, include_dirs=(), defines=(), source_name="kernel.cu", instrumented=False
):
    """Compile CUDA source text into a shared library for the emulator.

    Parameters
    ----------
    source : str
        The complete translation unit (kernel source plus the launch wrappers
        generated by the launcher).
    include_dirs : sequence of str or Path
        Folders searched for ``#include``, in order, after the emulation
        header's folder.
    defines : sequence of str
        Macro definitions, ``NAME`` or ``NAME=VALUE`` (passed as ``-D``).
    source_name : str
        Name for the temporary source file (shows up in compiler messages).
    instrumented : bool
        Build the instrumented flavour (:data:`INSTRUMENTATION_FLAGS`).

    Returns
    -------
    pathlib.Path
        The cached ``.so`` file.

    Raises
    ------
    EmulationCompileError
        If the compiler is missing or rejects the source.
    """
    executable = compiler_executable()
    include_dirs = [str(Path(folder).resolve()) for folder in include_dirs]
    flags = list(BASE_FLAGS)
    if instrumented:
        flags += INSTRUMENTATION_FLAGS
    flags += [f"-D{definition}" for definition in defines]
    flags += ["-I", str(EMULATION_DIR)]
    for folder in include_dirs:
        flags += ["-I", folder]
    flags += ["-include", str(EMULATION_HEADER)]
    key = _cache_key(source, flags, include_dirs, executable)
    folder = cache_dir()
    library = folder / f"{key}.so"
    if library.is_file():
        _count("cached")
        return library
    # One build per library however many processes ask at once (xdist workers, Dask
    # workers): the others wait, then load what the first one built.
    with exclusive(folder / f"{key}.lock"):
        if library.is_file():
            _count("cached")
            return library
        return _build(source, flags, executable, folder, library, key, source_name)


def _build(source, flags, executable, folder, library, key, source_name):
    """Run g++ on ``source`` and move the library into place as ``library``."""
    started = time.perf_counter()
    stem = Path(source_name).stem or "kernel"
    source_fd, source_path = tempfile.mkstemp(prefix=f"{stem}-", suffix=".cu", dir=folder)
    library_fd, library_tmp = tempfile.mkstemp(prefix=f"{key}-", suffix=".so.tmp", dir=folder)
    os.close(library_fd)
    try:
        with os.fdopen(source_fd, "w", encoding="utf-8") as handle:
            handle.write(source)
        command = [executable, *flags, "-x", "c++", source_path, "-o", library_tmp]
        try:
            result = subprocess.run(
                command,
                capture_output=True,
                text=True,
                check=False,
                timeout=COMPILE_TIMEOUT_SECONDS,
            )
        except subprocess.TimeoutExpired as error:
            raise EmulationCompileError(
                f"g++ took longer than {COMPILE_TIMEOUT_SECONDS} s on {source_name}"
            ) from error
        if result.returncode != 0:
            raise EmulationCompileError(
                f"emulation build of {source_name} failed:\n{' '.join(command)}\n{result.stderr}"
            )
        os.replace(library_tmp, library)
        _count("compiled", time.perf_counter() - started)
    finally:
        for leftover in (source_path, library_tmp):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass
    return library
