"""The reference accuracy tasks of /work/shared/REFERENCE.md, shared by
``tests/test_accuracy.py`` and ``benchmarks/accuracy.py``.

Not a test module (no ``test_`` prefix, so pytest does not collect it). It lives
in ``tests/`` rather than in the library so that ``gpuboost`` itself carries no
benchmark data paths; ``benchmarks/accuracy.py`` imports it by putting this
directory on ``sys.path``.

Data: LightGBM's example files, expected at ``<repo>/../shared/data/lightgbm-examples``
(override with the environment variable ``GPUBOOST_REFERENCE_DATA``):
``binary.train/test``, ``regression.train/test``, ``multiclass.train/test`` -- TSV,
label first. Settings (the same for every library): 100 rounds, learning rate 0.1,
max depth 6, 256 bins (255 value bins; XGBoost max_bin=256), L2 1, min child
hessian 1; LightGBM num_leaves=64, min_data_in_leaf=1, min_sum_hessian_in_leaf=1;
scikit-learn max_leaf_nodes=64, min_samples_leaf=1, l2_regularization=1,
early_stopping=False.
"""

import os
import statistics
from pathlib import Path

import numpy as np

__all__ = [
    "REPO_ROOT",
    "DEFAULT_DATA_DIR",
    "TASKS",
    "N_ROUNDS",
    "REFERENCE_FIGURES",
    "REFERENCE_MEDIAN",
    "HIGHER_IS_BETTER",
    "data_dir",
    "data_available",
    "load_task",
    "gpuboost_params",
    "xgboost_params",
    "lightgbm_params",
    "sklearn_estimator",
    "evaluate",
    "is_at_least_as_good",
    "peer_median",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
#: ``<repo>/../shared/data/lightgbm-examples``
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data" / "lightgbm-examples"
DATA_DIR_ENV = "GPUBOOST_REFERENCE_DATA"

# ---- settings (REFERENCE.md, "Settings") ------------------------------------
N_ROUNDS = 100
LEARNING_RATE = 0.1
MAX_DEPTH = 6
#: value bins; gpuboost adds one bin for missing values (= XGBoost's 256)
MAX_BIN = 255
REG_LAMBDA = 1.0
MIN_CHILD_WEIGHT = 1.0
#: Rows a child must keep (REFERENCE.md: 1 for every library, XGBoost's absence of a limit).
MIN_DATA_IN_LEAF = 1
#: leaves allowed to the leaf-wise peers (2 ** MAX_DEPTH)
NUM_LEAVES = 64

#: name -> task description. ``metrics``: the test metrics reported (gpuboost's
#: metric names); ``bar``: the metrics compared against the peers.
TASKS = {
    "binary": {
        "files": ("binary.train", "binary.test"),
        "objective": "binary:logistic",
        "num_class": 0,
        "metrics": ("auc", "logloss"),
        "bar": ("auc", "logloss"),
    },
    "regression": {
        "files": ("regression.train", "regression.test"),
        "objective": "reg:squarederror",
        "num_class": 0,
        "metrics": ("rmse",),
        "bar": ("rmse",),
    },
    "multiclass": {
        "files": ("multiclass.train", "multiclass.test"),
        "objective": "multi:softprob",
        "num_class": 5,
        "metrics": ("mlogloss", "accuracy"),
        "bar": ("mlogloss",),
    },
}

HIGHER_IS_BETTER = {
    "auc": True,
    "accuracy": True,
    "logloss": False,
    "rmse": False,
    "mlogloss": False,
}

#: REFERENCE.md's peer table (xgboost-cpu 3.2.0, lightgbm 4.7.0, scikit-learn 1.9.1).
REFERENCE_FIGURES = {
    "binary": {
        "xgboost": {"auc": 0.82355, "logloss": 0.51302},
        "lightgbm": {"auc": 0.83129, "logloss": 0.50550},
        "sklearn": {"auc": 0.82592, "logloss": 0.51109},
    },
    "regression": {
        "xgboost": {"rmse": 0.42010},
        "lightgbm": {"rmse": 0.41488},
        "sklearn": {"rmse": 0.41253},
    },
    "multiclass": {
        "xgboost": {"mlogloss": 1.37520, "accuracy": 0.394},
        "lightgbm": {"mlogloss": 1.31705, "accuracy": 0.406},
        "sklearn": {"mlogloss": 1.30350, "accuracy": 0.420},
    },
}

#: The accuracy bar: the median of the three peers, as REFERENCE.md states it.
REFERENCE_MEDIAN = {
    "binary": {"logloss": 0.51109, "auc": 0.82592},
    "regression": {"rmse": 0.41488},
    "multiclass": {"mlogloss": 1.31705},
}


# ---- data ---------------------------------------------------------------------
def data_dir(override=None):
    """The data folder: ``override``, else $GPUBOOST_REFERENCE_DATA, else the default."""
    if override:
        return Path(override)
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else DEFAULT_DATA_DIR


def data_available(task=None, directory=None):
    """Whether the files of ``task`` (default: every task) are present."""
    folder = data_dir(directory)
    names = TASKS if task is None else [task]
    return all((folder / f).is_file() for name in names for f in TASKS[name]["files"])


def _load_tsv(path):
    table = np.loadtxt(path, dtype=np.float64, delimiter="\t", ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), np.ascontiguousarray(table[:, 0])


def load_task(task, directory=None):
    """``(X_train, y_train, X_test, y_test)`` as float64 arrays."""
    folder = data_dir(directory)
    train_file, test_file = TASKS[task]["files"]
    X_train, y_train = _load_tsv(folder / train_file)
    X_test, y_test = _load_tsv(folder / test_file)
    return X_train, y_train, X_test, y_test


# ---- per-library settings -------------------------------------------------------
def gpuboost_params(task, device="cpu"):
    """gpuboost ``train`` params of ``task``."""
    spec = TASKS[task]
    params = {
        "objective": spec["objective"],
        "learning_rate": LEARNING_RATE,
        "max_depth": MAX_DEPTH,
        "max_bin": MAX_BIN,
        "reg_lambda": REG_LAMBDA,
        "min_child_weight": MIN_CHILD_WEIGHT,
        "min_data_in_leaf": MIN_DATA_IN_LEAF,
        "split_penalty": 0.0,  # the reference settings are the peers' trees (issue 33)
        "device": device,
        "verbosity": 0,
    }
    if spec["num_class"]:
        params["num_class"] = spec["num_class"]
    return params


def xgboost_params(task, n_threads=2):
    """``xgboost.train`` params of ``task`` (hist, 256 bins = 255 + XGBoost's own)."""
    spec = TASKS[task]
    params = {
        "objective": spec["objective"],
        "tree_method": "hist",
        "max_bin": MAX_BIN + 1,
        "learning_rate": LEARNING_RATE,
        "max_depth": MAX_DEPTH,
        "reg_lambda": REG_LAMBDA,
        "min_child_weight": MIN_CHILD_WEIGHT,
        "nthread": n_threads,
        "verbosity": 0,
    }
    if spec["num_class"]:
        params["num_class"] = spec["num_class"]
    return params


_LIGHTGBM_OBJECTIVES = {
    "binary:logistic": "binary",
    "reg:squarederror": "regression",
    "multi:softprob": "multiclass",
}


def lightgbm_params(task, n_threads=2):
    """``lightgbm.train`` params of ``task``."""
    spec = TASKS[task]
    params = {
        "objective": _LIGHTGBM_OBJECTIVES[spec["objective"]],
        "learning_rate": LEARNING_RATE,
        "max_depth": MAX_DEPTH,
        "num_leaves": NUM_LEAVES,
        "max_bin": MAX_BIN,
        "lambda_l2": REG_LAMBDA,
        "min_data_in_leaf": MIN_DATA_IN_LEAF,
        "min_sum_hessian_in_leaf": MIN_CHILD_WEIGHT,
        "num_threads": n_threads,
        "verbose": -1,
    }
    if spec["num_class"]:
        params["num_class"] = spec["num_class"]
    return params


def sklearn_estimator(task):
    """An unfitted HistGradientBoosting estimator of ``task`` (threads: set by the caller
    with threadpoolctl / OMP_NUM_THREADS)."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    common = {
        "max_iter": N_ROUNDS,
        "learning_rate": LEARNING_RATE,
        "max_depth": MAX_DEPTH,
        "max_leaf_nodes": NUM_LEAVES,
        "min_samples_leaf": 1,
        "l2_regularization": REG_LAMBDA,
        "max_bins": MAX_BIN,
        "early_stopping": False,
    }
    if TASKS[task]["objective"] == "reg:squarederror":
        return HistGradientBoostingRegressor(**common)
    return HistGradientBoostingClassifier(**common)


# ---- metrics ----------------------------------------------------------------------
def evaluate(task, y, pred):
    """Test metrics of ``task`` with gpuboost's metric definitions.

    ``pred``: probabilities of class 1 (binary), values (regression) or class
    probabilities of shape (n, n_classes) (multiclass).
    """
    from gpuboost.metrics import get_metric

    y = np.asarray(y, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    out = {}
    for name in TASKS[task]["metrics"]:
        if name == "accuracy":
            out[name] = float(np.mean(np.argmax(pred, axis=1) == y.astype(np.int64)))
        else:
            out[name] = get_metric(name)(y, pred)
    return out


def is_at_least_as_good(metric, value, bar):
    """``value`` of ``metric`` is at least as good as ``bar``."""
    return value >= bar if HIGHER_IS_BETTER[metric] else value <= bar


def peer_median(figures, metric):
    """Median of ``metric`` over ``{library: {metric: value}}`` (None when empty)."""
    values = [f[metric] for f in figures.values() if metric in f]
    return statistics.median(values) if values else None
