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

One set of hashes holds on every machine (docs/DESIGN.md, "Platform-independent
arithmetic"): the objectives, metrics and base scores evaluate ``exp`` / ``log`` with
:mod:`gpuboost.core.strict_math` and sum floats with :mod:`gpuboost.core.reproducible_sum`,
never with NumPy's or the C library's functions, which differ between CPUs (NumPy picks
SIMD code at run time), library builds and GPUs. The data are made the same way:
uniform random numbers (exact conversions of integers) and basic operations only, since
``rng.normal`` and ``rng.poisson`` call the C library's ``exp`` / ``log`` in some paths
and ``np.sin`` / ``np.exp`` are the platform's. tests/test_platform_independence.py
runs these configurations with the platform's functions perturbed.
"""

import hashlib
import sys

import numpy as np
import pytest
from _tiers import sampled

import gpuboost
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.core import strict_math
from gpuboost.data.dataset import label_arguments

N_ROUNDS = 8


def normal(rng, size):
    """Roughly standard normal values from uniforms and additions only (Irwin-Hall: 12
    uniforms summed in a fixed order, minus 6), the same bits on every machine."""
    uniforms = rng.random(size=(12,) + ((size,) if np.isscalar(size) else tuple(size)))
    total = uniforms[0]
    for uniform in uniforms[1:]:
        total = total + uniform
    return total - 6.0


def _regression_data(n_rows=360, n_features=6, seed=11):
    rng = np.random.default_rng(seed)
    X = normal(rng, (n_rows, n_features))
    X[rng.random(n_rows) < 0.15, 1] = np.nan
    X[:, 4] = np.round(X[:, 4] * 3)  # few distinct values
    wave = 4.0 * X[:, 1] / (1.0 + 4.0 * X[:, 1] * X[:, 1])  # smooth, bounded, not monotone
    y = (
        1.5 * X[:, 0]
        + np.where(np.isnan(X[:, 1]), 1.0, wave)
        + (X[:, 2] > 0.2) * X[:, 3]
        + 0.2 * normal(rng, n_rows)
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
    return X, strict_math.exp(np, 0.4 * y)


def _count_data():
    X, y = _regression_data(seed=15)
    mean = strict_math.exp(np, 0.3 * np.clip(y, -3, 3))  # at most e**0.9
    uniform = np.random.default_rng(15).random(len(y))
    # Poisson by inversion: the least k whose cumulative probability reaches the uniform.
    counts = np.zeros(len(y))
    probability = strict_math.exp(np, -mean)
    cumulative = probability
    for k in range(1, 40):
        counts += uniform > cumulative
        probability = probability * mean / k
        cumulative = cumulative + probability
    return X, counts


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
    dense = normal(rng, (n_rows, 2))
    X = np.hstack([onehot, dense])
    y = (codes[:, 0] % 3) + 0.5 * (codes[:, 1] == 2) + dense[:, 0] + 0.1 * normal(rng, n_rows)
    return X, y


def _survival_data(n_rows=360, seed=18):
    """Survival times from uniform numbers (basic operations only), a third censored
    (negative), some tied."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n_rows, 5))
    time = np.round(1.0 + 3.0 * rng.uniform(size=n_rows) - X[:, 0] - X[:, 1] * X[:, 2], 1)
    time = np.maximum(time, 0.1)
    return X, np.where(rng.uniform(size=n_rows) < 0.33, -time, time)


def _interval_data(n_rows=360, seed=19):
    """Interval labels for survival:aft: observed, right-, left- and interval-censored
    times from uniform numbers (basic operations only)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n_rows, 5))
    time = 0.1 + 2.0 * rng.uniform(size=n_rows) + X[:, 0] + X[:, 1] * X[:, 2] + 2.0
    kind = rng.integers(0, 4, size=n_rows)
    lower = np.where(kind == 2, 0.0, np.where(kind == 3, time * 0.5, time))
    upper = np.where(kind == 1, np.inf, np.where(kind == 3, time * 2.0, time))
    return X, np.column_stack([lower, upper])


def _ranking_data(n_queries=30, seed=17):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 15, size=n_queries)
    n_rows = int(sizes.sum())
    X = normal(rng, (n_rows, 5))
    relevance = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + 0.5 * normal(rng, n_rows) + 1.5), 0, 4)
    return X, relevance, sizes


DATA = {
    "regression": _regression_data,
    "binary": _binary_data,
    "multiclass": _multiclass_data,
    "positive": _positive_data,
    "count": _count_data,
    "tweedie": _tweedie_data,
    "onehot": _onehot_data,
    "survival": _survival_data,
    "intervals": _interval_data,
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
    "quantile_levels": (
        "regression",
        {"objective": "reg:quantile", "quantile_alpha": [0.2, 0.5, 0.8], "max_depth": 3},
    ),
    "expectile_levels": (
        "regression",
        {
            "objective": "reg:expectileerror",
            "expectile_alpha": [0.3, 0.7],
            "max_depth": 3,
            "subsample": 0.8,
            "seed": 8,
        },
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
    "cox": ("survival", {"objective": "survival:cox", "max_depth": 3}),
    "aft_normal": ("intervals", {"objective": "survival:aft", "max_depth": 3}),
    "aft_extreme": (
        "intervals",
        {
            "objective": "survival:aft",
            "aft_loss_distribution": "extreme",
            "max_depth": 3,
            "aft_loss_distribution_scale": 0.7,
        },
    ),
    "dart": (
        "binary",
        {
            "objective": "binary:logistic",
            "booster": "dart",
            "rate_drop": 0.3,
            "sample_type": "weighted",
            "subsample": 0.8,
            "max_depth": 3,
            "seed": 6,
        },
    ),
    "forest_softprob": (
        "multiclass",
        {
            "objective": "multi:softprob",
            "num_class": 3,
            "num_parallel_tree": 3,
            "subsample": 0.8,
            "colsample_bynode": 0.7,
            "max_depth": 3,
            "seed": 7,
        },
    ),
    "adaboost_multiclass": (
        "multiclass",
        {"booster": "adaboost", "num_class": 3, "objective": "multi:softprob", "max_depth": 2},
    ),
}

#: The hashes (see the module docstring before changing one).
GOLDEN = {
    "absoluteerror": "4b13fd6df5026fba12645c5a0d9d9a9555d5ee0dfb4702615be7ec469b19f345",
    "adaboost_binary": "893a8ac159d86161a580f0f8b6b8c586197f5e3d030f6d994a867b46b5c5e46e",
    "adaboost_multiclass": "425cb6c2c290123d5a1406994594548815104b98079ae7b5027cdc7ed066eb64",
    "approx": "2fa07de1945dc9f42a42ac98a0fded9cfdb5a8fad3ae55740c0ff654d049ea71",
    "bundled": "8045a8e265ce9dd82928cc245922a9b8771c2b4046ac5fa1a3310cafa247fb90",
    "bundled_with_conflicts": "18a65efb9295cf1b5d278a123bb1fbd894faf595a2181ae29265b03d32501d47",
    "aft_extreme": "065bbe524ee868d551e68483e7af18fc0743b56a03dfbfb529daa0bb7244211a",
    "aft_normal": "8afd7b3902e5c929c021a8cf808cc9ff3f267cb9c4b4a1631803df51480c1e5e",
    "cox": "a88a08e49c463ad1c01652892e1a468db1430e58777232f8208cbd3dc80f7caf",
    "dart": "921f29e0a3ec634c3bdb41638db59b097add01a401a9efc44657ccb5022cedd7",
    "exact": "20a34a5a4c87ca16bf4315709c7636b9cf5e8dbe2ff41dac0f0de78de7fac79b",
    "expectile_levels": "059304c28c46909ead075f8a5074a2085b2cd0c19145a9b8da330ad450f940fd",
    "exponential": "3dd6401aa7852d2d25a84b009ee35a241fb3650c40bf678d8a911372cd43fdde",
    "forest_softprob": "b40968a673e7c6ebf116cb4b71d92b4daa21a2ec4eefd2a69cc83ca25a38eb4c",
    "gamma": "6a4e45cef5de2cfead324bf80b09d28251f9b04d14290605ccde083904f2a698",
    "huber": "c3f1be23838e89f23ee444b839a3a26c777005178ed483f90f6d4ec3e00acd57",
    "logistic_goss": "374f6fc16fe6d8ebf26d78987c9fdfeeeab51d50c220e0d003ffdb2256009606",
    "logistic_gradient_based": "293e68c3f0ff1eb00800466ce84968c7aba09d85db470f752880bc129c362a01",
    "logistic_sampled": "3853cb76a223484200a73b2b263ccf5f58b6a6bfa6789d294d007cc69d2cb0e8",
    "poisson": "44606ac3c6c64bceb5f119c3334a0cb2c2cae37a728127d6aa393c200ab90739",
    "quantile": "8de569799bedbc49a2e3f3191c66612c6ad6c342c918aef32aa936e15c99c67b",
    "quantile_levels": "928901bb8eb39057dd75cb6dc26314e11079de36f85faa577baaec807181aa48",
    "rank_map_lossguide": "015236881f98428a1f582792d2387a1cf67f236f8c8becbff95e430d97fe45e1",
    "rank_ndcg": "80b1f38e80cf4555b6b7aec9b37ee02ee4c2ba2d3c34ad5f1caab526291e462f",
    "rank_pairwise": "8ccb24542a1a379cbff0420d8f305959436e8b0a65671058c778bb411e6b3244",
    "regularized": "ad6904eed5a54fcd3fbbdb1ccc1f66cea7e84fb2d29767786d37036001d6b566",
    "softmax_lossguide": "b86f58336f1cecf742246d813c1c1782d62af453b7eceae3be67b77d069d7066",
    "softprob": "f93cb5f68070e6c575587f178a22663a0ec7a34adb343dada7632b7d1f5a2cf7",
    "squarederror_depthwise": "10d49f61c6c395dbd45113f7dc874306cde26609cd5fe0b0ee4d721fb325069b",
    "squarederror_lossguide": "55a6da1ea48f464ff8535d6e2f9b1fafacf850e47bc93ddefbefd324fe3f237d",
    "tweedie": "a3006f46e752946ae075e8a27cd42147bed40752a58316a60357b823f97ffa81",
    "weights_and_max_bin": "3ec9a363f226813cbc6f977385d6cf0d3d9e730057296b304766ff59d88058f5",
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
            X[train_rows],
            **label_arguments(y[train_rows]),
            weight=weight,
            max_bin=params.get("max_bin", 255),
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
