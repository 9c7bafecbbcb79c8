"""``tree_method='hist'`` with exclusive feature bundles (``enable_bundle``).

The bundles themselves (which features share a column, the bundled matrix, the
histogram expansion) are :mod:`gpuboost.data.bundling`'s; this splitter builds
histograms over the bundles and expands them to per-feature histograms before
the backend's split scan (docs/DESIGN.md, "Growth").
"""

from ...backends.base import DeviceData
from .hist import HistogramSplitter

__all__ = ["BundledHistogramSplitter"]


class BundledHistogramSplitter(HistogramSplitter):
    """``tree_method='hist'`` with histograms built over feature bundles.

    Histograms of nodes (and the sibling subtraction) are bundle histograms,
    ``(n_nodes, n_bundles, bundle_map.n_bins, 3)``; they are expanded to per-feature
    histograms just before the backend's split scan. The device arrays (the
    bundled matrix, the expansion's index arrays and, with conflicts, the decoded per-feature
    matrix) are cached in ``data.arrays`` for later trainings on the same Dataset.

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    data : DeviceData
    bundle_map : BundleMap
        Of the Dataset ``data`` was prepared from.
    thresholds : callable (features, bins) -> ndarray of float64
    """

    #: Key of the cached device arrays in ``DeviceData.arrays``.
    CACHE_KEY = "feature_bundles"

    def __init__(self, backend, data, bundle_map, thresholds):
        super().__init__(backend, data, thresholds)
        self.bundle_map = bundle_map
        cached = data.arrays.get(self.CACHE_KEY)
        if cached is None or cached[0] is not bundle_map:
            cached = (bundle_map,) + self._device_arrays(backend, data, bundle_map)
            data.arrays[self.CACHE_KEY] = cached
        # With conflicts, partition and binned prediction read the decoded bins.
        _, self.bundled_data, self.partition_data, self.expansion = cached

    @staticmethod
    def _device_arrays(backend, data, bundle_map):
        xp = backend.xp
        X_bundled = bundle_map.encode(xp, data.arrays["X_binned"])
        bundled_data = DeviceData(
            data.n_rows,
            bundle_map.n_bundles,
            bundle_map.n_bins,
            None,
            None,
            None,
            None,
            backend.binned_layout(X_bundled),
        )
        partition_data = data
        if bundle_map.n_conflicts:
            decoded = bundle_map.decode(xp, X_bundled)
            arrays = {
                key: value
                for key, value in data.arrays.items()
                if key != BundledHistogramSplitter.CACHE_KEY
            }
            arrays.update(backend.binned_layout(decoded))
            partition_data = DeviceData(
                data.n_rows,
                data.n_features,
                data.n_bins,
                data.missing_bin,
                data.n_value_bins,
                data.label,
                data.weight,
                arrays,
            )
        expansion = bundle_map.histogram_expansion(data.n_bins, backend.to_device)
        return bundled_data, partition_data, expansion

    @property
    def _histogram_data(self):
        """Histograms are bundle histograms (n_nodes, n_bundles, bundle_map.n_bins, 3)."""
        return self.bundled_data

    def find_best_splits(self, tree, begins, ends, histograms, feature_mask, node_bounds=None):
        expanded = self.bundle_map.expand_histograms(
            self.backend.xp, histograms, self.expansion, self.data.n_bins
        )
        extra = () if node_bounds is None else (node_bounds,)
        return super().find_best_splits(tree, begins, ends, expanded, feature_mask, *extra)
