"""``tree_method='hist'`` with exclusive feature bundles (``enable_bundle``).

The bundles themselves (which features share a column, the bundled matrix, the
histogram expansion) are :mod:`gpuboost.data.bundling`'s; this splitter builds
histograms over the bundles and expands them to per-feature histograms before
the backend's split scan (docs/DESIGN.md, "Growth").
"""

import numpy as np

from ...backends.base import DeviceData
from ..tree import TREE_ARRAYS, Tree
from .hist import HistogramSplitter

__all__ = ["BundledHistogramSplitter", "SPARSE_HISTOGRAM_MAX_FILL", "sparse_histograms_pay"]

#: Backends that build sparse histograms (``builds_sparse_histograms``) get them when at
#: most this fraction of the bundled matrix's entries is not all-default: each such entry
#: then costs a 4-byte cell next to the matrix, and its rows are visited by their few
#: non-default entries instead of every bundle.
SPARSE_HISTOGRAM_MAX_FILL = 0.25


def sparse_histograms_pay(n_non_default, n_entries):
    """Whether sparse histograms are built for a matrix of ``n_entries`` entries of which
    ``n_non_default`` are not all-default (:data:`SPARSE_HISTOGRAM_MAX_FILL`)."""
    return n_non_default <= SPARSE_HISTOGRAM_MAX_FILL * n_entries


