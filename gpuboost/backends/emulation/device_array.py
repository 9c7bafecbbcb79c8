"""Emulated device arrays: a strict CPU stand-in for ``cupy.ndarray``.

Under the emulation (``GPUBOOST_EMULATE_CUDA=1``) the CUDA backend's arrays are
:class:`DeviceArray` objects, created and transformed through the
:data:`namespace` object (the backend's ``xp``), instead of NumPy arrays. Their
memory is an ordinary NumPy array on the host, but they follow CuPy's rules for
what may cross between host and device, so that CI, which has no GPU, catches
the code that would work on NumPy arrays and fail (or silently copy) on CuPy:

* no implicit conversion to NumPy: ``numpy.asarray(device_array)``,
  ``host_array[device_index]``, ``numpy.array([device_scalar, ...])`` raise
  TypeError, as ``cupy.ndarray.__array__`` does; ``.get()`` /
  ``xp.asnumpy`` copy to the host explicitly;
* no host arrays where CuPy takes device arrays: ufuncs and ``xp`` functions
  given a ``numpy.ndarray`` raise TypeError (``xp.asarray`` / ``xp.array`` /
  ``xp.ascontiguousarray`` copy host data to the device explicitly), as do the
  emulated kernels' pointer arguments;
* reductions and integer indexing return 0-d device arrays, not NumPy scalars;
  ``float()``, ``int()``, ``bool()``, ``.item()`` convert (CuPy synchronizes);
* the ``xp`` namespace lacks the NumPy functions CuPy lacks.

Arithmetic, indexing and functions compute with NumPy on the wrapped arrays, so results
are NumPy's bit for bit, except where a GPU's are not (:mod:`.platform_math`): the
transcendental ufuncs (``exp``, ``log``, ``power`` ...) return NumPy's result moved by one
ulp, and float sums, means and running sums add in another order, as CUDA's math library
and CuPy's reductions do. Code whose results must match the CPU's computes these with
:mod:`gpuboost.core.strict_math` and :mod:`gpuboost.core.reproducible_sum` instead.

Every operation also reports what it asks of the device: to :func:`count_operations`
(counts per kind, including the host synchronizations CuPy performs implicitly), to
the traffic model (:mod:`.traffic`: bytes read and written) and, under
``GPUBOOST_SANITIZE=initcheck``, to the shadow of arrays made by ``xp.empty``
(:mod:`.shadow`: reading bytes nothing wrote is an error).
"""

import collections
import contextlib
import numbers
import os
import threading
import types

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from ...core.array import register_device_array
from .platform_math import (
    CUPY_NAN_UFUNCS,
    FLOAT_REDUCTIONS,
    TRANSCENDENTAL_UFUNCS,
    cupy_nan_result,
    perturbed_ufunc_result,
    reordered_cumsum,
    reordered_sum,
)
from .shadow import check_read, mark_written, track_uninitialized, tracking
from .traffic import (
    ARGSORT_INDEX_BYTES,
    gather_bytes,
    record_array_op,
    record_kernel,
    recording,
    sort_bytes,
)

__all__ = [
    "DeviceArray",
    "namespace",
    "is_device_array",
    "count_operations",
    "check_device",
    "current_device",
    "device",
    "device_count",
    "EMULATE_DEVICES_ENV_VAR",
    "HOST_ONLY_FUNCTIONS",
    "OPERATION_KINDS",
]

#: What :func:`count_operations` counts. ``kernel``: raw kernel launches;
#: ``array_op``: CuPy-level operations that launch kernels on a GPU (ufuncs,
#: ``xp`` functions, array methods, advanced indexing, assignments);
#: ``to_device`` / ``to_host``: copies between host and device (``to_host``
#: includes ``float()``, ``int()``, ``bool()``, ``.item()``); ``sync``: host
#: synchronizations, every ``to_host`` plus the operations CuPy synchronizes for
#: to learn an output size (:data:`SYNCHRONIZING_FUNCTIONS`, boolean-mask indexing).
OPERATION_KINDS = ("kernel", "array_op", "to_device", "to_host", "sync")
#: ``xp`` functions and methods that synchronize in CuPy: their output size depends on
#: the data (``nonzero`` and friends, ``unique``), or CuPy reads a device value
#: (``bincount`` reads the maximum). ``where`` synchronizes with one argument only.
SYNCHRONIZING_FUNCTIONS = frozenset(
    ("nonzero", "flatnonzero", "argwhere", "unique", "bincount", "compress", "extract")
)
_counts = None

# ---- several devices -------------------------------------------------------------------
#: Environment variable: how many devices the emulation has (default 1). Each device's
#: arrays may be used only while it is the current device (:func:`device`), as with CuPy
#: on GPUs without peer access.
EMULATE_DEVICES_ENV_VAR = "GPUBOOST_EMULATE_DEVICES"
_CURRENT = threading.local()


def device_count():
    """The emulated devices (``GPUBOOST_EMULATE_DEVICES``, at least 1)."""
    value = os.environ.get(EMULATE_DEVICES_ENV_VAR, "").strip() or "1"
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{EMULATE_DEVICES_ENV_VAR}={value!r} must be a positive integer")
    return count


def current_device():
    """The current emulated device of this thread (0 unless inside :func:`device`)."""
    return getattr(_CURRENT, "ordinal", 0)


@contextlib.contextmanager
def device(ordinal):
    """Make ``ordinal`` the current emulated device within the block
    (``cupy.cuda.Device(ordinal)`` as a context manager)."""
    ordinal = int(ordinal)
    if not 0 <= ordinal < device_count():
        raise ValueError(
            f"emulated device {ordinal} does not exist ({EMULATE_DEVICES_ENV_VAR}={device_count()})"
        )
    previous = current_device()
    _CURRENT.ordinal = ordinal
    try:
        yield
    finally:
        _CURRENT.ordinal = previous


