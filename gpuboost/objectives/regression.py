"""Regression objectives: squared, absolute, Huber, quantile, Poisson, gamma, Tweedie.

The identity-link objectives (``reg:squarederror``, ``reg:absoluteerror``,
``reg:huber``, ``reg:quantile``) predict the margin itself; the last three
replace each grown tree's leaf values (``refit_leaf_values``): by a weighted
quantile of the leaf's residuals (:func:`gpuboost.core.quantile.weighted_quantile`)
or, for Huber, by Friedman's M_TreeBoost one-step value. The log-link
objectives (``count:poisson``, ``reg:gamma``, ``reg:tweedie``) predict
``exp(margin)``. The interface and the conventions shared by every objective
are in :mod:`gpuboost.objectives.base`.
"""

import numbers

import numpy as np

from ..core import strict_math
from ..core.dtypes import Y_DTYPE
from ..core.quantile import weighted_quantile
from ..core.reproducible_sum import reproducible_mean, reproducible_sum
from ..metrics.base import metric_name
from ..params import PARAMETERS
from .base import Objective, _host_label_and_weight, _IdentityLinkMixin, _LogLinkMixin, _sign

__all__ = [
    "SquaredError",
    "AbsoluteError",
    "HuberError",
    "QuantileError",
    "QuantileLevelsError",
    "ExpectileError",
    "rearranged",
    "PoissonLoss",
    "GammaLoss",
    "TweedieLoss",
    "POISSON_MAX_DELTA_STEP",
    "DEFAULT_HUBER_DELTA",
    "DEFAULT_QUANTILE_ALPHA",
    "DEFAULT_TWEEDIE_VARIANCE_POWER",
    "TWEEDIE_VARIANCE_POWER_RANGE",
]

#: XGBoost's default ``max_delta_step`` of ``count:poisson``: the hessian is
#: ``exp(F + POISSON_MAX_DELTA_STEP)``, which damps the Newton step by
#: ``exp(-POISSON_MAX_DELTA_STEP)``.
POISSON_MAX_DELTA_STEP = 0.7

#: Default parameter values, read from their owner, the parameter table
#: (:data:`gpuboost.params.PARAMETERS`; XGBoost's values).
DEFAULT_HUBER_DELTA = PARAMETERS["huber_delta"].default
DEFAULT_QUANTILE_ALPHA = PARAMETERS["quantile_alpha"].default
#: Default level of ``reg:expectileerror``.
DEFAULT_EXPECTILE_ALPHA = PARAMETERS["expectile_alpha"].default
DEFAULT_TWEEDIE_VARIANCE_POWER = PARAMETERS["tweedie_variance_power"].default
#: Inclusive lower and exclusive upper bound of ``tweedie_variance_power``
#: (the parameter table's range).
TWEEDIE_VARIANCE_POWER_RANGE = (
    PARAMETERS["tweedie_variance_power"].low,
    PARAMETERS["tweedie_variance_power"].high,
)


# ---------------------------------------------------------------------------
# Identity link
# ---------------------------------------------------------------------------


class SquaredError(_IdentityLinkMixin, Objective):
    """``reg:squarederror``: loss ``(F - y)**2 / 2``.

    ``grad = F - y``, ``hess = 1``; base margin: the weighted mean.
    """

    supports_targets = True

    name = "reg:squarederror"
    default_metric = "rmse"

    def _gradients(self, xp, y, raw):
        return raw - y, xp.ones_like(raw)

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([float(reproducible_mean(np, y, weight))], dtype=Y_DTYPE)


class AbsoluteError(_IdentityLinkMixin, Objective):
    """``reg:absoluteerror``: loss ``|F - y|``.

    ``grad = sign(F - y)`` (0 where ``F == y``), ``hess = 1``. After each
    tree the leaf values are refit to the weighted lower median of the
    residuals (``refit_alpha = 0.5``). Base margin: the weighted lower median
    (:func:`weighted_quantile` at 0.5).
    """

    name = "reg:absoluteerror"
    default_metric = "mae"
    refit_alpha = 0.5

    def _gradients(self, xp, y, raw):
        return _sign(xp, raw - y), xp.ones_like(raw)

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([weighted_quantile(y, weight, self.refit_alpha)], dtype=Y_DTYPE)


