"""Text loaders: numeric CSV files (with or without a header), svmlight / libsvm files,
query files (one query size per line)."""

import csv
import numbers

import numpy as np

from ..core.dtypes import X_DTYPE, Y_DTYPE
from .convert import GROUP_DTYPE

__all__ = ["read_csv", "load_svmlight", "load_query_file", "MISSING_MARKERS"]

#: Field values read as missing (compared after strip() and lower()).
MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "null", "none", "?"})
#: Comment marker of svmlight and query files: the rest of the line is ignored.
_COMMENT_MARKER = "#"
#: Prefix of the optional query-id token of an svmlight line ("qid:3").
_QID_PREFIX = "qid:"


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
                qids.append(_parse_int(tokens[0][len(_QID_PREFIX) :], path, line_number, "qid"))
                tokens = tokens[1:]
            elif return_qid:
                raise _parse_error(path, line_number, "no 'qid:' after the label.")
            indices_on_line = set()
            for token in tokens:
                index_text, separator, value_text = token.partition(":")
                if not separator:
                    raise _parse_error(path, line_number, f"expected 'index:value', got {token!r}.")
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
        raise _parse_error(
            path,
            first_zero_index_line,
            "feature index 0 in a file read as 1-based (zero_based=False).",
        )
    if not zero_based:
        columns -= 1
    n_features_seen = int(columns.max()) + 1 if len(columns) else 0
    if n_features is None:
        n_features = n_features_seen
    elif not isinstance(n_features, numbers.Integral) or n_features < n_features_seen:
        raise ValueError(
            f"n_features={n_features!r} is too small or not an integer: "
            f"{path} has {n_features_seen} features."
        )
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
                raise _parse_error(
                    path, line_number, f"expected one query size, got {len(tokens)} fields."
                )
            size = _parse_int(tokens[0], path, line_number, "query size")
            if size <= 0:
                raise _parse_error(path, line_number, f"query size {size} is not positive.")
            sizes.append(size)
    if not sizes:
        raise ValueError(f"{path}: no query sizes.")
    return np.array(sizes, dtype=GROUP_DTYPE)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _looks_like_data(fields):
    """Whether a first line is a data row: numbers and missing values only, one number
    at least."""
    numbers = [_is_number(field) for field in fields]
    return any(numbers) and all(
        number or field.lower() in MISSING_MARKERS for number, field in zip(numbers, fields)
    )


def read_csv(path, header=True, text_columns=()):
    """Read a numeric CSV file (with ``text_columns``: some columns kept as text).

    Parameters
    ----------
    path : str
    header : bool, default=True
        Whether the first line names the columns. A first line of numbers (and missing
        values) is refused as a header (it looks like data: a file without a header
        would otherwise lose its first row and name its columns by its values); read
        such a file with ``header=False``.
    text_columns : sequence of str, default=()
        Names (positions ``'0', '1', ...`` without a header) of columns kept as text,
        e.g. categorical features: ``values`` is then an object array holding their
        stripped fields (None for a missing marker) and floats elsewhere.

    Returns
    -------
    names : list of str
        The header fields (stripped), or ``'0', '1', ...`` without a header.
    values : ndarray of shape (n_rows, n_columns), float64
        NaN where a field is empty or a missing marker (``NA``, ``NaN``,
        ``null``, ``none``, ``n/a``, ``?``).

    Raises
    ------
    ValueError
        No header (or a header of numbers), no data row, a row with the wrong number
        of fields (with its line number) or a field that is not a number (with its
        line and column).
    """
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        rows = []
        if header:
            first = next(reader, None)
            if not first:
                raise ValueError(f"{path} is empty: expected a header line with column names.")
            names = [name.strip() for name in first]
            if _looks_like_data(names):
                raise ValueError(
                    f"{path}: the first line holds only numbers ({', '.join(names[:5])}"
                    f"{', ...' if len(names) > 5 else ''}), so it looks like data, not a "
                    f"header naming the columns. Add a header line, or read the file "
                    f"without one (--no-header on the command line, header=False here)."
                )
        else:
            names = None
        for row in reader:
            if not row:
                continue  # blank line
            if names is None:
                names = [str(index) for index in range(len(row))]
            if len(row) != len(names):
                what = "the header has" if header else "the first row has"
                raise ValueError(
                    f"{path}, line {reader.line_num}: {len(row)} fields, but {what} {len(names)}."
                )
            rows.append(row)
    if not rows:
        raise ValueError(f"{path} has {'a header but ' if header else ''}no data rows.")
    unknown = [name for name in text_columns if name not in names]
    if unknown:
        raise ValueError(f"{path} has no column {unknown[0]!r}; its columns are {names}.")
    text = [names.index(name) for name in text_columns]
    raw = np.char.strip(np.array(rows, dtype=str))
    fields = np.char.lower(raw)
    missing = np.isin(fields, list(MISSING_MARKERS))
    numeric = np.ones(len(names), dtype=bool)
    numeric[text] = False
    values = np.full(fields.shape, np.nan, dtype=X_DTYPE)
    check = missing | ~numeric[None, :]
    try:  # fields of a fixed width: never write a longer string into them
        values[~check] = fields[~check].astype(X_DTYPE)
    except ValueError:
        _raise_first_bad_field(path, rows, names, check, header)
    if not text:
        return names, values
    mixed = values.astype(object)
    for column in text:
        mixed[:, column] = np.where(missing[:, column], None, raw[:, column])
    return names, mixed


def _raise_first_bad_field(path, rows, names, missing, header):
    """Raise a ValueError naming the first field that is not a number."""
    for row_index, row in enumerate(rows):
        for column, text in enumerate(row):
            if missing[row_index, column]:
                continue
            try:
                float(text)
            except ValueError:
                where = f"column {names[column]!r}" if header else f"column {column}"
                raise ValueError(
                    f"{path}, data row {row_index + 1}, {where}: {text!r} is "
                    f"not a number (use an empty field for a missing value)."
                ) from None
    raise ValueError(f"{path}: a field is not a number.")  # pragma: no cover - not reached
