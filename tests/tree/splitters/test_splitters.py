"""Tests of gpuboost.tree.splitters: the histogram strategy and the choice of strategy."""

import numpy as np
import pytest

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.backends.numpy.predict import predict_leaves_raw
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