def check_device(array, what):
    """CuPy without peer access: an array is used on its own device only."""
    if array._device != current_device():
        raise ValueError(
            f"{what}: the array resides on device {array._device}, but the current device "
            f"is {current_device()} (an emulated GPU without peer access, as CuPy refuses "
            "it). Run the operation within its device's context."
        )


@contextlib.contextmanager
def count_operations():
    """Count the device operations run inside the ``with`` block.

    A GPU-independent measure of launch overhead: on a GPU every operation
    costs a kernel launch or a transfer of a few microseconds whatever its size,
    and every ``to_host`` waits for the device.

    Yields
    ------
    collections.Counter
        Keyed by :data:`OPERATION_KINDS`; filled as operations run.
    """
    global _counts
    previous, _counts = _counts, collections.Counter({kind: 0 for kind in OPERATION_KINDS})
    try:
        yield _counts
    finally:
        _counts = previous


def _count(kind):
    if _counts is not None:
        _counts[kind] += 1


def _arrays_in(values):
    """The host memory of the device arrays in ``values`` (recursing into lists and
    tuples)."""
    found = []
    for value in values:
        if isinstance(value, DeviceArray):
            found.append(value._array)
        elif isinstance(value, (list, tuple)):
            found.extend(_arrays_in(value))
    return found


def _operation(kind, name, reads=(), written=0, *, sync=False, nbytes=None):
    """Account for one operation: :func:`count_operations` (``kind``, plus ``sync`` when
    it synchronizes) and the traffic model (``nbytes`` if given: an int, or a function
    returning it, called only while the model records; else the bytes of the ``reads``
    arrays plus ``written`` bytes)."""
    if _counts is not None:
        _counts[kind] += 1
        if sync or kind == "to_host":
            _counts["sync"] += 1
    if recording():
        if callable(nbytes):
            nbytes = nbytes()
        elif nbytes is None:
            nbytes = sum(array.nbytes for array in reads) + written
        record_array_op(kind, name, nbytes, int(sync or kind == "to_host"))


def _check_reads(what, arrays):
    """initcheck: the arrays (host memory of device arrays) are read whole."""
    if tracking():
        for array in arrays:
            check_read(array, what)


def record_kernel_launch(name=None, counters=None, blocks=0):
    """Count one raw kernel launch (called by the emulated kernels, see
    :func:`count_operations`); ``counters``: its traffic counters when the traffic model
    is recording (:func:`gpuboost.backends.emulation.traffic.record_kernel`), ``blocks``
    its grid size."""
    _count("kernel")
    if counters is not None:
        record_kernel(name, counters, blocks)


#: NumPy functions CuPy 14 does not provide (``dir(numpy)`` minus ``dir(cupy)``,
#: callables only); calling them through the emulated ``xp`` raises
#: AttributeError, as ``cupy.<name>`` would.
HOST_ONLY_FUNCTIONS = frozenset(
    "asmatrix block bmat busday_count busday_offset busdaycalendar einsum_path errstate "
    "frompyfunc fromregex geomspace get_include getbufsize geterr geterrcall "
    "histogram_bin_edges info insert is_busday isnat matrix matvec memmap nanpercentile "
    "nanquantile ndenumerate nditer nested_iters polyder polydiv polyint recarray record "
    "setbufsize seterr seterrcall show_runtime spacing test unstack vecdot vecmat".split()
)
#: ``xp`` functions that copy host data (arrays, lists, scalars) to the device
#: (``cupy.ascontiguousarray`` is not one: it takes device arrays only).
TRANSFER_FUNCTIONS = frozenset(("array", "asarray", "asanyarray"))
#: Other ``xp`` functions that accept host arrays (copying them to the device).
HOST_INPUT_FUNCTIONS = frozenset(("unique",))
#: ``xp`` functions whose first argument only provides a shape and dtype (CuPy
#: accepts a NumPy array there).
LIKE_FUNCTIONS = frozenset(("empty_like", "zeros_like", "ones_like", "full_like"))
#: Sorts that are always stable in CuPy (radix sort), whatever ``kind`` says.
STABLE_SORTS = frozenset(("argsort", "sort"))
#: Ufunc methods CuPy implements, and for which ufuncs (None: all).
UFUNC_METHODS = {
    "__call__": None,
    "outer": None,
    "reduce": frozenset(("add", "multiply")),
    "accumulate": frozenset(("add", "multiply")),
    "reduceat": frozenset(("add",)),
    "at": frozenset(
        ("add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor")
    ),
}
#: dtypes ``ufunc.at`` supports in CuPy 13 and 14 (CuPy 13's ``add.at`` has no int64).
UFUNC_AT_DTYPES = {
    "add": frozenset(("int32", "uint32", "uint64", "float16", "float32", "float64")),
    "subtract": frozenset(("int32", "uint32")),
    "maximum": frozenset(("int32", "int64", "uint32", "uint64", "float32", "float64")),
    "minimum": frozenset(("int32", "int64", "uint32", "uint64", "float32", "float64")),
}
#: Comparison ufuncs, which accept 0-d NumPy arrays (CuPy takes their ``.item()``).
COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))


def is_device_array(value):
    """True for a :class:`DeviceArray`."""
    return isinstance(value, DeviceArray)


def _host_array_error(what, value):
    return TypeError(
        f"Unsupported type {type(value)} in {what}: a host numpy.ndarray where CuPy takes "
        "device arrays (emulated device arrays follow CuPy's rules). Copy it to the "
        "device explicitly with xp.asarray(...) first."
    )


