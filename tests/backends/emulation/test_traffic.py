"""The emulation's traffic model (gpuboost.backends.emulation.traffic): per warp
instruction coalescing, bank conflicts and atomics of the instrumented kernels
(tests/backends/emulation/cuda_samples/traffic.cu), bytes and host synchronizations of
the CuPy-level operations, the phases, the cost model and the floor."""

import math
from pathlib import Path

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cuda import row_scan as cuda_row_scan
from gpuboost.backends.emulation import EmulatedModule, emulated_kernels, traffic
from gpuboost.backends.emulation.device_array import count_operations
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.core.profiling import nvtx_range

REPO_ROOT = Path(__file__).resolve().parents[3]
SAMPLE = Path(__file__).resolve().parent / "cuda_samples" / "traffic.cu"
WARP = 32
SECTOR = traffic.SECTOR_BYTES
#: Words of the shared buffer of shared_strided_store.
SHARED_WORDS = 1024
BANKS = 32


@pytest.fixture(scope="module")
def samples():
    return EmulatedModule(path=SAMPLE, options=(f"-I{REPO_ROOT / 'cuda'}",))


def _launch(samples, name, grid, block, args):
    """Launch under the traffic model; returns the kernel's counters."""
    with traffic.record_traffic() as log:
        samples.get_function(name)(grid, block, args)
    (event,) = log.events
    assert event.kind == traffic.KERNEL and event.name == name
    return event.counters


# ---- kernels: coalescing, bank conflicts, atomics ----------------------------------
@pytest.mark.parametrize("stride", [1, 2, 8, 16])
def test_global_sectors_follow_coalescing(samples, stride):
    threads, warps = 64, 2
    source = np.arange(threads * stride, dtype=np.int32)
    out = np.zeros(threads, np.int32)
    counters = _launch(samples, "strided_copy", (1,), (threads,), (source, np.int32(stride), out))
    np.testing.assert_array_equal(out, source[::stride])
    # A warp's 32 lanes read 4-byte elements `stride` apart: one sector per lane once the
    # lanes are a sector apart, else the span they cover.
    load_sectors = min(WARP, math.ceil(WARP * 4 * stride / SECTOR))
    assert counters["global_load_sectors"] == warps * load_sectors
    assert counters["global_store_sectors"] == warps * WARP * 4 // SECTOR
    assert counters["global_requests"] == 2 * warps
    assert counters["global_bytes_requested"] == 2 * threads * 4


def test_lanes_reading_one_element_share_its_sector(samples):
    threads = 96
    out = np.zeros(threads, np.int64)
    counters = _launch(samples, "broadcast_read", (1,), (threads,), (np.arange(4), out))
    assert (out == 0).all()
    warps = threads // WARP
    assert counters["global_load_sectors"] == warps
    assert counters["global_store_sectors"] == warps * WARP * 8 // SECTOR


@pytest.mark.parametrize("stride", [1, 2, 3, 4, 16, 32, 33])
def test_shared_wavefronts_are_the_bank_conflict_ways(samples, stride):
    out = np.zeros(1, np.int32)
    counters = _launch(samples, "shared_strided_store", (1,), (WARP,), (np.int32(stride), out))
    words = (np.arange(WARP) * stride) % SHARED_WORDS
    banks = words % BANKS
    ways = max(len(set(words[banks == bank])) for bank in set(banks))
    assert counters["shared_requests"] == 1  # one store instruction of one warp
    assert counters["shared_wavefronts"] == ways
    assert counters["shared_ideal_wavefronts"] == 1
    assert counters["shared_bytes_requested"] == WARP * 4


def test_atomics_are_counted_per_lane_and_serialize_on_one_word(samples):
    blocks, threads = 3, 64
    counter = np.zeros(1, np.int32)
    counters = _launch(samples, "same_address_atomics", (blocks,), (threads,), (counter,))
    assert counter[0] == blocks * threads
    warps = blocks * threads // WARP
    assert counters["global_atomics"] == blocks * threads
    assert counters["global_atomic_sectors"] == warps  # one sector per warp instruction
    assert counters["shared_atomics"] == blocks * threads
    # 32 lanes on one shared word take 32 passes, plus one store of the first warp
    assert counters["shared_wavefronts"] == warps * WARP + blocks
    event = traffic.TrafficEvent("kernel", "k", "other", 0, 0, counters=counters)
    assert traffic.summarize([event])["bank_conflict_ways"] == pytest.approx(
        (warps * WARP + blocks) / (warps + blocks)
    )


def test_instrumented_launches_compute_the_same_results(samples):
    source = np.arange(256, dtype=np.int32)
    plain, measured = np.zeros(64, np.int32), np.zeros(64, np.int32)
    samples.get_function("strided_copy")((1,), (64,), (source, np.int32(3), plain))
    with traffic.record_traffic():
        samples.get_function("strided_copy")((1,), (64,), (source, np.int32(3), measured))
    np.testing.assert_array_equal(plain, measured)


# ---- CuPy-level operations ---------------------------------------------------------------
def test_elementwise_operations_move_their_operands_and_result():
    a, b = xp.arange(1000, dtype=np.float64), xp.ones(1000)
    with traffic.record_traffic() as log:
        total = a + b
        total.sum()
    add, reduction = log.events
    assert (add.kind, add.name, add.bytes) == ("array_op", "add", 3 * 8000)
    assert reduction.bytes == 8000 + 8 and reduction.syncs == 0


