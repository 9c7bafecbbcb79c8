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
from ...core.vector_split import node_scores, scan_candidates, table_of_pairs
from .jit import kernel, prange, sized, threads
from .split_scan import _leaf_score

__all__ = ["find_best_vector_splits"]


@kernel
def _output_sides(hist, output, kept, n, missing_g, missing_h, parent_g, parent_h, sides):
    """Output ``output``'s integer sums of the candidates at bins ``kept[:n]`` (the
    increasing bins that hold rows, and bin 0) as float64 columns ``0 .. n - 1`` of
    ``sides``: left gradient, left hessian, right gradient, right hessian (the running
    sums of its fields ``2t``, ``2t + 1`` of ``hist`` (n_bins, W), plus the missing
    values'). The bins left out hold no row, so their sums are zero and the running sums
    at the kept bins are those over every bin. The conversions the scores' expressions
    would make, made here: the score loop then has only float operations, which the
    compiler vectorizes (AVX2 has no vector int64 to float64 conversion)."""
    running_g = np.int64(0)
    running_h = np.int64(0)
    for candidate in range(n):
        bin_ = kept[candidate]
        running_g += hist[bin_, 2 * output]
        running_h += hist[bin_, 2 * output + 1]
        left_g = running_g + missing_g
        left_h = running_h + missing_h
        sides[0, candidate] = left_g
        sides[1, candidate] = left_h
        sides[2, candidate] = parent_g - left_g
        sides[3, candidate] = parent_h - left_h


@kernel
def _output_scores(
    sides,
    n,
    inverse_g,
    inverse_h,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    scores,
    row,
):
    """Add an output's left and right scores of the first ``n`` candidates (its
    children's sums ``sides``, :func:`_output_sides`) to ``scores`` rows ``row``,
    ``row + 1`` (which start at -0.0, so the first output's scores are its own bits) and
    take the largest hessians into rows ``row + 2``, ``row + 3`` (which start at -inf).
    No dependence between candidates and no branch in the loops (one loop without L1 and
    max_delta_step, ``_leaf_score``'s expression written out with the same bits, one
    with them), so that the compiler vectorizes them. Rows of the scratch arrays, not
    slices of them (a slice per call costs more than the loop on a small node)."""
    if reg_alpha == 0.0 and max_delta_step == 0.0:
        for bin_ in range(n):
            g = sides[0, bin_] * inverse_g
            h = sides[1, bin_] * inverse_h
            right_g = sides[2, bin_] * inverse_g
            right_h = sides[3, bin_] * inverse_h
            left_denominator = h + reg_lambda
            right_denominator = right_h + reg_lambda
            s_left = g * g / left_denominator if left_denominator > 0.0 else 0.0
            s_right = right_g * right_g / right_denominator if right_denominator > 0.0 else 0.0
            scores[row, bin_] = scores[row, bin_] + s_left
            scores[row + 1, bin_] = scores[row + 1, bin_] + s_right
            scores[row + 2, bin_] = max(scores[row + 2, bin_], h)
            scores[row + 3, bin_] = max(scores[row + 3, bin_], right_h)
        return
    for bin_ in range(n):
        h = sides[1, bin_] * inverse_h
        right_h = sides[3, bin_] * inverse_h
        s_left = _leaf_score(sides[0, bin_] * inverse_g, h, reg_lambda, reg_alpha, max_delta_step)
        s_right = _leaf_score(
            sides[2, bin_] * inverse_g, right_h, reg_lambda, reg_alpha, max_delta_step
        )
        scores[row, bin_] = scores[row, bin_] + s_left
        scores[row + 1, bin_] = scores[row + 1, bin_] + s_right
        scores[row + 2, bin_] = max(scores[row + 2, bin_], h)
        scores[row + 3, bin_] = max(scores[row + 3, bin_], right_h)


@kernel(parallel=True)
def _node_fields(cells, counts, n_outputs, parents):
    """Every node's own (k, n_nodes, 3) sums: its rows' bins of feature 0, added."""
    n_nodes, _, n_bins, _ = cells.shape
    for pair in prange(n_outputs * n_nodes):
        output = pair // n_nodes
        node = pair - output * n_nodes
        for field in range(3):
            total = np.int64(0)
            for bin_ in range(n_bins):
                total += (
                    counts[node, 0, bin_]
                    if field == 2
                    else cells[node, 0, bin_, 2 * output + field]
                )
            parents[output, node, field] = total


