#!/usr/bin/env python
"""CPU/GPU parity at scale: the same training on device='cpu' and device='cuda'.

HIGGS-like data (``gpuboost.datasets.make_higgs_like``, 28 features, 5% of feature 3
set to NaN so that the missing bin is exercised), ``--rows`` rows (default 1M),
depth 8, 255 value bins, learning rate 0.1, ``--rounds`` rounds (default 20), for
three cases:

``reg:squarederror`` (target: label + 0.25 log1p(feature 0)), ``binary:logistic`` and
``reg:squarederror+categorical`` (the same features and two pandas categorical columns,
200 levels of unequal frequency with 5% missing and 6 levels, whose effects are added to
the regression target: many-vs-many and one-vs-rest splits, ``cat_smooth`` estimated
per tree; docs/DESIGN.md "Categorical features"): the models must be byte-identical
(``Booster.save_raw``; docs/DESIGN.md, "Platform-independent arithmetic": the sigmoid's
``exp`` is gpuboost's own on both).
When they are not, the report also says whether the structure (feature, threshold_bin,
threshold, default_left, children, row count of every node) is the same and how far
the leaf values, gains and covers are apart, to locate the difference.

Prints PASS/FAIL per objective and exits with status 0 only when every check
passes. ``--devices cpu,cpu`` (or with ``GPUBOOST_EMULATE_CUDA=1``, ``cpu,cuda``
on the CPU emulation) exercises the script without a GPU.

Usage::

    python benchmarks/gpu_parity.py [--rows 1000000] [--rounds 20] [--depth 8]
                                    [--devices cpu,cuda] [--json out.json]
"""

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # use the checkout's gpuboost
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402

import gpuboost  # noqa: E402

OBJECTIVES = ("reg:squarederror", "binary:logistic", "reg:squarederror+categorical")
#: The categorical case's column of many levels.
CATEGORICAL_LEVELS = 200
STRUCTURE_ARRAYS = (
    "feature",
    "threshold_bin",
    "threshold",
    "default_left",
    "left_child",
    "right_child",
    "count",
)
LEAF_TOLERANCE = 1e-12
MISSING_FEATURE = 3
MISSING_FRACTION = 0.05


def make_data(rows, seed=0):
    try:
        from gpuboost.datasets import make_higgs_like

        X, y = make_higgs_like(rows, seed=seed)
    except ImportError:  # the CLI generator is not there: gpu_bench's fallback
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from gpu_bench import _fallback_higgs_like

        X, y = _fallback_higgs_like(rows, 28, seed)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    rng = np.random.default_rng([seed, 12345])
    X[rng.random(rows) < MISSING_FRACTION, MISSING_FEATURE] = np.nan
    return X, y


def with_categorical_columns(X, seed=0):
    """A frame of ``X`` and two categorical columns, ``many`` (CATEGORICAL_LEVELS levels,
    Dirichlet frequencies: a few frequent, many rare; 5% missing) and ``six``, and the
    effect of the two on a target."""
    import pandas as pd

    rng = np.random.default_rng([seed, 777])
    rows = X.shape[0]
    popularity = rng.dirichlet(np.full(CATEGORICAL_LEVELS, 0.8))
    many = rng.choice(CATEGORICAL_LEVELS, rows, p=popularity)
    six = rng.integers(0, 6, rows)
    effect = rng.normal(size=CATEGORICAL_LEVELS)[many] + 0.5 * rng.normal(size=6)[six]
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["many"] = pd.Categorical.from_codes(
        np.where(rng.random(rows) < MISSING_FRACTION, -1, many),
        [f"level{i:03d}" for i in range(CATEGORICAL_LEVELS)],
    )
    frame["six"] = pd.Categorical.from_codes(six, [f"s{i}" for i in range(6)])
    return frame, effect


