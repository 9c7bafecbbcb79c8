"""Split scan of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.split_scan`; CUDA: ``cuda/split_scan.cu``).

Every (node, allowed feature) pair, pairs spread over the threads, takes the feature's
exact int64 running sums over its bins, evaluates the gains of both missing-value
directions of every candidate with the
formulas of :mod:`gpuboost.core.gain`, written out below in the same float64 operation
order (``cuda/gain.cuh`` does the same), so gains are the reference's bit for bit
(docs/DESIGN.md, "Gain and leaf value"), then visits the candidates in the order
(bin, missing right before missing left) for its best; a node's best is then the best of
its features in feature order. One replaces the best only when strictly better, which
is the reference's tie rule. The gains of a feature are computed in a loop without
dependences between candidates, which the compiler vectorizes. The scales are powers of
two (:func:`gpuboost.core.quantize.quantization_scale`), so the loop multiplies the
integer sums by ``1 / scale`` where the reference divides by ``scale``: the same bits,
at two divisions per candidate instead of six (division is what bounds this loop;
:func:`scan_arguments` refuses any other scale).

A bin holding no row of the node leaves the running sums as they were, so its
candidates equal the previous bin's and can never be strictly better: they are never
evaluated (deep nodes hold rows in few bins).
"""

import numpy as np

from ...core.dtypes import HIST_COUNT, HIST_GRAD, HIST_HESS
from ...core.gain import SPLIT_GAIN_EPS, no_split_records
from ...core.quantize import is_power_of_two
from .jit import kernel, prange, sized, threads
from .scalar import clip, maximum, sign

__all__ = [
    "admissible",
    "find_best_splits",
    "scan_node",
    "scan_arguments",
    "records_of",
    "bin_words",
    "words_per_feature",
    "INT_COLUMNS",
]

#: Columns of the kernel's integer output, in this order.
_FEATURE, _BIN, _DEFAULT_LEFT, _LEFT, _PARENT = 0, 1, 2, 3, 6
INT_COLUMNS = 9


@kernel
def _threshold_l1(sum_gradients, reg_alpha):
    """gpuboost.core.gain.threshold_l1."""
    if reg_alpha == 0.0:
        return sum_gradients
    return sign(sum_gradients) * maximum(abs(sum_gradients) - reg_alpha, 0.0)


@kernel
def admissible(left_h, right_h, left_n, right_n, gain, min_child_weight, min_data_in_leaf, gamma):
    """gpuboost.core.gain.admissible of one candidate: both children with ``H >=
    min_child_weight`` and ``count >= min_data_in_leaf``, ``gain > gamma`` and ``gain >
    SPLIT_GAIN_EPS``."""
    return (
        left_h >= min_child_weight
        and right_h >= min_child_weight
        and left_n >= min_data_in_leaf
        and right_n >= min_data_in_leaf
        and gain > gamma
        and gain > SPLIT_GAIN_EPS
    )


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
def _candidate_sums(scratch_int, bin_, extra_g, extra_h, parent_g, parent_h, inverse_g, inverse_h):
    """The float sums ``(G_L, H_L, G_R, H_R)`` of candidate ``bin_``: left = running sums
    (``scratch_int`` rows 0, 1) plus ``extra``, right = parent minus left, times the
    inverse scales (exact: the scales are powers of two, so these are the reference's
    divisions bit for bit)."""
    left_g = scratch_int[0, bin_] + extra_g
    left_h = scratch_int[1, bin_] + extra_h
    return (
        left_g * inverse_g,
        left_h * inverse_h,
        (parent_g - left_g) * inverse_g,
        (parent_h - left_h) * inverse_h,
    )


@kernel
def _monotone_gains(
    scratch_int,
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
    scratch_float,
    out,
):
    """gpuboost.core.gain.monotone_split_gain of the candidates (see :func:`_plain_gains`):
    children's weights clipped to the node's bounds, -inf where they break ``direction``."""
    inverse_gradients = 1.0 / scale_gradients  # exact: the scales are powers of two
    inverse_hessians = 1.0 / scale_hessians
    for bin_ in range(n_candidates):
        left_gradient, left_hessian, right_gradient, right_hessian = _candidate_sums(
            scratch_int,
            bin_,
            extra_g,
            extra_h,
            parent_g,
            parent_h,
            inverse_gradients,
            inverse_hessians,
        )
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
        scratch_float[out, bin_] = gain
        scratch_float[out + 1, bin_] = left_hessian
        scratch_float[out + 2, bin_] = right_hessian


