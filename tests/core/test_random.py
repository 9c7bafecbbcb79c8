"""Tests for gpuboost.core.random: the counter-based RNG shared by NumPy and CuPy."""

import math
import warnings

import numpy as np
import pytest

from gpuboost.core import random as gb_random

UINT64_MASK = (1 << 64) - 1
#: Published first output of SplitMix64 seeded with state 0.
SPLITMIX64_OF_ZERO = 0xE220A8397B1DCDAF
#: Values at the edges of the uint64 range and of its 32-bit halves.
EDGE_UINT64_VALUES = [
    0,
    1,
    2,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32,
    2**53,
    2**63 - 1,
    2**63,
    2**64 - 2,
    2**64 - 1,
]
#: (seed, stream) pairs covering small, typical and extreme values.
SEED_STREAM_PAIRS = [
    (0, 0),
    (0, 1),
    (1, 0),
    (42, 7),
    (2**32 + 5, 2**40 + 3),
    (2**64 - 1, 2**64 - 1),
]
#: How many standard deviations a statistic may stray before a test fails.
SIGMA_BOUND = 5.0


def reference_splitmix64(x):
    """SplitMix64 step on Python ints, written independently of gpuboost."""
    z = (x + 0x9E3779B97F4A7C15) & UINT64_MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & UINT64_MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & UINT64_MASK
    return z ^ (z >> 31)


def reference_row_uniform(seed, stream, row):
    """The documented row formula on Python ints and floats."""
    key = reference_splitmix64(reference_splitmix64(seed) ^ stream)
    row_key = (key + row * 0x9E3779B97F4A7C15) & UINT64_MASK
    bits = reference_splitmix64(row_key)
    return float(bits >> 11) * 2.0**-53


def random_uint64_values(count, seed=12345):
    """``count`` pseudo-random uint64 values as Python ints (fixed seed)."""
    generator = np.random.default_rng(seed)
    values = generator.integers(0, 2**64, size=count, dtype=np.uint64, endpoint=False)
    return [int(v) for v in values]


def test_splitmix64_known_value():
    assert int(gb_random.splitmix64(np, np.array([0], dtype=np.uint64))[0]) == SPLITMIX64_OF_ZERO
    assert reference_splitmix64(0) == SPLITMIX64_OF_ZERO


def test_splitmix64_matches_python_reference():
    values = EDGE_UINT64_VALUES + random_uint64_values(2000)
    result = gb_random.splitmix64(np, np.array(values, dtype=np.uint64))
    assert result.dtype == np.uint64
    assert [int(v) for v in result] == [reference_splitmix64(v) for v in values]


