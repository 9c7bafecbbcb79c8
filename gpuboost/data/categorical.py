"""Categorical input: which columns are categorical, their labels and codes.

A categorical column is stored in a Dataset as float64 *codes* ``0 .. k - 1`` (NaN:
missing), the index of each row's category in the feature's list of *labels*. The
training Dataset numbers its categories by decreasing frequency (ties: the order of
the pandas dtype's categories, else sorted labels), so that rare categories have the
highest codes and share the "other" bin when a feature has more than ``max_cat``
(:func:`categorical_edges`, docs/DESIGN.md "Categorical features"). The labels
(strings or numbers) are stored in the model; every other Dataset and every
prediction re-codes its columns *by label* against them (XGBoost 3.1's re-coding), so
another category order or a category unseen in training changes nothing: an unseen
category becomes missing and takes the split's default direction.

Which columns are categorical (``categorical_features``):

* ``'auto'`` (default): pandas ``category`` columns (and polars ``Categorical`` /
  ``Enum``, Arrow dictionary columns, read through pandas); string / object columns
  too when ``enable_categorical=True`` (XGBoost's name), else a TypeError says so;
* a list of column names or indices: those columns (any values: numbers or strings),
  plus the ``'auto'`` ones;
* None: none (a category column is then refused).
"""

import numpy as np

from ..core.dtypes import X_DTYPE
from .convert import loaded_module

__all__ = [
    "encode_features",
    "frame_categorical_columns",
    "array_categorical_columns",
    "category_counts",
    "merge_category_counts",
    "categorical_edges",
    "check_categories",
    "dtype_code_table",
    "AUTO",
]

#: ``categorical_features`` value that picks the categorical columns from their dtypes.
AUTO = "auto"


def _plain_label(value):
    """A label as a JSON-ready Python value (str, int or finite float)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"A category label must be finite, got {value!r}.")
        return value
    if isinstance(value, (str, np.str_)):
        return str(value)
    raise TypeError(
        f"Category labels must be strings or numbers, got {value!r} "
        f"({type(value).__name__}); convert the column's categories to str first."
    )


def _label_key(label):
    """Sort key of labels of mixed types: numbers first (by value), then strings."""
    return (1, label) if isinstance(label, str) else (0, label)


def check_categories(categories, n_features):
    """Validate a per-feature list of label lists (None for numeric features).

    Returns
    -------
    list of (list or None)
        Labels as plain Python values; ValueError/TypeError naming the problem.
    """
    if categories is None:
        return None
    categories = list(categories)
    if len(categories) != n_features:
        raise ValueError(f"categories has {len(categories)} entries, expected {n_features}.")
    checked = []
    for feature, labels in enumerate(categories):
        if labels is None:
            checked.append(None)
            continue
        labels = [_plain_label(v) for v in labels]
        if not labels:
            raise ValueError(f"feature {feature}: a categorical feature needs a category.")
        if len(set(labels)) != len(labels):
            raise ValueError(f"feature {feature}: category labels must be unique.")
        checked.append(labels)
    return checked if any(labels is not None for labels in checked) else None


def _missing_mask(values):
    """Missing entries of an object / numeric column: None, NaN, pd.NA, NaT."""
    pandas = loaded_module("pandas")
    if pandas is not None:
        return np.asarray(pandas.isna(values), dtype=bool)
    values = np.asarray(values)
    if values.dtype.kind == "f":
        return np.isnan(values)
    return np.array([v is None or (isinstance(v, float) and v != v) for v in values], dtype=bool)


def _unique_inverse(values):
    """``(labels, inverse)``: the distinct values of a column as plain labels (sorted)
    and the index of every entry's label."""
    try:
        uniques, inverse = np.unique(values, return_inverse=True)
        labels = [_plain_label(v) for v in uniques]
    except TypeError:  # mixed types: numbers and strings
        labels = sorted({_plain_label(v) for v in values}, key=_label_key)
        index = {label: i for i, label in enumerate(labels)}
        inverse = np.array([index[_plain_label(v)] for v in values], dtype=np.int64)
        return labels, inverse
    if len(set(labels)) != len(labels):  # e.g. 1 and 1.0 in an object column
        merged = sorted(set(labels), key=_label_key)
        index = {label: i for i, label in enumerate(merged)}
        inverse = np.array([index[label] for label in labels], dtype=np.int64)[inverse]
        labels = merged
    return labels, np.asarray(inverse, dtype=np.int64).reshape(-1)


