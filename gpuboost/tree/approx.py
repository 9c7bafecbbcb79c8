"""``tree_method='approx'``: bin edges re-sketched for every tree from
hessian-weighted quantiles (XGBoost's approximate method).

With ``tree_method='hist'`` the bins are fixed once per Dataset
(gpuboost.data.binning). With ``'approx'`` every tree (every round and output
column) gets new edges, computed from the raw training features of the tree's
sampled rows, each row weighted by its *quantized* hessian (after the
row-sampling multipliers, see gpuboost.tree.sampling); the training features are
re-binned with those edges (``backend.rebin``) and the tree is grown on them, its
raw thresholds taken from the same edges. Predictions use raw thresholds, so a
model mixes trees of different edges freely.

The edges of one feature (the definition; :func:`weighted_edges_naive` spells it
out with loops)
-----------------------------------------------------------------------------
Take the feature's non-missing values over the tree's sampled rows, ``±inf``
clipped to ``±FLOAT64_MAX`` (as gpuboost.data.binning), and the rows' weights
``w = max(quantized_hessian, 0) >> shift`` (int64; ``shift`` is 0 unless the
weight total times ``max_bin`` could overflow int64, see :func:`weight_shift`).
If all weights are 0, every row weighs 1.

* With at most ``max_bin`` distinct values ``d_0 < d_1 < ...``: the midpoints of
  consecutive distinct values (exactly gpuboost.data.binning's rule, so on such data
  'approx' and 'hist' build the same bins and grow the same trees).
* Otherwise, the hessian-weighted version of NumPy's ``averaged_inverted_cdf``
  percentiles that gpuboost.data.binning uses: let ``W_j`` be the total weight of the
  values ``<= d_j`` and ``W`` the total. For ``i = 1 .. max_bin - 1``, let ``j``
  be the smallest index with ``W_j * max_bin >= i * W`` (an exact int64
  comparison). The edge is the average of ``d_j`` and ``d_{j+1}`` when
  ``W_j * max_bin == i * W`` and ``j`` is not the last index (the quantile falls
  exactly between two values), else ``d_j``. The average is NumPy's
  ``b - (b - a) * 0.5`` (with gpuboost.data.binning's overflow-safe midpoint where
  that overflows), as in gpuboost.data.binning. Duplicates are removed. With unit
  weights this is the averaged inverted CDF. Then every value holding at least
  ``1 / max_bin`` of the weight (``w_j * max_bin >= W``, exact) gets a bin of its own,
  as in gpuboost.data.binning (:func:`gpuboost.core.bin_edges.heavy_runs` and
  :func:`~gpuboost.core.bin_edges.with_heavy_values`, the one rule of both): a value
  many rows share is a split candidate on either side.

Only distinct values and cumulative weights *at the end of each run of equal
values* enter the definition, so it does not depend on how a sort orders equal
values; cumulative sums of integers are exact. Hence NumPy and CuPy give the
same edges. Per tree and feature, a sort of the sampled rows runs on the
device, and at most ``2 * max_bin`` values plus two scalars come to the host.
"""

import numpy as np

from ..core.array import to_numpy
from ..core.bin_edges import FLOAT64_MAX, heavy_runs, midpoints, with_heavy_values
from ..core.dtypes import GRAD_QUANT_MAX, SAMPLE_INDEX_DTYPE, X_DTYPE
from ..data.binning import BinMapper

__all__ = [
    "weighted_edges",
    "sorted_weighted_edges",
    "weighted_edges_naive",
    "weight_shift",
    "sketch_bin_mapper",
    "ApproxRebinner",
]

#: int64 products must stay below ``2**INT64_SAFE_BITS``.
INT64_SAFE_BITS = 62


def weight_shift(n_rows, max_bin):
    """Right shift applied to the quantized hessians so that ``total * max_bin`` and
    ``i * total`` (``i < max_bin``) fit in int64: 0 up to about 2**24 rows."""
    largest = int(n_rows) * GRAD_QUANT_MAX * int(max_bin)
    return max(0, largest.bit_length() - INT64_SAFE_BITS)


