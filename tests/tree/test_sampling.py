"""Tests of gpuboost.tree.sampling: bagging (unchanged), GOSS and gradient-based sampling,
their parameters, training with them, and CPU/CUDA parity under the emulation."""

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.boosting.train import ROW_STREAMS_PER_ROUND
from gpuboost.core.random import row_uniforms
from gpuboost.params import validate_params
from gpuboost.tree.sampling import (
    goss_sample,
    goss_sample_naive,
    goss_top_count,
    gradient_based_probabilities,
    gradient_based_probabilities_naive,
    gradient_based_sample,
    gradient_based_target,
    sample_rows,
    sampled_row_weights,
)

SEED, STREAM = 7, 3


def _params(**overrides):
    return validate_params({"device": "cpu", **overrides})


def _gradients(n_rows, seed, ties=False):
    rng = np.random.default_rng(seed)
    gradients = rng.normal(size=n_rows)
    if ties:  # few distinct |g|, both signs, and zeros: many ties to break by row id
        gradients = np.round(gradients * 2) / 2
    hessians = rng.uniform(0.05, 1.0, size=n_rows)
    return gradients, hessians


# ---- bagging: unchanged ---------------------------------------------------------------
@pytest.mark.parametrize("subsample", [1.0, 0.6])
def test_bagging_is_the_backend_row_sample(subsample):
    backend = NumpyBackend()
    gradients, hessians = _gradients(500, 1)
    indices, multipliers = sample_rows(
        backend, _params(subsample=subsample), gradients, hessians, SEED, STREAM
    )
    assert multipliers is None
    np.testing.assert_array_equal(indices, backend.row_sample(500, SEED, STREAM, subsample))
    expected = (
        np.flatnonzero(row_uniforms(np, SEED, STREAM, 500) < subsample)
        if subsample < 1
        else np.arange(500)
    )
    np.testing.assert_array_equal(indices, expected)


# ---- GOSS -------------------------------------------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("top_rate, other_rate", [(0.2, 0.1), (0.0, 0.5), (0.5, 0.5), (0.33, 0.2)])
def test_goss_equals_the_naive_loop(ties, top_rate, other_rate):
    gradients, _ = _gradients(401, 2, ties)
    indices, multipliers = goss_sample(np, gradients, SEED, STREAM, top_rate, other_rate)
    expected_indices, expected_multipliers = goss_sample_naive(
        gradients, SEED, STREAM, top_rate, other_rate
    )
    assert indices.dtype == np.int32 and multipliers.dtype == np.float64
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(multipliers, expected_multipliers)


def test_goss_keeps_the_largest_gradients_and_breaks_ties_by_row():
    gradients = np.array([0.5, -2.0, 1.0, -1.0, 0.0, 1.0, -0.5, 2.0, 0.0, 1.0])
    # top_rate 0.5: five rows; |g| = 2 (rows 1, 7), then |g| = 1 (rows 2, 3, 5, 9): rows 2, 3, 5.
    indices, multipliers = goss_sample(np, gradients, SEED, STREAM, 0.5, 0.25)
    top = {1, 7, 2, 3, 5}
    assert top <= set(indices.tolist())
    np.testing.assert_array_equal(multipliers[sorted(top)], 1.0)
    others = [row for row in indices if row not in top]
    np.testing.assert_array_equal(multipliers[others], (1 - 0.5) / 0.25)
    dropped = np.setdiff1d(np.arange(10), indices)
    np.testing.assert_array_equal(multipliers[dropped], 0.0)
    assert np.all(np.diff(indices) > 0)


def test_goss_sample_size_and_unbiased_gradient_sum():
    gradients, _ = _gradients(4000, 3)
    top_rate, other_rate = 0.2, 0.1
    sizes, sums = [], []
    for stream in range(60):
        indices, multipliers = goss_sample(np, gradients, SEED, stream, top_rate, other_rate)
        sizes.append(len(indices))
        sums.append(np.sum(gradients * multipliers))
        assert np.count_nonzero(multipliers == 1.0) == goss_top_count(4000, top_rate)
    assert abs(np.mean(sizes) - (top_rate + other_rate) * 4000) < 0.02 * 4000
    # The up-weighted sample estimates the full gradient sum without bias.
    spread = np.std(sums) / np.sqrt(len(sums))
    assert abs(np.mean(sums) - np.sum(gradients)) < 4 * spread


