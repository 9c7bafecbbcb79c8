"""Categorical input: column detection, labels and codes, binning, bundling."""

import numpy as np
import pandas as pd
import pytest

import gpuboost
from gpuboost.data.categorical import (
    categorical_edges,
    category_counts,
    encode_features,
    merge_category_counts,
)


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "grey"], n, p=[0.1, 0.5, 0.3, 0.1])
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "colour": pd.Categorical(colour),
            "text": colour.astype(object),
            "code": rng.integers(0, 5, n).astype(float),
        }
    ), rng


def test_category_columns_become_codes_in_frequency_order():
    frame, _ = _frame()
    frame.loc[3, "colour"] = np.nan
    dataset = gpuboost.Dataset(frame[["x", "colour"]])
    labels = dataset.categories[1]
    counts = frame["colour"].value_counts()
    assert labels == list(counts.index)  # most frequent first
    assert dataset.categories[0] is None
    assert dataset.is_categorical.tolist() == [False, True]
    codes = dataset.features[:, 1]
    assert np.isnan(codes[3])
    present = ~np.isnan(codes)
    assert [labels[int(c)] for c in codes[present]] == list(frame["colour"][present])


def test_string_columns_need_enable_categorical():
    frame, _ = _frame()
    with pytest.raises(TypeError, match="enable_categorical=True"):
        gpuboost.Dataset(frame[["x", "text"]])
    dataset = gpuboost.Dataset(frame[["x", "text"]], enable_categorical=True)
    assert dataset.categories[1] == gpuboost.Dataset(frame[["x", "colour"]]).categories[1]


def test_named_and_indexed_numeric_columns_are_categorical():
    frame, _ = _frame()
    by_name = gpuboost.Dataset(frame[["x", "code"]], categorical_features=["code"])
    by_index = gpuboost.Dataset(frame[["x", "code"]].to_numpy(), categorical_features=[1])
    assert by_name.categories[1] == by_index.categories[1]
    assert sorted(by_name.categories[1]) == [0.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="not a column"):
        gpuboost.Dataset(frame[["x", "code"]], categorical_features=["nope"])
    with pytest.raises(ValueError, match="out of range"):
        gpuboost.Dataset(frame[["x", "code"]].to_numpy(), categorical_features=[2])


def test_categorical_features_none_refuses_category_columns():
    frame, _ = _frame()
    with pytest.raises(TypeError, match="categorical_features"):
        gpuboost.Dataset(frame[["x", "colour"]], categorical_features=None)


def test_reference_recodes_by_label_and_unseen_become_missing():
    frame, _ = _frame()
    train = gpuboost.Dataset(frame[["x", "colour"]])
    other = frame[["x", "colour"]].copy()
    other["colour"] = other["colour"].cat.add_categories(["purple"])
    other.loc[0, "colour"] = "purple"
    other["colour"] = other["colour"].cat.reorder_categories(
        list(reversed(other["colour"].cat.categories))
    )
    valid = gpuboost.Dataset(other, reference=train)
    assert np.isnan(valid.features[0, 1])
    np.testing.assert_array_equal(valid.features[1:], train.features[1:])
    subset = train.subset(np.arange(10, 20))
    assert subset.categories == train.categories
    np.testing.assert_array_equal(subset.features, train.features[10:20])


def test_rare_categories_share_the_other_bin():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 30, 2000)
    frame = pd.DataFrame({"c": pd.Categorical(codes)})
    dataset = gpuboost.Dataset(frame)
    dataset.bind_binning(max_bin=255, max_cat=8)
    bins = dataset.X_binned[:, 0]
    feature_codes = dataset.features[:, 0].astype(int)
    assert dataset.bin_mapper.n_value_bins_[0] == 8
    np.testing.assert_array_equal(bins, np.minimum(feature_codes, 7))
    # The 7 kept categories are the 7 most frequent ones.
    counts = np.bincount(codes, minlength=30)
    kept = [int(label) for label in dataset.categories[0][:7]]
    assert sorted(counts[kept]) == sorted(np.sort(counts)[-7:])
    np.testing.assert_array_equal(categorical_edges(5, 255, 255), [0.5, 1.5, 2.5, 3.5])
    assert len(categorical_edges(300, 255, 16)) == 15


def test_categorical_features_are_never_bundled():
    rng = np.random.default_rng(2)
    n = 500
    X = np.zeros((n, 4))
    rows = rng.permutation(n)
    X[rows[:100], 0] = 1.0
    X[rows[100:200], 1] = 1.0  # exclusive with feature 0: bundled together
    X[rows[200:300], 2] = rng.integers(1, 4, 100)  # categorical, exclusive too
    X[:, 3] = rng.normal(size=n)
    dataset = gpuboost.Dataset(X, categorical_features=[2])
    bundles = dataset.bundle_map().members
    categorical_bundle = [b for b in bundles if 2 in b]
    assert [len(b) for b in categorical_bundle] == [1]
    assert any(len(b) > 1 for b in bundles)


def test_encode_features_leaves_numeric_input_alone():
    X = np.arange(6.0).reshape(3, 2)
    out, categories = encode_features(X)
    assert out is X and categories is None


def test_arrow_dictionary_and_polars_categorical_columns():
    values = ["b", "a", "b", "c", None, "b"]
    expected = [["b", "a", "c"], None]  # most frequent first, ties in label order
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"c": pa.array(values).dictionary_encode(), "x": [1.0, 2, 3, 4, 5, 6]})
    dataset = gpuboost.Dataset(table)
    assert dataset.categories == expected
    assert np.isnan(dataset.features[4, 0]) and dataset.features[0, 0] == 0
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"c": pl.Series(values, dtype=pl.Categorical), "x": [1.0, 2, 3, 4, 5, 6]})
    assert gpuboost.Dataset(frame).categories == expected


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_merged_counts_of_pieces_number_categories_as_the_whole_column(seed):
    """merge_category_counts of a column's pieces (distributed data) gives the labels a
    Dataset of the whole column numbers: the dtype's tie order when every piece has
    the frame's dtype, sorted labels when the pieces' dtypes differ; object and numeric
    columns by their sorted values."""
    rng = np.random.default_rng(seed)
    labels = [f"k{i}" for i in range(12)]
    values = np.repeat(labels, rng.integers(1, 6, size=12) * 10)  # many tied counts
    rng.shuffle(values)
    values = np.concatenate([values.astype(object), np.full(15, None)])  # ties kept
    rng.shuffle(values)
    column = pd.Series(pd.Categorical(values, categories=list(rng.permutation(labels))))
    cuts = np.sort(rng.choice(np.arange(1, len(values)), size=4, replace=False))
    pieces = np.split(np.arange(len(values)), cuts)

    def whole(series):
        return encode_features(pd.DataFrame({"c": series}), enable_categorical=True)[1][0]

    same = [category_counts(column.iloc[rows]) for rows in pieces]
    assert merge_category_counts(same) == whole(column)
    own = [category_counts(column.iloc[rows].cat.remove_unused_categories()) for rows in pieces]
    by_sorted = column.cat.set_categories(sorted(labels))
    assert merge_category_counts(own) == whole(by_sorted) != whole(column)
    text = pd.Series(values)
    assert merge_category_counts(category_counts(text.iloc[rows]) for rows in pieces) == whole(text)
    codes = np.where(pd.isna(values), np.nan, column.cat.codes.to_numpy() * 1.5)
    merged = merge_category_counts(category_counts(codes[rows]) for rows in pieces)
    assert merged == encode_features(codes[:, None], categorical_features=[0])[1][0]