def _column_labels(values, missing, dtype_categories=None, dtype_codes=None):
    """``(labels in frequency order, codes of the rows)`` of a training column.

    ``dtype_categories`` and ``dtype_codes`` (a pandas category column's) give the
    base order; otherwise it is the sorted distinct values.
    """
    base, counts, base_codes = _base_counts(values, missing, dtype_categories, dtype_codes)
    labels, recode = _frequency_order(base, counts)
    codes = np.full(len(missing), np.nan, dtype=X_DTYPE)
    codes[~missing] = recode[base_codes]
    return labels, codes


def _base_counts(values, missing, dtype_categories=None, dtype_codes=None):
    """``(base labels, row count of each, base index of every present row)`` of a
    column: the dtype's categories (with ``dtype_codes``), else its sorted distinct
    values."""
    if dtype_categories is not None:
        base = [_plain_label(v) for v in dtype_categories]
        base_codes = np.asarray(dtype_codes, dtype=np.int64)[~missing]
    else:
        base, base_codes = _unique_inverse(values[~missing])
    return base, np.bincount(base_codes, minlength=len(base)), base_codes


def _frequency_order(base, counts):
    """``(labels, recode)``: the base labels that occur, by decreasing count (ties: base
    order), and each base label's code (-1: absent)."""
    counts = np.asarray(counts, dtype=np.int64)
    seen = np.flatnonzero(counts > 0)
    order = seen[np.lexsort((seen, -counts[seen]))]  # frequent first, ties: base order
    recode = np.full(len(base), -1, dtype=np.int64)
    recode[order] = np.arange(len(order))
    return [base[i] for i in order], recode


def category_counts(column):
    """The categories of one piece of a column and their row counts, for
    :func:`merge_category_counts` (distributed data: ``gpuboost.dask``).

    Parameters
    ----------
    column : pandas Series or 1-D ndarray

    Returns
    -------
    (dtype_categories, labels, counts)
        ``dtype_categories``: a pandas ``category`` column's categories in dtype order
        (plain labels), else None; ``labels`` and ``counts`` (int64): each base label
        (the dtype's categories, else the distinct values, sorted) and its rows.
    """
    pandas = loaded_module("pandas")
    if pandas is not None and isinstance(column, pandas.Series):
        missing = np.asarray(column.isna(), dtype=bool)
        if isinstance(column.dtype, pandas.CategoricalDtype):
            categories = list(column.cat.categories)
            base, counts, _ = _base_counts(None, missing, categories, column.cat.codes)
            return base, base, counts
        values = np.asarray(column.astype(object))
    else:
        values = np.asarray(column)
        missing = _missing_mask(values)
    base, counts, _ = _base_counts(values, missing)
    return None, base, counts


def merge_category_counts(pieces):
    """The labels of a column in code order, from the :func:`category_counts` of its
    pieces: exactly the labels a training Dataset of all the rows numbers (decreasing
    total count; ties: the dtype's category order when every piece has the same
    ``category`` dtype, else the sorted labels).

    Returns
    -------
    list or None
        None when no piece has a non-missing value.
    """
    pieces = list(pieces)
    dtype_orders = [piece[0] for piece in pieces]
    totals = {}
    for _, labels, counts in pieces:
        for label, count in zip(labels, np.asarray(counts).tolist()):
            totals[label] = totals.get(label, 0) + int(count)
    first = dtype_orders[0] if dtype_orders else None
    if first is not None and all(order == first for order in dtype_orders):
        base = list(first)
    else:
        base = sorted(totals, key=_label_key)
    labels, _ = _frequency_order(base, [totals.get(label, 0) for label in base])
    return labels or None


