"""Categorical split scan of the compiled CPU backend (the reference:
:func:`gpuboost.core.categorical.find_best_categorical_splits`, vectorized NumPy, and its
loop version ``find_best_categorical_splits_naive``; docs/DESIGN.md, "Categorical
features").

The same candidates, in the same order, with the same float64 operations: per node (nodes
spread over the threads) and categorical feature in order, the one-vs-rest candidates
``{0}, {1}, ...``, or the many-vs-many ones: the eligible categories sorted by
``G / (H + cat_smooth)`` (a stable insertion sort that orders like NumPy's stable
``argsort``: NaN keys after every other, ties by code), the forward prefixes of sizes
``1 .. max_i`` then the backward ones, each kept where LightGBM's grouping evaluates it
(:func:`gpuboost.core.categorical._evaluated_prefixes`). Each candidate with the missing
rows right, then left (only where the node has missing rows). A candidate replaces the
feature's best only when strictly better, and a feature the node's best only when
strictly better and finite: the reference's ``argmax`` (first maximum) and tie rule. A
gain of ``+inf`` (float64 overflow of the sums) marks the node, which then gets no split
and keeps ``gain = inf``, as in the reference.

The gains use :func:`.split_scan._leaf_score` (the reference's operation order), so
every gain, and so every record, is the reference's bit for bit; tests compare the two on
random histograms and on trained models.
"""

import numpy as np

from ...core.categorical import BITS_PER_WORD, SPLIT_SET_WORDS
from ...core.dtypes import HIST_COUNT, HIST_GRAD, HIST_HESS
from ...core.gain import no_split_records
from .jit import kernel, prange, sized
from .split_scan import _leaf_score, admissible

__all__ = ["find_best_categorical_splits", "scan_node"]

#: Columns of the kernel's integer output, in this order.
_FEATURE, _DEFAULT_LEFT, _LEFT, _PARENT, _OVERFLOW = 0, 1, 2, 5, 8
_INT_COLUMNS = 9


@kernel
def _key_before(key_a, code_a, key_b, code_b):
    """Whether category ``a`` sorts before ``b``: NumPy's order of float keys (NaN
    last), ties (NaN with NaN too) by the lower code."""
    a_nan = key_a != key_a
    b_nan = key_b != key_b
    if a_nan or b_nan:
        return (not a_nan) or (b_nan and code_a < code_b)
    if key_a < key_b:
        return True
    return key_a == key_b and code_a < code_b


@kernel
def _candidate_gain(
    left_g,
    left_h,
    left_n,
    parent_g,
    parent_h,
    parent_n,
    parent_score,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
):
    """The gain of a candidate left child ``(left_g, left_h, left_n)`` (int64 sums), -inf
    where it is not :func:`.split_scan.admissible`."""
    right_g = parent_g - left_g
    right_h = parent_h - left_h
    right_n = parent_n - left_n
    lh = left_h / scale_hessians
    rh = right_h / scale_hessians
    gain = (
        _leaf_score(left_g / scale_gradients, lh, reg_lambda, reg_alpha, max_delta_step)
        + _leaf_score(right_g / scale_gradients, rh, reg_lambda, reg_alpha, max_delta_step)
    ) - parent_score
    if admissible(lh, rh, left_n, right_n, gain, min_child_weight, min_data_in_leaf, gamma):
        return gain
    return -np.inf


@kernel
def _best_direction(
    left_g,
    left_h,
    left_n,
    miss_g,
    miss_h,
    miss_n,
    parent_g,
    parent_h,
    parent_n,
    parent_score,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
):
    """``(gain, direction)`` of a candidate's better direction: the missing rows right
    (0), then left (1, only where the node has missing rows); the first maximum."""
    best = -np.inf
    best_direction = 0
    for direction in range(2 if miss_n > 0 else 1):
        gain = _candidate_gain(
            left_g + miss_g * direction,
            left_h + miss_h * direction,
            left_n + miss_n * direction,
            parent_g, parent_h, parent_n, parent_score, scale_gradients, scale_hessians,
            reg_lambda, reg_alpha, max_delta_step, min_child_weight, min_data_in_leaf, gamma,
        )  # fmt: skip
        if gain > best:
            best, best_direction = gain, direction
    return best, best_direction


