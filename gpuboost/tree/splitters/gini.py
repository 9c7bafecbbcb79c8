"""AdaBoost's weak learner: Gini classification trees as a splitter of the shared grower.

A classification tree with scikit-learn's criterion: each split maximizes the
decrease of the weighted Gini impurity, ``S(left) + S(right) - S(parent)`` with
``S(node) = sum_k W_k**2 / W`` (``W_k`` the weight of class ``k`` in the node,
``W`` their sum); every impure node is split while the depth allows and both
children keep ``min_data_in_leaf`` rows and positive weight. Split candidates,
missing values and tie-breaking follow docs/DESIGN.md ("Gain and leaf value",
with this gain). The tree is grown by :class:`gpuboost.tree.grower.TreeGrower`
(depthwise) with this splitter, on the backend's primitives:

* the row weights are quantized once per round (fixed point, ``2**30`` for the
  largest weight) and split into one int32 column per class
  (``TreeInput.class_columns``: the row's quantized weight if it has that class,
  else 0);
* ``backend.build_histograms`` sums two class columns per call (as its "gradient"
  and "hessian" fields), so a node's exact int64 class sums per feature and bin
  take ``ceil(K / 2)`` calls, concatenated along the last axis into one batch
  ``(n_nodes, n_features, n_bins, 3 * ceil(K / 2))``; the larger child's
  histograms come from the parent's by subtraction, as in gradient boosting;
* the class histograms of the nodes being split (integers, not per-row data) are
  copied to the host, where :func:`find_best_gini_splits` scans them;
* the row partition and the training rows' prediction are the histogram
  splitter's (``backend.partition``, ``backend.predict_tree_binned``).

Node sums are the quantized class weights ``(W_0, ..., W_{K-1})``; a tree's
``value`` is left at 0 (AdaBoost, gpuboost.boosting.adaboost, sets the leaf
values from the tree weight), ``gain`` and ``cover`` are in weight units (the
quantized values divided by the scale).
"""

import numpy as np

from ...core.dtypes import HIST_DTYPE
from .base import SplitTable, children_by_subtraction
from .exact import ExactSplitter, padded_cumsum, segment_bounds, segment_positions
from .hist import HistogramSplitter

__all__ = [
    "GiniSplitter",
    "ExactGiniSplitter",
    "build_rank_class_histograms",
    "build_rank_class_histograms_naive",
    "find_best_gini_splits",
    "find_best_gini_splits_naive",
    "GINI_SPLIT_FIELDS",
]

#: Histogram fields holding the two class columns of one build, and the row count.
_FIRST_CLASS_FIELD, _SECOND_CLASS_FIELD, _COUNT_FIELD = 0, 1, 2
#: Class columns summed by one histogram build (its gradient and hessian fields).
CLASSES_PER_BUILD = 2
#: Fields of one build's histogram cell.
_FIELDS_PER_BUILD = 3


#: One record per node: the best split (``feature == -1`` when none), its left child,
#: and the node's own class sums and row count.
GINI_SPLIT_FIELDS = (
    "feature",
    "bin",
    "default_left",
    "gain",
    "left_class_sums",
    "left_count",
    "sums",
    "count",
)


def _gini_scores(class_sums):
    """``sum_k W_k**2 / W`` over the last axis (classes added in order; 0 where W == 0)."""
    class_sums = class_sums.astype(np.float64)
    squares = class_sums[..., 0] * class_sums[..., 0]
    totals = class_sums[..., 0].copy()
    for k in range(1, class_sums.shape[-1]):
        squares = squares + class_sums[..., k] * class_sums[..., k]
        totals = totals + class_sums[..., k]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, squares / totals, 0.0)


def _no_split(parent, parent_count):
    return {
        "feature": -1,
        "bin": -1,
        "default_left": False,
        "gain": 0.0,
        "left_class_sums": None,
        "left_count": 0,
        "sums": np.asarray(parent, dtype=np.int64),
        "count": int(parent_count),
    }


