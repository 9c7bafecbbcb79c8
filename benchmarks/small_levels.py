#!/usr/bin/env python
"""The subtrees of small nodes in one compiled call against the grower's level loop
(issue 30; docs/DESIGN.md, "Small data and latency").

The ``tiny`` configurations of ``speed_cpu.py`` (1k and 10k rows x 20 features, depth 6
and 8, binary and regression; 1k x 300), each trained ``--rounds`` rounds from a built
Dataset with the compiled CPU backend's ``grow_levels_from_rows`` switched off (the
grower's level loop: what ran before it) and on, alternately in one process; prints
the best of ``--repeat`` per variant in ms a round and the speed-up. Both variants
train the same model bytes (tests/tree/test_grower.py).

With ``--whole-rows 50000,100000,200000``: a second table, binary, 20 features, depth 6,
those rows, grown with ``row_levels.LEVELS_FROM_ROWS_MAX_CELLS`` at ``--old-cells`` (the
loop above the nodes it would scan from rows) and at its current value (the tree grown
whole in the compiled call), alternately.

Usage: python benchmarks/small_levels.py [--rounds 100] [--repeat 3] [--threads 2]
                                         [--whole-rows 50000,100000] [--old-cells 524288]
"""

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from _machine import cpu_model  # noqa: E402
from speed_cpu import MAX_BIN, TINY_CONFIGS, gpuboost_params  # noqa: E402

import gpuboost  # noqa: E402
from gpuboost.backends.cpu import row_levels  # noqa: E402
from gpuboost.backends.cpu.backend import CpuBackend  # noqa: E402


def per_round_ms(params, dtrain, rounds, one_call):
    """ms a round of one training, the one call switched on or off."""
    CpuBackend.grows_levels_from_rows = one_call
    gpuboost.train(params, dtrain, 2)  # the variant's kernels loaded, its buffers made
    start = time.perf_counter()
    gpuboost.train(params, dtrain, rounds)
    return 1000 * (time.perf_counter() - start) / rounds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--whole-rows", default="")
    parser.add_argument("--old-cells", type=int, default=1 << 19)
    args = parser.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# small_levels: {args.threads} threads; {cpu_model()}; {now}")
    print("| rows x features | depth | objective | loop ms | one call ms | speed-up |")
    print("|---|---|---|---|---|---|")
    for n_rows, n_features, depth, objective in TINY_CONFIGS:
        rng = np.random.default_rng(n_rows + n_features + depth)  # speed_cpu's tiny data
        X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
        score = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n_rows)
        y = (score > 0).astype(np.float64) if objective == "binary" else score
        dtrain = gpuboost.Dataset(X, label=y)
        dtrain.construct(MAX_BIN)
        params = gpuboost_params(
            depth,
            args.threads,
            objective="binary:logistic" if objective == "binary" else "reg:squarederror",
        )
        best = {False: np.inf, True: np.inf}
        for _ in range(args.repeat):
            for one_call in (False, True):
                ms = per_round_ms(params, dtrain, args.rounds, one_call)
                best[one_call] = min(best[one_call], ms)
        print(
            f"| {n_rows} x {n_features} | {depth} | {objective} | {best[False]:.2f} | "
            f"{best[True]:.2f} | {best[False] / best[True]:.2f}x |",
            flush=True,
        )
    if args.whole_rows:
        whole_trees(args)


def whole_trees(args):
    """The second table (module docstring)."""
    current = row_levels.LEVELS_FROM_ROWS_MAX_CELLS
    header = f"{args.old_cells} cells ms | {current} cells ms"
    print(f"\n| rows x 20, depth 6, binary | {header} | ratio |")
    print("|---|---|---|---|")
    for n_rows in [int(rows) for rows in args.whole_rows.split(",")]:
        rng = np.random.default_rng(n_rows + 26)
        X = rng.normal(size=(n_rows, 20)).astype(np.float32)
        y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n_rows) > 0).astype(float)
        dtrain = gpuboost.Dataset(X, label=y)
        dtrain.construct(MAX_BIN)
        params = gpuboost_params(6, args.threads)
        best = {}
        for _ in range(args.repeat):
            for cells in (args.old_cells, current):
                row_levels.LEVELS_FROM_ROWS_MAX_CELLS = cells
                ms = per_round_ms(params, dtrain, args.rounds, True)
                best[cells] = min(best.get(cells, np.inf), ms)
        row_levels.LEVELS_FROM_ROWS_MAX_CELLS = current
        print(
            f"| {n_rows} | {best[args.old_cells]:.2f} | {best[current]:.2f} | "
            f"{best[current] / best[args.old_cells]:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
