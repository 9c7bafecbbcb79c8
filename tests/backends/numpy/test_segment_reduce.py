"""Tests of gpuboost.backends.numpy.segment_reduce (sequential per-segment sums); the
CUDA kernel ``cuda/segment_reduce.cu``: tests/backends/cuda/test_segment_reduce.py."""

import numpy as np
import pytest

from gpuboost.backends.numpy.segment_reduce import segment_sums, segment_sums_naive


def _bits(array):
    return np.ascontiguousarray(array, dtype=np.float64).view(np.int64)


def _case(seed, n_rows=3000, n_segments=7):
    """Values whose sum depends on the order of addition, a permuted partition with
    segments of every size (empty, one row, more than one kernel block of segments)."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n_rows) * 10.0 ** rng.integers(-8, 9, size=n_rows)
    sample_indices = rng.permutation(n_rows)[: n_rows - 100].astype(np.int32)
    cuts = np.sort(
        rng.choice(np.arange(1, len(sample_indices)), size=n_segments - 1, replace=False)
    )
    bounds = np.concatenate([[0], cuts, [len(sample_indices)]])
    begins, ends = bounds[:-1].copy(), bounds[1:].copy()
    ends[1] = begins[1]  # an empty segment
    ends[2] = begins[2] + 1  # a one-row segment
    return values, sample_indices, begins, ends


def test_numpy_sums_equal_the_sequential_loop():
    values, sample_indices, begins, ends = _case(1)
    got = segment_sums(values, sample_indices, begins, ends)
    expected = segment_sums_naive(values, sample_indices, begins, ends)
    np.testing.assert_array_equal(_bits(got), _bits(expected))
    assert got[1] == 0.0 and got[2] == values[sample_indices[begins[2]]]
    # Not vacuous: the order matters for these values (a pairwise sum differs somewhere).
    pairwise = [np.sum(values[sample_indices[b:e]]) for b, e in zip(begins, ends)]
    assert not np.array_equal(_bits(pairwise), _bits(expected))


def test_all_zero_and_signed_zero_segments_sum_to_plus_zero():
    values = np.array([-0.0, -0.0, 1.0, -1.0])
    sample_indices = np.arange(4, dtype=np.int32)
    got = segment_sums(values, sample_indices, [0, 2], [2, 4])
    np.testing.assert_array_equal(_bits(got), _bits(np.zeros(2)))
    np.testing.assert_array_equal(
        _bits(got), _bits(segment_sums_naive(values, sample_indices, [0, 2], [2, 4]))
    )


@pytest.mark.parametrize("begins, ends", [([0], [5]), ([-1], [1]), ([2], [1]), ([0, 1], [1])])
def test_bad_segments_raise(begins, ends):
    with pytest.raises(ValueError):
        segment_sums(np.zeros(4), np.arange(4, dtype=np.int32), begins, ends)
