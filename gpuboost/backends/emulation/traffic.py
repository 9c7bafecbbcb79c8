"""The GPU traffic model: what the CUDA backend asks of the device, counted under the
emulation, and the time an H100 would need for it.

Inside ``with record_traffic() as log:`` every emulated kernel launch runs the
instrumented flavour of its module (``instrument.h``), which counts, per warp
instruction, the distinct 32-byte sectors of global memory (coalescing as a GPU does
it), the shared-memory wavefronts (bank conflicts) and the atomics; every CuPy-level
operation of the emulated device arrays (:mod:`.device_array`) is recorded with the
bytes it reads and writes, and whether it synchronizes the host with the device. Each
event carries the profiling phase it ran in (``gpuboost.core.profiling``: gradients,
histogram, partition, ...) and the round set with :meth:`TrafficLog.start_round`.

The modeled time of a set of events is

    bytes / H100_BANDWIDTH_BYTES_PER_SECOND
    + (kernel launches + CuPy operations + copies to the device) * LAUNCH_SECONDS
    + host synchronizations * SYNC_SECONDS

It ignores caches (every sector counts as DRAM traffic: no L1 / L2 hits), the overlap
of launches with the work of earlier ones, occupancy and compute; see docs/DESIGN.md,
"GPU performance model", for its calibration. :func:`floor_bytes` is the traffic a
round cannot avoid, the yardstick of ``benchmarks/device_ops.py``.
"""

import contextlib
import dataclasses
import math

import numpy as np

from ...core.profiling import active_range

__all__ = [
    "H100_BANDWIDTH_BYTES_PER_SECOND",
    "LAUNCH_SECONDS",
    "SYNC_SECONDS",
    "SECTOR_BYTES",
    "TrafficEvent",
    "TrafficLog",
    "record_traffic",
    "recording",
    "record_kernel",
    "record_array_op",
    "gather_bytes",
    "sort_bytes",
    "floor_bytes",
    "modeled_seconds",
    "summarize",
]

#: DRAM bandwidth of an H100 SXM (HBM3), bytes per second.
H100_BANDWIDTH_BYTES_PER_SECOND = 3.35e12
#: Host-side cost of one kernel launch, CuPy operation or asynchronous copy to the
#: device (CuPy's Python overhead plus cudaLaunchKernel), seconds. Not calibrated yet.
LAUNCH_SECONDS = 5e-6
#: Cost of one host synchronization (a copy to the host, ``int()`` of a device scalar,
#: a boolean mask's size): the round trip plus the idle device, seconds. Not calibrated.
SYNC_SECONDS = 20e-6
#: Bytes of a global-memory sector (instrument.h: kSectorBytes).
SECTOR_BYTES = 32
#: Threads of a warp: the lanes whose gathers coalesce.
WARP_SIZE = 32
#: Key bits a pass of CUB's radix sort (CuPy's sort) consumes.
RADIX_BITS_PER_PASS = 8
#: Bytes of the index CuPy's argsort sorts along with the keys (int64).
ARGSORT_INDEX_BYTES = 8

#: Kinds of events (as :func:`gpuboost.backends.emulation.device_array.count_operations`).
KERNEL = "kernel"
ARRAY_OP = "array_op"
TO_DEVICE = "to_device"
TO_HOST = "to_host"
#: Phase of events outside every profiling phase.
NO_PHASE = "other"


