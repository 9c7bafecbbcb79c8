"""Input conversion and validation: features, labels, weights, groups, names.

Every public entry point (``Dataset``, ``Booster.predict``, the scikit-learn
estimators, the CLI) converts and checks its inputs here, so that bad input gets
the same clear error everywhere.
"""

import sys
import warnings

import numpy as np

from ..core.array import get_array_module, is_device_array, to_numpy
from ..core.dtypes import MAX_ROWS, X_DTYPE, Y_DTYPE
from ..errors import value_repr

__all__ = [
    "as_array",
    "as_integer_vector",
    "as_vector",
    "check_base_margin",
    "check_feature_names",
    "check_finite",
    "check_group",
    "check_label",
    "check_label_bounds",
    "check_label_choice",
    "check_numeric_dtype",
    "check_shape",
    "check_weight",
    "check_feature_weights",
    "convert_features",
    "default_feature_names",
    "densify",
    "feature_positions",
    "has_default_names",
    "select_features",
    "frame_column_names",
    "frame_to_array",
    "group_sizes_from_qid",
    "group_sizes_from_runs",
    "merge_qid_runs",
    "qid_runs",
    "loaded_module",
    "sparse_columns",
    "sparse_frame_columns",
    "has_sparse_columns",
    "is_sparse_matrix",
    "GROUP_DTYPE",
]

#: dtype of query (group) sizes and query ids.
GROUP_DTYPE = np.int64
#: NumPy dtype kinds accepted as numbers: bool, signed and unsigned int, float.
_NUMERIC_KINDS = "biuf"
#: Prefix of default feature names: "f0", "f1", ...
DEFAULT_FEATURE_NAME_PREFIX = "f"


def loaded_module(name):
    """The module ``name`` if the program already imported it, else None.

    A pandas DataFrame or a scipy.sparse matrix can only exist once its
    library is imported, so the optional libraries never need importing here.
    """
    return sys.modules.get(name)


#: Message tail of a non-numeric DataFrame column.
_NOT_NUMERIC_HINT = (
    "Categorical columns are read by a Dataset (categorical_features='auto' takes pandas "
    "'category' columns, enable_categorical=True string columns) and by a model trained "
    "on them; otherwise encode the column as numbers."
)


def _not_numeric(column, dtype):
    return TypeError(
        f"Column {column!r} has dtype {dtype}, which is not numeric. {_NOT_NUMERIC_HINT}"
    )


def _check_frame_numeric(frame, pandas):
    """TypeError naming the first column of a pandas DataFrame that is not numeric."""
    types = pandas.api.types
    for column, dtype in frame.dtypes.items():
        is_number = types.is_numeric_dtype(dtype) and not types.is_complex_dtype(dtype)
        if not is_number or isinstance(dtype, pandas.CategoricalDtype):
            raise _not_numeric(column, dtype)


def frame_to_array(frame, pandas):
    """Numeric pandas DataFrame -> (2-D float64 array, column names as str)."""
    _check_frame_numeric(frame, pandas)
    # Nullable extension dtypes (Int64, Float64, boolean) hold pd.NA: missing -> NaN.
    array = frame.to_numpy(dtype=X_DTYPE, na_value=np.nan)
    return array, [str(column) for column in frame.columns]


def _polars_to_array(frame, polars):
    """Numeric polars DataFrame -> (2-D float64 array, column names); null -> NaN."""
    for column, dtype in frame.schema.items():
        if not (dtype.is_numeric() or dtype == polars.Boolean) or dtype.is_decimal():
            raise _not_numeric(column, dtype)
    array = frame.select(polars.all().cast(polars.Float64)).to_numpy()
    return array, [str(column) for column in frame.columns]


def _arrow_to_array(table, pyarrow):
    """Numeric pyarrow Table or RecordBatch -> (2-D float64 array, column names); null -> NaN."""
    types = pyarrow.types
    columns = []
    for name, column in zip(table.column_names, table.columns):
        if not (types.is_integer(column.type) or types.is_floating(column.type)) and not (
            types.is_boolean(column.type)
        ):
            raise _not_numeric(name, column.type)
        as_float = column.cast(pyarrow.float64()).fill_null(np.nan)
        columns.append(np.asarray(as_float.to_numpy(), dtype=X_DTYPE))
    array = np.column_stack(columns) if columns else np.empty((table.num_rows, 0), X_DTYPE)
    return array, [str(name) for name in table.column_names]


