"""Generated inputs shared by the NumPy and the CUDA tests of one primitive (the two
versions must be tested on the same cases)."""

import numpy as np

__all__ = ["messy_features", "segment_case"]


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
