"""Tests of gpuboost.data.dataset: input conversion, validation, reference reuse, loaders."""

import numpy as np
import pytest

from gpuboost.core.dtypes import X_BINNED_DTYPE
from gpuboost.data import convert as convert_module
from gpuboost.data.dataset import Dataset
from gpuboost.data.io import load_query_file, load_svmlight


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[::5, 1] = np.nan
    X[1, 2] = np.inf
    return X


# --------------------------------------------------------------------------- #
# Features
# --------------------------------------------------------------------------- #


def test_basic_attributes(X):
    label = np.arange(40.0)
    ds = Dataset(X, label=label, max_bin=16)
    assert ds.n_rows == ds.num_row() == 40
    assert ds.n_features == ds.num_col() == 3
    assert ds.feature_names == ["f0", "f1", "f2"]
    assert ds.max_bin == ds.bin_mapper.max_bin == 16
    assert ds.X_binned.dtype == X_BINNED_DTYPE and ds.X_binned.flags.c_contiguous
    np.testing.assert_array_equal(ds.X_binned, ds.bin_mapper.transform(X))
    assert np.all(ds.X_binned[::5, 1] == 16)  # NaN -> missing bin
    np.testing.assert_array_equal(ds.get_label(), label)
    assert ds.get_weight() is None and ds.get_group() is None and ds.get_base_margin() is None
    assert ds._backend_cache == {}
    assert "n_rows=40" in repr(ds) and "label" in repr(ds)


def test_float64_c_input_is_not_copied(X):
    ds = Dataset(X)
    assert ds.data is X


@pytest.mark.parametrize(
    "make_input",
    [
        lambda X: np.asfortranarray(X),
        lambda X: X.tolist(),
    ],
    ids=["fortran", "list"],
)
def test_layouts_give_the_same_data_and_bins(X, make_input):
    expected = Dataset(X, max_bin=16)
    ds = Dataset(make_input(X.copy()), max_bin=16)
    assert ds.data.dtype == np.float64 and ds.data.flags.c_contiguous
    np.testing.assert_array_equal(ds.data, expected.data)
    np.testing.assert_array_equal(ds.X_binned, expected.X_binned)


def test_non_contiguous_view():
    big = np.random.default_rng(1).normal(size=(80, 8))
    view = big[::2, ::-3]
    assert not view.flags.c_contiguous
    ds = Dataset(view, max_bin=8)
    np.testing.assert_array_equal(ds.data, view)
    contiguous = Dataset(np.ascontiguousarray(view), max_bin=8)
    np.testing.assert_array_equal(ds.X_binned, contiguous.X_binned)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint16, np.bool_, np.float32])
def test_int_bool_float32_dtypes_bin_like_float64(dtype):
    values = np.random.default_rng(2).integers(0, 2 if dtype is np.bool_ else 50, size=(60, 2))
    X = values.astype(dtype)
    ds = Dataset(X, max_bin=8)
    reference = Dataset(X.astype(np.float64), max_bin=8)
    assert ds.data.dtype == np.float64
    np.testing.assert_array_equal(ds.X_binned, reference.X_binned)


def test_array_protocol_object():
    class Wrapper:
        def __init__(self, array):
            self.array = array

        def __array__(self, dtype=None, copy=None):
            return self.array

    X = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(Dataset(Wrapper(X)).data, X)


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (np.array([[1, "a"]], dtype=object), TypeError, "numbers"),
        (np.array([["a", "b"]]), TypeError, "numbers"),
        (np.array([[1 + 2j]]), TypeError, "numbers"),
        ("abc", TypeError, "2-D"),
        (np.arange(5.0), ValueError, r"reshape\(-1, 1\)"),
        (np.zeros((0, 3)), ValueError, "empty"),
        (np.zeros((3, 0)), ValueError, "empty"),
        (np.zeros((2, 2, 2)), ValueError, "3 dimension"),
    ],
)
def test_bad_features(bad, error, message):
    with pytest.raises(error, match=message):
        Dataset(bad)


def test_too_many_rows(monkeypatch):
    monkeypatch.setattr(convert_module, "MAX_ROWS", 5)
    Dataset(np.zeros((5, 1)))
    with pytest.raises(ValueError, match="6 rows"):
        Dataset(np.zeros((6, 1)))


