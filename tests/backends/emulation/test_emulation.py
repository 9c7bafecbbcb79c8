"""Tests of the CPU emulation of CUDA kernels (gpuboost.backends.emulation).

The sample kernels live in tests/backends/emulation/cuda_samples/*.cu; they include
common.cuh and also compile with nvcc (checked by the last tests
when nvcc is on PATH).
"""

import concurrent.futures
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from _tiers import SLOW

from gpuboost.backends.emulation import (
    EmulatedKernel,
    EmulatedModule,
    EmulationCompileError,
    emulation_enabled,
    launcher,
    parse_kernel_signatures,
)
from gpuboost.backends.emulation.device_profiles import current_profile

REPO_ROOT = Path(__file__).resolve().parents[3]
SAMPLES_DIR = Path(__file__).resolve().parent / "cuda_samples"
CUDA_DIR = REPO_ROOT / "cuda"
COMPILE_CHECK_SCRIPT = REPO_ROOT / "scripts" / "cuda_compile_check.py"
#: Fields per thread written by the record_indices sample kernel.
INDEX_RECORD_FIELDS = 12
WARP_SIZE = 32
KIB = 1024


#: Options the CUDA backend compiles the project's kernels with.
PROJECT_OPTIONS = ("--fmad=false", "-std=c++17", f"-I{CUDA_DIR}")
UCONTEXT_OPTIONS = ("-DGPUBOOST_EMU_USE_UCONTEXT",)


#: The samples include the project's common.cuh (an include path, as CuPy would need).
SAMPLE_INCLUDE = (f"-I{CUDA_DIR}",)


def _sample_module(name, options=()):
    return EmulatedModule(path=SAMPLES_DIR / f"{name}.cu", options=SAMPLE_INCLUDE + tuple(options))


def _build(module):
    """Compile a module into the cache; failures surface in the tests that use it."""
    try:
        for name in module.kernel_names[:1]:
            module.get_function(name)
    except Exception:
        pass


@pytest.fixture(scope="module", autouse=True)
def _compile_modules_in_parallel():
    """Fill the compilation cache for every module of this file concurrently."""
    modules = [
        EmulatedModule(path=path, options=SAMPLE_INCLUDE)
        for path in sorted(SAMPLES_DIR.glob("*.cu"))
    ]
    modules.append(_sample_module("reductions", options=UCONTEXT_OPTIONS))
    modules += [
        EmulatedModule(path=path, options=PROJECT_OPTIONS) for path in sorted(CUDA_DIR.glob("*.cu"))
    ]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(_build, modules))


@pytest.fixture(scope="module")
def vector_ops():
    return _sample_module("vector_ops")


@pytest.fixture(scope="module")
def reductions():
    return _sample_module("reductions")


@pytest.fixture(scope="module")
def faults():
    return _sample_module("faults")


@pytest.fixture(params=["one_worker", "default_workers"])
def workers(request, monkeypatch):
    """Run with a single OS worker (all warps on one thread) and with the default."""
    if request.param == "one_worker":
        monkeypatch.setenv(launcher.WORKERS_ENV_VAR, "1")
    else:
        monkeypatch.delenv(launcher.WORKERS_ENV_VAR, raising=False)
    return request.param