def compare(model_a, model_b, exact):
    """(passed, details) for two Boosters."""
    raw_a, raw_b = model_a.save_raw(), model_b.save_raw()
    if raw_a == raw_b:
        return True, {"identical_bytes": True}
    details = {"identical_bytes": False}
    if exact:
        details["reason"] = "model bytes differ"
    if len(model_a.trees) != len(model_b.trees):
        details["reason"] = f"tree counts differ: {len(model_a.trees)} vs {len(model_b.trees)}"
        return False, details
    max_diff = {name: 0.0 for name in ("value", "gain", "cover")}
    structure_ok = True
    for index, (a, b) in enumerate(zip(model_a.trees, model_b.trees)):
        if a.n_nodes != b.n_nodes or not all(
            np.array_equal(getattr(a, n), getattr(b, n)) for n in STRUCTURE_ARRAYS
        ):
            structure_ok = False
            details.setdefault("first_structure_difference_tree", index)
            continue
        for name in max_diff:
            diff = float(np.max(np.abs(getattr(a, name) - getattr(b, name))))
            max_diff[name] = max(max_diff[name], diff)
    details["structure_identical"] = structure_ok
    details["max_abs_diff"] = max_diff
    details["base_margin_diff"] = float(np.max(np.abs(model_a.base_margin - model_b.base_margin)))
    if exact:
        return False, details
    passed = (
        structure_ok
        and max_diff["value"] <= LEAF_TOLERANCE
        and details["base_margin_diff"] <= LEAF_TOLERANCE
    )
    if not passed and "reason" not in details:
        details["reason"] = (
            "structure differs"
            if not structure_ok
            else f"leaf values differ by {max_diff['value']:.3g}"
        )
    return passed, details


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument(
        "--devices", default="cpu,cuda", help="the two devices compared (default cpu,cuda)"
    )
    parser.add_argument("--objectives", default=",".join(OBJECTIVES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    device_a, device_b = args.devices.split(",")
    objectives = [o for o in args.objectives.split(",") if o]

    start = time.perf_counter()
    X, label = make_data(args.rows, args.seed)
    print(
        f"# parity {device_a} vs {device_b}: {args.rows} x {X.shape[1]} rows (5% NaN in "
        f"feature {MISSING_FEATURE}), depth {args.depth}, {args.rounds} rounds; data in "
        f"{time.perf_counter() - start:.1f} s",
        flush=True,
    )
    regression = label + 0.25 * np.log1p(np.abs(X[:, 0]))
    targets = {"reg:squarederror": regression, "binary:logistic": label}
    features = {"reg:squarederror": X, "binary:logistic": X}
    if "reg:squarederror+categorical" in objectives:
        frame, effect = with_categorical_columns(X, args.seed)
        targets["reg:squarederror+categorical"] = regression + effect
        features["reg:squarederror+categorical"] = frame
    results = []
    for objective in objectives:
        exact = True  # every objective (issue 28)
        params = {
            "objective": objective.split("+")[0],
            "learning_rate": 0.1,
            "max_depth": args.depth,
            "max_bin": 255,
            "reg_lambda": 1.0,
            "min_child_weight": 1.0,
            "split_penalty": 0.0,  # the peers' trees: no split penalty (issue 33)
            "verbosity": 0,
        }
        models, seconds = [], []
        row = {"objective": objective}
        try:
            for device in (device_a, device_b):
                dtrain = gpuboost.Dataset(features[objective], label=targets[objective])
                begin = time.perf_counter()
                models.append(
                    gpuboost.train(
                        dict(params, device=device), dtrain, args.rounds, verbose_eval=False
                    )
                )
                seconds.append((device, time.perf_counter() - begin))
            passed, details = compare(*models, exact=exact)
            row.update(passed=passed, details=details, seconds=seconds)
        except Exception as error:  # report and go on with the next objective
            row.update(
                passed=False,
                details={"reason": f"{type(error).__name__}: {error}"},
                seconds=seconds,
            )
        results.append(row)
        rule = "identical bytes" if exact else f"structure + leaf values within {LEAF_TOLERANCE}"
        times = ", ".join(f"{device} {value:.1f} s" for device, value in seconds)
        print(
            f"{objective:<28} {'PASS' if row['passed'] else 'FAIL'} ({rule}; {times}) "
            f"{json.dumps(row['details'])}",
            flush=True,
        )
    all_passed = all(r["passed"] for r in results)
    print(f"PARITY: {'PASS' if all_passed else 'FAIL'}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": args.rows,
                    "rounds": args.rounds,
                    "depth": args.depth,
                    "devices": [device_a, device_b],
                    "results": results,
                },
                indent=2,
            )
            + "\n"
        )
    return 0 if all_passed else 1


if __name__ == "__main__":
    sys.exit(main())