def _capsule_to_array(frame):
    """An object of the Arrow PyCapsule interface (``__arrow_c_stream__``), through
    pyarrow."""
    try:
        import pyarrow  # optional: only needed for such objects
    except ImportError:
        raise TypeError(
            f"X is a {type(frame).__name__} (Arrow data); reading it needs pyarrow "
            f"(pip install pyarrow), or pass a NumPy array."
        ) from None
    return _arrow_to_array(pyarrow.table(frame), pyarrow)


def _interchange_to_array(frame):
    """Any other DataFrame of the dataframe interchange protocol (``__dataframe__``),
    through pandas."""
    try:
        import pandas  # optional: only needed for such frames
    except ImportError:
        raise TypeError(
            f"X is a {type(frame).__name__} DataFrame; reading it needs pandas "
            f"(pip install pandas), or pass a NumPy array."
        ) from None
    with warnings.catch_warnings():  # pandas 3 deprecates the protocol; it still works
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        converted = pandas.api.interchange.from_dataframe(frame, allow_copy=True)
    return frame_to_array(converted, pandas)


def frame_column_names(X):
    """The column names of a DataFrame-like ``X`` (pandas, polars, a pyarrow Table), as
    given (not converted to str), else None."""
    pyarrow = loaded_module("pyarrow")
    if pyarrow is not None and isinstance(X, (pyarrow.Table, pyarrow.RecordBatch)):
        return list(X.column_names)
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    return list(columns)


def _frame_to_array(X, min_rows):
    """``(array, column names)`` of a DataFrame ``X``, or None when ``X`` is none."""
    pandas = loaded_module("pandas")
    if pandas is not None and isinstance(X, pandas.DataFrame):
        check_shape(X.shape, min_rows)
        return frame_to_array(X, pandas)
    polars = loaded_module("polars")
    if polars is not None and isinstance(X, polars.DataFrame):
        check_shape(X.shape, min_rows)
        return _polars_to_array(X, polars)
    pyarrow = loaded_module("pyarrow")
    if pyarrow is not None and isinstance(X, (pyarrow.Table, pyarrow.RecordBatch)):
        check_shape((X.num_rows, X.num_columns), min_rows)
        return _arrow_to_array(X, pyarrow)
    if isinstance(X, np.ndarray):
        return None
    if hasattr(X, "__arrow_c_stream__"):
        array, names = _capsule_to_array(X)
        check_shape(array.shape, min_rows)
        return array, names
    if hasattr(X, "__dataframe__"):
        array, names = _interchange_to_array(X)
        check_shape(array.shape, min_rows)
        return array, names
    return None


def check_numeric_dtype(name, array):
    """Raise TypeError unless ``array`` (called ``name`` in the message) holds numbers."""
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"{name} must hold numbers (bool, int or float), got dtype {array.dtype}.")


def convert_features(X, min_rows=1, keep_float32=False):
    """Validate ``X`` and return it as a C-contiguous 2-D float64 array.

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features)
        A NumPy array (or anything ``np.asarray`` takes), a scipy.sparse matrix
        (densified: absent entries are 0.0), or a DataFrame with numeric columns:
        pandas, polars, a pyarrow Table / RecordBatch, any other object of the Arrow
        PyCapsule interface (``__arrow_c_stream__``, read through pyarrow) or of the
        dataframe interchange protocol (``__dataframe__``, read through pandas).
        Missing values (NaN, and null / NA in DataFrames) become NaN.
    min_rows : {0, 1}, default=1
        Fewest rows accepted (prediction accepts 0).
    keep_float32 : bool, default=False
        Return a float32 ``X`` as float32 (C order) instead of a float64 copy: every
        float32 value is exactly a float64 one, so readers that take either (binning,
        the compiled CPU prediction) need not hold the float64 copy (twice the memory).

    Returns
    -------
    data : ndarray of shape (n_rows, n_features), float64 (or float32), C order
        ``X`` itself when it already is one (no copy).
    column_names : list of str or None
        The column names of a DataFrame, as str.
    """
    sparse = loaded_module("scipy.sparse")
    column_names = None
    if isinstance(X, (str, bytes)):
        raise TypeError(f"X must be a 2-D array of numbers, got {type(X).__name__}.")
    frame = _frame_to_array(X, min_rows)
    if frame is not None:
        X, column_names = frame
    elif sparse is not None and sparse.issparse(X):
        # Densified: absent entries are 0.0 (not missing). The Dataset keeps a
        # CSC copy too, for exclusive feature bundling (gpuboost.data.bundling).
        check_numeric_dtype("X", X)
        check_shape(X.shape, min_rows)
        X = X.astype(X_DTYPE).toarray()
    else:
        X = np.asarray(X)
        check_numeric_dtype("X", X)
        check_shape(X.shape, min_rows)
    dtype = np.float32 if keep_float32 and X.dtype == np.float32 else X_DTYPE
    return np.ascontiguousarray(X, dtype=dtype), column_names


