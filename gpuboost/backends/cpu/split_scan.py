"""Split scan of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.split_scan`; CUDA: ``cuda/split_scan.cu``).

One thread per node takes every allowed feature's exact int64 running sums over its
bins, evaluates the gains of both missing-value directions of every candidate with the
formulas of :mod:`gpuboost.core.gain`, written out below in the same float64 operation
order (``cuda/gain.cuh`` does the same), so gains are the reference's bit for bit
(docs/DESIGN.md, "Gain and leaf value"), then visits the candidates in the order
(feature, bin, missing right before missing left): one replaces the best only when
strictly better, which is the reference's tie rule. The gains of a feature are computed
in a loop without dependences between bins, which the compiler vectorizes.

A bin holding no row of the node leaves the running sums as they were, so its
candidates equal the previous bin's and can never be strictly better: they are skipped.
"""

import numpy as np

from ...core.dtypes import HIST_COUNT, HIST_GRAD, HIST_HESS
from ...core.gain import SPLIT_GAIN_EPS, no_split_records
from .jit import kernel, prange
from .scalar import clip, maximum, sign

__all__ = ["find_best_splits"]

#: Columns of the kernel's integer output, in this order.
_FEATURE, _BIN, _DEFAULT_LEFT, _LEFT, _PARENT = 0, 1, 2, 3, 6
_INT_COLUMNS = 9


@kernel
def _threshold_l1(sum_gradients, reg_alpha):
    """gpuboost.core.gain.threshold_l1."""
    if reg_alpha == 0.0:
        return sum_gradients
    return sign(sum_gradients) * maximum(abs(sum_gradients) - reg_alpha, 0.0)


@kernel
def _leaf_score(sum_gradients, sum_hessians, reg_lambda, reg_alpha, max_delta_step):
    """gpuboost.core.gain.leaf_score, in its operation order."""
    thresholded = _threshold_l1(sum_gradients, reg_alpha)
    denominator = sum_hessians + reg_lambda
    if not denominator > 0.0:
        return 0.0
    if max_delta_step == 0.0:
        return thresholded * thresholded / denominator
    weight = clip(-thresholded / denominator, -max_delta_step, max_delta_step)
    return -(2.0 * thresholded * weight + denominator * weight * weight)


@kernel
def _leaf_weight(sum_gradients, sum_hessians, reg_lambda, reg_alpha, max_delta_step):
    """gpuboost.core.gain.leaf_weight, in its operation order."""
    thresholded = _threshold_l1(sum_gradients, reg_alpha)
    denominator = sum_hessians + reg_lambda
    weight = -thresholded / denominator if denominator > 0.0 else 0.0
    if max_delta_step > 0.0:
        weight = clip(weight, -max_delta_step, max_delta_step)
    return weight


@kernel
def _bounded_weight(
    sum_gradients, sum_hessians, reg_lambda, reg_alpha, max_delta_step, lower, upper
):
    """gpuboost.core.gain.bounded_weight."""
    weight = _leaf_weight(sum_gradients, sum_hessians, reg_lambda, reg_alpha, max_delta_step)
    if weight < lower:
        return lower
    if weight > upper:
        return upper
    return weight


@kernel
def _score_given_weight(sum_gradients, sum_hessians, weight, reg_lambda, reg_alpha):
    """gpuboost.core.gain.leaf_score_given_weight, in its operation order."""
    thresholded = _threshold_l1(sum_gradients, reg_alpha)
    denominator = sum_hessians + reg_lambda
    if not denominator > 0.0:
        return 0.0
    return -(2.0 * thresholded * weight + denominator * weight * weight)


