"""Launch CUDA kernels on the CPU with CuPy's calling convention.

:class:`EmulatedModule` stands in for ``cupy.RawModule`` and
:class:`EmulatedKernel` for ``cupy.RawKernel``::

    module = EmulatedModule(path="cuda/histogram.cu", options=("-Icuda",))
    kernel = module.get_function("build_histogram")
    kernel((n_blocks,), (256,), (bins, np.int32(n_rows), histogram), shared_mem=4096)

Every launch checks what a GPU would silently misread: the number of
arguments, each argument against the kernel's C signature (arrays for
pointers with exactly the pointee's dtype, NumPy scalars of exactly the
parameter's type, never Python ``int`` / ``float``), and the launch limits of
the emulated device (its profile: ``GPUBOOST_EMULATE_DEVICE``, device_profiles.py).
Failures inside the kernel (``assert``, ``__trap``, misuse of warp intrinsics) raise
``RuntimeError``.

How a launch runs: the module's source is compiled once by g++ (see
:mod:`gpuboost.backends.emulation.compiler`) together with a generated entry point per
kernel, called through ctypes (the GIL is released meanwhile). A launch runs
on a few OS worker threads (one per core, ``GPUBOOST_EMULATION_WORKERS``),
each owning some warps of the block whose threads are fibers switched at
``__syncthreads`` and warp intrinsics; blocks run one after another, and
launches of one module are serialised because static ``__shared__`` variables
exist once per module. Before each block, shared memory is filled with
``0xff`` bytes so reads of never-written shared memory are visible. See
docs/EMULATION.md.

With ``GPUBOOST_SANITIZE`` set (:mod:`gpuboost.backends.emulation.sanitizer`), or
inside :func:`gpuboost.backends.emulation.traffic.record_traffic`, a launch runs the
module's instrumented flavour instead: its pointer arguments are copied into an arena
of device memory with gaps around every array (and copied back), every access of the
kernel is checked and, for the traffic model, counted (``instrument.h``).
"""

import ctypes
import os
import re
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .compiler import compile_shared_library
from .device_array import DeviceArray, check_device, record_kernel_launch
from .device_profiles import current_profile, max_active_clusters
from .sanitizer import (
    ALLOCATION_WRITABLE,
    MEASURE_TRAFFIC_BIT,
    InstrumentAllocation,
    InstrumentConfig,
    SanitizerError,
    check_bits,
    enabled_checks,
    is_sanitizer_message,
    symbolize_message,
)
from .shadow import initialized_bytes, root_of, store_initialized_bytes
from .traffic import recording

__all__ = [
    "EmulatedModule",
    "EmulatedKernel",
    "KernelParameter",
    "parse_kernel_signatures",
    "parse_launch_bounds",
    "parse_cluster_dims",
    "MAX_CLUSTER_BLOCKS",
    "MAX_THREADS_PER_BLOCK",
    "MAX_BLOCK_DIMS",
    "MAX_GRID_DIMS",
    "MAX_STATIC_SHARED_BYTES",
    "DEFAULT_MAX_DYNAMIC_SHARED_BYTES",
]

# ---------------------------------------------------------------------------
# Emulated device limits: those of every compute capability from 8.0 here; the shared
# memory a block may opt into and the architecture are the emulated profile's
# (device_profiles.current_profile(), GPUBOOST_EMULATE_DEVICE).
# ---------------------------------------------------------------------------
#: Most threads in one block.
MAX_THREADS_PER_BLOCK = 1024
#: Largest blockDim.x, .y, .z.
MAX_BLOCK_DIMS = (1024, 1024, 64)
#: Largest gridDim.x, .y, .z.
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)
#: Most static ``__shared__`` bytes of one kernel.
MAX_STATIC_SHARED_BYTES = 48 * 1024
#: Static plus dynamic shared bytes allowed unless the kernel opts in through
#: ``max_dynamic_shared_size_bytes`` (cudaFuncAttributeMaxDynamicSharedMemorySize).
DEFAULT_MAX_DYNAMIC_SHARED_BYTES = 48 * 1024

#: Environment variable: seconds a thread may wait at a barrier or warp
#: intrinsic before the launch fails as deadlocked (0 disables the limit).
TIMEOUT_ENV_VAR = "GPUBOOST_EMULATION_TIMEOUT"
DEFAULT_TIMEOUT_SECONDS = 60.0
#: Environment variable: OS worker threads per launch (default: one per core).
WORKERS_ENV_VAR = "GPUBOOST_EMULATION_WORKERS"
#: Upper bound for ``GPUBOOST_EMULATION_WORKERS`` (a block has at most 32 warps).
MAX_WORKERS = MAX_THREADS_PER_BLOCK // 32
#: Size of the buffer receiving the C++ side's error message.
ERROR_BUFFER_BYTES = 2048
#: Status codes of the generated entry points (see cuda_emu.h).
_LAUNCH_OK = 0
#: Position of the worker count among a launch entry point's arguments.
_WORKERS_ARGUMENT = 5
_LAUNCH_KERNEL_FAILED = 1

_ENTRY_LAUNCH = "gpuboost_emu_launch__"
_ENTRY_LAUNCH_INSTRUMENTED = "gpuboost_emu_launch_instrumented__"
_ENTRY_COUNTER_NAMES = "gpuboost_emu_traffic_counter_names"
#: Alignment of device allocations modeled by the instrumented flavour (instrument.h:
#: kArenaAlignment); an argument keeps its offset modulo this from the start of its array.
ARENA_ALIGNMENT = 256
_ENTRY_SIGNATURE = "gpuboost_emu_signature__"
_ENTRY_REGISTER_SHARED = "gpuboost_emu_register_static_shared"
_ENTRY_MAX_THREADS = "gpuboost_emu_max_threads__"
_ENTRY_CLUSTER_BLOCKS = "gpuboost_emu_cluster_blocks__"
#: Most blocks of a thread-block cluster (the portable size on sm_90; cuda_emu.h:
#: kMaxClusterBlocks).
MAX_CLUSTER_BLOCKS = 8
_ANONYMOUS_SOURCE_NAME = "<EmulatedModule code>"
_ENTRY_POINTS_SOURCE_NAME = "<gpuboost emulation entry points>"


