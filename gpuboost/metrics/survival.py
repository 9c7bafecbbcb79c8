"""Survival metrics: ``cox-nloglik`` (XGBoost's) and ``c-index`` (Harrell's concordance)
for ``survival:cox``; ``aft-nloglik`` and ``interval-regression-accuracy`` (XGBoost's)
for ``survival:aft``.

Cox: labels are survival times, negative for censored rows (``survival:cox``'s
convention); predictions are hazard ratios ``exp(F)`` (a higher one: an earlier expected
event). Both run on the host (sorting by time); weights are ignored, as XGBoost's
``cox-nloglik`` ignores them.

AFT: labels are intervals, shape (n_samples, 2) (a Dataset's ``label_lower_bound`` /
``label_upper_bound``), and ``pred`` holds margins (log survival times), as XGBoost's
AFT metrics take them; weighted means.
"""

import numpy as np

from ..core import strict_math
from ..core.aft import aft_loss, aft_sigma
from ..core.array import to_numpy
from ..core.dtypes import Y_DTYPE
from ..core.reproducible_sum import reproducible_mean
from ..core.risk_sets import breslow_denominators, time_order
from .base import Metric, _as_sample_weight, _as_single_output_predictions

__all__ = ["CoxNegLogLik", "ConcordanceIndex", "AFTNegLogLik", "IntervalRegressionAccuracy"]


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


def _host_intervals(xp, y, margins, weight):
    n_samples = y.shape[0]
    margins = _as_single_output_predictions(xp, margins, n_samples)
    weight = _as_sample_weight(xp, weight, n_samples)
    host = (np.asarray(to_numpy(v), dtype=Y_DTYPE) for v in (y, margins))
    return (*host, None if weight is None else np.asarray(to_numpy(weight), dtype=Y_DTYPE))


class AFTNegLogLik(Metric):
    """``aft-nloglik``: XGBoost's negative log-likelihood of the accelerated failure time
    model, the weighted mean of :func:`gpuboost.core.aft.aft_loss` over the rows.

    Parameters
    ----------
    aft_loss_distribution : {'normal', 'logistic', 'extreme'}, default='normal'
    aft_loss_distribution_scale : float, default=1.0
        In a training both come from its parameters (:meth:`for_training`), as
        XGBoost's metric reads the objective's.
    """

    name = "aft-nloglik"
    takes_label_bounds = True
    takes_margins = True

    def __init__(self, aft_loss_distribution="normal", aft_loss_distribution_scale=1.0):
        self.distribution = aft_loss_distribution
        self.sigma = aft_sigma(aft_loss_distribution_scale)

    def for_training(self, params):
        return type(self)(
            params.get("aft_loss_distribution", "normal"),
            params.get("aft_loss_distribution_scale", 1.0),
        )

    def _evaluate(self, xp, y, pred, weight, group):
        bounds, margins, weight = _host_intervals(xp, y, pred, weight)
        loss = aft_loss(bounds, margins, self.distribution, self.sigma)
        return reproducible_mean(np, loss, weight)


class IntervalRegressionAccuracy(Metric):
    """``interval-regression-accuracy``: XGBoost's weighted share of the rows whose
    predicted survival time ``exp(margin)`` lies in their label interval (bounds
    included). Higher is better."""

    name = "interval-regression-accuracy"
    higher_is_better = True
    takes_label_bounds = True
    takes_margins = True

    def _evaluate(self, xp, y, pred, weight, group):
        bounds, margins, weight = _host_intervals(xp, y, pred, weight)
        time = strict_math.exp(np, margins)
        inside = ((time >= bounds[:, 0]) & (time <= bounds[:, 1])).astype(Y_DTYPE)
        return reproducible_mean(np, inside, weight)
