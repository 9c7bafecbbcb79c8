"""Device memory of the CUDA backend: what a training row costs, and out-of-memory errors.

Device memory per row
---------------------
What one training row costs on the GPU during training (``K`` = number of
outputs, 1 except for multi-class), see :func:`device_bytes_per_row`; the
temporaries are an estimate of the peak, the rest is exact:

==========================================================  =================
binned features (uint8, row-major, rows padded)             ``row_stride``
binned features, column-major copy (the row partition)      ``n_features``
label (float64, DeviceData's copy)                          8
sample weight (float64, when given)                         8
margins (float64 per output)                                8 K
gradients and hessians (float64 per output)                 16 K
quantized gradient and hessian (int32, one output)          8
sample indices (int32)                                      4
partition scratch (saved row int32 + go-left bit, ceil)      5
temporaries (quantization, row sampling, prediction)        up to 32
==========================================================  =================

``row_stride`` is :func:`gpuboost.backends.cuda.binned_rows.binned_row_stride`:
``n_features`` rounded up to whole 32-byte sectors when that adds at most a quarter of
it, else to 4 bytes (28 -> 32), so that a gathered row costs whole sectors.
For example 28 features, one output, no weights: 32 + 28 + 8 + 8 + 16 + 8 + 4 + 5
+ 32 = 141 bytes per row, about 1.4 GB for 10 million rows. Not per row: the
histograms, ``n_nodes x n_features x (max_bin + 1) x 24`` bytes per batch of
nodes (plus the parents' histograms kept for the subtraction trick). While the
data are binned, the raw float64 features are copied to the device in chunks of
at most :data:`gpuboost.backends.cuda.binning.BINNING_CHUNK_BYTES` and freed
afterwards. Every evaluation set other than the training set costs
``8 n_features + 8 K + 8`` bytes per row (raw features, margins, label) plus 8 with
weights. With ``tree_method='approx'`` the raw training features stay on the device
(``8 n_features`` more per row) and each tree is grown on its own binned copy
(``row_stride`` more, and ``n_features`` for its column-major copy). Exclusive feature
bundles (gpuboost.data.bundling) add the bundled matrix, ``n_bundles`` bytes per row
padded as the binned features (with ``max_conflict_rate > 0`` also a decoded copy of the
bins, ``row_stride``);
``tree_method='exact'`` adds an int32 rank per feature (``4 n_features``), plus the raw
features (``8 n_features``) when rows are subsampled.

Out of memory
-------------
A CUDA out-of-memory error inside the backend is re-raised as
:class:`gpuboost.errors.GpuOutOfMemoryError` (a ``MemoryError``) naming the data
shape, the bytes requested, the bytes per row and what to change
(:func:`out_of_memory_error`; every backend method is wrapped by
:func:`device_call`).
"""

import functools
import re

import numpy as np

from ...core.dtypes import GRAD_QUANT_DTYPE, SAMPLE_INDEX_DTYPE, X_BINNED_DTYPE
from ...errors import GpuOutOfMemoryError
from .binned_rows import binned_row_stride

__all__ = [
    "device_bytes_per_row",
    "HISTOGRAM_CELL_BYTES",
    "device_memory_info",
    "out_of_memory_error",
    "device_call",
]

# ---- device memory per row (bytes; see the module docstring) ----------------------
_FLOAT64_BYTES = np.dtype(np.float64).itemsize
#: DeviceData's copy, which the training loop uses directly (gpuboost/boosting/train.py).
_BYTES_LABEL = _FLOAT64_BYTES
_BYTES_WEIGHT = _FLOAT64_BYTES
_BYTES_MARGIN_PER_OUTPUT = _FLOAT64_BYTES
_BYTES_GRADIENT_PAIR_PER_OUTPUT = 2 * _FLOAT64_BYTES
_BYTES_QUANTIZED_PAIR = 2 * np.dtype(GRAD_QUANT_DTYPE).itemsize
_BYTES_SAMPLE_INDEX = np.dtype(SAMPLE_INDEX_DTYPE).itemsize
#: A saved row (int32) and a go-left bit (a uint32 mask per 32 rows), rounded up to bytes.
_BYTES_PARTITION_SCRATCH = np.dtype(SAMPLE_INDEX_DTYPE).itemsize + 1
_BYTES_TEMPORARIES = 4 * _FLOAT64_BYTES
#: Bytes of one histogram cell (three int64 sums).
HISTOGRAM_CELL_BYTES = 3 * np.dtype(np.int64).itemsize

#: Pattern of the requested size in CuPy's out-of-memory message.
_CUPY_REQUEST_PATTERN = re.compile(r"allocating ([\d,]+) bytes")