class HuberError(_IdentityLinkMixin, Objective):
    """``reg:huber``: Friedman's Huber loss and his M_TreeBoost leaf values.

    Loss ``r**2 / 2`` if ``|r| <= delta`` else ``delta * (|r| - delta / 2)``
    with ``r = F - y``; ``grad = clip(r, -delta, delta)``, ``hess = 1``.

    ``delta`` is ``huber_delta`` (fixed), or, when ``huber_alpha`` is given,
    Friedman's choice: at every round, the weighted lower ``huber_alpha``-
    quantile of ``|y - F|`` over all training rows
    (``backend.segment_weighted_quantile`` on one segment; see
    :meth:`begin_round`).

    Leaf values (Friedman 2001, algorithm "M_TreeBoost" for the Huber loss):
    after a tree is grown on the gradients, each leaf's value becomes the
    one-step estimate of its Huber location, with ``r = y - F`` of the leaf's
    rows and ``m`` their weighted lower median (:func:`weighted_quantile` at
    0.5)::

        value = m + sum(w * sign(r - m) * min(delta, |r - m|)) / sum(w)

    (times the learning rate). The two sums are sequential float64 sums over
    the leaf's rows in partition order (``backend.segment_sums``), so both
    backends give the same bits. ``w`` is the sample weight times the row
    sampling multiplier (1 without them).

    The base margin is the weighted lower median of the labels: a robust
    start, not the exact Huber M-estimate of location.

    Parameters
    ----------
    huber_delta : float, default=1.0
        Positive threshold between the quadratic and the linear part.
    huber_alpha : float or None, default=None
        If given, in (0, 1): ``delta`` is re-estimated every round as this
        quantile of the absolute residuals, and ``huber_delta`` is not used
        by training.

    Attributes
    ----------
    round_delta : float
        The ``delta`` of the current round.
    """

    name = "reg:huber"
    default_metric = "rmse"

    def __init__(self, huber_delta=DEFAULT_HUBER_DELTA, huber_alpha=None):
        if (
            not isinstance(huber_delta, numbers.Real)
            or not np.isfinite(huber_delta)
            or huber_delta <= 0
        ):
            raise ValueError(
                f"objective {self.name!r}: huber_delta must be a positive "
                f"finite number, got {huber_delta!r}"
            )
        if huber_alpha is not None and (
            isinstance(huber_alpha, bool)
            or not isinstance(huber_alpha, numbers.Real)
            or not 0.0 < huber_alpha < 1.0
        ):
            raise ValueError(
                f"objective {self.name!r}: huber_alpha must be None or in (0, 1), "
                f"got {huber_alpha!r}"
            )
        self.huber_delta = float(huber_delta)
        self.huber_alpha = None if huber_alpha is None else float(huber_alpha)
        self.round_delta = self.huber_delta

    @classmethod
    def from_params(cls, params):
        """Build from validated parameters (``huber_delta``, ``huber_alpha``)."""
        return cls(
            huber_delta=params.get("huber_delta", DEFAULT_HUBER_DELTA),
            huber_alpha=params.get("huber_alpha"),
        )

    def get_params(self):
        return {"huber_delta": self.huber_delta, "huber_alpha": self.huber_alpha}

    @property
    def has_leaf_refit(self):
        return True

    def begin_round(self, backend, y, raw, weight):
        """Set :attr:`round_delta`: ``huber_delta``, or the ``huber_alpha``-quantile
        of ``|y - F|`` over all rows."""
        if self.huber_alpha is None:
            self.round_delta = self.huber_delta
            return
        xp = backend.xp
        absolute_residuals = xp.ascontiguousarray(xp.abs(self.refit_residuals(xp, y, raw)))
        n_rows = int(absolute_residuals.shape[0])
        all_rows = xp.arange(n_rows, dtype=np.int32)
        self.round_delta = float(
            backend.segment_weighted_quantile(
                absolute_residuals,
                weight,
                all_rows,
                np.array([0]),
                np.array([n_rows]),
                self.huber_alpha,
            )[0]
        )

    def _gradients(self, xp, y, raw):
        grad = xp.clip(raw - y, -self.round_delta, self.round_delta)
        return grad, xp.ones_like(raw)

    def refit_leaf_values(self, backend, y, raw, weight, sample_indices, begins, ends, output=0):
        """Friedman's one-step Huber leaf values (see the class docstring)."""
        xp = backend.xp
        residuals = xp.ascontiguousarray(self.refit_residuals(xp, y, raw))
        medians = backend.segment_weighted_quantile(
            residuals, weight, sample_indices, begins, ends, 0.5
        )
        leaf_median_of_row = xp.zeros((residuals.shape[0], 1), dtype=Y_DTYPE)
        backend.add_leaf_values(leaf_median_of_row, 0, sample_indices, begins, ends, medians)
        deviations = residuals - leaf_median_of_row[:, 0]
        clipped = _sign(xp, deviations) * xp.minimum(xp.abs(deviations), self.round_delta)
        if weight is None:
            totals = (np.asarray(ends) - np.asarray(begins)).astype(np.float64)
        else:
            weight = xp.ascontiguousarray(xp.asarray(weight, dtype=Y_DTYPE))
            clipped = clipped * weight
            totals = backend.segment_sums(weight, sample_indices, begins, ends)
        sums = backend.segment_sums(xp.ascontiguousarray(clipped), sample_indices, begins, ends)
        means = np.divide(sums, totals, out=np.zeros_like(sums), where=totals > 0)
        return medians + means

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([weighted_quantile(y, weight, 0.5)], dtype=Y_DTYPE)


