"""``DaskDataset``: training or evaluation data held as partitions on Dask workers.

The collections are persisted on the cluster and stay there: a DaskDataset holds
futures of its row partitions (features, label, weight, base margin), their global
row offsets and the worker holding each. Only two things ever come to the client:
the rows of the binning sample (the rows a single-node
:class:`~gpuboost.data.dataset.Dataset` would sample, chosen by global row id,
:meth:`DaskDataset.bind_binning`), and, when the objective's base margin is computed
from the labels (no ``base_score``, no ``base_margin``), the label and weight columns
(the base margin is a float sum over all rows, computed exactly as on one machine).
"""

import numpy as np

from ..core.dtypes import X_DTYPE
from ..core.segments import offsets
from ..data.categorical import (
    AUTO,
    array_categorical_columns,
    category_counts,
    encode_features,
    frame_categorical_columns,
    merge_category_counts,
)
from ..data.convert import (
    check_feature_names,
    check_feature_weights,
    check_group,
    check_label_choice,
    default_feature_names,
    group_sizes_from_runs,
    merge_qid_runs,
    qid_runs,
)
from ..data.dataset import bound_bin_mapper, set_categorical_edges
from .comm import DEFAULT_TIMEOUT_SECONDS
from .worker import host_array, take_rows

__all__ = ["DaskDataset"]


def _dask_modules():
    try:
        import dask.array as da
        import distributed
    except ImportError as error:  # pragma: no cover - the extra is installed in CI
        raise ImportError(
            "gpuboost.dask needs Dask and distributed: pip install 'gpuboost[dask]'."
        ) from error
    return da, distributed


def _as_dask_array(value, name, row_chunks=None):
    """A dask array of a dask array / DataFrame / Series (or a NumPy array, chunked
    like the features' rows)."""
    da, _ = _dask_modules()
    if hasattr(value, "to_dask_array"):
        value = value.to_dask_array(lengths=True)
    elif isinstance(value, np.ndarray):
        if row_chunks is None:
            raise TypeError(f"{name} must be a dask.array or dask.dataframe collection.")
        chunks = (row_chunks,) + tuple((size,) for size in value.shape[1:])
        value = da.from_array(value, chunks=chunks)
    elif not isinstance(value, da.Array):
        raise TypeError(
            f"{name} must be a dask.array or dask.dataframe collection, got {type(value).__name__}."
        )
    if any(np.isnan(size) for size in value.chunks[0]):
        raise ValueError(
            f"{name} has partitions of unknown length; pass a dask array with known chunks "
            f"(e.g. dataframe.to_dask_array(lengths=True))."
        )
    return value


def _group_sizes_from_qid(client, qid, row_chunks, n_rows):
    """Query sizes from per-row query ids (a dask collection): the runs of each
    partition computed on the workers, merged on the client
    (:func:`gpuboost.data.convert.group_sizes_from_runs`: the single-node rule)."""
    import dask

    qid = _as_dask_array(qid, "qid", row_chunks)
    if qid.ndim == 2 and qid.shape[1] == 1:
        qid = qid[:, 0]
    if qid.ndim != 1 or int(qid.shape[0]) != n_rows:
        raise ValueError(f"qid must have shape ({n_rows},), got {tuple(qid.shape)}.")
    pieces = client.compute([dask.delayed(qid_runs)(block) for block in qid.to_delayed()])
    return group_sizes_from_runs(*merge_qid_runs(client.gather(pieces)))


def _encode_partition(part, categories):
    """One partition with its categorical columns re-coded by label to the global codes
    (:func:`gpuboost.data.categorical.encode_features`): a float64 ndarray, or a pandas
    DataFrame of numeric columns."""
    if not isinstance(part, np.ndarray) and not hasattr(part, "columns"):
        part = host_array(part)
    return encode_features(part, categories=categories)[0]


def _partition_counts(part, columns):
    """Per categorical column (positions ``columns``) of one partition: its categories
    and their row counts (:func:`gpuboost.data.categorical.category_counts`)."""
    if hasattr(part, "iloc"):
        return [category_counts(part.iloc[:, j]) for j in columns]
    values = host_array(part)
    return [category_counts(values[:, j]) for j in columns]