@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3)])
def test_splitmix64_keeps_shape_without_overflow_warnings(shape):
    values = np.full(shape, 2**64 - 1, dtype=np.uint64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = gb_random.splitmix64(np, values)
    assert result.shape == shape
    assert result.dtype == np.uint64
    assert all(int(v) == reference_splitmix64(2**64 - 1) for v in result.reshape(-1))


def test_splitmix64_is_injective_on_sample():
    values = np.array(random_uint64_values(5000, seed=99) + EDGE_UINT64_VALUES, dtype=np.uint64)
    values = np.unique(values)
    assert np.unique(gb_random.splitmix64(np, values)).size == values.size


@pytest.mark.parametrize("seed, stream", SEED_STREAM_PAIRS)
def test_stream_key_matches_reference(seed, stream):
    expected = reference_splitmix64(reference_splitmix64(seed) ^ stream)
    assert gb_random.stream_key(seed, stream) == expected


@pytest.mark.parametrize("seed, stream", SEED_STREAM_PAIRS)
def test_row_uniforms_match_reference_formula(seed, stream):
    n_rows = 300
    uniforms = gb_random.row_uniforms(np, seed, stream, n_rows)
    expected = [reference_row_uniform(seed, stream, row) for row in range(n_rows)]
    # Bit-for-bit equality, not closeness.
    assert uniforms.tolist() == expected


def test_row_uniforms_at_large_row_ids_match_reference():
    rows = np.array([0, 2**31 - 1, 2**32 + 17, 2**53 + 1, 2**63, 2**64 - 1], dtype=np.uint64)
    uniforms = gb_random.row_uniforms_at(np, 3, 4, rows)
    assert uniforms.tolist() == [reference_row_uniform(3, 4, int(r)) for r in rows]


def test_row_uniforms_range_dtype_and_shape():
    uniforms = gb_random.row_uniforms(np, 2024, 1, 100_000)
    assert uniforms.dtype == np.float64
    assert uniforms.shape == (100_000,)
    assert np.all(uniforms >= 0.0)
    assert np.all(uniforms < 1.0)
    # The largest representable output, from a hash of all ones, is below 1.
    largest_bits = (2**64 - 1) >> (64 - gb_random.FLOAT64_MANTISSA_BITS)
    assert float(largest_bits) * gb_random.UNIFORM_SCALE < 1.0


def test_row_uniforms_empty():
    assert gb_random.row_uniforms(np, 1, 2, 0).shape == (0,)
    assert gb_random.row_uniforms_at(np, 1, 2, np.array([], dtype=np.int32)).shape == (0,)
    assert gb_random.row_uniforms_at(np, 1, 2, []).shape == (0,)


def test_row_uniforms_deterministic():
    first = gb_random.row_uniforms(np, 7, 3, 10_000)
    second = gb_random.row_uniforms(np, 7, 3, 10_000)
    np.testing.assert_array_equal(first, second)


def test_different_seeds_and_streams_differ():
    n_rows = 10_000
    base = gb_random.row_uniforms(np, 7, 3, n_rows)
    for seed, stream in [(8, 3), (7, 4), (3, 7), (7 + 2**32, 3)]:
        other = gb_random.row_uniforms(np, seed, stream, n_rows)
        # Equal 53-bit values by chance are practically impossible.
        assert np.count_nonzero(other == base) == 0, (seed, stream)


def test_streams_are_uncorrelated():
    n_rows = 100_000
    base = gb_random.row_uniforms(np, 11, 0, n_rows)
    for stream in (1, 2, 1000):
        other = gb_random.row_uniforms(np, 11, stream, n_rows)
        correlation = np.corrcoef(base, other)[0, 1]
        assert abs(correlation) < SIGMA_BOUND / math.sqrt(n_rows), stream
    # Consecutive rows of one stream are uncorrelated too.
    lag_correlation = np.corrcoef(base[:-1], base[1:])[0, 1]
    assert abs(lag_correlation) < SIGMA_BOUND / math.sqrt(n_rows)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_row_uniforms_at_equals_full_indexed(dtype):
    n_rows = 5000
    full = gb_random.row_uniforms(np, 5, 9, n_rows)
    generator = np.random.default_rng(0)
    # Unordered, with duplicates, and including the first and last rows.
    indices = np.concatenate([generator.integers(0, n_rows, size=1000), [0, n_rows - 1]])
    indices = indices.astype(dtype)
    np.testing.assert_array_equal(gb_random.row_uniforms_at(np, 5, 9, indices), full[indices])


def test_row_uniforms_at_keeps_shape():
    full = gb_random.row_uniforms(np, 5, 9, 12)
    indices = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::-1]
    result = gb_random.row_uniforms_at(np, 5, 9, indices)
    assert result.shape == (3, 4)
    np.testing.assert_array_equal(result, full[indices])
    assert float(gb_random.row_uniforms_at(np, 5, 9, 3)) == full[3]


def test_uniformity_bucket_counts():
    n_rows = 200_000
    n_buckets = 20
    bucket_probability = 1.0 / n_buckets
    expected = n_rows * bucket_probability
    sigma = math.sqrt(n_rows * bucket_probability * (1.0 - bucket_probability))
    for seed, stream in [(0, 0), (123, 45)]:
        uniforms = gb_random.row_uniforms(np, seed, stream, n_rows)
        counts = np.bincount((uniforms * n_buckets).astype(np.int64), minlength=n_buckets)
        assert counts.size == n_buckets
        assert np.all(np.abs(counts - expected) < SIGMA_BOUND * sigma), counts
        # Chi-square with n_buckets - 1 degrees of freedom: mean k, variance 2k.
        degrees_of_freedom = n_buckets - 1
        chi_square = float(np.sum((counts - expected) ** 2 / expected))
        chi_square_bound = degrees_of_freedom + SIGMA_BOUND * math.sqrt(2 * degrees_of_freedom)
        assert chi_square < chi_square_bound
        # The mean of U(0, 1) is 1/2 with variance 1/12.
        mean_sigma = math.sqrt(1.0 / 12.0 / n_rows)
        assert abs(uniforms.mean() - 0.5) < SIGMA_BOUND * mean_sigma


def test_low_bits_are_uniform():
    """The finest-grained bits of the output are not stuck."""
    n_rows = 100_000
    uniforms = gb_random.row_uniforms(np, 77, 1, n_rows)
    lowest_bit = (uniforms * 2.0**gb_random.FLOAT64_MANTISSA_BITS).astype(np.uint64) & np.uint64(1)
    ones = int(lowest_bit.sum())
    assert abs(ones - n_rows / 2) < SIGMA_BOUND * math.sqrt(n_rows / 4)


