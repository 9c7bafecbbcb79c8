"""Survival objectives: ``survival:cox`` (Cox proportional hazards, XGBoost's) and
``survival:aft`` (accelerated failure time, XGBoost's; below ``CoxLoss``).

Labels are survival times; a negative label ``-t`` is a row censored at ``t`` (XGBoost's
convention). The margin ``F`` is the log hazard ratio; ``predict`` returns the hazard
ratio ``exp(F)`` (``output_margin=True``: ``F``).

The gradients are XGBoost's ``CoxRegression::GetGradient``, operation for operation, on
the rows sorted by ``|label|`` (stable: tied times keep their row order)::

    D = sum of exp(F) over all rows (in sorted order)
    for each row i in sorted order:
        when |y_i| is above the previous row's: D -= sum of exp(F) of the previous time's
                                                rows (Breslow's risk set, updated once
                                                per distinct time)
        if y_i > 0 (an event):  r += 1 / D;  s += 1 / (D * D)
        grad_i = exp(F_i) * r - [y_i > 0]
        hess_i = exp(F_i) * r - exp(F_i) * exp(F_i) * s

So a row's gradient includes the events up to and including itself in the sorted order.
Within a group of tied event times this is not the exact derivative of Breslow's partial
likelihood, whose gradient at every row of the group includes all of the group's events
(``sum over events k with t_k <= t_i of exp(F_i) / D_k``): the rows of a tie group
before the last get a smaller ``r`` (and a gradient depending on their row order). It is
kept as XGBoost computes it, so that a model moved from XGBoost trains the same trees
(docs/DESIGN.md, "Survival").

The sums run on the host in a fixed sequence (:mod:`gpuboost.core.risk_sets`), with ``exp`` from
:mod:`gpuboost.core.strict_math`, so every backend gets the same bits; as in XGBoost,
whose Cox gradients are computed on the CPU for every device. Cost: one sort of the
labels per training (kept by the objective) and O(n) per round.
"""

import numpy as np

from ..core import strict_math
from ..core.aft import AFT_DISTRIBUTIONS, aft_gradients, aft_sigma
from ..core.array import to_numpy
from ..core.dtypes import Y_DTYPE
from ..core.risk_sets import breslow_denominators, time_order
from .base import Objective

__all__ = ["CoxLoss", "AFTLoss", "cox_gradients", "AFT_DEFAULT_BASE_SCORE"]

#: survival:aft's base_score without one given: XGBoost's default 0.5 (a survival time;
#: margin log(0.5), which XGBoost 3.2 starts its training from, measured), so that a
#: model moved from XGBoost starts from the same place.
AFT_DEFAULT_BASE_SCORE = 0.5


class CoxLoss(Objective):
    """``survival:cox``: Cox proportional hazards, Breslow's partial likelihood with
    XGBoost's gradients (see the module docstring).

    Labels: nonzero survival times, negative for censored rows. Base margin 0 (the
    partial likelihood does not depend on a constant margin); ``base_score`` is a hazard
    ratio (margin ``log(base_score)``).
    """

    name = "survival:cox"
    default_metric = "cox-nloglik"
    row_local_gradients = False  # each row's sums run over its risk set
    #: ``(labels, order, sorted |labels|)`` of the last call (the labels do not change
    #: within a training: sorted once).
    _time_order = None

    def _check_label_domain(self, y):
        bad = y == 0.0
        if bad.any():
            self._label_error(
                "labels must be nonzero survival times (negative for censored rows)", y, bad
            )

    def _gradients(self, xp, y, raw):
        host_y = np.asarray(to_numpy(y), dtype=Y_DTYPE)
        host_raw = np.asarray(to_numpy(raw), dtype=Y_DTYPE)
        cached = self._time_order
        if cached is None or not np.array_equal(cached[0], host_y):
            cached = self._time_order = (host_y.copy(), *time_order(host_y))
        grad, hess = cox_gradients(host_y, host_raw, cached[1:])
        return xp.asarray(grad), xp.asarray(hess)

    def base_margin(self, y, weight):
        return np.zeros(1, dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: v > 0.0, "a positive hazard ratio")
        return np.array([float(strict_math.log(np, value))], dtype=Y_DTYPE)

    def output(self, xp, raw):
        return strict_math.exp(xp, xp.asarray(raw, dtype=Y_DTYPE))