def is_sparse_matrix(X):
    """Whether ``X`` is a scipy.sparse matrix or array (scipy imported only if loaded)."""
    sparse = loaded_module("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def sparse_columns(X):
    """A canonical float64 CSC copy of a scipy.sparse ``X`` (sorted row indices, no
    duplicates; its dtype and shape checked), or None when ``X`` is not sparse."""
    sparse = loaded_module("scipy.sparse")
    if sparse is None or not sparse.issparse(X):
        return None
    check_numeric_dtype("X", X)
    check_shape(X.shape)
    columns = sparse.csc_matrix(X, dtype=X_DTYPE, copy=True)
    columns.sum_duplicates()  # also sorts the row indices
    return columns


def densify(matrix, absent_missing=False):
    """A scipy.sparse matrix as a dense float64 C-order array, the entries it does not
    store 0.0, or NaN with ``absent_missing``."""
    if not absent_missing:
        return np.ascontiguousarray(matrix.toarray(), dtype=X_DTYPE)
    dense = np.full(matrix.shape, np.nan, dtype=X_DTYPE)
    coo = matrix.tocoo()
    dense[coo.row, coo.col] = coo.data
    return dense


def _is_absent_value(fill_value, absent_missing):
    """Whether a pandas sparse column's ``fill_value`` is the absent value: NaN when
    ``absent_missing``, else 0."""
    fill = float(fill_value)
    return np.isnan(fill) if absent_missing else fill == 0.0


def has_sparse_columns(X):
    """Whether ``X`` is a pandas DataFrame with a sparse column (``pd.SparseDtype``)."""
    pandas = loaded_module("pandas")
    return (
        pandas is not None
        and isinstance(X, pandas.DataFrame)
        and any(isinstance(dtype, pandas.SparseDtype) for dtype in X.dtypes)
    )


def sparse_frame_columns(X, absent_missing=None, min_rows=1):
    """A canonical float64 CSC matrix of a pandas DataFrame with sparse columns
    (``pd.SparseDtype``, ``pd.arrays.SparseArray``), built column by column from the
    stored entries, never the dense frame; None when ``X`` is no such DataFrame.

    A sparse column is read as its dense equivalent (``fill_value`` where it stores
    nothing). When its ``fill_value`` is the absent value of the matrix (0.0, or NaN
    with ``absent_missing``), only its stored entries are copied; the entries of a dense
    column (or, for prediction, of a sparse column with another fill value) other than
    the absent value are stored one by one, so those columns cost memory in proportion
    to their rows.

    Parameters
    ----------
    X : object
    absent_missing : bool, optional
        What an absent entry of the result means: NaN (True) or 0.0 (False), the
        Dataset's ``sparse_absent``; a sparse column whose ``fill_value`` differs then
        raises ValueError (honouring it would store every row of the column). None
        (prediction): NaN when every sparse column's fill value is NaN, else 0.0, and
        columns with another fill value are stored in full.
    min_rows : {0, 1}, default=1

    Returns
    -------
    None, or (columns, names, absent_missing)
        ``columns``: scipy.sparse CSC matrix of shape (n_rows, n_features), float64,
        sorted indices; ``names``: the column names as str; ``absent_missing``: the
        meaning of its absent entries.

    Raises
    ------
    TypeError
        A column is not numeric.
    ValueError
        A sparse column's ``fill_value`` is not the absent value (``absent_missing``
        given), naming the column and the fix.
    """
    if not has_sparse_columns(X):
        return None
    pandas = loaded_module("pandas")
    is_sparse = [isinstance(dtype, pandas.SparseDtype) for dtype in X.dtypes]
    check_shape(X.shape, min_rows)
    _check_frame_numeric(X, pandas)
    strict = absent_missing is not None
    if not strict:
        absent_missing = all(
            np.isnan(float(X.iloc[:, j].array.fill_value)) for j in np.flatnonzero(is_sparse)
        )
    from scipy import sparse  # optional: pandas sparse columns are read through scipy

    n_rows, n_columns = X.shape
    indices, data = [], []
    indptr = np.zeros(n_columns + 1, dtype=np.int64)
    for j in range(n_columns):
        series = X.iloc[:, j]
        if is_sparse[j] and _is_absent_value(series.array.fill_value, absent_missing):
            rows = series.array.sp_index.to_int_index().indices
            values = np.asarray(series.array.sp_values, dtype=X_DTYPE)
        else:
            if is_sparse[j] and strict:
                fill = float(series.array.fill_value)
                raise ValueError(
                    f"Column {X.columns[j]!r} is a pandas sparse column with fill_value "
                    f"{value_repr(fill)}, but the Dataset reads absent entries as "
                    f"{'NaN (missing)' if absent_missing else '0.0'} "
                    f"(sparse_absent={'missing' if absent_missing else 'zero'!r}). "
                    + (
                        "Pass sparse_absent='missing' to read them as missing values, or convert"
                        if np.isnan(fill) and not absent_missing
                        else "Convert"
                    )
                    + f" the column with .astype(pd.SparseDtype(float, "
                    f"{'np.nan' if absent_missing else '0.0'}))."
                )
            values = np.asarray(series.array if is_sparse[j] else as_array(series), dtype=X_DTYPE)
            rows = np.flatnonzero(~np.isnan(values) if absent_missing else values != 0.0)
            values = values[rows]
        indices.append(np.asarray(rows, dtype=np.int64))
        data.append(values)
        indptr[j + 1] = indptr[j] + len(rows)
    columns = sparse.csc_matrix(
        (np.concatenate(data), np.concatenate(indices), indptr), shape=(n_rows, n_columns)
    )
    return columns, [str(column) for column in X.columns], bool(absent_missing)


def check_shape(shape, min_rows=1):
    """Raise ValueError unless ``shape`` is 2-D with ``min_rows`` rows (0 or 1) and a
    feature, and not more than ``MAX_ROWS`` rows."""
    if len(shape) == 1:
        raise ValueError(
            f"X must be 2-D (n_rows, n_features), got a 1-D array of length "
            f"{shape[0]}. Use X.reshape(-1, 1) for a single feature or "
            f"X.reshape(1, -1) for a single row."
        )
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D (n_rows, n_features), got {len(shape)} dimension(s).")
    n_rows, n_features = shape
    if n_rows < min_rows or n_features == 0:
        need = "one row and one feature" if min_rows else "one feature"
        raise ValueError(f"X is empty: shape {tuple(shape)}; need at least {need}.")
    if n_rows > MAX_ROWS:
        raise ValueError(f"X has {n_rows} rows, more than the {MAX_ROWS} a Dataset can hold.")


def as_array(values):
    """``np.asarray``, except that pandas nullable numbers give float64 with NaN for NA,
    and a device array (CuPy's, or the emulation's: a label or weight column on a GPU) is
    copied to the host."""
    if is_device_array(values):
        return to_numpy(values)
    pandas = loaded_module("pandas")
    if (
        pandas is not None
        and isinstance(values, pandas.Series)
        and isinstance(values.dtype, pandas.api.extensions.ExtensionDtype)
        and pandas.api.types.is_numeric_dtype(values.dtype)
    ):
        return values.to_numpy(dtype=X_DTYPE, na_value=np.nan)
    return np.asarray(values)


def as_vector(name, values, n_rows, unit="row"):
    """``values`` as an array of shape (n_rows,) of its own dtype; (n_rows, 1) is flattened
    (``unit``: what an entry stands for, in messages: a row, or a feature)."""
    values = as_array(values)
    check_numeric_dtype(name, values)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n_{unit}s,), got shape {values.shape}.")
    if len(values) != n_rows:
        raise ValueError(f"{name} has {len(values)} values, but X has {n_rows} {unit}s.")
    return values


