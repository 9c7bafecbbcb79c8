"""Tests of gpuboost.backends.cpu.categorical_scan: the compiled categorical scan gives the
reference's records and left sets bit for bit (gains included) on random histograms
(hypothesis), on the edge cases of its sort (NaN and infinite keys, ties), on overflowed
sums, on both of its compiled variants, and in training."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuboost
from gpuboost.backends.cpu import jit
from gpuboost.backends.cpu.categorical_scan import find_best_categorical_splits
from gpuboost.core.categorical import CategoricalParams
from gpuboost.core.categorical import find_best_categorical_splits as reference_scan
from gpuboost.core.gain import SplitParams

MISSING_BIN = 255
SCALE = 1024.0

split_params = st.builds(
    SplitParams,
    reg_lambda=st.sampled_from([0.0, 1.0, 7.5]),
    reg_alpha=st.sampled_from([0.0, 0.0, 0.3]),
    max_delta_step=st.sampled_from([0.0, 0.0, 0.7]),
    min_child_weight=st.sampled_from([0.0, 1.0, 20.0]),
    min_data_in_leaf=st.sampled_from([1, 3, 40]),
    gamma=st.sampled_from([0.0, 0.0, 0.5]),
    many_vs_many_gamma=st.sampled_from([None, 0.0, 2.0]),  # cat_penalty_factor's
)
cat_params = st.builds(
    CategoricalParams,
    max_cat_to_onehot=st.sampled_from([1, 4, 8]),
    max_cat_threshold=st.sampled_from([1, 4, 32, 64]),
    cat_smooth=st.sampled_from([0.0, 1.0, 10.0]),
    cat_l2=st.sampled_from([0.0, 3.0]),
    min_data_per_group=st.sampled_from([1, 10, 100]),
)


def _histograms(rng, n_nodes, n_value_bins, missing_fraction, zero_hessians=False):
    """Random node histograms of categorical features (consistent node totals): a signal
    on the first feature, categories of very different sizes, some empty."""
    n_features = len(n_value_bins)
    hist = np.zeros((n_nodes, n_features, MISSING_BIN + 1, 3), dtype=np.int64)
    for node in range(n_nodes):
        n_rows = int(rng.integers(20, 1500))
        all_bins = []
        for k in n_value_bins:
            weights = rng.random(k) ** 3
            weights[rng.random(k) < 0.1] = 0.0
            weights[0] += 1e-3
            all_bins.append(rng.choice(k, size=n_rows, p=weights / weights.sum()))
        effects = rng.integers(-3000, 3000, n_value_bins[0])
        gradients = effects[all_bins[0]] + rng.integers(-2000, 2000, n_rows)
        hessians = rng.integers(0 if zero_hessians else 1, 1500, n_rows)
        for position, bins in enumerate(all_bins):
            bins = bins.copy()
            bins[rng.random(n_rows) < missing_fraction] = MISSING_BIN
            np.add.at(hist[node, position, :, 0], bins, gradients)
            np.add.at(hist[node, position, :, 1], bins, hessians)
            np.add.at(hist[node, position, :, 2], bins, 1)
    return hist


def _assert_same(hist, n_value_bins, split, cat, mask=None, smoothing=None, features=None):
    """The compiled scan of every feature's histograms (the categorical ones at
    ``features``, default 1, 3, 5, ...; random others between) against the reference's of
    the categorical slice ``hist``; returns the records."""
    features = np.arange(1, 1 + 2 * len(n_value_bins), 2) if features is None else features
    n_features = int(features.max()) + 2 if len(features) else 1
    full = np.random.default_rng(0).integers(-99, 99, (hist.shape[0], n_features) + hist.shape[2:])
    full[:, features] = hist
    rest = (features, np.asarray(n_value_bins), MISSING_BIN, SCALE, SCALE, split, cat)
    expected = reference_scan(hist, *rest, mask, smoothing)
    for variant in ("parallel", "serial"):
        with jit.forced_variant(variant):
            records, sets = find_best_categorical_splits(full, *rest, mask, smoothing)
        np.testing.assert_array_equal(records, expected[0])
        np.testing.assert_array_equal(sets, expected[1])
        # ... and on the reference's slice (the CUDA backend's host copy).
        with jit.forced_variant(variant):
            records, sets = find_best_categorical_splits(
                hist, *rest, mask, smoothing, columns=np.arange(len(features))
            )
        np.testing.assert_array_equal(records, expected[0])
        np.testing.assert_array_equal(sets, expected[1])
    return expected[0]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_value_bins=st.lists(st.sampled_from([2, 3, 5, 12, 40, 200]), min_size=1, max_size=3),
    missing_fraction=st.sampled_from([0.0, 0.2]),
    split=split_params,
    cat=cat_params,
    masked=st.booleans(),
    estimated=st.booleans(),
)
def test_compiled_scan_equals_the_reference(
    seed, n_value_bins, missing_fraction, split, cat, masked, estimated
):
    rng = np.random.default_rng(seed)
    hist = _histograms(rng, 6, n_value_bins, missing_fraction)
    mask = rng.random((6, 2 + 2 * len(n_value_bins))) < 0.8 if masked else None
    smoothing = rng.choice([0.0, 0.4, 3.0, 25.0], size=len(n_value_bins)) if estimated else None
    _assert_same(hist, n_value_bins, split, cat, mask, smoothing)


def test_the_data_have_splits_of_both_kinds():
    """The random histograms above give real splits: many-vs-many and one-vs-rest ones,
    and the compiled scan finds the same."""
    rng = np.random.default_rng(5)
    hist = _histograms(rng, 20, [40, 3], 0.1)
    old_defaults = CategoricalParams(
        min_data_per_group=5, cat_smooth=10.0, cat_l2=3.0, max_cat_threshold=32
    )
    records = _assert_same(hist, [40, 3], SplitParams(), old_defaults)
    assert (records["feature"] == 1).sum() >= 10
    assert (records["feature"] == 3).sum() >= 1
    records = _assert_same(hist, [40, 3], SplitParams(), CategoricalParams(max_cat_to_onehot=64))
    assert (records["feature"] == 1).sum() >= 10


def test_nan_and_infinite_keys_sort_as_numpy_sorts_them():
    """Categories with rows but no hessian: with ``cat_smooth=0`` their key is ``G / 0``
    (+-inf) or ``0 / 0`` (NaN), which NumPy's stable argsort puts after every finite key
    (NaN last, ties by code); ineligible categories (key +inf) tie with the +inf keys."""
    rng = np.random.default_rng(11)
    hist = _histograms(rng, 30, [60, 25], 0.1, zero_hessians=True)
    for position in range(2):
        nodes, bins = np.nonzero(rng.random((30, 25)) < 0.3)
        hist[nodes, position, bins, 1] = 0  # no hessian
        hist[nodes[::2], position, bins[::2], 0] = 0  # and no gradient: 0 / 0
    hist[:, :, :, 1] = np.where(hist[:, :, :, 2] > 0, hist[:, :, :, 1], 0)
    cat = CategoricalParams(cat_smooth=0.0, cat_l2=0.0, min_data_per_group=1)
    split = SplitParams(reg_lambda=0.0, min_child_weight=0.0)
    _assert_same(hist, [60, 25], split, cat)
    _assert_same(hist, [60, 25], split, cat, smoothing=np.array([0.0, 2.0]))


def test_tied_keys_keep_code_order():
    """Categories with equal sums (equal keys) are ordered by code in both scans."""
    hist = np.zeros((1, 1, MISSING_BIN + 1, 3), dtype=np.int64)
    hist[0, 0, :30] = [[-5000, 10240, 10]] * 10 + [[5000, 10240, 10]] * 10 + [[0, 10240, 10]] * 10
    records = _assert_same(
        hist, [30], SplitParams(), CategoricalParams(cat_smooth=0.0, min_data_per_group=1)
    )
    assert records["feature"][0] == 1


def test_overflowed_sums_give_no_split_and_an_infinite_gain():
    """A node whose scores overflow float64 keeps ``gain = inf`` and no split, in both."""
    hist = np.zeros((2, 1, MISSING_BIN + 1, 3), dtype=np.int64)
    hist[:, 0, :20, 0] = np.arange(-10, 10) * 50000
    hist[:, 0, :20, 1] = 100000
    hist[:, 0, :20, 2] = 30
    hist[1, 0, :20, 0] = 0
    hist[1, 0, 0, 0], hist[1, 0, 1, 0] = 2**62, -(2**62)  # parent G = 0
    split = SplitParams(reg_lambda=0.0, min_child_weight=0.0)
    args = (hist, np.array([0]), np.array([20]), MISSING_BIN)
    for scale_gradients, overflows in ((SCALE, False), (2.0**-600, True)):
        expected = reference_scan(*args, scale_gradients, SCALE, split, CategoricalParams())
        records, sets = find_best_categorical_splits(
            *args, scale_gradients, SCALE, split, CategoricalParams()
        )
        np.testing.assert_array_equal(records, expected[0])
        np.testing.assert_array_equal(sets, expected[1])
        assert records["feature"][1] == (-1 if overflows else 0)
        assert (records["gain"][1] == np.inf) == overflows


def test_empty_inputs():
    hist = np.zeros((0, 2, MISSING_BIN + 1, 3), dtype=np.int64)
    _assert_same(hist, [5, 9], SplitParams(), CategoricalParams())
    hist = np.zeros((3, 0, MISSING_BIN + 1, 3), dtype=np.int64)
    records = _assert_same(
        hist, [], SplitParams(), CategoricalParams(), features=np.array([], dtype=np.int64)
    )
    assert (records["feature"] == -1).all()


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic"])
def test_training_gives_the_numpy_backends_model(objective, monkeypatch):
    """A model with many-vs-many and one-vs-rest columns: the CPU backend (compiled scan)
    and the NumPy backend (the reference) write the same bytes."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 3000
    big = rng.integers(0, 120, n)
    small = rng.integers(0, 3, n)
    x = rng.normal(size=n)
    signal = np.sin(big * 0.7) + 0.5 * small + x
    y = signal + rng.normal(size=n) * 0.3
    if objective == "binary:logistic":
        y = (y > np.median(y)).astype(float)
    frame = pd.DataFrame(
        {
            "big": pd.Categorical(big.astype(str)),
            "small": pd.Categorical(small.astype(str)),
            "x": x,
        }
    )
    frame.loc[rng.random(n) < 0.05, "big"] = np.nan
    params = {"objective": objective, "max_depth": 5, "nthread": 2}
    models = []
    for device, kernels in (("cpu", "numba"), ("cpu", "numpy")):
        monkeypatch.setenv(jit.CPU_KERNELS_ENV_VAR, kernels)
        booster = gpuboost.train(dict(params, device=device), gpuboost.Dataset(frame, label=y), 8)
        models.append(booster.save_raw())
    assert models[0] == models[1]