def cox_gradients(y, raw, order=None):
    """Unweighted ``(grad, hess)`` of ``survival:cox`` (the module docstring's loop).

    Parameters
    ----------
    y : ndarray of shape (n,), float64
        Labels (negative: censored).
    raw : ndarray of shape (n,), float64
        Margins.
    order : (ndarray, ndarray), optional
        ``core.risk_sets.time_order(y)``, when the caller keeps it between rounds (the
        labels do not change; XGBoost caches it likewise).

    Returns
    -------
    grad, hess : ndarrays of shape (n,), float64, in the rows' order
    """
    n = y.shape[0]
    grad, hess = np.empty(n, dtype=Y_DTYPE), np.empty(n, dtype=Y_DTYPE)
    if n == 0:
        return grad, hess
    order, abs_sorted = time_order(y) if order is None else order
    events = y[order] > 0.0
    exp_p = strict_math.exp(np, raw[order])
    total = np.add.accumulate(exp_p)[-1]  # XGBoost's first loop: in time order
    denominators = breslow_denominators(total, abs_sorted, exp_p)
    zero = np.zeros(n, dtype=Y_DTYPE)
    r = np.add.accumulate(np.where(events, 1.0 / denominators, zero))
    s = np.add.accumulate(np.where(events, 1.0 / (denominators * denominators), zero))
    exp_r = exp_p * r
    grad[order] = exp_r - events.astype(Y_DTYPE)
    hess[order] = exp_r - exp_p * exp_p * s
    return grad, hess


class AFTLoss(Objective):
    """``survival:aft``: accelerated failure time with interval-censored labels, XGBoost's
    loss, gradients and hessians (:mod:`gpuboost.core.aft`).

    Labels are intervals of survival time, given to the Dataset as
    ``label_lower_bound`` / ``label_upper_bound`` (XGBoost's names; the Dataset's
    ``label`` is then the ``(n_rows, 2)`` array of both): ``lower == upper`` an observed
    time, ``upper = inf`` right-censored, ``lower = 0`` left-censored, else
    interval-censored. The margin is the log survival time; ``predict`` returns the
    survival time ``exp(F)`` (``output_margin=True``: ``F``).

    Parameters
    ----------
    aft_loss_distribution : {'normal', 'logistic', 'extreme'}, default='normal'
        The distribution of the noise ``Z`` in ``log T = F + sigma Z``.
    aft_loss_distribution_scale : float, default=1.0
        ``sigma`` (> 0), rounded to float32 as XGBoost keeps it.

    Notes
    -----
    The base margin is ``log(base_score)``, ``base_score`` a survival time, by default
    XGBoost's (:data:`AFT_DEFAULT_BASE_SCORE`). The gradients run on the host
    for every backend, as ``survival:cox``'s.
    """

    name = "survival:aft"
    default_metric = "aft-nloglik"
    takes_label_bounds = True

    def __init__(self, aft_loss_distribution="normal", aft_loss_distribution_scale=1.0):
        if aft_loss_distribution not in AFT_DISTRIBUTIONS:
            raise ValueError(
                f"objective {self.name!r}: aft_loss_distribution must be one of "
                f"{list(AFT_DISTRIBUTIONS)}, got {aft_loss_distribution!r}"
            )
        scale = float(aft_loss_distribution_scale)
        if not (np.isfinite(scale) and aft_sigma(scale) > 0.0):
            raise ValueError(
                f"objective {self.name!r}: aft_loss_distribution_scale must be a positive "
                f"finite number, got {aft_loss_distribution_scale!r}"
            )
        self.aft_loss_distribution = aft_loss_distribution
        self.aft_loss_distribution_scale = scale
        self.sigma = aft_sigma(scale)

    @classmethod
    def from_params(cls, params):
        return cls(
            params.get("aft_loss_distribution", "normal"),
            params.get("aft_loss_distribution_scale", 1.0),
        )

    def get_params(self):
        return {
            "aft_loss_distribution": self.aft_loss_distribution,
            "aft_loss_distribution_scale": self.aft_loss_distribution_scale,
        }

    def check_labels(self, y):
        y = np.asarray(y, dtype=Y_DTYPE)
        if y.ndim != 2 or y.shape[1] != 2:
            raise ValueError(
                f"objective {self.name!r} needs interval labels: build the Dataset with "
                f"label_lower_bound= and label_upper_bound= (XGBoost's names) instead of "
                f"label=; got labels of shape {y.shape}"
            )
        lower, upper = y[:, 0], y[:, 1]
        bad = ~np.isfinite(lower) | (lower < 0.0)
        if bad.any():
            self._label_error(
                "label_lower_bound must be >= 0 (no NaN or infinite value)", lower, bad
            )
        bad = ~(upper >= lower) | (upper <= 0.0)
        if bad.any():
            self._label_error(
                "label_upper_bound must be > 0 and >= label_lower_bound (inf: right-censored)",
                upper,
                bad,
            )

    def _gradients(self, xp, y, raw):
        bounds = np.asarray(to_numpy(y), dtype=Y_DTYPE)
        margin = np.asarray(to_numpy(raw), dtype=Y_DTYPE)
        grad, hess = aft_gradients(bounds, margin, self.aft_loss_distribution, self.sigma)
        return xp.asarray(grad), xp.asarray(hess)

    def base_margin(self, y, weight):
        return self.base_score_to_margin(AFT_DEFAULT_BASE_SCORE)

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: v > 0.0, "a positive survival time")
        return np.array([float(strict_math.log(np, value))], dtype=Y_DTYPE)

    def output(self, xp, raw):
        return strict_math.exp(xp, xp.asarray(raw, dtype=Y_DTYPE))
