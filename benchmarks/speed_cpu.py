#!/usr/bin/env python
"""CPU speed and memory: gpuboost (device='cpu') against XGBoost, LightGBM and
scikit-learn HGB, every library in the same run, and the ratio table of issue 11's bars.

Cases (``--cases``, default all; each prints its own table, the ratio table comes last):

``main``
    REFERENCE.md's "Larger synthetic data (speed)":
    ``sklearn.datasets.make_classification(n_samples=rows + test_rows, n_features=28,
    n_informative=14, n_redundant=7, random_state=0)``, float32, first ``--rows`` (1M)
    train, the rest test; binary logistic, ``--rounds`` (100) rounds, learning rate 0.1,
    depth ``--depth`` (8; LightGBM / scikit-learn: 256 leaves, depth 8), 256 bins (255
    value bins; XGBoost max_bin=256), L2 1, min child hessian 1, LightGBM
    min_data_in_leaf=1. ``total s`` = building the library's data structure (binning) +
    training; ``ms/round`` = training alone / rounds (scikit-learn bins inside ``fit``).
    Bars: gpuboost's training time at most XGBoost hist's and LightGBM's.
``predict``
    The models of ``main`` (100 trees of depth 8) predict the 1M training rows (float32):
    ``Booster.predict`` against XGBoost's ``inplace_predict``; bar: at most XGBoost's time.
``small``
    80,000 x 20 (``make_classification``, 10 informative), depth 6, 100 rounds, otherwise
    as ``main``; bar: gpuboost at most 1.5x XGBoost's training time.
``depth``
    100,000 x 28 as ``main``, 100 rounds at depth 8 and at depth 10; bar: gpuboost's depth-10
    time at most 2x its depth-8 time (XGBoost's ratio printed beside it).
``multiclass``
    100,000 rows, ``multi:softprob``, depth 6, 5 rounds, at (classes, features) = (5, 300),
    (20, 75) and (20, 300) (``make_classification`` with 30 informative features); the
    scaling exponents ``log(t(20, 300) / t(5, 300)) / log(4)`` in the classes and
    ``log(t(20, 300) / t(20, 75)) / log(4)`` in the features; bar: gpuboost's no larger than
    XGBoost's.
``memory``
    Peak RSS (``VmHWM`` after resetting it through ``/proc/self/clear_refs``) of one process
    per library that loads the 1M x 28 float32 training matrix of ``main`` (from a .npy
    file written by this script), then builds its data structure and trains 20 rounds of
    depth 8 (XGBoost with ``QuantileDMatrix``); the peak includes the loaded matrix and the
    library; bar: gpuboost's at most XGBoost's.
``jit``
    The cold start (issue 30): import and a first 10k x 20 binary fit of 100 rounds at
    depth 6, each in a fresh process: gpuboost with an empty ``NUMBA_CACHE_DIR``; then
    ``gpuboost compile`` into a new empty one (what ``pip install -e .`` runs; its time
    reported) and two processes after it; XGBoost and LightGBM. Bar: the first process
    after the compile within 3 s of the warm one. The timed cases above run after a
    warm-up training in this process, so they never include compilation.

``tiny``
    Small data (issue 30): per-round training time at 1k and 10k rows x 20 features,
    depth 6 and 8, binary and regression, and 1k x 300, ``TINY_ROUNDS`` rounds from a
    built data structure (gpuboost ``Dataset.construct``, XGBoost ``QuantileDMatrix``,
    LightGBM ``Dataset.construct``), best of ``--repeat`` runs, the libraries taking turns.
    Bars: gpuboost at most XGBoost at 1k and 10k rows x 20 (at most 1.2x at 1k x 300).
``latency``
    One-row prediction (issue 30): a 100-tree depth-6 binary model of 10k x 20 predicts
    one float32 row ``LATENCY_CALLS`` times; the median latency of gpuboost's
    ``Booster.predict`` against XGBoost's ``inplace_predict`` and LightGBM's ``predict``.
    Bar: gpuboost at most XGBoost's.

``gridsearch``
    Many small fits (issue 30): scikit-learn's ``GridSearchCV`` over 24 settings
    (:data:`GRID`: depth 3 / 6, learning rate 0.1 / 0.3, min child weight 1 / 5 / 10, L2 1 /
    5) x 5 folds (120 fits of 50 rounds, plus the refit) on 5,000 x 20
    (``make_classification``, 10 informative), ``n_jobs=1``, each library's estimator with
    ``--threads`` threads: ``GBClassifier`` against ``XGBClassifier`` (hist, 256 bins) and
    LightGBM's ``LGBMClassifier`` (63 leaves, ``min_child_samples=1``); the seconds of the
    search, its ratio and each library's best cross-validated accuracy. Reported, no bar.

``--repeat`` (default 2): the depth and multiclass cases, whose bars are ratios of one
library's own times, run every configuration that many times (the libraries taking
turns) and keep each one's fastest run, so that a burst of load from another process
on the shared machine shifts one run, not the exponent; every run is in the JSON.

Threads: ``--threads`` (default 2) for every library (gpuboost and XGBoost ``nthread``,
LightGBM ``num_threads``, and threadpoolctl's OpenMP/BLAS limit around everything).
``--phases`` prints gpuboost's per-phase times (verbosity=2) in ``main``.

The machine may be shared: the 1-minute load average is logged per run; compare times
only as ratios within one run, and run twice.

Usage::

    python benchmarks/speed_cpu.py [--cases main,predict,small,depth,multiclass,memory,jit,
                                            tiny,latency,gridsearch]
                                   [--libs gpuboost,xgboost,lightgbm,sklearn] [--rows 1000000]
                                   [--rounds 100] [--depth 8] [--threads 2] [--repeat 2]
                                   [--phases]
                                   [--json out.json]
"""