@kernel
def _plain_gains(
    scratch_int,
    extra_g,
    extra_h,
    parent_g,
    parent_h,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    parent_score,
    n_candidates,
    scratch_float,
    out,
):
    """Gains of the candidates whose left sums are ``sum + extra`` (running sums
    ``scratch_int[0]`` (G) and ``scratch_int[1]`` (H), plus the missing bin's for
    missing-left), without L1 and max_delta_step, into ``scratch_float[out]``, their
    left and right hessians into rows ``out + 1`` and ``out + 2``: :func:`_leaf_score`'s
    expressions with no loop-carried dependence, so LLVM evaluates several bins per
    vector instruction (the same IEEE operations per element, hence the same bits). Rows
    of the scratch arrays, not slices of them: a slice per call costs more than the
    loop on a node of a few rows."""
    inverse_gradients = 1.0 / scale_gradients  # exact: the scales are powers of two
    inverse_hessians = 1.0 / scale_hessians
    for bin_ in range(n_candidates):
        left_gradient, left_hessian, right_gradient, right_hessian = _candidate_sums(
            scratch_int,
            bin_,
            extra_g,
            extra_h,
            parent_g,
            parent_h,
            inverse_gradients,
            inverse_hessians,
        )
        left_denominator = left_hessian + reg_lambda
        right_denominator = right_hessian + reg_lambda
        left_score = (
            left_gradient * left_gradient / left_denominator if left_denominator > 0.0 else 0.0
        )
        right_score = (
            right_gradient * right_gradient / right_denominator if right_denominator > 0.0 else 0.0
        )
        scratch_float[out, bin_] = (left_score + right_score) - parent_score
        scratch_float[out + 1, bin_] = left_hessian
        scratch_float[out + 2, bin_] = right_hessian


@kernel
def _general_gains(
    scratch_int,
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
    scratch_float,
    out,
):
    """:func:`_plain_gains` with L1 and max_delta_step (the general :func:`_leaf_score`)."""
    inverse_gradients = 1.0 / scale_gradients  # exact: the scales are powers of two
    inverse_hessians = 1.0 / scale_hessians
    for bin_ in range(n_candidates):
        left_gradient, left_hessian, right_gradient, right_hessian = _candidate_sums(
            scratch_int,
            bin_,
            extra_g,
            extra_h,
            parent_g,
            parent_h,
            inverse_gradients,
            inverse_hessians,
        )
        scratch_float[out, bin_] = (
            _leaf_score(left_gradient, left_hessian, reg_lambda, reg_alpha, max_delta_step)
            + _leaf_score(right_gradient, right_hessian, reg_lambda, reg_alpha, max_delta_step)
        ) - parent_score
        scratch_float[out + 1, bin_] = left_hessian
        scratch_float[out + 2, bin_] = right_hessian


#: Bit index of a 64-bit word's lowest set bit ``low``: ``_DE_BRUIJN_INDEX[(low *
#: _DE_BRUIJN) >> 58]`` (products modulo 2**64; every power of two gives a distinct top
#: six bits).
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DE_BRUIJN_INDEX = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    _DE_BRUIJN_INDEX[((1 << _bit) * 0x03F79D71B4CB0A89 % 2**64) >> 58] = _bit
del _bit
#: Bins per word of :func:`bin_words`.
_WORD_BITS = 64


@kernel
def words_per_feature(n_bins):
    """The words of one feature's bitmap of bins (:func:`bin_words`)."""
    return (n_bins + _WORD_BITS - 1) // _WORD_BITS


@kernel
def bin_words(X_binned, sample_indices, start, stop, words):
    """``words`` (OUT; (n_features, words_per_feature(n_bins)) uint64): bit ``b`` of
    feature ``f``'s words set where a row of ``sample_indices[start:stop]`` has bin ``b``
    (word ``b // 64``, bit ``b % 64``), the others clear."""
    words[:] = 0
    n_features = X_binned.shape[1]
    for position in range(start, stop):
        row = sample_indices[position]
        for feature in range(n_features):
            bin_ = np.uint64(X_binned[row, feature])
            words[feature, bin_ >> np.uint64(6)] |= np.uint64(1) << (bin_ & np.uint64(63))