@kernel(parallel=True)
def _scan(
    cells,
    counts,
    n_outputs,
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
    n_chunks,
    best_gain,
    best_bin,
    best_direction,
    best_left,
):
    """The best candidate of every (node, feature) pair of ``cells`` (n_nodes, n_features,
    n_bins, W) of ``n_outputs`` outputs and their ``counts`` (n_nodes, n_features,
    n_bins) (gpuboost.core.vector_split.OutputHistograms), pairs cut into ``n_chunks``
    ranges: ``best_gain`` (-inf: none), ``best_bin``, ``best_direction`` (1: missing
    values left), each (n_nodes, n_features), and ``best_left`` (n_nodes, n_features,
    3k) its left fields.
    ``parents`` (k, n_nodes, 3). Per pair: the candidates' bins (bin 0 and the bins that
    hold rows: a small node's empty bins cost nothing), every output's running sums at
    them, then the scores of all candidates output after output (vectorized), then each
    candidate's gain, -inf where it is not admissible (vectorized), then the candidates
    in the order (bin, missing right before missing left), strictly better replacing: the
    definition's choice, whose candidates at empty bins repeat an earlier one's. The
    best's left sums are added over the kept bins up to it (the others hold zeros)."""
    n_nodes, n_features = cells.shape[:2]
    n_pairs = n_nodes * n_features
    for chunk in prange(n_chunks):
        kept = np.empty(n_candidates, dtype=np.int64)  # the candidates' bins
        scores = np.empty((8, n_candidates), dtype=np.float64)
        sides = np.empty((4, n_candidates), dtype=np.float64)
        gains = np.empty((2, n_candidates), dtype=np.float64)  # -inf: not admissible
        kept_count = np.empty(n_candidates, dtype=np.int64)  # the left rows at them
        for pair in range(chunk * n_pairs // n_chunks, (chunk + 1) * n_pairs // n_chunks):
            node = pair // n_features
            feature = pair - node * n_features
            best_gain[node, feature] = -np.inf
            best_bin[node, feature] = -1
            best_direction[node, feature] = 0
            if use_mask and not feature_mask[node, feature]:
                continue
            n = min(n_value_bins[feature] - 1, n_candidates)
            if n <= 0:
                continue
            hist = cells[node, feature]
            bin_counts = counts[node, feature]
            # The candidates: bin 0 and every later bin that holds rows (one without rows
            # has its previous bin's children, never strictly better: not evaluated).
            running = np.int64(0)
            n_kept = 0
            for bin_ in range(n):
                running += bin_counts[bin_]
                if bin_ == 0 or bin_counts[bin_] != 0:
                    kept[n_kept] = bin_
                    kept_count[n_kept] = running
                    n_kept += 1
            missing_count = bin_counts[missing_bin]
            n_directions = 2 if missing_count > 0 else 1
            for direction in range(n_directions):
                for field in range(4):
                    start_value = -0.0 if field < 2 else -np.inf
                    for candidate in range(n_kept):
                        scores[4 * direction + field, candidate] = start_value
                for output in range(n_outputs):
                    missing_g = np.int64(0)
                    missing_h = np.int64(0)
                    if direction == 1:
                        missing_g = hist[missing_bin, 2 * output]
                        missing_h = hist[missing_bin, 2 * output + 1]
                    _output_sides(
                        hist,
                        output,
                        kept,
                        n_kept,
                        missing_g,
                        missing_h,
                        parents[output, node, 0],
                        parents[output, node, 1],
                        sides,
                    )
                    _output_scores(
                        sides,
                        n_kept,
                        inverse_g[output],
                        inverse_h[output],
                        reg_lambda,
                        reg_alpha,
                        max_delta_step,
                        scores,
                        4 * direction,
                    )
            parent_count = parents[0, node, 2]
            parent_score = parent_scores[node]
            for direction in range(n_directions):
                row = 4 * direction
                extra = missing_count if direction == 1 else 0
                for candidate in range(n_kept):
                    left_count = kept_count[candidate] + extra
                    gain = (scores[row, candidate] + scores[row + 1, candidate]) - parent_score
                    admissible = (
                        (scores[row + 2, candidate] >= min_child_weight)
                        & (scores[row + 3, candidate] >= min_child_weight)
                        & (left_count >= min_data_in_leaf)
                        & (parent_count - left_count >= min_data_in_leaf)
                        & (gain > gamma)
                        & (gain > SPLIT_GAIN_EPS)
                    )
                    gains[direction, candidate] = gain if admissible else -np.inf
            best = -np.inf
            best_candidate = -1
            best_dir = 0
            for candidate in range(n_kept):
                for direction in range(n_directions):
                    if gains[direction, candidate] > best:
                        best = gains[direction, candidate]
                        best_candidate = candidate
                        best_dir = direction
            if best_candidate >= 0:
                best_bin[node, feature] = kept[best_candidate]
                best_direction[node, feature] = best_dir
            best_gain[node, feature] = best
            if best > -np.inf:
                with_missing = best_dir == 1
                # The running sums to the bin, recomputed over the kept bins (the others
                # hold zeros), a row of every output's fields at a time.
                left = best_left[node, feature]
                left[:] = 0
                for candidate in range(best_candidate + 1):
                    cell = kept[candidate]
                    for output in range(n_outputs):
                        left[3 * output] += hist[cell, 2 * output]
                        left[3 * output + 1] += hist[cell, 2 * output + 1]
                for output in range(n_outputs):
                    if with_missing:
                        left[3 * output] += hist[missing_bin, 2 * output]
                        left[3 * output + 1] += hist[missing_bin, 2 * output + 1]
                    left[3 * output + 2] = kept_count[best_candidate] + (
                        missing_count if with_missing else 0
                    )


def find_best_vector_splits(histograms, scales, n_value_bins, missing_bin, params, feature_mask):
    """:func:`gpuboost.core.vector_split.find_best_vector_splits` of NumPy
    :class:`~gpuboost.core.vector_split.OutputHistograms`, compiled (the same table, bit
    for bit); scales that are not powers of two go to the definition itself."""
    if not all(is_power_of_two(g) and is_power_of_two(h) for g, h in scales):
        return scan_in_arrays(
            np, histograms, scales, n_value_bins, missing_bin, params, feature_mask
        )
    # C order always (a slice of a batch's nodes is copied): one compiled signature, the
    # one the warm-up compiles, not a second one compiled at first use.
    cells = np.ascontiguousarray(histograms.cells)
    counts = np.ascontiguousarray(histograms.counts)
    n_outputs = histograms.n_outputs
    n_nodes, n_features = cells.shape[:2]
    parents = np.empty((n_outputs, n_nodes, 3), dtype=np.int64)
    sized(_node_fields, work=cells.shape[2] * n_outputs * n_nodes)(
        cells, counts, n_outputs, parents
    )
    n_candidates = scan_candidates(n_value_bins, missing_bin)
    shape = (n_nodes, max(n_features, 1))
    best_gain = np.full(shape, -np.inf)
    best_bin = np.zeros(shape, dtype=np.int64)
    best_direction = np.zeros(shape, dtype=np.int64)
    best_left = np.zeros(shape + (3 * n_outputs,), dtype=np.int64)
    if n_nodes and n_features and n_candidates > 0:
        use_mask = feature_mask is not None
        mask = np.ascontiguousarray(feature_mask) if use_mask else np.ones((1, 1), dtype=bool)
        n_pairs = n_nodes * n_features
        scan = sized(_scan, work=n_pairs * n_candidates * n_outputs * 8)
        n_chunks = 1 if scan is _scan.serial else min(n_pairs, 4 * threads())
        scan(
            cells,
            counts,
            n_outputs,
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
            n_chunks,
            best_gain,
            best_bin,
            best_direction,
            best_left,
        )
    # A node's best: the best of its features in feature order (the first maximum).
    return table_of_pairs(
        parents, best_gain, best_bin, best_direction, best_left, counts[:, :, missing_bin] > 0
    )
