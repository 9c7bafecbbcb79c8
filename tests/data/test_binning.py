"""Tests of gpuboost.data.binning: bin edges, the bin mapping and its contracts."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gpuboost.core.bin_edges import FLOAT64_MAX
from gpuboost.core.dtypes import MAX_BIN_LIMIT, X_BINNED_DTYPE
from gpuboost.data import binning
from gpuboost.data.binning import BinMapper


def _messy_matrix(n_rows, n_features, seed, n_distinct=None):
    """Random data with duplicates, NaN and +/-inf sprinkled in."""
    rng = np.random.default_rng(seed)
    if n_distinct is None:
        X = rng.normal(size=(n_rows, n_features))
    else:
        X = rng.integers(0, n_distinct, size=(n_rows, n_features)).astype(np.float64)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[rng.random(X.shape) < 0.03] = np.inf
    X[rng.random(X.shape) < 0.03] = -np.inf
    return X


def _assert_split_contract(bin_mapper, X):
    """For every feature and bin b: (bin <= b) == (x <= threshold_for_bin(f, b)).

    NaN rows sit in the missing bin (above every b) and ``NaN <= t`` is False,
    so the equality holds on every row, missing ones included.
    """
    X_binned = bin_mapper.transform(X)
    for feature in range(bin_mapper.n_features_):
        n_splittable_bins = bin_mapper.n_value_bins_[feature] - 1
        for bin_index in range(n_splittable_bins):
            threshold = bin_mapper.threshold_for_bin(feature, bin_index)
            goes_left_binned = X_binned[:, feature] <= bin_index
            goes_left_raw = X[:, feature] <= threshold
            np.testing.assert_array_equal(
                goes_left_binned, goes_left_raw, err_msg=f"feature {feature}, bin {bin_index}"
            )


# --------------------------------------------------------------------------- #
# transform == transform_naive
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("max_bin", [2, 7, 255])
@pytest.mark.parametrize("n_distinct", [None, 3, 40])
def test_transform_matches_naive(max_bin, n_distinct):
    X = _messy_matrix(300, 4, seed=max_bin, n_distinct=n_distinct)
    bin_mapper = BinMapper(max_bin=max_bin).fit(X)
    X_binned = bin_mapper.transform(X)
    assert X_binned.dtype == X_BINNED_DTYPE
    assert X_binned.flags.c_contiguous
    assert X_binned.shape == X.shape
    np.testing.assert_array_equal(X_binned, bin_mapper.transform_naive(X))
    # Unseen data too.
    X_new = _messy_matrix(100, 4, seed=max_bin + 1, n_distinct=n_distinct)
    np.testing.assert_array_equal(bin_mapper.transform(X_new), bin_mapper.transform_naive(X_new))


def test_transform_in_several_chunks(monkeypatch):
    X = _messy_matrix(50, 3, seed=1)
    bin_mapper = BinMapper(max_bin=9).fit(X)
    expected = bin_mapper.transform_naive(X)
    monkeypatch.setattr(binning, "TRANSFORM_CHUNK_ROWS", 7)  # 50 = 7 * 7 + 1
    np.testing.assert_array_equal(bin_mapper.transform(X), expected)


_float_or_special = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, FLOAT64_MAX, -FLOAT64_MAX]),
)


@settings(max_examples=60, deadline=None)
@given(
    X=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
        elements=_float_or_special,
    ),
    max_bin=st.integers(2, 6),
)
def test_transform_matches_naive_and_split_contract_property(X, max_bin):
    bin_mapper = BinMapper(max_bin=max_bin).fit(X)
    for edges in bin_mapper.bin_edges_:
        assert np.all(np.isfinite(edges))
        assert np.all(np.diff(edges) > 0)
    assert np.all(bin_mapper.n_value_bins_ <= max_bin)
    np.testing.assert_array_equal(bin_mapper.transform(X), bin_mapper.transform_naive(X))
    _assert_split_contract(bin_mapper, X)


# --------------------------------------------------------------------------- #
# Edges
# --------------------------------------------------------------------------- #


def test_few_distinct_values_get_one_bin_each_with_midpoint_edges():
    column = np.array([3.0, 1.0, 2.0, np.nan, 1.0, 3.0, 10.0, 2.0])
    bin_mapper = BinMapper(max_bin=4).fit(column.reshape(-1, 1))
    np.testing.assert_array_equal(bin_mapper.bin_edges_[0], [1.5, 2.5, 6.5])
    assert bin_mapper.n_value_bins_[0] == 4
    assert not bin_mapper.is_constant_[0]
    np.testing.assert_array_equal(
        bin_mapper.transform(column.reshape(-1, 1))[:, 0], [2, 0, 1, 4, 0, 2, 3, 1]
    )


def test_adjacent_floats_get_separate_bins():
    # The rounded midpoint of these two equals ``high`` (round half to even).
    low = np.nextafter(1.0, 2.0)
    high = np.nextafter(low, 2.0)
    assert low * 0.5 + high * 0.5 == high
    X = np.array([[low], [high], [low]])
    bin_mapper = BinMapper().fit(X)
    np.testing.assert_array_equal(bin_mapper.transform(X)[:, 0], [0, 1, 0])
    _assert_split_contract(bin_mapper, X)


def test_many_distinct_values_use_percentile_edges():
    max_bin = 16
    column = np.random.default_rng(0).normal(size=1000)
    bin_mapper = BinMapper(max_bin=max_bin).fit(column.reshape(-1, 1))
    percentiles = 100.0 * np.arange(1, max_bin) / max_bin
    expected = np.percentile(column, percentiles, method="averaged_inverted_cdf")
    np.testing.assert_array_equal(bin_mapper.bin_edges_[0], expected)
    assert bin_mapper.n_value_bins_[0] == max_bin
    counts = np.bincount(bin_mapper.transform(column.reshape(-1, 1))[:, 0], minlength=max_bin)
    # Quantile bins hold about the same number of rows.
    assert counts.min() >= 1000 // max_bin - 1 and counts.max() <= 1000 // max_bin + 1


def test_percentile_edges_are_deduplicated():
    # 300 distinct values, but most rows are 0: many percentiles coincide.
    column = np.concatenate([np.zeros(700), np.arange(1.0, 301.0)])
    bin_mapper = BinMapper(max_bin=10).fit(column.reshape(-1, 1))
    edges = bin_mapper.bin_edges_[0]
    assert np.all(np.diff(edges) > 0)
    assert np.count_nonzero(edges == 0.0) == 1
    assert bin_mapper.n_value_bins_[0] == len(edges) + 1 < 10


@pytest.mark.parametrize("max_bin", [2, 3, 64, MAX_BIN_LIMIT])
def test_at_most_max_bin_value_bins(max_bin):
    X = np.random.default_rng(max_bin).exponential(size=(2000, 3))
    X[:, 1] = np.round(X[:, 1] * 100)  # many duplicates
    bin_mapper = BinMapper(max_bin=max_bin).fit(X)
    assert np.all(bin_mapper.n_value_bins_ <= max_bin)
    assert bin_mapper.n_value_bins_[0] == max_bin  # continuous: every bin used
    X_binned = bin_mapper.transform(X)
    assert np.all(X_binned < bin_mapper.n_value_bins_)  # no NaN in X
    assert bin_mapper.missing_bin == max_bin
    assert bin_mapper.n_bins == max_bin + 1


def test_constant_and_all_missing_columns():
    X = np.column_stack([np.full(20, 4.5), np.full(20, np.nan), np.arange(20.0)])
    X[3, 0] = np.nan
    bin_mapper = BinMapper().fit(X)
    np.testing.assert_array_equal(bin_mapper.is_constant_, [True, True, False])
    np.testing.assert_array_equal(bin_mapper.n_value_bins_, [1, 1, 20])
    assert bin_mapper.n_value_bins_.dtype == np.int32
    assert len(bin_mapper.bin_edges_[0]) == 0 and len(bin_mapper.bin_edges_[1]) == 0
    X_binned = bin_mapper.transform(X)
    assert np.all(X_binned[np.arange(20) != 3, 0] == 0)
    assert X_binned[3, 0] == bin_mapper.missing_bin
    assert np.all(X_binned[:, 1] == bin_mapper.missing_bin)
    # Any non-missing value of a constant feature, seen or not, is in bin 0.
    new = np.array([[-1e9, 7.0, 1.0], [np.inf, -np.inf, 2.0]])
    np.testing.assert_array_equal(bin_mapper.transform(new)[:, :2], [[0, 0], [0, 0]])
    with pytest.raises(IndexError, match="bin"):
        bin_mapper.threshold_for_bin(0, 0)


def test_infinite_values_get_end_bins_and_edges_stay_finite():
    column = np.array([np.inf, -np.inf, 0.0, 1.0, 2.0, np.inf, np.nan])
    bin_mapper = BinMapper(max_bin=8).fit(column.reshape(-1, 1))
    edges = bin_mapper.bin_edges_[0]
    assert np.all(np.isfinite(edges))
    assert bin_mapper.n_value_bins_[0] == 5  # -inf, 0, 1, 2, +inf
    last_value_bin = bin_mapper.n_value_bins_[0] - 1
    np.testing.assert_array_equal(
        bin_mapper.transform(column.reshape(-1, 1))[:, 0],
        [last_value_bin, 0, 1, 2, 3, last_value_bin, 8],
    )
    _assert_split_contract(bin_mapper, column.reshape(-1, 1))


@pytest.mark.parametrize(
    "column",
    [
        [np.inf, np.inf, np.nan],  # only +inf: constant
        [-np.inf, -FLOAT64_MAX],  # no finite edge between them: one bin
    ],
)
def test_infinite_only_columns_are_constant(column):
    bin_mapper = BinMapper().fit(np.array(column).reshape(-1, 1))
    assert bin_mapper.is_constant_[0]


def test_percentile_edges_of_data_spanning_the_float64_range_are_finite():
    # Interpolating between -1.6e308 and 1.6e308 overflows.
    column = np.array([-1.7e308, -1.6e308, 1.6e308, 1.7e308])
    bin_mapper = BinMapper(max_bin=2).fit(column.reshape(-1, 1))
    assert np.all(np.isfinite(bin_mapper.bin_edges_[0]))
    assert bin_mapper.n_value_bins_[0] == 2
    _assert_split_contract(bin_mapper, column.reshape(-1, 1))


# --------------------------------------------------------------------------- #
# The train / valid consistency contract
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("max_bin", [2, 3, 5, 255])
def test_binned_split_equals_raw_threshold_split(max_bin):
    rng = np.random.default_rng(max_bin)
    X = np.column_stack(
        [
            rng.normal(size=60),  # continuous
            rng.integers(0, 4, size=60).astype(float),  # few distinct values
            np.where(rng.random(60) < 0.5, np.nan, rng.normal(size=60)),  # half missing
            rng.choice([-np.inf, -1.0, 0.0, 1.0, np.inf, np.nan], size=60),
            np.full(60, 2.0),  # constant
        ]
    )
    bin_mapper = BinMapper(max_bin=max_bin).fit(X)
    _assert_split_contract(bin_mapper, X)
    # The contract follows from the mapping itself, so it holds on unseen data too.
    X_valid = X + rng.normal(scale=0.5, size=X.shape)
    _assert_split_contract(bin_mapper, X_valid)


def test_threshold_for_bin_returns_the_edge():
    bin_mapper = BinMapper().fit(np.array([[1.0], [2.0], [4.0]]))
    assert bin_mapper.threshold_for_bin(0, 0) == 1.5
    assert bin_mapper.threshold_for_bin(0, 1) == 3.0
    assert isinstance(bin_mapper.threshold_for_bin(0, 1), float)
    with pytest.raises(IndexError, match="bin"):
        bin_mapper.threshold_for_bin(0, 2)  # the last value bin has no upper edge
    with pytest.raises(IndexError, match="feature"):
        bin_mapper.threshold_for_bin(1, 0)


# --------------------------------------------------------------------------- #
# Subsampling
# --------------------------------------------------------------------------- #


def test_subsample_is_deterministic_per_seed():
    X = np.random.default_rng(3).normal(size=(3000, 2))
    edges_a = BinMapper(max_bin=32, subsample=500, seed=7).fit(X).bin_edges_
    edges_b = BinMapper(max_bin=32, subsample=500, seed=7).fit(X).bin_edges_
    edges_c = BinMapper(max_bin=32, subsample=500, seed=8).fit(X).bin_edges_
    for a, b in zip(edges_a, edges_b):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, c) for a, c in zip(edges_a, edges_c))


def test_subsample_caps_the_rows_used_and_is_shared_by_features():
    n_rows, subsample, seed = 3000, 400, 11
    column = np.random.default_rng(5).normal(size=n_rows)
    X = np.column_stack([column, column])
    bin_mapper = BinMapper(max_bin=16, subsample=subsample, seed=seed).fit(X)
    # Same rows for every feature: identical columns give identical edges.
    np.testing.assert_array_equal(bin_mapper.bin_edges_[0], bin_mapper.bin_edges_[1])
    rows = np.random.default_rng(seed).choice(n_rows, size=subsample, replace=False)
    expected = np.percentile(
        column[rows], 100.0 * np.arange(1, 16) / 16, method="averaged_inverted_cdf"
    )
    np.testing.assert_array_equal(bin_mapper.bin_edges_[0], expected)
    # All rows: the edges differ from those of the subsample.
    full = BinMapper(max_bin=16, subsample=n_rows, seed=seed).fit(X)
    assert not np.array_equal(full.bin_edges_[0], bin_mapper.bin_edges_[0])


def test_all_rows_used_up_to_subsample_whatever_the_seed():
    X = np.random.default_rng(4).normal(size=(300, 1))
    edges_seed_0 = BinMapper(max_bin=8, subsample=300, seed=0).fit(X).bin_edges_[0]
    edges_seed_1 = BinMapper(max_bin=8, subsample=300, seed=1).fit(X).bin_edges_[0]
    np.testing.assert_array_equal(edges_seed_0, edges_seed_1)


def test_default_subsample_is_200k():
    assert BinMapper().subsample == 200_000


# --------------------------------------------------------------------------- #
# Parameters and errors
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("max_bin", [0, 1, MAX_BIN_LIMIT + 1, -5, 2.5, 255.0, "255", None, True])
def test_invalid_max_bin(max_bin):
    with pytest.raises(ValueError, match="max_bin"):
        BinMapper(max_bin=max_bin)


@pytest.mark.parametrize("max_bin", [2, np.int64(17), MAX_BIN_LIMIT])
def test_valid_max_bin_bounds(max_bin):
    bin_mapper = BinMapper(max_bin=max_bin).fit(np.arange(600.0).reshape(-1, 1))
    assert bin_mapper.n_value_bins_[0] == max_bin
    assert bin_mapper.missing_bin == max_bin


@pytest.mark.parametrize("name, value", [("subsample", 0), ("subsample", 1.5), ("seed", -1)])
def test_invalid_subsample_and_seed(name, value):
    with pytest.raises(ValueError, match=name):
        BinMapper(**{name: value})


def test_transform_errors():
    bin_mapper = BinMapper()
    with pytest.raises(RuntimeError, match="not fitted"):
        bin_mapper.transform(np.zeros((2, 2)))
    bin_mapper.fit(np.random.default_rng(0).normal(size=(10, 3)))
    with pytest.raises(ValueError, match="2 features.*3 features"):
        bin_mapper.transform(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="2-D"):
        bin_mapper.transform(np.zeros(3))
    with pytest.raises(TypeError, match="numbers"):
        bin_mapper.transform(np.array([["a", "b", "c"]]))
    assert bin_mapper.transform(np.zeros((0, 3))).shape == (0, 3)


def test_fit_rejects_empty_input():
    with pytest.raises(ValueError, match="empty"):
        BinMapper().fit(np.zeros((0, 3)))


# --------------------------------------------------------------------------- #
# Serialization
# --------------------------------------------------------------------------- #


def test_to_dict_from_dict_round_trip_is_exact():
    X = _messy_matrix(500, 4, seed=2)
    X[:, 1] = X[:, 1] / 3.0  # edges with long decimal expansions
    bin_mapper = BinMapper(max_bin=33, subsample=400, seed=5).fit(X)
    state = json.loads(json.dumps(bin_mapper.to_dict()))
    restored = BinMapper.from_dict(state)
    assert (restored.max_bin, restored.subsample, restored.seed) == (33, 400, 5)
    assert restored.n_features_ == bin_mapper.n_features_
    for original, copy in zip(bin_mapper.bin_edges_, restored.bin_edges_):
        assert copy.dtype == np.float64
        assert original.tobytes() == copy.tobytes()
    np.testing.assert_array_equal(restored.n_value_bins_, bin_mapper.n_value_bins_)
    np.testing.assert_array_equal(restored.is_constant_, bin_mapper.is_constant_)
    np.testing.assert_array_equal(restored.transform(X), bin_mapper.transform(X))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda state: state.pop("bin_edges"), "bin_edges"),
        (lambda state: state.__setitem__("max_bin", 300), "max_bin"),
        (lambda state: state["bin_edges"][0].reverse(), "increasing"),
        (lambda state: state["bin_edges"][0].__setitem__(-1, float("inf")), "finite"),
        (
            lambda state: state["bin_edges"].__setitem__(0, [float(i) for i in range(10)]),
            "more than",
        ),
        (lambda state: state["bin_edges"].__setitem__(0, ["a"]), "not numbers"),
    ],
)
def test_from_dict_rejects_bad_state(change, message):
    X = np.arange(40.0).reshape(20, 2)
    state = BinMapper(max_bin=4).fit(X).to_dict()
    change(state)
    with pytest.raises(ValueError, match=message):
        BinMapper.from_dict(state)


def test_thresholds_for_bins_is_threshold_for_bin_of_every_split():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=300), np.round(rng.normal(size=300)), np.zeros(300)])
    bin_mapper = BinMapper(max_bin=15).fit(X)
    splits = [(f, b) for f in range(2) for b in range(bin_mapper.n_value_bins_[f] - 1)]
    features, bins = np.array(splits).T
    np.testing.assert_array_equal(
        bin_mapper.thresholds_for_bins(features, bins),
        [bin_mapper.threshold_for_bin(int(f), int(b)) for f, b in splits],
    )
    assert bin_mapper.thresholds_for_bins([], []).shape == (0,)
    for features, bins in (([2], [0]), ([0], [14]), ([3], [0]), ([0], [-1])):
        with pytest.raises(IndexError):
            bin_mapper.thresholds_for_bins(features, bins)
    bin_mapper.fit(X[:, ::-1].copy())  # new edges: the lookup follows them
    assert bin_mapper.thresholds_for_bins([2], [0])[0] == bin_mapper.threshold_for_bin(2, 0)
