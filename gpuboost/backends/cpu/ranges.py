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

__all__ = ["thread_ranges", "SNAP_DIVISOR"]

#: A boundary moves to a node edge at most a thread's share / SNAP_DIVISOR positions away
#: (the imbalance this allows, under 7 %, costs less than the second parallel loop and
#: its extra pass over the cut node's rows).
SNAP_DIVISOR = 16


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
