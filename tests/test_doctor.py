"""Tests of gpuboost.doctor (``gpuboost doctor``): without a GPU it says why and exits 0;
under the emulation it compiles every kernel and runs the parity checks."""

import sys
import types

import pytest
from _tiers import sampled

from gpuboost import backends
from gpuboost import doctor as doctor_module
from gpuboost.backends.cpu.jit import CPU_KERNELS_ENV_VAR
from gpuboost.backends.cuda import histogram as cuda_histogram
from gpuboost.backends.cuda import launch, selfcheck
from gpuboost.backends.cuda.sources import list_cuda_sources, read_cuda_source
from gpuboost.backends.emulation import EMULATE_ENV_VAR, emulated_kernels
from gpuboost.backends.emulation.device_profiles import (
    EMULATE_DEVICE_ENV_VAR,
    MAX_ACTIVE_CLUSTERS_ENV_VAR,
    PROFILES,
)
from gpuboost.backends.emulation.launcher import parse_cluster_dims, parse_kernel_signatures
from gpuboost.cli import main


def doctor(capsys, *arguments):
    code = main(["doctor", *[str(argument) for argument in arguments]])
    return code, capsys.readouterr().out


@pytest.fixture
def fresh_probe(monkeypatch):
    monkeypatch.setattr(backends, "_PROBE_RESULTS", {})


