"""Sparse input without densifying (issue 12 item 4): a Dataset of a scipy.sparse matrix
bins its columns directly (BinMapper.fit_sparse / transform_sparse), trains on feature
bundles encoded from the stored entries (BundleMap.encode_sparse) without ever building
the dense float matrix or the per-feature binned matrix, and gives the model of the dense
matrix bit for bit; prediction takes sparse rows block by block."""

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both

import gpuboost
from gpuboost import Dataset
from gpuboost.backends.cpu.histogram import column_cells
from gpuboost.backends.cpu.jit import CPU_KERNELS_ENV_VAR
from gpuboost.data import binning as binning_module
from gpuboost.data.binning import BinMapper
from gpuboost.model import booster as booster_module
from gpuboost.tree.splitters import SparseColumnsSplitter

scipy_sparse = pytest.importorskip("scipy.sparse")


def _sparse(n_rows=1500, seed=0):
    """CSR with one-hot-like columns (few distinct values: bundling), dense-ish columns of
    many distinct values (quantile edges), stored explicit zeros, NaN and inf entries."""
    rng = np.random.default_rng(seed)
    counts = scipy_sparse.random(n_rows, 60, density=0.03, format="csr", random_state=seed)
    counts.data = np.round(counts.data * 4)  # 0.0 to 4.0: some stored zeros
    many = scipy_sparse.random(n_rows, 6, density=0.6, format="csr", random_state=seed + 1)
    many.data = rng.normal(size=many.nnz)
    X = scipy_sparse.hstack([counts, many], format="csr")
    X.data[rng.random(X.nnz) < 0.01] = np.nan
    X.data[:2] = [np.inf, -np.inf]
    dense = X.toarray()
    dense = np.nan_to_num(dense, posinf=0.0, neginf=0.0)
    y = dense[:, 0] * 2 + dense[:, 60] - dense[:, 3] + rng.normal(size=n_rows)
    return X, y


def _missing_dense(X):
    """``X`` dense with NaN where it stores nothing (XGBoost's semantics)."""
    coo = X.tocoo()
    dense = np.full(X.shape, np.nan)
    dense[coo.row, coo.col] = coo.data
    return dense


@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 4},
        {"max_depth": 4, "enable_bundle": False},
        {"max_depth": 3, "subsample": 0.7, "max_bin": 16},  # binned prediction of the rows
        {"max_depth": 0, "max_leaves": 12, "grow_policy": "lossguide", "max_bin": 64},
    ],
)
def test_sparse_gives_the_dense_model_bit_for_bit(params):
    X, y = _sparse()
    weight = np.random.default_rng(1).random(X.shape[0]) + 0.5
    for layout in ("csr", "csc"):
        sparse = Dataset(X.asformat(layout), y, weight=weight)
        model = gpuboost.train(params, sparse, 4)
        dense = gpuboost.train(params, Dataset(X.toarray(), y, weight=weight), 4)
        assert model.save_raw() == dense.save_raw()
        assert sparse._features is None  # the dense float matrix was never built
        np.testing.assert_array_equal(model.predict(X), dense.predict(X.toarray()))


def test_training_on_bundles_never_builds_the_per_feature_bins():
    X, y = _sparse()
    dataset = Dataset(X, y)
    model = gpuboost.train({"max_depth": 4, "subsample": 0.8}, dataset, 3)
    assert dataset.bundle_map().reduces_columns
    assert dataset._X_binned is None and dataset._features is None
    # ... but they are there, equal to the dense ones, for whoever asks.
    dense = Dataset(X.toarray(), y)
    np.testing.assert_array_equal(dataset.X_binned, dense.X_binned)
    np.testing.assert_array_equal(dataset.features, X.toarray())
    assert (
        model.save_raw() == gpuboost.train({"max_depth": 4, "subsample": 0.8}, dense, 3).save_raw()
    )