import argparse
import contextlib
import datetime
import io
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # use the checkout's gpuboost
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402
from _machine import cpu_model  # noqa: E402

LIBRARIES = ("gpuboost", "xgboost", "lightgbm", "sklearn")
CASES = (
    "main",
    "predict",
    "small",
    "depth",
    "multiclass",
    "memory",
    "jit",
    "tiny",
    "latency",
    "gridsearch",
)
LEARNING_RATE = 0.1
MAX_BIN = 255  # value bins (+1 missing bin) = XGBoost's 256
#: The cases' sizes (issue 11).
SMALL_SHAPE = (80_000, 20)
SMALL_DEPTH = 6
DEPTH_ROWS = 100_000
DEPTHS = (8, 10)
MULTICLASS_ROWS = 100_000
MULTICLASS_SHAPES = ((5, 300), (20, 75), (20, 300))
MULTICLASS_ROUNDS = 5
MULTICLASS_DEPTH = 6
#: The tiny case (issue 30): (rows, features, depth, objective) per configuration.
TINY_CONFIGS = (
    (1_000, 20, 6, "binary"),
    (1_000, 20, 8, "binary"),
    (1_000, 20, 6, "regression"),
    (10_000, 20, 6, "binary"),
    (10_000, 20, 8, "binary"),
    (10_000, 20, 6, "regression"),
    (1_000, 300, 6, "binary"),
)
TINY_ROUNDS = 100
#: The latency case: one-row predictions timed (after 200 untimed), the median counts.
LATENCY_CALLS = 2_000
MEMORY_ROUNDS = 20
#: Bars: (name, largest allowed gpuboost / peer value).
BARS = {
    "main vs xgboost": 1.0,
    "main vs lightgbm": 1.0,
    "predict vs xgboost": 1.0,
    "small vs xgboost": 1.5,
    "depth 10 / depth 8": 2.0,
    "multiclass class exponent": None,  # no larger than XGBoost's
    "multiclass feature exponent": None,
    "peak RSS vs xgboost": 1.0,
    "cold start: (first - warm) / 3 s": 1.0,
    "one-row predict vs xgboost": 1.0,
}


