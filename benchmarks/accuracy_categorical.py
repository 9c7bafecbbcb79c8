#!/usr/bin/env python
"""Accuracy on categorical data: gpuboost's category-set splits against XGBoost
(``enable_categorical=True``) and LightGBM (``categorical_feature``), in one process.

Data sets:

* ``synthetic``: regression, 20,000 training and 20,000 test rows; a 200-level category
  with random effects (the rarest levels a few dozen rows), three low-cardinality ones
  (3, 5 and 8 levels; one pair interacts), two numeric features, one of which changes
  the sign of the 200-level category's effect (an interaction), 5% missing categories,
  Gaussian noise of standard deviation 0.5 (the best possible RMSE). Metric: RMSE.
* ``fair`` (if statsmodels is installed: its bundled "fair" data set, Fair's 1978
  affairs survey, 6,366 rows): binary, "had an affair"; categorical: the two nominal
  columns, occupation and husband's occupation (6 levels each); numeric: the ordinal
  ratings (marriage 1-5, religiousness 1-4), age, years married, children, education.
  A fixed 70/30 split. Metrics: log loss, AUC.

Same settings for every library: 200 rounds, learning rate 0.1, depth 6 (LightGBM:
``num_leaves=63, max_depth=6``), L2 1, min child hessian 1, 255 bins, one-vs-rest up to
4 categories (``max_cat_to_onehot=4``), each library's defaults for the other categorical
parameters, ``--threads`` threads. ``gpuboost (codes)`` is gpuboost on the integer
category codes (what users had to do before), for reference; it is not a peer.

The script prints a table per data set and says whether gpuboost's test metric is at
least as good as the median of the peers run here. Times: building the Dataset / DMatrix
and training, seconds, each library timed ``--repeat`` times in turn (all of them once,
then again), every figure printed and the ratio of the fastest runs, gpuboost / the faster
peer. Before the first timed run every library trains once on 500 rows of the data
(``--no-warm-up``: not), so that no library's figure holds a one-time cost: gpuboost's
compiled kernels loaded from their cache, the peers' lazy initialization (cold start is
measured by ``benchmarks/speed_cpu.py --cases jit``, issue 30).

Usage::

    python benchmarks/accuracy_categorical.py [--threads 2] [--rounds 200] [--repeat 2]
                                              [--no-warm-up] [--json out.json]
"""

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import gpuboost  # noqa: E402
from gpuboost.metrics import get_metric  # noqa: E402

#: Settings shared by every library (see the module docstring).
LEARNING_RATE = 0.1
MAX_DEPTH = 6
MAX_CAT_TO_ONEHOT = 4


def synthetic(seed=0, n_train=20_000, n_test=20_000):
    """The synthetic regression data: (train frame, y, test frame, y, categorical names)."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    levels = 200
    popularity = rng.dirichlet(np.full(levels, 0.8))
    big = rng.choice(levels, n, p=popularity)
    effect = rng.normal(size=levels)
    small = [rng.integers(0, k, n) for k in (3, 5, 8)]
    small_effects = [rng.normal(size=k) for k in (3, 5, 8)]
    pair = rng.normal(size=(5, 8)) * 0.7
    x1, x2 = rng.normal(size=n), rng.uniform(-1, 1, n)
    y = (
        effect[big] * np.where(x2 > 0, 1.0, -0.5)
        + sum(e[s] for e, s in zip(small_effects, small))
        + pair[small[1], small[2]]
        + 0.8 * x1
        + 0.5 * rng.normal(size=n)
    )
    frame = pd.DataFrame(
        {
            "big": pd.Categorical([f"level{v:03d}" for v in big]),
            "a": pd.Categorical([f"a{v}" for v in small[0]]),
            "b": pd.Categorical([f"b{v}" for v in small[1]]),
            "c": pd.Categorical([f"c{v}" for v in small[2]]),
            "x1": x1,
            "x2": x2,
        }
    )
    frame.loc[rng.random(n) < 0.05, "big"] = np.nan
    train, test = frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:]
    return train, y[:n_train], test.reset_index(drop=True), y[n_train:], ["big", "a", "b", "c"]


def fair(seed=0):
    """statsmodels' bundled 'fair' data (binary), or None without statsmodels."""
    try:
        from statsmodels.datasets import fair as fair_data  # optional: benchmark only
    except ImportError:
        return None
    data = fair_data.load_pandas().data
    y = (data["affairs"] > 0).to_numpy(dtype=float)
    categorical = ["occupation", "occupation_husb"]  # nominal; the ratings are ordinal
    frame = data.drop(columns="affairs").copy()
    for name in categorical:
        frame[name] = pd.Categorical(frame[name].astype(int))
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = int(0.7 * len(frame))
    train, test = order[:cut], order[cut:]
    return (
        frame.iloc[train].reset_index(drop=True),
        y[train],
        frame.iloc[test].reset_index(drop=True),
        y[test],
        categorical,
    )


def _codes(frame, categorical):
    out = frame.copy()
    for name in categorical:
        codes = out[name].cat.codes.astype(float)
        out[name] = codes.where(codes >= 0)
    return out


def run_gpuboost(train, y, test, categorical, task, rounds, threads, codes=False):
    objective = "reg:squarederror" if task == "regression" else "binary:logistic"
    params = {
        "objective": objective,
        "learning_rate": LEARNING_RATE,
        "max_depth": MAX_DEPTH,
        "max_cat_to_onehot": MAX_CAT_TO_ONEHOT,
        "nthread": threads,
        "device": "cpu",
        "verbosity": 0,
    }
    if codes:
        train, test = _codes(train, categorical), _codes(test, categorical)
    start = time.perf_counter()
    booster = gpuboost.train(params, gpuboost.Dataset(train, label=y), rounds)
    elapsed = time.perf_counter() - start
    return booster.predict(test), elapsed


