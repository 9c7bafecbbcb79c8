"""Checkpoints: saved atomically every k rounds; a killed run resumes to the same model.

The end-to-end test starts tests/_checkpoint_worker.py as a real subprocess,
waits until it has written a checkpoint, kills it with SIGKILL in the middle of
training, resumes from the checkpoint in a new process, and compares the final
model file byte for byte with an uninterrupted run.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import _checkpoint_worker as worker
import pytest

import gpuboost

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER = REPO_ROOT / "tests" / "_checkpoint_worker.py"
#: The killed run: rounds, checkpoint interval, and sleep per round (so it lasts seconds).
KILL_ROUNDS, KILL_INTERVAL, KILL_SLEEP_S = 60, 5, 0.05
#: Seconds to wait for the worker's first checkpoint, and for any worker to finish.
CHECKPOINT_WAIT_S, WORKER_TIMEOUT_S = 60, 120
POLL_INTERVAL_S = 0.01
#: Rounds and interval of the in-process tests.
ROUNDS, INTERVAL = 9, 3


def _worker_command(checkpoint_dir, output, *extra):
    return [
        sys.executable,
        str(WORKER),
        "--checkpoint-dir",
        str(checkpoint_dir),
        "--output",
        str(output),
        "--rounds",
        str(KILL_ROUNDS),
        "--interval",
        str(KILL_INTERVAL),
        *extra,
    ]


def _worker_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    return env


@pytest.fixture(scope="module")
def uninterrupted_model(tmp_path_factory):
    """Model bytes of the whole run, in one process, without killing it."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    completed = subprocess.run(
        _worker_command(folder / "checkpoints", folder / "model.json"),
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT_S,
        env=_worker_env(),
        cwd=REPO_ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    return (folder / "model.json").read_bytes()