def _categorical_columns(X, categorical_features, enable_categorical, names):
    """Positions of the categorical columns of a dask DataFrame (its dtypes) or array
    (``categorical_features`` indices, or names among ``names``)."""
    if hasattr(X, "dtypes"):
        return frame_categorical_columns(
            [str(name) for name in X.columns],
            list(X.dtypes),
            categorical_features,
            enable_categorical,
        )
    if categorical_features is None:
        return []
    n_columns = int(X.shape[1]) if X.ndim == 2 else 0
    return array_categorical_columns(
        categorical_features,
        n_columns,
        None if names is None else [str(name) for name in names],
        np.dtype(X.dtype).kind in "US",
    )


def _global_categories(client, X, categorical_features, enable_categorical, names, reference):
    """``(X, categories)``: the collection with its categorical columns as the global
    codes, and the labels of every feature in code order (None: no categorical feature).

    Exact by construction: each partition's category counts (small) come to the
    client, which numbers the categories once from the totals exactly as a training
    Dataset of all the rows does (:func:`gpuboost.data.categorical.merge_category_counts`);
    the workers then re-code their partitions by label. With ``reference`` (a training
    DaskDataset) its categories are used.
    """
    _dask_modules()
    import dask  # optional dependency (gpuboost[dask]), checked above

    if reference is not None:
        if not isinstance(reference, DaskDataset):
            raise TypeError(
                f"reference must be a gpuboost.dask.DaskDataset, got {type(reference).__name__}."
            )
        categories = reference.categories
        if categories is None:
            if _categorical_columns(X, categorical_features, enable_categorical, names):
                raise ValueError(
                    "X has categorical columns, but the reference DaskDataset has none; "
                    "build both with the same categorical_features."
                )
            return X, None
        if len(categories) != int(X.shape[1]):
            raise ValueError(
                f"X has {int(X.shape[1])} features, but the reference DaskDataset has "
                f"{len(categories)}."
            )
    else:
        columns = _categorical_columns(X, categorical_features, enable_categorical, names)
        if not columns:
            return X, None
        if not hasattr(X, "dtypes"):
            X = X.rechunk({1: -1})
        X = client.persist(X)  # read the source once: counted, then re-coded from here
        parts = X.to_delayed()
        parts = parts.ravel().tolist() if hasattr(parts, "ravel") else list(parts)
        counts = client.compute([dask.delayed(_partition_counts)(p, columns) for p in parts])
        counts = client.gather(counts)
        categories = [None] * int(X.shape[1])
        for position, j in enumerate(columns):
            categories[j] = merge_category_counts(piece[position] for piece in counts)
            if categories[j] is None:
                raise ValueError(
                    f"categorical column {j} has no non-missing value: a categorical "
                    f"feature needs a category."
                )
    if hasattr(X, "dtypes"):
        meta = encode_features(X._meta, categories=categories)[0]
        return X.map_partitions(_encode_partition, categories, meta=meta), categories
    X = X.rechunk({1: -1})
    return X.map_blocks(_encode_partition, categories, dtype=X_DTYPE), categories


def _chunks_at_query_bounds(row_chunks, query_offsets):
    """Row partition sizes whose bounds are query bounds: each bound of ``row_chunks``
    moved forward to the next query's first row (a query is never split across
    partitions, hence across workers); empty partitions dropped."""
    bounds = np.concatenate([[0], np.cumsum(row_chunks)])
    moved = query_offsets[np.searchsorted(query_offsets, bounds, side="left")]
    moved = np.unique(moved)
    return tuple(int(size) for size in np.diff(moved) if size > 0)


