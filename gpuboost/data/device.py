"""Device-resident input: features that already live on a GPU.

A ``cupy.ndarray``, any object with ``__cuda_array_interface__`` (Numba, PyTorch, JAX
device arrays ...) or a ``__dlpack__`` tensor on a CUDA device, and a cuDF DataFrame
(numeric and ``category`` columns), are taken where they are (no copy where the layout
allows):
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
from ..core.array import (
    _is_cupy_array,
    _is_emulated_device_array,
    get_array_module,
    is_device_array,
    to_numpy,
)
from ..core.dtypes import X_DTYPE
from .categorical import AUTO, check_categories, dtype_code_table

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
    categories : list of (list or None) or None
        A cuDF DataFrame's category labels per column (its category columns are codes in
        :attr:`array`), as ``Dataset.categories``.
    """

    array: object
    mode: str
    device: int
    names: list = None
    categories: list = None

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


def device_features(X, categorical_features=AUTO, categories=None):
    """``X`` as :class:`DeviceFeatures` when it lives on a GPU (see the module
    docstring), else None.

    Parameters
    ----------
    X : object
    categorical_features : 'auto', None or list, default='auto'
        As for a Dataset: 'auto' takes a cuDF DataFrame's ``category`` columns; None
        refuses them (as for a pandas DataFrame); a list names columns, which device
        input cannot encode (ValueError).
    categories : list of (list or None), optional
        Stored labels (a model's or reference Dataset's): a cuDF DataFrame's category
        columns are re-coded by label against them.

    Raises
    ------
    TypeError
        A column that is neither numeric nor categorical; a device array of a dtype
        that is not a number.
    ValueError
        Not two-dimensional, or no row; listed categorical columns.
    """
    names, found = None, None
    if is_device_array(X):
        if categories is not None and any(labels is not None for labels in categories):
            raise ValueError(_STORED_CATEGORICAL)
        array, mode = X, CUPY if _is_cupy_array(X) else EMULATED
    elif _is_cudf_frame(X):
        names = [str(name) for name in X.columns]
        array, found = _cudf_features(X, categorical_features, categories)
        mode = EMULATED if _is_emulated_device_array(array) else CUPY
    elif is_device_input(X):
        if categories is not None and any(labels is not None for labels in categories):
            raise ValueError(_STORED_CATEGORICAL)
        mode = current_mode()
        xp = array_module(mode)
        array = xp.asarray(X) if hasattr(X, "__cuda_array_interface__") else xp.from_dlpack(X)
    else:
        return None
    if not _is_cudf_frame(X) and categorical_features not in (AUTO, None):
        raise ValueError(_LISTED_CATEGORICAL)
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
    return DeviceFeatures(array, mode, int(array.device.id), names, found)


#: Message of categorical columns named for device input.
_LISTED_CATEGORICAL = (
    "Categorical columns named by categorical_features need host input (a pandas "
    "DataFrame or an array); on a GPU, pass a cuDF DataFrame whose categorical columns "
    "have the 'category' dtype (categorical_features='auto')."
)


def _plain_dtype(dtype):
    """Whether ``dtype`` is a NumPy dtype (not an extension dtype such as 'category')."""
    try:
        np.dtype(dtype)
    except TypeError:
        return False
    return True


#: Message of a device array given where categorical columns are re-coded by label.
_STORED_CATEGORICAL = (
    "The model (or reference Dataset) has categorical features, which a device array "
    "cannot carry by label: pass a cuDF DataFrame whose categorical columns have the "
    "'category' dtype, or the data on the host."
)


def _is_category(dtype):
    return getattr(dtype, "name", None) == "category"


def _cudf_features(frame, categorical_features, categories):
    """A cuDF DataFrame as ``(float64 device matrix, categories)``: numeric columns as
    numbers (null: NaN), ``category`` columns as codes numbered as a pandas frame's are
    (by decreasing frequency, :func:`gpuboost.data.categorical.dtype_code_table`; or by
    label against stored ``categories``), on the device; ``categories`` the labels per
    column (None without a category column)."""
    if categorical_features not in (AUTO, None):
        raise ValueError(_LISTED_CATEGORICAL)
    dtypes = list(frame.dtypes.items())
    for column, dtype in dtypes:
        numeric = _plain_dtype(dtype) and np.dtype(dtype).kind in _NUMERIC_KINDS
        if not numeric and not (_is_category(dtype) and categorical_features == AUTO):
            raise TypeError(
                f"Column {column!r} of the cuDF DataFrame has dtype {dtype}, which is not "
                "numeric; category columns are read with categorical_features='auto', "
                "other columns must hold numbers."
            )
    if categories is not None and len(categories) != len(dtypes):
        categories = None  # the caller reports the wrong number of features
    stored = categories
    if not any(_is_category(dtype) for _, dtype in dtypes) and stored is None:
        return frame.to_cupy(dtype=X_DTYPE, na_value=np.nan), None
    columns, found = [], []
    for position, (column, dtype) in enumerate(dtypes):
        series = frame[column]
        labels = None if stored is None else stored[position]
        if not _is_category(dtype):
            if labels is not None:
                raise TypeError(
                    f"Column {column!r} is categorical in the model but has dtype {dtype} "
                    "here; give it the 'category' dtype."
                )
            columns.append(series.to_cupy(dtype=X_DTYPE, na_value=np.nan))
            found.append(None)
            continue
        codes = series.cat.codes.to_cupy(dtype=np.int64, na_value=-1)
        xp = get_array_module(codes)
        dtype_categories = list(series.cat.categories.to_pandas())
        present = codes >= 0
        counts = None
        if stored is None:
            counts = to_numpy(xp.bincount(codes[present], minlength=len(dtype_categories)))
        labels, table = dtype_code_table(dtype_categories, counts, labels)
        table = xp.asarray(np.append(table, np.nan))  # the missing rows' code: NaN
        columns.append(table[xp.where(present, codes, len(dtype_categories))])
        found.append(labels)
    xp = get_array_module(*columns)
    matrix = xp.ascontiguousarray(xp.stack(columns, axis=1))
    return matrix, (stored if stored is not None else check_categories(found, len(found)))


def host_vector(values):
    """Row metadata given as a device array, copied to the host; anything else as is."""
    if values is not None and is_device_input(values) and not _is_cudf_frame(values):
        if is_device_array(values):
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
