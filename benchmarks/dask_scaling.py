"""Distributed training on a Dask LocalCluster: time and bytes exchanged per round.

For each worker count (``--workers``, default 1 and 2) one LocalCluster of worker
processes (one thread each) is started, the data are cut into ``2 x workers`` row
partitions spread over the workers, and, in the same run:

* gpuboost.dask: ``DaskDataset`` (binning sample gathered, edges fitted) and
  ``gpuboost.dask.train``; ms per round and bytes exchanged per round (the
  ``bytes_log`` of train: histograms, maxima, counts, the trees sent back);
* the peer, xgboost.dask (``DaskDMatrix`` + ``xgboost.dask.train``, ``tree_method='hist'``,
  one thread per worker) on the same cluster and partitions;
* single-node gpuboost with one thread, and whether the distributed model file is
  byte-identical to it (it must be).

Ratios: gpuboost.dask / xgboost.dask ms per round, for each worker count.

``--cuda``: multi-GPU instead -- one dask-cuda ``LocalCUDACluster`` (one worker per
GPU; ``--workers`` ignored), ``device='cuda'`` for gpuboost and the peer, and the
distributed model compared with single-GPU ``gpuboost.train`` (run by
``benchmarks/gpu_check.sh``). Without dask-cuda it prints a ``SKIP:`` line and exits 0.
The exit status is 1 when a distributed model is not byte-identical to the single-node one.

Usage::

    python benchmarks/dask_scaling.py [--rows 200000] [--features 28] [--rounds 20]
        [--depth 6] [--workers 1,2] [--cuda] [--no-peer] [--json out.json]
"""

import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np


