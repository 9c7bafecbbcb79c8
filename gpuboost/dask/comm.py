"""Client-side calls to the workers' states, through Dask itself (no other networking).

:class:`Exchange` submits one task per worker, pinned to it
(``workers=[address], allow_other_workers=False``), running
:func:`gpuboost.dask.worker.call`, and waits for all of them at most ``timeout``
seconds. A worker that died, or whose task fails, ends the training with a
RuntimeError naming the worker: a task pinned to a dead worker is never rescheduled
elsewhere, so the wait times out instead of hanging. It also counts the bytes of
every result that comes back (histograms, maxima, counts) and of the small
arguments that go out, for the verbose report.
"""

import pickle
import uuid

from . import worker as worker_side

__all__ = ["Exchange", "DEFAULT_TIMEOUT_SECONDS", "result_bytes"]

#: Default ``timeout`` of one exchange with the workers (seconds).
DEFAULT_TIMEOUT_SECONDS = 60.0


def result_bytes(value):
    """Bytes of a value as it travels (NumPy arrays: their buffer; else its pickle)."""
    nbytes = getattr(value, "nbytes", None)
    if nbytes is not None:
        return int(nbytes)
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


class Exchange:
    """Calls into the :class:`~gpuboost.dask.worker.WorkerState` of every worker of a run.

    Parameters
    ----------
    client : distributed.Client
    workers : list of str
        Worker addresses, in the order of the calls' results.
    timeout : float
        Seconds one exchange may take before the training fails.

    Attributes
    ----------
    key : str
        The run's key (the workers' states are stored under it).
    bytes_exchanged : int
        Bytes of arguments sent and results received so far.
    """

    def __init__(self, client, workers, timeout):
        from distributed import wait  # optional dependency (gpuboost[dask])

        self._wait = wait
        self.client = client
        self.workers = list(workers)
        self.timeout = float(timeout)
        self.key = f"gpuboost-train-{uuid.uuid4().hex}"
        self.bytes_exchanged = 0

    def submit(self, worker, function, *args):
        """One task on ``worker`` (no other worker may run it)."""
        return self.client.submit(
            function,
            *args,
            workers=[worker],
            allow_other_workers=False,
            pure=False,
            key=f"{self.key}-{function.__name__}-{uuid.uuid4().hex}",
        )

    def gather(self, futures, action):
        """The results of ``futures`` (one per worker, in ``self.workers`` order).

        Raises
        ------
        RuntimeError
            A worker did not answer within the timeout (naming it and whether the
            scheduler still knows it), or its task failed (with the worker's error).
        """
        pending = self._wait_bounded(futures)
        if pending:
            names = [self.workers[futures.index(future)] for future in pending]
            alive = set(self._alive_workers())
            states = ", ".join(
                f"{name} ({'still connected' if name in alive else 'gone from the cluster'})"
                for name in names
            )
            for future in futures:
                future.cancel()
            raise RuntimeError(
                f"Distributed training failed while {action}: no answer within "
                f"{self.timeout:g} s from worker(s) {states}. A worker that dies loses "
                f"its partitions; restart the cluster (or the worker) and train again, "
                f"from the last TrainingCheckPoint (init_model=) if one was written."
            )
        results = []
        for worker, future in zip(self.workers, futures):
            if future.status == "error":
                error = future.exception()
                raise RuntimeError(
                    f"Distributed training failed while {action}: worker {worker} raised "
                    f"{type(error).__name__}: {error}"
                ) from error
            results.append(future.result())
        for future in futures:
            future.release()
        self.bytes_exchanged += sum(result_bytes(result) for result in results)
        return results

    def _wait_bounded(self, futures):
        """The futures still pending after at most ``timeout`` seconds."""
        from distributed import TimeoutError as DistributedTimeout

        try:
            self._wait(futures, timeout=self.timeout)
        except (DistributedTimeout, TimeoutError):
            pass
        return [future for future in futures if not future.done()]

    def _alive_workers(self):
        try:
            return self.client.scheduler_info(n_workers=-1)["workers"].keys()
        except Exception:  # the scheduler itself may be unreachable
            return ()

    def call(self, action, method, *args, per_worker=None):
        """``WorkerState.<method>(*args)`` on every worker; ``per_worker[i]`` (a tuple),
        when given, is appended to worker ``i``'s arguments. Returns the results in
        worker order (RuntimeError as :meth:`gather`)."""
        sent = result_bytes(args) if args else 0
        futures = []
        for index, worker in enumerate(self.workers):
            extra = per_worker[index] if per_worker is not None else ()
            futures.append(self.submit(worker, worker_side.call, self.key, method, *args, *extra))
            sent_extra = result_bytes(extra) if extra else 0
            self.bytes_exchanged += sent + sent_extra
        return self.gather(futures, action)

    def close(self):
        """Drop the workers' states of this run (best effort: a dead worker has none)."""
        futures = [self.submit(worker, worker_side.drop_state, self.key) for worker in self.workers]
        try:
            self._wait(futures, timeout=min(self.timeout, 10.0))
        except Exception:
            pass
        for future in futures:
            future.release()