def find_best_gini_splits(class_sums, counts, n_value_bins, missing_bin, min_data_in_leaf):
    """Best Gini split of every node (vectorized NumPy, one node at a time).

    Parameters
    ----------
    class_sums : ndarray of shape (n_nodes, n_features, n_bins, n_classes), int64
        Quantized class weights per feature and bin.
    counts : ndarray of shape (n_nodes, n_features, n_bins), int64
        Rows per feature and bin.
    n_value_bins : ndarray of shape (n_features,), int
        A threshold bin ``b`` is a candidate when ``b <= n_value_bins[f] - 2``.
    missing_bin : int
    min_data_in_leaf : int

    Returns
    -------
    list of dict
        Per node the keys of :data:`GINI_SPLIT_FIELDS`; ``gain`` in quantized
        units, ``left_class_sums`` an int64 array (n_classes,). A pure node
        (one class holds all its weight) is not split. Ties: lowest feature,
        then lowest bin, then missing values to the right; when the feature has
        no missing rows in the node they go to the child with more rows (ties
        left).
    """
    n_candidates = missing_bin - 1
    candidate_bins = np.arange(max(n_candidates, 0))
    bin_is_candidate = candidate_bins[None, :] <= (np.asarray(n_value_bins)[:, None] - 2)
    records = []
    for node_sums, node_counts in zip(class_sums, counts):
        parent = node_sums[0].sum(axis=0)  # every row is in one bin of feature 0
        parent_count = int(node_counts[0].sum())
        if n_candidates <= 0 or parent.max() == parent.sum():
            records.append(_no_split(parent, parent_count))
            continue
        missing = node_sums[:, missing_bin]  # (F, K)
        missing_count = node_counts[:, missing_bin]  # (F,)
        left_missing_right = np.cumsum(node_sums[:, :n_candidates], axis=1)  # (F, C, K)
        count_missing_right = np.cumsum(node_counts[:, :n_candidates], axis=1)
        directions = [
            (left_missing_right, count_missing_right),
            (
                left_missing_right + missing[:, None, :],
                count_missing_right + missing_count[:, None],
            ),
        ]
        parent_score = _gini_scores(parent)
        gains = []
        for direction, (left, left_count) in enumerate(directions):
            right = parent - left
            right_count = parent_count - left_count
            gain = (_gini_scores(left) + _gini_scores(right)) - parent_score
            ok = (
                bin_is_candidate
                & (left_count >= min_data_in_leaf)
                & (right_count >= min_data_in_leaf)
                & (left.sum(axis=2) > 0)
                & (right.sum(axis=2) > 0)
            )
            if direction == 1:
                ok = ok & (missing_count > 0)[:, None]
            gains.append(np.where(ok, gain, -np.inf))
        stacked = np.stack(gains, axis=-1)  # (F, C, 2): candidate order feature, bin, direction
        best = int(np.argmax(stacked))
        if not np.isfinite(stacked.flat[best]):
            records.append(_no_split(parent, parent_count))
            continue
        feature, bin_, direction = np.unravel_index(best, stacked.shape)
        left, left_count = directions[direction]
        n_left = int(left_count[feature, bin_])
        if missing_count[feature] > 0:
            default_left = direction == 1
        else:
            default_left = n_left >= parent_count - n_left
        records.append(
            {
                "feature": int(feature),
                "bin": int(bin_),
                "default_left": bool(default_left),
                "gain": float(stacked.flat[best]),
                "left_class_sums": left[feature, bin_].astype(np.int64),
                "left_count": n_left,
                "sums": parent.astype(np.int64),
                "count": parent_count,
            }
        )
    return records