def device_bytes_per_row(n_features, n_outputs=1, has_weight=False):
    """Device memory one training row costs during training, itemized.

    Parameters
    ----------
    n_features : int
    n_outputs : int
        Trees per round (classes of a multi-class objective, else 1).
    has_weight : bool
        Whether the Dataset has sample weights.

    Returns
    -------
    parts : dict of str -> int
        Bytes per row of every per-row device array (see the module docstring);
        ``sum(parts.values())`` is the total.
    """
    return {
        "binned features": binned_row_stride(n_features) * np.dtype(X_BINNED_DTYPE).itemsize,
        "binned features by column": int(n_features) * np.dtype(X_BINNED_DTYPE).itemsize,
        "label": _BYTES_LABEL,
        "weight": _BYTES_WEIGHT if has_weight else 0,
        "margins": _BYTES_MARGIN_PER_OUTPUT * int(n_outputs),
        "gradients and hessians": _BYTES_GRADIENT_PAIR_PER_OUTPUT * int(n_outputs),
        "quantized gradient and hessian": _BYTES_QUANTIZED_PAIR,
        "sample indices": _BYTES_SAMPLE_INDEX,
        "partition scratch": _BYTES_PARTITION_SCRATCH,
        "temporaries": _BYTES_TEMPORARIES,
    }


def device_memory_info(cupy):
    """``(free, total)`` bytes of the current device, or None: no ``cupy`` module (the
    emulation), or the query failed (a device in a bad state)."""
    if cupy is None:
        return None
    try:
        return tuple(int(v) for v in cupy.cuda.runtime.memGetInfo())
    except Exception:  # the query itself may fail on a device in a bad state
        return None


def out_of_memory_error(
    action, error, device_ordinal, memory_info=None, data_shape=None, has_weight=False
):
    """A :class:`GpuOutOfMemoryError` for a failed allocation while ``action``.

    Parameters
    ----------
    action : str
        What the backend was doing ("building histograms").
    error : Exception
        CuPy's out-of-memory error (its message names the bytes requested).
    device_ordinal : int
    memory_info : (int, int), optional
        Free and total device bytes (:func:`device_memory_info`).
    data_shape : (int, int), optional
        ``(n_rows, n_features)`` of the training data, when known.
    has_weight : bool
        Whether the training data have sample weights.

    Returns
    -------
    GpuOutOfMemoryError
    """
    match = _CUPY_REQUEST_PATTERN.search(str(error))
    requested = int(match.group(1).replace(",", "")) if match else None
    requested_text = (
        f"{requested:,} bytes requested" if requested is not None else "allocation failed"
    )
    lines = [
        (
            f"CUDA out of memory while {action} on device cuda:{device_ordinal}: "
            f"{requested_text} ({error})."
        )
    ]
    if memory_info is not None:
        lines.append(f"Device memory: {memory_info[0]:,} bytes free of {memory_info[1]:,}.")
    bytes_per_row = None
    if data_shape is not None:
        n_rows, n_features = data_shape
        parts = device_bytes_per_row(n_features, 1, has_weight)
        bytes_per_row = sum(parts.values())
        itemized = ", ".join(f"{name} {size}" for name, size in parts.items() if size)
        lines.append(
            f"Training data: {n_rows:,} rows x {n_features} features; the CUDA backend "
            f"keeps about {bytes_per_row} bytes per row on the device ({itemized}; +24 per "
            f"extra output class), about {n_rows * bytes_per_row:,} bytes in all, plus "
            f"histograms of n_nodes x {n_features} x (max_bin + 1) x "
            f"{HISTOGRAM_CELL_BYTES} bytes."
        )
    lines.append(
        "To fit: train on fewer rows (subsample the data), use a lower max_bin "
        "(smaller histograms), free other GPU memory "
        "(gpuboost.backends.release_memory(), other processes), or train with "
        "device='cpu'."
    )
    return GpuOutOfMemoryError(
        " ".join(lines),
        action=action,
        requested_bytes=requested,
        bytes_per_row=bytes_per_row,
        data_shape=data_shape,
    )


def device_call(action):
    """Decorator of backend methods: run on the backend's device and turn a CUDA
    out-of-memory error into :class:`GpuOutOfMemoryError` describing ``action``.

    The backend provides ``_device_context()``, ``_out_of_memory_errors`` (the
    exception types to convert) and ``_out_of_memory(action, error)``.
    """

    def decorate(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            with self._device_context():
                try:
                    return method(self, *args, **kwargs)
                except self._out_of_memory_errors as error:
                    raise self._out_of_memory(action, error) from error

        return wrapper

    return decorate
