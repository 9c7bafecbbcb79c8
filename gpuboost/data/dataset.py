"""``Dataset``: raw and binned features with label, weight, group and base margin.

The analogue of XGBoost's ``DMatrix`` and LightGBM's ``Dataset``. A Dataset
validates its inputs once, keeps the raw features as float64 (for init-model
margins and raw-feature prediction) and their bins (docs/DESIGN.md, "Binning")
as uint8. A validation Dataset built with ``reference=train_dataset`` reuses the
training bin edges, so its bins mean the same thresholds.

The module also holds two small text loaders: :func:`load_svmlight` (libsvm /
svmlight format) and :func:`load_query_file` (one query size per line).
"""
import numbers
import sys

import numpy as np

from ..core.dtypes import MAX_ROWS, X_DTYPE, Y_DTYPE
from .binning import BinMapper

__all__ = ["Dataset", "load_svmlight", "load_query_file"]

#: dtype of query (group) sizes and query ids.
GROUP_DTYPE = np.int64
#: NumPy dtype kinds accepted as numbers: bool, signed and unsigned int, float.
_NUMERIC_KINDS = "biuf"
#: Prefix of default feature names: "f0", "f1", ...
_DEFAULT_FEATURE_NAME_PREFIX = "f"
#: Comment marker of svmlight and query files: the rest of the line is ignored.
_COMMENT_MARKER = "#"
#: Prefix of the optional query-id token of an svmlight line ("qid:3").
_QID_PREFIX = "qid:"


# --------------------------------------------------------------------------- #
# Conversion and validation helpers
# --------------------------------------------------------------------------- #

def _loaded_module(name):
    """The module ``name`` if the program already imported it, else None.

    A pandas DataFrame or a scipy.sparse matrix can only exist once its
    library is imported, so the optional libraries never need importing here.
    """
    return sys.modules.get(name)


def _frame_to_array(frame, pandas):
    """Numeric pandas DataFrame -> (2-D float64 array, column names as str)."""
    types = pandas.api.types
    for column, dtype in frame.dtypes.items():
        is_number = types.is_numeric_dtype(dtype) and not types.is_complex_dtype(dtype)
        if not is_number or isinstance(dtype, pandas.CategoricalDtype):
            raise TypeError(f"Column {column!r} has dtype {dtype}, which is not numeric. "
                            f"Categorical support is not there yet: encode the column as "
                            f"numbers (e.g. category codes) first.")
    # Nullable extension dtypes (Int64, Float64, boolean) hold pd.NA: missing -> NaN.
    array = frame.to_numpy(dtype=X_DTYPE, na_value=np.nan)
    return array, [str(column) for column in frame.columns]


def _check_numeric_dtype(name, array):
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"{name} must hold numbers (bool, int or float), got dtype "
                        f"{array.dtype}.")


def _convert_features(X):
    """Validate ``X`` and return it as a C-contiguous 2-D float64 array.

    Returns
    -------
    data : ndarray of shape (n_rows, n_features), float64, C order
        ``X`` itself when it already is one (no copy).
    column_names : list of str or None
        The column names of a pandas DataFrame.
    """
    pandas = _loaded_module("pandas")
    sparse = _loaded_module("scipy.sparse")
    column_names = None
    if isinstance(X, (str, bytes)):
        raise TypeError(f"X must be a 2-D array of numbers, got {type(X).__name__}.")
    if pandas is not None and isinstance(X, pandas.DataFrame):
        _check_shape(X.shape)
        X, column_names = _frame_to_array(X, pandas)
    elif sparse is not None and sparse.issparse(X):
        # Densified: absent entries are 0.0 (not missing). The Dataset keeps a
        # CSC copy too, for exclusive feature bundling (gpuboost.bundling).
        _check_numeric_dtype("X", X)
        _check_shape(X.shape)
        X = X.astype(X_DTYPE).toarray()
    else:
        X = np.asarray(X)
        _check_numeric_dtype("X", X)
        _check_shape(X.shape)
    return np.ascontiguousarray(X, dtype=X_DTYPE), column_names