def make_data(n_rows, n_features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    logit = (
        X[:, 0] + 0.5 * X[:, 1] * X[:, 2] - 0.8 * np.abs(X[:, 3]) + 0.3 * rng.normal(size=n_rows)
    )
    return X, (logit > 0).astype(np.float64)


def spread(client, array, n_partitions):
    """A dask array of ``array`` in ``n_partitions`` row partitions, dealt to the workers."""
    import dask
    import dask.array as da

    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    bounds = np.linspace(0, len(array), n_partitions + 1).astype(int)
    pieces = []
    for index in range(n_partitions):
        chunk = np.ascontiguousarray(array[bounds[index] : bounds[index + 1]])
        future = client.scatter(chunk, workers=[workers[index % len(workers)]], hash=False)
        pieces.append(da.from_delayed(dask.delayed(future), shape=chunk.shape, dtype=chunk.dtype))
    return da.concatenate(pieces, axis=0)


def run_gpuboost(client, X, y, params, rounds, n_partitions):
    from gpuboost.dask import DaskDataset, train

    dX, dy = spread(client, X, n_partitions), spread(client, y, n_partitions)
    start = time.perf_counter()
    dtrain = DaskDataset(client, dX, label=dy)
    dtrain.bind_binning(params.get("max_bin"), params.get("seed", 0))
    data_s = time.perf_counter() - start
    # A first round warms the workers (Numba's compiled kernels load), then the timed run.
    train(client, params, dtrain, 1, verbose_eval=False)
    bytes_log = []
    start = time.perf_counter()
    booster = train(client, params, dtrain, rounds, verbose_eval=False, bytes_log=bytes_log)
    train_s = time.perf_counter() - start
    return booster, {
        "data_s": data_s,
        "train_s": train_s,
        "ms_per_round": 1e3 * train_s / rounds,
        "bytes_per_round": float(np.mean(bytes_log)),
        "bytes_per_round_max": int(np.max(bytes_log)),
    }


def run_xgboost(client, X, y, params, rounds, n_partitions):
    import xgboost as xgb
    import xgboost.dask as dxgb

    dX, dy = spread(client, X, n_partitions), spread(client, y, n_partitions)
    xgb_params = {
        "objective": "binary:logistic",
        "tree_method": "hist",
        "max_depth": params["max_depth"],
        "learning_rate": params["learning_rate"],
        "max_bin": 256,
        "nthread": 1,
        "device": params["device"],
    }
    start = time.perf_counter()
    dtrain = dxgb.DaskDMatrix(client, dX, dy)
    data_s = time.perf_counter() - start
    dxgb.train(client, xgb_params, dtrain, num_boost_round=1)  # warm-up
    start = time.perf_counter()
    dxgb.train(client, xgb_params, dtrain, num_boost_round=rounds)
    train_s = time.perf_counter() - start
    return {
        "version": xgb.__version__,
        "data_s": data_s,
        "train_s": train_s,
        "ms_per_round": 1e3 * train_s / rounds,
    }


def clusters(args):
    """``(label, cluster factory)`` of each run: LocalClusters of ``--workers`` worker
    processes, or with ``--cuda`` one dask-cuda LocalCUDACluster (None when dask-cuda is
    not installed)."""
    if args.cuda:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:  # dask-cuda, or the distributed it needs, is missing
            return None
        return [("LocalCUDACluster", lambda: LocalCUDACluster(dashboard_address=":0"))]
    from distributed import LocalCluster

    return [
        (
            f"{n} worker(s)",
            lambda n=n: LocalCluster(
                n_workers=n, processes=True, threads_per_worker=1, dashboard_address=":0"
            ),
        )
        for n in (int(w) for w in args.workers.split(","))
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--cuda", action="store_true", help="dask-cuda LocalCUDACluster, GPUs")
    parser.add_argument("--no-peer", action="store_true", help="skip xgboost.dask")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)

    runs = clusters(args) if importlib.util.find_spec("distributed") else None
    if runs is None:
        print(
            "SKIP: dask-cuda or dask's distributed is not installed (pip install "
            "'gpuboost[dask]' dask-cuda): the multi-GPU check needs dask-cuda's "
            "LocalCUDACluster."
            if args.cuda
            else "SKIP: dask's distributed is not installed (pip install 'gpuboost[dask]')."
        )
        return 0

    from distributed import Client

    import gpuboost

    X, y = make_data(args.rows, args.features)
    params = {
        "objective": "binary:logistic",
        "max_depth": args.depth,
        "learning_rate": 0.1,
        "split_penalty": 0.0,  # the peers' trees: no split penalty (issue 33)
        "device": "cuda" if args.cuda else "cpu",
        "nthread": 1,
        "seed": 0,
    }
    start = time.perf_counter()
    single = gpuboost.train(params, gpuboost.Dataset(X, label=y), args.rounds, verbose_eval=False)
    single_s = time.perf_counter() - start
    results = {
        "rows": args.rows,
        "features": args.features,
        "rounds": args.rounds,
        "depth": args.depth,
        "device": params["device"],
        "load_before": os.getloadavg()[0],
        "single_node_ms_per_round": 1e3 * single_s / args.rounds,
        "runs": [],
    }
    print(
        f"{args.rows} x {args.features}, depth {args.depth}, {args.rounds} rounds, "
        f"device={params['device']}; single-node gpuboost (1 thread): "
        f"{results['single_node_ms_per_round']:.1f} ms/round"
    )
    for label, make_cluster in runs:
        cluster = make_cluster()
        client = Client(cluster)
        try:
            n_workers = len(client.scheduler_info(n_workers=-1)["workers"])
            booster, ours = run_gpuboost(client, X, y, params, args.rounds, 2 * n_workers)
            ours["identical_to_single_node"] = booster.save_raw() == single.save_raw()
            run = {"cluster": label, "workers": n_workers, "gpuboost": ours}
            if not args.no_peer:
                run["xgboost"] = peer = run_xgboost(
                    client, X, y, params, args.rounds, 2 * n_workers
                )
                run["ratio_ms_per_round"] = ours["ms_per_round"] / peer["ms_per_round"]
        finally:
            client.close()
            cluster.close()
        results["runs"].append(run)
        line = (
            f"workers={n_workers} ({label}): gpuboost.dask {ours['ms_per_round']:.1f} ms/round, "
            f"{ours['bytes_per_round'] / 1e6:.2f} MB/round exchanged "
            f"(data {ours['data_s']:.2f} s), identical={ours['identical_to_single_node']}"
        )
        if "xgboost" in run:
            line += (
                f"; xgboost.dask {run['xgboost']['ms_per_round']:.1f} ms/round; "
                f"ratio {run['ratio_ms_per_round']:.2f}x"
            )
        print(line)
    results["load_after"] = os.getloadavg()[0]
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    if not all(run["gpuboost"]["identical_to_single_node"] for run in results["runs"]):
        print("FAIL: a distributed model differs from the single-node model")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