def test_killed_run_resumes_to_the_uninterrupted_model(tmp_path, uninterrupted_model):
    checkpoints, output = tmp_path / "checkpoints", tmp_path / "model.json"
    checkpoint = Path(worker.checkpoint_path(checkpoints))
    process = subprocess.Popen(
        _worker_command(checkpoints, output, "--sleep", str(KILL_SLEEP_S)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_worker_env(),
        cwd=REPO_ROOT,
    )
    try:
        deadline = time.monotonic() + CHECKPOINT_WAIT_S
        while not checkpoint.exists():
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "no checkpoint appeared"
            time.sleep(POLL_INTERVAL_S)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=WORKER_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    assert not output.exists(), "the run finished before it was killed"
    saved = gpuboost.Booster.load_model(checkpoint)  # complete, although killed at any moment
    assert saved.num_boosted_rounds() % KILL_INTERVAL == 0
    assert 0 < saved.num_boosted_rounds() < KILL_ROUNDS

    resumed = subprocess.run(
        _worker_command(checkpoints, output, "--resume"),
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT_S,
        env=_worker_env(),
        cwd=REPO_ROOT,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert output.read_bytes() == uninterrupted_model
    # The last checkpoint is the final model.
    assert checkpoint.read_bytes() == uninterrupted_model


class CheckpointSpy(gpuboost.TrainingCallback):
    """Runs after TrainingCheckPoint: records the rounds in the checkpoint file and keeps
    a copy of every checkpoint."""

    def __init__(self, checkpoint_path, copies_dir):
        self.checkpoint_path = checkpoint_path
        self.copies_dir = copies_dir
        self.rounds_on_disk = []

    def after_iteration(self, model, epoch, evals_log):
        if os.path.exists(self.checkpoint_path):
            rounds = gpuboost.Booster.load_model(self.checkpoint_path).num_boosted_rounds()
            self.rounds_on_disk.append(rounds)
            shutil.copyfile(self.checkpoint_path, self.copies_dir / f"{rounds}.json")
        else:
            self.rounds_on_disk.append(0)
        return False


def _train(tmp_path, rounds, callbacks=(), init_model=None, device="cpu"):
    return gpuboost.train(
        dict(worker.PARAMS, device=device),
        worker.make_dataset(n_rows=500),
        num_boost_round=rounds,
        callbacks=list(callbacks),
        init_model=init_model,
    )


def test_a_checkpoint_every_k_rounds_and_at_the_end(tmp_path):
    checkpoints, copies = tmp_path / "checkpoints", tmp_path / "copies"
    copies.mkdir()
    checkpoint = gpuboost.TrainingCheckPoint(checkpoints, interval=INTERVAL)
    spy = CheckpointSpy(checkpoint.path, copies)
    booster = _train(tmp_path, ROUNDS + 1, [checkpoint, spy])
    expected = [(round_index + 1) // INTERVAL * INTERVAL for round_index in range(ROUNDS + 1)]
    assert spy.rounds_on_disk == expected
    # after training: the final model, also when the last round is not a multiple of k
    assert Path(checkpoint.path).read_bytes() == booster.save_raw()
    assert sorted(os.listdir(checkpoints)) == ["checkpoint.json"]  # no temporary files left


def test_resuming_from_any_checkpoint_gives_the_uninterrupted_model(tmp_path):
    copies = tmp_path / "copies"
    copies.mkdir()
    checkpoint = gpuboost.TrainingCheckPoint(tmp_path / "checkpoints", interval=INTERVAL)
    reference = _train(tmp_path, ROUNDS, [checkpoint, CheckpointSpy(checkpoint.path, copies)])
    resumable = sorted(int(name.split(".")[0]) for name in os.listdir(copies))
    assert resumable == list(range(INTERVAL, ROUNDS + 1, INTERVAL))
    for done in resumable[:-1]:
        resumed = _train(
            tmp_path, ROUNDS - done, init_model=gpuboost.Booster.load_model(copies / f"{done}.json")
        )
        assert resumed.save_raw() == reference.save_raw(), done


def test_a_crash_while_writing_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    checkpoint = gpuboost.TrainingCheckPoint(tmp_path / "checkpoints", interval=INTERVAL)
    reference = _train(tmp_path, ROUNDS).save_raw()
    writes = []
    real_fsync = os.fsync

    def failing_second_fsync(fd):
        writes.append(fd)
        if len(writes) == 2:
            raise OSError("simulated crash while writing the checkpoint")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_second_fsync)
    with pytest.raises(OSError, match="simulated crash"):
        _train(tmp_path, ROUNDS, [checkpoint])
    monkeypatch.setattr(os, "fsync", real_fsync)
    saved = gpuboost.Booster.load_model(checkpoint.path)
    assert saved.num_boosted_rounds() == INTERVAL  # the first checkpoint, intact
    assert sorted(os.listdir(tmp_path / "checkpoints")) == ["checkpoint.json"]
    resumed = _train(tmp_path, ROUNDS - INTERVAL, init_model=saved)
    assert resumed.save_raw() == reference


def test_interval_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="interval"):
        gpuboost.TrainingCheckPoint(tmp_path, interval=0)


def test_resume_on_emulated_cuda(tmp_path, emulated_cuda):
    rounds, interval = 4, 2
    dataset_rows = 120
    params = dict(worker.PARAMS, device="cuda")
    dataset = worker.make_dataset(n_rows=dataset_rows, n_features=4)
    checkpoint = gpuboost.TrainingCheckPoint(tmp_path, interval=interval)
    copies = tmp_path / "copies"
    copies.mkdir()
    reference = gpuboost.train(
        params,
        dataset,
        num_boost_round=rounds,
        callbacks=[checkpoint, CheckpointSpy(checkpoint.path, copies)],
    )
    resumed = gpuboost.train(
        params,
        dataset,
        num_boost_round=rounds - interval,
        init_model=gpuboost.Booster.load_model(copies / "2.json"),
    )
    assert resumed.save_raw() == reference.save_raw()
    on_cpu = gpuboost.train(dict(params, device="cpu"), dataset, num_boost_round=rounds)
    assert on_cpu.save_raw() == reference.save_raw()