def check_finite(name, values, unit="row"):
    """Raise ValueError naming the first NaN or infinite entry of ``values``."""
    non_finite = ~np.isfinite(values)
    if non_finite.any():
        position = np.unravel_index(int(np.argmax(non_finite)), values.shape)
        value = values[position]
        problem = "NaN" if np.isnan(value) else ("+inf" if value > 0 else "-inf")
        where = f"{unit} {position[0]}" + (f", column {position[1]}" if len(position) == 2 else "")
        raise ValueError(f"{name} contains {problem} at {where}; it must be finite.")


def check_label(label, n_rows):
    """``label`` as a float64 vector of ``n_rows`` finite values, or for several targets
    (shape (n_rows, k), k > 1) a C-ordered float64 matrix (None stays None); ValueError
    otherwise."""
    if label is None:
        return None
    values = as_array(label)
    if values.ndim == 2 and values.shape[1] > 1:  # several targets: one column each
        check_numeric_dtype("label", values)
        if len(values) != n_rows:
            raise ValueError(f"label has {len(values)} rows, but X has {n_rows} rows.")
        label = np.array(values, dtype=Y_DTYPE, order="C")
    else:
        label = np.array(as_vector("label", values, n_rows), dtype=Y_DTYPE)
    check_finite("label", label)
    return label


