"""Client-side calls to the workers' states, through Dask itself (no other networking).

Every worker of a run holds one :class:`~gpuboost.dask.worker.WorkerState` as a
``distributed`` *actor* (created by a task pinned to the worker, so its partitions
are read where they are); a method call goes straight from the client to the worker
over the cluster's own connections (a few milliseconds, against tens for a task
through the scheduler). :class:`Exchange` calls one method on every worker and waits
for all of them at most ``timeout`` seconds: a worker that died, or that does not
answer, ends the training with a RuntimeError naming the worker -- never a hang. It
also counts the bytes of the arguments sent and of the results received
(histograms, maxima, counts), for the verbose report and the benchmark.
"""

import pickle
import time
import uuid

__all__ = ["Exchange", "DEFAULT_TIMEOUT_SECONDS", "payload_bytes"]

#: Default ``timeout`` of one exchange with the workers (seconds).
DEFAULT_TIMEOUT_SECONDS = 60.0


def payload_bytes(value):
    """Bytes of a value as it travels (NumPy arrays: their buffer; else its pickle)."""
    nbytes = getattr(value, "nbytes", None)
    if nbytes is not None:
        return int(nbytes)
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


class Exchange:
    """Calls into the :class:`~gpuboost.dask.worker.WorkerState` actor of every worker.

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
        The run's key (names its tasks).
    bytes_exchanged : int
        Bytes of arguments sent and results received so far.
    """

    def __init__(self, client, workers, timeout):
        self.client = client
        self.workers = list(workers)
        self.timeout = float(timeout)
        if not self.timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}.")
        self.key = f"gpuboost-train-{uuid.uuid4().hex}"
        self.bytes_exchanged = 0
        self._actor_futures = []
        self._actors = []
        self._deferred = []

    def _failure(self, action, worker, error):
        """The RuntimeError of a worker that failed ``action``."""
        alive = set(self._alive_workers())
        where = "the scheduler still lists it" if worker in alive else "gone from the cluster"
        if isinstance(error, TimeoutError):
            what = f"no answer within {self.timeout:g} s from worker {worker} ({where})"
        else:
            what = f"worker {worker} ({where}) failed: {type(error).__name__}: {error}"
        return RuntimeError(
            f"Distributed training failed while {action}: {what}. A worker that dies loses "
            f"its partitions: restart it (or the cluster) and train again, from the last "
            f"TrainingCheckPoint (init_model=) if one was written."
        )

    def _alive_workers(self):
        try:
            return self.client.scheduler_info(n_workers=-1)["workers"].keys()
        except Exception:  # the scheduler itself may be unreachable
            return ()

    def _results(self, futures, action, result_of):
        """Every future's result within one ``timeout`` for all, in worker order."""
        deadline = time.monotonic() + self.timeout
        results = []
        for worker, future in zip(self.workers, futures):
            try:
                remaining = max(deadline - time.monotonic(), 0.001)
                results.append(result_of(future, remaining))
            except Exception as error:
                if isinstance(error, TimeoutError) or type(error).__name__ == "TimeoutError":
                    error = TimeoutError(str(error))
                raise self._failure(action, worker, error) from error
        self.bytes_exchanged += sum(payload_bytes(result) for result in results)
        return results

    def start(self, state_class, per_worker_args):
        """Create the run's state on every worker: ``state_class(*per_worker_args[i])``
        as an actor on worker ``i`` (futures among the arguments are read there).
        Returns the states' ``n_rows()``."""
        from distributed import wait  # optional dependency (gpuboost[dask])

        self._actor_futures = [
            self.client.submit(
                state_class,
                *args,
                workers=[worker],
                allow_other_workers=False,
                actor=True,
                key=f"{self.key}-state-{index}",
            )
            for index, (worker, args) in enumerate(zip(self.workers, per_worker_args))
        ]
        try:
            wait(self._actor_futures, timeout=self.timeout)
        except Exception:
            pass  # the worker in fault is named below
        self._actors = self._results(
            self._actor_futures,
            "loading the partitions",
            lambda future, remaining: future.result(timeout=remaining),
        )
        return self.call("loading the partitions", "n_rows")

    def defer(self, method, *args):
        """Queue ``WorkerState.<method>(*args)`` (whose result is not needed) on every
        worker: it travels with the next :meth:`call` and runs first (one exchange
        saved, e.g. the margin update of a finished tree)."""
        self._deferred.append((method, args))

    def call(self, action, method, *args, per_worker=None):
        """``WorkerState.<method>(*args)`` on every worker, after the deferred calls;
        ``per_worker[i]`` (a tuple), when given, is appended to worker ``i``'s arguments.
        Returns the results in worker order.

        Raises
        ------
        RuntimeError
            A worker did not answer within ``timeout`` seconds (naming it, and whether
            the scheduler still knows it), or its call raised (with its error).
        """
        deferred, self._deferred = self._deferred, []
        sent = payload_bytes((deferred, args))
        futures = []
        for index, actor in enumerate(self._actors):
            extra = per_worker[index] if per_worker is not None else ()
            self.bytes_exchanged += sent + (payload_bytes(extra) if extra else 0)
            try:
                calls = deferred + [(method, args + tuple(extra))]
                futures.append(
                    actor.run(calls) if deferred else getattr(actor, method)(*calls[-1][1])
                )
            except Exception as error:
                raise self._failure(action, self.workers[index], error) from error
        return self._results(
            futures, action, lambda future, remaining: future.result(timeout=remaining)
        )

    def close(self):
        """Release the workers' states of this run (a dead worker has none left)."""
        self._actors = []
        for future in self._actor_futures:
            try:
                future.release()
            except Exception:
                pass
        self._actor_futures = []
