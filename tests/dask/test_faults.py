"""gpuboost.dask: a worker that dies mid-training fails it within the timeout, with a
RuntimeError naming the worker (never a hang). Its own cluster: the killed worker's
partitions are lost."""

import os
import signal
import time

import numpy as np
import pytest

pytest.importorskip("distributed")

import _dask_cluster as dc

from gpuboost.boosting.callback import TrainingCallback
from gpuboost.dask import DaskDataset, train

#: The training's timeout in the test, and the slack allowed beyond it (seconds).
TIMEOUT_S, SLACK_S = 5.0, 10.0


class _KillWorkerAfter(TrainingCallback):
    """Kill one worker's process (SIGKILL) after round ``round_index``."""

    def __init__(self, client, worker, round_index):
        self.pid = client.run(os.getpid, workers=[worker])[worker]
        self.round_index = round_index
        self.killed_at = None

    def after_iteration(self, model, epoch, evals_log):
        if epoch == self.round_index:
            os.kill(self.pid, signal.SIGKILL)
            self.killed_at = time.monotonic()
        return False


def test_killed_worker_raises_within_the_timeout():
    cluster, client = dc.start_cluster(2)
    try:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(2000, 5))
        y = X[:, 0] + rng.normal(size=2000)
        sizes = [700, 500, 800]
        dtrain = DaskDataset(
            client, dc.spread(client, X, sizes, 2), label=dc.spread(client, y, sizes, 2)
        )
        victim = dtrain.workers()[1]
        killer = _KillWorkerAfter(client, victim, 1)
        with pytest.raises(RuntimeError, match=victim) as raised:
            train(
                client,
                {"max_depth": 3, "device": "cpu"},
                dtrain,
                50,
                callbacks=[killer],
                timeout=TIMEOUT_S,
                verbose_eval=False,
            )
        assert time.monotonic() - killer.killed_at < TIMEOUT_S + SLACK_S
        assert "Distributed training failed" in str(raised.value)
    finally:
        client.close()
        cluster.close()


def test_timeout_must_be_positive():
    from gpuboost.dask.comm import Exchange

    with pytest.raises(ValueError, match="timeout"):
        Exchange(None, [], 0)
