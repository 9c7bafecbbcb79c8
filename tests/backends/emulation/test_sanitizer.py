"""The emulation's sanitizer (GPUBOOST_SANITIZE=memcheck,racecheck,initcheck): each
check fires on a kernel with a planted bug (tests/backends/emulation/cuda_samples/
sanitizer_bugs.cu) and names the kernel, the threads and the source line; the fixed
variants pass; a small training runs clean under all three checks (fast tier), and so do
the CUDA backend's tests, launching every kernel (slow tier: the sanitizer run).
"""

import re
from pathlib import Path

import numpy as np
import pytest
from _parity import assert_models_match
from _pytest_child import REPO_ROOT, run_pytest
from _sanitizer_launches import LAUNCHES_ENV_VAR
from _tiers import SLOW

import gpuboost
from gpuboost.backends.cuda.launch import EMULATED, PROBE_KERNEL, get_module
from gpuboost.backends.cuda.sources import cuda_source_dir
from gpuboost.backends.emulation import EmulatedModule, sanitizer
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.backends.emulation.sanitizer import SANITIZE_ENV_VAR, SanitizerError

SAMPLE = Path(__file__).resolve().parent / "cuda_samples" / "sanitizer_bugs.cu"
ALL_CHECKS = "memcheck,racecheck,initcheck"
#: Threads per block of the shared-memory samples (kTileThreads in sanitizer_bugs.cu).
TILE_THREADS = 64
WARP_SIZE = 32
#: A hang guard for the CUDA backend's tests under the sanitizer (the slow tier's bar is
#: 300 s on a 2-core machine).
SUITE_TIMEOUT_SECONDS = 600


