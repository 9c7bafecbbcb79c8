"""The splitter interface: what the tree grower asks of a split-finding strategy.

:class:`gpuboost.tree.grower.TreeGrower` owns the growth policy (which nodes to
expand, node ids, the smaller-child/subtraction schedule); a *splitter* owns
everything that depends on how candidate splits are represented:

* node statistics: ``build_histograms`` of a batch of nodes (an array whose first
  axis is the node), ``subtract_histograms`` and ``stack_histograms`` for the
  sibling trick and batching;
* split search: ``find_best_splits`` gives one record per node, read through
  ``split_of`` (feature, bin, default direction, the left child's integer sums)
  and ``record_sums`` (the node's own sums);
* admissibility and values: ``can_split`` (a node's sums allow a split at all),
  ``node_values`` (leaf value and cover of every node of the finished tree) and
  ``record_gain``;
* the row partition (``partition``) and the tree's thresholds (``split_threshold``);
* ``predict_training_rows``: the leaf values of every training row (the
  prediction update when rows were subsampled).

A splitter is built once per training run (or once per tree for
``tree_method='approx'``); what changes from tree to tree comes in a
:class:`TreeInput` (XGBoost's split of a kernel's inputs into a shared and a
per-call part).

Implementations: :mod:`.hist` (``tree_method='hist'``), :mod:`.bundled` (the same
on exclusive feature bundles), :mod:`.exact` (``tree_method='exact'``) and
:mod:`.gini` (AdaBoost's Gini classification trees).
"""

from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence, Tuple

import numpy as np

from ...core.gain import SplitParams
from ...core.quantize import GradientQuantiser
from ..tree import Tree

__all__ = ["TreeInput", "NodeSegment", "Split", "Splitter"]


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
        The rows of this tree in increasing order; the grower partitions it in
        place, so it ends as the row partition of the leaves.
    split_params : SplitParams
    learning_rate : float
        Applied to the leaf values.
    class_columns : tuple of backend arrays of shape (n_rows,), int32
        Gini trees: the quantized weight of each row in the column of its class
        (0 elsewhere); empty for gradient trees.
    """

    gradients: Any
    hessians: Any
    quantiser: GradientQuantiser
    sample_indices: Any
    split_params: SplitParams
    learning_rate: float = 1.0
    class_columns: Tuple[Any, ...] = ()


class NodeSegment(Protocol):
    """A node as a splitter sees it: its segment of ``TreeInput.sample_indices``."""

    begin: int
    end: int


@dataclass(frozen=True)
class Split:
    """The split of a record, as the grower applies it.

    Attributes
    ----------
    feature : int
        -1 when the record holds no admissible split.
    bin : int
        Rows with ``bin <= bin`` go left (for exact trees: the value rank).
    default_left : bool
        Where missing values go.
    left_sums : tuple of int
        The left child's integer sums (gradient, hessian; or one per class).
    left_count : int
        Rows of the left child.
    """

    feature: int
    bin: int
    default_left: bool
    left_sums: Tuple[int, ...]
    left_count: int


class Splitter(Protocol):
    """The interface every split-finding strategy implements (see the module docstring).

    Records are whatever ``find_best_splits`` returns per node (a structured
    ``SPLIT_RECORD_DTYPE`` row or a dict); the grower reads them only through
    ``split_of``, ``record_sums`` and ``record_gain``.
    """

    def build_histograms(self, tree: TreeInput, nodes: Sequence[NodeSegment]) -> Any:
        """Statistics of ``nodes`` as one batch (first axis: the node)."""

    def subtract_histograms(self, parent: Any, child: Any) -> Any:
        """The sibling's batch ``parent - child`` (exact)."""

    def stack_histograms(self, batches: Sequence[Any]) -> Any:
        """Concatenate batches along the node axis."""

    def find_best_splits(
        self,
        tree: TreeInput,
        nodes: Sequence[NodeSegment],
        histograms: Any,
        feature_mask: Optional[np.ndarray],
    ) -> Sequence[Any]:
        """One record per node (host); ``feature_mask`` (n_nodes, n_features) bool or None."""

    def split_of(self, record: Any) -> Split:
        """The split a record describes."""

    def record_sums(self, record: Any) -> Tuple[Tuple[int, ...], int]:
        """The integer sums and the row count of the node the record was found on."""

    def record_gain(self, tree: TreeInput, record: Any) -> float:
        """The split's gain as stored in the Tree."""

    def can_split(self, tree: TreeInput, sums: Tuple[int, ...], count: int) -> bool:
        """Whether a node with these sums can have an admissible split at all."""

    def node_values(self, tree: TreeInput, sums: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(value, cover)`` float64 per node from the (n_nodes, n_sums) int64 sums."""

    def partition(
        self, tree: TreeInput, begins: np.ndarray, ends: np.ndarray, records: Sequence[Any]
    ) -> None:
        """Split the segments ``[begins[i], ends[i])`` of ``tree.sample_indices`` by
        ``records[i]`` (in place, stable)."""

    def split_threshold(self, feature: int, bin: int) -> Tuple[float, int]:
        """``(threshold, threshold_bin)`` stored in the Tree for a record's split."""

    def predict_training_rows(self, tree: Tree) -> Any:
        """Leaf value of every training row (backend array of shape (n_rows,), float64)."""
