"""The categorical split scan (vectorized against the loop reference), the per-tree
``cat_smooth`` estimate, and bitsets."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from gpuboost.core.categorical import (
    SPLIT_SET_WORDS,
    CategoricalParams,
    bitset_contains,
    bitset_from_members,
    bitset_members,
    estimated_cat_smooth,
    find_best_categorical_splits,
    find_best_categorical_splits_naive,
)
from gpuboost.core.gain import SplitParams

MISSING_BIN = 255


def _histograms(rng, n_nodes, n_value_bins, with_missing, scale=1000):
    """Random node histograms of categorical features (consistent node totals)."""
    n_features = len(n_value_bins)
    hist = np.zeros((n_nodes, n_features, MISSING_BIN + 1, 3), dtype=np.int64)
    for node in range(n_nodes):
        n_rows = int(rng.integers(300, 2000))
        all_bins = [rng.integers(0, k, n_rows) for k in n_value_bins]
        effects = rng.integers(-scale, scale, n_value_bins[0])  # feature 0 has a signal
        gradients = effects[all_bins[0]] + rng.integers(-scale, scale, n_rows)
        hessians = rng.integers(1, scale, n_rows)
        for position, bins in enumerate(all_bins):
            if with_missing:
                bins[rng.random(n_rows) < 0.15] = MISSING_BIN
            np.add.at(hist[node, position, :, 0], bins, gradients)
            np.add.at(hist[node, position, :, 1], bins, hessians)
            np.add.at(hist[node, position, :, 2], bins, 1)
    return hist


@pytest.mark.parametrize(
    "n_value_bins, cat_params, with_missing",
    [
        ([3, 4], CategoricalParams(min_data_per_group=1), True),  # one-vs-rest only
        ([12, 40], CategoricalParams(min_data_per_group=5), False),  # many-vs-many
        ([2, 9, 60], CategoricalParams(min_data_per_group=10, max_cat_threshold=4), True),
        ([30], CategoricalParams(min_data_per_group=30, cat_smooth=0.0, cat_l2=0.0), True),
        ([25, 5], CategoricalParams(max_cat_to_onehot=30, min_data_per_group=1), True),
    ],
)
def test_vectorized_scan_equals_the_loop_reference(n_value_bins, cat_params, with_missing):
    rng = np.random.default_rng(len(n_value_bins) * 7 + int(with_missing))
    hist = _histograms(rng, 12, n_value_bins, with_missing)
    features = np.arange(2, 2 + len(n_value_bins))
    mask = rng.random((12, 2 + len(n_value_bins))) < 0.8
    split_params = SplitParams(min_data_in_leaf=3, min_child_weight=0.0)
    for feature_mask in (None, mask):
        args = (hist, features, np.array(n_value_bins), MISSING_BIN, 1000.0, 1000.0)
        records, sets = find_best_categorical_splits(*args, split_params, cat_params, feature_mask)
        expected, expected_sets = find_best_categorical_splits_naive(
            *args, split_params, cat_params, feature_mask
        )
        np.testing.assert_array_equal(records, expected)
        np.testing.assert_array_equal(sets, expected_sets)
        assert (records["feature"] >= 0).sum() >= 6  # the data have real splits
        # ... and with a cat_smooth per feature (cat_smooth_estimate), 0 included.
        smoothing = rng.choice([0.0, 0.4, 3.0, 25.0], size=len(n_value_bins))
        records, sets = find_best_categorical_splits(
            *args, split_params, cat_params, feature_mask, smoothing
        )
        expected, expected_sets = find_best_categorical_splits_naive(
            *args, split_params, cat_params, feature_mask, smoothing
        )
        np.testing.assert_array_equal(records, expected)
        np.testing.assert_array_equal(sets, expected_sets)


def _root_histogram(rng, n_categories, rows_each, effect_scale, noise_scale=1.0, scale=2.0**20):
    """One feature's root histogram (1, n_bins, 3) of squared-error gradients: categories of
    ``rows_each`` rows with effects ``effect_scale * N(0, 1)`` and noise; and the rows'
    dispersion ``sum g^2 / sum h`` (hessians 1)."""
    codes = np.repeat(np.arange(n_categories), rows_each)
    effects = rng.normal(size=n_categories) * effect_scale
    gradients = effects[codes] + rng.normal(size=codes.size) * noise_scale
    quantized = np.round(gradients * scale).astype(np.int64)
    hist = np.zeros((1, MISSING_BIN + 1, 3), dtype=np.int64)
    np.add.at(hist[0, :, 0], codes, quantized)
    np.add.at(hist[0, :, 1], codes, int(scale))
    np.add.at(hist[0, :, 2], codes, 1)
    dispersion = float(np.sum((quantized / scale) ** 2) / codes.size)
    return hist, dispersion


def _estimate_in_fractions(hist, k, scale, dispersion, cap):
    """The estimate's formulas in exact rational arithmetic (the reference)."""
    rows = [(Fraction(int(g)) / Fraction(scale), Fraction(int(h)) / Fraction(scale))
            for g, h, n in hist[:k] if n > 0]  # fmt: skip
    total_g, total_h = sum(g for g, _ in rows), sum(h for _, h in rows)
    between = sum(g * g / h for g, h in rows) - total_g**2 / total_h
    sigma2 = (Fraction(dispersion) * total_h - total_g**2 / total_h - between) / (
        total_h - len(rows)
    )
    tau2 = (between - (len(rows) - 1) * sigma2) / (total_h - sum(h * h for _, h in rows) / total_h)
    return cap if tau2 <= 0 else min(cap, float(max(sigma2, 0) / tau2))