def _unwrap(value, what):
    """The host memory of device arrays inside ``value`` (recursing into lists and
    tuples); a host ``numpy.ndarray`` raises TypeError, an array of another device than
    the current one ValueError."""
    if isinstance(value, DeviceArray):
        check_device(value, what)
        return value._array
    if isinstance(value, np.ndarray):
        raise _host_array_error(what, value)
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(item, what) for item in value)
    return value


def _wrap(value):
    """NumPy results as device arrays: arrays, NumPy scalars (as 0-d arrays, as CuPy
    returns them), and tuples / lists of those."""
    if isinstance(value, np.ndarray):
        return DeviceArray(value)
    if isinstance(value, np.generic):
        return DeviceArray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(item) for item in value)
    if isinstance(value, list):
        return [_wrap(item) for item in value]
    return value


def _check_ufunc_operand(value, what):
    """CuPy ufuncs take device arrays and Python / NumPy scalars only."""
    if isinstance(value, DeviceArray):
        check_device(value, what)
        return value._array
    if isinstance(value, np.ndarray):
        raise _host_array_error(what, value)
    if isinstance(value, (numbers.Number, np.generic)):
        return value
    raise TypeError(
        f"Unsupported type {type(value)} in {what}: CuPy ufuncs take device "
        "arrays and scalars (convert lists with xp.asarray first)."
    )


def _index_key(key):
    """An indexing key: device arrays unwrapped; host integer / boolean arrays and
    lists are accepted, as CuPy copies them to the device."""
    if isinstance(key, DeviceArray):
        return key._array
    if isinstance(key, tuple):
        return tuple(_index_key(item) for item in key)
    return key


def _has_host_array(key):
    items = key if isinstance(key, tuple) else (key,)
    return any(isinstance(item, (np.ndarray, list)) for item in items)


def _host_items(key):
    items = key if isinstance(key, tuple) else (key,)
    return [item for item in items if isinstance(item, (np.ndarray, list))]


def _has_mask(key):
    """Whether an indexing key holds a boolean array (CuPy synchronizes to size it)."""
    items = key if isinstance(key, tuple) else (key,)
    for item in items:
        array = item._array if isinstance(item, DeviceArray) else item
        if isinstance(array, (np.ndarray, list)) and np.asarray(array).dtype == np.bool_:
            return True
    return False


def _indexing_bytes(array, key, values):
    """Device bytes of gathering ``values`` from (or scattering them into) ``array`` at
    ``key``: the index arrays and the values streamed, the gathered elements by warp
    coalescing (:func:`gpuboost.backends.emulation.gather_bytes`). Only a
    1-D integer index on the first axis is modeled exactly; other keys count the
    values' bytes twice."""
    items = key if isinstance(key, tuple) else (key,)
    index_arrays = [
        np.asarray(item._array if isinstance(item, DeviceArray) else item)
        for item in items
        if isinstance(item, (DeviceArray, np.ndarray, list))
    ]
    streamed = sum(index.nbytes for index in index_arrays) + values.nbytes
    if (
        len(items) == 1
        and len(index_arrays) == 1
        and index_arrays[0].ndim == 1
        and index_arrays[0].dtype.kind in "iu"
        and array.ndim >= 1
    ):
        row_bytes = array.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
        positions = np.where(index_arrays[0] < 0, index_arrays[0] + array.shape[0], index_arrays[0])
        return streamed + gather_bytes(positions * row_bytes, row_bytes)
    return streamed + values.nbytes


def _is_advanced_index(key):
    """Whether an indexing key holds an array or list (NumPy's advanced indexing)."""
    items = key if isinstance(key, tuple) else (key,)
    return any(isinstance(item, (DeviceArray, np.ndarray, list)) for item in items)


