"""The splitter interface: what the tree grower asks of a split-finding strategy.

:class:`gpuboost.tree.grower.TreeGrower` owns the growth policy (which nodes to
expand, node ids, the smaller-child/subtraction schedule); a *splitter* owns
everything that depends on how candidate splits are represented. The grower hands
it whole batches of nodes as arrays (the nodes' segments ``begins``, ``ends`` of the
row partition, docs/DESIGN.md "Row partition"), never one node at a time:

* node statistics: ``build_histograms`` of a batch of nodes (an array whose first
  axis is the node), ``build_children_histograms`` (the smaller children built,
  their siblings by subtraction, one batch), ``subtract_histograms`` and
  ``stack_histograms``;
* split search: ``find_best_splits`` gives a :class:`SplitTable` (one row per node:
  the best split, the left child's sums, the node's own sums, the gain);
* admissibility and values: ``can_split`` (which nodes' sums allow a split at all),
  ``node_values`` (leaf value and cover of every node of the finished tree);
* the row partition (``partition``) and the tree's thresholds (``split_thresholds``);
* ``predict_training_rows``: the leaf values of every training row (the
  prediction update when rows were subsampled);
* optionally ``row_scan_max_rows()`` and ``find_best_splits_of_rows``: the children of
  parents of at most that many rows get their splits from their rows, no histogram kept
  (the depthwise grower asks; absent means never); with them optionally
  ``find_best_splits_mixed``: both scans of a level that has nodes of each kind in one
  call (absent: the two calls);
* optionally ``partition_in_sample_indices = True``: ``partition`` changes nothing but
  the order of ``tree.sample_indices``, so the grower may undo an expansion (speculative
  lossguide steps); absent means False;
* optionally ``carries_build_tables = True``: ``partition`` takes ``then_build=(begins,
  ends, parent_rows, row_segments)``, the ``build_children_histograms`` call of the same
  step, to send that build's data with its own (CUDA); optionally
  ``expands_lossguide_ahead = True``: lossguide steps expand every leaf the one-leaf
  order may still reach (gpuboost.tree.grower.LookaheadLossguideDriver); absent means
  False. Optionally ``estimates_cat_smooth = True``: its scan reads
  ``TreeInput.dispersion``, which the trainer then measures for every tree.

A splitter is built once per training run (or once per tree for
``tree_method='approx'``); what changes from tree to tree comes in a
:class:`TreeInput` (XGBoost's split of a kernel's inputs into a shared and a
per-call part).

Implementations: :mod:`.hist` (``tree_method='hist'``), :mod:`.bundled` (the same
on exclusive feature bundles), :mod:`.exact` (``tree_method='exact'``),
:mod:`.gini` (AdaBoost's Gini classification trees) and :mod:`.multi_output` (vector-leaf
trees: one tree for several outputs).
"""

from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence, Tuple

import numpy as np

from ...core.gain import SplitParams
from ...core.quantize import GradientQuantiser
from ..tree import Tree

__all__ = ["TreeInput", "SplitTable", "Splitter", "children_by_subtraction"]


@dataclass
class TreeInput:
    """What one tree is grown from (per-tree input of a splitter).

    Attributes
    ----------
    gradients, hessians : backend array of shape (n_rows,), int32
        Quantized gradients and hessians (fixed point, docs/DESIGN.md,
        "Quantization"); a Gini tree (:mod:`.gini`) reads ``class_columns`` instead.
    quantiser : GradientQuantiser
        The scales that turn integer sums back into floats.
    sample_indices : backend array of shape (n_samples,), int32
        The rows of this tree in increasing order; the grower partitions it (in place,
        or replacing it by the partitioned array where the splitter's
        ``moves_partitioned_rows``), so it ends as the row partition of the leaves.
    split_params : SplitParams
    learning_rate : float
        Applied to the leaf values.
    class_columns : tuple of backend arrays of shape (n_rows,), int32
        Gini trees: the quantized weight of each row in the column of its class
        (0 elsewhere); empty for gradient trees.
    output_pairs : backend array of shape (n_rows, 2k), int32, or None
        Vector-leaf trees (:mod:`.multi_output`): row ``r``'s quantized ``(g_0, h_0,
        g_1, h_1, ...)`` of the k outputs (``gradients``, ``hessians`` are the first
        output's, columns of it); None for trees of one output.
    output_quantisers : tuple of GradientQuantiser
        Vector-leaf trees: each output's scales (``quantiser`` is the first output's).
    dispersion : float
        The tree's gradient dispersion (:meth:`GradientQuantiser.dispersion`), where the
        split penalty or ``cat_smooth_estimate`` measured it; else 0.
    category_smoothing : ndarray of shape (n_categorical,), float64, or None
        Each categorical feature's ``cat_smooth`` in this tree, set by the splitter at
        the tree's first categorical scan (its root's;
        :func:`~gpuboost.core.categorical.estimated_cat_smooth`); None before, and
        without ``cat_smooth_estimate``.
    """

    gradients: Any
    hessians: Any
    quantiser: GradientQuantiser
    sample_indices: Any
    split_params: SplitParams
    learning_rate: float = 1.0
    class_columns: Tuple[Any, ...] = ()
    output_pairs: Any = None
    output_quantisers: Tuple[GradientQuantiser, ...] = ()
    dispersion: float = 0.0
    category_smoothing: Any = None


