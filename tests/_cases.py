"""Generated inputs shared by the NumPy, compiled CPU and CUDA tests of one primitive
(the versions must be tested on the same cases)."""

import numpy as np
from hypothesis import strategies as st

import gpuboost
from gpuboost.core.categorical import bitset_from_members
from gpuboost.core.dtypes import GRAD_QUANT_MAX
from gpuboost.core.gain import SplitParams
from gpuboost.data.categorical import encode_features
from gpuboost.tree.tree import TREE_ARRAYS, Tree

__all__ = [
    "messy_features",
    "segment_case",
    "binned_problem",
    "random_segments",
    "random_tree",
    "shap_case",
    "categorical_shap_case",
    "small_categorical_tree",
]


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


def binned_problem(rng, n_rows, n_features, max_bin, missing_fraction=0.1):
    """Random binned data, ``(X_binned, gradients, hessians)``: every feature its own number
    of value bins (some features one), a fraction of missing bins, and quantized gradients
    and hessians anywhere in ``[-GRAD_QUANT_MAX, GRAD_QUANT_MAX]`` (resp. ``[0, ...]``)."""
    n_value_bins = rng.integers(1, max_bin + 1, size=n_features)
    X_binned = np.empty((n_rows, n_features), dtype=np.uint8)
    for feature in range(n_features):
        X_binned[:, feature] = rng.integers(0, n_value_bins[feature], size=n_rows)
    X_binned[rng.random((n_rows, n_features)) < missing_fraction] = max_bin
    gradients = rng.integers(-GRAD_QUANT_MAX, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    hessians = rng.integers(0, GRAD_QUANT_MAX + 1, size=n_rows).astype(np.int32)
    return X_binned, gradients, hessians


def random_segments(rng, n_samples, n_nodes):
    """``n_nodes`` disjoint segments ``(begins, ends)`` inside ``[0, n_samples)``, some
    empty, in random order (nodes need not be in position order)."""
    cuts = np.sort(rng.integers(0, n_samples + 1, size=2 * n_nodes))
    order = rng.permutation(n_nodes)
    return cuts[0::2][order], cuts[1::2][order]


def random_tree(rng, n_features, max_bin, max_depth):
    """A random tree (gpuboost.tree.tree.Tree) of at most ``max_depth`` levels: random
    features, bin thresholds ``b`` with raw thresholds ``b + 0.5`` (so that the bin of
    ``x`` is ``x`` rounded for ``x`` in ``[0, max_bin)``), random default directions
    and leaf values (signed zeros and tiny values among them)."""
    arrays = {name: [] for name in ("feature", "threshold_bin", "default_left", "value")}
    children = {"left_child": [], "right_child": []}

    def add(depth):
        node = len(arrays["feature"])
        split = depth < max_depth and rng.random() < 0.8
        arrays["feature"].append(int(rng.integers(0, n_features)) if split else -1)
        arrays["threshold_bin"].append(int(rng.integers(0, max_bin - 1)) if split else 0)
        arrays["default_left"].append(bool(rng.random() < 0.5))
        arrays["value"].append(float(rng.choice([-0.0, 0.0, 1e-300, rng.normal()])))
        children["left_child"].append(-1)
        children["right_child"].append(-1)
        if split:
            children["left_child"][node] = add(depth + 1)
            children["right_child"][node] = add(depth + 1)
        return node

    add(0)
    n_nodes = len(arrays["feature"])
    threshold = np.where(
        np.array(arrays["feature"]) >= 0, np.array(arrays["threshold_bin"]) + 0.5, 0.0
    )
    return Tree(
        {
            **arrays,
            **children,
            "threshold": threshold,
            "gain": np.zeros(n_nodes),
            "cover": np.ones(n_nodes),
            "count": np.ones(n_nodes, dtype=np.int64),
        }
    )


def _labels(signal, objective, params, class_edges):
    """Labels of ``objective`` from ``signal``: itself (regression), its sign
    (``binary:logistic``) or 3 classes cut at ``class_edges`` (``multi:softprob``, which
    sets ``params['num_class']``)."""
    if objective == "binary:logistic":
        return (signal > 0).astype(np.float64)
    if objective == "multi:softprob":
        params.setdefault("num_class", 3)
        return np.digitize(signal, class_edges).astype(np.float64)
    return signal


def shap_case(seed, objective="reg:squarederror", n_rows=400, n_rounds=3, **params):
    """A small model on :func:`messy_features` (NaN, +/-inf, ties, a constant) whose
    trees split on one feature several times along a path (depth 5, few features), and
    the features: ``(booster, X)``. ``objective`` picks the labels: regression,
    ``binary:logistic`` or ``multi:softprob`` (3 classes)."""
    X = messy_features(n_rows, seed)
    signal = np.nan_to_num(X[:, 0], posinf=3.0, neginf=-3.0) + np.nan_to_num(X[:, 1]) * X[:, 2]
    signal = signal + np.sin(3.0 * np.nan_to_num(X[:, 3]))
    y = _labels(signal, objective, params, class_edges=[-0.5, 0.5])
    params = {"objective": objective, "max_depth": 5, "device": "cpu", **params}
    return gpuboost.train(params, gpuboost.Dataset(X, label=y), n_rounds), X


def categorical_shap_case(seed, objective="reg:squarederror", n_rows=500, n_rounds=3, **params):
    """A small model with categorical splits: ``(booster, X, codes)``.

    ``X`` holds raw labels: feature 0 has 40 categories (labels 100 .. 139: sets of two
    bitset words), feature 1 three (labels 0, 10, 20), feature 2 is numeric; each has
    missing values. ``codes`` is ``X`` re-coded against the model's categories (what the
    backends' kernels read). ``max_cat_to_onehot`` picks one-vs-rest (>= 40) or
    many-vs-many (1) splits; ``objective`` the labels as in :func:`shap_case`."""
    rng = np.random.default_rng(seed)
    big, small, x = rng.integers(0, 40, n_rows), rng.integers(0, 3, n_rows), rng.normal(size=n_rows)
    signal = np.random.default_rng(123).normal(size=40)[big] * 2 + 1.5 * (small == 0) + x
    X = np.column_stack([big + 100.0, small * 10.0, x])
    for feature in range(3):
        X[rng.random(n_rows) < 0.05, feature] = np.nan
    y = _labels(signal, objective, params, class_edges=[-1.0, 1.0])
    params = {
        "objective": objective,
        "max_depth": 4,
        "min_data_per_group": 5,
        "device": "cpu",
        **params,
    }
    data = gpuboost.Dataset(X, label=y, categorical_features=[0, 1])
    booster = gpuboost.train(params, data, n_rounds)
    return booster, X, encode_features(X, categories=booster.categories)[0]


def small_categorical_tree():
    """x0 in {1, 2, 5, 33} -> (x0 in {2, 33, 40} -> leaf 3 | leaf 4) | (x1 in {0} -> leaf 5
    | leaf 6), missing values left at nodes 0 and 2, right at node 1: sets of two words on
    feature 0, of one on feature 1 (prediction looks codes 32 .. 63 of feature 1 up in
    the zero padding of the tree's widest set, so they go right, and sends 64 and
    beyond along the default)."""
    arrays = {name: np.zeros(7, dtype=dtype) for name, dtype in TREE_ARRAYS.items()}
    arrays.update(
        feature=[0, 0, 1, -1, -1, -1, -1],
        default_left=[1, 0, 1, 0, 0, 0, 0],
        left_child=[1, 3, 5, -1, -1, -1, -1],
        right_child=[2, 4, 6, -1, -1, -1, -1],
        value=[0, 0, 0, 1.0, 2.0, 3.0, 4.0],
        cover=[10.0, 6.0, 4.0, 2.0, 4.0, 1.0, 3.0],
        count=[10, 6, 4, 2, 4, 1, 3],
        cat_offsets=[0, 2, 4, 5, 5, 5, 5, 5],
        cat_bits=np.concatenate(
            [
                bitset_from_members([1, 2, 5, 33], 2),
                bitset_from_members([2, 33, 40], 2),
                bitset_from_members([0], 1),
            ]
        ),
    )
    return Tree(arrays)


#: Split parameters for the row-scan tests (hypothesis): every regularizer and
#: admissibility rule off and on.
row_scan_split_params = st.builds(
    SplitParams,
    reg_lambda=st.sampled_from([0.0, 1.0, 7.5]),
    reg_alpha=st.sampled_from([0.0, 0.0, 0.3]),
    max_delta_step=st.sampled_from([0.0, 0.0, 0.7]),
    min_child_weight=st.sampled_from([0.0, 1e-3, 1.0]),
    min_data_in_leaf=st.sampled_from([1, 1, 3, 40]),
    gamma=st.sampled_from([0.0, 0.5]),
)


def row_scan_problem(
    seed, n_rows, n_features, max_bin, n_nodes, missing_fraction, with_mask, monotone
):
    """Random nodes of random binned data for ``find_best_splits_of_rows`` against the
    histogram scan: ``(X_binned, gradients, hessians, sample_indices, begins, ends,
    n_value_bins, mask, bounds, directions)`` (mask, bounds None and directions ``()``
    when not asked for)."""
    rng = np.random.default_rng(seed)
    X_binned, gradients, hessians = binned_problem(
        rng, n_rows, n_features, max_bin, missing_fraction
    )
    gradients >>= 8  # sums of a node stay far inside int64
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    values = np.where(X_binned == max_bin, 0, X_binned).astype(np.int32)
    n_value_bins = (values.max(axis=0, initial=0) + 1).astype(np.int32)
    mask = rng.random((n_nodes, n_features)) < 0.6 if with_mask else None
    bounds, directions = None, ()
    if monotone:
        directions = tuple(int(d) for d in rng.choice([-1, 0, 1], size=n_features))
        lower = np.where(rng.random(n_nodes) < 0.5, -np.inf, -rng.random(n_nodes))
        upper = np.where(rng.random(n_nodes) < 0.5, np.inf, rng.random(n_nodes))
        bounds = np.stack([lower, upper], axis=1)
    return (
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_value_bins,
        mask,
        bounds,
        directions,
    )