class BundledHistogramSplitter(HistogramSplitter):
    """``tree_method='hist'`` with histograms built over feature bundles.

    Histograms of nodes (and the sibling subtraction) are bundle histograms,
    ``(n_nodes, n_bundles, bundle_map.n_bins, 3)``; they are expanded to per-feature
    histograms just before the backend's split scan, ``bundle_map.scan_bins`` wide
    (the missing bin last: the scan sees the same candidates in less memory). The row
    partition and the binned prediction of the training rows read the bins of the few
    features they need decoded from the bundled matrix (with conflicts, the decoded bins
    are what the histograms counted, so both agree), never the per-feature binned
    matrix. The device arrays (the bundled matrix, the expansion's index arrays) are
    cached in ``data.arrays`` for later trainings on the same Dataset.

    On a backend that ``builds_sparse_histograms`` (the compiled CPU backend), when the
    bundled matrix is sparse (:data:`SPARSE_HISTOGRAM_MAX_FILL`), the histograms are
    built straight in the expanded layout from every row's non-default entries
    (:meth:`~gpuboost.data.bundling.BundleMap.non_default_cells`), each default bin from
    the node total: the same integers as the expansion of bundle histograms, without the
    pass over every bundle of every row nor the expansion.

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    data : DeviceData
    bundle_map : BundleMap
        Of the Dataset ``data`` was prepared from.
    thresholds : callable (features, bins) -> ndarray of float64
    dataset : Dataset, optional
        The Dataset itself: when it holds a sparse matrix (absent entries 0.0), the
        bundled matrix is encoded from its stored entries
        (:meth:`~gpuboost.data.bundling.BundleMap.encode_sparse`), so the per-feature
        binned matrix is never built.
    """

    #: The partition reads decoded bins (no ``partition_data``): every split partitions.
    defers_final_partition = False
    #: Its nodes' histograms are the bundles' expanded (not the backend's level growth).
    plain_levels = False

    def row_scan_max_rows(self):
        """0: the scan reads per-feature histograms expanded from the bundles' (the
        rows hold bundle values), never a node's rows."""
        return 0

    #: Key of the cached device arrays in ``DeviceData.arrays``.
    CACHE_KEY = "feature_bundles"

    def __init__(self, backend, data, bundle_map, thresholds, dataset=None):
        super().__init__(backend, data, thresholds)
        self.partition_data = None  # the partition decodes the bins it needs (below)
        self.bundle_map = bundle_map
        cached = data.arrays.get(self.CACHE_KEY)
        if cached is None or cached[0] is not bundle_map:
            cached = (bundle_map,) + self._device_arrays(backend, data, bundle_map, dataset)
            data.arrays[self.CACHE_KEY] = cached
        _, self.bundled_data, self.expansion, self.sparse_data = cached
        self._scan_width(bundle_map.scan_bins)

    def _scan_width(self, scan_bins):
        """Scan per-feature histograms ``scan_bins`` wide, the missing bin last."""
        data = self.data
        self.scan_bins = scan_bins
        #: What the split scan reads: the per-feature histograms' width and missing bin.
        self.scan_data = DeviceData(
            data.n_rows,
            data.n_features,
            scan_bins,
            scan_bins - 1,
            data.n_value_bins,
            data.label,
            data.weight,
            data.arrays,
        )

    @staticmethod
    def _device_arrays(backend, data, bundle_map, dataset):
        xp = backend.xp
        columns = None if dataset is None else getattr(dataset, "sparse_columns", None)
        if columns is not None and dataset.sparse_absent == "zero":
            X_bundled = backend.to_device(bundle_map.encode_sparse(columns, dataset.bin_mapper))
        else:
            X_bundled = bundle_map.encode(xp, data.arrays["X_binned"])
        sparse = backend.builds_sparse_histograms and sparse_histograms_pay(
            np.count_nonzero(X_bundled), X_bundled.size
        )
        bundled_data = DeviceData(
            data.n_rows,
            bundle_map.n_bundles,
            bundle_map.n_bins,
            None,
            None,
            None,
            None,
            # Sparse histograms never read the bundles feature-major (only the bundle
            # histograms do): the row-major matrix alone, for the decoded bins of the
            # partition and the prediction (half the memory on wide sparse data).
            {"X_binned": X_bundled} if sparse else backend.binned_layout(X_bundled),
        )
        scan_bins = bundle_map.scan_bins
        expansion = bundle_map.histogram_expansion(scan_bins, backend.to_device, scan_bins - 1)
        sparse_data = None
        if sparse:
            indptr, cells = bundle_map.non_default_cells(X_bundled, scan_bins, scan_bins - 1)
            sparse_data = DeviceData(
                data.n_rows,
                data.n_features,
                scan_bins,
                scan_bins - 1,
                data.n_value_bins,
                None,
                None,
                {
                    "sparse_indptr": indptr,
                    "sparse_cells": cells,
                    "sparse_default_bins": bundle_map.default_bins.astype(np.int64),
                },
            )
        return bundled_data, expansion, sparse_data

    def _decoded(self, features):
        """A DeviceData holding the bins of ``features`` only (column ``i``: feature
        ``features[i]``), decoded from the bundled matrix."""
        decoded = self.bundle_map.decode_features(
            self.backend.xp, self.bundled_data.arrays["X_binned"], features
        )
        return self._decoded_data(decoded, features)

    def _decoded_data(self, decoded, features):
        """The DeviceData of the decoded bins ``decoded`` (n_rows, len(features))."""
        data = self.data
        return DeviceData(
            data.n_rows,
            len(features),
            data.n_bins,
            data.missing_bin,
            np.asarray(data.n_value_bins)[features],
            data.label,
            data.weight,
            self.backend.binned_layout(decoded),
        )

    @property
    def _histogram_data(self):
        """Histograms are bundle histograms (n_nodes, n_bundles, bundle_map.n_bins, 3), or
        with sparse histograms the expanded ones (n_nodes, n_features, scan_bins, 3)."""
        return self.bundled_data if self.sparse_data is None else self.sparse_data

    #: The bundle histograms are expanded (an array operation) before the backend scans.
    reads_batches_through_backend = False

    def find_best_splits(self, tree, begins, ends, histograms, feature_mask, node_bounds=None):
        if self.sparse_data is None:
            histograms = self.bundle_map.expand_histograms(
                self.backend.xp, histograms, self.expansion, self.scan_bins
            )
        return super().find_best_splits(tree, begins, ends, histograms, feature_mask, node_bounds)

    @property
    def _scan_data(self):
        """The expanded histograms' width and missing bin (``scan_bins``)."""
        return self.scan_data

    def partition(
        self, tree, begins, ends, features, bins, default_left, then_build=None, left_counts=None
    ):
        """Split the segments on the bins of the split features, decoded from the bundles
        (``then_build``, ``left_counts``: as :meth:`HistogramSplitter.partition`'s)."""
        features = np.asarray(features, dtype=np.int64)
        used, position = np.unique(features, return_inverse=True)
        self._partition_numeric(
            tree,
            self._decoded(used),
            begins,
            ends,
            position.astype(np.int64).reshape(-1),
            np.asarray(bins, dtype=np.int64),
            np.asarray(default_left, dtype=bool),
            then_build,
            left_counts,
        )

    def predict_training_rows(self, tree):
        """Leaf value of every training row, on the bins of the tree's features decoded
        from the bundles (the tree's features renumbered into them)."""
        internal = tree.feature >= 0
        used, position = np.unique(tree.feature[internal], return_inverse=True)
        arrays = {name: getattr(tree, name) for name in TREE_ARRAYS}
        renumbered = tree.feature.copy()
        renumbered[internal] = position.reshape(-1)
        arrays["feature"] = renumbered
        return self.backend.predict_tree_binned(
            self._decoded(used if len(used) else np.zeros(1, dtype=np.int64)), Tree(arrays)
        )
