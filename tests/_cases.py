"""Generated inputs shared by the NumPy and the CUDA tests of one primitive (the two
versions must be tested on the same cases)."""

import numpy as np

import gpuboost

__all__ = ["messy_features", "segment_case", "shap_case"]


def messy_features(n_rows, seed, n_features=6):
    """Features that exercise every binning and missing-value rule: NaN in features 1 and
    3, +/-inf in feature 0, ties in feature 4 (fewer distinct values than bins), feature 5
    constant."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(n_rows) < 0.15, 1] = np.nan
    X[rng.random(n_rows) < 0.05, 3] = np.nan
    X[rng.random(n_rows) < 0.02, 0] = np.inf
    X[rng.random(n_rows) < 0.02, 0] = -np.inf
    X[:, 4] = np.round(X[:, 4], 1)
    X[:, 5] = -3.0
    return X


def segment_case(seed, n_rows=3000, n_segments=7):
    """Values whose sum depends on the order of addition, a permuted partition with
    segments of every size (empty, one row, more than one kernel block of segments)."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n_rows) * 10.0 ** rng.integers(-8, 9, size=n_rows)
    sample_indices = rng.permutation(n_rows)[: n_rows - 100].astype(np.int32)
    cuts = np.sort(
        rng.choice(np.arange(1, len(sample_indices)), size=n_segments - 1, replace=False)
    )
    bounds = np.concatenate([[0], cuts, [len(sample_indices)]])
    begins, ends = bounds[:-1].copy(), bounds[1:].copy()
    ends[1] = begins[1]  # an empty segment
    ends[2] = begins[2] + 1  # a one-row segment
    return values, sample_indices, begins, ends


def shap_case(seed, objective="reg:squarederror", n_rows=400, n_rounds=3, **params):
    """A small model on :func:`messy_features` (NaN, +/-inf, ties, a constant) whose
    trees split on one feature several times along a path (depth 5, few features), and
    the features: ``(booster, X)``. ``objective`` picks the labels: regression,
    ``binary:logistic`` or ``multi:softprob`` (3 classes)."""
    X = messy_features(n_rows, seed)
    signal = np.nan_to_num(X[:, 0], posinf=3.0, neginf=-3.0) + np.nan_to_num(X[:, 1]) * X[:, 2]
    signal = signal + np.sin(3.0 * np.nan_to_num(X[:, 3]))
    if objective == "binary:logistic":
        y = (signal > 0).astype(np.float64)
    elif objective == "multi:softprob":
        y = np.digitize(signal, [-0.5, 0.5]).astype(np.float64)
        params.setdefault("num_class", 3)
    else:
        y = signal
    params = {"objective": objective, "max_depth": 5, "device": "cpu", **params}
    return gpuboost.train(params, gpuboost.Dataset(X, label=y), n_rounds), X
