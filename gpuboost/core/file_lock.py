"""One build at a time across processes: an exclusive lock on a file, for the caches of
compiled code (the emulation's g++ libraries, the CPU backend's Numba kernels).

Several processes that start on a cold cache at once -- pytest-xdist's workers, the
worker processes of a Dask cluster on a new node, a notebook beside a script -- would
each compile the same code and write the same cache entry. With the build of an entry
inside ``exclusive(lock_path)``, the first process compiles it and the others wait, then
find it in the cache (the caller looks again once it holds the lock).

The lock is ``fcntl.flock`` on the lock file (created if missing, never deleted; a lock
dies with its process, so a crashed build leaves nothing locked). Where ``fcntl`` is
missing (Windows) or the folder is not writable, ``exclusive`` does nothing: each process
then builds for itself, as before, which is slower but correct, since cache entries are
written to a private temporary file and renamed into place.
"""

import contextlib
import os

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

__all__ = ["exclusive"]


@contextlib.contextmanager
def exclusive(lock_path):
    """Hold an exclusive lock on ``lock_path`` (a file, created if missing) inside the
    ``with`` block, waiting for another holder to leave first.

    Locks are per open file: two threads of one process exclude each other too.

    Parameters
    ----------
    lock_path : str or os.PathLike
    """
    if fcntl is None:
        yield
        return
    try:
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # a read-only cache folder: no lock, each process builds for itself
        yield
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock
