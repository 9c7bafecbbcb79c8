#!/usr/bin/env python
"""GPU benchmark: gpuboost device='cuda' against XGBoost 3.x device='cuda'.

Data: HIGGS-shaped dense synthetic data from ``gpuboost.datasets.make_higgs_like``
(falls back to :func:`_fallback_higgs_like` when that generator is missing), float32,
at the sizes 1M x 28, 10M x 28 and 1M x 200 (training rows; ``--test-rows`` more rows,
default 100k, are generated after them for the test AUC). Binary logistic, depth 8,
256 bins (gpuboost max_bin=255 value bins + 1 missing bin; XGBoost max_bin=256),
learning rate 0.1, L2 1, min child hessian 1, 100 rounds.

Reported per (size, library): data-structure construction time, training wall
time, ms per round (training wall / rounds, and the median of the per-round times
taken by a callback after a device synchronize), peak device memory and test AUC.
Targets: gpuboost at least 1.5x faster per round than XGBoost at equal AUC
(gpuboost's AUC >= XGBoost's - 0.001), and within 3x of the memory-bandwidth floor.

How it is measured
------------------
* Every (size, library) runs in its own worker process (this script with
  ``--worker``), one after the other, in the same invocation, so that one
  library's cached device memory (CuPy's pool, XGBoost's caching allocator) never
  counts against the other and every process starts from a clean device. The data
  are generated once by the parent and handed to the workers as ``.npy`` files.
* Warm-up: each worker first trains ``--warmup-rounds`` rounds (default 5) on the
  same data (JIT/NVRTC kernel compilation, device data preparation: gpuboost caches
  its device bins on the Dataset, XGBoost its ELLPACK pages in the QuantileDMatrix),
  then the timed run trains ``--rounds`` rounds on the same Dataset/DMatrix.
  ``construct s`` is the data-structure build (gpuboost: ``Dataset``, host-side
  quantiles; XGBoost: ``QuantileDMatrix`` from CuPy arrays, sketched on the device)
  plus the warm-up run.
* Peak device memory is measured during the warm-up run (data preparation plus the
  warm-up rounds), never during the timed run:
  - both libraries: ``cudaMemGetInfo`` sampled every millisecond from a helper thread;
    peak = the largest (used - used before the library touched the device), where the
    input arrays given to XGBoost (CuPy copies of the training data, user data) are
    left out: they are deleted after the QuantileDMatrix is built;
  - gpuboost also: CuPy memory-pool high-water marks (``used_bytes`` and
    ``total_bytes``) read after every pool allocation through a
    ``cupy.cuda.MemoryHook`` (exact for everything gpuboost allocates through CuPy).
* Bandwidth: device-to-device ``cudaMemcpyAsync`` of ``--bandwidth-gb`` GB (default 1)
  in a worker, ``--bandwidth-reps`` repetitions timed with CUDA events after one
  warm-up copy; bandwidth = 2 x bytes / time (a copy reads and writes every byte);
  the best repetition is used (the floor is a lower bound).
* Memory-bandwidth floor, per round, from gpuboost's own trees of the timed run
  (node row counts per level; averaged over rounds), with ``F`` features,
  ``B`` = 256 histogram bins, 24-byte histogram entries (3 x int64, docs/DESIGN.md):
  - histogram pass: the root reads every row's bins and quantized gradient pair
    (``F + 8`` bytes a row); each later built node (the smaller child of every split
    whose children may still split, i.e. depth < max_depth) reads ``F + 4 + 8`` bytes
    a row (bins, row index, gradient pair); every built histogram is written once
    (``F x B x 24``) and every sibling derived by subtraction reads two histograms and
    writes one (``3 x F x B x 24``);
  - partition pass: every split node's rows: read the row index and the split
    feature's bin, write the row index (``4 + 1 + 4`` bytes a row).
  Floor ms = bytes / bandwidth. Other passes (gradients, quantization, prediction
  update, split scan) are left out of the floor.

Modeled against measured (``--phases --model FILE``): ``FILE`` is the JSON of
``benchmarks/device_ops.py`` (the emulation's traffic model, measured at 200k x 28 rows
without a GPU). For every size with the model's feature count, the script prints per
phase the modeled H100 time (the phase's bytes split into a per-row and a fixed part,
at this size's rows; its launches and syncs per round) next to the measured one
(``verbosity=2`` phase timings of ``--phase-rounds`` rounds, which synchronize the
device around every phase), the round's totals, and XGBoost ``device='cuda'`` on the
same data: the figures that calibrate the model (docs/DESIGN.md, "GPU performance
model").

Host profile (``--profile``): one more gpuboost training of ``--phase-rounds`` rounds
under ``cProfile``; the output lists the functions with the most own time per round,
after the whole round's profiled time. The traffic model counts the device's work
only; on the H200 about 10 ms of a 1M-row round was the host's Python (RESULTS.md,
"First GPU run"), and this is where to look for it.

``--dry-run`` exercises every code path on a machine without a GPU: tiny data,
device='cpu' for both libraries (XGBoost only if installed), a host memcpy for the
bandwidth, no device memory figures.

Usage::

    python benchmarks/gpu_bench.py [--quick] [--sizes 1000000x28,10000000x28,1000000x200]
                                   [--rounds 100] [--libs gpuboost,xgboost] [--json out.json]
                                   [--phases] [--profile] [--model device_ops.json]
    python benchmarks/gpu_bench.py --dry-run
"""

import argparse
import cProfile
import datetime
import gc
import json
import os
import platform
import pstats
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # use the checkout's gpuboost
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402

DEFAULT_SIZES = "1000000x28,10000000x28,1000000x200"
QUICK_SIZES = "1000000x28"
DRY_RUN_SIZES = "20000x28,20000x200"
LEARNING_RATE = 0.1
MAX_BIN = 255  # value bins; + 1 missing bin = 256 = XGBoost's max_bin
HIST_BINS = MAX_BIN + 1
HIST_ENTRY_BYTES = 24  # (sum_g, sum_h, count) as int64
GRAD_PAIR_BYTES = 8  # quantized gradient + hessian, int32 each
INDEX_BYTES = 4  # int32 row index
BIN_BYTES = 1  # uint8 bin
#: Rounds of the --phases run (verbosity=2 timings synchronize around every phase),
#: and of the --profile run.
DEFAULT_PHASE_ROUNDS = 20
#: Functions listed by --profile.
PROFILE_TOP = 25
#: Configuration of the device_ops.py JSON that models this benchmark's training.
MODEL_CONFIGURATION = "binary depth 8"
#: A phase in gpuboost's verbosity=2 timings line: "histogram 1.234s".
_PHASE_TIMING = re.compile(r"([A-Za-z_]+) ([0-9.]+)s")
SPEEDUP_TARGET = 1.5
AUC_TOLERANCE = 0.001
FLOOR_TARGET = 3.0
MIB = 1 << 20


# --------------------------------------------------------------------------- #
# data
# --------------------------------------------------------------------------- #
def _fallback_higgs_like(n_rows, n_features=28, seed=0, chunk_rows=1 << 20):
    """HIGGS-shaped data when ``gpuboost.datasets.make_higgs_like`` is missing: log-normal
    momenta, normal pseudorapidities, uniform angles, 3-valued b-tags and pair
    masses, label ~ Bernoulli(sigmoid(nonlinear score)); columns beyond 28 are noise.
    Generated in chunks with streams ``(seed, chunk)``; float32."""
    X = np.empty((n_rows, n_features), dtype=np.float32)
    y = np.empty(n_rows, dtype=np.float32)
    for chunk, begin in enumerate(range(0, n_rows, chunk_rows)):
        end = min(begin + chunk_rows, n_rows)
        m = end - begin
        rng = np.random.default_rng([seed, chunk])
        cols = []
        pts, etas, phis = [], [], []
        for i in range(6):  # lepton, missing energy, 4 jets
            pt = rng.lognormal(0.2 - 0.1 * i, 0.5, m)
            eta = np.zeros(m) if i == 1 else np.clip(rng.normal(0, 1.1, m), -2.5, 2.5)
            phi = rng.uniform(-np.pi, np.pi, m)
            pts.append(pt), etas.append(eta), phis.append(phi)
            cols.extend([pt, phi] if i == 1 else [pt, eta, phi])
            if i >= 2:
                cols.append(rng.choice([0.0, 1.1, 2.2], p=[0.6, 0.2, 0.2], size=m))

        def mass(idx, pts=pts, etas=etas, phis=phis):
            e = sum(pts[k] * np.cosh(etas[k]) for k in idx)
            px = sum(pts[k] * np.cos(phis[k]) for k in idx)
            py = sum(pts[k] * np.sin(phis[k]) for k in idx)
            pz = sum(pts[k] * np.sinh(etas[k]) for k in idx)
            return np.sqrt(np.maximum(e * e - px * px - py * py - pz * pz, 0.0))

        masses = [
            mass(i)
            for i in (
                [2, 3],
                [2, 3, 4],
                [0, 1],
                [2, 0, 1],
                [4, 5],
                [2, 3, 4, 5],
                [0, 1, 2, 3, 4, 5],
            )
        ]
        cols.extend(masses)
        with np.errstate(divide="ignore"):
            score = (
                2.0 * np.exp(-(((np.log(masses[4]) - np.log(1.6)) / 0.35) ** 2))
                + 1.5 * np.exp(-(((np.log(masses[0]) - np.log(2.0)) / 0.35) ** 2))
                + 0.7 * np.cos(phis[0] - phis[1]) * (pts[0] > 1.0)
                + 0.5 * np.tanh(masses[2] - 1.2)
            )
        label = rng.random(m) < 1.0 / (1.0 + np.exp(-1.6 * (score - 1.2)))
        block = np.column_stack(cols)
        kept = min(n_features, block.shape[1])
        X[begin:end, :kept] = block[:, :kept]
        if n_features > kept:
            X[begin:end, kept:] = rng.standard_normal((m, n_features - kept))
        y[begin:end] = label
    return X, y


def generate(n_rows, n_features, seed=0):
    """(X float32, y float32, generator name)."""
    try:
        from gpuboost.datasets import make_higgs_like
    except ImportError:
        X, y = _fallback_higgs_like(n_rows, n_features, seed)
        return X, y, "benchmarks/gpu_bench.py:_fallback_higgs_like"
    X, y = make_higgs_like(n_rows, n_features=n_features, seed=seed)
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    del X
    return X32, np.asarray(y, dtype=np.float32), "gpuboost.datasets.make_higgs_like"


def parse_sizes(text):
    sizes = []
    for item in text.split(","):
        rows, _, features = item.strip().lower().partition("x")
        sizes.append((int(float(rows)), int(features)))
    return sizes


def size_label(rows, features):
    def short(n):
        return (
            f"{n // 1_000_000}M"
            if n % 1_000_000 == 0
            else (f"{n // 1000}k" if n % 1000 == 0 else str(n))
        )

    return f"{short(rows)} x {features}"


