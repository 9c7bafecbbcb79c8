#!/usr/bin/env python
"""Accuracy (and time) of gpuboost and its peers on LightGBM's example data.

Runs the binary, regression and multiclass tasks of /work/shared/REFERENCE.md with
its settings (100 rounds, learning rate 0.1, max depth 6, 256 bins, L2 1, min child
hessian 1; LightGBM num_leaves=64, min_data_in_leaf=1, min_sum_hessian_in_leaf=1;
scikit-learn max_leaf_nodes=64, min_samples_leaf=1, l2_regularization=1,
early_stopping=False; XGBoost tree_method='hist', max_bin=256) for gpuboost and
for every peer that is installed (xgboost, lightgbm, scikit-learn; a missing one
is skipped with a note). Every library runs with ``--threads`` threads (default 2;
gpuboost's ``nthread`` does not change its results).

Per data set the libraries run back to back in this one process, so their times
can be compared as ratios. ``time`` is the wall time of building the library's
data structure (binning included) plus training; prediction is not timed. All
test metrics are computed with ``gpuboost.metrics`` on each library's
predictions, so the definitions are identical.

Per data set the script says whether gpuboost's test metric is at least as good
as the median of the peers measured in this run, and as REFERENCE.md's peer median.

The task definitions, settings and data loader live in ``tests/_reference_data.py``
(shared with ``tests/test_accuracy.py``); this script puts the repository's
``tests/`` folder (and the repository root, so that the checkout's gpuboost is
used) at the front of ``sys.path`` to import it.

Usage::

    python benchmarks/accuracy.py [--data-dir DIR] [--tasks binary,regression]
                                  [--libs gpuboost,xgboost,lightgbm,sklearn]
                                  [--threads 2] [--json out.json] [--strict]

``--strict``: exit status 1 when gpuboost misses REFERENCE.md's bar on any task.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT / "tests", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import _reference_data as ref  # noqa: E402
from _machine import cpu_model  # noqa: E402

LIBRARIES = ("gpuboost", "xgboost", "lightgbm", "sklearn")
_MODULES = {
    "gpuboost": "gpuboost",
    "xgboost": "xgboost",
    "lightgbm": "lightgbm",
    "sklearn": "sklearn",
}


def library_version(name):
    """Version string of the library, or None when it is not importable."""
    try:
        module = __import__(_MODULES[name])
    except Exception:  # ImportError, or a broken install
        return None
    return getattr(module, "__version__", "?")


def _thread_limit(n_threads):
    """Context manager limiting OpenMP/BLAS threads (threadpoolctl when installed)."""
    try:
        from threadpoolctl import threadpool_limits

        return threadpool_limits(limits=n_threads)
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib

        return contextlib.nullcontext()


# ---- one library: fit (timed) and predict ----------------------------------------
def run_gpuboost(task, X_train, y_train, X_test, n_threads):
    import gpuboost

    start = time.perf_counter()
    dtrain = gpuboost.Dataset(X_train, label=y_train)
    params = dict(ref.gpuboost_params(task), nthread=n_threads)  # runtime-only parameter
    booster = gpuboost.train(params, dtrain, ref.N_ROUNDS, verbose_eval=False)
    seconds = time.perf_counter() - start
    return seconds, booster.predict(X_test)


def run_xgboost(task, X_train, y_train, X_test, n_threads):
    import xgboost as xgb

    start = time.perf_counter()
    dtrain = xgb.DMatrix(X_train, label=y_train, nthread=n_threads)
    booster = xgb.train(ref.xgboost_params(task, n_threads), dtrain, ref.N_ROUNDS)
    seconds = time.perf_counter() - start
    return seconds, booster.predict(xgb.DMatrix(X_test, nthread=n_threads))


def run_lightgbm(task, X_train, y_train, X_test, n_threads):
    import lightgbm as lgb

    params = ref.lightgbm_params(task, n_threads)
    start = time.perf_counter()
    dtrain = lgb.Dataset(X_train, label=y_train, params=params)
    booster = lgb.train(params, dtrain, ref.N_ROUNDS)
    seconds = time.perf_counter() - start
    return seconds, booster.predict(X_test, num_threads=n_threads)


def run_sklearn(task, X_train, y_train, X_test, n_threads):
    model = ref.sklearn_estimator(task)
    with _thread_limit(n_threads):
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        if ref.TASKS[task]["objective"] == "reg:squarederror":
            pred = model.predict(X_test)
        else:
            pred = model.predict_proba(X_test)
            if ref.TASKS[task]["objective"] == "binary:logistic":
                pred = pred[:, 1]
    return seconds, pred


RUNNERS = {
    "gpuboost": run_gpuboost,
    "xgboost": run_xgboost,
    "lightgbm": run_lightgbm,
    "sklearn": run_sklearn,
}


# ---- comparison ---------------------------------------------------------------------
def compare(task, results):
    """Per bar metric of ``task``: gpuboost's value against this run's peer median and
    REFERENCE.md's median. ``results``: {library: {metric: value}} of this run."""
    rows = []
    ours = results.get("gpuboost")
    peers = {lib: figures for lib, figures in results.items() if lib != "gpuboost"}
    for metric in ref.TASKS[task]["bar"]:
        run_median = ref.peer_median(peers, metric)
        reference_median = ref.REFERENCE_MEDIAN[task][metric]
        value = None if ours is None else ours[metric]
        rows.append(
            {
                "metric": metric,
                "gpuboost": value,
                "n_peers": len(peers),
                "peer_median_this_run": run_median,
                "ok_vs_run_median": (
                    None
                    if value is None or run_median is None
                    else ref.is_at_least_as_good(metric, value, run_median)
                ),
                "reference_median": reference_median,
                "ok_vs_reference_median": (
                    None
                    if value is None
                    else ref.is_at_least_as_good(metric, value, reference_median)
                ),
            }
        )
    return rows


