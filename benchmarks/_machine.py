"""What the benchmark scripts share: what they print about the machine they ran on, and
the best-of timer (imported by them as scripts run from the repository: ``python
benchmarks/<script>.py``)."""

import platform
import time
from pathlib import Path

__all__ = ["cpu_model", "best_time"]


def best_time(function, repeats):
    """``(best seconds, last result)`` of ``repeats`` calls of ``function()``."""
    best = float("inf")
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def cpu_model():
    """The CPU's ``model name`` from /proc/cpuinfo (else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "?"