# --------------------------------------------------------------------------- #
# device memory
# --------------------------------------------------------------------------- #
class MemGetInfoSampler:
    """Samples ``cudaMemGetInfo`` every ``interval`` s in a helper thread; ``peak_used``
    is the largest ``total - free`` seen (bytes). ``None`` figures without CuPy."""

    def __init__(self, interval=0.001):
        self.interval = interval
        self.peak_used = None
        self._stop = threading.Event()
        self._thread = None
        try:
            import cupy

            self._runtime = cupy.cuda.runtime
            self._device = cupy.cuda.Device().id
        except Exception:
            self._runtime = None

    def used_now(self):
        if self._runtime is None:
            return None
        free, total = self._runtime.memGetInfo()
        return total - free

    def _loop(self):
        import cupy

        cupy.cuda.Device(self._device).use()
        while not self._stop.is_set():
            used = self.used_now()
            if self.peak_used is None or used > self.peak_used:
                self.peak_used = used
            time.sleep(self.interval)

    def __enter__(self):
        if self._runtime is not None:
            self.peak_used = self.used_now()
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            used = self.used_now()
            self.peak_used = max(self.peak_used, used)
        return False


def _pool_peak_hook():
    """A CuPy MemoryHook recording the default pool's used/total high-water marks,
    or None without CuPy."""
    try:
        import cupy
    except Exception:
        return None

    class PoolPeakHook(cupy.cuda.MemoryHook):
        name = "gpu_bench_pool_peak"

        def __init__(self):
            self.pool = cupy.get_default_memory_pool()
            self.peak_used = self.pool.used_bytes()
            self.peak_total = self.pool.total_bytes()

        def malloc_postprocess(self, **kwargs):
            used = self.pool.used_bytes()
            if used > self.peak_used:
                self.peak_used = used

        def alloc_postprocess(self, **kwargs):
            total = self.pool.total_bytes()
            if total > self.peak_total:
                self.peak_total = total

    return PoolPeakHook()


def _synchronize(device):
    if device.startswith("cuda"):
        import cupy

        cupy.cuda.runtime.deviceSynchronize()


def _mib(value):
    return None if value is None else value / MIB


# --------------------------------------------------------------------------- #
# floor
# --------------------------------------------------------------------------- #
def floor_bytes(trees, n_features, max_depth):
    """Bytes per round the histogram and partition passes must move (see the module
    docstring), averaged over ``trees`` (one tree per round). Returns a dict."""
    hist_bytes = n_features * HIST_BINS * HIST_ENTRY_BYTES
    totals = {"histogram_rows": 0.0, "histogram_tables": 0.0, "partition": 0.0}
    for tree in trees:
        n_nodes = tree.n_nodes
        depth = np.zeros(n_nodes, dtype=np.int64)
        totals["histogram_rows"] += float(tree.count[0]) * (
            n_features * BIN_BYTES + GRAD_PAIR_BYTES
        )
        totals["histogram_tables"] += hist_bytes
        for node in range(n_nodes):  # children have larger ids than their parent
            if tree.feature[node] < 0:
                continue
            left, right = int(tree.left_child[node]), int(tree.right_child[node])
            depth[left] = depth[right] = depth[node] + 1
            rows = float(tree.count[node])
            totals["partition"] += rows * (INDEX_BYTES + BIN_BYTES + INDEX_BYTES)
            if depth[left] < max_depth:
                smaller = float(min(tree.count[left], tree.count[right]))
                totals["histogram_rows"] += smaller * (
                    n_features * BIN_BYTES + INDEX_BYTES + GRAD_PAIR_BYTES
                )
                totals["histogram_tables"] += hist_bytes + 3 * hist_bytes
    n = max(1, len(trees))
    out = {key: value / n for key, value in totals.items()}
    out["total"] = sum(out.values())
    return out


# --------------------------------------------------------------------------- #
# workers (each in its own process)
# --------------------------------------------------------------------------- #
def _load(data_prefix, n_train):
    X = np.load(f"{data_prefix}_X.npy", mmap_mode="r")
    y = np.load(f"{data_prefix}_y.npy", mmap_mode="r")
    return (
        np.ascontiguousarray(X[:n_train]),
        np.ascontiguousarray(y[:n_train]),
        np.ascontiguousarray(X[n_train:]),
        np.ascontiguousarray(y[n_train:]),
    )


def _auc(y, p):
    from gpuboost.metrics import get_metric

    return get_metric("auc")(np.asarray(y, np.float64), np.asarray(p, np.float64))


