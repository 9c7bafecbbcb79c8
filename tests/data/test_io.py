"""Tests of gpuboost.data.io: the CSV reader (the svmlight and query-file loaders are
tested with the Dataset, tests/data/test_dataset.py)."""

import numpy as np
import pytest

from gpuboost.data.io import read_csv


def test_read_csv_missing_values(tmp_path):
    path = tmp_path / "values.csv"
    path.write_text(" x , y \n1,\nNA,2.5\n nan ,?\n\n")
    names, values = read_csv(path)
    assert names == ["x", "y"]
    np.testing.assert_array_equal(values, [[1.0, np.nan], [np.nan, 2.5], [np.nan, np.nan]])
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="header"):
        read_csv(empty)
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b\n")
    with pytest.raises(ValueError, match="no data rows"):
        read_csv(header_only)


def test_read_csv_narrow_fields_with_missing_markers(tmp_path):
    # Every field at most 2 characters wide: "nan" must not be cut to "na".
    path = tmp_path / "narrow.csv"
    path.write_text("a,b\n1,\nNA,2\n?,3\n")
    names, values = read_csv(path)
    assert names == ["a", "b"]
    np.testing.assert_array_equal(values, [[1.0, np.nan], [np.nan, 2.0], [np.nan, 3.0]])


def test_read_csv_refuses_a_header_of_numbers(tmp_path):
    path = tmp_path / "headerless.csv"
    path.write_text("1,0.5,3\n0,1.5,4\n")
    with pytest.raises(ValueError, match="only numbers.*looks like data.*--no-header"):
        read_csv(path)
    names, values = read_csv(path, header=False)
    assert names == ["0", "1", "2"]
    np.testing.assert_array_equal(values, [[1.0, 0.5, 3.0], [0.0, 1.5, 4.0]])
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("1,2\n3\n")
    with pytest.raises(ValueError, match="line 2: 1 fields, but the first row has 2"):
        read_csv(ragged, header=False)