def dtype_code_table(dtype_categories, counts=None, categories=None):
    """Codes of a category column's dtype categories (pandas', cuDF's): a training
    column's labels numbered by decreasing ``counts`` (rows per dtype category; ties:
    dtype order; absent categories get no code), or re-coded by label against stored
    ``categories`` (a model's or reference Dataset's; unseen labels get no code).

    Parameters
    ----------
    dtype_categories : sequence
        The dtype's categories, in its order (the rows' dtype codes index them).
    counts : array-like of int, optional
        Rows of each dtype category (training column).
    categories : list, optional
        Stored labels (instead of ``counts``).

    Returns
    -------
    labels : list
        The column's labels in code order (``categories`` when given).
    table : ndarray of shape (len(dtype_categories),), float64
        The code of each dtype category; NaN for none.
    """
    if categories is not None:
        return categories, _recode(
            np.asarray(list(dtype_categories), dtype=object), None, categories
        )
    labels, recode = _frequency_order([_plain_label(v) for v in dtype_categories], counts)
    return labels, np.where(recode >= 0, recode, np.nan).astype(X_DTYPE)


def _recode(values, missing, labels):
    """Codes of ``values`` against the stored ``labels``; unseen labels -> NaN."""
    index = {label: i for i, label in enumerate(labels)}
    if missing is None:
        missing = np.zeros(len(values), dtype=bool)
    codes = np.full(len(values), np.nan, dtype=X_DTYPE)
    present = np.flatnonzero(~missing)
    if not len(present):
        return codes
    try:
        uniques, inverse = _unique_inverse(values[present])
    except (TypeError, ValueError):
        uniques, inverse = [], None
    if inverse is None:
        return codes
    table = np.array([index.get(label, -1) for label in uniques], dtype=np.int64)
    found = table[inverse]
    codes[present[found >= 0]] = found[found >= 0]
    return codes


def recode_categories(data, own, target):
    """Codes of a Dataset's categorical columns, re-coded by label from its own
    categories to ``target``'s (a model's, or the training Dataset's); unseen labels and
    missing values become NaN (missing).

    Parameters
    ----------
    data : ndarray of shape (n_rows, n_features)  # IN
        The Dataset's features, codes in its categorical columns.
    own, target : list of (list of labels or None), length n_features
        The categories of each feature (None: numeric) in the Dataset and in the target.

    Returns
    -------
    ndarray of shape (n_rows, n_features)
        ``data`` itself when every categorical feature has the target's categories, else
        a float64 copy with the re-coded columns.

    Raises
    ------
    ValueError
        A feature is categorical in one and numeric in the other.
    """
    recoded = data
    for j, (mine, theirs) in enumerate(zip(own, target)):
        if mine == theirs:
            continue
        if mine is None or theirs is None:
            raise ValueError(
                f"Feature {j} is {'categorical' if theirs is not None else 'numeric'} in "
                f"the model (or training data) but not in this Dataset; build the Dataset with "
                f"the same categorical_features as the training data (or with "
                f"reference=the training Dataset)."
            )
        if recoded is data:
            recoded = np.array(data, dtype=np.float64)
        index = {label: code for code, label in enumerate(theirs)}
        table = np.array([index.get(label, np.nan) for label in mine], dtype=np.float64)
        column = recoded[:, j]
        present = ~np.isnan(column)
        codes = np.full(len(column), np.nan)
        codes[present] = table[column[present].astype(np.int64)]
        recoded[:, j] = codes
    return recoded


def _as_pandas(X):
    """A pandas DataFrame for polars / Arrow frames with categorical columns, else X."""
    polars = loaded_module("polars")
    if polars is not None and isinstance(X, polars.DataFrame):
        if any(
            isinstance(dtype, (polars.Categorical, polars.Enum)) or dtype == polars.String
            for dtype in X.schema.values()
        ):
            return X.to_pandas()
        return X
    pyarrow = loaded_module("pyarrow")
    if pyarrow is not None and isinstance(X, (pyarrow.Table, pyarrow.RecordBatch)):
        types = pyarrow.types
        if any(
            types.is_dictionary(c.type) or types.is_string(c.type) or types.is_large_string(c.type)
            for c in X.columns
        ):
            return X.to_pandas()
    return X