def test_nan_and_inf_features_are_allowed():
    X = np.array([[np.nan, np.inf], [1.0, -np.inf], [2.0, 0.0]])
    ds = Dataset(X)
    assert ds.X_binned[0, 0] == ds.bin_mapper.missing_bin
    assert ds.X_binned[1, 1] == 0
    assert ds.X_binned[0, 1] == ds.bin_mapper.n_value_bins_[1] - 1


# --------------------------------------------------------------------------- #
# Label, weight, group, base margin
# --------------------------------------------------------------------------- #


def test_label_shapes_and_types(X):
    ds = Dataset(X, label=np.arange(40, dtype=np.int32).reshape(-1, 1))
    assert ds.label.dtype == np.float64 and ds.label.shape == (40,)
    assert Dataset(X, label=[True, False] * 20).label.dtype == np.float64


@pytest.mark.parametrize(
    "position, value, message",
    [
        (7, np.nan, "label contains NaN at row 7"),
        (3, np.inf, r"label contains \+inf at row 3"),
        (0, -np.inf, "label contains -inf at row 0"),
    ],
)
def test_label_non_finite(X, position, value, message):
    label = np.zeros(40)
    label[position] = value
    label[position + 1] = np.nan  # only the first bad row is named
    with pytest.raises(ValueError, match=message):
        Dataset(X, label=label)


def test_label_length_and_shape(X):
    with pytest.raises(ValueError, match="39 values.*40 rows"):
        Dataset(X, label=np.zeros(39))
    with pytest.raises(ValueError, match="1-D"):
        Dataset(X, label=np.zeros((40, 2, 2)))
    with pytest.raises(ValueError, match="39 rows"):
        Dataset(X, label=np.zeros((39, 2)))
    several = Dataset(X, label=np.zeros((40, 3)))  # several targets: one column each
    assert several.label.shape == (40, 3) and several.n_targets == 3
    assert not several.has_label_bounds and several.subset(np.arange(5)).label.shape == (5, 3)
    with pytest.raises(TypeError, match="label"):
        Dataset(X, label=np.array(["a"] * 40))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda w: w.__setitem__(4, -1.0), "negative.*row 4"),
        (lambda w: w.__setitem__(2, np.nan), "weight contains NaN at row 2"),
        (lambda w: w.__setitem__(slice(None), 0.0), "zero"),
    ],
)
def test_bad_weight(X, change, message):
    weight = np.ones(40)
    change(weight)
    with pytest.raises(ValueError, match=message):
        Dataset(X, weight=weight)


def test_weight_length_and_storage(X):
    with pytest.raises(ValueError, match="weight has 41 values.*40 rows"):
        Dataset(X, weight=np.ones(41))
    weight = np.zeros(40, dtype=np.float32)
    weight[0] = 2.0
    ds = Dataset(X, weight=weight)
    assert ds.weight.dtype == np.float64 and ds.weight[0] == 2.0


def test_group_sizes(X):
    ds = Dataset(X, group=[10, 25, 5])
    assert ds.group.dtype == np.int64
    np.testing.assert_array_equal(ds.get_group(), [10, 25, 5])
    np.testing.assert_array_equal(Dataset(X, group=np.array([20.0, 20.0])).group, [20, 20])


@pytest.mark.parametrize(
    "group, error, message",
    [
        ([10, 20], ValueError, "sum to 30.*40 rows"),
        ([40, 0], ValueError, "positive"),
        ([-5, 45], ValueError, "positive"),
        ([20.5, 19.5], ValueError, "integers"),
        ([], ValueError, "empty"),
        ([[20, 20], [0, 0]], ValueError, "1-D"),
        (["20", "20"], TypeError, "integers"),
    ],
)
def test_bad_group(X, group, error, message):
    with pytest.raises(error, match=message):
        Dataset(X, group=group)


def test_qid_converts_to_group_sizes():
    X = np.zeros((6, 1))
    ds = Dataset(X, qid=[5, 5, 2, 2, 2, 9])
    assert ds.group.dtype == np.int64
    np.testing.assert_array_equal(ds.group, [2, 3, 1])
    np.testing.assert_array_equal(Dataset(X, qid=np.full(6, 3)).group, [6])


