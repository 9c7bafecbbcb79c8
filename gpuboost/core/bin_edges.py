"""The bin edges of one feature: the one definition the host and the device compute.

:class:`gpuboost.data.binning.BinMapper` fits the edges of host features through
:func:`sorted_bin_edges` and :func:`weighted_bin_edges` with NumPy;
:func:`gpuboost.backends.cuda.binning.device_bin_edges` calls the same functions with
the device's array module on features that live on a GPU. Every float operation of the
definition runs here on the host, on a few gathered values (or on cumulative weights
summed in the definition's order), so both give the same bits (docs/DESIGN.md,
"Binning").
"""

import numpy as np

from .array import to_numpy
from .dtypes import X_DTYPE

__all__ = [
    "FLOAT64_MAX",
    "canonical_values",
    "percentile_quantiles",
    "sorted_bin_edges",
    "weighted_bin_edges",
    "run_starts",
    "distinct_midpoints",
    "midpoints",
    "flat_edges",
    "with_heavy_values",
    "heavy_runs",
]

#: Largest finite float64; infinite feature values are clipped to +/- this
#: before bin edges are computed, so that every edge is finite.
FLOAT64_MAX = float(np.finfo(X_DTYPE).max)


def midpoints(lower, upper):
    """Midpoints of ``lower[i] < upper[i]``, each ``m`` with ``lower <= m < upper``.

    ``lower * 0.5 + upper * 0.5`` cannot overflow. When the two values are
    adjacent floats the rounded midpoint may equal ``upper``; then ``lower``
    is used, which still separates the two.

    Parameters
    ----------
    lower, upper : ndarray of shape (n,), float64
        Finite values with ``lower <= upper``.

    Returns
    -------
    midpoints : ndarray of shape (n,), float64
    """
    midpoints = lower * 0.5 + upper * 0.5
    inside = (midpoints >= lower) & (midpoints < upper)
    return np.where(inside, midpoints, lower)


def canonical_values(xp, values):
    """``values`` clipped to ``±FLOAT64_MAX`` (see the module docstring), and ``+ 0.0``
    so that ``-0.0`` becomes ``+0.0``: equal values then have equal bits, and no sort
    (NumPy's, or a device's radix sort) can choose which sign of zero an edge takes."""
    return xp.clip(values, -FLOAT64_MAX, FLOAT64_MAX) + 0.0


def percentile_quantiles(max_bin):
    """The quantiles of the edges, ``(100 * i / max_bin) / 100`` for ``i = 1 ..
    max_bin - 1`` (float64, host): the percentiles divided by 100 as ``np.percentile``
    divides them."""
    return np.true_divide(100.0 * np.arange(1, max_bin) / max_bin, 100)


