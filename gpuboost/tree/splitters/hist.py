"""``tree_method='hist'``: split finding on histograms of the binned features.

The backend's histogram, split-scan and partition primitives on the Dataset's bins
(docs/DESIGN.md, "Gain and leaf value", "Row partition"). Node sums are the
integer sums of the quantized gradients and hessians, ``(G_q, H_q)``.
"""

import numpy as np

from ...core.categorical import (
    BITS_PER_WORD,
    BITSET_DTYPE,
    bitset_words,
    estimated_cat_smooth,
)
from ...core.gain import bounded_weight, leaf_score, leaf_weight, path_smoothed
from .base import SplitTable

__all__ = ["GradientRecords", "HistogramSplitter", "split_table"]


def split_table(records):
    """The :class:`SplitTable` of ``SPLIT_RECORD_DTYPE`` records (gpuboost.core.gain):
    node sums ``(G_q, H_q)``, the gain as recorded."""
    left_sums = np.empty((len(records), 2), dtype=np.int64)
    left_sums[:, 0], left_sums[:, 1] = records["left_sum_gradients"], records["left_sum_hessians"]
    sums = np.empty((len(records), 2), dtype=np.int64)
    sums[:, 0], sums[:, 1] = records["sum_gradients"], records["sum_hessians"]
    return SplitTable(
        feature=records["feature"].astype(np.int64),
        bin=records["bin"].astype(np.int64),
        default_left=records["default_left"].astype(bool),
        gain=records["gain"].astype(np.float64),
        left_sums=left_sums,
        left_count=records["left_count"].astype(np.int64),
        sums=sums,
        count=records["count"].astype(np.int64),
    )


class GradientRecords:
    """The part of the splitter interface shared by every gradient-tree splitter
    (``hist``, bundled ``hist``, ``exact``): node sums are the integer sums
    ``(G_q, H_q)``."""

    #: The sums of a node (columns of ``SplitTable.sums``): ``G_q`` and ``H_q``.
    n_sums = 2

    def checked_records(self, tree, records):
        """``records``, after checking that no float64 score overflowed.

        A node's own score ``S(G, H)`` or a candidate's gain that is not finite means
        the sums of weighted gradients left the float64 range (huge labels or
        weights): every split would be refused silently, so this raises instead.

        Raises
        ------
        ValueError
            Naming the cause and what to change.
        """
        self.check_scores(
            tree,
            records["sum_gradients"],
            records["sum_hessians"],
            records["count"],
            records["gain"],
        )
        return records

    def check_scores(self, tree, sum_gradients, sum_hessians, counts, gains):
        """Raise where a node's score ``S(G, H)`` (of its integer sums ``sum_gradients``,
        ``sum_hessians``) is not finite or its recorded gain is inf (see
        :meth:`checked_records`); ``counts`` its rows, for the message.

        Raises
        ------
        ValueError
        """
        gradients = tree.quantiser.gradients(np.asarray(sum_gradients, dtype=np.int64))
        hessians = tree.quantiser.hessians(np.asarray(sum_hessians, dtype=np.int64))
        with np.errstate(over="ignore", invalid="ignore"):
            scores = leaf_score(gradients, hessians, tree.split_params)
        overflowed = ~np.isfinite(scores) | (np.asarray(gains) == np.inf)
        if overflowed.any():
            node = int(np.argmax(overflowed))
            raise ValueError(
                f"The split gains overflow float64 (in a node of {int(counts[node])} "
                f"rows whose gradients sum to {float(gradients[node]):.3g} and hessians to "
                f"{float(hessians[node]):.3g}): the gain formula squares sums of gradients, so "
                f"no split could be scored. The labels or sample weights are too large "
                f"(about 1e150 or more): scale them down, e.g. standardize the labels."
            )

    def can_split(self, tree, sums, counts):
        """At least ``2 * min_data_in_leaf`` rows and ``2 * min_child_weight`` hessian."""
        params = tree.split_params
        sums = np.asarray(sums, dtype=np.int64).reshape(-1, 2)
        return (np.asarray(counts) >= 2 * params.min_data_in_leaf) & (
            sums[:, 1] / tree.quantiser.scale_hessians >= 2 * params.min_child_weight
        )

    def node_values(self, tree, sums, node_bounds=None, path=None):
        """Leaf values ``learning_rate * w(G, H)`` and covers ``H`` of every node;
        with ``node_bounds`` (n_nodes, 2) (monotone constraints) ``w`` is clipped to them;
        with ``path`` (counts, left_child, right_child) of the tree ``w`` is path-smoothed
        (``split_params.path_smooth``, :func:`gpuboost.core.gain.path_smoothed`)."""
        sums = np.asarray(sums, dtype=np.int64).reshape(-1, 2)
        gradients = tree.quantiser.gradients(sums[:, 0])
        hessians = tree.quantiser.hessians(sums[:, 1])
        lower = upper = None
        if node_bounds is None:
            weights = leaf_weight(gradients, hessians, tree.split_params)
        else:
            lower, upper = node_bounds[:, 0], node_bounds[:, 1]
            weights = bounded_weight(gradients, hessians, tree.split_params, lower, upper)
        if path is not None:
            weights = path_smoothed(weights, *path, tree.split_params.path_smooth, lower, upper)
        return tree.learning_rate * weights, hessians