class QuantileError(_IdentityLinkMixin, Objective):
    """``reg:quantile``: pinball loss at level ``quantile_alpha``.

    Loss ``alpha * (y - F)`` if ``y >= F`` else ``(1 - alpha) * (F - y)``;
    ``grad = (F >= y) - alpha`` (so ``1 - alpha`` where ``F == y``, as in
    XGBoost), ``hess = 1``. Leaf values are refit to the weighted lower
    ``alpha``-quantile of the residuals (``refit_alpha = quantile_alpha``);
    the base margin is the weighted lower ``alpha``-quantile of the labels.

    Parameters
    ----------
    quantile_alpha : float, default=0.5
        Quantile level in the open interval (0, 1).
    """

    name = "reg:quantile"

    def __init__(self, quantile_alpha=DEFAULT_QUANTILE_ALPHA):
        if not isinstance(quantile_alpha, numbers.Real) or not 0.0 < quantile_alpha < 1.0:
            raise ValueError(
                f"objective {self.name!r}: quantile_alpha must be in (0, 1), got {quantile_alpha!r}"
            )
        self.quantile_alpha = float(quantile_alpha)
        self.refit_alpha = self.quantile_alpha
        self.default_metric = metric_name("pinball", self.quantile_alpha)

    def get_params(self):
        return {"quantile_alpha": self.quantile_alpha}

    @classmethod
    def from_params(cls, params):
        """Build from validated parameters (``quantile_alpha``; a list of levels gives
        :class:`QuantileLevelsError`)."""
        alpha = params.get("quantile_alpha", DEFAULT_QUANTILE_ALPHA)
        if isinstance(alpha, (list, tuple)):
            if len(alpha) > 1:
                return QuantileLevelsError(alpha)
            alpha = alpha[0] if alpha else alpha
        return cls(quantile_alpha=alpha)

    def _gradients(self, xp, y, raw):
        grad = xp.where(raw >= y, 1.0 - self.quantile_alpha, -self.quantile_alpha)
        return grad, xp.ones_like(raw)

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([weighted_quantile(y, weight, self.quantile_alpha)], dtype=Y_DTYPE)


def _checked_levels(levels, who, parameter):
    """``levels`` as a tuple of increasing floats in (0, 1) (ValueError otherwise)."""
    values = tuple(np.atleast_1d(np.asarray(levels, dtype=Y_DTYPE)).tolist())
    if (
        not values
        or not all(0.0 < v < 1.0 for v in values)
        or any(b <= a for a, b in zip(values, values[1:]))
    ):
        raise ValueError(
            f"objective {who!r}: {parameter} must be a level in (0, 1) or an increasing "
            f"list of them, got {levels!r}"
        )
    return values


class _LevelsMixin:
    """One output per level (``levels``, increasing): output ``j`` is trained at level
    ``j`` as a one-level model is, and the predictions of a row are *rearranged*: sorted
    (by :func:`rearranged`), so that they never cross. Sorting never increases the loss
    summed over the levels, row by row (for levels ``a < b`` and crossing predictions
    ``p_a > p_b``, exchanging them lowers the pinball sum by ``(b - a)(p_a - p_b)``, the
    expectile sum likewise), and leaves predictions that do not cross as they are.
    ``output_margin=True`` gives the margins before the rearrangement."""

    levels = (0.5,)

    def n_outputs(self):
        return len(self.levels)

    def output(self, xp, raw):
        return rearranged(xp, raw)

    def refit_level(self, output):
        return self.levels[output]

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: True, "finite")
        return np.full(len(self.levels), value, dtype=Y_DTYPE)


