#!/usr/bin/env python
"""What a boosting round of the CUDA backend asks of the GPU, counted without a GPU,
and its modeled H100 time next to the floor.

The CUDA backend runs under the CPU emulation (``GPUBOOST_EMULATE_CUDA=1``) with the
traffic model recording (:mod:`gpuboost.backends.emulation.traffic`): every kernel
launch runs instrumented and counts, per warp instruction, the distinct 32-byte sectors
of global memory (coalescing), the shared-memory wavefronts (bank conflicts) and the
atomics; every CuPy-level operation is recorded with the bytes it reads and writes and
whether it synchronizes the host. Per round and per phase (``gradients``, ``quantize``,
``histogram``, ``split``, ``partition``, ``predict_update``, ...; ``other`` outside
every phase) the script reports:

* ``launches``: kernel launches + CuPy operations + copies to the device, and ``syncs``
  (host synchronizations: copies to the host, ``int()`` / ``float()`` of device values,
  boolean-mask indexing, ``flatnonzero``, ...), also per level (per expansion for
  lossguide);
* ``device_bytes``: sectors moved by the kernels (x 32) plus the CuPy operations' bytes;
  bank-conflict ways (shared wavefronts per shared request), global and shared atomics;
* the modeled H100 time (bytes at 3.35 TB/s + 5 us per launch + 20 us per sync, the
  constants of ``traffic.py``) next to the floor of the same round
  (:func:`gpuboost.backends.emulation.traffic.floor_bytes`), and
  ``modeled_bytes_to_floor_ratio`` (also per row: ``modeled_bytes_per_row`` against
  ``floor_bytes_per_row``);
* the same round modeled at ``--scale-rows`` rows (default 10M; ``scaled``): a second,
  smaller measurement (``--fit-rows``, default a quarter) splits the bytes into a part
  proportional to the rows and a fixed part (histogram tables, per-node work), except the
  histogram kernels' flush of their shared-memory histograms to global memory, which is
  per block (per *table*: a block flushes its feature group's share of a node's table):
  it is scaled by the tables of the blocks the host code's plan
  (``gpuboost.backends.cuda.histogram.plan_histograms``) launches for the same nodes with
  proportionally more rows. Launches and syncs per round stay as measured. Both
  measurements of the fit (at ``--rows`` and at ``--fit-rows``) run without the
  small-node row scan (:func:`without_row_scan`): its cutoff is a fixed number of rows
  (``row_scan_max_rows``), so it covers more of a tree at fewer rows, and a line through
  two sizes would take the bytes it saves at the smaller one for a cost per row. Without
  it the scaled round is an upper bound on the bytes (the row scan replaces histogram
  tables by reads of the same rows, at nodes that are few at 10M rows). For the same
  reason they build the root from gathered rows (:func:`without_root_columns`: the
  columns' feature groups change with the rows), also an upper bound.

Counts depend on the tree shapes, not on the machine. Data: HIGGS-shaped synthetic
(``gpuboost.datasets.make_higgs_like``), ``--rows`` rows (default 200,000) x 28 features,
255 bins. A configuration trains ``1 + --rounds`` rounds (default 2) on one Dataset; the
figures are the mean of the rounds after the first (which also prepares the data).

Usage::

    python benchmarks/device_ops.py [--rows 200000] [--rounds 2] [--configs NAME,...]
                                    [--json out.json]
"""

import argparse
import contextlib
import datetime
import json
import math
import platform
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # use the checkout's gpuboost
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402

import gpuboost  # noqa: E402
from gpuboost.backends.cuda import histogram as histogram_primitive  # noqa: E402
from gpuboost.backends.cuda.backend import CudaBackend  # noqa: E402
from gpuboost.backends.emulation import emulated_kernels, traffic  # noqa: E402
from gpuboost.datasets import make_higgs_like  # noqa: E402

