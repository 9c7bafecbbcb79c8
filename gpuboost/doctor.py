"""``gpuboost doctor``: what this machine offers gpuboost, and whether its GPU is trusted.

It prints, one fact a line: the versions of gpuboost, Python, NumPy and CuPy, the CUDA
driver and runtime, NVRTC, every visible device (name, compute capability, memory,
multiprocessors); then compiles every kernel of ``cuda/*.cu`` and prints its registers,
shared and local memory; runs the self-check of the CUDA backend
(gpuboost.backends.cuda.selfcheck) on every primitive and on every configuration of
``selfcheck.CONFIGURATIONS``; times one boosting round at 1M rows; and ends with one
line saying whether the machine is supported. Without a GPU it says why not and exits
0; under ``GPUBOOST_EMULATE_CUDA=1`` it runs the checks on the CPU emulation of the
kernels. Its output is what a bug report needs (docs/guide/bugs.md).
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np

from . import backends
from ._version import __version__
from .backends.cpu.jit import compiled_kernels_reason
from .backends.cuda import launch, selfcheck
from .backends.cuda.histogram import device_cluster_blocks, device_has_clusters
from .backends.cuda.sources import cuda_source_dir, list_cuda_sources, read_cuda_source
from .backends.emulation import emulation_enabled
from .backends.emulation.device_profiles import EMULATE_DEVICE_ENV_VAR, current_profile
from .backends.emulation.launcher import parse_cluster_dims, parse_kernel_signatures
from .boosting.train import train
from .data.dataset import Dataset
from .datasets import make_higgs_like
from .errors import GpuOutOfMemoryError

__all__ = ["run_doctor", "TIMING_ROWS", "EMULATED_TIMING_ROWS"]

#: Rows of the timed boosting round on a GPU, and under the (slow) emulation.
TIMING_ROWS = 1_000_000
EMULATED_TIMING_ROWS = 2_000
#: Features and depth of the timed round (HIGGS-like data).
TIMING_FEATURES = 28
TIMING_MAX_DEPTH = 8
#: Kernel attributes printed (CuPy's RawKernel names; the emulation has some of them).
KERNEL_ATTRIBUTES = (
    ("registers", "num_regs"),
    ("shared", "shared_size_bytes"),
    ("local", "local_size_bytes"),
    ("max threads", "max_threads_per_block"),
)
#: Exit status when a device (or the emulation) fails a check; 0 otherwise.
EXIT_CHECK_FAILED = 1
#: Bytes per GiB.
GIB = 1 << 30


def _cuda_version(number):
    """CUDA's integer version (12040) as text ("12.4")."""
    return f"{number // 1000}.{number % 1000 // 10}"


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _cupy_facts(say):
    """Print CuPy's, the driver's, the runtime's and NVRTC's versions and the devices.

    Returns
    -------
    list of dict
        The properties of every visible device (empty without CuPy or devices).
    """
    try:
        import cupy  # optional: what the doctor looks for
    except Exception as error:  # ImportError, or a broken CUDA installation
        say(f"CuPy: not importable ({type(error).__name__}: {error})")
        return []
    say(f"CuPy: {cupy.__version__}")
    runtime = cupy.cuda.runtime
    try:
        say(
            f"CUDA driver: {_cuda_version(runtime.driverGetVersion())}, runtime: "
            f"{_cuda_version(runtime.runtimeGetVersion())}"
        )
    except Exception as error:
        say(f"CUDA driver / runtime: unknown ({type(error).__name__}: {error})")
    try:
        major, minor = cupy.cuda.nvrtc.getVersion()
        say(f"NVRTC: {major}.{minor}")
    except Exception as error:
        say(f"NVRTC: not loadable ({type(error).__name__}: {error})")
    try:
        count = runtime.getDeviceCount()
    except Exception as error:
        say(f"devices: none usable ({type(error).__name__}: {error})")
        return []
    devices = []
    for ordinal in range(count):
        properties = runtime.getDeviceProperties(ordinal)
        devices.append(properties)
        say(
            f"device {ordinal}: {_text(properties['name'])}, compute capability "
            f"{properties['major']}.{properties['minor']}, "
            f"{properties['totalGlobalMem'] / GIB:.1f} GiB, "
            f"{properties['multiProcessorCount']} multiprocessors"
        )
    if not devices:
        say("devices: none visible")
    return devices


def _kernel_resources(mode, say):
    """Compile every kernel and print its resources; returns the failures (text)."""
    say(
        f"kernels ({'the CPU emulation' if mode == launch.EMULATED else 'NVRTC'}; options: "
        f"{' '.join(launch.compile_options(cuda_source_dir())[:-2])}, source hash "
        f"{launch.compile_options(cuda_source_dir())[-1].split('=', 1)[1]}):"
    )
    failures = []
    clusters = device_has_clusters(mode)
    for name in list_cuda_sources():
        if not name.endswith(".cu"):
            continue
        stem = name[: -len(".cu")]
        source = read_cuda_source(name)
        cluster_kernels = parse_cluster_dims(source)
        for kernel_name in parse_kernel_signatures(source):
            if kernel_name in cluster_kernels and not clusters:
                # compiled only where GPUBOOST_CLUSTERS (cuda/common.cuh): sm_90 and later
                say(f"  {name:<18} {kernel_name:<30} not built: the device has no clusters")
                continue
            try:
                kernel = launch.get_kernel(mode, stem, kernel_name)
            except Exception as error:
                failures.append(f"{name}:{kernel_name}")
                say(f"  {name:<18} {kernel_name:<30} FAILED to compile: {error}")
                continue
            facts = []
            for label, attribute in KERNEL_ATTRIBUTES:
                value = getattr(kernel, attribute, None)
                facts.append(f"{label} {'n/a' if value is None else value}")
            say(f"  {name:<18} {kernel_name:<30} {', '.join(facts)}")
    if clusters and not failures:
        if device_cluster_blocks(mode) > 1:
            say("thread-block clusters: a cluster of 8 blocks of every cluster kernel fits")
        else:
            say(
                "thread-block clusters: NOT USED -- the device cannot co-schedule a cluster "
                "of 8 blocks at the kernels' heaviest launch (cuOccupancyMaxActiveClusters "
                "is 0: a MIG slice, an MPS limit or an old driver); the per-block kernels "
                "run, with the same results"
            )
    return failures


