"""Tests of gpuboost.data.bundling: exclusive feature bundling (bundles, encoding, histogram
expansion) and training with bundles (identical models, fewer histogram columns, both
backends)."""

import importlib
import json

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.backends.cpu.backend import CpuBackend
from gpuboost.backends.numpy.histogram import build_histograms, build_histograms_naive
from gpuboost.backends.numpy.predict import predict_leaves_binned
from gpuboost.core.dtypes import GRAD_QUANT_MAX
from gpuboost.core.gain import SplitParams
from gpuboost.core.profiling import PhaseTimer
from gpuboost.core.quantize import GradientQuantiser, quantize
from gpuboost.core.random import host_rng
from gpuboost.data.binning import BinMapper
from gpuboost.data.bundling import (
    MAX_BUNDLE_BINS,
    BundleMap,
    bundle_features,
    default_bins,
    find_bundles,
)
from gpuboost.params import validate_params
from gpuboost.tree.feature_sampler import FeatureSampler
from gpuboost.tree.grower import GrowthPolicy, TreeGrower
from gpuboost.tree.splitters import BundledHistogramSplitter, TreeInput, bundled

# The module, not the function the package exports under the same name.
gpuboost_train_module = importlib.import_module("gpuboost.boosting.train")

sparse = pytest.importorskip("scipy.sparse")