def _line_of(text):
    """Line number of the first line of the sample containing ``text``."""
    for number, line in enumerate(SAMPLE.read_text().splitlines(), start=1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {SAMPLE.name}")


def _location(text):
    return re.escape(f"{SAMPLE.name}:{_line_of(text)}")


@pytest.fixture(scope="module")
def bugs():
    return EmulatedModule(path=SAMPLE, options=(f"-I{REPO_ROOT / 'cuda'}",))


@pytest.fixture
def sanitize(monkeypatch):
    """Set GPUBOOST_SANITIZE for the test: ``sanitize("racecheck")``."""

    def switch(checks=ALL_CHECKS):
        monkeypatch.setenv(SANITIZE_ENV_VAR, checks)

    return switch


def _values(n):
    return np.arange(1, n + 1, dtype=np.int32)


# ---- switch -------------------------------------------------------------------------
def test_checks_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(SANITIZE_ENV_VAR, raising=False)
    assert sanitizer.enabled_checks() == frozenset()
    monkeypatch.setenv(SANITIZE_ENV_VAR, " racecheck, memcheck ")
    assert sanitizer.enabled_checks() == {"racecheck", "memcheck"}
    monkeypatch.setenv(SANITIZE_ENV_VAR, "memcheck,leakcheck")
    with pytest.raises(ValueError, match="leakcheck"):
        sanitizer.enabled_checks()


def test_without_the_sanitizer_a_racy_kernel_runs_unchecked(bugs, monkeypatch):
    monkeypatch.delenv(SANITIZE_ENV_VAR, raising=False)
    out = np.zeros(TILE_THREADS, np.int32)
    bugs.get_function("shared_neighbour")(
        (1,), (TILE_THREADS,), (_values(TILE_THREADS), np.int32(0), out)
    )


# ---- memcheck -------------------------------------------------------------------------
def test_memcheck_finds_a_write_past_the_end(bugs, sanitize):
    sanitize()
    n = 100
    out = np.zeros(n, np.int32)
    kernel = bugs.get_function("copy_off_by_one")
    with pytest.raises(SanitizerError) as caught:
        kernel((2,), (64,), (_values(n), np.int32(n), out))
    message = str(caught.value)
    assert "kernel 'copy_off_by_one'" in message
    assert "memcheck: out-of-bounds global write of 4 bytes at 0 bytes past the end of " in message
    assert f"argument 2 'out' ({4 * n} bytes)" in message
    assert re.search(_location("if (i <= n)"), message), message
    assert f"thread ({n % 64}, 0, 0)" in message and f"block ({n // 64}, 0, 0)" in message
    # The same launch is correct when `out` has room for element n.
    roomy = np.zeros(n + 1, np.int32)
    kernel((2,), (64,), (_values(n), np.int32(n), roomy))
    np.testing.assert_array_equal(roomy, np.append(_values(n), -1))


def test_memcheck_finds_a_read_before_the_start(bugs, sanitize):
    sanitize("memcheck")
    with pytest.raises(
        SanitizerError,
        match=r"read of 4 bytes at 4 bytes before the start of "
        r"argument 0 'source'",
    ) as caught:
        bugs.get_function("read_before_start")(
            (1,), (8,), (_values(8), np.int32(8), np.zeros(8, np.int32))
        )
    assert re.search(_location("source[i - 1]"), str(caught.value))


def test_memcheck_finds_a_write_through_a_const_pointer(bugs, sanitize):
    sanitize("memcheck")
    values = _values(8)
    with pytest.raises(
        SanitizerError,
        match=r"write of 4 bytes at offset 0 of argument 0 "
        r"'values' .* only received through `const` pointers",
    ):
        bugs.get_function("write_through_const")((1,), (8,), (values, np.int32(8)))
    np.testing.assert_array_equal(values, _values(8))  # const memory is not copied back


def test_memcheck_finds_dynamic_shared_memory_overflow(bugs, sanitize):
    sanitize("memcheck")
    threads = 32
    kernel = bugs.get_function("dynamic_shared_overflow")
    with pytest.raises(SanitizerError) as caught:
        kernel((1,), (threads,), (np.zeros(threads, np.int32),), shared_mem=4 * threads)
    message = str(caught.value)
    assert (
        "out-of-bounds shared-memory write of 4 bytes at 0 bytes past the end of the "
        f"dynamic shared memory ({4 * threads} bytes)" in message
    )
    assert f"thread ({threads - 1}, 0, 0)" in message
    out = np.zeros(threads, np.int32)
    kernel((1,), (threads,), (out,), shared_mem=4 * (threads + 1))  # room for the last slot


def test_memcheck_finds_static_shared_memory_overflow(bugs, sanitize):
    sanitize("memcheck")
    with pytest.raises(
        SanitizerError,
        match=r"shared-memory write of 4 bytes at 0 bytes past the "
        r"end of static __shared__ static_shared_overflow::tile "
        rf"\({4 * TILE_THREADS} bytes\)",
    ):
        bugs.get_function("static_shared_overflow")(
            (1,), (TILE_THREADS,), (_values(TILE_THREADS), np.zeros(TILE_THREADS, np.int32))
        )


# ---- racecheck ----------------------------------------------------------------------
def test_racecheck_finds_a_shared_memory_race_between_warps(bugs, sanitize):
    sanitize()
    kernel = bugs.get_function("shared_neighbour")
    out = np.zeros(TILE_THREADS, np.int32)
    with pytest.raises(SanitizerError) as caught:
        kernel((1,), (TILE_THREADS,), (_values(TILE_THREADS), np.int32(0), out))
    message = str(caught.value)
    assert "racecheck: block-level write-after-read hazard on shared-memory byte" in message
    assert "shared_neighbour::tile" in message
    # thread 0 read thread 32's slot, then thread 32 wrote it in the same interval
    assert re.search(r"thread \(0, 0, 0\) read at .*" + _location("out[thread] = tile"), message)
    assert re.search(
        rf"thread \({WARP_SIZE}, 0, 0\) writes at .*" + _location("tile[thread] = values"), message
    )
    assert "no __syncthreads between them" in message
    kernel((1,), (TILE_THREADS,), (_values(TILE_THREADS), np.int32(1), out))  # with the barrier
    np.testing.assert_array_equal(out, np.roll(_values(TILE_THREADS), -WARP_SIZE))


def test_racecheck_finds_a_warp_level_hazard_without_syncwarp(bugs, sanitize):
    sanitize("racecheck")
    kernel = bugs.get_function("warp_exchange_rounds")
    out = np.zeros(TILE_THREADS, np.int32)
    with pytest.raises(
        SanitizerError,
        match=r"racecheck: warp-level write-after-read hazard .* "
        r"no __syncwarp or __syncthreads between them",
    ):
        kernel((1,), (TILE_THREADS,), (_values(TILE_THREADS), np.int32(0), out))
    kernel((1,), (TILE_THREADS,), (_values(TILE_THREADS), np.int32(1), out))
    values = _values(TILE_THREADS).reshape(-1, WARP_SIZE)
    expected = 2 * np.roll(np.roll(values, -1, axis=1), -1, axis=1)
    np.testing.assert_array_equal(out, expected.reshape(-1))


def test_racecheck_finds_global_races_within_and_between_blocks(bugs, sanitize):
    sanitize("racecheck")
    kernel = bugs.get_function("everyone_writes_first")
    out = np.zeros(1, np.int32)
    with pytest.raises(
        SanitizerError,
        match=r"warp-level write-after-write hazard on global byte "
        r"at offset 0 of argument 1 'out'",
    ):
        kernel((1,), (2,), (np.int32(0), out))
    with pytest.raises(
        SanitizerError,
        match=r"write-after-write hazard on global byte at offset 0 "
        r"of argument 1 'out' .* between different blocks \(never ordered\): thread "
        r"\(0, 0, 0\) of block \(0, 0, 0\) wrote",
    ):
        kernel((2,), (1,), (np.int32(0), out))
    out[...] = 0
    kernel((3,), (64,), (np.int32(1), out))  # atomics never race with each other
    assert out[0] == 3 * 64


def test_racecheck_alone_ignores_what_the_other_checks_find(bugs, sanitize):
    sanitize("racecheck")
    bugs.get_function("shared_read_unwritten")(
        (1,), (TILE_THREADS,), (np.zeros(TILE_THREADS, np.int32),)
    )


# ---- initcheck ------------------------------------------------------------------------
def test_initcheck_finds_a_kernel_reading_what_nothing_wrote(bugs, sanitize):
    sanitize()
    n = 10
    values = xp.empty(n, dtype=np.int32)
    fill = bugs.get_function("fill_prefix")
    fill((1,), (32,), (np.int32(6), values))
    as_double = xp.empty(n)
    as_double[:6] = values[:6].astype(np.float64)
    total = xp.zeros(1)
    with pytest.raises(SanitizerError) as caught:
        bugs.get_function("sum_all")((1,), (1,), (as_double, np.int32(n), total))
    message = str(caught.value)
    assert "initcheck: global read of 8 bytes at offset 48 of argument 0 'values'" in message
    assert re.search(_location("sum += values[i]"), message)
    as_double[6:] = 0.0
    bugs.get_function("sum_all")((1,), (1,), (as_double, np.int32(n), total))
    assert total.get()[0] == sum(range(6))


def test_initcheck_follows_kernel_writes_into_array_operations(bugs, sanitize):
    sanitize("initcheck")
    out = xp.empty(8, dtype=np.int32)
    bugs.get_function("fill_prefix")((1,), (32,), (np.int32(5), out))
    np.testing.assert_array_equal(out[:5].get(), np.arange(5))  # written by the kernel
    with pytest.raises(
        SanitizerError,
        match=r"initcheck: ndarray.get\(\) .* reads 3 element\(s\) "
        r"of an array never written \(first at index \(5,\)\); the memory comes "
        r"from xp.empty\(\) at .*test_sanitizer.py",
    ):
        out.get()
    with pytest.raises(SanitizerError, match=r"initcheck: ndarray.sum\(\)"):
        out.sum()
    out[5:] = 7
    assert int(out.sum()) == sum(range(5)) + 21


def test_initcheck_poisons_empty_arrays(sanitize):
    sanitize("initcheck")
    poisoned = xp.empty((2, 3), dtype=np.int64)
    assert (poisoned.view(np.uint8)._array == sanitizer.POISON_BYTE).all()
    poisoned[...] = 1  # every byte written: nothing is left to check
    assert int(poisoned.sum()) == 6


def test_initcheck_indexes_with_an_ellipsis_over_the_array_axes(sanitize):
    """``array[i, ..., j]`` writes and reads the array's elements, the Ellipsis spanning
    the array's axes only (not the bytes of an element): columns written one by one are
    written, a column left out is still caught."""
    sanitize("initcheck")
    columns = xp.empty((2, 3, 4), dtype=np.int64)
    for column in range(3):
        columns[0, ..., column] = column
        columns[1, ..., column] = column
    assert int(columns[:, :, :3].sum()) == 2 * 3 * (0 + 1 + 2)
    with pytest.raises(SanitizerError, match="initcheck: .* never written"):
        columns[0, ..., 3].sum()


def test_initcheck_finds_an_unwritten_shared_memory_read(bugs, sanitize):
    sanitize("initcheck")
    with pytest.raises(
        SanitizerError,
        match=r"initcheck: shared-memory read of 4 bytes at offset 0 "
        r"of static __shared__ shared_read_unwritten::tile .* never written in this "
        r"block",
    ):
        bugs.get_function("shared_read_unwritten")(
            (1,), (TILE_THREADS,), (np.zeros(TILE_THREADS, np.int32),)
        )


# ---- the CUDA backend ---------------------------------------------------------------
#: Tests of the CUDA backend's fast tier left out of the sanitizer run: parity matrices
#: and operation counts whose kernels, launch paths and shapes lighter tests of the same
#: files launch too, at several times their cost (the run checks that every kernel is
#: launched); and compiler checks, which launch nothing.
SANITIZER_DESELECTED = (
    "tests/backends/cuda/test_lossguide.py::test_undoing_a_speculative_expansion_costs_no_device_operation",
    "tests/backends/cuda/test_lossguide.py::test_dropping_the_expansions_ahead_costs_no_device_operation",
    "tests/backends/cuda/test_row_scan.py::test_models_equal_the_cpu_models",
    "tests/backends/cuda/test_row_scan.py::test_mixed_levels_copy_their_records_once",
    "tests/backends/cuda/test_row_scan.py::test_batches_the_kernel_cannot_take_use_the_definition",
    "tests/backends/cuda/test_row_scan.py::test_mixed_levels_the_kernel_cannot_take_use_the_definition",
    "tests/backends/cuda/test_partition_ahead.py::test_the_partition_ahead_moves_fewer_bytes",
    "tests/backends/cuda/test_partition_ahead.py::test_trainings_take_partitions_and_last_levels_from_the_scan[params0]",
    # the speculative lossguide's most expensive configurations (10 s each sanitized):
    # the same kernels as the other configurations of both modes launch
    "tests/backends/cuda/test_lossguide.py::test_speculative_cuda_lossguide_is_the_cpu_and_the_one_leaf_model[multiclass-ahead]",
    "tests/backends/cuda/test_lossguide.py::test_speculative_cuda_lossguide_is_the_cpu_and_the_one_leaf_model[goss-prefix]",
    "tests/backends/cuda/test_predict.py::test_forest_margins_match_numpy",
    "tests/backends/cuda/test_predict.py::test_forest_margins_non_contiguous",
    "tests/backends/cuda/test_nvrtc_compile_check.py",
    # trainings on device input: the same training kernels as the parity tests; the
    # device-edge test (weighted_run_totals) and the smaller device-input tests stay
    "tests/backends/cuda/test_device_input.py::test_device_features_train_the_model_of_their_host_copy",
    "tests/backends/cuda/test_device_input.py::test_the_estimators_take_device_input",
    "tests/backends/cuda/test_device_input.py::test_evaluation_sets_and_subsets_stay_on_the_device",
    "tests/backends/cuda/test_device_input.py::test_the_features_never_cross_to_the_host",
    "tests/backends/cuda/test_device_input.py::test_a_cudf_frame_with_category_columns_is_encoded_on_the_device",
    # 700 classes x 3,001 rows: the softprob kernels' shapes run on 3 and 5 classes too
    *(
        "tests/backends/cuda/test_gradients.py::test_kernel_gradients_equal_the_objective"
        f"[{weights}-multi:softprob-extra4]"
        for weights in ("none", "random", "signed_zeros", "huge")
    ),
)


def _kernels_of_the_backend():
    """Every kernel of cuda/*.cu (as the emulation compiles them) and the probe kernel."""
    names = {PROBE_KERNEL}
    for path in cuda_source_dir().glob("*.cu"):
        names.update(get_module(EMULATED, path.stem).kernel_names)
    return names


@SLOW  # fast siblings: the planted bugs above, and the training below
def test_the_cuda_backend_suite_is_clean_under_every_check(tmp_path):
    """The sanitizer tier: the fast tier's tests of the CUDA backend (every primitive
    against NumPy, training parity of the configurations, small data) with all three
    checks, but the parity matrices of SANITIZER_DESELECTED; every kernel of the backend
    is launched, so every kernel runs under each check."""
    deselected = [f"--deselect={node}" for node in SANITIZER_DESELECTED]  # from REPO_ROOT
    # the fast tier's tests of the CUDA backend, on one xdist worker per core (the child's
    # controller builds the instrumented flavour of every kernel file first: _warm_up)
    status, output = run_pytest(
        [
            "-p",
            "_sanitizer_launches",
            "--durations=10",
            REPO_ROOT / "tests" / "backends" / "cuda",
            *deselected,
            "-k",
            # compiler checks launch nothing; 400,000 rows prove nothing 5,000 do not
            "not compiles_with_nvcc and not 400000",
        ],
        {SANITIZE_ENV_VAR: ALL_CHECKS, LAUNCHES_ENV_VAR: str(tmp_path)},
        timeout=SUITE_TIMEOUT_SECONDS,
    )
    print(output[-2500:])  # the slowest sanitized tests (shown with -s or -rP)
    assert status == 0, output[-6000:]
    launched = [name for record in tmp_path.glob("*.txt") for name in record.read_text().split()]
    assert len(launched) > 500, f"{len(launched)} instrumented launches"
    never = _kernels_of_the_backend() - set(launched)
    assert not never, f"kernels no sanitized test launched: {sorted(never)}"


def test_a_training_is_clean_under_every_check(sanitize, emulated_cuda):
    """The fast tier's sanitizer run: a small depthwise training on the CUDA backend with
    all three checks (the instrumented flavour of every kernel a round launches) equals
    the CPU backend's model."""
    sanitize()
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (X[:, 0] + np.nan_to_num(X[:, 1]) > 0).astype(np.float64)
    params = {"objective": "binary:logistic", "max_depth": 4, "verbosity": 0}
    models = [
        gpuboost.train(dict(params, device=device), gpuboost.Dataset(X, label=y), 3)
        for device in ("cuda", "cpu")
    ]
    assert_models_match(*models)
