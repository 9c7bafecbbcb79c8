"""How the parallel kernels of a batch of nodes share the work among threads.

The batch's positions (the nodes' segments of ``sample_indices`` laid end to end,
``offsets``) are cut into one range per thread of about equal length, so the work is
balanced by rows whatever the node sizes::

    positions   | node 0          | node 1 | node 2      | node 3 |
    equal cuts  |<--- thread 0 --->|<--- thread 1 --->|<- thread 2 ->|
    snapped     |<--- thread 0 -->|<---- thread 1 --->|<- thread 2 ->|

A node cut by a boundary is worked on in pieces by two threads, which costs the row
partition (:mod:`.partition`) two more parallel loops and a second pass over the cut
node's rows (its pieces are counted before they are scattered). So a boundary moves to
the nearest node edge when that edge is within a :data:`SNAP_DIVISOR`-th of a thread's
share: with many nodes (the deep levels) no node is cut; a few large nodes (the first
levels) are cut as before. Where the boundaries fall never changes a result: the
partition is stable. (The histograms keep equal ranges: their cut nodes cost no extra
pass over rows, only a merge of the pieces.)
"""

import numpy as np

from .jit import kernel

__all__ = [
    "CUT_NODES_PER_THREAD",
    "SNAP_DIVISOR",
    "equal_ranges",
    "segment_offsets",
    "thread_pieces",
    "thread_ranges",
]

#: A boundary moves to a node edge at most a thread's share / SNAP_DIVISOR positions away
#: (the imbalance this allows, under 7 %, costs less than the second parallel loop and
#: its extra pass over the cut node's rows).
SNAP_DIVISOR = 16
#: Cut nodes in one thread's range: the node it starts inside and the one it ends in.
CUT_NODES_PER_THREAD = 2


@kernel
def segment_offsets(begins, ends):
    """Where each segment of a batch starts with the segments laid end to end, and their
    total: (n_nodes + 1,) int64."""
    n_nodes = begins.shape[0]
    offsets = np.zeros(n_nodes + 1, dtype=np.int64)
    for node in range(n_nodes):
        offsets[node + 1] = offsets[node] + (ends[node] - begins[node])
    return offsets


@kernel
def equal_ranges(offsets, n_threads):
    """The equal cuts: thread ``t`` takes positions ``bounds[t]`` up to ``bounds[t + 1]``,
    ``bounds[t] = t * total // n_threads``; (n_threads + 1,) int64."""
    total = offsets[offsets.shape[0] - 1]
    bounds = np.empty(n_threads + 1, dtype=np.int64)
    for thread in range(n_threads + 1):
        bounds[thread] = thread * total // n_threads
    return bounds


@kernel
def thread_ranges(offsets, n_threads):
    """Thread ``t`` takes positions ``bounds[t]`` up to ``bounds[t + 1]``.

    Parameters
    ----------
    offsets : ndarray of shape (n_nodes + 1,), int64
        Start of each node's positions in the batch; ``offsets[-1]`` the total.
    n_threads : int

    Returns
    -------
    bounds : ndarray of shape (n_threads + 1,), int64
        Non-decreasing, from 0 to the total.
    """
    n_nodes = offsets.shape[0] - 1
    total = offsets[n_nodes]
    share = total // n_threads
    bounds = np.empty(n_threads + 1, dtype=np.int64)
    bounds[0] = 0
    bounds[n_threads] = total
    for thread in range(1, n_threads):
        ideal = thread * total // n_threads
        node = min(np.searchsorted(offsets, ideal, side="right") - 1, n_nodes - 1)
        below = offsets[node]
        above = offsets[node + 1]
        nearest = below if ideal - below <= above - ideal else above
        bound = nearest if abs(nearest - ideal) * SNAP_DIVISOR <= share else ideal
        bounds[thread] = min(max(bound, bounds[thread - 1]), total)
    return bounds


@kernel
def thread_pieces(offsets, begins, low, high, pieces):
    """The pieces of the nodes in positions ``low`` up to ``high`` (a thread's range):
    rows ``(node, start, stop, whole)`` of ``pieces`` ((n_nodes, 4) int64), ``start`` and
    ``stop`` positions in ``sample_indices``, ``whole`` 1 where the range holds the whole
    node; returns their number."""
    n_nodes = begins.shape[0]
    node = np.searchsorted(offsets, low, side="right") - 1
    count = 0
    while node < n_nodes and offsets[node] < high:
        first = max(low, offsets[node])
        last = min(high, offsets[node + 1])
        if last > first:
            pieces[count, 0] = node
            pieces[count, 1] = begins[node] + first - offsets[node]
            pieces[count, 2] = begins[node] + last - offsets[node]
            pieces[count, 3] = first == offsets[node] and last == offsets[node + 1]
            count += 1
        node += 1
    return count
