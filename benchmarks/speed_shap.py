"""SHAP values on the CPU: gpuboost's compiled TreeSHAP against XGBoost's ``pred_contribs``.

Trains one gpuboost model on HIGGS-like data (``gpuboost.datasets.make_higgs_like``),
exports it to XGBoost's format (so both libraries explain the same trees), and times
``predict(pred_contribs=True)`` of both on the same rows with the same number of
threads, in the same run, best of ``--repeats``; prints rows per second, the ratio and
the largest difference between the two (XGBoost computes in float32).

    python benchmarks/speed_shap.py --rows 20000 --rounds 100 --depth 6
"""

import argparse
import os
import tempfile

import numpy as np
from _machine import best_time

import gpuboost
from gpuboost.core.threads import usable_cores
from gpuboost.datasets import make_higgs_like


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-rows", type=int, default=50_000)
    parser.add_argument("--rows", type=int, default=20_000, help="rows explained")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--interactions", action="store_true", help="also time interactions")
    args = parser.parse_args()
    import xgboost

    threads = usable_cores()
    X, y = make_higgs_like(args.train_rows + args.rows, seed=0)
    X = X.astype(np.float32).astype(np.float64)  # float32 values: both see the same inputs
    booster = gpuboost.train(
        {
            "objective": "binary:logistic",
            "max_depth": args.depth,
            "device": "cpu",
            "split_penalty": 0.0,
        },  # the peers' trees: no split penalty (issue 33)
        gpuboost.Dataset(X[: args.train_rows], label=y[: args.train_rows]),
        args.rounds,
    )
    X_explain = X[args.train_rows :]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        booster.export_xgboost(path)
        peer = xgboost.Booster(model_file=path)
    peer.set_param({"nthread": threads})
    data = xgboost.DMatrix(X_explain.astype(np.float32), missing=np.nan, nthread=threads)
    n_leaves = sum(tree.n_leaves for tree in booster.trees)
    print(
        f"# {len(X_explain)} rows x {X.shape[1]} features, {args.rounds} trees of depth "
        f"{args.depth} ({n_leaves} leaves), {threads} threads, gpuboost "
        f"{gpuboost.__version__}, xgboost {xgboost.__version__}, best of {args.repeats}"
    )
    booster.predict(X_explain[:10], pred_contribs=True)  # compile / load the kernel cache
    kinds = [("pred_contribs", {"pred_contribs": True}, len(X_explain))]
    if args.interactions:
        kinds.append(("pred_interactions", {"pred_interactions": True}, len(X_explain) // 100))
    print("| what | gpuboost rows/s | xgboost rows/s | gpuboost / xgboost | max abs difference |")
    print("|---|---|---|---|---|")
    for name, kwargs, n_rows in kinds:
        ours_s, ours = best_time(
            lambda k=kwargs, n=n_rows: booster.predict(X_explain[:n], **k), args.repeats
        )
        peer_data = data.slice(np.arange(n_rows)) if n_rows < len(X_explain) else data
        theirs_s, theirs = best_time(
            lambda k=kwargs, d=peer_data: peer.predict(d, **k), args.repeats
        )
        difference = float(np.abs(ours - theirs).max())
        print(
            f"| {name} | {n_rows / ours_s:,.0f} | {n_rows / theirs_s:,.0f} | "
            f"{theirs_s / ours_s:.2f}x | {difference:.1e} |"
        )


if __name__ == "__main__":
    main()
