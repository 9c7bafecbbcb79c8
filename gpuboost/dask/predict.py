"""``gpuboost.dask.predict``: a lazy, partition-parallel prediction of a Dask collection.

Each partition is predicted where it lives by :meth:`Booster.predict` (the worker's
backend), so the values are those of a single-node prediction of the same rows; no
partition comes to the client until the result is computed.
"""

import numpy as np

from ..data.dataset import Dataset
from ..model.booster import Booster
from .dataset import DaskDataset, _as_dask_array
from .worker import host_array

__all__ = ["predict"]


def _codes_dataset(values, categories, feature_names):
    """A DaskDataset's partition (its categorical columns as its codes) as a Dataset
    with those categories, so that :meth:`Booster.predict` maps the codes to the model's
    by label (``Booster._check_features``)."""
    dataset = Dataset(values, categorical_features=None, feature_names=feature_names)
    dataset.categories = categories
    return dataset


def _predict_block(block, booster, kwargs, codes_of=None):
    """Predict one partition: a pandas DataFrame as it is (categorical columns re-coded
    by label by the Booster), a DaskDataset's codes through :func:`_codes_dataset`,
    anything else as a host array."""
    if codes_of is not None:
        block = _codes_dataset(host_array(block), *codes_of)
    elif not hasattr(block, "columns"):
        block = host_array(block)
    return booster.predict(block, **kwargs)


def _predict_frame(booster, frame, kwargs, empty):
    """A dask DataFrame predicted partition by partition on its pandas partitions
    (categorical columns re-coded by label by the Booster, as on one machine): a dask
    array of unknown partition lengths (``compute_chunk_sizes()`` finds them)."""
    return frame.map_partitions(_predict_block, booster, kwargs, meta=empty)


def predict(client, booster, X, **kwargs):
    """Predict every row of ``X`` lazily, one task per partition.

    Parameters
    ----------
    client : distributed.Client
        Unused but for symmetry with :func:`gpuboost.dask.train` (the collection's own
        scheduler runs the tasks).
    booster : Booster
    X : dask.array of shape (n_rows, n_features), dask.dataframe.DataFrame, or DaskDataset
        A DataFrame's categorical columns (pandas ``category`` or strings) are re-coded
        by label against the model's categories on the workers, as
        :meth:`Booster.predict` does; a DaskDataset's codes are mapped by label from its
        own categories.
    **kwargs
        As :meth:`Booster.predict` (``output_margin``, ``iteration_range``, ``pred_leaf``,
        ``pred_contribs``, ...).

    Returns
    -------
    dask.array
        Shaped as :meth:`Booster.predict`'s result, chunked by X's row partitions (of
        unknown lengths for a DataFrame: ``compute_chunk_sizes()`` finds them).
    """
    if not isinstance(booster, Booster):
        raise TypeError(f"booster must be a gpuboost.Booster, got {type(booster).__name__}.")
    codes_of = None
    if isinstance(X, DaskDataset):
        if X.categories is not None:
            codes_of = (X.categories, X.feature_names if X.has_feature_names else None)
        X = X._persisted["X"]
    n_features = int(X.shape[1]) if X.ndim == 2 else 0
    # The result's shape per row, from an empty prediction (no data moves).
    empty = booster.predict(np.zeros((0, n_features)), **kwargs)
    if hasattr(X, "dtypes"):  # a dask DataFrame: its pandas partitions, columns by name
        return _predict_frame(booster, X, kwargs, empty)
    X = _as_dask_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_rows, n_features), got {X.ndim} dimension(s).")
    X = X.rechunk({1: -1})
    trailing = empty.shape[1:]
    chunks = (X.chunks[0],) + tuple((size,) for size in trailing)
    return X.map_blocks(
        _predict_block,
        booster,
        kwargs,
        codes_of,
        dtype=empty.dtype,
        chunks=chunks,
        drop_axis=[] if len(trailing) == 1 else [1],
        new_axis=list(range(2, 1 + len(trailing))) if len(trailing) > 1 else None,
    )
