#!/usr/bin/env python3
"""Compile every CUDA kernel file with nvcc and report resources per kernel.

Each ``.cu`` file is compiled to a cubin for every requested architecture
(default sm_80 and sm_90) with the options the project's kernels must pass::

    nvcc -cubin -arch=<arch> -std=c++17 --fmad=false -Werror all-warnings \\
         -Xptxas -v -I cuda -I <file's folder> file.cu

Warnings are errors. The script exits with status 1 if any compilation fails
(2 for usage errors such as a missing nvcc) and prints, per kernel and
architecture, the registers, static shared memory, spill stores / loads and
stack frame that ptxas reports. It also fails when a kernel without
``__launch_bounds__`` needs more than :data:`MAX_REGISTERS_UNBOUNDED` registers
per thread, since a block of 1,024 threads of it could not be launched (with
``__launch_bounds__`` the compiler keeps the kernel within its bound, and the
CPU emulation refuses launches beyond it). No GPU is needed.

Usage::

    python scripts/cuda_compile_check.py                 # every cuda/*.cu
    python scripts/cuda_compile_check.py tests/backends/emulation/cuda_samples histogram.cu --quiet
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Repository root (this script lives in <root>/scripts).
REPO_ROOT = Path(__file__).resolve().parent.parent
#: Folder of the project's kernels and of common.cuh.
CUDA_DIR = REPO_ROOT / "cuda"
#: Architectures compiled unless --arch is given.
DEFAULT_ARCHES = ("sm_80", "sm_90")
#: Options of every compilation (besides -arch, -I and the file names).
NVCC_OPTIONS = (
    "-cubin",
    "-std=c++17",
    "--fmad=false",
    "-Werror",
    "all-warnings",
    "-Xptxas",
    "-v",
)
#: 32-bit registers one block may use (sm_80 and sm_90).
REGISTERS_PER_BLOCK = 64 * 1024
#: Threads per block the CUDA backend may launch a kernel with when it declares
#: no __launch_bounds__.
MAX_THREADS_PER_BLOCK = 1024
#: Most registers per thread of a kernel without __launch_bounds__.
MAX_REGISTERS_UNBOUNDED = REGISTERS_PER_BLOCK // MAX_THREADS_PER_BLOCK
#: Longest time one nvcc run may take, in seconds.
COMPILE_TIMEOUT_SECONDS = 600
#: Exit statuses.
EXIT_OK, EXIT_COMPILE_FAILED, EXIT_USAGE = 0, 1, 2

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPERTIES = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_REGISTERS = re.compile(r"Used (\d+) registers")
_SHARED = re.compile(r"(\d+) bytes smem")


@dataclass
class KernelResources:
    """What ptxas reports for one kernel on one architecture."""

    kernel: str
    arch: str
    registers: int = 0
    shared_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    stack_bytes: int = 0


@dataclass
class CompileResult:
    """Outcome of compiling one file for one architecture."""

    source: Path
    arch: str
    command: list
    returncode: int
    output: str
    seconds: float
    kernels: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    @property
    def ok(self):
        return self.returncode == 0


def parse_ptxas_output(text):
    """Extract per-kernel resource usage from ``-Xptxas -v`` output.

    Parameters
    ----------
    text : str
        nvcc's combined stdout and stderr.

    Returns
    -------
    list of KernelResources
        One entry per ``Compiling entry function`` line, in order.
    """
    kernels = []
    current = None
    for line in text.splitlines():
        entry = _ENTRY.search(line)
        if entry:
            current = KernelResources(entry.group(1), entry.group(2))
            kernels.append(current)
            continue
        if current is None:
            continue
        properties = _PROPERTIES.search(line)
        if properties:
            current.stack_bytes, current.spill_store_bytes, current.spill_load_bytes = (
                int(value) for value in properties.groups()
            )
        registers = _REGISTERS.search(line)
        if registers:
            current.registers = int(registers.group(1))
            shared = _SHARED.search(line)
            current.shared_bytes = int(shared.group(1)) if shared else 0
    return kernels


def collect_sources(paths):
    """Expand files and folders (their ``*.cu``, not recursive) into .cu files."""
    sources = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            sources.extend(sorted(path.glob("*.cu")))
        elif path.is_file():
            sources.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")
    unique = []
    for source in sources:
        resolved = source.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def compile_source(nvcc, source, arch, output_dir):
    """Compile one file for one architecture; never raises for compile errors."""
    cubin = Path(output_dir) / f"{source.stem}.{arch}.cubin"
    command = [
        nvcc,
        *NVCC_OPTIONS,
        f"-arch={arch}",
        "-I",
        str(CUDA_DIR),
        "-I",
        str(source.parent),
        str(source),
        "-o",
        str(cubin),
    ]
    start = time.monotonic()
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_SECONDS, check=False
        )
        returncode, output = completed.returncode, completed.stdout + completed.stderr
    except subprocess.TimeoutExpired:
        returncode, output = -1, f"nvcc did not finish within {COMPILE_TIMEOUT_SECONDS} s"
    result = CompileResult(source, arch, command, returncode, output, time.monotonic() - start)
    if result.ok:
        result.kernels = parse_ptxas_output(output)
    return result


def launch_bounds(source):
    """Kernel name -> ``__launch_bounds__`` expression, as the CPU emulation reads them."""
    sys.path.insert(0, str(REPO_ROOT))
    try:
        from gpuboost.backends.emulation.launcher import parse_launch_bounds
    finally:
        sys.path.remove(str(REPO_ROOT))
    return parse_launch_bounds(Path(source).read_text())


def register_problems(result):
    """Kernels of a successful compilation that no 1,024-thread block could run."""
    bounded = launch_bounds(result.source)
    return [
        f"{kernel.kernel} [{kernel.arch}]: {kernel.registers} registers per thread without "
        f"__launch_bounds__; a block of {MAX_THREADS_PER_BLOCK} threads needs at most "
        f"{MAX_REGISTERS_UNBOUNDED} (declare __launch_bounds__ and launch smaller blocks)"
        for kernel in result.kernels
        if kernel.kernel not in bounded and kernel.registers > MAX_REGISTERS_UNBOUNDED
    ]


def format_table(results):
    """Resource table of every kernel of the successful compilations."""
    header = (
        "file",
        "kernel",
        "arch",
        "registers",
        "smem bytes",
        "spill st",
        "spill ld",
        "stack bytes",
    )
    rows = []
    for result in results:
        for kernel in result.kernels:
            rows.append(
                (
                    result.source.name,
                    kernel.kernel,
                    kernel.arch,
                    str(kernel.registers),
                    str(kernel.shared_bytes),
                    str(kernel.spill_store_bytes),
                    str(kernel.spill_load_bytes),
                    str(kernel.stack_bytes),
                )
            )
    rows.sort()
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(header, widths))]
    lines.append("  ".join("-" * width for width in widths))
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def add_source_arguments(parser, quiet_help):
    """The arguments both compile checks take: sources, --arch, --quiet."""
    parser.add_argument(
        "paths",
        nargs="*",
        default=[str(CUDA_DIR)],
        help=".cu files or folders of them (default: cuda/)",
    )
    parser.add_argument(
        "--arch",
        nargs="+",
        default=list(DEFAULT_ARCHES),
        help="architectures, sm_XX (default: %(default)s)",
    )
    parser.add_argument("--quiet", action="store_true", help=quiet_help)


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(parser, "print only failures and the resource table")
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="parallel nvcc runs (default: CPU count)",
    )
    parser.add_argument(
        "--nvcc",
        default=os.environ.get("NVCC", "nvcc"),
        help="nvcc executable (default: $NVCC or nvcc)",
    )
    args = parser.parse_args(argv)

    nvcc = shutil.which(args.nvcc)
    if nvcc is None:
        print(f"error: {args.nvcc} not found on PATH", file=sys.stderr)
        return EXIT_USAGE
    try:
        sources = collect_sources(args.paths)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    if not sources:
        print(f"no .cu files in {', '.join(args.paths)}")
        return EXIT_OK

    with tempfile.TemporaryDirectory(prefix="cuda-compile-check-") as output_dir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
            futures = [
                pool.submit(compile_source, nvcc, source, arch, output_dir)
                for source in sources
                for arch in args.arch
            ]
            results = [future.result() for future in futures]

    for result in results:
        if result.ok:
            result.problems = register_problems(result)
            if result.problems:
                result.returncode = EXIT_COMPILE_FAILED
                result.output += "".join(f"\n{problem}" for problem in result.problems)
    failures = [result for result in results if not result.ok]
    for result in results:
        if result.ok and not args.quiet:
            print(f"ok      {result.source.name} [{result.arch}] ({result.seconds:.1f} s)")
        elif not result.ok:
            print(f"FAILED  {result.source} [{result.arch}]\n  {' '.join(result.command)}")
            print("\n".join(f"  | {line}" for line in result.output.rstrip().splitlines()))
    print()
    print(format_table(results))
    print()
    print(
        f"{len(results) - len(failures)} of {len(results)} compilations passed "
        f"({len(sources)} files x {len(args.arch)} architectures)"
    )
    return EXIT_COMPILE_FAILED if failures else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
