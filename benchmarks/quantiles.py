#!/usr/bin/env python
"""Several quantiles (and expectiles) in one model: crossings and loss, against XGBoost.

Issue 31's bar: a 3-quantile model never crosses on held-out rows, with mean pinball loss
no worse than three single-quantile models'; and the crossing rate of XGBoost's
multi-quantile model (``reg:quantileerror`` with a list of ``quantile_alpha``) on the same
data. Per table, mean over ``--splits`` random 75/25 splits, in this one process:

* gpuboost, one model of the levels (``quantile_alpha=[...]``): crossing rate of its
  predictions (rows where some level's prediction is above a higher level's) and of its
  margins (the levels' trees before the rearrangement), mean pinball loss over the levels;
* gpuboost, one model per level: its pinball loss and crossing rate;
* XGBoost ``hist`` with the list of levels (one model): crossing rate and pinball loss;
* the same for ``reg:expectileerror`` (gpuboost only: the installed XGBoost may lack it).

Every loss is computed by ``gpuboost.metrics`` (``pinball@a,b,c``, ``expectile@...``).

Usage::

    python benchmarks/quantiles.py [--splits 5] [--rounds 100] [--threads 2]
                                   [--levels 0.1,0.5,0.9] [--data-dir DIR] [--json out.json]
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

#: The levels (``--levels``): the bar's three, or close ones, which cross more often.
LEVELS = [0.1, 0.5, 0.9]
PARAMS = {"learning_rate": 0.1, "max_depth": 6, "min_child_weight": 1.0}


def tables(data_dir):
    """name -> (X, y)."""
    from sklearn import datasets

    out = {"diabetes": datasets.load_diabetes(return_X_y=True)}
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(20_000, 8))
    noise = (0.3 + np.abs(X[:, 1]) + 0.5 * (X[:, 2] > 0)) * rng.standard_normal(20_000)
    out["heteroscedastic_20k"] = (X, X[:, 0] + np.sin(2 * X[:, 3]) + noise)
    path = Path(data_dir) / "regression.train"
    if path.exists():
        data = np.loadtxt(path)
        out["lightgbm_regression"] = (data[:, 1:], data[:, 0])
    return out


def crossing_rate(predictions):
    return float(np.mean(np.any(np.diff(predictions, axis=1) < 0, axis=1)))


def run_split(X, y, split, rounds, threads, objective, parameter, metric_base, with_xgboost):
    """One split's figures (see the module docstring)."""
    from sklearn.model_selection import train_test_split

    X_train, X_test, y_train, y_test = train_test_split(
        X.astype(np.float32), y, test_size=0.25, random_state=split
    )
    metric = get_metric(f"{metric_base}@" + ",".join(map(str, LEVELS)))
    base = dict(PARAMS, objective=objective, seed=split, nthread=threads, device="cpu", verbosity=0)
    dtrain = gpuboost.Dataset(X_train, label=y_train)
    started = time.perf_counter()
    combined = gpuboost.train(dict(base, **{parameter: LEVELS}), dtrain, rounds)
    combined_time = time.perf_counter() - started
    started = time.perf_counter()
    singles = [gpuboost.train(dict(base, **{parameter: a}), dtrain, rounds) for a in LEVELS]
    singles_time = time.perf_counter() - started
    predictions = combined.predict(X_test)
    separate = np.column_stack([model.predict(X_test) for model in singles])
    row = {
        "gpuboost_crossing": crossing_rate(predictions),
        "gpuboost_margin_crossing": crossing_rate(combined.predict(X_test, output_margin=True)),
        "gpuboost_loss": metric(y_test, predictions),
        "separate_crossing": crossing_rate(separate),
        "separate_loss": metric(y_test, separate),
        "time_ratio_separate_over_combined": singles_time / combined_time,
    }
    if with_xgboost:
        import xgboost

        theirs = xgboost.train(
            {
                "objective": "reg:quantileerror",
                "quantile_alpha": np.array(LEVELS),
                "tree_method": "hist",
                "learning_rate": PARAMS["learning_rate"],
                "max_depth": PARAMS["max_depth"],
                "min_child_weight": PARAMS["min_child_weight"],
                "seed": split,
                "nthread": threads,
            },
            xgboost.DMatrix(X_train, label=y_train),
            rounds,
        )
        predicted = theirs.predict(xgboost.DMatrix(X_test))
        row["xgboost_crossing"] = crossing_rate(predicted)
        row["xgboost_loss"] = metric(y_test, predicted.astype(np.float64))
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", default="/work/shared/data/lightgbm-examples")
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)))
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    LEVELS[:] = [float(v) for v in args.levels.split(",")]
    try:
        import xgboost

        xgboost_version = xgboost.__version__
    except ImportError:
        xgboost_version = None
    print(
        f"# {datetime.date.today()} {cpu_model()}, {args.threads} threads, gpuboost "
        f"{gpuboost.__version__}, xgboost {xgboost_version}, levels {LEVELS}, "
        f"{args.rounds} rounds, {args.splits} splits"
    )
    print(
        "| table | objective | gpuboost crossing (margins) | gpuboost loss | one model per "
        "level: loss (crossing) | XGBoost: loss (crossing) | time, per-level models / one |"
    )
    print("|---|---|---|---|---|---|---|")
    results = []
    for table, (X, y) in tables(args.data_dir).items():
        for objective, parameter, metric_base in (
            ("reg:quantile", "quantile_alpha", "pinball"),
            ("reg:expectileerror", "expectile_alpha", "expectile"),
        ):
            with_xgboost = xgboost_version is not None and objective == "reg:quantile"
            rows = [
                run_split(
                    X,
                    y,
                    split,
                    args.rounds,
                    args.threads,
                    objective,
                    parameter,
                    metric_base,
                    with_xgboost,
                )
                for split in range(args.splits)
            ]
            mean = {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}
            mean.update(table=table, objective=objective)
            results.append(mean)
            theirs = (
                f"{mean['xgboost_loss']:.5g} ({mean['xgboost_crossing']:.2%})"
                if with_xgboost
                else "-"
            )
            print(
                f"| {table} | {objective} | {mean['gpuboost_crossing']:.2%} "
                f"({mean['gpuboost_margin_crossing']:.2%}) | {mean['gpuboost_loss']:.5g} | "
                f"{mean['separate_loss']:.5g} ({mean['separate_crossing']:.2%}) | {theirs} | "
                f"{mean['time_ratio_separate_over_combined']:.2f} |",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