def worker_gpuboost(cfg):
    import gpuboost
    from gpuboost.backends import get_backend

    device = cfg["device"]
    X_tr, y_tr, X_te, y_te = _load(cfg["data_prefix"], cfg["n_train"])
    params = {
        "objective": "binary:logistic",
        "learning_rate": LEARNING_RATE,
        "max_depth": cfg["depth"],
        "max_bin": MAX_BIN,
        "reg_lambda": 1.0,
        "min_child_weight": 1.0,
        "split_penalty": 0.0,  # the peers' trees: no split penalty (issue 33)
        "device": device,
        "verbosity": 0,
    }
    if not device.startswith("cuda"):
        params["nthread"] = cfg.get("threads") or 0
    sampler = MemGetInfoSampler()
    if device.startswith("cuda"):
        import cupy

        cupy.zeros(1)  # create the context before the baseline (as for XGBoost)
    used_before = sampler.used_now()
    backend = get_backend(device)

    class RoundTimer(gpuboost.TrainingCallback):
        def __init__(self):
            self.times = []

        def before_training(self, model):
            backend.synchronize()
            self.last = time.perf_counter()
            return model

        def after_iteration(self, model, epoch, evals_log):
            backend.synchronize()
            now = time.perf_counter()
            self.times.append(now - self.last)
            self.last = now
            return False

    hook = _pool_peak_hook() if device.startswith("cuda") else None
    start = time.perf_counter()
    dtrain = gpuboost.Dataset(X_tr, label=y_tr)
    dataset_s = time.perf_counter() - start
    # warm-up: kernel compilation, device bins (cached on dtrain); memory measured here
    start = time.perf_counter()
    with sampler:
        if hook is not None:
            with hook:
                gpuboost.train(params, dtrain, cfg["warmup_rounds"], verbose_eval=False)
        else:
            gpuboost.train(params, dtrain, cfg["warmup_rounds"], verbose_eval=False)
        _synchronize(device)
    warmup_s = time.perf_counter() - start
    timer = RoundTimer()
    start = time.perf_counter()
    booster = gpuboost.train(params, dtrain, cfg["rounds"], verbose_eval=False, callbacks=[timer])
    _synchronize(device)
    train_s = time.perf_counter() - start
    auc = _auc(y_te, booster.predict(X_te))
    result = {
        "library": "gpuboost",
        "version": gpuboost.__version__,
        "device": device,
        "dataset_s": dataset_s,
        "warmup_s": warmup_s,
        "construct_s": dataset_s + warmup_s,
        "train_s": train_s,
        "ms_per_round": 1000 * train_s / cfg["rounds"],
        "median_round_ms": 1000 * float(np.median(timer.times)),
        "test_auc": auc,
        "peak_mem_mib": (None if used_before is None else _mib(sampler.peak_used - used_before)),
        "pool_peak_used_mib": None if hook is None else _mib(hook.peak_used),
        "pool_peak_total_mib": None if hook is None else _mib(hook.peak_total),
        "floor_bytes": floor_bytes(booster.trees, X_tr.shape[1], cfg["depth"]),
        "leaves_per_tree": float(np.mean([t.n_leaves for t in booster.trees])),
    }
    if cfg.get("profile"):
        profile_rounds = min(cfg["rounds"], cfg.get("phase_rounds") or DEFAULT_PHASE_ROUNDS)
        profiler = cProfile.Profile()
        profiler.enable()
        gpuboost.train(params, dtrain, profile_rounds, verbose_eval=False)
        _synchronize(device)
        profiler.disable()
        result["host_profile"] = host_profile(profiler, profile_rounds)
    if cfg.get("phases"):
        import contextlib
        import io

        phase_rounds = min(cfg["rounds"], cfg.get("phase_rounds") or DEFAULT_PHASE_ROUNDS)
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            gpuboost.train(dict(params, verbosity=2), dtrain, phase_rounds, verbose_eval=False)
        result["phases"] = captured.getvalue().strip()
        result["phase_ms_per_round"] = phase_ms_per_round(result["phases"], phase_rounds)
    return result


def host_profile(profiler, rounds, top=PROFILE_TOP):
    """The ``top`` functions of a ``cProfile`` run of ``rounds`` rounds by their own time
    (``tottime``): ``[{"function", "calls", "own_ms_per_round", "cumulative_ms_per_round"}]``
    after ``{"function": "(all)", "own_ms_per_round": ...}``, the profiled round. On a
    GPU a round whose profile is mostly Python is host-bound: the device waits for it
    (RESULTS.md, "First GPU run")."""
    stats = pstats.Stats(profiler).stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
    entries = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)
    total = sum(tt for _, _, tt, _, _ in stats.values())
    rows = [{"function": "(all)", "own_ms_per_round": 1000 * total / rounds}]
    for (filename, line, name), (_, calls, own, cumulative, _) in entries[:top]:
        short = filename.split("site-packages/")[-1].replace(str(REPO_ROOT) + os.sep, "")
        rows.append(
            {
                "function": f"{short}:{line}({name})",
                "calls": calls,
                "own_ms_per_round": 1000 * own / rounds,
                "cumulative_ms_per_round": 1000 * cumulative / rounds,
            }
        )
    return rows


def phase_ms_per_round(timings, rounds):
    """Milliseconds per round of every phase in gpuboost's ``verbosity=2`` timings line
    (``... phase timings: gradients 0.120s, histogram 1.234s, ...``) of ``rounds`` rounds."""
    line = next((text for text in timings.splitlines() if "phase timings:" in text), "")
    _, _, listed = line.partition("phase timings:")
    return {name: 1000 * float(seconds) / rounds for name, seconds in _PHASE_TIMING.findall(listed)}


