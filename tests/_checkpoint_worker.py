"""A training run with checkpoints, for tests/test_checkpoint.py (run as a subprocess).

Trains ``--rounds`` rounds on fixed synthetic data, saving a checkpoint every
``--interval`` rounds (``gpuboost.TrainingCheckPoint``) and sleeping
``--sleep`` seconds after every round, so that a test can kill it mid-run. With
``--resume`` it loads the checkpoint (when there is one) and trains only the
remaining rounds with ``init_model``. The final model is written to
``--output``.

    python tests/_checkpoint_worker.py --checkpoint-dir DIR --output model.json \
        [--rounds 40] [--interval 5] [--sleep 0.05] [--resume] [--device cpu]
"""

import argparse
import os
import sys
import time

import numpy as np

import gpuboost

#: Training parameters: row and column sampling on, so resuming must restore the
#: random streams of the right rounds, not just the trees.
PARAMS = {
    "objective": "binary:logistic",
    "max_depth": 4,
    "learning_rate": 0.2,
    "subsample": 0.7,
    "colsample_bytree": 0.8,
    "colsample_bynode": 0.8,
    "seed": 3,
    "max_bin": 63,
    "verbosity": 0,
}
#: File stem of the checkpoint (``<dir>/<CHECKPOINT_NAME>.json``).
CHECKPOINT_NAME = "checkpoint"


def make_dataset(n_rows=2000, n_features=10, seed=0):
    """The fixed training data (NaN in a tenth of the values)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    logit = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    y = (logit + 0.5 * rng.normal(size=n_rows) > 0).astype(float)
    return gpuboost.Dataset(X, label=y, max_bin=PARAMS["max_bin"])


class SlowRounds(gpuboost.TrainingCallback):
    """Sleeps after every round, so the run is long enough to be killed in the middle."""

    def __init__(self, seconds):
        self.seconds = seconds

    def after_iteration(self, model, epoch, evals_log):
        time.sleep(self.seconds)
        return False


def checkpoint_path(directory):
    return os.path.join(directory, f"{CHECKPOINT_NAME}.json")


def run(checkpoint_dir, output, rounds, interval, sleep_seconds, resume, device):
    """Train (or resume) and write the final model to ``output``; returns the Booster."""
    init_model = None
    if resume and os.path.exists(checkpoint_path(checkpoint_dir)):
        init_model = gpuboost.Booster.load_model(checkpoint_path(checkpoint_dir))
    done = 0 if init_model is None else init_model.num_boosted_rounds()
    callbacks = [
        gpuboost.TrainingCheckPoint(checkpoint_dir, name=CHECKPOINT_NAME, interval=interval)
    ]
    if sleep_seconds > 0:
        callbacks.append(SlowRounds(sleep_seconds))
    booster = gpuboost.train(
        dict(PARAMS, device=device),
        make_dataset(),
        num_boost_round=rounds - done,
        callbacks=callbacks,
        init_model=init_model,
    )
    booster.save_model(output)
    return booster


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint-dir", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--interval", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    run(
        args.checkpoint_dir,
        args.output,
        args.rounds,
        args.interval,
        args.sleep,
        args.resume,
        args.device,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