#: Configurations measured: name -> training parameters (device='cuda' is added).
CONFIGURATIONS = {
    "binary depth 8": dict(objective="binary:logistic", max_depth=8),
    "regression depth 8": dict(objective="reg:squarederror", max_depth=8),
    "binary depth 6": dict(objective="binary:logistic", max_depth=6),
    "multiclass (3) depth 6": dict(objective="multi:softprob", num_class=3, max_depth=6),
    "lossguide 255 leaves": dict(
        objective="binary:logistic", grow_policy="lossguide", max_leaves=255, max_depth=0
    ),
}
#: Rows the per-row figures are scaled to (the issue's 10M x 28 benchmark size).
DEFAULT_SCALE_ROWS = 10_000_000
#: The histogram kernels whose global atomics flush a block's shared histogram (of its
#: feature group), and their profiling phase.
HISTOGRAM_KERNELS = (
    histogram_primitive.SHARED_KERNEL,
    histogram_primitive.COLUMNS_KERNEL,
    histogram_primitive.CLUSTER_KERNEL,
    histogram_primitive.CLUSTER_COLUMNS_KERNEL,
)
HISTOGRAM_PHASE = "histogram"
MS = 1e3
MB = 1e6


class _RoundMarker(gpuboost.TrainingCallback):
    """Tags the traffic log's events with the round being trained."""

    def __init__(self, log):
        self.log = log

    def before_iteration(self, model, epoch, evals_log):
        self.log.start_round(epoch)
        return False


def _floor_depth(params):
    """The depth D of the floor formula: max_depth, or for lossguide the depth of a
    balanced tree with max_leaves leaves."""
    if params.get("max_depth", 6) > 0:
        return params.get("max_depth", 6)
    return math.ceil(math.log2(params["max_leaves"]))


def _levels(trees, params):
    """Expansion steps of the grower in these trees: levels (depthwise) or single-leaf
    expansions (lossguide)."""
    if params.get("grow_policy") == "lossguide":
        return sum(tree.n_leaves - 1 for tree in trees)
    return sum(tree.depth() for tree in trees)


#: Fields of traffic.summarize that are ratios, not sums over events.
RATIOS = ("bank_conflict_ways",)


def _per_round(events, rounds):
    """traffic.summarize of ``rounds`` rounds' events, sums divided by ``rounds``."""
    totals = traffic.summarize(events)
    return {key: value if key in RATIOS else value / rounds for key, value in totals.items()}