@kernel
def _monotone_gains(
    sum_g,
    sum_h,
    extra_g,
    extra_h,
    parent_g,
    parent_h,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    parent_score,
    lower,
    upper,
    direction,
    n_candidates,
    gains,
    left_hessians,
    right_hessians,
):
    """gpuboost.core.gain.monotone_split_gain of the candidates (see :func:`_plain_gains`):
    children's weights clipped to the node's bounds, -inf where they break ``direction``."""
    for bin_ in range(n_candidates):
        left_g = sum_g[bin_] + extra_g
        left_h = sum_h[bin_] + extra_h
        left_gradient = left_g / scale_gradients
        left_hessian = left_h / scale_hessians
        right_gradient = (parent_g - left_g) / scale_gradients
        right_hessian = (parent_h - left_h) / scale_hessians
        left_w = _bounded_weight(
            left_gradient, left_hessian, reg_lambda, reg_alpha, max_delta_step, lower, upper
        )
        right_w = _bounded_weight(
            right_gradient, right_hessian, reg_lambda, reg_alpha, max_delta_step, lower, upper
        )
        gain = (
            _score_given_weight(left_gradient, left_hessian, left_w, reg_lambda, reg_alpha)
            + _score_given_weight(right_gradient, right_hessian, right_w, reg_lambda, reg_alpha)
        ) - parent_score
        if (direction > 0 and left_w > right_w) or (direction < 0 and left_w < right_w):
            gain = -np.inf
        gains[bin_] = gain
        left_hessians[bin_] = left_hessian
        right_hessians[bin_] = right_hessian


@kernel
def _plain_gains(
    sum_g,
    sum_h,
    extra_g,
    extra_h,
    parent_g,
    parent_h,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    parent_score,
    n_candidates,
    gains,
    left_hessians,
    right_hessians,
):
    """Gains of the candidates whose left sums are ``sum + extra`` (running sums, plus the
    missing bin's for missing-left), without L1 and max_delta_step: :func:`_leaf_score`'s
    expressions with no loop-carried dependence, so LLVM evaluates several bins per
    vector instruction (the same IEEE operations per element, hence the same bits)."""
    for bin_ in range(n_candidates):
        left_g = sum_g[bin_] + extra_g
        left_h = sum_h[bin_] + extra_h
        left_gradient = left_g / scale_gradients
        left_hessian = left_h / scale_hessians
        right_gradient = (parent_g - left_g) / scale_gradients
        right_hessian = (parent_h - left_h) / scale_hessians
        left_denominator = left_hessian + reg_lambda
        right_denominator = right_hessian + reg_lambda
        left_score = (
            left_gradient * left_gradient / left_denominator if left_denominator > 0.0 else 0.0
        )
        right_score = (
            right_gradient * right_gradient / right_denominator if right_denominator > 0.0 else 0.0
        )
        gains[bin_] = (left_score + right_score) - parent_score
        left_hessians[bin_] = left_hessian
        right_hessians[bin_] = right_hessian


@kernel
def _general_gains(
    sum_g,
    sum_h,
    extra_g,
    extra_h,
    parent_g,
    parent_h,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    parent_score,
    n_candidates,
    gains,
    left_hessians,
    right_hessians,
):
    """:func:`_plain_gains` with L1 and max_delta_step (the general :func:`_leaf_score`)."""
    for bin_ in range(n_candidates):
        left_g = sum_g[bin_] + extra_g
        left_h = sum_h[bin_] + extra_h
        left_hessian = left_h / scale_hessians
        right_hessian = (parent_h - left_h) / scale_hessians
        gains[bin_] = (
            _leaf_score(
                left_g / scale_gradients, left_hessian, reg_lambda, reg_alpha, max_delta_step
            )
            + _leaf_score(
                (parent_g - left_g) / scale_gradients,
                right_hessian,
                reg_lambda,
                reg_alpha,
                max_delta_step,
            )
        ) - parent_score
        left_hessians[bin_] = left_hessian
        right_hessians[bin_] = right_hessian


