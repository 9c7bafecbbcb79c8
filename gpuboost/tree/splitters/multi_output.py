"""Vector-leaf trees (``multi_strategy='multi_output_tree'``): one tree for every output.

A round grows one tree whose leaves hold a value per output (target or class), instead of
one tree per output (docs/DESIGN.md, "Vector leaves"). Each output ``t`` keeps its own
quantized gradient and hessian and scales (``TreeInput.output_pairs``: every output's
pair side by side in a row; ``output_quantisers``); a node's sums are the ``2k``
integers ``(G_0, H_0, G_1, H_1, ...)``. The node statistics are every output's
histograms in one batch (``Backend.build_output_histograms``: an
:class:`~gpuboost.core.vector_split.OutputHistograms`); the split maximizes the gain
summed over the outputs (``Backend.find_best_vector_splits``, whose definition is
:func:`gpuboost.core.vector_split.find_best_vector_splits`). The row partition and the
thresholds are the histogram splitter's.
"""

import dataclasses

import numpy as np

from ...core.dtypes import HIST_COUNT, HIST_FIELDS
from ...core.gain import leaf_score, leaf_weight, path_smoothed
from ...core.vector_split import OutputHistograms, output_fields
from .base import SplitTable
from .hist import HistogramSplitter

__all__ = ["MultiOutputSplitter"]


def _interleaved_sums(fields):
    """(n, 2k) ``(G_0, H_0, G_1, H_1, ...)`` of (n, 3k) histogram fields."""
    n_outputs = fields.shape[1] // HIST_FIELDS
    return fields[:, _sum_fields(n_outputs)]


def _sum_fields(n_outputs):
    """The fields of ``(G_0, H_0, G_1, H_1, ...)`` among ``3k`` (an index array)."""
    return np.array([output_fields(t)[field] for t in range(n_outputs) for field in (0, 1)])


#: Where every output's hessian sums are at least 0 and ``reg_lambda`` at least
#: :data:`_SAFE_LAMBDA`, a leaf score ``T(G)^2 / (H + lambda)`` of ``|G|`` below
#: :data:`_SAFE_GRADIENT` is at most 1e290 / 1e-8: finite (a clipped weight's too).
_SAFE_GRADIENT = 1e145
_SAFE_LAMBDA = 1e-8


