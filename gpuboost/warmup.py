"""Compile the CPU backend's kernels ahead of the first training: ``gpuboost compile``.

The compiled CPU kernels (:mod:`gpuboost.backends.cpu`) are Numba functions; Numba
compiles one for each combination of argument types it is first called with, and caches
the machine code on disk (:mod:`gpuboost.backends.cpu.jit`). Without a cache, a first
training pays the compiles: about 35-50 s on 2 cores for the kernels a 10k-row binary
training touches. :func:`warm_up` runs, on tiny data, every kind of training and
prediction the README shows (each objective, both growth policies, the three tree
methods, AdaBoost, sampling, constraints, weights, missing values, categorical and
sparse features, feature bundling, GOSS, two bin counts, float32 and float64 input in C
and Fortran order, writable and read-only, early stopping with an
eval set, leaf indices, SHAP values and interactions), so that every kernel signature
they use is compiled once and written to the cache. Whatever a user trains next loads
from the cache instead of compiling (docs/DESIGN.md, "Cold start").

Where it runs:

* at install: ``pip install -e .`` runs it in the build environment
  (``scripts/build_backend.py``), so the first training after the README's install
  command finds the cache ready;
* on demand: ``gpuboost compile`` (after a non-editable install, in a Dockerfile, or
  after ``NUMBA_CACHE_DIR`` moved the cache).

Work is spread over ``processes`` worker processes, which compile the training kernels
and the prediction kernels (SHAP's included) at the same time (:data:`MODES`); the file
lock of :func:`gpuboost.backends.cpu.jit._compile_once_across_processes` makes each
kernel compile once however many processes reach it.
"""

import contextlib
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .backends.cpu.jit import CPU_KERNELS_ENV_VAR, compiled_kernels_reason, forced_variant
from .boosting.train import train
from .data.dataset import Dataset, label_arguments
from .objectives.registry import OBJECTIVES

__all__ = ["MODES", "VARIANTS", "WARM_UP_GROUPS", "warm_up", "warm_up_group"]

#: Rows of the warm-up data: enough for every objective to grow a few splits.
_ROWS = 240
#: Features of the warm-up data.
_FEATURES = 6
#: Rounds of each warm-up training.
_ROUNDS = 3


def _data(dtype=np.float64, missing=False, seed=0):
    """Tiny regression/classification data: X (rows, features), a score per row."""
    rng = np.random.default_rng(seed)
    X = rng.random((_ROWS, _FEATURES)).astype(dtype)
    score = X[:, 0] + 0.5 * X[:, 1] - X[:, 2] * X[:, 3]
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, score


def _labels(objective, score):
    """Labels ``objective`` accepts, derived from ``score`` (n_rows,)."""
    if objective.startswith("binary:"):
        return (score > np.median(score)).astype(np.float64)
    if objective.startswith("multi:"):
        return np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype(np.float64)
    if objective.startswith("rank:"):
        return np.digitize(score, np.quantile(score, [0.5, 0.8])).astype(np.float64)
    if objective in ("count:poisson", "reg:gamma", "reg:tweedie"):
        return np.round(2.0 * (score - score.min())) + 1.0
    if objective == "survival:aft":  # intervals: observed and right-censored times
        time = np.round(2.0 * (score - score.min())) + 1.0
        return np.column_stack([time, np.where(score > np.median(score), np.inf, time)])
    return score


def _params(objective, **extra):
    params = {"objective": objective, "max_depth": 4, "verbosity": 0}
    if objective.startswith("multi:"):
        params["num_class"] = 3
    params.update(extra)
    return params


#: What a part compiles: ``'all'``; ``'train'`` (trainings only, predictions skipped); or
#: ``'predict'`` (models trained with the NumPy reference, predictions compiled). Two
#: processes on the two halves compile different kernels at once; on the same part they
#: would both need the training kernels first, and one would wait for the other's locks.
MODES = ("all", "train", "predict")
#: The mode of the part running in this process (:func:`warm_up_group`).
_mode = "all"


