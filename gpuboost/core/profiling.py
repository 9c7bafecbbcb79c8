"""Per-phase timings and NVTX ranges, one mechanism for both.

``with timer.phase("histogram"):`` opens an NVTX range (when the ``nvtx`` package
is installed; a no-op otherwise) and, when the timer is enabled, adds the wall
time of the block to ``timer.seconds[name]`` after synchronizing the backend so
that GPU work is attributed to the phase that queued it.
"""

import time
from collections import defaultdict

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


class nvtx_range:
    """An NVTX range named ``gpuboost:<name>`` (no-op without the nvtx package), and the
    innermost range :func:`active_range` names while it is open. A class rather than a
    generator: a round opens a dozen, and entering one costs a few hundred nanoseconds
    this way against microseconds through ``contextlib``."""

    __slots__ = ("name", "_annotation")

    def __init__(self, name):
        self.name = name
        self._annotation = None

    def __enter__(self):
        _open_ranges.append(self.name)
        if _nvtx is not None:
            try:
                self._annotation = _nvtx.annotate(f"gpuboost:{self.name}", domain="gpuboost")
                self._annotation.__enter__()
            except BaseException:
                _open_ranges.pop()
                raise
        return None

    def __exit__(self, *exc_info):
        try:
            if self._annotation is not None:
                self._annotation.__exit__(*exc_info)
        finally:
            _open_ranges.pop()
        return False


class _Phase(nvtx_range):
    """One :meth:`PhaseTimer.phase` block: its NVTX range, and with the timer enabled
    its wall time added to the timer's ``seconds`` (the backend synchronized at both
    ends, so that GPU work is attributed to the phase that queued it)."""

    __slots__ = ("timer", "start")

    def __init__(self, timer, name):
        super().__init__(name)
        self.timer = timer

    def __enter__(self):
        super().__enter__()
        if self.timer.enabled:
            self.timer.synchronize()
            self.start = time.perf_counter()
        return None

    def __exit__(self, *exc_info):
        try:
            if self.timer.enabled:
                self.timer.synchronize()
                self.timer.seconds[self.name] += time.perf_counter() - self.start
        finally:
            super().__exit__(*exc_info)
        return False


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

    def phase(self, name):
        """Time the block as phase ``name`` and mark it with an NVTX range (a context
        manager)."""
        return _Phase(self, name)

    def report(self):
        """One line: ``histogram 1.234s, split 0.100s, ...`` in :data:`PHASES` order."""
        names = [p for p in PHASES if p in self.seconds] + [
            p for p in self.seconds if p not in PHASES
        ]
        return ", ".join(f"{name} {self.seconds[name]:.3f}s" for name in names)