def test_gathers_move_the_sectors_their_indices_touch():
    values = xp.arange(4096, dtype=np.int32)
    contiguous = xp.arange(256)
    scattered = xp.arange(256) * 8  # every element in its own sector
    with traffic.record_traffic() as log:
        values[contiguous]
        values[scattered]
    streamed = 256 * 8 + 256 * 4  # the int64 indices read, the int32 values written
    assert log.events[0].bytes == streamed + 256 * 4
    assert log.events[1].bytes == streamed + 256 * SECTOR
    assert traffic.gather_bytes(np.arange(64) * 16, 16) == 2 * WARP * 16


def test_sorts_cost_one_pass_per_byte_of_key():
    keys = xp.asarray(np.random.default_rng(0).integers(0, 100, 1000).astype(np.int32))
    with traffic.record_traffic() as log:
        xp.argsort(keys)
        keys.copy().sort()
    argsort, copy, sort = log.events
    assert argsort.bytes == traffic.sort_bytes(1000, 4, 8) == 4 * 2 * 1000 * 12
    assert sort.bytes == traffic.sort_bytes(1000, 4, 0)


def test_operations_that_synchronize_in_cupy_are_counted_as_syncs():
    values = xp.asarray(np.array([0.5, -1.0, 2.0, 0.0]))
    with count_operations() as counts, traffic.record_traffic() as log:
        values[values > 0]  # boolean mask: CuPy needs its count on the host
        xp.flatnonzero(values)
        values.nonzero()
        xp.where(values > 0)  # one argument: nonzero
        xp.where(values > 0, values, 0.0)  # three: elementwise, no sync
        values[xp.arange(2)]  # integer gather: no sync
        float(values.max())
    assert counts["sync"] == 5
    assert sum(event.syncs for event in log.events) == 5
    names = [event.name for event in log.events if event.syncs]
    assert names == ["getitem", "flatnonzero", "nonzero", "where", "__float__()"]


def test_copies_are_transfers_not_device_traffic():
    with traffic.record_traffic() as log:
        device = xp.asarray(np.zeros(100))
        device.get()
    upload, download = log.events
    assert (upload.kind, upload.bytes, upload.device_bytes, upload.launches) == (
        "to_device",
        800,
        0,
        1,
    )
    assert (download.kind, download.syncs, download.launches) == ("to_host", 1, 0)


def test_events_carry_the_phase_and_the_round():
    values = xp.ones(10)
    with traffic.record_traffic() as log:
        values + 1.0
        log.start_round(3)
        with nvtx_range("histogram"):
            values * 2.0
    outside, inside = log.events
    assert (outside.phase, outside.round) == (traffic.NO_PHASE, -1)
    assert (inside.phase, inside.round) == ("histogram", 3)


def test_nothing_is_recorded_outside_the_block():
    values = xp.ones(10)
    with traffic.record_traffic() as log:
        pass
    values + 1.0
    assert log.events == [] and not traffic.recording()


# ---- cost model and floor ------------------------------------------------------------------
def test_floor_of_the_issue_benchmark():
    # 10M x 28, depth 8: 24 + 4.5 * 36 + 9 * 7 + 20 = 269 bytes a row, 2.69 GB
    assert traffic.floor_bytes(10_000_000, 28, 8) == 269 * 10_000_000
    assert traffic.floor_bytes(1, 28, 6) == 24 + 3.5 * 36 + 9 * 5 + 20


def test_modeled_time_adds_bandwidth_launches_and_syncs():
    seconds = traffic.modeled_seconds(3.35e9, 10, 2)
    assert seconds == pytest.approx(1e-3 + 10 * traffic.LAUNCH_SECONDS + 2 * traffic.SYNC_SECONDS)
    events = [
        traffic.TrafficEvent("kernel", "k", "histogram", 1, 3200, counters={"global_atomics": 5}),
        traffic.TrafficEvent("array_op", "add", "split", 1, 800),
        traffic.TrafficEvent("to_host", "get", "split", 1, 8, syncs=1),
        traffic.TrafficEvent("to_device", "array", "split", 1, 16),
    ]
    summary = traffic.summarize(events)
    assert (summary["launches"], summary["syncs"], summary["device_bytes"]) == (3, 1, 4000)
    assert summary["global_atomics"] == 5 and summary["host_copy_bytes"] == 24
    assert summary["modeled_seconds"] == pytest.approx(traffic.modeled_seconds(4000, 3, 1))


# ---- a round of the CUDA backend ---------------------------------------------------------
def test_a_round_of_the_cuda_backend_is_modeled_per_phase(monkeypatch):
    # The root's children built from histograms (not scanned from their rows: 3,000 rows
    # above the bound of 4 x 16 x 32), so that both histogram kernels run.
    monkeypatch.setattr(cuda_row_scan, "CLUSTER_BOUND_FACTOR", 4)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 6))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=3000)
    params = {"device": "cuda", "max_depth": 3, "max_bin": 31}
    with emulated_kernels():
        plain = gpuboost.train(params, gpuboost.Dataset(X, label=y), 2)
        with traffic.record_traffic() as log:
            measured = gpuboost.train(params, gpuboost.Dataset(X, label=y), 2)
    assert plain.save_raw() == measured.save_raw()
    phases = {event.phase for event in log.events}
    assert {"gradients", "quantize", "histogram", "split", "partition"} <= phases
    kernels = ("histogram_cluster_memory", "histogram_cluster_columns")  # levels, root
    histogram = [e for e in log.events if e.name in kernels]
    assert {e.name for e in histogram} == set(kernels)
    assert histogram and all(e.phase == "histogram" for e in histogram)
    rows = sum(e.counters["global_load_sectors"] for e in histogram)
    # the root's histogram alone reads every row's 6 bins and its gradient and hessian
    assert rows * SECTOR >= 3000 * (6 + 8)
    assert sum(e.counters["shared_atomics"] for e in histogram) > 0
    assert traffic.summarize(log.events)["modeled_seconds"] > 0