# ---------------------------------------------------------------------------
# Parsing kernel signatures from the source text (no preprocessor).
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelParameter:
    """One parameter of a kernel's C signature.

    Attributes
    ----------
    name : str
        The parameter's name in the source (``argN`` when it has none).
    c_type : str
        Its type as written, whitespace normalised (``"const int64_t* __restrict__"``).
    """

    name: str
    c_type: str


_STRING_OR_COMMENT = re.compile(
    r'("(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')|(//[^\n]*|/\*.*?\*/)', re.DOTALL
)
_PREPROCESSOR_LINE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.MULTILINE)
_EXTERN_C_BLOCK = re.compile(r'\bextern\s*"C"\s*\{')
_EXTERN_C = re.compile(r'\bextern\s*"C"')
_GLOBAL = re.compile(r"\b__global__\b")
_KERNEL_HEAD = re.compile(
    r"__global__((?:\s*(?:(?:__launch_bounds__|__cluster_dims__)\s*\([^()]*\)|[A-Za-z_]\w*))*?)"
    r"\s*(?!__launch_bounds__\b|__cluster_dims__\b)([A-Za-z_]\w*)\s*\("
)
_TYPE_WORDS = frozenset(
    "void bool char short int long float double signed unsigned const volatile "
    "__restrict__ __restrict restrict".split()
)


def _strip_comments_and_directives(source):
    def replace(match):
        if match.group(1) is not None:
            return match.group(1)
        return re.sub(r"[^\n]", " ", match.group(2))

    without_comments = _STRING_OR_COMMENT.sub(replace, source)
    return _PREPROCESSOR_LINE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), without_comments)


def _matching_close(text, open_index, opening, closing):
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] == opening:
            depth += 1
        elif text[index] == closing:
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"unbalanced {opening}{closing} in kernel source")


def _extern_c_blocks(text):
    blocks = []
    for match in _EXTERN_C_BLOCK.finditer(text):
        brace = match.end() - 1
        blocks.append((brace, _matching_close(text, brace, "{", "}")))
    return blocks


def _split_top_level(text, separator=","):
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _normalise_type(text):
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s*\*\s*", "* ", text).strip()
    return re.sub(r"\*\s+(?=\*)", "*", text)


def _parse_parameter(text, position):
    text = _split_top_level(text, "=")[0].strip()  # drop a default argument
    is_array = False
    array = re.search(r"\[[^\]]*\]\s*$", text)
    if array:
        is_array = True
        text = text[: array.start()].rstrip()
    words = re.findall(r"[A-Za-z_]\w*", text)
    name = None
    if len(words) >= 2 and words[-1] not in _TYPE_WORDS and re.search(r"[A-Za-z_]\w*\s*$", text):
        name = words[-1]
        text = text[: text.rstrip().rfind(name)]
    c_type = _normalise_type(text) + ("*" if is_array else "")
    return KernelParameter(name or f"arg{position}", _normalise_type(c_type))


def parse_kernel_signatures(source):
    """Find the ``extern "C" __global__`` kernels of a CUDA source.

    The text is parsed without running the preprocessor: comments and
    preprocessor lines are ignored, so kernels must be written out (not
    generated by macros) and must not sit in disabled ``#if`` branches.

    Parameters
    ----------
    source : str
        CUDA C++ source text.

    Returns
    -------
    dict of str to list of KernelParameter
        Kernel name to its parameters, in source order. Kernels without C
        linkage (templates, plain C++ kernels) are left out, since neither
        CuPy nor the emulator can look them up by name.
    """
    text = _strip_comments_and_directives(source)
    blocks = _extern_c_blocks(text)
    kernels = {}
    for match in _GLOBAL.finditer(text):
        start = match.start()
        boundary = max(text.rfind(mark, 0, start) for mark in ";{}")
        prefix = text[boundary + 1 : start]
        in_block = any(open_brace < start < close for open_brace, close in blocks)
        if not (_EXTERN_C.search(prefix) or in_block) or re.search(r"\btemplate\b", prefix):
            continue
        head = _KERNEL_HEAD.match(text, start)
        if head is None or "void" not in re.findall(r"[A-Za-z_]\w*", head.group(1)):
            continue
        name = head.group(2)
        open_paren = head.end() - 1
        close_paren = _matching_close(text, open_paren, "(", ")")
        inner = text[open_paren + 1 : close_paren].strip()
        if inner in ("", "void"):
            parameters = []
        else:
            parameters = [
                _parse_parameter(part, position)
                for position, part in enumerate(_split_top_level(inner))
            ]
        kernels.setdefault(name, parameters)
    return kernels


