"""initcheck for emulated device arrays: which bytes of device memory nothing wrote.

Under ``GPUBOOST_SANITIZE=...initcheck`` an array made by ``xp.empty`` or
``xp.empty_like`` is filled with :data:`~.sanitizer.POISON_BYTE` and gets a *shadow*:
one flag per byte of its memory, set when an array operation or a kernel writes the byte.
Reading a byte whose flag is not set (an array operation, a copy to the host, a kernel)
raises :class:`~.sanitizer.SanitizerError` naming where the array was made. Shadows
belong to the memory (the array that owns it), so views of a tracked array are tracked
too; a shadow is dropped once every byte was written, after which its array costs
nothing.

Only ``empty`` memory is tracked: every other operation returns fully written memory.
"""

import os
import sys
import weakref

import numpy as np

from .sanitizer import POISON_BYTE, SanitizerError, enabled_checks

__all__ = [
    "track_uninitialized",
    "tracking",
    "check_read",
    "mark_written",
    "initialized_bytes",
    "store_initialized_bytes",
    "root_of",
]

#: id(owner array) -> _Shadow of the arrays being tracked.
_shadows = {}
#: Folders whose frames are not where an array was made or read: this package, NumPy.
_SKIPPED_DIRS = (
    os.path.dirname(os.path.abspath(__file__)),
    os.path.dirname(os.path.abspath(np.__file__)),
)


class _Shadow:
    __slots__ = ("owner", "written", "origin", "__weakref__")

    def __init__(self, owner, origin):
        key = id(owner)
        self.owner = weakref.ref(owner, lambda _: _shadows.pop(key, None))
        self.written = np.zeros(owner.nbytes, dtype=np.bool_)
        self.origin = origin


def root_of(array):
    """The array that owns the memory of ``array`` (walking ``.base``)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _caller():
    """``file:line in function`` of the first caller outside this package and NumPy."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_SKIPPED_DIRS):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def tracking():
    """Whether any array is being tracked (cheap: the test of every array operation)."""
    return bool(_shadows)


def track_uninitialized(array, what):
    """Poison ``array`` (new memory from ``what``, e.g. ``"xp.empty"``) and track it when
    initcheck is on; otherwise do nothing."""
    if "initcheck" not in enabled_checks() or array.nbytes == 0:
        return
    owner = root_of(array)
    owner.reshape(-1, order="A").view(np.uint8)[...] = POISON_BYTE
    _shadows[id(owner)] = _Shadow(owner, f"{what} at {_caller()}")


def _shadow_view(shadow, array):
    """The written-flags of ``array``'s bytes, shape ``array.shape + (itemsize,)``."""
    owner = shadow.owner()
    offset = array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return np.lib.stride_tricks.as_strided(
        shadow.written[offset:],
        shape=array.shape + (array.itemsize,),
        strides=array.strides + (1,),
        writeable=True,
    )


def _element_key(key):
    """``key`` (an index of the array) as an index of its written-flags, whose last axis
    is the element's bytes: a full slice appended, so that an Ellipsis in ``key`` spans
    the array's axes only (``array[i, ..., j]``: ``j`` the array's last axis, not the
    bytes')."""
    return (key if isinstance(key, tuple) else (key,)) + (slice(None),)


def _shadow_of(array):
    if not _shadows or not isinstance(array, np.ndarray):
        return None
    return _shadows.get(id(root_of(array)))


def check_read(array, what, key=None):
    """Raise :class:`SanitizerError` if ``what`` reads bytes of ``array`` (the elements
    ``array[key]``, all when ``key`` is None) that nothing wrote."""
    shadow = _shadow_of(array)
    if shadow is None:
        return
    flags = _shadow_view(shadow, array)
    if key is not None:
        flags = flags[_element_key(key)]
    written = flags.all(axis=-1)
    if written.all():
        return
    missing = np.argwhere(~written)
    raise SanitizerError(
        f"initcheck: {what} at {_caller()} reads {len(missing)} element(s) of an array "
        f"never written (first at index {tuple(int(i) for i in missing[0])}); the memory "
        f"comes from {shadow.origin}. Write every element before reading it, or make the "
        "array with xp.zeros / xp.full."
    )


def mark_written(array, key=None):
    """Record that ``array[key]`` (all of ``array`` when ``key`` is None) was written."""
    shadow = _shadow_of(array)
    if shadow is None:
        return
    flags = _shadow_view(shadow, array)
    if key is None:
        flags[...] = True
    else:
        flags[_element_key(key)] = True
    if shadow.written.all():
        _shadows.pop(id(shadow.owner()), None)


def initialized_bytes(array, start, nbytes):
    """Written-flags (uint8, 1 = written) of the ``nbytes`` bytes starting at address
    ``start`` inside ``array``'s memory, or None when all of them were written."""
    shadow = _shadow_of(array)
    if shadow is None:
        return None
    owner = shadow.owner()
    offset = start - owner.__array_interface__["data"][0]
    flags = shadow.written[offset : offset + nbytes]
    if flags.all():
        return None
    return np.ascontiguousarray(flags, dtype=np.uint8)


def store_initialized_bytes(array, start, flags):
    """Record the written-flags ``flags`` (uint8, from a kernel launch) of the bytes
    starting at address ``start`` inside ``array``'s memory."""
    shadow = _shadow_of(array)
    if shadow is None:
        return
    owner = shadow.owner()
    offset = start - owner.__array_interface__["data"][0]
    shadow.written[offset : offset + len(flags)] |= flags.astype(np.bool_)
    if shadow.written.all():
        _shadows.pop(id(owner), None)
