"""gpuboost.core.file_lock and the builds it makes happen once: a g++ library of the
emulation and a Numba kernel of the CPU backend, asked for by several threads at once."""

import threading
import time
from pathlib import Path

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cpu import histogram as cpu_histogram
from gpuboost.backends.cpu.jit import NUMBA_AVAILABLE
from gpuboost.backends.emulation import compiler
from gpuboost.core.file_lock import exclusive


def test_a_second_holder_waits_for_the_first(tmp_path):
    lock = tmp_path / "build.lock"
    events = []
    inside = threading.Event()

    def second():
        inside.wait()
        with exclusive(lock):
            events.append("second")

    thread = threading.Thread(target=second)
    thread.start()
    with exclusive(lock):
        inside.set()
        time.sleep(0.3)  # the second thread is waiting for the lock now
        events.append("first")
    thread.join(timeout=10)
    assert events == ["first", "second"]


def test_an_unwritable_lock_folder_locks_nothing(tmp_path):
    with exclusive(tmp_path / "missing" / "build.lock"):
        pass


def test_concurrent_requests_for_one_library_compile_it_once(tmp_path, monkeypatch):
    monkeypatch.setenv(compiler.CACHE_ENV_VAR, str(tmp_path))
    source = 'extern "C" __global__ void once(int* out) { out[threadIdx.x] = 7; }\n'
    before = compiler.compile_statistics()
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(compiler.compile_shared_library(source)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    after = compiler.compile_statistics()
    assert len(results) == 3 and len(set(results)) == 1
    assert after["compiled"] - before["compiled"] == 1
    assert after["cached"] - before["cached"] == 2
    assert list(tmp_path.glob("*.lock"))


@pytest.mark.skipif(not NUMBA_AVAILABLE, reason="needs Numba")
def test_kernels_compile_under_a_lock_beside_their_cache():
    """A kernel's first call with new types (compiled, or loaded from Numba's cache, which
    the compile looks in first) takes the lock file next to its cache files."""
    kernel = cpu_histogram._build
    assert kernel.compile.__name__ == "compile_once"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    # lossguide builds histograms (a depthwise tree this small is grown from its rows
    # without them: the test then passed only after another test had built histograms)
    params = {"device": "cpu", "grow_policy": "lossguide", "max_leaves": 4}
    gpuboost.train(params, gpuboost.Dataset(X, label=X[:, 0]), 1)
    assert kernel.signatures
    cache = kernel._cache
    assert (Path(cache._cache_path) / f"{cache._impl.filename_base}.lock").exists()
