"""The CUDA backend's binning (gpuboost.backends.cuda.binning, ``cuda/binning.cu``)
against the host binning (``BinMapper.transform``), under the CPU emulation of the kernels.
"""

import numpy as np
import pytest
from _cases import messy_features

from gpuboost import Dataset
from gpuboost.backends.cuda import binning as cuda_binning

N_ROWS = 400
N_FEATURES = 6
MAX_BIN = 31


pytestmark = pytest.mark.usefixtures("cuda_emulation")


def test_device_binning_equals_host_binning(backend):
    X = messy_features(N_ROWS, seed=1)
    X[:, 2] = np.nan  # a feature with no value at all
    dataset = Dataset(X, label=np.zeros(N_ROWS), max_bin=MAX_BIN)
    binned = backend.to_host(backend.bin_features(dataset.data, dataset.bin_mapper))
    backend.synchronize()
    expected = dataset.bin_mapper.transform(X)
    assert binned.dtype == np.uint8 and binned.flags.c_contiguous
    np.testing.assert_array_equal(binned, expected)
    # Not vacuous: many bins, the missing bin, both ends of the range are all used.
    assert len(np.unique(expected[:, 0])) > 10
    assert (expected == MAX_BIN).any() and (expected == 0).any()


def test_device_binning_on_edges_and_in_chunks(backend, monkeypatch):
    """Values exactly on an edge go to the bin below it; chunking does not matter."""
    X = messy_features(N_ROWS, seed=2)
    mapper = Dataset(X, label=np.zeros(N_ROWS), max_bin=MAX_BIN).bin_mapper
    on_edges = np.stack(
        [np.resize(edges if len(edges) else [0.0], N_ROWS) for edges in mapper.bin_edges_], axis=1
    )
    monkeypatch.setattr(cuda_binning, "BINNING_CHUNK_BYTES", 8 * N_FEATURES * 37)
    binned = backend.to_host(backend.bin_features(on_edges, mapper))
    np.testing.assert_array_equal(binned, mapper.transform(on_edges))


def test_prepare_bins_on_the_device(backend):
    X = messy_features(N_ROWS, seed=3)
    dataset = Dataset(
        X,
        label=np.arange(N_ROWS, dtype=np.float64),
        weight=np.linspace(0.5, 1.5, N_ROWS),
        max_bin=MAX_BIN,
    )
    data = backend.prepare(dataset)
    assert dataset._X_binned is None, "the CUDA backend must not bin on the host"
    np.testing.assert_array_equal(backend.to_host(data.arrays["X_binned"]), dataset.X_binned)
    np.testing.assert_array_equal(backend.to_host(data.label), dataset.label)
    np.testing.assert_array_equal(backend.to_host(data.weight), dataset.weight)
    assert (data.n_rows, data.n_features, data.n_bins, data.missing_bin) == (
        N_ROWS,
        N_FEATURES,
        MAX_BIN + 1,
        MAX_BIN,
    )
    assert backend.prepare(dataset) is data  # cached on the Dataset


def test_rebin_matches_host_transform(backend):
    X = messy_features(N_ROWS, seed=15)
    dataset = Dataset(X, label=np.ones(N_ROWS), max_bin=MAX_BIN)
    data = backend.prepare(dataset)
    other = Dataset(X[::-1] * 1.5, label=np.ones(N_ROWS), max_bin=MAX_BIN).bin_mapper
    rebinned = backend.rebin(data, backend.prepare_features(X), other)
    np.testing.assert_array_equal(backend.to_host(rebinned.arrays["X_binned"]), other.transform(X))
    assert not np.array_equal(other.transform(X), dataset.X_binned)
    assert rebinned.label is data.label
    np.testing.assert_array_equal(rebinned.n_value_bins, other.n_value_bins_)
