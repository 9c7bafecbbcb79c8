#!/usr/bin/env python
"""Random forests, boosted forests and DART: gpuboost against XGBoost at equal settings.

Issue 32's bars: held-out loss within 1% of XGBoost's (mean over ``--splits`` random
75/25 splits), and models that load in XGBoost through ``export_xgboost`` with the same
predictions (1e-6). Per table and configuration, in this one process: gpuboost and
XGBoost (``tree_method='hist'``) train with the same parameters and seed on the same
split; the held-out loss (log loss, multiclass log loss or RMSE, computed by
``gpuboost.metrics`` for both) and the training wall time are averaged over the splits;
the last split's gpuboost model is exported and predicted by XGBoost ("export error": the
largest difference of the predictions relative to max(1, |prediction|); XGBoost sums its
trees in float32).

Tables: scikit-learn's bundled breast_cancer (binary), diabetes (regression), wine and
digits (multiclass), and LightGBM's example binary and regression data when
``--data-dir`` has them (/work/shared/data/lightgbm-examples).

Usage::

    python benchmarks/forests_dart.py [--splits 10] [--threads 2] [--data-dir DIR]
                                      [--configs rf,boosted_forest,dart,dart_weighted]
                                      [--json out.json]
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
from gpuboost.metrics import get_metric  # noqa: E402

#: XGBoost's forest defaults (its XGBRF estimators) with 100 trees in one round.
CONFIGS = {
    "rf": (
        {
            "num_parallel_tree": 100,
            "learning_rate": 1.0,
            "subsample": 0.8,
            "colsample_bynode": 0.8,
            "reg_lambda": 1e-5,
            "max_depth": 6,
        },
        1,
    ),
    "boosted_forest": (
        {
            "num_parallel_tree": 4,
            "learning_rate": 0.3,
            "subsample": 0.8,
            "colsample_bynode": 0.8,
            "max_depth": 4,
        },
        25,
    ),
    "dart": (
        {
            "booster": "dart",
            "rate_drop": 0.1,
            "skip_drop": 0.5,
            "learning_rate": 0.1,
            "max_depth": 4,
        },
        100,
    ),
    "dart_weighted": (
        {
            "booster": "dart",
            "rate_drop": 0.1,
            "sample_type": "weighted",
            "normalize_type": "forest",
            "one_drop": True,
            "learning_rate": 0.1,
            "max_depth": 4,
            "subsample": 0.8,
        },
        100,
    ),
}

TASKS = {
    "binary": ("binary:logistic", "logloss"),
    "regression": ("reg:squarederror", "rmse"),
    "multiclass": ("multi:softprob", "mlogloss"),
}


def tables(data_dir):
    """name -> (X, y, task)."""
    from sklearn import datasets

    out = {
        "breast_cancer": (*datasets.load_breast_cancer(return_X_y=True), "binary"),
        "diabetes": (*datasets.load_diabetes(return_X_y=True), "regression"),
        "wine": (*datasets.load_wine(return_X_y=True), "multiclass"),
        "digits": (*datasets.load_digits(return_X_y=True), "multiclass"),
    }
    folder = Path(data_dir)
    for name, task in (("binary", "binary"), ("regression", "regression")):
        path = folder / f"{name}.train"
        if path.exists():
            data = np.loadtxt(path)
            out[f"lightgbm_{name}"] = (data[:, 1:], data[:, 0], task)
    return out


def run(X, y, task, params, rounds, splits, threads):
    import xgboost
    from sklearn.model_selection import train_test_split

    objective, metric_name = TASKS[task]
    metric = get_metric(metric_name)
    # the peers' trees: no split penalty (issue 33)
    params = dict(params, objective=objective, split_penalty=0.0)
    if task == "multiclass":
        params["num_class"] = int(y.max()) + 1
    losses, times = [], []
    for split in range(splits):
        X_train, X_test, y_train, y_test = train_test_split(
            X.astype(np.float32), y, test_size=0.25, random_state=split
        )
        split_params = dict(params, seed=split)
        started = time.perf_counter()
        ours = gpuboost.train(
            dict(split_params, device="cpu", nthread=threads, verbosity=0),
            gpuboost.Dataset(X_train, label=y_train),
            rounds,
        )
        ours_time = time.perf_counter() - started
        started = time.perf_counter()
        theirs = xgboost.train(
            dict(split_params, tree_method="hist", nthread=threads),
            xgboost.DMatrix(X_train, label=y_train),
            rounds,
        )
        theirs_time = time.perf_counter() - started
        predictions = (ours.predict(X_test), theirs.predict(xgboost.DMatrix(X_test)))
        losses.append([float(metric(y_test, p, None, None)) for p in predictions])
        times.append([ours_time, theirs_time])
    exported = xgboost.Booster(model_file=bytearray(ours.export_xgboost().encode()))
    predicted = ours.predict(X_test)
    export_error = float(
        np.max(
            np.abs(exported.predict(xgboost.DMatrix(X_test)).reshape(predicted.shape) - predicted)
            / np.maximum(1.0, np.abs(predicted))
        )
    )
    loss, time_ = np.mean(losses, axis=0), np.mean(times, axis=0)
    return {
        "metric": metric_name,
        "gpuboost": loss[0],
        "xgboost": loss[1],
        "loss_ratio": loss[0] / loss[1],
        "time_gpuboost_s": time_[0],
        "time_xgboost_s": time_[1],
        "time_ratio": time_[0] / time_[1],
        "export_max_error": export_error,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", default="/work/shared/data/lightgbm-examples")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--tables", default=None, help="comma-separated table names")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    import xgboost

    print(
        f"# {datetime.date.today()} {cpu_model()}, {args.threads} threads, gpuboost "
        f"{gpuboost.__version__}, xgboost {xgboost.__version__}, {args.splits} splits"
    )
    print(
        "| table | config | metric | gpuboost | XGBoost | loss ratio | time ratio | export error |"
    )
    print("|---|---|---|---|---|---|---|---|")
    results = []
    chosen = tables(args.data_dir)
    if args.tables:
        chosen = {name: chosen[name] for name in args.tables.split(",")}
    for table, (X, y, task) in chosen.items():
        for config in args.configs.split(","):
            params, rounds = CONFIGS[config]
            row = run(X, y, task, params, rounds, args.splits, args.threads)
            row.update(table=table, config=config)
            results.append(row)
            print(
                f"| {table} | {config} | {row['metric']} | {row['gpuboost']:.5g} | "
                f"{row['xgboost']:.5g} | {row['loss_ratio']:.4f} | {row['time_ratio']:.2f} | "
                f"{row['export_max_error']:.1e} |",
                flush=True,
            )
    ratios = [row["loss_ratio"] for row in results]
    print(
        f"\nloss ratio: mean {np.mean(ratios):.4f}, worst {max(ratios):.4f}; "
        f"export error at most {max(r['export_max_error'] for r in results):.1e}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
