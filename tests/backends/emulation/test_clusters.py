"""Thread-block clusters under the emulation (docs/EMULATION.md, "Thread-block clusters"):
``__cluster_dims__`` kernels whose blocks exchange shared memory through the
``gpuboost_cluster_*`` helpers of cuda/common.cuh, run as on a GPU, alone and under the sanitizer;
each misuse (a read before the cluster barrier, an exit while another block reads, an
out-of-bounds or unwritten remote read, a rank beyond the cluster, a block leaving the
cluster's barriers) is reported.
"""

from pathlib import Path

import numpy as np
import pytest

from gpuboost.backends.emulation import EmulatedModule
from gpuboost.backends.emulation.launcher import parse_cluster_dims
from gpuboost.backends.emulation.sanitizer import SANITIZE_ENV_VAR, SanitizerError

REPO_ROOT = Path(__file__).resolve().parents[3]
SAMPLE = Path(__file__).resolve().parent / "cuda_samples" / "clusters.cu"
ALL_CHECKS = "memcheck,racecheck,initcheck"
#: Blocks per cluster of the samples (kClusterBlocks in clusters.cu).
CLUSTER_BLOCKS = 4
THREADS = 64
CLUSTERS = 2


@pytest.fixture(scope="module")
def samples():
    return EmulatedModule(path=SAMPLE, options=(f"-I{REPO_ROOT / 'cuda'}",))


@pytest.fixture
def checks(monkeypatch):
    """Run the test with GPUBOOST_SANITIZE set to the given checks ('' for none)."""

    def switch(names):
        if names:
            monkeypatch.setenv(SANITIZE_ENV_VAR, names)
        else:
            monkeypatch.delenv(SANITIZE_ENV_VAR, raising=False)

    return switch


def _values():
    rng = np.random.default_rng(5)
    return rng.integers(-1000, 1000, size=CLUSTERS * CLUSTER_BLOCKS * THREADS).astype(np.int32)


def _launch(kernel, *args, blocks=CLUSTERS * CLUSTER_BLOCKS):
    kernel((blocks,), (THREADS,), args, shared_mem=THREADS * 4)


def test_cluster_dims_are_parsed_from_the_kernel_head():
    source = SAMPLE.read_text()
    dims = parse_cluster_dims(source)
    assert dims["cluster_sums"] == ("kClusterBlocks", "1", "1")
    assert dims["cluster_of_one"] == ("1", "1", "1")
    assert "cluster_sums" in parse_cluster_dims(source.replace("kClusterBlocks, 1, 1", "4"))


@pytest.mark.parametrize("names", ["", ALL_CHECKS])
def test_blocks_of_a_cluster_read_each_others_shared_memory(samples, checks, names):
    checks(names)
    kernel = samples.get_function("cluster_sums")
    assert kernel.cluster_blocks == CLUSTER_BLOCKS
    values = _values()
    out = np.zeros(values.size, np.int64)
    blocks = np.zeros(1, np.int32)
    _launch(kernel, values, out, blocks)
    per_block = values.reshape(CLUSTERS, CLUSTER_BLOCKS, THREADS).astype(np.int64)
    sums = per_block.sum(axis=1, keepdims=True)
    ranks = np.arange(CLUSTER_BLOCKS).reshape(1, CLUSTER_BLOCKS, 1)
    expected = np.broadcast_to(sums * 16 + ranks, per_block.shape).ravel()
    np.testing.assert_array_equal(out, expected)
    assert blocks[0] == CLUSTER_BLOCKS


@pytest.mark.parametrize("names", ["", ALL_CHECKS])
def test_a_cluster_of_one_block_is_the_block(samples, checks, names):
    checks(names)
    kernel = samples.get_function("cluster_of_one")
    assert kernel.cluster_blocks == 1
    values = _values()
    out = np.zeros(values.size, np.int64)
    blocks = np.zeros(1, np.int32)
    _launch(kernel, values, out, blocks, blocks=3)
    n = 3 * THREADS
    expected = values[:n].reshape(3, THREADS)[:, ::-1].astype(np.int64).ravel() * 16
    np.testing.assert_array_equal(out[:n], expected)
    assert blocks[0] == 1