def measure(X, y, params, rounds):
    """Traffic of one configuration: a dict (see the module docstring)."""
    n_rows, n_features = X.shape
    dataset = gpuboost.Dataset(X, label=y)
    params = dict(params, device="cuda", verbosity=0, max_bin=255, split_penalty=0.0)
    start = time.perf_counter()
    plans = []  # (round, arguments) of every histogram launch's plan
    planner, launch_build = histogram_primitive.plan_histograms, histogram_primitive._launch_build
    launching = []  # the plans of launches only (a partition also plans the build it precedes)

    def recording_planner(lengths, *arguments, **options):
        if launching:
            plans.append((log.round, np.array(lengths), arguments, options))
        return planner(lengths, *arguments, **options)

    def recording_launch(*arguments, **options):
        launching.append(True)
        try:
            return launch_build(*arguments, **options)
        finally:
            launching.pop()

    histogram_primitive.plan_histograms = recording_planner
    histogram_primitive._launch_build = recording_launch
    try:
        with traffic.record_traffic() as log:
            booster = gpuboost.train(params, dataset, 1 + rounds, callbacks=[_RoundMarker(log)])
    finally:
        histogram_primitive.plan_histograms = planner
        histogram_primitive._launch_build = launch_build
    seconds = time.perf_counter() - start
    measured = [event for event in log.events if event.round >= 1]
    per_round = _per_round(measured, rounds)
    phases = sorted({event.phase for event in measured})
    per_phase = {
        phase: _per_round([e for e in measured if e.phase == phase], rounds) for phase in phases
    }
    kernels = sorted({event.name for event in measured if event.kind == traffic.KERNEL})
    per_kernel = {
        name: _per_round(
            [e for e in measured if e.kind == traffic.KERNEL and e.name == name], rounds
        )
        for name in kernels
    }
    trees_per_round = booster.n_outputs if params.get("objective") == "multi:softprob" else 1
    round_trees = booster.trees[trees_per_round:]  # rounds after the first
    levels = _levels(round_trees, params) / rounds
    leaves = sum(tree.n_leaves for tree in round_trees) / rounds
    depth = _floor_depth(params)
    floor = traffic.floor_bytes(n_rows, n_features, depth) * trees_per_round
    floor_seconds = floor / traffic.H100_BANDWIDTH_BYTES_PER_SECOND
    flushes = [e for e in measured if e.name in HISTOGRAM_KERNELS]
    launch_plans = [  # the node lengths and options of every histogram launch
        {"lengths": lengths.tolist(), "arguments": list(arguments), "options": options}
        for round_, lengths, arguments, options in plans
        if round_ >= 1
    ]
    if len(launch_plans) != len(flushes):
        raise RuntimeError(f"{len(launch_plans)} plans recorded for {len(flushes)} launches")
    return {
        "rows": n_rows,
        "rounds": rounds,
        "histogram_flush": {
            "bytes": traffic.SECTOR_BYTES
            * sum(e.counters["global_atomic_sectors"] for e in flushes)
            / rounds,
            "atomics": sum(e.counters["global_atomics"] for e in flushes) / rounds,
            "blocks": sum(e.blocks for e in flushes) / rounds,
            "tables": sum(e.blocks * _table_share(plan) for e, plan in zip(flushes, launch_plans))
            / rounds,
        },
        "histogram_plans": launch_plans,
        "params": params,
        "emulation_seconds": seconds,
        "per_round": per_round,
        "per_phase": per_phase,
        "per_kernel": per_kernel,
        "levels_per_round": levels,
        "leaves_per_round": leaves,
        "per_level": {
            "launches": per_round["launches"] / levels if levels else None,
            "syncs": per_round["syncs"] / levels if levels else None,
        },
        "floor_depth": depth,
        "trees_per_round": trees_per_round,
        "floor_bytes_per_round": floor,
        "floor_bytes_per_row": floor / n_rows,
        "modeled_bytes_per_row": per_round["device_bytes"] / n_rows,
        "modeled_bytes_to_floor_ratio": per_round["device_bytes"] / floor,
        "modeled_ms_per_round": per_round["modeled_seconds"] * MS,
        "floor_ms_per_round": floor_seconds * MS,
        "modeled_us_per_leaf": per_round["modeled_seconds"] * 1e6 / leaves,
    }


def _replan(launch, scale=1.0):
    """The plan of a recorded histogram launch with every node's rows times ``scale``,
    as the host code plans it (``plan_histograms``); ordered rows scale with them."""
    lengths = np.ceil(np.asarray(launch["lengths"], dtype=np.float64) * scale)
    options = dict(launch["options"])
    if options.get("ordered_rows") is not None:
        n_rows, row_stride = options["ordered_rows"]
        options["ordered_rows"] = (int(np.ceil(n_rows * scale)), row_stride)
    return histogram_primitive.plan_histograms(
        lengths.astype(np.int64), *launch["arguments"], **options
    )


def _table_share(launch, scale=1.0):
    """The share of a node's table each block of a recorded launch flushes: its feature
    group's features over all of them, over the blocks of a cluster that flush one."""
    plan = _replan(launch, scale)
    return plan.features_per_group / max(launch["arguments"][0], 1) / plan.cluster_blocks


def histogram_blocks(result, n_rows):
    """``(blocks, tables)`` per round of the histogram kernels at ``n_rows`` rows: the
    launches of the measured round with every node's rows scaled by
    ``n_rows / result["rows"]``, planned as the host code plans them
    (``plan_histograms``); ``tables`` counts each block as the share of a node's table
    its feature group flushes (the unit of the flush's bytes)."""
    scale = n_rows / result["rows"]
    blocks = tables = 0.0
    for launch in result["histogram_plans"]:
        plan = _replan(launch, scale)
        n_blocks = plan.blocks_per_group * plan.n_groups
        blocks += n_blocks
        tables += n_blocks * _table_share(launch, scale)
    return blocks / result["rounds"], tables / result["rounds"]


