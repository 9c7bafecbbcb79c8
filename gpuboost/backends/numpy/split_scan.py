"""The NumPy split scan (+ a naive loop version kept for tests).

The gain formulas and the split record are :mod:`gpuboost.core.gain`'s; this
module scans node histograms for the best admissible split of every node
(docs/DESIGN.md, "Gain and leaf value").
"""

import numpy as np

from ...core.dtypes import HIST_COUNT, HIST_FIELDS, HIST_GRAD, HIST_HESS
from ...core.gain import (
    SPLIT_GAIN_EPS,
    admissible,
    bounded_weight,
    leaf_score,
    leaf_score_given_weight,
    monotone_split_gain,
    no_split_records,
)

__all__ = ["find_best_splits", "find_best_splits_naive"]

#: Candidate cells evaluated at once by the vectorized scan (bounds memory).
_SCAN_CHUNK_CELLS = 1 << 19


def find_best_splits(
    histograms,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    params,
    feature_mask=None,
    thread_pool=None,
    node_bounds=None,
):
    """Best split of every node in a batch (vectorized NumPy scan).

    Parameters
    ----------
    histograms : ndarray of shape (n_nodes, n_features, n_bins, 3), int64
    scale_gradients, scale_hessians : float
        Quantization scales of this round's column.
    n_value_bins : ndarray of shape (n_features,), int
        Value bins per feature; a threshold bin ``b`` is a candidate when
        ``b <= n_value_bins[f] - 2``.
    missing_bin : int
        Index of the missing-value bin (``max_bin``).
    params : SplitParams
    feature_mask : ndarray of shape (n_nodes, n_features), bool, optional
        Features allowed at each node (column sampling); all when None.
    thread_pool : concurrent.futures.Executor, optional
        Scans chunks of nodes concurrently (the result does not depend on it).
    node_bounds : ndarray of shape (n_nodes, 2), float64, optional
        Each node's weight bounds ``(lower, upper)`` under monotone constraints
        (``params.monotone`` not empty; docs/DESIGN.md "Monotone constraints");
        unbounded when None.

    Returns
    -------
    records : ndarray of shape (n_nodes,), SPLIT_RECORD_DTYPE
        Ties: lowest feature, then lowest bin, then default-right first. When the
        chosen feature has no missing rows in the node, missing values go to the
        larger child (ties left). A node whose best admissible gain is +inf (the
        float64 sums overflowed) has no split and keeps ``gain == inf``.
    """
    n_nodes, n_features, _, _ = histograms.shape
    records = no_split_records(n_nodes)
    n_candidates = missing_bin - 1
    if n_nodes == 0 or n_candidates <= 0:
        return records
    # Bins past the widest feature's last candidate can never be chosen: scan only
    # up to there (keeping one column, so node sums are still reported).
    n_candidates = max(1, min(n_candidates, int(np.max(n_value_bins)) - 1))
    nodes_per_chunk = max(1, _SCAN_CHUNK_CELLS // (n_features * n_candidates))
    candidate_bins = np.arange(n_candidates)
    bin_is_candidate = candidate_bins[None, :] <= (np.asarray(n_value_bins)[:, None] - 2)
    bounds = _node_bounds(params, node_bounds, n_nodes)

    def scan(start):
        stop = min(n_nodes, start + nodes_per_chunk)
        mask = None if feature_mask is None else feature_mask[start:stop]
        records[start:stop] = _scan_chunk(
            histograms[start:stop],
            scale_gradients,
            scale_hessians,
            bin_is_candidate,
            missing_bin,
            params,
            mask,
            None if bounds is None else bounds[start:stop],
        )

    starts = range(0, n_nodes, nodes_per_chunk)
    if thread_pool is not None and len(starts) > 1:
        list(thread_pool.map(scan, starts))  # chunks are independent: same records
    else:
        for start in starts:
            scan(start)
    return records


def _node_bounds(params, node_bounds, n_nodes):
    """(n_nodes, 2) float64 bounds under monotone constraints, else None."""
    if not params.monotone:
        return None
    if node_bounds is None:
        return np.tile(np.array([[-np.inf, np.inf]]), (n_nodes, 1))
    return np.asarray(node_bounds, dtype=np.float64).reshape(n_nodes, 2)


def _scan_chunk(
    histograms,
    scale_gradients,
    scale_hessians,
    bin_is_candidate,
    missing_bin,
    params,
    feature_mask,
    bounds=None,
):
    n_nodes, n_features = histograms.shape[:2]
    # One contiguous array per field: (n_nodes, n_features, n_bins).
    sums = [np.ascontiguousarray(histograms[..., field]) for field in range(HIST_FIELDS)]
    # Every row is in one bin of feature 0.
    parent = np.stack([s[:, 0].sum(axis=1) for s in sums], axis=1)
    missing = [s[:, :, missing_bin] for s in sums]  # (n_nodes, n_features) per field
    n_candidates = bin_is_candidate.shape[1]
    left_missing_right = [np.cumsum(s[:, :, :n_candidates], axis=2) for s in sums]
    feature_has_missing = missing[HIST_COUNT] > 0
    valid = np.broadcast_to(bin_is_candidate[None], left_missing_right[0].shape)
    if feature_mask is not None:
        valid = valid & feature_mask[:, :, None]
    parent_g = parent[:, HIST_GRAD] / scale_gradients
    parent_h = parent[:, HIST_HESS] / scale_hessians
    if bounds is None:
        parent_score = leaf_score(parent_g, parent_h, params)[:, None, None]
    else:  # monotone constraints: scores at the weights clipped to the node's bounds
        lower, upper = bounds[:, 0, None, None], bounds[:, 1, None, None]
        parent_w = bounded_weight(parent_g, parent_h, params, bounds[:, 0], bounds[:, 1])
        parent_score = leaf_score_given_weight(parent_g, parent_h, parent_w, params)
        parent_score = parent_score[:, None, None]
        monotone = np.asarray(params.monotone, dtype=np.int64)[None, :, None]
    directions = [left_missing_right]
    if feature_has_missing.any():  # missing-left differs from missing-right only then
        directions.append([left + m[:, :, None] for left, m in zip(left_missing_right, missing)])
    gains = []
    for direction, left in enumerate(directions):
        right = [parent[:, field, None, None] - left[field] for field in range(HIST_FIELDS)]
        left_h = left[HIST_HESS] / scale_hessians
        right_h = right[HIST_HESS] / scale_hessians
        if bounds is None:
            gain = (
                leaf_score(left[HIST_GRAD] / scale_gradients, left_h, params)
                + leaf_score(right[HIST_GRAD] / scale_gradients, right_h, params)
            ) - parent_score
        else:
            gain = monotone_split_gain(
                left[HIST_GRAD] / scale_gradients,
                left_h,
                right[HIST_GRAD] / scale_gradients,
                right_h,
                parent_score,
                params,
                lower,
                upper,
                monotone,
            )
        ok = valid & admissible(left_h, left[HIST_COUNT], right_h, right[HIST_COUNT], gain, params)
        if direction == 1:
            ok = ok & feature_has_missing[:, :, None]
        gains.append(np.where(ok, gain, -np.inf))
    if len(gains) == 1:
        gains.append(np.full_like(gains[0], -np.inf))
        directions.append(left_missing_right)
    # Candidate order (feature, bin, direction): argmax takes the first maximum.
    stacked = np.stack(gains, axis=-1).reshape(n_nodes, -1)
    best = np.argmax(stacked, axis=1)
    best_gain = stacked[np.arange(n_nodes), best]
    n_candidates = left_missing_right[0].shape[2]
    feature, rest = np.divmod(best, n_candidates * 2)
    bin_, direction = np.divmod(rest, 2)
    records = no_split_records(n_nodes)
    records["sum_gradients"] = parent[:, HIST_GRAD]
    records["sum_hessians"] = parent[:, HIST_HESS]
    records["count"] = parent[:, HIST_COUNT]
    found = np.isfinite(best_gain)
    # An admissible candidate of gain +inf (overflowed float64 sums): no split, and the
    # record keeps the gain so that the caller reports the overflow.
    records["gain"][best_gain == np.inf] = np.inf
    nodes = np.flatnonzero(found)
    f, b, d = feature[found], bin_[found], direction[found]
    left_sums = [
        np.where(d == 1, directions[1][field][nodes, f, b], directions[0][field][nodes, f, b])
        for field in range(HIST_FIELDS)
    ]
    records["feature"][found] = f
    records["bin"][found] = b
    records["gain"][found] = best_gain[found]
    records["left_sum_gradients"][found] = left_sums[HIST_GRAD]
    records["left_sum_hessians"][found] = left_sums[HIST_HESS]
    records["left_count"][found] = left_sums[HIST_COUNT]
    right_count = parent[nodes, HIST_COUNT] - left_sums[HIST_COUNT]
    larger_left = left_sums[HIST_COUNT] >= right_count
    records["default_left"][found] = np.where(feature_has_missing[nodes, f], d == 1, larger_left)
    return records


def find_best_splits_naive(
    histograms,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    params,
    feature_mask=None,
    node_bounds=None,
):
    """Reference loop version of :func:`find_best_splits` (same contract)."""
    n_nodes, n_features = histograms.shape[:2]
    records = no_split_records(n_nodes)
    bounds = _node_bounds(params, node_bounds, n_nodes)
    for node in range(n_nodes):
        hist = histograms[node]
        parent = [int(v) for v in hist[0].sum(axis=0)]
        for field_name, value in zip(("sum_gradients", "sum_hessians", "count"), parent):
            records[field_name][node] = value
        parent_g, parent_h = parent[0] / scale_gradients, parent[1] / scale_hessians
        if bounds is None:
            parent_score = float(leaf_score(parent_g, parent_h, params))
        else:
            lower, upper = float(bounds[node, 0]), float(bounds[node, 1])
            parent_w = bounded_weight(parent_g, parent_h, params, lower, upper)
            parent_score = float(leaf_score_given_weight(parent_g, parent_h, parent_w, params))
        best = None
        for feature in range(n_features):
            if feature_mask is not None and not feature_mask[node, feature]:
                continue
            missing = [int(v) for v in hist[feature, missing_bin]]
            missing_n = missing[2]
            running = [0, 0, 0]
            for bin_ in range(int(n_value_bins[feature]) - 1):
                running = [running[i] + int(hist[feature, bin_, i]) for i in range(3)]
                for default_left in (False, True) if missing_n > 0 else (False,):
                    left = [running[i] + (missing[i] if default_left else 0) for i in range(3)]
                    right = [parent[i] - left[i] for i in range(3)]
                    lg, lh = left[0] / scale_gradients, left[1] / scale_hessians
                    rg, rh = right[0] / scale_gradients, right[1] / scale_hessians
                    if bounds is None:
                        gain = (
                            float(leaf_score(lg, lh, params)) + float(leaf_score(rg, rh, params))
                        ) - parent_score
                    else:
                        gain = float(
                            monotone_split_gain(
                                lg,
                                lh,
                                rg,
                                rh,
                                parent_score,
                                params,
                                lower,
                                upper,
                                params.monotone[feature],
                            )
                        )
                    if not (
                        lh >= params.min_child_weight
                        and rh >= params.min_child_weight
                        and left[2] >= params.min_data_in_leaf
                        and right[2] >= params.min_data_in_leaf
                        and gain > params.gamma
                        and gain > SPLIT_GAIN_EPS
                    ):
                        continue
                    if best is None or gain > best[0]:
                        if missing_n == 0:
                            default_left = left[2] >= right[2]
                        best = (gain, feature, bin_, default_left, left)
        if best is not None and best[0] == np.inf:  # overflowed sums: no split (see above)
            records["gain"][node] = np.inf
        elif best is not None:
            gain, feature, bin_, default_left, left = best
            records[node] = (feature, bin_, default_left, gain, left[0], left[1], left[2], *parent)
    return records
