"""Tests of gpuboost.backends.cpu.split_scan: the compiled scan gives the NumPy reference's
and the naive loop's records bit for bit (gains included), on random data (hypothesis)."""

import dataclasses

import numpy as np
import pytest
from _cases import binned_problem, random_segments
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends.cpu.histogram import _accumulate
from gpuboost.backends.cpu.split_scan import (
    _gather_all,
    _gather_listed,
    bin_words,
    find_best_splits,
    words_per_feature,
)
from gpuboost.backends.numpy.histogram import build_histograms
from gpuboost.backends.numpy.split_scan import find_best_splits as reference_scan
from gpuboost.backends.numpy.split_scan import find_best_splits_naive
from gpuboost.core.gain import SplitParams
from gpuboost.core.quantize import quantize

split_params = st.builds(
    SplitParams,
    reg_lambda=st.sampled_from([0.0, 1.0, 7.5]),
    reg_alpha=st.sampled_from([0.0, 0.0, 0.3, 4.0]),
    max_delta_step=st.sampled_from([0.0, 0.0, 0.05, 0.7]),
    min_child_weight=st.sampled_from([0.0, 1e-3, 1.0, 20.0]),
    min_data_in_leaf=st.sampled_from([1, 1, 3, 40]),
    gamma=st.sampled_from([0.0, 0.0, 0.5]),
)


def _histograms(rng, n_rows, n_features, max_bin, n_nodes, missing_fraction, gradient_scale):
    """Histograms of random nodes of random data with quantized float gradients."""
    X_binned, _, _ = binned_problem(rng, n_rows, n_features, max_bin, missing_fraction)
    gradients = rng.normal(size=n_rows) * gradient_scale
    if rng.random() < 0.3:
        gradients = np.round(gradients)  # ties between candidates
    hessians = rng.random(n_rows) * rng.choice([1.0, 0.01])
    quantized_g, scale_g = quantize(np, gradients)
    quantized_h, scale_h = quantize(np, hessians)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        quantized_g,
        quantized_h,
        rng.permutation(n_rows).astype(np.int32),
        begins,
        ends,
        max_bin + 1,
    )
    values = np.where(X_binned == max_bin, 0, X_binned).astype(np.int32)
    n_value_bins = (values.max(axis=0, initial=0) + 1).astype(np.int32)
    return histograms, scale_g, scale_h, n_value_bins


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 300),
    n_features=st.integers(1, 5),
    max_bin=st.sampled_from([2, 3, 7, 16, 255]),
    n_nodes=st.integers(1, 5),
    missing_fraction=st.sampled_from([0.0, 0.1, 0.6]),
    gradient_scale=st.sampled_from([1.0, 1e-4, 1e6]),
    params=split_params,
    with_mask=st.booleans(),
)
def test_records_equal_the_reference_and_the_naive_loop(
    seed,
    n_rows,
    n_features,
    max_bin,
    n_nodes,
    missing_fraction,
    gradient_scale,
    params,
    with_mask,
):
    rng = np.random.default_rng(seed)
    histograms, scale_g, scale_h, n_value_bins = _histograms(
        rng, n_rows, n_features, max_bin, n_nodes, missing_fraction, gradient_scale
    )
    mask = rng.random((n_nodes, n_features)) < 0.6 if with_mask else None
    arguments = (histograms, scale_g, scale_h, n_value_bins, max_bin, params, mask)
    compiled = find_best_splits(*arguments)
    assert compiled.dtype == reference_scan(*arguments).dtype
    assert compiled.tobytes() == reference_scan(*arguments).tobytes()
    assert compiled.tobytes() == find_best_splits_naive(*arguments).tobytes()


@pytest.mark.parametrize("max_delta_step", [0.0, 0.3])
def test_gains_are_bit_identical_where_a_fused_multiply_add_would_differ(max_delta_step):
    """Many candidates whose gains are sums and products of inexact quotients: any
    contraction into a fused multiply-add or reassociation shows in the last bits."""
    rng = np.random.default_rng(7)
    histograms, scale_g, scale_h, n_value_bins = _histograms(rng, 3000, 4, 255, 3, 0.2, 3.0)
    params = SplitParams(reg_lambda=0.37, reg_alpha=0.11, max_delta_step=max_delta_step)
    arguments = (histograms, scale_g, scale_h, n_value_bins, 255, params)
    compiled = find_best_splits(*arguments)
    assert (compiled["feature"] >= 0).all()
    assert compiled.tobytes() == reference_scan(*arguments).tobytes()


