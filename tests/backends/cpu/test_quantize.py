"""Tests of gpuboost.backends.cpu.quantize: compiled quantization against the reference,
gpuboost.core.quantize.quantize (hypothesis), ties rounding half to even."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gpuboost.backends.cpu.jit import forced_variant
from gpuboost.backends.cpu.quantize import dispersion_sums, quantize, quantize_pairs
from gpuboost.core.dtypes import GRAD_QUANT_DTYPE, GRAD_QUANT_MAX
from gpuboost.core.quantize import dispersion_sums as reference_dispersion_sums
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


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 300),
    n_outputs=st.integers(1, 5),
    n_threads=st.integers(1, 5),
)
def test_pairs_are_every_columns_quantization(seed, n_rows, n_outputs, n_threads):
    """Each output's gradient and hessian column as the reference quantizes it, the
    columns side by side in each row (g_0, h_0, g_1, h_1, ...)."""
    rng = np.random.default_rng(seed)
    scale = rng.choice([0.0, 1e-300, 1.0, 1e300], size=n_outputs)
    gradients = rng.normal(size=(n_rows, n_outputs)) * scale
    hessians = rng.random((n_rows, n_outputs)) * scale[::-1]
    gradients[rng.random(gradients.shape) < 0.1] = -0.0
    pairs, scales = quantize_pairs(gradients, hessians, n_threads)
    assert pairs.dtype == GRAD_QUANT_DTYPE and pairs.shape == (n_rows, 2 * n_outputs)
    for output in range(n_outputs):
        for field, values in enumerate((gradients[:, output], hessians[:, output])):
            expected, expected_scale = reference_quantize(np, values.copy())
            assert scales[output][field] == expected_scale
            np.testing.assert_array_equal(pairs[:, 2 * output + field], expected)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("column", [0, 3])
def test_non_finite_pairs_are_refused_as_by_the_reference(bad, column):
    gradients, hessians = np.zeros((100, 2)), np.ones((100, 2))
    (gradients if column < 2 else hessians)[63, column % 2] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        quantize_pairs(gradients, hessians, 3)


@pytest.mark.parametrize("variant", ["serial", "parallel"])
def test_dispersion_sums_are_the_references(variant):
    """The compiled pass gives the reference's four integers: extreme magnitudes
    (+-2**30, negative low parts), a subset of rows in any order, every row (None), no
    row; serial and parallel."""
    rng = np.random.default_rng(9)
    q_g = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=3001).astype(GRAD_QUANT_DTYPE)
    q_g[:3] = [GRAD_QUANT_MAX, -GRAD_QUANT_MAX, -1]
    q_h = rng.integers(0, GRAD_QUANT_MAX + 1, size=3001).astype(GRAD_QUANT_DTYPE)
    subsets = [
        rng.permutation(3001)[:1700].astype(np.int32),
        np.arange(3001, dtype=np.int32),
        None,
        np.zeros(0, dtype=np.int32),
    ]
    with forced_variant(variant):
        for rows in subsets:
            assert dispersion_sums(q_g, q_h, rows) == reference_dispersion_sums(np, q_g, q_h, rows)