def test_host_rng_deterministic_and_independent():
    draws = gb_random.host_rng(3, 1, 2).random(100)
    np.testing.assert_array_equal(draws, gb_random.host_rng(3, 1, 2).random(100))
    for other in [(4, 1, 2), (3, 2, 1), (3, 1), (3, 1, 2, 0)]:
        assert not np.array_equal(draws, gb_random.host_rng(*other).random(100)), other


@pytest.mark.parametrize(
    "first, second",
    [
        ((3, 1, 2), (3, 1, 2, 0)),  # trailing zero
        ((2**32,), (0, 1)),  # a 64-bit value vs. two 32-bit words
        ((0,), (0, 0)),
        ((5, 2**32 + 1), (5, 1, 1)),
    ],
)
def test_host_rng_tuples_that_plain_seed_sequence_confuses(first, second):
    """Plain ``SeedSequence(tuple)`` maps these pairs to the same generator."""
    draws_first = gb_random.host_rng(*first).integers(0, 2**62, 20)
    draws_second = gb_random.host_rng(*second).integers(0, 2**62, 20)
    assert not np.array_equal(draws_first, draws_second)


def test_host_rng_is_pcg64_of_documented_entropy():
    seed, stream_ids = 2**40 + 9, (8, 2**64 - 1)
    entropy = [3, 9, 2**8, 8, 0, 2**32 - 1, 2**32 - 1]
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
    actual = gb_random.host_rng(seed, *stream_ids)
    assert isinstance(actual.bit_generator, np.random.PCG64)
    np.testing.assert_array_equal(actual.integers(0, 1000, 50), expected.integers(0, 1000, 50))


def test_accepts_numpy_integers():
    np.testing.assert_array_equal(
        gb_random.row_uniforms(np, np.int64(5), np.uint32(2), np.int64(10)),
        gb_random.row_uniforms(np, 5, 2, 10),
    )
    gb_random.host_rng(np.uint64(2**64 - 1), np.int32(3))


@pytest.mark.parametrize(
    "bad_value, error",
    [
        (-1, ValueError),
        (2**64, ValueError),
        (1.5, TypeError),
        (True, TypeError),
        ("1", TypeError),
    ],
)
def test_invalid_seed_or_stream_rejected(bad_value, error):
    with pytest.raises(error):
        gb_random.row_uniforms(np, bad_value, 0, 3)
    with pytest.raises(error):
        gb_random.row_uniforms(np, 0, bad_value, 3)
    with pytest.raises(error):
        gb_random.host_rng(bad_value)
    with pytest.raises(error):
        gb_random.host_rng(0, bad_value)


def test_invalid_row_arguments_rejected():
    with pytest.raises(ValueError):
        gb_random.row_uniforms(np, 0, 0, -1)
    with pytest.raises(TypeError):
        gb_random.row_uniforms(np, 0, 0, 2.0)
    with pytest.raises(TypeError):
        gb_random.row_uniforms_at(np, 0, 0, np.array([0.0, 1.0]))


def _cupy_or_skip():
    """Return cupy if it is installed and sees a GPU, otherwise skip the test."""
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as error:  # no driver, no device: CuPy raises its own types
        pytest.skip(f"no usable CUDA device: {error}")
    return cupy


@pytest.mark.gpu
def test_cupy_matches_numpy_bit_for_bit():
    cupy = _cupy_or_skip()
    n_rows = 100_003
    for seed, stream in SEED_STREAM_PAIRS:
        on_host = gb_random.row_uniforms(np, seed, stream, n_rows)
        on_device = gb_random.row_uniforms(cupy, seed, stream, n_rows)
        np.testing.assert_array_equal(cupy.asnumpy(on_device), on_host)
    indices = np.random.default_rng(1).integers(0, n_rows, 4096).astype(np.int32)
    np.testing.assert_array_equal(
        cupy.asnumpy(gb_random.row_uniforms_at(cupy, 3, 4, cupy.asarray(indices))),
        gb_random.row_uniforms_at(np, 3, 4, indices),
    )
    values = np.array(EDGE_UINT64_VALUES + random_uint64_values(1000), dtype=np.uint64)
    np.testing.assert_array_equal(
        cupy.asnumpy(gb_random.splitmix64(cupy, cupy.asarray(values))),
        gb_random.splitmix64(np, values),
    )