@kernel(parallel=True)
def _scan(
    histograms,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    feature_mask,
    use_mask,
    monotone,
    use_monotone,
    node_bounds,
    out_int,
    out_gain,
):
    n_nodes, n_features, n_bins, _ = histograms.shape
    plain = reg_alpha == 0.0 and max_delta_step == 0.0
    for node in prange(n_nodes):
        hist = histograms[node]
        parent_g = np.int64(0)
        parent_h = np.int64(0)
        parent_n = np.int64(0)
        for bin_ in range(n_bins):
            parent_g += hist[0, bin_, HIST_GRAD]
            parent_h += hist[0, bin_, HIST_HESS]
            parent_n += hist[0, bin_, HIST_COUNT]
        parent_score = _leaf_score(
            parent_g / scale_gradients,
            parent_h / scale_hessians,
            reg_lambda,
            reg_alpha,
            max_delta_step,
        )
        lower = -np.inf
        upper = np.inf
        if use_monotone:  # scores at the weights clipped to the node's bounds
            lower = node_bounds[node, 0]
            upper = node_bounds[node, 1]
            parent_w = _bounded_weight(
                parent_g / scale_gradients,
                parent_h / scale_hessians,
                reg_lambda,
                reg_alpha,
                max_delta_step,
                lower,
                upper,
            )
            parent_score = _score_given_weight(
                parent_g / scale_gradients,
                parent_h / scale_hessians,
                parent_w,
                reg_lambda,
                reg_alpha,
            )
        # Running sums of the candidates and, per direction, their gains and hessians.
        sum_g = np.empty(n_bins, dtype=np.int64)
        sum_h = np.empty(n_bins, dtype=np.int64)
        sum_n = np.empty(n_bins, dtype=np.int64)
        gains = np.empty((2, n_bins), dtype=np.float64)
        left_hessians = np.empty((2, n_bins), dtype=np.float64)
        right_hessians = np.empty((2, n_bins), dtype=np.float64)
        best_gain = -np.inf
        best_feature = -1
        best_bin = -1
        best_default_left = False
        best_g = np.int64(0)
        best_h = np.int64(0)
        best_n = np.int64(0)
        for feature in range(n_features):
            if use_mask and not feature_mask[node, feature]:
                continue
            n_candidates = n_value_bins[feature] - 1
            if n_candidates <= 0:
                continue
            missing_g = hist[feature, missing_bin, HIST_GRAD]
            missing_h = hist[feature, missing_bin, HIST_HESS]
            missing_n = hist[feature, missing_bin, HIST_COUNT]
            running_g = np.int64(0)
            running_h = np.int64(0)
            running_n = np.int64(0)
            for bin_ in range(n_candidates):
                running_g += hist[feature, bin_, HIST_GRAD]
                running_h += hist[feature, bin_, HIST_HESS]
                running_n += hist[feature, bin_, HIST_COUNT]
                sum_g[bin_] = running_g
                sum_h[bin_] = running_h
                sum_n[bin_] = running_n
            n_directions = 2 if missing_n > 0 else 1
            for direction in range(n_directions):
                extra_g = missing_g if direction == 1 else np.int64(0)
                extra_h = missing_h if direction == 1 else np.int64(0)
                if use_monotone:
                    _monotone_gains(
                        sum_g,
                        sum_h,
                        extra_g,
                        extra_h,
                        parent_g,
                        parent_h,
                        scale_gradients,
                        scale_hessians,
                        reg_lambda,
                        reg_alpha,
                        max_delta_step,
                        parent_score,
                        lower,
                        upper,
                        monotone[feature],
                        n_candidates,
                        gains[direction],
                        left_hessians[direction],
                        right_hessians[direction],
                    )
                elif plain:
                    _plain_gains(
                        sum_g,
                        sum_h,
                        extra_g,
                        extra_h,
                        parent_g,
                        parent_h,
                        scale_gradients,
                        scale_hessians,
                        reg_lambda,
                        parent_score,
                        n_candidates,
                        gains[direction],
                        left_hessians[direction],
                        right_hessians[direction],
                    )
                else:
                    _general_gains(
                        sum_g,
                        sum_h,
                        extra_g,
                        extra_h,
                        parent_g,
                        parent_h,
                        scale_gradients,
                        scale_hessians,
                        reg_lambda,
                        reg_alpha,
                        max_delta_step,
                        parent_score,
                        n_candidates,
                        gains[direction],
                        left_hessians[direction],
                        right_hessians[direction],
                    )
            # Candidates in order (bin, missing right before missing left); a candidate
            # replaces the best only when strictly better.
            for bin_ in range(n_candidates):
                if bin_ > 0 and sum_n[bin_] == sum_n[bin_ - 1]:
                    continue  # the previous candidates again (see the module docstring)
                for direction in range(n_directions):
                    gain = gains[direction, bin_]
                    left_n = sum_n[bin_] + (missing_n if direction == 1 else np.int64(0))
                    right_n = parent_n - left_n
                    if (
                        left_hessians[direction, bin_] >= min_child_weight
                        and right_hessians[direction, bin_] >= min_child_weight
                        and left_n >= min_data_in_leaf
                        and right_n >= min_data_in_leaf
                        and gain > gamma
                        and gain > SPLIT_GAIN_EPS
                        and gain > best_gain
                    ):
                        best_gain = gain
                        best_feature = feature
                        best_bin = bin_
                        if missing_n > 0:
                            best_default_left = direction == 1
                        else:
                            best_default_left = left_n >= right_n
                        best_g = sum_g[bin_] + (missing_g if direction == 1 else np.int64(0))
                        best_h = sum_h[bin_] + (missing_h if direction == 1 else np.int64(0))
                        best_n = left_n
        row = out_int[node]
        row[_FEATURE] = best_feature
        row[_BIN] = best_bin
        row[_DEFAULT_LEFT] = 1 if best_default_left else 0
        row[_LEFT] = best_g
        row[_LEFT + 1] = best_h
        row[_LEFT + 2] = best_n
        row[_PARENT] = parent_g
        row[_PARENT + 1] = parent_h
        row[_PARENT + 2] = parent_n
        out_gain[node] = best_gain


