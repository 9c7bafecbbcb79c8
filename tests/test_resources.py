"""Resource faults: GPU out-of-memory during training, and memory over many fits.

* An out-of-memory error anywhere in a training run on the CUDA backend raises
  :class:`~gpuboost.errors.GpuOutOfMemoryError` naming the sizes,
  and leaves no more device memory in use than before the call: no array allocated
  by the failed call stays alive, even while the caller holds the exception (the
  backend's per-thread working buffers are dropped too, also when the failed call
  made them), and the backend keeps working. Under the emulation (no CuPy) the
  backend's array module is wrapped so that its n-th allocation raises an error
  that stands in for ``cupy.cuda.memory.OutOfMemoryError``; on a GPU (tests marked
  ``gpu``) CuPy's memory pool is given a limit, so the error is real.
* 100 consecutive fits in one process do not grow host memory (RSS, Python
  objects) beyond a small bound; on a GPU, nor CuPy's pool.
"""

import gc
import os
import threading
import weakref

import numpy as np
import pytest
from _tiers import SLOW

import gpuboost
from gpuboost.backends import get_backend
from gpuboost.backends.cuda import selfcheck
from gpuboost.backends.cuda.memory import device_bytes_per_row
from gpuboost.backends.emulation import EMULATE_ENV_VAR, emulated_kernels
from gpuboost.errors import GpuOutOfMemoryError

#: Fits of the many-fits tests, after WARM_UP_FITS that fill caches and pools.
N_FITS, WARM_UP_FITS = 100, 10
#: Fits under the emulation (each is slower).
N_EMULATED_FITS = 30
#: Largest growth of the resident set over N_FITS fits. The many-fits data (2000 x 10
#: float64, 160 kB) make a leak of one copy of X per fit grow it by 16 MB.
MAX_RSS_GROWTH_BYTES = 8 * 2**20
#: Largest growth of the number of objects tracked by Python's garbage collector.
MAX_OBJECT_GROWTH = 2_000
#: Largest growth of the bytes in use in CuPy's pool over N_FITS fits (GPU suite).
MAX_DEVICE_GROWTH_BYTES = 2**20
#: Allocation names wrapped by the failing array module.
ALLOCATING_FUNCTIONS = (
    "empty",
    "zeros",
    "ones",
    "full",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "array",
    "ascontiguousarray",
    "arange",
    "concatenate",
    "cumsum",
    "argsort",
    "take",
)


class EmulatedCupyOutOfMemoryError(MemoryError):
    """Stands in for ``cupy.cuda.memory.OutOfMemoryError`` (a MemoryError with the same
    message format) where CuPy is not installed."""


class FailingArrayModule:
    """The emulation's array module (emulated device arrays), whose ``fail_at``-th
    allocation raises.

    Every array it hands out is tracked by a weak reference, so a test can check
    that none of them outlives a failed call.
    """

    def __init__(self, xp, fail_at):
        self._xp = xp
        self.fail_at = fail_at
        self.n_allocations = 0
        self.allocated = []

    def asnumpy(self, array):
        """CuPy's device-to-host copy (code that sees a non-NumPy module calls it)."""
        return self._xp.asnumpy(array)

    def __getattr__(self, name):
        attribute = getattr(self._xp, name)
        if name not in ALLOCATING_FUNCTIONS:
            return attribute

        def allocating(*args, **kwargs):
            self.n_allocations += 1
            if self.n_allocations == self.fail_at:
                raise EmulatedCupyOutOfMemoryError(
                    "Out of memory allocating 1,234,567,936 bytes (allocated so far: 8,192 bytes)."
                )
            result = attribute(*args, **kwargs)
            if isinstance(result, self._xp.ndarray):
                self.allocated.append(weakref.ref(result))
            return result

        return allocating

    def alive(self):
        gc.collect()
        return [ref() for ref in self.allocated if ref() is not None]


@pytest.fixture
def emulated_cuda(monkeypatch):
    with emulated_kernels():
        yield get_backend("cuda")


