"""The CUDA backend's per-segment sequential sums (gpuboost.backends.cuda.segment_reduce,
``cuda/segment_reduce.cu``) against the NumPy backend, bit for bit, under the CPU emulation.
"""

import numpy as np
import pytest
from _cases import segment_case
from _parity import bits

from gpuboost.backends import NumpyBackend
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.segment_reduce import SEGMENT_SUM_THREADS_PER_BLOCK
from gpuboost.backends.emulation import emulated_kernels


@pytest.fixture(scope="module")
def cuda_backend():
    """A CudaBackend on the emulated kernels, checking every launch."""
    with emulated_kernels():
        backend = CudaBackend()
        backend.check_launches = True
        yield backend


@pytest.mark.parametrize("n_segments", [7, SEGMENT_SUM_THREADS_PER_BLOCK + 3])
def test_cuda_kernel_matches_numpy_bit_for_bit(cuda_backend, n_segments):
    values, sample_indices, begins, ends = segment_case(2 + n_segments, n_segments=n_segments)
    expected = NumpyBackend().segment_sums(values, sample_indices, begins, ends)
    got = cuda_backend.segment_sums(
        cuda_backend.to_device(values), cuda_backend.to_device(sample_indices), begins, ends
    )
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_array_equal(bits(got), bits(expected))


def test_cuda_segment_sums_checks_inputs(cuda_backend):
    values = cuda_backend.to_device(np.ones(4))
    indices = cuda_backend.to_device(np.arange(4, dtype=np.int32))
    assert cuda_backend.segment_sums(values, indices, [], []).shape == (0,)
    with pytest.raises(TypeError, match="values"):
        cuda_backend.segment_sums(
            cuda_backend.to_device(np.ones(4, dtype=np.float32)), indices, [0], [4]
        )
    with pytest.raises(ValueError, match="overlap"):
        cuda_backend.segment_sums(values, indices, [0, 1], [3, 4])


def test_segment_sums_match_numpy(cuda_backend):
    rng = np.random.default_rng(14)
    n_rows = 1500
    values = rng.normal(size=n_rows) * 10.0 ** rng.integers(-8, 8, size=n_rows)
    values[:20] = -0.0  # an all-negative-zero segment sums to +0.0
    sample_indices = np.concatenate([np.arange(20), 20 + rng.permutation(n_rows - 20)])
    sample_indices = sample_indices.astype(np.int32)
    begins = np.array([0, 20, 20, 700, 1400])
    ends = np.array([20, 20, 700, 1400, 1500])
    expected = NumpyBackend().segment_sums(values, sample_indices, begins, ends)
    got = cuda_backend.segment_sums(
        cuda_backend.to_device(values), cuda_backend.to_device(sample_indices), begins, ends
    )
    np.testing.assert_array_equal(bits(got), bits(expected))
    assert bits(got)[0] == bits(np.array([0.0]))[0]