class DaskDataset:
    """Training or evaluation data on a Dask cluster (see the module docstring).

    Parameters
    ----------
    client : distributed.Client
    X : dask.array of shape (n_rows, n_features), or dask.dataframe.DataFrame
        Row partitions (any sizes); the columns of a partition are kept together.
    label, weight : dask.array or dask Series of shape (n_rows,), optional
        Rechunked to X's row partitions.
    label_lower_bound, label_upper_bound : dask.array or dask Series of shape (n_rows,), optional
        Interval labels for ``survival:aft``, instead of ``label`` (as
        :class:`~gpuboost.data.dataset.Dataset`'s); kept on the workers as the label
        column pair ``[lower, upper]``, validated there.
    group : array-like of shape (n_queries,), optional
        Ranking: the query sizes (a host array; the rows of each query contiguous and
        in order). Partitions are re-cut at query bounds so that no query is split
        across workers (rows move between workers, never to the client).
    qid : dask.array or dask Series of shape (n_rows,), optional
        Ranking, instead of ``group``: per-row query ids, the rows of each query
        contiguous (as :class:`~gpuboost.data.dataset.Dataset`'s ``qid``). Each worker
        reduces its partitions' ids to their runs; the client merges the runs into the
        query sizes (one value per query, as ``group``), then as with ``group``.
    base_margin : dask.array of shape (n_rows,) or (n_rows, n_outputs), optional
    feature_names : list of str, optional
        Default: a DataFrame's columns, else ``f0, f1, ...``.
    max_bin : int, optional
        As :class:`~gpuboost.data.dataset.Dataset`'s.
    binning_subsample, seed : int
        As :class:`~gpuboost.data.dataset.Dataset`'s (rows of the binning sample).
    timeout : float
        Seconds to wait for the partitions (persisting, gathering the binning sample);
        RuntimeError beyond.
    categorical_features : 'auto', None, or list of str or int, default='auto'
        As :class:`~gpuboost.data.dataset.Dataset`'s: 'auto' takes a DataFrame's pandas
        ``category`` columns (and string columns with ``enable_categorical``); a list
        names or indexes more columns (of a dask array too, e.g. integer codes). The
        categories are numbered from the counts of all partitions, as one Dataset of all
        the rows numbers them (partitions whose ``category`` dtypes differ are re-coded
        by label on the workers; ties in count: the dtype's order when every partition
        has the same dtype, else sorted labels).
    enable_categorical : bool, default=False
        As :class:`~gpuboost.data.dataset.Dataset`'s.
    reference : DaskDataset, optional
        The training DaskDataset, for an evaluation set: its categories (re-coding by
        label, unseen categories missing) and its bin edges.
    feature_weights : array-like of shape (n_features,), optional
        Column-sampling weights, as :class:`~gpuboost.data.dataset.Dataset`'s (a host
        array: the client samples the columns).

    Attributes
    ----------
    n_rows, n_features : int
    feature_names : list of str
    row_offsets : ndarray of shape (n_partitions + 1,), int64
        Global id of each partition's first row (and n_rows).
    partitions : list of dict
        Per partition: futures ``X``, ``label``, ``weight``, ``base_margin`` (or None)
        and ``worker``, the address of the worker holding its features.
    categories : list of (list or None) or None
        Per feature, the category labels in code order (None: numeric), as
        ``Dataset.categories``; the partitions hold the codes.
    """

    def __init__(
        self,
        client,
        X,
        label=None,
        weight=None,
        group=None,
        base_margin=None,
        feature_names=None,
        max_bin=None,
        *,
        qid=None,
        binning_subsample=200_000,
        seed=None,
        timeout=DEFAULT_TIMEOUT_SECONDS,
        categorical_features=AUTO,
        enable_categorical=False,
        reference=None,
        feature_weights=None,
        label_lower_bound=None,
        label_upper_bound=None,
    ):
        da, distributed = _dask_modules()
        if group is not None and qid is not None:
            raise ValueError(
                "Give either group (query sizes) or qid (per-row query ids), not both."
            )
        self.client = client
        columns = getattr(X, "columns", None)
        if not hasattr(X, "dtypes"):
            X = _as_dask_array(X, "X")
        X, self.categories = _global_categories(
            client,
            X,
            categorical_features,
            enable_categorical,
            feature_names if feature_names is not None else columns,
            reference,
        )
        X = _as_dask_array(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_rows, n_features), got {X.ndim} dimension(s).")
        X = X.rechunk({1: -1})
        row_chunks = X.chunks[0]
        self.n_rows, self.n_features = int(sum(row_chunks)), int(X.shape[1])
        if self.n_rows == 0:
            raise ValueError("X has no rows.")
        if 0 in row_chunks:  # no worker should hold an empty piece of the data
            row_chunks = tuple(size for size in row_chunks if size > 0)
            X = X.rechunk({0: row_chunks})
        names = feature_names if feature_names is not None else columns
        self._feature_names_are_explicit = names is not None
        self.feature_names = (
            check_feature_names([str(name) for name in names], self.n_features)
            if names is not None
            else default_feature_names(self.n_features)
        )
        self.group = None
        if qid is not None:
            group = _group_sizes_from_qid(client, qid, row_chunks, self.n_rows)
        if group is not None:
            self.group = check_group(group, None, self.n_rows)
            row_chunks = _chunks_at_query_bounds(row_chunks, offsets(self.group))
            X = X.rechunk({0: row_chunks})  # moves rows between workers, never to the client
        if check_label_choice(label, label_lower_bound, label_upper_bound):
            ends = []
            for name, value in (
                ("label_lower_bound", label_lower_bound),
                ("label_upper_bound", label_upper_bound),
            ):
                value = _as_dask_array(value, name, row_chunks)
                if value.ndim != 1 or int(value.shape[0]) != self.n_rows:
                    raise ValueError(f"{name} must have shape ({self.n_rows},), got {value.shape}.")
                ends.append(value.rechunk({0: row_chunks}).astype(np.float64))
            label = da.stack(ends, axis=1)
        fields = {"X": X}
        for name, value in (("label", label), ("weight", weight), ("base_margin", base_margin)):
            if value is None:
                continue
            value = _as_dask_array(value, name, row_chunks)
            if value.ndim == 2 and value.shape[1] == 1 and name != "base_margin":
                value = value[:, 0]
            if int(value.shape[0]) != self.n_rows:
                raise ValueError(f"{name} has {int(value.shape[0])} rows, X has {self.n_rows}.")
            chunks = {0: row_chunks} if value.ndim == 1 else {0: row_chunks, 1: -1}
            fields[name] = value.rechunk(chunks)
        names = list(fields)
        persisted = dict(zip(names, client.persist([fields[name] for name in names])))
        keys = {
            name: [
                (array.name, index) + (0,) * (array.ndim - 1) for index in range(len(row_chunks))
            ]
            for name, array in persisted.items()
        }
        futures = {
            name: {future.key: future for future in distributed.futures_of(array)}
            for name, array in persisted.items()
        }
        self.timeout = float(timeout)
        pending = [future for name in futures for future in futures[name].values()]
        self._wait(pending, "persisting the collections")
        holders = client.who_has([futures["X"][key] for key in keys["X"]])
        workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
        self.partitions = []
        for index in range(len(row_chunks)):
            part = {"worker": None}
            for name in ("X", "label", "weight", "base_margin"):
                part[name] = futures[name][keys[name][index]] if name in futures else None
            holding = list(holders.get(keys["X"][index], ())) or workers
            part["worker"] = sorted(holding)[0]
            self.partitions.append(part)
        self._persisted = persisted  # keeps the collections alive on the cluster
        self.row_offsets = np.concatenate([[0], np.cumsum(row_chunks)]).astype(np.int64)
        if self.group is not None:
            query_offsets = offsets(self.group)
            #: Per partition, its queries ``[first, last)`` (global query ids).
            self.query_ranges = [
                (
                    int(np.searchsorted(query_offsets, self.row_offsets[index])),
                    int(np.searchsorted(query_offsets, self.row_offsets[index + 1])),
                )
                for index in range(len(row_chunks))
            ]
        self.has_label = label is not None
        self.has_weight = weight is not None
        self.has_base_margin = base_margin is not None
        self._max_bin = None if max_bin is None else int(max_bin)
        self._binning_subsample = int(binning_subsample)
        self._binning_seed = seed
        self._bin_mapper = None
        self._reference = reference
        self._label = self._weight = None
        #: Column-sampling weights (host), as ``Dataset.feature_weights``.
        self.feature_weights = check_feature_weights(feature_weights, self.n_features)

    # -- what the training asks of a Dataset ------------------------------------
    @property
    def has_feature_names(self):
        """Whether the feature names were given (or are a DataFrame's columns)."""
        return self._feature_names_are_explicit

    @property
    def max_bin(self):
        return self._bin_mapper.max_bin if self._bin_mapper is not None else self._max_bin

    def workers(self):
        """The addresses of the workers holding partitions, sorted."""
        return sorted({part["worker"] for part in self.partitions})

    def partitions_of(self, worker):
        """Indices of the partitions held by ``worker`` (increasing: global row order)."""
        return [index for index, part in enumerate(self.partitions) if part["worker"] == worker]

    def take(self, rows, field="X"):
        """Rows ``rows`` (increasing global ids) of one field, gathered to the client
        from the workers holding them (host array)."""
        rows = np.asarray(rows, dtype=np.int64)
        which = np.searchsorted(self.row_offsets, rows, side="right") - 1
        futures = []
        for index in np.unique(which).tolist():
            local = rows[which == index] - self.row_offsets[index]
            part = self.partitions[index]
            futures.append(
                self.client.submit(
                    take_rows,
                    part[field],
                    local,
                    workers=[part["worker"]],
                    pure=False,
                )
            )
        self._wait(futures, f"gathering rows of {field}")
        return np.concatenate(self.client.gather(futures), axis=0)

    def _wait(self, futures, action):
        """Wait at most ``timeout`` seconds for ``futures``; RuntimeError naming the
        workers of those that did not finish (a lost partition, a dead worker)."""
        from distributed import wait

        try:
            wait(futures, timeout=self.timeout)
        except Exception:  # distributed's TimeoutError; the pending futures are named below
            pass
        stuck = [future for future in futures if future.status != "finished"]
        if stuck:
            holders = self.client.who_has(stuck)
            where = sorted({worker for key in holders for worker in holders[key]}) or [
                "no worker (lost)"
            ]
            raise RuntimeError(
                f"DaskDataset: {len(stuck)} partition(s) not available within "
                f"{self.timeout:g} s while {action} (status {stuck[0].status!r}; held by "
                f"{', '.join(where)}). A worker died or a partition was lost: persist the "
                f"data again on the cluster."
            )

    @property
    def label(self):
        """The label column, gathered to the client at first use (the base margin of the
        objective; see the module docstring)."""
        if self._label is None and self.has_label:
            self._label = self.take(np.arange(self.n_rows), "label")
        return self._label

    @property
    def weight(self):
        """The weight column, gathered to the client at first use (as :attr:`label`)."""
        if self._weight is None and self.has_weight:
            self._weight = self.take(np.arange(self.n_rows), "weight")
        return self._weight

    def count_positive(self):
        """Rows whose label is above 0.5 (``is_unbalance``), summed on the workers."""
        label = self._persisted["label"]
        future = self.client.compute((label > 0.5).sum())
        self._wait([future], "counting the positive labels")
        return int(future.result())

    @property
    def base_margin(self):
        return None  # held by the workers (they start from it)

    def bind_binning(self, max_bin=None, seed=None, max_cat=None):
        """The bin edges, as ``Dataset.bind_binning`` gives them for the same rows: the
        binning sample's rows (and weights) gathered by global row id, edges fitted once
        on the client. Same ValueError as ``Dataset.bind_binning`` for a ``max_bin`` other
        than the DaskDataset's (:func:`gpuboost.data.dataset.bound_bin_mapper`);
        categorical features get their edges from ``max_cat`` as in a Dataset
        (:func:`gpuboost.data.dataset.set_categorical_edges`). With ``reference``, the
        reference's mapper."""
        if self._reference is not None:
            return self._reference.bind_binning(max_bin, seed, max_cat)
        mapper = bound_bin_mapper(
            self.max_bin,
            self._bin_mapper is not None,
            max_bin,
            self._binning_seed,
            seed,
            self._binning_subsample,
        )
        if self._bin_mapper is None:
            rows = mapper.sample_rows(self.n_rows)
            sample = self.take(rows, "X")
            weights = self.take(rows, "weight") if self.has_weight else None
            self._bin_mapper = mapper.fit(sample, sample_weight=weights)
            set_categorical_edges(self._bin_mapper, self.categories, max_cat)
        return self._bin_mapper

    def __repr__(self):
        return (
            f"DaskDataset(n_rows={self.n_rows}, n_features={self.n_features}, "
            f"n_partitions={len(self.partitions)}, workers={len(self.workers())})"
        )