def test_bad_qid():
    X = np.zeros((6, 1))
    with pytest.raises(ValueError, match="qid 5 reappears at row 4"):
        Dataset(X, qid=[5, 5, 2, 2, 5, 5])
    with pytest.raises(ValueError, match="qid has 5 values.*6 rows"):
        Dataset(X, qid=[1, 1, 1, 2, 2])
    with pytest.raises(ValueError, match="integers"):
        Dataset(X, qid=[1, 1, np.nan, 2, 2, 2])
    with pytest.raises(ValueError, match="not both"):
        Dataset(X, group=[6], qid=[1] * 6)


def test_base_margin_shapes(X):
    margin = np.random.default_rng(0).normal(size=(40, 3))
    np.testing.assert_array_equal(Dataset(X, base_margin=margin).base_margin, margin)
    assert Dataset(X, base_margin=margin[:, 0]).base_margin.shape == (40,)
    assert Dataset(X, base_margin=margin[:, :1]).base_margin.shape == (40, 1)
    assert Dataset(X, base_margin=np.zeros(40, np.float32)).base_margin.dtype == np.float64


def test_bad_base_margin(X):
    margin = np.zeros((40, 2))
    margin[6, 1] = np.nan
    with pytest.raises(ValueError, match="base_margin contains NaN at row 6, column 1"):
        Dataset(X, base_margin=margin)
    with pytest.raises(ValueError, match="base_margin has 39 rows.*40 rows"):
        Dataset(X, base_margin=np.zeros(39))
    with pytest.raises(ValueError, match="shape"):
        Dataset(X, base_margin=np.zeros((40, 2, 1)))


def test_setters_validate_and_clear_the_backend_cache(X):
    ds = Dataset(X)
    setters = [
        (ds.set_label, np.ones(40)),
        (ds.set_weight, np.ones(40)),
        (ds.set_group, [40]),
        (ds.set_base_margin, np.zeros(40)),
    ]
    for setter, value in setters:
        ds._backend_cache["device_copy"] = object()
        setter(value)
        assert ds._backend_cache == {}
    np.testing.assert_array_equal(ds.get_label(), np.ones(40))
    ds.set_group(None, qid=[0] * 20 + [1] * 20)
    np.testing.assert_array_equal(ds.group, [20, 20])
    with pytest.raises(ValueError, match="label contains NaN at row 0"):
        ds.set_label(np.full(40, np.nan))
    with pytest.raises(ValueError, match="weight"):
        ds.weight = -np.ones(40)  # attribute assignment validates too
    ds._backend_cache["device_copy"] = object()
    ds.label = None
    assert ds.get_label() is None and ds._backend_cache == {}


# --------------------------------------------------------------------------- #
# Feature names and reference
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "names, message",
    [
        (["a", "b"], "2 names.*3 features"),
        (["a", "b", "a"], "unique"),
        (["a", "b", 3], "strings"),
        ("abc", "single string"),
        (5, "list of strings"),
    ],
)
def test_bad_feature_names(X, names, message):
    with pytest.raises(ValueError, match=message):
        Dataset(X, feature_names=names)


def test_reference_reuses_the_bin_mapper(X):
    train = Dataset(X, max_bin=8, feature_names=["a", "b", "c"])
    X_valid = X[:10] * 3.0
    valid = Dataset(X_valid, max_bin=200, reference=train)
    assert valid.bin_mapper is train.bin_mapper
    assert valid.max_bin == 8
    assert valid.feature_names == ["a", "b", "c"]  # taken from the reference
    np.testing.assert_array_equal(valid.X_binned, train.bin_mapper.transform(X_valid))
    # Its own fit would give other edges.
    assert not np.array_equal(Dataset(X_valid, max_bin=8).X_binned, valid.X_binned)


def test_reference_mismatches(X):
    train = Dataset(X, feature_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="2 features.*3"):
        Dataset(X[:, :2], reference=train)
    with pytest.raises(ValueError, match="differ"):
        Dataset(X, reference=train, feature_names=["a", "b", "x"])
    with pytest.raises(TypeError, match="Dataset"):
        Dataset(X, reference=train.bin_mapper)
    # Default names on the reference do not constrain explicit ones.
    named = Dataset(X, reference=Dataset(X), feature_names=["x", "y", "z"])
    assert named.feature_names == ["x", "y", "z"]


