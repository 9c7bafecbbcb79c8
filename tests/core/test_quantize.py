"""Tests of gpuboost.core.quantize: the fixed-point determinism contract."""

import numpy as np
import pytest

from gpuboost.core.dtypes import GRAD_QUANT_DTYPE, GRAD_QUANT_MAX
from gpuboost.core.quantize import (
    GradientQuantiser,
    dequantize,
    dispersion_sums,
    is_power_of_two,
    quantization_scale,
    quantize,
)


def test_scale_rule():
    assert quantization_scale(2.0) == GRAD_QUANT_MAX / 2.0
    assert quantization_scale(0.0) == 1.0
    values = np.array([0.5, -3.0, 1.25])
    quantized, scale = quantize(np, values)
    # The largest power of two at most 2**30 / 3.
    assert scale == 2.0**28
    np.testing.assert_array_equal(quantized, np.rint(values * scale).astype(np.int32))


def test_scales_are_the_largest_powers_of_two_below_the_ratio():
    rng = np.random.default_rng(3)
    magnitudes = np.concatenate(
        [10.0 ** rng.uniform(-280, 280, size=2000), 2.0 ** np.arange(-900, 900, 7.0)]
    )
    for max_abs in magnitudes:
        scale = quantization_scale(max_abs)
        ratio = GRAD_QUANT_MAX / max_abs
        assert is_power_of_two(scale)
        assert scale <= ratio < 2.0 * scale
        assert GRAD_QUANT_MAX / 2 < max_abs * scale <= GRAD_QUANT_MAX
    # Division by a power of two equals multiplication by its reciprocal: what lets the
    # compiled scan multiply where the reference divides.
    sums = rng.integers(-(2**62), 2**62, size=5000).astype(np.float64)
    for scale in (2.0**-40, 2.0**-3, 1.0, 2.0**29, 2.0**30, 2.0**1000):
        np.testing.assert_array_equal(sums / scale, sums * (1.0 / scale))
    assert not any(is_power_of_two(x) for x in (0.0, -2.0, 3.0, 2.0**30 / 3, np.inf, np.nan))


def test_output_dtype_and_bounds():
    rng = np.random.default_rng(0)
    values = rng.normal(size=1000) * 1e3
    quantized, scale = quantize(np, values)
    assert quantized.dtype == GRAD_QUANT_DTYPE and quantized.shape == values.shape
    largest = np.argmax(np.abs(values))
    assert np.abs(quantized).max() == abs(int(quantized[largest]))
    assert GRAD_QUANT_MAX / 2 < abs(int(quantized[largest])) <= GRAD_QUANT_MAX
    assert np.sign(quantized[largest]) == np.sign(values[largest])


def test_zero_column():
    quantized, scale = quantize(np, np.zeros(5))
    assert scale == 1.0
    np.testing.assert_array_equal(quantized, np.zeros(5, dtype=np.int32))
    quantized, scale = quantize(np, np.zeros(0))
    assert scale == 1.0 and quantized.shape == (0,)


def test_rint_rounds_half_to_even():
    # max |v| = 2**30 gives scale 1.0, so the products are the values themselves.
    values = np.array([float(GRAD_QUANT_MAX), 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5000001])
    quantized, scale = quantize(np, values)
    assert scale == 1.0
    np.testing.assert_array_equal(quantized, [GRAD_QUANT_MAX, 0, 2, 2, 0, -2, -2, 4])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_raises_value_error(bad):
    with pytest.raises(ValueError, match="non-finite"):
        quantize(np, np.array([1.0, bad, 2.0]))
    with pytest.raises(ValueError):
        quantization_scale(bad)


def test_integer_sums_do_not_depend_on_row_order():
    rng = np.random.default_rng(1)
    values = rng.normal(size=5000) * np.exp(rng.normal(size=5000) * 3)
    quantized, scale = quantize(np, values)
    permutation = rng.permutation(len(values))
    quantized_permuted, scale_permuted = quantize(np, values[permutation])
    assert scale_permuted == scale
    np.testing.assert_array_equal(quantized_permuted, quantized[permutation])
    total = quantized.astype(np.int64).sum()
    for _ in range(5):
        order = rng.permutation(len(values))
        assert quantized[order].astype(np.int64).cumsum()[-1] == total
        # Float sums of the same values do depend on the order; the recovered
        # value of the integer sum does not.
        assert dequantize(quantized[order].astype(np.int64).sum(), scale) == dequantize(
            total, scale
        )


def test_dequantized_sums_are_close_to_float_sums():
    rng = np.random.default_rng(2)
    values = rng.uniform(-1, 1, size=2000)
    quantized, scale = quantize(np, values)
    recovered = dequantize(quantized.astype(np.int64).sum(), scale)
    # Each row is off by at most half a quantum.
    assert abs(recovered - values.sum()) <= len(values) * 0.5 / scale
    assert isinstance(recovered, np.float64)
    assert dequantize(7, 2.0) == 3.5


def test_sums_of_many_rows_stay_exact_in_int64():
    values = np.full(10_000, -1.0)
    quantized, scale = quantize(np, values)
    total = quantized.astype(np.int64).sum()
    assert total == -10_000 * GRAD_QUANT_MAX
    assert dequantize(total, scale) == -10_000.0


