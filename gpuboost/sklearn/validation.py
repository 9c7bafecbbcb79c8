"""Input checks of the scikit-learn estimators: features, targets, seeds, eval sets."""

import numbers
import warnings

import numpy as np

from ..core.dtypes import X_DTYPE, Y_DTYPE
from ..data.convert import (
    as_array,
    check_numeric_dtype,
    convert_features,
    frame_column_names,
    has_sparse_columns,
    is_sparse_matrix,
)
from ..errors import value_repr
from .compat import DataConversionWarning

#: Exclusive upper bound of a seed drawn from a ``numpy.random.RandomState`` / ``Generator``.
SEED_UPPER_BOUND = np.iinfo(np.int32).max


def column_names(X):
    """The column names of a DataFrame-like ``X`` (pandas, polars, pyarrow) when all are
    strings, else None (scikit-learn's rule for ``feature_names_in_``)."""
    names = frame_column_names(X)
    if names and all(isinstance(name, str) for name in names):
        return names
    return None


def as_feature_matrix(X):
    """``X`` as a C-contiguous 2-D float64 array (NaN = missing).

    Arrays of dtype object holding numbers are converted; complex numbers are
    rejected.
    """
    if X is None:
        raise ValueError("X is None; expected a 2-D array-like of shape (n_samples, n_features).")
    is_frame = hasattr(X, "__dataframe__") or hasattr(X, "__arrow_c_stream__")
    if frame_column_names(X) is None and not is_frame and not is_sparse(X):
        array = np.asarray(X)
        if np.iscomplexobj(array):
            raise ValueError("Complex data not supported: X must hold real numbers.")
        if array.dtype.kind == "O":
            # float() gives a clear TypeError for entries that are not numbers.
            array = np.asarray(array, dtype=X_DTYPE)
        X = array
    check_matrix_shape(np.shape(X))
    return convert_features(X)[0]


def as_sparse_feature_matrix(X):
    """A scipy.sparse ``X`` or a pandas DataFrame with sparse columns, checked (shape;
    a scipy matrix's dtype) and returned as given, kept sparse for the Dataset and the
    Booster (which read its stored entries); None for other input."""
    if is_sparse(X):
        check_matrix_shape(X.shape)
        check_numeric_dtype("X", X)
        return X
    if has_sparse_columns(X):
        check_matrix_shape(X.shape)
        return X
    return None


def check_matrix_shape(shape):
    """ValueError (in scikit-learn's wording) for a 1-D or empty ``X``."""
    if len(shape) == 1:
        raise ValueError(
            f"Expected a 2-D array for X, got a 1-D array of length {shape[0]}. "
            f"Reshape your data either using X.reshape(-1, 1) if your data has a "
            f"single feature or X.reshape(1, -1) if it contains a single sample."
        )
    if len(shape) == 2 and shape[0] == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={tuple(shape)}) while a minimum of 1 is required."
        )
    if len(shape) == 2 and shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={tuple(shape)}) while a minimum "
            f"of 1 is required."
        )


def is_sparse(X):
    """Whether ``X`` is a scipy.sparse matrix or array (without importing scipy)."""
    return is_sparse_matrix(X)


def as_target_vector(y, estimator_name, several=False):
    """``y`` as a 1-D array of its own dtype; a column vector is raveled with a warning.
    With ``several``, an array of shape (n_samples, k), k > 1 (several targets), is
    returned as it is."""
    if y is None:
        raise ValueError(f"{estimator_name} requires y to be passed, but the target y is None.")
    y = as_array(y)  # pandas nullable numbers -> float64 with NaN
    if several and y.ndim == 2 and y.shape[1] > 1:
        return y
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change "
            "the shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(
            f"y should be a 1d array of shape (n_samples,), got an array of shape "
            f"{y.shape} instead; {estimator_name} supports a single target."
        )
    return y


def as_numeric_target(y, estimator_name, several=False):
    """A regression or ranking target as float64 (finiteness is checked by Dataset); with
    ``several``, shape (n_samples, k) for several targets."""
    y = as_target_vector(y, estimator_name, several)
    if y.dtype.kind == "O":
        try:
            y = y.astype(Y_DTYPE)
        except (TypeError, ValueError):
            raise ValueError(
                f"{estimator_name} needs numeric targets; y holds values that are "
                f"not numbers (dtype object)."
            ) from None
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{estimator_name} needs numeric targets, got y of dtype {y.dtype}.")
    return y.astype(Y_DTYPE)


def has_missing_labels(y):
    """Whether a label array holds NaN, infinity or None (for any dtype)."""
    if y.dtype.kind == "f":
        return not bool(np.isfinite(y).all())
    if y.dtype.kind == "O":
        return any(value is None or value != value for value in y)
    return False


def as_seed(random_state):
    """The integer seed of a ``random_state`` argument (None means 0)."""
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(SEED_UPPER_BOUND))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(SEED_UPPER_BOUND))
    return random_state


def check_positive_int(value, name, allow_none=False):
    if allow_none and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(
            f"{name} must be a positive integer{' or None' if allow_none else ''}, got "
            f"{value_repr(value)}."
        )
    return int(value)


def per_eval_set(values, n_eval_sets, name):
    """A list with one entry per evaluation set (None -> all None)."""
    if values is None:
        return [None] * n_eval_sets
    values = list(values)
    if len(values) != n_eval_sets:
        raise ValueError(f"{name} has {len(values)} entries, but eval_set has {n_eval_sets}.")
    return values


#: ``class_weight`` value that weights every class to the same total.
BALANCED = "balanced"


def class_weight_multipliers(class_weight, classes, encoded):
    """Per-row weight multipliers of a classifier's ``class_weight`` (scikit-learn's).

    Parameters
    ----------
    class_weight : dict, 'balanced' or None
        ``{label: weight}`` (labels not named weigh 1), or 'balanced':
        ``n_samples / (n_classes * count of the class)``.
    classes : ndarray of shape (n_classes,)
        The sorted class labels.
    encoded : ndarray of shape (n_samples,), float64
        Labels as class indices.

    Returns
    -------
    ndarray of shape (n_samples,), float64, or None (for None)

    Raises
    ------
    ValueError
        Another value, a label not among the classes, or a weight that is not a finite
        non-negative number.
    """
    if class_weight is None:
        return None
    indices = encoded.astype(np.intp)
    if isinstance(class_weight, str) and class_weight == BALANCED:
        counts = np.bincount(indices, minlength=len(classes))
        per_class = len(indices) / (len(classes) * counts.astype(Y_DTYPE))
        return per_class[indices]
    if not isinstance(class_weight, dict):
        raise ValueError(
            f"class_weight must be 'balanced', a dict {{label: weight}} or None, got "
            f"{value_repr(class_weight)}."
        )
    per_class = np.ones(len(classes), dtype=Y_DTYPE)
    class_list = classes.tolist()
    for label, weight in class_weight.items():
        key = value_repr(label)
        matches = [index for index, known in enumerate(class_list) if known == label]
        if not matches:
            raise ValueError(
                f"class_weight names the label {key}, which is not a class of y {class_list}."
            )
        if (
            isinstance(weight, bool)
            or not isinstance(weight, numbers.Real)
            or not (np.isfinite(weight) and weight >= 0)
        ):
            raise ValueError(
                f"class_weight[{key}] must be a finite number >= 0, got {value_repr(weight)}."
            )
        per_class[matches[0]] = float(weight)
    return per_class[indices]