def _parity(backend, say):
    """Run the self-check with every configuration; returns the first failure or None."""
    say("parity with the CPU (NumPy) backend:")
    try:
        with backend.guard("running the parity checks against the CPU"):
            results = selfcheck.run_checks(
                backend, train, configurations=tuple(selfcheck.CONFIGURATIONS)
            )
    except GpuOutOfMemoryError as error:  # no verdict on the device's results
        say(f"  not run to the end: {error}")
        return selfcheck.CheckResult("the parity checks", False, str(error), 0.0)
    for result in results:
        status = "ok    " if result.passed else "FAILED"
        detail = f": {result.detail}" if result.detail else ""
        say(f"  {status} {result.step} ({result.seconds:.2f} s){detail}")
    failed = [result for result in results if not result.passed]
    return failed[0] if failed else None


def _timing(device, n_rows, say, emulated):
    """Time one boosting round on ``device`` at ``n_rows`` HIGGS-like rows."""
    X, y = make_higgs_like(n_rows, TIMING_FEATURES, seed=0)
    dataset = Dataset(X, label=y)
    params = {"objective": "binary:logistic", "max_depth": TIMING_MAX_DEPTH, "device": device}
    start = time.perf_counter()
    train(params, dataset, 1, verbose_eval=False)  # copies and bins the data on the device
    first = time.perf_counter() - start
    start = time.perf_counter()
    train(params, dataset, 1, verbose_eval=False)  # the data already on the device
    one_round = time.perf_counter() - start
    say(
        f"timing: one round at {n_rows:,} rows x {TIMING_FEATURES} features (depth "
        f"{TIMING_MAX_DEPTH}) on {device}: {one_round:.3f} s (first call, with the copy "
        f"and binning of the data: {first:.3f} s)"
        + (" -- the CPU emulation, not a GPU timing" if emulated else "")
    )


def run_doctor(timing_rows=None, printer=print):
    """Print the report (see the module docstring).

    Parameters
    ----------
    timing_rows : int, optional
        Rows of the timed round; default :data:`TIMING_ROWS`
        (:data:`EMULATED_TIMING_ROWS` under the emulation). 0 skips the timing.
    printer : callable (str) -> None, default=print

    Returns
    -------
    int
        0 when the machine is supported or has no GPU; :data:`EXIT_CHECK_FAILED` when
        a device (or the emulation) fails to compile a kernel or a check.
    """
    say = printer
    say(f"gpuboost {__version__} ({__file__.rsplit('/', 1)[0]})")
    python = f"{platform.python_version()} ({platform.python_implementation()})"
    say(f"Python {python} on {platform.platform()}")
    say(f"NumPy {np.__version__}")
    emulated = emulation_enabled()
    devices = _cupy_facts(say)
    if emulated:
        say(
            "emulation: on (GPUBOOST_EMULATE_CUDA=1): the checks below run the CUDA "
            "kernels on the CPU emulation, not on a GPU"
        )
        profile = current_profile()
        major, minor = profile.compute_capability
        say(
            f"emulated device ({EMULATE_DEVICE_ENV_VAR}={profile.key}): {profile.name}, "
            f"compute capability {major}.{minor}, {profile.multiprocessors} multiprocessors, "
            f"{profile.shared_per_block_optin // 1024} KiB shared memory per block, "
            f"thread-block clusters: {'yes' if profile.clusters else 'no'}"
        )
    reason = backends._cuda_reason()
    if reason is not None:
        cpu_reason = compiled_kernels_reason()
        cpu = "compiled kernels" if cpu_reason is None else f"NumPy reference: {cpu_reason}"
        say(f"supported: no GPU -- {reason}. gpuboost trains on the CPU ({cpu}).")
        return 0
    mode = launch.EMULATED if emulated else launch.CUPY
    if not emulated and devices:
        major = devices[0]["major"]
        if major < 8:
            say(
                "note: the kernels are compile-checked for sm_80 and sm_90; on this older "
                "device only the checks below vouch for them"
            )
    failures = _kernel_resources(mode, say)
    backend = backends.get_backend("cuda")
    failed = None if failures else _parity(backend, say)
    rows = (
        (EMULATED_TIMING_ROWS if emulated else TIMING_ROWS) if timing_rows is None else timing_rows
    )
    if not failures and failed is None and rows:
        _timing("cuda", rows, say, emulated)
    where = (
        f"the CPU emulation of the CUDA kernels ({current_profile().key})" if emulated else "cuda:0"
    )
    if failures:
        verdict = f"NO -- kernels do not compile on {where}: {', '.join(failures)}"
    elif failed is not None:
        verdict = f"NO -- {where} differs from the CPU at {failed.step}: {failed.detail}"
    elif emulated:
        say(f"supported: no GPU here; {where} passes every check.")
        return 0
    else:
        say(
            f"supported: yes -- {where} compiles every kernel and gives the CPU's results "
            f"bit for bit; device='auto' trains on it."
        )
        return 0
    say(
        f"supported: {verdict}. This is a bug: please report it with this output "
        f"(docs/guide/bugs.md); device='auto' falls back to the CPU."
    )
    return EXIT_CHECK_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_doctor())