def test_subnormal_magnitudes_quantize_to_zeros():
    # GRAD_QUANT_MAX / max|v| would overflow: the column is numerically zero.
    values = np.array([1e-310, -1e-310, 0.0])
    quantized, scale = quantize(np, values)
    assert scale == 1.0
    np.testing.assert_array_equal(quantized, np.zeros(3, dtype=np.int32))
    assert quantization_scale(1e-310) == 1.0
    # A tiny magnitude whose scale is finite still maps into the top bit.
    quantized, scale = quantize(np, np.array([1e-290, -5e-291]))
    assert np.isfinite(scale) and GRAD_QUANT_MAX / 2 < quantized[0] <= GRAD_QUANT_MAX


def _square_sum(parts):
    high_high, high_low, low_low, _ = parts
    return (high_high << 30) + (high_low << 16) + low_low


def test_dispersion_sums_are_the_exact_sum_of_squares_in_any_order_and_any_blocks():
    """Python's integers as the reference, the extreme magnitudes included (+-2**30, the
    negative ones' floor parts); a permutation and a split into two blocks give the same
    parts' total; ``rows`` picks rows."""
    rng = np.random.default_rng(5)
    q_g = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=5000).astype(GRAD_QUANT_DTYPE)
    q_g[:4] = [GRAD_QUANT_MAX, -GRAD_QUANT_MAX, -1, -(2**15)]
    q_h = rng.integers(0, GRAD_QUANT_MAX + 1, size=5000).astype(GRAD_QUANT_DTYPE)
    parts = dispersion_sums(np, q_g, q_h)
    assert _square_sum(parts) == sum(int(v) ** 2 for v in q_g)
    assert parts[3] == sum(int(v) for v in q_h)
    order = rng.permutation(5000)
    assert _square_sum(dispersion_sums(np, q_g[order], q_h[order])) == _square_sum(parts)
    blocks = [
        dispersion_sums(np, q_g[:1234], q_h[:1234]),
        dispersion_sums(np, q_g[1234:], q_h[1234:]),
    ]
    assert tuple(map(sum, zip(*blocks))) == parts
    rows = np.array([3, 0, 7], dtype=np.int32)
    picked = dispersion_sums(np, q_g, q_h, rows)
    assert _square_sum(picked) == sum(int(q_g[r]) ** 2 for r in rows)
    assert picked[3] == sum(int(q_h[r]) for r in rows)


@pytest.mark.parametrize("chunk_rows", [1, 7, 1234, 4999, 5000, 1 << 20])
def test_dispersion_sums_in_chunks_are_those_of_one_pass(chunk_rows):
    """The reference takes the rows a chunk at a time (bounded temporaries on a device):
    every chunk size gives the parts of one pass, with and without ``rows``; no rows
    give zeros."""
    rng = np.random.default_rng(6)
    q_g = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=5000).astype(GRAD_QUANT_DTYPE)
    q_h = rng.integers(0, GRAD_QUANT_MAX + 1, size=5000).astype(GRAD_QUANT_DTYPE)
    rows = rng.permutation(5000)[:3001].astype(np.int32)
    exact = (
        sum(int(v) ** 2 for v in q_g),
        sum(int(v) for v in q_h),
        sum(int(q_g[r]) ** 2 for r in rows),
        sum(int(q_h[r]) for r in rows),
    )
    every = dispersion_sums(np, q_g, q_h, chunk_rows=chunk_rows)
    picked = dispersion_sums(np, q_g, q_h, rows, chunk_rows=chunk_rows)
    assert (_square_sum(every), every[3], _square_sum(picked), picked[3]) == exact
    assert all(isinstance(part, int) for part in every + picked)
    none = np.zeros(0, dtype=np.int32)
    assert dispersion_sums(np, q_g, q_h, none, chunk_rows=chunk_rows) == (0, 0, 0, 0)


def test_dispersion_is_sum_g2_over_sum_h_of_the_dequantized_values():
    """Squared error's residuals (h = 1): their mean square, to the quantization's
    precision; exactly representable values give the exact ratio; no hessian gives 0; a
    scale whose square overflows float64 (tiny gradients) still gives their dispersion."""
    rng = np.random.default_rng(6)
    g = rng.normal(scale=3.0, size=2000)
    h = np.ones(2000)
    (q_g, s_g), (q_h, s_h) = quantize(np, g), quantize(np, h)
    phi = GradientQuantiser(s_g, s_h).dispersion(dispersion_sums(np, q_g, q_h))
    assert phi == pytest.approx(np.mean(g * g), rel=1e-8)
    exact = GradientQuantiser(4.0, 2.0).dispersion(
        dispersion_sums(np, np.array([4, -8], np.int32), np.array([2, 6], np.int32))
    )
    assert exact == ((16 + 64) / 16.0) / (8 / 2.0)
    assert GradientQuantiser(1.0, 1.0).dispersion((5, 0, 1, 0)) == 0.0
    tiny = np.full(10, 1e-150)
    (q_g, s_g), (q_h, s_h) = quantize(np, tiny), quantize(np, np.ones(10))
    assert s_g * s_g == np.inf
    phi = GradientQuantiser(s_g, s_h).dispersion(dispersion_sums(np, q_g, q_h))
    assert phi == pytest.approx(1e-300, rel=1e-8)
