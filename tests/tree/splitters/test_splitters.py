"""Tests of gpuboost.tree.splitters: the histogram strategy and the choice of strategy."""

from types import SimpleNamespace

import numpy as np
import pytest

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.backends.numpy.predict import predict_leaves_raw
from gpuboost.core.categorical import bitset_from_members, bitset_words
from gpuboost.params import validate_params
from gpuboost.tree.splitters import (
    BundledHistogramSplitter,
    ExactSplitter,
    HistogramSplitter,
    make_splitter,
)


def _one_hot_and_dense(n_rows=200, seed=0):
    rng = np.random.default_rng(seed)
    levels = rng.integers(0, 6, size=n_rows)
    X = np.column_stack([np.eye(6)[levels], rng.normal(size=n_rows)])
    return X, levels + 0.1 * X[:, -1]


@pytest.mark.parametrize(
    "user_params, expected",
    [
        ({}, BundledHistogramSplitter),
        ({"enable_bundle": False}, HistogramSplitter),
        ({"tree_method": "approx"}, type(None)),  # bins change every tree: never bundled
        ({"tree_method": "exact"}, ExactSplitter),
        ({"tree_method": "exact", "enable_bundle": True}, ExactSplitter),
    ],
)
def test_make_splitter_picks_the_strategy(user_params, expected):
    X, y = _one_hot_and_dense()
    dataset = Dataset(X, label=y)
    backend = NumpyBackend()
    splitter = make_splitter(
        validate_params({"device": "cpu", **user_params}),
        backend,
        backend.prepare(dataset),
        dataset,
    )
    assert type(splitter) is expected


def test_no_bundles_when_they_do_not_reduce_columns():
    rng = np.random.default_rng(1)
    dataset = Dataset(rng.normal(size=(100, 4)), label=rng.normal(size=100))
    backend = NumpyBackend()
    assert (
        type(
            make_splitter(
                validate_params({"device": "cpu"}), backend, backend.prepare(dataset), dataset
            )
        )
        is HistogramSplitter
    )


def test_histogram_splitter_thresholds_and_training_predictions():
    X, y = _one_hot_and_dense()
    dataset = Dataset(X, label=y)
    backend = NumpyBackend()
    data = backend.prepare(dataset)
    splitter = HistogramSplitter(backend, data, dataset.bin_mapper.thresholds_for_bins)
    thresholds, bins = splitter.split_thresholds(np.array([6, 6, 0]), np.array([3, 0, 0]))
    np.testing.assert_array_equal(
        thresholds,
        [dataset.bin_mapper.threshold_for_bin(*split) for split in [(6, 3), (6, 0)]]
        + [dataset.bin_mapper.threshold_for_bin(0, 0)],
    )
    np.testing.assert_array_equal(bins, [3, 0, 0])
    assert bins.dtype == np.int32
    assert splitter.partition_data is data
    tree = gpuboost.train({"device": "cpu", "max_depth": 3}, dataset, num_boost_round=1).trees[0]
    np.testing.assert_array_equal(
        splitter.predict_training_rows(tree), tree.value[predict_leaves_raw(tree, X)]
    )


def test_category_sets_are_each_nodes_codes_with_the_other_bins():
    """``HistogramSplitter.category_sets`` (every node at once, as a bit matrix) against
    a set built node by node: the bins of the left set as codes, and with the last value
    bin ("other") every code it holds; ``ceil(n_categories / 32)`` words per node, none
    for numeric nodes."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        categorical = np.sort(rng.choice(8, rng.integers(1, 5), replace=False))
        n_categories = rng.integers(2, 700, len(categorical))
        n_value_bins = np.zeros(8, dtype=np.int64)
        n_value_bins[categorical] = np.minimum(n_categories, rng.choice([16, 63, 255]))
        splitter = SimpleNamespace(
            categorical_features=categorical, n_categories=n_categories, n_value_bins=n_value_bins
        )
        features = rng.choice(categorical, rng.integers(1, 12))
        left_sets = np.zeros((len(features), 8), dtype=np.uint32)
        expected = []
        for node, feature in enumerate(features):
            if rng.random() < 0.3:  # a numeric split: no words
                continue
            k = int(n_value_bins[feature])
            bins = rng.choice(k, rng.integers(1, k + 1), replace=False)
            left_sets[node] = bitset_from_members(bins, 8)
            n_codes = int(n_categories[np.searchsorted(categorical, feature)])
            codes = set(bins.tolist())
            if k - 1 in codes:
                codes |= set(range(k, n_codes))
            expected.append(bitset_from_members(sorted(codes), bitset_words(n_codes)))
        offsets, bits = HistogramSplitter.category_sets(splitter, features, left_sets)
        sizes = [bitset_words(n) if left_sets[i].any() else 0 for i, n in enumerate(
            n_categories[np.searchsorted(categorical, features)]
        )]  # fmt: skip
        np.testing.assert_array_equal(offsets, np.concatenate([[0], np.cumsum(sizes)]))
        want = np.concatenate(expected) if expected else np.zeros(0, dtype=np.uint32)
        np.testing.assert_array_equal(bits, want)
        assert bits.dtype == np.uint32