def check_label_choice(label, lower, upper):
    """Whether the labels are intervals: True when ``lower`` and ``upper`` (a
    ``label_lower_bound`` / ``label_upper_bound`` pair, of any array kind) are given,
    False when neither is. ValueError when only one is, or when ``label`` is given too."""
    if lower is None and upper is None:
        return False
    if label is not None:
        raise ValueError(
            "Give either label or label_lower_bound / label_upper_bound (interval labels, "
            "survival:aft), not both."
        )
    if lower is None or upper is None:
        given = "label_lower_bound" if upper is None else "label_upper_bound"
        raise ValueError(
            f"{given} is given without its other half: interval labels need both "
            f"label_lower_bound and label_upper_bound."
        )
    return True


def check_label_bounds(lower, upper, n_rows):
    """Interval labels (survival:aft) as a float64 array of shape (n_rows, 2), columns
    ``[lower, upper]``; both None gives None. ValueError unless both are given, neither
    holds NaN, ``lower`` is finite and >= 0 and ``upper >= lower`` (``upper`` may be
    ``inf``: right-censored)."""
    if not check_label_choice(None, lower, upper):
        return None
    lower = np.array(as_vector("label_lower_bound", lower, n_rows), dtype=Y_DTYPE)
    upper = np.array(as_vector("label_upper_bound", upper, n_rows), dtype=Y_DTYPE)
    check_finite("label_lower_bound", lower)
    bad = np.flatnonzero(lower < 0.0)
    if bad.size:
        raise ValueError(
            f"label_lower_bound contains a negative value ({value_repr(lower[bad[0]])}) at "
            f"row {bad[0]}; survival times are >= 0 (0: left-censored)."
        )
    bad = np.flatnonzero(~(upper >= lower))
    if bad.size:
        row = bad[0]
        raise ValueError(
            f"label_upper_bound ({value_repr(upper[row])}) is below label_lower_bound "
            f"({value_repr(lower[row])}) at row {row} (or NaN); an interval needs upper >= "
            f"lower (upper = inf: right-censored)."
        )
    return np.column_stack([lower, upper])