@kernel
def _gather_all(hist, feature, n_candidates, scratch_int):
    """The running sums of ``feature``'s bins below ``n_candidates`` at bin 0 and at each
    later bin holding rows, with the bins, into ``scratch_int`` rows 0-3 (G, H, n, bin);
    returns how many. Written at every bin, kept by advancing past it: no branch to
    mispredict where about half the bins of a deep node are empty (twice as fast as a
    conditional store)."""
    running_g = np.int64(0)
    running_h = np.int64(0)
    running_n = np.int64(0)
    n_kept = 0
    for bin_ in range(n_candidates):
        count = hist[feature, bin_, HIST_COUNT]
        running_g += hist[feature, bin_, HIST_GRAD]
        running_h += hist[feature, bin_, HIST_HESS]
        running_n += count
        scratch_int[0, n_kept] = running_g
        scratch_int[1, n_kept] = running_h
        scratch_int[2, n_kept] = running_n
        scratch_int[3, n_kept] = bin_
        n_kept += np.int64((bin_ == 0) | (count != 0))
    return n_kept


@kernel
def _gather_listed(hist, feature, n_candidates, words, scratch_int):
    """:func:`_gather_all` visiting only bin 0 and the bins set in ``words`` (the bins of
    the node's rows, :func:`bin_words`), in increasing order: a node of a few rows
    reads a few cells instead of every bin. Empty bins add nothing to the running sums,
    so the kept sums and bins are :func:`_gather_all`'s."""
    running_g = np.int64(0)
    running_h = np.int64(0)
    running_n = np.int64(0)
    n_kept = 0
    for word in range(words.shape[1]):
        bits = words[feature, word] | (np.uint64(1) if word == 0 else np.uint64(0))
        while bits != np.uint64(0):
            low = bits & (~bits + np.uint64(1))
            bin_ = word * _WORD_BITS + _DE_BRUIJN_INDEX[(low * _DE_BRUIJN) >> np.uint64(58)]
            if bin_ >= n_candidates:
                return n_kept
            running_g += hist[feature, bin_, HIST_GRAD]
            running_h += hist[feature, bin_, HIST_HESS]
            running_n += hist[feature, bin_, HIST_COUNT]
            scratch_int[0, n_kept] = running_g
            scratch_int[1, n_kept] = running_h
            scratch_int[2, n_kept] = running_n
            scratch_int[3, n_kept] = bin_
            n_kept += 1
            bits ^= low
    return n_kept


@kernel
def _best_of_feature(
    hist,
    feature,
    n_candidates,
    missing_bin,
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
    plain,
    use_monotone,
    lower,
    upper,
    monotone_sign,
    words,
    use_words,
    scratch_int,
    scratch_float,
    best_int,
):
    """The best candidate of one feature of one node; returns its gain (-inf: none) and
    writes its (bin, default_left, left G, left H, left count) to ``best_int``.

    Only the candidates that can win are evaluated: bin 0, and each later bin holding rows
    of the node (see the module docstring), gathered into the scratch arrays first: from
    every bin, or with ``use_words`` from the bins ``words`` lists (:func:`bin_words`).
    """
    missing_g = hist[feature, missing_bin, HIST_GRAD]
    missing_h = hist[feature, missing_bin, HIST_HESS]
    missing_n = hist[feature, missing_bin, HIST_COUNT]
    if use_words:
        n_kept = _gather_listed(hist, feature, n_candidates, words, scratch_int)
    else:
        n_kept = _gather_all(hist, feature, n_candidates, scratch_int)
    n_directions = 2 if missing_n > 0 else 1
    for direction in range(n_directions):
        extra_g = missing_g if direction == 1 else np.int64(0)
        extra_h = missing_h if direction == 1 else np.int64(0)
        if use_monotone:
            _monotone_gains(
                scratch_int,
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
                monotone_sign,
                n_kept,
                scratch_float,
                3 * direction,
            )
        elif plain:
            _plain_gains(
                scratch_int,
                extra_g,
                extra_h,
                parent_g,
                parent_h,
                scale_gradients,
                scale_hessians,
                reg_lambda,
                parent_score,
                n_kept,
                scratch_float,
                3 * direction,
            )
        else:
            _general_gains(
                scratch_int,
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
                n_kept,
                scratch_float,
                3 * direction,
            )
    # Candidates in order (bin, missing right before missing left); a candidate replaces
    # the best only when strictly better.
    best_gain = -np.inf
    for kept in range(n_kept):
        for direction in range(n_directions):
            gain = scratch_float[3 * direction, kept]
            if not gain > best_gain:
                continue
            left_n = scratch_int[2, kept] + (missing_n if direction == 1 else np.int64(0))
            right_n = parent_n - left_n
            if admissible(
                scratch_float[3 * direction + 1, kept],
                scratch_float[3 * direction + 2, kept],
                left_n,
                right_n,
                gain,
                min_child_weight,
                min_data_in_leaf,
                gamma,
            ):
                best_gain = gain
                best_int[0] = scratch_int[3, kept]
                if missing_n > 0:
                    best_int[1] = 1 if direction == 1 else 0
                else:
                    best_int[1] = 1 if left_n >= right_n else 0
                best_int[2] = scratch_int[0, kept] + (missing_g if direction == 1 else np.int64(0))
                best_int[3] = scratch_int[1, kept] + (missing_h if direction == 1 else np.int64(0))
                best_int[4] = left_n
    return best_gain