def _device_ops():
    """benchmarks/device_ops.py as a module (the owner of the model's extrapolation)."""
    import importlib.util

    path = Path(__file__).resolve().with_name("device_ops.py")
    spec = importlib.util.spec_from_file_location("gpuboost_benchmark_device_ops", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_model(path):
    """The modeled configuration of a ``benchmarks/device_ops.py`` JSON file, or raise
    ValueError when it lacks one (or the fit of its bytes against the rows)."""
    data = json.loads(Path(path).read_text())
    configuration = data.get("configurations", {}).get(MODEL_CONFIGURATION)
    if configuration is None or "fit" not in configuration:
        raise ValueError(
            f"{path}: no {MODEL_CONFIGURATION!r} configuration with a fit (run "
            f"benchmarks/device_ops.py --configs '{MODEL_CONFIGURATION}' with --fit-rows > 0)"
        )
    return dict(configuration, features=data["features"])


def modeled_phase_ms(model, n_rows):
    """Modeled H100 milliseconds per round of every phase at ``n_rows`` rows
    (``device_ops.model_round``: the phase's bytes at ``n_rows`` from the fit of the two
    sizes device_ops.py measured, plus its launches and syncs per round as measured)."""
    modeled = _device_ops().model_round(model, n_rows)
    return {phase: values["modeled_ms"] for phase, values in modeled["per_phase"].items()}


def print_model_comparison(model, results):
    """Per size (with the model's feature count): modeled and measured ms per phase and
    per round, and XGBoost's ms per round. Returns the rows printed (for the JSON)."""
    rows = []
    print()
    print(
        f"Modeled (emulation traffic model, {model['rows']:,} rows fitted; H100 constants) "
        "against measured (verbosity=2 phase timings):"
    )
    print("| data | phase | modeled ms | measured ms | measured / modeled |")
    print("|---|---|---|---|---|")
    sizes = sorted({(r["rows"], r["features"], r["size"]) for r in results if "error" not in r})
    for n_rows, n_features, label in sizes:
        if n_features != model["features"]:
            print(f"| {label} | (model is for {model['features']} features) | n/a | n/a | n/a |")
            continue
        ours = next((r for r in results if r["size"] == label and r["library"] == "gpuboost"), None)
        peer = next((r for r in results if r["size"] == label and r["library"] == "xgboost"), None)
        modeled = modeled_phase_ms(model, n_rows)
        measured = (ours or {}).get("phase_ms_per_round") or {}
        for phase in sorted(set(modeled) | set(measured), key=lambda p: -modeled.get(p, 0.0)):
            row = {
                "size": label,
                "phase": phase,
                "modeled_ms": modeled.get(phase),
                "measured_ms": measured.get(phase),
            }
            rows.append(row)
            ratio = (
                row["measured_ms"] / row["modeled_ms"]
                if row["measured_ms"] is not None and row["modeled_ms"]
                else None
            )
            print(
                f"| {label} | {phase} | {_f(row['modeled_ms'], '.3f')} | "
                f"{_f(row['measured_ms'], '.3f')} | {_f(ratio, '.2f')} |"
            )
        total_modeled = sum(modeled.values())
        total_measured = None if ours is None or "error" in ours else ours["ms_per_round"]
        rows.append(
            {
                "size": label,
                "phase": "round",
                "modeled_ms": total_modeled,
                "measured_ms": total_measured,
                "xgboost_ms": None if peer is None or "error" in peer else peer["ms_per_round"],
            }
        )
        print(
            f"| {label} | **round** (gpuboost ms/round) | {total_modeled:.3f} | "
            f"{_f(total_measured, '.3f')} | "
            f"{_f(total_measured and total_measured / total_modeled, '.2f')} |"
        )
        print(
            f"| {label} | XGBoost device={(peer or {}).get('device', 'cuda')!r} ms/round | | "
            f"{_f(rows[-1]['xgboost_ms'], '.3f')} | |"
        )
        print(
            f"MODEL: {label} modeled {total_modeled:.2f} ms, measured "
            f"{_f(total_measured, '.2f')} ms, xgboost {_f(rows[-1]['xgboost_ms'], '.2f')} ms"
        )
    return rows


def worker_xgboost(cfg):
    import xgboost as xgb

    device = cfg["device"]
    X_tr, y_tr, X_te, y_te = _load(cfg["data_prefix"], cfg["n_train"])
    params = {
        "objective": "binary:logistic",
        "tree_method": "hist",
        "device": device,
        "max_bin": MAX_BIN + 1,
        "learning_rate": LEARNING_RATE,
        "max_depth": cfg["depth"],
        "reg_lambda": 1.0,
        "min_child_weight": 1.0,
        "verbosity": 0,
    }
    if not device.startswith("cuda"):
        params["nthread"] = cfg.get("threads") or 0

    class RoundTimer(xgb.callback.TrainingCallback):
        def __init__(self):
            super().__init__()
            self.times = []

        def before_training(self, model):
            _synchronize(device)
            self.last = time.perf_counter()
            return model

        def after_iteration(self, model, epoch, evals_log):
            _synchronize(device)
            now = time.perf_counter()
            self.times.append(now - self.last)
            self.last = now
            return False

    sampler = MemGetInfoSampler()
    on_gpu = device.startswith("cuda")
    if on_gpu:
        import cupy

        cupy.zeros(1)  # create the context before the baseline
        used_before = sampler.used_now()
        X_in, y_in = cupy.asarray(X_tr), cupy.asarray(y_tr)
        _synchronize(device)
        used_inputs = sampler.used_now() - used_before
    else:
        used_before, X_in, y_in, used_inputs = None, X_tr, y_tr, 0
    start = time.perf_counter()
    with sampler:
        dtrain = xgb.QuantileDMatrix(X_in, label=y_in, max_bin=MAX_BIN + 1)
        _synchronize(device)
    peak_construct = None if used_before is None else sampler.peak_used - used_before - used_inputs
    del X_in, y_in
    if on_gpu:
        cupy.get_default_memory_pool().free_all_blocks()
    dataset_s = time.perf_counter() - start
    start = time.perf_counter()
    sampler_train = MemGetInfoSampler()
    with sampler_train:
        xgb.train(params, dtrain, cfg["warmup_rounds"])
        _synchronize(device)
    warmup_s = time.perf_counter() - start
    peak_train = None if used_before is None else sampler_train.peak_used - used_before
    timer = RoundTimer()
    start = time.perf_counter()
    booster = xgb.train(params, dtrain, cfg["rounds"], callbacks=[timer])
    _synchronize(device)
    train_s = time.perf_counter() - start
    # XGBoost silently falls back to the CPU when it sees no GPU: check what it used.
    device_used = json.loads(booster.save_config())["learner"]["generic_param"].get("device")
    if on_gpu and not str(device_used).startswith("cuda"):
        raise RuntimeError(
            f"XGBoost trained on {device_used!r}, not on the GPU "
            f"(build_info USE_CUDA={xgb.build_info().get('USE_CUDA')})"
        )
    if on_gpu:
        import cupy

        pred = cupy.asnumpy(booster.inplace_predict(cupy.asarray(X_te)))
    else:
        pred = booster.inplace_predict(X_te)
    return {
        "library": "xgboost",
        "version": xgb.__version__,
        "device": device,
        "device_used": device_used,
        "dataset_s": dataset_s,
        "warmup_s": warmup_s,
        "construct_s": dataset_s + warmup_s,
        "train_s": train_s,
        "ms_per_round": 1000 * train_s / cfg["rounds"],
        "median_round_ms": 1000 * float(np.median(timer.times)),
        "test_auc": _auc(y_te, pred),
        "peak_mem_mib": (None if peak_train is None else _mib(max(peak_construct, peak_train))),
    }


def worker_bandwidth(cfg):
    """Device-to-device copy bandwidth (bytes read + written per second)."""
    n_bytes = int(cfg["bandwidth_gb"] * 1e9)
    reps = cfg["bandwidth_reps"]
    if cfg["device"].startswith("cuda"):
        import cupy

        src = cupy.ones(n_bytes, dtype=cupy.uint8)
        dst = cupy.empty_like(src)
        stream = cupy.cuda.get_current_stream()
        dst.data.copy_from_device_async(src.data, n_bytes, stream)  # warm-up
        stream.synchronize()
        times = []
        for _ in range(reps):
            begin, end = cupy.cuda.Event(), cupy.cuda.Event()
            begin.record(stream)
            dst.data.copy_from_device_async(src.data, n_bytes, stream)
            end.record(stream)
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(begin, end) / 1000.0)
        method = f"cupy device-to-device cudaMemcpyAsync of {n_bytes / 1e9:.2f} GB"
        ok = bool((dst[:: max(1, n_bytes // 1024)] == 1).all())
    else:
        src = np.ones(n_bytes, dtype=np.uint8)
        dst = np.empty_like(src)
        np.copyto(dst, src)
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            np.copyto(dst, src)
            times.append(time.perf_counter() - start)
        method = f"host numpy copy of {n_bytes / 1e9:.3f} GB (dry run)"
        ok = bool(dst[-1] == 1)
    bandwidths = [2.0 * n_bytes / t for t in times]
    return {
        "device_name": _device_name() if cfg["device"].startswith("cuda") else None,
        "method": method,
        "reps": reps,
        "best_bytes_per_s": max(bandwidths),
        "median_bytes_per_s": float(np.median(bandwidths)),
        "copy_ok": ok,
    }


WORKERS = {"gpuboost": worker_gpuboost, "xgboost": worker_xgboost, "bandwidth": worker_bandwidth}


def run_worker(name, cfg, timeout):
    """Run a worker in a fresh process; returns its result dict or {'error': ...}."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg_path = Path(tmp) / "cfg.json"
        out_path = Path(tmp) / "result.json"
        cfg_path.write_text(json.dumps(cfg))
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            name,
            "--worker-config",
            str(cfg_path),
            "--worker-result",
            str(out_path),
        ]
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout} s"}
        seconds = time.perf_counter() - start
        if not out_path.exists():
            return {"error": f"worker exited with status {proc.returncode}", "process_s": seconds}
        result = json.loads(out_path.read_text())
        if proc.returncode != 0 and "error" not in result:
            result["error"] = f"worker exited with status {proc.returncode}"
        result["process_s"] = seconds
        return result


def worker_main(name, cfg_path, out_path):
    cfg = json.loads(Path(cfg_path).read_text())
    try:
        result = WORKERS[name](cfg)
    except Exception as error:  # report the reason to the parent, traceback on stderr
        import traceback

        traceback.print_exc()
        Path(out_path).write_text(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 1
    Path(out_path).write_text(json.dumps(result))
    return 0


# --------------------------------------------------------------------------- #
# report
# --------------------------------------------------------------------------- #
def _f(value, fmt):
    return "n/a" if value is None else format(value, fmt)


def _device_name():
    try:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default=None, help=f"comma-separated ROWSxFEATURES (default {DEFAULT_SIZES})"
    )
    parser.add_argument("--quick", action="store_true", help=f"only {QUICK_SIZES}")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="tiny data on the CPU (device='cpu'): exercises the code paths",
    )
    parser.add_argument("--test-rows", type=int, default=None, help="default 100000")
    parser.add_argument("--rounds", type=int, default=None, help="default 100")
    parser.add_argument("--warmup-rounds", type=int, default=None, help="default 5")
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--libs", default="gpuboost,xgboost")
    parser.add_argument("--device", default=None, help="default cuda (cpu with --dry-run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bandwidth-gb", type=float, default=None, help="default 1.0")
    parser.add_argument("--bandwidth-reps", type=int, default=5)
    parser.add_argument(
        "--phases",
        action="store_true",
        help="also print gpuboost's per-phase timings (verbosity=2, --phase-rounds rounds)",
    )
    parser.add_argument("--phase-rounds", type=int, default=DEFAULT_PHASE_ROUNDS)
    parser.add_argument(
        "--profile",
        action="store_true",
        help=f"also profile gpuboost's host code (cProfile, --phase-rounds rounds): the "
        f"{PROFILE_TOP} functions with the most own time per round",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="a benchmarks/device_ops.py JSON: print modeled against measured per phase "
        "(implies --phases)",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help="where the generated .npy files go (default a temporary folder)",
    )
    parser.add_argument("--worker-timeout", type=int, default=1800)
    parser.add_argument("--threads", type=int, default=2, help="XGBoost threads with --dry-run")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit status 3 when a target is missed (default: 0 once it ran)",
    )
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--worker-config", help=argparse.SUPPRESS)
    parser.add_argument("--worker-result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(args.worker, args.worker_config, args.worker_result)
    model = None
    if args.model:
        try:
            model = load_model(args.model)
        except (OSError, ValueError) as error:
            print(f"error: --model: {error}", file=sys.stderr)
            return 2
        args.phases = True

    dry = args.dry_run
    sizes = parse_sizes(
        args.sizes or (DRY_RUN_SIZES if dry else QUICK_SIZES if args.quick else DEFAULT_SIZES)
    )
    test_rows = args.test_rows or (2000 if dry else 100_000)
    rounds = args.rounds or (5 if dry else 100)
    warmup_rounds = args.warmup_rounds or (1 if dry else 5)
    device = args.device or ("cpu" if dry else "cuda")
    bandwidth_gb = args.bandwidth_gb or (0.05 if dry else 1.0)
    libs = [lib for lib in args.libs.split(",") if lib]
    notes = []
    for lib in list(libs):
        if lib not in ("gpuboost", "xgboost"):
            parser.error(f"unknown library {lib!r}")
        try:
            __import__(lib)
        except Exception as error:
            notes.append(f"{lib} is not importable ({type(error).__name__}: {error}): skipped")
            libs.remove(lib)
    if device.startswith("cuda"):
        try:
            import cupy  # noqa: F401
        except Exception as error:
            print(
                f"error: device={device!r} needs CuPy ({error}); use --dry-run on a CPU",
                file=sys.stderr,
            )
            return 2
    for note in notes:
        print(f"note: {note}", flush=True)

    print(
        f"# gpu_bench: device={device}, depth {args.depth}, 256 bins, {rounds} rounds "
        f"(+{warmup_rounds} warm-up), sizes {[size_label(*s) for s in sizes]}, "
        f"{test_rows} test rows",
        flush=True,
    )

    base_cfg = {
        "device": device,
        "depth": args.depth,
        "rounds": rounds,
        "warmup_rounds": warmup_rounds,
        "threads": args.threads,
        "bandwidth_gb": bandwidth_gb,
        "bandwidth_reps": args.bandwidth_reps,
        "phases": args.phases,
        "phase_rounds": args.phase_rounds,
        "profile": args.profile,
    }
    bandwidth = run_worker("bandwidth", base_cfg, args.worker_timeout)
    device_name = None
    if "error" in bandwidth:
        print(f"bandwidth measurement failed: {bandwidth['error']}", flush=True)
        best_bw = None
    else:
        best_bw = bandwidth["best_bytes_per_s"]
        device_name = bandwidth.get("device_name")
        if device_name:
            print(f"# GPU: {device_name}", flush=True)
        print(
            f"# bandwidth: {bandwidth['method']}, {bandwidth['reps']} reps: best "
            f"{best_bw / 1e9:.1f} GB/s, median {bandwidth['median_bytes_per_s'] / 1e9:.1f} GB/s "
            f"(read + write)",
            flush=True,
        )

    results = []
    with tempfile.TemporaryDirectory(dir=args.data_dir) as data_dir:
        for n_train, n_features in sizes:
            label = size_label(n_train, n_features)
            start = time.perf_counter()
            X, y, generator = generate(n_train + test_rows, n_features, args.seed)
            prefix = str(Path(data_dir) / f"higgs_{n_train}x{n_features}")
            np.save(f"{prefix}_X.npy", X)
            np.save(f"{prefix}_y.npy", y)
            del X, y
            gc.collect()
            print(
                f"# {label}: generated with {generator} in {time.perf_counter() - start:.1f} s",
                flush=True,
            )
            for lib in libs:
                cfg = dict(base_cfg, data_prefix=prefix, n_train=n_train)
                result = run_worker(lib, cfg, args.worker_timeout)
                result.update(
                    {"size": label, "rows": n_train, "features": n_features, "library": lib}
                )
                if "error" in result:
                    print(f"  {label:<10} {lib:<9} FAILED: {result['error']}", flush=True)
                else:
                    print(
                        f"  {label:<10} {lib:<9} train {result['train_s']:8.2f} s, "
                        f"{result['ms_per_round']:8.2f} ms/round (median "
                        f"{result['median_round_ms']:.2f}), peak "
                        f"{_f(result['peak_mem_mib'], '.0f')} MiB, auc "
                        f"{result['test_auc']:.5f}",
                        flush=True,
                    )
                    if result.get("phases"):
                        print(f"    {result['phases']}", flush=True)
                    for row in result.get("host_profile") or ():
                        print(
                            f"    profile {row['own_ms_per_round']:7.3f} ms/round own, "
                            f"{_f(row.get('cumulative_ms_per_round'), '7.3f')} cumulative, "
                            f"{_f(row.get('calls'), 'd')} calls: {row['function']}",
                            flush=True,
                        )
                results.append(result)
            for suffix in ("_X.npy", "_y.npy"):
                os.remove(prefix + suffix)

    # ---- tables ----
    print()
    print(
        "| data | library | construct s | train s | ms/round | median round ms | "
        "peak device MiB | test AUC |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['size']} | {r['library']} | FAILED: {r['error']} | | | | | |")
            continue
        print(
            f"| {r['size']} | {r['library']} | {r['construct_s']:.2f} | {r['train_s']:.2f} | "
            f"{r['ms_per_round']:.2f} | {r['median_round_ms']:.2f} | "
            f"{_f(r['peak_mem_mib'], '.0f')} | {r['test_auc']:.5f} |"
        )
    pool = [r for r in results if r.get("pool_peak_total_mib") is not None]
    if pool:
        print(
            "\ngpuboost CuPy pool high-water (MiB): "
            + "; ".join(
                f"{r['size']}: used {r['pool_peak_used_mib']:.0f}, reserved "
                f"{r['pool_peak_total_mib']:.0f}"
                for r in pool
            )
        )

    print()
    print(
        "| data | gpuboost ms/round | xgboost ms/round | speedup | AUC gpuboost - xgboost | "
        f"{SPEEDUP_TARGET}x target | floor MB/round | floor ms | gpuboost / floor | "
        f"{FLOOR_TARGET}x target |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    any_fail = False
    for n_train, n_features in sizes:
        label = size_label(n_train, n_features)
        ours = next(
            (
                r
                for r in results
                if r["size"] == label and r["library"] == "gpuboost" and "error" not in r
            ),
            None,
        )
        peer = next(
            (
                r
                for r in results
                if r["size"] == label and r["library"] == "xgboost" and "error" not in r
            ),
            None,
        )
        row = {"size": label}
        if ours is not None and peer is not None:
            row["speedup"] = peer["ms_per_round"] / ours["ms_per_round"]
            row["auc_diff"] = ours["test_auc"] - peer["test_auc"]
            row["speed_target_met"] = (
                row["speedup"] >= SPEEDUP_TARGET and row["auc_diff"] >= -AUC_TOLERANCE
            )
        if ours is not None and best_bw:
            row["floor_bytes"] = ours["floor_bytes"]["total"]
            row["floor_ms"] = 1000 * row["floor_bytes"] / best_bw
            row["floor_ratio"] = ours["ms_per_round"] / row["floor_ms"]
            row["floor_target_met"] = row["floor_ratio"] <= FLOOR_TARGET
        for key in ("speed_target_met", "floor_target_met"):
            if row.get(key) is False:
                any_fail = True
        summary.append(row)

        def verdict(key, row=row):
            return {True: "PASS", False: "FAIL", None: "n/a"}[row.get(key)]

        print(
            f"| {label} | {_f(ours and ours['ms_per_round'], '.2f')} | "
            f"{_f(peer and peer['ms_per_round'], '.2f')} | {_f(row.get('speedup'), '.2f')}"
            f"{'x' if row.get('speedup') is not None else ''} | "
            f"{_f(row.get('auc_diff'), '+.5f')} | {verdict('speed_target_met')} | "
            f"{_f(row.get('floor_bytes') and row['floor_bytes'] / 1e6, '.0f')} | "
            f"{_f(row.get('floor_ms'), '.3f')} | {_f(row.get('floor_ratio'), '.1f')}"
            f"{'x' if row.get('floor_ratio') is not None else ''} | "
            f"{verdict('floor_target_met')} |"
        )
    floors = [r for r in results if r.get("floor_bytes")]
    if floors:
        print(
            "\nfloor breakdown per round (MB): "
            + "; ".join(
                f"{r['size']}: histogram rows {r['floor_bytes']['histogram_rows'] / 1e6:.0f}, "
                f"histogram tables {r['floor_bytes']['histogram_tables'] / 1e6:.0f}, "
                f"partition {r['floor_bytes']['partition'] / 1e6:.0f}"
                for r in floors
            )
        )
    model_rows = print_model_comparison(model, results) if model is not None else None
    if dry:
        print("note: dry run on the CPU: figures exercise the code only, not the targets")

    if args.json:
        out = {
            "script": "benchmarks/gpu_bench.py",
            "argv": sys.argv[1:],
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": {
                "nproc": os.cpu_count(),
                "gpu": device_name,
                "python": platform.python_version(),
            },
            "device": device,
            "rounds": rounds,
            "warmup_rounds": warmup_rounds,
            "depth": args.depth,
            "test_rows": test_rows,
            "bandwidth": bandwidth,
            "results": results,
            "summary": summary,
            "model_comparison": model_rows,
            "notes": notes,
            "dry_run": dry,
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")
    failed_runs = any("error" in r for r in results) or "error" in bandwidth

    def overall(key):
        flags = [row.get(key) for row in summary if row.get(key) is not None]
        return "n/a" if not flags else ("PASS" if all(flags) else "FAIL")

    # One machine-readable line, read by benchmarks/gpu_check.sh.
    print(
        f"TARGETS: speed {overall('speed_target_met')}, floor {overall('floor_target_met')}"
        f"{' (dry run)' if dry else ''}{'; some runs FAILED' if failed_runs else ''}"
    )
    if failed_runs:
        return 1
    return 3 if (args.strict and any_fail and not dry) else 0


if __name__ == "__main__":
    sys.exit(main())