@dataclasses.dataclass
class TrafficEvent:
    """One thing the device was asked to do.

    Attributes
    ----------
    kind : str
        ``'kernel'``, ``'array_op'``, ``'to_device'`` or ``'to_host'``.
    name : str
        Kernel name, or the CuPy function / method.
    phase : str
        Innermost profiling range (``gpuboost.core.profiling``) at the time, or ``'other'``.
    round : int
        The round set by :meth:`TrafficLog.start_round` (-1 before the first).
    bytes : int
        Device-memory bytes moved (kernels: 32 x sectors; copies: the bytes copied
        between host and device, which are not device-memory traffic).
    syncs : int
        Host synchronizations (0 or 1).
    counters : dict of str to int
        Kernels: the traffic counters of the launch (instrument.h:
        GPUBOOST_EMU_TRAFFIC_COUNTERS); empty for other events.
    blocks : int
        Kernels: blocks of the launch's grid; 0 for other events.
    """

    kind: str
    name: str
    phase: str
    round: int
    bytes: int
    syncs: int = 0
    counters: dict = dataclasses.field(default_factory=dict)
    blocks: int = 0

    @property
    def device_bytes(self):
        """Bytes of device-memory traffic (0 for copies between host and device)."""
        return self.bytes if self.kind in (KERNEL, ARRAY_OP) else 0

    @property
    def launches(self):
        """Launch-like events: kernels, CuPy operations, asynchronous copies to the device."""
        return 1 if self.kind in (KERNEL, ARRAY_OP, TO_DEVICE) else 0


class TrafficLog:
    """The events recorded inside :func:`record_traffic`."""

    def __init__(self):
        self.events = []
        self.round = -1

    def start_round(self, index):
        """Tag the following events with round ``index``."""
        self.round = int(index)

    def add(self, kind, name, nbytes, syncs=0, counters=None, blocks=0):
        self.events.append(
            TrafficEvent(
                kind,
                name,
                active_range() or NO_PHASE,
                self.round,
                int(nbytes),
                syncs,
                dict(counters or {}),
                int(blocks),
            )
        )


_log = None


@contextlib.contextmanager
def record_traffic():
    """Record the traffic of the CUDA backend under the emulation inside the block.

    Yields
    ------
    TrafficLog
    """
    global _log
    previous, _log = _log, TrafficLog()
    try:
        yield _log
    finally:
        _log = previous


def recording():
    """Whether a :func:`record_traffic` block is active."""
    return _log is not None


def record_kernel(name, counters, blocks=0):
    """Record a kernel launch with its traffic counters (dict of str to int) and the
    blocks of its grid."""
    if _log is None:
        return
    sectors = (
        counters["global_load_sectors"]
        + counters["global_store_sectors"]
        + counters["global_atomic_sectors"]
    )
    _log.add(KERNEL, name, SECTOR_BYTES * sectors, 0, counters, blocks)


def record_array_op(kind, name, nbytes, syncs=0):
    """Record a CuPy-level operation (``kind`` ``'array_op'``) or a copy
    (``'to_device'`` / ``'to_host'``) moving ``nbytes``."""
    if _log is not None:
        _log.add(kind, name, nbytes, syncs)