# ---- data ---------------------------------------------------------------------------
def one_hot(n_rows, n_variables, n_levels, seed):
    """CSR one-hot encoding of ``n_variables`` categorical variables with ``n_levels``
    levels each, the categories (n_rows, n_variables) and a label depending on two of them."""
    rng = np.random.default_rng(seed)
    categories = rng.integers(0, n_levels, size=(n_rows, n_variables))
    rows = np.repeat(np.arange(n_rows), n_variables)
    columns = (np.arange(n_variables) * n_levels + categories).ravel()
    X = sparse.csr_matrix(
        (np.ones(n_rows * n_variables), (rows, columns)), shape=(n_rows, n_variables * n_levels)
    )
    y = (
        1.0 * (categories[:, 0] % 3 == 0)
        + 0.5 * (categories[:, 1] < n_levels // 3)
        - 0.7 * (categories[:, 2] == 1)
        + 0.1 * rng.normal(size=n_rows)
    )
    return X, categories, y


def sparse_mixed(n_rows, n_features, density, seed, group_size=4):
    """Dense array of sparse features: groups of ``group_size`` features of which at most
    one is non-zero in a row (so they can share a bundle), values of both signs, some NaN
    (non-default too), plus a feature 0 that is never zero (its default bin is the bin
    below all its values) and a few overlaps between groups (``density``)."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n_rows, n_features))
    for first in range(1, n_features, group_size):
        members = np.arange(first, min(first + group_size, n_features))
        chosen = rng.integers(0, len(members) + 1, size=n_rows)  # len(members): none
        active = chosen < len(members)
        X[np.flatnonzero(active), members[chosen[active]]] = np.round(
            rng.normal(scale=2.0, size=np.count_nonzero(active)), 1
        )
    noise = rng.random((n_rows, n_features)) < density / 10
    X[noise] = rng.normal(size=np.count_nonzero(noise))
    X[(X != 0) & (rng.random((n_rows, n_features)) < 0.1)] = np.nan
    X[:, 0] = rng.normal(size=n_rows) + 5.0
    return X


def _nondefault(dataset):
    """(n_rows, n_features) bool: the bin differs from the bin of 0.0 (by binning)."""
    return dataset.X_binned != default_bins(dataset.bin_mapper)[None, :]


# ---- default bins and the greedy bundling -----------------------------------------
def test_default_bin_is_the_bin_of_zero():
    X = np.array([[-2.0, 3.0, 0.0], [-1.0, 4.0, 1.0], [1.0, 5.0, 2.0], [0.0, 6.0, np.nan]])
    dataset = Dataset(X)
    expected = dataset.bin_mapper.transform(np.zeros((1, 3)))[0]
    np.testing.assert_array_equal(default_bins(dataset.bin_mapper), expected)
    assert list(expected) == [2, 0, 0]


def test_find_bundles_first_fit_in_decreasing_count_order():
    rows = {
        0: np.array([0, 1, 2, 3]),
        1: np.array([4, 5]),
        2: np.array([1, 6]),
        3: np.array([7]),
        4: np.array([], dtype=np.int64),
    }
    counts = np.array([len(rows[f]) for f in range(5)])
    n_slots = np.array([1, 1, 1, 1, 0])
    bundles, n_conflicts = find_bundles(counts, n_slots, rows.__getitem__, 8, max_conflicts=0)
    # 0 opens a bundle; 1 joins it; 2 conflicts with 0 (row 1): new bundle; 3 joins the
    # first; 4 (never non-default) joins the first bundle.
    assert bundles == [[0, 1, 3, 4], [2]]
    assert n_conflicts == 0
    bundles, n_conflicts = find_bundles(counts, n_slots, rows.__getitem__, 8, max_conflicts=1)
    assert bundles == [[0, 1, 2, 3, 4]] and n_conflicts == 1


@pytest.mark.parametrize("seed", range(4))
def test_row_set_merge_and_overlap(seed):
    from gpuboost.data.bundling import _common, _merge

    rng = np.random.default_rng(seed)
    a = np.unique(rng.integers(0, 50, size=int(rng.integers(0, 30))))
    b = np.unique(rng.integers(0, 50, size=int(rng.integers(0, 30))))
    np.testing.assert_array_equal(_merge(a, b), np.union1d(a, b))
    np.testing.assert_array_equal(_common(b, a)[0], np.isin(b, a))


def test_features_that_may_not_share_get_closed_bundles():
    rows = {0: np.array([0, 1, 2]), 1: np.array([3]), 2: np.array([4])}
    counts, n_slots = np.array([3, 1, 1]), np.array([1, 1, 1])
    bundles, _ = find_bundles(
        counts, n_slots, rows.__getitem__, 5, 0, shareable=np.array([False, True, True])
    )
    assert bundles == [[0], [1, 2]]


def test_dense_input_keeps_mostly_non_default_features_alone():
    """Dense input is screened on a row sample: a feature non-default in 70% of the rows
    is not bundled, though the 30% feature it never overlaps could join it; from sparse
    input every count is exact and the two share a bundle."""
    n_rows = 1000
    X = np.zeros((n_rows, 3))
    X[:700, 0] = 1.0 + np.arange(700) % 3
    X[700:, 1] = 2.0
    X[::2, 2] = -1.0  # overlaps both
    assert [list(m) for m in Dataset(X).bundle_map().members] == [[0], [2], [1]]
    assert [list(m) for m in Dataset(sparse.csr_matrix(X)).bundle_map().members] == [[0, 1], [2]]


def test_bundle_width_stays_within_the_bin_limit():
    n_slots = np.array([120, 120, 120, 2])
    rows = {f: np.array([f]) for f in range(4)}  # all mutually exclusive
    bundles, _ = find_bundles(np.ones(4, dtype=np.int64), n_slots, rows.__getitem__, 4, 0)
    assert bundles == [[0, 1, 3], [2]]
    bundle_map = BundleMap(bundles, n_slots, np.zeros(4), n_slots + 1, 255)
    assert bundle_map.bundle_widths.max() <= MAX_BUNDLE_BINS
    with pytest.raises(ValueError, match="more than 256"):
        BundleMap([[0, 1, 2]], n_slots, np.zeros(4), n_slots + 1, 255)


def test_one_hot_variables_become_one_bundle_each():
    X, _, _ = one_hot(2000, 10, 30, seed=0)
    dataset = Dataset(X)
    bundle_map = dataset.bundle_map()
    assert bundle_map.n_conflicts == 0
    assert 10 <= bundle_map.n_bundles <= 20 < dataset.n_features == 300
    assert bundle_map.reduces_columns
    nondefault = _nondefault(dataset)
    for members in bundle_map.members:  # exclusive: at most one non-default member per row
        assert nondefault[:, members].sum(axis=1).max() <= 1
    assert dataset.bundle_map() is bundle_map  # cached


@pytest.mark.parametrize("layout", ["csr", "csc", "coo_with_duplicates"])
def test_sparse_and_dense_inputs_give_the_same_bundles(layout):
    X = sparse_mixed(300, 12, density=0.15, seed=3)
    if layout == "coo_with_duplicates":
        # Half of every value stored twice: duplicates are summed, as in toarray().
        coo = sparse.coo_matrix(np.nan_to_num(X, nan=0.0))
        matrix = sparse.coo_matrix(
            (
                np.concatenate([coo.data / 2, coo.data / 2]),
                (np.tile(coo.row, 2), np.tile(coo.col, 2)),
            ),
            shape=X.shape,
        )
        X = matrix.toarray()
    else:
        matrix = getattr(sparse, f"{layout}_matrix")(X)
    from_sparse = Dataset(matrix).bundle_map()
    from_dense = Dataset(X).bundle_map()
    assert from_sparse.n_bundles < 12
    assert [list(m) for m in from_sparse.members] == [list(m) for m in from_dense.members]
    np.testing.assert_array_equal(from_sparse.feature_offset, from_dense.feature_offset)
    np.testing.assert_array_equal(from_sparse.n_slots, from_dense.n_slots)


def test_dense_data_without_exclusive_features_is_not_bundled():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    X[:, 4] = 3.0  # constant: no histogram column needed, not a reason to bundle
    bundle_map = Dataset(X).bundle_map()
    assert bundle_map.n_bundles == 4 and not bundle_map.reduces_columns


def test_conflict_rate_bounds_the_conflicts_of_every_bundle():
    X = sparse_mixed(400, 16, density=0.2, seed=5)
    dataset = Dataset(X)
    exact = dataset.bundle_map(0.0)
    approximate = dataset.bundle_map(0.05)
    assert approximate.n_bundles < exact.n_bundles and approximate.n_conflicts > 0
    nondefault = _nondefault(dataset)
    for members in approximate.members:
        overlaps = nondefault[:, members].sum(axis=1)
        conflicting_rows = np.count_nonzero(overlaps > 1)
        assert conflicting_rows <= 0.05 * 400
    with pytest.raises(ValueError, match="max_conflict_rate"):
        bundle_features(dataset.data, dataset.bin_mapper, 1.0)


# ---- encoding and histogram expansion ---------------------------------------------
@pytest.mark.parametrize("max_conflict_rate", [0.0, 0.1])
def test_encode_matches_naive_and_decode_inverts(max_conflict_rate):
    X = sparse_mixed(250, 10, density=0.2, seed=7)
    dataset = Dataset(X, max_bin=15)
    bundle_map = dataset.bundle_map(max_conflict_rate)
    X_bundled = bundle_map.encode(np, dataset.X_binned)
    np.testing.assert_array_equal(X_bundled, bundle_map.encode_naive(dataset.X_binned))
    assert X_bundled.shape == (250, bundle_map.n_bundles) and X_bundled.dtype == np.uint8
    assert X_bundled.flags.c_contiguous
    decoded = bundle_map.decode(np, X_bundled)
    if max_conflict_rate == 0.0:
        np.testing.assert_array_equal(decoded, dataset.X_binned)
    else:
        assert bundle_map.n_conflicts > 0
        changed = np.any(decoded != dataset.X_binned, axis=1)
        assert 0 < np.count_nonzero(changed) <= bundle_map.n_conflicts
        # Decoding is the identity on the bundles' own encoding.
        np.testing.assert_array_equal(bundle_map.encode(np, decoded), X_bundled)


@pytest.mark.parametrize("max_conflict_rate", [0.0, 0.1])
def test_expanded_bundle_histograms_equal_per_feature_histograms(max_conflict_rate):
    rng = np.random.default_rng(11)
    X = sparse_mixed(300, 10, density=0.2, seed=9)
    dataset = Dataset(X, max_bin=15)
    bundle_map = dataset.bundle_map(max_conflict_rate)
    X_bundled = bundle_map.encode(np, dataset.X_binned)
    gradients = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=300).astype(np.int32)
    hessians = rng.integers(0, GRAD_QUANT_MAX + 1, size=300).astype(np.int32)
    sample_indices = rng.permutation(300).astype(np.int32)
    begins, ends = [0, 40, 41, 200], [40, 41, 200, 200]
    bundle_histograms = build_histograms(
        np.ascontiguousarray(X_bundled.T),
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        bundle_map.n_bins,
    )
    n_bins = dataset.bin_mapper.n_bins
    expanded = bundle_map.expand_histograms(
        np, bundle_histograms, bundle_map.histogram_expansion(n_bins), n_bins
    )
    np.testing.assert_array_equal(
        expanded, bundle_map.expand_histograms_naive(bundle_histograms, n_bins)
    )
    # Without conflicts the per-feature histograms themselves; with conflicts those of
    # the decoded bins, which the partition uses.
    per_feature = dataset.X_binned if max_conflict_rate == 0.0 else bundle_map.decode(np, X_bundled)
    direct = build_histograms_naive(
        per_feature, gradients, hessians, sample_indices, begins, ends, n_bins
    )
    np.testing.assert_array_equal(expanded, direct)


# ---- training -----------------------------------------------------------------------
class ColumnCountingBackend(NumpyBackend):
    """NumPy backend recording the number of columns of every histogram it builds."""

    def __init__(self):
        self.histogram_columns = []

    def build_histograms(self, data, *args):
        histograms = super().build_histograms(data, *args)
        self.histogram_columns.append(histograms.shape[1])
        return histograms


def _model_document(booster):
    """The model JSON without the enable_bundle flag (the one field that may differ)."""
    document = json.loads(booster.save_raw())
    document["learner"]["params"].pop("enable_bundle")
    return json.dumps(document, sort_keys=True)


def _train(X, y, params, rounds, backend=None, monkeypatch=None):
    if backend is not None:
        monkeypatch.setattr(gpuboost_train_module, "get_backend", lambda device: backend)
    return gpuboost.train(
        dict({"device": "cpu", "max_depth": 4}, **params),
        Dataset(X, label=y),
        num_boost_round=rounds,
        verbose_eval=False,
    )


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_one_hot_training_with_and_without_bundles_gives_the_same_model(layout, monkeypatch):
    X, _, y = one_hot(2000, 10, 30, seed=1)
    X = X.asformat(layout)
    counting = ColumnCountingBackend()
    bundled = _train(X, y, {}, 4, counting, monkeypatch)
    plain_backend = ColumnCountingBackend()
    plain = _train(X, y, {"enable_bundle": False}, 4, plain_backend, monkeypatch)
    assert _model_document(bundled) == _model_document(plain)
    assert sum(tree.n_leaves for tree in plain.trees) > 4 * 4
    assert set(plain_backend.histogram_columns) == {300}
    assert max(counting.histogram_columns) <= 20


def test_bundled_training_options(monkeypatch):
    """Lossguide, column and row sampling, NaN and features that are never zero."""
    X = sparse_mixed(500, 14, density=0.15, seed=13)
    y = np.nan_to_num(X[:, 1]) + 2.0 * (np.nan_to_num(X[:, 2]) > 0) + X[:, 0] * 0.1
    params = {
        "grow_policy": "lossguide",
        "max_leaves": 9,
        "max_depth": 0,
        "subsample": 0.8,
        "colsample_bynode": 0.7,
        "max_bin": 31,
    }
    assert Dataset(X, max_bin=31).bundle_map().reduces_columns
    models = [_train(X, y, dict(params, enable_bundle=flag), 5) for flag in (True, False)]
    assert _model_document(models[0]) == _model_document(models[1])


def test_conflicting_bundles_partition_as_their_histograms_say():
    """With conflicts, every leaf's rows are exactly those the decoded bins send there,
    and the leaf counts (from the histograms) match the partition."""
    X = sparse_mixed(500, 16, density=0.2, seed=17)
    y = np.nan_to_num(X[:, 3]) - np.nan_to_num(X[:, 5]) + 0.1 * X[:, 0]
    dataset = Dataset(X, label=y)
    bundle_map = dataset.bundle_map(0.1)
    assert bundle_map.n_conflicts > 0
    backend = NumpyBackend()
    data = backend.prepare(dataset)
    splitter = BundledHistogramSplitter(
        backend, data, bundle_map, dataset.bin_mapper.thresholds_for_bins
    )
    decoded = bundle_map.decode(np, splitter.bundled_data.arrays["X_binned"])
    assert np.any(decoded != dataset.X_binned)
    params = validate_params(
        {"device": "cpu", "max_depth": 5, "max_conflict_rate": 0.1, "min_data_in_leaf": 1}
    )
    quantized_g, scale_g = quantize(np, 0.0 - y)
    quantized_h, scale_h = quantize(np, np.ones_like(y))
    sample_indices = np.arange(dataset.n_rows, dtype=np.int32)
    tree_input = TreeInput(
        quantized_g,
        quantized_h,
        GradientQuantiser(scale_g, scale_h),
        sample_indices,
        SplitParams.from_params(params),
        params["learning_rate"],
    )
    grower = TreeGrower(
        splitter,
        tree_input,
        GrowthPolicy.from_params(params),
        FeatureSampler(dataset.n_features, params, host_rng(0, 0, 0)),
        PhaseTimer(),
    )
    grown = grower.grow()
    tree = grown.tree
    assert tree.n_leaves >= 8
    leaves = predict_leaves_binned(tree, decoded, dataset.bin_mapper.missing_bin)
    for leaf, begin, end in zip(grown.leaf_nodes, grown.leaf_begins, grown.leaf_ends):
        assert tree.count[leaf] == end - begin
        np.testing.assert_array_equal(leaves[grown.sample_indices[begin:end]], leaf)
    np.testing.assert_array_equal(splitter.predict_training_rows(tree), tree.value[leaves])


def test_bundled_splitter_caches_its_device_arrays():
    X, _, y = one_hot(300, 4, 8, seed=2)
    dataset = Dataset(X, label=y)
    backend = NumpyBackend()
    data = backend.prepare(dataset)
    first = BundledHistogramSplitter(
        backend, data, dataset.bundle_map(), dataset.bin_mapper.thresholds_for_bins
    )
    second = BundledHistogramSplitter(
        backend, data, dataset.bundle_map(), dataset.bin_mapper.thresholds_for_bins
    )
    assert second.bundled_data is first.bundled_data
    np.testing.assert_array_equal(
        first.bundled_data.arrays["X_binned"], dataset.bundle_map().encode_naive(dataset.X_binned)
    )


# ---- both backends (CUDA kernels under the CPU emulation) ---------------------------
@pytest.mark.parametrize(
    "params",
    [
        {},
        {
            "subsample": 0.8,
            "max_conflict_rate": 0.1,
            "grow_policy": "lossguide",
            "max_leaves": 6,
            "max_depth": 0,
        },
    ],
    ids=["exact_bundles", "conflicts_lossguide_sampled"],
)
def test_cpu_and_cuda_train_the_same_bundled_model(emulated_cuda, params):
    X, categories, y = one_hot(240, 4, 8, seed=4)
    dense = X.toarray()
    dense[:, 0] = np.where(categories[:, 3] > 3, 2.0 + categories[:, 3], 0.0)  # conflicts
    runs = train_on_both(
        dict({"max_depth": 3}, **params), lambda: Dataset(sparse.csr_matrix(dense), label=y), 2
    )
    assert_runs_match(runs)
    bundle_map = runs["cuda"].dataset.bundle_map(params.get("max_conflict_rate", 0.0))
    assert bundle_map.reduces_columns
    assert runs["cuda"].dataset._X_binned is None, "bundling binned the data on the host"
    cached = runs["cuda"].dataset._backend_cache["cuda"].arrays[BundledHistogramSplitter.CACHE_KEY]
    assert cached[1].n_features == bundle_map.n_bundles


@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 4},
        {"max_depth": 4, "max_conflict_rate": 0.1, "subsample": 0.8, "colsample_bynode": 0.7},
        {"grow_policy": "lossguide", "max_leaves": 9, "max_depth": 0, "max_bin": 31},
    ],
)
def test_compiled_sparse_histograms_give_the_model_of_bundle_histograms(params, monkeypatch):
    """The compiled CPU backend builds the histograms of a sparse bundled matrix from the
    rows' non-default entries (gpuboost.backends.cpu.histogram.build_sparse_histograms):
    the model of bundle histograms expanded (the NumPy reference backend's), byte for
    byte, with conflicts, sampling and lossguide too."""
    rng = np.random.default_rng(21)
    X = sparse.random(800, 80, density=0.03, format="csr", random_state=21)
    X.data = np.round(X.data * rng.choice([4, 50], size=X.nnz))
    X.data[rng.random(X.nnz) < 0.05] = np.nan
    X = sparse.hstack([sparse.csr_matrix(rng.normal(size=(800, 1))), X], format="csr")
    dense = np.nan_to_num(X.toarray())
    y = dense[:, 0] + dense[:, 3] - dense[:, 5] ** 2 + rng.normal(size=800)
    calls = []
    original = CpuBackend._sparse_histograms

    def counting(self, *args):
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(CpuBackend, "_sparse_histograms", counting)
    monkeypatch.setattr(bundled, "SPARSE_HISTOGRAM_MAX_FILL", 1.0)  # however dense
    sparse_model = gpuboost.train(params, Dataset(X, label=y), 4).save_raw()
    assert calls  # the sparse histograms were built
    monkeypatch.setattr(bundled, "SPARSE_HISTOGRAM_MAX_FILL", -1.0)
    calls.clear()
    assert gpuboost.train(params, Dataset(X, label=y), 4).save_raw() == sparse_model
    assert not calls
    monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    assert gpuboost.train(params, Dataset(X, label=y), 4).save_raw() == sparse_model


def test_default_bins_are_the_bins_of_zero():
    """default_bins (every feature at once) is searchsorted(edges, 0.0, 'left') per
    feature: edges of 0.0 and -0.0 included, features without edges, all-negative and
    all-positive edges."""
    mapper = BinMapper()
    mapper._set_edges(
        [
            np.array([-2.0, -0.5, 0.0, 3.0]),
            np.array([-0.0, 1.0]),
            np.zeros(0),
            np.array([-5.0, -4.0]),
            np.array([0.25, 7.0]),
            np.array([-1e-300, 1e-300]),
        ]
    )
    expected = [np.searchsorted(edges, 0.0, side="left") for edges in mapper.bin_edges_]
    np.testing.assert_array_equal(default_bins(mapper), expected)
    assert default_bins(mapper).dtype == np.int32
    np.testing.assert_array_equal(default_bins(mapper), [2, 0, 0, 2, 0, 1])
