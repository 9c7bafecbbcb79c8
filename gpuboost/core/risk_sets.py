"""Breslow's risk sets of survival data, summed as XGBoost sums them (``survival:cox``
and ``cox-nloglik`` share it).

Rows are taken in increasing ``|label|`` (a stable sort: tied times keep their row
order). The risk-set denominator starts at a total and, at every new time, drops by the
sum of the previous time's values, each group's sum taken left to right from 0::

    D_0 = total;  D_g = D_{g-1} - G_{g-1}        (left to right)

which is XGBoost's running ``exp_p_sum -= accumulated_sum``: the same operations in the
same order, hence the same bits on every machine (``numpy.add.accumulate`` and
``numpy.subtract.accumulate`` run left to right).
"""

import numpy as np

__all__ = ["time_order", "breslow_denominators"]


def time_order(labels):
    """The stable order of ``|labels|`` and the sorted ``|labels|`` (ndarrays)."""
    order = np.argsort(np.abs(labels), kind="stable")
    return order, np.abs(labels[order])


def breslow_denominators(total, abs_sorted, values):
    """Per row in time order, the denominator ``D`` of its time.

    Parameters
    ----------
    total : float
        The initial denominator (the sum of every row's value, in the caller's order).
    abs_sorted : ndarray of shape (n,), float64
        ``|label|`` in time order (:func:`time_order`).
    values : ndarray of shape (n,), float64
        The rows' values (``exp(F)``, or hazard ratios) in time order.

    Returns
    -------
    ndarray of shape (n,), float64
    """
    n = abs_sorted.shape[0]
    if n == 0:
        return np.zeros(0)
    starts = np.flatnonzero(np.concatenate(([True], abs_sorted[1:] > abs_sorted[:-1])))
    ends = np.append(starts[1:], n)
    group_sums = values[starts].copy()  # a one-row group's sum: 0 + value, exact
    for group in np.flatnonzero(ends - starts > 1):  # tied times: left to right from 0
        group_sums[group] = np.add.accumulate(values[starts[group] : ends[group]])[-1]
    per_group = np.subtract.accumulate(np.concatenate(([total], group_sums[:-1])))
    return np.repeat(per_group, ends - starts)