def check_weight(weight, n_rows, name="weight", unit="row"):
    """Row weights (or, with ``name`` and ``unit``, any per-``unit`` weights) as float64:
    finite, non-negative, at least one positive; None stays None."""
    if weight is None:
        return None
    weight = np.array(as_vector(name, weight, n_rows, unit), dtype=Y_DTYPE)
    check_finite(name, weight, unit)
    negative = weight < 0
    if negative.any():
        position = int(np.argmax(negative))
        raise ValueError(
            f"{name} contains a negative value ({value_repr(weight[position])}) at {unit} "
            f"{position}; weights must be >= 0."
        )
    if not (weight > 0).any():
        what = "weights" if name == "weight" else name
        raise ValueError(f"All {what} are zero; at least one {unit} needs a positive weight.")
    return weight


def check_feature_weights(feature_weights, n_features):
    """``feature_weights`` (one per feature: the column-sampling weights) as float64:
    finite, non-negative, at least one positive; None stays None."""
    return check_weight(feature_weights, n_features, "feature_weights", "feature")


def as_integer_vector(name, values):
    """``values`` (1-D, or (n, 1)) as int64, rejecting non-integral numbers."""
    values = as_array(values)
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
            raise ValueError(
                f"{name} must hold integers, got {value_repr(values[index])} at index {index}."
            )
    return values.astype(GROUP_DTYPE)


def qid_runs(qid):
    """The runs of equal values of per-row query ids: ``(run_qids, run_lengths)``,
    int64 arrays, in row order."""
    qid = as_integer_vector("qid", qid)
    if len(qid) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    run_starts = np.concatenate([[0], np.flatnonzero(qid[1:] != qid[:-1]) + 1])
    lengths = np.diff(np.append(run_starts, len(qid)))
    return qid[run_starts].astype(np.int64), lengths.astype(np.int64)


def merge_qid_runs(pieces):
    """The runs of consecutive pieces of rows (each ``(run_qids, run_lengths)`` from
    :func:`qid_runs`), a run continued across a boundary merged."""
    run_qids, run_lengths = [], []
    for qids, lengths in pieces:
        qids, lengths = list(np.asarray(qids).tolist()), list(np.asarray(lengths).tolist())
        if qids and run_qids and run_qids[-1] == qids[0]:
            run_lengths[-1] += lengths[0]
            qids, lengths = qids[1:], lengths[1:]
        run_qids += qids
        run_lengths += lengths
    return np.asarray(run_qids, dtype=np.int64), np.asarray(run_lengths, dtype=np.int64)


def group_sizes_from_runs(run_qids, run_lengths):
    """Query sizes from the runs of per-row query ids (:func:`qid_runs`); ValueError
    when a query's rows are not contiguous (its qid starts a second run)."""
    order = np.argsort(run_qids, kind="stable")
    # Runs equal to the previous run in sorted order repeat an earlier query.
    repeated_runs = order[1:][run_qids[order][1:] == run_qids[order][:-1]]
    if len(repeated_runs):
        run = int(repeated_runs.min())
        row = int(np.sum(run_lengths[:run]))
        raise ValueError(
            f"qid {int(run_qids[run])} reappears at row {row} after rows of another "
            f"query; the rows of each query must be contiguous (sort the data "
            f"by qid)."
        )
    return np.asarray(run_lengths, dtype=GROUP_DTYPE)


def group_sizes_from_qid(qid, n_rows):
    """Query sizes from per-row query ids that form contiguous runs."""
    qid = as_integer_vector("qid", qid)
    if len(qid) != n_rows:
        raise ValueError(f"qid has {len(qid)} values, but X has {n_rows} rows.")
    return group_sizes_from_runs(*qid_runs(qid))


def check_group(group, qid, n_rows):
    """The query sizes (positive, summing to ``n_rows``) from ``group`` or from per-row
    ``qid`` (at most one of them; None without either); ValueError otherwise."""
    if group is not None and qid is not None:
        raise ValueError("Give either group (query sizes) or qid (per-row query ids), not both.")
    if qid is not None:
        return group_sizes_from_qid(qid, n_rows)
    if group is None:
        return None
    sizes = as_integer_vector("group", group)
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


