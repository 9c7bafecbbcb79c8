"""What the benchmark scripts print about the machine they ran on (imported by them as
scripts run from the repository: ``python benchmarks/<script>.py``)."""

import platform
from pathlib import Path

__all__ = ["cpu_model"]


def cpu_model():
    """The CPU's ``model name`` from /proc/cpuinfo (else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "?"