@kernel
def _node_totals(histogram):
    """A node's integer sums ``(G, H, n)``: over the bins of its first feature (every
    row is in exactly one bin of each feature). ``histogram``: (n_features, n_bins, 3)."""
    parent_g = np.int64(0)
    parent_h = np.int64(0)
    parent_n = np.int64(0)
    for bin_ in range(histogram.shape[1]):
        parent_g += histogram[0, bin_, HIST_GRAD]
        parent_h += histogram[0, bin_, HIST_HESS]
        parent_n += histogram[0, bin_, HIST_COUNT]
    return parent_g, parent_h, parent_n


@kernel
def _node_score(
    parent_g,
    parent_h,
    scale_gradients,
    scale_hessians,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    use_monotone,
    lower,
    upper,
):
    """A node's own score: ``leaf_score`` of its sums, or under monotone constraints the
    score at its weight clipped to ``[lower, upper]``."""
    if not use_monotone:
        return _leaf_score(
            parent_g / scale_gradients,
            parent_h / scale_hessians,
            reg_lambda,
            reg_alpha,
            max_delta_step,
        )
    parent_w = _bounded_weight(
        parent_g / scale_gradients,
        parent_h / scale_hessians,
        reg_lambda,
        reg_alpha,
        max_delta_step,
        lower,
        upper,
    )
    return _score_given_weight(
        parent_g / scale_gradients,
        parent_h / scale_hessians,
        parent_w,
        reg_lambda,
        reg_alpha,
    )


