"""The device layout of the row-major binned matrix (``DeviceData.arrays['X_binned']``),
owned here: the upload (:mod:`.binning`, ``CudaBackend.binned_layout``) allocates it with
:func:`empty_binned`, and the host code of every kernel reading it row-major (histogram,
row scan, binned prediction) passes it with :func:`kernel_rows`.

Layout. Row ``r`` of an ``(n_rows, n_features)`` uint8 matrix starts at byte
``r * row_stride`` of one ``(n_rows, row_stride)`` allocation (:func:`binned_row_stride`);
the bytes past ``n_features`` in a row are padding, zeroed when the matrix is made and
never written after: kernels that load a row's bins in 4-byte words (the histogram and
row-scan kernels, :func:`word_rows`) read them with the row's last features and drop them.
``DeviceData.arrays['X_binned']`` is the ``(n_rows, n_features)`` view of it (strides
``(row_stride, 1)``), so array-module code indexes it as before.

Why. Deep in a tree a node's rows are scattered over the matrix and every gathered row
costs the whole 32-byte sectors it touches (a GPU moves sectors). With 28 features and a
28-byte stride, row ``r`` starts at ``28 r mod 32`` (a multiple of 4) and straddles two
sectors 3 times in 4 (1.75 sectors a row); with a 32-byte stride it is one sector. The
stride is rounded up to whole sectors when that adds at most a quarter of the row
(28 -> 32, 103 -> 128), else to 4 bytes (a row then starts on a 4-byte word: 20 -> 20,
100 -> 100, 1 -> 4).
The device memory per row is :func:`binned_row_stride` bytes, not ``n_features``
(:mod:`.memory`).
"""

import numpy as np

from ...core.dtypes import X_BINNED_DTYPE
from .launch import ceil_div

__all__ = [
    "binned_row_stride",
    "empty_binned",
    "lay_out_binned",
    "kernel_rows",
    "word_rows",
    "ROW_SECTOR_BYTES",
    "ROW_WORD_BYTES",
]

#: A global-memory sector (the unit a gathered row costs on a GPU).
ROW_SECTOR_BYTES = 32
#: The smallest row alignment (a 32-bit word).
ROW_WORD_BYTES = 4
#: Padding to whole sectors is taken when it adds at most 1 / this of the row.
_MAX_PADDING_PARTS = 4


def binned_row_stride(n_features):
    """Bytes from one row of the device's binned matrix to the next.

    ``n_features`` rounded up to a multiple of :data:`ROW_SECTOR_BYTES` when that adds at
    most a quarter of ``n_features``, else to a multiple of :data:`ROW_WORD_BYTES`
    (0 for no feature).

    Parameters
    ----------
    n_features : int

    Returns
    -------
    int
    """
    n_features = int(n_features)
    whole_sectors = ceil_div(n_features, ROW_SECTOR_BYTES) * ROW_SECTOR_BYTES
    if (whole_sectors - n_features) * _MAX_PADDING_PARTS <= n_features:
        return whole_sectors
    return ceil_div(n_features, ROW_WORD_BYTES) * ROW_WORD_BYTES


def empty_binned(xp, n_rows, n_features):
    """An uninitialised binned matrix in the device layout.

    Returns
    -------
    X_binned : xp array of shape (n_rows, n_features), uint8  # OUT
        The first ``n_features`` columns of a new C-ordered ``(n_rows,
        binned_row_stride(n_features))`` array (a view; strides ``(row_stride, 1)``); its
        padding columns are zero, the others uninitialised.
    """
    row_stride = binned_row_stride(n_features)
    rows = xp.empty((int(n_rows), row_stride), dtype=X_BINNED_DTYPE)
    if row_stride > int(n_features):
        rows[:, int(n_features) :] = 0  # read as the rest of a row's last word, never used
    return rows[:, : int(n_features)]


def _address(array):
    """Device address of the first element of ``array`` (CuPy or emulated)."""
    return int(array.__cuda_array_interface__["data"][0])