# ---- gradient-based sampling ------------------------------------------------------------
@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.9])
@pytest.mark.parametrize("ties", [False, True])
def test_gradient_based_probabilities_equal_the_naive_search(fraction, ties):
    gradients, hessians = _gradients(300, 4, ties)
    gradients[:3] = 0.0
    hessians[:2] = 0.0  # zero magnitude: never kept
    probabilities = gradient_based_probabilities(np, gradients, hessians, fraction, 1.0)
    expected = gradient_based_probabilities_naive(gradients, hessians, fraction, 1.0)
    np.testing.assert_array_equal(probabilities, expected)
    assert probabilities.min() >= 0.0 and probabilities.max() <= 1.0
    assert probabilities[0] == probabilities[1] == 0.0
    target = gradient_based_target(300, fraction)
    np.testing.assert_allclose(probabilities.sum(), target, rtol=1e-9)
    if fraction > 0.5:  # large magnitudes are certain
        assert np.count_nonzero(probabilities == 1.0) > 0


def test_gradient_based_probability_grows_with_the_regularized_magnitude():
    gradients, hessians = _gradients(500, 5)
    probabilities = gradient_based_probabilities(np, gradients, hessians, 0.2, 2.0)
    magnitude = np.sqrt(gradients**2 + 2.0 * hessians**2)
    order = np.argsort(magnitude)
    assert np.all(np.diff(probabilities[order]) >= 0)
    assert probabilities[order[-1]] > probabilities[order[0]]


def test_gradient_based_keeps_rows_below_their_probability_weighted_by_its_inverse():
    gradients, hessians = _gradients(800, 6)
    indices, multipliers = gradient_based_sample(np, gradients, hessians, SEED, STREAM, 0.25, 1.0)
    probabilities = gradient_based_probabilities(np, gradients, hessians, 0.25, 1.0)
    kept = row_uniforms(np, SEED, STREAM, 800) < probabilities
    np.testing.assert_array_equal(indices, np.flatnonzero(kept))
    np.testing.assert_array_equal(multipliers[kept], 1.0 / probabilities[kept])
    np.testing.assert_array_equal(multipliers[~kept], 0.0)


def test_gradient_based_with_all_rows_keeps_everything():
    backend = NumpyBackend()
    gradients, hessians = _gradients(50, 7)
    params = _params(sampling_method="gradient_based")  # subsample 1
    indices, multipliers = sample_rows(backend, params, gradients, hessians, SEED, STREAM)
    assert multipliers is None
    np.testing.assert_array_equal(indices, np.arange(50))


def test_gradient_based_with_fewer_nonzero_rows_than_the_target():
    gradients = np.zeros(20)
    hessians = np.zeros(20)
    gradients[[3, 11]] = [0.5, -2.0]
    probabilities = gradient_based_probabilities(np, gradients, hessians, 0.5, 1.0)
    np.testing.assert_array_equal(probabilities, np.isin(np.arange(20), [3, 11]).astype(float))


def test_sampled_row_weights():
    weight, multipliers = np.array([1.0, 2.0]), np.array([0.0, 3.0])
    assert sampled_row_weights(weight, None) is weight
    assert sampled_row_weights(None, multipliers) is multipliers
    np.testing.assert_array_equal(sampled_row_weights(weight, multipliers), [0.0, 6.0])


# ---- parameters ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, match",
    [
        ({"data_sample_strategy": "goss", "top_rate": 0.7, "other_rate": 0.4}, "top_rate"),
        ({"data_sample_strategy": "goss", "subsample": 0.5}, "subsample"),
        ({"data_sample_strategy": "goss", "sampling_method": "gradient_based"}, "sampling_method"),
        ({"data_sample_strategy": "dart"}, "data_sample_strategy"),
        ({"sampling_method": "poisson"}, "sampling_method"),
        ({"top_rate": 1.0}, "top_rate"),
        ({"other_rate": 0.0}, "other_rate"),
    ],
)
def test_invalid_sampling_parameters_raise(params, match):
    with pytest.raises(ValueError, match=match):
        validate_params(params)