class MultiOutputSplitter(HistogramSplitter):
    """Vector-leaf trees on histograms of the binned features (see the module
    docstring; ``tree_method='hist'``, numeric features). Reads
    ``TreeInput.output_pairs`` and ``TreeInput.output_quantisers``.

    Parameters
    ----------
    backend, data, thresholds
        As :class:`~gpuboost.tree.splitters.hist.HistogramSplitter`'s.
    n_outputs : int
        Outputs of the trees (at least 2).
    """

    # The grower's plain paths: histograms built and scanned batch by batch here.
    reserves_histograms = False
    scans_mixed_levels = False
    carries_build_tables = False
    expands_lossguide_ahead = False
    carries_row_segments = False
    takes_rows_in_order = False
    reads_batches_through_backend = False
    plain_levels = False
    #: Every leaf's rows are partitioned: the margins take each leaf's vector.
    defers_final_partition = False

    def __init__(self, backend, data, thresholds, n_outputs):
        super().__init__(backend, data, thresholds)
        self.n_outputs = int(n_outputs)
        #: A node's sums: ``(G_t, H_t)`` per output.
        self.n_sums = 2 * self.n_outputs

    def row_scan_max_rows(self):
        """0: every node's split comes from its histogram."""
        return 0

    @property
    def grows_levels_from_rows(self):
        """Whether :meth:`grow_levels_from_rows` runs: the backend grows vector-leaf
        levels on this data (``Backend.grows_vector_levels``)."""
        return self.backend.grows_vector_levels(self.data)

    def levels_from_rows_max_rows(self, n_samples):
        """Every tree is grown whole by :meth:`grow_levels_from_rows` (its levels keep
        histograms as the loop's do: no row scans, so no size below which it pays)."""
        return int(n_samples)

    def grow_levels_from_rows(
        self, tree, columns, size, parents, feature_mask, max_depth, defer_final, scan_parents=False
    ):
        """Expand the depthwise levels from ``parents`` on a node table's ``columns``
        holding ``size`` nodes, as far as its capacity allows
        (``Backend.grow_vector_levels``; the definition is the grower's level loop,
        gpuboost.tree.grower.TreeGrower). With ``scan_parents`` the parents hold only
        their segments, depths and counts (a tree's root): their sums and splits are
        found first, as the loop finds the root's, and those that cannot split stay
        leaves. Every parent is partitioned (``defer_final`` must be False: the margins
        take each leaf's vector from its rows).

        Returns
        -------
        size : int
        frontier : ndarray of int64
            The level still to expand (empty: the tree is done).
        unsplit : ndarray of int64
            Empty (no parent is left unpartitioned).

        Raises
        ------
        ValueError
            Where a scanned node's score overflowed (:meth:`_check_overflow`).
        """
        if defer_final:
            raise ValueError("vector-leaf trees partition every split (defer_final=False)")
        new_size, frontier, overflowed = self.backend.grow_vector_levels(
            self.data,
            tree.output_pairs,
            tree.sample_indices,
            self._scales(tree),
            tree.split_params,
            feature_mask,
            max_depth,
            columns,
            size,
            parents,
            scan_parents,
        )
        if overflowed >= 0:  # the backend applied _check_overflow's rule: this raises
            node = [overflowed]
            sums = columns["sums"][node]
            self._check_overflow(tree, sums, columns["count"][node], columns["gain"][node])
        return new_size, frontier, np.zeros(0, dtype=np.int64)

    @staticmethod
    def _scales(tree):
        return [(q.scale_gradients, q.scale_hessians) for q in tree.output_quantisers]

    # ---- node statistics -----------------------------------------------------
    def build_histograms(self, tree, begins, ends):
        """The nodes' :class:`~gpuboost.core.vector_split.OutputHistograms`."""
        return self.backend.build_output_histograms(
            self.data, tree.output_pairs, tree.sample_indices, begins, ends
        )

    def build_children_histograms(self, tree, begins, ends, parents, parent_rows):
        """The nodes' histograms built, their siblings' by subtraction (one batch)."""
        return self.backend.build_output_children_histograms(
            self.data, tree.output_pairs, tree.sample_indices, begins, ends, parents, parent_rows
        )

    def subtract_histograms(self, parent, child):
        return parent - child

    def stack_histograms(self, batches):
        return OutputHistograms.stack(self.backend.xp, batches)

    # ---- splits --------------------------------------------------------------
    def find_best_splits(self, tree, begins, ends, histograms, feature_mask, node_bounds=None):
        """The :class:`SplitTable` of the gain summed over the outputs (the backend's
        ``find_best_vector_splits``); ValueError where a score overflowed."""
        if node_bounds is not None:
            raise ValueError("vector-leaf trees take no monotone constraints")
        table = self.backend.find_best_vector_splits(
            self.data, histograms, self._scales(tree), tree.split_params, feature_mask
        )
        sums = _interleaved_sums(table["fields"])
        counts = table["fields"][:, HIST_COUNT]
        self._check_overflow(tree, sums, counts, table["gain"])
        return SplitTable(
            feature=table["feature"],
            bin=table["bin"],
            default_left=table["default_left"],
            gain=table["gain"],
            left_sums=_interleaved_sums(table["left_fields"]),
            left_count=table["left_fields"][:, HIST_COUNT],
            sums=sums,
            count=counts,
        )

    def _check_overflow(self, tree, sums, counts, gains):
        """:meth:`check_scores` of every output's sums (ValueError on overflow): a bound
        on the gradient sums first (no score computed where every sum is far from
        overflow), then all outputs' scores at once, each output's check (and message)
        only when one is not finite."""
        scales = np.array(self._scales(tree))
        if (
            len(sums)
            and tree.split_params.reg_lambda >= _SAFE_LAMBDA
            and not (np.asarray(gains) == np.inf).any()
            and sums[:, 1::2].min() >= 0
            and np.abs(sums[:, 0::2]).max() / scales[:, 0].min() < _SAFE_GRADIENT
        ):
            return
        with np.errstate(over="ignore", invalid="ignore"):
            scores = leaf_score(
                sums[:, 0::2] / scales[:, 0], sums[:, 1::2] / scales[:, 1], tree.split_params
            )
        if np.isfinite(scores).all() and not (np.asarray(gains) == np.inf).any():
            return
        for output, quantiser in enumerate(tree.output_quantisers):
            self.check_scores(
                dataclasses.replace(tree, quantiser=quantiser),
                sums[:, 2 * output],
                sums[:, 2 * output + 1],
                counts,
                gains,
            )

    def can_split(self, tree, sums, counts):
        """At least ``2 * min_data_in_leaf`` rows and, for some output,
        ``2 * min_child_weight`` hessian."""
        params = tree.split_params
        sums = np.asarray(sums, dtype=np.int64).reshape(-1, self.n_sums)
        scales_h = np.array([q.scale_hessians for q in tree.output_quantisers])
        largest = (sums[:, 1::2] / scales_h).max(axis=1)  # each output's own division
        return (np.asarray(counts) >= 2 * params.min_data_in_leaf) & (
            largest >= 2 * params.min_child_weight
        )

    def node_values(self, tree, sums, node_bounds=None, path=None):
        """``(values (n_nodes, k), cover (n_nodes,))``: per output the leaf value
        ``learning_rate * w(G_t, H_t)`` (with ``path``, the weights path-smoothed output by
        output, as :meth:`HistogramSplitter.node_values`); the cover is the hessians summed
        over the outputs (in output order)."""
        if node_bounds is not None:
            raise ValueError("vector-leaf trees take no monotone constraints")
        sums = np.asarray(sums, dtype=np.int64).reshape(-1, self.n_sums)
        weights = np.empty((len(sums), self.n_outputs), dtype=np.float64)
        cover = None
        for output, quantiser in enumerate(tree.output_quantisers):
            gradients = quantiser.gradients(sums[:, 2 * output])
            hessians = quantiser.hessians(sums[:, 2 * output + 1])
            weights[:, output] = leaf_weight(gradients, hessians, tree.split_params)
            cover = hessians if cover is None else cover + hessians
        if path is not None:
            weights = path_smoothed(weights, *path, tree.split_params.path_smooth)
        return tree.learning_rate * weights, cover

    def predict_training_rows(self, tree):
        """Every training row's leaf vector, backend array (n_rows, k) float64."""
        return self.backend.xp.stack(
            [
                self.backend.predict_tree_binned(self.partition_data, tree.output_tree(output))
                for output in range(self.n_outputs)
            ],
            axis=1,
        )
