"""Vector-leaf split scan of the compiled CPU backend (its definition, run by the NumPy
reference and CUDA in their array modules: :func:`gpuboost.core.vector_split.
find_best_vector_splits`; docs/DESIGN.md "Vector leaves").

Every (node, allowed feature) pair, pairs spread over the threads, takes the feature's
exact int64 running sums of every output over its bins and evaluates each candidate's
summed gain in the definition's float64 operation order (each output's score by
:func:`gpuboost.backends.cpu.split_scan._leaf_score`, the scores added in output order);
the candidates are visited in the order (bin, missing right before missing left) and one
replaces the best only when strictly better, then a node's best is the best of its
features in feature order: the definition's first of equal maxima. The scales are powers
of two (:func:`gpuboost.core.quantize.quantization_scale`), so the integer sums are
multiplied by ``1 / scale`` where the definition divides: the same bits
(:func:`find_best_vector_splits` leaves any other scale to the definition).
"""

import numpy as np

from ...core.gain import SPLIT_GAIN_EPS
from ...core.quantize import is_power_of_two
from ...core.vector_split import find_best_vector_splits as scan_in_arrays
from ...core.vector_split import node_fields, node_scores, split_table
from .jit import kernel, prange, sized
from .split_scan import _leaf_score

__all__ = ["find_best_vector_splits"]


@kernel(parallel=True)
def _scan(
    per_output,
    inverse_g,
    inverse_h,
    n_value_bins,
    missing_bin,
    n_candidates,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    feature_mask,
    use_mask,
    parents,
    parent_scores,
    best_gain,
    best_bin,
    best_direction,
):
    """The best candidate of every (node, feature) pair of ``per_output`` (k, n_nodes,
    n_features, n_bins, 3): ``best_gain`` (-inf: none), ``best_bin``, ``best_direction``
    (1: missing values left), each (n_nodes, n_features). ``parents`` (k, n_nodes, 3)."""
    n_outputs, n_nodes, n_features = per_output.shape[:3]
    for pair in prange(n_nodes * n_features):
        node = pair // n_features
        feature = pair - node * n_features
        best_gain[node, feature] = -np.inf
        best_bin[node, feature] = -1
        best_direction[node, feature] = 0
        if use_mask and not feature_mask[node, feature]:
            continue
        running = np.zeros((n_outputs, 3), dtype=np.int64)
        has_missing = per_output[0, node, feature, missing_bin, 2] > 0
        best = -np.inf
        last = min(n_value_bins[feature] - 1, n_candidates)
        for bin_ in range(last):
            for output in range(n_outputs):
                for field in range(3):
                    running[output, field] += per_output[output, node, feature, bin_, field]
            if per_output[0, node, feature, bin_, 2] == 0 and bin_ > 0:
                continue  # no row in the bin: the previous bin's candidates, not better
            for direction in range(2 if has_missing else 1):
                left_score = 0.0
                right_score = 0.0
                left_largest = 0.0
                right_largest = 0.0
                for output in range(n_outputs):
                    left_g = running[output, 0]
                    left_h = running[output, 1]
                    if direction == 1:
                        left_g += per_output[output, node, feature, missing_bin, 0]
                        left_h += per_output[output, node, feature, missing_bin, 1]
                    g = left_g * inverse_g[output]
                    h = left_h * inverse_h[output]
                    right_g = (parents[output, node, 0] - left_g) * inverse_g[output]
                    right_h = (parents[output, node, 1] - left_h) * inverse_h[output]
                    s_left = _leaf_score(g, h, reg_lambda, reg_alpha, max_delta_step)
                    s_right = _leaf_score(right_g, right_h, reg_lambda, reg_alpha, max_delta_step)
                    if output == 0:
                        left_score, right_score = s_left, s_right
                        left_largest, right_largest = h, right_h
                    else:
                        left_score = left_score + s_left
                        right_score = right_score + s_right
                        left_largest = max(left_largest, h)
                        right_largest = max(right_largest, right_h)
                left_count = running[0, 2]
                if direction == 1:
                    left_count += per_output[0, node, feature, missing_bin, 2]
                right_count = parents[0, node, 2] - left_count
                gain = (left_score + right_score) - parent_scores[node]
                if (
                    left_largest >= min_child_weight
                    and right_largest >= min_child_weight
                    and left_count >= min_data_in_leaf
                    and right_count >= min_data_in_leaf
                    and gain > gamma
                    and gain > SPLIT_GAIN_EPS
                    and gain > best
                ):
                    best = gain
                    best_bin[node, feature] = bin_
                    best_direction[node, feature] = direction
        best_gain[node, feature] = best


def find_best_vector_splits(histograms, scales, n_value_bins, missing_bin, params, feature_mask):
    """:func:`gpuboost.core.vector_split.find_best_vector_splits` of NumPy
    :class:`~gpuboost.core.vector_split.OutputHistograms`, compiled (the same table, bit
    for bit); scales that are not powers of two go to the definition itself."""
    if not all(is_power_of_two(g) and is_power_of_two(h) for g, h in scales):
        return scan_in_arrays(
            np, histograms, scales, n_value_bins, missing_bin, params, feature_mask
        )
    per_output = histograms.per_output
    n_outputs, n_nodes, n_features = per_output.shape[:3]
    parents = np.ascontiguousarray(node_fields(np, per_output))
    n_candidates = missing_bin - 1
    shape = (n_nodes, max(n_features, 1))
    best_gain = np.full(shape, -np.inf)
    best_bin = np.zeros(shape, dtype=np.int64)
    best_direction = np.zeros(shape, dtype=np.int64)
    if n_nodes and n_features and n_candidates > 0:
        n_candidates = max(1, min(n_candidates, int(np.max(n_value_bins)) - 1))
        use_mask = feature_mask is not None
        mask = np.ascontiguousarray(feature_mask) if use_mask else np.ones((1, 1), dtype=bool)
        sized(_scan, work=n_nodes * n_features * n_candidates * n_outputs * 8)(
            per_output,
            np.array([1.0 / g for g, _ in scales]),
            np.array([1.0 / h for _, h in scales]),
            np.asarray(n_value_bins, dtype=np.int64),
            missing_bin,
            n_candidates,
            params.reg_lambda,
            params.reg_alpha,
            params.max_delta_step,
            params.min_child_weight,
            params.min_data_in_leaf,
            params.gamma,
            mask,
            use_mask,
            parents,
            node_scores(np, parents, scales, params),
            best_gain,
            best_bin,
            best_direction,
        )
    # A node's best: the best of its features in feature order (the first maximum).
    feature = np.argmax(best_gain, axis=1) if n_nodes else np.zeros(0, dtype=np.int64)
    rows = np.arange(n_nodes)
    return split_table(
        np,
        per_output,
        parents,
        best_gain[rows, feature],
        feature,
        best_bin[rows, feature],
        best_direction[rows, feature],
        missing_bin,
    )