def find_best_gini_splits_naive(class_sums, counts, n_value_bins, missing_bin, min_data_in_leaf):
    """Reference loop version of :func:`find_best_gini_splits` (same contract)."""
    records = []
    n_classes = class_sums.shape[-1]

    def score(sums):
        total = 0
        for value in sums:
            total += int(value)
        if total == 0:
            return 0.0
        squares = float(sums[0]) * float(sums[0])
        for k in range(1, n_classes):
            squares = squares + float(sums[k]) * float(sums[k])
        return squares / float(total)

    for node_sums, node_counts in zip(class_sums, counts):
        parent = [int(v) for v in node_sums[0].sum(axis=0)]
        parent_count = int(node_counts[0].sum())
        best = None
        if max(parent) < sum(parent):
            parent_score = score(parent)
            for feature in range(node_sums.shape[0]):
                missing = [int(v) for v in node_sums[feature, missing_bin]]
                missing_count = int(node_counts[feature, missing_bin])
                running = [0] * n_classes
                running_count = 0
                for bin_ in range(int(n_value_bins[feature]) - 1):
                    running = [
                        running[k] + int(node_sums[feature, bin_, k]) for k in range(n_classes)
                    ]
                    running_count += int(node_counts[feature, bin_])
                    for missing_left in (False, True) if missing_count > 0 else (False,):
                        left = [
                            running[k] + (missing[k] if missing_left else 0)
                            for k in range(n_classes)
                        ]
                        left_count = running_count + (missing_count if missing_left else 0)
                        right = [parent[k] - left[k] for k in range(n_classes)]
                        right_count = parent_count - left_count
                        if (
                            left_count < min_data_in_leaf
                            or right_count < min_data_in_leaf
                            or sum(left) <= 0
                            or sum(right) <= 0
                        ):
                            continue
                        gain = (score(left) + score(right)) - parent_score
                        if best is None or gain > best[0]:
                            default_left = (
                                missing_left if missing_count > 0 else left_count >= right_count
                            )
                            best = (gain, feature, bin_, default_left, left, left_count)
        if best is None:
            records.append(_no_split(parent, parent_count))
        else:
            gain, feature, bin_, default_left, left, left_count = best
            records.append(
                {
                    "feature": feature,
                    "bin": bin_,
                    "default_left": bool(default_left),
                    "gain": gain,
                    "left_class_sums": np.array(left, dtype=np.int64),
                    "left_count": left_count,
                    "sums": np.array(parent, dtype=np.int64),
                    "count": parent_count,
                }
            )
    return records


class GiniRecords:
    """What both Gini splitters share: the scan of a batch's class histograms (on the
    host, :func:`find_best_gini_splits`), the split condition and the node values.
    A subclass gives the histograms' bins (:meth:`_value_bins`) and their host class
    sums and row counts (:meth:`_host_class_histograms`)."""

    #: Its builds are not the backend's gradient builds (no reserved histogram pool).
    reserves_histograms = False
    #: Its nodes sum classes, not gradients (not the backend's level growth).
    plain_levels = False

    def row_scan_max_rows(self):
        """0: the histograms hold class sums, not the scan's gradient sums."""
        return 0

    def _value_bins(self):
        """``(n_value_bins per feature, missing_bin)`` of the histograms' bins."""
        raise NotImplementedError

    def _host_class_histograms(self, histograms, n_classes):
        """Host ``(class_sums (n, F, B, K), counts (n, F, B))`` of a batch."""
        raise NotImplementedError

    def find_best_splits(self, tree, begins, ends, histograms, feature_mask):
        """The :class:`SplitTable` of the Gini records (:func:`find_best_gini_splits`):
        node sums are the quantized class weights, gains in weight units."""
        if feature_mask is not None:
            raise ValueError("Gini trees do not sample features (colsample_* must be 1).")
        n_classes = len(tree.class_columns)
        class_sums, counts = self._host_class_histograms(histograms, n_classes)
        n_value_bins, missing_bin = self._value_bins()
        records = find_best_gini_splits(
            class_sums, counts, n_value_bins, missing_bin, tree.split_params.min_data_in_leaf
        )
        no_sums = np.zeros(n_classes, dtype=np.int64)
        return SplitTable(
            feature=np.array([r["feature"] for r in records], dtype=np.int64),
            bin=np.array([r["bin"] for r in records], dtype=np.int64),
            default_left=np.array([r["default_left"] for r in records], dtype=bool),
            gain=np.array([r["gain"] for r in records], dtype=np.float64)
            / tree.quantiser.scale_gradients,
            left_sums=np.array(
                [
                    no_sums if r["left_class_sums"] is None else r["left_class_sums"]
                    for r in records
                ],
                dtype=np.int64,
            ).reshape(len(records), n_classes),
            left_count=np.array([r["left_count"] for r in records], dtype=np.int64),
            sums=np.array([r["sums"] for r in records], dtype=np.int64).reshape(
                len(records), n_classes
            ),
            count=np.array([r["count"] for r in records], dtype=np.int64),
        )

    def can_split(self, tree, sums, counts):
        """At least ``2 * min_data_in_leaf`` rows (purity is the scan's to judge)."""
        return np.asarray(counts) >= 2 * tree.split_params.min_data_in_leaf

    def node_values(self, tree, sums):
        """Values 0 (set later from the tree weight) and covers ``sum_k W_k``."""
        sums = np.asarray(sums, dtype=np.int64)
        cover = sums.sum(axis=1).astype(np.float64) / tree.quantiser.scale_gradients
        return np.zeros(len(sums), dtype=np.float64), cover


