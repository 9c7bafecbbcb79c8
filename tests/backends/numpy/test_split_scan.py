"""Tests of gpuboost.backends.numpy.split_scan (and the gain formulas of gpuboost.core.gain):
the split scan against its naive loop."""

import dataclasses
import itertools

import numpy as np
import pytest

from gpuboost.backends.numpy import split_scan as split_module
from gpuboost.backends.numpy.histogram import build_histograms
from gpuboost.backends.numpy.split_scan import find_best_splits, find_best_splits_naive
from gpuboost.core.gain import SPLIT_GAIN_EPS, SPLIT_RECORD_DTYPE, SplitParams, split_gain
from gpuboost.core.quantize import quantize
from gpuboost.data.binning import BinMapper

PARAM_GRID = [
    SplitParams(
        reg_lambda=lam,
        reg_alpha=alpha,
        max_delta_step=mds,
        min_child_weight=mcw,
        min_data_in_leaf=mdl,
        gamma=gamma,
    )
    for lam, alpha, mds, mcw, mdl, gamma in itertools.product(
        (0.0, 1.0, 4.0), (0.0, 0.7), (0.0, 0.4), (0.0, 1.0, 6.0), (1, 4), (0.0, 0.8)
    )
]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def assert_records_identical(fast, naive):
    """Every field equal; gains compared bit for bit."""
    assert fast.dtype == naive.dtype == SPLIT_RECORD_DTYPE
    assert fast.shape == naive.shape
    for name in SPLIT_RECORD_DTYPE.names:
        if name == "gain":
            np.testing.assert_array_equal(fast[name].view(np.uint64), naive[name].view(np.uint64))
        else:
            np.testing.assert_array_equal(fast[name], naive[name], err_msg=name)


def random_histograms(rng, n_nodes, n_features, max_bin, discrete_gradients=False):
    """Histograms of random binned data with missing values, as the grower builds them.

    Returns (histograms, scale_gradients, scale_hessians, n_value_bins).
    With ``discrete_gradients`` the gradients take few distinct values, so that
    many candidate splits tie exactly.
    """
    n_rows = int(rng.integers(n_nodes * 2, n_nodes * 40))
    n_value_bins = rng.integers(1, max_bin + 1, size=n_features)
    X_binned = np.empty((n_rows, n_features), dtype=np.uint8)
    for feature in range(n_features):
        X_binned[:, feature] = rng.integers(0, n_value_bins[feature], size=n_rows)
    has_missing = rng.random(n_features) < 0.6
    missing = (rng.random((n_rows, n_features)) < 0.15) & has_missing
    X_binned[missing] = max_bin
    if discrete_gradients:
        gradients = rng.integers(-2, 3, size=n_rows).astype(np.float64)
        hessians = rng.choice([0.0, 1.0, 2.0], size=n_rows)
    else:
        gradients = rng.normal(size=n_rows) + (X_binned[:, 0] % 3 == 0)
        hessians = rng.uniform(0.05, 1.0, size=n_rows)
    quantized_g, scale_g = quantize(np, gradients)
    quantized_h, scale_h = quantize(np, hessians)
    cuts = np.sort(rng.integers(0, n_rows + 1, size=n_nodes - 1))
    begins = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [n_rows]])
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        quantized_g,
        quantized_h,
        rng.permutation(n_rows).astype(np.int32),
        begins,
        ends,
        max_bin + 1,
    )
    return histograms, scale_g, scale_h, n_value_bins


def one_feature_histogram(cells, missing=(0, 0, 0), max_bin=6):
    """One node, one feature: ``cells`` = [(G, H, count) per value bin] (integers)."""
    histogram = np.zeros((1, 1, max_bin + 1, 3), dtype=np.int64)
    for bin_, cell in enumerate(cells):
        histogram[0, 0, bin_] = cell
    histogram[0, 0, max_bin] = missing
    return histogram, np.array([len(cells)]), max_bin


