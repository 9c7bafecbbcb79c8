#!/usr/bin/env python3
"""Compile every CUDA kernel file with NVRTC exactly as CuPy compiles it at run time.

``scripts/cuda_compile_check.py`` compiles the kernels with nvcc. On a GPU,
though, CuPy's ``RawModule`` compiles them with NVRTC, a different front end:
it has no host headers, takes other options, and CuPy adds options of its own.
This script reproduces that compilation without a GPU, through the NVRTC
library alone (``pip install nvidia-cuda-nvrtc`` provides it), and checks:

* every file compiles to a cubin for each architecture (default sm_80, sm_90)
  with the project's options (:data:`gpuboost.backends.cuda.launch.NVCC_OPTIONS`)
  plus those CuPy's compiler adds (:data:`CUPY_ADDED_OPTIONS`);
* NVRTC prints no warning;
* the PTX exports exactly the ``extern "C" __global__`` kernels that the CPU
  emulation finds in the source (a kernel NVRTC mangles or drops cannot be
  looked up by ``RawModule.get_function``), each with the parameter count the
  emulation checks launches against.

Exit status: 0 when everything passes, 1 when a compilation or check failed, 2
for usage errors (no NVRTC library, no such file).

Usage::

    python scripts/nvrtc_compile_check.py                    # every cuda/*.cu
    python scripts/nvrtc_compile_check.py --arch sm_90 --quiet
    python scripts/nvrtc_compile_check.py --library /path/to/libnvrtc.so.13
"""

import argparse
import ctypes
import ctypes.util
import glob
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

#: The script's folder (for cuda_compile_check) and the repository root (for
#: gpuboost, also when it is not installed).
for _folder in (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent):
    sys.path.insert(0, str(_folder))
from cuda_compile_check import (  # noqa: E402 - after the path set-up above
    CUDA_DIR,
    EXIT_COMPILE_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    add_source_arguments,
    collect_sources,
)

#: Options CuPy's compiler (cupy/cuda/compiler.py, CuPy 13 and 14) adds to a
#: First architecture with thread-block clusters: kernels declaring ``__cluster_dims__``
#: are compiled from it on (``cuda/common.cuh``: ``GPUBOOST_CLUSTERS``).
CLUSTER_MIN_ARCH = 90
#: RawModule's own options when it compiles with NVRTC, besides ``-arch``:
#: ``-ftz=true`` (flush float32 denormals: the kernels use no float32
#: arithmetic, so results are unaffected) and
#: ``--device-as-default-execution-space``.
CUPY_ADDED_OPTIONS = ("-ftz=true", "--device-as-default-execution-space")
#: Environment variable naming the NVRTC shared library to load.
LIBRARY_ENV_VAR = "GPUBOOST_NVRTC_LIBRARY"
#: Where pip's NVIDIA wheels put the library, relative to site-packages.
WHEEL_LIBRARY_GLOBS = (
    "nvidia/cu13/lib/libnvrtc.so*",
    "nvidia/cuda_nvrtc/lib/libnvrtc.so*",
    "nvidia/cu12/lib/libnvrtc.so*",
)
#: NVRTC_SUCCESS of the nvrtcResult enumeration.
NVRTC_SUCCESS = 0

_PTX_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)", re.S)
_PTX_PARAMETER = re.compile(r"\.param\s+")
_WARNING = re.compile(r"\bwarning\b", re.I)


class NvrtcLibraryNotFound(RuntimeError):
    """No loadable NVRTC shared library."""


def _candidate_libraries(explicit=None):
    """Paths to try, most specific first (explicit, env, pip wheels, CUDA_HOME, ld)."""
    if explicit:
        return [explicit]
    candidates = []
    if os.environ.get(LIBRARY_ENV_VAR):
        candidates.append(os.environ[LIBRARY_ENV_VAR])
    for entry in sys.path:
        for pattern in WHEEL_LIBRARY_GLOBS:
            candidates += sorted(glob.glob(os.path.join(entry or ".", pattern)), reverse=True)
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            candidates += sorted(
                glob.glob(os.path.join(os.environ[variable], "lib64", "libnvrtc.so*")), reverse=True
            )
    found = ctypes.util.find_library("nvrtc")
    if found:
        candidates.append(found)
    return [path for path in candidates if "builtins" not in os.path.basename(path)]


