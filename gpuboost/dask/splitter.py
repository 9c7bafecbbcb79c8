"""The distributed splitter: the client's :class:`~gpuboost.tree.grower.TreeGrower`
grows the tree, the workers hold the rows.

It implements the :class:`~gpuboost.tree.splitters.base.Splitter` protocol on the
client. The grower's segments ``[begin, end)`` are *global* counts (the positions the
single-node row partition would give the node); every worker keeps its own rows of a
node under that key (:class:`gpuboost.dask.worker.WorkerState`).

* ``build_histograms``: one exchange for the whole batch of nodes (a level, or the
  smaller children of a lossguide step): the splits the grower applied since the
  last exchange travel with it (the workers partition their rows first), then every
  worker returns its local int64 histograms and the client sums them (exact, so the
  same integers as on one machine, whatever the partitioning);
* ``find_best_splits``: the single-node split scan of the client's backend on the
  summed histograms; ``partition`` only records the splits for the next exchange
  (the left counts come from the split table);
* node values, admissibility, histogram arithmetic (NumPy on the client) and thresholds
  are :class:`~gpuboost.tree.splitters.hist.HistogramSplitter`'s (on the client's
  :class:`~gpuboost.data.binning.BinMapper`).
"""

import numpy as np

from ..tree.splitters import HistogramSplitter, children_by_subtraction

__all__ = ["DistributedSplitter"]


class DistributedSplitter(HistogramSplitter):
    """See the module docstring.

    Parameters
    ----------
    exchange : gpuboost.dask.comm.Exchange
    backend : Backend
        The client's (CPU) backend: the split scan.
    data : DeviceData
        The training data's shape on the client (``n_value_bins``, ``missing_bin``);
        no rows.
    thresholds : callable (features, bins) -> ndarray of float64
        ``BinMapper.thresholds_for_bins``.
    """

    #: The rows are partitioned on the workers: an expansion cannot be undone on the
    #: client, so lossguide expands one leaf per step (gpuboost.tree.grower).
    partition_in_sample_indices = False
    #: The workers partition and build; the driver sends them nothing ahead.
    carries_build_tables = False
    expands_lossguide_ahead = False

    def nodes_from_rows_max_rows(self):
        """0: a node's histogram sums every worker's rows; the client holds none."""
        return 0

    def __init__(self, exchange, backend, data, thresholds):
        super().__init__(backend, data, thresholds)
        self.exchange = exchange
        self._quantization = None
        self._splits = []
        self._left_counts = {}

    def begin_tree(self, scale_gradients, scale_hessians, n_samples, quantized=False):
        """A new tree: the workers quantize with these global scales at the next exchange
        (``quantized``: they have already, at the split penalty's exchange)."""
        self._quantization = None if quantized else (scale_gradients, scale_hessians, n_samples)
        self._splits = []
        self._left_counts = {}

    #: Its histograms are the workers' sums on the host.
    reserves_histograms = False
    takes_rows_in_order = False
    moves_partitioned_rows = False

    # ---- node statistics -----------------------------------------------------
    def build_histograms(self, tree, begins, ends):
        """The nodes' histograms (n_nodes, n_features, n_bins, 3) int64: the sum of every
        worker's (one exchange)."""
        nodes = list(zip(np.asarray(begins).tolist(), np.asarray(ends).tolist()))
        quantization, splits = self._quantization, self._splits
        self._quantization, self._splits = None, []
        parts = self.exchange.call("building histograms", "histograms", quantization, splits, nodes)
        total = np.array(parts[0], dtype=np.int64, copy=True)
        for part in parts[1:]:
            total += part
        return total

    def build_children_histograms(self, tree, begins, ends, parents, parent_rows):
        """The smaller children built (one exchange), their siblings by subtraction."""
        return children_by_subtraction(self, tree, begins, ends, parents, parent_rows)

    # ---- splits --------------------------------------------------------------
    def find_best_splits(self, tree, begins, ends, histograms, feature_mask, node_bounds=None):
        """The single-node split scan on the summed histograms (``node_bounds``: the
        nodes' weight bounds under monotone constraints); the nodes' left counts are
        kept for :meth:`partition`."""
        table = super().find_best_splits(tree, begins, ends, histograms, feature_mask, node_bounds)
        for begin, end, n_left in zip(
            np.asarray(begins).tolist(), np.asarray(ends).tolist(), table.left_count.tolist()
        ):
            self._left_counts[(begin, end)] = n_left
        return table

    def partition(self, tree, begins, ends, features, bins, default_left, left_sets=None):
        """Record the splits (``left_sets``: categorical splits' bins going left, zero
        words at numeric ones); the workers apply them at the next exchange."""
        n_splits = len(np.asarray(begins))
        if left_sets is None:
            left_sets = np.zeros((n_splits, 0), dtype=np.uint32)
        for begin, end, feature, threshold_bin, left, left_set in zip(
            np.asarray(begins).tolist(),
            np.asarray(ends).tolist(),
            np.asarray(features).tolist(),
            np.asarray(bins).tolist(),
            np.asarray(default_left).tolist(),
            np.asarray(left_sets),
        ):
            middle = begin + self._left_counts.pop((begin, end))
            categorical = left_set.copy() if left_set.any() else None
            self._splits.append(
                (begin, end, middle, feature, threshold_bin, bool(left), categorical)
            )

    def predict_training_rows(self, tree):
        """Not on the client: the workers add the tree to their margins
        (``WorkerState.end_tree``)."""
        raise NotImplementedError("the workers update their own training margins")
