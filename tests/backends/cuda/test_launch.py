"""Kernel loading and launching (gpuboost.backends.cuda.launch): the per-mode caches of
modules and kernel objects, the launcher's error check, and the launch-geometry
helpers shared by the primitives' host code.
"""

import collections
import shutil
import sys
import types

import numpy as np
import pytest

import gpuboost
from gpuboost.backends import get_backend
from gpuboost.backends.cuda import launch
from gpuboost.backends.cuda.launch import (
    CUPY,
    EMULATED,
    KernelLauncher,
    grid_stride_blocks,
    require_array,
    segment_table,
    segment_tiles,
)
from gpuboost.backends.cuda.sources import cuda_source_dir, source_hash
from gpuboost.backends.emulation import EMULATE_ENV_VAR, EmulatedModule, emulated_kernels
from gpuboost.backends.emulation.compiler import EmulationCompileError
from gpuboost.backends.emulation.device_array import namespace as xp


def _train_twice():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=120)
    params = {
        "device": "cuda",
        "max_depth": 3,
        "max_bin": 15,
        "subsample": 0.8,
        "objective": "reg:quantile",
        "quantile_alpha": 0.4,
    }
    for _ in range(2):
        gpuboost.train(params, gpuboost.Dataset(X, label=y, max_bin=15), num_boost_round=2)


def test_each_kernel_is_fetched_from_its_module_once(monkeypatch):
    """Over two trainings every (mode, file, kernel) calls ``get_function`` once, and every
    kernel file is compiled (loaded) once, although kernels launch many times."""
    fetched = collections.Counter()
    launched = collections.Counter()
    modules = collections.Counter()
    original_get_function = EmulatedModule.get_function
    original_call = KernelLauncher.__call__
    original_load = launch._load_module

    def get_function(self, name):
        fetched[(self.path, name)] += 1
        return original_get_function(self, name)

    def call(self, file_stem, kernel_name, *args, **kwargs):
        launched[(file_stem, kernel_name)] += 1
        return original_call(self, file_stem, kernel_name, *args, **kwargs)

    def load(mode, file_stem):
        modules[(mode, file_stem)] += 1
        return original_load(mode, file_stem)

    monkeypatch.setattr(EmulatedModule, "get_function", get_function)
    monkeypatch.setattr(KernelLauncher, "__call__", call)
    monkeypatch.setattr(launch, "_load_module", load)
    monkeypatch.setattr(launch, "_MODULES", {})
    monkeypatch.setattr(launch, "_KERNELS", {})
    with emulated_kernels():
        _train_twice()
    assert fetched and set(fetched.values()) == {1}, fetched
    assert modules and set(modules.values()) == {1}, modules
    launched_kernels = {(EMULATED, stem, name) for stem, name in launched}
    # The per-block row scan is fetched for its static shared memory (row_scan_max_rows)
    # even where every scan runs in clusters; every other cached kernel was launched.
    assert launched_kernels <= set(launch._KERNELS)
    assert set(launch._KERNELS) - launched_kernels <= {(EMULATED, "row_scan", "row_scan_features")}
    assert max(launched.values()) > 2  # not vacuous: kernels ran many times


def test_emulated_kernels_switches_modes_without_clearing_caches(monkeypatch):
    monkeypatch.delenv(EMULATE_ENV_VAR, raising=False)
    assert launch.current_mode() == CUPY
    with emulated_kernels():
        assert launch.current_mode() == EMULATED
        kernel = launch.get_kernel(EMULATED, "segment_reduce", "segment_sequential_sums")
        backend = get_backend("cuda")
        assert backend.emulated and backend.launcher.mode == EMULATED
        assert backend.xp is xp
    assert launch.current_mode() == CUPY
    # Leaving the block kept the compiled kernel and the emulated backend ...
    assert launch.get_kernel(EMULATED, "segment_reduce", "segment_sequential_sums") is kernel
    with emulated_kernels():
        # ... which the next block finds again.
        assert launch.get_kernel(EMULATED, "segment_reduce", "segment_sequential_sums") is kernel
        assert get_backend("cuda") is backend


class _FakeModule:
    def __init__(self, mode):
        self.mode = mode
        self.fetched = []

    def get_function(self, name):
        self.fetched.append(name)
        return (self.mode, name)


def test_caches_are_keyed_by_mode(monkeypatch):
    loaded = []

    def load(mode, file_stem):
        loaded.append((mode, file_stem))
        return _FakeModule(mode)

    monkeypatch.setattr(launch, "_load_module", load)
    monkeypatch.setattr(launch, "_MODULES", {})
    monkeypatch.setattr(launch, "_KERNELS", {})
    for _ in range(3):
        assert launch.get_kernel(CUPY, "histogram", "k") == (CUPY, "k")
        assert launch.get_kernel(EMULATED, "histogram", "k") == (EMULATED, "k")
        assert launch.get_kernel(EMULATED, "histogram", "other") == (EMULATED, "other")
    assert loaded == [(CUPY, "histogram"), (EMULATED, "histogram")]
    assert launch.get_module(EMULATED, "histogram").fetched == ["k", "other"]
    launch.clear_cache()
    assert launch._MODULES == {} and launch._KERNELS == {}
    with pytest.raises(ValueError, match="mode"):
        launch.get_kernel("opencl", "histogram", "k")