def sorted_bin_edges(xp, sorted_values, max_bin):
    """Upper edges of the value bins of one feature from its values sorted ascending
    (unit weights): the one definition the host (:func:`_find_bin_edges`) and the device
    (:func:`gpuboost.backends.cuda.binning.device_bin_edges`) compute.

    With at most ``max_bin`` distinct values, the midpoints of consecutive ones
    (:func:`midpoints`). Otherwise ``np.percentile(values, 100 * i / max_bin,
    method="averaged_inverted_cdf")`` for ``i = 1 .. max_bin - 1``, spelled out: with
    ``n`` values and quantile ``q`` (:func:`percentile_quantiles`), ``v = n * q - 1``; the
    value at ``floor(v) + 1`` when ``v`` is not a whole number, ``b - (b - a) * 0.5`` of
    the values ``a, b`` at ``v, v + 1`` when it is, the first value below 0 and the last
    from ``n - 1``; where that overflows (data spanning more than the float64 range),
    the :func:`midpoints` of the values at ``floor((n - 1) * q)`` and ``ceil((n - 1) *
    q)`` (numpy's "lower" and "higher"). Duplicate edges are removed, and every value
    held by at least ``n / max_bin`` rows gets a bin of its own (:func:`with_heavy_values`).

    Every float operation is a host NumPy operation on at most ``4 * max_bin`` gathered
    values, so NumPy and device arrays give the same bits.

    Parameters
    ----------
    xp : module
        numpy, or the device's array module.
    sorted_values : array of shape (n,), float64
        The non-missing values (:func:`canonical_values`), sorted ascending.
    max_bin : int

    Returns
    -------
    edges : ndarray of shape (n_value_bins - 1,), float64 (host)
        Finite, strictly increasing, at most ``max_bin - 1`` of them.
    """
    n = int(sorted_values.shape[0])
    if n == 0:
        return np.zeros(0, dtype=X_DTYPE)
    starts = run_starts(xp, sorted_values)
    if int(starts.shape[0]) <= max_bin:  # one bin per distinct value
        return distinct_midpoints(sorted_values[starts])
    edges = _quantile_edges(xp, sorted_values, n, max_bin)
    # Runs of at least n / max_bin rows, i.e. of at least k: only where some value
    # equals the one k - 1 places on (one comparison pass; run lengths only then).
    k = -(-n // max_bin)
    if not bool(xp.any(sorted_values[k - 1 :] == sorted_values[: n - k + 1])):
        return edges
    lengths = xp.diff(xp.concatenate([starts, xp.asarray([n], dtype=starts.dtype)]))
    heavy_starts = starts[xp.flatnonzero(lengths >= k)]
    return with_heavy_values(xp, edges, sorted_values, heavy_starts, int(starts[-1]), max_bin)


def _quantile_edges(xp, sorted_values, n, max_bin):
    """:func:`sorted_bin_edges`' quantile edges (before :func:`with_heavy_values`)."""
    quantiles = percentile_quantiles(max_bin)
    virtual = n * quantiles - 1
    previous = np.floor(virtual)
    above, below = virtual >= n - 1, virtual < 0
    previous[above], previous[below] = -1, 0
    t = np.where(virtual - previous == 0, 0.5, 1.0)
    at = np.where(above, n - 1, previous).astype(np.int64)
    after = np.where(above, n - 1, np.where(below, 0, previous + 1)).astype(np.int64)
    lower, upper = _gathered(xp, sorted_values, at, after)
    with np.errstate(over="ignore", invalid="ignore"):
        edges = upper - (upper - lower) * (1 - t)
    overflowed = ~np.isfinite(edges)
    if overflowed.any():
        positions = (n - 1) * quantiles[overflowed]
        low, high = _gathered(
            xp,
            sorted_values,
            np.floor(positions).astype(np.int64),
            np.ceil(positions).astype(np.int64),
        )
        edges[overflowed] = midpoints(low, high)
    return np.unique(edges).astype(X_DTYPE, copy=False)


def weighted_bin_edges(xp, distinct, run_totals, max_bin):
    """Upper edges of the value bins of one feature from its weighted values (the one
    definition of the host and the device): the weighted order statistics of
    :func:`sorted_bin_edges` (integer weights give the edges of rows repeated that many
    times). At ``g = W * q`` (``W`` the total weight), ``lower`` and ``upper`` are the
    distinct values at ``searchsorted(run_totals, g)`` left and right (the last at most),
    the edge ``lower`` when they are equal, else ``upper - (upper - lower) * 0.5``; where
    that overflows, their :func:`midpoints`. Duplicates are removed; every value holding at
    least ``W / max_bin`` of the weight gets a bin of its own (:func:`with_heavy_values`).

    Parameters
    ----------
    xp : module
    distinct : array of shape (n_distinct,), float64
        The distinct non-missing values (:func:`canonical_values`), ascending; more than
        ``max_bin`` of them (fewer take :func:`distinct_midpoints`).
    run_totals : array of shape (n_distinct,), float64
        The cumulative weight through each distinct value, as the definition sums it:
        each value's weights added in row order, these sums then added in value order,
        one after another (``np.cumsum(np.bincount(inverse, weights))``).
    max_bin : int

    Returns
    -------
    edges : ndarray, float64 (host)
    """
    quantiles = percentile_quantiles(max_bin)
    total = float(to_numpy(run_totals[-1:])[0])
    targets = xp.asarray(total * quantiles)
    last = int(distinct.shape[0]) - 1
    left = xp.minimum(xp.searchsorted(run_totals, targets, side="left"), last)
    right = xp.minimum(xp.searchsorted(run_totals, targets, side="right"), last)
    lower, upper = _gathered(xp, distinct, left, right)
    with np.errstate(over="ignore", invalid="ignore"):
        edges = np.where(lower == upper, lower, upper - (upper - lower) * 0.5)
    overflowed = ~np.isfinite(edges)
    edges[overflowed] = midpoints(lower[overflowed], upper[overflowed])
    edges = np.unique(edges).astype(X_DTYPE, copy=False)
    heavy = heavy_runs(xp, run_totals, total, max_bin)
    return with_heavy_values(xp, edges, distinct, heavy, int(distinct.shape[0]) - 1, max_bin)


def heavy_runs(xp, run_totals, total, max_bin, candidates=None):
    """Indices of the distinct values holding at least ``total / max_bin`` of the weight
    (``weight * max_bin >= total``; exact for integer weights), from the cumulative weight
    through each distinct value: the heavy values of :func:`with_heavy_values`.

    ``candidates`` (ascending indices), if given, are the only values looked at, with the
    last one: integer weights whose quantile positions they are (the first ``j`` with
    ``run_totals[j] * max_bin >= i * total``, ``i = 1 .. max_bin - 1``) hold every heavy
    value, since a run of at least ``total / max_bin`` spans some ``i * total / max_bin``
    or ends the values. Then only ``max_bin`` weights are formed, not one per distinct
    value (approx's per-tree edges). The result may repeat an index.
    """
    if candidates is None:
        weights = xp.diff(xp.concatenate([xp.zeros(1, dtype=run_totals.dtype), run_totals]))
        return xp.flatnonzero(weights * max_bin >= total)
    last = xp.asarray([int(run_totals.shape[0]) - 1], dtype=candidates.dtype)
    candidates = xp.concatenate([candidates, last])
    before = run_totals[xp.maximum(candidates, 1) - 1] * (candidates > 0)
    return candidates[(run_totals[candidates] - before) * max_bin >= total]


def with_heavy_values(xp, edges, values, heavy_starts, last_start, max_bin):
    """The quantile ``edges`` plus a bin of its own for every *heavy* value (one that
    holds at least ``1 / max_bin`` of the rows, or of the weight): an edge at the
    :func:`midpoints` of the distinct value before it and itself (none for the smallest)
    and one at the value itself (none for the largest), as LightGBM gives its frequent
    values bins of their own. A value many rows share (a round number: 1.00 carat, a
    price of 100) then is a split candidate on either side, where a quantile edge put
    it with its lower neighbours only. When the edges would then exceed
    ``max_bin - 1``, the quantile edges alone.

    Parameters
    ----------
    xp : module
    edges : ndarray, float64 (host)
        The quantile edges, strictly increasing.
    values : array, float64
        The sorted values, or the distinct values.
    heavy_starts : array of int
        Where each heavy value's run starts in ``values``, ascending (at most
        ``max_bin`` of them: the only positions copied to the host).
    last_start : int
        Where the largest value's run starts.
    max_bin : int

    Returns
    -------
    edges : ndarray, float64 (host)
    """
    if int(heavy_starts.shape[0]) == 0:
        return edges
    heavy_starts = to_numpy(heavy_starts)
    below, at = heavy_starts[heavy_starts > 0], heavy_starts[heavy_starts < last_start]
    lower, upper, own = _gathered(xp, values, below - 1, below, at)
    every = np.unique(np.concatenate([edges, midpoints(lower, upper), own]))
    return every.astype(X_DTYPE, copy=False) if len(every) <= max_bin - 1 else edges


def run_starts(xp, sorted_values):
    """Positions where a run of equal values starts in ``sorted_values`` (n > 0)."""
    changes = sorted_values[1:] != sorted_values[:-1]
    return xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), changes]))


def distinct_midpoints(distinct):
    """The edges of at most ``max_bin`` distinct values (ascending, host or device): the
    midpoints of consecutive ones."""
    distinct = to_numpy(distinct)
    return midpoints(distinct[:-1], distinct[1:])


def _gathered(xp, values, *positions):
    """``values`` at each array of positions (host int64 arrays or ``xp`` arrays), copied
    to the host in one transfer."""
    sizes = [len(position) for position in positions]
    index = xp.concatenate([xp.asarray(position) for position in positions])
    host = to_numpy(values[index])
    return np.split(host, np.cumsum(sizes)[:-1])


def flat_edges(bin_edges):
    """A BinMapper's ``bin_edges_`` as one float64 array and its feature offsets
    (feature ``f``'s edges: ``edges[starts[f]:starts[f + 1]]``), for kernels that bin
    the stored entries of sparse columns."""
    starts = np.zeros(len(bin_edges) + 1, dtype=np.int64)
    np.cumsum([len(edges) for edges in bin_edges], out=starts[1:])
    if not len(bin_edges):
        return np.zeros(0, dtype=np.float64), starts
    return np.concatenate(bin_edges).astype(np.float64, copy=False), starts