def both(histograms, n_value_bins, missing_bin, params, scale_g=1.0, scale_h=1.0, mask=None):
    fast = find_best_splits(histograms, scale_g, scale_h, n_value_bins, missing_bin, params, mask)
    naive = find_best_splits_naive(
        histograms, scale_g, scale_h, n_value_bins, missing_bin, params, mask
    )
    assert_records_identical(fast, naive)
    return fast


# ---------------------------------------------------------------------------
# Gain formulas
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Vectorized scan against the naive loop
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_scan_matches_naive_for_every_param_combination(seed):
    rng = np.random.default_rng(seed)
    max_bin = int(rng.choice([3, 8, 16]))
    histograms, scale_g, scale_h, n_value_bins = random_histograms(
        rng,
        n_nodes=int(rng.integers(1, 5)),
        n_features=int(rng.integers(1, 5)),
        max_bin=max_bin,
        discrete_gradients=seed % 2 == 1,
    )
    n_found = 0
    for params in PARAM_GRID:
        fast = both(histograms, n_value_bins, max_bin, params, scale_g, scale_h)
        n_found += int((fast["feature"] >= 0).sum())
    assert n_found > 0  # the grid does find splits


@pytest.mark.parametrize("seed", range(4))
def test_scan_matches_naive_with_feature_masks(seed):
    rng = np.random.default_rng(100 + seed)
    max_bin = 12
    n_nodes, n_features = 6, 5
    histograms, scale_g, scale_h, n_value_bins = random_histograms(
        rng, n_nodes, n_features, max_bin, discrete_gradients=seed % 2 == 0
    )
    for params in (SplitParams(), SplitParams(reg_alpha=0.3, min_child_weight=0.0, gamma=0.1)):
        for _ in range(8):
            mask = rng.random((n_nodes, n_features)) < 0.5
            fast = both(histograms, n_value_bins, max_bin, params, scale_g, scale_h, mask)
            chosen = fast["feature"] >= 0
            assert mask[np.flatnonzero(chosen), fast["feature"][chosen]].all()
        all_masked = both(
            histograms,
            n_value_bins,
            max_bin,
            params,
            scale_g,
            scale_h,
            np.zeros((n_nodes, n_features), dtype=bool),
        )
        assert (all_masked["feature"] == -1).all()


def test_scan_matches_naive_across_chunks(monkeypatch):
    rng = np.random.default_rng(7)
    max_bin = 10
    histograms, scale_g, scale_h, n_value_bins = random_histograms(rng, 40, 3, max_bin)
    mask = rng.random((40, 3)) < 0.7
    whole = find_best_splits(
        histograms, scale_g, scale_h, n_value_bins, max_bin, SplitParams(), mask
    )
    monkeypatch.setattr(split_module, "_SCAN_CHUNK_CELLS", 3 * (max_bin - 1) * 3)  # 3 nodes/chunk
    chunked = both(histograms, n_value_bins, max_bin, SplitParams(), scale_g, scale_h, mask)
    assert_records_identical(chunked, whole)


def test_records_of_nodes_without_a_split():
    histogram, n_value_bins, max_bin = one_feature_histogram([(-3, 2, 2), (3, 2, 2)])
    record = both(histogram, n_value_bins, max_bin, SplitParams(min_child_weight=5.0))[0]
    assert record["feature"] == -1 and record["bin"] == -1
    assert record["gain"] == -np.inf and not record["default_left"]
    assert (record["sum_gradients"], record["sum_hessians"], record["count"]) == (0, 4, 4)
    assert record["left_count"] == 0