@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 4, "subsample": 0.8},
        {"objective": "binary:logistic", "grow_policy": "lossguide", "max_leaves": 12},
    ],
)
def test_sparse_columns_need_no_bundles_and_give_the_bundled_model(params, monkeypatch):
    """On the compiled CPU backend sparse input trains on its columns' entries
    (SparseColumnsSplitter): no bundle search, no bundled or per-feature binned matrix,
    and the model bytes of the bundled splitter and of dense input."""
    pytest.importorskip("numba")
    X, y = _sparse()
    y = (y > np.median(y)).astype(float) if "objective" in params else y
    params = dict(params, device="cpu")
    searched = []
    original = Dataset.bundle_map

    def recording(self, *args):
        searched.append(args)
        return original(self, *args)

    monkeypatch.setattr(Dataset, "bundle_map", recording)
    dataset = Dataset(X, y)
    columns_model = gpuboost.train(params, dataset, 4)
    assert searched == [] and dataset._X_binned is None and dataset._features is None
    monkeypatch.setattr(SparseColumnsSplitter, "takes", staticmethod(lambda *args: False))
    bundled_model = gpuboost.train(params, Dataset(X, y), 4)
    assert searched  # the bundled splitter searched bundles
    dense_model = gpuboost.train(params, Dataset(X.toarray(), y), 4)
    assert columns_model.save_raw() == bundled_model.save_raw() == dense_model.save_raw()


def test_column_cells_are_the_bundled_cells():
    """Every row's non-default cells from the stored entries are those the bundled matrix
    gives (as sets per row: the columns list them in feature order, the bundles in
    bundle order), and every entry's bin is transform_sparse's."""
    pytest.importorskip("numba")
    X, y = _sparse(seed=9)
    dataset = Dataset(X, y)
    mapper = dataset.bin_mapper
    bundle_map = dataset.bundle_map(0.0)
    X_bundled = bundle_map.encode_sparse(dataset.sparse_columns, mapper)
    n_bins = bundle_map.scan_bins
    expected_indptr, expected_cells = bundle_map.non_default_cells(X_bundled, n_bins, n_bins - 1)
    indptr, cells, entry_bins = column_cells(
        dataset.sparse_columns,
        mapper.bin_edges_,
        bundle_map.default_bins,
        mapper.missing_bin,
        n_bins,
    )
    np.testing.assert_array_equal(indptr, expected_indptr)
    for row in range(X.shape[0]):
        np.testing.assert_array_equal(
            np.sort(cells[indptr[row] : indptr[row + 1]]),
            np.sort(expected_cells[expected_indptr[row] : expected_indptr[row + 1]]),
        )
    binned = mapper.transform_sparse(dataset.sparse_columns)
    columns = dataset.sparse_columns
    rows = columns.indices
    features = np.repeat(np.arange(columns.shape[1]), np.diff(columns.indptr))
    np.testing.assert_array_equal(entry_bins, binned[rows, features])


def test_cpu_and_emulated_cuda_give_the_same_model_on_sparse_input(emulated_cuda):
    X, y = _sparse(600)
    runs = train_on_both({"max_depth": 4, "subsample": 0.8}, lambda: Dataset(X, label=y), 3)
    assert_runs_match(runs)
    assert runs["cuda"].dataset._X_binned is None


@pytest.mark.parametrize("weighted", [False, True])
def test_fit_sparse_equals_fit_on_the_dense_matrix(weighted):
    """Both edge rules (distinct midpoints, quantiles), weighted quantiles (row order),
    the binning subsample, and absent entries as missing."""
    X, _ = _sparse(900, seed=3)
    X.data[3:9] = -0.0  # stored negative zeros: the same value as absent entries
    weight = np.random.default_rng(2).integers(0, 3, size=X.shape[0]).astype(float)
    weight = weight if weighted else None
    columns = X.tocsc()
    columns.sum_duplicates()
    for max_bin, subsample in ((255, 200_000), (8, 200_000), (16, 400)):
        for absent_missing in (False, True):
            dense = _missing_dense(X) if absent_missing else X.toarray()
            mapper = BinMapper(max_bin=max_bin, subsample=subsample, seed=5)
            sparse = BinMapper(max_bin=max_bin, subsample=subsample, seed=5)
            mapper.fit(dense, sample_weight=weight)
            sparse.fit_sparse(columns, weight, absent_missing)
            for expected, got in zip(mapper.bin_edges_, sparse.bin_edges_):
                np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(
                sparse.transform_sparse(columns, absent_missing), mapper.transform(dense)
            )


