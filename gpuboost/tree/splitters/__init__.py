"""Split-finding strategies of the tree grower (interface: :mod:`.base`).

:func:`make_splitter` picks the strategy of a training run from its parameters.
"""

from ...core.categorical import CategoricalParams
from .base import SplitTable, Splitter, TreeInput, children_by_subtraction
from .bundled import BundledHistogramSplitter
from .exact import ExactSplitter
from .gini import ExactGiniSplitter, GiniSplitter
from .hist import GradientRecords, HistogramSplitter, split_table
from .multi_output import MultiOutputSplitter
from .sparse import SparseColumnsSplitter

__all__ = [
    "Splitter",
    "TreeInput",
    "SplitTable",
    "children_by_subtraction",
    "HistogramSplitter",
    "BundledHistogramSplitter",
    "SparseColumnsSplitter",
    "ExactSplitter",
    "GiniSplitter",
    "ExactGiniSplitter",
    "GradientRecords",
    "MultiOutputSplitter",
    "split_table",
    "make_splitter",
    "HISTOGRAM_METHODS_WITH_BUNDLING",
]

#: ``tree_method`` values whose bins are the Dataset's own, so that exclusive
#: feature bundles found on them hold for every tree ('approx' re-bins per tree).
HISTOGRAM_METHODS_WITH_BUNDLING = ("hist", "auto")


def make_splitter(params, backend, data, dataset):
    """The splitter of a gradient-boosting training run, or None for one per tree.

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
    Splitter or None
        ``tree_method='exact'``: an :class:`ExactSplitter`. ``tree_method='hist'`` with
        ``enable_bundle`` on sparse input that the backend builds sparse histograms of
        (:meth:`SparseColumnsSplitter.takes`): a :class:`SparseColumnsSplitter`; else,
        when the bundles are fewer than the features that need a histogram column: a
        :class:`BundledHistogramSplitter`. ``tree_method='approx'``:
        None, as its bins (hence its :class:`HistogramSplitter`) change every tree.
        Otherwise a :class:`HistogramSplitter` on ``data``.
    """
    method = params.get("tree_method", "hist")
    categorical = getattr(dataset, "categories", None) is not None
    if categorical and method in ("exact", "approx"):
        raise ValueError(
            f"tree_method={method!r} does not support categorical features; use "
            f"tree_method='hist' (the default), or encode the categories as numbers "
            f"(Dataset(..., categorical_features=None))."
        )
    if method == "exact":
        return ExactSplitter(backend, dataset)
    if method == "approx":
        return None
    splitter = None
    # Device input is not bundled: its columns stay on the device, and bundles that lose
    # no split (max_conflict_rate 0) change no tree.
    bundles = params.get("enable_bundle", False) and (
        getattr(dataset, "device_features", None) is None
        or params.get("max_conflict_rate", 0.0) > 0.0
    )
    if method in HISTOGRAM_METHODS_WITH_BUNDLING and bundles:
        if SparseColumnsSplitter.takes(backend, dataset, params, categorical):
            splitter = SparseColumnsSplitter(backend, data, dataset)
        else:
            bundle_map = dataset.bundle_map(params.get("max_conflict_rate", 0.0))
            if bundle_map.reduces_columns:
                splitter = BundledHistogramSplitter(
                    backend, data, bundle_map, dataset.bin_mapper.thresholds_for_bins, dataset
                )
    if splitter is None:
        splitter = HistogramSplitter(backend, data, dataset.bin_mapper.thresholds_for_bins)
    if categorical:
        splitter.set_categorical(
            dataset.categories,
            dataset.bin_mapper.n_value_bins_,
            CategoricalParams.from_params(params),
        )
    return splitter