def rearranged(xp, raw):
    """Every row of ``raw`` (n_rows, n_levels) sorted increasingly (a 1-D ``raw`` as it
    is), by a fixed network of elementwise ``minimum`` / ``maximum`` (exact: the same
    values on every backend).

    Returns
    -------
    array of the shape of ``raw``, float64 (a new array)
    """
    raw = xp.asarray(raw, dtype=Y_DTYPE)
    if raw.ndim == 1:
        return raw.copy()
    columns = [xp.ascontiguousarray(raw[:, j]) for j in range(raw.shape[1])]
    for end in range(len(columns) - 1, 0, -1):  # bubble passes: the largest to the end
        for j in range(end):
            low = xp.minimum(columns[j], columns[j + 1])
            columns[j + 1] = xp.maximum(columns[j], columns[j + 1])
            columns[j] = low
    return xp.stack(columns, axis=1)


class QuantileLevelsError(_LevelsMixin, QuantileError):
    """``reg:quantile`` with several levels (``quantile_alpha=[a, b, ...]``): output ``j``
    is the ``reg:quantile`` of level ``j`` (its gradients, its leaves refit to the
    level's quantile of the residuals, its base margin the labels' quantile), predictions
    rearranged so that they never cross (:class:`_LevelsMixin`).
    """

    def __init__(self, quantile_alpha):
        self.levels = _checked_levels(quantile_alpha, self.name, "quantile_alpha")
        self.quantile_alpha = list(self.levels)
        self.refit_alpha = self.levels[0]
        self.default_metric = metric_name("pinball", self.levels)

    def _gradients(self, xp, y, raw):
        levels = xp.asarray(self.levels, dtype=Y_DTYPE)
        grad = xp.where(raw >= y[:, None], 1.0 - levels, -levels)
        return grad, xp.ones_like(raw)

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([weighted_quantile(y, weight, a) for a in self.levels], dtype=Y_DTYPE)


class ExpectileError(_LevelsMixin, _IdentityLinkMixin, Objective):
    """``reg:expectileerror``: expectile regression at level ``expectile_alpha``
    (XGBoost's), or at several levels (a list: one output each, rearranged as
    :class:`QuantileLevelsError`'s).

    With ``s = 1 - alpha`` where ``F >= y`` and ``alpha`` otherwise (XGBoost's
    ``weight_scale``): ``grad = s * (F - y)``, ``hess = s``, the derivatives of
    ``s * (F - y)**2 / 2``. The base margin of each level is XGBoost's: the weighted
    label mean plus one Newton step of the level's loss from it (sums over the rows
    by :func:`~gpuboost.core.reproducible_sum.reproducible_sum`).

    Parameters
    ----------
    expectile_alpha : float or sequence of float, default=0.5
        Level(s) in the open interval (0, 1), increasing.
    """

    name = "reg:expectileerror"

    def __init__(self, expectile_alpha=DEFAULT_EXPECTILE_ALPHA):
        self.levels = _checked_levels(expectile_alpha, self.name, "expectile_alpha")
        self.expectile_alpha = self.levels[0] if len(self.levels) == 1 else list(self.levels)
        self.default_metric = metric_name(
            "expectile", self.levels[0] if len(self.levels) == 1 else self.levels
        )

    @classmethod
    def from_params(cls, params):
        """Build from validated parameters (``expectile_alpha``)."""
        return cls(expectile_alpha=params.get("expectile_alpha", DEFAULT_EXPECTILE_ALPHA))

    def get_params(self):
        return {"expectile_alpha": self.expectile_alpha}

    def _gradients(self, xp, y, raw):
        if raw.ndim == 1:
            level = self.levels[0]
            scale = xp.where(raw >= y, 1.0 - level, level)
            return scale * (raw - y), scale
        levels = xp.asarray(self.levels, dtype=Y_DTYPE)
        labels = y[:, None]
        scale = xp.where(raw >= labels, 1.0 - levels, levels)
        return scale * (raw - labels), scale

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        mean = float(reproducible_mean(np, y, weight))
        weights = np.ones_like(y) if weight is None else weight
        margins = []
        for level in self.levels:
            difference = mean - y
            scale = np.where(difference >= 0.0, 1.0 - level, level) * weights
            step = reproducible_sum(np, scale * difference) / reproducible_sum(np, scale)
            margins.append(mean - float(step))
        return np.array(margins, dtype=Y_DTYPE)


# ---------------------------------------------------------------------------
# Log-link regression
# ---------------------------------------------------------------------------