_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\(")
_CLUSTER_DIMS = re.compile(r"__cluster_dims__\s*\(")


def _kernel_attribute_arguments(source, attribute):
    """Kernel name to the argument expressions of ``attribute(...)`` in its head."""
    text = _strip_comments_and_directives(source)
    kernels = parse_kernel_signatures(source)
    found_arguments = {}
    for match in _GLOBAL.finditer(text):
        head = _KERNEL_HEAD.match(text, match.start())
        if head is None or head.group(2) not in kernels:
            continue
        found = attribute.search(head.group(1))
        if found is None:
            continue
        open_paren = found.end() - 1
        inner = head.group(1)[open_paren + 1 : _matching_close(head.group(1), open_paren, "(", ")")]
        arguments = [part.strip() for part in _split_top_level(inner)]
        found_arguments.setdefault(head.group(2), arguments)
    return found_arguments


def parse_cluster_dims(source):
    """The ``__cluster_dims__`` of the ``extern "C"`` kernels of a CUDA source.

    Parameters
    ----------
    source : str
        CUDA C++ source text (parsed as :func:`parse_kernel_signatures` does).

    Returns
    -------
    dict of str to tuple of str
        Kernel name to the C expressions of its cluster's x, y and z sizes (``"1"``
        for those not written), for the kernels that declare one.
    """
    dims = {}
    for name, arguments in _kernel_attribute_arguments(source, _CLUSTER_DIMS).items():
        dims[name] = tuple(arguments[:3]) + ("1",) * (3 - len(arguments[:3]))
    return dims


def parse_launch_bounds(source):
    """The ``__launch_bounds__`` of the ``extern "C"`` kernels of a CUDA source.

    Parameters
    ----------
    source : str
        CUDA C++ source text (parsed as :func:`parse_kernel_signatures` does).

    Returns
    -------
    dict of str to str
        Kernel name to the C expression of its maximum threads per block (the
        first argument of ``__launch_bounds__``), for the kernels that declare one.
    """
    return {
        name: arguments[0]
        for name, arguments in _kernel_attribute_arguments(source, _LAUNCH_BOUNDS).items()
    }


# ---------------------------------------------------------------------------
# Parameter types as the compiler sees them (codes from cuda_emu.h).
# ---------------------------------------------------------------------------
_KIND_TO_NUMPY = {"i": "int", "u": "uint", "f": "float", "b": "bool"}
_C_SPELLING = {
    ("i", 8): "int8_t",
    ("i", 16): "int16_t",
    ("i", 32): "int32_t",
    ("i", 64): "int64_t",
    ("u", 8): "uint8_t",
    ("u", 16): "uint16_t",
    ("u", 32): "uint32_t",
    ("u", 64): "uint64_t",
    ("f", 32): "float",
    ("f", 64): "double",
    ("b", 8): "bool",
    ("v", 0): "void",
}
_SIGNATURE_CODE = re.compile(
    r"^(?:(?P<form>[SP])(?P<kind>[iufbv])(?P<bits>\d+)(?P<const>c?)|X\d+)$"
)


@dataclass(frozen=True)
class _ParameterType:
    is_pointer: bool
    dtype: object  # numpy dtype; None for void* (any array) or unsupported types
    is_const: bool
    supported: bool
    spelling: str  # C spelling derived from the code, for messages


def _parameter_type(code):
    match = _SIGNATURE_CODE.match(code)
    if match is None or match.group("form") is None:
        return _ParameterType(False, None, False, False, f"<unsupported type {code}>")
    kind, bits = match.group("kind"), int(match.group("bits"))
    is_pointer = match.group("form") == "P"
    is_const = match.group("const") == "c"
    spelling = _C_SPELLING.get((kind, bits))
    dtype = None
    supported = spelling is not None
    if kind in _KIND_TO_NUMPY and supported:
        dtype = np.dtype("bool" if kind == "b" else f"{_KIND_TO_NUMPY[kind]}{bits}")
    if spelling is None:
        spelling = f"<{bits}-bit {kind}>"
    if is_pointer:
        spelling = ("const " if is_const else "") + spelling + "*"
    return _ParameterType(is_pointer, dtype, is_const, supported, spelling)


def _numpy_scalar_hint(dtype):
    return "np.bool_" if dtype == np.dtype(bool) else f"np.{dtype.name}"


# ---------------------------------------------------------------------------
# Static __shared__ variables: function-scope statics in the ELF symbol table.
# ---------------------------------------------------------------------------
_ELF_MAGIC = b"\x7fELF"
_ELF_CLASS_64 = 2
_ELF_LITTLE_ENDIAN = 1
_SHT_SYMTAB = 2
_SHF_WRITE = 0x1
_SHF_ALLOC = 0x2
_SHF_TLS = 0x400
_STT_OBJECT = 1
_SHN_LORESERVE = 0xFF00
_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
#: Mangled-name prefix of function-scope static variables.
_LOCAL_STATIC_PREFIX = "_ZZ"
#: Function-scope statics of the runtime (std, the emulation header), not __shared__.
_RUNTIME_STATIC_PREFIXES = (
    "_ZZSt",
    "_ZZNSt",
    "_ZZNKSt",
    "_ZZN9__gnu_cxx",
    "_ZZNK9__gnu_cxx",
    "_ZZN10__cxxabiv1",
    "_ZZN12gpuboost_emu",
    "_ZZNK12gpuboost_emu",
)


@dataclass(frozen=True)
class _StaticShared:
    symbol: str
    offset: int
    size: int


def _static_shared_variables(library_path):
    """Function-scope static variables of a library built by the emulator.

    Under emulation ``__shared__`` means ``static``; CUDA code keeps no other
    function-scope statics, so these symbols are the static shared memory.
    """
    data = Path(library_path).read_bytes()
    if data[:4] != _ELF_MAGIC or data[4] != _ELF_CLASS_64 or data[5] != _ELF_LITTLE_ENDIAN:
        raise RuntimeError(f"{library_path} is not a little-endian 64-bit ELF file")
    (section_offset,) = struct.unpack_from("<Q", data, 0x28)
    (
        section_size,
        section_count,
    ) = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        _SECTION_HEADER.unpack_from(data, section_offset + index * section_size)
        for index in range(section_count)
    ]
    variables = []
    for header in sections:
        if header[1] != _SHT_SYMTAB:
            continue
        strings = sections[header[6]]
        string_table = data[strings[4] : strings[4] + strings[5]]
        for entry in range(header[5] // _SYMBOL.size):
            name_offset, info, _, section_index, value, size = _SYMBOL.unpack_from(
                data, header[4] + entry * _SYMBOL.size
            )
            if info & 0xF != _STT_OBJECT or size == 0 or not 0 < section_index < _SHN_LORESERVE:
                continue
            flags = sections[section_index][2]
            if flags & (_SHF_WRITE | _SHF_ALLOC) != (_SHF_WRITE | _SHF_ALLOC) or flags & _SHF_TLS:
                continue
            end = string_table.index(b"\0", name_offset)
            name = string_table[name_offset:end].decode("ascii", "replace")
            if name.startswith(_LOCAL_STATIC_PREFIX) and not name.startswith(
                _RUNTIME_STATIC_PREFIXES
            ):
                variables.append(_StaticShared(name, value, size))
    return variables


def _owned_by(symbol, kernel_name):
    return symbol.startswith(f"{_LOCAL_STATIC_PREFIX}{len(kernel_name)}{kernel_name}E")


def _demangled(symbols):
    """Readable names of C++ symbols (``c++filt``; the symbols themselves without it)."""
    executable = shutil.which("c++filt")
    if executable is None or not symbols:
        return list(symbols)
    try:
        result = subprocess.run(
            [executable], input="\n".join(symbols), capture_output=True, text=True, check=False
        )
    except OSError:
        return list(symbols)
    names = result.stdout.splitlines()
    return names if len(names) == len(symbols) else list(symbols)


# ---------------------------------------------------------------------------
# Modules and kernels.
# ---------------------------------------------------------------------------
def emulation_timeout_seconds():
    """Seconds a thread may wait at a barrier before the launch fails (0: no limit)."""
    configured = os.environ.get(TIMEOUT_ENV_VAR)
    if not configured:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        value = float(configured)
    except ValueError as error:
        raise ValueError(f"{TIMEOUT_ENV_VAR}={configured!r} is not a number") from error
    return max(value, 0.0)


def emulation_worker_count():
    """OS threads per launch from ``GPUBOOST_EMULATION_WORKERS`` (0: one per core)."""
    configured = os.environ.get(WORKERS_ENV_VAR)
    if not configured:
        return 0
    try:
        value = int(configured)
    except ValueError as error:
        raise ValueError(f"{WORKERS_ENV_VAR}={configured!r} is not an integer") from error
    return min(max(value, 0), MAX_WORKERS)


def _split_options(options):
    """Keep ``-D`` and ``-I`` (either spelling) of nvcc / NVRTC options."""
    if isinstance(options, str):
        raise TypeError("options must be a tuple of str, not a str")
    defines, include_dirs = [], []
    remaining = iter(options)
    for option in remaining:
        if not isinstance(option, str):
            raise TypeError(f"options must be str, got {option!r}")
        for short, long_form, target in (
            ("-D", "--define-macro", defines),
            ("-I", "--include-path", include_dirs),
        ):
            if option in (short, long_form):
                target.append(next(remaining, ""))
                break
            if option.startswith(long_form + "="):
                target.append(option[len(long_form) + 1 :])
                break
            if option.startswith(short):
                target.append(option[len(short) :])
                break
    include_dirs = [str(Path(folder).expanduser().resolve()) for folder in include_dirs if folder]
    return [definition for definition in defines if definition], include_dirs


def _line_directive(name):
    escaped = str(name).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{escaped}"\n'


class EmulatedModule:
    """CPU stand-in for ``cupy.RawModule``.

    Parameters
    ----------
    code : str, optional
        CUDA source text.
    path : str or os.PathLike, optional
        A ``.cu`` source file (unlike CuPy, not a cubin). Exactly one of
        ``code`` and ``path`` is required.
    options : tuple of str
        nvcc / NVRTC options. ``-D`` and ``-I`` are honoured (relative include
        folders are taken from the current directory); others such as
        ``--fmad=false`` or ``-std=c++17`` are accepted and ignored (the
        emulation always builds C++20 with ``-ffp-contract=off``).
    name_expressions : sequence of str, optional
        Only ``None`` or empty: templated kernels are not supported.
    backend, translate_cucomplex, enable_cooperative_groups, jitify
        Accepted for ``cupy.RawModule`` compatibility; the last three must be false.
    device_arrays_only : bool
        Pointer arguments must be emulated device arrays
        (:class:`gpuboost.backends.emulation.device_array.DeviceArray`), as CuPy's kernels
        refuse host NumPy arrays; the CUDA backend's modules set this. Otherwise
        NumPy arrays are accepted too (the emulation's own tests).

    Notes
    -----
    The source is compiled on the first :meth:`get_function` call. The folder
    of ``path``, then the ``-I`` folders, then the kernel folder ``cuda/`` are
    searched for ``#include "..."``.
    """

    def __init__(
        self,
        code=None,
        path=None,
        options=(),
        name_expressions=None,
        *,
        backend="nvrtc",
        translate_cucomplex=False,
        enable_cooperative_groups=False,
        jitify=False,
        device_arrays_only=False,
    ):
        if (code is None) == (path is None):
            raise TypeError("EmulatedModule needs exactly one of code= and path=")
        if name_expressions:
            raise NotImplementedError(
                "name_expressions (templated kernels) are not supported by the emulation; "
                'declare kernels extern "C"'
            )
        if translate_cucomplex or enable_cooperative_groups or jitify:
            raise NotImplementedError(
                "translate_cucomplex, enable_cooperative_groups and jitify are not emulated"
            )
        del backend  # NVRTC or nvcc: irrelevant on the CPU
        self.options = tuple(options)
        self.device_arrays_only = bool(device_arrays_only)
        self._defines, option_include_dirs = _split_options(self.options)
        source_dirs = []
        if path is not None:
            path = Path(path).expanduser().resolve()
            if path.suffix in (".cubin", ".ptx", ".fatbin"):
                raise ValueError(f"{path.name}: the emulation runs CUDA sources; pass the .cu file")
            code = path.read_text(encoding="utf-8")
            source_dirs.append(str(path.parent))
        self.code = code
        self.path = path
        self._display_name = str(path) if path is not None else _ANONYMOUS_SOURCE_NAME
        # As for CuPy's RawModule, headers are found next to the source file and in the
        # folders of the -I options (the CUDA backend passes the kernel folder).
        self._include_dirs = source_dirs + option_include_dirs
        self._signatures = parse_kernel_signatures(code)
        self._launch_bounds = parse_launch_bounds(code)
        self._cluster_dims = parse_cluster_dims(code)
        self._libraries = {}  # instrumented (bool) -> ctypes.CDLL
        self._library_paths = {}
        self._static_shared_by_flavour = {}
        self._static_shared = ()
        self._kernels = {}
        self._lock = threading.Lock()

    @property
    def kernel_names(self):
        """Names of the ``extern "C"`` kernels found in the source, sorted."""
        return sorted(self._signatures)

    def _translation_unit(self):
        entry_points = "".join(
            f"GPUBOOST_EMU_DEFINE_ENTRY_POINTS({name})\n" for name in self._signatures
        )
        entry_points += "".join(
            f"GPUBOOST_EMU_EXPORT long long {_ENTRY_MAX_THREADS}{name}() "
            f"{{ return (long long)({expression}); }}\n"
            for name, expression in self._launch_bounds.items()
        )
        entry_points += "".join(
            f"GPUBOOST_EMU_EXPORT long long {_ENTRY_CLUSTER_BLOCKS}{name}() {{ "
            f'static_assert(({y}) == 1 && ({z}) == 1, "the emulation runs clusters along x '
            f'only"); return (long long)({x}); }}\n'
            for name, (x, y, z) in self._cluster_dims.items()
        )
        return (
            _line_directive(self._display_name)
            + self.code
            + "\n"
            + _line_directive(_ENTRY_POINTS_SOURCE_NAME)
            + entry_points
        )

    def _load(self, instrumented=False):
        """The compiled library of a flavour (plain or instrumented), built on first use."""
        with self._lock:
            library = self._libraries.get(instrumented)
            if library is not None:
                return library
            library_path = compile_shared_library(
                self._translation_unit(),
                include_dirs=self._include_dirs,
                defines=self._defines,
                source_name=Path(self._display_name).name if self.path else "module.cu",
                instrumented=instrumented,
            )
            library = ctypes.CDLL(str(library_path))
            variables = _static_shared_variables(library_path)
            offsets = (ctypes.c_uint64 * max(len(variables), 1))(*[v.offset for v in variables])
            sizes = (ctypes.c_uint64 * max(len(variables), 1))(*[v.size for v in variables])
            register = getattr(library, _ENTRY_REGISTER_SHARED)
            register.restype = ctypes.c_int
            register.argtypes = [ctypes.POINTER(ctypes.c_uint64)] * 2 + [ctypes.c_uint64]
            if register(offsets, sizes, len(variables)) != 0:
                raise RuntimeError("emulation: could not register static shared memory")
            if not self._libraries:  # sizes are the same in both flavours
                self._static_shared = tuple(variables)
            self._static_shared_by_flavour[instrumented] = tuple(variables)
            self._library_paths[instrumented] = library_path
            self._libraries[instrumented] = library
            return library

    def _static_shared_table(self, kernel_name):
        """For the instrumented library: per registered static ``__shared__`` variable,
        whether ``kernel_name`` may use it (its own, or a device helper's), and labels."""
        variables = self._static_shared_by_flavour[True]
        names = _demangled([variable.symbol for variable in variables])
        allowed, labels = [], []
        for variable, name in zip(variables, names):
            owners = [kernel for kernel in self._signatures if _owned_by(variable.symbol, kernel)]
            allowed.append(not owners or kernel_name in owners)
            labels.append(f"static __shared__ {name}".encode())
        return allowed, labels

    def _static_shared_bytes(self, kernel_name):
        """Static shared bytes of a kernel: its own ``__shared__`` variables plus
        those of every device helper (the emulator cannot tell which helpers it
        calls, so this may overestimate)."""
        total = 0
        for variable in self._static_shared:
            owners = [name for name in self._signatures if _owned_by(variable.symbol, name)]
            if not owners or kernel_name in owners:
                total += variable.size
        return total

    def get_function(self, name):
        """Return the kernel ``name`` (compiling the module on first use).

        Parameters
        ----------
        name : str
            Name of an ``extern "C" __global__`` function of the source.

        Returns
        -------
        EmulatedKernel

        Raises
        ------
        LookupError
            If the source has no such ``extern "C"`` kernel.
        gpuboost.backends.emulation.compiler.EmulationCompileError
            If g++ rejects the source.
        """
        kernel = self._kernels.get(name)
        if kernel is not None:
            return kernel
        if name not in self._signatures:
            raise LookupError(
                f'no extern "C" __global__ kernel named {name!r} in {self._display_name}; '
                f"found {self.kernel_names}"
            )
        library = self._load(instrumented=bool(enabled_checks()) or recording())
        kernel = EmulatedKernel(self, name, library)
        self._kernels[name] = kernel
        return kernel


class EmulatedKernel:
    """CPU stand-in for ``cupy.RawKernel``; obtain one from :meth:`EmulatedModule.get_function`.

    Attributes
    ----------
    name : str
        The kernel's name.
    parameters : tuple of KernelParameter
        Its parameters, as written in the source.
    shared_size_bytes : int
        Static shared memory of the kernel: its own ``__shared__`` variables plus
        those of every device helper of the module (an upper bound).
    max_threads_per_block : int
        The most threads a block of this kernel may have: the kernel's
        ``__launch_bounds__`` if it declares one, else :data:`MAX_THREADS_PER_BLOCK`
        (as ``cupy.RawKernel.max_threads_per_block``). A larger launch fails, as
        on a GPU.
    """

    def __init__(self, module, name, library):
        self.name = name
        self.module = module
        self._entries = {}  # instrumented (bool) -> the launch function of that flavour
        signature = getattr(library, _ENTRY_SIGNATURE + name)
        signature.restype = ctypes.c_char_p
        codes = signature().decode("ascii")
        self._types = tuple(_parameter_type(code) for code in codes.split(",") if code)
        parsed = module._signatures[name]
        if len(parsed) == len(self._types):
            self.parameters = tuple(parsed)
        else:  # the text parse missed something (macros): trust the compiler
            self.parameters = tuple(
                KernelParameter(f"arg{position}", kind.spelling)
                for position, kind in enumerate(self._types)
            )
        self.shared_size_bytes = module._static_shared_bytes(name)
        self.max_threads_per_block = MAX_THREADS_PER_BLOCK
        if name in module._launch_bounds:
            bound = getattr(library, _ENTRY_MAX_THREADS + name)
            bound.restype = ctypes.c_longlong
            self.max_threads_per_block = int(bound())
            if not 1 <= self.max_threads_per_block <= MAX_THREADS_PER_BLOCK:
                raise ValueError(
                    f"kernel {name!r}: __launch_bounds__({module._launch_bounds[name]}) = "
                    f"{self.max_threads_per_block}, outside 1..{MAX_THREADS_PER_BLOCK}"
                )
        self._max_dynamic_shared_size_bytes = max(
            DEFAULT_MAX_DYNAMIC_SHARED_BYTES - self.shared_size_bytes, 0
        )
        #: Blocks per thread-block cluster (``__cluster_dims__``; 1 without).
        self.cluster_blocks = 1
        if name in module._cluster_dims:
            cluster = getattr(library, _ENTRY_CLUSTER_BLOCKS + name)
            cluster.restype = ctypes.c_longlong
            self.cluster_blocks = int(cluster())
            if not 1 <= self.cluster_blocks <= MAX_CLUSTER_BLOCKS:
                raise ValueError(
                    f"kernel {name!r}: __cluster_dims__({module._cluster_dims[name][0]}, ...) = "
                    f"{self.cluster_blocks} blocks, outside 1..{MAX_CLUSTER_BLOCKS} (the "
                    "portable cluster size)"
                )
            if self.cluster_blocks > 1 and self.shared_size_bytes != 0:
                raise ValueError(
                    f"kernel {name!r} runs in clusters of {self.cluster_blocks} blocks and "
                    f"declares {self.shared_size_bytes} bytes of static __shared__ memory; the "
                    "emulation keeps one copy of a static variable for all blocks of a cluster, "
                    "so a cluster kernel must keep its shared memory in `extern __shared__`"
                )

    def __repr__(self):
        parameters = ", ".join(f"{p.c_type} {p.name}" for p in self.parameters)
        return f"<EmulatedKernel {self.name}({parameters})>"

    def _entry(self, instrumented):
        """The launch entry point of the plain or the instrumented flavour."""
        entry = self._entries.get(instrumented)
        if entry is not None:
            return entry
        library = self.module._load(instrumented)
        prefix = _ENTRY_LAUNCH_INSTRUMENTED if instrumented else _ENTRY_LAUNCH
        entry = getattr(library, prefix + self.name)
        entry.restype = ctypes.c_int
        entry.argtypes = [
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.c_uint64,
            ctypes.c_uint32,
            ctypes.c_double,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_char_p,
            ctypes.c_uint64,
        ]
        if instrumented:
            entry.argtypes += [ctypes.POINTER(InstrumentConfig), ctypes.POINTER(ctypes.c_uint64)]
            names = getattr(library, _ENTRY_COUNTER_NAMES)
            names.restype = ctypes.c_char_p
            self._counter_names = tuple(n for n in names().decode().split(",") if n)
        self._entries[instrumented] = entry
        return entry

    def max_active_clusters(self, threads, shared_mem):
        """Clusters of this kernel the emulated device can hold at once, launched with
        ``threads`` threads per block and ``shared_mem`` dynamic shared bytes (the
        driver's ``cuOccupancyMaxActiveClusters``; the profile's model,
        :func:`gpuboost.backends.emulation.device_profiles.max_active_clusters`).

        Raises
        ------
        ValueError
            For a kernel without ``__cluster_dims__`` (the driver's query needs one).
        """
        if self.cluster_blocks <= 1:
            raise ValueError(f"kernel {self.name!r} has no __cluster_dims__")
        shared = int(shared_mem) + self.shared_size_bytes
        return max_active_clusters(current_profile(), self.cluster_blocks, threads, shared)

    @property
    def max_dynamic_shared_size_bytes(self):
        """Most dynamic shared bytes a launch may request (settable, as in CuPy).

        Raising it above the default ``48 KiB - shared_size_bytes`` is the
        opt-in a GPU requires; the ceiling is
        the emulated profile's opt-in limit minus ``shared_size_bytes``.
        """
        return self._max_dynamic_shared_size_bytes

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"max_dynamic_shared_size_bytes must be an int, got {value!r}")
        profile = current_profile()
        ceiling = profile.shared_per_block_optin - self.shared_size_bytes
        if not 0 <= value <= ceiling:
            raise ValueError(
                f"kernel {self.name!r}: max_dynamic_shared_size_bytes={value} outside "
                f"[0, {ceiling}] ({profile.key}, {profile.arch}: "
                f"{profile.shared_per_block_optin} bytes per block minus "
                f"{self.shared_size_bytes} static)"
            )
        self._max_dynamic_shared_size_bytes = int(value)

    # -- checks -------------------------------------------------------------
    def _dims(self, value, what, limits):
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            dims = (value,)
        elif isinstance(value, (tuple, list)):
            dims = tuple(value)
        else:
            raise TypeError(
                f"kernel {self.name!r}: {what} must be an int or a tuple of up to 3 ints, "
                f"got {value!r}"
            )
        if not 1 <= len(dims) <= 3 or any(
            isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) for d in dims
        ):
            raise TypeError(
                f"kernel {self.name!r}: {what} must be an int or a tuple of up to 3 ints, "
                f"got {value!r}"
            )
        dims = tuple(int(d) for d in dims) + (1,) * (3 - len(dims))
        for axis, (size, limit) in enumerate(zip(dims, limits)):
            if not 1 <= size <= limit:
                raise ValueError(
                    f"kernel {self.name!r}: {what} dimension {'xyz'[axis]} = {size} is outside "
                    f"[1, {limit}]"
                )
        return dims

    def _check_shared(self, shared_mem):
        if isinstance(shared_mem, bool) or not isinstance(shared_mem, (int, np.integer)):
            raise TypeError(f"kernel {self.name!r}: shared_mem must be an int, got {shared_mem!r}")
        shared_mem = int(shared_mem)
        if shared_mem < 0:
            raise ValueError(f"kernel {self.name!r}: shared_mem={shared_mem} is negative")
        if self.shared_size_bytes > MAX_STATIC_SHARED_BYTES:
            raise ValueError(
                f"kernel {self.name!r} declares {self.shared_size_bytes} bytes of static "
                f"__shared__ memory; the limit is {MAX_STATIC_SHARED_BYTES} "
                "(use dynamic shared memory for more)"
            )
        if shared_mem > self._max_dynamic_shared_size_bytes:
            raise ValueError(
                f"kernel {self.name!r}: shared_mem={shared_mem} bytes exceeds "
                f"max_dynamic_shared_size_bytes={self._max_dynamic_shared_size_bytes} "
                f"(static shared: {self.shared_size_bytes} bytes). Above "
                f"{DEFAULT_MAX_DYNAMIC_SHARED_BYTES} bytes in total a GPU needs the opt-in "
                "`kernel.max_dynamic_shared_size_bytes = n` (up to "
                f"{current_profile().shared_per_block_optin} bytes on the emulated "
                f"{current_profile().key})"
            )
        return shared_mem

    def _describe(self, position):
        parameter = self.parameters[position]
        return (
            f"kernel {self.name!r} argument {position} {parameter.name!r} "
            f"(C type `{parameter.c_type}`)"
        )

    def _check_argument(self, position, value):
        kind = self._types[position]
        if not kind.supported:
            raise TypeError(
                f"{self._describe(position)}: this parameter type cannot be passed by the "
                "emulator (supported: pointers to and values of bool, (u)int8..64, float, double)"
            )
        if kind.is_pointer:
            wanted = "any dtype" if kind.dtype is None else f"dtype {kind.dtype}"
            if isinstance(value, DeviceArray):
                check_device(value, self._describe(position))
                value = value._array
            elif isinstance(value, np.ndarray) and self.module.device_arrays_only:
                raise TypeError(
                    f"{self._describe(position)} got a host numpy.ndarray; a kernel takes "
                    "device arrays (CuPy refuses host arrays). Copy it with xp.asarray(...)"
                )
            if not isinstance(value, np.ndarray):
                raise TypeError(
                    f"{self._describe(position)} needs a C-contiguous numpy.ndarray of "
                    f"{wanted}, got {type(value).__name__}"
                )
            if kind.dtype is not None and value.dtype != kind.dtype:
                raise TypeError(
                    f"{self._describe(position)} needs an array of {wanted}, got an array of "
                    f"dtype {value.dtype}"
                )
            if not value.flags.c_contiguous:
                raise TypeError(
                    f"{self._describe(position)} needs a C-contiguous array, got a "
                    "non-contiguous view (use np.ascontiguousarray)"
                )
            if not value.flags.aligned:
                raise TypeError(f"{self._describe(position)} needs an aligned array")
            if not kind.is_const and not value.flags.writeable:
                raise TypeError(
                    f"{self._describe(position)} points to non-const data but the array is "
                    "read-only (declare the parameter const if the kernel does not write it)"
                )
            return ctypes.c_void_p(value.ctypes.data)
        if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
            hint = _numpy_scalar_hint(kind.dtype)
            raise TypeError(
                f"{self._describe(position)} got a Python {type(value).__name__} ({value!r}); "
                f"a Python number has no C width. Wrap it in the exact NumPy scalar type, "
                f"e.g. {hint}({value!r})"
            )
        if not isinstance(value, np.generic):
            raise TypeError(
                f"{self._describe(position)} needs a NumPy scalar of dtype {kind.dtype}, "
                f"got {type(value).__name__}"
            )
        if value.dtype != kind.dtype:
            raise TypeError(
                f"{self._describe(position)} needs a NumPy scalar of dtype {kind.dtype}, got "
                f"numpy.{type(value).__name__} (dtype {value.dtype}); wrap it as "
                f"{_numpy_scalar_hint(kind.dtype)}(...)"
            )
        return np.array(value, dtype=kind.dtype)

    # -- launch -------------------------------------------------------------
    def __call__(self, grid, block, args, *, shared_mem=0):
        """Run the kernel on the CPU, like ``cupy.RawKernel.__call__``.

        Parameters
        ----------
        grid : int or tuple of int
            Grid size in blocks (up to 3 dimensions).
        block : int or tuple of int
            Block size in threads (up to 3 dimensions).
        args : tuple
            Kernel arguments: emulated device arrays (or, unless the module has
            ``device_arrays_only``, ``numpy.ndarray``) for pointers, NumPy scalars
            of the exact C type for values.
        shared_mem : int
            Dynamic shared memory per block, in bytes.

        Raises
        ------
        TypeError
            Wrong number of arguments, or an argument that does not match its
            C type; wrong types of ``grid`` / ``block`` / ``shared_mem``.
        ValueError
            Launch configuration beyond the emulated device's limits.
        RuntimeError
            The kernel failed (``assert``, ``__trap``, misuse of barriers or
            warp intrinsics, a barrier wait past ``GPUBOOST_EMULATION_TIMEOUT``).
        """
        grid_dims = self._dims(grid, "grid", MAX_GRID_DIMS)
        block_dims = self._dims(block, "block", MAX_BLOCK_DIMS)
        threads = block_dims[0] * block_dims[1] * block_dims[2]
        if threads > MAX_THREADS_PER_BLOCK:
            raise ValueError(
                f"kernel {self.name!r}: block {block_dims} has {threads} threads; at most "
                f"{MAX_THREADS_PER_BLOCK} per block"
            )
        if threads > self.max_threads_per_block:
            raise ValueError(
                f"kernel {self.name!r}: block {block_dims} has {threads} threads, more than "
                f"its __launch_bounds__ ({self.max_threads_per_block}); on a GPU this launch "
                "fails with cudaErrorLaunchOutOfResources"
            )
        shared_mem = self._check_shared(shared_mem)
        if grid_dims[0] % self.cluster_blocks != 0:
            raise ValueError(
                f"kernel {self.name!r}: grid {grid_dims} is not a whole number of its clusters "
                f"of {self.cluster_blocks} blocks along x (__cluster_dims__); on a GPU the "
                "launch fails with cudaErrorInvalidClusterSize"
            )
        if self.cluster_blocks > 1 and self.max_active_clusters(threads, shared_mem) < 1:
            raise ValueError(
                f"kernel {self.name!r}: a cluster of {self.cluster_blocks} blocks of "
                f"{threads} threads and {shared_mem + self.shared_size_bytes} shared bytes "
                f"cannot be co-scheduled on the emulated {current_profile().key} (its "
                "cuOccupancyMaxActiveClusters is 0); on a GPU the launch fails. Ask "
                "gpuboost.backends.cuda.occupancy before launching a cluster kernel"
            )
        if not isinstance(args, (tuple, list)):
            raise TypeError(
                f"kernel {self.name!r}: args must be a tuple, got {type(args).__name__}"
            )
        if len(args) != len(self._types):
            signature = ", ".join(f"{p.c_type} {p.name}" for p in self.parameters)
            raise TypeError(
                f"kernel {self.name!r} takes {len(self._types)} arguments ({signature}), "
                f"got {len(args)}"
            )
        holders = [self._check_argument(position, value) for position, value in enumerate(args)]
        addresses = [
            ctypes.addressof(holder) if isinstance(holder, ctypes.c_void_p) else holder.ctypes.data
            for holder in holders
        ]
        argument_array = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
        error = ctypes.create_string_buffer(ERROR_BUFFER_BYTES)
        launch_arguments = (
            (ctypes.c_uint32 * 3)(*grid_dims),
            (ctypes.c_uint32 * 3)(*block_dims),
            shared_mem,
            self.cluster_blocks,
            emulation_timeout_seconds(),
            emulation_worker_count(),
            argument_array,
            error,
            ERROR_BUFFER_BYTES,
        )
        checks = enabled_checks()
        if checks or recording():
            status = self._launch_instrumented(launch_arguments, args, checks)
        else:
            status = self._entry(False)(*launch_arguments)
            record_kernel_launch()
        if status != _LAUNCH_OK:
            what = "failed" if status == _LAUNCH_KERNEL_FAILED else "could not be launched"
            message = error.value.decode(errors="replace")
            if checks or recording():
                message = symbolize_message(message, self.module._library_paths[True])
            if is_sanitizer_message(message):
                raise SanitizerError(f"kernel {self.name!r} failed the sanitizer: {message}")
            raise RuntimeError(f"kernel {self.name!r} {what} under emulation: {message}")

    # -- instrumented launch ------------------------------------------------------
    def _argument_label(self, positions):
        names = ", ".join(f"{p} {self.parameters[p].name!r}" for p in positions)
        return f"argument{'s' if len(positions) > 1 else ''} {names}"

    def _allocation_table(self, args, initcheck):
        """Pointer arguments grouped into allocations: arrays whose memory overlaps
        share one (so that aliasing arguments stay aliased in the arena).

        Returns
        -------
        allocations : ctypes array of InstrumentAllocation
        argument_allocation : ctypes array of int32 (-1 for scalars)
        argument_offset : ctypes array of uint64
        keep : list
            Objects that must outlive the launch (labels, flag buffers), and per
            allocation with flags ``(root array, start address, flags)``.
        """
        spans = []
        for position, value in enumerate(args):
            if self._types[position].is_pointer:
                array = value._array if isinstance(value, DeviceArray) else value
                start = array.__array_interface__["data"][0]
                spans.append((start, start + array.nbytes, position, array))
        spans.sort(key=lambda span: (span[0], span[1]))
        groups = []
        for start, end, position, array in spans:
            if groups and start < groups[-1][1]:
                groups[-1][1] = max(groups[-1][1], end)
                groups[-1][2].append((position, array))
            else:
                groups.append([start, end, [(position, array)]])
        allocations = (InstrumentAllocation * max(len(groups), 1))()
        argument_allocation = (ctypes.c_int32 * max(len(args), 1))(*([-1] * len(args)))
        argument_offset = (ctypes.c_uint64 * max(len(args), 1))()
        keep, written_back = [], []
        for index, (start, end, members) in enumerate(groups):
            positions = sorted(position for position, _ in members)
            root = root_of(members[0][1])
            label = self._argument_label(positions).encode()
            flags = None
            if initcheck:
                flags = initialized_bytes(members[0][1], start, end - start)
            keep.append(label)
            if flags is not None:
                keep.append(flags)
                written_back.append((members[0][1], start, flags))
            writable = any(not self._types[position].is_const for position in positions)
            allocations[index] = InstrumentAllocation(
                start,
                end - start,
                (start - root.__array_interface__["data"][0]) % ARENA_ALIGNMENT,
                None if flags is None else flags.ctypes.data,
                label,
                ALLOCATION_WRITABLE if writable else 0,
                0,
            )
            for position, array in members:
                argument_allocation[position] = index
                argument_offset[position] = array.__array_interface__["data"][0] - start
        return allocations, len(groups), argument_allocation, argument_offset, keep, written_back

    def _launch_instrumented(self, launch_arguments, args, checks):
        """Launch the instrumented flavour; returns the launch status."""
        entry = self._entry(True)
        measure = recording()
        allocations, count, argument_allocation, argument_offset, keep, written_back = (
            self._allocation_table(args, "initcheck" in checks)
        )
        allowed, labels = self.module._static_shared_table(self.name)
        n_static = len(allowed)
        config = InstrumentConfig(
            check_bits(checks) | (MEASURE_TRAFFIC_BIT if measure else 0),
            count,
            allocations,
            len(args),
            n_static,
            argument_allocation,
            argument_offset,
            (ctypes.c_uint8 * max(n_static, 1))(*allowed),
            (ctypes.c_char_p * max(n_static, 1))(*labels),
        )
        counters = (ctypes.c_uint64 * len(self._counter_names))()
        launch_arguments = list(launch_arguments)
        if checks:  # one worker: the checks see the threads' accesses in program order
            launch_arguments[_WORKERS_ARGUMENT] = 1
        status = entry(*launch_arguments, ctypes.byref(config), counters)
        del keep
        for array, start, flags in written_back:
            store_initialized_bytes(array, start, flags)
        grid = launch_arguments[0]
        record_kernel_launch(
            self.name,
            dict(zip(self._counter_names, counters)) if measure else None,
            grid[0] * grid[1] * grid[2],
        )
        return status
