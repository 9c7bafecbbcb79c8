"""pytest plugin: build the compiled code once, on every core, before xdist's workers start.

On a fresh checkout the suite's first tests would compile the CPU backend's Numba kernels
and the emulated CUDA kernels (g++) in every worker at once, the same kernels in the same
order (and the workers' waits for each other, under the caches' file locks, would keep the
other cores idle). So the controller of an xdist run first builds them, split over the
cores: ``gpuboost compile`` (:mod:`gpuboost.warmup`, which ``pip install -e .`` runs
too, so its caches are usually warm already) trains small models of every configuration
in one process, while threads run g++ on every
``cuda/*.cu`` file in both flavours (plain, and instrumented for the sanitizer and the
traffic model). With warm caches this costs the imports and a second.

The warm-up is skipped in a run without workers (``-n 0``) and by ``--collect-only``;
whatever it misses is compiled where it is first used, as without it.
"""

import concurrent.futures
import os
import subprocess
import sys
import time
from pathlib import Path

from gpuboost.backends.cuda.launch import EMULATED, get_module
from gpuboost.backends.cuda.sources import cuda_source_dir

REPO_ROOT = Path(__file__).resolve().parents[1]

_REPORT = {}


def _compile_kernels(processes):
    """The library's own warm-up (``gpuboost compile``) in a child process, as at
    install; returns an error message, or None. One process: its caches are warm after
    ``pip install -e .``, and then one process loads them fastest (about 3 s)."""
    completed = subprocess.run(
        [sys.executable, "-m", "gpuboost", "compile", "--processes", str(processes)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if completed.returncode == 0:
        return None
    return (completed.stdout + completed.stderr)[-2000:]


def _build_emulated_kernels(stem, instrumented):
    get_module(EMULATED, stem)._load(instrumented=instrumented)


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:  # a worker: the controller did
        return
    if not getattr(config.option, "numprocesses", None) or config.option.collectonly:
        return
    started = time.perf_counter()
    cores = os.cpu_count() or 1
    stems = [path.stem for path in sorted(cuda_source_dir().glob("*.cu"))]
    trainer = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    compilers = concurrent.futures.ThreadPoolExecutor(max_workers=cores)
    with trainer, compilers:
        kernels = trainer.submit(_compile_kernels, 1)
        builds = [
            compilers.submit(_build_emulated_kernels, stem, instrumented)
            for instrumented in (False, True)
            for stem in stems
        ]
        failures = [message for message in [kernels.result()] if message]
        for build in builds:
            build.result()
    _REPORT["seconds"] = time.perf_counter() - started
    _REPORT["failures"] = failures


def pytest_terminal_summary(terminalreporter):
    if not _REPORT:
        return
    terminalreporter.write_line(
        f"warm-up before the workers: {_REPORT['seconds']:.1f} s (gpuboost compile: the "
        f"Numba kernels; g++ on every kernel file in both flavours)"
    )
    for message in _REPORT["failures"]:  # the tests that need it fail on their own
        terminalreporter.write_line(f"kernel warm-up failed:\n{message}")