def test_binning_subsample_and_seed_reach_the_bin_mapper():
    X = np.random.default_rng(3).normal(size=(500, 1))
    ds = Dataset(X, max_bin=16, binning_subsample=100, seed=4)
    assert (ds.bin_mapper.subsample, ds.bin_mapper.seed) == (100, 4)
    assert not np.array_equal(ds.X_binned, Dataset(X, max_bin=16).X_binned)


def test_invalid_max_bin_is_reported(X):
    with pytest.raises(ValueError, match="max_bin"):
        Dataset(X, max_bin=256)


# --------------------------------------------------------------------------- #
# pandas and scipy.sparse
# --------------------------------------------------------------------------- #


def test_pandas_dataframe(X):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["age", "height", "score"])
    frame["count"] = pd.array([1, None] * 20, dtype="Int64")
    frame["flag"] = [True, False] * 20
    ds = Dataset(frame, label=pd.Series(np.arange(40.0)))
    assert ds.feature_names == ["age", "height", "score", "count", "flag"]
    np.testing.assert_array_equal(ds.data[:, :3], X)
    assert np.isnan(ds.data[1, 3]) and ds.X_binned[1, 3] == ds.bin_mapper.missing_bin
    np.testing.assert_array_equal(ds.data[:, 4], [1.0, 0.0] * 20)
    assert ds.data.flags.c_contiguous
    np.testing.assert_array_equal(ds.label, np.arange(40.0))


def test_pandas_nullable_label_with_missing_value_is_rejected(X):
    pd = pytest.importorskip("pandas")
    label = pd.Series([1] * 39 + [None], dtype="Int64")
    with pytest.raises(ValueError, match="label contains NaN at row 39"):
        Dataset(X, label=label)


