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
