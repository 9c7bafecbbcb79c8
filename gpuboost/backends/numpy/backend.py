"""The NumPy backend: the reference implementation of every primitive."""
import numpy as np

from ..base import Backend, DeviceData
from ...core.segments import concat_ranges
from .histogram import build_histograms
from ...core.quantile import weighted_quantile
from .partition import partition_rows
from .predict import predict_leaves_binned, predict_leaves_raw
from .segment_reduce import segment_sums
from .split_scan import find_best_splits
from ...core.threads import thread_pool, usable_cores

#: Partitions of fewer rows run on one thread (thread hand-off costs more).
PARALLEL_PARTITION_MIN_ROWS = 1 << 16

__all__ = ["NumpyBackend"]


class NumpyBackend(Backend):
    """Primitives in vectorized NumPy (see gpuboost.histogram, .split, .partition)."""

    name = "numpy"
    xp = np
    #: Threads of the histogram feature loop; set from ``nthread`` by configure().
    n_threads = 1

    def configure(self, params):
        nthread = params.get("nthread", 0)
        self.n_threads = nthread if nthread > 0 else usable_cores()

    def _prepare(self, dataset):
        mapper = dataset.bin_mapper
        arrays = {
            "X_binned": dataset.X_binned,
            # Feature-major copy: gathering one feature's bins for a row set is contiguous.
            "X_binned_columns": np.ascontiguousarray(dataset.X_binned.T),
        }
        return DeviceData(dataset.n_rows, dataset.n_features, mapper.n_bins, mapper.missing_bin,
                          np.asarray(mapper.n_value_bins_), dataset.label, dataset.weight, arrays)

    def binned_layout(self, X_binned):
        return {"X_binned": X_binned, "X_binned_columns": np.ascontiguousarray(X_binned.T)}

    def prepare_features(self, X):
        return np.ascontiguousarray(X, dtype=np.float64)

    def build_histograms(self, data, quantized_gradients, quantized_hessians, sample_indices,
                         begins, ends):
        return build_histograms(data.arrays["X_binned_columns"], quantized_gradients,
                                quantized_hessians, sample_indices, begins, ends, data.n_bins,
                                self.n_threads)

    def find_best_splits(self, data, histograms, scale_gradients, scale_hessians, split_params,
                         feature_mask):
        return find_best_splits(histograms, scale_gradients, scale_hessians, data.n_value_bins,
                                data.missing_bin, split_params, feature_mask,
                                thread_pool(self.n_threads))

    def partition(self, data, sample_indices, begins, ends, features, threshold_bins,
                  default_left):
        columns = data.arrays["X_binned_columns"]
        pool = thread_pool(self.n_threads)
        n_rows = int(np.sum(np.asarray(ends) - np.asarray(begins)))
        if pool is None or len(begins) < 2 or n_rows < PARALLEL_PARTITION_MIN_ROWS:
            partition_rows(columns, sample_indices, begins, ends, features, threshold_bins,
                           default_left, data.missing_bin)
            return
        # Node segments are disjoint: split the nodes into groups of similar row
        # counts and partition the groups concurrently.
        lengths = np.asarray(ends) - np.asarray(begins)
        group_of_node = np.minimum(np.cumsum(lengths) - lengths, n_rows - 1) * self.n_threads // n_rows
        groups = [np.flatnonzero(group_of_node == g) for g in range(self.n_threads)]
        list(pool.map(lambda nodes: partition_rows(
            columns, sample_indices, begins[nodes], ends[nodes], features[nodes],
            threshold_bins[nodes], default_left[nodes], data.missing_bin),
            [nodes for nodes in groups if len(nodes)]))

    def add_leaf_values(self, raw, output, sample_indices, begins, ends, values):
        positions, segment = concat_ranges(begins, ends)
        raw[sample_indices[positions], output] += np.asarray(values, dtype=np.float64)[segment]

    def segment_sums(self, values, sample_indices, begins, ends):
        return segment_sums(values, sample_indices, begins, ends)

    def rebin(self, data, raw_features, bin_mapper):
        X_binned = bin_mapper.transform(raw_features)
        arrays = {"X_binned": X_binned, "X_binned_columns": np.ascontiguousarray(X_binned.T)}
        return DeviceData(data.n_rows, data.n_features, bin_mapper.n_bins, bin_mapper.missing_bin,
                          np.asarray(bin_mapper.n_value_bins_), data.label, data.weight, arrays)

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