@dataclass
class SplitTable:
    """The best split of every node of a batch, one row per node (host arrays).

    Attributes
    ----------
    feature : ndarray of shape (n_nodes,), int64
        -1 where the node has no admissible split.
    bin : ndarray of shape (n_nodes,), int64
        Rows with ``bin <= bin`` go left (for exact trees: the value rank).
    default_left : ndarray of shape (n_nodes,), bool
        Where missing values go.
    gain : ndarray of shape (n_nodes,), float64
        The split's gain as stored in the Tree (what the growth policies rank by).
    left_sums : ndarray of shape (n_nodes, n_sums), int64
        The left child's integer sums (gradient, hessian; or one per class).
    left_count : ndarray of shape (n_nodes,), int64
        Rows of the left child.
    sums : ndarray of shape (n_nodes, n_sums), int64
        The node's own integer sums.
    count : ndarray of shape (n_nodes,), int64
        The node's rows.
    left_sets : ndarray of shape (n_nodes, SPLIT_SET_WORDS), uint32, or None
        Categorical splits: the bins going left (gpuboost.core.categorical); zero
        words for other splits; None when the splitter makes no categorical split.
    """

    feature: np.ndarray
    bin: np.ndarray
    default_left: np.ndarray
    gain: np.ndarray
    left_sums: np.ndarray
    left_count: np.ndarray
    sums: np.ndarray
    count: np.ndarray
    left_sets: Optional[np.ndarray] = None

    def take(self, rows):
        """The table of the nodes ``rows`` (indices into this one)."""
        return SplitTable(
            **{
                name: None if getattr(self, name) is None else getattr(self, name)[rows]
                for name in self.__dataclass_fields__
            }
        )


class Splitter(Protocol):
    """The interface every split-finding strategy implements (see the module docstring).

    ``begins``, ``ends`` (host int64 arrays) are the segments of a batch of nodes in
    ``TreeInput.sample_indices``.
    """

    def build_histograms(self, tree: TreeInput, begins: np.ndarray, ends: np.ndarray) -> Any:
        """Statistics of the nodes as one batch (first axis: the node)."""

    def build_children_histograms(
        self,
        tree: TreeInput,
        begins: np.ndarray,
        ends: np.ndarray,
        parents: Any,
        parent_rows: np.ndarray,
    ) -> Any:
        """The batch [the nodes..., their siblings...]: the nodes' statistics built,
        sibling ``i``'s derived from its parent, row ``parent_rows[i]`` of ``parents``
        (:func:`children_by_subtraction`, or one backend call)."""

    def subtract_histograms(self, parent: Any, child: Any) -> Any:
        """The sibling's batch ``parent - child`` (exact)."""

    def stack_histograms(self, batches: Sequence[Any]) -> Any:
        """Concatenate batches along the node axis."""

    def find_best_splits(
        self,
        tree: TreeInput,
        begins: np.ndarray,
        ends: np.ndarray,
        histograms: Any,
        feature_mask: Optional[np.ndarray],
        node_bounds: Optional[np.ndarray] = None,
    ) -> SplitTable:
        """The best split of every node; ``feature_mask`` (n_nodes, n_features) bool or None;
        ``node_bounds`` (n_nodes, 2) float64 weight bounds under monotone constraints
        (``tree.split_params.monotone``; splitters that refuse them never get it)."""

    def can_split(self, tree: TreeInput, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Which nodes, with these (n_nodes, n_sums) sums and (n_nodes,) counts, can have an
        admissible split at all (bool array)."""

    def node_values(
        self,
        tree: TreeInput,
        sums: np.ndarray,
        node_bounds: Optional[np.ndarray] = None,
        path: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``(value, cover)`` float64 per node from the (n_nodes, n_sums) int64 sums; values
        clipped to ``node_bounds`` (n_nodes, 2) under monotone constraints; with ``path``
        (counts, left_child, right_child) of the tree, path-smoothed
        (``split_params.path_smooth > 0``; gradient splitters only)."""

    def partition(
        self,
        tree: TreeInput,
        begins: np.ndarray,
        ends: np.ndarray,
        features: np.ndarray,
        bins: np.ndarray,
        default_left: np.ndarray,
    ) -> None:
        """Split the segments ``[begins[i], ends[i])`` of ``tree.sample_indices`` by the
        splits ``(features[i], bins[i], default_left[i])`` (in place, stable)."""

    def split_thresholds(
        self, features: np.ndarray, bins: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``(threshold float64, threshold_bin int32)`` stored in the Tree for these splits."""

    def predict_training_rows(self, tree: Tree) -> Any:
        """Leaf value of every training row (backend array of shape (n_rows,), float64)."""


def children_by_subtraction(splitter, tree, begins, ends, parents, parent_rows):
    """``Splitter.build_children_histograms`` from the splitter's ``build_histograms``,
    ``subtract_histograms`` and ``stack_histograms``."""
    built = splitter.build_histograms(tree, begins, ends)
    rows = np.asarray(parent_rows, dtype=np.int64)
    if len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
        parent_batch = parents[int(rows[0]) : int(rows[0]) + len(rows)]
    else:
        parent_batch = parents[rows]
    return splitter.stack_histograms([built, splitter.subtract_histograms(parent_batch, built)])
