"""``tree_method='exact'``: every distinct value of a feature is a candidate threshold.

The exact greedy method enumerates, for every node and feature, every threshold
between two consecutive distinct training values of the feature, instead of the
``max_bin`` bin edges of the histogram method. It is meant for small data: each
batch of nodes costs a sort of ``n_node_rows x n_features`` keys.

Definition (the histogram method with one bin per distinct value)
-----------------------------------------------------------------
Let ``d_0 < d_1 < ... < d_{m-1}`` be the distinct non-missing values of a feature
over all training rows (values clipped to the finite float64 range, as binning
does), and ``rank(x)`` the index of ``x`` among them. The candidate thresholds
are ``t_r = midpoint(d_r, d_{r+1})`` for ``r = 0 .. m-2`` (``x <= t_r`` goes left,
so on training rows ``x <= t_r`` iff ``rank(x) <= r``). At a node, every ``r``
is evaluated with missing values sent right and, if the node has missing values
of the feature, left, using the gain formulas of :mod:`gpuboost.core.gain` on exact
integer sums of the quantized gradients; the best candidate has the maximum gain,
ties broken by lowest feature, lowest ``r``, missing-right first; without missing
values of the feature, missing values go to the larger child (ties left). This is
the split scan of docs/DESIGN.md on a histogram with one bin per distinct value,
so on data with at most ``max_bin`` distinct values per feature (and all rows in
the binning sample) ``'exact'`` and ``'hist'`` grow identical trees.

Only the ``r`` where the node's rows actually change sides need evaluating:
between two consecutive distinct values present in the node (``r`` = the rank of
the lower one, the lowest of the thresholds giving that partition), "all
non-missing rows left" (``r`` = rank of the node's largest value, when a larger
training value exists) and "missing rows alone left" (``r = 0``, when the node's
smallest value has rank > 0).

Algorithm (array-module code: NumPy, or CuPy on the GPU)
--------------------------------------------------------
Ranks are computed once per training (host, then one copy to the device as an
int32 matrix). Per batch of nodes: gather the ranks of the batch's rows,
segmented sort of ``(node, feature, rank)`` keys (one ``argsort`` of a combined
int64 key, missing values last within their segment), int64 cumulative sums of
the quantized gradients and hessians in sorted order (segment sums are
differences of the running sums: exact, and exact even if a running sum wraps
around int64, since two's-complement differences are modular), gains of every
candidate with :func:`gpuboost.core.gain.leaf_score`, and the best candidate per node
by stable sorts (node, then gain descending, then the tie order). Only the
per-node records reach the host. The row partition compares ranks
(``rank <= r``) and scatters rows stably with a running count of the left rows.

Memory: the rank matrix (4 bytes per feature and row) for the whole run, and per
batch of nodes temporaries of up to about 200 bytes per feature and row of the batch (keys,
sort order, running sums, candidates).

A split's ``threshold`` is ``t_r``; its ``threshold_bin`` is the bin of ``t_r``
under the Dataset's bins (``r`` itself when the feature is binned losslessly);
the binned traversal is never used on exact trees: a training run that samples
rows updates the margins by raw prediction.
"""

import numpy as np

from ...core.array import to_numpy
from ...core.bin_edges import FLOAT64_MAX, midpoints
from ...core.dtypes import HIST_DTYPE
from ...core.gain import SPLIT_GAIN_EPS, admissible, leaf_score, no_split_records
from ...core.segments import offsets
from .base import children_by_subtraction
from .hist import GradientRecords, split_table

__all__ = [
    "FeatureRanks",
    "ExactSplitter",
    "find_best_splits_exact",
    "find_best_splits_exact_naive",
    "partition_exact",
    "partition_exact_naive",
    "MISSING_RANK",
    "RANK_DTYPE",
]