def test_checked_launch_on_a_gpu_names_the_failing_kernel(monkeypatch):
    """With check_launches, a CuPy launch is followed by a synchronization whose error is
    re-raised naming the kernel (CuPy replaced by a stand-in: no GPU here)."""

    class CUDARuntimeError(RuntimeError):
        pass

    def fail():
        raise CUDARuntimeError("cudaErrorIllegalAddress: an illegal memory access")

    runtime = types.SimpleNamespace(deviceSynchronize=fail, CUDARuntimeError=CUDARuntimeError)
    monkeypatch.setitem(
        sys.modules, "cupy", types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))
    )
    launches = []
    monkeypatch.setattr(
        launch,
        "_KERNELS",
        {
            (CUPY, "partition", "partition_flag_tiles"): lambda grid, block, args, shared_mem=0: (
                launches.append((grid, block, shared_mem))
            )
        },
    )
    KernelLauncher(CUPY)("partition", "partition_flag_tiles", 3, 128, ())
    with pytest.raises(RuntimeError, match="partition.cu:partition_flag_tiles") as caught:
        KernelLauncher(CUPY, check_launches=True)(
            "partition", "partition_flag_tiles", 3, np.int64(128), (), shared_mem=16
        )
    assert isinstance(caught.value.__cause__, CUDARuntimeError)
    assert launches == [((3,), (128,), 0), ((3,), (128,), 16)]


def test_grid_and_tile_helpers():
    assert grid_stride_blocks(1, 256) == 1
    assert grid_stride_blocks(257, 256) == 2
    assert grid_stride_blocks(10**12, 256) == launch.GRID_STRIDE_MAX_BLOCKS
    begins = np.array([0, 10, 10, 3000], dtype=np.int64)
    ends = np.array([10, 10, 3000, 3001], dtype=np.int64)
    first_tile, n_tiles = segment_tiles(begins, ends, 1024)
    np.testing.assert_array_equal(first_tile, [0, 1, 1, 4, 5])
    assert n_tiles == 5 and first_tile.dtype == np.int64
    assert segment_tiles(begins[:0], ends[:0], 1024)[1] == 0
    table = segment_table(xp, [begins, ends, first_tile])
    assert isinstance(table, xp.ndarray) and table.shape == (3, 5) and table.dtype == np.int64
    np.testing.assert_array_equal(xp.asnumpy(table[0]), [0, 10, 10, 3000, 0])


def test_require_array():
    array = xp.zeros((2, 3), dtype=np.int32)
    require_array(xp, array, np.int32, "a", ndim=2)
    with pytest.raises(TypeError, match="a must be"):
        require_array(xp, np.zeros((2, 3), dtype=np.int32), np.int32, "a")
    with pytest.raises(TypeError, match="int64"):
        require_array(xp, array, np.int64, "a")
    with pytest.raises(TypeError, match="dimension"):
        require_array(xp, array, np.int32, "a", ndim=1)
    with pytest.raises(ValueError, match="C-contiguous"):
        require_array(xp, array.T, np.int32, "a")


# ---- the source hash in the compile options ---------------------------------------------


def test_source_hash_changes_when_any_kernel_source_changes(tmp_path):
    folder = tmp_path / "cuda"
    shutil.copytree(cuda_source_dir(), folder)
    original = source_hash(folder)
    assert original == source_hash(cuda_source_dir()) and original.startswith("0x")
    for name in ("gain.cuh", "common.cuh", "histogram.cu"):
        path = folder / name
        text = path.read_text()
        path.write_text(text + "\n// changed\n")
        assert source_hash(folder) != original, name
        path.write_text(text)
        assert source_hash(folder) == original
    (folder / "extra.cuh").write_text("// a new header\n")
    assert source_hash(folder) != original
    (folder / "extra.cuh").unlink()
    (folder / "notes.txt").write_text("not a kernel source")
    assert source_hash(folder) == original


class _RecordingModule:
    """Stands in for cupy.RawModule / EmulatedModule: records its arguments."""

    created = []

    def __init__(self, code=None, path=None, options=(), **kwargs):
        _RecordingModule.created.append({"code": code, "path": path, "options": options})


def test_both_modes_compile_with_the_source_hash(monkeypatch, tmp_path):
    monkeypatch.setattr(_RecordingModule, "created", [])
    monkeypatch.setattr(launch, "EmulatedModule", _RecordingModule)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(RawModule=_RecordingModule))
    launch._load_module(EMULATED, "binning")
    launch._load_module(CUPY, "binning")
    hash_option = f"-D{launch.SOURCE_HASH_MACRO}={source_hash()}"
    emulated, cupy_module = _RecordingModule.created
    assert hash_option in emulated["options"] and hash_option in cupy_module["options"]
    assert emulated["options"] == cupy_module["options"] == launch.compile_options()
    assert cupy_module["code"] == (cuda_source_dir() / "binning.cu").read_text()
    # A changed header changes the options, hence CuPy's cache key.
    folder = tmp_path / "cuda"
    shutil.copytree(cuda_source_dir(), folder)
    (folder / "gain.cuh").write_text((folder / "gain.cuh").read_text() + "// changed\n")
    assert launch.compile_options(folder)[-1] != launch.compile_options(cuda_source_dir())[-1]


# ---- the test kernel of the availability check ------------------------------------------


def test_probe_kernel_compiles_and_runs_in_the_emulation():
    launch.probe(EMULATED)


#: A probe kernel the compiler refuses (an undeclared name).
BROKEN_PROBE = 'extern "C" __global__ void gpuboost_probe(int* out) { out[0] = not_declared; }'


def test_probe_reports_a_failing_compile(monkeypatch):
    monkeypatch.setattr(launch, "PROBE_SOURCE", BROKEN_PROBE)
    with pytest.raises(EmulationCompileError, match="not_declared"):
        launch.probe(EMULATED)
