"""pytest plugin: build the compiled code once, on every core, before xdist's workers start.

On a fresh checkout the suite's first tests would compile the CPU backend's Numba kernels
and the emulated CUDA kernels (g++) in every worker at once, the same kernels in the same
order (and the workers' waits for each other, under the caches' file locks, would keep the
other cores idle). So the controller of an xdist run first builds them, split over the
cores: two processes train small models of different configurations (each kernel and
signature is compiled by whichever process reaches it first, under
``gpuboost.core.file_lock``; the other loads it), while threads run g++ on every
``cuda/*.cu`` file in both flavours (plain, and instrumented for the sanitizer and the
traffic model). With warm caches this costs the imports and a second.

The warm-up is skipped in a run without workers (``-n 0``) and by ``--collect-only``;
whatever it misses is compiled where it is first used, as without it.
"""

import concurrent.futures
import os
import subprocess
import sys
import time
from pathlib import Path

from gpuboost.backends.cuda.launch import EMULATED, get_module
from gpuboost.backends.cuda.sources import cuda_source_dir

REPO_ROOT = Path(__file__).resolve().parents[1]

#: What each warm-up process trains, small: together, every kernel family the suite's
#: first tests reach (depthwise and lossguide, the pointwise objectives, multiclass,
#: categorical, sparse and bundled input, sampling, prediction and SHAP).
_WARM_UP_SCRIPTS = (
    """
import numpy as np
import gpuboost
rng = np.random.default_rng(0)
X = rng.normal(size=(600, 6))
X[rng.random(X.shape) < 0.1] = np.nan
y = (np.nan_to_num(X[:, 0]) + rng.normal(size=600) > 0).astype(float)
for params in ({"objective": "binary:logistic"}, {"objective": "reg:squarederror", "nthread": 1},
               {"objective": "reg:huber", "subsample": 0.8}):
    dtrain = gpuboost.Dataset(X, label=y)
    booster = gpuboost.train(dict(params, device="cpu", max_depth=4), dtrain, 3,
                             evals=[(dtrain, "train")], verbose_eval=False)
    booster.predict(X)
    booster.predict(X, pred_contribs=True)
booster.predict(X[:50], pred_interactions=True)
booster.predict(X, pred_leaf=True)
""",
    """
import numpy as np
import pandas as pd
import scipy.sparse
import gpuboost
rng = np.random.default_rng(1)
X = rng.normal(size=(600, 6))
y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)
for params in ({"objective": "multi:softprob", "num_class": 3, "grow_policy": "lossguide",
                "max_leaves": 8},
               {"objective": "multi:softmax", "num_class": 3, "data_sample_strategy": "goss"}):
    booster = gpuboost.train(dict(params, device="cpu"), gpuboost.Dataset(X, label=y), 3)
    booster.predict(X)
onehot = scipy.sparse.random(600, 30, density=0.05, format="csr", random_state=2)
booster = gpuboost.train({"device": "cpu", "enable_bundle": True},
                         gpuboost.Dataset(onehot, label=y), 3)
booster.predict(onehot)
frame = pd.DataFrame({"c": pd.Categorical(rng.choice(list("abcdefgh"), 600)), "x": X[:, 0]})
booster = gpuboost.train({"device": "cpu", "max_cat_to_onehot": 1},
                         gpuboost.Dataset(frame, label=y), 3)
booster.predict(frame, pred_contribs=True)
""",
)

_REPORT = {}


def _train(script):
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    return completed.returncode, completed.stderr[-2000:]


def _build_emulated_kernels(stem, instrumented):
    get_module(EMULATED, stem)._load(instrumented=instrumented)


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:  # a worker: the controller did
        return
    if not getattr(config.option, "numprocesses", None) or config.option.collectonly:
        return
    started = time.perf_counter()
    cores = os.cpu_count() or 1
    stems = [path.stem for path in sorted(cuda_source_dir().glob("*.cu"))]
    trainers = concurrent.futures.ThreadPoolExecutor(max_workers=len(_WARM_UP_SCRIPTS))
    compilers = concurrent.futures.ThreadPoolExecutor(max_workers=cores)
    with trainers, compilers:
        trainings = [trainers.submit(_train, script) for script in _WARM_UP_SCRIPTS]
        builds = [
            compilers.submit(_build_emulated_kernels, stem, instrumented)
            for instrumented in (False, True)
            for stem in stems
        ]
        failures = [message for status, message in (t.result() for t in trainings) if status]
        for build in builds:
            build.result()
    _REPORT["seconds"] = time.perf_counter() - started
    _REPORT["failures"] = failures


def pytest_terminal_summary(terminalreporter):
    if not _REPORT:
        return
    terminalreporter.write_line(
        f"warm-up before the workers: {_REPORT['seconds']:.1f} s (Numba kernels in "
        f"{len(_WARM_UP_SCRIPTS)} processes, g++ on every kernel file in both flavours)"
    )
    for message in _REPORT["failures"]:  # the tests that need it fail on their own
        terminalreporter.write_line(f"warm-up training failed:\n{message}")
