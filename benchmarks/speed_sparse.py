"""Training on scipy.sparse CSR input: peak RSS and time against XGBoost, same run.

Each library trains in a fresh subprocess (so that its peak RSS, ``VmHWM``, is its own)
on the same CSR matrix saved to a temporary folder: uniform random sparsity, values
N(0, 1) (so a feature has many distinct values) or ones, a label from a few columns plus
noise. Each first trains a tiny model (gpuboost loads its compiled kernels, untimed);
the RSS before the timed training (Python, the library, the CSR matrix loaded) is
printed too.

    python benchmarks/speed_sparse.py                      # 20k x 5,000 at 0.2% (issue 12)
    python benchmarks/speed_sparse.py --rows 1000000 --features 100000 --density 0.0001 \\
        --values binary --rounds 5                         # the 1M x 100k case

Targets (issue 12): peak RSS within 1.5x XGBoost's and time within 2x on the first case.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]

_CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np, scipy.sparse
    sys.path.insert(0, sys.argv[5])

    def status(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024

    lib, path, rounds, depth = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    warm = time.perf_counter()
    small = scipy.sparse.random(300, 50, density=0.1, format="csr", random_state=0)
    if lib == "gpuboost":  # kernels loaded (or compiled) before the timed run
        import gpuboost
        gpuboost.train({"max_depth": 3, "verbosity": 0, "subsample": 0.9},
                       gpuboost.Dataset(small, label=np.arange(300.0)), 2).predict(small)
    else:
        import xgboost as xgb
        xgb.train({"max_depth": 3}, xgb.DMatrix(small, label=np.arange(300.0)), 2)
    warm = time.perf_counter() - warm
    X = scipy.sparse.load_npz(path + "_X.npz").tocsr()
    y = np.load(path + "_y.npy")
    before = status("VmRSS:")
    start = time.perf_counter()
    if lib == "gpuboost":
        params = {"device": "cpu", "max_depth": depth, "learning_rate": 0.1, "verbosity": 0,
                  "split_penalty": 0.0}  # the peers' trees: no split penalty (issue 33)
        model = gpuboost.train(params, gpuboost.Dataset(X, label=y), rounds)
        trained = time.perf_counter()
        prediction = model.predict(X)
    else:
        params = {"tree_method": "hist", "max_depth": depth, "learning_rate": 0.1,
                  "verbosity": 0, "max_bin": 255}
        model = xgb.train(params, xgb.DMatrix(X, label=y), rounds)
        trained = time.perf_counter()
        prediction = model.predict(xgb.DMatrix(X))
    done = time.perf_counter()
    rmse = float(np.sqrt(np.mean((prediction - y) ** 2)))
    print(before, status("VmHWM:"), trained - start, done - trained, rmse, warm)
    """
)


def make_data(n_rows, n_features, density, seed, values="normal"):
    """CSR (n_rows, n_features) with ``density`` of stored entries, N(0, 1) values
    (``values='normal'``) or ones (``'binary'``: bag-of-words / one-hot), and a label."""
    import scipy.sparse

    rng = np.random.default_rng(seed)
    nnz = int(round(n_rows * n_features * density))
    rows = rng.integers(0, n_rows, size=nnz)
    columns = rng.integers(0, n_features, size=nnz)
    data = rng.normal(size=nnz) if values == "normal" else np.ones(nnz)
    X = scipy.sparse.csr_matrix((data, (rows, columns)), shape=(n_rows, n_features))
    X.sum_duplicates()
    if values != "normal":
        X.data[:] = 1.0
    informative = np.asarray(X[:, : min(20, n_features)].sum(axis=1)).ravel()
    y = informative + 0.1 * rng.normal(size=n_rows)
    return X, y


def run(lib, path, rounds, depth):
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, lib, path, str(rounds), str(depth), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        check=True,
    )
    before, peak, train_s, predict_s, rmse, warm_s = completed.stdout.split()
    return {
        "library": lib,
        "rss_before_mib": int(before) / 2**20,
        "peak_rss_mib": int(peak) / 2**20,
        "train_seconds": float(train_s),
        "predict_seconds": float(predict_s),
        "train_rmse": float(rmse),
        "warm_up_seconds": float(warm_s),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=5_000)
    parser.add_argument("--density", type=float, default=0.002)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--values", choices=("normal", "binary"), default="normal")
    parser.add_argument("--libs", default="gpuboost,xgboost")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    import scipy.sparse

    X, y = make_data(args.rows, args.features, args.density, args.seed, args.values)
    print(
        f"## sparse CSR {args.rows} x {args.features}, density {args.density} "
        f"({X.nnz} stored entries, {args.values} values), {args.rounds} rounds, "
        f"depth {args.depth}"
    )
    results = []
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "train")
        scipy.sparse.save_npz(path + "_X.npz", X)
        np.save(path + "_y.npy", y)
        del X
        for lib in args.libs.split(","):
            row = run(lib, path, args.rounds, args.depth)
            results.append(row)
            print(
                f"  {lib:<9} peak RSS {row['peak_rss_mib']:8.1f} MiB (before training "
                f"{row['rss_before_mib']:.1f}), train {row['train_seconds']:7.2f} s, predict "
                f"{row['predict_seconds']:.2f} s, train RMSE {row['train_rmse']:.4f} (warm-up "
                f"{row['warm_up_seconds']:.1f} s, not timed)"
            )
    if len(results) == 2:
        ours, peer = results
        print(
            f"  ratios gpuboost / {peer['library']}: peak RSS "
            f"{ours['peak_rss_mib'] / peer['peak_rss_mib']:.2f}x (target <= 1.5), train time "
            f"{ours['train_seconds'] / peer['train_seconds']:.2f}x (target <= 2)"
        )
    if args.json:
        print(json.dumps(results))
    return results


if __name__ == "__main__":
    main()
