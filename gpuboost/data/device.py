"""Device-resident input: features that already live on a GPU.

A ``cupy.ndarray``, any object with ``__cuda_array_interface__`` (Numba, PyTorch, JAX
device arrays ...) or a ``__dlpack__`` tensor on a CUDA device, and a cuDF DataFrame
of numeric columns, are taken where they are (no copy where the layout allows):
:class:`~gpuboost.data.dataset.Dataset` keeps them on their device, its bin edges are
computed there (:func:`gpuboost.backends.cuda.binning.device_bin_edges`) and a CUDA
training bins them there, so the features never cross to the host; predictions of such
input are device arrays (``Booster.predict``). Under the emulation
(``GPUBOOST_EMULATE_CUDA=1``) the emulated device arrays, and objects exporting their
memory through either protocol, are device input the same way.

Row metadata (labels, weights, groups, base margins) given as device arrays is copied to
the host: it is a column, not the matrix, and the host validates it.
"""

from dataclasses import dataclass

import numpy as np

from ..backends.cuda.launch import CUPY, EMULATED, array_module, current_mode
from ..core.array import _is_cupy_array, _is_emulated_device_array, to_numpy
from ..core.dtypes import X_DTYPE

__all__ = [
    "DeviceFeatures",
    "device_features",
    "is_device_input",
    "host_vector",
    "training_device",
    "DLPACK_CUDA_DEVICES",
]

#: ``__dlpack_device__()`` device types of CUDA memory (kDLCUDA, kDLCUDAManaged).
DLPACK_CUDA_DEVICES = (2, 13)
#: dtype kinds of numeric device features: bool, signed and unsigned int, float.
_NUMERIC_KINDS = "biuf"


@dataclass
class DeviceFeatures:
    """Features on a device.

    Attributes
    ----------
    array : device array of shape (n_rows, n_features), float32 or float64
        CuPy's, or the emulation's (``mode``); float32 stays float32, other numbers are
        converted to float64 on the device.
    mode : {'cupy', 'emulated'}
        Whose arrays (:mod:`gpuboost.backends.cuda.launch`).
    device : int
        The device the array lives on.
    names : list of str or None
        A cuDF DataFrame's column names.
    """

    array: object
    mode: str
    device: int
    names: list = None

    @property
    def xp(self):
        """The array module of :attr:`array`."""
        return array_module(self.mode)

    def to_host(self):
        """A host copy (the features' dtype), for a CPU training or prediction."""
        return to_numpy(self.array)


def _is_cudf_frame(X):
    return type(X).__module__.startswith("cudf") and hasattr(X, "to_cupy")


def is_device_input(X):
    """Whether :func:`device_features` takes ``X`` (without converting it)."""
    if _is_cupy_array(X) or _is_emulated_device_array(X) or _is_cudf_frame(X):
        return True
    if hasattr(X, "__cuda_array_interface__"):
        return True
    dlpack_device = getattr(X, "__dlpack_device__", None)
    return dlpack_device is not None and dlpack_device()[0] in DLPACK_CUDA_DEVICES


def device_features(X):
    """``X`` as :class:`DeviceFeatures` when it lives on a GPU (see the module
    docstring), else None.

    Raises
    ------
    TypeError
        A cuDF DataFrame with a column that is not numeric; a device array of a dtype
        that is not a number.
    ValueError
        Not two-dimensional, or no row.
    """
    names = None
    if _is_cupy_array(X):
        array, mode = X, CUPY
    elif _is_emulated_device_array(X):
        array, mode = X, EMULATED
    elif _is_cudf_frame(X):
        array, mode, names = _cudf_features(X), CUPY, [str(name) for name in X.columns]
    elif is_device_input(X):
        mode = current_mode()
        xp = array_module(mode)
        array = xp.asarray(X) if hasattr(X, "__cuda_array_interface__") else xp.from_dlpack(X)
    else:
        return None
    if array.ndim != 2:
        raise ValueError(
            f"X must be 2-dimensional (n_rows, n_features), got a device array of shape "
            f"{tuple(array.shape)}."
        )
    if array.shape[0] == 0:
        raise ValueError(f"X has no rows (shape {tuple(array.shape)}).")
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"X is a device array of dtype {array.dtype}, which is not numeric; pass "
            "numbers (float32 stays float32, others become float64 on the device)."
        )
    if array.dtype != np.float32 and array.dtype != X_DTYPE:
        array = array.astype(X_DTYPE)
    return DeviceFeatures(array, mode, int(array.device.id), names)


def _cudf_features(frame):
    """A cuDF DataFrame's numeric columns as one float64 CuPy matrix (null: NaN)."""
    for column, dtype in frame.dtypes.items():
        if np.dtype(dtype).kind not in _NUMERIC_KINDS if _plain_dtype(dtype) else True:
            raise TypeError(
                f"Column {column!r} of the cuDF DataFrame has dtype {dtype}, which is not "
                "numeric; device input takes numeric columns (encode categories as codes, "
                "or pass a pandas DataFrame for gpuboost to encode them)."
            )
    return frame.to_cupy(dtype=X_DTYPE, na_value=np.nan)


def _plain_dtype(dtype):
    try:
        np.dtype(dtype)
    except TypeError:
        return False
    return True


def host_vector(values):
    """Row metadata given as a device array, copied to the host; anything else as is."""
    if values is not None and is_device_input(values) and not _is_cudf_frame(values):
        if _is_cupy_array(values) or _is_emulated_device_array(values):
            return to_numpy(values)
        xp = array_module(current_mode())
        converted = (
            xp.asarray(values)
            if hasattr(values, "__cuda_array_interface__")
            else xp.from_dlpack(values)
        )
        return to_numpy(converted)
    if values is not None and _is_cudf_frame(values):
        return values.to_pandas()
    return values


def training_device(device, features):
    """The ``device`` a training or prediction on ``features`` (:class:`DeviceFeatures`,
    or None for host data) runs on: the features' own device for ``'auto'`` and
    ``'cuda'``; ``device`` otherwise.

    Raises
    ------
    ValueError
        ``device='cuda:N'`` for features on another device (CuPy arrays are used on
        their own device only).
    """
    if features is None:
        return device
    if device.startswith("gpu"):
        device = "cuda" + device[3:]
    own = f"cuda:{features.device}"
    if device in ("auto", "cuda"):
        return own
    if device.startswith("cuda") and device != own:
        raise ValueError(
            f"The features live on {own}, but device={device!r}: pass device={own!r} (or "
            "'cuda' / 'auto' for the features' device), or move the data to that device."
        )
    return device