def make_data(rows, test_rows, n_features=28, n_informative=14, n_redundant=7, n_classes=2):
    """make_classification (REFERENCE.md's generator), float32; (X_tr, y_tr, X_te, y_te)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=rows + test_rows,
        n_features=n_features,
        n_informative=n_informative,
        n_redundant=n_redundant,
        n_classes=n_classes,
        random_state=0,
    )
    X = X.astype(np.float32)
    y = y.astype(np.float64)
    return (np.ascontiguousarray(X[:rows]), y[:rows], np.ascontiguousarray(X[rows:]), y[rows:])


def auc(y, p):
    from gpuboost.metrics import get_metric

    return get_metric("auc")(np.asarray(y, np.float64), np.asarray(p, np.float64))


def library_version(name):
    try:
        return getattr(__import__(name), "__version__", "?")
    except Exception:
        return None


# ---- runners: return (construct_s, train_s, model, extra) ------------------------------
def gpuboost_params(depth, threads, phases=False, objective="binary:logistic", num_class=0):
    params = {
        "objective": objective,
        "learning_rate": LEARNING_RATE,
        "max_depth": depth,
        "max_bin": MAX_BIN,
        "reg_lambda": 1.0,
        "min_child_weight": 1.0,
        "split_penalty": 0.0,  # the peers' trees: no split penalty (issue 33)
        "device": "cpu",
        "nthread": threads,
        "verbosity": 2 if phases else 0,
    }
    if num_class:
        params["num_class"] = num_class
    return params


def xgboost_params(depth, threads, objective="binary:logistic", num_class=0):
    params = {
        "objective": objective,
        "tree_method": "hist",
        "max_bin": MAX_BIN + 1,
        "learning_rate": LEARNING_RATE,
        "max_depth": depth,
        "reg_lambda": 1.0,
        "min_child_weight": 1.0,
        "nthread": threads,
        "verbosity": 0,
    }
    if num_class:
        params["num_class"] = num_class
    return params


def run_gpuboost(X, y, depth, rounds, threads, phases=False, **objective):
    import gpuboost

    start = time.perf_counter()
    dtrain = gpuboost.Dataset(X, label=y)
    # Fit the bin edges and bin the rows now, as XGBoost's DMatrix and LightGBM's Dataset
    # do when built (a Dataset does both at its first training otherwise, with the same
    # max_bin), so that "data" and "train" mean the same for every library.
    dtrain.construct(MAX_BIN)
    construct = time.perf_counter() - start
    captured = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(captured):
        booster = gpuboost.train(
            gpuboost_params(depth, threads, phases, **objective), dtrain, rounds, verbose_eval=False
        )
    train = time.perf_counter() - start
    phase_line = captured.getvalue().strip()
    if phase_line:
        print(phase_line, flush=True)
    return construct, train, booster, {"phases": phase_line or None}


def run_xgboost(X, y, depth, rounds, threads, phases=False, **objective):
    import xgboost as xgb

    start = time.perf_counter()
    dtrain = xgb.QuantileDMatrix(X, label=y, max_bin=MAX_BIN + 1, nthread=threads)
    construct = time.perf_counter() - start
    start = time.perf_counter()
    booster = xgb.train(xgboost_params(depth, threads, **objective), dtrain, rounds)
    train = time.perf_counter() - start
    return construct, train, booster, {}


def lightgbm_params(depth, threads, objective="binary"):
    return {
        "objective": objective,
        "learning_rate": LEARNING_RATE,
        "max_depth": depth,
        "num_leaves": 2**depth,
        "max_bin": MAX_BIN,
        "lambda_l2": 1.0,
        "min_data_in_leaf": 1,
        "min_sum_hessian_in_leaf": 1.0,
        "num_threads": threads,
        "verbose": -1,
    }


def run_lightgbm(X, y, depth, rounds, threads, phases=False):
    import lightgbm as lgb

    params = lightgbm_params(depth, threads)
    start = time.perf_counter()
    dtrain = lgb.Dataset(X, label=y, params=params)
    dtrain.construct()
    construct = time.perf_counter() - start
    start = time.perf_counter()
    booster = lgb.train(params, dtrain, rounds)
    train = time.perf_counter() - start
    return construct, train, booster, {"threads": threads}


def run_sklearn(X, y, depth, rounds, threads, phases=False):
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=rounds,
        learning_rate=LEARNING_RATE,
        max_depth=depth,
        max_leaf_nodes=2**depth,
        min_samples_leaf=1,
        l2_regularization=1.0,
        max_bins=MAX_BIN,
        early_stopping=False,
    )
    start = time.perf_counter()
    model.fit(X, y)
    train = time.perf_counter() - start
    return 0.0, train, model, {"note": "binning inside fit"}


RUNNERS = {
    "gpuboost": run_gpuboost,
    "xgboost": run_xgboost,
    "lightgbm": run_lightgbm,
    "sklearn": run_sklearn,
}


def predict_proba(library, model, X, threads):
    if library == "gpuboost":
        return model.predict(X)
    if library == "xgboost":
        return model.inplace_predict(X)
    if library == "lightgbm":
        return model.predict(X, num_threads=threads)
    return model.predict_proba(X)[:, 1]


# ---- helpers ---------------------------------------------------------------------------
def _load_average():
    """1-minute load average (None where unavailable): other work on the machine."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _fmt_load(value):
    return "n/a" if value is None else f"{value:.1f}"


def warm_up_gpuboost(threads):
    """Train tiny models of every kind the cases use, so that the timed runs load no
    kernel (their first-call cost is the ``jit`` case's)."""
    import gpuboost

    rng = np.random.default_rng(0)  # not sklearn: the memory case measures this process
    X = rng.normal(size=(500, 8)).astype(np.float32)
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5]).astype(np.float64)
    for objective in ({"objective": "binary:logistic"}, {"objective": "multi:softprob"}):
        labels = (y > 0).astype(np.float64) if objective["objective"] == "binary:logistic" else y
        extra = {"num_class": 3} if objective["objective"] == "multi:softprob" else {}
        booster = gpuboost.train(
            gpuboost_params(3, threads, **objective, **extra),
            gpuboost.Dataset(X, label=labels),
            2,
            verbose_eval=False,
        )
        booster.predict(X)


class Timed:
    """One library's run in a case: the load average around it and its times."""

    def __init__(self, library):
        self.library = library
        self.load_before = _load_average()

    def done(self, **values):
        return {
            "library": self.library,
            "load_avg_1min_before": self.load_before,
            "load_avg_1min_after": _load_average(),
            **values,
        }