def _fmt_metrics(figures):
    return ", ".join(
        f"{name} {value:.5f}" if name != "accuracy" else f"{name} {value:.3f}"
        for name, value in figures.items()
    )


def _verdict(flag):
    return {True: "yes", False: "NO", None: "n/a"}[flag]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        default=None,
        help=f"folder of the LightGBM example files (default {ref.DEFAULT_DATA_DIR})",
    )
    parser.add_argument(
        "--tasks",
        default=",".join(ref.TASKS),
        help="comma-separated subset of binary,regression,multiclass",
    )
    parser.add_argument(
        "--libs",
        default=",".join(LIBRARIES),
        help="comma-separated subset of " + ",".join(LIBRARIES),
    )
    parser.add_argument(
        "--threads", type=int, default=2, help="threads of every library (default 2)"
    )
    parser.add_argument("--json", default=None, help="write the results to this JSON file")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when gpuboost misses REFERENCE.md's bar on a task",
    )
    args = parser.parse_args(argv)

    tasks = [t for t in args.tasks.split(",") if t]
    libs = [lib for lib in args.libs.split(",") if lib]
    for name in tasks:
        if name not in ref.TASKS:
            parser.error(f"unknown task {name!r}")
    for name in libs:
        if name not in LIBRARIES:
            parser.error(f"unknown library {name!r}")
    folder = ref.data_dir(args.data_dir)
    if not all(ref.data_available(t, folder) for t in tasks):
        print(
            f"error: the LightGBM example files are not in {folder} (use --data-dir)",
            file=sys.stderr,
        )
        return 2

    versions = {}
    notes = []
    for name in libs:
        versions[name] = library_version(name)
        if versions[name] is None:
            notes.append(f"{name} is not installed: skipped")
    available = [name for name in libs if versions[name] is not None]
    for note in notes:
        print(f"note: {note}")

    print(
        f"# accuracy on {folder} ({ref.N_ROUNDS} rounds, lr {ref.LEARNING_RATE}, depth "
        f"{ref.MAX_DEPTH}, 256 bins, {args.threads} threads)"
    )
    print("# versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v))
    rows = []
    comparisons = {}
    for task in tasks:
        X_train, y_train, X_test, y_test = ref.load_task(task, folder)
        figures = {}
        for lib in available:
            seconds, pred = RUNNERS[lib](task, X_train, y_train, X_test, args.threads)
            metrics = ref.evaluate(task, y_test, pred)
            figures[lib] = metrics
            rows.append(
                {
                    "data": task,
                    "library": lib,
                    "seconds": seconds,
                    "metrics": metrics,
                    "load_avg_1min_after": _load_average(),
                }
            )
            print(f"  {task:<10} {lib:<9} {seconds:8.2f} s  {_fmt_metrics(metrics)}", flush=True)
        comparisons[task] = compare(task, figures)

    # ---- table ----
    print()
    print("| data | library | time s | test metrics |")
    print("|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['data']} | {row['library']} | {row['seconds']:.2f} | "
            f"{_fmt_metrics(row['metrics'])} |"
        )
    print()
    print(
        "| data | metric | gpuboost | peer median (this run, n) | at least as good | "
        "REFERENCE.md median | at least as good |"
    )
    print("|---|---|---|---|---|---|---|")
    missed_bar = False
    for task, checks in comparisons.items():
        for c in checks:
            value = "n/a" if c["gpuboost"] is None else f"{c['gpuboost']:.5f}"
            run_median = (
                "n/a" if c["peer_median_this_run"] is None else f"{c['peer_median_this_run']:.5f}"
            )
            print(
                f"| {task} | {c['metric']} | {value} | {run_median} ({c['n_peers']}) | "
                f"{_verdict(c['ok_vs_run_median'])} | {c['reference_median']:.5f} | "
                f"{_verdict(c['ok_vs_reference_median'])} |"
            )
            if c["ok_vs_reference_median"] is False:
                missed_bar = True
            if c["n_peers"] < 3:
                notes.append(
                    f"{task}: only {c['n_peers']} peer(s) measured in this run; "
                    f"see the REFERENCE.md median column"
                )
    load = _load_average()
    notes.append(
        f"times are single runs on a shared machine ({os.cpu_count()} CPUs, 1-minute "
        f"load average {'n/a' if load is None else f'{load:.1f}'} at the end): "
        f"compare them only as ratios within one run"
    )
    for note in dict.fromkeys(notes):
        print(f"note: {note}")

    if args.json:
        out = {
            "script": "benchmarks/accuracy.py",
            "command": " ".join([sys.executable] + sys.argv),
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": {
                "nproc": os.cpu_count(),
                "cpu": cpu_model(),
                "python": platform.python_version(),
            },
            "data_dir": str(folder),
            "threads": args.threads,
            "versions": versions,
            "rows": rows,
            "comparisons": comparisons,
            "notes": list(dict.fromkeys(notes)),
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 1 if (args.strict and missed_bar) else 0


def _load_average():
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


if __name__ == "__main__":
    sys.exit(main())