def check_base_margin(base_margin, n_rows):
    """``base_margin`` as finite float64 margins of ``n_rows`` rows (1-D, or 2-D with one
    column per output; None stays None); ValueError / TypeError otherwise."""
    if base_margin is None:
        return None
    base_margin = as_array(base_margin)
    check_numeric_dtype("base_margin", base_margin)
    if base_margin.ndim not in (1, 2) or (base_margin.ndim == 2 and base_margin.shape[1] == 0):
        raise ValueError(
            f"base_margin must have shape (n_rows,) or (n_rows, n_outputs), "
            f"got {base_margin.shape}."
        )
    if base_margin.shape[0] != n_rows:
        raise ValueError(f"base_margin has {base_margin.shape[0]} rows, but X has {n_rows} rows.")
    base_margin = np.array(base_margin, dtype=Y_DTYPE, order="C")
    check_finite("base_margin", base_margin)
    return base_margin


def default_feature_names(n_features):
    """The names of features without names: ``['f0', 'f1', ...]``."""
    return [f"{DEFAULT_FEATURE_NAME_PREFIX}{index}" for index in range(n_features)]


def has_default_names(names):
    """Whether ``names`` are :func:`default_feature_names` (a model trained without names)."""
    return list(names) == default_feature_names(len(names))


def feature_positions(names, expected, source, allow_unknown=False):
    """Match columns by name: where each of ``expected`` sits in ``names``.

    Parameters
    ----------
    names : list of str
        The column names of the data at hand.
    expected : list of str
        The feature names the data must provide, in the order wanted.
    source : str
        What the data are, for the message (e.g. ``"X"``, ``"evaluation set 'valid'"``).
    allow_unknown : bool, default=False
        Accept (and ignore) columns of ``names`` that are not expected.

    Returns
    -------
    ndarray of shape (len(expected),), int64
        ``names[positions[i]] == expected[i]``.

    Raises
    ------
    ValueError
        A name appears twice in ``names``, an expected name is missing, or (unless
        ``allow_unknown``) a name is not expected; the message lists them.
    """
    names, expected = list(names), list(expected)
    positions = {}
    for index, name in enumerate(names):
        if name in positions:
            raise ValueError(f"{source} has the column name {name!r} twice.")
        positions[name] = index
    missing = [name for name in expected if name not in positions]
    expected_set = set(expected)
    unknown = [] if allow_unknown else [name for name in names if name not in expected_set]
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"missing {missing}")
        if unknown:
            problems.append(f"not in the model {unknown}")
        raise ValueError(
            f"The feature names of {source} do not match the model's: "
            f"{'; '.join(problems)}. Columns are matched by name; the model's features "
            f"are {expected}."
        )
    return np.array([positions[name] for name in expected], dtype=np.int64)


def select_features(data, names, expected, source):
    """``data`` with its columns matched to ``expected`` by name, when both carry names.

    Parameters
    ----------
    data : ndarray of shape (n_rows, n_columns), float64
    names : list of str or None
        The names of ``data``'s columns; None: the data carry no names.
    expected : list of str
        The model's (or training data's) feature names; :func:`default_feature_names`
        count as no names.
    source : str
        What the data are, for messages.

    Returns
    -------
    ndarray of shape (n_rows, len(expected)), float64, C order
        ``data`` itself when either side carries no names or the order already matches
        (the caller checks the number of columns then); else the columns reordered.
    """
    if names is None or has_default_names(expected) or list(names) == list(expected):
        return data
    positions = feature_positions(names, expected, source)
    xp = get_array_module(data)  # device input stays on its device
    return xp.ascontiguousarray(data[:, xp.asarray(positions)])


def check_feature_names(feature_names, n_features):
    """``feature_names`` as a list of ``n_features`` distinct strings; ValueError
    otherwise."""
    if isinstance(feature_names, (str, bytes)):
        raise ValueError("feature_names must be a list of strings, got a single string.")
    try:
        feature_names = list(feature_names)
    except TypeError:
        raise ValueError(
            f"feature_names must be a list of strings, got {type(feature_names).__name__}."
        ) from None
    if len(feature_names) != n_features:
        raise ValueError(
            f"feature_names has {len(feature_names)} names, but X has {n_features} features."
        )
    for name in feature_names:
        if not isinstance(name, str):
            raise ValueError(f"feature_names must be strings, got {name!r}.")
    seen = set()
    for name in feature_names:
        if name in seen:
            raise ValueError(f"feature_names must be unique; {name!r} appears twice.")
        seen.add(name)
    return [str(name) for name in feature_names]