def test_no_nodes_and_too_few_bins():
    empty = np.zeros((0, 2, 9, 3), dtype=np.int64)
    assert find_best_splits(empty, 1.0, 1.0, np.array([8, 8]), 8, SplitParams()).shape == (0,)
    histogram, n_value_bins, _ = one_feature_histogram([(-3, 2, 2), (3, 2, 2)], max_bin=2)
    records = both(histogram, n_value_bins, 2, SplitParams(min_child_weight=0.0))
    assert records["bin"][0] == 0
    constant = np.zeros((1, 1, 2, 3), dtype=np.int64)
    constant[0, 0, 0] = (5, 5, 5)
    assert find_best_splits(constant, 1.0, 1.0, np.array([1]), 1, SplitParams())["feature"][0] == -1


# ---------------------------------------------------------------------------
# Semantics on constructed histograms
# ---------------------------------------------------------------------------


def test_record_holds_left_and_node_sums():
    cells = [(-6, 3, 3), (-2, 2, 2), (5, 4, 4), (4, 1, 1)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells, missing=(1, 2, 2))
    record = both(histogram, n_value_bins, max_bin, SplitParams(min_child_weight=0.0))[0]
    assert (record["feature"], record["bin"]) == (0, 1)
    left = (-8, 5, 5) if not record["default_left"] else (-7, 7, 7)
    assert (record["left_sum_gradients"], record["left_sum_hessians"], record["left_count"]) == left
    assert (record["sum_gradients"], record["sum_hessians"], record["count"]) == (2, 12, 12)
    params = SplitParams(min_child_weight=0.0)
    g_left, h_left = left[0], left[1]
    assert record["gain"] == split_gain(g_left, h_left, 2 - g_left, 12 - h_left, 2, 12, params)