def gather_bytes(offsets, itemsize):
    """Device bytes a warp-coalesced gather or scatter of ``itemsize``-byte elements at
    byte ``offsets`` (1-D int array, in thread order) moves: per 32 consecutive
    elements, 32 bytes per distinct sector their bytes touch."""
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1)
    if offsets.size == 0:
        return 0
    if itemsize > SECTOR_BYTES:  # no two elements share a sector often enough to matter
        return int(offsets.size * (math.ceil(itemsize / SECTOR_BYTES) + 1) * SECTOR_BYTES)
    padding = (-offsets.size) % WARP_SIZE
    offsets = np.concatenate([offsets, np.repeat(offsets[-1:], padding)])
    first = (offsets // SECTOR_BYTES).reshape(-1, WARP_SIZE)
    last = ((offsets + itemsize - 1) // SECTOR_BYTES).reshape(-1, WARP_SIZE)
    sectors = np.sort(np.concatenate([first, last], axis=1), axis=1)
    distinct = 1 + np.count_nonzero(np.diff(sectors, axis=1), axis=1)
    return int(distinct.sum()) * SECTOR_BYTES


def sort_bytes(n_items, key_bytes, value_bytes):
    """Device bytes of CuPy's radix sort of ``n_items`` keys of ``key_bytes`` with
    values of ``value_bytes``: one pass per 8 key bits, each reading and writing keys
    and values."""
    passes = math.ceil(key_bytes * 8 / RADIX_BITS_PER_PASS)
    return int(passes * 2 * n_items * (key_bytes + value_bytes))


def floor_bytes(n_rows, n_features, max_depth):
    """Bytes a depthwise round of ``max_depth`` levels on ``n_rows`` x ``n_features``
    binned rows must move at least (docs/DESIGN.md, "GPU performance model").

    ``n * (24 + (D + 1) / 2 * (F + 8) + 9 * (D - 1) + 20)``: a fused gradient and
    quantization pass (read label and margin, write quantized gradient and hessian: 24
    bytes a row); the histograms of the smaller children, about (D + 1) / 2 passes over
    the rows each reading F bin bytes and 8 bytes of gradient pair; a partition after
    every level but the last (read and write a 4-byte index, read one bin byte); the leaf
    update (read a 4-byte position, read and write the 8-byte margin: 20 bytes).
    """
    depth = max_depth
    per_row = 24 + (depth + 1) / 2 * (n_features + 8) + 9 * (depth - 1) + 20
    return n_rows * per_row


def modeled_seconds(device_bytes, launches, syncs):
    """Modeled H100 time (seconds) of ``device_bytes`` of traffic, ``launches``
    launch-like events and ``syncs`` host synchronizations."""
    return (
        device_bytes / H100_BANDWIDTH_BYTES_PER_SECOND
        + launches * LAUNCH_SECONDS
        + syncs * SYNC_SECONDS
    )


#: Kernel counters summed by :func:`summarize`.
_SUMMED_COUNTERS = (
    "global_requests",
    "global_atomics",
    "shared_requests",
    "shared_wavefronts",
    "shared_ideal_wavefronts",
    "shared_atomics",
)


def summarize(events):
    """Totals of a list of :class:`TrafficEvent`.

    Returns
    -------
    dict
        ``kernels``, ``array_ops``, ``to_device``, ``to_host`` (event counts), ``blocks``
        (of the kernels' grids),
        ``launches``, ``syncs``, ``device_bytes``, ``kernel_bytes``, ``array_op_bytes``,
        ``host_copy_bytes``, the summed kernel counters (``global_requests``,
        ``global_atomics``, ``shared_requests``, ``shared_wavefronts``,
        ``shared_ideal_wavefronts``, ``shared_atomics``), ``bank_conflict_ways``
        (wavefronts per shared request, 1.0 without conflicts) and ``modeled_seconds``.
    """
    totals = {
        "kernels": 0,
        "blocks": 0,
        "array_ops": 0,
        "to_device": 0,
        "to_host": 0,
        "launches": 0,
        "syncs": 0,
        "device_bytes": 0,
        "kernel_bytes": 0,
        "array_op_bytes": 0,
        "host_copy_bytes": 0,
        **{name: 0 for name in _SUMMED_COUNTERS},
    }
    plural = {KERNEL: "kernels", ARRAY_OP: "array_ops", TO_DEVICE: "to_device", TO_HOST: "to_host"}
    for event in events:
        totals[plural[event.kind]] += 1
        totals["launches"] += event.launches
        totals["syncs"] += event.syncs
        totals["device_bytes"] += event.device_bytes
        if event.kind == KERNEL:
            totals["blocks"] += event.blocks
            totals["kernel_bytes"] += event.bytes
            for name in _SUMMED_COUNTERS:
                totals[name] += event.counters.get(name, 0)
        elif event.kind == ARRAY_OP:
            totals["array_op_bytes"] += event.bytes
        else:
            totals["host_copy_bytes"] += event.bytes
    requests = totals["shared_requests"]
    totals["bank_conflict_ways"] = totals["shared_wavefronts"] / requests if requests else 0.0
    totals["modeled_seconds"] = modeled_seconds(
        totals["device_bytes"], totals["launches"], totals["syncs"]
    )
    return totals
