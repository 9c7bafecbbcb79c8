"""The compiled CPU backend: the NumPy backend with its hot primitives compiled by Numba.

:class:`CpuBackend` is a :class:`~gpuboost.backends.numpy.NumpyBackend` (arrays are
NumPy arrays, and every primitive without a kernel here is the reference's) whose
primitives delegate to one module per primitive, with the names of the NumPy and CUDA
backends' modules:

======================================  ==============================================
``prepare`` / ``rebin`` (binning)       :mod:`.binning`
``build_histograms``,                   :mod:`.histogram`
``build_children_histograms``,
``build_output_histograms``,
``build_output_children_histograms``
``find_best_splits``                    :mod:`.split_scan`
``find_best_vector_splits``             :mod:`.vector_split` (vector leaves)
``find_best_splits_of_rows``            :mod:`.row_scan` (small nodes)
``grow_levels_from_rows``               :mod:`.row_levels` (the levels below the row
                                        scan's size, in one call)
``partition``                           :mod:`.partition`
``add_leaf_values``,                    :mod:`.leaf`
``add_leaf_vectors``
``predict_*``                           :mod:`.predict`
``quantize``,                           :mod:`.quantize`
``quantize_output_pairs``
``gradients``                           :mod:`.gradients` (pointwise objectives)
======================================  ==============================================

Every kernel gives the NumPy reference's results bit for bit (integer sums, the same
float64 operation order; docs/DESIGN.md), so the two backends train byte-identical
models; ``GPUBOOST_CPU_KERNELS=numpy`` selects the reference (gpuboost.backends.cpu.jit).
"""

import numpy as np

from ...core.dtypes import HIST_DTYPE
from ...core.vector_split import OutputHistograms, cell_width
from ..base import DeviceData
from ..categorical import (
    predict_forest_leaf_indices,
    predict_forest_values,
    predict_tree_values,
)
from ..numpy.backend import NumpyBackend
from .binning import bin_features, binned_layout
from .categorical_scan import find_best_categorical_splits
from .gradients import gradients
from .histogram import (
    build_children_histograms,
    build_histograms,
    build_output_histograms,
    build_sparse_histograms,
)
from .jit import set_threads
from .leaf import add_leaf_values, add_leaf_vectors, add_split_leaf_values
from .partition import partition_categorical, partition_rows
from .predict import (
    forest_of,
    predict_forest_leaves,
    predict_forest_raw,
    predict_forest_sparse,
    predict_tree_binned,
    predict_tree_raw,
)
from .quantize import dispersion_sums, quantize, quantize_pairs
from .recycled import VECTOR_ALIGNMENT, recycled_empty
from .row_levels import CategoricalLevels, grow_levels_from_rows, levels_from_rows_max_rows
from .row_scan import ROW_SCAN_MAX_ROWS_PER_CELL, find_best_splits_of_rows
from .shap import predict_contributions, predict_interactions
from .split_scan import find_best_splits
from .vector_levels import grow_vector_levels
from .vector_split import find_best_vector_splits

__all__ = ["CpuBackend"]


