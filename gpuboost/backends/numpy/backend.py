"""The NumPy backend: the reference implementation of every primitive.

:class:`NumpyBackend` only delegates to one module per primitive (the same names as
the CUDA backend's modules and the kernel files ``cuda/*.cu``): :mod:`.binning`,
:mod:`.histogram`, :mod:`.split_scan`, :mod:`.partition`, :mod:`.leaf`,
:mod:`.segment_reduce`, :mod:`.predict`, :mod:`.shap`.
"""

import numpy as np

from ...core.threads import thread_pool, usable_cores
from ..base import Backend, DeviceData, LazyBinnedArrays
from ..categorical import (
    has_categorical,
    predict_forest_leaf_indices,
    predict_forest_values,
    predict_tree_values,
)
from .binning import bin_features, binned_layout
from .histogram import build_histograms
from .leaf import add_leaf_values, segment_weighted_quantile
from .partition import partition_rows_threaded
from .predict import (
    predict_forest_leaves,
    predict_forest_raw,
    predict_forest_sparse,
    predict_tree_binned,
    predict_tree_raw,
)
from .segment_reduce import segment_sums
from .shap import predict_contributions, predict_interactions
from .split_scan import find_best_splits

__all__ = ["NumpyBackend"]


class NumpyBackend(Backend):
    """Primitives in vectorized NumPy (see the module docstring)."""

    name = "numpy"
    xp = np
    #: The entries of :meth:`binned_layout`.
    binned_layout_keys = ("X_binned", "X_binned_columns")
    #: Threads of the histogram, split-scan and partition loops; set from ``nthread``
    #: by configure() (results do not depend on it).
    n_threads = 1

    def configure(self, params):
        nthread = params.get("nthread", 0)
        self.n_threads = nthread if nthread > 0 else usable_cores()

    def _prepare(self, dataset):
        mapper = dataset.bin_mapper
        return DeviceData(
            dataset.n_rows,
            dataset.n_features,
            mapper.n_bins,
            mapper.missing_bin,
            np.asarray(mapper.n_value_bins_),
            dataset.label,
            dataset.weight,
            self._binned_arrays(dataset),
        )

    def _binned_arrays(self, dataset, **entries):
        """The binned layout of a Dataset; for sparse input made at first use
        (:class:`~gpuboost.backends.base.LazyBinnedArrays`)."""
        if getattr(dataset, "sparse_columns", None) is None:
            return {**self.binned_layout(self._dataset_bins(dataset)), **entries}
        return LazyBinnedArrays(
            lambda: self.binned_layout(self._dataset_bins(dataset)),
            self.binned_layout_keys,
            **entries,
        )

    def _dataset_bins(self, dataset):
        """The Dataset's bins as this backend makes them (host, uint8)."""
        return dataset.X_binned

    def binned_layout(self, X_binned):
        return binned_layout(X_binned)

    def prepare_features(self, X):
        return np.ascontiguousarray(X, dtype=np.float64)

    def rebin(self, data, raw_features, bin_mapper):
        return DeviceData(
            data.n_rows,
            data.n_features,
            bin_mapper.n_bins,
            bin_mapper.missing_bin,
            np.asarray(bin_mapper.n_value_bins_),
            data.label,
            data.weight,
            binned_layout(bin_features(raw_features, bin_mapper)),
        )

    def build_histograms(
        self, data, quantized_gradients, quantized_hessians, sample_indices, begins, ends
    ):
        return build_histograms(
            data.arrays["X_binned_columns"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            self.n_threads,
        )

    def find_best_splits(
        self,
        data,
        histograms,
        scale_gradients,
        scale_hessians,
        split_params,
        feature_mask,
        node_bounds=None,
    ):
        return find_best_splits(
            histograms,
            scale_gradients,
            scale_hessians,
            data.n_value_bins,
            data.missing_bin,
            split_params,
            feature_mask,
            thread_pool(self.n_threads),
            node_bounds,
        )

    def partition(self, data, sample_indices, begins, ends, features, threshold_bins, default_left):
        partition_rows_threaded(
            data.arrays["X_binned_columns"],
            sample_indices,
            begins,
            ends,
            features,
            threshold_bins,
            default_left,
            data.missing_bin,
            self.n_threads,
        )

    def add_leaf_values(self, raw, output, sample_indices, begins, ends, values):
        add_leaf_values(raw, output, sample_indices, begins, ends, values)

    def segment_weighted_quantile(self, values, weights, sample_indices, begins, ends, alpha):
        return segment_weighted_quantile(values, weights, sample_indices, begins, ends, alpha)

    def segment_sums(self, values, sample_indices, begins, ends):
        return segment_sums(values, sample_indices, begins, ends)

    def predict_tree_binned(self, data, tree):
        if tree.has_categorical:
            return predict_tree_values(
                self.xp, self.to_device, data.arrays["X_binned"], tree, data.missing_bin
            )
        return predict_tree_binned(data.arrays["X_binned"], data.missing_bin, tree)

    def predict_tree_raw(self, X, tree):
        if tree.has_categorical:
            return predict_tree_values(self.xp, self.to_device, X, tree)
        return predict_tree_raw(X, tree)

    def predict_forest_raw(self, X, trees, tree_outputs, margins):
        if has_categorical(trees):
            return predict_forest_values(self.xp, self.to_device, X, trees, tree_outputs, margins)
        return predict_forest_raw(X, trees, tree_outputs, margins)

    predicts_sparse_rows = True

    def predict_forest_sparse(self, rows, absent, trees, tree_outputs, margins):
        return predict_forest_sparse(
            rows.indptr,
            rows.indices,
            rows.data,
            rows.shape[1],
            absent,
            trees,
            tree_outputs,
            margins,
        )

    def predict_forest_leaves(self, X, trees):
        if has_categorical(trees):
            return predict_forest_leaf_indices(self.xp, self.to_device, X, trees)
        return predict_forest_leaves(X, trees)

    def predict_contributions(self, X, trees, tree_outputs, n_outputs):
        return predict_contributions(X, trees, tree_outputs, n_outputs, self.n_threads)

    def predict_interactions(self, X, trees, tree_outputs, n_outputs):
        return predict_interactions(X, trees, tree_outputs, n_outputs, self.n_threads)