#: Rank of a missing (NaN) value.
MISSING_RANK = -1
#: dtype of the rank matrix (n_rows <= 2**31 - 1, so ranks fit).
RANK_DTYPE = np.int32
#: Direction codes of a candidate, in tie-break order.
_MISSING_RIGHT, _MISSING_LEFT = 0, 1
_N_DIRECTIONS = 2


class FeatureRanks:
    """Distinct training values of every feature and the rank of every value.

    Parameters
    ----------
    data : ndarray of shape (n_rows, n_features), float64
        Raw training features; NaN is missing, +/-inf is clipped to the finite
        float64 range (as binning does).
    weight : ndarray of shape (n_rows,), optional
        Row weights: the distinct values are those of the rows of positive weight
        (as the bin edges are), so that a row of weight 0 changes no threshold and
        weights give the thresholds of repeated rows.

    Attributes
    ----------
    distinct_values : list of ndarray of shape (n_distinct[f],), float64
    n_distinct : ndarray of shape (n_features,), int64
    ranks : ndarray of shape (n_rows, n_features), int32, C order
        The number of the feature's thresholds ``t_r`` below the value (its index in
        ``distinct_values`` when it is one of them), so that ``rank <= r`` exactly
        when the value is ``<= t_r``; :data:`MISSING_RANK` for NaN.
    """

    def __init__(self, data, weight=None):
        data = np.asarray(data, dtype=np.float64)
        n_rows, n_features = data.shape
        counted = None if weight is None else np.asarray(weight) > 0
        self.ranks = np.empty((n_rows, n_features), dtype=RANK_DTYPE)
        self.distinct_values = []
        for feature in range(n_features):
            column = data[:, feature]
            present = ~np.isnan(column)
            clipped = np.clip(column[present], -FLOAT64_MAX, FLOAT64_MAX)
            distinct = np.unique(clipped if counted is None else clipped[counted[present]])
            self.distinct_values.append(distinct)
            ranks = np.full(n_rows, MISSING_RANK, dtype=RANK_DTYPE)
            thresholds = midpoints(distinct[:-1], distinct[1:])
            ranks[present] = np.searchsorted(thresholds, clipped, side="left")
            self.ranks[:, feature] = ranks
        self.n_distinct = np.array([len(d) for d in self.distinct_values], dtype=np.int64)

    def threshold(self, feature, rank):
        """``t_r``: the midpoint of the feature's distinct values ``rank`` and ``rank + 1``
        (computed as the bin edges are, so equal to them on lossless bins)."""
        values = self.distinct_values[feature]
        if not 0 <= rank < len(values) - 1:
            raise IndexError(
                f"rank must be in [0, {len(values) - 1}) for feature {feature}, got {rank!r}."
            )
        return float(midpoints(values[rank : rank + 1], values[rank + 1 : rank + 2])[0])


# --------------------------------------------------------------------------- #
# Helpers
# --------------------------------------------------------------------------- #


def segment_bounds(begins, ends):
    """Host int64 ``begins``, ``ends``, and each segment's start and end in the
    concatenation of all segments."""
    begins = np.asarray(begins, dtype=np.int64).reshape(-1)
    ends = np.asarray(ends, dtype=np.int64).reshape(-1)
    lengths = ends - begins
    if np.any(lengths < 0):
        raise ValueError("Segments must satisfy begin <= end.")
    bounds = offsets(lengths)
    return begins, ends, bounds[:-1], bounds[1:]


def segment_positions(xp, begins, out_starts, out_ends):
    """Positions ``begins[s] .. begins[s] + length - 1`` of every segment, concatenated,
    and the segment of each (device arrays; only the segment table is copied)."""
    total = int(out_ends[-1]) if len(out_ends) else 0
    table = xp.asarray(np.stack([begins, out_starts, out_ends]))
    index = xp.arange(total, dtype=np.int64)
    segment = xp.searchsorted(table[2], index, side="right")
    return index - table[1][segment] + table[0][segment], segment