def load_nvrtc(explicit=None):
    """Load the NVRTC library.

    Parameters
    ----------
    explicit : str, optional
        A library path; otherwise ``$GPUBOOST_NVRTC_LIBRARY``, pip's NVIDIA
        wheels on ``sys.path``, ``$CUDA_HOME/lib64`` and the linker's path.

    Returns
    -------
    library : ctypes.CDLL
    path : str

    Raises
    ------
    NvrtcLibraryNotFound
    """
    tried = []
    for path in _candidate_libraries(explicit):
        try:
            library = ctypes.CDLL(path)
        except OSError as error:
            tried.append(f"{path} ({error})")
            continue
        library.nvrtcGetErrorString.restype = ctypes.c_char_p
        return library, path
    raise NvrtcLibraryNotFound(
        "no NVRTC library found (tried: "
        + ("; ".join(tried) or "nothing on sys.path, CUDA_HOME or the linker path")
        + "). Install one with "
        "'pip install nvidia-cuda-nvrtc' or name it with --library or "
        f"${LIBRARY_ENV_VAR}."
    )


def nvrtc_version(library):
    """``(major, minor)`` of the loaded NVRTC."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(library, library.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def _check(library, status, call):
    if status != NVRTC_SUCCESS:
        raise RuntimeError(f"{call} failed: {library.nvrtcGetErrorString(status).decode()}")


def _program_output(library, program, kind):
    size = ctypes.c_size_t()
    _check(
        library,
        getattr(library, f"nvrtcGet{kind}Size")(program, ctypes.byref(size)),
        f"nvrtcGet{kind}Size",
    )
    buffer = ctypes.create_string_buffer(size.value)
    _check(library, getattr(library, f"nvrtcGet{kind}")(program, buffer), f"nvrtcGet{kind}")
    return buffer.raw[: size.value]


def nvrtc_compile(library, source_text, name, options, output):
    """Compile one translation unit.

    Parameters
    ----------
    library : ctypes.CDLL
    source_text : str
    name : str
        The file name NVRTC reports in messages.
    options : sequence of str
    output : {"CUBIN", "PTX"}

    Returns
    -------
    ok : bool
    log : str
        NVRTC's messages (errors and warnings).
    binary : bytes
        The cubin or PTX; empty when the compilation failed.
    """
    program = ctypes.c_void_p()
    _check(
        library,
        library.nvrtcCreateProgram(
            ctypes.byref(program), source_text.encode(), name.encode(), 0, None, None
        ),
        "nvrtcCreateProgram",
    )
    try:
        encoded = [option.encode() for option in options]
        array = (ctypes.c_char_p * len(encoded))(*encoded)
        status = library.nvrtcCompileProgram(program, len(encoded), array)
        log = (
            _program_output(library, program, "ProgramLog")
            .rstrip(b"\0")
            .decode(errors="replace")
            .strip()
        )
        if status != NVRTC_SUCCESS:
            return False, log, b""
        return True, log, _program_output(library, program, output)
    finally:
        library.nvrtcDestroyProgram(ctypes.byref(program))


def ptx_entries(ptx_text):
    """Kernel name -> parameter count, from PTX ``.entry`` directives."""
    return {
        match.group(1): len(_PTX_PARAMETER.findall(match.group(2)))
        for match in _PTX_ENTRY.finditer(ptx_text)
    }


def cupy_options(source, arch):
    """The options CuPy passes to NVRTC for ``source`` on ``arch`` (``sm_XX``)."""
    from gpuboost.backends.cuda.launch import compile_options

    return (
        *compile_options(CUDA_DIR),  # NVCC_OPTIONS, -I, -DGPUBOOST_SOURCE_HASH=...
        f"-I{source.parent}",
        *CUPY_ADDED_OPTIONS,
        f"-arch={arch}",
    )


@dataclass
class NvrtcResult:
    """Outcome of compiling one file for one architecture."""

    source: Path
    arch: str
    options: tuple
    problems: list = field(default_factory=list)
    log: str = ""
    cubin_bytes: int = 0
    kernels: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self):
        return not self.problems


def check_source(library, source, arch):
    """Compile ``source`` for ``arch`` as CuPy would and run every check on it."""
    from gpuboost.backends.emulation import parse_cluster_dims, parse_kernel_signatures

    start = time.monotonic()
    text = source.read_text()
    options = cupy_options(source, arch)
    result = NvrtcResult(source, arch, options)
    ok, log, cubin = nvrtc_compile(library, text, source.name, options, "CUBIN")
    result.log = log
    if not ok:
        result.problems.append("NVRTC compilation to a cubin failed")
    elif _WARNING.search(log):
        result.problems.append("NVRTC printed warnings")
    result.cubin_bytes = len(cubin)
    ptx_options = tuple(
        option if not option.startswith("-arch=") else "-arch=compute_" + arch.split("_", 1)[1]
        for option in options
    )
    ok_ptx, ptx_log, ptx = nvrtc_compile(library, text, source.name, ptx_options, "PTX")
    if not ok_ptx:
        if ok:
            result.problems.append("NVRTC compilation to PTX failed")
            result.log += "\n" + ptx_log
    else:
        result.kernels = ptx_entries(ptx.rstrip(b"\0").decode())
        declared = {
            name: len(parameters) for name, parameters in parse_kernel_signatures(text).items()
        }
        if int(arch.split("_", 1)[1]) < CLUSTER_MIN_ARCH:
            # cluster kernels exist from sm_90 (common.cuh: GPUBOOST_CLUSTERS)
            for name in parse_cluster_dims(text):
                declared.pop(name, None)
        if set(result.kernels) != set(declared):
            result.problems.append(
                f"exported kernels {sorted(result.kernels)} differ from the "
                f'extern "C" __global__ kernels of the source {sorted(declared)}'
            )
        for name in sorted(set(result.kernels) & set(declared)):
            if result.kernels[name] != declared[name]:
                result.problems.append(
                    f"{name}: {result.kernels[name]} parameters in the PTX, "
                    f"{declared[name]} in the source as the emulation parses it"
                )
    result.seconds = time.monotonic() - start
    return result


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(parser, "print only failures and totals")
    parser.add_argument(
        "--library",
        help=f"NVRTC library (default: ${LIBRARY_ENV_VAR}, "
        "pip's nvidia-cuda-nvrtc, $CUDA_HOME/lib64, the linker path)",
    )
    args = parser.parse_args(argv)

    bad_arches = [arch for arch in args.arch if not re.fullmatch(r"sm_\d+a?", arch)]
    if bad_arches:
        print(f"error: architectures must look like sm_80, got {bad_arches}", file=sys.stderr)
        return EXIT_USAGE
    try:
        library, library_path = load_nvrtc(args.library)
        sources = collect_sources(args.paths)
    except (NvrtcLibraryNotFound, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    major, minor = nvrtc_version(library)
    print(f"NVRTC {major}.{minor} from {library_path}")

    results = [check_source(library, source, arch) for source in sources for arch in args.arch]
    for result in results:
        if result.ok and not args.quiet:
            print(
                f"ok      {result.source.name} [{result.arch}] {len(result.kernels)} kernels, "
                f"cubin {result.cubin_bytes} bytes ({result.seconds:.1f} s)"
            )
        elif not result.ok:
            print(f"FAILED  {result.source} [{result.arch}]: {'; '.join(result.problems)}")
            print(f"  options: {' '.join(result.options)}")
            print("\n".join(f"  | {line}" for line in result.log.splitlines()))
    failures = [result for result in results if not result.ok]
    print(
        f"{len(results) - len(failures)} of {len(results)} NVRTC compilations passed "
        f"({len(sources)} files x {len(args.arch)} architectures)"
    )
    return EXIT_COMPILE_FAILED if failures else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