class GiniSplitter(GiniRecords, HistogramSplitter):
    """Gini classification trees on histograms of the binned features (see the module
    docstring; ``tree_method='hist'``). Reads ``TreeInput.class_columns`` and
    ``TreeInput.quantiser`` (one scale, the weights', for every column)."""

    # ---- node statistics -----------------------------------------------------
    def build_histograms(self, tree, begins, ends, **in_order):
        """Class histograms, (n_nodes, n_features, n_bins, 3 * ceil(K / 2)) int64.
        ``in_order``: ``rows_in_order=`` where :attr:`takes_rows_in_order`, passed to
        every build."""
        columns = list(tree.class_columns)
        if len(columns) % CLASSES_PER_BUILD:
            columns.append(self.backend.xp.zeros_like(columns[0]))
        built = [
            self.backend.build_histograms(
                self.data, columns[i], columns[i + 1], tree.sample_indices, begins, ends, **in_order
            )
            for i in range(0, len(columns), CLASSES_PER_BUILD)
        ]
        return built[0] if len(built) == 1 else self.backend.xp.concatenate(built, axis=-1)

    def build_children_histograms(self, tree, begins, ends, parents, parent_rows):
        """Class histograms of the nodes built, their siblings' by subtraction."""
        return children_by_subtraction(self, tree, begins, ends, parents, parent_rows)

    def _value_bins(self):
        return self.data.n_value_bins, self.data.missing_bin

    def _host_class_histograms(self, histograms, n_classes):
        host = self.backend.to_host(histograms)
        columns = []
        for build in range(host.shape[-1] // _FIELDS_PER_BUILD):
            columns += [
                host[..., build * _FIELDS_PER_BUILD + _FIRST_CLASS_FIELD],
                host[..., build * _FIELDS_PER_BUILD + _SECOND_CLASS_FIELD],
            ]
        return np.stack(columns[:n_classes], axis=-1), host[..., _COUNT_FIELD]


# --------------------------------------------------------------------------- #
# Every distinct value a threshold (tree_method='exact', AdaBoost's default)
# --------------------------------------------------------------------------- #


def build_rank_class_histograms(xp, ranks, n_bins, class_columns, sample_indices, begins, ends):
    """Class histograms over the features' ranks: one bin per distinct training value.

    Parameters
    ----------
    xp : module
        numpy or cupy; every array argument but the host ones lives there.
    ranks : array of shape (n_rows, n_features), int32
        :attr:`gpuboost.tree.splitters.exact.FeatureRanks.ranks` (``-1``: missing).
    n_bins : int
        The largest number of distinct values of a feature, plus one: the missing
        values' bin is ``n_bins - 1``.
    class_columns : sequence of K arrays of shape (n_rows,), int32
        The rows' quantized class weights (``TreeInput.class_columns``).
    sample_indices : array of shape (n_samples,), int32
        Node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : host sequences of int, length n_nodes

    Returns
    -------
    histograms : array of shape (n_nodes, n_features, n_bins, K + 1), int64
        Per node, feature and rank the exact sums of every class column, then the
        row count. The cells are summed in sorted order: integer sums, so any order
        gives the same result.
    """
    begins, ends, out_starts, out_ends = segment_bounds(begins, ends)
    n_nodes, n_features = len(begins), int(ranks.shape[1])
    n_fields = len(class_columns) + 1
    out = xp.zeros(n_nodes * n_features * n_bins * n_fields, dtype=HIST_DTYPE)
    if n_nodes and n_features and int(out_ends[-1]):
        positions, node_of_position = segment_positions(xp, begins, out_starts, out_ends)
        rows = sample_indices[positions]
        row_ranks = ranks[rows].astype(np.int64)
        cell_bins = xp.where(row_ranks < 0, n_bins - 1, row_ranks)
        first_cells = (node_of_position * n_features)[:, None] + xp.arange(n_features)[None, :]
        cells = (first_cells * n_bins + cell_bins).reshape(-1)
        order = xp.argsort(cells)
        sorted_cells = cells[order]
        last = xp.flatnonzero(
            xp.concatenate([sorted_cells[1:] != sorted_cells[:-1], xp.ones(1, dtype=bool)])
        )
        first = xp.concatenate([xp.zeros(1, dtype=last.dtype), last[:-1] + 1])
        targets = sorted_cells[last] * n_fields
        position_of = order // n_features
        for k, column in enumerate(class_columns):
            running = padded_cumsum(xp, column[rows].astype(HIST_DTYPE)[position_of])
            out[targets + k] = running[last + 1] - running[first]
        out[targets + n_fields - 1] = last + 1 - first
    return out.reshape(n_nodes, n_features, n_bins, n_fields)


def build_rank_class_histograms_naive(ranks, n_bins, class_columns, sample_indices, begins, ends):
    """Reference loop version of :func:`build_rank_class_histograms` (NumPy)."""
    n_features = ranks.shape[1]
    n_fields = len(class_columns) + 1
    out = np.zeros((len(begins), n_features, n_bins, n_fields), dtype=np.int64)
    for node, (begin, end) in enumerate(zip(begins, ends)):
        for position in range(begin, end):
            row = int(sample_indices[position])
            for feature in range(n_features):
                rank = int(ranks[row, feature])
                cell = out[node, feature, n_bins - 1 if rank < 0 else rank]
                for k, column in enumerate(class_columns):
                    cell[k] += int(column[row])
                cell[n_fields - 1] += 1
    return out


class ExactGiniSplitter(GiniRecords, ExactSplitter):
    """Gini classification trees with every threshold between two distinct training
    values of a feature a candidate (``tree_method='exact'``, scikit-learn's
    candidates at a stump): the histograms of :class:`GiniSplitter` over the
    features' ranks (:func:`build_rank_class_histograms`, one bin per distinct value)
    instead of their bins; the scan, the split condition and the node values are the
    same. Partition, thresholds ``t_r`` and the training rows' prediction (raw
    features) are :class:`gpuboost.tree.splitters.exact.ExactSplitter`'s.

    Memory: ``8 * (K + 1)`` bytes per node, feature and distinct value, and the
    exact splitter's rank matrix: for small and medium tables (``tree_method='hist'``
    bins the features instead).
    """

    def __init__(self, backend, dataset):
        super().__init__(backend, dataset)
        n_distinct = self.feature_ranks.n_distinct
        #: Bins of a rank histogram: every distinct value, then the missing values.
        self.n_rank_bins = (int(n_distinct.max()) if len(n_distinct) else 0) + 1

    def build_histograms(self, tree, begins, ends):
        return build_rank_class_histograms(
            self.backend.xp,
            self.ranks,
            self.n_rank_bins,
            tree.class_columns,
            tree.sample_indices,
            begins,
            ends,
        )

    def subtract_histograms(self, parent, child):
        return parent - child

    def stack_histograms(self, batches):
        return self.backend.xp.concatenate(batches, axis=0)

    def _value_bins(self):
        return self.feature_ranks.n_distinct, self.n_rank_bins - 1

    def _host_class_histograms(self, histograms, n_classes):
        host = self.backend.to_host(histograms)
        return host[..., :n_classes], host[..., n_classes]