def test_without_a_gpu_it_says_why_and_exits_0(capsys, monkeypatch, fresh_probe):
    monkeypatch.delenv(EMULATE_ENV_VAR, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    code, out = doctor(capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("gpuboost ") and lines[1].startswith("Python ")
    assert lines[2].startswith("NumPy ") and lines[3].startswith("CuPy: not importable")
    assert lines[-1].startswith("supported: no GPU -- CuPy is not importable")
    assert "gpuboost[cuda12]" in lines[-1]
    assert lines[-1].endswith("gpuboost trains on the CPU (compiled kernels).")
    # ... and which CPU kernels train instead.
    monkeypatch.setenv(CPU_KERNELS_ENV_VAR, "numpy")
    _, out = doctor(capsys)
    assert out.splitlines()[-1].endswith(
        f"trains on the CPU (NumPy reference: {CPU_KERNELS_ENV_VAR}=numpy selects the NumPy "
        "reference)."
    )


def test_a_gpu_whose_kernels_do_not_compile(capsys, monkeypatch, fresh_probe):
    """CuPy sees a GPU but NVRTC is missing (CuPy replaced by a stand-in)."""

    def no_nvrtc(*args, **kwargs):
        raise OSError("libnvrtc.so.12: cannot open shared object file")

    properties = {
        "name": b"Stand-in GPU",
        "major": 9,
        "minor": 0,
        "totalGlobalMem": 80 * (1 << 30),
        "multiProcessorCount": 132,
    }
    runtime = types.SimpleNamespace(
        driverGetVersion=lambda: 12040,
        runtimeGetVersion=lambda: 12060,
        getDeviceCount=lambda: 1,
        getDeviceProperties=lambda ordinal: properties,
    )
    cupy = types.SimpleNamespace(
        __version__="14.2.0",
        cuda=types.SimpleNamespace(
            runtime=runtime, nvrtc=types.SimpleNamespace(getVersion=no_nvrtc)
        ),
        RawModule=no_nvrtc,
    )
    monkeypatch.delenv(EMULATE_ENV_VAR, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    code, out = doctor(capsys)
    assert code == 0
    assert "CuPy: 14.2.0" in out and "CUDA driver: 12.4, runtime: 12.6" in out
    assert "NVRTC: not loadable (OSError: libnvrtc.so.12" in out
    assert "device 0: Stand-in GPU, compute capability 9.0, 80.0 GiB, 132 multiprocessors" in out
    assert out.splitlines()[-1].startswith("supported: no GPU -- a test CUDA kernel does not")


@pytest.fixture
def emulation(monkeypatch):
    monkeypatch.setattr(selfcheck, "SELFCHECK_ROWS", 500)  # the emulation is slow
    with emulated_kernels():
        yield


def test_under_the_emulation_it_runs_every_check(capsys, emulation):
    code, out = doctor(capsys, "--rows", 300)
    assert code == 0
    for name in list_cuda_sources():
        if name.endswith(".cu"):
            for kernel in parse_kernel_signatures(read_cuda_source(name)):
                assert f" {kernel} " in out, kernel
    for name in selfcheck.CONFIGURATIONS:
        assert f"ok     training {name!r}" in out
    assert "ok     histograms (cuda/histogram.cu)" in out
    assert "timing: one round at 300 rows" in out
    assert out.splitlines()[-1] == (
        "supported: no GPU here; the CPU emulation of the CUDA kernels (H100) passes every check."
    )


def test_a_failed_check_is_reported_with_exit_1(capsys, emulation, broken_histograms):
    code, out = doctor(capsys, "--rows", 0)
    assert code == 1
    assert "FAILED histograms (cuda/histogram.cu)" in out and "timing" not in out
    assert out.splitlines()[-1].startswith("supported: NO -- the CPU emulation of the CUDA")
    assert "please report it with this output" in out


def test_a_device_without_clusters_lists_no_cluster_kernel(capsys, emulation, monkeypatch):
    """Compute capability 8.x (A100, L4, RTX 30/40): the kernels inside
    ``#if GPUBOOST_CLUSTERS`` are not compiled there (NVRTC would not find them), so the
    doctor names them as not built instead of failing (issue 29)."""
    cluster_kernels = set()
    for name in list_cuda_sources():
        if name.endswith(".cu"):
            cluster_kernels |= set(parse_cluster_dims(read_cuda_source(name)))
    assert {"histogram_cluster_memory", "row_scan_cluster"} <= cluster_kernels
    get_kernel = launch.get_kernel

    def without_clusters(mode, stem, kernel_name):
        if kernel_name in cluster_kernels:  # as NVRTC answers for sm_80
            raise RuntimeError(f"no kernel named {kernel_name}")
        return get_kernel(mode, stem, kernel_name)

    monkeypatch.setattr(launch, "get_kernel", without_clusters)
    for module in (doctor_module, cuda_histogram):  # a device of sm_80
        monkeypatch.setattr(module, "device_has_clusters", lambda mode: False)
    code, out = doctor(capsys, "--rows", 0)
    assert "FAILED to compile" not in out
    for kernel in cluster_kernels:
        assert f" {kernel:<30} not built: the device has no clusters" in out
    assert code == 0, out


@pytest.mark.parametrize("profile", sampled(["A100", "L4", "H200"], ["A100"]))
def test_every_emulated_profile_is_supported(capsys, emulation, monkeypatch, profile):
    """GPUBOOST_EMULATE_DEVICE picks the emulated GPU: the doctor names it, lists the
    cluster kernels as not built where it has no clusters, runs every check on its
    launch configurations and says "supported" (issue 29; H100, the default: above)."""
    monkeypatch.setenv(EMULATE_DEVICE_ENV_VAR, profile)
    code, out = doctor(capsys, "--rows", 0)
    assert code == 0, out
    expected = PROFILES[profile]
    major, minor = expected.compute_capability
    assert f"{expected.name}, compute capability {major}.{minor}" in out
    assert ("histogram_cluster_memory" in out) and (
        ("not built: the device has no clusters" in out) != expected.clusters
    )
    assert out.splitlines()[-1] == (
        f"supported: no GPU here; the CPU emulation of the CUDA kernels ({profile}) passes "
        "every check."
    )


def test_a_device_that_cannot_place_a_cluster_is_supported_without_them(
    capsys, emulation, monkeypatch
):
    """An H100 that cannot co-schedule a cluster of 8 (a MIG slice:
    GPUBOOST_EMULATE_MAX_ACTIVE_CLUSTERS=0): the doctor says the cluster kernels are not
    used, runs the parity checks on the per-block kernels and says "supported"."""
    monkeypatch.setenv(EMULATE_DEVICE_ENV_VAR, "H100")
    code, out = doctor(capsys, "--rows", 0)
    assert "a cluster of 8 blocks of every cluster kernel fits" in out
    monkeypatch.setenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, "0")
    code, out = doctor(capsys, "--rows", 0)
    assert code == 0, out
    assert "thread-block clusters: NOT USED" in out
    assert out.splitlines()[-1].startswith("supported: no GPU here")
