"""Golden predictions: the SHA-256 of the predictions of ~20 configurations, fixed.

Written before the package was restructured (issue 9) and kept from then on: any
change of a model's bytes -- a split found differently, a float summed in another
order, a random stream drawn differently -- changes a hash and fails here. Every
configuration runs on the NumPy backend and on the CUDA backend under the CPU
emulation, which must give the very same bytes (docs/DESIGN.md, "Quantization").

A hash is of ``booster.predict(X_test)`` (float64, C order) followed by the saved
model's bytes, so a change that leaves predictions equal but alters the model file
(gains, covers, thresholds of unused branches) is caught too.

If a change is *meant* to alter models (a new default, a bug fix in a formula),
update the hashes in the same commit and say why in its message; print the new
ones with ``python tests/test_golden.py``.

The objectives that evaluate ``exp`` / ``log`` (logistic, softmax, Poisson, Gamma,
Tweedie, ranking) depend on NumPy's transcendental functions, whose last bit may
differ between CPUs (NumPy picks SIMD code at run time). The hashes were taken on
the project's x86-64 machines (AVX-512); on another CPU family those configurations
may need hashes of their own.
"""

import hashlib
import sys

import numpy as np
import pytest
from _tiers import sampled

import gpuboost
from gpuboost.backends.emulation import emulated_kernels

N_ROUNDS = 8


def _regression_data(n_rows=360, n_features=6, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(n_rows) < 0.15, 1] = np.nan
    X[:, 4] = np.round(X[:, 4] * 3)  # few distinct values
    y = (
        1.5 * X[:, 0]
        + np.where(np.isnan(X[:, 1]), 1.0, np.sin(2 * X[:, 1]))
        + (X[:, 2] > 0.2) * X[:, 3]
        + 0.2 * rng.normal(size=n_rows)
    )
    return X, y


def _binary_data():
    X, y = _regression_data(seed=12)
    return X, (y > np.median(y)).astype(np.float64)


def _multiclass_data():
    X, y = _regression_data(seed=13)
    return X, np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(np.float64)


def _positive_data():
    X, y = _regression_data(seed=14)
    return X, np.exp(0.4 * y)


def _count_data():
    X, y = _regression_data(seed=15)
    rng = np.random.default_rng(15)
    return X, rng.poisson(np.exp(0.3 * np.clip(y, -3, 3))).astype(np.float64)


def _tweedie_data():
    X, y = _count_data()
    return X, y * 1.7


