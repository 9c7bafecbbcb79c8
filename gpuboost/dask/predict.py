"""``gpuboost.dask.predict``: a lazy, partition-parallel prediction of a Dask collection.

Each partition is predicted where it lives by :meth:`Booster.predict` (the worker's
backend), so the values are those of a single-node prediction of the same rows; no
partition comes to the client until the result is computed.
"""

import numpy as np

from ..model.booster import Booster
from .dataset import DaskDataset, _as_dask_array
from .worker import host_array

__all__ = ["predict"]


def _predict_block(block, booster, kwargs):
    return booster.predict(host_array(block), **kwargs)


def predict(client, booster, X, **kwargs):
    """Predict every row of ``X`` lazily, one task per partition.

    Parameters
    ----------
    client : distributed.Client
        Unused but for symmetry with :func:`gpuboost.dask.train` (the collection's
        own scheduler runs the tasks).
    booster : Booster
    X : dask.array of shape (n_rows, n_features), dask.dataframe.DataFrame, or DaskDataset
    **kwargs
        As :meth:`Booster.predict` (``output_margin``, ``iteration_range``, ``pred_leaf``,
        ``pred_contribs``, ...).

    Returns
    -------
    dask.array
        Shaped as :meth:`Booster.predict`'s result, chunked by X's row partitions.
    """
    if not isinstance(booster, Booster):
        raise TypeError(f"booster must be a gpuboost.Booster, got {type(booster).__name__}.")
    if isinstance(X, DaskDataset):
        X = X._persisted["X"]
    X = _as_dask_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_rows, n_features), got {X.ndim} dimension(s).")
    X = X.rechunk({1: -1})
    # The result's shape per row, from an empty prediction (no data moves).
    empty = booster.predict(np.zeros((0, int(X.shape[1]))), **kwargs)
    trailing = empty.shape[1:]
    chunks = (X.chunks[0],) + tuple((size,) for size in trailing)
    return X.map_blocks(
        _predict_block,
        booster,
        kwargs,
        dtype=empty.dtype,
        chunks=chunks,
        drop_axis=[] if len(trailing) == 1 else [1],
        new_axis=list(range(2, 1 + len(trailing))) if len(trailing) > 1 else None,
    )