def _stable_argsort(xp, keys):
    if xp is np:
        return np.argsort(keys, kind="stable")
    return xp.argsort(keys)  # CuPy's sort is always stable


def padded_cumsum(xp, values):
    """``[0, v0, v0 + v1, ...]`` in int64 (length ``len(values) + 1``)."""
    out = xp.zeros(values.shape[0] + 1, dtype=HIST_DTYPE)
    out[1:] = xp.cumsum(values, dtype=HIST_DTYPE)
    return out


# --------------------------------------------------------------------------- #
# Split finding
# --------------------------------------------------------------------------- #


def find_best_splits_exact(
    xp,
    ranks,
    n_distinct,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    scale_gradients,
    scale_hessians,
    params,
    feature_mask=None,
):
    """Best exact split of every node of a batch (see the module docstring).

    Parameters
    ----------
    xp : module
        numpy or cupy; every array argument but the host ones lives there.
    ranks : array of shape (n_rows, n_features), int32
        :attr:`FeatureRanks.ranks` on ``xp``.
    n_distinct : host ndarray of shape (n_features,), int
    quantized_gradients, quantized_hessians : array of shape (n_rows,), int32
    sample_indices : array of shape (n_samples,), int32
        Node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : host sequences of int, length n_nodes
    scale_gradients, scale_hessians : float
    params : gpuboost.core.gain.SplitParams
    feature_mask : host ndarray of shape (n_nodes, n_features), bool, optional

    Returns
    -------
    records : host ndarray of shape (n_nodes,), SPLIT_RECORD_DTYPE
        ``bin`` holds the rank ``r`` of the threshold ``t_r``.
    """
    begins, ends, out_starts, out_ends = segment_bounds(begins, ends)
    n_nodes = len(begins)
    n_features = int(ranks.shape[1])
    records = no_split_records(n_nodes)
    if n_nodes == 0:
        return records
    n_distinct = np.asarray(n_distinct, dtype=np.int64)
    lengths = ends - begins
    positions, node_of_position = segment_positions(xp, begins, out_starts, out_ends)
    rows = sample_indices[positions]
    gradients = quantized_gradients[rows].astype(HIST_DTYPE)
    hessians = quantized_hessians[rows].astype(HIST_DTYPE)

    # Node sums (exact) and parent scores.
    node_table = xp.asarray(np.stack([out_starts, out_ends]))
    cumulative_g = padded_cumsum(xp, gradients)
    cumulative_h = padded_cumsum(xp, hessians)
    node_g = cumulative_g[node_table[1]] - cumulative_g[node_table[0]]
    node_h = cumulative_h[node_table[1]] - cumulative_h[node_table[0]]
    node_n = xp.asarray(lengths)
    records["sum_gradients"] = to_numpy(node_g)
    records["sum_hessians"] = to_numpy(node_h)
    records["count"] = lengths
    parent_score = leaf_score(node_g / scale_gradients, node_h / scale_hessians, params)

    # Segmented sort: keys (node, feature, rank), missing last in each segment.
    max_distinct = int(n_distinct.max()) if n_features else 0
    stride = max_distinct + 1  # rank keys 0 .. max_distinct (missing)
    batch_ranks = ranks[rows].astype(np.int64)
    rank_keys = xp.where(batch_ranks < 0, max_distinct, batch_ranks)
    segment_ids = node_of_position[:, None] * n_features + xp.arange(n_features)[None, :]
    keys = (segment_ids * stride + rank_keys).reshape(-1)
    order = xp.argsort(keys)
    sorted_keys = keys[order]
    sorted_ranks = sorted_keys % stride
    sorted_segments = sorted_keys // stride
    position_of = order // n_features
    sorted_g = padded_cumsum(xp, gradients[position_of])
    sorted_h = padded_cumsum(xp, hessians[position_of])
    is_missing = sorted_ranks == max_distinct
    sorted_missing = padded_cumsum(xp, is_missing.astype(HIST_DTYPE))

    # Segment geometry: segment (node k, feature f) holds positions
    # out_starts[k] * F + f * length[k] .. + length[k] - 1 of the sorted keys.
    segment_starts_host = (
        out_starts[:, None] * n_features + np.arange(n_features)[None, :] * lengths[:, None]
    ).reshape(-1)
    segment_ends_host = segment_starts_host + np.repeat(lengths, n_features)
    segment_table = xp.asarray(np.stack([segment_starts_host, segment_ends_host]))
    segment_starts, segment_ends = segment_table[0], segment_table[1]
    n_missing = sorted_missing[segment_ends] - sorted_missing[segment_starts]
    non_missing_ends = segment_ends - n_missing
    missing_g = sorted_g[segment_ends] - sorted_g[non_missing_ends]
    missing_h = sorted_h[segment_ends] - sorted_h[non_missing_ends]
    n_distinct_device = xp.asarray(n_distinct)
    segment_feature = xp.arange(n_nodes * n_features) % n_features
    segment_node = xp.arange(n_nodes * n_features) // n_features

    # Candidates between distinct values and "all non-missing left": element i.
    n_elements = int(sorted_keys.shape[0])
    index = xp.arange(n_elements, dtype=np.int64)
    start_of = segment_starts[sorted_segments]
    next_ranks = xp.concatenate([sorted_ranks[1:], xp.full(1, -1, dtype=sorted_ranks.dtype)])
    feature_of = sorted_segments % n_features
    boundary = (
        ~is_missing
        & (sorted_ranks <= n_distinct_device[feature_of] - 2)
        & ((index + 1 == non_missing_ends[sorted_segments]) | (next_ranks != sorted_ranks))
    )
    element = xp.flatnonzero(boundary)
    element_segment = sorted_segments[element]
    through_g = sorted_g[element + 1] - sorted_g[start_of[element]]
    through_h = sorted_h[element + 1] - sorted_h[start_of[element]]
    through_n = element + 1 - start_of[element]
    has_missing = n_missing[element_segment] > 0
    with_missing = xp.flatnonzero(has_missing)
    # Candidates "missing rows alone left": one per segment.
    below = xp.flatnonzero(
        (n_missing > 0)
        & (n_distinct_device[segment_feature] >= 2)
        & (segment_ends > segment_starts)
        & (sorted_ranks[xp.minimum(segment_starts, max(n_elements - 1, 0))] > 0)
    )

    candidate_segment = xp.concatenate([element_segment, element_segment[with_missing], below])
    candidate_bin = xp.concatenate(
        [
            sorted_ranks[element],
            sorted_ranks[element][with_missing],
            xp.zeros(below.shape[0], dtype=np.int64),
        ]
    )
    candidate_direction = xp.concatenate(
        [
            xp.full(element.shape[0], _MISSING_RIGHT, dtype=np.int64),
            xp.full(with_missing.shape[0], _MISSING_LEFT, dtype=np.int64),
            xp.full(below.shape[0], _MISSING_LEFT, dtype=np.int64),
        ]
    )
    # Left sums: the running sums (missing right), plus the segment's missing rows
    # (missing left), and the missing rows alone (below the node's values).
    missing_segment = element_segment[with_missing]
    left_g = xp.concatenate(
        [through_g, through_g[with_missing] + missing_g[missing_segment], missing_g[below]]
    )
    left_h = xp.concatenate(
        [through_h, through_h[with_missing] + missing_h[missing_segment], missing_h[below]]
    )
    left_n = xp.concatenate(
        [through_n, through_n[with_missing] + n_missing[missing_segment], n_missing[below]]
    )
    candidate_node = segment_node[candidate_segment]
    candidate_feature = segment_feature[candidate_segment]
    right_g = node_g[candidate_node] - left_g
    right_h = node_h[candidate_node] - left_h
    right_n = node_n[candidate_node] - left_n

    left_hessian = left_h / scale_hessians
    right_hessian = right_h / scale_hessians
    gain = (
        leaf_score(left_g / scale_gradients, left_hessian, params)
        + leaf_score(right_g / scale_gradients, right_hessian, params)
    ) - parent_score[candidate_node]
    ok = admissible(left_hessian, left_n, right_hessian, right_n, gain, params)
    if feature_mask is not None:
        mask = xp.asarray(np.asarray(feature_mask, dtype=bool).reshape(-1))
        ok &= mask[candidate_segment]
    chosen = xp.flatnonzero(ok)
    if int(chosen.shape[0]) == 0:
        return records

    # Best per node: node ascending, gain descending, then (feature, rank, direction).
    tie_order = (
        candidate_feature[chosen] * stride + candidate_bin[chosen]
    ) * _N_DIRECTIONS + candidate_direction[chosen]
    permutation = _stable_argsort(xp, tie_order)
    permutation = permutation[_stable_argsort(xp, -gain[chosen][permutation])]
    permutation = permutation[_stable_argsort(xp, candidate_node[chosen][permutation])]
    ranked = chosen[permutation]
    ranked_nodes = candidate_node[ranked]
    first = xp.searchsorted(ranked_nodes, xp.arange(n_nodes), side="left")
    best = ranked[xp.minimum(first, ranked.shape[0] - 1)]
    found = to_numpy((first < ranked.shape[0]) & (candidate_node[best] == xp.arange(n_nodes)))
    fields = {
        name: to_numpy(values[best])
        for name, values in (
            ("feature", candidate_feature),
            ("bin", candidate_bin),
            ("direction", candidate_direction),
            ("gain", gain),
            ("left_g", left_g),
            ("left_h", left_h),
            ("left_n", left_n),
            ("segment", candidate_segment),
        )
    }
    node_has_missing = to_numpy(n_missing)[fields["segment"]] > 0
    nodes = np.flatnonzero(found)
    records["feature"][nodes] = fields["feature"][nodes]
    records["bin"][nodes] = fields["bin"][nodes]
    records["gain"][nodes] = fields["gain"][nodes]
    records["left_sum_gradients"][nodes] = fields["left_g"][nodes]
    records["left_sum_hessians"][nodes] = fields["left_h"][nodes]
    records["left_count"][nodes] = fields["left_n"][nodes]
    larger_left = fields["left_n"] >= lengths - fields["left_n"]
    default_left = np.where(node_has_missing, fields["direction"] == _MISSING_LEFT, larger_left)
    records["default_left"][nodes] = default_left[nodes]
    return records