@pytest.mark.parametrize("names", ["", ALL_CHECKS])
def test_atomics_into_another_blocks_shared_memory_are_exact(samples, checks, names):
    """Each block adds its values into its own words and its next rank's (distributed
    shared-memory atomics, as a GPU performs them at the target SM): exact, and atomics of
    two blocks on one word between the same barriers are no hazard."""
    checks(names)
    values = _values()
    out = np.zeros(values.size, np.int64)
    _launch(samples.get_function("cluster_remote_atomics"), values, out)
    per_block = values.reshape(CLUSTERS, CLUSTER_BLOCKS, THREADS).astype(np.int64)
    expected = per_block + np.roll(per_block, 1, axis=1)  # own + previous rank's
    np.testing.assert_array_equal(out, expected.ravel())


def test_a_grid_of_partial_clusters_is_refused(samples, checks):
    checks("")
    kernel = samples.get_function("cluster_sums")
    values = _values()
    with pytest.raises(ValueError, match="whole number of its clusters of 4 blocks"):
        _launch(kernel, values, np.zeros(values.size, np.int64), np.zeros(1, np.int32), blocks=6)


def test_a_cluster_kernel_with_static_shared_memory_is_refused(samples, checks):
    checks("")
    with pytest.raises(ValueError, match="static __shared__ memory"):
        samples.get_function("cluster_static_shared")


def test_racecheck_finds_a_remote_read_before_the_cluster_barrier(samples, checks):
    checks("racecheck")
    values = _values()
    with pytest.raises(
        SanitizerError,
        match=r"racecheck: .*between different blocks \(of one "
        r"cluster, with no gpuboost_cluster_sync\(\) between them\)",
    ) as error:
        _launch(
            samples.get_function("cluster_read_before_barrier"),
            values,
            np.zeros(values.size, np.int64),
        )
    assert "clusters.cu" in str(error.value)


def test_the_barrier_orders_global_memory_between_blocks_of_a_cluster(samples, checks):
    checks("racecheck")
    kernel = samples.get_function("cluster_global_handoff")
    cells = np.zeros(CLUSTERS * THREADS, np.int64)
    _launch(kernel, cells, np.int32(1))
    np.testing.assert_array_equal(cells, np.tile(np.arange(THREADS) + 1, CLUSTERS))
    with pytest.raises(SanitizerError, match=r"racecheck: .*global .*of one cluster"):
        _launch(kernel, np.zeros(CLUSTERS * THREADS, np.int64), np.int32(0))


def test_memcheck_finds_a_block_exiting_while_another_reads_its_shared_memory(samples, checks):
    checks("memcheck")
    values = _values()
    with pytest.raises(SanitizerError, match=r"memcheck: .*returned from the kernel"):
        _launch(
            samples.get_function("cluster_exit_while_read"), values, np.zeros(values.size, np.int64)
        )


def test_memcheck_finds_a_remote_read_past_the_shared_memory(samples, checks):
    checks("memcheck")
    values = _values()
    with pytest.raises(
        SanitizerError,
        match=r"memcheck: out-of-bounds shared-memory read .*"
        r"past the end of the dynamic shared memory of cluster rank",
    ):
        _launch(
            samples.get_function("cluster_remote_overflow"), values, np.zeros(values.size, np.int64)
        )


def test_initcheck_finds_a_remote_read_of_an_unwritten_word(samples, checks):
    checks("initcheck")
    values = _values()
    with pytest.raises(SanitizerError, match=r"initcheck: shared-memory read .*cluster rank"):
        _launch(
            samples.get_function("cluster_unwritten_read"), values, np.zeros(values.size, np.int64)
        )


def test_a_rank_beyond_the_cluster_stops_the_kernel(samples, checks):
    checks("")
    with pytest.raises(
        RuntimeError, match=r"gpuboost_cluster_shared at line \d+: rank 4, but the cluster has 4"
    ):
        _launch(samples.get_function("cluster_rank_out_of_range"), np.zeros(THREADS, np.int64))


def test_a_block_leaving_the_cluster_barriers_stops_the_launch(samples, checks):
    checks("")
    with pytest.raises(RuntimeError, match=r"cluster barrier: 1 of the 4 blocks .* returned"):
        _launch(
            samples.get_function("cluster_early_return"),
            np.zeros(CLUSTERS * CLUSTER_BLOCKS * THREADS, np.int64),
        )