class PoissonLoss(_LogLinkMixin, Objective):
    """``count:poisson``: Poisson negative log-likelihood, log link.

    Loss ``exp(F) - y * F`` (labels >= 0); ``grad = exp(F) - y``,
    ``hess = exp(F + max_delta_step)`` (XGBoost's damped hessian).
    Prediction ``exp(F)``; base margin ``log`` of the weighted label mean
    (floored at ``LOG_LINK_MEAN_FLOOR``).

    Parameters
    ----------
    max_delta_step : float, default=POISSON_MAX_DELTA_STEP
        Non-negative hessian damping exponent.
    """

    supports_targets = True

    name = "count:poisson"
    default_metric = "poisson-nloglik"

    def __init__(self, max_delta_step=POISSON_MAX_DELTA_STEP):
        if (
            not isinstance(max_delta_step, numbers.Real)
            or not np.isfinite(max_delta_step)
            or max_delta_step < 0
        ):
            raise ValueError(
                f"objective {self.name!r}: max_delta_step must be a "
                f"non-negative finite number, got {max_delta_step!r}"
            )
        self.max_delta_step = float(max_delta_step)

    def get_params(self):
        return {"max_delta_step": self.max_delta_step}

    def _check_label_domain(self, y):
        bad = y < 0
        if bad.any():
            self._label_error("labels must be non-negative", y, bad)

    def _gradients(self, xp, y, raw):
        return strict_math.exp(xp, raw) - y, strict_math.exp(xp, raw + self.max_delta_step)


class GammaLoss(_LogLinkMixin, Objective):
    """``reg:gamma``: gamma negative log-likelihood (up to constants).

    Log link. Loss ``y * exp(-F) + F`` (labels > 0);
    ``grad = 1 - y * exp(-F)``, ``hess = y * exp(-F)``. Prediction
    ``exp(F)``; base margin ``log`` of the weighted label mean (the exact
    minimizer).
    """

    supports_targets = True

    name = "reg:gamma"
    default_metric = "gamma-nloglik"

    def _check_label_domain(self, y):
        bad = y <= 0
        if bad.any():
            self._label_error("labels must be positive (> 0)", y, bad)

    def _gradients(self, xp, y, raw):
        scaled_label = y * strict_math.exp(xp, -raw)
        return 1.0 - scaled_label, scaled_label


class TweedieLoss(_LogLinkMixin, Objective):
    """``reg:tweedie``: Tweedie negative log-likelihood, log link.

    With variance power ``rho`` in ``[1, 2)``, the loss is
    ``-y exp((1 - rho) F) / (1 - rho) + exp((2 - rho) F) / (2 - rho)``
    (Poisson's ``exp(F) - y F`` at ``rho = 1``), and
    ``grad = -y exp((1 - rho) F) + exp((2 - rho) F)``,
    ``hess = -y (1 - rho) exp((1 - rho) F) + (2 - rho) exp((2 - rho) F)``.
    Labels must be non-negative. Prediction ``exp(F)``; base margin ``log``
    of the weighted label mean (the exact minimizer; floored at
    ``LOG_LINK_MEAN_FLOOR``).

    Parameters
    ----------
    tweedie_variance_power : float, default=1.5
    """

    supports_targets = True

    name = "reg:tweedie"

    def __init__(self, tweedie_variance_power=DEFAULT_TWEEDIE_VARIANCE_POWER):
        low, high = TWEEDIE_VARIANCE_POWER_RANGE
        if (
            not isinstance(tweedie_variance_power, numbers.Real)
            or not low <= tweedie_variance_power < high
        ):
            raise ValueError(
                f"objective {self.name!r}: tweedie_variance_power must be in "
                f"[{low}, {high}), got {tweedie_variance_power!r}"
            )
        self.tweedie_variance_power = float(tweedie_variance_power)
        self.default_metric = metric_name("tweedie-nloglik", self.tweedie_variance_power)

    @classmethod
    def from_params(cls, params):
        """Build from validated parameters (``tweedie_variance_power``)."""
        return cls(
            tweedie_variance_power=params.get(
                "tweedie_variance_power", DEFAULT_TWEEDIE_VARIANCE_POWER
            )
        )

    def get_params(self):
        return {"tweedie_variance_power": self.tweedie_variance_power}

    def _check_label_domain(self, y):
        bad = y < 0
        if bad.any():
            self._label_error("labels must be non-negative", y, bad)

    def _gradients(self, xp, y, raw):
        rho = self.tweedie_variance_power
        exp_one = strict_math.exp(xp, (1.0 - rho) * raw)
        exp_two = strict_math.exp(xp, (2.0 - rho) * raw)
        grad = -y * exp_one + exp_two
        hess = -y * (1.0 - rho) * exp_one + (2.0 - rho) * exp_two
        return grad, hess
