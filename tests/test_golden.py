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
    "absoluteerror": "f10cb98b7282b9700781c72043b50c056dc6005f1527bda8d12a0714510c7f9c",
    "adaboost_binary": "5c379ab62244489bc01ab8a42af84ad16c9fa4138109fbe8075c7cc331071ac7",
    "adaboost_multiclass": "df0ead66896f6b7179fdbf9e53b6c5fe59acb52d19675ca418aa9406b17772cc",
    "approx": "e777ff63ce6da5a594045c8837a65a61b7f984504a1ba3841b59038a9ea80c9f",
    "bundled": "67cad497f4728b2d5e65384c7d8ee86bf41be2ad9ae0919d7e383a0ae0ebba05",
    "bundled_with_conflicts": "06a71ac3dc9e5f3bca581b102a854d0a8d1b2a6d0fd03ce181d41d68dbbbb49d",
    "aft_extreme": "02d2b2fb4a8ccaa27dc9c1f96bde690c20f326bcc4d076ea91b52a75b562fae7",
    "aft_normal": "8bdd76f48857feb9aea20c4554859220f6f3a55af6c7264e3273a2643f68bbc2",
    "cox": "8df7a52fee1b237c70ff6a07219411e2c8a237e7dbbe96917ddd22728a8a04a5",
    "dart": "9bb5d7dbd17b143ae707ca8f45e14f2413aef22e3e39cc88e6068192e996552d",
    "exact": "3c248eb3a633700118f5d86662d963826671d48d41d8c638c45acdb1c000626f",
    "expectile_levels": "a65ad8e8ce54e87d78353aa7f7534700b33e8c3ef8ee13fa5d39659434ee76c6",
    "exponential": "bd97e5701d0a0a78f4f7807f9f938150a00314a3e23ade75e480845124abe7bc",
    "forest_softprob": "ca08bfcf35b3f44dd9a8bd895a127075c8106228c452074655b06fe9c4eea622",
    "gamma": "10ec0d8f9bf109a6e2eab1c8e2122d014289d62797b9a54a1d067a486ffd1d27",
    "huber": "68c15b51254510480f344f46882295a6592f42a2be1114bf4902c9f126784c69",
    "logistic_goss": "569237d8d4d67a0a39d76eb1f6f1e39015e3314e5262c60a69e2f4d118a020da",
    "logistic_gradient_based": "e91ad7f0ef0b42b83bcd63d09f9f18a8ccf6f25dd2fd794440ccc939497ac32b",
    "logistic_sampled": "c5de2768bfb9bfb5f43eb36598ffcf13d1512d3d7751f75e79a3198cfed987e7",
    "poisson": "0cce61cf9e3247c09ea7220518fa483f8a0d03ed7ce04db050cac26901ee6b90",
    "quantile": "9648897eb2d1593dff222de9bf08cff5695071a6a17b4afb9cdc440689b80449",
    "quantile_levels": "d4a4df1b0073f3c8c5f03fe46d3c2434e8355666fab7d20c007c0e8bc7828a11",
    "rank_map_lossguide": "82711656df66979b0a3a5c5a3319eba3a99bed5ca345ca5e459c5aabe9e1ce29",
    "rank_ndcg": "21f938778ee30ed24501476323a9cb496b3782c58076b279c586efc6bc4fc99f",
    "rank_pairwise": "756e8f93c2d1c62590867274d8cf909750bafc325b3550e66d71b006a5a253cb",
    "regularized": "ad6904eed5a54fcd3fbbdb1ccc1f66cea7e84fb2d29767786d37036001d6b566",
    "softmax_lossguide": "2e79004fbf6dab8bc119a463ed3ae9afd26c02a0037d74825f40620dd6a983f6",
    "softprob": "79b05fd20f009c2ed941034cf09293182edc37ecb43d15ac99e30d43aa5ef249",
    "squarederror_depthwise": "951771ee7e37d4129acfdb606dbee4ad5fbac5eba0b2039e78ad3ec4bbb32c05",
    "squarederror_lossguide": "9969e777a954d9ceebf07bef0c715adcd8e7985d91f7fa0069c35ad831c377a3",
    "tweedie": "1f4f1ae76b58ef9af79067b6764027ba0c6e647db02e4bcee81e86d9cfdfae23",
    "weights_and_max_bin": "66e8d917dbde6ccc33cdd38ee4fd83337df4282043a52f9eb0b70a7b6c85b9c6",
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