class HistogramSplitter(GradientRecords):
    """Split finding on histograms of the binned features (``tree_method='hist'``).

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    data : DeviceData
        The training data as the backend holds it (``backend.prepare``).
    thresholds : callable (features, bins) -> ndarray of float64
        Raw thresholds of binned splits (``BinMapper.thresholds_for_bins``).
    """

    #: ``partition`` changes nothing but the order of ``tree.sample_indices`` (so the
    #: grower may undo an expansion by restoring its rows' order: speculative lossguide
    #: steps, gpuboost.tree.grower.LossguideDriver).
    partition_in_sample_indices = True
    #: The rows of a split whose children are both leaves may stay unpartitioned: the
    #: margins are then updated by ``Backend.add_split_leaf_values`` on
    #: :attr:`partition_data` (gpuboost.tree.grower.TreeGrower ``defer_final_partition``).
    defers_final_partition = True
    #: Whether each tree's categorical scan needs the tree's dispersion
    #: (``TreeInput.dispersion``: ``cat_smooth_estimate``; :meth:`set_categorical`).
    estimates_cat_smooth = False

    def __init__(self, backend, data, thresholds):
        self.backend = backend
        self.data = data
        #: The per-feature bins the partition and the binned prediction read.
        self.partition_data = data
        self.thresholds = thresholds
        #: Categorical features (:meth:`set_categorical`): their indices, None if none.
        self.categorical_features = None

    def set_categorical(self, categories, n_value_bins, cat_params):
        """Split the features with ``categories`` (per feature: labels or None) by
        category sets (gpuboost.core.categorical), with ``cat_params``
        (:class:`~gpuboost.core.categorical.CategoricalParams`); ``n_value_bins`` per
        feature (the bin mapper's)."""
        features = [f for f, labels in enumerate(categories) if labels is not None]
        self.categorical_features = np.asarray(features, dtype=np.int64)
        self.n_categories = np.array([len(categories[f]) for f in features], dtype=np.int64)
        self.n_value_bins = np.asarray(n_value_bins, dtype=np.int64)
        self.cat_params = cat_params
        self.estimates_cat_smooth = cat_params.cat_smooth_estimate
        self._numeric = np.ones(len(n_value_bins), dtype=bool)
        self._numeric[features] = False

    # ---- node statistics -----------------------------------------------------
    @property
    def _histogram_data(self):
        """The DeviceData whose binned columns the histograms sum over."""
        return self.data

    @property
    def _scan_data(self):
        """The DeviceData the split scan reads (histogram width, missing bin, value bins)."""
        return self.data

    @property
    def reserves_histograms(self):
        """Whether the build methods take ``next_pairs`` (the backend's
        ``reserves_histograms``)."""
        return bool(getattr(self.backend, "reserves_histograms", False))

    @property
    def scans_mixed_levels(self):
        """Whether :meth:`find_best_splits_mixed` saves work over its two calls (the
        backend's ``scans_mixed_levels``)."""
        return bool(getattr(self.backend, "scans_mixed_levels", False))

    @property
    def carries_build_tables(self):
        """Whether :meth:`partition` takes ``then_build`` (the backend's
        ``carries_build_tables``)."""
        return bool(getattr(self.backend, "carries_build_tables", False))

    @property
    def expands_lossguide_ahead(self):
        """Whether lossguide steps expand every node the one-leaf order may still reach
        (the backend's ``expands_lossguide_ahead``;
        gpuboost.tree.grower.LookaheadLossguideDriver)."""
        return bool(getattr(self.backend, "expands_lossguide_ahead", False))

    @property
    def carries_row_segments(self):
        """Whether ``build_children_histograms`` takes ``row_segments`` (the backend's
        ``carries_row_segments``)."""
        return bool(getattr(self.backend, "carries_row_segments", False))

    @property
    def takes_rows_in_order(self):
        """Whether :meth:`build_histograms` takes ``rows_in_order`` (the backend's
        ``takes_rows_in_order``)."""
        return bool(getattr(self.backend, "takes_rows_in_order", False))

    def build_histograms(self, tree, begins, ends, **next_level):
        """Histograms (n_nodes, n_features, n_bins, 3) int64 of the nodes (one batch).
        ``next_level``: ``next_pairs=`` where :attr:`reserves_histograms`,
        ``rows_in_order=`` where :attr:`takes_rows_in_order`."""
        return self.backend.build_histograms(
            self._histogram_data,
            tree.gradients,
            tree.hessians,
            tree.sample_indices,
            begins,
            ends,
            **next_level,
        )

    #: Whether the first reader of a children batch this splitter builds is always a
    #: backend call (its scan, or a stack or build that reads it as parents), never the
    #: splitter itself: then the backend may leave the siblings to the scan (its
    #: ``scans_siblings``). Not where the splitter expands the histograms first.
    reads_batches_through_backend = True

    def build_children_histograms(self, tree, begins, ends, parents, parent_rows, **next_level):
        """The batch [the nodes..., their siblings...] (2 * n, n_features, n_bins, 3):
        the nodes' histograms built, sibling ``i``'s as ``parents[parent_rows[i]]``
        minus node ``i``'s (exact), in one backend call. ``next_level``:
        ``next_pairs=`` where :attr:`reserves_histograms`, ``row_segments=`` where
        :attr:`carries_row_segments`. Where the backend ``scans_siblings``, the siblings
        are written by the batch's scan (``siblings_in_scan``)."""
        if self.reads_batches_through_backend and getattr(self.backend, "scans_siblings", False):
            next_level = {**next_level, "siblings_in_scan": True}
        return self.backend.build_children_histograms(
            self._histogram_data,
            tree.gradients,
            tree.hessians,
            tree.sample_indices,
            begins,
            ends,
            parents,
            parent_rows,
            **next_level,
        )

    def subtract_histograms(self, parent, child):
        """The sibling's histogram ``parent - child`` (exact)."""
        return self.backend.subtract_histograms(parent, child)

    def stack_histograms(self, batches):
        """Concatenate node histograms along the node axis."""
        return self.backend.stack_histograms(batches)

    # ---- splits --------------------------------------------------------------
    def find_best_splits(self, tree, begins, ends, histograms, feature_mask, node_bounds=None):
        """The :class:`SplitTable` of the nodes of ``histograms``
        (:meth:`checked_records`: ValueError when the float64 sums overflow);
        ``node_bounds`` (n_nodes, 2): weight bounds under monotone constraints (never
        with categorical features: training refuses the two together).

        With categorical features: the backend's scan over the numeric features, the
        backend's host scan over the categorical ones (their histograms copied to the
        host, with the records in one copy where the backend
        ``copies_categorical_with_records``; ``Backend.find_best_categorical_splits``:
        the definition
        :func:`~gpuboost.core.categorical.find_best_categorical_splits`, compiled on the
        CPU backend), and per node
        the better of the two (ties: the lower feature, docs/DESIGN.md "Categorical
        features")."""
        numeric_mask = feature_mask
        if self.categorical_features is not None:
            n_nodes = histograms.shape[0]
            numeric_mask = np.broadcast_to(self._numeric, (n_nodes, len(self._numeric)))
            if feature_mask is not None:
                numeric_mask = numeric_mask & feature_mask
            numeric_mask = np.ascontiguousarray(numeric_mask)
        features = self.categorical_features
        # The categorical slice copied with the records where the backend can (one copy).
        together = features is not None and self.backend.copies_categorical_with_records
        records = self.backend.find_best_splits(
            self._scan_data,
            histograms,
            tree.quantiser.scale_gradients,
            tree.quantiser.scale_hessians,
            tree.split_params,
            numeric_mask,
            *(() if node_bounds is None else (node_bounds,)),
            **({"categorical_features": features} if together else {}),
        )
        if features is None:
            return split_table(self.checked_records(tree, records))
        records, host = records if together else (records, None)
        if self.estimates_cat_smooth and tree.category_smoothing is None:
            if host is None:
                host = self.backend.host_columns(histograms, features)
            tree.category_smoothing = self._estimated_smoothing(tree, host)
        cat_records, left_sets = self.backend.find_best_categorical_splits(
            histograms,
            features,
            self.n_value_bins[features],
            self.data.missing_bin,
            tree.quantiser.scale_gradients,
            tree.quantiser.scale_hessians,
            tree.split_params,
            self.cat_params,
            feature_mask,
            tree.category_smoothing,
            **({"host_histograms": host} if together else {}),
        )
        take = (cat_records["gain"] > records["gain"]) | (
            (cat_records["gain"] == records["gain"])
            & (cat_records["feature"] >= 0)
            & (cat_records["feature"] < records["feature"])
        )
        take &= (cat_records["feature"] >= 0) | (cat_records["gain"] == np.inf)
        records[take] = cat_records[take]
        left_sets[~take] = 0
        table = split_table(self.checked_records(tree, records))
        table.left_sets = left_sets
        return table

    def _estimated_smoothing(self, tree, categorical_histograms):
        """The tree's per-feature ``cat_smooth`` from its root's histograms (the tree's
        first scan is its root's, alone)."""
        if categorical_histograms.shape[0] != 1:
            raise RuntimeError("cat_smooth_estimate: a tree's first split scan is not its root's")
        features = self.categorical_features
        return estimated_cat_smooth(
            categorical_histograms[0],
            self.n_value_bins[features],
            tree.quantiser.scale_gradients,
            tree.quantiser.scale_hessians,
            tree.dispersion,
            self.cat_params,
        )

    def row_scan_max_rows(self):
        """Parents of at most this many rows may have their children's splits found from
        the rows (:meth:`find_best_splits_of_rows`; :meth:`nodes_from_rows_max_rows`);
        0 with categorical features, whose scan in the grower's loop reads histograms
        on the host."""
        if self.categorical_features is not None:
            return 0
        return self.nodes_from_rows_max_rows()

    def nodes_from_rows_max_rows(self):
        """The largest node the backend scans from its rows on this data (its
        ``row_scan_max_rows``; 0: none), categorical features aside."""
        return self.backend.row_scan_max_rows(self._histogram_data)

    def find_best_splits_of_rows(self, tree, begins, ends, feature_mask, node_bounds=None):
        """The :class:`SplitTable` :meth:`find_best_splits` gives for the histograms of
        the segments, without keeping them (``Backend.find_best_splits_of_rows``)."""
        records = self.backend.find_best_splits_of_rows(
            self._histogram_data,
            tree.gradients,
            tree.hessians,
            tree.sample_indices,
            begins,
            ends,
            tree.quantiser.scale_gradients,
            tree.quantiser.scale_hessians,
            tree.split_params,
            feature_mask,
            *(() if node_bounds is None else (node_bounds,)),
        )
        return split_table(self.checked_records(tree, records))

    #: Whether this class's histograms, scan and partition are what its nodes use (not
    #: a subclass's own: bundled bins, class counts), so that the backend's
    #: ``grow_levels_from_rows`` may grow its small levels (:attr:`grows_levels_from_rows`).
    plain_levels = True

    @property
    def grows_levels_from_rows(self):
        """Whether :meth:`grow_levels_from_rows` runs: the backend offers it
        (``grows_levels_from_rows``; with categorical features
        ``grows_categorical_levels_from_rows``) and scans small nodes from their rows on
        this data (:meth:`nodes_from_rows_max_rows`)."""
        backend = self.backend
        return (
            self.plain_levels
            and bool(getattr(backend, "grows_levels_from_rows", False))
            and (
                self.categorical_features is None
                or bool(getattr(backend, "grows_categorical_levels_from_rows", False))
            )
            and self.nodes_from_rows_max_rows() > 0
        )

    @property
    def grows_root_in_levels(self):
        """Whether a small tree's root may be scanned by :meth:`grow_levels_from_rows`
        too (``scan_parents``): not with categorical features, whose scan of a tree's
        root, in :meth:`find_best_splits`, estimates the tree's ``cat_smooth``."""
        return self.categorical_features is None

    def levels_from_rows_max_rows(self, n_samples):
        """Nodes of at most this many rows have their subtrees grown by
        :meth:`grow_levels_from_rows`, in a tree of ``n_samples`` rows (the backend's
        ``levels_from_rows_max_rows``)."""
        return self.backend.levels_from_rows_max_rows(self._histogram_data, n_samples)

    def grow_levels_from_rows(
        self, tree, columns, size, parents, feature_mask, max_depth, defer_final, scan_parents=False
    ):
        """Expand the depthwise levels from ``parents`` (each of at most
        :meth:`levels_from_rows_max_rows` rows) on a node table's ``columns`` holding ``size``
        nodes, as far as its capacity allows (``Backend.grow_levels_from_rows``; the
        definition is the grower's level loop, gpuboost.tree.grower.TreeGrower). With
        ``scan_parents`` the parents hold only their segments, depths and counts (a
        tree's root): their sums and splits are found first, as the loop finds the
        root's, and those that cannot split stay leaves.

        Returns
        -------
        size : int
        frontier : ndarray of int64
            The level still to expand (empty: the tree is done).
        unsplit : ndarray of int64
            The parents left unpartitioned (``defer_final``), in the loop's order.

        Raises
        ------
        ValueError
            Where a scanned node's score overflowed (:meth:`checked_records`).
        """
        capacity = len(columns["begin"])
        scanned = np.zeros(capacity, dtype=bool)
        unsplit = np.zeros(capacity, dtype=np.int64)
        categorical = {}
        if self.categorical_features is not None:  # the numeric scan: numeric features
            features = self.categorical_features
            categorical["categorical"] = (
                features,
                self.n_value_bins[features],
                self.cat_params,
                tree.category_smoothing,
                feature_mask,
            )
            feature_mask = self._numeric if feature_mask is None else self._numeric & feature_mask
        new_size, frontier, n_unsplit, overflowed = self.backend.grow_levels_from_rows(
            self._histogram_data,
            tree.gradients,
            tree.hessians,
            tree.sample_indices,
            tree.quantiser.scale_gradients,
            tree.quantiser.scale_hessians,
            tree.split_params,
            feature_mask,
            max_depth,
            defer_final,
            columns,
            size,
            parents,
            scanned,
            unsplit,
            scan_parents,
            **categorical,
        )
        if overflowed >= 0:  # the backend applied check_scores's rule: this raises
            node = [overflowed]
            sums = columns["sums"]
            self.check_scores(tree, sums[node, 0], sums[node, 1], columns["count"][node], [np.inf])
        return new_size, frontier, unsplit[:n_unsplit].copy()

    def find_best_splits_mixed(
        self,
        tree,
        row_begins,
        row_ends,
        row_feature_mask,
        begins,
        ends,
        histograms,
        feature_mask,
        row_node_bounds=None,
        node_bounds=None,
    ):
        """``(row_table, table)``: :meth:`find_best_splits_of_rows` of the segments
        ``[row_begins[i], row_ends[i])`` and :meth:`find_best_splits` of ``histograms``
        (a level scanned both ways), in one backend call
        (``Backend.find_best_splits_mixed``: on CUDA one copy of the records to the host);
        the two calls where the two scans read different data (a subclass's
        histograms) or categorical features are scanned on the host."""
        if self.categorical_features is not None or self._histogram_data is not self._scan_data:
            row_extra = () if row_node_bounds is None else (row_node_bounds,)
            extra = () if node_bounds is None else (node_bounds,)
            return (
                self.find_best_splits_of_rows(
                    tree, row_begins, row_ends, row_feature_mask, *row_extra
                ),
                self.find_best_splits(tree, begins, ends, histograms, feature_mask, *extra),
            )
        row_records, records = self.backend.find_best_splits_mixed(
            self._histogram_data,
            tree.gradients,
            tree.hessians,
            tree.sample_indices,
            row_begins,
            row_ends,
            histograms,
            tree.quantiser.scale_gradients,
            tree.quantiser.scale_hessians,
            tree.split_params,
            row_feature_mask,
            feature_mask,
            row_node_bounds,
            node_bounds,
        )
        return (
            split_table(self.checked_records(tree, row_records)),
            split_table(self.checked_records(tree, records)),
        )

    @property
    def moves_partitioned_rows(self):
        """Whether :meth:`partition` takes ``left_counts`` (the backend's
        ``moves_partitioned_rows``)."""
        return bool(getattr(self.backend, "moves_partitioned_rows", False))

    def partition(
        self,
        tree,
        begins,
        ends,
        features,
        bins,
        default_left,
        left_sets=None,
        then_build=None,
        left_counts=None,
    ):
        """Split the segments ``[begins[i], ends[i])`` of ``tree.sample_indices``
        (stable; in place, or with ``left_counts`` into a new array that replaces
        ``tree.sample_indices``); ``left_sets`` (n_splits, SPLIT_SET_WORDS) uint32: the
        bins going left at categorical splits (zero words at the others);
        ``then_build``: ``(begins, ends, parent_rows, row_segments)`` of the
        :meth:`build_children_histograms` call that follows, where
        :attr:`carries_build_tables`; ``left_counts``: the rows of each segment going
        left (the split records'), where :attr:`moves_partitioned_rows`."""
        features = np.asarray(features, dtype=np.int64)
        bins = np.asarray(bins, dtype=np.int64)
        default_left = np.asarray(default_left, dtype=bool)
        numeric = slice(None)
        if left_sets is not None:
            categorical = np.asarray(left_sets).any(axis=1)
            if categorical.any():
                self.backend.partition_categorical(
                    self.partition_data,
                    tree.sample_indices,
                    np.asarray(begins)[categorical],
                    np.asarray(ends)[categorical],
                    features[categorical],
                    np.asarray(left_sets)[categorical],
                    default_left[categorical],
                )
                numeric = ~categorical
                if not numeric.any():
                    return
        self._partition_numeric(
            tree,
            self.partition_data,
            np.asarray(begins)[numeric],
            np.asarray(ends)[numeric],
            features[numeric],
            bins[numeric],
            default_left[numeric],
            then_build,
            None if left_counts is None else np.asarray(left_counts, dtype=np.int64)[numeric],
        )

    def _partition_numeric(
        self, tree, data, begins, ends, features, bins, default_left, then_build, left_counts
    ):
        """``Backend.partition`` of numeric splits on the bins of ``data``; where it
        returns the partition as a new array (given ``left_counts``), that array becomes
        ``tree.sample_indices``."""
        moves = {} if left_counts is None else {"left_counts": left_counts}
        moved = self.backend.partition(
            data,
            tree.sample_indices,
            begins,
            ends,
            features,
            bins,
            default_left,
            **self._build_ahead(then_build),
            **moves,
        )
        if moved is not None:
            tree.sample_indices = moved

    def _build_ahead(self, then_build):
        """The backend partition's ``then_build`` keyword for the splitter's (none when
        None): the build's bins (:attr:`_histogram_data`) added."""
        return {} if then_build is None else {"then_build": (self._histogram_data, *then_build)}

    def category_sets(self, features, left_sets):
        """The Tree's ``(cat_offsets, cat_bits)`` of nodes splitting on ``features`` by
        ``left_sets`` over bins (zero words: not categorical): each set over the
        feature's category codes, ``ceil(n_categories / 32)`` words, the codes of the
        "other" bin taking its bit (all nodes at once, as a bit matrix)."""
        left_sets = np.asarray(left_sets, dtype=BITSET_DTYPE)
        sizes = np.zeros(len(features), dtype=np.int64)
        nodes = np.flatnonzero(left_sets.any(axis=1))
        if not len(nodes):
            return np.zeros(len(features) + 1, dtype=np.int64), np.zeros(0, dtype=np.uint32)
        # Bit b of every set as a byte (bitset bit order: bit b % 32 of word b // 32).
        set_bits = np.unpackbits(
            np.ascontiguousarray(left_sets[nodes]).astype("<u4").view(np.uint8),
            axis=1,
            bitorder="little",
        )
        node_features = np.asarray(features, dtype=np.int64)[nodes]
        positions = np.searchsorted(self.categorical_features, node_features)
        n_codes = np.asarray(self.n_categories, dtype=np.int64)[positions]
        last_bin = np.asarray(self.n_value_bins, dtype=np.int64)[node_features] - 1
        words = bitset_words(n_codes)
        width = int(words.max()) * BITS_PER_WORD
        bit = np.arange(width)[None, :]
        code_bits = np.zeros((len(nodes), width), dtype=np.uint8)
        shared = min(width, set_bits.shape[1])
        code_bits[:, :shared] = set_bits[:, :shared]
        code_bits[bit >= (words * BITS_PER_WORD)[:, None]] = 0  # past a node's own words
        # The "other" bin's codes: last_bin + 1 .. n_codes - 1, where its bit is set.
        other = (set_bits[np.arange(len(nodes)), last_bin] == 1) & (n_codes > last_bin + 1)
        code_bits[other[:, None] & (bit > last_bin[:, None]) & (bit < n_codes[:, None])] = 1
        packed = np.packbits(code_bits, axis=1, bitorder="little").view("<u4")
        sizes[nodes] = words
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        # Each node's first words, row after row: the sets in node order.
        bits = packed[np.arange(packed.shape[1])[None, :] < words[:, None]]
        return offsets, bits.astype(BITSET_DTYPE)

    def split_thresholds(self, features, bins):
        """``(threshold, threshold_bin)`` stored in the Tree for these splits."""
        return (
            np.asarray(self.thresholds(features, bins), dtype=np.float64),
            np.asarray(bins, dtype=np.int32),
        )

    # ---- prediction ----------------------------------------------------------
    def predict_training_rows(self, tree):
        """Leaf value of every training row (backend array of shape (n_rows,), float64)."""
        return self.backend.predict_tree_binned(self.partition_data, tree)