def test_fit_sparse_reads_the_stored_entries_of_columns_with_few_values(monkeypatch):
    """Columns of at most max_bin distinct values are binned from their distinct stored
    values (and one 0.0 for their absent entries) all at once, never one by one from
    n_rows values: only the columns of more distinct values reach the per-column edges
    (the same edges: test above)."""
    X, _ = _sparse(2000, seed=12)
    columns = X.tocsc()
    lengths = []  # (values passed, distinct values) of every column binned one by one
    original = binning_module._find_bin_edges

    def recording(values, *args):
        lengths.append((len(values), len(np.unique(values))))
        return original(values, *args)

    monkeypatch.setattr(binning_module, "_find_bin_edges", recording)
    mapper = BinMapper().fit_sparse(columns)
    assert len(lengths) == 6  # the 6 columns of many values, not the 60 of few
    assert all(n_distinct > 255 for _, n_distinct in lengths)
    assert all(len(edges) < 255 for edges in mapper.bin_edges_[:60])
    assert all(len(edges) > 100 for edges in mapper.bin_edges_[60:])  # quantiles


def test_absent_entries_as_missing():
    X, y = _sparse(seed=4)
    dataset = Dataset(X, y, sparse_absent="missing")
    model = gpuboost.train({"max_depth": 4}, dataset, 3)
    dense = gpuboost.train({"max_depth": 4}, Dataset(_missing_dense(X), y), 3)
    assert model.save_raw() == dense.save_raw()
    np.testing.assert_array_equal(model.predict(dataset), dense.predict(_missing_dense(X)))
    zero = gpuboost.train({"max_depth": 4}, Dataset(X, y), 3)
    assert zero.save_raw() != model.save_raw()  # the option changes the model
    with pytest.raises(ValueError, match="sparse_absent"):
        Dataset(X, y, sparse_absent="nan")


def test_prediction_of_sparse_rows_block_by_block(monkeypatch):
    """Leaf indices and SHAP values of sparse rows: dense blocks of rows, one at a time."""
    X, y = _sparse(1450, seed=5)  # 14 blocks of 100 rows and one of 50
    model = gpuboost.train({"max_depth": 4}, Dataset(X, y), 3)
    dense = X.toarray()
    monkeypatch.setattr(booster_module, "SPARSE_PREDICT_BLOCK_BYTES", 8 * X.shape[1] * 100)
    seen = []
    original = model._predict_dense

    def recording(data, *args):
        seen.append(data.shape[0])
        return original(data, *args)

    monkeypatch.setattr(model, "_predict_dense", recording)
    for kwargs in ({"pred_leaf": True}, {"pred_contribs": True}):
        np.testing.assert_array_equal(model.predict(X, **kwargs), model.predict(dense, **kwargs))
        np.testing.assert_array_equal(
            model.predict(Dataset(X), **kwargs), model.predict(dense, **kwargs)
        )
    assert max(seen) == X.shape[0]  # the dense calls
    assert 100 in seen and 50 in seen  # the sparse ones: blocks of 100 rows


@pytest.mark.parametrize("kernels", ["compiled", "numpy"])
def test_prediction_traverses_the_sparse_rows(monkeypatch, kernels):
    """Margins and predictions of CSR / CSC rows and sparse Datasets (absent entries 0.0
    or missing, rows' own base margins, several outputs) without a dense row: those of
    the dense matrix, bit for bit, with the compiled kernel and the NumPy reference."""
    if kernels == "numpy":
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    X, y = _sparse(seed=8)
    classes = (np.arange(X.shape[0]) * 7 % 3).astype(float)
    models = [
        gpuboost.train({"max_depth": 4}, Dataset(X, y), 4),
        gpuboost.train(
            {"max_depth": 3, "objective": "multi:softprob", "num_class": 3},
            Dataset(X, classes),
            3,
        ),
    ]
    margin = np.random.default_rng(2).normal(size=X.shape[0])

    def refuse(*args):
        raise AssertionError("densified")

    for model in models:
        expected = {
            "zero": model.predict(X.toarray()),
            "missing": model.predict(_missing_dense(X)),
            "margin": model.predict(_missing_dense(X), output_margin=True),
            "own margin": model.predict(Dataset(X.toarray(), base_margin=margin))
            if model.n_outputs == 1
            else None,
        }
        with monkeypatch.context() as patched:
            patched.setattr(model, "_predict_dense", refuse)
            patched.setattr(booster_module, "densify", refuse)
            for layout in ("csr", "csc", "coo"):
                np.testing.assert_array_equal(model.predict(X.asformat(layout)), expected["zero"])
            missing = Dataset(X, sparse_absent="missing")
            np.testing.assert_array_equal(model.predict(missing), expected["missing"])
            np.testing.assert_array_equal(
                model.predict(missing, output_margin=True), expected["margin"]
            )
            np.testing.assert_array_equal(model.predict(X[:0]), expected["zero"][:0])
            if model.n_outputs == 1:
                with_margin = Dataset(X, base_margin=margin)
                np.testing.assert_array_equal(model.predict(with_margin), expected["own margin"])
    with pytest.raises(ValueError, match="features"):
        models[0].predict(X[:, :10])


