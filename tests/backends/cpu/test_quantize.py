"""Tests of gpuboost.backends.cpu.quantize: compiled quantization against the reference,
gpuboost.core.quantize.quantize (hypothesis), ties rounding half to even."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gpuboost.backends.cpu.quantize import quantize
from gpuboost.core.dtypes import GRAD_QUANT_DTYPE, GRAD_QUANT_MAX
from gpuboost.core.quantize import quantize as reference_quantize


@settings(max_examples=80, deadline=None)
@given(
    values=hnp.arrays(
        np.float64,
        st.integers(0, 300),
        elements=st.one_of(
            st.floats(allow_nan=False, allow_infinity=False, width=64),
            st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.5, 2.5, 5e-324, -5e-324]),
        ),
    ),
    n_threads=st.integers(1, 5),
)
def test_matches_the_reference(values, n_threads):
    quantized, scale = quantize(values, n_threads)
    expected, expected_scale = reference_quantize(np, values)
    assert scale == expected_scale
    assert quantized.dtype == GRAD_QUANT_DTYPE
    np.testing.assert_array_equal(quantized, expected)


def test_ties_round_half_to_even():
    # max |v| = 2**30, so the scale is 1 and v * scale is v itself.
    values = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, float(GRAD_QUANT_MAX)])
    quantized, scale = quantize(values, 2)
    assert scale == 1.0
    np.testing.assert_array_equal(quantized, [0, 2, 2, 0, -2, -2, GRAD_QUANT_MAX])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused_as_by_the_reference(bad):
    values = np.zeros(100)
    values[63] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        quantize(values, 3)
    with pytest.raises(ValueError, match="NaN or inf"):
        reference_quantize(np, values)