def find_best_splits_exact_naive(
    feature_ranks,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    scale_gradients,
    scale_hessians,
    params,
    feature_mask=None,
):
    """Reference loop version of :func:`find_best_splits_exact`: every threshold
    ``t_r``, ``r = 0 .. n_distinct - 2``, of every feature, both directions (NumPy).

    ``feature_ranks`` is a :class:`FeatureRanks`.
    """
    ranks = feature_ranks.ranks
    n_features = ranks.shape[1]
    records = no_split_records(len(begins))
    for node, (begin, end) in enumerate(zip(begins, ends)):
        rows = np.asarray(sample_indices[begin:end], dtype=np.int64)
        g = quantized_gradients[rows].astype(np.int64)
        h = quantized_hessians[rows].astype(np.int64)
        parent = [int(g.sum()), int(h.sum()), len(rows)]
        records["sum_gradients"][node], records["sum_hessians"][node] = parent[0], parent[1]
        records["count"][node] = parent[2]
        parent_score = float(
            leaf_score(parent[0] / scale_gradients, parent[1] / scale_hessians, params)
        )
        best = None
        for feature in range(n_features):
            if feature_mask is not None and not feature_mask[node, feature]:
                continue
            feature_ranks_of_rows = ranks[rows, feature]
            missing = feature_ranks_of_rows < 0
            missing_sums = [int(g[missing].sum()), int(h[missing].sum()), int(missing.sum())]
            for rank in range(int(feature_ranks.n_distinct[feature]) - 1):
                goes_left = ~missing & (feature_ranks_of_rows <= rank)
                through = [int(g[goes_left].sum()), int(h[goes_left].sum()), int(goes_left.sum())]
                for missing_left in (False, True) if missing_sums[2] else (False,):
                    left = [t + (m if missing_left else 0) for t, m in zip(through, missing_sums)]
                    right = [total - part for total, part in zip(parent, left)]
                    left_h, right_h = left[1] / scale_hessians, right[1] / scale_hessians
                    gain = (
                        float(leaf_score(left[0] / scale_gradients, left_h, params))
                        + float(leaf_score(right[0] / scale_gradients, right_h, params))
                    ) - parent_score
                    if not (
                        left_h >= params.min_child_weight
                        and right_h >= params.min_child_weight
                        and left[2] >= params.min_data_in_leaf
                        and right[2] >= params.min_data_in_leaf
                        and gain > params.gamma
                        and gain > SPLIT_GAIN_EPS
                    ):
                        continue
                    if best is None or gain > best[0]:
                        default_left = missing_left if missing_sums[2] else left[2] >= right[2]
                        best = (gain, feature, rank, default_left, left)
        if best is not None:
            gain, feature, rank, default_left, left = best
            records[node] = (feature, rank, default_left, gain, left[0], left[1], left[2], *parent)
    return records