def test_sampling_parameter_defaults():
    params = validate_params({})
    assert (
        params["data_sample_strategy"],
        params["top_rate"],
        params["other_rate"],
        params["sampling_method"],
    ) == ("bagging", 0.2, 0.1, "uniform")
    assert (
        validate_params({"data_sample_strategy": "goss", "top_rate": 0.6, "other_rate": 0.4})[
            "top_rate"
        ]
        == 0.6
    )


# ---- training -------------------------------------------------------------------------
GOSS = {"data_sample_strategy": "goss", "top_rate": 0.3, "other_rate": 0.2}
GRADIENT_BASED = {"subsample": 0.4, "sampling_method": "gradient_based"}


def _fit(params, X, y, rounds=5, weight=None, device="cpu"):
    return gpuboost.train(
        {"device": device, "max_depth": 3, **params},
        Dataset(X, label=y, weight=weight),
        num_boost_round=rounds,
        verbose_eval=False,
    )


@pytest.mark.parametrize("strategy", [GOSS, GRADIENT_BASED], ids=["goss", "gradient_based"])
def test_sampled_training_is_deterministic_per_seed_and_learns(regression_data, strategy):
    X, y = regression_data
    first = _fit({**strategy, "seed": 1}, X, y, rounds=20)
    assert first.save_raw() == _fit({**strategy, "seed": 1}, X, y, rounds=20).save_raw()
    assert first.save_raw() != _fit({**strategy, "seed": 2}, X, y, rounds=20).save_raw()
    error = np.sqrt(np.mean((first.predict(X) - y) ** 2))
    assert error < 0.5 * np.std(y)


def test_goss_tree_grows_on_the_goss_rows(regression_data):
    X, y = regression_data
    booster = _fit({**GOSS, "seed": 4, "base_score": 0.0}, X, y, rounds=1)
    gradients = 0.0 - y  # squared error at margin 0
    indices, multipliers = goss_sample(np, gradients, 4, 0 * ROW_STREAMS_PER_ROUND, 0.3, 0.2)
    tree = booster.trees[0]
    assert tree.count[0] == len(indices) < len(y)
    # The root's cover is the sum of the multiplied hessians (1 per row).
    np.testing.assert_allclose(tree.cover[0], multipliers.sum(), rtol=1e-8)


def test_goss_with_multiclass_samples_every_class_on_its_own_gradients(multiclass_data):
    X, y = multiclass_data
    booster = _fit({**GOSS, "objective": "multi:softprob", "num_class": 3}, X, y, rounds=2)
    counts = [tree.count[0] for tree in booster.trees[:3]]
    assert all(count < len(y) for count in counts)
    assert len(set(counts)) > 1  # different streams and gradients per class


# ---- CPU / CUDA parity (emulated kernels) -------------------------------------------------
@pytest.mark.parametrize(
    "params, weighted",
    [
        (GOSS, False),
        ({**GOSS, "objective": "reg:quantile", "quantile_alpha": 0.3}, True),
        ({**GOSS, "objective": "multi:softprob", "num_class": 3}, False),
        (GRADIENT_BASED, True),
    ],
    ids=["goss", "goss_quantile_weighted", "goss_multiclass", "gradient_based_weighted"],
)
def test_cpu_and_cuda_give_identical_models(
    emulated_cuda, regression_data, multiclass_data, params, weighted
):
    X, y = multiclass_data if params.get("num_class") else regression_data
    weight = np.random.default_rng(9).uniform(0.2, 2.0, size=len(y)) if weighted else None
    runs = train_on_both({"max_depth": 3, **params}, lambda: Dataset(X, label=y, weight=weight), 3)
    assert_runs_match(runs)
    assert runs["cpu"].model.trees[0].count[0] < len(y)
