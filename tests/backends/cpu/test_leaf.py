"""Tests of gpuboost.backends.cpu.leaf: adding leaf values, compiled, against the NumPy
reference and its naive loop (hypothesis)."""

import numpy as np
from _cases import binned_problem, random_segments
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends import CpuBackend, NumpyBackend
from gpuboost.backends.base import DeviceData
from gpuboost.backends.cpu.leaf import add_leaf_values, add_leaf_vectors
from gpuboost.backends.numpy.binning import binned_layout
from gpuboost.backends.numpy.leaf import add_leaf_values as reference_add
from gpuboost.backends.numpy.leaf import add_leaf_values_naive


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 500),
    n_segments=st.integers(0, 9),
    output=st.integers(0, 2),
)
def test_matches_the_reference_and_the_naive_loop(seed, n_rows, n_segments, output):
    rng = np.random.default_rng(seed)
    sample_indices = rng.permutation(n_rows)[: rng.integers(0, n_rows + 1)].astype(np.int32)
    begins, ends = random_segments(rng, len(sample_indices), n_segments)
    values = rng.choice([-0.0, 0.0, 1e-300, 1.5, -2.25], size=n_segments) * rng.normal()
    start = rng.normal(size=(n_rows, 3)) * rng.choice([0.0, 1.0, 1e20], size=(n_rows, 3))
    results = [start.copy() for _ in range(3)]
    for function, raw in zip((add_leaf_values, reference_add, add_leaf_values_naive), results):
        function(raw, output, sample_indices, begins, ends, values)
    for raw in results[1:]:
        np.testing.assert_array_equal(results[0].view(np.int64), raw.view(np.int64))


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 400),
    n_segments=st.integers(0, 9),
    n_outputs=st.integers(1, 4),
)
def test_leaf_vectors_are_each_outputs_leaf_values(seed, n_rows, n_segments, n_outputs):
    """A row's k margins updated at once: every output's add_leaf_values, bit for bit
    (the NumPy backend's default, output by output, too)."""
    rng = np.random.default_rng(seed)
    sample_indices = rng.permutation(n_rows)[: rng.integers(0, n_rows + 1)].astype(np.int32)
    begins, ends = random_segments(rng, len(sample_indices), n_segments)
    values = rng.choice([-0.0, 0.0, 1e-300, 1.5, -2.25], size=(n_segments, n_outputs))
    start = rng.normal(size=(n_rows, n_outputs)) * 1e20 ** rng.integers(0, 2)
    expected, compiled, default = start.copy(), start.copy(), start.copy()
    for output in range(n_outputs):
        reference_add(expected, output, sample_indices, begins, ends, values[:, output])
    add_leaf_vectors(compiled, sample_indices, begins, ends, values)
    NumpyBackend().add_leaf_vectors(default, sample_indices, begins, ends, values)
    for raw in (compiled, default):
        np.testing.assert_array_equal(raw.view(np.int64), expected.view(np.int64))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 400),
    n_segments=st.integers(0, 7),
    max_bin=st.sampled_from([2, 9, 255]),
)
def test_routing_unsplit_rows_matches_partition_then_add(seed, n_rows, n_segments, max_bin):
    """The compiled one-pass route-and-add gives the margins of its definition
    (Backend.add_split_leaf_values: partition, then add over the children's segments), bit
    for bit, and leaves the rows where they were."""
    rng = np.random.default_rng(seed)
    X_binned, _, _ = binned_problem(rng, n_rows, 3, max_bin, missing_fraction=0.2)
    data = DeviceData(n_rows, 3, max_bin + 1, max_bin, None, None, None, binned_layout(X_binned))
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_segments)
    features = rng.integers(0, 3, size=len(begins))
    bins = rng.integers(0, max_bin, size=len(begins))
    default_left = rng.random(len(begins)) < 0.5
    goes_left = [
        (X_binned[sample_indices[b:e], f] <= t) & (X_binned[sample_indices[b:e], f] != max_bin)
        | ((X_binned[sample_indices[b:e], f] == max_bin) & d)
        for b, e, f, t, d in zip(begins, ends, features, bins, default_left)
    ]
    n_left = np.array([int(left.sum()) for left in goes_left], dtype=np.int64)
    left_values, right_values = rng.normal(size=(2, len(begins)))
    start = rng.normal(size=(n_rows, 2))
    args = (begins, ends, n_left, features, bins, default_left, left_values, right_values)
    compiled, reference = start.copy(), start.copy()
    routed = sample_indices.copy()
    CpuBackend().add_split_leaf_values(data, compiled, 1, routed, *args)
    NumpyBackend().add_split_leaf_values(data, reference, 1, sample_indices.copy(), *args)
    np.testing.assert_array_equal(compiled.view(np.int64), reference.view(np.int64))
    np.testing.assert_array_equal(routed, sample_indices)
