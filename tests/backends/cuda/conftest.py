"""Fixtures of the CUDA backend tests: the CPU emulation of the kernels for a whole
module (``pytestmark = pytest.mark.usefixtures("cuda_emulation")``), a backend that
checks every launch, an emulated device with clusters, and the launches of a test."""

import pytest

from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.launch import KernelLauncher
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.backends.emulation.device_profiles import EMULATE_DEVICE_ENV_VAR


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


@pytest.fixture
def clusters(monkeypatch):
    """An emulated device with thread-block clusters (H100), for the tests of the cluster
    kernels themselves, whatever GPUBOOST_EMULATE_DEVICE the run has (the parity tests
    run on every profile)."""
    monkeypatch.setenv(EMULATE_DEVICE_ENV_VAR, "H100")


@pytest.fixture
def kernel_launches(monkeypatch):
    """``(kernel name, grid)`` of every launch through a ``KernelLauncher`` during the
    test, in order."""
    launches = []
    original = KernelLauncher.__call__

    def recorded(self, file_stem, kernel_name, grid, *args, **kwargs):
        launches.append((kernel_name, grid))
        return original(self, file_stem, kernel_name, grid, *args, **kwargs)

    monkeypatch.setattr(KernelLauncher, "__call__", recorded)
    return launches