def test_subset_of_a_sparse_dataset_stays_sparse():
    X, y = _sparse(seed=6)
    dataset = Dataset(X, y)
    rows = np.arange(0, X.shape[0], 3)
    part = dataset.subset(rows)
    assert part.sparse_columns is not None
    np.testing.assert_array_equal(part.X_binned, dataset.X_binned[rows])


@pytest.mark.parametrize("kernels", ["compiled", "numpy"])
def test_bundles_encoded_from_the_stored_entries(kernels, monkeypatch):
    """The compiled pass over the entries and the NumPy loop (the reference) both give
    the bundled matrix of the binned features, conflicts included (the member encoded
    last wins)."""
    if kernels == "numpy":
        monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    else:
        pytest.importorskip("numba")
    X, y = _sparse(seed=7)  # stored NaN entries too: missing slots
    dataset = Dataset(X, y)
    for rate in (0.0, 0.05):
        bundle_map = dataset.bundle_map(rate)
        encoded = bundle_map.encode_sparse(dataset.sparse_columns, dataset.bin_mapper)
        np.testing.assert_array_equal(encoded, bundle_map.encode_naive(dataset.X_binned))
        features = [5, 0, 61, 5]
        np.testing.assert_array_equal(
            bundle_map.decode_features(np, encoded, features),
            bundle_map.decode(np, encoded)[:, features],
        )


def test_non_default_cells_compiled_equal_the_numpy_loop(monkeypatch):
    """Every row's non-default bundle entries as per-feature histogram cells: the
    compiled count-and-fill passes give the NumPy loop's CSR table, conflicts included."""
    pytest.importorskip("numba")
    X, y = _sparse(seed=8)
    dataset = Dataset(X, y)
    for rate in (0.0, 0.05):
        bundle_map = dataset.bundle_map(rate)
        X_bundled = bundle_map.encode_sparse(dataset.sparse_columns, dataset.bin_mapper)
        for n_bins, missing_bin in ((256, None), (bundle_map.scan_bins, bundle_map.scan_bins - 1)):
            monkeypatch.delenv(CPU_KERNELS_ENV_VAR, raising=False)
            compiled = bundle_map.non_default_cells(X_bundled, n_bins, missing_bin)
            monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
            reference = bundle_map.non_default_cells(X_bundled, n_bins, missing_bin)
            for got, expected in zip(compiled, reference):
                assert got.dtype == expected.dtype
                np.testing.assert_array_equal(got, expected)
            assert compiled[0][-1] == np.count_nonzero(X_bundled)


# --------------------------------------------------------------------------- #
# pandas sparse columns
# --------------------------------------------------------------------------- #


