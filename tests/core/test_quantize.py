"""Tests of gpuboost.core.quantize: the fixed-point determinism contract."""

import numpy as np
import pytest

from gpuboost.core.dtypes import GRAD_QUANT_DTYPE, GRAD_QUANT_MAX
from gpuboost.core.quantize import dequantize, quantization_scale, quantize


def test_scale_rule():
    assert quantization_scale(2.0) == GRAD_QUANT_MAX / 2.0
    assert quantization_scale(0.0) == 1.0
    values = np.array([0.5, -3.0, 1.25])
    quantized, scale = quantize(np, values)
    assert scale == float(GRAD_QUANT_MAX) / 3.0
    np.testing.assert_array_equal(quantized, np.rint(values * scale).astype(np.int32))


def test_output_dtype_and_bounds():
    rng = np.random.default_rng(0)
    values = rng.normal(size=1000) * 1e3
    quantized, scale = quantize(np, values)
    assert quantized.dtype == GRAD_QUANT_DTYPE and quantized.shape == values.shape
    assert np.abs(quantized).max() == GRAD_QUANT_MAX
    assert (
        int(quantized[np.argmax(np.abs(values))])
        == np.sign(values[np.argmax(np.abs(values))]) * GRAD_QUANT_MAX
    )


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
    # The smallest magnitude whose scale is finite still maps onto GRAD_QUANT_MAX.
    quantized, scale = quantize(np, np.array([1e-290, -5e-291]))
    assert np.isfinite(scale) and quantized[0] == GRAD_QUANT_MAX
