"""The NumPy backend: the reference implementation of every primitive."""
import numpy as np

from .base import Backend, DeviceData
from ..histogram import build_histograms, concat_ranges
from ..objective import weighted_quantile
from ..partition import partition_rows
from ..predictor import predict_leaves_binned, predict_leaves_raw
from ..split import find_best_splits

__all__ = ["NumpyBackend"]


class NumpyBackend(Backend):
    """Primitives in vectorized NumPy (see gpuboost.histogram, .split, .partition)."""

    name = "numpy"
    xp = np

    def _prepare(self, dataset):
        mapper = dataset.bin_mapper
        arrays = {
            "X_binned": dataset.X_binned,
            # Feature-major copy: gathering one feature's bins for a row set is contiguous.
            "X_binned_columns": np.ascontiguousarray(dataset.X_binned.T),
        }
        return DeviceData(dataset.n_rows, dataset.n_features, mapper.n_bins, mapper.missing_bin,
                          np.asarray(mapper.n_value_bins_), dataset.label, dataset.weight, arrays)

    def prepare_features(self, X):
        return np.ascontiguousarray(X, dtype=np.float64)

    def build_histograms(self, data, quantized_gradients, quantized_hessians, sample_indices,
                         begins, ends):
        return build_histograms(data.arrays["X_binned_columns"], quantized_gradients,
                                quantized_hessians, sample_indices, begins, ends, data.n_bins)

    def find_best_splits(self, data, histograms, scale_gradients, scale_hessians, split_params,
                         feature_mask):
        return find_best_splits(histograms, scale_gradients, scale_hessians, data.n_value_bins,
                                data.missing_bin, split_params, feature_mask)

    def partition(self, data, sample_indices, begins, ends, features, threshold_bins,
                  default_left):
        partition_rows(data.arrays["X_binned_columns"], sample_indices, begins, ends, features,
                       threshold_bins, default_left, data.missing_bin)

    def add_leaf_values(self, raw, output, sample_indices, begins, ends, values):
        positions, segment = concat_ranges(begins, ends)
        raw[sample_indices[positions], output] += np.asarray(values, dtype=np.float64)[segment]

    def segment_weighted_quantile(self, values, weights, sample_indices, begins, ends, alpha):
        out = np.empty(len(begins), dtype=np.float64)
        for i, (begin, end) in enumerate(zip(begins, ends)):
            rows = sample_indices[begin:end]
            out[i] = weighted_quantile(values[rows], None if weights is None else weights[rows],
                                       alpha)
        return out

    def predict_tree_binned(self, data, tree):
        return tree.value[predict_leaves_binned(tree, data.arrays["X_binned"], data.missing_bin)]

    def predict_tree_raw(self, X, tree):
        return tree.value[predict_leaves_raw(tree, X)]

    def predict_forest_leaves(self, X, trees):
        out = np.empty((X.shape[0], len(trees)), dtype=np.int32)
        for i, tree in enumerate(trees):
            out[:, i] = predict_leaves_raw(tree, X)
        return out

    def predict_forest_raw(self, X, trees, tree_outputs, margins):
        for tree, output in zip(trees, tree_outputs):
            margins[:, output] += tree.value[predict_leaves_raw(tree, X)]
        return margins