class DeviceArray(NDArrayOperatorsMixin):
    """An array "on the device" under the CPU emulation (see the module docstring).

    Parameters
    ----------
    array : numpy.ndarray
        Its memory (not copied). Emulated kernels read and write it in place.
    """

    __slots__ = ("_array", "_device", "__weakref__")
    __hash__ = None

    def __init__(self, array):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"DeviceArray wraps a numpy.ndarray, got {type(array).__name__}")
        self._array = array
        self._device = current_device()

    # ---- what crosses to the host ---------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed (an emulated device "
            "array follows cupy.ndarray). Please use `.get()` or xp.asnumpy(...) to "
            "construct a NumPy array explicitly."
        )

    def get(self, stream=None, order="C", out=None):
        """A NumPy copy on the host (``cupy.ndarray.get``)."""
        del stream
        _check_reads("ndarray.get()", [self._array])
        _operation("to_host", "get", [self._array])
        host = np.array(self._array, order=order, copy=True)
        if out is None:
            return host
        out[...] = host
        return out

    def set(self, array, stream=None):
        """Copy a host array into this array (``cupy.ndarray.set``)."""
        del stream
        if not isinstance(array, np.ndarray):
            raise TypeError(f"set() takes a numpy.ndarray, got {type(array).__name__}")
        if array.shape != self._array.shape or array.dtype != self._array.dtype:
            raise ValueError("set(): shape and dtype must match")
        _operation("to_device", "set", [array])
        self._array[...] = array
        mark_written(self._array)

    def _to_host(self, name):
        _check_reads(f"ndarray.{name}", [self._array])
        _operation("to_host", name, [self._array])
        return self._array

    def item(self, *args):
        return self._to_host("item()").item(*args)

    def tolist(self):
        return self._to_host("tolist()").tolist()

    def tobytes(self, order="C"):
        return self._to_host("tobytes()").tobytes(order=order)

    def __float__(self):
        return float(self._to_host("__float__()"))

    def __int__(self):
        return int(self._to_host("__int__()"))

    def __bool__(self):
        return bool(self._to_host("__bool__()"))

    def __complex__(self):
        return complex(self._array)

    def __len__(self):
        return len(self._array)

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (_wrap(self._array[i]) for i in range(len(self._array)))

    def __repr__(self):
        return repr(self._array)

    def __str__(self):
        return str(self._array)

    def __format__(self, spec):
        return format(self._array, spec)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (DeviceArray, (self._array.copy(),))

    # ---- attributes -----------------------------------------------------------
    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)
    nbytes = property(lambda self: self._array.nbytes)
    itemsize = property(lambda self: self._array.itemsize)
    strides = property(lambda self: self._array.strides)
    flags = property(lambda self: _DeviceFlags(self._array.flags))
    T = property(lambda self: DeviceArray(self._array.T))

    @property
    def __cuda_array_interface__(self):
        """As on a ``cupy.ndarray`` (version 3), pointing at the emulated memory."""
        return {
            "shape": self._array.shape,
            "typestr": self._array.dtype.str,
            "data": (self._array.ctypes.data, not self._array.flags.writeable),
            "strides": None if self._array.flags.c_contiguous else self._array.strides,
            "version": 3,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the array's memory, for the emulation's ``from_dlpack``
        (its ``__dlpack_device__`` says CUDA, so ``numpy.from_dlpack`` refuses it, as it
        refuses a CuPy array)."""
        del stream, max_version, copy
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(
                f"ndarray.__dlpack__: the array is on CUDA device {self._device}; it cannot be "
                f"exported to DLPack device {tuple(dl_device)} (copy it with .get())"
            )
        if not getattr(_CURRENT, "importing_dlpack", False):
            raise BufferError(
                "ndarray.__dlpack__: this is CUDA memory (an emulated device array); only a "
                "device library's from_dlpack (xp.from_dlpack) can import it, as numpy cannot "
                "import a CuPy array"
            )
        check_device(self, "ndarray.__dlpack__")
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        """``(kDLCUDA, device)``, as a ``cupy.ndarray``."""
        return (DLPACK_CUDA, self._device)

    # ---- indexing -------------------------------------------------------------
    @property
    def device(self):
        """The emulated device the array lives on (``cupy.ndarray.device.id``)."""
        return types.SimpleNamespace(id=self._device)

    def __getitem__(self, key):
        check_device(self, "ndarray.__getitem__")
        if not _is_advanced_index(key):  # basic indices make views
            return _wrap(self._array[_index_key(key)])
        # A gather kernel; a boolean mask first needs its number of true values on the
        # host (CuPy synchronizes).
        index = _index_key(key)
        if tracking():
            _check_reads("indexing", _arrays_in(key if isinstance(key, tuple) else (key,)))
            check_read(self._array, "indexing", index)
        if _has_host_array(key):
            _operation("to_device", "index", [np.asarray(k) for k in _host_items(key)])
        result = self._array[index]
        _operation(
            "array_op",
            "getitem",
            sync=_has_mask(key),
            nbytes=lambda: _indexing_bytes(self._array, key, result),
        )
        return _wrap(result)

    def __setitem__(self, key, value):
        check_device(self, "ndarray.__setitem__")
        # CuPy: with advanced indices (arrays, lists) the value may be host data,
        # copied to the device; with basic indices (ints, slices, Ellipsis, None)
        # only device arrays and scalars (ndarray.fill refuses anything else).
        from_device = isinstance(value, DeviceArray)
        if from_device:
            value = value._array
        elif not _is_advanced_index(key) and (
            isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0)
        ):
            raise ValueError(
                f"non-scalar {type(value).__name__} cannot be assigned to a "
                "basic-indexed device array (CuPy: 'non-scalar numpy.ndarray "
                "cannot be used for fill'); copy it with xp.asarray(...) first"
            )
        index = _index_key(key)
        if tracking():
            _check_reads("assignment", _arrays_in(key if isinstance(key, tuple) else (key,)))
            if from_device:
                check_read(value, "assignment")
        host_values = _host_items(key) + (
            [value] if isinstance(value, (np.ndarray, list)) and not from_device else []
        )
        if host_values:
            _operation("to_device", "setitem", [np.asarray(item) for item in host_values])

        def nbytes():
            if _is_advanced_index(key):
                return _indexing_bytes(self._array, key, np.asarray(value))
            return self._array[index].nbytes * (2 if from_device else 1)  # fill, or copy

        _operation("array_op", "setitem", sync=_has_mask(key), nbytes=nbytes)
        self._array[index] = value
        mark_written(self._array, index)

    # ---- NumPy protocols --------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _apply_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        # numpy.<name>(device_array, ...) dispatches to xp.<name>, as CuPy's
        # __array_function__ dispatches to cupy.<name>; NumPy raises TypeError when
        # there is none.
        name = func.__name__
        if name in HOST_ONLY_FUNCTIONS or getattr(np, name, None) is not func:
            return NotImplemented
        return getattr(namespace, name)(*args, **kwargs)

    # ---- methods ----------------------------------------------------------------
    def __getattr__(self, name):
        # Only called for attributes not defined above: NumPy's ndarray methods,
        # with device arrays in and out (host arrays refused).
        if name.startswith("__"):
            raise AttributeError(name)
        method = getattr(self._array, name)
        if not callable(method):
            return _wrap(method)

        def device_method(*args, **kwargs):
            what = f"ndarray.{name}()"
            check_device(self, what)
            operands = [self, *args, *kwargs.values()]
            if tracking():
                _check_reads(what, _arrays_in(operands[1:] if name == "fill" else operands))
            if name in FLOAT_REDUCTIONS:
                arguments = (self._array, *_unwrap(args, what))
                result = _float_reduction(name, arguments, _unwrap_kwargs(kwargs, what))
            else:
                result = method(*_unwrap(args, what), **_unwrap_kwargs(kwargs, what))
            _account_function(name, result, operands)
            if name in IN_PLACE_METHODS:
                if name == "put":
                    mark_written(self._array.reshape(-1), _unwrap(args[0], what))
                else:
                    mark_written(self._array)
                return result  # in place, returns None
            return _wrap(result)

        return device_method

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if casting is not None or subok is not None:
            raise TypeError("astype(casting=..., subok=...) is not supported by CuPy")
        check_device(self, "ndarray.astype()")
        converted = self._array.astype(dtype, order=order, copy=copy)
        if converted is self._array:
            return self
        _check_reads("ndarray.astype()", [self._array])
        _operation("array_op", "astype", [self._array], converted.nbytes)
        return DeviceArray(converted)

    def argsort(self, axis=-1):
        """Always stable (CuPy's radix sort); no ``kind`` (CuPy 13's method has none)."""
        check_device(self, "ndarray.argsort()")
        _check_reads("ndarray.argsort()", [self._array])
        _operation("array_op", "argsort", nbytes=_sort_bytes(self._array, True))
        return DeviceArray(self._array.argsort(axis=axis, kind="stable"))

    def sort(self, axis=-1):
        """In place; no ``kind`` (CuPy 13's method has none)."""
        check_device(self, "ndarray.sort()")
        _check_reads("ndarray.sort()", [self._array])
        _operation("array_op", "sort", nbytes=_sort_bytes(self._array, False))
        self._array.sort(axis=axis, kind="stable")

    def copy(self, order="C"):
        check_device(self, "ndarray.copy()")
        _check_reads("ndarray.copy()", [self._array])
        _operation("array_op", "copy", [self._array], self._array.nbytes)
        return DeviceArray(self._array.copy(order=order))

    def view(self, dtype=None):
        return DeviceArray(self._array.view(dtype) if dtype is not None else self._array.view())


class _DeviceFlags:
    """``cupy.ndarray.flags``: C / F contiguity and ownership only (no ``writeable``,
    ``aligned``, ...)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")
    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous", "OWNDATA": "owndata"}

    def __init__(self, flags):
        self.c_contiguous = bool(flags.c_contiguous)
        self.f_contiguous = bool(flags.f_contiguous)
        self.owndata = bool(flags.owndata)

    def __getitem__(self, key):
        return getattr(self, self._KEYS[key])


#: ``xp`` functions that allocate without launching a kernel (memory nothing wrote).
ALLOCATING_ONLY = frozenset(("empty", "empty_like"))
#: Array methods that change the array in place.
IN_PLACE_METHODS = frozenset(("sort", "fill", "partition", "put"))


def _result_bytes(result):
    if isinstance(result, (np.ndarray, np.generic)):
        return result.nbytes
    if isinstance(result, (tuple, list)):
        return sum(_result_bytes(item) for item in result)
    return 0


def _sort_bytes(array, with_indices):
    """Traffic of CuPy's radix sort of ``array`` (with int64 indices for an argsort)."""
    return sort_bytes(array.size, array.itemsize, ARGSORT_INDEX_BYTES if with_indices else 0)


def _account_function(name, result, operands):
    """Account for an ``xp`` function or array method ``name`` that returned
    ``result`` from ``operands`` (the call's arguments, device arrays among them), unless
    it only made a view of an operand (reshape, ravel, slicing, ascontiguousarray of a
    contiguous array) or only allocated."""
    if name in ALLOCATING_ONLY or (_counts is None and not recording()):
        return
    arrays = _arrays_in(operands)
    if isinstance(result, np.ndarray):
        for array in arrays:
            if np.may_share_memory(result, array):
                return
    one_argument_where = name == "where" and len(operands) == 1
    sync = name in SYNCHRONIZING_FUNCTIONS or one_argument_where
    _operation("array_op", name, arrays, _result_bytes(result), sync=sync)


def _unwrap_kwargs(kwargs, what):
    return {key: _unwrap(value, what) for key, value in kwargs.items()}


def _apply_ufunc(ufunc, method, inputs, kwargs):
    name = ufunc.__name__
    what = name + ("" if method == "__call__" else f".{method}")
    if method not in UFUNC_METHODS:
        raise TypeError(f"ufunc method {what} is not in CuPy")
    supported = UFUNC_METHODS[method]
    if supported is not None and name not in supported:
        raise NotImplementedError(f"`cupy_{name}.{method}` is not supported by CuPy")
    if method == "at":
        return _ufunc_at(ufunc, what, inputs)
    if method == "outer":  # CuPy copies host operands of outer to the device
        _check_reads(what, _arrays_in(inputs))
        reads = _arrays_in(inputs)
        inputs = [value._array if isinstance(value, DeviceArray) else value for value in inputs]
        result = ufunc.outer(*inputs, **_unwrap_kwargs(kwargs, what))
        _operation("array_op", what, reads, _result_bytes(result))
        return _wrap(result)
    if name in COMPARISONS:
        inputs = [
            value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value
            for value in inputs
        ]
    operands = [_check_ufunc_operand(value, what) for value in inputs]
    out = kwargs.pop("out", None)
    outputs = None
    if out is not None:
        outputs = out if isinstance(out, tuple) else (out,)
        for output in outputs:
            if not isinstance(output, DeviceArray):
                raise TypeError(f"{what}: out= must be a device array, got {type(output).__name__}")
        kwargs["out"] = tuple(output._array for output in outputs)
    if "where" in kwargs:
        kwargs["where"] = _check_ufunc_operand(kwargs["where"], what)
    reads = [value for value in operands if isinstance(value, np.ndarray)]
    if isinstance(kwargs.get("where"), np.ndarray):
        reads.append(kwargs["where"])
    _check_reads(what, reads)
    result = _ufunc_result(ufunc, method, operands, kwargs)
    _operation("array_op", what, reads, _result_bytes(result))
    if outputs is not None:
        if "where" not in kwargs:
            for output in outputs:
                mark_written(output._array)
        return outputs[0] if len(outputs) == 1 else outputs
    return _wrap(result)


def _float_reduction(name, arguments, kwargs):
    """A float reduction as a GPU computes it (:mod:`.platform_math`): ``sum``, ``mean``
    and ``cumsum`` in another order, the others NumPy's result moved by one ulp; integer
    reductions (exact) are NumPy's."""
    numpy_function = getattr(np, name)
    array = np.asarray(arguments[0])
    result_dtype = kwargs.get("dtype")
    is_float = array.dtype.kind in "fc" or (
        result_dtype is not None and np.dtype(result_dtype).kind in "fc"
    )
    if not is_float:
        return numpy_function(*arguments, **kwargs)
    if name == "sum":
        return reordered_sum(*arguments, **kwargs)
    if name == "cumsum":
        return reordered_cumsum(*arguments, **kwargs)
    if name == "mean" and len(arguments) == 1 and set(kwargs) <= {"axis", "dtype", "keepdims"}:
        axis = kwargs.get("axis")
        total = reordered_sum(array, **kwargs)
        count = (
            array.size if axis is None else np.prod([array.shape[a] for a in np.atleast_1d(axis)])
        )
        return total / count
    result = numpy_function(*arguments, **kwargs)
    return perturbed_ufunc_result(result, result)


def _ufunc_result(ufunc, method, operands, kwargs):
    """``getattr(ufunc, method)(*operands, **kwargs)``, as a GPU computes it: transcendental
    ufuncs moved by one ulp, float ``add.reduce`` / ``add.accumulate`` in another order
    (:mod:`.platform_math`)."""
    name = ufunc.__name__
    float_operands = any(
        isinstance(value, (np.ndarray, np.generic, float)) and np.asarray(value).dtype.kind in "fc"
        for value in operands
    )
    if name == "add" and method in ("reduce", "accumulate") and float_operands:
        if kwargs.get("out") is not None or kwargs.get("where") is not None:
            raise NotImplementedError(f"emulated float add.{method} with out= or where=")
        keywords = {key: value for key, value in kwargs.items() if key in ("axis", "dtype")}
        axis = keywords.pop("axis", 0)
        if method == "reduce":
            return reordered_sum(
                operands[0], axis=axis, keepdims=kwargs.get("keepdims", False), **keywords
            )
        return reordered_cumsum(operands[0], axis=axis, **keywords)
    result = getattr(ufunc, method)(*operands, **kwargs)
    if method == "__call__" and name in CUPY_NAN_UFUNCS:
        outputs = kwargs.get("out")
        if outputs is None:
            return cupy_nan_result(name, result, operands)
        for output in outputs:
            output[...] = cupy_nan_result(name, output, operands)
        return result
    if method != "__call__" or name not in TRANSCENDENTAL_UFUNCS:
        return result
    outputs = kwargs.get("out")
    if outputs is None:
        return perturbed_ufunc_result(result, operands[0])
    for output in outputs:
        output[...] = perturbed_ufunc_result(output, operands[0])
    return result


def _ufunc_at(ufunc, what, inputs):
    """``xp.<ufunc>.at(target, indices, values)`` within CuPy's limits."""
    target, indices, *values = inputs
    if not isinstance(target, DeviceArray):
        raise TypeError(f"{what} needs a device array to update, got {type(target).__name__}")
    if not isinstance(indices, (DeviceArray, np.ndarray, slice, numbers.Integral, tuple)):
        raise TypeError(
            f"{what}: indices of type {type(indices).__name__} are not accepted by "
            "CuPy (use an array)"
        )
    allowed = UFUNC_AT_DTYPES.get(ufunc.__name__)
    if allowed is not None and target.dtype.name not in allowed:
        raise TypeError(
            f"cupy.{what} does not support dtype {target.dtype} (supported in "
            f"CuPy 13 and 14: {', '.join(sorted(allowed))})"
        )
    values = [value._array if isinstance(value, DeviceArray) else value for value in values]
    index = _index_key(indices)
    if tracking():
        _check_reads(what, _arrays_in((indices, *inputs[2:])))
        check_read(target._array, what, index)
    _operation(
        "array_op",
        what,
        nbytes=lambda: (
            sum(array.nbytes for array in _arrays_in((indices, *inputs[2:])))
            + 2 * np.asarray(target._array[index]).nbytes
        ),
    )
    ufunc.at(target._array, index, *values)


class _EmulatedUfunc:
    """A NumPy ufunc that, like a CuPy ufunc, takes device arrays and scalars only."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout = ufunc.nin, ufunc.nout

    def __call__(self, *inputs, **kwargs):
        return _apply_ufunc(self._ufunc, "__call__", inputs, dict(kwargs))

    def __getattr__(self, method):
        if method not in UFUNC_METHODS or method == "__call__":
            raise AttributeError(f"'{self.__name__}' ufunc has no method {method!r} (not in CuPy)")
        return lambda *inputs, **kwargs: _apply_ufunc(self._ufunc, method, inputs, dict(kwargs))

    def __repr__(self):
        return f"<emulated device ufunc {self.__name__!r}>"


def _numpy_backed(name, implementation):
    """The ``xp`` function ``name``: ``implementation(numpy_function, what, *args,
    **kwargs)`` with NumPy's function of that name and a label for messages."""
    numpy_function = getattr(np, name)
    what = f"xp.{name}()"

    def function(*args, **kwargs):
        return implementation(numpy_function, what, *args, **kwargs)

    function.__name__ = name
    return function


#: ``__dlpack_device__()`` device type of CUDA memory (DLPack's kDLCUDA).
DLPACK_CUDA = 2
#: ... and of host memory (kDLCPU).
DLPACK_CPU = 1


class _ExportedMemory:
    """An ``__array_interface__`` over the memory another object exports through
    ``__cuda_array_interface__`` (the emulation's device memory is host memory); NumPy
    keeps this object, hence the exporter, alive as the view's base."""

    def __init__(self, owner, interface):
        self.owner = owner
        self.__array_interface__ = {
            "shape": tuple(interface["shape"]),
            "typestr": interface["typestr"],
            "data": tuple(interface["data"]),
            "strides": interface.get("strides"),
            "version": 3,
        }


def _exported_array(obj, what):
    """The memory of an object with ``__cuda_array_interface__`` as a NumPy array (no
    copy), as ``cupy.asarray`` wraps it."""
    interface = obj.__cuda_array_interface__
    if interface.get("mask") is not None:
        raise TypeError(f"{what}: a __cuda_array_interface__ with a mask is not supported")
    return np.asarray(_ExportedMemory(obj, interface))


def _transfer(numpy_function, what, obj, *args, **kwargs):
    """``xp.array`` / ``xp.asarray``: host data copied to the device; the memory of an
    object with ``__cuda_array_interface__`` taken as it is (``asarray``) or copied on
    the device (``array``), as CuPy does."""
    if not isinstance(obj, DeviceArray) and hasattr(obj, "__cuda_array_interface__"):
        exported = _exported_array(obj, what)
        if numpy_function is np.array:
            copied = np.array(exported, *args, **kwargs)
            _operation("array_op", what, [exported], copied.nbytes)
            return DeviceArray(copied)
        return DeviceArray(numpy_function(exported, *args, **kwargs))
    if isinstance(obj, DeviceArray):  # device to device: NumPy's copy / view rules
        converted = numpy_function(obj._array, *args, **kwargs)
        if converted is obj._array:
            return obj
        _check_reads(what, [obj._array])
        _operation("array_op", what, [obj._array], converted.nbytes)
        return DeviceArray(converted)
    # Host to device: always new memory.
    host = np.array(numpy_function(_host_values(obj, what), *args, **kwargs), copy=True)
    _operation("to_device", what, [host])
    return DeviceArray(host)


def _host_values(obj, what):
    """Host data given to a transfer function: NumPy arrays, scalars, (nested)
    lists of those. Device arrays inside a list are refused (CuPy cannot build an
    array from a list of device arrays)."""
    if isinstance(obj, (list, tuple)):
        for item in obj:
            if isinstance(item, DeviceArray):
                raise TypeError(
                    f"{what}: a list holding device arrays; use xp.stack or xp.concatenate"
                )
            _host_values(item, what)
    return obj


def _like(numpy_function, what, prototype, *args, **kwargs):
    """``xp.zeros_like`` and friends: the prototype may be a host array."""
    if isinstance(prototype, DeviceArray):
        prototype = prototype._array
    result = numpy_function(prototype, *args, **kwargs)
    if numpy_function.__name__ in ALLOCATING_ONLY:
        track_uninitialized(result, what)
    else:
        _operation("array_op", what, (), result.nbytes)
    return DeviceArray(result)


def _function(numpy_function, what, *args, **kwargs):
    """Any other ``xp`` function: device arrays in, host arrays refused."""
    name = numpy_function.__name__
    outputs = kwargs.get("out")
    if tracking():
        read_kwargs = [value for key, value in kwargs.items() if key != "out"]
        _check_reads(what, _arrays_in((*args, *read_kwargs)))
    if name in FLOAT_REDUCTIONS and outputs is None:
        result = _float_reduction(name, _unwrap(args, what), _unwrap_kwargs(kwargs, what))
    else:
        result = numpy_function(*_unwrap(args, what), **_unwrap_kwargs(kwargs, what))
    if name in ALLOCATING_ONLY:
        track_uninitialized(result, what)
    _account_function(name, result, (*args, *kwargs.values()))
    if isinstance(outputs, DeviceArray):
        mark_written(outputs._array)
    return _wrap(result)


def _sort(numpy_function, what, array, axis=-1, kind=None):
    """``xp.sort`` / ``xp.argsort``: always stable, as CuPy's radix sort."""
    if kind not in (None, "stable"):
        raise ValueError("kind can only be None or 'stable' (CuPy)")
    values = _unwrap(array, what)
    _check_reads(what, [values])
    _operation("array_op", what, nbytes=_sort_bytes(values, numpy_function is np.argsort))
    return _wrap(numpy_function(values, axis=axis, kind="stable"))


def _host_input(numpy_function, what, array, *args, **kwargs):
    """``xp`` functions that copy a host array argument to the device (``unique``:
    it synchronizes, as its output size depends on the data)."""
    if isinstance(array, DeviceArray):
        array = array._array
        _check_reads(what, [array])
    else:
        array = np.asarray(array)
        _operation("to_device", what, [array])
    result = numpy_function(array, *args, **_unwrap_kwargs(kwargs, what))
    _operation(
        "array_op",
        what,
        nbytes=_sort_bytes(array, False) + _result_bytes(result),
        sync=numpy_function.__name__ in SYNCHRONIZING_FUNCTIONS,
    )
    return _wrap(result)


def _lexsort(keys):
    """``cupy.lexsort``: one 2-D device array of keys, the last row primary."""
    if not isinstance(keys, DeviceArray) or keys.ndim != 2:
        raise TypeError(
            "cupy.lexsort takes one 2-D device array of keys (xp.stack them), got "
            f"{type(keys).__name__}"
            f"{'' if not isinstance(keys, DeviceArray) else f' of ndim {keys.ndim}'}"
        )
    _check_reads("xp.lexsort()", [keys._array])
    n_keys, n_items = keys.shape
    nbytes = sort_bytes(n_items, n_keys * keys.itemsize, ARGSORT_INDEX_BYTES)
    _operation("array_op", "xp.lexsort()", nbytes=nbytes)
    return DeviceArray(np.lexsort(keys._array))


def _partition(array, kth, axis=-1):
    """``cupy.partition``: ``kth`` a Python int (a NumPy integer is refused)."""
    if not isinstance(kth, int):
        raise TypeError(f"cupy.partition needs kth as a Python int, got {type(kth).__name__}")
    values = _unwrap(array, "xp.partition()")
    _check_reads("xp.partition()", [values])
    _operation("array_op", "xp.partition()", nbytes=_sort_bytes(values, False))
    return _wrap(np.partition(values, kth, axis=axis))


def _searchsorted(array, values, side="left", sorter=None):
    """``cupy.searchsorted``: device arrays for ``a`` and (CuPy 13) for ``v``."""
    for what, value in (("a", array), ("v", values)):
        if not isinstance(value, DeviceArray):
            raise NotImplementedError(
                f"cupy.searchsorted: only device arrays are supported "
                f"for {what} (CuPy 13), got {type(value).__name__}"
            )
    if sorter is not None:
        sorter = _unwrap(sorter, "xp.searchsorted()")
    reads = [array._array, values._array] + ([sorter] if sorter is not None else [])
    _check_reads("xp.searchsorted()", reads)
    result = np.searchsorted(array._array, values._array, side=side, sorter=sorter)
    _operation("array_op", "xp.searchsorted()", reads, result.nbytes)
    return DeviceArray(result)


class _HostTensor:
    """A DLPack producer seen as host memory (what an emulated device tensor's capsule
    holds), for ``numpy.from_dlpack``."""

    def __init__(self, producer):
        self._producer = producer

    def __dlpack__(self, **kwargs):
        del kwargs  # numpy asks for host memory: the emulated device's is
        return self._producer.__dlpack__()

    def __dlpack_device__(self):
        return (DLPACK_CPU, 0)


def _from_dlpack(obj):
    """``cupy.from_dlpack``: a tensor on the (emulated) current CUDA device, without a
    copy; a tensor elsewhere is refused."""
    device_type, device_id = obj.__dlpack_device__()
    if device_type != DLPACK_CUDA:
        raise BufferError(
            f"from_dlpack: the tensor is on DLPack device type {device_type}, not a CUDA "
            f"device ({DLPACK_CUDA}); copy host data with xp.asarray"
        )
    if int(device_id) != current_device():
        raise ValueError(
            f"from_dlpack: the tensor resides on device {device_id}, but the current device "
            f"is {current_device()}"
        )
    _CURRENT.importing_dlpack = True
    try:
        return DeviceArray(np.from_dlpack(_HostTensor(obj)))
    finally:
        _CURRENT.importing_dlpack = False


#: ``xp`` functions with CuPy-specific argument rules.
SPECIAL_FUNCTIONS = {
    "lexsort": _lexsort,
    "partition": _partition,
    "searchsorted": _searchsorted,
    "from_dlpack": _from_dlpack,
}


def _asnumpy(array, stream=None, order="C", out=None):
    """``cupy.asnumpy``: device arrays copied to the host, anything else through
    ``numpy.asarray``."""
    del stream
    if isinstance(array, DeviceArray):
        return array.get(order=order, out=out)
    return np.asarray(array, order=order)


class _Namespace:
    """The emulated ``cupy`` module: NumPy's functions on device arrays (see the
    module docstring); dtypes and constants are NumPy's."""

    __name__ = "cupy"
    ndarray = DeviceArray
    asnumpy = staticmethod(_asnumpy)

    def __init__(self):
        self._cache = {}

    def get_array_module(self, *arrays):
        return self if any(isinstance(array, DeviceArray) for array in arrays) else np

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        if name in HOST_ONLY_FUNCTIONS or not hasattr(np, name):
            raise AttributeError(
                f"module 'cupy' has no attribute {name!r} (emulated device "
                "namespace: CuPy lacks it)"
            )
        value = getattr(np, name)
        if isinstance(value, np.ufunc):
            value = _EmulatedUfunc(value)
        elif isinstance(value, type) or not callable(value):
            pass  # dtypes, classes, constants: NumPy's own
        elif name in TRANSFER_FUNCTIONS:
            value = _numpy_backed(name, _transfer)
        elif name in LIKE_FUNCTIONS:
            value = _numpy_backed(name, _like)
        elif name in STABLE_SORTS:
            value = _numpy_backed(name, _sort)
        elif name in SPECIAL_FUNCTIONS:
            value = SPECIAL_FUNCTIONS[name]
        elif name in HOST_INPUT_FUNCTIONS:
            value = _numpy_backed(name, _host_input)
        else:
            value = _numpy_backed(name, _function)
        self._cache[name] = value
        return value

    def __repr__(self):
        return "<emulated device namespace 'cupy'>"


#: The ``xp`` of the CUDA backend under the emulation.
namespace = _Namespace()
register_device_array(DeviceArray, namespace)