@contextlib.contextmanager
def without_root_columns():
    """The CUDA backend building every root from gathered rows (``takes_rows_in_order``
    off): the columns' feature groups follow the rows (one group at 50k and at 10M rows,
    four at 200k for 28 features), and a line through two sizes would take the group
    count's change for a cost per row. Gathering is what the plan takes when the columns
    cost more, so the scaled round stays an upper bound."""
    original = CudaBackend.takes_rows_in_order
    CudaBackend.takes_rows_in_order = False
    try:
        yield
    finally:
        CudaBackend.takes_rows_in_order = original


@contextlib.contextmanager
def without_row_scan():
    """The CUDA backend scanning every node from its histogram (``row_scan_max_rows``
    0: no small node scanned from its rows) inside the block."""
    original = CudaBackend.row_scan_max_rows
    CudaBackend.row_scan_max_rows = lambda self, data: 0
    try:
        yield
    finally:
        CudaBackend.row_scan_max_rows = original


def fit(result, smaller):
    """The bytes of a round as a function of its rows, from two measurements
    (``result`` at more rows, ``smaller`` at fewer): per phase a part proportional to the
    rows and a fixed part, apart from the histogram flush, whose bytes and atomics per
    block are those at the larger size."""
    rows, fewer = result["rows"], smaller["rows"]
    flush = result["histogram_flush"]
    phases = {}
    for phase, measured in result["per_phase"].items():
        big = measured["device_bytes"]
        small = smaller["per_phase"].get(phase, {}).get("device_bytes", 0.0)
        if phase == HISTOGRAM_PHASE:
            big -= flush["bytes"]
            small -= smaller["histogram_flush"]["bytes"]
        per_row = (big - small) / (rows - fewer)
        phases[phase] = {"bytes_per_row": per_row, "fixed_bytes": big - per_row * rows}
    return {
        "fit_rows": [fewer, rows],
        "per_phase": phases,
        "flush_bytes_per_table": flush["bytes"] / flush["tables"] if flush["tables"] else 0.0,
        "flush_atomics_per_table": flush["atomics"] / flush["tables"] if flush["tables"] else 0.0,
    }


def model_round(result, n_rows):
    """A round of ``result``'s configuration at ``n_rows`` rows, from its ``fit``: bytes
    and modeled ms per phase and in total (launches and syncs per round as measured),
    the histogram flush, and the floor."""
    fitted = result["fit"]
    blocks, tables = histogram_blocks(result, n_rows)
    flush_bytes = fitted["flush_bytes_per_table"] * tables
    phases = {}
    for phase, line in fitted["per_phase"].items():
        measured = result["per_phase"][phase]
        device_bytes = max(line["fixed_bytes"] + line["bytes_per_row"] * n_rows, 0.0)
        if phase == HISTOGRAM_PHASE:
            device_bytes += flush_bytes
        phases[phase] = {
            "bytes": device_bytes,
            "modeled_ms": traffic.modeled_seconds(
                device_bytes, measured["launches"], measured["syncs"]
            )
            * MS,
        }
    total_bytes = sum(phase["bytes"] for phase in phases.values())
    totals = result["per_round"]
    floor = result["floor_bytes_per_row"] * n_rows
    return {
        "rows": n_rows,
        "bytes_per_row": sum(line["bytes_per_row"] for line in fitted["per_phase"].values()),
        "fixed_bytes": sum(line["fixed_bytes"] for line in fitted["per_phase"].values()),
        "histogram_flush": {
            "blocks": blocks,
            "tables": tables,
            "bytes": flush_bytes,
            "atomics": fitted["flush_atomics_per_table"] * tables,
        },
        "modeled_bytes_per_round": total_bytes,
        "floor_bytes_per_round": floor,
        "modeled_bytes_to_floor_ratio": total_bytes / floor,
        "modeled_ms_per_round": traffic.modeled_seconds(
            total_bytes, totals["launches"], totals["syncs"]
        )
        * MS,
        "floor_ms_per_round": floor / traffic.H100_BANDWIDTH_BYTES_PER_SECOND * MS,
        "per_phase": phases,
    }


