"""Survival metrics: ``cox-nloglik`` (XGBoost's) and ``c-index`` (Harrell's concordance).

Labels are survival times, negative for censored rows (``survival:cox``'s convention);
predictions are hazard ratios ``exp(F)`` (a higher one: an earlier expected event).
Both run on the host (sorting by time); weights are ignored, as XGBoost's
``cox-nloglik`` ignores them.
"""

import numpy as np

from ..core import strict_math
from ..core.array import to_numpy
from ..core.dtypes import Y_DTYPE
from ..core.risk_sets import breslow_denominators, time_order
from .base import Metric, _as_single_output_predictions

__all__ = ["CoxNegLogLik", "ConcordanceIndex"]


def _host(xp, y, pred):
    n_samples = y.shape[0]
    pred = _as_single_output_predictions(xp, pred, n_samples)
    return np.asarray(to_numpy(y), dtype=Y_DTYPE), np.asarray(to_numpy(pred), dtype=Y_DTYPE)


class CoxNegLogLik(Metric):
    """``cox-nloglik``: XGBoost's negative partial log-likelihood per event.

    With the rows in time order (stable) and Breslow's denominators
    (:func:`gpuboost.core.risk_sets.breslow_denominators`, starting from the sum of the
    hazard ratios in row order, as XGBoost's ``EvalCox``): ``-sum over events of
    (log(h_i) - log(D_i))``, subtracted left to right, divided by the number of events
    (NaN without events). Logarithms from :mod:`gpuboost.core.strict_math`.
    """

    name = "cox-nloglik"

    def _evaluate(self, xp, y, pred, weight, group):
        y, hazard = _host(xp, y, pred)
        order, abs_sorted = time_order(y)
        events = y[order] > 0.0
        n_events = int(events.sum())
        if n_events == 0:
            return float("nan")
        total = np.add.accumulate(hazard)[-1]  # XGBoost: in row order
        values = hazard[order]
        denominators = breslow_denominators(total, abs_sorted, values)
        terms = strict_math.log(np, values[events]) - strict_math.log(np, denominators[events])
        out = np.subtract.accumulate(np.concatenate(([0.0], terms)))[-1]
        return out / n_events


class ConcordanceIndex(Metric):
    """``c-index``: Harrell's concordance index of the hazard ratios.

    A pair of rows is comparable when the earlier time is an event and the times differ;
    it is concordant when the earlier row has the higher hazard ratio, and counts one
    half when the hazard ratios are equal. The index is ``(concordant + ties / 2) /
    comparable`` (NaN without a comparable pair), counted exactly with integers (a
    Fenwick tree over the ranks of the hazard ratios, rows added from the latest time).
    Higher is better.
    """

    name = "c-index"
    higher_is_better = True

    def _evaluate(self, xp, y, pred, weight, group):
        y, hazard = _host(xp, y, pred)
        n = y.shape[0]
        order, abs_sorted = time_order(y)
        events = y[order] > 0.0
        ranks = np.unique(hazard, return_inverse=True)[1].reshape(-1)[order] + 1
        size = int(ranks.max(initial=0))
        tree = np.zeros(size + 1, dtype=np.int64)

        def count_below(rank):  # rows added with a rank <= ``rank``
            total = 0
            while rank > 0:
                total += int(tree[rank])
                rank -= rank & -rank
            return total

        concordant = ties = comparable = 0
        end = n
        while end > 0:  # one group of equal times at a time, latest first
            start = end - 1
            while start > 0 and abs_sorted[start - 1] == abs_sorted[end - 1]:
                start -= 1
            later = n - end
            for row in range(start, end):
                if events[row] and later:
                    below = count_below(int(ranks[row]) - 1)
                    equal = count_below(int(ranks[row])) - below
                    concordant += below
                    ties += equal
                    comparable += later
            for row in range(start, end):
                rank = int(ranks[row])
                while rank <= size:
                    tree[rank] += 1
                    rank += rank & -rank
            end = start
        if comparable == 0:
            return float("nan")
        return (2 * concordant + ties) / (2 * comparable)
