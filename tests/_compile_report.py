"""pytest plugin: what the test run spent compiling, printed at its end.

Two compilers run inside the test suite, and on a fresh checkout they cost more than
most tests: Numba builds the compiled CPU kernels (:mod:`gpuboost.backends.cpu`) on first
use, unless its cache holds them, and g++ builds the emulated CUDA kernels
(:mod:`gpuboost.backends.emulation.compiler`), unless its cache does. The report says,
per compiler, how many kernels or libraries were built, in how many seconds, and how many
came from a cache, summed over pytest-xdist's workers, so that CI's log shows where a
slow step's time went (issue 27)::

    compile times: numba 61 kernels compiled in 38.2 s (0 from its cache); emulation g++
    14 libraries compiled in 12.9 s (40 from its cache)
"""

import sys
import threading
import time

from gpuboost.backends.emulation.compiler import compile_statistics

try:
    from numba.core import event as _numba_event
    from numba.core.dispatcher import Dispatcher as _Dispatcher
except ImportError:  # without Numba the CPU backend runs the NumPy reference
    _numba_event = None

#: Key of the report in xdist's ``workeroutput``.
_WORKER_KEY = "gpuboost_compile_report"
#: The package whose Numba kernels are counted.
_KERNEL_PACKAGE = "gpuboost."


class _NumbaCompileTimer(_numba_event.Listener if _numba_event else object):
    """Sums the time of the outermost ``numba:compile`` events (a kernel's compile
    includes those of the functions it calls) and counts the gpuboost kernels compiled."""

    def __init__(self):
        self.seconds = 0.0
        self.kernels = 0
        self._local = threading.local()

    def on_start(self, event):
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            self._local.started = time.perf_counter()
        self._local.depth = depth + 1
        if event.data["dispatcher"].py_func.__module__.startswith(_KERNEL_PACKAGE):
            self.kernels += 1

    def on_end(self, event):
        self._local.depth -= 1
        if self._local.depth == 0:
            self.seconds += time.perf_counter() - self._local.started


_TIMER = _NumbaCompileTimer()


def _numba_cache_hits():
    """Kernel signatures of gpuboost loaded from Numba's cache in this process."""
    hits = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(_KERNEL_PACKAGE) or module is None:
            continue
        for value in list(vars(module).values()):
            if _numba_event is not None and isinstance(value, _Dispatcher):
                hits += sum(value.stats.cache_hits.values())
    return hits


def _this_process():
    emulation = compile_statistics()
    return {
        "numba_kernels": _TIMER.kernels,
        "numba_seconds": _TIMER.seconds,
        "numba_cached": _numba_cache_hits(),
        "gxx_libraries": emulation["compiled"],
        "gxx_seconds": emulation["seconds"],
        "gxx_cached": emulation["cached"],
    }


def pytest_configure(config):
    config._gpuboost_compile_reports = []
    if _numba_event is not None:
        _numba_event.register("numba:compile", _TIMER)


def pytest_sessionfinish(session):
    config = session.config
    report = _this_process()
    if hasattr(config, "workeroutput"):  # an xdist worker: the controller prints
        config.workeroutput[_WORKER_KEY] = report
    elif not getattr(config.option, "numprocesses", None):  # no workers: this process ran
        config._gpuboost_compile_reports.append(report)


def pytest_testnodedown(node, error):
    """xdist's controller: a worker finished and sent its report."""
    report = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if report is not None:
        node.config._gpuboost_compile_reports.append(report)


def pytest_terminal_summary(terminalreporter, config):
    reports = config._gpuboost_compile_reports
    if not reports:
        return
    total = {key: sum(report[key] for report in reports) for key in reports[0]}
    if not any(total.values()):  # nothing compiled or loaded (no kernel ran)
        return
    terminalreporter.write_line(
        f"compile times ({len(reports)} process{'es' if len(reports) > 1 else ''}): "
        f"numba {total['numba_kernels']} kernels compiled in {total['numba_seconds']:.1f} s "
        f"({total['numba_cached']} from its cache); emulation g++ {total['gxx_libraries']} "
        f"libraries compiled in {total['gxx_seconds']:.1f} s ({total['gxx_cached']} from "
        f"its cache)"
    )