def _average(lower, upper):
    """NumPy's averaged_inverted_cdf average ``upper - (upper - lower) * 0.5`` of
    ``lower <= upper`` (host arrays), the overflow-safe midpoint where it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        averages = upper - (upper - lower) * 0.5
    overflowed = ~np.isfinite(averages)
    averages[overflowed] = midpoints(lower[overflowed], upper[overflowed])
    return averages


def weighted_edges(xp, values, weights, max_bin):
    """Hessian-weighted bin edges of one feature (see the module docstring).

    Parameters
    ----------
    xp : module
        numpy or cupy.
    values : array of shape (n,), float64
        The feature's raw values over the tree's rows (NaN = missing).
    weights : array of shape (n,), int64
        Non-negative integer weights (already shifted).
    max_bin : int

    Returns
    -------
    edges : ndarray of shape (n_edges,), float64 (host)
        Finite, strictly increasing, at most ``max_bin - 1``.
    """
    present = xp.flatnonzero(~xp.isnan(values))
    values = _clipped(xp, values[present])
    order = xp.argsort(values, kind="stable")
    return sorted_weighted_edges(xp, values[order], weights[present][order], max_bin)


def _clipped(xp, values):
    """``values`` clipped to the finite range; +0.0 makes -0.0 and +0.0 one key for a
    radix sort, as for a comparison sort."""
    return xp.clip(values, -FLOAT64_MAX, FLOAT64_MAX) + 0.0


def sorted_weighted_edges(xp, sorted_values, sorted_weights, max_bin):
    """:func:`weighted_edges` of values already sorted ascending (finite, no NaN;
    equal values in any order), with their weights in the same order."""
    n_values = int(sorted_values.shape[0])
    if n_values == 0:
        return np.zeros(0, dtype=X_DTYPE)
    run_ends = xp.flatnonzero(
        xp.concatenate([sorted_values[1:] != sorted_values[:-1], xp.ones(1, dtype=bool)])
    )
    distinct = sorted_values[run_ends]
    n_distinct = int(distinct.shape[0])
    if n_distinct <= max_bin:
        distinct = to_numpy(distinct)
        return midpoints(distinct[:-1], distinct[1:]).astype(X_DTYPE, copy=False)
    cumulative = xp.cumsum(sorted_weights)[run_ends]
    total = int(cumulative[-1])
    if total == 0:  # no weight at all: every row weighs 1
        cumulative = (run_ends + 1).astype(xp.int64)
        total = n_values
    scaled = cumulative * max_bin
    targets = xp.arange(1, max_bin, dtype=xp.int64) * total
    positions = xp.searchsorted(scaled, targets, side="left")
    between = (scaled[positions] == targets) & (positions < n_distinct - 1)
    lower = to_numpy(distinct[positions])
    upper = to_numpy(distinct[xp.minimum(positions + 1, n_distinct - 1)])
    between = to_numpy(between)
    edges = np.unique(np.where(between, _average(lower, upper), lower)).astype(X_DTYPE)
    heavy = heavy_runs(xp, cumulative, total, max_bin, candidates=positions)
    return with_heavy_values(xp, edges, distinct, heavy, n_distinct - 1, max_bin)


def weighted_edges_naive(values, weights, max_bin):
    """Reference for :func:`weighted_edges`: Python loops over host values."""
    pairs = [
        (min(max(float(v), -FLOAT64_MAX), FLOAT64_MAX), int(w))
        for v, w in zip(values, weights)
        if v == v
    ]
    if not pairs:
        return np.zeros(0, dtype=X_DTYPE)
    distinct = sorted(set(value for value, _ in pairs))
    if len(distinct) <= max_bin:
        return midpoints(np.array(distinct[:-1]), np.array(distinct[1:]))
    weight_of = dict.fromkeys(distinct, 0)
    for value, weight in pairs:
        weight_of[value] += weight
    if sum(weight_of.values()) == 0:
        weight_of = dict.fromkeys(distinct, 0)
        for value, _ in pairs:
            weight_of[value] += 1
    cumulative, running = [], 0
    for value in distinct:
        running += weight_of[value]
        cumulative.append(running)
    total = cumulative[-1]
    edges = []
    for i in range(1, max_bin):
        j = next(k for k, c in enumerate(cumulative) if c * max_bin >= i * total)
        if cumulative[j] * max_bin == i * total and j < len(distinct) - 1:
            edges.append(_average(np.array([distinct[j]]), np.array([distinct[j + 1]]))[0])
        else:
            edges.append(distinct[j])
    edges = np.unique(np.array(edges, dtype=X_DTYPE))
    own = set(edges)  # each heavy value: edges just below it and at it
    for j, value in enumerate(distinct):
        if weight_of[value] * max_bin >= total:
            if j > 0:
                own.add(midpoints(np.array([distinct[j - 1]]), np.array([value]))[0])
            if j < len(distinct) - 1:
                own.add(value)
    return np.array(sorted(own), dtype=X_DTYPE) if len(own) <= max_bin - 1 else edges


def sketch_bin_mapper(xp, raw_features, quantized_hessians, sample_indices, max_bin):
    """A fitted BinMapper with the hessian-weighted edges of every feature.

    The direct computation (one sort per feature and call); the training loop
    uses :class:`ApproxRebinner`, which sorts once and gives the same edges.

    Parameters
    ----------
    xp : module
    raw_features : array of shape (n_rows, n_features), float64
        The training features on the backend (``backend.prepare_features``).
    quantized_hessians : array of shape (n_rows,), int32
        This tree's quantized hessians.
    sample_indices : array of shape (n_samples,), int32
        This tree's rows.
    max_bin : int

    Returns
    -------
    BinMapper
        ``bin_edges_`` set (``subsample`` and ``seed`` are not used).
    """
    n_features = raw_features.shape[1]
    shift = weight_shift(raw_features.shape[0], max_bin)
    weights = xp.maximum(quantized_hessians[sample_indices].astype(xp.int64), 0) >> shift
    edges = [
        weighted_edges(xp, raw_features[sample_indices, feature], weights, max_bin)
        for feature in range(n_features)
    ]
    mapper = BinMapper(max_bin=max_bin)
    mapper._set_edges(edges)
    return mapper


class ApproxRebinner:
    """Per-tree re-binning of the training data for ``tree_method='approx'``.

    The order of every feature's values does not change between trees, only the
    weights and the sampled rows do. The rows are therefore sorted by each
    feature once (row ids of the non-missing values, ascending by value: int32,
    4 bytes per feature and row on the backend); each tree only filters them to
    its sample and gathers values and weights in that order. The edges are those
    of :func:`sketch_bin_mapper` (equal values may come in another order, which
    the definition ignores).

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    dataset : gpuboost.Dataset
        The training data; its raw features are copied to the backend once.
    max_bin : int
    """

    def __init__(self, backend, dataset, max_bin):
        xp = backend.xp
        self.backend = backend
        self.max_bin = max_bin
        self.raw_features = backend.prepare_features(dataset.data)
        self.n_rows = int(self.raw_features.shape[0])
        self.sorted_rows = []
        for feature in range(self.raw_features.shape[1]):
            column = self.raw_features[:, feature]
            present = xp.flatnonzero(~xp.isnan(column))
            order = xp.argsort(_clipped(xp, column[present]), kind="stable")
            self.sorted_rows.append(present[order].astype(SAMPLE_INDEX_DTYPE))

    def sketch(self, quantized_hessians, sample_indices):
        """A fitted BinMapper with this tree's edges (those of :func:`sketch_bin_mapper`)."""
        xp = self.backend.xp
        shift = weight_shift(self.n_rows, self.max_bin)
        weights = xp.maximum(quantized_hessians.astype(xp.int64), 0) >> shift
        in_sample = None
        if int(sample_indices.shape[0]) < self.n_rows:
            in_sample = xp.zeros(self.n_rows, dtype=bool)
            in_sample[sample_indices] = True
        edges = []
        for feature, rows in enumerate(self.sorted_rows):
            if in_sample is not None:
                rows = rows[in_sample[rows]]
            values = _clipped(xp, self.raw_features[rows, feature])
            edges.append(sorted_weighted_edges(xp, values, weights[rows], self.max_bin))
        mapper = BinMapper(max_bin=self.max_bin)
        mapper._set_edges(edges)
        return mapper

    def rebin(self, data, quantized_hessians, sample_indices):
        """The data re-binned with this tree's edges, and the threshold lookup.

        Returns
        -------
        tree_data : DeviceData
        thresholds : callable (features, bins) -> ndarray of float64
        """
        mapper = self.sketch(quantized_hessians, sample_indices)
        return self.backend.rebin(data, self.raw_features, mapper), mapper.thresholds_for_bins