# ---- cases -----------------------------------------------------------------------------
def case_main(args, libs, results):
    test_rows = args.test_rows if args.test_rows is not None else max(1, args.rows // 10)
    start = time.perf_counter()
    X_tr, y_tr, X_te, y_te = make_data(args.rows, test_rows)
    print(
        f"\n## main: make_classification {args.rows} train + {test_rows} test rows x 28, "
        f"depth {args.depth}, {args.rounds} rounds (data generated in "
        f"{time.perf_counter() - start:.1f} s)",
        flush=True,
    )
    rows, models = [], {}
    for lib in libs:
        timer = Timed(lib)
        construct, train, model, extra = RUNNERS[lib](
            X_tr, y_tr, args.depth, args.rounds, args.threads, args.phases
        )
        row = timer.done(
            construct_s=construct,
            train_s=train,
            total_s=construct + train,
            ms_per_round=1000.0 * train / args.rounds,
            test_auc=auc(y_te, predict_proba(lib, model, X_te, args.threads)),
            **extra,
        )
        rows.append(row)
        models[lib] = model
        print(
            f"  {lib:<9} total {row['total_s']:8.2f} s (data {construct:6.2f} s, train "
            f"{train:8.2f} s, {row['ms_per_round']:8.1f} ms/round)  auc "
            f"{row['test_auc']:.5f}  (load average {_fmt_load(timer.load_before)} before, "
            f"{_fmt_load(row['load_avg_1min_after'])} after)",
            flush=True,
        )
    ours = next((r for r in rows if r["library"] == "gpuboost"), None)
    print(
        "\n| library | total s | data s | train s | ms/round | test auc | gpuboost/peer (total) "
        "| gpuboost/peer (train) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        if ours is not None and row is not ours:
            row["ratio_gpuboost_over_peer_total"] = ours["total_s"] / row["total_s"]
            row["ratio_gpuboost_over_peer_train"] = ours["train_s"] / row["train_s"]
            ratio = (
                f"{row['ratio_gpuboost_over_peer_total']:.2f}x | "
                f"{row['ratio_gpuboost_over_peer_train']:.2f}x"
            )
        else:
            ratio = "- | -"
        print(
            f"| {row['library']} | {row['total_s']:.2f} | {row['construct_s']:.2f} | "
            f"{row['train_s']:.2f} | {row['ms_per_round']:.1f} | {row['test_auc']:.5f} | "
            f"{ratio} |"
        )
    if ours is not None and ours.get("phases"):
        print(f"gpuboost phases: {ours['phases']}")
    results["main"] = rows
    for peer in ("xgboost", "lightgbm"):
        row = next((r for r in rows if r["library"] == peer), None)
        if ours is not None and row is not None:
            results.setdefault("bars", {})[f"main vs {peer}"] = (
                ours["train_s"],
                row["train_s"],
                "training s",
            )
    if "predict" in args.cases:
        case_predict(args, models, X_tr, results)


def case_predict(args, models, X, results):
    print(f"\n## predict: {len(X)} x 28 float32 rows, the {args.rounds} trees of main", flush=True)
    rows = []
    for lib in ("gpuboost", "xgboost"):
        if lib not in models:
            continue
        timer = Timed(lib)
        predict_proba(lib, models[lib], X[:1000], args.threads)  # warm
        start = time.perf_counter()
        predict_proba(lib, models[lib], X, args.threads)
        seconds = time.perf_counter() - start
        rows.append(timer.done(predict_s=seconds, rows_per_s=len(X) / seconds))
        print(
            f"  {lib:<9} {seconds:7.3f} s ({len(X) / seconds / 1e6:.2f} M rows/s)  (load "
            f"average {_fmt_load(timer.load_before)} before)",
            flush=True,
        )
    results["predict"] = rows
    if len(rows) == 2:
        results.setdefault("bars", {})["predict vs xgboost"] = (
            rows[0]["predict_s"],
            rows[1]["predict_s"],
            "predict s",
        )


def _train_times(data, libs, depth, rounds, threads, repeat=1, **objective):
    """Training time of each library; with ``repeat`` > 1 the libraries take turns
    ``repeat`` times and each keeps its fastest run (``train_s``; all in ``runs_s``), so
    that a burst of load from another process on the shared machine hits one run, not
    the figure."""
    X, y = data
    times = {}
    for _ in range(repeat):
        for lib in libs:
            timer = Timed(lib)
            _, train, _, _ = RUNNERS[lib](X, y, depth, rounds, threads, **objective)
            row = timer.done(train_s=train)
            if lib in times:
                row["runs_s"] = times[lib]["runs_s"] + [train]
                row["train_s"] = min(times[lib]["train_s"], train)
                row["load_avg_1min_before"] = times[lib]["load_avg_1min_before"]
            else:
                row["runs_s"] = [train]
            times[lib] = row
    return times


def case_small(args, libs, results):
    rows, features = SMALL_SHAPE
    X, y, _, _ = make_data(rows, 1, n_features=features, n_informative=10, n_redundant=5)
    libs = [lib for lib in libs if lib in ("gpuboost", "xgboost")]
    times = _train_times((X, y), libs, SMALL_DEPTH, args.rounds, args.threads)
    print(f"\n## small: {rows} x {features}, depth {SMALL_DEPTH}, {args.rounds} rounds")
    for lib, row in times.items():
        load = _fmt_load(row["load_avg_1min_before"])
        print(f"  {lib:<9} train {row['train_s']:7.3f} s  (load average {load} before)")
    results["small"] = list(times.values())
    if len(times) == 2:
        results.setdefault("bars", {})["small vs xgboost"] = (
            times["gpuboost"]["train_s"],
            times["xgboost"]["train_s"],
            "training s",
        )


def case_depth(args, libs, results):
    X, y, _, _ = make_data(DEPTH_ROWS, 1)
    libs = [lib for lib in libs if lib in ("gpuboost", "xgboost")]
    print(f"\n## depth: {DEPTH_ROWS} x 28, {args.rounds} rounds, depth {DEPTHS[0]} and {DEPTHS[1]}")
    rows = []
    for lib in libs:
        times = [
            _train_times((X, y), [lib], depth, args.rounds, args.threads, args.repeat)[lib][
                "train_s"
            ]
            for depth in DEPTHS
        ]
        rows.append({"library": lib, "train_s": dict(zip(map(str, DEPTHS), times))})
        print(
            f"  {lib:<9} depth {DEPTHS[0]} {times[0]:7.3f} s, depth {DEPTHS[1]} {times[1]:7.3f} s:"
            f" {times[1] / times[0]:.2f}x"
        )
    results["depth"] = rows
    ours = next((r for r in rows if r["library"] == "gpuboost"), None)
    if ours is not None:
        deep, shallow = ours["train_s"][str(DEPTHS[1])], ours["train_s"][str(DEPTHS[0])]
        results.setdefault("bars", {})["depth 10 / depth 8"] = (deep, shallow, "training s")


def case_multiclass(args, libs, results):
    libs = [lib for lib in libs if lib in ("gpuboost", "xgboost")]
    print(
        f"\n## multiclass: {MULTICLASS_ROWS} rows, multi:softprob, depth {MULTICLASS_DEPTH}, "
        f"{MULTICLASS_ROUNDS} rounds"
    )
    times = {lib: {} for lib in libs}
    for classes, features in MULTICLASS_SHAPES:
        X, y, _, _ = make_data(
            MULTICLASS_ROWS,
            1,
            n_features=features,
            n_informative=30,
            n_redundant=0,
            n_classes=classes,
        )
        objective = {"objective": "multi:softprob", "num_class": classes}
        for lib, row in _train_times(
            (X, y),
            libs,
            MULTICLASS_DEPTH,
            MULTICLASS_ROUNDS,
            args.threads,
            args.repeat,
            **objective,
        ).items():
            times[lib][f"{classes}x{features}"] = row["train_s"]
            print(
                f"  {lib:<9} {classes:2d} classes x {features:3d} features: {row['train_s']:7.3f} s"
            )
    exponents = {}
    for lib, t in times.items():
        exponents[lib] = {
            "classes": math.log(t["20x300"] / t["5x300"]) / math.log(4),
            "features": math.log(t["20x300"] / t["20x75"]) / math.log(4),
        }
        print(
            f"  {lib:<9} scaling exponent in classes {exponents[lib]['classes']:.2f}, in "
            f"features {exponents[lib]['features']:.2f}"
        )
    results["multiclass"] = {"train_s": times, "exponents": exponents}
    if len(exponents) == 2:
        for kind in ("classes", "features"):
            name = "class" if kind == "classes" else "feature"
            results.setdefault("bars", {})[f"multiclass {name} exponent"] = (
                exponents["gpuboost"][kind],
                exponents["xgboost"][kind],
                "exponent",
            )


_MEMORY_SCRIPT = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    library, path, threads, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    sys.path.insert(0, sys.argv[5])
    if library == "gpuboost":
        import gpuboost
        from benchmarks.speed_cpu import gpuboost_params, warm_up_gpuboost
        warm_up_gpuboost(threads)
    else:
        import xgboost as xgb
        from benchmarks.speed_cpu import xgboost_params, MAX_BIN

    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    X = np.load(path + "_X.npy")
    y = np.load(path + "_y.npy")
    before = status("VmRSS:")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # VmHWM := VmRSS
    start = time.perf_counter()
    if library == "gpuboost":
        dtrain = gpuboost.Dataset(X, label=y)
        gpuboost.train(gpuboost_params(8, threads), dtrain, rounds)
    else:
        dtrain = xgb.QuantileDMatrix(X, label=y, max_bin=MAX_BIN + 1, nthread=threads)
        xgb.train(xgboost_params(8, threads), dtrain, rounds)
    print(before, status("VmHWM:"), time.perf_counter() - start)
    """
)


def case_memory(args, libs, results):
    libs = [lib for lib in libs if lib in ("gpuboost", "xgboost")]
    X, y, _, _ = make_data(args.rows, 1)
    print(f"\n## memory: peak RSS, {args.rows} x 28 float32, {MEMORY_ROUNDS} rounds, depth 8")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "train")
        np.save(path + "_X.npy", X)
        np.save(path + "_y.npy", y)
        del X, y
        for lib in libs:
            timer = Timed(lib)
            completed = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    _MEMORY_SCRIPT,
                    lib,
                    path,
                    str(args.threads),
                    str(MEMORY_ROUNDS),
                    str(REPO_ROOT),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            before, peak, seconds = completed.stdout.split()
            row = timer.done(
                rss_before_mib=int(before) / 2**20,
                peak_rss_mib=int(peak) / 2**20,
                seconds=float(seconds),
            )
            rows.append(row)
            print(
                f"  {lib:<9} peak RSS {row['peak_rss_mib']:7.1f} MiB (RSS with the data loaded, "
                f"before: {row['rss_before_mib']:.1f} MiB; {row['seconds']:.1f} s)"
            )
    results["memory"] = rows
    if len(rows) == 2:
        results.setdefault("bars", {})["peak RSS vs xgboost"] = (
            rows[0]["peak_rss_mib"],
            rows[1]["peak_rss_mib"],
            "MiB",
        )


#: The cold-start workload (issue 30): import, then a first 10k x 20 binary fit of 100
#: rounds at depth 6, in a fresh process; prints the import and fit seconds.
_COLD_SCRIPT = textwrap.dedent(
    """
    import sys, time
    start = time.perf_counter()
    library, threads = sys.argv[1], int(sys.argv[2])
    import numpy as np
    if library == "gpuboost":
        import gpuboost
    elif library == "xgboost":
        import xgboost
    else:
        import lightgbm
    imported = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10_000, 20))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=10_000) > 0).astype(np.float64)
    if library == "gpuboost":
        gpuboost.train({"objective": "binary:logistic", "max_depth": 6, "nthread": threads,
                        "split_penalty": 0.0},
                       gpuboost.Dataset(X, label=y), 100)
    elif library == "xgboost":
        xgboost.train({"objective": "binary:logistic", "max_depth": 6, "nthread": threads,
                       "tree_method": "hist"}, xgboost.DMatrix(X, label=y), 100)
    else:
        lightgbm.train({"objective": "binary", "num_leaves": 64, "max_depth": 6,
                        "num_threads": threads, "verbose": -1}, lightgbm.Dataset(X, label=y), 100)
    print(imported - start, time.perf_counter() - imported)
    """
)


def case_jit(args, libs, results):
    print(
        "\n## jit: the cold start (issue 30): import + first 10k x 20 fit of 100 rounds, "
        "each in a fresh process"
    )
    rows = []

    def run(label, library, env):
        completed = subprocess.run(
            [sys.executable, "-c", _COLD_SCRIPT, library, str(args.threads)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        imported, fit = map(float, completed.stdout.split())
        rows.append(
            {
                "run": label,
                "library": library,
                "import_s": imported,
                "fit_s": fit,
                "total_s": imported + fit,
            }
        )
        print(
            f"  {label:<44} import {imported:5.2f} s, fit {fit:6.2f} s, "
            f"total {imported + fit:6.2f} s"
        )

    if "gpuboost" in libs:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            run("gpuboost, empty kernel cache", "gpuboost", env)
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "gpuboost", "compile"],
                env=env,
                check=True,
                capture_output=True,
                cwd=REPO_ROOT,
            )
            compile_s = time.perf_counter() - started
            rows.append(
                {
                    "run": "gpuboost compile (what pip install -e . runs)",
                    "library": "gpuboost",
                    "total_s": compile_s,
                }
            )
            print(f"  {'gpuboost compile (what pip install -e . runs)':<44} {compile_s:6.2f} s")
            run("gpuboost, first process after compile", "gpuboost", env)
            run("gpuboost, warm (second process)", "gpuboost", env)
        first, warm = rows[-2]["total_s"], rows[-1]["total_s"]
        results.setdefault("bars", {})["cold start: (first - warm) / 3 s"] = (
            first - warm,
            3.0,
            "s",
        )
    for library in ("xgboost", "lightgbm"):
        if library in libs:
            run(f"{library}, first process", library, dict(os.environ))
    results["jit"] = rows


def _tiny_fit(lib, X, y, depth, objective, rounds, threads):
    """Seconds of ``rounds`` rounds of ``lib`` on a built data structure."""
    binary = objective == "binary"
    if lib == "gpuboost":
        import gpuboost

        dtrain = gpuboost.Dataset(X, label=y)
        dtrain.construct(MAX_BIN)
        params = gpuboost_params(
            depth, threads, objective="binary:logistic" if binary else "reg:squarederror"
        )
        start = time.perf_counter()
        gpuboost.train(params, dtrain, rounds, verbose_eval=False)
    elif lib == "xgboost":
        import xgboost as xgb

        dtrain = xgb.QuantileDMatrix(X, label=y, max_bin=MAX_BIN + 1, nthread=threads)
        params = xgboost_params(
            depth, threads, objective="binary:logistic" if binary else "reg:squarederror"
        )
        start = time.perf_counter()
        xgb.train(params, dtrain, rounds)
    else:
        import lightgbm as lgb

        params = lightgbm_params(depth, threads, "binary" if binary else "regression")
        dtrain = lgb.Dataset(X, label=y, params=params)
        dtrain.construct()
        start = time.perf_counter()
        lgb.train(params, dtrain, rounds)
    return time.perf_counter() - start


def case_tiny(args, libs, results):
    libs = [lib for lib in libs if lib in ("gpuboost", "xgboost", "lightgbm")]
    print(f"\n## tiny: per-round training time, {TINY_ROUNDS} rounds, best of {args.repeat}")
    print(
        "| rows x features | depth | objective | "
        + " | ".join(f"{lib} ms" for lib in libs)
        + " | gpuboost / xgboost |"
    )
    print("|---|---|---|" + "---|" * len(libs) + "---|")
    rows = []
    for n_rows, n_features, depth, objective in TINY_CONFIGS:
        rng = np.random.default_rng(n_rows + n_features + depth)
        X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
        score = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n_rows)
        y = (score > 0).astype(np.float64) if objective == "binary" else score.astype(np.float64)
        best = {lib: math.inf for lib in libs}
        for _ in range(args.repeat):
            for lib in libs:
                seconds = _tiny_fit(lib, X, y, depth, objective, TINY_ROUNDS, args.threads)
                best[lib] = min(best[lib], seconds)
        per_round = {lib: 1000 * best[lib] / TINY_ROUNDS for lib in libs}
        ratio = (
            per_round["gpuboost"] / per_round["xgboost"]
            if {"gpuboost", "xgboost"} <= set(libs)
            else float("nan")
        )
        rows.append(
            {
                "rows": n_rows,
                "features": n_features,
                "depth": depth,
                "objective": objective,
                "ms_per_round": per_round,
                "ratio": ratio,
            }
        )
        print(
            f"| {n_rows} x {n_features} | {depth} | {objective} | "
            + " | ".join(f"{per_round[lib]:.2f}" for lib in libs)
            + f" | {ratio:.2f}x |"
        )
        if not math.isnan(ratio):
            name = f"tiny {n_rows}x{n_features} depth {depth} {objective} vs xgboost"
            BARS.setdefault(name, 1.2 if n_features == 300 else 1.0)
            results.setdefault("bars", {})[name] = (
                per_round["gpuboost"],
                per_round["xgboost"],
                "ms/round",
            )
    results["tiny"] = rows


def case_latency(args, libs, results):
    libs = [lib for lib in libs if lib in ("gpuboost", "xgboost", "lightgbm")]
    rng = np.random.default_rng(11)
    X = rng.normal(size=(10_000, 20)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.float64)
    row = X[:1].copy()
    predictors = {}
    if "gpuboost" in libs:
        import gpuboost

        booster = gpuboost.train(
            gpuboost_params(6, args.threads), gpuboost.Dataset(X, label=y), 100, verbose_eval=False
        )
        predictors["gpuboost"] = lambda: booster.predict(row)
    if "xgboost" in libs:
        import xgboost as xgb

        xgb_booster = xgb.train(xgboost_params(6, args.threads), xgb.DMatrix(X, label=y), 100)
        predictors["xgboost"] = lambda: xgb_booster.inplace_predict(row)
    if "lightgbm" in libs:
        import lightgbm as lgb

        params = {
            "objective": "binary",
            "num_leaves": 64,
            "max_depth": 6,
            "verbose": -1,
            "num_threads": args.threads,
        }
        lgb_booster = lgb.train(params, lgb.Dataset(X, label=y), 100)
        predictors["lightgbm"] = lambda: lgb_booster.predict(row, num_threads=args.threads)
    print(f"\n## latency: one float32 row, 100 trees of depth 6, median of {LATENCY_CALLS}")
    medians = {}
    for lib, predict in predictors.items():
        for _ in range(200):
            predict()
        times = []
        for _ in range(LATENCY_CALLS):
            start = time.perf_counter()
            predict()
            times.append(time.perf_counter() - start)
        medians[lib] = 1e6 * float(np.median(times))
        print(f"  {lib:<9} {medians[lib]:8.1f} us")
    results["latency"] = medians
    if {"gpuboost", "xgboost"} <= set(medians):
        results.setdefault("bars", {})["one-row predict vs xgboost"] = (
            medians["gpuboost"],
            medians["xgboost"],
            "us",
        )


#: The settings of the ``gridsearch`` case (the estimators' common parameter names).
GRID = {
    "max_depth": [3, 6],
    "learning_rate": [0.1, 0.3],
    "min_child_weight": [1.0, 5.0, 10.0],
    "reg_lambda": [1.0, 5.0],
}
GRID_ROWS, GRID_FEATURES, GRID_ROUNDS, GRID_FOLDS = 5_000, 20, 50, 5


def _grid_estimator(lib, threads):
    if lib == "gpuboost":
        from gpuboost.sklearn import GBClassifier

        return GBClassifier(
            n_estimators=GRID_ROUNDS, device="cpu", n_jobs=threads, verbosity=0, split_penalty=0.0
        )
    if lib == "xgboost":
        import xgboost as xgb

        return xgb.XGBClassifier(
            n_estimators=GRID_ROUNDS, tree_method="hist", max_bin=MAX_BIN + 1, n_jobs=threads
        )
    import lightgbm as lgb

    return lgb.LGBMClassifier(
        n_estimators=GRID_ROUNDS,
        num_leaves=63,
        min_child_samples=1,
        max_bin=MAX_BIN,
        n_jobs=threads,
        verbose=-1,
    )


def case_gridsearch(args, libs, results):
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV

    libs = [lib for lib in libs if lib in ("gpuboost", "xgboost", "lightgbm")]
    X, y = make_classification(
        n_samples=GRID_ROWS, n_features=GRID_FEATURES, n_informative=10, random_state=0
    )
    X = X.astype(np.float32)
    n_settings = int(np.prod([len(values) for values in GRID.values()]))
    print(
        f"\n## gridsearch: GridSearchCV, {n_settings} settings x {GRID_FOLDS} folds, "
        f"{GRID_ROUNDS} rounds, {GRID_ROWS} x {GRID_FEATURES}, best of {args.repeat}"
    )
    seconds, accuracy = {}, {}
    for _ in range(args.repeat):
        for lib in libs:
            search = GridSearchCV(_grid_estimator(lib, args.threads), GRID, cv=GRID_FOLDS, n_jobs=1)
            start = time.perf_counter()
            search.fit(X, y)
            seconds[lib] = min(seconds.get(lib, math.inf), time.perf_counter() - start)
            accuracy[lib] = float(search.best_score_)
    print("| library | seconds | best CV accuracy | / xgboost |")
    print("|---|---|---|---|")
    for lib in libs:
        ratio = seconds[lib] / seconds["xgboost"] if "xgboost" in seconds else float("nan")
        print(f"| {lib} | {seconds[lib]:.2f} | {accuracy[lib]:.4f} | {ratio:.2f}x |")
    results["gridsearch"] = {"seconds": seconds, "best_accuracy": accuracy}


def print_bars(results):
    bars = results.get("bars", {})
    if not bars:
        return
    print("\n## issue 11 bars (gpuboost / peer; this run)")
    print("| bar | gpuboost | peer | unit | ratio | target | verdict |")
    print("|---|---|---|---|---|---|---|")
    verdicts = {}
    for name, (ours, theirs, unit) in bars.items():
        if BARS[name] is None:  # exponents: no larger than the peer's
            ratio, target, passed = ours - theirs, "<= 0 (difference)", ours <= theirs
            shown = f"{ratio:+.2f}"
        else:
            ratio, target = ours / theirs, f"<= {BARS[name]:.1f}x"
            passed = ratio <= BARS[name]
            shown = f"{ratio:.2f}x"
        verdicts[name] = {"gpuboost": ours, "peer": theirs, "ratio": ratio, "pass": passed}
        print(
            f"| {name} | {ours:.3f} | {theirs:.3f} | {unit} | {shown} | {target} | "
            f"{'PASS' if passed else 'FAIL'} |"
        )
    results["verdicts"] = verdicts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="main's training rows")
    parser.add_argument("--test-rows", type=int, default=None, help="test rows (rows // 10)")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="runs per library in the depth and multiclass cases (libraries take turns; "
        "the fastest run counts)",
    )
    parser.add_argument("--libs", default=",".join(LIBRARIES))
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument(
        "--phases",
        action="store_true",
        help="run gpuboost with verbosity=2 in main and print its per-phase timings",
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    libs = [lib for lib in args.libs.split(",") if lib]
    args.cases = [case for case in args.cases.split(",") if case]
    for lib in libs:
        if lib not in LIBRARIES:
            parser.error(f"unknown library {lib!r}")
    for case in args.cases:
        if case not in CASES:
            parser.error(f"unknown case {case!r}")
    versions = {lib: library_version(lib) for lib in libs}
    if library_version("sklearn") is None:
        print("error: scikit-learn is needed to generate the data", file=sys.stderr)
        return 2
    for lib in libs:
        if versions[lib] is None:
            print(f"note: {lib} is not installed: skipped")
    libs = [lib for lib in libs if versions[lib] is not None]

    try:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(limits=args.threads)
    except ImportError:  # pragma: no cover
        limiter = contextlib.nullcontext()
    print(
        f"# speed_cpu: cases {','.join(args.cases)}; {args.threads} threads; {os.cpu_count()} "
        f"CPUs ({cpu_model()}); {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        flush=True,
    )
    print("# versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v), flush=True)
    results = {}
    with limiter:
        if "gpuboost" in libs:
            warm_up_gpuboost(args.threads)
        if "main" in args.cases:
            case_main(args, libs, results)
        for case, function in (
            ("small", case_small),
            ("depth", case_depth),
            ("multiclass", case_multiclass),
        ):
            if case in args.cases:
                function(args, libs, results)
    if "memory" in args.cases:
        case_memory(args, libs, results)
    if "jit" in args.cases:
        case_jit(args, libs, results)
    if "tiny" in args.cases:
        case_tiny(args, libs, results)
    if "latency" in args.cases:
        case_latency(args, libs, results)
    if "gridsearch" in args.cases:
        case_gridsearch(args, libs, results)
    print_bars(results)
    print(
        f"note: on a shared machine ({os.cpu_count()} CPUs; 1-minute load averages above): "
        f"compare times only as ratios within this run, and run twice"
    )
    if args.json:
        out = {
            "script": "benchmarks/speed_cpu.py",
            "command": " ".join(["python"] + [sys.argv[0]] + sys.argv[1:]),
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": {
                "nproc": os.cpu_count(),
                "cpu": cpu_model(),
                "python": platform.python_version(),
            },
            "rows": args.rows,
            "rounds": args.rounds,
            "depth": args.depth,
            "threads": args.threads,
            "versions": versions,
            "results": results,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