def run_xgboost(train, y, test, categorical, task, rounds, threads):
    import xgboost

    params = {
        "objective": "reg:squarederror" if task == "regression" else "binary:logistic",
        "learning_rate": LEARNING_RATE,
        "max_depth": MAX_DEPTH,
        "max_cat_to_onehot": MAX_CAT_TO_ONEHOT,
        "tree_method": "hist",
        "max_bin": 256,
        "nthread": threads,
    }
    start = time.perf_counter()
    dtrain = xgboost.DMatrix(train, label=y, enable_categorical=True)
    booster = xgboost.train(params, dtrain, rounds)
    elapsed = time.perf_counter() - start
    return booster.predict(xgboost.DMatrix(test, enable_categorical=True)), elapsed


def run_lightgbm(train, y, test, categorical, task, rounds, threads):
    import lightgbm

    params = {
        "objective": "regression" if task == "regression" else "binary",
        "learning_rate": LEARNING_RATE,
        "max_depth": MAX_DEPTH,
        "num_leaves": 2**MAX_DEPTH - 1,
        "max_cat_to_onehot": MAX_CAT_TO_ONEHOT,
        "lambda_l2": 1.0,
        "min_sum_hessian_in_leaf": 1.0,
        "min_data_in_leaf": 1,
        "max_bin": 255,
        "num_threads": threads,
        "verbose": -1,
    }
    start = time.perf_counter()
    dtrain = lightgbm.Dataset(train, label=y, categorical_feature=categorical)
    booster = lightgbm.train(params, dtrain, rounds)
    elapsed = time.perf_counter() - start
    return booster.predict(test), elapsed


PEERS = {"xgboost": run_xgboost, "lightgbm": run_lightgbm}


def evaluate(name, loader, task, rounds, threads, repeat=2, warm_up=True):
    data = loader()
    if data is None:
        print(f"\n{name}: skipped (statsmodels is not installed: pip install statsmodels)")
        return None
    train, y, test, y_test, categorical = data
    metrics = ["rmse"] if task == "regression" else ["logloss", "auc"]
    runs = {
        "gpuboost": lambda rows, labels, n: run_gpuboost(
            rows, labels, test, categorical, task, n, threads
        ),
        "gpuboost (codes)": lambda rows, labels, n: run_gpuboost(
            rows, labels, test, categorical, task, n, threads, True
        ),
    }
    for peer, function in PEERS.items():
        runs[peer] = lambda rows, labels, n, f=function: f(
            rows, labels, test, categorical, task, n, threads
        )
    available = {}
    for library, run in runs.items():
        try:
            if warm_up:  # one-time costs out of the timed runs (the module docstring)
                run(train.iloc[:500].reset_index(drop=True), y[:500], 2)
            available[library] = run
        except ImportError:
            print(f"  {library}: not installed, skipped")
    rows, seconds = {}, {library: [] for library in available}
    for _ in range(repeat):  # every library once, then again: the same load for each
        for library, run in available.items():
            prediction, elapsed = run(train, y, rounds)
            seconds[library].append(elapsed)
            rows[library] = {
                m: float(get_metric(m)(y_test, np.asarray(prediction))) for m in metrics
            }
    for library in rows:
        rows[library].update(seconds=min(seconds[library]), runs=seconds[library])
    print(f"\n{name} ({len(train)} train / {len(test)} test rows, task {task})")
    print(f"{'library':<18}" + "".join(f"{m:>10}" for m in metrics) + "  time s (each run)")
    for library, row in rows.items():
        line = "".join(f"{row[m]:>10.4f}" for m in metrics)
        print(f"{library:<18}{line}  " + " / ".join(f"{t:.2f}" for t in row["runs"]))
    fastest_peer = min((rows[p]["seconds"] for p in PEERS if p in rows), default=None)
    if fastest_peer and "gpuboost" in rows:
        print(
            f"gpuboost / the faster peer, fastest runs: "
            f"{rows['gpuboost']['seconds'] / fastest_peer:.2f}x"
        )
    first = metrics[0]
    lower_is_better = first in ("rmse", "logloss")
    peers = [rows[p][first] for p in PEERS if p in rows]
    verdict = None
    if peers and "gpuboost" in rows:
        median = float(np.median(peers))
        ours = rows["gpuboost"][first]
        verdict = ours <= median if lower_is_better else ours >= median
        print(
            f"gpuboost {first} {ours:.4f} vs peers' median {median:.4f}: "
            f"{'at least as good' if verdict else 'WORSE'}"
        )
    return {"task": task, "rows": rows, "at_least_peer_median": verdict}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per library")
    parser.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="time the first training of each library too (its one-time costs included)",
    )
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    print(
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, "
        f"{platform.processor() or platform.machine()}, {args.threads} threads, "
        f"{args.rounds} rounds, gpuboost {gpuboost.__version__}, {args.repeat} timed runs per "
        f"library{', after a warm-up' if args.warm_up else ', the first one cold'}"
    )
    timing = {"repeat": max(1, args.repeat), "warm_up": args.warm_up}
    results = {
        "synthetic": evaluate(
            "synthetic", synthetic, "regression", args.rounds, args.threads, **timing
        ),
        "fair": evaluate("fair (statsmodels)", fair, "binary", args.rounds, args.threads, **timing),
    }
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
