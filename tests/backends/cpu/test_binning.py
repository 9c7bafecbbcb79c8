"""Tests of gpuboost.backends.cpu.binning: compiled binning against ``BinMapper.transform``
(the reference) and its naive loop, on any floats (hypothesis), and the backend's own
binning of a Dataset."""

import numpy as np
import pytest
from _cases import messy_features
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gpuboost import Dataset
from gpuboost.backends import CpuBackend
from gpuboost.backends.cpu.binning import TRANSPOSE_TILE, bin_features, binned_layout
from gpuboost.backends.numpy.binning import binned_layout as binned_layout_numpy
from gpuboost.core.bin_edges import FLOAT64_MAX
from gpuboost.data.binning import BinMapper

_float_or_special = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, FLOAT64_MAX, -FLOAT64_MAX]),
)


@settings(max_examples=60, deadline=None)
@given(
    X=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
        elements=_float_or_special,
    ),
    max_bin=st.integers(2, 255),
    data=st.data(),
)
def test_matches_the_reference_and_the_naive_loop(X, max_bin, data):
    bin_mapper = BinMapper(max_bin=max_bin).fit(X)
    other = data.draw(
        hnp.arrays(
            np.float64, (data.draw(st.integers(0, 12)), X.shape[1]), elements=_float_or_special
        )
    )
    for values in (X, other):
        compiled = bin_features(values, bin_mapper)
        assert compiled.dtype == np.uint8 and compiled.flags.c_contiguous
        np.testing.assert_array_equal(compiled, bin_mapper.transform(values))
        np.testing.assert_array_equal(compiled, bin_mapper.transform_naive(values))


def test_float32_and_strided_features_bin_as_their_float64_values():
    X = messy_features(2000, seed=4)
    bin_mapper = BinMapper(max_bin=63).fit(X)
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(
        bin_features(X32, bin_mapper), bin_mapper.transform(X32.astype(np.float64))
    )
    fortran = np.asfortranarray(X)
    np.testing.assert_array_equal(bin_features(fortran, bin_mapper), bin_mapper.transform(X))


def test_wrong_number_of_features_is_refused():
    bin_mapper = BinMapper(max_bin=15).fit(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="3 features"):
        bin_features(np.zeros((5, 2)), bin_mapper)


def test_the_backend_uses_the_datasets_compiled_bins():
    X = messy_features(500, seed=5)
    dataset = Dataset(X, label=np.zeros(500), max_bin=31)
    backend = CpuBackend()
    data = backend.prepare(dataset)
    assert data.arrays["X_binned"] is dataset.X_binned  # binned once, shared
    np.testing.assert_array_equal(dataset.X_binned, dataset.bin_mapper.transform(X))
    rebinned = backend.rebin(data, X[::-1].copy(), dataset.bin_mapper)
    np.testing.assert_array_equal(rebinned.arrays["X_binned"], dataset.X_binned[::-1])
    assert rebinned.label is data.label


def test_construct_bins_the_rows_once_with_the_compiled_kernel(monkeypatch):
    X = messy_features(300, seed=6)
    dataset = Dataset(X, label=np.zeros(300))
    assert dataset.construct(max_bin=15) is dataset
    assert dataset.bin_mapper.max_bin == 15 and dataset._X_binned is not None
    np.testing.assert_array_equal(dataset.X_binned, dataset.bin_mapper.transform(X))
    # With the NumPy reference selected the Dataset bins with BinMapper.transform.
    monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
    reference = Dataset(X, label=np.zeros(300)).construct(max_bin=15)
    np.testing.assert_array_equal(reference.X_binned, dataset.X_binned)


@pytest.mark.parametrize(
    "shape",
    [
        (0, 3),
        (1, 1),
        (5, 0),
        (TRANSPOSE_TILE, TRANSPOSE_TILE),
        (3 * TRANSPOSE_TILE + 5, 70),
        (7, 2 * TRANSPOSE_TILE + 1),
    ],
)
def test_binned_layout_transposes_as_numpy_does(shape):
    """The compiled tiled transpose (whole and partial tiles, empty sides) gives the NumPy
    backend's layout: the matrix itself and its feature-major copy."""
    X = np.random.default_rng(sum(shape)).integers(0, 256, size=shape).astype(np.uint8)
    got, expected = binned_layout(X), binned_layout_numpy(X)
    assert got.keys() == expected.keys()
    for name in expected:
        assert got[name].flags.c_contiguous and got[name].dtype == np.uint8
        np.testing.assert_array_equal(got[name], expected[name])
    assert CpuBackend().binned_layout(X)["X_binned_columns"].shape == shape[::-1]