def test_scales_convert_integer_sums_to_floats():
    cells = [(-6, 3, 3), (6, 3, 3)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    params = SplitParams(reg_lambda=1.0, min_child_weight=0.0)
    record = both(histogram, n_value_bins, max_bin, params, scale_g=2.0, scale_h=4.0)[0]
    # G = -3 / 3, H = 0.75 / 0.75: gain = 2 * 9 / 1.75 - 0
    assert record["gain"] == split_gain(-3.0, 0.75, 3.0, 0.75, 0.0, 1.5, params)


def test_missing_right_preferred_on_equal_gain():
    # Missing rows with zero gradient and hessian: both directions give the same gain.
    cells = [(-10, 5, 5), (10, 5, 5)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells, missing=(0, 0, 3))
    record = both(histogram, n_value_bins, max_bin, SplitParams())[0]
    assert record["feature"] == 0 and record["bin"] == 0
    assert not record["default_left"]
    assert record["left_count"] == 5


def test_missing_goes_where_the_gain_is_higher():
    # Missing rows look like bin 0's rows: sending them left is better.
    cells = [(-10, 5, 5), (10, 5, 5)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells, missing=(-6, 3, 3))
    record = both(histogram, n_value_bins, max_bin, SplitParams())[0]
    assert record["default_left"] and record["left_count"] == 8
    histogram, n_value_bins, max_bin = one_feature_histogram(cells, missing=(6, 3, 3))
    record = both(histogram, n_value_bins, max_bin, SplitParams())[0]
    assert not record["default_left"] and record["left_count"] == 5


@pytest.mark.parametrize(
    "left_rows, right_rows, expected_default_left", [(3, 7, False), (7, 3, True), (5, 5, True)]
)
def test_without_missing_rows_default_goes_to_the_larger_child(
    left_rows, right_rows, expected_default_left
):
    cells = [(-left_rows, left_rows, left_rows), (right_rows, right_rows, right_rows)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    record = both(histogram, n_value_bins, max_bin, SplitParams())[0]
    assert record["bin"] == 0
    assert bool(record["default_left"]) == expected_default_left


def test_lowest_bin_wins_a_tie():
    # Bin 1 is empty, so thresholds 0 and 1 separate the same rows.
    cells = [(-10, 5, 5), (0, 0, 0), (10, 5, 5)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    record = both(histogram, n_value_bins, max_bin, SplitParams())[0]
    assert record["bin"] == 0


def test_duplicate_columns_lowest_feature_wins():
    rng = np.random.default_rng(3)
    n_rows, max_bin = 300, 15
    informative = rng.integers(0, max_bin, size=n_rows)
    informative[rng.random(n_rows) < 0.1] = max_bin
    noise = rng.integers(0, max_bin, size=n_rows)
    X_binned = np.stack([noise, informative, noise[::-1], informative], axis=1).astype(np.uint8)
    gradients = np.where(informative < 6, -1.0, 1.0) + 0.1 * rng.normal(size=n_rows)
    quantized_g, scale_g = quantize(np, gradients)
    quantized_h, scale_h = quantize(np, np.ones(n_rows))
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        quantized_g,
        quantized_h,
        np.arange(n_rows, dtype=np.int32),
        [0],
        [n_rows],
        max_bin + 1,
    )
    n_value_bins = np.full(4, max_bin)
    record = both(histograms, n_value_bins, max_bin, SplitParams(), scale_g, scale_h)[0]
    assert record["feature"] == 1 and record["bin"] == 5
    mask = np.array([[True, False, True, True]])
    masked = both(histograms, n_value_bins, max_bin, SplitParams(), scale_g, scale_h, mask)[0]
    assert masked["feature"] == 3
    assert masked["gain"] == record["gain"] and masked["bin"] == record["bin"]
    assert masked["default_left"] == record["default_left"]


@pytest.mark.parametrize(
    "params, splits",
    [
        (SplitParams(), True),
        (SplitParams(gamma=1e9), False),
        (SplitParams(min_child_weight=5.0), True),  # each child has H = 5
        (SplitParams(min_child_weight=5.5), False),
        (SplitParams(min_data_in_leaf=5), True),
        (SplitParams(min_data_in_leaf=6), False),
    ],
)
def test_admissibility_limits(params, splits):
    cells = [(-10, 5, 5), (10, 5, 5)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    record = both(histogram, n_value_bins, max_bin, params)[0]
    assert (record["feature"] >= 0) == splits


def test_gain_must_exceed_gamma_strictly():
    cells = [(-10, 5, 5), (10, 5, 5)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    gain = float(both(histogram, n_value_bins, max_bin, SplitParams())[0]["gain"])
    at_gain = both(histogram, n_value_bins, max_bin, SplitParams(gamma=gain))[0]
    assert at_gain["feature"] == -1
    below = float(np.nextafter(gain, 0.0))
    assert both(histogram, n_value_bins, max_bin, SplitParams(gamma=below))[0]["feature"] == 0


def test_tiny_gain_below_eps_is_not_a_split():
    cells = [(-1, 4_000_000, 5), (1, 4_000_000, 5)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    params = SplitParams(min_child_weight=0.0)
    gain = split_gain(-1.0, 4e6, 1.0, 4e6, 0.0, 8e6, params)
    assert 0 < gain <= SPLIT_GAIN_EPS
    assert both(histogram, n_value_bins, max_bin, params)[0]["feature"] == -1


def test_step_function_split_found_at_the_step():
    rng = np.random.default_rng(5)
    n_rows = 1000
    X = rng.uniform(0, 1, size=(n_rows, 2))
    step = 0.37
    y = np.where(X[:, 1] <= step, 1.0, 3.0)
    mapper = BinMapper(max_bin=64).fit(X)
    X_binned = mapper.transform(X)
    quantized_g, scale_g = quantize(np, 0.0 - y)  # squared error at margin 0
    quantized_h, scale_h = quantize(np, np.ones(n_rows))
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        quantized_g,
        quantized_h,
        np.arange(n_rows, dtype=np.int32),
        [0],
        [n_rows],
        mapper.n_bins,
    )
    record = both(
        histograms, mapper.n_value_bins_, mapper.missing_bin, SplitParams(), scale_g, scale_h
    )[0]
    assert record["feature"] == 1
    threshold = mapper.threshold_for_bin(1, int(record["bin"]))
    below = X[:, 1][X[:, 1] <= step].max()
    above = X[:, 1][X[:, 1] > step].min()
    # The chosen threshold separates the two plateaus exactly.
    goes_left = X[:, 1] <= threshold
    np.testing.assert_array_equal(goes_left, X[:, 1] <= step)
    assert below <= threshold < above
    assert record["left_count"] == np.count_nonzero(X[:, 1] <= step)


# ---------------------------------------------------------------------------
# Monotone constraints (docs/DESIGN.md, "Monotone constraints")
# ---------------------------------------------------------------------------


def monotone_case(rng, n_nodes, n_features):
    """Random directions (at least one constrained feature) and node bounds, some
    unbounded, some around zero (tight enough to clip weights)."""
    directions = tuple(int(d) for d in rng.choice([-1, 0, 1], size=n_features))
    if not any(directions):
        directions = (1,) + directions[1:]
    lower = np.where(rng.random(n_nodes) < 0.5, -np.inf, -rng.random(n_nodes))
    upper = np.where(rng.random(n_nodes) < 0.5, np.inf, rng.random(n_nodes))
    return directions, np.stack([lower, upper], axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_monotone_scan_matches_naive(seed):
    rng = np.random.default_rng(500 + seed)
    max_bin = int(rng.choice([3, 8, 16]))
    n_nodes, n_features = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    histograms, scale_g, scale_h, n_value_bins = random_histograms(
        rng, n_nodes, n_features, max_bin, discrete_gradients=seed % 2 == 1
    )
    directions, bounds = monotone_case(rng, n_nodes, n_features)
    for params in PARAM_GRID[::7]:
        params = dataclasses.replace(params, monotone=directions)
        fast = find_best_splits(
            histograms, scale_g, scale_h, n_value_bins, max_bin, params, node_bounds=bounds
        )
        naive = find_best_splits_naive(
            histograms, scale_g, scale_h, n_value_bins, max_bin, params, node_bounds=bounds
        )
        assert_records_identical(fast, naive)


def test_monotone_scan_rejects_splits_in_the_wrong_direction():
    """Gradients falling with the bin: the best split sends the higher weight right,
    which a decreasing constraint forbids and an increasing one allows."""
    cells = [(5, 1, 1), (3, 1, 1), (-3, 1, 1), (-5, 1, 1)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    free = both(histogram, n_value_bins, max_bin, SplitParams(min_child_weight=0.0))
    assert free["feature"][0] == 0
    bounds = np.array([[-np.inf, np.inf]])
    up = find_best_splits(
        histogram,
        1.0,
        1.0,
        n_value_bins,
        max_bin,
        SplitParams(min_child_weight=0.0, monotone=(1,)),
        node_bounds=bounds,
    )
    assert up["feature"][0] == 0 and up["bin"][0] == free["bin"][0]
    assert up["gain"][0] == pytest.approx(free["gain"][0])
    down = find_best_splits(
        histogram,
        1.0,
        1.0,
        n_value_bins,
        max_bin,
        SplitParams(min_child_weight=0.0, monotone=(-1,)),
        node_bounds=bounds,
    )
    assert down["feature"][0] == -1


def test_monotone_bounds_clip_the_children_weights():
    """With both children's weights clipped to the same bound, the split gains nothing."""
    cells = [(5, 1, 1), (3, 1, 1), (-3, 1, 1), (-5, 1, 1)]
    histogram, n_value_bins, max_bin = one_feature_histogram(cells)
    params = SplitParams(min_child_weight=0.0, monotone=(1,))
    wide = find_best_splits(
        histogram, 1.0, 1.0, n_value_bins, max_bin, params, node_bounds=np.array([[-9.0, 9.0]])
    )
    assert wide["feature"][0] == 0
    pinned = find_best_splits(
        histogram, 1.0, 1.0, n_value_bins, max_bin, params, node_bounds=np.array([[2.0, 9.0]])
    )
    assert pinned["feature"][0] == -1  # every weight clipped up to 2.0: no gain