def find_best_splits(
    histograms,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    params,
    feature_mask=None,
    node_bounds=None,
):
    """Best split of every node in a batch (same contract as the NumPy reference).

    Parameters
    ----------
    histograms : ndarray of shape (n_nodes, n_features, n_bins, 3), int64
    scale_gradients, scale_hessians : float
    n_value_bins : ndarray of shape (n_features,), int
    missing_bin : int
    params : SplitParams
    feature_mask : ndarray of shape (n_nodes, n_features), bool, optional
    node_bounds : ndarray of shape (n_nodes, 2), float64, optional
        Weight bounds under monotone constraints (``params.monotone``); unbounded when None.

    Returns
    -------
    records : ndarray of shape (n_nodes,), SPLIT_RECORD_DTYPE
    """
    n_nodes = histograms.shape[0]
    records = no_split_records(n_nodes)
    if n_nodes == 0:
        return records
    out_int = np.empty((n_nodes, _INT_COLUMNS), dtype=np.int64)
    out_gain = np.empty(n_nodes, dtype=np.float64)
    use_mask = feature_mask is not None
    use_monotone = bool(params.monotone)
    if use_monotone:
        monotone = np.asarray(params.monotone, dtype=np.int64)
        bounds = (
            np.tile(np.array([[-np.inf, np.inf]]), (n_nodes, 1))
            if node_bounds is None
            else np.ascontiguousarray(node_bounds, dtype=np.float64).reshape(n_nodes, 2)
        )
    else:
        monotone = np.zeros(1, dtype=np.int64)
        bounds = np.zeros((1, 2), dtype=np.float64)
    _scan(
        np.ascontiguousarray(histograms),
        float(scale_gradients),
        float(scale_hessians),
        np.ascontiguousarray(n_value_bins, dtype=np.int64),
        int(missing_bin),
        float(params.reg_lambda),
        float(params.reg_alpha),
        float(params.max_delta_step),
        float(params.min_child_weight),
        int(params.min_data_in_leaf),
        float(params.gamma),
        np.ascontiguousarray(feature_mask, dtype=np.bool_)
        if use_mask
        else np.ones((1, 1), dtype=np.bool_),
        use_mask,
        monotone,
        use_monotone,
        bounds,
        out_int,
        out_gain,
    )
    records["sum_gradients"] = out_int[:, _PARENT]
    records["sum_hessians"] = out_int[:, _PARENT + 1]
    records["count"] = out_int[:, _PARENT + 2]
    found = out_int[:, _FEATURE] >= 0
    if found.any():
        records["feature"][found] = out_int[found, _FEATURE]
        records["bin"][found] = out_int[found, _BIN]
        records["default_left"][found] = out_int[found, _DEFAULT_LEFT] == 1
        records["gain"][found] = out_gain[found]
        records["left_sum_gradients"][found] = out_int[found, _LEFT]
        records["left_sum_hessians"][found] = out_int[found, _LEFT + 1]
        records["left_count"][found] = out_int[found, _LEFT + 2]
    return records
