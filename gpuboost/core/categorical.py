"""Categorical splits: the category bitsets and the split scan (docs/DESIGN.md,
"Categorical features").

A categorical feature has one value bin per category (its *code*: categories are
numbered by decreasing training frequency, so bin ``b`` is code ``b``, and when a
feature has more categories than ``max_cat`` allows, the codes from ``n_value_bins - 1``
on share the last value bin, "other"). A categorical split sends the rows whose bin
is in its *left set* left, missing rows follow ``default_left``. Sets are bitsets of
``uint32`` words: bit ``b % 32`` of word ``b // 32``.

The split scan runs on the host for every backend, on the histograms of the
categorical features only (``n_nodes x n_categorical x n_bins x 3`` int64: a few KB
per node; the CUDA backend copies that slice to the host, once per batch of nodes).
Per node and feature it sorts at most ``max_bin`` categories, which is cheap next to
the histograms; the result does not depend on the backend, so both give the same
trees. :func:`find_best_categorical_splits` is the vectorized scan (numpy, over all
nodes of a batch at once; the definition, ``Backend.find_best_categorical_splits``),
:func:`find_best_categorical_splits_naive` the loop reference the tests compare it with;
the compiled CPU backend runs :mod:`gpuboost.backends.cpu.categorical_scan`, the same
records bit for bit.

Candidates, in the order that breaks ties (the first maximum wins):

* **one-vs-rest** (``n_value_bins <= max_cat_to_onehot``): left set ``{c}`` for
  ``c = 0, 1, ...``; gains with ``reg_lambda``.
* **many-vs-many** (LightGBM's): the categories with at least ``cat_smooth`` rows in
  the node (LightGBM's rule; and at least one row), sorted by ``G / (H + cat_smooth)``
  ascending (ties: lower code first); left sets are the first ``i`` of that order
  (``i = 1 ..``), then the last ``i`` (``i = 1 ..``), ``i`` at most
  ``min(max_cat_threshold, (n_eligible + 1) // 2)``, scanned as LightGBM groups them:
  a prefix is evaluated once at least ``min_data_per_group`` rows joined it since the
  last evaluated one, and the scan of a direction stops when fewer than
  ``min_data_per_group`` rows are left out; the children's scores use
  ``reg_lambda + cat_l2`` (the parent's ``reg_lambda``).

``cat_smooth`` is one number for every feature, or with ``cat_smooth_estimate`` one per
feature and tree (:func:`estimated_cat_smooth`, from the tree's root histogram): the
scan takes it as ``smoothing``.

Each candidate with the missing rows right first, then left (only when the node has
missing rows for the feature; otherwise missing values go to the larger child, ties
left, as for numeric splits). Admissibility is that of numeric splits.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from ..params import PARAMETERS
from .dtypes import HIST_COUNT, HIST_GRAD, HIST_HESS
from .gain import admissible, leaf_score, no_split_records

__all__ = [
    "CategoricalParams",
    "BITSET_DTYPE",
    "BITS_PER_WORD",
    "SPLIT_SET_WORDS",
    "bitset_words",
    "bitset_from_members",
    "bitset_members",
    "bitset_contains",
    "estimated_cat_smooth",
    "find_best_categorical_splits",
    "find_best_categorical_splits_naive",
]

#: dtype of the words of a category bitset.
BITSET_DTYPE = np.uint32
#: Bits per bitset word.
BITS_PER_WORD = 32
#: Words of a split's left set over bins (256 bins at most: 8 words).
SPLIT_SET_WORDS = 256 // BITS_PER_WORD


@dataclass(frozen=True)
class CategoricalParams:
    """The parameters of the categorical split scan (see the module docstring); the
    defaults are the training parameters' (gpuboost.params), except
    ``cat_smooth_estimate``, which the objective resolves (False here: LightGBM's one
    ``cat_smooth``)."""

    max_cat_to_onehot: int = PARAMETERS["max_cat_to_onehot"].default
    max_cat_threshold: int = PARAMETERS["max_cat_threshold"].default
    cat_smooth: float = PARAMETERS["cat_smooth"].default
    cat_l2: float = PARAMETERS["cat_l2"].default
    min_data_per_group: int = PARAMETERS["min_data_per_group"].default
    cat_smooth_estimate: bool = False

    @classmethod
    def from_params(cls, params):
        """Build from a validated parameter dict (``gpuboost.params``)."""
        return cls(
            max_cat_to_onehot=int(params["max_cat_to_onehot"]),
            max_cat_threshold=int(params["max_cat_threshold"]),
            cat_smooth=float(params["cat_smooth"]),
            cat_l2=float(params["cat_l2"]),
            min_data_per_group=int(params["min_data_per_group"]),
            cat_smooth_estimate=bool(params["cat_smooth_estimate"]),
        )


def bitset_words(n_bits):
    """Words of a bitset of ``n_bits`` bits (an int; elementwise for an int array)."""
    if np.ndim(n_bits):
        return (np.asarray(n_bits, dtype=np.int64) + BITS_PER_WORD - 1) // BITS_PER_WORD
    return (int(n_bits) + BITS_PER_WORD - 1) // BITS_PER_WORD


def bitset_from_members(members, n_words):
    """The bitset (ndarray of ``n_words`` uint32) with the bits ``members`` set."""
    words = np.zeros(n_words, dtype=BITSET_DTYPE)
    for member in np.asarray(members, dtype=np.int64).reshape(-1):
        words[member // BITS_PER_WORD] |= BITSET_DTYPE(1 << int(member % BITS_PER_WORD))
    return words


def bitset_members(words):
    """The set bits of a bitset, ndarray of int64 in increasing order."""
    words = np.asarray(words, dtype=BITSET_DTYPE)
    bits = (words[:, None] >> np.arange(BITS_PER_WORD, dtype=BITSET_DTYPE)[None, :]) & 1
    return np.flatnonzero(bits.reshape(-1)).astype(np.int64)


def bitset_contains(xp, table, rows, values):
    """Whether ``values[i]`` is in the bitset ``table[rows[i]]`` (array-module code).

    Parameters
    ----------
    xp : module
        numpy, or the CUDA backend's array module.
    table : array of shape (n_sets, n_words), uint32
    rows : array of shape (n,), int
    values : array of shape (n,), int64, each in ``[0, n_words * 32)``

    Returns
    -------
    array of shape (n,), bool
    """
    words = table[rows, values // BITS_PER_WORD]
    return ((words >> (values % BITS_PER_WORD).astype(BITSET_DTYPE)) & 1) == 1


def _scan_params(split_params, cat_params):
    """The split parameters of many-vs-many children (``reg_lambda + cat_l2``, their
    own ``gamma``: ``SplitParams.many_vs_many``)."""
    many = split_params.many_vs_many()
    return replace(many, reg_lambda=many.reg_lambda + cat_params.cat_l2)


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
):
    """Best categorical split of every node of a batch (vectorized over nodes).

    Parameters
    ----------
    histograms : ndarray of shape (n_nodes, n_categorical, n_bins, 3), int64
        The histograms of the categorical features only (host).
    features : ndarray of shape (n_categorical,), int
        Their feature indices, increasing.
    n_value_bins : ndarray of shape (n_categorical,), int
    missing_bin : int
    scale_gradients, scale_hessians : float
    split_params : SplitParams
    cat_params : CategoricalParams
    feature_mask : ndarray of shape (n_nodes, n_features), bool, optional
    smoothing : ndarray of shape (n_categorical,), float64, optional
        Each feature's ``cat_smooth`` (:func:`estimated_cat_smooth`); None:
        ``cat_params.cat_smooth`` for all.

    Returns
    -------
    records : ndarray of shape (n_nodes,), SPLIT_RECORD_DTYPE
        ``bin`` is 0 (unused) at a split; the node sums are filled in. A node whose best gain
        overflowed keeps ``gain == inf`` and no split (as the numeric scan).
    left_sets : ndarray of shape (n_nodes, SPLIT_SET_WORDS), uint32
        The bins going left (zeros where no split).
    """
    n_nodes = histograms.shape[0]
    records = no_split_records(n_nodes)
    left_sets = np.zeros((n_nodes, SPLIT_SET_WORDS), dtype=BITSET_DTYPE)
    if n_nodes == 0:
        return records, left_sets
    parent = histograms[:, 0].sum(axis=1) if len(features) else None
    if parent is None:
        return records, left_sets
    records["sum_gradients"] = parent[:, HIST_GRAD]
    records["sum_hessians"] = parent[:, HIST_HESS]
    records["count"] = parent[:, HIST_COUNT]
    parent_score = leaf_score(
        parent[:, HIST_GRAD] / scale_gradients, parent[:, HIST_HESS] / scale_hessians, split_params
    )
    best_gain = np.full(n_nodes, -np.inf)
    overflowed = np.zeros(n_nodes, dtype=bool)
    rows = np.arange(n_nodes)
    for position, feature in enumerate(features):
        n_bins_f = int(n_value_bins[position])
        if n_bins_f <= 1:
            continue
        hist = histograms[:, position, :n_bins_f, :]  # (n_nodes, k, 3)
        missing = histograms[:, position, missing_bin, :]  # (n_nodes, 3)
        allowed = np.ones(n_nodes, dtype=bool) if feature_mask is None else feature_mask[:, feature]
        if n_bins_f <= cat_params.max_cat_to_onehot:
            params = split_params
            # Candidate j: left set {j}; members (n_nodes, k, k) as a boolean matrix.
            left = hist.astype(np.int64)
            members = np.broadcast_to(np.eye(n_bins_f, dtype=bool), (n_nodes, n_bins_f, n_bins_f))
            valid = np.ones((n_nodes, n_bins_f), dtype=bool)
        else:
            params = _scan_params(split_params, cat_params)
            left, members, valid = _many_vs_many(
                hist,
                parent[:, HIST_COUNT],
                scale_gradients,
                scale_hessians,
                cat_params,
                _feature_smoothing(cat_params, smoothing, position),
            )
        gains, lefts = [], []
        has_missing = missing[:, HIST_COUNT] > 0
        for default_left in (False, True):
            candidate_left = left + (missing[:, None, :] if default_left else 0)
            right = parent[:, None, :] - candidate_left
            left_h = candidate_left[..., HIST_HESS] / scale_hessians
            right_h = right[..., HIST_HESS] / scale_hessians
            gain = (
                leaf_score(candidate_left[..., HIST_GRAD] / scale_gradients, left_h, params)
                + leaf_score(right[..., HIST_GRAD] / scale_gradients, right_h, params)
            ) - parent_score[:, None]
            ok = valid & allowed[:, None]
            ok &= admissible(
                left_h,
                candidate_left[..., HIST_COUNT],
                right_h,
                right[..., HIST_COUNT],
                gain,
                params,
            )
            if default_left:
                ok &= has_missing[:, None]
            gains.append(np.where(ok, gain, -np.inf))
            lefts.append(candidate_left)
        stacked = np.stack(gains, axis=-1).reshape(n_nodes, -1)  # (candidate, direction)
        choice = np.argmax(stacked, axis=1)
        gain = stacked[rows, choice]
        overflowed |= gain == np.inf
        better = np.isfinite(gain) & (gain > best_gain)
        if not better.any():
            continue
        candidate, direction = np.divmod(choice, 2)
        nodes = np.flatnonzero(better)
        chosen_left = np.where(
            (direction[nodes] == 1)[:, None],
            lefts[1][nodes, candidate[nodes]],
            lefts[0][nodes, candidate[nodes]],
        )
        best_gain[nodes] = gain[nodes]
        records["feature"][nodes] = feature
        records["bin"][nodes] = 0  # unused by categorical splits
        records["gain"][nodes] = gain[nodes]
        records["left_sum_gradients"][nodes] = chosen_left[:, HIST_GRAD]
        records["left_sum_hessians"][nodes] = chosen_left[:, HIST_HESS]
        records["left_count"][nodes] = chosen_left[:, HIST_COUNT]
        right_count = parent[nodes, HIST_COUNT] - chosen_left[:, HIST_COUNT]
        larger_left = chosen_left[:, HIST_COUNT] >= right_count
        records["default_left"][nodes] = np.where(
            has_missing[nodes], direction[nodes] == 1, larger_left
        )
        left_sets[nodes] = 0
        for node in nodes:
            left_sets[node] = bitset_from_members(
                np.flatnonzero(members[node, candidate[node]]), SPLIT_SET_WORDS
            )
    # Overflowed sums: no split, the gain kept so that the splitter reports it.
    records["feature"][overflowed] = -1
    records["bin"][overflowed] = -1
    records["gain"][overflowed] = np.inf
    left_sets[overflowed] = 0
    return records, left_sets


def _feature_smoothing(cat_params, smoothing, position):
    """The ``cat_smooth`` of the categorical feature at ``position``."""
    return cat_params.cat_smooth if smoothing is None else float(smoothing[position])


def _many_vs_many(hist, node_counts, scale_gradients, scale_hessians, cat_params, cat_smooth):
    """Left sums, members and validity of the many-vs-many candidates of one feature,
    with its ``cat_smooth`` (float).

    Returns
    -------
    left : ndarray of shape (n_nodes, 2 * max_i, 3), int64
        Forward prefixes of sizes 1..max_i, then backward ones.
    members : ndarray of shape (n_nodes, 2 * max_i, k), bool
    valid : ndarray of shape (n_nodes, 2 * max_i), bool
        The prefixes evaluated (:func:`_evaluated_prefixes`).
    """
    n_nodes, k, _ = hist.shape
    counts = hist[..., HIST_COUNT]
    eligible = (counts >= cat_smooth) & (counts > 0)  # a category without rows: in no set
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = (hist[..., HIST_GRAD] / scale_gradients) / (
            hist[..., HIST_HESS] / scale_hessians + cat_smooth
        )
    keys = np.where(eligible, keys, np.inf)
    order = np.argsort(keys, axis=1, kind="stable")  # eligible first, by key then code
    n_eligible = eligible.sum(axis=1)
    max_i = max(1, min(cat_params.max_cat_threshold, (k + 1) // 2))
    limit = np.minimum(cat_params.max_cat_threshold, (n_eligible + 1) // 2)  # per node
    rows = np.arange(n_nodes)[:, None]
    sorted_hist = np.take_along_axis(hist, order[:, :, None], axis=1)
    sorted_hist = np.where(eligible[rows, order][..., None], sorted_hist, 0)
    prefix = np.concatenate(
        [np.zeros((n_nodes, 1, 3), dtype=np.int64), np.cumsum(sorted_hist, axis=1)], axis=1
    )  # prefix[:, j] = sum of the first j sorted categories
    sizes = np.arange(1, max_i + 1)
    forward = prefix[:, np.minimum(sizes, k), :]
    total = prefix[np.arange(n_nodes), n_eligible]  # (n_nodes, 3)
    back_start = np.clip(n_eligible[:, None] - sizes[None, :], 0, k)
    backward = total[:, None, :] - np.take_along_axis(prefix, back_start[:, :, None], axis=1)
    left = np.concatenate([forward, backward], axis=1)
    in_limit = sizes[None, :] <= limit[:, None]
    valid = np.concatenate(
        [
            in_limit & _evaluated_prefixes(forward[..., HIST_COUNT], node_counts, cat_params),
            in_limit & _evaluated_prefixes(backward[..., HIST_COUNT], node_counts, cat_params),
        ],
        axis=1,
    )
    # Members: rank of each category in the sorted order.
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(k)[None, :].repeat(n_nodes, axis=0), axis=1)
    rank = np.where(eligible, rank, k)  # ineligible: in no set
    fwd_members = rank[:, None, :] < sizes[None, :, None]
    bwd_members = (rank[:, None, :] >= back_start[:, :, None]) & (
        rank[:, None, :] < n_eligible[:, None, None]
    )
    members = np.concatenate([fwd_members, bwd_members], axis=1)
    return left, members, valid


def estimated_cat_smooth(
    root_histograms, n_value_bins, scale_gradients, scale_hessians, dispersion, cat_params
):
    """Each categorical feature's ``cat_smooth`` for one tree, from the tree's root
    histogram (``cat_smooth_estimate``; docs/DESIGN.md, "Categorical features").

    A one-way random-effects fit of the root's category sums: ``G_c, H_c`` the gradient
    and hessian sums of the ``K`` categories with rows (value bins; the missing bin is no
    category), ``G, H`` their totals, ``phi`` the tree's dispersion (``sum g^2 / sum h``,
    :meth:`~gpuboost.core.quantize.GradientQuantiser.dispersion`), so that ``phi H`` is
    about ``sum g^2``::

        B       = sum_c G_c^2 / H_c - G^2 / H                    (between categories)
        sigma^2 = (phi H - G^2 / H - B) / (H - K)                (noise per unit hessian)
        tau^2   = (B - (K - 1) sigma^2) / (H - sum_c H_c^2 / H)  (variance of the effects)
        cat_smooth = min(cat_params.cat_smooth, sigma^2 / tau^2)

    ``sigma^2 / tau^2`` is the hessian at which a category's mean is half its own and half
    the node's (the shrinkage of ``G_c / (H_c + s)``): where the categories differ by
    more than their noise it is small, and categories of a few rows become eligible
    (Cigarette's states: about 0.3; LightGBM's fixed 10 never lets a state of 8 rows
    in). ``cat_params.cat_smooth`` where ``tau^2 <= 0`` (no effect beyond the noise),
    ``K < 2``, ``H <= K``, ``phi`` is 0 (not measured) or the feature is split
    one-vs-rest. As the trees learn the effects, ``tau^2`` falls and later trees smooth
    up to the cap.

    Determinism (docs/DESIGN.md, "Determinism"): the integer sums are exact, each term
    is one IEEE operation on them, and the sums over categories are :func:`math.fsum`
    (correctly rounded, so independent of order): the same bits on every machine and
    backend, and on Dask, whose root histogram is the workers' sum.

    Parameters
    ----------
    root_histograms : ndarray of shape (n_categorical, n_bins, 3), int64
        The root's histograms of the categorical features.
    n_value_bins : ndarray of shape (n_categorical,), int
    scale_gradients, scale_hessians : float
    dispersion : float
        The tree's ``phi``; 0 when not measured.
    cat_params : CategoricalParams

    Returns
    -------
    ndarray of shape (n_categorical,), float64
    """
    cap = cat_params.cat_smooth
    smoothing = np.full(root_histograms.shape[0], cap, dtype=np.float64)
    if not dispersion > 0.0:
        return smoothing
    for position in range(root_histograms.shape[0]):
        k = int(n_value_bins[position])
        if k <= cat_params.max_cat_to_onehot:
            continue
        hist = root_histograms[position, :k]
        present = (hist[:, HIST_COUNT] > 0) & (hist[:, HIST_HESS] > 0)
        n_present = int(present.sum())
        total_h = int(hist[present, HIST_HESS].sum()) / scale_hessians
        if n_present < 2 or not total_h > n_present:
            continue
        total_g = int(hist[present, HIST_GRAD].sum()) / scale_gradients
        gradients = hist[present, HIST_GRAD] / scale_gradients
        hessians = hist[present, HIST_HESS] / scale_hessians
        mean_square = total_g * total_g / total_h
        between = math.fsum((gradients * gradients / hessians).tolist()) - mean_square
        sigma2 = (dispersion * total_h - mean_square - between) / (total_h - n_present)
        tau2 = (between - (n_present - 1) * sigma2) / (
            total_h - math.fsum((hessians * hessians).tolist()) / total_h
        )
        if tau2 > 0.0:
            smoothing[position] = min(cap, max(sigma2, 0.0) / tau2)
    return smoothing


def _evaluated_prefixes(left_counts, node_counts, cat_params):
    """Which prefixes LightGBM's grouping evaluates: scanning the sorted categories, a
    prefix is evaluated once the rows added since the last evaluated one reach
    ``min_data_per_group``, and the scan stops when fewer than ``min_data_per_group``
    rows are left out of the prefix.

    Parameters
    ----------
    left_counts : ndarray of shape (n_nodes, max_i), int64
        Rows of the prefixes of sizes 1..max_i (non-decreasing along the axis).
    node_counts : ndarray of shape (n_nodes,), int64

    Returns
    -------
    ndarray of shape (n_nodes, max_i), bool
    """
    group = cat_params.min_data_per_group
    evaluated = np.zeros(left_counts.shape, dtype=bool)
    last = np.zeros(left_counts.shape[0], dtype=np.int64)  # rows at the last evaluation
    going = np.ones(left_counts.shape[0], dtype=bool)
    for i in range(left_counts.shape[1]):
        going &= node_counts - left_counts[:, i] >= group
        now = going & (left_counts[:, i] - last >= group)
        evaluated[:, i] = now
        last = np.where(now, left_counts[:, i], last)
    return evaluated


def find_best_categorical_splits_naive(
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
):
    """Reference loop version of :func:`find_best_categorical_splits` (same contract)."""
    n_nodes = histograms.shape[0]
    records = no_split_records(n_nodes)
    left_sets = np.zeros((n_nodes, SPLIT_SET_WORDS), dtype=BITSET_DTYPE)
    many_params = _scan_params(split_params, cat_params)
    for node in range(n_nodes):
        if not len(features):
            continue
        parent = [int(v) for v in histograms[node, 0].sum(axis=0)]
        records["sum_gradients"][node], records["sum_hessians"][node] = parent[0], parent[1]
        records["count"][node] = parent[2]
        parent_score = float(
            leaf_score(parent[0] / scale_gradients, parent[1] / scale_hessians, split_params)
        )
        best = None
        overflow = False
        for position, feature in enumerate(features):
            if feature_mask is not None and not feature_mask[node, feature]:
                continue
            k = int(n_value_bins[position])
            if k <= 1:
                continue
            hist = [[int(v) for v in histograms[node, position, c]] for c in range(k)]
            missing = [int(v) for v in histograms[node, position, missing_bin]]
            if k <= cat_params.max_cat_to_onehot:
                params, candidates = split_params, [[c] for c in range(k)]
            else:
                params = many_params
                smooth = _feature_smoothing(cat_params, smoothing, position)
                eligible = [c for c in range(k) if hist[c][2] >= max(smooth, 1)]
                key = {
                    c: (hist[c][0] / scale_gradients) / (hist[c][1] / scale_hessians + smooth)
                    for c in eligible
                }
                order = sorted(eligible, key=lambda c: (key[c], c))
                limit = min(cat_params.max_cat_threshold, (len(order) + 1) // 2)
                candidates = []
                for sequence in (order, order[::-1]):
                    rows_in, last = 0, 0
                    for i in range(min(limit, len(sequence))):
                        rows_in += hist[sequence[i]][2]
                        if parent[2] - rows_in < cat_params.min_data_per_group:
                            break
                        if rows_in - last >= cat_params.min_data_per_group:
                            last = rows_in
                            candidates.append(sequence[: i + 1])
            for members in candidates:
                running = [sum(hist[c][i] for c in members) for i in range(3)]
                for default_left in (False, True) if missing[2] > 0 else (False,):
                    left = [running[i] + (missing[i] if default_left else 0) for i in range(3)]
                    right = [parent[i] - left[i] for i in range(3)]
                    lh, rh = left[1] / scale_hessians, right[1] / scale_hessians
                    gain = (
                        float(leaf_score(left[0] / scale_gradients, lh, params))
                        + float(leaf_score(right[0] / scale_gradients, rh, params))
                    ) - parent_score
                    if not admissible(lh, left[2], rh, right[2], gain, params):
                        continue
                    if gain == np.inf:
                        overflow = True
                        continue
                    if best is None or gain > best[0]:
                        direction = default_left if missing[2] > 0 else left[2] >= right[2]
                        best = (gain, feature, direction, left, members)
        if overflow:
            records["gain"][node] = np.inf
            continue
        if best is None:
            continue
        gain, feature, direction, left, members = best
        records["feature"][node], records["default_left"][node] = feature, direction
        records["bin"][node] = 0
        records["gain"][node] = gain
        records["left_sum_gradients"][node], records["left_sum_hessians"][node] = left[0], left[1]
        records["left_count"][node] = left[2]
        left_sets[node] = bitset_from_members(members, SPLIT_SET_WORDS)
    return records, left_sets