def _padded_base(xp, X_binned):
    """The ``(n_rows, row_stride)`` allocation whose first columns ``X_binned`` is (the
    layout :func:`empty_binned` makes), or None."""
    rows = X_binned.base
    if rows is None or not isinstance(rows, xp.ndarray) or rows.dtype != X_BINNED_DTYPE:
        return None
    n_rows, n_features = X_binned.shape
    if (
        rows.ndim != 2
        or not rows.flags.c_contiguous
        or rows.shape[0] != n_rows
        or rows.shape[1] < n_features
        or X_binned.strides != (rows.shape[1], 1)
        or _address(X_binned) != _address(rows)
    ):
        return None
    return rows


def lay_out_binned(xp, X_binned):
    """``X_binned`` (any uint8 ``(n_rows, n_features)`` device array) in the device
    layout: itself when it already is, else a copy into :func:`empty_binned`.

    Returns
    -------
    xp array of shape (n_rows, n_features), uint8  # OUT
    """
    n_rows, n_features = X_binned.shape
    row_stride = binned_row_stride(n_features)
    base = _padded_base(xp, X_binned)
    if base is not None and base.shape[1] == row_stride:
        return X_binned
    if X_binned.flags.c_contiguous and n_features == row_stride:
        return X_binned
    laid_out = empty_binned(xp, n_rows, n_features)
    laid_out[...] = X_binned
    return laid_out


def kernel_rows(xp, X_binned):
    """The C-contiguous array a kernel reading ``X_binned`` row-major takes, and its row
    stride: row ``r``, feature ``f`` is byte ``r * row_stride + f`` of it.

    Parameters
    ----------
    xp : module
    X_binned : xp array of shape (n_rows, n_features), uint8  # IN
        C-contiguous (stride ``n_features``, e.g. a test's array), or the device layout
        (:func:`empty_binned`; its allocation and stride are passed, no copy).

    Returns
    -------
    rows : xp array of shape (n_rows, row_stride), uint8, C order
    row_stride : int

    Raises
    ------
    TypeError
        Not an ``xp`` uint8 array with 2 dimensions.
    ValueError
        Neither C-contiguous nor the device layout.
    """
    if not isinstance(X_binned, xp.ndarray):
        raise TypeError(
            f"X_binned must be a {xp.__name__} array (a device array), "
            f"got {type(X_binned).__name__}."
        )
    if X_binned.dtype != X_BINNED_DTYPE or X_binned.ndim != 2:
        raise TypeError(
            f"X_binned must be a {np.dtype(X_BINNED_DTYPE).name} array with 2 dimension(s), "
            f"got {X_binned.dtype} of shape {X_binned.shape}."
        )
    if X_binned.flags.c_contiguous:
        return X_binned, int(X_binned.shape[1])
    base = _padded_base(xp, X_binned)
    if base is None:
        raise ValueError(
            f"X_binned must be C-contiguous or in the padded device layout "
            f"(binned_rows.empty_binned), got an array of shape {X_binned.shape} with "
            f"strides {X_binned.strides}."
        )
    return base, int(base.shape[1])


def word_rows(xp, X_binned):
    """:func:`kernel_rows` for kernels that load a row's bins in 4-byte words
    (``cuda/histogram_shared.cuh``: ``shared_histogram_add_rows``): the array and its row
    stride, both multiples of :data:`ROW_WORD_BYTES` (the device layout always is; a
    C-contiguous matrix whose stride or address is not, e.g. a test's, is copied into the
    layout first).

    Returns
    -------
    rows : xp array of shape (n_rows, row_stride), uint8, C order
    row_stride : int
    """
    rows, row_stride = kernel_rows(xp, X_binned)
    if row_stride % ROW_WORD_BYTES or _address(rows) % ROW_WORD_BYTES:
        X_binned = lay_out_binned(xp, X_binned)
        rows, row_stride = kernel_rows(xp, X_binned)
    base = _padded_base(xp, X_binned)  # one row of the layout is C-contiguous as a view
    if base is not None and row_stride % ROW_WORD_BYTES:
        rows, row_stride = base, int(base.shape[1])
    return rows, row_stride