def _requested_columns(categorical_features, names, n_columns):
    """Positions of the columns named or indexed by ``categorical_features``."""
    if categorical_features is None or (
        isinstance(categorical_features, str) and categorical_features == AUTO
    ):
        return set()
    if isinstance(categorical_features, str):
        raise ValueError(
            f"categorical_features must be 'auto', None or a list of column names or "
            f"indices, got {categorical_features!r}."
        )
    positions = set()
    for item in categorical_features:
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not 0 <= int(item) < n_columns:
                raise ValueError(
                    f"categorical_features index {int(item)} is out of range [0, {n_columns})."
                )
            positions.add(int(item))
        elif names is not None and item in names:
            positions.add(names.index(item))
        else:
            raise ValueError(
                f"categorical_features names {item!r}, which is not a column of X "
                f"(columns: {names if names is not None else 'none named; use indices'})."
            )
    return positions


def encode_features(X, categorical_features=AUTO, enable_categorical=False, categories=None):
    """Replace the categorical columns of ``X`` by their codes.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_rows, n_features)
    categorical_features : 'auto', None, or list of str or int
        See the module docstring.
    enable_categorical : bool
        Take string / object columns as categorical (else they are refused).
    categories : list of (list or None), optional
        Stored labels (a model's, or a reference Dataset's): the categorical columns
        are those with labels, re-coded by label. None: find the categorical columns
        and number their categories (a training Dataset).

    Returns
    -------
    X : the input itself when it has no categorical column, else a float64 ndarray
        (or a pandas DataFrame of float64 columns, keeping the column names).
    categories : list of (list or None) or None
        The labels per feature (``categories`` when given), None without categorical
        features.
    """
    X = _as_pandas(X)
    pandas = loaded_module("pandas")
    if pandas is not None and isinstance(X, pandas.DataFrame):
        return _encode_frame(X, categorical_features, enable_categorical, categories, pandas)
    listed = not (
        categorical_features is None
        or (isinstance(categorical_features, str) and categorical_features == AUTO)
    )
    n_columns = (np.shape(X)[1] if np.ndim(X) == 2 else 0) if listed else 0
    requested = _requested_columns(categorical_features, None, n_columns)
    array = X if isinstance(X, np.ndarray) else None
    if array is None and not requested and categories is None:
        return X, None
    if array is None:
        sparse = loaded_module("scipy.sparse")
        if sparse is not None and sparse.issparse(X):
            if requested or categories is not None:
                X = X.toarray()
            else:
                return X, None
        array = np.asarray(X)
    is_text = array.dtype.kind in "US" or (
        array.dtype.kind == "O" and any(isinstance(v, str) for v in array.reshape(-1))
    )
    if not requested and categories is None:
        if is_text and array.ndim == 2:
            _refuse_text(f"X (dtype {array.dtype})", enable_categorical)
        return X, None
    if array.ndim != 2:
        return X, None
    if categories is not None:
        columns = [j for j, labels in enumerate(categories) if labels is not None]
        if array.shape[1] != len(categories):
            return X, categories  # the caller reports the wrong number of features
    else:
        columns = sorted(requested)
    if is_text:
        others = [j for j in range(array.shape[1]) if j not in set(columns)]
        if others and not _all_numeric(array[:, others]):
            _refuse_text("X has non-numeric columns that are not categorical;", True)
    out = np.empty(array.shape, dtype=X_DTYPE)
    numeric = [j for j in range(array.shape[1]) if j not in set(columns)]
    if numeric:
        out[:, numeric] = array[:, numeric].astype(X_DTYPE)
    found = [None] * array.shape[1]
    for j in columns:
        values = array[:, j]
        missing = _missing_mask(values)
        if categories is None:
            found[j], out[:, j] = _column_labels(values, missing, None)
        else:
            out[:, j] = _recode(values, missing, categories[j])
    return out, (categories if categories is not None else check_categories(found, len(found)))


def _all_numeric(values):
    try:
        values.astype(X_DTYPE)
    except (TypeError, ValueError):
        return False
    return True


def _refuse_text(what, enable_categorical):
    if enable_categorical:
        raise TypeError(f"{what} name them in categorical_features, or encode them as numbers.")
    raise TypeError(
        f"{what} is not numeric: it holds strings, not numbers. Pass enable_categorical=True "
        f"to take string columns as categorical features (or name them in "
        f"categorical_features, or make them pandas 'category' columns)."
    )