class CpuBackend(NumpyBackend):
    """Primitives compiled with Numba (see the module docstring)."""

    name = "cpu"
    grows_levels_from_rows = True
    #: ... with categorical features too (:class:`.row_levels.CategoricalLevels`).
    grows_categorical_levels_from_rows = True

    def configure(self, params):
        super().configure(params)
        set_threads(self.n_threads)

    def _threads(self):
        """Launch the kernels of this call on ``n_threads`` threads (Numba keeps the
        setting per calling thread)."""
        set_threads(self.n_threads)

    # ---- data ---------------------------------------------------------------
    def binned_layout(self, X_binned):
        """The NumPy backend's layout, its feature-major copy transposed compiled."""
        return binned_layout(X_binned)

    def _device_data(self, n_rows, n_features, bin_mapper, X_binned, label, weight):
        return DeviceData(
            n_rows,
            n_features,
            bin_mapper.n_bins,
            bin_mapper.missing_bin,
            np.asarray(bin_mapper.n_value_bins_),
            label,
            weight,
            self.binned_layout(X_binned),
        )

    def prepare_features(self, X):
        """Float32 features stay float32 (the kernels read their exact float64 values),
        anything else becomes float64; C order."""
        X = np.asarray(X)
        return np.ascontiguousarray(X, dtype=np.float32 if X.dtype == np.float32 else np.float64)

    def _prepare(self, dataset):
        self._threads()
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

    def rebin(self, data, raw_features, bin_mapper):
        self._threads()
        binned = bin_features(raw_features, bin_mapper)
        return self._device_data(
            data.n_rows, data.n_features, bin_mapper, binned, data.label, data.weight
        )

    # ---- one round ----------------------------------------------------------
    def gradients(self, objective, label, margins, weight, dataset=None):
        self._threads()
        computed = gradients(objective, label, margins, weight)
        if computed is None:
            return super().gradients(objective, label, margins, weight, dataset)
        return computed

    def quantize(self, values):
        self._threads()
        return quantize(values)

    def dispersion_sums(self, quantized_gradients, quantized_hessians, rows):
        """One compiled pass (:func:`.quantize.dispersion_sums`)."""
        self._threads()
        return dispersion_sums(quantized_gradients, quantized_hessians, rows)

    def quantize_output_pairs(self, gradients, hessians):
        """Every column in one compiled pass (:func:`.quantize.quantize_pairs`)."""
        self._threads()
        return quantize_pairs(gradients, hessians)

    builds_sparse_histograms = True

    def _sparse_histograms(self, data, gradients, hessians, sample_indices, begins, ends, *pairs):
        """The histograms of a DeviceData in the sparse layout (``builds_sparse_histograms``)."""
        arrays = data.arrays
        return build_sparse_histograms(
            arrays["sparse_indptr"],
            arrays["sparse_cells"],
            arrays["sparse_default_bins"],
            gradients,
            hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            *pairs,
        )

    def build_histograms(
        self, data, quantized_gradients, quantized_hessians, sample_indices, begins, ends
    ):
        self._threads()
        if "sparse_cells" in data.arrays:
            return self._sparse_histograms(
                data, quantized_gradients, quantized_hessians, sample_indices, begins, ends
            )
        return build_histograms(
            data.arrays["X_binned"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
        )

    def build_children_histograms(
        self,
        data,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        begins,
        ends,
        parents,
        parent_rows,
    ):
        self._threads()
        if "sparse_cells" in data.arrays:
            return self._sparse_histograms(
                data,
                quantized_gradients,
                quantized_hessians,
                sample_indices,
                begins,
                ends,
                parents,
                parent_rows,
            )
        return build_children_histograms(
            data.arrays["X_binned"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            parents,
            parent_rows,
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
        self._threads()
        return find_best_splits(
            histograms,
            scale_gradients,
            scale_hessians,
            data.n_value_bins,
            data.missing_bin,
            split_params,
            feature_mask,
            node_bounds,
        )

    def build_output_histograms(self, data, output_pairs, sample_indices, begins, ends):
        """Every output in one pass over the rows (:func:`.histogram.build_output_histograms`),
        straight into a recycled batch; the sparse layout by the definition."""
        if "sparse_cells" in data.arrays:
            return super().build_output_histograms(data, output_pairs, sample_indices, begins, ends)
        return self._build_outputs(data, output_pairs, sample_indices, begins, ends)

    def build_output_children_histograms(
        self, data, output_pairs, sample_indices, begins, ends, parents, parent_rows
    ):
        """The children and their siblings in one kernel call."""
        if "sparse_cells" in data.arrays:
            return super().build_output_children_histograms(
                data, output_pairs, sample_indices, begins, ends, parents, parent_rows
            )
        return self._build_outputs(
            data, output_pairs, sample_indices, begins, ends, parents, parent_rows
        )

    def _build_outputs(
        self, data, output_pairs, sample_indices, begins, ends, parents=None, parent_rows=None
    ):
        """The batch of the nodes (with ``parents``: and their siblings), in a recycled
        buffer (:mod:`.recycled`: no page faults level after level)."""
        self._threads()
        n_outputs = output_pairs.shape[1] // 2
        n_built = len(begins) * (1 if parents is None else 2)
        shape = (n_built, data.n_features, data.n_bins)
        cells = recycled_empty(shape + (cell_width(n_outputs),), HIST_DTYPE, VECTOR_ALIGNMENT)
        counts = recycled_empty(shape, HIST_DTYPE)
        build_output_histograms(
            data.arrays["X_binned"],
            output_pairs,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            cells.reshape(n_built, -1),
            counts.reshape(n_built, -1),
            *(
                ()
                if parents is None
                else (
                    parents.cells.reshape(len(parents), -1),
                    parents.counts.reshape(len(parents), -1),
                    parent_rows,
                )
            ),
        )
        return OutputHistograms(cells, counts, n_outputs)

    def find_best_categorical_splits(self, histograms, *args):
        """Compiled (:mod:`.categorical_scan`) on the whole histograms (no slice copied),
        the definition's records and sets bit for bit."""
        self._threads()
        return find_best_categorical_splits(histograms, *args)

    def find_best_vector_splits(self, data, histograms, scales, params, feature_mask):
        """Compiled (:mod:`.vector_split`), the definition's table bit for bit."""
        self._threads()
        return find_best_vector_splits(
            histograms, scales, data.n_value_bins, data.missing_bin, params, feature_mask
        )

    def row_scan_max_rows(self, data):
        """``ROW_SCAN_MAX_ROWS_PER_CELL * n_bins`` on per-feature bins (0 on the sparse
        layout, whose histograms are built from non-default cells)."""
        if "sparse_cells" in data.arrays:
            return 0
        return ROW_SCAN_MAX_ROWS_PER_CELL * int(data.n_bins)

    def find_best_splits_of_rows(
        self,
        data,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        begins,
        ends,
        scale_gradients,
        scale_hessians,
        split_params,
        feature_mask,
        node_bounds=None,
    ):
        self._threads()
        return find_best_splits_of_rows(
            data.arrays["X_binned"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            data.n_value_bins,
            data.missing_bin,
            scale_gradients,
            scale_hessians,
            split_params,
            feature_mask,
            node_bounds,
        )

    def levels_from_rows_max_rows(self, data, n_samples):
        """Nodes of at most this many rows have their subtrees grown by
        :meth:`grow_levels_from_rows` (:func:`.row_levels.levels_from_rows_max_rows`)."""
        return levels_from_rows_max_rows(n_samples, data.n_features, self.row_scan_max_rows(data))

    def grow_levels_from_rows(
        self,
        data,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        scale_gradients,
        scale_hessians,
        split_params,
        feature_mask,
        max_depth,
        defer_final,
        columns,
        size,
        parents,
        scanned,
        unsplit,
        scan_parents=False,
        categorical=None,
    ):
        """The depthwise subtrees of ``parents``, each of at most
        :meth:`levels_from_rows_max_rows` rows, in one call
        (:func:`.row_levels.grow_levels_from_rows`, whose definition is the grower's level
        loop: gpuboost.tree.grower); with ``scan_parents`` the parents' sums and splits
        are found first; ``categorical``: ``(features, n_value_bins, cat_params,
        smoothing, feature_mask)`` of the categorical features
        (:class:`.row_levels.CategoricalLevels`; None: none), ``feature_mask`` then the
        numeric scan's. Returns ``(size, frontier, n_unsplit, overflowed)``."""
        self._threads()
        return grow_levels_from_rows(
            data.arrays["X_binned"],
            data.arrays["X_binned_columns"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            data.n_bins,
            data.n_value_bins,
            data.missing_bin,
            scale_gradients,
            scale_hessians,
            split_params,
            feature_mask,
            max_depth,
            defer_final,
            columns,
            size,
            parents,
            scanned,
            unsplit,
            scan_parents,
            None if categorical is None else CategoricalLevels(*categorical),
        )

    def grows_vector_levels(self, data):
        """On the per-feature bins (not the sparse layout)."""
        return "sparse_cells" not in data.arrays

    def grow_vector_levels(
        self,
        data,
        output_pairs,
        sample_indices,
        scales,
        split_params,
        feature_mask,
        max_depth,
        columns,
        size,
        parents,
        scan_parents=False,
    ):
        """The depthwise levels of a vector-leaf tree from ``parents`` in one call
        (:func:`.vector_levels.grow_vector_levels`, whose definition is the grower's level
        loop: gpuboost.tree.grower); with ``scan_parents`` the parents' sums and splits
        are found first. Returns ``(size, frontier, overflowed)``."""
        self._threads()
        return grow_vector_levels(
            data.arrays["X_binned"],
            data.arrays["X_binned_columns"],
            output_pairs,
            sample_indices,
            data.n_bins,
            data.n_value_bins,
            data.missing_bin,
            scales,
            split_params,
            feature_mask,
            max_depth,
            columns,
            size,
            parents,
            scan_parents,
        )

    def partition(self, data, sample_indices, begins, ends, features, threshold_bins, default_left):
        self._threads()
        partition_rows(
            data.arrays["X_binned_columns"],
            sample_indices,
            begins,
            ends,
            features,
            threshold_bins,
            default_left,
            data.missing_bin,
        )

    def partition_categorical(
        self, data, sample_indices, begins, ends, features, left_sets, default_left
    ):
        """Compiled (:func:`.partition.partition_categorical`), on the column-major bins."""
        self._threads()
        partition_categorical(
            data.arrays["X_binned_columns"],
            sample_indices,
            begins,
            ends,
            features,
            left_sets,
            default_left,
            data.missing_bin,
        )

    def add_leaf_values(self, raw, output, sample_indices, begins, ends, values):
        self._threads()
        add_leaf_values(raw, output, sample_indices, begins, ends, values)

    def add_leaf_vectors(self, raw, sample_indices, begins, ends, values):
        self._threads()
        if not raw.flags.c_contiguous:
            return super().add_leaf_vectors(raw, sample_indices, begins, ends, values)
        add_leaf_vectors(raw, sample_indices, begins, ends, values)

    def add_split_leaf_values(
        self,
        data,
        raw,
        output,
        sample_indices,
        begins,
        ends,
        n_left,
        features,
        threshold_bins,
        default_left,
        left_values,
        right_values,
    ):
        """Routed and added in one pass, the rows left where they are."""
        self._threads()
        add_split_leaf_values(
            raw,
            output,
            data.arrays["X_binned_columns"],
            data.missing_bin,
            sample_indices,
            begins,
            ends,
            features,
            threshold_bins,
            default_left,
            left_values,
            right_values,
        )

    def predict_tree_binned(self, data, tree):
        if tree.has_categorical:
            return predict_tree_values(
                self.xp, self.to_device, data.arrays["X_binned"], tree, data.missing_bin
            )
        self._threads()
        return predict_tree_binned(data.arrays["X_binned"], data.missing_bin, tree)

    def predict_tree_raw(self, X, tree):
        if tree.has_categorical:
            return predict_tree_values(self.xp, self.to_device, X, tree)
        self._threads()
        return predict_tree_raw(X, tree)

    def predict_forest_raw(self, X, trees, tree_outputs, margins):
        if forest_of(trees).has_categorical:
            return predict_forest_values(self.xp, self.to_device, X, trees, tree_outputs, margins)
        self._threads()
        return predict_forest_raw(X, trees, tree_outputs, margins)

    predicts_sparse_rows = True

    def predict_forest_sparse(self, rows, absent, trees, tree_outputs, margins):
        self._threads()
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
        if forest_of(trees).has_categorical:
            return predict_forest_leaf_indices(self.xp, self.to_device, X, trees)
        self._threads()
        return predict_forest_leaves(X, trees)

    def predict_contributions(self, X, trees, tree_outputs, n_outputs):
        return predict_contributions(X, trees, tree_outputs, n_outputs, self.n_threads)

    def predict_interactions(self, X, trees, tree_outputs, n_outputs):
        return predict_interactions(X, trees, tree_outputs, n_outputs, self.n_threads)
