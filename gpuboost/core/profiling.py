"""Per-phase timings and NVTX ranges, one mechanism for both.

``with timer.phase("histogram"):`` opens an NVTX range (when the ``nvtx`` package
is installed; a no-op otherwise) and, when the timer is enabled, adds the wall
time of the block to ``timer.seconds[name]`` after synchronizing the backend so
that GPU work is attributed to the phase that queued it.
"""

import time
from collections import defaultdict
from contextlib import contextmanager

__all__ = ["PhaseTimer", "nvtx_range", "active_range", "PHASES"]

#: Phases reported in verbose mode, in report order.
PHASES = (
    "gradients",
    "sample",
    "quantize",
    "sketch",
    "histogram",
    "split",
    "row_scan",
    "partition",
    "leaf_values",
    "predict_update",
    "metric",
)

try:  # pragma: no cover - depends on the environment
    import nvtx as _nvtx
except Exception:  # pragma: no cover
    _nvtx = None


#: Names of the ranges open now, outermost first (see :func:`active_range`).
_open_ranges = []


def active_range():
    """The innermost :func:`nvtx_range` open now (a phase such as ``"histogram"``), or
    None; the emulation's traffic model files device work under it."""
    return _open_ranges[-1] if _open_ranges else None


@contextmanager
def nvtx_range(name):
    """An NVTX range named ``gpuboost:<name>`` (no-op without the nvtx package)."""
    _open_ranges.append(name)
    try:
        if _nvtx is None:
            yield
            return
        with _nvtx.annotate(f"gpuboost:{name}", domain="gpuboost"):
            yield
    finally:
        _open_ranges.pop()


class PhaseTimer:
    """Accumulates wall time per phase.

    Parameters
    ----------
    enabled : bool
        Measure times (costs a device synchronization per phase on the GPU).
    synchronize : callable
        Waits for queued device work.
    """

    def __init__(self, enabled=False, synchronize=None):
        self.enabled = enabled
        self.synchronize = synchronize or (lambda: None)
        self.seconds = defaultdict(float)

    @contextmanager
    def phase(self, name):
        """Time the block as phase ``name`` and mark it with an NVTX range."""
        with nvtx_range(name):
            if not self.enabled:
                yield
                return
            self.synchronize()
            start = time.perf_counter()
            try:
                yield
            finally:
                self.synchronize()
                self.seconds[name] += time.perf_counter() - start

    def report(self):
        """One line: ``histogram 1.234s, split 0.100s, ...`` in :data:`PHASES` order."""
        names = [p for p in PHASES if p in self.seconds] + [
            p for p in self.seconds if p not in PHASES
        ]
        return ", ".join(f"{name} {self.seconds[name]:.3f}s" for name in names)
