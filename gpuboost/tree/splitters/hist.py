"""Split-finding strategies: how the grower gets node statistics, best splits and partitions.

:class:`~gpuboost.grower.TreeGrower` owns the growth policy (which nodes to
expand, node ids, the smaller-child/subtraction schedule, leaf values); a
*splitter* owns the four steps that depend on how candidate splits are
represented:

* ``build_histograms(grower, nodes)``: the statistics of a batch of nodes
  (an array whose first axis is the node), with ``subtract_histograms`` and
  ``stack_histograms`` for the sibling trick and batching;
* ``find_best_splits(grower, nodes, histograms, feature_mask)``: one
  ``SPLIT_RECORD_DTYPE`` record per node (docs/DESIGN.md, "Gain and leaf value");
* ``partition(grower, begins, ends, records)``: the stable row partition of the
  split nodes;
* ``split_threshold(feature, bin)``: the ``(threshold, threshold_bin)`` a
  record's ``(feature, bin)`` stores in the Tree;

plus ``predict_training_rows(tree)``, the leaf values of every training row (the
prediction update when rows were subsampled).

Strategies:

* :class:`HistogramSplitter` (here): ``tree_method='hist'``, the backend's
  histogram, split-scan and partition primitives on the binned features.
* :class:`gpuboost.bundling.BundledHistogramSplitter`: the same on exclusive
  feature bundles (``enable_bundle``).
* :class:`gpuboost.exact.ExactSplitter`: ``tree_method='exact'``, sorted scans
  over every distinct value.

:func:`make_splitter` picks one from the training parameters.
"""
import numpy as np

__all__ = ["HistogramSplitter", "make_splitter", "HISTOGRAM_METHODS_WITH_BUNDLING"]

#: ``tree_method`` values whose bins are the Dataset's own, so that exclusive
#: feature bundles found on them hold for every tree ('approx' re-bins per tree).
HISTOGRAM_METHODS_WITH_BUNDLING = ("hist", "auto")


class HistogramSplitter:
    """Split finding on histograms of the binned features (``tree_method='hist'``).

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    data : DeviceData
        The training data as the backend holds it (``backend.prepare``).
    thresholds : callable (feature, bin) -> float
        Raw threshold of a binned split (``BinMapper.threshold_for_bin``).
    """

    def __init__(self, backend, data, thresholds):
        self.backend = backend
        self.data = data
        #: The per-feature bins the partition and the binned prediction read.
        self.partition_data = data
        self.thresholds = thresholds

    # ---- node statistics -----------------------------------------------------
    def build_histograms(self, grower, nodes):
        """Histograms (n_nodes, n_features, n_bins, 3) int64 of ``nodes`` (one batch)."""
        return self.backend.build_histograms(
            self.data, grower.quantized_gradients, grower.quantized_hessians,
            grower.sample_indices, [node.begin for node in nodes], [node.end for node in nodes])

    def subtract_histograms(self, parent, child):
        """The sibling's histogram ``parent - child`` (exact)."""
        return self.backend.subtract_histograms(parent, child)

    def stack_histograms(self, histograms):
        """Concatenate node histograms along the node axis."""
        return self.backend.stack_histograms(histograms)

    # ---- splits --------------------------------------------------------------
    def find_best_splits(self, grower, nodes, histograms, feature_mask):
        """Host ``SPLIT_RECORD_DTYPE`` records, one per node of ``nodes``."""
        return self.backend.find_best_splits(self.data, histograms, grower.scale_gradients,
                                             grower.scale_hessians, grower.split_params,
                                             feature_mask)

    def partition(self, grower, begins, ends, records):
        """Split the segments ``[begins[i], ends[i])`` of ``grower.sample_indices``
        by ``records[i]`` (in place, stable)."""
        self.backend.partition(
            self.partition_data, grower.sample_indices, begins, ends,
            np.array([r["feature"] for r in records], dtype=np.int64),
            np.array([r["bin"] for r in records], dtype=np.int64),
            np.array([r["default_left"] for r in records], dtype=bool))

    def split_threshold(self, feature, bin):
        """``(threshold, threshold_bin)`` stored in the Tree for a record's split."""
        return self.thresholds(feature, bin), bin

    # ---- prediction ----------------------------------------------------------
    def predict_training_rows(self, tree):
        """Leaf value of every training row (backend array of shape (n_rows,), float64)."""
        return self.backend.predict_tree_binned(self.partition_data, tree)


def make_splitter(params, backend, data, dataset):
    """The splitter of a training run, or None for the grower's default.

    Parameters
    ----------
    params : dict
        Validated parameters: ``tree_method``, ``enable_bundle``, ``max_conflict_rate``.
    backend : gpuboost.backends.base.Backend
    data : DeviceData
        ``backend.prepare(dataset)``.
    dataset : Dataset
        The training data.

    Returns
    -------
    ExactSplitter, BundledHistogramSplitter or None
        ``tree_method='exact'``: an :class:`~gpuboost.exact.ExactSplitter`.
        ``tree_method='hist'`` with ``enable_bundle``, when the bundles are fewer
        than the features that need a histogram column: a
        :class:`~gpuboost.bundling.BundledHistogramSplitter`. Otherwise None: the
        grower builds a :class:`HistogramSplitter` on the data of each tree (which
        ``tree_method='approx'`` re-bins per tree, so it never bundles).
    """
    method = params.get("tree_method", "hist")
    if method == "exact":
        from .exact import ExactSplitter
        return ExactSplitter(backend, dataset)
    if method in HISTOGRAM_METHODS_WITH_BUNDLING and params.get("enable_bundle", False):
        bundle_map = dataset.bundle_map(params.get("max_conflict_rate", 0.0))
        if bundle_map.reduces_columns:
            from ...data.bundling import BundledHistogramSplitter
            return BundledHistogramSplitter(backend, data, bundle_map,
                                            dataset.bin_mapper.threshold_for_bin)
    return None