def _sparse_columns(X):
    """A canonical float64 CSC copy of a scipy.sparse ``X`` (already validated by
    :func:`_convert_features`), or None when ``X`` is not sparse."""
    sparse = _loaded_module("scipy.sparse")
    if sparse is None or not sparse.issparse(X):
        return None
    columns = sparse.csc_matrix(X, dtype=X_DTYPE, copy=True)
    columns.sum_duplicates()  # also sorts the row indices
    return columns


def _check_shape(shape):
    if len(shape) == 1:
        raise ValueError(f"X must be 2-D (n_rows, n_features), got a 1-D array of length "
                         f"{shape[0]}. Use X.reshape(-1, 1) for a single feature or "
                         f"X.reshape(1, -1) for a single row.")
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D (n_rows, n_features), got {len(shape)} dimension(s).")
    n_rows, n_features = shape
    if n_rows == 0 or n_features == 0:
        raise ValueError(f"X is empty: shape {tuple(shape)}; need at least one row and "
                         f"one feature.")
    if n_rows > MAX_ROWS:
        raise ValueError(f"X has {n_rows} rows, more than the {MAX_ROWS} a Dataset can hold.")


def _as_array(values):
    """``np.asarray``, except that pandas nullable numbers give float64 with NaN for NA."""
    pandas = _loaded_module("pandas")
    if (pandas is not None and isinstance(values, pandas.Series)
            and isinstance(values.dtype, pandas.api.extensions.ExtensionDtype)
            and pandas.api.types.is_numeric_dtype(values.dtype)):
        return values.to_numpy(dtype=X_DTYPE, na_value=np.nan)
    return np.asarray(values)


def _as_vector(name, values, n_rows):
    """``values`` as an array of shape (n_rows,) of its own dtype; (n_rows, 1) is flattened."""
    values = _as_array(values)
    _check_numeric_dtype(name, values)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n_rows,), got shape {values.shape}.")
    if len(values) != n_rows:
        raise ValueError(f"{name} has {len(values)} values, but X has {n_rows} rows.")
    return values


def _check_finite(name, values):
    """Raise ValueError naming the first NaN or infinite entry of ``values``."""
    non_finite = ~np.isfinite(values)
    if non_finite.any():
        position = np.unravel_index(int(np.argmax(non_finite)), values.shape)
        value = values[position]
        problem = "NaN" if np.isnan(value) else ("+inf" if value > 0 else "-inf")
        where = f"row {position[0]}" + (f", column {position[1]}" if len(position) == 2 else "")
        raise ValueError(f"{name} contains {problem} at {where}; it must be finite.")


def _check_label(label, n_rows):
    if label is None:
        return None
    label = np.array(_as_vector("label", label, n_rows), dtype=Y_DTYPE)
    _check_finite("label", label)
    return label


def _check_weight(weight, n_rows):
    if weight is None:
        return None
    weight = np.array(_as_vector("weight", weight, n_rows), dtype=Y_DTYPE)
    _check_finite("weight", weight)
    negative = weight < 0
    if negative.any():
        row = int(np.argmax(negative))
        raise ValueError(f"weight contains a negative value ({weight[row]!r}) at row {row}; "
                         f"weights must be >= 0.")
    if not (weight > 0).any():
        raise ValueError("All weights are zero; at least one row needs a positive weight.")
    return weight


def _as_integer_vector(name, values):
    """``values`` (1-D, or (n, 1)) as int64, rejecting non-integral numbers."""
    values = _as_array(values)
    if values.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers, got dtype {values.dtype}.")
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}.")
    if values.dtype.kind == "f":
        integral = np.isfinite(values) & (values == np.round(values))
        if not integral.all():
            index = int(np.argmin(integral))
            raise ValueError(f"{name} must hold integers, got {values[index]!r} at index {index}.")
    return values.astype(GROUP_DTYPE)