@contextlib.contextmanager
def _cpu_kernels(choice):
    """Run the block with ``GPUBOOST_CPU_KERNELS=choice`` ('numba' or 'numpy')."""
    previous = os.environ.get(CPU_KERNELS_ENV_VAR)
    os.environ[CPU_KERNELS_ENV_VAR] = choice
    try:
        yield
    finally:
        if previous is None:
            del os.environ[CPU_KERNELS_ENV_VAR]
        else:
            os.environ[CPU_KERNELS_ENV_VAR] = previous


#: The variants of the parallel kernels (:func:`gpuboost.backends.cpu.jit.sized`): each
#: is compiled, as trainings run the parallel ones (the serial twins with nthread=1) and
#: predictions either, by their size.
VARIANTS = ("parallel", "serial")


def _predict(booster, X, **options):
    """``booster.predict(X, **options)`` with the compiled kernels, both variants,
    unless this part only trains."""
    if _mode == "train":
        return
    with _cpu_kernels("numba"):
        for variant in VARIANTS:
            with forced_variant(variant):
                booster.predict(X, **options)


def _predict_everything(booster, X):
    """Every prediction kind: output, margin, leaf indices, SHAP values, interactions."""
    for options in (
        {},
        {"output_margin": True},
        {"pred_leaf": True},
        {"pred_contribs": True},
        {"pred_interactions": True},
    ):
        _predict(booster, X, **options)