@kernel
def scan_node(
    histogram,
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
    lower,
    upper,
    words,
    use_words,
    scratch_int,
    scratch_float,
    best_int,
    out_int,
):
    """The best split of one node, its features in order on one thread (what
    :func:`_scan` computes for the node, spread over threads there): fills ``out_int``
    (``INT_COLUMNS``) and returns the gain (-inf: no split).

    ``histogram`` (n_features, n_bins, 3); ``feature_mask`` (n_features,) bool, read
    with ``use_mask``; ``words`` (n_features, n_words) uint64, read with ``use_words``:
    each feature's bins holding rows (:func:`bin_words`); scratch as
    :func:`_best_of_feature` takes it, ``best_int`` (5,).
    """
    n_features = histogram.shape[0]
    parent_g, parent_h, parent_n = _node_totals(histogram)
    parent_score = _node_score(
        parent_g,
        parent_h,
        scale_gradients,
        scale_hessians,
        reg_lambda,
        reg_alpha,
        max_delta_step,
        use_monotone,
        lower,
        upper,
    )
    plain = reg_alpha == 0.0 and max_delta_step == 0.0
    best_gain = -np.inf
    out_int[_FEATURE] = -1
    for feature in range(n_features):
        if use_mask and not feature_mask[feature]:
            continue
        n_candidates = n_value_bins[feature] - 1
        if n_candidates <= 0:
            continue
        gain = _best_of_feature(
            histogram,
            feature,
            n_candidates,
            missing_bin,
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
            plain,
            use_monotone,
            lower,
            upper,
            monotone[feature] if use_monotone else 0,
            words,
            use_words,
            scratch_int,
            scratch_float,
            best_int,
        )
        if gain > best_gain:
            best_gain = gain
            out_int[_FEATURE] = feature
            out_int[_BIN] = best_int[0]
            out_int[_DEFAULT_LEFT] = best_int[1]
            out_int[_LEFT] = best_int[2]
            out_int[_LEFT + 1] = best_int[3]
            out_int[_LEFT + 2] = best_int[4]
    out_int[_PARENT] = parent_g
    out_int[_PARENT + 1] = parent_h
    out_int[_PARENT + 2] = parent_n
    return best_gain


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
    n_chunks,
    out_int,
    out_gain,
):
    """Three parallel loops: the nodes' own sums and scores; the best candidate of every
    (node, feature) pair, pairs cut into ``n_chunks`` ranges (so the features of one
    node spread over the threads too); per node, the best of its features in feature
    order (strictly better replaces: the tie rule of the sequential scan)."""
    n_nodes, n_features, n_bins, _ = histograms.shape
    plain = reg_alpha == 0.0 and max_delta_step == 0.0
    parents = np.empty((n_nodes, 3), dtype=np.int64)
    parent_scores = np.empty(n_nodes, dtype=np.float64)
    for node in prange(n_nodes):
        parent_g, parent_h, parent_n = _node_totals(histograms[node])
        parents[node, 0] = parent_g
        parents[node, 1] = parent_h
        parents[node, 2] = parent_n
        parent_scores[node] = _node_score(
            parent_g,
            parent_h,
            scale_gradients,
            scale_hessians,
            reg_lambda,
            reg_alpha,
            max_delta_step,
            use_monotone,
            node_bounds[node, 0] if use_monotone else -np.inf,
            node_bounds[node, 1] if use_monotone else np.inf,
        )
    n_pairs = n_nodes * n_features
    no_words = np.zeros((1, 1), dtype=np.uint64)
    pair_gain = np.full(n_pairs, -np.inf)
    pair_int = np.empty((n_pairs, 5), dtype=np.int64)
    for chunk in prange(n_chunks):
        scratch_int = np.empty((4, n_bins), dtype=np.int64)
        scratch_float = np.empty((6, n_bins), dtype=np.float64)
        for pair in range(chunk * n_pairs // n_chunks, (chunk + 1) * n_pairs // n_chunks):
            node = pair // n_features
            feature = pair - node * n_features
            if use_mask and not feature_mask[node, feature]:
                continue
            n_candidates = n_value_bins[feature] - 1
            if n_candidates <= 0:
                continue
            pair_gain[pair] = _best_of_feature(
                histograms[node],
                feature,
                n_candidates,
                missing_bin,
                parents[node, 0],
                parents[node, 1],
                parents[node, 2],
                parent_scores[node],
                scale_gradients,
                scale_hessians,
                reg_lambda,
                reg_alpha,
                max_delta_step,
                min_child_weight,
                min_data_in_leaf,
                gamma,
                plain,
                use_monotone,
                node_bounds[node, 0] if use_monotone else -np.inf,
                node_bounds[node, 1] if use_monotone else np.inf,
                monotone[feature] if use_monotone else 0,
                no_words,
                False,
                scratch_int,
                scratch_float,
                pair_int[pair],
            )
    for node in prange(n_nodes):
        best_gain = -np.inf
        best = -1
        for feature in range(n_features):
            gain = pair_gain[node * n_features + feature]
            if gain > best_gain:
                best_gain = gain
                best = feature
        row = out_int[node]
        row[_FEATURE] = best
        if best >= 0:
            chosen = pair_int[node * n_features + best]
            row[_BIN] = chosen[0]
            row[_DEFAULT_LEFT] = chosen[1]
            row[_LEFT] = chosen[2]
            row[_LEFT + 1] = chosen[3]
            row[_LEFT + 2] = chosen[4]
        row[_PARENT] = parents[node, 0]
        row[_PARENT + 1] = parents[node, 1]
        row[_PARENT + 2] = parents[node, 2]
        out_gain[node] = best_gain


#: (node, feature) ranges per thread of the scan: a few, so that threads finishing early
#: (nodes or features without candidates) take more.
_CHUNKS_PER_THREAD = 4


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
    if n_nodes == 0:
        return no_split_records(0)
    out_int = np.empty((n_nodes, INT_COLUMNS), dtype=np.int64)
    out_gain = np.empty(n_nodes, dtype=np.float64)
    sized(_scan)(
        np.ascontiguousarray(histograms),
        *scan_arguments(
            n_value_bins,
            missing_bin,
            scale_gradients,
            scale_hessians,
            params,
            n_nodes,
            feature_mask,
            node_bounds,
        ),
        max(1, min(n_nodes * histograms.shape[1], _CHUNKS_PER_THREAD * threads())),
        out_int,
        out_gain,
    )
    return records_of(out_int, out_gain)


def scan_arguments(
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    params,
    n_nodes,
    feature_mask,
    node_bounds,
):
    """The scan kernels' arguments after the histograms, from ``scale_gradients`` to
    ``node_bounds`` (:func:`_scan`, and per node :func:`scan_node`), as they take them.
    The scales must be powers of two, as quantization makes them (the kernels multiply
    by their reciprocals)."""
    for scale in (scale_gradients, scale_hessians):
        if not is_power_of_two(scale):
            raise ValueError(
                "the compiled split scan takes power-of-two scales, as "
                f"gpuboost.core.quantize.quantization_scale gives them; got {scale!r}"
            )
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
    return (
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
    )


def records_of(out_int, out_gain):
    """``SPLIT_RECORD_DTYPE`` records of the scan kernels' outputs (``out_int``
    (n_nodes, INT_COLUMNS), ``out_gain`` (n_nodes,))."""
    records = no_split_records(len(out_gain))
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
