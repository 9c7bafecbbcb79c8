"""``tree_method='hist'`` on sparse columns without bundles (compiled CPU backend).

When a Dataset holds a sparse matrix (absent entries 0.0) and the backend builds sparse
histograms, exclusive feature bundles serve no purpose but to hold the bins that the
partition and the training rows' prediction read: the histograms come from every row's
non-default entries either way. This splitter skips the bundle search and the bundled
matrix (n_rows x n_bundles bytes): the cells come straight from the stored entries
(:func:`gpuboost.backends.cpu.histogram.column_cells`), and the partition and the
prediction decode the bins of the few features they need from the entries (the
feature's default bin in every other row)::

    CSC entries --bin--> entry bins (uint8, one per stored entry)
        |                     |
        | non-default, by row | features a split needs: default bin, then the entries'
        v                     v
    cells (CSR by row)    decoded bins (n_rows x n_used), partition and prediction
        |
        v
    sparse histograms (n_features x scan_bins), the split scan

The model is the bundled splitter's and the plain splitter's, bit for bit (bundles
without conflicts lose nothing): only time and memory differ. Used with
``max_conflict_rate = 0`` (conflicting bundles change the trees) and without
categorical features.
"""

import numpy as np

from ...backends.base import DeviceData
from ...backends.cpu.histogram import column_cells
from ...data.bundling import default_bins, scan_width
from .bundled import BundledHistogramSplitter, sparse_histograms_pay
from .hist import HistogramSplitter

__all__ = ["SparseColumnsSplitter"]


class SparseColumnsSplitter(BundledHistogramSplitter):
    """:class:`BundledHistogramSplitter`'s sparse-histogram mode with every feature its
    own column: no bundle map, no bundled matrix (see the module docstring).

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
        One that ``builds_sparse_histograms``.
    data : DeviceData
        ``backend.prepare(dataset)`` (its binned matrix is never read).
    dataset : Dataset
        Holding ``sparse_columns`` with absent entries 0.0.
    """

    #: Key of the cached arrays in ``DeviceData.arrays``.
    CACHE_KEY = "sparse_column_cells"

    @staticmethod
    def takes(backend, dataset, params, categorical):
        """Whether a training on ``dataset`` uses this splitter: sparse input whose
        stored entries fill at most the bundled splitter's share for sparse histograms
        (:func:`~gpuboost.tree.splitters.bundled.sparse_histograms_pay`), on a backend that builds
        sparse histograms, without conflicts or categories."""
        columns = getattr(dataset, "sparse_columns", None)
        return bool(
            backend.builds_sparse_histograms
            and columns is not None
            and dataset.sparse_absent == "zero"
            and params.get("max_conflict_rate", 0.0) == 0.0
            and not categorical
            and sparse_histograms_pay(columns.nnz, columns.shape[0] * columns.shape[1])
        )

    def __init__(self, backend, data, dataset):
        HistogramSplitter.__init__(self, backend, data, dataset.bin_mapper.thresholds_for_bins)
        self.partition_data = None  # the partition decodes the bins it needs
        self.bundle_map = None
        self.bundled_data = None
        self.expansion = None
        mapper = dataset.bin_mapper
        columns = dataset.sparse_columns
        self._scan_width(scan_width(np.asarray(mapper.n_value_bins_), mapper.missing_bin))
        cached = data.arrays.get(self.CACHE_KEY)
        if cached is None or cached[0] is not columns or cached[1].n_bins != self.scan_bins:
            defaults = default_bins(mapper).astype(np.int64)
            indptr, cells, entry_bins = column_cells(
                columns, mapper.bin_edges_, defaults, mapper.missing_bin, self.scan_bins
            )
            sparse_data = DeviceData(
                data.n_rows,
                data.n_features,
                self.scan_bins,
                self.scan_bins - 1,
                data.n_value_bins,
                None,
                None,
                {
                    "sparse_indptr": indptr,
                    "sparse_cells": cells,
                    "sparse_default_bins": defaults,
                },
            )
            cached = (columns, sparse_data, entry_bins)
            data.arrays[self.CACHE_KEY] = cached
        _, self.sparse_data, self.entry_bins = cached
        self.columns = columns

    def _decoded(self, features):
        """A DeviceData holding the bins of ``features`` only (column ``i``: feature
        ``features[i]``): the default bin, then the bins of its stored entries."""
        data, columns = self.data, self.columns
        defaults = self.sparse_data.arrays["sparse_default_bins"]
        decoded = np.empty((data.n_rows, len(features)), dtype=np.uint8)
        for column, feature in enumerate(int(f) for f in features):
            start, stop = columns.indptr[feature], columns.indptr[feature + 1]
            decoded[:, column] = defaults[feature]
            decoded[columns.indices[start:stop], column] = self.entry_bins[start:stop]
        return self._decoded_data(decoded, features)
