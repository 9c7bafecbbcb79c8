"""``Booster.refit`` (LightGBM's; issue 32, point 4): the leaves refitted on new data,
blended with the old ones by ``decay_rate``, the structure kept; ``decay_rate=0`` on the
training data gives back the trained model byte for byte (the refit computes leaves as
training does); every backend the same bytes."""

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cpu import CPU_KERNELS_ENV_VAR
from gpuboost.backends.emulation import emulated_kernels

STRUCTURE = ("feature", "threshold", "threshold_bin", "default_left", "left_child", "right_child")


def _data(n_rows=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1] * X[:, 2])
    return X, signal + 0.3 * rng.normal(size=n_rows)


CASES = {
    "squared error, schedule": ({"max_depth": 4}, lambda s: s),
    "logistic, L1, max delta step": (
        {"objective": "binary:logistic", "max_depth": 3, "reg_alpha": 0.5, "max_delta_step": 0.7},
        lambda s: (s > 0).astype(float),
    ),
    "softprob, lossguide": (
        {
            "objective": "multi:softprob",
            "num_class": 3,
            "grow_policy": "lossguide",
            "max_leaves": 7,
            "max_depth": 0,
        },
        lambda s: np.digitize(s, [-0.5, 0.5]).astype(float),
    ),
    "poisson": ({"objective": "count:poisson", "max_depth": 3}, lambda s: np.round(np.exp(s / 2))),
}


def _trained(name, X, y, device="cpu"):
    params, _ = CASES[name]
    return gpuboost.train(
        dict(params, verbosity=0, device=device),
        gpuboost.Dataset(X, label=y),
        6,
        learning_rates=[0.5, 0.4, 0.3, 0.3, 0.2, 0.1],
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_refitting_the_training_data_without_decay_gives_back_the_model(name):
    X, signal = _data()
    y = CASES[name][1](signal)
    model = _trained(name, X, y)
    assert model.refit(X, y, decay_rate=0.0).save_raw() == model.save_raw()
    assert model.refit(X, y, decay_rate=1.0).save_raw() == model.save_raw()
    dataset = gpuboost.Dataset(X, label=y)
    assert model.refit(dataset, decay_rate=0.0).save_raw() == model.save_raw()


def test_new_data_change_the_leaves_only_blended_by_the_decay_rate():
    X, signal = _data()
    model = _trained("squared error, schedule", X, signal)
    X_new, signal_new = _data(seed=1)
    y_new = signal_new + 1.0  # shifted: every leaf moves
    half = model.refit(X_new, y_new, decay_rate=0.5)
    fresh = model.refit(X_new, y_new, decay_rate=0.0)
    for old, new in zip(model.trees, half.trees):
        for name in STRUCTURE:
            np.testing.assert_array_equal(getattr(old, name), getattr(new, name))
        internal = ~old.is_leaf
        np.testing.assert_array_equal(old.value[internal], new.value[internal])
        assert not np.array_equal(old.value[old.is_leaf], new.value[new.is_leaf])
    # The first tree sees the same margins in both: its leaves blend exactly.
    first = model.trees[0].is_leaf
    np.testing.assert_array_equal(
        half.trees[0].value[first],
        0.5 * model.trees[0].value[first] + 0.5 * fresh.trees[0].value[first],
    )
    assert np.mean((half.predict(X_new) - y_new) ** 2) < np.mean(
        (model.predict(X_new) - y_new) ** 2
    )


def test_every_backend_refits_the_same_bytes(monkeypatch):
    X, signal = _data()
    X_new, signal_new = _data(seed=2)
    y, y_new = (signal > 0).astype(float), (signal_new > 0.3).astype(float)
    model = _trained("logistic, L1, max delta step", X, y)
    compiled = model.refit(X_new, y_new, decay_rate=0.3, weight=np.linspace(0.5, 1.5, 800))
    with emulated_kernels():
        on_cuda = _trained("logistic, L1, max delta step", X, y, device="cuda")
        refitted = on_cuda.refit(X_new, y_new, decay_rate=0.3, weight=np.linspace(0.5, 1.5, 800))
    assert refitted.save_raw() == compiled.save_raw()
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    assert (
        model.refit(X_new, y_new, decay_rate=0.3, weight=np.linspace(0.5, 1.5, 800)).save_raw()
        == compiled.save_raw()
    )


def test_what_refit_cannot_do_is_refused():
    X, signal = _data(n_rows=200)
    model = _trained("squared error, schedule", X, signal)
    with pytest.raises(ValueError, match="decay_rate must be in"):
        model.refit(X, signal, decay_rate=1.5)
    with pytest.raises(ValueError, match="refit needs labels"):
        model.refit(X)
    quantile = gpuboost.train(
        {"objective": "reg:quantile", "verbosity": 0}, gpuboost.Dataset(X, label=signal), 2
    )
    with pytest.raises(ValueError, match="quantile of the residuals"):
        quantile.refit(X, signal)
    monotone = gpuboost.train(
        {"monotone_constraints": [1, 0, 0, 0, 0], "verbosity": 0},
        gpuboost.Dataset(X, label=signal),
        2,
    )
    with pytest.raises(ValueError, match="monotone_constraints"):
        monotone.refit(X, signal)