# --------------------------------------------------------------------------- #
# Partition
# --------------------------------------------------------------------------- #


def partition_exact(
    xp, ranks, sample_indices, begins, ends, features, threshold_ranks, default_left
):
    """Stable in-place split of several nodes' segments by ``rank <= threshold_rank``.

    Parameters
    ----------
    xp : module
    ranks : array of shape (n_rows, n_features), int32
    sample_indices : array of shape (n_samples,), int32
        Modified in place.
    begins, ends : host sequences of int, length n_nodes (disjoint segments)
    features, threshold_ranks : host sequences of int, length n_nodes
    default_left : host sequence of bool, length n_nodes
        Where rows with a missing value go.

    Returns
    -------
    n_left : host ndarray of shape (n_nodes,), int64
    """
    begins, ends, out_starts, out_ends = segment_bounds(begins, ends)
    n_nodes = len(begins)
    if n_nodes == 0 or int(out_ends[-1]) == 0:
        return np.zeros(n_nodes, dtype=np.int64)
    positions, segment = segment_positions(xp, begins, out_starts, out_ends)
    rows = sample_indices[positions]
    splits = xp.asarray(
        np.stack(
            [
                np.asarray(features, dtype=np.int64).reshape(-1),
                np.asarray(threshold_ranks, dtype=np.int64).reshape(-1),
                np.asarray(default_left, dtype=bool).reshape(-1).astype(np.int64),
                begins,
                out_starts,
                out_ends,
            ]
        )
    )
    split_features, split_ranks, split_default_left, segment_begins, starts, stops = splits
    row_ranks = ranks[rows, split_features[segment]]
    left = xp.where(
        row_ranks < 0, split_default_left[segment] != 0, row_ranks <= split_ranks[segment]
    )
    lefts_through = padded_cumsum(xp, left.astype(HIST_DTYPE))  # [0, inclusive counts]
    lefts_before_segment = lefts_through[starts]
    n_left = lefts_through[stops] - lefts_before_segment
    lefts_in_segment = lefts_through[1:] - lefts_before_segment[segment]  # inclusive
    offset_in_segment = xp.arange(rows.shape[0], dtype=np.int64) - starts[segment]
    destination = xp.where(
        left,
        segment_begins[segment] + lefts_in_segment - 1,
        segment_begins[segment] + n_left[segment] + offset_in_segment - lefts_in_segment,
    )
    sample_indices[destination] = rows
    return to_numpy(n_left)