@pytest.mark.parametrize(
    "n_categories, rows_each, effect_scale, expect_below_cap",
    [
        (48, 8, 2.0, True),  # Cigarette's states: strong effects, 8 rows each
        (40, 30, 0.5, True),
        (60, 6, 0.0, False),  # no effect beyond the noise: the cap
    ],
)
def test_estimated_cat_smooth(n_categories, rows_each, effect_scale, expect_below_cap):
    """``min(cat_smooth, sigma^2 / tau^2)`` of the root's category sums: to 1e-12 the
    exact rational value of its formulas, small where the categories differ by more than
    their noise, the cap where they do not; the same bits whatever the categories'
    order (math.fsum), and the cap where it does not apply."""
    rng = np.random.default_rng(n_categories + rows_each)
    scale = 2.0**20
    hist, dispersion = _root_histogram(rng, n_categories, rows_each, effect_scale, scale=scale)
    params = CategoricalParams(cat_smooth=10.0)
    k = np.array([n_categories])
    smoothing = estimated_cat_smooth(hist, k, scale, scale, dispersion, params)
    expected = _estimate_in_fractions(hist[0], n_categories, scale, dispersion, params.cat_smooth)
    assert smoothing.shape == (1,) and smoothing[0] == pytest.approx(expected, rel=1e-12)
    if expect_below_cap:
        assert smoothing[0] < 0.5 * params.cat_smooth
        # A lower cap caps it; the estimate is used as it is below the cap.
        low = CategoricalParams(cat_smooth=smoothing[0] / 2)
        assert estimated_cat_smooth(hist, k, scale, scale, dispersion, low)[0] == low.cat_smooth
    else:
        assert smoothing[0] == params.cat_smooth
    shuffled = hist.copy()
    shuffled[0, :n_categories] = hist[0, rng.permutation(n_categories)]
    again = estimated_cat_smooth(shuffled, k, scale, scale, dispersion, params)
    assert again.tobytes() == smoothing.tobytes()
    # Not measured (dispersion 0), a one-vs-rest feature, one category with rows: the cap.
    alone = np.zeros_like(hist)
    alone[0, 3] = hist[0, 3]
    for args in (
        (hist, k, scale, scale, 0.0, params),
        (hist, k, scale, scale, dispersion, replace(params, max_cat_to_onehot=n_categories)),
        (alone, k, scale, scale, dispersion, params),
    ):
        assert estimated_cat_smooth(*args)[0] == params.cat_smooth


def test_scan_sends_the_sorted_prefix_left_and_prefers_the_lower_feature_on_ties():
    # Categories 0..5 with gradients chosen so that the best set is {1, 4}: the two
    # of lowest G / (H + smooth).
    hist = np.zeros((1, 2, MISSING_BIN + 1, 3), dtype=np.int64)
    gradients = [10, -50, 20, 30, -60, 15]
    for feature in range(2):  # two identical features: the lower one wins the tie
        for c, g in enumerate(gradients):
            hist[0, feature, c] = (g * 100, 1000, 10)
    params = CategoricalParams(min_data_per_group=1, cat_smooth=0.0, cat_l2=0.0)
    records, sets = find_best_categorical_splits(
        hist,
        np.array([3, 5]),
        np.array([6, 6]),
        MISSING_BIN,
        100.0,
        100.0,
        SplitParams(),
        params,
    )
    assert records["feature"][0] == 3
    assert bitset_members(sets[0]).tolist() == [1, 4]
    assert records["left_count"][0] == 20


def test_small_features_are_split_one_vs_rest():
    hist = np.zeros((1, 1, MISSING_BIN + 1, 3), dtype=np.int64)
    for c, g in enumerate([5, -5, 4, -4]):  # best many-vs-many set would be {1, 3}
        hist[0, 0, c] = (g * 100, 100, 10)
    one_vs_rest, sets = find_best_categorical_splits(
        hist,
        np.array([0]),
        np.array([4]),
        MISSING_BIN,
        100.0,
        100.0,
        SplitParams(),
        CategoricalParams(max_cat_to_onehot=4, min_data_per_group=1),
    )
    assert len(bitset_members(sets[0])) == 1
    _, sets = find_best_categorical_splits(
        hist,
        np.array([0]),
        np.array([4]),
        MISSING_BIN,
        100.0,
        100.0,
        SplitParams(),
        CategoricalParams(max_cat_to_onehot=3, min_data_per_group=1, cat_l2=0.0),
    )
    assert set(bitset_members(sets[0]).tolist()) in ({1, 3}, {0, 2})


def test_rare_categories_never_join_the_scanned_set():
    hist = np.zeros((1, 1, MISSING_BIN + 1, 3), dtype=np.int64)
    for c, (g, n) in enumerate([(-90, 5), (10, 50), (-40, 50), (30, 50), (-35, 50), (20, 50)]):
        hist[0, 0, c] = (g * 100, n * 10, n)
    _, sets = find_best_categorical_splits(
        hist,
        np.array([0]),
        np.array([6]),
        MISSING_BIN,
        100.0,
        100.0,
        SplitParams(),
        CategoricalParams(min_data_per_group=20, cat_smooth=10.0),
    )
    assert 0 not in bitset_members(sets[0]).tolist()


def test_bitsets():
    words = bitset_from_members([0, 31, 32, 70], 3)
    assert words.dtype == np.uint32 and words.tolist() == [2**31 + 1, 1, 64]
    assert bitset_members(words).tolist() == [0, 31, 32, 70]
    table = np.stack([words, np.zeros(3, np.uint32)])
    values = np.array([0, 1, 31, 32, 70, 71, 0])
    rows = np.array([0, 0, 0, 0, 0, 0, 1])
    assert bitset_contains(np, table, rows, values).tolist() == [1, 0, 1, 1, 1, 0, 0]
    assert SPLIT_SET_WORDS * 32 == 256
