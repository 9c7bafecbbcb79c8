"""The split scan of vector-leaf trees: the best split by the gain summed over outputs.

Backend-agnostic (docs/DESIGN.md, "Vector leaves"): :func:`find_best_vector_splits` runs
in the array module of its histograms (NumPy, or CuPy on the device), with elementwise
IEEE operations on values recovered from exact integer sums, so that every backend gets
the same bits; :func:`find_best_vector_splits_naive` is the loop version kept for tests.
A histogram of ``k`` outputs is ``(n_nodes, n_features, n_bins, 3k)`` int64: output
``t`` in fields :func:`output_fields` ``(t)`` (gradient, hessian, row count).

The rule (XGBoost's ``multi_output_tree``)::

    gain = (sum_t S(L_t) + sum_t S(R_t)) - sum_t S(P_t)        (sums in output order)

``S`` the leaf score of :func:`gpuboost.core.gain.leaf_score`; a candidate is admissible
when both children keep ``min_data_in_leaf`` rows and, for at least one output,
``min_child_weight`` hessian, and ``gain > gamma``, ``gain > SPLIT_GAIN_EPS``.
Candidates, missing values and ties are the one-output scan's (lowest feature, then
lowest bin, then missing values right first; a feature without missing rows in the node
sends them to the larger child, ties left). With one output, gain, admissibility and
split are the one-output scan's (tested).
"""

import numpy as np

from .dtypes import HIST_COUNT, HIST_FIELDS, HIST_GRAD, HIST_HESS
from .gain import SPLIT_GAIN_EPS, leaf_score

__all__ = ["find_best_vector_splits", "find_best_vector_splits_naive", "output_fields"]

#: Candidate cells (nodes x features x bins x outputs) the array scan evaluates at once.
_SCAN_CHUNK_CELLS = 1 << 20


def output_fields(output):
    """The histogram fields ``(gradient, hessian, count)`` of output ``output``."""
    first = HIST_FIELDS * output
    return first + HIST_GRAD, first + HIST_HESS, first + HIST_COUNT


def _scores(xp, sums, scales, params):
    """``(sum_t S_t, max_t H_t)`` of (..., 3k) integer sums: the leaf scores added in
    output order, and the largest hessian sum (float64 arrays of shape ``sums[..., 0]``)."""
    total = largest = None
    for output, (scale_g, scale_h) in enumerate(scales):
        grad, hess, _ = output_fields(output)
        hessians = sums[..., hess] / scale_h
        score = leaf_score(sums[..., grad] / scale_g, hessians, params)
        total = score if total is None else total + score
        largest = hessians if largest is None else xp.maximum(largest, hessians)
    return total, largest


def _empty_table(n_nodes, n_outputs):
    return {
        "feature": np.full(n_nodes, -1, dtype=np.int64),
        "bin": np.full(n_nodes, -1, dtype=np.int64),
        "default_left": np.zeros(n_nodes, dtype=bool),
        "gain": np.full(n_nodes, -np.inf),
        "left_fields": np.zeros((n_nodes, HIST_FIELDS * n_outputs), dtype=np.int64),
        "fields": np.zeros((n_nodes, HIST_FIELDS * n_outputs), dtype=np.int64),
    }