def _onehot_data(n_rows=360, seed=16):
    """Four one-hot blocks of 6 levels plus two dense columns: bundling applies."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 6, size=(n_rows, 4))
    onehot = np.zeros((n_rows, 24))
    for block in range(4):
        onehot[np.arange(n_rows), block * 6 + codes[:, block]] = 1.0
    dense = rng.normal(size=(n_rows, 2))
    X = np.hstack([onehot, dense])
    y = (codes[:, 0] % 3) + 0.5 * (codes[:, 1] == 2) + dense[:, 0] + 0.1 * rng.normal(size=n_rows)
    return X, y


def _ranking_data(n_queries=30, seed=17):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 15, size=n_queries)
    n_rows = int(sizes.sum())
    X = rng.normal(size=(n_rows, 5))
    relevance = np.clip(
        np.round(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=n_rows) + 1.5), 0, 4
    )
    return X, relevance, sizes


DATA = {
    "regression": _regression_data,
    "binary": _binary_data,
    "multiclass": _multiclass_data,
    "positive": _positive_data,
    "count": _count_data,
    "tweedie": _tweedie_data,
    "onehot": _onehot_data,
}

#: name -> (data, params, number of rounds, hash)
CONFIGURATIONS = {
    "squarederror_depthwise": ("regression", {"max_depth": 4}),
    "squarederror_lossguide": (
        "regression",
        {"grow_policy": "lossguide", "max_leaves": 11, "max_depth": 0},
    ),
    "regularized": (
        "regression",
        {
            "reg_alpha": 0.4,
            "reg_lambda": 3.0,
            "gamma": 0.05,
            "max_delta_step": 0.6,
            "min_child_weight": 4.0,
            "min_data_in_leaf": 5,
            "max_depth": 5,
        },
    ),
    "weights_and_max_bin": ("regression", {"max_bin": 15, "max_depth": 3, "weights": True}),
    "absoluteerror": ("regression", {"objective": "reg:absoluteerror", "max_depth": 3}),
    "huber": ("regression", {"objective": "reg:huber", "huber_alpha": 0.9, "max_depth": 3}),
    "quantile": (
        "regression",
        {"objective": "reg:quantile", "quantile_alpha": 0.3, "max_depth": 3},
    ),
    "logistic_sampled": (
        "binary",
        {
            "objective": "binary:logistic",
            "subsample": 0.7,
            "colsample_bytree": 0.8,
            "colsample_bylevel": 0.8,
            "colsample_bynode": 0.7,
            "seed": 3,
        },
    ),
    "logistic_goss": (
        "binary",
        {
            "objective": "binary:logistic",
            "data_sample_strategy": "goss",
            "top_rate": 0.3,
            "other_rate": 0.2,
            "seed": 4,
        },
    ),
    "logistic_gradient_based": (
        "binary",
        {
            "objective": "binary:logistic",
            "subsample": 0.5,
            "sampling_method": "gradient_based",
            "seed": 5,
        },
    ),
    "exponential": ("binary", {"objective": "binary:exponential", "max_depth": 3}),
    "softprob": ("multiclass", {"objective": "multi:softprob", "num_class": 3, "max_depth": 3}),
    "softmax_lossguide": (
        "multiclass",
        {"objective": "multi:softmax", "num_class": 3, "grow_policy": "lossguide", "max_leaves": 6},
    ),
    "poisson": ("count", {"objective": "count:poisson", "max_depth": 3}),
    "gamma": ("positive", {"objective": "reg:gamma", "max_depth": 3}),
    "tweedie": (
        "tweedie",
        {"objective": "reg:tweedie", "tweedie_variance_power": 1.3, "max_depth": 3},
    ),
    "approx": ("regression", {"tree_method": "approx", "max_bin": 31, "max_depth": 4}),
    "exact": ("regression", {"tree_method": "exact", "max_depth": 4}),
    "bundled": ("onehot", {"enable_bundle": True, "max_depth": 4, "max_bin": 63}),
    "bundled_with_conflicts": (
        "onehot",
        {"enable_bundle": True, "max_conflict_rate": 0.05, "max_depth": 4, "max_bin": 63},
    ),
    "rank_ndcg": ("ranking", {"objective": "rank:ndcg", "max_depth": 3}),
    "rank_map_lossguide": (
        "ranking",
        {"objective": "rank:map", "grow_policy": "lossguide", "max_leaves": 7, "max_depth": 0},
    ),
    "rank_pairwise": ("ranking", {"objective": "rank:pairwise", "max_depth": 3}),
    "adaboost_binary": ("binary", {"booster": "adaboost", "max_depth": 2}),
    "adaboost_multiclass": (
        "multiclass",
        {"booster": "adaboost", "num_class": 3, "objective": "multi:softprob", "max_depth": 2},
    ),
}

#: The hashes (see the module docstring before changing one).
GOLDEN = {
    "absoluteerror": "d4f2e30fced6a188685c3c77550e488a7af56a9ef68067d9958d697aecd397d4",
    "adaboost_binary": "f5360b2c504d878b5b2824de7e18fecf7c310a52959b0941249d341710eabaef",
    "adaboost_multiclass": "8f76f9d7f440b7153740b3cdac762395e3356e58378970f73a104d045b9d48ec",
    "approx": "05cec32b244aa6b8105503e40b2cdba45b54401ebd0d8f0fe1ba114870d2a56e",
    "bundled": "ec799dbcf8e9efee04e594f5509c31a61b2f960890e99f70c95d8de3f40659b8",
    "bundled_with_conflicts": "bda587661f9543a5f3ad0d3be6745b10e9292751d6c6adf16ee596c793f1b137",
    "exact": "b7f59f1016fe3e398d329dd6075d60540181e322ab218eb8041e081c13b766ea",
    "exponential": "b364b6a9f9a7f3e62976622082dfd44c01f997885863db13931dea74eff7e6eb",
    "gamma": "7afb363c770759328a559fb6c083e26caf959c7f92ff94181b93148763ff5222",
    "huber": "501d22841ea507c13210499d152ebad192c9626bcf25201af94dad3b6f34bc0a",
    "logistic_goss": "0931a2b975d2a2663654972a79851ece83647880a6733561583c6300ed4c020d",
    "logistic_gradient_based": "d2c5337d5056c68c88db232bf8b6b63200d90e4c6a14277bd445cbd4bea8b01f",
    "logistic_sampled": "e6541f45c1be8545b4ba8e5b2fbc1aeb0edb907047ee4a000ac492411836e950",
    "poisson": "101ec551f581773f5675d4fb8efe63959f79de4c9bb025ea02ad3b8ae95d2c3e",
    "quantile": "7d025977a3faf1ab88f49a35424418dff31ac31d2094ac92875b3b30001bbfe8",
    "rank_map_lossguide": "f09ce40953976dd38f172312a59dbd769683dc480fb3ddd41c238d12718be8bf",
    "rank_ndcg": "dce2f89fff02965d9573ba5168c4fb83e070315897061cfa48d554621c5925f1",
    "rank_pairwise": "55a47cbb3637cf93440320979075818f1b46c241e7e40e8313cbfc759d53c097",
    "regularized": "d55d4bb8ba8d9c833dbb4b1302e0a9641b29d835e31847d8cb416d55a337ea8c",
    "softmax_lossguide": "adacf86504831f7d553937e4bd2a7d406440ca19901bccda8f35d86a303d4278",
    "softprob": "2b9b50c9e7baf04c49cf81cd53ba9971ecc07652f1a3e1f7b1f131b9472d8123",
    "squarederror_depthwise": "391489a995d3f8e349fe1e4c85e3b7399483d0e180ac27d0aa96412835a9d1a7",
    "squarederror_lossguide": "c329009aa3fccaffb64fd698b547688949feeee1ab5402897939caade2d1db08",
    "tweedie": "d1d1080e11a1e8f5287f394f77c06bf0d656803ac5e8d933e85ddf04a4e2969f",
    "weights_and_max_bin": "279c3ae3d6df03877a000e45d956e2a0b57ebeee429547cb715d7e657b285c5b",
}


def _train_and_hash(name, device):
    data_name, params = CONFIGURATIONS[name]
    params = dict(params, device=device, verbosity=0)
    use_weights = params.pop("weights", False)
    if data_name == "ranking":
        X, y, group = _ranking_data()
        train_rows = slice(0, int(group[:24].sum()))
        test_rows = slice(int(group[:24].sum()), None)
        dtrain = gpuboost.Dataset(X[train_rows], label=y[train_rows], group=group[:24])
    else:
        X, y = DATA[data_name]()
        train_rows, test_rows = slice(0, 300), slice(300, None)
        weight = None
        if use_weights:
            weight = np.random.default_rng(21).uniform(0.2, 3.0, size=300)
        dtrain = gpuboost.Dataset(
            X[train_rows], label=y[train_rows], weight=weight, max_bin=params.get("max_bin", 255)
        )
    booster = gpuboost.train(params, dtrain, num_boost_round=N_ROUNDS)
    prediction = np.ascontiguousarray(booster.predict(X[test_rows]), dtype=np.float64)
    digest = hashlib.sha256(prediction.tobytes())
    digest.update(
        booster.save_raw().encode() if isinstance(booster.save_raw(), str) else booster.save_raw()
    )
    return digest.hexdigest()


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_golden_numpy(name):
    assert _train_and_hash(name, "cpu") == GOLDEN[name]


#: The configurations emulated CUDA trains in the fast tier, one of each objective family
#: and tree method (the compiled CPU kernels and the NumPy reference train all of them
#: there); the slow tier emulates the others, whose paths the fast tier's CUDA parity
#: tests sample on other data (lossguide: tests/backends/cuda/test_lossguide.py;
#: sampling: tests/tree/test_sampling.py; every objective: tests/backends/cuda/
#: test_backend.py).
EMULATED_IN_THE_FAST_TIER = {
    "adaboost_multiclass",
    "approx",
    "bundled",
    "exponential",
    "huber",
    "logistic_sampled",
    "poisson",
    "quantile",
    "rank_ndcg",
    "squarederror_depthwise",
}


@pytest.mark.parametrize("name", sampled(sorted(CONFIGURATIONS), EMULATED_IN_THE_FAST_TIER))
def test_golden_emulated_cuda(name):
    with emulated_kernels():
        assert _train_and_hash(name, "cuda") == GOLDEN[name]


if __name__ == "__main__":  # print the current hashes (see the module docstring)
    for config in sorted(CONFIGURATIONS):
        print(f"    {config!r}: {_train_and_hash(config, 'cpu')!r},", file=sys.stdout)
