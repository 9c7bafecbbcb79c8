"""Tests of gpuboost.backends.cpu.partition: the compiled stable partition against the
NumPy reference and its naive loop, on random data (hypothesis)."""

import numpy as np
from _cases import binned_problem, random_segments
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends.categorical import partition_categorical as categorical_definition
from gpuboost.backends.cpu import jit
from gpuboost.backends.cpu.partition import partition_categorical, partition_rows
from gpuboost.backends.numpy.partition import partition_rows as reference_partition
from gpuboost.backends.numpy.partition import partition_rows_naive


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 800),
    max_bin=st.sampled_from([2, 9, 255]),
    n_nodes=st.integers(1, 9),
    n_threads=st.integers(1, 7),
)
def test_matches_the_reference_and_the_naive_loop(seed, n_rows, max_bin, n_nodes, n_threads):
    """Nodes of every size, some cut by the ranges of up to seven threads; positions
    outside the listed segments stay where they are."""
    rng = np.random.default_rng(seed)
    X_binned, _, _ = binned_problem(rng, n_rows, 3, max_bin, missing_fraction=0.2)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    features = rng.integers(0, 3, size=n_nodes)
    thresholds = rng.integers(0, max_bin, size=n_nodes)
    default_left = rng.random(n_nodes) < 0.5
    split = (begins, ends, features, thresholds, default_left, max_bin)
    compiled, reference, naive = (sample_indices.copy() for _ in range(3))
    n_left = partition_rows(np.ascontiguousarray(X_binned.T), compiled, *split, n_threads)
    n_left_reference = reference_partition(np.ascontiguousarray(X_binned.T), reference, *split)
    n_left_naive = partition_rows_naive(X_binned, naive, *split)
    np.testing.assert_array_equal(compiled, reference)
    np.testing.assert_array_equal(compiled, naive)
    np.testing.assert_array_equal(n_left, n_left_reference)
    np.testing.assert_array_equal(n_left, n_left_naive)
    assert n_left.dtype == np.int64


def test_no_nodes():
    sample_indices = np.arange(5, dtype=np.int32)
    n_left = partition_rows(np.zeros((1, 5), np.uint8), sample_indices, [], [], [], [], [], 7)
    assert n_left.shape == (0,)
    np.testing.assert_array_equal(sample_indices, np.arange(5))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 800),
    max_bin=st.sampled_from([2, 9, 255]),
    n_nodes=st.integers(1, 9),
    variant=st.sampled_from(["parallel", "serial"]),
)
def test_categorical_matches_the_definition(seed, n_rows, max_bin, n_nodes, variant):
    """Categorical splits (random left sets over the bins, the missing bin's bit set in
    some: ``default_left`` decides it) give the array-module definition's partition."""
    rng = np.random.default_rng(seed)
    X_binned, _, _ = binned_problem(rng, n_rows, 3, max_bin, missing_fraction=0.2)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    features = rng.integers(0, 3, size=n_nodes)
    bits = rng.random((n_nodes, 256)) < rng.random((n_nodes, 1))
    bits[:, max_bin + 1 :] = False
    left_sets = np.packbits(bits, axis=1, bitorder="little").view("<u4").astype(np.uint32)
    default_left = rng.random(n_nodes) < 0.5
    split = (begins, ends, features, left_sets, default_left, max_bin)
    compiled, expected = sample_indices.copy(), sample_indices.copy()
    with jit.forced_variant(variant):
        partition_categorical(np.ascontiguousarray(X_binned.T), compiled, *split)
    categorical_definition(np, np.asarray, X_binned, expected, *split)
    np.testing.assert_array_equal(compiled, expected)
