#!/usr/bin/env python
"""CPU training time of the row-sampling and split-finding variants against plain hist.

Data: ``sklearn.datasets.make_classification(n_samples=rows + test_rows,
n_features=28, n_informative=14, n_redundant=7, random_state=0)`` (float32, as
benchmarks/speed_cpu.py), the first ``rows`` for training (default 200,000), the
last ``test_rows`` (default 50,000) to report the test AUC. Settings: binary
logistic, 20 rounds, depth 6, learning rate 0.1, 255 value bins, device='cpu'.

Variants (``--variants``): ``hist`` (default parameters), ``goss``
(``data_sample_strategy='goss'``, top_rate 0.2, other_rate 0.1), ``gradient_based``
(``subsample=0.3, sampling_method='gradient_based'``), ``uniform_0.3``
(``subsample=0.3``, the same expected sample size as GOSS's 0.2 + 0.1), ``approx``
(``tree_method='approx'``).

Timing: the Dataset is built once (binning is not timed); each variant trains
``--repeats`` times (default 3) back to back in this process and the median wall
time of ``gpuboost.train`` is reported, with the ratio to hist. ``--phases`` adds
the per-phase breakdown of one extra run (verbosity=2).

Usage::

    python benchmarks/speed_variants.py [--rows 200000] [--rounds 20] [--repeats 3]
                                        [--variants hist,goss,approx] [--json out.json]
"""

import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # use the checkout's gpuboost
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402

#: Parameters common to every variant.
BASE_PARAMS = {
    "objective": "binary:logistic",
    "learning_rate": 0.1,
    "max_depth": 6,
    "max_bin": 255,
    "split_penalty": 0.0,  # the peers' trees: no split penalty (issue 33)
    "device": "cpu",
    "verbosity": 0,
}
#: name -> parameters added to BASE_PARAMS.
VARIANTS = {
    "hist": {},
    "goss": {"data_sample_strategy": "goss", "top_rate": 0.2, "other_rate": 0.1},
    "gradient_based": {"subsample": 0.3, "sampling_method": "gradient_based"},
    "uniform_0.3": {"subsample": 0.3},
    "approx": {"tree_method": "approx"},
}


def make_data(rows, test_rows, seed=0):
    """(X_train, y_train, X_test, y_test) of make_classification, float32 features."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=rows + test_rows,
        n_features=28,
        n_informative=14,
        n_redundant=7,
        random_state=seed,
    )
    X = X.astype(np.float32)
    return (
        np.ascontiguousarray(X[:rows]),
        y[:rows].astype(np.float64),
        np.ascontiguousarray(X[rows:]),
        y[rows:].astype(np.float64),
    )


def run_variant(gpuboost, dtrain, X_test, y_test, params, rounds, repeats, phases):
    """Median train seconds, test AUC, and (with phases) the phase report."""
    from gpuboost.metrics import get_metric

    seconds = []
    booster = None
    for _ in range(repeats):
        start = time.perf_counter()
        booster = gpuboost.train(params, dtrain, num_boost_round=rounds, verbose_eval=False)
        seconds.append(time.perf_counter() - start)
    auc = float(get_metric("auc")(y_test, booster.predict(X_test)))
    report = None
    if phases:
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            gpuboost.train(
                {**params, "verbosity": 2}, dtrain, num_boost_round=rounds, verbose_eval=False
            )
        report = captured.getvalue().strip()
    return statistics.median(seconds), auc, report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--test-rows", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    names = args.variants.split(",")
    unknown = [name for name in names if name not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {list(VARIANTS)}")

    import gpuboost

    X_train, y_train, X_test, y_test = make_data(args.rows, args.test_rows)
    dtrain = gpuboost.Dataset(X_train, label=y_train, max_bin=BASE_PARAMS["max_bin"])
    _ = dtrain.X_binned  # bin once, outside the timings (the CPU backend uses the host bins)
    results = {}
    for name in names:
        params = {**BASE_PARAMS, **VARIANTS[name]}
        seconds, auc, report = run_variant(
            gpuboost, dtrain, X_test, y_test, params, args.rounds, args.repeats, args.phases
        )
        results[name] = {
            "params": VARIANTS[name],
            "train_s": seconds,
            "test_auc": auc,
            "phases": report,
        }
    baseline = results.get("hist", {}).get("train_s")
    print(
        f"{args.rows:,} rows x 28 features, {args.rounds} rounds, depth 6, device='cpu', "
        f"median of {args.repeats}; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores"
    )
    print(f"{'variant':<16} {'train s':>8} {'vs hist':>8} {'test AUC':>9}")
    for name, result in results.items():
        ratio = f"{result['train_s'] / baseline:.2f}x" if baseline else "-"
        print(f"{name:<16} {result['train_s']:>8.2f} {ratio:>8} {result['test_auc']:>9.4f}")
        if result["phases"]:
            print(f"    {result['phases']}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "date": datetime.datetime.now().isoformat(timespec="seconds"),
                    "rows": args.rows,
                    "rounds": args.rounds,
                    "repeats": args.repeats,
                    "cores": os.cpu_count(),
                    "python": platform.python_version(),
                    "numpy": np.__version__,
                    "results": results,
                },
                indent=2,
            )
        )
    return results


if __name__ == "__main__":
    main()
