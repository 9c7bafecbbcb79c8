"""The sanitizer of the emulation, like NVIDIA compute-sanitizer: which checks are on,
the error they raise, and source lines of the instructions they name.

``GPUBOOST_SANITIZE=memcheck,racecheck,initcheck`` (any subset, comma-separated) makes
every emulated kernel launch run the instrumented flavour of its module
(:data:`gpuboost.backends.emulation.compiler.INSTRUMENTATION_FLAGS`, ``instrument.h``):

* ``memcheck``: every global access of a kernel falls inside an argument's memory (the
  array passed for it), no write goes through memory passed only as ``const T*``, every
  shared access falls inside the block's dynamic shared memory or the kernel's static
  ``__shared__`` variables;
* ``racecheck``: two threads of a block touching one byte between the same pair of
  ``__syncthreads`` (for lanes of one warp: of ``__syncwarp``), at least one writing,
  not both atomically, is a hazard; so is such a pair of threads of different blocks on
  global memory;
* ``initcheck``: arrays made by ``xp.empty`` / ``xp.empty_like`` are filled with
  :data:`POISON_BYTE` and tracked byte by byte (:mod:`.shadow`); a kernel or an array
  operation reading a byte nothing wrote is an error, as is a kernel reading shared
  memory it did not write in the same block.

The first failed check raises :class:`SanitizerError` naming the kernel, the threads and
the source lines (``addr2line`` on the instrumented library's debug lines). Checks are
read from the environment at every launch. With the sanitizer on, a launch runs on one
worker thread, so the checks see a deterministic order of the threads' accesses (they
find hazards from the accesses' order in the program, not from an unlucky timing).
See docs/EMULATION.md, "Sanitizer".
"""

import ctypes
import functools
import os
import re
import shutil
import subprocess

__all__ = [
    "SANITIZE_ENV_VAR",
    "CHECKS",
    "POISON_BYTE",
    "SanitizerError",
    "enabled_checks",
    "check_bits",
    "MEASURE_TRAFFIC_BIT",
    "InstrumentAllocation",
    "InstrumentConfig",
    "symbolize_message",
    "is_sanitizer_message",
]

#: Environment variable naming the checks.
SANITIZE_ENV_VAR = "GPUBOOST_SANITIZE"
#: The checks and their bits in ``InstrumentConfig::checks`` (instrument.h: kCheck*).
CHECKS = {"memcheck": 1 << 0, "racecheck": 1 << 1, "initcheck": 1 << 2}
#: Bit of ``InstrumentConfig::checks`` that turns on the traffic model (kMeasureTraffic).
MEASURE_TRAFFIC_BIT = 1 << 3
#: Byte written over memory nobody initialised: arrays made by ``xp.empty`` under
#: initcheck, and shared memory before every block (cuda_emu.h: kSharedPoisonByte).
#: As float / double it is a NaN, as a signed integer -1.
POISON_BYTE = 0xFF
#: Prefix of the messages of the checks.
_MESSAGE_PREFIX = re.compile(r"^(memcheck|racecheck|initcheck): ")
#: How the C++ side names an instruction: its offset in the library.
_PC_TOKEN = re.compile(r"@pc:0x([0-9a-f]+)")
#: Longest time addr2line may take, in seconds.
ADDR2LINE_TIMEOUT_SECONDS = 60


class SanitizerError(RuntimeError):
    """A check of the sanitizer failed (the message says which, where and what to fix)."""


def enabled_checks():
    """The checks named by ``GPUBOOST_SANITIZE`` (read at every call).

    Returns
    -------
    frozenset of str
        Subset of :data:`CHECKS`; empty when the variable is unset or empty.

    Raises
    ------
    ValueError
        The variable names an unknown check.
    """
    configured = os.environ.get(SANITIZE_ENV_VAR, "")
    names = frozenset(name.strip() for name in configured.split(",") if name.strip())
    unknown = names - CHECKS.keys()
    if unknown:
        raise ValueError(
            f"{SANITIZE_ENV_VAR}={configured!r} names unknown checks {sorted(unknown)}; "
            f"choose among {', '.join(CHECKS)} (comma-separated)"
        )
    return names


def check_bits(checks):
    """``InstrumentConfig::checks`` of a set of check names."""
    bits = 0
    for name in checks:
        bits |= CHECKS[name]
    return bits


class InstrumentAllocation(ctypes.Structure):
    """One range of host memory handed to a kernel (instrument.h: InstrumentAllocation)."""

    _fields_ = [
        ("host_address", ctypes.c_uint64),
        ("bytes", ctypes.c_uint64),
        ("alignment_offset", ctypes.c_uint64),
        ("initialized", ctypes.c_void_p),
        ("label", ctypes.c_char_p),
        ("flags", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
    ]


#: ``InstrumentAllocation.flags``: an argument points to it through a non-const pointer.
ALLOCATION_WRITABLE = 1 << 0


class InstrumentConfig(ctypes.Structure):
    """What an instrumented launch checks and measures (instrument.h: InstrumentConfig)."""

    _fields_ = [
        ("checks", ctypes.c_uint32),
        ("allocation_count", ctypes.c_uint32),
        ("allocations", ctypes.POINTER(InstrumentAllocation)),
        ("argument_count", ctypes.c_uint32),
        ("static_shared_count", ctypes.c_uint32),
        ("argument_allocation", ctypes.POINTER(ctypes.c_int32)),
        ("argument_offset", ctypes.POINTER(ctypes.c_uint64)),
        ("static_shared_allowed", ctypes.POINTER(ctypes.c_uint8)),
        ("static_shared_labels", ctypes.POINTER(ctypes.c_char_p)),
    ]


def is_sanitizer_message(message):
    """Whether a launch failure message comes from a check of the sanitizer."""
    return _MESSAGE_PREFIX.match(message) is not None


@functools.lru_cache(maxsize=4096)
def _source_of(library_path, offset):
    executable = shutil.which("addr2line")
    if executable is None:
        return f"0x{offset:x} in {os.path.basename(library_path)} (addr2line not found)"
    try:
        result = subprocess.run(
            [executable, "-e", str(library_path), "-f", "-i", "-p", "-C", f"0x{offset:x}"],
            capture_output=True,
            text=True,
            timeout=ADDR2LINE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return f"0x{offset:x}"
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    if not lines or "??" in lines[0]:
        return f"0x{offset:x}"
    return " ".join(lines)


def symbolize_message(message, library_path):
    """``message`` with every ``@pc:0x<offset>`` replaced by ``function at file:line``
    (with the functions it was inlined into) of the instrumented library."""
    path = str(library_path)
    return _PC_TOKEN.sub(lambda match: _source_of(path, int(match.group(1), 16)), message)
