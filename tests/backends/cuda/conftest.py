"""Fixtures of the CUDA backend tests: the CPU emulation of the kernels for a whole
module (``pytestmark = pytest.mark.usefixtures("cuda_emulation")``) and a backend that
checks every launch."""

import pytest

from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.emulation import emulated_kernels


@pytest.fixture(scope="module")
def cuda_emulation():
    """Kernels run in the CPU emulation for the whole module that uses this."""
    with emulated_kernels():
        yield


@pytest.fixture(scope="module")
def backend(cuda_emulation):
    """A CudaBackend on the emulated kernels, checking every launch."""
    cuda = CudaBackend()
    cuda.check_launches = True
    return cuda
