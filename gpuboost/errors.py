"""The exceptions gpuboost raises beyond the built-in ones, in one place.

Bad input and bad parameters raise ``ValueError`` / ``TypeError`` with a message
naming the problem; the classes here are for conditions of the machine.
:func:`value_repr` formats a value for such a message.
"""

import numpy as np

__all__ = ["DeviceUnavailableError", "GpuSelfCheckError", "GpuOutOfMemoryError", "value_repr"]


def _plain(value):
    """``value`` with NumPy scalars (also inside tuples and lists) as Python scalars."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(item) for item in value)
    return value


def value_repr(value):
    """``repr`` of a value for an error message: NumPy scalars print as plain numbers
    (``-1.0``, not ``np.float64(-1.0)``), also inside tuples and lists."""
    return repr(_plain(value))


class DeviceUnavailableError(RuntimeError):
    """``device='cuda'`` was asked for but no usable GPU (or CuPy) is there."""


class GpuSelfCheckError(DeviceUnavailableError):
    """The CUDA backend gave another result than the NumPy backend in its self-check
    (gpuboost.backends.cuda.selfcheck): this GPU (or this build) is not to be trusted.

    Attributes
    ----------
    step : str
        The primitive (and its kernel file) or the training that differed.
    detail : str
        What differed, or the exception raised.
    """

    def __init__(self, step, detail, device_ordinal=0):
        super().__init__(
            f"The CUDA backend failed its self-check on cuda:{device_ordinal} at {step}: "
            f"{detail}. Its models would differ from the CPU backend's. This is a bug: "
            f"please report it with the output of `gpuboost doctor` (docs/guide/bugs.md), "
            f"and use device='cpu' meanwhile."
        )
        self.step = step
        self.detail = detail


class GpuOutOfMemoryError(MemoryError):
    """The GPU ran out of memory inside the CUDA backend.

    Attributes
    ----------
    action : str
        What the backend was doing.
    requested_bytes : int or None
        Size of the allocation that failed (when CuPy reported it).
    bytes_per_row : int or None
        Device bytes one training row costs
        (``gpuboost.backends.cuda.memory.device_bytes_per_row``), when the training data
        are known.
    data_shape : tuple of int or None
        ``(n_rows, n_features)`` of the training data, when known.
    """

    def __init__(
        self, message, action=None, requested_bytes=None, bytes_per_row=None, data_shape=None
    ):
        super().__init__(message)
        self.action = action
        self.requested_bytes = requested_bytes
        self.bytes_per_row = bytes_per_row
        self.data_shape = data_shape