def _group_sizes_from_qid(qid, n_rows):
    """Query sizes from per-row query ids that form contiguous runs."""
    qid = _as_integer_vector("qid", qid)
    if len(qid) != n_rows:
        raise ValueError(f"qid has {len(qid)} values, but X has {n_rows} rows.")
    run_starts = np.concatenate([[0], np.flatnonzero(qid[1:] != qid[:-1]) + 1])
    run_qids = qid[run_starts]
    order = np.argsort(run_qids, kind="stable")
    # Runs equal to the previous run in sorted order repeat an earlier query.
    repeated_runs = order[1:][run_qids[order][1:] == run_qids[order][:-1]]
    if len(repeated_runs):
        row = int(run_starts[repeated_runs.min()])
        raise ValueError(f"qid {int(qid[row])} reappears at row {row} after rows of another "
                         f"query; the rows of each query must be contiguous (sort the data "
                         f"by qid).")
    return np.diff(np.append(run_starts, n_rows)).astype(GROUP_DTYPE)


def _check_group(group, qid, n_rows):
    if group is not None and qid is not None:
        raise ValueError("Give either group (query sizes) or qid (per-row query ids), not both.")
    if qid is not None:
        return _group_sizes_from_qid(qid, n_rows)
    if group is None:
        return None
    sizes = _as_integer_vector("group", group)
    if len(sizes) == 0:
        raise ValueError("group is empty; give one size per query.")
    non_positive = sizes <= 0
    if non_positive.any():
        index = int(np.argmax(non_positive))
        raise ValueError(f"group sizes must be positive, got {int(sizes[index])} at index {index}.")
    total = int(sizes.sum())
    if total != n_rows:
        raise ValueError(f"group sizes sum to {total}, but X has {n_rows} rows.")
    return sizes


def _check_base_margin(base_margin, n_rows):
    if base_margin is None:
        return None
    base_margin = _as_array(base_margin)
    _check_numeric_dtype("base_margin", base_margin)
    if base_margin.ndim not in (1, 2) or (base_margin.ndim == 2 and base_margin.shape[1] == 0):
        raise ValueError(f"base_margin must have shape (n_rows,) or (n_rows, n_outputs), "
                         f"got {base_margin.shape}.")
    if base_margin.shape[0] != n_rows:
        raise ValueError(f"base_margin has {base_margin.shape[0]} rows, but X has {n_rows} rows.")
    base_margin = np.array(base_margin, dtype=Y_DTYPE, order="C")
    _check_finite("base_margin", base_margin)
    return base_margin


def _check_feature_names(feature_names, n_features):
    if isinstance(feature_names, (str, bytes)):
        raise ValueError("feature_names must be a list of strings, got a single string.")
    try:
        feature_names = list(feature_names)
    except TypeError:
        raise ValueError(f"feature_names must be a list of strings, got "
                         f"{type(feature_names).__name__}.") from None
    if len(feature_names) != n_features:
        raise ValueError(f"feature_names has {len(feature_names)} names, but X has "
                         f"{n_features} features.")
    for name in feature_names:
        if not isinstance(name, str):
            raise ValueError(f"feature_names must be strings, got {name!r}.")
    seen = set()
    for name in feature_names:
        if name in seen:
            raise ValueError(f"feature_names must be unique; {name!r} appears twice.")
        seen.add(name)
    return [str(name) for name in feature_names]


# --------------------------------------------------------------------------- #
# Dataset
# --------------------------------------------------------------------------- #