def frame_categorical_columns(names, dtypes, categorical_features, enable_categorical):
    """Positions (sorted) of a DataFrame's categorical columns, from its column names
    and pandas dtypes (see the module docstring); TypeError for a ``category`` column
    with ``categorical_features=None`` and for a string column that is not categorical.
    Also for the dtypes of a ``dask.dataframe`` (``gpuboost.dask``)."""
    pandas = loaded_module("pandas")
    types = pandas.api.types
    columns = set(_requested_columns(categorical_features, names, len(dtypes)))
    if categorical_features is not None:
        for j, dtype in enumerate(dtypes):
            if isinstance(dtype, pandas.CategoricalDtype):
                columns.add(j)
            elif not (types.is_numeric_dtype(dtype) or types.is_bool_dtype(dtype)):
                if enable_categorical and (
                    types.is_string_dtype(dtype) or types.is_object_dtype(dtype)
                ):
                    columns.add(j)
    for j, dtype in enumerate(dtypes):
        if j in columns:
            continue
        if isinstance(dtype, pandas.CategoricalDtype):
            raise TypeError(
                f"Column {names[j]!r} is a pandas 'category' column, but "
                f"categorical_features=None: pass categorical_features='auto' (the "
                f"default) or encode it as numbers."
            )
        if types.is_string_dtype(dtype) or types.is_object_dtype(dtype):
            _refuse_text(f"Column {names[j]!r} (dtype {dtype})", enable_categorical)
    return sorted(columns)


def array_categorical_columns(categorical_features, n_columns, names=None, is_text=False):
    """Positions (sorted) of an array's categorical columns: those ``categorical_features``
    lists (indices, or names among ``names``); an array of strings without any is
    refused (TypeError), as :func:`encode_features` refuses it."""
    columns = sorted(_requested_columns(categorical_features, names, n_columns))
    if not columns and is_text:
        _refuse_text("X (an array of strings)", True)
    return columns


def _encode_frame(frame, categorical_features, enable_categorical, categories, pandas):
    names = [str(c) for c in frame.columns]
    if categories is not None:
        if len(categories) != frame.shape[1]:
            return frame, categories  # the caller reports the wrong number of features
        columns = [j for j, labels in enumerate(categories) if labels is not None]
    else:
        columns = frame_categorical_columns(
            names, list(frame.dtypes), categorical_features, enable_categorical
        )
    if not columns:
        return frame, None
    data = {}
    found = [None] * frame.shape[1]
    column_set = set(columns)
    for j, column in enumerate(frame.columns):
        series = frame.iloc[:, j]
        if j not in column_set:
            data[column] = series
            continue
        missing = np.asarray(series.isna(), dtype=bool)
        if isinstance(series.dtype, pandas.CategoricalDtype):
            dtype_categories = list(series.cat.categories)
            dtype_codes = np.asarray(series.cat.codes, dtype=np.int64)[~missing]
            counts = np.bincount(dtype_codes, minlength=len(dtype_categories))
            labels, table = dtype_code_table(
                dtype_categories, counts, None if categories is None else categories[j]
            )
            found[j] = labels if categories is None else None
            codes = np.full(len(series), np.nan, dtype=X_DTYPE)
            codes[~missing] = table[dtype_codes]
        else:
            values = np.asarray(series.astype(object))
            if categories is None:
                found[j], codes = _column_labels(values, missing)
            else:
                codes = _recode(values, missing, categories[j])
        data[column] = codes
    encoded = pandas.DataFrame(data, index=frame.index)
    encoded.columns = frame.columns
    if categories is not None:
        return encoded, categories
    return encoded, check_categories(found, len(found))


def categorical_edges(n_categories, max_cat, max_bin):
    """The bin edges of a categorical feature of ``n_categories`` codes.

    Code ``c`` gets bin ``c`` for ``c < n_value_bins - 1``; with more than
    ``min(max_cat, max_bin)`` categories the codes from ``n_value_bins - 1`` on (the
    rarest) share the last value bin, "other". The edges are the midpoints
    ``c + 0.5``, so the numeric binning contract maps codes to these bins.

    Returns
    -------
    ndarray of shape (n_value_bins - 1,), float64
    """
    n_value_bins = max(1, min(int(n_categories), int(max_cat), int(max_bin)))
    return np.arange(n_value_bins - 1, dtype=X_DTYPE) + 0.5
