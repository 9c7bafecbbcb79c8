#!/usr/bin/env python
"""``survival:cox`` and ``survival:aft`` against XGBoost's at equal settings: held-out
``cox-nloglik`` and Harrell's ``c-index``, ``aft-nloglik`` and
``interval-regression-accuracy`` (issue 31's bar: within 1 %).

Tables: lifelines' bundled GBSG2 (686 breast-cancer patients), Rossi (432 released
prisoners) and lung (228; rows with missing values kept, NaN is missing) when lifelines
is installed, and generated data (exponential times with a nonlinear risk, a third
censored, 20,000 rows). Per table, mean over ``--splits`` random 75/25 splits; both
libraries train with the same parameters on the same split in this one process, and
both metrics are computed by ``gpuboost.metrics`` on each library's hazard ratios (on
XGBoost's own predictions ``cox-nloglik`` equals its evaluation, tests/objectives/
test_survival.py).

AFT (``--objective aft``): the same tables as intervals (an event: ``[t, t]``; censored:
``[t, inf]``), lifelines' interval-censored diabetes table (731 rows), and generated data
with every kind of censoring (observed, right-, left-, interval-censored; 20,000 rows);
``--distribution`` normal / logistic / extreme, scale ``--scale``. The AFT metrics run on
each library's margins (``gpuboost.metrics``; equal to XGBoost's evaluation on the same
margins, tests/objectives/test_aft.py).

Usage::

    python benchmarks/survival.py [--objective cox|aft] [--distribution normal]
        [--scale 1.0] [--splits 10] [--rounds 100] [--threads 2] [--json out.json]
"""

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from _machine import cpu_model  # noqa: E402

import gpuboost  # noqa: E402
from gpuboost.data.dataset import label_arguments  # noqa: E402
from gpuboost.metrics import get_metric  # noqa: E402

PARAMS = {"learning_rate": 0.05, "max_depth": 3}


def _numeric(frame, time_column, event_column):
    """Features (categorical columns as codes), and labels: time, negative if censored."""
    features = frame.drop(columns=[time_column, event_column])
    for column in features.columns:
        if features[column].dtype == object:
            features[column] = features[column].astype("category").cat.codes
    time = frame[time_column].to_numpy(dtype=np.float64)
    event = frame[event_column].to_numpy() == 1
    return features.to_numpy(dtype=np.float64), np.where(event, time, -time)


def tables():
    """name -> (X, y)."""
    out = {}
    try:
        from lifelines import datasets
    except ImportError:
        print("lifelines is not installed: its tables are skipped")
    else:
        out["gbsg2"] = _numeric(datasets.load_gbsg2(), "time", "cens")
        out["rossi"] = _numeric(datasets.load_rossi(), "week", "arrest")
        out["lung"] = _numeric(datasets.load_lung(), "time", "status")  # status 1: death
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 8))
    risk = X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 * X[:, 2] * X[:, 3]
    event = rng.exponential(scale=np.exp(-risk))
    censor = rng.exponential(scale=2.0, size=len(X))
    time = np.maximum(np.minimum(event, censor), 1e-6)
    out["generated_20k"] = (X, np.where(event <= censor, time, -time))
    return out


def interval_tables():
    """name -> (X, intervals of shape (n, 2)): the Cox tables as intervals, lifelines'
    interval-censored diabetes table, and generated data with every kind of censoring."""
    out = {
        name: (X, np.column_stack([np.abs(y), np.where(y > 0, y, np.inf)]))
        for name, (X, y) in tables().items()
        if name != "generated_20k"
    }
    try:
        from lifelines import datasets
    except ImportError:
        pass
    else:
        frame = datasets.load_diabetes()
        X = (frame[["gender"]] == "male").to_numpy(dtype=np.float64)
        out["diabetes_intervals"] = (
            X,
            np.column_stack([frame["left"], frame["right"]]).astype(np.float64),
        )
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 8))
    log_time = 1.0 + X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 * X[:, 2] * X[:, 3]
    time = np.exp(log_time + 0.5 * rng.logistic(size=len(X)))
    kind = rng.integers(0, 4, len(X))  # observed, right-, left-, interval-censored
    lower = np.where(kind == 2, 0.0, np.where(kind == 3, time * 0.6, time))
    upper = np.where(kind == 1, np.inf, np.where(kind == 3, time * 1.5, time))
    out["generated_mixed_20k"] = (X, np.column_stack([lower, upper]))
    return out


def _xgboost_matrix(xgboost, X, y):
    if y.ndim == 1:
        return xgboost.DMatrix(X, label=y)
    matrix = xgboost.DMatrix(X)
    matrix.set_float_info("label_lower_bound", y[:, 0])
    matrix.set_float_info("label_upper_bound", y[:, 1])
    return matrix


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objective", choices=("cox", "aft"), default="cox")
    parser.add_argument("--distribution", default="normal")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    import xgboost
    from sklearn.model_selection import train_test_split

    if args.objective == "cox":
        params = dict(PARAMS, objective="survival:cox")
        names = ("cox-nloglik", "c-index")
        metrics = [get_metric(name) for name in names]
        data = tables()
    else:
        params = dict(
            PARAMS,
            objective="survival:aft",
            aft_loss_distribution=args.distribution,
            aft_loss_distribution_scale=args.scale,
        )
        names = ("aft-nloglik", "interval-regression-accuracy")
        metrics = [get_metric(name).for_training(params) for name in names]
        data = interval_tables()
    print(
        f"# {datetime.date.today()} {cpu_model()}, {args.threads} threads, gpuboost "
        f"{gpuboost.__version__}, xgboost {xgboost.__version__}, {args.rounds} rounds, "
        f"{args.splits} splits, {params}"
    )
    print(
        f"| table | rows | {names[0]} gpuboost / XGBoost | ratio | {names[1]} gpuboost / "
        "XGBoost | ratio | time ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    results = []
    for table, (X, y) in data.items():
        rows = []
        for split in range(args.splits):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.25, random_state=split
            )
            started = time.perf_counter()
            ours = gpuboost.train(
                dict(params, seed=split, device="cpu", nthread=args.threads, verbosity=0),
                gpuboost.Dataset(X_train, **label_arguments(y_train)),
                args.rounds,
            )
            ours_time = time.perf_counter() - started
            started = time.perf_counter()
            theirs = xgboost.train(
                dict(params, seed=split, tree_method="hist", nthread=args.threads),
                _xgboost_matrix(xgboost, X_train, y_train),
                args.rounds,
            )
            theirs_time = time.perf_counter() - started
            # Cox metrics take hazard ratios, the AFT metrics margins.
            margin = args.objective == "aft"
            predictions = (
                ours.predict(X_test, output_margin=margin),
                theirs.predict(xgboost.DMatrix(X_test), output_margin=margin),
            )
            rows.append(
                [metrics[0](y_test, p) for p in predictions]
                + [metrics[1](y_test, p) for p in predictions]
                + [ours_time, theirs_time]
            )
        mean = np.mean(rows, axis=0)
        row = {
            "table": table,
            "rows": len(y),
            names[0]: mean[:2].tolist(),
            names[1]: mean[2:4].tolist(),
            "time": mean[4:].tolist(),
        }
        results.append(row)
        print(
            f"| {table} | {len(y)} | {mean[0]:.4f} / {mean[1]:.4f} | {mean[0] / mean[1]:.4f} | "
            f"{mean[2]:.4f} / {mean[3]:.4f} | {mean[2] / mean[3]:.4f} | {mean[4] / mean[5]:.2f} |",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
