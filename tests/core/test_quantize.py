"""Tests of gpuboost.core.quantize: the fixed-point determinism contract."""

import numpy as np
import pytest

from gpuboost.core.dtypes import GRAD_QUANT_DTYPE, GRAD_QUANT_MAX
from gpuboost.core.quantize import dequantize, is_power_of_two, quantization_scale, quantize


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
