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
from _tiers import SLOW

from gpuboost.boosting.callback import TrainingCallback
from gpuboost.dask import DaskDataset, train

#: Every Dask test on one xdist worker (pyproject: --dist loadgroup), which starts the
#: session's clusters once.
pytestmark = pytest.mark.xdist_group("dask")

#: The training's timeout in the tests, and the slack allowed beyond it (seconds).
TIMEOUT_S, SLACK_S = 5.0, 10.0
#: The timeout of the unresponsive-worker test (the worker is blocked 3 times as long).
SHORT_TIMEOUT_S = 2.0


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


@pytest.fixture(scope="module")
def cluster_client():
    cluster, client = dc.start_cluster(2)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _dataset(client):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    y = X[:, 0] + rng.normal(size=2000)
    sizes = [700, 500, 800]
    return DaskDataset(client, dc.spread(client, X, sizes, 2), label=dc.spread(client, y, sizes, 2))


class _BlockWorkerAfter(TrainingCallback):
    """Block one worker's event loop for ``seconds`` after round ``round_index`` (alive,
    but it answers nothing)."""

    def __init__(self, client, worker, round_index, seconds):
        self.client, self.worker = client, worker
        self.round_index, self.seconds = round_index, seconds
        self.blocked_at = None

    def after_iteration(self, model, epoch, evals_log):
        if epoch == self.round_index:
            seconds = self.seconds

            async def block():
                time.sleep(seconds)  # blocks the worker's event loop on purpose

            self.client.run(block, workers=[self.worker], wait=False)
            self.blocked_at = time.monotonic()
        return False


@SLOW  # fast sibling: test_killed_worker_raises_within_the_timeout (the same wait)
def test_unresponsive_worker_raises_within_the_timeout(cluster_client):
    client = cluster_client
    dtrain = _dataset(client)
    victim = dtrain.workers()[0]
    blocker = _BlockWorkerAfter(client, victim, 1, seconds=3 * SHORT_TIMEOUT_S)
    with pytest.raises(RuntimeError, match=f"no answer within .* from worker {victim}"):
        train(
            client,
            {"max_depth": 3, "device": "cpu"},
            dtrain,
            50,
            callbacks=[blocker],
            timeout=SHORT_TIMEOUT_S,
            verbose_eval=False,
        )
    assert time.monotonic() - blocker.blocked_at < SHORT_TIMEOUT_S + SLACK_S
    time.sleep(3 * SHORT_TIMEOUT_S)  # let the worker recover for the next test


def test_killed_worker_raises_within_the_timeout(cluster_client):
    client = cluster_client
    dtrain = _dataset(client)
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


def test_timeout_must_be_positive():
    from gpuboost.dask.comm import Exchange

    with pytest.raises(ValueError, match="timeout"):
        Exchange(None, [], 0)
