"""The split penalty (docs/DESIGN.md, "Split penalty"): a split must gain more than
``gamma + split_penalty * dispersion``, the dispersion of each tree's rows."""

import numpy as np
import pytest

import gpuboost


def _tree_shapes(booster):
    return [(tree.feature.tolist(), tree.threshold_bin.tolist()) for tree in booster.trees]


def _noise(n_rows=300, n_targets=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n_rows, 4))
    y = (X[:, [0]] + rng.normal(scale=1.0, size=(n_rows, n_targets))).squeeze()
    return X, y


def test_the_first_tree_is_the_one_of_gamma_two_times_the_residuals_mean_square():
    """Squared error's first tree (hessians 1, gradients base - y): the penalty is the
    gamma 2 * mean((base - y)^2) (to the quantization's precision, which moves no split
    here), and differs from the unpenalized tree."""
    X, y = _noise()
    data = gpuboost.Dataset(X, label=y)
    base = {"objective": "reg:squarederror", "min_data_in_leaf": 1, "base_score": 0.5}
    penalized = gpuboost.train(dict(base, split_penalty=2), data, 1)
    phi = float(np.mean((0.5 - y) ** 2))
    by_hand = gpuboost.train(dict(base, split_penalty=0, gamma=2 * phi), data, 1)
    plain = gpuboost.train(dict(base, split_penalty=0), data, 1)
    assert _tree_shapes(penalized) == _tree_shapes(by_hand)
    assert _tree_shapes(penalized) != _tree_shapes(plain)


@pytest.mark.parametrize("factor", [0.5, 0.0])
def test_categorical_splits_pay_their_fraction_of_the_penalty(factor):
    """``cat_penalty_factor``: on categorical columns alone the first tree at
    ``split_penalty=2`` is the one of ``gamma = factor * 2 * phi`` without the penalty,
    and not the one of the whole penalty's gamma."""
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 30, size=(400, 2))
    y = rng.normal(size=30)[codes[:, 0]] * 0.3 + rng.normal(size=30)[codes[:, 1]] * 0.2
    y = y + rng.normal(size=400)
    data = gpuboost.Dataset(codes.astype(float), label=y, categorical_features=[0, 1])
    base = {
        "objective": "reg:squarederror",
        "min_data_in_leaf": 1,
        "base_score": 0.5,
        "cat_smooth_estimate": False,
        "cat_smooth": 1,
        "min_data_per_group": 1,
    }
    phi = float(np.mean((0.5 - y) ** 2))
    penalized = gpuboost.train(dict(base, split_penalty=2, cat_penalty_factor=factor), data, 1)
    by_hand = gpuboost.train(dict(base, split_penalty=0, gamma=factor * 2 * phi), data, 1)
    whole = gpuboost.train(dict(base, split_penalty=0, gamma=2 * phi), data, 1)
    assert _tree_shapes(penalized) == _tree_shapes(by_hand)
    assert _tree_shapes(penalized) != _tree_shapes(whole)
    assert all(tree.is_categorical[~tree.is_leaf].all() for tree in penalized.trees)


def test_the_penalty_stops_splits_on_noise_and_keeps_the_signal():
    """On ``y = x0 + noise`` the default trees split (almost) only on x0; without the
    penalty (and 1-row leaves) they split on the noise features too."""
    X, y = _noise(seed=1)
    data = gpuboost.Dataset(X, label=y)
    penalized = gpuboost.train({"objective": "reg:squarederror"}, data, 20)
    plain = gpuboost.train({"split_penalty": 0, "min_data_in_leaf": 1}, data, 20)

    def noise_splits(booster):
        return sum(int(np.sum(tree.feature > 0)) for tree in booster.trees)

    def signal_splits(booster):
        return sum(int(np.sum(tree.feature == 0)) for tree in booster.trees)

    assert signal_splits(penalized) > 0
    assert noise_splits(penalized) * 3 < noise_splits(plain)


def test_vector_leaves_sum_their_outputs_penalties():
    """Two targets of different noise: the vector tree's gamma is 2 * (phi_0 + phi_1)."""
    X, y = _noise(n_targets=2, seed=2)
    y[:, 1] *= 3.0
    data = gpuboost.Dataset(X, label=y)
    base = {"multi_strategy": "multi_output_tree", "min_data_in_leaf": 1, "base_score": 0.0}
    penalized = gpuboost.train(dict(base, split_penalty=2), data, 1)
    phi = float(np.mean(y[:, 0] ** 2) + np.mean(y[:, 1] ** 2))
    by_hand = gpuboost.train(dict(base, split_penalty=0, gamma=2 * phi), data, 1)
    one_output = gpuboost.train(
        dict(base, split_penalty=0, gamma=2 * float(np.mean(y[:, 0] ** 2))), data, 1
    )
    assert _tree_shapes(penalized) == _tree_shapes(by_hand)
    assert _tree_shapes(penalized) != _tree_shapes(one_output)


@pytest.mark.parametrize("sampling", [{"subsample": 0.5}, {"data_sample_strategy": "goss"}])
def test_sampled_trees_measure_their_own_rows(sampling):
    """With row sampling (bagging; GOSS's multipliers) the dispersion is the sampled
    rows': the penalized training runs and gives the same bits twice."""
    X, y = _noise(seed=3)
    data = gpuboost.Dataset(X, label=y)
    params = dict(sampling, objective="reg:squarederror", seed=4)
    first = gpuboost.train(params, data, 5)
    assert first.save_raw() == gpuboost.train(params, data, 5).save_raw()
    assert first.params["split_penalty"] == 2.0
