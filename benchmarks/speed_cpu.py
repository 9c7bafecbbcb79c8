#!/usr/bin/env python
"""CPU training speed: gpuboost (device='cpu') against XGBoost, LightGBM and
scikit-learn HGB on REFERENCE.md's "Larger synthetic data (speed)".

Data: ``sklearn.datasets.make_classification(n_samples=1_100_000, n_features=28,
n_informative=14, n_redundant=7, random_state=0)``, float32, first 1M rows train,
last 100k test (``--rows`` / ``--test-rows`` change the sizes; the generator is
called with ``n_samples = rows + test_rows``). Settings: binary logistic, 100
rounds, learning rate 0.1, depth 8 (LightGBM / scikit-learn: 256 leaves, depth 8),
256 bins (255 value bins; XGBoost max_bin=256), L2 1, min child hessian 1,
LightGBM min_data_in_leaf=1; ``--threads`` threads (default 2) for every library
(gpuboost and XGBoost ``nthread``, LightGBM ``num_threads``, and threadpoolctl's
OpenMP/BLAS limit around everything, which is what scikit-learn and NumPy use).

Timing: every library runs back to back in this one process on the same arrays.
``total s`` = building the library's data structure (binning) + training;
``ms/round`` = training time alone / rounds (scikit-learn bins inside ``fit``,
so its ms/round includes binning). Prediction and AUC are not timed. The ratio
gpuboost/peer is on total time. ``--phases`` runs gpuboost with verbosity=2
(a no-op synchronize on the CPU, so the timing is unaffected) and prints its
per-phase breakdown.

Usage::

    python benchmarks/speed_cpu.py [--rows 1000000] [--rounds 100] [--phases]
                                   [--libs gpuboost,xgboost,lightgbm,sklearn]
                                   [--json out.json]
"""

import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # use the checkout's gpuboost
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402

LIBRARIES = ("gpuboost", "xgboost", "lightgbm", "sklearn")
LEARNING_RATE = 0.1
MAX_BIN = 255  # value bins (+1 missing bin) = XGBoost's 256