def _data(n_rows=120, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, np.nan_to_num(X[:, 0]) + 0.1 * rng.normal(size=n_rows)


PARAMS = {"max_depth": 3, "subsample": 0.8, "verbosity": 0, "max_bin": 31}
N_ROUNDS = 3


def _count_allocations(backend, monkeypatch, X, y):
    """Allocations of one training, after a first one: that first training of a process
    also makes what the backend keeps (a few more allocations)."""
    gpuboost.train(dict(PARAMS, device="cuda"), gpuboost.Dataset(X, label=y), N_ROUNDS)
    counter = FailingArrayModule(backend.xp, fail_at=0)
    monkeypatch.setattr(backend, "xp", counter)
    gpuboost.train(dict(PARAMS, device="cuda"), gpuboost.Dataset(X, label=y), N_ROUNDS)
    monkeypatch.setattr(backend, "xp", counter._xp)
    return counter.n_allocations


def test_out_of_memory_anywhere_in_training_is_clear_and_frees_everything(
    emulated_cuda, monkeypatch
):
    backend = emulated_cuda
    monkeypatch.setattr(backend, "_out_of_memory_errors", (EmulatedCupyOutOfMemoryError,))
    X, y = _data()
    n_allocations = _count_allocations(backend, monkeypatch, X, y)
    assert n_allocations > 10
    expected_model = gpuboost.train(
        dict(PARAMS, device="cpu"), gpuboost.Dataset(X, label=y), N_ROUNDS
    ).save_raw()
    per_row = sum(device_bytes_per_row(X.shape[1]).values())
    # The first allocation (copying the data), some in the middle, the last one.
    for fail_at in sorted({1, 2, 3, n_allocations // 3, n_allocations // 2, n_allocations}):
        failing = FailingArrayModule(backend.xp, fail_at)
        monkeypatch.setattr(backend, "xp", failing)
        dataset = gpuboost.Dataset(X, label=y)
        with pytest.raises(GpuOutOfMemoryError) as caught:
            gpuboost.train(dict(PARAMS, device="cuda"), dataset, N_ROUNDS)
        monkeypatch.setattr(backend, "xp", failing._xp)
        error = caught.value
        message = str(error)
        assert isinstance(error, MemoryError)
        for expected in (
            "CUDA out of memory",
            "1,234,567,936 bytes requested",
            f"{X.shape[0]:,} rows x {X.shape[1]} features",
            f"{per_row} bytes per row",
            "device='cpu'",
        ):
            assert expected in message, (fail_at, expected, message)
        assert isinstance(error.__cause__, EmulatedCupyOutOfMemoryError)
        # Device memory as before the call, although the exception is still held:
        assert failing.alive() == [], f"allocation {fail_at}: arrays of the failed call live on"
        assert "cuda" not in dataset._backend_cache
        # ... and the backend still works.
        model = gpuboost.train(dict(PARAMS, device="cuda"), dataset, N_ROUNDS).save_raw()
        assert model == expected_model


def _first_training_of_this_thread(failing, X, y, outcome):
    """A training that runs out of memory, in a new thread; ``outcome`` gets the error
    and the count of the failed call's arrays still alive, counted in the thread: the
    buffers it kept would die with it."""
    try:
        gpuboost.train(dict(PARAMS, device="cuda"), gpuboost.Dataset(X, label=y), N_ROUNDS)
    except GpuOutOfMemoryError as error:
        outcome["error"] = error
    outcome["alive"] = len(failing.alive())


def test_out_of_memory_in_a_threads_first_training_frees_what_the_backend_keeps(
    emulated_cuda, monkeypatch
):
    """The backend keeps device buffers per thread from call to call (the partition's
    and the split scan's status words, the gradients' block maxima). A thread's first
    training makes them; when that training runs out of memory they must go too, or
    more device memory is in use than before the call (seen on an H200: 2,048 bytes
    left in CuPy's pool after a process's first CUDA training failed). The other tests
    here fail trainings that find those buffers made already."""
    backend = emulated_cuda
    monkeypatch.setattr(backend, "_out_of_memory_errors", (EmulatedCupyOutOfMemoryError,))
    X, y = _data()
    n_allocations = _count_allocations(backend, monkeypatch, X, y)
    for fail_at in (n_allocations // 2, n_allocations):
        failing = FailingArrayModule(backend.xp, fail_at)
        monkeypatch.setattr(backend, "xp", failing)
        outcome = {}
        thread = threading.Thread(
            target=_first_training_of_this_thread, args=(failing, X, y, outcome)
        )
        thread.start()
        thread.join()
        monkeypatch.setattr(backend, "xp", failing._xp)
        assert isinstance(outcome.get("error"), GpuOutOfMemoryError), fail_at
        assert outcome["alive"] == 0, f"allocation {fail_at}: {outcome['alive']} arrays live on"


def test_out_of_memory_keeps_data_prepared_before_the_call(emulated_cuda, monkeypatch):
    backend = emulated_cuda
    monkeypatch.setattr(backend, "_out_of_memory_errors", (EmulatedCupyOutOfMemoryError,))
    X, y = _data()
    dataset = gpuboost.Dataset(X, label=y)
    gpuboost.train(dict(PARAMS, device="cuda"), dataset, 1)
    prepared = dataset._backend_cache["cuda"]
    failing = FailingArrayModule(backend.xp, fail_at=5)
    monkeypatch.setattr(backend, "xp", failing)
    with pytest.raises(GpuOutOfMemoryError):
        gpuboost.train(dict(PARAMS, device="cuda"), dataset, N_ROUNDS)
    assert dataset._backend_cache["cuda"] is prepared  # it was there before the call
    assert failing.alive() == []


def test_host_memory_error_on_the_numpy_backend_is_not_rewritten(monkeypatch):
    X, y = _data()
    backend = get_backend("cpu")

    def exhausted(*args, **kwargs):
        raise MemoryError("host memory exhausted")

    monkeypatch.setattr(backend, "quantize", exhausted)
    with pytest.raises(MemoryError, match="host memory exhausted") as caught:
        gpuboost.train(dict(PARAMS, device="cpu"), gpuboost.Dataset(X, label=y), N_ROUNDS)
    assert not isinstance(caught.value, GpuOutOfMemoryError)


# ---- many fits ---------------------------------------------------------------------
def _resident_bytes():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _fit_many(n_fits, device, X, y):
    """Fits alternating between the functional API (with an evaluation set, a
    prediction and a save) and the scikit-learn API."""
    for index in range(n_fits):
        if index % 2:
            gpuboost.GBRegressor(
                n_estimators=N_ROUNDS, device=device, verbosity=0, max_depth=3
            ).fit(X, y).predict(X)
            continue
        dataset = gpuboost.Dataset(X, label=y)
        booster = gpuboost.train(
            dict(PARAMS, device=device, seed=index % 3),
            dataset,
            N_ROUNDS,
            evals=[(dataset, "train")],
            verbose_eval=False,
        )
        booster.predict(X)
        booster.save_raw()


def _assert_bounded_growth(n_fits, device, X, y):
    _fit_many(WARM_UP_FITS, device, X, y)
    gc.collect()
    rss_before, objects_before = _resident_bytes(), len(gc.get_objects())
    _fit_many(n_fits, device, X, y)
    gc.collect()
    rss_growth = _resident_bytes() - rss_before
    object_growth = len(gc.get_objects()) - objects_before
    assert rss_growth < MAX_RSS_GROWTH_BYTES, f"RSS grew by {rss_growth:,} bytes"
    assert object_growth < MAX_OBJECT_GROWTH, f"{object_growth} more Python objects"


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_many_fits_do_not_grow_host_memory():
    X, y = _data(n_rows=2000, n_features=10)
    _assert_bounded_growth(N_FITS, "cpu", X, y)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
@SLOW  # its fast sibling: the CPU backend's many fits (above)
def test_many_emulated_cuda_fits_do_not_grow_host_memory(emulated_cuda):
    X, y = _data(n_rows=60, n_features=3)
    _assert_bounded_growth(N_EMULATED_FITS, "cuda", X, y)


# ---- the GPU suite (python -m pytest -m gpu) ---------------------------------------
def _cupy_or_skip(monkeypatch):
    monkeypatch.delenv(EMULATE_ENV_VAR, raising=False)  # the CuPy backend, not the emulated one
    cupy = pytest.importorskip("cupy")
    if not gpuboost.cuda_available():
        pytest.skip("no usable CUDA device")
    return cupy


@pytest.mark.gpu
def test_gpu_out_of_memory_restores_device_memory(monkeypatch):
    cupy = _cupy_or_skip(monkeypatch)
    pool = cupy.get_default_memory_pool()
    X, y = _data(n_rows=200_000, n_features=28)
    dataset = gpuboost.Dataset(X, label=y)
    gc.collect()
    used_before = pool.used_bytes()
    limit_before = pool.get_limit()
    pool.set_limit(size=used_before + 2**20)  # far less than the data need
    try:
        with pytest.raises(GpuOutOfMemoryError) as caught:
            gpuboost.train(dict(PARAMS, device="cuda"), dataset, N_ROUNDS)
    finally:
        pool.set_limit(size=limit_before)
    message = str(caught.value)
    assert "bytes requested" in message and f"{X.shape[0]:,} rows x {X.shape[1]}" in message
    # While the exception is still held; less when the backend's per-thread working
    # buffers, made by an earlier training, were dropped too (seen on an H200).
    assert pool.used_bytes() <= used_before
    assert "cuda" not in dataset._backend_cache
    booster = gpuboost.train(dict(PARAMS, device="cuda"), dataset, N_ROUNDS)
    assert np.all(np.isfinite(booster.predict(X)))


@pytest.mark.gpu
def test_many_gpu_fits_do_not_grow_device_memory(monkeypatch):
    cupy = _cupy_or_skip(monkeypatch)
    pool = cupy.get_default_memory_pool()
    X, y = _data(n_rows=20_000, n_features=10)
    _fit_many(WARM_UP_FITS, "cuda", X, y)
    gc.collect()
    used_before, total_before = pool.used_bytes(), pool.total_bytes()
    _assert_bounded_growth(N_FITS, "cuda", X, y)
    gc.collect()
    assert pool.used_bytes() - used_before < MAX_DEVICE_GROWTH_BYTES
    assert pool.total_bytes() - total_before < MAX_DEVICE_GROWTH_BYTES


def test_out_of_memory_in_the_first_use_self_check_is_not_a_gpu_bug(emulated_cuda, monkeypatch):
    """Running out of memory during the self-check raises GpuOutOfMemoryError with the
    figures, frees what the check took, and is not remembered: the next CUDA training
    checks again and trains (issue 29)."""
    backend = emulated_cuda
    monkeypatch.setenv(selfcheck.SELFCHECK_ENV_VAR, "1")
    monkeypatch.setattr(selfcheck, "SELFCHECK_ROWS", 300)
    monkeypatch.setattr(backend, "_out_of_memory_errors", (EmulatedCupyOutOfMemoryError,))
    selfcheck.reset()
    try:
        X, y = _data()
        failing = FailingArrayModule(backend.xp, fail_at=5)  # inside the check's first step
        monkeypatch.setattr(backend, "xp", failing)
        with pytest.raises(GpuOutOfMemoryError, match="first-use self-check") as caught:
            gpuboost.train(dict(PARAMS, device="cuda"), gpuboost.Dataset(X, label=y), N_ROUNDS)
        monkeypatch.setattr(backend, "xp", failing._xp)
        assert "1,234,567,936 bytes requested" in str(caught.value)
        assert "checks again" in str(caught.value)
        assert failing.alive() == []
        assert selfcheck._key(backend) not in selfcheck._STATE  # nothing concluded
        model = gpuboost.train(dict(PARAMS, device="cuda"), gpuboost.Dataset(X, label=y), N_ROUNDS)
        assert selfcheck._STATE[selfcheck._key(backend)] is None  # checked again, passed
        expected = gpuboost.train(
            dict(PARAMS, device="cpu"), gpuboost.Dataset(X, label=y), N_ROUNDS
        )
        assert model.save_raw() == expected.save_raw()
    finally:
        selfcheck.reset()