def _objectives():
    """One training per objective on float64 data, with prediction of every kind."""
    X, score = _data()
    groups = np.full(_ROWS // 20, 20)
    for objective in OBJECTIVES:
        label = _labels(objective, score)
        group = groups if objective.startswith("rank:") else None
        booster = train(
            _params(objective),
            Dataset(X, **label_arguments(label), group=group),
            num_boost_round=_ROUNDS,
        )
        _predict_everything(booster, X)


def _layouts(X):
    """``X`` as the kernels may receive it: C and Fortran order (pandas' ``to_numpy`` of
    one dtype block), writable and read-only (memory maps, arrays pandas or Arrow lend);
    Numba compiles a signature for each."""
    variants = []
    for array in (np.ascontiguousarray(X), np.asfortranarray(X)):
        for writeable in (True, False):
            view = array.view()
            view.flags.writeable = writeable
            variants.append(view)
    return variants


def _inputs():
    """float32 and float64 input in every layout, missing values, weights, bin counts,
    an eval set and early stopping."""
    for dtype in (np.float32, np.float64):
        for missing in (False, True):
            X, score = _data(dtype, missing, seed=1)
            label = (score > np.median(score)).astype(np.float64)
            weight = np.linspace(0.5, 1.5, _ROWS)
            for max_bin in (255, 16):
                train_set = Dataset(
                    X[:160], label=label[:160], weight=weight[:160], max_bin=max_bin
                )
                valid_set = Dataset(X[160:], label=label[160:], reference=train_set)
                booster = train(
                    _params("binary:logistic", eval_metric=["logloss", "auc", "error"]),
                    train_set,
                    num_boost_round=_ROUNDS + 2,
                    evals=[(valid_set, "valid")],
                    early_stopping_rounds=2,
                    verbose_eval=False,
                )
                _predict_everything(booster, X)
        for variant in _layouts(X):
            booster = train(
                _params("binary:logistic"), Dataset(variant, label=label), num_boost_round=_ROUNDS
            )
            _predict_everything(booster, variant)


def _growth():
    """Growth policies, tree methods, AdaBoost, sampling, constraints, several targets."""
    X, score = _data(seed=2)
    label = (score > np.median(score)).astype(np.float64)
    variants = [
        {"grow_policy": "lossguide", "max_leaves": 8},
        {"grow_policy": "lossguide", "max_leaves": 8, "max_depth": 0},
        {"tree_method": "approx"},
        {"tree_method": "exact"},
        {"booster": "adaboost"},
        {"subsample": 0.5, "sampling_method": "gradient_based"},
        {"data_sample_strategy": "goss"},
        {"subsample": 0.7, "colsample_bytree": 0.8, "colsample_bynode": 0.8},
        {"monotone_constraints": [1, -1, 0, 0, 0, 0]},
        {"interaction_constraints": [[0, 1], [2, 3, 4, 5]]},
        {"max_depth": 10, "min_child_weight": 0.0},
        {"nthread": 1},
    ]
    for objective in ("binary:logistic", "reg:squarederror"):
        target = label if objective.startswith("binary:") else score
        for variant in variants:
            if variant.get("booster") == "adaboost" and not objective.startswith("binary"):
                continue
            booster = train(
                _params(objective, **variant), Dataset(X, label=target), num_boost_round=_ROUNDS
            )
            _predict_everything(booster, X)
    # Several targets: a tree per target, and vector leaves (their histograms and scan).
    targets = np.column_stack([score, label, score * label])
    for variant in ({}, {"multi_strategy": "multi_output_tree"}):
        booster = train(
            _params("reg:squarederror", **variant),
            Dataset(X, label=targets),
            num_boost_round=_ROUNDS,
        )
        _predict_everything(booster, X)
    # Vector leaves of every cell width (the build is compiled per width: 1-2 outputs, 3-4,
    # 5-6, 7-8, 9 or more; gpuboost.backends.cpu.histogram._width_tag), depthwise (the
    # levels in one compiled call) and lossguide (the grower's loop of kernel calls).
    for n_targets in (2, 3, 5, 7, 9):
        columns = np.column_stack([score * (t + 1) + label for t in range(n_targets)])
        for policy in ({}, {"grow_policy": "lossguide", "max_leaves": 8}):
            train(
                _params("reg:squarederror", multi_strategy="multi_output_tree", **policy),
                Dataset(X, label=columns),
                num_boost_round=1,
            )


def _categorical_and_sparse():
    """Categorical features (codes with NaN) and sparse CSR input (with SciPy)."""
    rng = np.random.default_rng(3)
    X, score = _data(seed=3)
    X[:, 0] = rng.integers(0, 12, _ROWS)
    X[:, 1] = rng.integers(0, 3, _ROWS)
    X[rng.random(_ROWS) < 0.1, 0] = np.nan
    score = score + np.where(np.nan_to_num(X[:, 0]) % 3 == 0, 1.0, 0.0)
    for objective in ("binary:logistic", "reg:squarederror", "multi:softprob"):
        label = _labels(objective, score)
        for grow_policy in ("depthwise", "lossguide"):
            dataset = Dataset(X, label=label, categorical_features=[0, 1])
            booster = train(
                _params(objective, grow_policy=grow_policy, max_cat_to_onehot=4),
                dataset,
                num_boost_round=_ROUNDS,
            )
            _predict_everything(booster, X)
    try:
        import pandas as pd
    except ImportError:  # pandas is optional: DataFrame input needs it
        pass
    else:
        frame = pd.DataFrame(
            {"c": pd.Categorical(rng.choice(list("abcdefgh"), _ROWS)), "x": X[:, 2]}
        )
        booster = train(
            _params("reg:squarederror", max_cat_to_onehot=1),
            Dataset(frame, label=score),
            num_boost_round=_ROUNDS,
        )
        _predict_everything(booster, frame)
    try:
        import scipy.sparse as sparse
    except ImportError:  # SciPy is optional: sparse input needs it
        return
    dense = np.where(rng.random((_ROWS, 40)) < 0.05, rng.random((_ROWS, 40)), 0.0)
    label = (dense[:, :5].sum(axis=1) > 0.1).astype(np.float64)
    for matrix in (sparse.csr_matrix(dense), sparse.csc_matrix(dense)):
        for grow_policy in ("depthwise", "lossguide"):
            booster = train(
                _params("binary:logistic", grow_policy=grow_policy),
                Dataset(matrix, label=label),
                num_boost_round=_ROUNDS,
            )
            _predict(booster, dense, pred_contribs=True)
            booster = train(
                _params("binary:logistic", enable_bundle=True),
                Dataset(matrix, label=label),
                num_boost_round=_ROUNDS,
            )
            # index and value types SciPy produces (int64 indices past 2**31 entries)
            for index_dtype in (np.int32, np.int64):
                for dtype in (np.float32, np.float64):
                    typed = matrix.astype(dtype)
                    typed.indices = typed.indices.astype(index_dtype)
                    typed.indptr = typed.indptr.astype(index_dtype)
                    _predict(booster, typed)
                    Dataset(typed, label=label)


#: The warm-up's independent parts, by name (each runs in one process).
WARM_UP_GROUPS = {
    "objectives": _objectives,
    "inputs": _inputs,
    "growth": _growth,
    "categorical_and_sparse": _categorical_and_sparse,
}


def warm_up_group(name, mode="all", variant="parallel"):
    """Run one part of the warm-up (a key of :data:`WARM_UP_GROUPS`) in this process, in
    one of :data:`MODES`, its trainings with the parallel kernels' ``variant`` (one of
    :data:`VARIANTS`; predictions run both)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}.")
    global _mode
    _mode = mode
    try:
        with forced_variant(variant), _cpu_kernels("numpy" if mode == "predict" else "numba"):
            WARM_UP_GROUPS[name]()
    finally:
        _mode = "all"


def _run_parts(parts):
    """Run ``parts``, a list of (part name, mode, variant), in this process (a child of
    :func:`warm_up`)."""
    for name, mode, variant in parts:
        warm_up_group(name, mode, variant)


def warm_up(processes=None, say=None):
    """Compile and cache every kernel signature the README's trainings use.

    Parameters
    ----------
    processes : int, optional
        Worker processes (default: the CPU count). With 1 the parts run in this
        process; with more, in child processes, each part three times: training with
        each variant of the parallel kernels (:data:`VARIANTS`) and predicting
        (:data:`MODES`).
    say : callable, optional
        Called with each progress line (str).

    Returns
    -------
    float
        Seconds taken (0.0 when the compiled kernels are not in use: the NumPy reference
        needs no compiling, and ``say`` is told why).
    """
    say = say or (lambda line: None)
    reason = compiled_kernels_reason()
    if reason is not None:
        say(f"nothing to compile: {reason}")
        return 0.0
    started = time.perf_counter()
    processes = processes or os.cpu_count() or 1
    if processes <= 1:
        for name in WARM_UP_GROUPS:
            warm_up_group(name, "all", "parallel")
            warm_up_group(name, "train", "serial")
            say(f"compiled: {name} ({time.perf_counter() - started:.1f} s)")
        return time.perf_counter() - started
    # Each part three times in child processes: training with the parallel kernels (about
    # half of the processes), then predicting and training with the serial twins (the
    # others), so that kernels of different kinds compile side by side.
    trainers = (processes + 1) // 2
    work = [[] for _ in range(processes)]
    for index, name in enumerate(WARM_UP_GROUPS):
        work[index % trainers].append((name, "train", "parallel"))
        others = trainers + index % (processes - trainers)
        work[others].append((name, "predict", "parallel"))
    for index, name in enumerate(WARM_UP_GROUPS):
        work[trainers + index % (processes - trainers)].append((name, "train", "serial"))
    children = []
    for parts in filter(None, work):
        log = tempfile.TemporaryFile(mode="w+")  # a pipe could fill and block it
        # One thread each: parallel kernels of several processes on the same cores would
        # oversubscribe them (the threads of Numba's pool spin while they wait). The
        # compiled kernels do not depend on the thread count.
        environment = dict(os.environ, NUMBA_NUM_THREADS="1")
        command = [sys.executable, "-c", f"import gpuboost.warmup as w; w._run_parts({parts!r})"]
        process = subprocess.Popen(command, stderr=log, env=environment)
        described = ", ".join(f"{name} ({mode}, {variant})" for name, mode, variant in parts)
        children.append((described, process, log))
    failures = []
    for parts, process, log in children:
        process.wait()
        if process.returncode != 0:
            log.seek(0)
            failures.append(f"{parts}: {log.read().strip()[-2000:]}")
        log.close()
        say(f"compiled: {parts} ({time.perf_counter() - started:.1f} s)")
    if failures:
        raise RuntimeError("the kernel warm-up failed in " + "; ".join(failures))
    return time.perf_counter() - started
