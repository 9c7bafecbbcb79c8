"""Exclusive feature bundling (EFB) against plain histograms on one-hot sparse data.

One-hot encodes ``--categoricals`` variables of ``--levels`` levels each into a
scipy.sparse CSR matrix, trains the same model with ``enable_bundle`` on and off
(device='cpu'), and prints the histogram columns, training time, the histogram
phase's time and whether the two model files are identical. Times are single runs:
compare them only as ratios within one run.

    python benchmarks/speed_bundling.py --rows 100000 --categoricals 10 --levels 30 --rounds 10
"""

import argparse
import json
import time

import numpy as np

import gpuboost
from gpuboost.core.profiling import PhaseTimer


def one_hot_data(n_rows, n_categoricals, n_levels, seed):
    """CSR one-hot matrix (n_rows, n_categoricals * n_levels) and a regression label."""
    import scipy.sparse

    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_levels, size=(n_rows, n_categoricals))
    columns = (codes + np.arange(n_categoricals) * n_levels).ravel()
    rows = np.repeat(np.arange(n_rows), n_categoricals)
    X = scipy.sparse.csr_matrix(
        (np.ones(len(rows)), (rows, columns)), shape=(n_rows, n_categoricals * n_levels)
    )
    effects = rng.normal(size=(n_categoricals, n_levels))
    y = effects[np.arange(n_categoricals), codes].sum(axis=1) + 0.1 * rng.normal(size=n_rows)
    return X, y


def run(X, y, enable_bundle, rounds, depth):
    """Train once; returns (seconds, histogram seconds, model bytes, histogram columns)."""
    dataset = gpuboost.Dataset(X, label=y)
    params = {
        "device": "cpu",
        "max_depth": depth,
        "learning_rate": 0.1,
        "enable_bundle": enable_bundle,
        "split_penalty": 0.0,  # the peers' trees: no split penalty (issue 33)
        "verbosity": 2,
    }
    timings = {}
    original_report = PhaseTimer.report

    def capture(timer):
        timings.update(timer.seconds)
        return original_report(timer)

    PhaseTimer.report = capture
    try:
        start = time.perf_counter()
        booster = gpuboost.train(params, dataset, rounds, verbose_eval=False)
        seconds = time.perf_counter() - start
    finally:
        PhaseTimer.report = original_report
    columns = dataset.bundle_map().n_bundles if enable_bundle else X.shape[1]
    model = json.loads(booster.save_raw())
    model["learner"]["params"].pop("enable_bundle", None)
    return seconds, timings.get("histogram", float("nan")), json.dumps(model), columns


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--categoricals", type=int, default=10)
    parser.add_argument("--levels", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    X, y = one_hot_data(args.rows, args.categoricals, args.levels, args.seed)
    print(
        f"# one-hot CSR {X.shape[0]} x {X.shape[1]} ({args.categoricals} variables x "
        f"{args.levels} levels), depth {args.depth}, {args.rounds} rounds, device='cpu'"
    )
    results = {}
    print("| enable_bundle | histogram columns | train s | histogram phase s |")
    print("|---|---|---|---|")
    for enable in (True, False):
        seconds, histogram, model, columns = run(X, y, enable, args.rounds, args.depth)
        results[enable] = model
        print(f"| {enable} | {columns} | {seconds:.2f} | {histogram:.2f} |")
    print(f"identical models (enable_bundle param aside): {results[True] == results[False]}")


if __name__ == "__main__":
    main()
