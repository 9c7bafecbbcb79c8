"""Quantile bin edges and the mapping of raw feature values to bins.

The contract (docs/DESIGN.md, "Binning"): every feature has ``n_value_bins``
value bins, indices ``0 .. n_value_bins - 1`` (at most ``max_bin``), plus the
missing bin at index ``max_bin``, the same for every feature. With ``edges`` the
float64 upper edges of value bins ``0 .. n_value_bins - 2`` (the last value bin
is open-ended), a non-missing value ``x`` goes to the bin ``b`` such that
``edges[b - 1] < x <= edges[b]``, which is
``np.searchsorted(edges, x, side='left')``. NaN goes to the missing bin.

A split "bin <= b goes left" therefore equals the raw split
"x <= edges[b] goes left" (:meth:`BinMapper.threshold_for_bin`) on any data,
so binned traversal during training and raw traversal at prediction agree.

Infinite values
---------------
All edges are finite. Before the edges are computed, ``+inf`` and ``-inf`` are
clipped to the largest and smallest finite float64 (``±FLOAT64_MAX``), so
they count as the distinct values ``±FLOAT64_MAX`` and every quantile is
finite. When mapping, ``+inf`` is larger than every (finite) edge and lands in
the last value bin, ``-inf`` lands in bin 0. A feature whose only distinct
values are, say, ``5.0`` and ``+inf`` has two value bins; ``-inf`` and
``-FLOAT64_MAX`` (likewise ``+inf`` and ``+FLOAT64_MAX``) always share a bin,
as no finite edge separates them.
"""

import numbers

import numpy as np

from ..core.bin_edges import (
    FLOAT64_MAX,
    canonical_values,
    distinct_midpoints,
    flat_edges,
    midpoints,
    sorted_bin_edges,
    weighted_bin_edges,
)
from ..core.dtypes import MAX_BIN_LIMIT, X_BINNED_DTYPE, X_DTYPE
from ..core.threads import thread_pool, usable_cores
from ..errors import value_repr

__all__ = ["BinMapper", "FLOAT64_MAX", "TRANSFORM_CHUNK_ROWS", "MIN_MAX_BIN"]

#: Smallest allowed ``max_bin``: one bin for values below a split, one above.
MIN_MAX_BIN = 2
#: Number of rows mapped to bins at a time by :meth:`BinMapper.transform`; the
#: temporary arrays of one chunk hold ``TRANSFORM_CHUNK_ROWS`` values per feature.
TRANSFORM_CHUNK_ROWS = 1 << 16
#: Columns of a sparse matrix binned at a time by :meth:`BinMapper.transform_sparse`
#: (a column-major block of ``n_rows`` bytes per column, then one transposed copy).
SPARSE_TRANSFORM_COLUMNS = 64
#: Keys of the dictionary written by :meth:`BinMapper.to_dict`.
_DICT_KEYS = ("max_bin", "subsample", "seed", "bin_edges")


