"""Tests of gpuboost.backends.numpy.segment_reduce (sequential per-segment sums); the
CUDA kernel ``cuda/segment_reduce.cu``: tests/backends/cuda/test_segment_reduce.py."""

import numpy as np
import pytest
from _cases import segment_case
from _parity import bits

from gpuboost.backends.numpy.segment_reduce import segment_sums, segment_sums_naive


def test_numpy_sums_equal_the_sequential_loop():
    values, sample_indices, begins, ends = segment_case(1)
    got = segment_sums(values, sample_indices, begins, ends)
    expected = segment_sums_naive(values, sample_indices, begins, ends)
    np.testing.assert_array_equal(bits(got), bits(expected))
    assert got[1] == 0.0 and got[2] == values[sample_indices[begins[2]]]
    # Not vacuous: the order matters for these values (a pairwise sum differs somewhere).
    pairwise = [np.sum(values[sample_indices[b:e]]) for b, e in zip(begins, ends)]
    assert not np.array_equal(bits(pairwise), bits(expected))


def test_all_zero_and_signed_zero_segments_sum_to_plus_zero():
    values = np.array([-0.0, -0.0, 1.0, -1.0])
    sample_indices = np.arange(4, dtype=np.int32)
    got = segment_sums(values, sample_indices, [0, 2], [2, 4])
    np.testing.assert_array_equal(bits(got), bits(np.zeros(2)))
    np.testing.assert_array_equal(
        bits(got), bits(segment_sums_naive(values, sample_indices, [0, 2], [2, 4]))
    )


@pytest.mark.parametrize("begins, ends", [([0], [5]), ([-1], [1]), ([2], [1]), ([0, 1], [1])])
def test_bad_segments_raise(begins, ends):
    with pytest.raises(ValueError):
        segment_sums(np.zeros(4), np.arange(4, dtype=np.int32), begins, ends)