def _frame(X, fill_value=0.0):
    """``X`` as a pandas DataFrame of sparse columns with ``fill_value`` (stored entries:
    ``X``'s, plus, for a fill value other than 0, every absent entry as 0.0)."""
    pd = pytest.importorskip("pandas")
    names = [f"c{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame.sparse.from_spmatrix(X, columns=names)
    if fill_value != 0.0:
        frame = pd.DataFrame(
            {
                name: pd.arrays.SparseArray(X[:, j].toarray().ravel(), fill_value=fill_value)
                for j, name in enumerate(names)
            }
        )
    return frame, names


def test_pandas_sparse_columns_give_the_models_of_scipy_and_dense_input(monkeypatch):
    """A DataFrame of sparse columns (fill value 0), and one mixing sparse and dense
    columns, is read from its stored entries: the model of the scipy matrix and of the
    dense frame, byte for byte; predictions traverse its sparse rows, by column name."""
    pd = pytest.importorskip("pandas")
    X, y = _sparse(seed=9)
    frame, names = _frame(X)
    dataset = Dataset(frame, y)
    assert dataset.feature_names == names
    assert dataset.sparse_columns.nnz == X.nnz  # memory of the stored entries only
    params = {"max_depth": 4}
    model = gpuboost.train(params, dataset, 4)
    assert dataset._features is None  # never densified
    dense_frame = pd.DataFrame(X.toarray(), columns=names)
    dense = gpuboost.train(params, Dataset(dense_frame, y), 4)
    assert model.save_raw() == dense.save_raw()
    scipy_model = gpuboost.train(params, Dataset(X, y, feature_names=names), 4)
    assert model.save_raw() == scipy_model.save_raw()
    mixed = frame.copy()
    for name in names[-6:]:  # the columns of many values: dense
        mixed[name] = mixed[name].sparse.to_dense()
    assert gpuboost.train(params, Dataset(mixed, y), 4).save_raw() == dense.save_raw()
    expected = dense.predict(dense_frame)
    monkeypatch.setattr(model, "_predict_dense", None)  # would fail if called
    np.testing.assert_array_equal(model.predict(frame), expected)
    np.testing.assert_array_equal(model.predict(mixed), expected)
    np.testing.assert_array_equal(model.predict(frame[names[::-1]]), expected)  # by name


def test_pandas_sparse_fill_values():
    """The fill value is the absent value: NaN with sparse_absent='missing' (XGBoost's
    semantics); a fill value that is not the Dataset's absent value is refused with the
    fix; prediction reads any fill value as its dense frame."""
    pd = pytest.importorskip("pandas")
    X, y = _sparse(600, seed=10)
    nan_frame, names = _frame(X, np.nan)
    model = gpuboost.train({"max_depth": 3}, Dataset(nan_frame, y, sparse_absent="missing"), 3)
    # Stored zeros stay zeros in both: the dense frame of nan_frame holds NaN elsewhere.
    dense_nan = nan_frame.sparse.to_dense()
    assert model.save_raw() == gpuboost.train({"max_depth": 3}, Dataset(dense_nan, y), 3).save_raw()
    np.testing.assert_array_equal(model.predict(nan_frame), model.predict(dense_nan))
    with pytest.raises(ValueError, match="fill_value nan.*sparse_absent='missing'"):
        Dataset(nan_frame, y)
    zero_frame, _ = _frame(X)
    with pytest.raises(ValueError, match="fill_value 0.*SparseDtype"):
        Dataset(zero_frame, y, sparse_absent="missing")
    ones, _ = _frame(X, 1.0)
    with pytest.raises(ValueError, match="fill_value 1"):
        Dataset(ones, y)
    # Prediction: a mix of fill values, each column read as its dense equivalent.
    mixed = zero_frame.copy()
    mixed[names[0]] = ones[names[0]]
    mixed[names[1]] = nan_frame[names[1]]
    np.testing.assert_array_equal(model.predict(mixed), model.predict(mixed.sparse.to_dense()))
    text = pd.DataFrame({"a": pd.arrays.SparseArray(["x", None, "y"])})
    with pytest.raises(TypeError, match="not numeric"):
        Dataset(text)


def test_estimators_keep_sparse_input_sparse(monkeypatch):
    """The scikit-learn estimators pass scipy.sparse matrices and sparse DataFrames to
    the Dataset and the Booster as they are: the models of the dense input."""
    pd = pytest.importorskip("pandas")
    from gpuboost.sklearn import base as estimator_base

    X, y = _sparse(800, seed=11)
    frame, names = _frame(X)
    cases = []
    for sparse, dense in ((frame, pd.DataFrame(X.toarray(), columns=names)), (X, X.toarray())):
        fitted = gpuboost.GBRegressor(n_estimators=4, max_depth=3).fit(dense, y)
        cases.append((sparse, fitted.get_booster().save_raw(), fitted.predict(dense)))

    def refuse(X):
        raise AssertionError("densified")

    monkeypatch.setattr(estimator_base, "as_feature_matrix", refuse)
    for sparse, model_bytes, predictions in cases:
        estimator = gpuboost.GBRegressor(n_estimators=4, max_depth=3).fit(sparse, y)
        assert estimator.get_booster().save_raw() == model_bytes
        np.testing.assert_array_equal(estimator.predict(sparse), predictions)
        if sparse is frame:
            assert list(estimator.feature_names_in_) == names