def partition_exact_naive(
    ranks, sample_indices, begins, ends, features, threshold_ranks, default_left
):
    """Reference loop version of :func:`partition_exact` (NumPy)."""
    n_left = np.zeros(len(begins), dtype=np.int64)
    for node, (begin, end) in enumerate(zip(begins, ends)):
        lefts, rights = [], []
        for position in range(begin, end):
            row = int(sample_indices[position])
            rank = int(ranks[row, features[node]])
            goes_left = bool(default_left[node]) if rank < 0 else rank <= threshold_ranks[node]
            (lefts if goes_left else rights).append(row)
        sample_indices[begin:end] = lefts + rights
        n_left[node] = len(lefts)
    return n_left


# --------------------------------------------------------------------------- #
# The splitter
# --------------------------------------------------------------------------- #


class ExactSplitter(GradientRecords):
    """The splitter of ``tree_method='exact'`` (interface: gpuboost.tree.splitters.base).

    Keeps no per-node statistics: the "histogram" of a node is an empty
    placeholder of shape (1, 0) and every split search reads the node's rows.

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    dataset : Dataset
        The training data (its raw features are ranked once, on the host, and
        the int32 rank matrix is copied to the backend).
    """

    def __init__(self, backend, dataset):
        self.backend = backend
        self.dataset = dataset
        self.feature_ranks = FeatureRanks(dataset.data, dataset.weight)
        self.ranks = backend.to_device(self.feature_ranks.ranks)
        self.bin_edges = dataset.bin_mapper.bin_edges_
        self._raw_features = None

    # ---- node statistics -----------------------------------------------------
    def build_histograms(self, tree, begins, ends):
        """Empty placeholders, shape (n_nodes, 0) (exact keeps no node statistics)."""
        return np.zeros((len(begins), 0), dtype=HIST_DTYPE)

    def build_children_histograms(self, tree, begins, ends, parents, parent_rows):
        return children_by_subtraction(self, tree, begins, ends, parents, parent_rows)

    def subtract_histograms(self, parent, child):
        return np.zeros_like(child)

    def stack_histograms(self, batches):
        return np.concatenate(batches, axis=0)

    # ---- splits --------------------------------------------------------------
    def find_best_splits(self, tree, begins, ends, histograms, feature_mask):
        records = find_best_splits_exact(
            self.backend.xp,
            self.ranks,
            self.feature_ranks.n_distinct,
            tree.gradients,
            tree.hessians,
            tree.sample_indices,
            begins,
            ends,
            tree.quantiser.scale_gradients,
            tree.quantiser.scale_hessians,
            tree.split_params,
            feature_mask,
        )
        return split_table(self.checked_records(tree, records))

    def partition(self, tree, begins, ends, features, bins, default_left):
        partition_exact(
            self.backend.xp,
            self.ranks,
            tree.sample_indices,
            begins,
            ends,
            features,
            bins,
            default_left,
        )

    def split_thresholds(self, features, ranks):
        """``(t_r, the bin of t_r under the Dataset's bins)`` of every split."""
        thresholds = np.array(
            [self.feature_ranks.threshold(f, r) for f, r in zip(features.tolist(), ranks.tolist())],
            dtype=np.float64,
        )
        bins = np.array(
            [
                np.searchsorted(self.bin_edges[f], t, side="left")
                for f, t in zip(features.tolist(), thresholds.tolist())
            ],
            dtype=np.int32,
        )
        return thresholds, bins

    # ---- prediction ----------------------------------------------------------
    def predict_training_rows(self, tree):
        """Leaf values of every training row, traversing the raw features (kept on
        the backend from the first call on)."""
        if self._raw_features is None:
            self._raw_features = self.backend.prepare_features(self.dataset.data)
        return self.backend.predict_tree_raw(self._raw_features, tree)
