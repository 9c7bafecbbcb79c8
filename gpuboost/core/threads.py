"""Process-wide worker threads for the NumPy backend.

NumPy releases the GIL inside ``take``, ``ufunc.at``, ``bincount`` and most
elementwise operations on large arrays, so independent pieces of a primitive
(features of a histogram, groups of nodes of a partition or split scan) run in
parallel on threads. Every such piece writes its own slice of the output and all
sums are exact integers, so results never depend on the number of threads.
"""

import os
from concurrent.futures import ThreadPoolExecutor

__all__ = ["thread_pool", "usable_cores"]

_POOLS = {}


def thread_pool(n_threads):
    """A pool of ``n_threads`` workers, created once per size; None when ``n_threads <= 1``."""
    if n_threads <= 1:
        return None
    pool = _POOLS.get(n_threads)
    if pool is None:
        pool = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="gpuboost")
        _POOLS[n_threads] = pool
    return pool


def usable_cores():
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
