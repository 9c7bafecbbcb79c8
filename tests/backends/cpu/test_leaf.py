"""Tests of gpuboost.backends.cpu.leaf: adding leaf values, compiled, against the NumPy
reference and its naive loop (hypothesis)."""

import numpy as np
from _cases import random_segments
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends.cpu.leaf import add_leaf_values
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