@pytest.mark.parametrize(
    "column, message",
    [
        (lambda pd: ["a", "b"] * 20, "enable_categorical=True"),
        (lambda pd: pd.date_range("2020-01-01", periods=40), "[Cc]ategorical columns are read"),
    ],
    ids=["strings", "datetime"],
)
def test_pandas_non_numeric_column(X, column, message):
    """Strings need enable_categorical (tests/data/test_categorical.py); other
    non-numeric columns are refused, saying how categorical columns are read."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["city"] = column(pd)
    with pytest.raises(TypeError, match=f"'city'.*{message}"):
        Dataset(frame)


def test_pandas_duplicate_columns_are_rejected(X):
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="unique"):
        Dataset(pd.DataFrame(X, columns=["a", "a", "b"]))


def test_pandas_column_names_checked_against_reference(X):
    pd = pytest.importorskip("pandas")
    train = Dataset(pd.DataFrame(X, columns=["a", "b", "c"]))
    with pytest.raises(ValueError, match="differ"):
        Dataset(pd.DataFrame(X, columns=["a", "c", "b"]), reference=train)


def test_polars_dataframe_keeps_names_and_nulls(X):
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(
        {
            "age": X[:, 0],
            "count": pl.Series([1, None] * 20, dtype=pl.Int32),
            "flag": [True, False] * 20,
        }
    )
    ds = Dataset(frame)
    assert ds.feature_names == ["age", "count", "flag"] and ds.has_feature_names
    np.testing.assert_array_equal(ds.data[:, 0], X[:, 0])
    np.testing.assert_array_equal(ds.data[:, 1], [1.0, np.nan] * 20)
    np.testing.assert_array_equal(ds.data[:, 2], [1.0, 0.0] * 20)
    with pytest.raises(TypeError, match="'city'.*not numeric"):
        Dataset(frame.with_columns(city=pl.Series(["a", "b"] * 20)))


def test_arrow_table_keeps_names_and_nulls(X):
    pa = pytest.importorskip("pyarrow")
    table = pa.table(
        {"age": X[:, 0], "count": pa.array([1, None] * 20, type=pa.int64()), "flag": [True] * 40}
    )
    for data in (table, table.to_batches()[0]):
        ds = Dataset(data)
        assert ds.feature_names == ["age", "count", "flag"]
        np.testing.assert_array_equal(ds.data[:, 1], [1.0, np.nan] * 20)
        np.testing.assert_array_equal(ds.data[:, 2], np.ones(40))
    with pytest.raises(TypeError, match="'city'.*not numeric"):
        Dataset(table.append_column("city", pa.array(["a"] * 40)))


def test_arrow_capsule_objects_keep_names(X):
    pa = pytest.importorskip("pyarrow")

    class CapsuleOnly:  # a library known only by its Arrow PyCapsule stream
        def __init__(self, table):
            self._table = table

        def __arrow_c_stream__(self, requested_schema=None):
            return self._table.__arrow_c_stream__(requested_schema)

    ds = Dataset(CapsuleOnly(pa.table({"a": X[:, 0], "b": X[:, 1]})))
    assert ds.feature_names == ["a", "b"]
    np.testing.assert_array_equal(ds.data, X[:, :2])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_dataframe_interchange_protocol_keeps_names(X):
    pd = pytest.importorskip("pandas")

    class InterchangeOnly:  # a DataFrame library known only by its __dataframe__
        def __init__(self, frame):
            self._frame = frame

        def __dataframe__(self, nan_as_null=False, allow_copy=True):
            return self._frame.__dataframe__(nan_as_null=nan_as_null, allow_copy=allow_copy)

    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    ds = Dataset(InterchangeOnly(frame))
    assert ds.feature_names == ["a", "b", "c"]
    np.testing.assert_array_equal(ds.data, X)


def test_scipy_sparse_is_densified_with_zeros():
    sparse = pytest.importorskip("scipy.sparse")
    dense = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, np.nan], [0.0, 0.0, 3.0], [4.0, 0.0, 0.0]])
    matrix = sparse.csr_matrix(dense)
    ds = Dataset(matrix, max_bin=4)
    np.testing.assert_array_equal(ds.data, dense)  # absent entries are 0.0, not missing
    np.testing.assert_array_equal(ds.X_binned, Dataset(dense, max_bin=4).X_binned)
    assert ds.X_binned[1, 2] == ds.bin_mapper.missing_bin
    np.testing.assert_array_equal(Dataset(sparse.csc_matrix(dense)).data, dense)


# --------------------------------------------------------------------------- #
# Loaders
# --------------------------------------------------------------------------- #


def _write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_load_svmlight_one_based(tmp_path):
    path = _write(tmp_path, "# header comment\n1 1:0.5 3:-2\n\n0 2:1e3  # trailing comment\n-1.5\n")
    X, y = load_svmlight(path)
    np.testing.assert_array_equal(X, [[0.5, 0.0, -2.0], [0.0, 1000.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(y, [1.0, 0.0, -1.5])
    assert X.dtype == np.float64 and y.dtype == np.float64


def test_load_svmlight_zero_based_and_n_features(tmp_path):
    path = _write(tmp_path, "3 0:1 2:nan\n4 1:2.5\n")
    X, y = load_svmlight(path, n_features=5)
    assert X.shape == (2, 5)
    np.testing.assert_array_equal(X[:, :3], [[1.0, 0.0, np.nan], [0.0, 2.5, 0.0]])
    np.testing.assert_array_equal(y, [3.0, 4.0])
    with pytest.raises(ValueError, match="n_features"):
        load_svmlight(path, n_features=2)


def test_load_svmlight_forced_index_base(tmp_path):
    path = _write(tmp_path, "1 1:5 2:6\n")
    X, _ = load_svmlight(path, zero_based=True)
    np.testing.assert_array_equal(X, [[0.0, 5.0, 6.0]])
    with pytest.raises(ValueError, match="line 1.*index 0"):
        load_svmlight(_write(tmp_path, "1 0:5\n", "zero.txt"), zero_based=False)


def test_load_svmlight_qid(tmp_path):
    path = _write(tmp_path, "2 qid:7 1:1\n1 qid:7 1:2\n0 qid:3 2:1\n")
    X, y, qid = load_svmlight(path, return_qid=True)
    np.testing.assert_array_equal(qid, [7, 7, 3])
    np.testing.assert_array_equal(Dataset(X, label=y, qid=qid).group, [2, 1])
    X_only, _ = load_svmlight(path)  # qid tokens are skipped
    np.testing.assert_array_equal(X_only, X)
    with pytest.raises(ValueError, match="line 2.*qid"):
        load_svmlight(_write(tmp_path, "1 qid:1 1:1\n1 1:1\n", "noqid.txt"), return_qid=True)


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("abc 1:2", "label 'abc'"),
        ("1 1:2 3", "index:value"),
        ("1 x:2", "feature index 'x'"),
        ("1 1:2 1:3", "appears twice"),
        ("1 -1:2", "negative"),
        ("1 2:y", "value 'y'"),
    ],
)
def test_load_svmlight_malformed_line(tmp_path, bad_line, message):
    path = _write(tmp_path, f"1 1:1\n0 2:1\n{bad_line}\n")
    with pytest.raises(ValueError, match=f"line 3: .*{message}"):
        load_svmlight(path)


def test_load_svmlight_empty_file(tmp_path):
    with pytest.raises(ValueError, match="no data"):
        load_svmlight(_write(tmp_path, "# only a comment\n\n"))


def test_load_query_file(tmp_path):
    group = load_query_file(_write(tmp_path, "3\n\n2  # second query\n1\n"))
    assert group.dtype == np.int64
    np.testing.assert_array_equal(group, [3, 2, 1])


@pytest.mark.parametrize(
    "text, message",
    [
        ("3\n2.5\n", "line 2.*not an integer"),
        ("3\n0\n", "line 2.*not positive"),
        ("3 4\n", "line 1.*one query size"),
        ("\n", "no query sizes"),
    ],
)
def test_load_query_file_errors(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        load_query_file(_write(tmp_path, text))


@pytest.mark.parametrize("device", ["cpu", "numpy-reference"])
def test_float32_features_are_kept_as_given_and_train_the_float64_model(device, monkeypatch):
    """A float32 X is held as it is (no float64 copy: half the memory); its bins, edges,
    bundles, models and predictions are those of its exact float64 values."""
    import gpuboost

    if device == "numpy-reference":
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 4] = (rng.random(400) < 0.2).astype(np.float32)  # sparse-ish: bundles with nothing
    y = np.nan_to_num(X[:, 0]) + X[:, 4]
    single = Dataset(X, label=y)
    double = Dataset(X.astype(np.float64), label=y)
    assert single.features is X and single._data is None
    np.testing.assert_array_equal(single.X_binned, double.X_binned)
    assert single._data is None  # binning read the float32 values
    for a, b in zip(single.bin_mapper.bin_edges_, double.bin_mapper.bin_edges_):
        np.testing.assert_array_equal(a, b)
    params = {"device": "cpu", "max_depth": 4, "enable_bundle": True}
    model = gpuboost.train(params, single, 3, evals=[(single, "train")], verbose_eval=False)
    assert single._data is None
    assert model.save_raw() == gpuboost.train(params, double, 3, verbose_eval=False).save_raw()
    np.testing.assert_array_equal(model.predict(X), model.predict(X.astype(np.float64)))
    np.testing.assert_array_equal(model.predict(single), model.predict(double))
    assert single.data.dtype == np.float64 and single.data.flags.c_contiguous
    np.testing.assert_array_equal(single.data, X.astype(np.float64))


def test_subset_keeps_row_fields_and_shares_the_binning(X):
    weight = np.arange(1.0, 41.0)
    margin = np.arange(40.0) / 10
    ds = Dataset(
        X,
        label=np.arange(40.0),
        weight=weight,
        base_margin=margin,
        feature_names=["a", "b", "c"],
        group=[10, 10, 20],
    )
    part = ds.subset([10, 11, 12, 30, 31])
    np.testing.assert_array_equal(part.data, X[[10, 11, 12, 30, 31]])
    np.testing.assert_array_equal(part.label, [10.0, 11.0, 12.0, 30.0, 31.0])
    np.testing.assert_array_equal(part.weight, weight[[10, 11, 12, 30, 31]])
    np.testing.assert_array_equal(part.base_margin, margin[[10, 11, 12, 30, 31]])
    np.testing.assert_array_equal(part.group, [3, 2])
    assert part.feature_names == ["a", "b", "c"] and part.has_feature_names
    assert part.bin_mapper is ds.bin_mapper
    assert not Dataset(X).subset([0]).has_feature_names
    for rows, error in (
        ([], ValueError),
        ([40], ValueError),
        ([-1], ValueError),
        ([0.5], ValueError),
    ):
        with pytest.raises(error, match="rows"):
            ds.subset(rows)
    with pytest.raises(ValueError, match="contiguous"):
        ds.subset([0, 15, 1])  # query 0 split by a row of query 1
