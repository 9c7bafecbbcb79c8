#!/usr/bin/env python
"""Device operations per boosting round of the CUDA backend, counted without a GPU.

On a GPU every kernel launch, CuPy operation and host-device copy costs a few
microseconds whatever its size, and every copy to the host waits for the device,
so at a million rows these fixed costs are a large share of a round. This script
runs the CUDA backend under the CPU emulation (``GPUBOOST_EMULATE_CUDA=1``) and
counts them with :func:`gpuboost.backends.emulation.device_array.count_operations`:

* ``kernel``: raw kernel launches (``cuda/*.cu``);
* ``array_op``: CuPy-level operations that launch kernels (ufuncs, ``xp``
  functions, array methods, advanced indexing, assignments; views and
  ``xp.empty`` are not counted);
* ``to_device`` / ``to_host``: copies between host and device (``to_host``
  includes ``float()``, ``int()``, ``bool()``, ``.item()``: each synchronizes).

Counts depend on the tree shape, not on the machine: they are figures to track,
not timings. Data: HIGGS-shaped synthetic (``gpuboost.datasets.make_higgs_like``),
``--rows`` rows (default 20,000) x 28 features; 255 bins. Per round is
``(count(1 + rounds) - count(1)) / rounds`` for ``--rounds`` (default 5) on one
Dataset, so data preparation and the first round's set-up cancel out.

Usage::

    python benchmarks/device_ops.py [--rows 20000] [--rounds 5] [--json out.json]
"""

import argparse
import datetime
import json
import platform
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # use the checkout's gpuboost
    sys.path.insert(0, str(REPO_ROOT))

import gpuboost  # noqa: E402
from gpuboost.backends.emulation import emulated_kernels  # noqa: E402
from gpuboost.backends.emulation.device_array import OPERATION_KINDS, count_operations  # noqa: E402
from gpuboost.datasets import make_higgs_like  # noqa: E402

#: Configurations counted: name -> training parameters (device='cuda' is added).
CONFIGURATIONS = {
    "binary depth 8": dict(objective="binary:logistic", max_depth=8),
    "binary depth 6": dict(objective="binary:logistic", max_depth=6),
    "regression depth 8": dict(objective="reg:squarederror", max_depth=8),
    "multiclass (3) depth 6": dict(objective="multi:softprob", num_class=3, max_depth=6),
    "lossguide 255 leaves": dict(
        objective="binary:logistic", grow_policy="lossguide", max_leaves=255, max_depth=0
    ),
}


def count_per_round(X, y, params, rounds):
    """Operation counts per round (dict kind -> float): ``rounds`` more rounds than one."""
    dataset = gpuboost.Dataset(X, label=y)
    params = dict(params, device="cuda", verbosity=0, max_bin=255)
    totals = []
    for n_rounds in (1, 1 + rounds):
        with count_operations() as counts:
            gpuboost.train(params, dataset, n_rounds)
        totals.append(dict(counts))
    return {kind: (totals[1][kind] - totals[0][kind]) / rounds for kind in OPERATION_KINDS}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the counts here")
    args = parser.parse_args(argv)

    X, y = make_higgs_like(args.rows, seed=args.seed)
    results = {}
    with emulated_kernels():
        for name, params in CONFIGURATIONS.items():
            labels = (
                y
                if params["objective"] != "multi:softprob"
                else (X[:, 0] > 0).astype(float) + (X[:, 1] > 0.5)
            )
            results[name] = count_per_round(X, labels, params, args.rounds)

    print(
        f"# device operations per round, CUDA backend under the emulation: {args.rows:,} x "
        f"{X.shape[1]}, 255 bins, per round over {args.rounds} rounds after the first"
    )
    header = ["configuration", *OPERATION_KINDS, "total"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, counts in results.items():
        cells = [f"{counts[kind]:.1f}" for kind in OPERATION_KINDS]
        print(f"| {name} | " + " | ".join(cells) + f" | {sum(counts.values()):.1f} |")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": args.rows,
                    "rounds": args.rounds,
                    "counts_per_round": results,
                    "date": datetime.date.today().isoformat(),
                    "machine": platform.platform(),
                    "command": " ".join(sys.argv),
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