def make_data(rows, test_rows, seed=0):
    """REFERENCE.md's speed data: make_classification, float32; (X_tr, y_tr, X_te, y_te)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=rows + test_rows,
        n_features=28,
        n_informative=14,
        n_redundant=7,
        random_state=seed,
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


# ---- runners: return (construct_s, train_s, predictions, extra) -----------------------
def run_gpuboost(data, depth, rounds, threads, phases):
    import gpuboost

    X_tr, y_tr, X_te, _ = data
    params = {
        "objective": "binary:logistic",
        "learning_rate": LEARNING_RATE,
        "max_depth": depth,
        "max_bin": MAX_BIN,
        "reg_lambda": 1.0,
        "min_child_weight": 1.0,
        "device": "cpu",
        "nthread": threads,
        "verbosity": 2 if phases else 0,
    }
    start = time.perf_counter()
    dtrain = gpuboost.Dataset(X_tr, label=y_tr)
    construct = time.perf_counter() - start
    captured = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(captured):
        booster = gpuboost.train(params, dtrain, rounds, verbose_eval=False)
    train = time.perf_counter() - start
    phase_line = captured.getvalue().strip()
    if phase_line:
        print(phase_line, flush=True)
    return construct, train, booster.predict(X_te), {"phases": phase_line or None}


def run_xgboost(data, depth, rounds, threads, phases):
    import xgboost as xgb

    X_tr, y_tr, X_te, _ = data
    params = {
        "objective": "binary:logistic",
        "tree_method": "hist",
        "max_bin": MAX_BIN + 1,
        "learning_rate": LEARNING_RATE,
        "max_depth": depth,
        "reg_lambda": 1.0,
        "min_child_weight": 1.0,
        "nthread": threads,
        "verbosity": 0,
    }
    start = time.perf_counter()
    dtrain = xgb.QuantileDMatrix(X_tr, label=y_tr, max_bin=MAX_BIN + 1, nthread=threads)
    construct = time.perf_counter() - start
    start = time.perf_counter()
    booster = xgb.train(params, dtrain, rounds)
    train = time.perf_counter() - start
    return construct, train, booster.inplace_predict(X_te), {}


def run_lightgbm(data, depth, rounds, threads, phases):
    import lightgbm as lgb

    X_tr, y_tr, X_te, _ = data
    params = {
        "objective": "binary",
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
    start = time.perf_counter()
    dtrain = lgb.Dataset(X_tr, label=y_tr, params=params)
    dtrain.construct()
    construct = time.perf_counter() - start
    start = time.perf_counter()
    booster = lgb.train(params, dtrain, rounds)
    train = time.perf_counter() - start
    return construct, train, booster.predict(X_te, num_threads=threads), {}


def run_sklearn(data, depth, rounds, threads, phases):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X_tr, y_tr, X_te, _ = data
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
    model.fit(X_tr, y_tr)
    train = time.perf_counter() - start
    return 0.0, train, model.predict_proba(X_te)[:, 1], {"note": "binning inside fit"}


RUNNERS = {
    "gpuboost": run_gpuboost,
    "xgboost": run_xgboost,
    "lightgbm": run_lightgbm,
    "sklearn": run_sklearn,
}


def _load_average():
    """1-minute load average (None where unavailable): other work on the machine."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _fmt_load(value):
    return "n/a" if value is None else f"{value:.1f}"


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="training rows (default 1M)")
    parser.add_argument(
        "--test-rows", type=int, default=None, help="test rows (default rows // 10)"
    )
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--libs", default=",".join(LIBRARIES))
    parser.add_argument(
        "--phases",
        action="store_true",
        help="run gpuboost with verbosity=2 and print its per-phase timings",
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    test_rows = args.test_rows if args.test_rows is not None else max(1, args.rows // 10)
    libs = [lib for lib in args.libs.split(",") if lib]
    for lib in libs:
        if lib not in LIBRARIES:
            parser.error(f"unknown library {lib!r}")
    versions = {lib: library_version(lib) for lib in libs}
    if library_version("sklearn") is None:
        print(
            "error: scikit-learn is needed to generate the data (make_classification)",
            file=sys.stderr,
        )
        return 2
    notes = [f"{lib} is not installed: skipped" for lib in libs if versions[lib] is None]
    for note in notes:
        print(f"note: {note}")
    available = [lib for lib in libs if versions[lib] is not None]

    try:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(limits=args.threads)
    except ImportError:  # pragma: no cover
        limiter = contextlib.nullcontext()

    print(
        f"# speed: make_classification {args.rows} train + {test_rows} test rows x 28, "
        f"depth {args.depth}, {args.rounds} rounds, {args.threads} threads; "
        f"{os.cpu_count()} CPUs ({cpu_model()})",
        flush=True,
    )
    start = time.perf_counter()
    data = make_data(args.rows, test_rows)
    print(f"# data generated in {time.perf_counter() - start:.1f} s", flush=True)
    print("# versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v), flush=True)

    rows = []
    with limiter:
        for lib in available:
            load_before = _load_average()
            construct, train, pred, extra = RUNNERS[lib](
                data, args.depth, args.rounds, args.threads, args.phases
            )
            row = {
                "library": lib,
                "load_avg_1min_before": load_before,
                "load_avg_1min_after": _load_average(),
                "construct_s": construct,
                "train_s": train,
                "total_s": construct + train,
                "ms_per_round": 1000.0 * train / args.rounds,
                "test_auc": auc(data[3], pred),
                **extra,
            }
            rows.append(row)
            print(
                f"  {lib:<9} total {row['total_s']:8.2f} s (data {construct:6.2f} s, train "
                f"{train:8.2f} s, {row['ms_per_round']:8.1f} ms/round)  auc "
                f"{row['test_auc']:.5f}  (load average {_fmt_load(load_before)} before, "
                f"{_fmt_load(row['load_avg_1min_after'])} after)",
                flush=True,
            )

    ours = next((r for r in rows if r["library"] == "gpuboost"), None)
    print()
    print(
        "| library | total s | data s | train s | ms/round | test auc | gpuboost/peer (total) "
        "| gpuboost/peer (ms/round) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        if ours is not None and row is not ours:
            row["ratio_gpuboost_over_peer_total"] = ours["total_s"] / row["total_s"]
            row["ratio_gpuboost_over_peer_per_round"] = ours["ms_per_round"] / row["ms_per_round"]
            ratio = (
                f"{row['ratio_gpuboost_over_peer_total']:.2f}x | "
                f"{row['ratio_gpuboost_over_peer_per_round']:.2f}x"
            )
        else:
            ratio = "- | -"
        print(
            f"| {row['library']} | {row['total_s']:.2f} | {row['construct_s']:.2f} | "
            f"{row['train_s']:.2f} | {row['ms_per_round']:.1f} | {row['test_auc']:.5f} | "
            f"{ratio} |"
        )
    sk = next((r for r in rows if r["library"] == "sklearn"), None)
    if ours is not None and sk is not None:
        ratio = sk["ratio_gpuboost_over_peer_total"]
        print(
            f"\nissue-2 bar (gpuboost at most 5x scikit-learn HGB, total time): {ratio:.2f}x -> "
            f"{'PASS' if ratio <= 5.0 else 'FAIL'}"
        )
    if ours is not None and ours.get("phases"):
        print(f"gpuboost phases: {ours['phases']}")
    print(
        f"note: single run on a shared machine ({os.cpu_count()} CPUs; 1-minute load "
        f"averages above): compare times only as ratios within this run"
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
            "test_rows": test_rows,
            "rounds": args.rounds,
            "depth": args.depth,
            "threads": args.threads,
            "versions": versions,
            "results": rows,
            "notes": notes,
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