class Dataset:
    """Training or evaluation data: raw and binned features plus row metadata.

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features)
        A 2-D NumPy array (float, int or bool; converted to float64; any
        memory order), a pandas DataFrame with numeric columns (names become
        ``feature_names``), a scipy.sparse matrix (densified; absent entries
        are 0.0, not missing; its CSC form is kept for feature bundling, see
        :meth:`bundle_map`), or anything ``np.asarray`` accepts. NaN means
        missing; +/-inf are allowed.
    label : array-like of shape (n_rows,) or (n_rows, 1), default=None
        Finite numbers. None for prediction-only data.
    weight : array-like of shape (n_rows,), default=None
        Finite, non-negative, not all zero. None means weight 1 for every row.
        The bin edges are weighted quantiles of the rows of positive weight
        (computed here, at construction: ``set_weight`` later keeps them).
    group : array-like of shape (n_queries,), default=None
        Query sizes for ranking: positive integers summing to ``n_rows``;
        the rows of each query are contiguous and in order.
    base_margin : array-like of shape (n_rows,) or (n_rows, n_outputs), default=None
        Finite initial raw predictions, stored as given (as float64).
    feature_names : list of str, default=None
        ``n_features`` unique names; default ``['f0', 'f1', ...]``, or the
        columns of a DataFrame.
    max_bin : int, default=255
        Largest number of value bins per feature (see :class:`~gpuboost.binning.BinMapper`).
        Ignored with ``reference``, whose value is used.
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
        Number of rows the bin edges are computed on (see :class:`~gpuboost.binning.BinMapper`).
    seed : int, default=0
        Seed of the binning subsample.

    Attributes
    ----------
    data : ndarray of shape (n_rows, n_features), float64, C order
        The raw features. This *is* ``X`` (no copy) when ``X`` already is a
        C-contiguous float64 array, so do not modify ``X`` afterwards.
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order
        The bins of ``data``.
    bin_mapper : BinMapper
        The fitted mapper (shared with ``reference`` when one is given).
    feature_names : list of str
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

    def __init__(self, X, label=None, weight=None, group=None, base_margin=None,
                 feature_names=None, max_bin=255, reference=None, *, qid=None,
                 binning_subsample=200_000, seed=0):
        #: Free for backends to cache device copies, keyed by their own names;
        #: cleared whenever a field changes.
        self._backend_cache = {}
        data, column_names = _convert_features(X)
        self.data = data
        #: CSC copy of a sparse X (None otherwise) and bundle maps by conflict rate.
        self._sparse_columns = _sparse_columns(X)
        self._bundle_maps = {}
        self.n_rows, self.n_features = data.shape

        names_are_explicit = feature_names is not None or column_names is not None
        if feature_names is None:
            feature_names = column_names
        if feature_names is not None:
            feature_names = _check_feature_names(feature_names, self.n_features)
        if reference is not None:
            feature_names, names_are_explicit = self._check_reference(
                reference, feature_names, names_are_explicit)
        if feature_names is None:
            feature_names = [f"{_DEFAULT_FEATURE_NAME_PREFIX}{index}"
                             for index in range(self.n_features)]
        self.feature_names = feature_names
        self._feature_names_are_explicit = names_are_explicit

        # Cheap checks of the row metadata first, the binning last.
        self.set_label(label)
        self.set_weight(weight)
        self.set_group(group, qid=qid)
        self.set_base_margin(base_margin)

        if reference is not None:
            self.bin_mapper = reference.bin_mapper
        else:
            # Rows of weight 0 do not shape the bin edges; quantiles are weighted.
            self.bin_mapper = BinMapper(max_bin=max_bin, subsample=binning_subsample,
                                        seed=seed).fit(data, sample_weight=self._weight)
        self._X_binned = None

    def _check_reference(self, reference, feature_names, names_are_explicit):
        """Check ``reference`` fits this data; return the feature names to use."""
        if not isinstance(reference, Dataset):
            raise TypeError(f"reference must be a Dataset, got {type(reference).__name__}.")
        if reference.n_features != self.n_features:
            raise ValueError(f"X has {self.n_features} features, but the reference Dataset "
                             f"has {reference.n_features}.")
        if reference._feature_names_are_explicit:
            if not names_are_explicit:
                return list(reference.feature_names), True
            if feature_names != reference.feature_names:
                raise ValueError(f"feature_names {feature_names} differ from those of the "
                                 f"reference Dataset {reference.feature_names}.")
        return feature_names, names_are_explicit

    # -- sizes --------------------------------------------------------------- #

    @property
    def X_binned(self):
        """The binned features, uint8 (n_rows, n_features), C order.

        Computed on the host at first use; a GPU backend bins ``data`` on the device
        instead and never needs this copy.
        """
        if self._X_binned is None:
            self._X_binned = self.bin_mapper.transform(self.data)
        return self._X_binned

    def bundle_map(self, max_conflict_rate=0.0):
        """The exclusive feature bundles of this Dataset (cached per conflict rate).

        Features whose non-default bins (bins other than that of 0.0) share at most
        ``max_conflict_rate * n_rows`` rows per bundle share one binned column
        (see :mod:`gpuboost.bundling`). From a sparse X only its stored entries
        are examined.

        Parameters
        ----------
        max_conflict_rate : float, default=0.0
            In [0, 1); 0 bundles only features that are never non-default in the
            same row (training is then exact).

        Returns
        -------
        gpuboost.bundling.BundleMap
        """
        key = float(max_conflict_rate)
        if key not in self._bundle_maps:
            from .bundling import bundle_features
            self._bundle_maps[key] = bundle_features(self.data, self.bin_mapper, key,
                                                     sparse_columns=self._sparse_columns)
        return self._bundle_maps[key]

    @property
    def max_bin(self):
        """Largest number of value bins; the missing bin has this index."""
        return self.bin_mapper.max_bin

    def num_row(self):
        """Number of rows."""
        return self.n_rows

    def num_col(self):
        """Number of features."""
        return self.n_features

    # -- row metadata -------------------------------------------------------- #

    def set_label(self, label):
        """Set (or with None, remove) the label; validated as in the constructor."""
        self._label = _check_label(label, self.n_rows)
        self._backend_cache.clear()

    def set_weight(self, weight):
        """Set (or with None, remove) the row weights; validated as in the constructor."""
        self._weight = _check_weight(weight, self.n_rows)
        self._backend_cache.clear()

    def set_group(self, group, *, qid=None):
        """Set the query sizes ``group``, or derive them from per-row ``qid``.

        With both None the Dataset has no queries.
        """
        self._group = _check_group(group, qid, self.n_rows)
        self._backend_cache.clear()

    def set_base_margin(self, base_margin):
        """Set (or with None, remove) the initial margins; validated as in the constructor."""
        self._base_margin = _check_base_margin(base_margin, self.n_rows)
        self._backend_cache.clear()

    def get_label(self):
        """Labels, ndarray of shape (n_rows,), float64, or None."""
        return self._label

    def get_weight(self):
        """Row weights, ndarray of shape (n_rows,), float64, or None."""
        return self._weight

    def get_group(self):
        """Query sizes, ndarray of shape (n_queries,), int64, or None."""
        return self._group

    def get_base_margin(self):
        """Initial margins, ndarray of shape (n_rows,) or (n_rows, n_outputs), or None."""
        return self._base_margin

    label = property(get_label, set_label)
    weight = property(get_weight, set_weight)
    group = property(get_group, set_group)
    base_margin = property(get_base_margin, set_base_margin)

    def __repr__(self):
        fields = []
        if self._label is not None:
            fields.append("label")
        if self._weight is not None:
            fields.append("weight")
        if self._group is not None:
            fields.append(f"group ({len(self._group)} queries)")
        if self._base_margin is not None:
            fields.append(f"base_margin {self._base_margin.shape}")
        with_fields = f", with {', '.join(fields)}" if fields else ""
        return (f"Dataset(n_rows={self.n_rows}, n_features={self.n_features}, "
                f"max_bin={self.max_bin}{with_fields})")


# --------------------------------------------------------------------------- #
# Text loaders
# --------------------------------------------------------------------------- #

def _parse_error(path, line_number, problem):
    return ValueError(f"{path}, line {line_number}: {problem}")


def _parse_int(text, path, line_number, what):
    try:
        return int(text)
    except ValueError:
        raise _parse_error(path, line_number, f"{what} {text!r} is not an integer.") from None


def _parse_float(text, path, line_number, what):
    try:
        return float(text)
    except ValueError:
        raise _parse_error(path, line_number, f"{what} {text!r} is not a number.") from None


def load_svmlight(path, n_features=None, *, zero_based="auto", return_qid=False):
    """Read a libsvm / svmlight text file into a dense matrix.

    Every non-blank line is ``label [qid:Q] index:value index:value ...``;
    text after ``#`` is a comment. Absent entries are 0.0 (not missing);
    an explicit ``nan`` value is missing.

    Parameters
    ----------
    path : str or os.PathLike
    n_features : int, default=None
        Number of columns; default: the largest index + 1. Must exceed every index.
    zero_based : {"auto", True, False}, default="auto"
        Whether feature indices start at 0. "auto": 0-based when some index is
        0, else 1-based. A 0-based file that never uses feature 0 is then read
        as 1-based (its columns shift by one); pass True for such files.
    return_qid : bool, default=False
        Also return the per-row query ids (every line must then have ``qid:``).

    Returns
    -------
    X : ndarray of shape (n_rows, n_features), float64
    y : ndarray of shape (n_rows,), float64
    qid : ndarray of shape (n_rows,), int64
        Only with ``return_qid=True``.

    Raises
    ------
    ValueError
        On a malformed line (the message gives the line number), an index
        out of range, or a file without data.
    """
    if zero_based not in ("auto", True, False):
        raise ValueError(f"zero_based must be 'auto', True or False, got {zero_based!r}.")
    labels, qids, rows, columns, values = [], [], [], [], []
    first_zero_index_line = None
    with open(path, encoding="utf-8") as file:
        for line_number, line in enumerate(file, start=1):
            tokens = line.split(_COMMENT_MARKER, 1)[0].split()
            if not tokens:
                continue
            row = len(labels)
            labels.append(_parse_float(tokens[0], path, line_number, "label"))
            tokens = tokens[1:]
            if tokens and tokens[0].startswith(_QID_PREFIX):
                qids.append(_parse_int(tokens[0][len(_QID_PREFIX):], path, line_number, "qid"))
                tokens = tokens[1:]
            elif return_qid:
                raise _parse_error(path, line_number, "no 'qid:' after the label.")
            indices_on_line = set()
            for token in tokens:
                index_text, separator, value_text = token.partition(":")
                if not separator:
                    raise _parse_error(path, line_number,
                                       f"expected 'index:value', got {token!r}.")
                index = _parse_int(index_text, path, line_number, "feature index")
                if index < 0:
                    raise _parse_error(path, line_number, f"negative feature index {index}.")
                if index in indices_on_line:
                    raise _parse_error(path, line_number, f"feature index {index} appears twice.")
                indices_on_line.add(index)
                if index == 0 and first_zero_index_line is None:
                    first_zero_index_line = line_number
                rows.append(row)
                columns.append(index)
                values.append(_parse_float(value_text, path, line_number, "value"))
    if not labels:
        raise ValueError(f"{path}: no data lines.")

    columns = np.array(columns, dtype=np.int64)
    if zero_based == "auto":
        zero_based = first_zero_index_line is not None
    elif not zero_based and first_zero_index_line is not None:
        raise _parse_error(path, first_zero_index_line,
                           "feature index 0 in a file read as 1-based (zero_based=False).")
    if not zero_based:
        columns -= 1
    n_features_seen = int(columns.max()) + 1 if len(columns) else 0
    if n_features is None:
        n_features = n_features_seen
    elif not isinstance(n_features, numbers.Integral) or n_features < n_features_seen:
        raise ValueError(f"n_features={n_features!r} is too small or not an integer: "
                         f"{path} has {n_features_seen} features.")
    X = np.zeros((len(labels), n_features), dtype=X_DTYPE)
    X[np.array(rows, dtype=np.int64), columns] = np.array(values, dtype=X_DTYPE)
    y = np.array(labels, dtype=Y_DTYPE)
    if return_qid:
        return X, y, np.array(qids, dtype=GROUP_DTYPE)
    return X, y


def load_query_file(path):
    """Read query sizes, one positive integer per line (LightGBM ``.query`` files).

    Blank lines and text after ``#`` are ignored.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    group : ndarray of shape (n_queries,), int64

    Raises
    ------
    ValueError
        On a line that is not one positive integer (with its line number),
        or a file without sizes.
    """
    sizes = []
    with open(path, encoding="utf-8") as file:
        for line_number, line in enumerate(file, start=1):
            tokens = line.split(_COMMENT_MARKER, 1)[0].split()
            if not tokens:
                continue
            if len(tokens) != 1:
                raise _parse_error(path, line_number,
                                   f"expected one query size, got {len(tokens)} fields.")
            size = _parse_int(tokens[0], path, line_number, "query size")
            if size <= 0:
                raise _parse_error(path, line_number, f"query size {size} is not positive.")
            sizes.append(size)
    if not sizes:
        raise ValueError(f"{path}: no query sizes.")
    return np.array(sizes, dtype=GROUP_DTYPE)