def test_no_nodes():
    histograms = np.zeros((0, 2, 8, 3), dtype=np.int64)
    records = find_best_splits(histograms, 1.0, 1.0, np.array([7, 7]), 7, SplitParams())
    assert records.shape == (0,)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_features=st.integers(1, 5),
    max_bin=st.sampled_from([3, 16, 255]),
    n_nodes=st.integers(1, 5),
    missing_fraction=st.sampled_from([0.0, 0.1]),
    params=split_params,
)
def test_monotone_records_equal_the_reference_and_the_naive_loop(
    seed, n_features, max_bin, n_nodes, missing_fraction, params
):
    """Monotone constraints: directions per feature, bounds per node (some clipping)."""
    rng = np.random.default_rng(seed)
    histograms, scale_g, scale_h, n_value_bins = _histograms(
        rng, 200, n_features, max_bin, n_nodes, missing_fraction, 1.0
    )
    directions = tuple(int(d) for d in rng.choice([-1, 0, 1], size=n_features))
    params = dataclasses.replace(
        params, monotone=directions if any(directions) else (1,) * n_features
    )
    lower = np.where(rng.random(n_nodes) < 0.5, -np.inf, -rng.random(n_nodes))
    upper = np.where(rng.random(n_nodes) < 0.5, np.inf, rng.random(n_nodes))
    bounds = np.stack([lower, upper], axis=1)
    arguments = (histograms, scale_g, scale_h, n_value_bins, max_bin, params, None)
    compiled = find_best_splits(*arguments, node_bounds=bounds)
    assert compiled.tobytes() == reference_scan(*arguments, node_bounds=bounds).tobytes()
    assert compiled.tobytes() == find_best_splits_naive(*arguments, node_bounds=bounds).tobytes()


def test_refuses_a_scale_that_is_not_a_power_of_two():
    """The compiled scan multiplies by ``1 / scale`` where the reference divides: the
    same bits only for powers of two, which quantization gives (docs/DESIGN.md,
    "Quantization"); any other scale is refused rather than scanned differently."""
    rng = np.random.default_rng(4)
    histograms, scale_g, scale_h, n_value_bins = _histograms(rng, 200, 3, 15, 2, 0.1, 3.0)
    params = SplitParams()
    expected = reference_scan(histograms, scale_g, scale_h, n_value_bins, 15, params)
    got = find_best_splits(histograms, scale_g, scale_h, n_value_bins, 15, params)
    assert got.tobytes() == expected.tobytes()
    for scales in ((scale_g * 1.5, scale_h), (scale_g, 3.0)):
        with pytest.raises(ValueError, match="power-of-two scales"):
            find_best_splits(histograms, *scales, n_value_bins, 15, params)


@pytest.mark.parametrize("n_rows", [0, 1, 5, 40, 127, 600])
@pytest.mark.parametrize("n_bins", [3, 64, 65, 200, 256])
def test_listed_bins_gather_what_every_bin_gathers(n_rows, n_bins):
    """The bins of a node's rows listed in a bitmap (``bin_words``) and visited in order
    give the running sums and bins of the walk over every bin: bin 0, then each bin
    below the candidates' end that holds rows (words of 64 bins, the last one partial)."""
    rng = np.random.default_rng(n_rows * 1000 + n_bins)
    n_features = 3
    X_binned = rng.integers(0, n_bins, size=(max(n_rows, 1), n_features)).astype(np.uint8)
    X_binned[:, 1] = np.minimum(X_binned[:, 1], 1)  # a feature of few bins
    gradients = rng.integers(-1000, 1000, size=len(X_binned)).astype(np.int32)
    hessians = rng.integers(1, 1000, size=len(X_binned)).astype(np.int32)
    rows = rng.permutation(len(X_binned)).astype(np.int32)
    cells = np.zeros(n_features * n_bins * 3, dtype=np.int64)
    _accumulate(X_binned, gradients, hessians, rows, 0, n_rows, cells, n_bins, False)
    words = np.full((n_features, words_per_feature(n_bins)), 7, dtype=np.uint64)
    bin_words(X_binned, rows, 0, n_rows, words)
    histogram = cells.reshape(n_features, n_bins, 3)
    for feature in range(n_features):
        for n_candidates in {1, max(1, n_bins - 2), max(1, n_bins // 2)}:
            every = np.zeros((4, n_bins), dtype=np.int64)
            listed = np.zeros((4, n_bins), dtype=np.int64)
            n_every = _gather_all(histogram, feature, n_candidates, every)
            n_listed = _gather_listed(histogram, feature, n_candidates, words, listed)
            assert n_listed == n_every >= 1
            np.testing.assert_array_equal(listed[:, :n_listed], every[:, :n_every])