def find_best_vector_splits(
    xp, histograms, scales, n_value_bins, missing_bin, params, feature_mask=None
):
    """Best split of every node of a batch by the gain summed over the outputs.

    Parameters
    ----------
    xp : module
        The array module of ``histograms`` (numpy or cupy).
    histograms : array of shape (n_nodes, n_features, n_bins, 3k), int64  # IN
        Output ``t`` in fields :func:`output_fields` ``(t)``.
    scales : sequence of k ``(scale_gradients, scale_hessians)`` pairs (host floats)
    n_value_bins : ndarray of shape (n_features,), int (host)
        A threshold bin ``b`` is a candidate when ``b <= n_value_bins[f] - 2``.
    missing_bin : int
    params : SplitParams
    feature_mask : ndarray of shape (n_nodes, n_features), bool, optional (host)

    Returns
    -------
    dict of host ndarrays, one row per node
        ``feature`` (-1: no admissible split), ``bin``, ``default_left``, ``gain``
        (-inf without a split; +inf where an admissible candidate's gain overflowed,
        which then has no split), ``left_fields`` and ``fields`` (n_nodes, 3k) int64:
        the left child's and the node's own histogram fields.
    """
    n_nodes, n_features, _, n_fields = histograms.shape
    n_outputs = n_fields // HIST_FIELDS
    table = _empty_table(n_nodes, n_outputs)
    if n_nodes == 0:
        return table
    parent = histograms[:, 0].sum(axis=1)  # every row is in one bin of feature 0
    table["fields"] = _host(xp, parent)
    n_candidates = missing_bin - 1
    if n_candidates <= 0 or n_features == 0:
        return table
    n_candidates = max(1, min(n_candidates, int(np.max(n_value_bins)) - 1))
    bin_is_candidate = np.arange(n_candidates)[None, :] <= (np.asarray(n_value_bins)[:, None] - 2)
    per_node = n_features * n_candidates * n_outputs
    step = max(1, _SCAN_CHUNK_CELLS // per_node)
    for start in range(0, n_nodes, step):
        stop = min(n_nodes, start + step)
        mask = None if feature_mask is None else feature_mask[start:stop]
        _scan_chunk(
            xp,
            histograms[start:stop],
            parent[start:stop],
            scales,
            xp.asarray(bin_is_candidate),
            missing_bin,
            params,
            mask,
            {name: values[start:stop] for name, values in table.items()},
        )
    return table


def _host(xp, array):
    return array if xp is np else xp.asnumpy(array)


def _scan_chunk(xp, histograms, parent, scales, bin_is_candidate, missing_bin, params, mask, out):
    n_nodes, n_features = histograms.shape[:2]
    n_candidates = bin_is_candidate.shape[1]
    count = HIST_COUNT  # output 0's row count: every output's
    missing = histograms[:, :, missing_bin, :]  # (n, F, 3k)
    left_missing_right = xp.cumsum(histograms[:, :, :n_candidates, :], axis=2)
    has_missing = missing[..., count] > 0
    valid = xp.broadcast_to(bin_is_candidate[None], left_missing_right.shape[:3])
    if mask is not None:
        valid = valid & xp.asarray(mask)[:, :, None]
    parent_score, _ = _scores(xp, parent, scales, params)
    directions = [left_missing_right, left_missing_right + missing[:, :, None, :]]
    gains = []
    for direction, left in enumerate(directions):
        right = parent[:, None, None, :] - left
        left_score, left_hessian = _scores(xp, left, scales, params)
        right_score, right_hessian = _scores(xp, right, scales, params)
        gain = (left_score + right_score) - parent_score[:, None, None]
        ok = (
            valid
            & (left_hessian >= params.min_child_weight)
            & (right_hessian >= params.min_child_weight)
            & (left[..., count] >= params.min_data_in_leaf)
            & (right[..., count] >= params.min_data_in_leaf)
            & (gain > params.gamma)
            & (gain > SPLIT_GAIN_EPS)
        )
        if direction == 1:
            ok = ok & has_missing[:, :, None]
        gains.append(xp.where(ok, gain, -np.inf))
    # Candidate order (feature, bin, direction); the first of equal maxima.
    stacked = xp.stack(gains, axis=-1).reshape(n_nodes, -1)
    best_gain = stacked.max(axis=1)
    positions = xp.arange(stacked.shape[1], dtype=np.int64)
    best = xp.where(stacked == best_gain[:, None], positions[None, :], stacked.shape[1]).min(axis=1)
    best_gain, best = _host(xp, best_gain), _host(xp, best)
    out["gain"][best_gain == np.inf] = np.inf
    found = np.flatnonzero(np.isfinite(best_gain))
    if not len(found):
        return
    feature, rest = np.divmod(best[found], n_candidates * 2)
    bin_, direction = np.divmod(rest, 2)
    nodes, f, b = (xp.asarray(a) for a in (found, feature, bin_))
    left = xp.where(
        xp.asarray(direction == 1)[:, None],
        directions[1][nodes, f, b],
        directions[0][nodes, f, b],
    )
    left = _host(xp, left)
    node_missing = _host(xp, has_missing[nodes, f])
    parent_count = out["fields"][found, count]
    left_count = left[:, count]
    out["feature"][found] = feature
    out["bin"][found] = bin_
    out["gain"][found] = best_gain[found]
    out["left_fields"][found] = left
    out["default_left"][found] = np.where(
        node_missing, direction == 1, left_count >= parent_count - left_count
    )


def find_best_vector_splits_naive(histograms, scales, n_value_bins, missing_bin, params):
    """Reference loop version of :func:`find_best_vector_splits` (NumPy, no feature mask;
    same contract), for tests."""
    n_nodes, n_features, _, n_fields = histograms.shape
    n_outputs = n_fields // HIST_FIELDS
    table = _empty_table(n_nodes, n_outputs)

    def scores(fields):
        total, largest = 0.0, -np.inf
        for output, (scale_g, scale_h) in enumerate(scales):
            grad, hess, _ = output_fields(output)
            hessians = fields[hess] / scale_h
            score = float(leaf_score(fields[grad] / scale_g, hessians, params))
            total = score if output == 0 else total + score
            largest = max(largest, hessians)
        return total, largest

    for node in range(n_nodes):
        hist = histograms[node].astype(np.int64)
        parent = hist[0].sum(axis=0)
        table["fields"][node] = parent
        parent_score, _ = scores(parent)
        best = None
        for feature in range(n_features):
            missing = hist[feature, missing_bin]
            running = np.zeros(n_fields, dtype=np.int64)
            for bin_ in range(int(n_value_bins[feature]) - 1):
                running = running + hist[feature, bin_]
                for missing_left in (False, True) if missing[HIST_COUNT] > 0 else (False,):
                    left = running + missing if missing_left else running
                    right = parent - left
                    left_score, left_h = scores(left)
                    right_score, right_h = scores(right)
                    gain = (left_score + right_score) - parent_score
                    if not (
                        left_h >= params.min_child_weight
                        and right_h >= params.min_child_weight
                        and left[HIST_COUNT] >= params.min_data_in_leaf
                        and right[HIST_COUNT] >= params.min_data_in_leaf
                        and gain > params.gamma
                        and gain > SPLIT_GAIN_EPS
                    ):
                        continue
                    if best is None or gain > best[0]:
                        default_left = missing_left
                        if missing[HIST_COUNT] == 0:
                            default_left = left[HIST_COUNT] >= right[HIST_COUNT]
                        best = (gain, feature, bin_, default_left, left)
        if best is not None and best[0] == np.inf:
            table["gain"][node] = np.inf
        elif best is not None:
            gain, feature, bin_, default_left, left = best
            table["feature"][node], table["bin"][node] = feature, bin_
            table["default_left"][node], table["gain"][node] = default_left, gain
            table["left_fields"][node] = left
    return table
