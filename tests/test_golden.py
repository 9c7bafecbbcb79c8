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


def _categorical_data(n_rows=360, seed=24):
    """Category codes of 3, 12 and 40 levels (columns 0-2; a tenth of column 2 missing)
    and two dense columns: one-vs-rest and many-vs-many categorical splits."""
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, k, size=n_rows) for k in (3, 12, 40)])
    effects = [rng.uniform(-1.0, 1.0, size=k) for k in (3, 12, 40)]
    dense = normal(rng, (n_rows, 2))
    y = sum(effect[codes[:, j]] for j, effect in enumerate(effects)) + 0.5 * dense[:, 0]
    X = np.hstack([codes.astype(np.float64), dense])
    X[rng.random(n_rows) < 0.1, 2] = np.nan
    return X, y + 0.2 * normal(rng, n_rows)


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


def _targets_data():
    """Three targets sharing features (a 2-D label: several targets)."""
    X, y = _regression_data(seed=20)
    noise = 0.3 * normal(np.random.default_rng(20), (len(y), 2))
    return X, np.column_stack([y, 0.5 * y - X[:, 0] + noise[:, 0], (X[:, 3] > 0) + noise[:, 1]])


def _multilabel_data():
    X, y = _targets_data()
    return X, (y > np.median(y, axis=0)).astype(np.float64)


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
    "categorical": _categorical_data,
    "survival": _survival_data,
    "intervals": _interval_data,
    "targets": _targets_data,
    "multilabel": _multilabel_data,
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
    "path_smooth": ("regression", {"path_smooth": 15.0, "min_data_in_leaf": 2, "max_depth": 5}),
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
    "targets_per_output": ("targets", {"max_depth": 3}),
    "targets_vector_leaves": (
        "targets",
        {
            "multi_strategy": "multi_output_tree",
            "max_depth": 4,
            "subsample": 0.8,
            "colsample_bynode": 0.8,
            "reg_alpha": 0.2,
            "seed": 9,
        },
    ),
    "multilabel_vector_leaves": (
        "multilabel",
        {"objective": "binary:logistic", "multi_strategy": "multi_output_tree", "max_depth": 3},
    ),
    "softprob_vector_leaves": (
        "multiclass",
        {
            "objective": "multi:softprob",
            "num_class": 3,
            "multi_strategy": "multi_output_tree",
            "grow_policy": "lossguide",
            "max_leaves": 7,
        },
    ),
    "approx": ("regression", {"tree_method": "approx", "max_bin": 31, "max_depth": 4}),
    "exact": ("regression", {"tree_method": "exact", "max_depth": 4}),
    "categorical": ("categorical", {"max_depth": 4, "categorical_features": [0, 1, 2]}),
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
    "aft_extreme": "754b5497c04c2de6954f9f70424df1d02ed84619c70178947417a3094cba860a",
    "aft_normal": "e676824531348329efda6162523688065278cdc9ff80dd2bbc13baa04c402c97",
    "categorical": "65b9c75e4abcee174ff0e87e64112b3a96826d3b43e295d2f9a2a41330313c08",
    "approx": "06a7270703cbabe178ab48f61cd3b31f6d88ceb016d8a45a3e7df8b20baa2c9e",
    "bundled": "e652bde80920a8faccde095e550aa24359d5837ab6baf1e84371bc5a9c23f361",
    "bundled_with_conflicts": "c44d77db8048ebde0ea9221a278ed7c5fef4c8253c5448127af645d457436f4d",
    "cox": "707d10a569096c76a4c115c90f2786fe78266a03b3daabec269f4c31d8a4926b",
    "dart": "61bdc175f5934212682b915ff1cdf370ce7d43ef95adb1b9c0e2f07322ba9b9b",
    "exact": "1148262f9cf6e9f2a45b7586a062fa53cec8e6aa506bdd6887ace3643516daf1",
    "expectile_levels": "68aee31dcf622eb60edb8e66df06313199467967da9f64801ab1e8aa4f1a5733",
    "exponential": "a4282aac3ae0cb4963e11e8efcd3cd6217ad9d14b34307887ca93c49179515c3",
    "forest_softprob": "a586d8f545f81d1863641495ff3863bfa3e390c10d01132c191301a74310e7c1",
    "gamma": "48d1de040dc8d833c01ee876d960fb854bfd61a6362b59ae45b32cf7b2a0aa6b",
    "huber": "637683f099e8d03b25db42bed055d531750c647afe5b5e7b3b22575bd501bac0",
    "logistic_goss": "65770c0a509fa70043bf665a6e41d370650ee439914e224eba7a32f60b023339",
    "logistic_gradient_based": "890435d15ef6c116de5cb3b8198ef31567aa67edd00d28d31b9e6f218abc4499",
    "logistic_sampled": "4d1b2763148e2c888cb18ba48e5e17fcb38e150d36742ce264abc747d815182f",
    "multilabel_vector_leaves": "59d31f3d425a54dfe60b0d11ce8cdfbb82fb75698e1b46589d18c221f7fe72c7",
    "path_smooth": "51e975b34ef6cb33ebb49bd97ccf9239c0b85e5b8340f709cdb621e6d5a89c80",
    "poisson": "2317ecbf77cc1cb2992f61d1cdb5551edc808f12ee050b945d9b0e6c1a1c3125",
    "quantile": "722169993940b0273cb4ddf7308c1b1dedd2ef3b6eb3c2bed74528ce2a416bd6",
    "quantile_levels": "3f04f167d344e6f3fae732b3b2bb8a1f85d3d2020af0f2593182cfcc8074579d",
    "rank_map_lossguide": "d46d65dbb3ba9a28e61d6b94c26285a61699d29960f6f0f6b29b5b94accd37d6",
    "rank_ndcg": "7db28944b5f4fe51e48d99948f17a1fbb62ebd86a063271f9b41362b3b42f32c",
    "rank_pairwise": "1ffef9f989179133f7f7259efef395291163672e14340bc0dff5799d73bb31a6",
    "regularized": "10f7b401e208ca3886b3ec9e60a49783f8374b002752d71ec80e80d9cdaca33a",
    "softmax_lossguide": "12a421b171a8161d1b015d60a7e8578e5e9b0b0568d3757af8b6744bd3a735c3",
    "softprob": "9fc7f0b0d880567eda7ef4f09d2878d10ca2ef3718342aed64031f628e402c34",
    "softprob_vector_leaves": "ea36f8c9ea267bfb916f9816435d3885df391596c3fd58189ce6ecf23aa672f9",
    "squarederror_depthwise": "ff74e1d4f76ac755409b4776a1bc9f42607b0e9a6af301b9221075324f5c8143",
    "squarederror_lossguide": "8cdc2e1ee9e878085a84e264dc8d525e5dd741b0761a9ec195be19492daa973f",
    "targets_per_output": "9ed8f97213e41e05d39ae7a42a7f9e02a5e31b2f556eee8adaeb8764594060d5",
    "targets_vector_leaves": "9714fe6f00af3c9dc0f598985228dbffb27d7e5e508b7abc653a0036790b9ad5",
    "tweedie": "cd392d894900df9bdccfb4752acc1d1a2a3fe67f026f7b58b4c1bdeeb599115f",
    "weights_and_max_bin": "3db8b1f57c41ef97f2eabded5547a3bd2f59e553d98c9be801660ca578f0472b",
}


def _train_and_hash(name, device):
    data_name, params = CONFIGURATIONS[name]
    params = dict(params, device=device, verbosity=0)
    use_weights = params.pop("weights", False)
    categorical_features = params.pop("categorical_features", None)
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
            categorical_features=categorical_features,
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
#: test_backend.py; vector leaves: tests/tree/test_vector_leaves.py).
EMULATED_IN_THE_FAST_TIER = {
    "adaboost_multiclass",
    "approx",
    "bundled",
    "categorical",
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
