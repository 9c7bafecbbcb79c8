"""``Dataset``: raw and binned features with label, weight, group and base margin.

The analogue of XGBoost's ``DMatrix`` and LightGBM's ``Dataset``. A Dataset
validates its inputs once, keeps the raw features as float64 (for init-model
margins and raw-feature prediction) and their bins (docs/DESIGN.md, "Binning")
as uint8. A validation Dataset built with ``reference=train_dataset`` reuses the
training bin edges, so its bins mean the same thresholds.

Inputs are converted and checked by :mod:`gpuboost.data.convert`; the text
loaders :func:`load_svmlight` and :func:`load_query_file` live in
:mod:`gpuboost.data.io` (re-exported here).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..backends import get_backend
from ..backends.cpu.binning import bin_dense
from ..core.dtypes import X_DTYPE
from ..params import PARAMETERS
from .binning import BinMapper
from .categorical import categorical_edges, encode_features
from .convert import (
    as_integer_vector,
    check_base_margin,
    check_feature_names,
    check_feature_weights,
    check_group,
    check_label,
    check_label_bounds,
    check_label_choice,
    check_weight,
    convert_features,
    default_feature_names,
    densify,
    frame_column_names,
    is_sparse_matrix,
    sparse_columns,
    sparse_frame_columns,
)
from .device import device_features, host_vector, is_device_input
from .io import load_query_file, load_svmlight

__all__ = [
    "Dataset",
    "bound_bin_mapper",
    "set_categorical_edges",
    "load_svmlight",
    "load_query_file",
    "label_arguments",
]

#: ``max_bin`` of a Dataset binned without one (the training parameter's default).
DEFAULT_MAX_BIN = PARAMETERS["max_bin"].default
#: What an absent entry of a sparse X means: 0.0 (scipy's and LightGBM's semantics, the
#: default) or a missing value (XGBoost's).
SPARSE_ABSENT_CHOICES = ("zero", "missing")


def bound_bin_mapper(own_max_bin, binned, max_bin, own_seed, seed, subsample):
    """The (unfitted) BinMapper of a Dataset bound to a training's ``max_bin`` and
    ``seed`` (:meth:`Dataset.bind_binning`; also ``gpuboost.dask.DaskDataset``'s).

    Parameters
    ----------
    own_max_bin : int or None
        The Dataset's ``max_bin`` (given at construction, or of its bins).
    binned : bool
        Whether the Dataset already has its bins.
    max_bin, seed : int or None
        The training's (None: not named in its parameters).
    own_seed : int or None
        The Dataset's own binning seed.
    subsample : int
        Rows of the binning sample.

    Raises
    ------
    ValueError
        ``max_bin`` differs from the Dataset's own.
    """
    if max_bin is not None and own_max_bin is not None and int(max_bin) != own_max_bin:
        how = (
            f"already binned with max_bin={own_max_bin} (by a training, or a use of its bins)"
            if binned
            else f"built with max_bin={own_max_bin}"
        )
        raise ValueError(
            f"The Dataset was {how}, but the training parameters ask for "
            f"max_bin={int(max_bin)}. Its bins are not recomputed: build the Dataset "
            f"with max_bin={int(max_bin)} (or without max_bin, to take the training's), "
            f"or leave max_bin out of the parameters."
        )
    chosen = own_max_bin if max_bin is None else int(max_bin)
    chosen_seed = own_seed if own_seed is not None else seed
    return BinMapper(
        max_bin=DEFAULT_MAX_BIN if chosen is None else chosen,
        subsample=subsample,
        seed=0 if chosen_seed is None else chosen_seed,
    )


#: ``max_cat`` of a Dataset binned without one (the training parameter's default).
DEFAULT_MAX_CAT = PARAMETERS["max_cat"].default


def set_categorical_edges(bin_mapper, categories, max_cat=None):
    """Give the categorical features of a fitted ``bin_mapper`` their edges
    (:func:`~gpuboost.data.categorical.categorical_edges`: one bin per code, the rarest
    sharing "other" beyond ``min(max_cat, max_bin)``; ``max_cat`` None: the default).
    ``categories``: per feature, labels or None (None: no categorical feature).
    :meth:`Dataset.bind_binning`'s, and ``gpuboost.dask.DaskDataset``'s."""
    if categories is None:
        return
    limit = DEFAULT_MAX_CAT if max_cat is None else int(max_cat)
    bin_mapper.set_feature_edges(
        {
            feature: categorical_edges(len(labels), limit, bin_mapper.max_bin)
            for feature, labels in enumerate(categories)
            if labels is not None
        }
    )


#: ``categorical_features`` of :meth:`Dataset.subset`: X holds the reference's codes.
_CODES = object()


# --------------------------------------------------------------------------- #
# Dataset
# --------------------------------------------------------------------------- #


def label_arguments(label, bounds=None):
    """The :class:`Dataset` keyword(s) for a label array: ``label``, or for interval
    labels (shape (n, 2), ``[lower, upper]``; ``survival:aft``) ``label_lower_bound`` and
    ``label_upper_bound`` (what a Dataset's ``label`` holds after
    :meth:`Dataset.set_label_bounds`).

    Parameters
    ----------
    label : ndarray of shape (n,), (n, 2) or (n, k), or None
    bounds : bool or None
        Whether ``label`` holds interval labels; None: those of shape (n, 2) do (the
        callers that never see several targets).

    Returns
    -------
    dict
    """
    if bounds is None:
        bounds = label is not None and np.ndim(label) == 2 and np.shape(label)[1] == 2
    if bounds:
        return {"label_lower_bound": label[:, 0], "label_upper_bound": label[:, 1]}
    return {"label": label}


class Dataset:
    """Training or evaluation data: raw and binned features plus row metadata.

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features)
        A 2-D NumPy array (float, int or bool; converted to float64; any
        memory order), a DataFrame with numeric columns -- pandas, polars, a
        pyarrow Table, or any object of the Arrow PyCapsule or dataframe
        interchange protocols -- (its column names become ``feature_names``;
        null / NA values are missing), a scipy.sparse matrix (kept sparse: a
        canonical CSC copy, memory proportional to the stored entries; binned
        column by column, see ``sparse_absent``), a pandas DataFrame with sparse
        columns (``pd.SparseDtype``: read like a scipy.sparse matrix, from the stored
        entries; their ``fill_value`` must be the absent value, 0 or NaN per
        ``sparse_absent``, else ValueError), data on a GPU -- a CuPy array, an
        object with ``__cuda_array_interface__`` or a CUDA ``__dlpack__`` tensor, a
        cuDF DataFrame -- kept on its device (:mod:`gpuboost.data.device`: edges and
        bins computed there; ``device_features``), or anything ``np.asarray``
        accepts. NaN means missing; +/-inf are allowed.
    label : array-like of shape (n_rows,) or (n_rows, 1), default=None
        Finite numbers. None for prediction-only data.
    label_lower_bound, label_upper_bound : array-like of shape (n_rows,), default=None
        Interval labels for ``survival:aft`` (XGBoost's names), instead of ``label``:
        each row's survival time lies in ``[lower, upper]``; ``lower == upper`` an
        observed time, ``upper = inf`` right-censored, ``lower = 0`` left-censored.
        Both or neither; ``lower`` finite and >= 0, ``upper >= lower``. The Dataset's
        ``label`` is then the array of shape (n_rows, 2) of both.
    weight : array-like of shape (n_rows,), default=None
        Finite, non-negative, not all zero. None means weight 1 for every row.
        The bin edges are weighted quantiles of the rows of positive weight
        (the weights given here: ``set_weight`` later keeps the edges).
    group : array-like of shape (n_queries,), default=None
        Query sizes for ranking: positive integers summing to ``n_rows``;
        the rows of each query are contiguous and in order.
    base_margin : array-like of shape (n_rows,) or (n_rows, n_outputs), default=None
        Finite initial raw predictions, stored as given (as float64).
    feature_names : list of str, default=None
        ``n_features`` unique names; default ``['f0', 'f1', ...]``, or the
        columns of a DataFrame.
    max_bin : int, default=None
        Largest number of value bins per feature (see
        :class:`~gpuboost.data.binning.BinMapper`). None: the ``max_bin`` of the
        first training on this Dataset (its parameter, default 255). The bin edges
        are computed when first needed (training, ``X_binned``, ``bin_mapper``);
        a training whose ``max_bin`` differs from the one the Dataset was built or
        binned with raises ValueError (:meth:`bind_binning`). Ignored with
        ``reference``, whose binning is used.
    reference : Dataset, default=None
        A Dataset (usually the training set) whose fitted ``bin_mapper`` is
        reused instead of fitting a new one, so that bin ``b`` means the same
        raw threshold in both. Its feature count must match; when both
        Datasets have explicit feature names they must match, and a Dataset
        without explicit names takes the reference's names.
    qid : array-like of shape (n_rows,), default=None
        Per-row query ids, an alternative to ``group``: each query's rows must
        form one contiguous run. Converted to query sizes.
    binning_subsample : int, default=200_000
        Number of rows the bin edges are computed on (see
        :class:`~gpuboost.data.binning.BinMapper`).
    seed : int, default=None
        Seed of the binning subsample (used when ``n_rows > binning_subsample``).
        None: the ``seed`` of the first training (default 0).
    sparse_absent : {'zero', 'missing'}, default='zero'
        For a sparse ``X``: what an entry that is not stored means. 'zero': the
        value 0.0 (scipy's semantics, LightGBM's), so the model is the one of
        ``X.toarray()``, bit for bit. 'missing': a missing value (XGBoost's); the
        Dataset's ``features`` then hold NaN there. Ignored for dense ``X``.
    categorical_features : 'auto', None, or list of str or int, default='auto'
        The categorical columns (:mod:`gpuboost.data.categorical`): 'auto' takes pandas
        ``category`` columns (polars ``Categorical``, Arrow dictionary columns), and
        string columns when ``enable_categorical``; a list names more columns (by name
        or index, any values); None: no categorical column. Their categories (labels,
        strings included) are numbered by decreasing frequency and stored in the
        model; a Dataset with ``reference`` re-codes its columns by label against the
        reference's (unseen categories become missing).
    enable_categorical : bool, default=False
        Take string / object columns as categorical (XGBoost's name); without it they
        are refused with a TypeError.
    feature_weights : array-like of shape (n_features,), default=None
        Column-sampling weights (XGBoost's ``feature_weights``): where
        ``colsample_bytree``, ``colsample_bylevel`` or ``colsample_bynode`` is below 1,
        features are drawn with probabilities proportional to them
        (:func:`gpuboost.tree.feature_sampler.weighted_choice`), weight-0 features never.
        Finite, non-negative, at least one positive. Kept by :meth:`subset`.

    Attributes
    ----------
    features : ndarray of shape (n_rows, n_features), float64 or float32, C order
        The raw features as validated: float32 when ``X`` is float32 (every
        float32 is exactly a float64, so nothing is lost), else float64. This
        *is* ``X`` (no copy) when ``X`` already is such a C-contiguous array, so
        do not modify ``X`` afterwards. For a sparse ``X``, a dense copy made at
        first use: training on the Dataset never needs it (it bins the sparse
        columns, and predicts its sparse rows), evaluation sets and
        ``tree_method='exact'``/``'approx'`` do.
    sparse_columns : scipy.sparse CSC matrix or None
        The canonical CSC copy of a sparse ``X`` (None for dense input).
    data : ndarray of shape (n_rows, n_features), float64, C order
        The raw features as float64: ``features`` itself, or for float32 input a
        copy made at first use (binning and the compiled CPU backend read
        ``features`` and never need it).
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order
        The bins of ``data``.
    bin_mapper : BinMapper
        The fitted mapper (shared with ``reference`` when one is given), fitted at
        first use (:meth:`bind_binning`).
    feature_names : list of str
    categories : list of (list or None) or None
        Per feature, the category labels in code order (None: numeric); None when no
        feature is categorical.
    n_rows, n_features : int
    label, weight, group, base_margin : ndarray or None
        As validated; ``label`` and ``weight`` float64, ``group`` int64 query
        sizes, ``base_margin`` float64 of the given shape. Assigning one of
        these goes through the matching ``set_*`` method.

    Raises
    ------
    TypeError
        ``X`` (or a column) does not hold numbers.
    ValueError
        Any shape, length, value or consistency problem; the message names it.
    """

    def __init__(
        self,
        X: ArrayLike,
        label: Optional[ArrayLike] = None,
        weight: Optional[ArrayLike] = None,
        group: Optional[ArrayLike] = None,
        base_margin: Optional[ArrayLike] = None,
        feature_names: Optional[Sequence[str]] = None,
        max_bin: Optional[int] = None,
        reference: Optional[Dataset] = None,
        *,
        qid: Optional[ArrayLike] = None,
        binning_subsample: int = 200_000,
        seed: Optional[int] = None,
        sparse_absent: str = "zero",
        categorical_features="auto",
        enable_categorical: bool = False,
        feature_weights: Optional[ArrayLike] = None,
        label_lower_bound: Optional[ArrayLike] = None,
        label_upper_bound: Optional[ArrayLike] = None,
    ) -> None:
        #: Free for backends to cache device copies, keyed by their own names;
        #: cleared whenever a field changes.
        self._backend_cache = {}
        if sparse_absent not in SPARSE_ABSENT_CHOICES:
            raise ValueError(
                f"sparse_absent must be one of {list(SPARSE_ABSENT_CHOICES)}, got "
                f"{sparse_absent!r}."
            )
        self.sparse_absent = sparse_absent
        #: Features on a GPU (gpuboost.data.device), kept there; None for host input.
        self._device_features = None
        if is_device_input(X):
            if categorical_features is _CODES:  # subset(): the reference's codes
                self._device_features = device_features(X)
                self.categories = reference.categories
            else:
                self._device_features = device_features(
                    X, categorical_features, self._reference_categories(X, reference)
                )
                self.categories = self._device_features.categories
            X = None
        elif not is_sparse_matrix(X):
            X, self.categories = self._encode(
                X, reference, categorical_features, enable_categorical
            )
        elif categorical_features not in ("auto", None, _CODES) or (
            reference is not None and getattr(reference, "categories", None) is not None
        ):
            raise ValueError(
                "Categorical features need dense input (a DataFrame or an array); this X "
                "is a scipy.sparse matrix: pass categorical_features=None, or a dense X."
            )
        else:
            self.categories = None
        frame_names = None
        frame = None if X is None else sparse_frame_columns(X, self._absent_missing)
        if frame is not None:  # pandas sparse columns: read as a scipy.sparse matrix
            if self.categories is not None:
                raise ValueError(
                    "Categorical features need dense input; this DataFrame has pandas "
                    "sparse columns: pass categorical_features=None, or dense columns."
                )
            X, frame_names, _ = frame
        #: CSC copy of a sparse X (None otherwise) and bundle maps by conflict rate.
        self._sparse_columns = None if X is None else sparse_columns(X)
        if self._device_features is not None:
            data, column_names = None, self._device_features.names
            self.n_rows, self.n_features = self._device_features.array.shape
        elif self._sparse_columns is not None:
            data, column_names = None, frame_names
            self.n_rows, self.n_features = self._sparse_columns.shape
        else:
            data, column_names = convert_features(X, keep_float32=True)
            self.n_rows, self.n_features = data.shape
        self._features = data
        self._data = data if data is not None and data.dtype == X_DTYPE else None
        self._bundle_maps = {}

        names_are_explicit = feature_names is not None or column_names is not None
        if feature_names is None:
            feature_names = column_names
        if feature_names is not None:
            feature_names = check_feature_names(feature_names, self.n_features)
        if reference is not None:
            feature_names, names_are_explicit = self._check_reference(
                reference, feature_names, names_are_explicit
            )
        if feature_names is None:
            feature_names = default_feature_names(self.n_features)
        self.feature_names = feature_names
        self._feature_names_are_explicit = names_are_explicit

        # Cheap checks of the row metadata first, the binning last.
        self.set_label(label)
        if check_label_choice(label, label_lower_bound, label_upper_bound):
            self.set_label_bounds(label_lower_bound, label_upper_bound)
        self.set_weight(weight)
        self.set_group(group, qid=qid)
        self.set_base_margin(base_margin)
        self.set_feature_weights(feature_weights)

        # The binning: checked now, fitted at first use (bind_binning).
        self._reference = reference
        self._bin_mapper = None
        BinMapper(
            max_bin=DEFAULT_MAX_BIN if max_bin is None else max_bin,
            subsample=binning_subsample,
            seed=0 if seed is None else seed,
        )
        self._max_bin = None if max_bin is None else int(max_bin)
        self._binning_subsample = binning_subsample
        self._binning_seed = seed
        # Rows of weight 0 do not shape the bin edges; quantiles are weighted.
        self._binning_weight = self._weight
        self._X_binned = None

    @staticmethod
    def _reference_categories(X, reference):
        """A reference Dataset's categories for ``X``'s columns (matched by name when both
        carry names), or None."""
        if not isinstance(reference, Dataset) or reference.categories is None:
            return None
        names = frame_column_names(X)
        if names is not None and reference.has_feature_names:
            by_name = dict(zip(reference.feature_names, reference.categories))
            return [by_name.get(str(name)) for name in names]
        return reference.categories

    @staticmethod
    def _encode(X, reference, categorical_features, enable_categorical):
        """``X`` with categorical columns as codes, and the categories (see
        :mod:`gpuboost.data.categorical`): a reference's are reused (re-coding by
        label)."""
        if categorical_features is _CODES:  # subset(): the codes of the reference
            return X, reference.categories
        if reference is not None and isinstance(reference, Dataset):
            if reference.categories is not None:
                categories = Dataset._reference_categories(X, reference)
                return encode_features(X, categories=categories)[0], reference.categories
            X, found = encode_features(X, categorical_features, enable_categorical)
            if found is not None:
                raise ValueError(
                    "X has categorical columns, but the reference Dataset has none; build "
                    "both with the same categorical_features."
                )
            return X, None
        return encode_features(X, categorical_features, enable_categorical)

    @property
    def is_categorical(self):
        """ndarray of shape (n_features,), bool: the categorical features."""
        if self.categories is None:
            return np.zeros(self.n_features, dtype=bool)
        return np.array([labels is not None for labels in self.categories], dtype=bool)

    def _check_reference(self, reference, feature_names, names_are_explicit):
        """Check ``reference`` fits this data; return the feature names to use."""
        if not isinstance(reference, Dataset):
            raise TypeError(f"reference must be a Dataset, got {type(reference).__name__}.")
        if reference.n_features != self.n_features:
            raise ValueError(
                f"X has {self.n_features} features, but the reference Dataset "
                f"has {reference.n_features}."
            )
        if reference._feature_names_are_explicit:
            if not names_are_explicit:
                return list(reference.feature_names), True
            if feature_names != reference.feature_names:
                raise ValueError(
                    f"feature_names {feature_names} differ from those of the "
                    f"reference Dataset {reference.feature_names}."
                )
        return feature_names, names_are_explicit

    # -- binning ------------------------------------------------------------- #

    @property
    def bin_mapper(self):
        """The fitted :class:`~gpuboost.data.binning.BinMapper` (fitted at first use)."""
        if self._bin_mapper is None:
            self.bind_binning()
        return self._bin_mapper

    def bind_binning(self, max_bin=None, seed=None, max_cat=None):
        """Fix this Dataset's binning and fit its bin edges if not done yet.

        Training calls this with its parameters (``max_bin`` only when the parameters
        name it), so that every parameter takes effect: a Dataset built without
        ``max_bin`` and not binned yet is binned with the training's.

        Parameters
        ----------
        max_bin : int, optional
            The ``max_bin`` asked for; None: the Dataset's own (given at
            construction, else that of its bins, else 255).
        seed : int, optional
            Seed of the binning subsample when the Dataset was built without one.
        max_cat : int, optional
            Value bins of a categorical feature (with ``max_bin``), when the Dataset is
            binned now; default 255 (:func:`gpuboost.data.categorical.categorical_edges`).

        Returns
        -------
        BinMapper
            The fitted mapper (the reference's, for a Dataset built with one).

        Raises
        ------
        ValueError
            The Dataset was built, or already binned, with another ``max_bin``.
        """
        if self._reference is not None:
            self._bin_mapper = self._reference.bind_binning(max_bin, seed, max_cat)
            return self._bin_mapper
        own = self._max_bin if self._bin_mapper is None else self._bin_mapper.max_bin
        mapper = bound_bin_mapper(
            own,
            self._bin_mapper is not None,
            max_bin,
            self._binning_seed,
            seed,
            self._binning_subsample,
        )
        if self._bin_mapper is None:
            if self._sparse_columns is not None:
                self._bin_mapper = mapper.fit_sparse(
                    self._sparse_columns, self._binning_weight, self._absent_missing
                )
            elif self._device_features is not None:  # the edges computed on the device
                rows, weights = mapper.binning_rows(self.n_rows, self._binning_weight)
                device = self._device_features
                backend = get_backend(f"cuda:{device.device}")
                edges = backend.bin_edges(device.array, rows, weights, mapper.max_bin)
                self._bin_mapper = mapper.set_edges(edges)
            else:
                self._bin_mapper = mapper.fit(self.features, sample_weight=self._binning_weight)
            set_categorical_edges(self._bin_mapper, self.categories, max_cat)
        return self._bin_mapper

    def construct(self, max_bin=None, seed=None, max_cat=None):
        """Fit the bin edges and bin the rows now, as LightGBM's ``Dataset.construct``
        and XGBoost's ``DMatrix`` do when built (otherwise both happen at the first
        training). Trainings on the CPU then reuse the bins.

        Parameters
        ----------
        max_bin, seed, max_cat
            As for :meth:`bind_binning` (pass the training's ``max_bin``: a Dataset
            binned with one value refuses training with another).

        Returns
        -------
        Dataset
            This Dataset.
        """
        self.bind_binning(max_bin, seed, max_cat)
        self.X_binned  # noqa: B018 - binned now, cached on the Dataset
        return self

    # -- rows ------------------------------------------------------------------ #

    def subset(self, rows: ArrayLike) -> Dataset:
        """A Dataset of some of the rows, in the order given (XGBoost's ``slice``).

        It shares this Dataset's binning (built with ``reference=self``) and keeps the
        feature names, labels, weights, base margins and queries of those rows. For
        ranking data the rows of a query must stay contiguous (e.g. whole queries in
        increasing row order).

        Parameters
        ----------
        rows : array-like of int, shape (n_subset_rows,)
            Row indices, each in ``[0, n_rows)``; at least one.

        Returns
        -------
        Dataset

        Raises
        ------
        ValueError
            Indices that are not integers, out of range, or none; a query split into
            separate runs.
        """
        rows = as_integer_vector("rows", rows)
        if len(rows) == 0 or rows.min() < 0 or rows.max() >= self.n_rows:
            raise ValueError(
                f"rows must be 1 or more row indices in [0, {self.n_rows}), got "
                f"{len(rows)} index(es)"
                + (f" from {rows.min()} to {rows.max()}." if len(rows) else ".")
            )
        qid = None
        if self._group is not None:
            qid = np.repeat(np.arange(len(self._group)), self._group)[rows]
        sparse, device = self._sparse_columns, self._device_features
        if device is not None:
            features = device.array[device.xp.asarray(rows)]
        else:
            features = self.features[rows] if sparse is None else sparse.tocsr()[rows]
        return Dataset(
            features,
            categorical_features=_CODES,
            **label_arguments(
                None if self._label is None else self._label[rows], self.has_label_bounds
            ),
            weight=None if self._weight is None else self._weight[rows],
            base_margin=None if self._base_margin is None else self._base_margin[rows],
            feature_names=self.feature_names if self.has_feature_names else None,
            reference=self,
            qid=qid,
            sparse_absent=self.sparse_absent,
            feature_weights=self._feature_weights,
        )

    # -- sizes --------------------------------------------------------------- #

    @property
    def _absent_missing(self):
        return self.sparse_absent == "missing"

    @property
    def sparse_columns(self):
        """The canonical CSC copy of a sparse X, or None (see the class docstring)."""
        return self._sparse_columns

    @property
    def device_features(self):
        """The features on their GPU (:class:`gpuboost.data.device.DeviceFeatures`) for
        device input, else None."""
        return self._device_features

    @property
    def features(self):
        """The raw features (see the class docstring; dense copy of a sparse X, or host
        copy of device input, at first use)."""
        if self._features is None:
            if self._device_features is not None:
                self._features = self._device_features.to_host()
            else:
                self._features = self._densify(self._sparse_columns)
        return self._features

    def features_for(self, backend):
        """The raw features where ``backend`` reads them: the device array of device
        input for the CUDA backend (no host copy), else :attr:`features`."""
        if self._device_features is not None and backend.name == "cuda":
            return self._device_features.array
        return self.features

    def _densify(self, matrix):
        """A sparse matrix as a dense float64 C-order array, absent entries 0.0 or NaN
        (``sparse_absent``)."""
        return densify(matrix, self._absent_missing)

    @property
    def data(self):
        """The raw features as float64, C order (see the class docstring)."""
        if self._data is None:
            self._data = np.ascontiguousarray(self.features, dtype=X_DTYPE)
        return self._data

    @property
    def X_binned(self):
        """The binned features, uint8 (n_rows, n_features), C order.

        Computed on the host at first use (or by :meth:`construct`), by the compiled
        binning kernel where the compiled CPU kernels are in use, and shared by every
        CPU training on this Dataset; a GPU backend bins ``data`` on the device instead
        and never needs this copy.
        """
        if self._X_binned is None:
            if self._sparse_columns is not None:
                self._X_binned = self.bin_mapper.transform_sparse(
                    self._sparse_columns, self._absent_missing
                )
            else:
                self._X_binned = bin_dense(self.features, self.bin_mapper)
        return self._X_binned

    def bundle_map(self, max_conflict_rate=0.0):
        """The exclusive feature bundles of this Dataset (cached per conflict rate).

        Features whose non-default bins (bins other than that of 0.0) share at most
        ``max_conflict_rate * n_rows`` rows per bundle share one binned column
        (see :mod:`gpuboost.data.bundling`). From a sparse X only its stored entries
        are examined.

        Parameters
        ----------
        max_conflict_rate : float, default=0.0
            In [0, 1); 0 bundles only features that are never non-default in the
            same row (training is then exact).

        Returns
        -------
        gpuboost.data.bundling.BundleMap
        """
        key = float(max_conflict_rate)
        if key not in self._bundle_maps:
            from .bundling import bundle_features

            if self._sparse_columns is not None and not self._absent_missing:
                # Only the stored entries are examined (absent ones are 0.0: default).
                data, columns = self._sparse_columns, self._sparse_columns
            else:  # absent entries are missing: every row of a feature may be non-default
                data, columns = self.features, None
            self._bundle_maps[key] = bundle_features(
                data,
                self.bin_mapper,
                key,
                sparse_columns=columns,
                exclusive=self.is_categorical,
            )
        return self._bundle_maps[key]

    @property
    def has_feature_names(self):
        """Whether the feature names were given (``feature_names=``, a DataFrame's
        columns, or a ``reference`` with names) rather than the defaults ``f0, f1, ...``.
        Only then are columns matched by name (``Booster.predict``, evaluation sets,
        ``init_model``)."""
        return self._feature_names_are_explicit

    @property
    def max_bin(self):
        """Largest number of value bins (the missing bin has this index); None while
        it is left to the first training (see :meth:`bind_binning`)."""
        if self._bin_mapper is not None:
            return self._bin_mapper.max_bin
        if self._reference is not None:
            return self._reference.max_bin
        return self._max_bin

    def num_row(self) -> int:
        """Number of rows."""
        return self.n_rows

    def num_col(self) -> int:
        """Number of features."""
        return self.n_features

    # -- row metadata -------------------------------------------------------- #

    def set_label(self, label: Optional[ArrayLike]) -> None:
        """Set (or with None, remove) the label; validated as in the constructor."""
        self._label = check_label(host_vector(label), self.n_rows)
        self._label_bounds = False
        self._backend_cache.clear()

    def set_label_bounds(
        self, label_lower_bound: Optional[ArrayLike], label_upper_bound: Optional[ArrayLike]
    ) -> None:
        """Set interval labels (``survival:aft``; both None removes them): the label
        becomes the (n_rows, 2) array ``[lower, upper]``; validated as in the
        constructor."""
        self._label = check_label_bounds(
            host_vector(label_lower_bound), host_vector(label_upper_bound), self.n_rows
        )
        self._label_bounds = self._label is not None
        self._backend_cache.clear()

    @property
    def has_label_bounds(self) -> bool:
        """Whether the labels are intervals (``label_lower_bound`` / ``label_upper_bound``)."""
        return self._label is not None and self._label_bounds

    @property
    def n_targets(self) -> int:
        """Label columns: k for a label of shape (n_rows, k) (several targets), else 1."""
        if self._label is None or self._label_bounds or self._label.ndim == 1:
            return 1
        return int(self._label.shape[1])

    @property
    def label_lower_bound(self) -> Optional[np.ndarray]:
        """The lower ends of interval labels, ndarray of shape (n_rows,), or None."""
        return self._label[:, 0] if self.has_label_bounds else None

    @property
    def label_upper_bound(self) -> Optional[np.ndarray]:
        """The upper ends of interval labels, ndarray of shape (n_rows,), or None."""
        return self._label[:, 1] if self.has_label_bounds else None

    def set_weight(self, weight: Optional[ArrayLike]) -> None:
        """Set (or with None, remove) the row weights; validated as in the constructor."""
        self._weight = check_weight(host_vector(weight), self.n_rows)
        self._backend_cache.clear()

    def set_group(self, group: Optional[ArrayLike], *, qid: Optional[ArrayLike] = None) -> None:
        """Set the query sizes ``group``, or derive them from per-row ``qid``.

        With both None the Dataset has no queries.
        """
        self._group = check_group(host_vector(group), host_vector(qid), self.n_rows)
        self._backend_cache.clear()

    def set_base_margin(self, base_margin: Optional[ArrayLike]) -> None:
        """Set (or with None, remove) the initial margins; validated as in the constructor."""
        self._base_margin = check_base_margin(host_vector(base_margin), self.n_rows)
        self._backend_cache.clear()

    def set_feature_weights(self, feature_weights: Optional[ArrayLike]) -> None:
        """Set (or with None, remove) the column-sampling weights: one finite,
        non-negative number per feature, at least one positive (XGBoost's
        ``feature_weights``)."""
        self._feature_weights = check_feature_weights(host_vector(feature_weights), self.n_features)

    def get_feature_weights(self) -> Optional[np.ndarray]:
        """Column-sampling weights, ndarray of shape (n_features,), float64, or None."""
        return self._feature_weights

    def get_label(self) -> Optional[np.ndarray]:
        """Labels, ndarray of shape (n_rows,), float64, or None; for interval labels
        (:meth:`set_label_bounds`) the array of shape (n_rows, 2) of both ends."""
        return self._label

    def get_weight(self) -> Optional[np.ndarray]:
        """Row weights, ndarray of shape (n_rows,), float64, or None."""
        return self._weight

    def get_group(self) -> Optional[np.ndarray]:
        """Query sizes, ndarray of shape (n_queries,), int64, or None."""
        return self._group

    def get_base_margin(self) -> Optional[np.ndarray]:
        """Initial margins, ndarray of shape (n_rows,) or (n_rows, n_outputs), or None."""
        return self._base_margin

    label = property(get_label, set_label)
    weight = property(get_weight, set_weight)
    group = property(get_group, set_group)
    base_margin = property(get_base_margin, set_base_margin)
    feature_weights = property(get_feature_weights, set_feature_weights)

    def __repr__(self):
        fields = []
        if self._label is not None:
            fields.append("label bounds" if self.has_label_bounds else "label")
        if self._weight is not None:
            fields.append("weight")
        if self._group is not None:
            fields.append(f"group ({len(self._group)} queries)")
        if self._base_margin is not None:
            fields.append(f"base_margin {self._base_margin.shape}")
        if self._feature_weights is not None:
            fields.append("feature_weights")
        with_fields = f", with {', '.join(fields)}" if fields else ""
        return (
            f"Dataset(n_rows={self.n_rows}, n_features={self.n_features}, "
            f"max_bin={self.max_bin}{with_fields})"
        )
