"""Split scan of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.split_scan`; CUDA: ``cuda/split_scan.cu``).

One thread per node scans every allowed feature's bins left to right with exact int64
running sums and evaluates both missing-value directions of every candidate with the
formulas of :mod:`gpuboost.core.gain`, written out below in the same float64 operation
order (``cuda/gain.cuh`` does the same), so gains are the reference's bit for bit
(docs/DESIGN.md, "Gain and leaf value"). Candidates are visited in the order
(feature, bin, missing right before missing left) and replace the best only when
strictly better, which is the reference's tie rule.

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
    out_int,
    out_gain,
):
    n_nodes, n_features, n_bins, _ = histograms.shape
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
            missing_g = hist[feature, missing_bin, HIST_GRAD]
            missing_h = hist[feature, missing_bin, HIST_HESS]
            missing_n = hist[feature, missing_bin, HIST_COUNT]
            running_g = np.int64(0)
            running_h = np.int64(0)
            running_n = np.int64(0)
            for bin_ in range(n_value_bins[feature] - 1):
                count = hist[feature, bin_, HIST_COUNT]
                if bin_ > 0 and count == 0:
                    continue  # the previous candidates again (see the module docstring)
                running_g += hist[feature, bin_, HIST_GRAD]
                running_h += hist[feature, bin_, HIST_HESS]
                running_n += count
                for direction in range(2 if missing_n > 0 else 1):
                    left_g = running_g
                    left_h = running_h
                    left_n = running_n
                    if direction == 1:
                        left_g += missing_g
                        left_h += missing_h
                        left_n += missing_n
                    right_g = parent_g - left_g
                    right_h = parent_h - left_h
                    right_n = parent_n - left_n
                    left_hessian = left_h / scale_hessians
                    right_hessian = right_h / scale_hessians
                    gain = (
                        _leaf_score(
                            left_g / scale_gradients,
                            left_hessian,
                            reg_lambda,
                            reg_alpha,
                            max_delta_step,
                        )
                        + _leaf_score(
                            right_g / scale_gradients,
                            right_hessian,
                            reg_lambda,
                            reg_alpha,
                            max_delta_step,
                        )
                    ) - parent_score
                    if (
                        left_hessian >= min_child_weight
                        and right_hessian >= min_child_weight
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
                        best_g = left_g
                        best_h = left_h
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