def _labels(params, X, y):
    if params["objective"] == "multi:softprob":
        return (X[:, 0] > 0).astype(float) + (X[:, 1] > 0.5)
    return y


#: The configurations whose modeled cost per expanded leaf issue 14 compares (bar: 3x).
LOSSGUIDE_PER_LEAF = "lossguide 255 leaves"
DEPTHWISE_PER_LEAF = "binary depth 8"


def lossguide_per_leaf(results):
    """Modeled microseconds per leaf (of the round's trees) of :data:`LOSSGUIDE_PER_LEAF` and of
    :data:`DEPTHWISE_PER_LEAF`, and their ratio; None unless both were measured."""
    if LOSSGUIDE_PER_LEAF not in results or DEPTHWISE_PER_LEAF not in results:
        return None
    lossguide = results[LOSSGUIDE_PER_LEAF]["modeled_us_per_leaf"]
    depthwise = results[DEPTHWISE_PER_LEAF]["modeled_us_per_leaf"]
    return {"lossguide_us": lossguide, "depthwise_us": depthwise, "ratio": lossguide / depthwise}


def print_report(results, args, n_features):
    print(
        f"# CUDA backend under the emulation's traffic model: {args.rows:,} x {n_features}, "
        f"255 bins, mean of {args.rounds} round(s) after the first; modeled H100: bytes at "
        f"{traffic.H100_BANDWIDTH_BYTES_PER_SECOND / 1e12:.2f} TB/s + "
        f"{traffic.LAUNCH_SECONDS * 1e6:.0f} us/launch + {traffic.SYNC_SECONDS * 1e6:.0f} "
        "us/sync"
    )
    header = (
        "| configuration | launches / round | syncs / round | levels | launches / level | "
        "syncs / level | modeled MB / round | floor MB / round | modeled / floor | "
        "modeled ms | floor ms | bank-conflict ways | global atomics | shared atomics |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name, result in results.items():
        r = result["per_round"]
        print(
            f"| {name} | {r['launches']:.0f} | {r['syncs']:.0f} | {result['levels_per_round']:.0f} "
            f"| {result['per_level']['launches']:.1f} | {result['per_level']['syncs']:.2f} | "
            f"{r['device_bytes'] / MB:.1f} | {result['floor_bytes_per_round'] / MB:.1f} | "
            f"{result['modeled_bytes_to_floor_ratio']:.2f} | "
            f"{result['modeled_ms_per_round']:.2f} | {result['floor_ms_per_round']:.3f} | "
            f"{r['bank_conflict_ways']:.2f} | {r['global_atomics']:.3g} | "
            f"{r['shared_atomics']:.3g} |"
        )
    per_leaf = lossguide_per_leaf(results)
    if per_leaf is not None:
        print()
        print(
            f"Lossguide per leaf: {per_leaf['lossguide_us']:.2f} us modeled against "
            f"{per_leaf['depthwise_us']:.2f} us for {DEPTHWISE_PER_LEAF} "
            f"(**{per_leaf['ratio']:.2f}x**; issue 14's bar: 3x)"
        )
    scaled = {name: result["scaled"] for name, result in results.items() if "scaled" in result}
    if scaled:
        print()
        print(
            f"Modeled at {args.scale_rows:,} rows (bytes split into per-row and fixed parts "
            f"from {args.fit_rows:,} and {args.rows:,} rows measured without the small-node "
            "row scan, an upper bound; the histogram flush per table (a block's share of a "
            "node's table: its feature group) of the scaled plans; "
            "launches and syncs as measured without the row scan):"
        )
        print(
            "| configuration | bytes / row | fixed MB / round | histogram blocks | flush GB | "
            "flush atomics | modeled GB / round | floor GB / round | modeled / floor | "
            "modeled ms | floor ms |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for name, s in scaled.items():
            flush = s["histogram_flush"]
            print(
                f"| {name} | {s['bytes_per_row']:.0f} | {s['fixed_bytes'] / MB:.0f} | "
                f"{flush['blocks']:.0f} | {flush['bytes'] / 1e9:.2f} | {flush['atomics']:.3g} | "
                f"{s['modeled_bytes_per_round'] / 1e9:.2f} | "
                f"{s['floor_bytes_per_round'] / 1e9:.2f} | "
                f"{s['modeled_bytes_to_floor_ratio']:.2f} | {s['modeled_ms_per_round']:.2f} | "
                f"{s['floor_ms_per_round']:.2f} |"
            )
    for name, result in results.items():
        print()
        print(f"Per phase, {name} (per round):")
        print(
            "| phase | launches | syncs | device MB | bytes / row | bank-conflict ways | "
            "global atomics | modeled ms |"
        )
        print("|---|---|---|---|---|---|---|---|")
        by_time = sorted(result["per_phase"].items(), key=lambda item: -item[1]["modeled_seconds"])
        for phase, p in by_time:
            print(
                f"| {phase} | {p['launches']:.1f} | {p['syncs']:.1f} | "
                f"{p['device_bytes'] / MB:.2f} | {p['device_bytes'] / args.rows:.1f} | "
                f"{p['bank_conflict_ways']:.2f} | {p['global_atomics']:.3g} | "
                f"{p['modeled_seconds'] * MS:.3f} |"
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--configs",
        default=",".join(CONFIGURATIONS),
        help="comma-separated configuration names (default: all)",
    )
    parser.add_argument(
        "--fit-rows",
        type=int,
        default=None,
        help="also measure this many rows (default --rows / 4; 0: skip) to split the bytes "
        "into per-row and fixed parts and model --scale-rows rows",
    )
    parser.add_argument("--scale-rows", type=int, default=DEFAULT_SCALE_ROWS)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    if args.fit_rows is None:
        args.fit_rows = args.rows // 4
    names = [name.strip() for name in args.configs.split(",") if name.strip()]
    unknown = [name for name in names if name not in CONFIGURATIONS]
    if unknown:
        parser.error(f"unknown configurations {unknown}; choose among {list(CONFIGURATIONS)}")

    X, y = make_higgs_like(args.rows, seed=args.seed)
    results = {}
    with emulated_kernels():
        for name in names:
            params = CONFIGURATIONS[name]
            labels = _labels(params, X, y)
            result = measure(X, labels, params, args.rounds)
            print(f"# {name}: {result['emulation_seconds']:.0f} s under the emulation", flush=True)
            if args.fit_rows:
                # the fit's two sizes (see the module docstring)
                with without_row_scan(), without_root_columns():
                    plain = measure(X, labels, params, args.rounds)
                    fewer = measure(
                        X[: args.fit_rows], labels[: args.fit_rows], params, args.rounds
                    )
                keys = ("rows", "per_round", "per_phase", "histogram_flush")
                result["without_row_scan"] = {key: plain[key] for key in keys}
                result["smaller"] = {key: fewer[key] for key in keys}
                plain["fit"] = result["fit"] = fit(plain, fewer)
                result["scaled"] = model_round(plain, args.scale_rows)
                print(
                    f"# {name} without the row scan, {args.rows:,} and {args.fit_rows:,} rows: "
                    f"{plain['emulation_seconds'] + fewer['emulation_seconds']:.0f} s",
                    flush=True,
                )
            results[name] = result
    print_report(results, args, X.shape[1])
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": args.rows,
                    "features": int(X.shape[1]),
                    "rounds": args.rounds,
                    "model": {
                        "bandwidth_bytes_per_second": traffic.H100_BANDWIDTH_BYTES_PER_SECOND,
                        "launch_seconds": traffic.LAUNCH_SECONDS,
                        "sync_seconds": traffic.SYNC_SECONDS,
                        "sector_bytes": traffic.SECTOR_BYTES,
                    },
                    "configurations": results,
                    "date": datetime.date.today().isoformat(),
                    "machine": platform.platform(),
                    "command": " ".join(sys.argv),
                },
                indent=2,
                default=lambda value: value.item() if isinstance(value, np.generic) else str(value),
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
