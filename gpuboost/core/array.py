"""Array-module dispatch between NumPy and CuPy.

Backend-agnostic code receives arrays that live either on the host (NumPy) or
on the device (CuPy) and works through the namespace returned by
:func:`get_array_module`, using only functions both libraries provide.
CuPy is imported lazily, and only when a CuPy array is actually passed, so
that this module works on machines without CuPy.
"""

from typing import Any

import numpy as np

#: A backend array: ``numpy.ndarray``, ``cupy.ndarray`` or an emulated device array
#: (for type hints of array-module-generic code; not checked at run time).
ArrayLike = Any

#: Prefix of ``type(a).__module__`` for CuPy arrays (e.g. ``'cupy'`` or
#: ``'cupy._core.core'``).
_CUPY_MODULE_PREFIX = "cupy"
#: Device array types other than ``cupy.ndarray``, with their array namespace: the CPU
#: emulation's stand-in registers itself when its module is imported
#: (:func:`register_device_array`), so that this bottom layer never imports a backend.
#: No such array can exist before its module is imported.
_REGISTERED_DEVICE_ARRAYS = {}


def register_device_array(array_type, namespace):
    """Make :func:`is_device_array` true for instances of ``array_type`` and
    :func:`get_array_module` return ``namespace`` for them."""
    _REGISTERED_DEVICE_ARRAYS[array_type] = namespace


def _is_emulated_device_array(array):
    """True for the CPU emulation's stand-in for ``cupy.ndarray`` (the one registered
    device array type)."""
    return _registered_namespace(array) is not None


def _registered_namespace(array):
    """The namespace registered for ``array``'s type (or a base of it), else None."""
    for array_type, namespace in _REGISTERED_DEVICE_ARRAYS.items():
        if isinstance(array, array_type):
            return namespace
    return None


def _is_cupy_array(array):
    """Return True when ``array`` is a ``cupy.ndarray``.

    The test looks at the type's module name first so that CuPy is never
    imported for NumPy arrays, Python lists or None.
    """
    if not type(array).__module__.startswith(_CUPY_MODULE_PREFIX):
        return False
    import cupy

    return isinstance(array, cupy.ndarray)


def is_device_array(array):
    """Whether ``array`` is a ``cupy.ndarray`` or an emulated device array."""
    return _is_cupy_array(array) or _is_emulated_device_array(array)


def get_array_module(*arrays):
    """Return the array namespace (``numpy`` or ``cupy``) of the given arrays.

    Parameters
    ----------
    *arrays : array-like or None
        Arrays of any shape. ``None`` entries and non-array objects (lists,
        scalars) are ignored.

    Returns
    -------
    xp : module
        ``cupy`` when at least one argument is a ``cupy.ndarray``; the emulated
        device namespace for the emulation's device arrays; else ``numpy``.
    """
    for array in arrays:
        if _is_cupy_array(array):
            import cupy

            return cupy
        registered = _registered_namespace(array)
        if registered is not None:
            return registered
    return np


def to_numpy(array):
    """Return ``array`` as a NumPy array on the host.

    Parameters
    ----------
    array : array-like
        A ``cupy.ndarray`` or an emulated device array (copied to the host with
        ``.get()``) or anything ``numpy.asarray`` accepts (returned without a
        copy when possible).

    Returns
    -------
    host_array : numpy.ndarray
        Same shape and dtype as ``array``.
    """
    if _is_cupy_array(array) or _is_emulated_device_array(array):
        return array.get()
    return np.asarray(array)
