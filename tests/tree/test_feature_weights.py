"""Column sampling by feature weight (``Dataset.feature_weights``, XGBoost's; issue 32,
point 5): features drawn in proportion to their weights at every level of column
sampling, weight 0 never, the same bytes on the compiled CPU backend, the NumPy reference,
emulated CUDA and a Dask cluster (tests/dask/test_train.py)."""

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.sklearn import GBRegressor
from gpuboost.tree.feature_sampler import weighted_choice


def test_one_feature_is_drawn_with_probability_proportional_to_its_weight():
    """Efraimidis-Spirakis keys with k = 1 pick feature i with probability w_i / sum(w)."""
    rng = np.random.default_rng(0)
    weights = np.array([1.0, 2.0, 0.0, 4.0, 8.0, 0.5])
    draws = 30_000
    counts = np.zeros(len(weights))
    for _ in range(draws):
        counts[weighted_choice(rng, np.arange(len(weights)), weights, 1)] += 1
    expected = draws * weights / weights.sum()
    assert counts[2] == 0
    assert np.all(np.abs(counts - expected) <= 4 * np.sqrt(expected) + 1)


def test_weight_zero_is_never_drawn_and_draws_are_sorted_and_distinct():
    rng = np.random.default_rng(1)
    weights = np.array([0.0, 3.0, 0.0, 1.0, 2.0])
    for _ in range(200):
        chosen = weighted_choice(rng, np.array([0, 1, 3, 4]), weights, 3)
        assert list(chosen) == sorted(set(chosen)) and 0 not in chosen
    assert list(weighted_choice(rng, np.arange(5), weights, 4)) == [1, 3, 4]  # 3 positive


def _data(n_rows=800, n_features=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    y = X @ rng.normal(size=n_features) + 0.3 * rng.normal(size=n_rows)
    return X, y


PARAMS = {"max_depth": 3, "colsample_bytree": 0.5, "colsample_bynode": 0.6, "verbosity": 0}


def _model(X, y, feature_weights, device="cpu", params=PARAMS, rounds=8):
    dataset = gpuboost.Dataset(X, label=y, feature_weights=feature_weights)
    return gpuboost.train(dict(params, device=device), dataset, rounds)


def test_the_trees_split_only_on_features_of_positive_weight():
    X, y = _data()
    weights = np.zeros(10)
    weights[[2, 7, 8]] = [1.0, 1.0, 3.0]
    model = _model(X, y, weights)
    used = model.feature_importance("weight")
    assert set(np.flatnonzero(used)) <= {2, 7, 8} and used.sum() > 0
    assert model.save_raw() != _model(X, y, None).save_raw()


def test_without_column_sampling_the_weights_change_nothing():
    X, y = _data()
    params = {"max_depth": 3, "verbosity": 0}
    weights = np.arange(1.0, 11.0)
    assert (
        _model(X, y, weights, params=params).save_raw()
        == _model(X, y, None, params=params).save_raw()
    )


def test_every_backend_trains_the_same_bytes(monkeypatch):
    X, y = _data()
    weights = np.linspace(0.2, 3.0, 10)
    weights[4] = 0.0
    compiled = _model(X, y, weights).save_raw()
    with emulated_kernels():
        assert _model(X, y, weights, device="cuda").save_raw() == compiled
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert _model(X, y, weights).save_raw() == compiled


def test_the_dataset_checks_and_keeps_the_weights():
    X, y = _data(n_rows=50, n_features=4)
    dataset = gpuboost.Dataset(X, label=y, feature_weights=[1, 2, 0, 1])
    assert dataset.feature_weights.dtype == np.float64
    assert dataset.subset(np.arange(10)).feature_weights.tolist() == [1.0, 2.0, 0.0, 1.0]
    assert "feature_weights" in repr(dataset)
    dataset.feature_weights = None
    assert dataset.get_feature_weights() is None
    for bad, message in (
        ([1, 2, 3], "feature_weights has 3 values, but X has 4 features"),
        ([1, -1, 1, 1], "negative value .* at feature 1"),
        ([0, 0, 0, 0], "All feature_weights are zero"),
        ([1, np.nan, 1, 1], "feature_weights contains NaN at feature 1"),
    ):
        with pytest.raises(ValueError, match=message):
            gpuboost.Dataset(X, label=y, feature_weights=bad)


def test_the_estimators_take_feature_weights():
    X, y = _data()
    weights = np.linspace(0.1, 1.0, 10)
    estimator = GBRegressor(
        n_estimators=8, max_depth=3, colsample_bytree=0.5, colsample_bynode=0.6, device="cpu"
    ).fit(X, y, feature_weights=weights)
    assert estimator.get_booster().save_raw() == _model(X, y, weights).save_raw()
