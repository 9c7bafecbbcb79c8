"""The CUDA backend's leaf primitives (gpuboost.backends.cuda.leaf, ``cuda/leaf.cu``)
against the NumPy backend, under the CPU emulation of the kernels.
"""

import re

import numpy as np
import pytest
from _parity import bits

from gpuboost.backends import NumpyBackend
from gpuboost.backends.cuda import leaf as cuda_leaf
from gpuboost.backends.cuda.sources import read_cuda_source

pytestmark = pytest.mark.usefixtures("cuda_emulation")


def _leaf_segments(rng, n_positions, n_segments):
    cuts = np.sort(rng.choice(np.arange(1, n_positions), size=n_segments - 1, replace=False))
    bounds = np.concatenate([[0], cuts, [n_positions]])
    return bounds[:-1], bounds[1:]


def test_add_leaf_values_matches_numpy(backend):
    rng = np.random.default_rng(4)
    n_rows, n_outputs = 2500, 3  # segments longer than one tile (LEAF_TILE_ROWS)
    sample_indices = rng.permutation(n_rows)[:2300].astype(np.int32)
    begins, ends = _leaf_segments(rng, 2300, 5)
    begins, ends = begins[[0, 1, 3, 4]], ends[[0, 1, 3, 4]]  # one segment left out
    values = rng.normal(size=4)
    start = rng.normal(size=(n_rows, n_outputs))
    expected = start.copy()
    NumpyBackend().add_leaf_values(expected, 1, sample_indices, begins, ends, values)
    raw = backend.to_device(start)
    backend.add_leaf_values(raw, 1, backend.to_device(sample_indices), begins, ends, values)
    backend.synchronize()
    np.testing.assert_array_equal(bits(backend.to_host(raw)), bits(expected))
    assert (expected != start).sum() == (ends - begins).sum()


def _quantile_case(rng, n_rows, ties):
    values = rng.normal(size=n_rows)
    if ties:
        values = np.round(values * 2) / 2  # many equal values
        values[rng.random(n_rows) < 0.1] = -0.0  # signed zeros tie with +0.0
    return values


@pytest.mark.parametrize("weighted", [False, True], ids=["unit_weights", "float_weights"])
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
def test_segment_quantile_matches_numpy(backend, weighted, ties):
    rng = np.random.default_rng(5 + 2 * weighted + ties)
    n_rows = 2200
    values = _quantile_case(rng, n_rows, ties)
    weights = None
    if weighted:
        weights = rng.choice([0.1, 0.3, 0.7, 1.3, 0.0], size=n_rows)  # inexact binary sums
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = _leaf_segments(rng, n_rows, 6)
    numpy_backend, device_indices = NumpyBackend(), backend.to_device(sample_indices)
    device_values = backend.to_device(values)
    device_weights = None if weights is None else backend.to_device(weights)
    for alpha in (0.0, 0.1, 0.5, 0.77, 1.0):
        expected = numpy_backend.segment_weighted_quantile(
            values, weights, sample_indices, begins, ends, alpha
        )
        got = backend.segment_weighted_quantile(
            device_values, device_weights, device_indices, begins, ends, alpha
        )
        assert isinstance(got, np.ndarray) and got.dtype == np.float64
        np.testing.assert_array_equal(bits(got), bits(expected), err_msg=f"alpha={alpha}")
    assert len(np.unique(expected)) > 1


def test_segment_quantile_one_row_and_errors(backend):
    values = backend.to_device(np.array([3.0, -1.0, 2.0, np.nan]))
    indices = backend.to_device(np.arange(4, dtype=np.int32))
    got = backend.segment_weighted_quantile(values, None, indices, [0, 1], [1, 3], 0.5)
    np.testing.assert_array_equal(got, [3.0, -1.0])
    with pytest.raises(ValueError, match="non-empty"):
        backend.segment_weighted_quantile(values, None, indices, [0, 2], [2, 2], 0.5)
    with pytest.raises(ValueError, match="NaN"):
        backend.segment_weighted_quantile(values, None, indices, [0], [4], 0.5)
    with pytest.raises(ValueError, match="alpha"):
        backend.segment_weighted_quantile(values, None, indices, [0], [3], 1.5)


def test_launch_constants_match_kernel_source():
    """The Python tile geometry must be the one compiled into leaf.cu."""

    def constant(source, name):
        return int(re.search(rf"constexpr int32_t {name} = (\d+);", source).group(1))

    leaf = read_cuda_source("leaf.cu")
    assert constant(leaf, "kLeafThreadsPerBlock") == cuda_leaf.LEAF_THREADS_PER_BLOCK
    assert constant(leaf, "kLeafItemsPerThread") == cuda_leaf.LEAF_ITEMS_PER_THREAD