@kernel
def scan_node(
    hist,
    columns,
    features,
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    mvm_gamma,
    max_cat_to_onehot,
    max_cat_threshold,
    cat_l2,
    min_data_per_group,
    smoothing,
    feature_mask,
    use_mask,
    keys,
    order,
    rank,
    prefix,
    out_int,
    left_set,
):
    """One node's best categorical split: ``hist`` (n_columns, n_bins, >= 3) int64, the
    node's histograms (feature ``features[i]`` at column ``columns[i]``; a wide scratch
    histogram's cells too, :func:`.row_scan.scan_segment`), ``feature_mask``
    (n_features,) bool; scratch ``keys`` (n_bins,) float64, ``order`` and ``rank``
    (n_bins,) int64, ``prefix`` (n_bins + 1, 3) int64, its first row zero; ``gamma``
    of the one-vs-rest candidates, ``mvm_gamma`` of the many-vs-many ones. Fills
    ``out_int`` (_INT_COLUMNS,) and ``left_set`` (SPLIT_SET_WORDS,) and returns the best
    gain (-inf: no split). A feature whose best gain is inf (the sums overflowed float64)
    sets ``out_int[_OVERFLOW]`` to 1 and is skipped, as in the reference."""
    n_bins = hist.shape[1]
    mvm_lambda = reg_lambda + cat_l2
    first = columns[0]  # the node's totals: its first categorical feature's bins
    parent_g = np.int64(0)
    parent_h = np.int64(0)
    parent_n = np.int64(0)
    for bin_ in range(n_bins):
        parent_g += hist[first, bin_, HIST_GRAD]
        parent_h += hist[first, bin_, HIST_HESS]
        parent_n += hist[first, bin_, HIST_COUNT]
    out_int[_PARENT] = parent_g
    out_int[_PARENT + 1] = parent_h
    out_int[_PARENT + 2] = parent_n
    out_int[_FEATURE] = -1
    out_int[_OVERFLOW] = 0
    for word in range(left_set.shape[0]):
        left_set[word] = 0
    parent_score = _leaf_score(
        parent_g / scale_gradients,
        parent_h / scale_hessians,
        reg_lambda,
        reg_alpha,
        max_delta_step,
    )
    best_gain = -np.inf
    for position in range(features.shape[0]):
        column = columns[position]
        feature = features[position]
        k = n_value_bins[position]
        if k <= 1:
            continue
        if use_mask and not feature_mask[feature]:
            continue
        miss_g = hist[column, missing_bin, HIST_GRAD]
        miss_h = hist[column, missing_bin, HIST_HESS]
        miss_n = hist[column, missing_bin, HIST_COUNT]
        has_missing = miss_n > 0
        f_gain = -np.inf
        f_left_g = np.int64(0)
        f_left_h = np.int64(0)
        f_left_n = np.int64(0)
        f_direction = 0
        f_kind = 0  # 0: one-vs-rest {f_size}; 1: forward prefix; 2: backward prefix
        f_size = 0
        n_eligible = 0
        if k <= max_cat_to_onehot:
            for c in range(k):
                gain, direction = _best_direction(
                    hist[column, c, HIST_GRAD],
                    hist[column, c, HIST_HESS],
                    hist[column, c, HIST_COUNT],
                    miss_g, miss_h, miss_n, parent_g, parent_h, parent_n, parent_score,
                    scale_gradients, scale_hessians, reg_lambda, reg_alpha,
                    max_delta_step, min_child_weight, min_data_in_leaf, gamma,
                )  # fmt: skip
                if gain > f_gain:
                    f_gain, f_direction, f_kind, f_size = gain, direction, 0, c
                    f_left_g = hist[column, c, HIST_GRAD]
                    f_left_h = hist[column, c, HIST_HESS]
                    f_left_n = hist[column, c, HIST_COUNT]
        else:
            smooth = smoothing[position]
            for c in range(k):
                n = hist[column, c, HIST_COUNT]
                if n >= smooth and n > 0:
                    n_eligible += 1
                    keys[c] = (hist[column, c, HIST_GRAD] / scale_gradients) / (
                        hist[column, c, HIST_HESS] / scale_hessians + smooth
                    )
                    rank[c] = 1  # eligible
                else:
                    keys[c] = np.inf
                    rank[c] = 0
            for c in range(k):  # stable insertion sort
                j = c
                while j > 0 and _key_before(keys[c], c, keys[order[j - 1]], order[j - 1]):
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = c
            for j in range(k):  # prefix sums of the sorted eligible categories
                c = order[j]
                for part in range(3):
                    value = hist[column, c, part] if rank[c] == 1 else 0
                    prefix[j + 1, part] = prefix[j, part] + value
            for j in range(k):
                c = order[j]
                rank[c] = j if rank[c] == 1 else k  # ineligible: in no set
            max_i = max(1, min(max_cat_threshold, (k + 1) // 2))
            limit = min(max_cat_threshold, (n_eligible + 1) // 2)
            for kind in range(1, 3):
                going = True
                last = np.int64(0)
                for i in range(1, max_i + 1):
                    if kind == 1:
                        at = min(i, k)
                        lg, lh, ln = prefix[at, 0], prefix[at, 1], prefix[at, 2]
                    else:
                        start = min(max(n_eligible - i, 0), k)
                        lg = prefix[n_eligible, 0] - prefix[start, 0]
                        lh = prefix[n_eligible, 1] - prefix[start, 1]
                        ln = prefix[n_eligible, 2] - prefix[start, 2]
                    going = going and parent_n - ln >= min_data_per_group
                    evaluated = going and ln - last >= min_data_per_group
                    if evaluated:
                        last = ln
                    if not (evaluated and i <= limit):
                        continue
                    gain, direction = _best_direction(
                        lg, lh, ln, miss_g, miss_h, miss_n, parent_g, parent_h, parent_n,
                        parent_score, scale_gradients, scale_hessians, mvm_lambda,
                        reg_alpha, max_delta_step, min_child_weight, min_data_in_leaf,
                        mvm_gamma,
                    )  # fmt: skip
                    if gain > f_gain:
                        f_gain, f_direction, f_kind, f_size = gain, direction, kind, i
                        f_left_g, f_left_h, f_left_n = lg, lh, ln
        if f_gain == np.inf:
            out_int[_OVERFLOW] = 1
            continue
        if not f_gain > best_gain:  # -inf: no candidate
            continue
        best_gain = f_gain
        out_int[_FEATURE] = feature
        # The chosen left child: the candidate's categories, and the missing rows
        # where they go left (f_direction 1).
        f_left_n += miss_n * f_direction
        out_int[_LEFT] = f_left_g + miss_g * f_direction
        out_int[_LEFT + 1] = f_left_h + miss_h * f_direction
        out_int[_LEFT + 2] = f_left_n
        if has_missing:
            out_int[_DEFAULT_LEFT] = f_direction
        else:
            out_int[_DEFAULT_LEFT] = 1 if f_left_n >= parent_n - f_left_n else 0
        for word in range(left_set.shape[0]):
            left_set[word] = 0
        for c in range(k):
            if f_kind == 0:
                member = c == f_size
            elif f_kind == 1:
                member = rank[c] < f_size
            else:
                member = rank[c] >= min(max(n_eligible - f_size, 0), k) and (rank[c] < n_eligible)
            if member:
                left_set[c // BITS_PER_WORD] |= np.uint32(1) << np.uint32(c % BITS_PER_WORD)
    return best_gain


@kernel(parallel=True)
def _scan(
    histograms,
    columns,
    features,
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    mvm_gamma,
    max_cat_to_onehot,
    max_cat_threshold,
    cat_l2,
    min_data_per_group,
    smoothing,
    feature_mask,
    use_mask,
    out_int,
    out_gain,
    left_sets,
):
    """Fill ``out_int`` (n_nodes, 9), ``out_gain`` (n_nodes,) and ``left_sets``
    (n_nodes, SPLIT_SET_WORDS) with each node's best categorical split
    (:func:`scan_node`, nodes over the threads)."""
    n_nodes = histograms.shape[0]
    n_bins = histograms.shape[2]
    for node in prange(n_nodes):
        keys = np.empty(n_bins, dtype=np.float64)
        order = np.empty(n_bins, dtype=np.int64)
        rank = np.empty(n_bins, dtype=np.int64)
        prefix = np.zeros((n_bins + 1, 3), dtype=np.int64)
        out_gain[node] = scan_node(
            histograms[node],
            columns,
            features,
            n_value_bins,
            missing_bin,
            scale_gradients,
            scale_hessians,
            reg_lambda,
            reg_alpha,
            max_delta_step,
            min_child_weight,
            min_data_in_leaf,
            gamma,
            mvm_gamma,
            max_cat_to_onehot,
            max_cat_threshold,
            cat_l2,
            min_data_per_group,
            smoothing,
            feature_mask[np.int64(node) if use_mask else np.int64(0)],
            use_mask,
            keys,
            order,
            rank,
            prefix,
            out_int[node],
            left_sets[node],
        )


def find_best_categorical_splits(
    histograms,
    features,
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    split_params,
    cat_params,
    feature_mask=None,
    smoothing=None,
    columns=None,
):
    """:func:`gpuboost.core.categorical.find_best_categorical_splits` compiled: the same
    arguments, and the same records and left sets, bit for bit. ``histograms`` (int64,
    ``(n_nodes, n_columns, n_bins, 3)``) holds feature ``features[i]`` at column
    ``columns[i]``: by default at column ``features[i]`` (every feature's histograms,
    read in place: no slice copied); ``np.arange(len(features))`` for the reference's
    slice of the categorical features."""
    n_nodes = histograms.shape[0]
    records = no_split_records(n_nodes)
    left_sets = np.zeros((n_nodes, SPLIT_SET_WORDS), dtype=np.uint32)
    if n_nodes == 0 or not len(features):
        return records, left_sets
    if smoothing is None:
        smoothing = np.full(len(features), cat_params.cat_smooth, dtype=np.float64)
    use_mask = feature_mask is not None
    mask = np.ascontiguousarray(feature_mask) if use_mask else np.ones((1, 1), dtype=np.bool_)
    out_int = np.zeros((n_nodes, _INT_COLUMNS), dtype=np.int64)
    out_gain = np.empty(n_nodes, dtype=np.float64)
    features = np.ascontiguousarray(features, dtype=np.int64)
    sized(_scan)(
        np.ascontiguousarray(histograms, dtype=np.int64),
        features if columns is None else np.ascontiguousarray(columns, dtype=np.int64),
        features,
        np.ascontiguousarray(n_value_bins, dtype=np.int64),
        int(missing_bin),
        float(scale_gradients),
        float(scale_hessians),
        float(split_params.reg_lambda),
        float(split_params.reg_alpha),
        float(split_params.max_delta_step),
        float(split_params.min_child_weight),
        int(split_params.min_data_in_leaf),
        float(split_params.gamma),
        float(split_params.many_vs_many().gamma),
        int(cat_params.max_cat_to_onehot),
        int(cat_params.max_cat_threshold),
        float(cat_params.cat_l2),
        int(cat_params.min_data_per_group),
        np.ascontiguousarray(smoothing, dtype=np.float64),
        mask,
        use_mask,
        out_int,
        out_gain,
        left_sets,
    )
    records["sum_gradients"] = out_int[:, _PARENT]
    records["sum_hessians"] = out_int[:, _PARENT + 1]
    records["count"] = out_int[:, _PARENT + 2]
    split = out_int[:, _FEATURE] >= 0
    records["feature"][split] = out_int[split, _FEATURE]
    records["bin"][split] = 0  # unused by categorical splits
    records["gain"][split] = out_gain[split]
    records["default_left"][split] = out_int[split, _DEFAULT_LEFT] == 1
    records["left_sum_gradients"][split] = out_int[split, _LEFT]
    records["left_sum_hessians"][split] = out_int[split, _LEFT + 1]
    records["left_count"][split] = out_int[split, _LEFT + 2]
    overflowed = out_int[:, _OVERFLOW] == 1
    records["feature"][overflowed] = -1
    records["bin"][overflowed] = -1
    records["gain"][overflowed] = np.inf
    left_sets[overflowed] = 0
    return records, left_sets