def _is_int(value):
    """True for Python and NumPy integers, False for bools."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _validate_max_bin(max_bin):
    if not _is_int(max_bin) or not MIN_MAX_BIN <= max_bin <= MAX_BIN_LIMIT:
        raise ValueError(
            f"max_bin must be an integer in [{MIN_MAX_BIN}, {MAX_BIN_LIMIT}], got "
            f"{value_repr(max_bin)}."
        )
    return int(max_bin)


def _validate_non_negative_int(name, value, minimum):
    if not _is_int(value) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value_repr(value)}.")
    return int(value)


def _as_float_matrix(X):
    """``X`` as a 2-D float64 array (a view when it already is one), or float32 as it
    is (its values are exact in float64; readers convert what they read).

    Accepts boolean, integer and floating arrays (or anything ``np.asarray``
    turns into one); the full input validation lives in :class:`gpuboost.data.dataset.Dataset`.
    """
    X = np.asarray(X)
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must hold numbers (bool, int or float), got dtype {X.dtype}.")
    if X.ndim != 2:
        raise ValueError(
            f"X must be a 2-D array of shape (n_rows, n_features), got {X.ndim} dimension(s)."
        )
    return X if X.dtype == np.float32 else X.astype(X_DTYPE, copy=False)


def _find_bin_edges(values, max_bin, weights=None):
    """Upper edges of the value bins of one feature (host; :func:`sorted_bin_edges`,
    :func:`weighted_bin_edges`).

    Parameters
    ----------
    values : ndarray of shape (n_values,), float64
        The non-missing values of the feature (on the binning subsample),
        without NaN; may contain +/-inf.
    max_bin : int
        Largest number of value bins.
    weights : ndarray of shape (n_values,), float64, optional
        Positive row weights, in row order; the quantiles are then weighted.

    Returns
    -------
    edges : ndarray of shape (n_value_bins - 1,), float64
        Finite, strictly increasing, at most ``max_bin - 1`` of them.
    """
    values = canonical_values(np, values)
    if weights is None:
        return sorted_bin_edges(np, np.sort(values), max_bin)
    distinct, inverse = np.unique(values, return_inverse=True)
    if len(distinct) <= max_bin:
        return distinct_midpoints(distinct)
    run_totals = np.cumsum(np.bincount(inverse.ravel(), weights=weights))
    return weighted_bin_edges(np, distinct, run_totals, max_bin)


#: Chunks of features per thread of :func:`_edges_of_every_feature`: a task per feature
#: would cost more in the pool than the edges of a short sparse column.
FEATURE_CHUNKS_PER_THREAD = 4


def _edges_of_every_feature(edges_of, n_features):
    """``[edges_of(f) for f in range(n_features)]``, on threads, features taken in a
    few chunks per thread (features are independent: the same edges)."""
    n_threads = usable_cores()
    pool = thread_pool(n_threads)
    if pool is None or n_features < 2:
        return [edges_of(feature) for feature in range(n_features)]
    bounds = np.linspace(0, n_features, min(n_features, FEATURE_CHUNKS_PER_THREAD * n_threads) + 1)
    bounds = bounds.astype(np.int64)

    def chunk(index):
        return [edges_of(feature) for feature in range(bounds[index], bounds[index + 1])]

    return [edges for part in pool.map(chunk, range(len(bounds) - 1)) for edges in part]


def _few_value_edges(columns, position, max_bin, absent_missing):
    """The edges of every sparse column with at most ``max_bin`` distinct values (on the
    sampled rows), vectorized over the columns: those of :meth:`BinMapper.fit_sparse`'s
    ``edges_of``, the :func:`distinct_midpoints` of the column's set of values (its
    stored values and 0.0 when a sampled row has no entry), bit for bit -- the same
    elementwise :func:`midpoints` of the same sorted distinct values, taken for every
    column at once instead of with a dozen NumPy calls per column (a 100k-column matrix
    spent 4-5 s there).

    Parameters
    ----------
    columns : scipy.sparse CSC matrix of shape (n_rows, n_features), float64  # IN
    position : ndarray of shape (n_rows,), int64  # IN
        Each row's position in the binning sample, -1 if not sampled.
    max_bin : int
    absent_missing : bool

    Returns
    -------
    list of (ndarray of float64 or None), length n_features
        None for the columns with more than ``max_bin`` distinct values.
    """
    n_features = columns.shape[1]
    n_sampled = int(np.count_nonzero(position >= 0))
    feature = np.repeat(np.arange(n_features, dtype=np.int64), np.diff(columns.indptr))
    sampled = position[columns.indices] >= 0
    values, feature = columns.data[sampled], feature[sampled]
    n_stored = np.bincount(feature, minlength=n_features)
    present = ~np.isnan(values)
    values, feature = canonical_values(np, values[present]), feature[present]
    if not absent_missing:  # a sampled row without an entry holds 0.0
        with_zero = np.flatnonzero(n_stored < n_sampled)
        values = np.concatenate([values, np.zeros(len(with_zero))])
        feature = np.concatenate([feature, with_zero])
    order = np.lexsort((values, feature))
    values, feature = values[order], feature[order]
    first = np.ones(len(values), dtype=bool)
    first[1:] = (feature[1:] != feature[:-1]) | (values[1:] != values[:-1])
    values, feature = values[first], feature[first]
    n_distinct = np.bincount(feature, minlength=n_features)
    within = feature[1:] == feature[:-1]
    edges = midpoints(values[:-1][within], values[1:][within])
    n_edges = np.maximum(n_distinct - 1, 0)
    ends = np.cumsum(n_edges)
    # Views of one array (float64, as _find_bin_edges returns): nothing writes edges.
    # Plain slices: np.split spends microseconds per piece (0.2-0.4 s on 100k columns).
    return [
        edges[end - size : end] if count <= max_bin else None
        for end, size, count in zip(ends.tolist(), n_edges.tolist(), n_distinct.tolist())
    ]


class BinMapper:
    """Map raw float64 feature values to uint8 bins by per-feature quantiles.

    Parameters
    ----------
    max_bin : int, default=255
        Largest number of value bins per feature, in ``[2, MAX_BIN_LIMIT]``.
        The missing bin has index ``max_bin``, so histograms have
        ``max_bin + 1`` columns.
    subsample : int, default=200_000
        The edges are computed on at most this many rows: a uniform random
        subset drawn without replacement (the same rows for every feature), or
        all rows when the data have no more than ``subsample`` rows.
    seed : int, default=0
        Seed of ``numpy.random.default_rng`` drawing the subsample; the same
        seed gives the same edges.

    Attributes
    ----------
    bin_edges_ : list of ndarray of shape (n_value_bins_[f] - 1,), float64
        Per feature, the finite, strictly increasing upper edges of value bins
        ``0 .. n_value_bins_[f] - 2``; the last value bin is open-ended.
    n_value_bins_ : ndarray of shape (n_features_,), int32
        Number of value bins per feature, between 1 and ``max_bin``.
    is_constant_ : ndarray of shape (n_features_,), bool
        True for features with a single value bin (no non-missing value, or
        a single distinct one); they can never be split.
    n_features_ : int
        Number of features seen by :meth:`fit`.

    Notes
    -----
    With at most ``max_bin`` distinct non-missing values, every distinct value
    gets its own bin and the edges are the midpoints between consecutive
    distinct values. Otherwise the edges are the percentiles
    ``100 * i / max_bin`` for ``i = 1 .. max_bin - 1`` (numpy method
    "averaged_inverted_cdf", the definition scikit-learn HGB uses: an edge is
    a data value, or the mean of two neighbouring ones when the quantile falls between them),
    with duplicates removed, so a feature may have fewer than ``max_bin``
    value bins. See the module docstring for infinite values.
    """

    def __init__(self, max_bin=255, subsample=200_000, seed=0):
        self.max_bin = _validate_max_bin(max_bin)
        self.subsample = _validate_non_negative_int("subsample", subsample, minimum=1)
        self.seed = _validate_non_negative_int("seed", seed, minimum=0)

    @property
    def missing_bin(self):
        """Index of the bin of missing values (NaN): ``max_bin``."""
        return self.max_bin

    @property
    def n_bins(self):
        """Histogram width: ``max_bin`` value bins plus the missing bin."""
        return self.max_bin + 1

    def sample_rows(self, n_rows):
        """The rows whose values shape the edges (increasing ids): all ``n_rows`` when
        there are at most ``subsample``, else ``subsample`` of them drawn with ``seed``.
        (Distributed training gathers these rows from the workers, gpuboost.dask.)

        Returns
        -------
        ndarray of shape (min(n_rows, subsample),), int64
        """
        if n_rows > self.subsample:
            rng = np.random.default_rng(self.seed)
            return np.sort(rng.choice(n_rows, size=self.subsample, replace=False))
        return np.arange(n_rows)

    def fit(self, X, sample_weight=None):
        """Compute the bin edges of every feature.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Raw features, converted to float64; NaN means missing, +/-inf is
            allowed.
        sample_weight : array-like of shape (n_rows,), optional
            Finite, non-negative row weights. Rows of weight 0 do not shape
            the edges, and the quantiles are weighted, so integer weights give
            the edges of the rows repeated that many times.

        Returns
        -------
        self : BinMapper
        """
        X = _as_float_matrix(X)
        n_rows, n_features = X.shape
        if n_rows == 0 or n_features == 0:
            raise ValueError(f"Cannot compute bin edges of an empty array of shape {X.shape}.")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=X_DTYPE)
            if (
                sample_weight.shape != (n_rows,)
                or not np.all(np.isfinite(sample_weight))
                or np.any(sample_weight < 0)
            ):
                raise ValueError(f"sample_weight must hold {n_rows} finite, non-negative numbers.")
        subsample_rows, weights = self.binning_rows(n_rows, sample_weight)

        def edges_of(feature):
            column = X[subsample_rows, feature].astype(X_DTYPE, copy=False)
            present = ~np.isnan(column)
            return _find_bin_edges(
                column[present], self.max_bin, None if weights is None else weights[present]
            )

        self._set_edges(_edges_of_every_feature(edges_of, n_features))
        return self

    def binning_rows(self, n_rows, sample_weight):
        """The rows the edges are computed on (:meth:`sample_rows`, those of positive
        weight) and their weights (None: unit).

        Returns
        -------
        rows : ndarray of shape (n_sampled,), int64
            Increasing.
        weights : ndarray of shape (n_sampled,), float64, or None
        """
        subsample_rows = self.sample_rows(n_rows)
        weights = None
        if sample_weight is not None:
            weights = sample_weight[subsample_rows]
            subsample_rows = subsample_rows[weights > 0]
            weights = weights[weights > 0]
        return subsample_rows, weights

    def fit_sparse(self, columns, sample_weight=None, absent_missing=False):
        """:meth:`fit` on a sparse matrix, column by column, without a dense copy: the
        same edges as ``fit(columns.toarray())`` (absent entries 0.0), bit for bit.

        Parameters
        ----------
        columns : scipy.sparse CSC matrix of shape (n_rows, n_features), float64
            Canonical (sorted row indices, no duplicates: ``convert.sparse_columns``).
        sample_weight : ndarray of shape (n_rows,), optional
            As in :meth:`fit` (already validated).
        absent_missing : bool, default=False
            Absent entries are missing values (XGBoost's semantics) instead of 0.0.

        Returns
        -------
        self : BinMapper

        Notes
        -----
        With at most ``max_bin`` distinct values the edges depend only on the set of
        values (so a column costs its stored entries, not ``n_rows``), and unweighted
        quantiles only on their multiset: the stored values of
        the sampled rows plus as many zeros as sampled rows without an entry. Weighted
        quantiles sum weights in row order, so that case builds the sampled column in
        row order (``n_sampled`` values at a time, one column at a time).
        """
        n_rows, n_features = columns.shape
        if n_rows == 0 or n_features == 0:
            raise ValueError(
                f"Cannot compute bin edges of an empty array of shape {columns.shape}."
            )
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=X_DTYPE)
        subsample_rows, weights = self.binning_rows(n_rows, sample_weight)
        position = np.full(n_rows, -1, dtype=np.int64)  # row -> position in the sample
        position[subsample_rows] = np.arange(len(subsample_rows))
        n_sampled = len(subsample_rows)

        def edges_of(feature):
            start, stop = columns.indptr[feature], columns.indptr[feature + 1]
            at = position[columns.indices[start:stop]]
            stored = columns.data[start:stop][at >= 0]
            at = at[at >= 0]
            n_absent = 0 if absent_missing else n_sampled - len(stored)
            present = ~np.isnan(stored)
            distinct = np.unique(np.clip(stored[present], -FLOAT64_MAX, FLOAT64_MAX))
            n_distinct = len(distinct) + (n_absent > 0 and not np.any(distinct == 0.0))
            if n_distinct <= self.max_bin:  # the edges of the set of values
                return _find_bin_edges(
                    np.concatenate([distinct, np.zeros(min(n_absent, 1))]), self.max_bin, None
                )
            if weights is None:
                values = np.concatenate([stored[present], np.zeros(n_absent)])
                return _find_bin_edges(values, self.max_bin, None)
            column = np.full(n_sampled, np.nan if absent_missing else 0.0)
            column[at] = stored
            keep = ~np.isnan(column)
            return _find_bin_edges(column[keep], self.max_bin, weights[keep])

        edges = _few_value_edges(columns, position, self.max_bin, absent_missing)
        many = [feature for feature, found in enumerate(edges) if found is None]
        for feature, found in zip(
            many, _edges_of_every_feature(lambda i: edges_of(many[i]), len(many))
        ):
            edges[feature] = found
        self._set_edges(edges)
        return self

    def transform_sparse(self, columns, absent_missing=False):
        """:meth:`transform` of a sparse matrix without a dense float copy: absent
        entries take the bin of 0.0 (or, with ``absent_missing``, the missing bin).

        Parameters
        ----------
        columns : scipy.sparse CSC matrix of shape (n_rows, n_features_), float64

        Returns
        -------
        X_binned : ndarray of shape (n_rows, n_features_), uint8, C order
        """
        self._check_fitted()
        self._check_n_features(columns)
        n_rows = columns.shape[0]
        X_binned = np.empty((n_rows, self.n_features_), dtype=X_BINNED_DTYPE)
        for begin in range(0, self.n_features_, SPARSE_TRANSFORM_COLUMNS):
            end = min(begin + SPARSE_TRANSFORM_COLUMNS, self.n_features_)
            block = np.empty((end - begin, n_rows), dtype=X_BINNED_DTYPE)  # column-major
            for feature in range(begin, end):
                edges = self.bin_edges_[feature]
                start, stop = columns.indptr[feature], columns.indptr[feature + 1]
                values = columns.data[start:stop]
                block[feature - begin] = (
                    self.missing_bin if absent_missing else np.searchsorted(edges, 0.0, side="left")
                )
                bins = np.searchsorted(edges, values, side="left")
                bins[np.isnan(values)] = self.missing_bin
                block[feature - begin, columns.indices[start:stop]] = bins
            X_binned[:, begin:end] = block.T
        return X_binned

    def set_edges(self, bin_edges):
        """Fit with edges computed elsewhere (on a device:
        :func:`gpuboost.backends.cuda.binning.device_bin_edges`): one finite, strictly
        increasing float64 array per feature, at most ``max_bin - 1`` edges each.

        Returns
        -------
        self : BinMapper
        """
        bin_edges = [np.asarray(edges, dtype=X_DTYPE) for edges in bin_edges]
        for feature, edges in enumerate(bin_edges):
            if (
                edges.ndim != 1
                or len(edges) > self.max_bin - 1
                or not np.all(np.isfinite(edges))
                or np.any(np.diff(edges) <= 0)
            ):
                raise ValueError(
                    f"the edges of feature {feature} must be at most {self.max_bin - 1} "
                    "finite, strictly increasing numbers"
                )
        self._set_edges(bin_edges)
        return self

    def set_feature_edges(self, edges):
        """Replace the edges of some features (a dict feature -> increasing float64
        edges), e.g. those of categorical features (one bin per category code)."""
        self._check_fitted()
        bin_edges = list(self.bin_edges_)
        for feature, feature_edges in edges.items():
            bin_edges[feature] = np.asarray(feature_edges, dtype=X_DTYPE)
        self._set_edges(bin_edges)

    def _set_edges(self, bin_edges):
        self.__dict__.pop("_edge_table", None)  # thresholds_for_bins' table of the old edges
        self.bin_edges_ = bin_edges
        self.n_features_ = len(bin_edges)
        self.n_value_bins_ = np.array([len(edges) + 1 for edges in bin_edges], dtype=np.int32)
        self.is_constant_ = self.n_value_bins_ == 1

    def _check_fitted(self):
        if not hasattr(self, "bin_edges_"):
            raise RuntimeError("This BinMapper is not fitted yet; call fit(X) first.")

    def _check_n_features(self, X):
        if X.shape[1] != self.n_features_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the BinMapper was fitted "
                f"with {self.n_features_} features."
            )

    def transform(self, X):
        """Map raw feature values to bins.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features_)
            Raw features, converted to float64.

        Returns
        -------
        X_binned : ndarray of shape (n_rows, n_features_), uint8, C order
            ``np.searchsorted(bin_edges_[f], x, side='left')`` for non-missing
            ``x`` (+inf: the last value bin, -inf: bin 0), ``missing_bin`` for NaN.
        """
        self._check_fitted()
        X = _as_float_matrix(X)
        self._check_n_features(X)
        n_rows = X.shape[0]
        X_binned = np.empty((n_rows, self.n_features_), dtype=X_BINNED_DTYPE)

        def transform_chunk(start):
            stop = min(start + TRANSFORM_CHUNK_ROWS, n_rows)
            for feature, edges in enumerate(self.bin_edges_):
                column = X[start:stop, feature]
                bins = np.searchsorted(edges, column, side="left")
                bins[np.isnan(column)] = self.missing_bin
                X_binned[start:stop, feature] = bins

        # Row chunks write disjoint slices: threads give the same bins.
        pool = thread_pool(usable_cores())
        starts = range(0, n_rows, TRANSFORM_CHUNK_ROWS)
        if pool is not None and len(starts) > 1:
            list(pool.map(transform_chunk, starts))
        else:
            for start in starts:
                transform_chunk(start)
        return X_binned

    def fit_transform(self, X):
        """:meth:`fit` then :meth:`transform` on the same ``X``."""
        return self.fit(X).transform(X)

    def transform_naive(self, X):
        """Reference for :meth:`transform`: one comparison loop per value.

        Slow; meant for tests. A value ``x`` moves up one bin while it is
        larger than the current bin's upper edge.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features_)

        Returns
        -------
        X_binned : ndarray of shape (n_rows, n_features_), uint8
        """
        self._check_fitted()
        X = _as_float_matrix(X)
        self._check_n_features(X)
        n_rows, n_features = X.shape
        X_binned = np.empty((n_rows, n_features), dtype=X_BINNED_DTYPE)
        for row in range(n_rows):
            for feature in range(n_features):
                value = float(X[row, feature])
                edges = self.bin_edges_[feature]
                if value != value:  # NaN
                    bin_index = self.missing_bin
                else:
                    bin_index = 0
                    while bin_index < len(edges) and value > edges[bin_index]:
                        bin_index += 1
                X_binned[row, feature] = bin_index
        return X_binned

    def threshold_for_bin(self, feature, bin):
        """Raw threshold of the split "bin <= ``bin`` goes left".

        Parameters
        ----------
        feature : int
            Feature index in ``[0, n_features_)``.
        bin : int
            A value bin with an upper edge, in ``[0, n_value_bins_[feature] - 2]``.

        Returns
        -------
        threshold : float
            ``bin_edges_[feature][bin]``: ``x <= threshold`` goes left.
        """
        self._check_fitted()
        if not _is_int(feature) or not 0 <= feature < self.n_features_:
            raise IndexError(f"feature must be in [0, {self.n_features_}), got {feature!r}.")
        edges = self.bin_edges_[feature]
        if not _is_int(bin) or not 0 <= bin < len(edges):
            raise IndexError(
                f"bin must be in [0, {len(edges)}) for feature {feature} "
                f"({len(edges) + 1} value bins; the last has no upper edge), "
                f"got {bin!r}."
            )
        return float(edges[bin])

    def thresholds_for_bins(self, features, bins):
        """:meth:`threshold_for_bin` of many splits at once.

        Parameters
        ----------
        features, bins : array-like of int, shape (n_splits,)

        Returns
        -------
        thresholds : ndarray of shape (n_splits,), float64

        Raises
        ------
        IndexError
            A feature or a bin out of range (as :meth:`threshold_for_bin`).
        """
        self._check_fitted()
        features = np.asarray(features, dtype=np.int64).reshape(-1)
        bins = np.asarray(bins, dtype=np.int64).reshape(-1)
        if not hasattr(self, "_edge_table"):
            # Every feature's edges back to back, and where each feature's start.
            self._edge_table = flat_edges(self.bin_edges_)
        if np.any((features < 0) | (features >= self.n_features_)):
            raise IndexError(f"features must be in [0, {self.n_features_}).")
        if np.any((bins < 0) | (bins >= self.n_value_bins_[features] - 1)):
            raise IndexError("bins must be value bins with an upper edge (below the last).")
        edges, starts = self._edge_table
        return edges[starts[features] + bins]

    def to_dict(self):
        """The fitted mapper as a JSON-serializable dict.

        Edges are lists of Python floats; ``json`` writes them with ``repr``,
        which round-trips every finite float64 exactly.

        Returns
        -------
        state : dict
            Keys ``max_bin``, ``subsample``, ``seed`` (int) and ``bin_edges``
            (list of n_features lists of float).
        """
        self._check_fitted()
        return {
            "max_bin": self.max_bin,
            "subsample": self.subsample,
            "seed": self.seed,
            "bin_edges": [edges.tolist() for edges in self.bin_edges_],
        }

    @classmethod
    def from_dict(cls, state):
        """Rebuild a fitted mapper from :meth:`to_dict` output.

        Parameters
        ----------
        state : dict
            As written by :meth:`to_dict`.

        Returns
        -------
        bin_mapper : BinMapper

        Raises
        ------
        ValueError
            If a key is missing or the edges break the contract (finite,
            strictly increasing, at most ``max_bin - 1`` per feature).
        """
        if not isinstance(state, dict):
            raise ValueError(f"BinMapper state must be a dict, got {type(state).__name__}.")
        missing_keys = [key for key in _DICT_KEYS if key not in state]
        if missing_keys:
            raise ValueError(f"BinMapper state lacks the key(s) {missing_keys}.")
        bin_mapper = cls(max_bin=state["max_bin"], subsample=state["subsample"], seed=state["seed"])
        bin_edges_lists = state["bin_edges"]
        if not isinstance(bin_edges_lists, (list, tuple)) or len(bin_edges_lists) == 0:
            raise ValueError("BinMapper state: 'bin_edges' must be a non-empty list of lists.")
        bin_edges = []
        for feature, edge_list in enumerate(bin_edges_lists):
            try:
                edges = np.array(edge_list, dtype=X_DTYPE)
            except (TypeError, ValueError) as error:
                raise ValueError(
                    f"BinMapper state: edges of feature {feature} are not numbers: {error}"
                ) from None
            if edges.ndim != 1:
                raise ValueError(
                    f"BinMapper state: edges of feature {feature} must be a flat list."
                )
            if len(edges) > bin_mapper.max_bin - 1:
                raise ValueError(
                    f"BinMapper state: feature {feature} has {len(edges)} edges, "
                    f"more than max_bin - 1 = {bin_mapper.max_bin - 1}."
                )
            if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
                raise ValueError(
                    f"BinMapper state: edges of feature {feature} must be finite "
                    f"and strictly increasing."
                )
            bin_edges.append(edges)
        bin_mapper._set_edges(bin_edges)
        return bin_mapper

    def __repr__(self):
        fitted = f", n_features_={self.n_features_}" if hasattr(self, "bin_edges_") else ""
        return (
            f"BinMapper(max_bin={self.max_bin}, subsample={self.subsample}, "
            f"seed={self.seed}{fitted})"
        )