# ---------------------------------------------------------------------------
# Switch and results of the sample kernels
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("value, expected", [("1", True), ("0", False), ("", False), (None, False)])
def test_emulation_enabled_reads_environment(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("GPUBOOST_EMULATE_CUDA", raising=False)
    else:
        monkeypatch.setenv("GPUBOOST_EMULATE_CUDA", value)
    assert emulation_enabled() is expected


def test_vector_add(vector_ops):
    kernel = vector_ops.get_function("vector_add")
    assert isinstance(kernel, EmulatedKernel)
    n = 1000
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    kernel(((n + 255) // 256,), (256,), (a, b, out, np.int32(n)))
    np.testing.assert_array_equal(out, a + b)


def test_multidimensional_grid_and_block_indices(vector_ops):
    grid, block = (3, 2, 2), (4, 3, 2)
    n_threads = int(np.prod(grid) * np.prod(block))
    records = np.full((n_threads, INDEX_RECORD_FIELDS), -1, np.int32)
    vector_ops.get_function("record_indices")(grid, block, (records,))
    expected = [
        (tx, ty, tz, bx, by, bz, *block, *grid)
        for bz in range(grid[2])
        for by in range(grid[1])
        for bx in range(grid[0])
        for tz in range(block[2])
        for ty in range(block[1])
        for tx in range(block[0])
    ]
    np.testing.assert_array_equal(records, np.array(expected, np.int32))


def test_int_grid_and_block_mean_one_dimension(vector_ops):
    records = np.full((6 * 5, INDEX_RECORD_FIELDS), -1, np.int32)
    vector_ops.get_function("record_indices")(6, 5, (records,))
    np.testing.assert_array_equal(records[:, 6:], [[5, 1, 1, 6, 1, 1]] * 30)


def test_every_scalar_and_pointer_kind(vector_ops):
    kernel = vector_ops.get_function("scale_and_shift")
    values = np.linspace(-1, 1, 37)
    out = np.zeros_like(values)
    data = np.arange(11, dtype=np.uint8)
    out_bytes = np.zeros_like(data)
    untyped = np.zeros(3, np.int16)
    kernel(
        (2,),
        (8,),
        (
            values,
            out,
            np.int64(values.size),
            np.float64(2.5),
            np.float32(0.25),
            np.bool_(True),
            np.uint32(16),
            data,
            out_bytes,
            np.uint64(data.size),
            untyped,
        ),
    )
    np.testing.assert_array_equal(out, 2.5 * values + 0.25 + 1.0)
    np.testing.assert_array_equal(out_bytes, data + 1)


@pytest.mark.parametrize("block", [32, 64, 256])
def test_block_sum_in_static_shared_memory(reductions, workers, block):
    n_blocks = 200
    values = np.random.default_rng(1).integers(-(2**40), 2**40, n_blocks * block - 7)
    sums = np.zeros(n_blocks, np.int64)
    reductions.get_function("block_sum_static")(
        (n_blocks,), (block,), (values, sums, np.int32(values.size))
    )
    padded = np.concatenate([values, np.zeros(7, np.int64)])
    np.testing.assert_array_equal(sums, padded.reshape(n_blocks, block).sum(axis=1))


def test_block_sum_in_dynamic_shared_memory(reductions, workers):
    block, n_blocks = 128, 40
    values = np.random.default_rng(2).integers(-1000, 1000, block * n_blocks).astype(np.float64)
    sums = np.zeros(n_blocks)
    reductions.get_function("block_sum_dynamic")(
        (n_blocks,),
        (block,),
        (values, sums, np.int32(values.size)),
        shared_mem=block * values.itemsize,
    )
    np.testing.assert_array_equal(sums, values.reshape(n_blocks, block).sum(axis=1))


def test_shared_memory_histogram_with_32_and_64_bit_atomics(workers):
    kernel = _sample_module("histogram").get_function("histogram_shared")
    rng = np.random.default_rng(3)
    n = 50_000
    bins = rng.integers(0, 256, n).astype(np.uint8)
    weights = rng.integers(-(2**30), 2**30, n).astype(np.int32)
    counts = np.zeros(256, np.int32)
    sums = np.zeros(256, np.int64)
    kernel((16,), (256,), (bins, weights, np.int32(n), counts, sums))
    np.testing.assert_array_equal(counts, np.bincount(bins, minlength=256))
    expected = np.zeros(256, np.int64)
    np.add.at(expected, bins, weights.astype(np.int64))
    np.testing.assert_array_equal(sums, expected)


def test_warp_shuffle_reduction(reductions, workers):
    n = 8 * 128
    values = np.random.default_rng(4).integers(-100, 100, n).astype(np.int32)
    warp_sums = np.zeros(n // WARP_SIZE, np.int32)
    reductions.get_function("warp_sum")((8,), (128,), (values, warp_sums, np.int32(n)))
    np.testing.assert_array_equal(warp_sums, values.reshape(-1, WARP_SIZE).sum(axis=1))


def test_ballot_popc_and_shuffle_variants(reductions, workers):
    n = 256
    values = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    outputs = dict(
        ballots=np.zeros(n // WARP_SIZE, np.uint32),
        counts=np.zeros(n // WARP_SIZE, np.int32),
        broadcast=np.zeros(n, np.float32),
        prefix=np.zeros(n, np.float32),
        maxima=np.zeros(n, np.float32),
    )
    reductions.get_function("warp_votes")(
        (2,), (128,), (values, np.float32(0.0), *outputs.values())
    )
    warps = values.reshape(-1, WARP_SIZE)
    positive = warps > 0
    expected_ballots = (positive * (1 << np.arange(WARP_SIZE, dtype=np.uint64))).sum(axis=1)
    np.testing.assert_array_equal(outputs["ballots"], expected_ballots.astype(np.uint32))
    np.testing.assert_array_equal(outputs["counts"], positive.sum(axis=1))
    np.testing.assert_array_equal(outputs["broadcast"], np.repeat(warps[:, 0], WARP_SIZE))
    running = warps.copy()  # the kernel's scan, same float32 additions in the same order
    for offset in (1, 2, 4, 8, 16):
        running[:, offset:] = running[:, offset:] + running[:, :-offset]
    np.testing.assert_array_equal(outputs["prefix"], running.ravel())
    np.testing.assert_array_equal(outputs["maxima"], np.repeat(warps.max(axis=1), WARP_SIZE))


def test_syncthreads_count_and_or(reductions, workers):
    block, n_blocks = 64, 4
    values = np.ones((n_blocks, block), np.int32)
    values[1] = -1  # none positive
    values[2, 5] = -1  # all but one
    values[3, 1:] = -1  # exactly one
    results = np.zeros((n_blocks, 3), np.int32)
    reductions.get_function("block_votes")((n_blocks,), (block,), (values, results))
    np.testing.assert_array_equal(results, [[64, 1, 1], [0, 0, 0], [63, 0, 1], [1, 0, 1]])


def test_shared_memory_is_poisoned_before_each_block(reductions):
    seen = np.zeros((3, 2), np.float32)
    reductions.get_function("read_shared_before_write")(
        (3,), (32,), (seen,), shared_mem=seen.itemsize
    )
    np.testing.assert_array_equal(seen[0], [1.0, 2.0])
    assert np.isnan(seen[1:]).all()  # not block 0's values: 0xff bytes


def test_partial_warp_ballot_counts_existing_lanes_only():
    module = EmulatedModule(
        options=SAMPLE_INCLUDE,
        code=r"""
        #include "common.cuh"
        extern "C" __global__ void count_lanes(unsigned int* ballots) {
          const unsigned int ballot = __ballot_sync(GPUBOOST_FULL_WARP_MASK, 1);
          if (threadIdx.x % warpSize == 0) ballots[threadIdx.x / warpSize] = ballot;
        }
    """,
    )
    ballots = np.zeros(2, np.uint32)
    module.get_function("count_lanes")((1,), (40,), (ballots,))
    np.testing.assert_array_equal(ballots, [0xFFFFFFFF, 0xFF])


def test_concurrent_launches_from_python_threads(reductions):
    kernel = reductions.get_function("warp_sum")
    values = np.arange(64 * 64, dtype=np.int32)
    results = [np.zeros(values.size // WARP_SIZE, np.int32) for _ in range(4)]
    threads = [
        threading.Thread(target=kernel, args=((64,), (64,), (values, out, np.int32(values.size))))
        for out in results
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for out in results:
        np.testing.assert_array_equal(out, values.reshape(-1, WARP_SIZE).sum(axis=1))


def test_ucontext_fallback_gives_the_same_results():
    module = _sample_module("reductions", options=UCONTEXT_OPTIONS)
    values = np.arange(4 * 64, dtype=np.int32)
    warp_sums = np.zeros(values.size // WARP_SIZE, np.int32)
    module.get_function("warp_sum")((4,), (64,), (values, warp_sums, np.int32(values.size)))
    np.testing.assert_array_equal(warp_sums, values.reshape(-1, WARP_SIZE).sum(axis=1))
    results = np.zeros((1, 3), np.int32)
    module.get_function("block_votes")((1,), (64,), (np.ones(64, np.int32), results))
    np.testing.assert_array_equal(results, [[64, 1, 1]])


# ---------------------------------------------------------------------------
# Failures inside kernels
# ---------------------------------------------------------------------------
def test_device_assert_raises_runtime_error(faults):
    values = np.array([3, 1, -2, 5], np.int32)
    message = r"assertion `values\[i\] > 0` failed.*thread \(2, 0, 0\)"
    with pytest.raises(RuntimeError, match=message):
        faults.get_function("assert_positive")((1,), (32,), (values, np.int32(values.size)))
    # the module still works after a failed launch
    faults.get_function("assert_positive")((1,), (32,), (np.abs(values), np.int32(values.size)))


def test_trap_raises_runtime_error(faults):
    values = np.array([1, -1], np.int32)
    with pytest.raises(RuntimeError, match=r"__trap\(\) called"):
        faults.get_function("trap_on_negative")((1,), (32,), (values, np.int32(values.size)))


def test_divergent_syncthreads_is_reported(faults, workers):
    with pytest.raises(RuntimeError, match="divergent __syncthreads"):
        faults.get_function("divergent_barrier")((1,), (64,), (np.zeros(64, np.int32),))


def test_shuffle_after_early_return_is_reported(faults, workers):
    with pytest.raises(RuntimeError, match=r"__shfl_down_sync.*lanes 0x0000ffff took part"):
        faults.get_function("shuffle_after_early_return")((1,), (64,), (np.zeros(64, np.int32),))


def test_barrier_against_shuffle_deadlock_is_reported(faults):
    with pytest.raises(RuntimeError, match="deadlock"):
        faults.get_function("barrier_shuffle_deadlock")((1,), (32,), (np.zeros(32, np.int32),))


def test_shuffle_from_missing_lane_of_partial_warp_is_reported(reductions):
    values = np.ones(48, np.int32)
    with pytest.raises(RuntimeError, match="does not exist in this partial warp"):
        reductions.get_function("warp_sum")(
            (1,), (48,), (values, np.zeros(2, np.int32), np.int32(48))
        )


# ---------------------------------------------------------------------------
# Argument checks (TypeError naming kernel, argument, position and C type)
# ---------------------------------------------------------------------------
def _vector_add_args(n=8):
    return (np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32))


def test_python_int_for_int_parameter_is_rejected(vector_ops):
    kernel = vector_ops.get_function("vector_add")
    message = r"'vector_add' argument 3 'n' \(C type `int`\).*Python int.*np\.int32\(8\)"
    with pytest.raises(TypeError, match=message):
        kernel((1,), (32,), (*_vector_add_args(), 8))


def test_numpy_int64_for_int_parameter_is_rejected(vector_ops):
    kernel = vector_ops.get_function("vector_add")
    with pytest.raises(TypeError, match=r"argument 3 'n'.*dtype int32.*dtype int64"):
        kernel((1,), (32,), (*_vector_add_args(), np.int64(8)))


def test_python_float_for_float_parameter_is_rejected(vector_ops):
    kernel = vector_ops.get_function("scale_and_shift")
    data = np.zeros(4, np.uint8)
    with pytest.raises(TypeError, match=r"argument 4 'offset'.*Python float.*np\.float32"):
        kernel(
            (1,),
            (32,),
            (
                np.zeros(4),
                np.zeros(4),
                np.int64(4),
                np.float64(1),
                0.5,
                np.bool_(False),
                np.uint32(32),
                data,
                data.copy(),
                np.uint64(4),
                data,
            ),
        )


def test_int64_array_for_int32_pointer_is_rejected(vector_ops):
    kernel = vector_ops.get_function("record_indices")
    message = r"argument 0 'records' \(C type `int32_t\*`\).*dtype int32.*dtype int64"
    with pytest.raises(TypeError, match=message):
        kernel((1,), (1,), (np.zeros(INDEX_RECORD_FIELDS, np.int64),))


def test_wrong_argument_count_is_rejected(vector_ops):
    kernel = vector_ops.get_function("vector_add")
    with pytest.raises(TypeError, match=r"'vector_add' takes 4 arguments.*got 3"):
        kernel((1,), (32,), _vector_add_args())


def test_non_contiguous_array_is_rejected(vector_ops):
    kernel = vector_ops.get_function("vector_add")
    a, b, out = _vector_add_args(16)
    with pytest.raises(TypeError, match=r"argument 0 'a'.*C-contiguous"):
        kernel((1,), (32,), (a[::2], b[:8], out[:8], np.int32(8)))


def test_read_only_array_for_non_const_pointer_is_rejected(vector_ops):
    kernel = vector_ops.get_function("vector_add")
    a, b, out = _vector_add_args()
    out.flags.writeable = False
    with pytest.raises(TypeError, match=r"argument 2 'out'.*read-only"):
        kernel((1,), (32,), (a, b, out, np.int32(8)))


def test_non_array_for_pointer_is_rejected(vector_ops):
    kernel = vector_ops.get_function("vector_add")
    a, b, _ = _vector_add_args()
    with pytest.raises(TypeError, match=r"argument 2 'out'.*numpy\.ndarray.*got list"):
        kernel((1,), (32,), (a, b, [0.0] * 8, np.int32(8)))


# ---------------------------------------------------------------------------
# Launch limits (ValueError)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "grid, block",
    [
        ((1,), (1025,)),
        ((1,), (32, 32, 2)),
        ((1,), (1, 1, 65)),
        ((0,), (32,)),
        ((1, 65536), (32,)),
        ((1,), (0,)),
    ],
)
def test_launch_configuration_beyond_limits_is_rejected(vector_ops, grid, block):
    with pytest.raises(ValueError, match="vector_add"):
        vector_ops.get_function("vector_add")(grid, block, (*_vector_add_args(), np.int32(8)))


def test_bad_grid_types_are_rejected(vector_ops):
    with pytest.raises(TypeError, match="grid"):
        vector_ops.get_function("vector_add")(
            (1, 1, 1, 1), (32,), (*_vector_add_args(), np.int32(8))
        )


def test_dynamic_shared_memory_above_48_kib_needs_opt_in(reductions):
    module = _sample_module("reductions")  # own kernel object: the attribute is per kernel
    kernel = module.get_function("block_sum_dynamic")
    values, sums = np.ones(64), np.zeros(1)
    args = (values, sums, np.int32(64))
    with pytest.raises(ValueError, match="max_dynamic_shared_size_bytes"):
        kernel((1,), (64,), args, shared_mem=64 * KIB)
    with pytest.raises(ValueError, match="max_dynamic_shared_size_bytes"):
        kernel.max_dynamic_shared_size_bytes = current_profile().shared_per_block_optin + 1
    kernel.max_dynamic_shared_size_bytes = 100 * KIB
    kernel((1,), (64,), args, shared_mem=100 * KIB)
    assert sums[0] == 64.0
    with pytest.raises(ValueError, match="shared_mem"):
        kernel((1,), (64,), args, shared_mem=100 * KIB + 1)


def test_static_shared_memory_is_measured_and_limited():
    module = EmulatedModule(
        options=SAMPLE_INCLUDE,
        code=r"""
        #include "common.cuh"
        GPUBOOST_DEVICE_INLINE double helper_sum(double value) {
          __shared__ double helper_buffer[8];
          helper_buffer[threadIdx.x % 8] = value;
          __syncthreads();
          return helper_buffer[0];
        }
        extern "C" __global__ void small_shared(double* out) {
          __shared__ double small[16];
          small[threadIdx.x % 16] = 1.0;
          out[threadIdx.x] = helper_sum(small[0]);
        }
        extern "C" __global__ void huge_shared(double* out) {
          __shared__ double huge[7000];
          huge[threadIdx.x] = 2.0;
          __syncthreads();
          out[threadIdx.x] = huge[(threadIdx.x + 1) % blockDim.x];
        }
    """,
    )
    small = module.get_function("small_shared")
    huge = module.get_function("huge_shared")
    double_bytes = np.dtype(np.float64).itemsize
    assert small.shared_size_bytes == (16 + 8) * double_bytes  # own + device helper's
    assert huge.shared_size_bytes == (7000 + 8) * double_bytes
    out = np.zeros(32)
    small((1,), (32,), (out,))
    np.testing.assert_array_equal(out, 1.0)
    with pytest.raises(ValueError, match="static"):
        huge((1,), (32,), (out,))


# ---------------------------------------------------------------------------
# Modules: lookup, options, compilation, signatures
# ---------------------------------------------------------------------------
def test_unknown_kernel_name_is_a_lookup_error(vector_ops):
    with pytest.raises(LookupError, match="no_such_kernel.*vector_add"):
        vector_ops.get_function("no_such_kernel")


def test_module_needs_exactly_one_of_code_and_path():
    with pytest.raises(TypeError):
        EmulatedModule()
    with pytest.raises(TypeError):
        EmulatedModule(code="", path=SAMPLES_DIR / "vector_ops.cu")
    with pytest.raises(NotImplementedError):
        EmulatedModule(code="", name_expressions=["kernel<float>"])


def test_define_options_reach_the_source(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUBOOST_EMULATION_CACHE", str(tmp_path))
    code = r"""
        #include "common.cuh"
        extern "C" __global__ void fill(int* out) { out[threadIdx.x] = FILL_VALUE; }
    """
    out = np.zeros(4, np.int32)
    EmulatedModule(
        code=code, options=("--fmad=false", "-std=c++17", "-DFILL_VALUE=7") + SAMPLE_INCLUDE
    ).get_function("fill")((1,), (4,), (out,))
    np.testing.assert_array_equal(out, 7)
    assert len(list(tmp_path.glob("*.so"))) == 1
    # same source and options: the cached library is reused, nothing is rebuilt
    EmulatedModule(code=code, options=("-D", "FILL_VALUE=7") + SAMPLE_INCLUDE).get_function("fill")
    assert len(list(tmp_path.glob("*.so"))) == 1
    assert not list(tmp_path.glob("*.tmp"))


def test_compile_error_is_reported_with_compiler_output():
    module = EmulatedModule(code='extern "C" __global__ void broken(int* out) { out[0] = ; }')
    with pytest.raises(EmulationCompileError, match="broken"):
        module.get_function("broken")


def test_parse_kernel_signatures_reads_the_source_text():
    source = r"""
        #define BOUNDS __launch_bounds__(256)
        // extern "C" __global__ void commented_out(int x) {}
        template <typename T> __global__ void templated(T* x) {}
        __global__ void cpp_linkage(int x) {}
        extern "C" __global__ void BOUNDS plain(const int64_t* __restrict__ rows,
                                                 float values[], unsigned int, /* n */ int n) {}
        extern "C" {
        __global__ void __launch_bounds__(128, 2) in_block(void) {}
        }
    """
    kernels = parse_kernel_signatures(source)
    assert sorted(kernels) == ["in_block", "plain"]
    assert [(p.name, p.c_type) for p in kernels["plain"]] == [
        ("rows", "const int64_t* __restrict__"),
        ("values", "float*"),
        ("arg2", "unsigned int"),
        ("n", "int"),
    ]
    assert kernels["in_block"] == []


@pytest.mark.parametrize("source", sorted(CUDA_DIR.glob("*.cu")), ids=lambda path: path.name)
def test_project_kernel_file_compiles_under_emulation(source):
    module = EmulatedModule(path=source, options=PROJECT_OPTIONS)
    for name in module.kernel_names:
        assert module.get_function(name).name == name


# ---------------------------------------------------------------------------
# scripts/cuda_compile_check.py
# ---------------------------------------------------------------------------
def _load_compile_check():
    spec = importlib.util.spec_from_file_location("cuda_compile_check", COMPILE_CHECK_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compile_check_parses_ptxas_report():
    report = """\
ptxas info    : Compiling entry function 'first' for 'sm_80'
ptxas info    : Function properties for first
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 372 bytes cmem[0]
ptxas info    : Compiling entry function 'second' for 'sm_80'
ptxas info    : Function properties for second
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 360 bytes cmem[0]
"""
    first, second = _load_compile_check().parse_ptxas_output(report)
    assert (
        first.kernel,
        first.arch,
        first.registers,
        first.shared_bytes,
        first.spill_store_bytes,
        first.spill_load_bytes,
        first.stack_bytes,
    ) == ("first", "sm_80", 40, 2048, 8, 4, 16)
    assert (second.kernel, second.registers, second.shared_bytes) == ("second", 12, 0)


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


@needs_nvcc
def test_compile_check_script_passes_on_samples():
    result = subprocess.run(
        [sys.executable, str(COMPILE_CHECK_SCRIPT), str(SAMPLES_DIR), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for kernel in ("vector_add", "block_sum_static", "histogram_shared", "warp_votes"):
        assert kernel in result.stdout
    assert "sm_80" in result.stdout and "sm_90" in result.stdout


@needs_nvcc
def test_compile_check_script_fails_on_warnings(tmp_path):
    source = tmp_path / "unused.cu"
    source.write_text('extern "C" __global__ void unused(int* out) { int unused_value; }\n')
    result = subprocess.run(
        [sys.executable, str(COMPILE_CHECK_SCRIPT), str(source), "--arch", "sm_80"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED" in result.stdout


@SLOW  # fast sibling: test_compile_check_script_passes_on_samples (the same script)
@needs_nvcc
def test_compile_check_script_fails_on_registers_without_launch_bounds(tmp_path):
    body = """
    double acc[40];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#pragma unroll
    for (int k = 0; k < 40; ++k) acc[k] = in[i + k * n];
    double total = 0.0;  // every load ahead of its use: over 64 registers (108 on sm_80)
#pragma unroll
    for (int k = 0; k < 40; ++k) total += acc[k] / (1.0 + acc[39 - k]);
    out[i] = total;
}
"""
    unbounded = tmp_path / "unbounded.cu"
    unbounded.write_text(
        'extern "C" __global__ void heavy(const double* in, double* out, int n) {' + body
    )
    bounded = tmp_path / "bounded.cu"
    bounded.write_text(
        'extern "C" __global__ void __launch_bounds__(256) heavy(const double* '
        "in, double* out, int n) {" + body
    )
    results = {}
    for path in (unbounded, bounded):
        results[path.name] = subprocess.run(
            [sys.executable, str(COMPILE_CHECK_SCRIPT), str(path), "--arch", "sm_80"],
            capture_output=True,
            text=True,
            check=False,
        )
    assert results["unbounded.cu"].returncode == 1
    assert "without __launch_bounds__" in results["unbounded.cu"].stdout
    assert results["bounded.cu"].returncode == 0, results["bounded.cu"].stdout


# ---------------------------------------------------------------------------
# __launch_bounds__
# ---------------------------------------------------------------------------
LAUNCH_BOUNDS_SOURCE = r"""
#define SMALL_BLOCK 64
constexpr int kWarps = 3;
extern "C" __global__ void __launch_bounds__(SMALL_BLOCK) small(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
extern "C" __global__ void __launch_bounds__(kWarps * 32, 2) warps(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2;
}
extern "C" __global__ void unbounded(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 3;
}
"""


def test_parse_launch_bounds():
    assert launcher.parse_launch_bounds(LAUNCH_BOUNDS_SOURCE) == {
        "small": "SMALL_BLOCK",
        "warps": "kWarps * 32",
    }


def test_launches_beyond_launch_bounds_fail_as_on_a_gpu():
    module = EmulatedModule(code=LAUNCH_BOUNDS_SOURCE)
    small, warps, unbounded = (
        module.get_function(name) for name in ("small", "warps", "unbounded")
    )
    assert (
        small.max_threads_per_block,
        warps.max_threads_per_block,
        unbounded.max_threads_per_block,
    ) == (64, 96, launcher.MAX_THREADS_PER_BLOCK)
    out = np.zeros(128, dtype=np.int32)
    small((2,), (64,), (out,))
    warps((1,), (96,), (out,))
    assert out[:64].tolist() == [2] * 64 and out[96:].tolist() == [1] * 32
    with pytest.raises(ValueError, match="__launch_bounds__"):
        small((1,), (65,), (out,))
    with pytest.raises(ValueError, match="__launch_bounds__"):
        warps((1,), (32, 4), (out,))
    unbounded((1,), (128,), (out,))
    assert out.tolist() == [3] * 128
