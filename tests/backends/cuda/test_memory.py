"""Device memory accounting and out-of-memory errors of the CUDA backend
(gpuboost.backends.cuda.memory), under the CPU emulation of the kernels.
"""

import numpy as np
import pytest
from _cases import messy_features

from gpuboost import Dataset
from gpuboost.backends.cuda import memory as cuda_memory
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.memory import device_bytes_per_row
from gpuboost.errors import GpuOutOfMemoryError

N_ROWS = 400
N_FEATURES = 6
MAX_BIN = 31


pytestmark = pytest.mark.usefixtures("cuda_emulation")


def test_device_bytes_per_row_matches_the_documented_example():
    parts = device_bytes_per_row(28)
    assert sum(parts.values()) == 141
    assert parts["binned features"] == 32  # rows padded to a whole sector
    assert "141 bytes per row" in cuda_memory.__doc__
    with_weights_and_classes = device_bytes_per_row(28, n_outputs=3, has_weight=True)
    assert sum(with_weights_and_classes.values()) == 141 + 8 + 2 * 24


class _FakeCupyOutOfMemory(MemoryError):
    """Stands in for cupy.cuda.memory.OutOfMemoryError (same message format)."""


def test_out_of_memory_is_reraised_with_sizes_and_advice(monkeypatch):
    backend = CudaBackend()
    monkeypatch.setattr(backend, "_out_of_memory_errors", (_FakeCupyOutOfMemory,))

    def fail(*args, **kwargs):
        raise _FakeCupyOutOfMemory(
            "Out of memory allocating 1,234,567 bytes (allocated so far: 42 bytes)."
        )

    monkeypatch.setattr(backend, "bin_features", fail)
    X = messy_features(N_ROWS, seed=9)
    with pytest.raises(GpuOutOfMemoryError) as caught:
        backend.prepare(Dataset(X, label=np.zeros(N_ROWS), max_bin=MAX_BIN))
    error = caught.value
    assert isinstance(error, MemoryError)
    message = str(error)
    per_row = sum(device_bytes_per_row(N_FEATURES).values())
    for expected in (
        f"{N_ROWS:,} rows x {N_FEATURES} features",
        "1,234,567 bytes requested",
        f"{per_row} bytes per row",
        "fewer rows",
        "max_bin",
        "device='cpu'",
    ):
        assert expected in message, (expected, message)
    assert (error.requested_bytes, error.bytes_per_row, error.data_shape) == (
        1234567,
        per_row,
        (N_ROWS, N_FEATURES),
    )
    assert isinstance(error.__cause__, _FakeCupyOutOfMemory)
