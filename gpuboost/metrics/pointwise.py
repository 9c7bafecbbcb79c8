"""Pointwise regression metrics: ``rmse``, ``mae``, ``pinball``, ``expectile`` and the
negative log-likelihoods ``poisson-nloglik``, ``gamma-nloglik``, ``tweedie-nloglik``.

Each is the weighted mean of a per-row loss of one-dimensional predictions
(raw values, or expected values for the likelihoods); see
:mod:`gpuboost.metrics.base` for the conventions.
"""

from ..core import strict_math
from ..params import PARAMETERS
from .base import _LevelsMetric, _PointwiseMetric, metric_name

__all__ = [
    "RootMeanSquaredError",
    "MeanAbsoluteError",
    "PinballLoss",
    "ExpectileLoss",
    "PoissonNegLogLik",
    "GammaNegLogLik",
    "TweedieNegLogLik",
    "MIN_EXPECTED_VALUE",
    "DEFAULT_TWEEDIE_VARIANCE_POWER",
    "TWEEDIE_VARIANCE_POWER_RANGE",
    "DEFAULT_PINBALL_ALPHA",
    "DEFAULT_EXPECTILE_ALPHA",
]

#: Expected values are clipped below at this value before the logarithm or the
#: division in ``poisson-nloglik``, ``gamma-nloglik`` and ``tweedie-nloglik``.
MIN_EXPECTED_VALUE = 1e-16
#: Tweedie variance power ``rho`` of plain ``tweedie-nloglik``: the default of
#: the parameter ``tweedie_variance_power`` (:data:`gpuboost.params.PARAMETERS`).
DEFAULT_TWEEDIE_VARIANCE_POWER = PARAMETERS["tweedie_variance_power"].default
#: Allowed range ``[min, max)`` of the Tweedie variance power (the parameter
#: table's range of ``tweedie_variance_power``).
TWEEDIE_VARIANCE_POWER_RANGE = (
    PARAMETERS["tweedie_variance_power"].low,
    PARAMETERS["tweedie_variance_power"].high,
)
#: Quantile ``alpha`` of plain ``pinball``: the default of the parameter
#: ``quantile_alpha`` (the level of ``reg:quantile``, whose metric this is).
DEFAULT_PINBALL_ALPHA = PARAMETERS["quantile_alpha"].default
#: Level of plain ``expectile``: the default of ``expectile_alpha``.
DEFAULT_EXPECTILE_ALPHA = PARAMETERS["expectile_alpha"].default


class RootMeanSquaredError(_PointwiseMetric):
    """``rmse``: ``sqrt(sum(w * (y - pred)**2) / sum(w))``; ``pred`` raw."""

    name = "rmse"

    def _pointwise_loss(self, xp, y, pred):
        residual = y - pred
        return residual * residual

    def _finalize(self, xp, mean_loss):
        return xp.sqrt(mean_loss)


class MeanAbsoluteError(_PointwiseMetric):
    """``mae``: weighted mean of ``|y - pred|``; ``pred`` raw."""

    name = "mae"

    def _pointwise_loss(self, xp, y, pred):
        return xp.abs(y - pred)


class PinballLoss(_LevelsMetric):
    """``pinball`` / ``pinball@alpha`` / ``pinball@a,b,...``: quantile (pinball) loss.

    Per-row loss ``alpha * (y - pred)`` when ``y >= pred`` and
    ``(1 - alpha) * (pred - y)`` otherwise; ``pred`` raw. Several levels: the mean of
    their losses, one prediction column each (:class:`~gpuboost.metrics.base._LevelsMetric`).

    Parameters
    ----------
    alpha : float or sequence of float, default=DEFAULT_PINBALL_ALPHA
        Target quantile(s), ``0 < alpha < 1``, increasing.
    """

    base_name = "pinball"
    default_level = DEFAULT_PINBALL_ALPHA

    @property
    def alpha(self):
        """The level (the first of several)."""
        return self.levels[0]

    def _level_loss(self, xp, y, pred, level):
        residual = y - pred
        return xp.where(residual >= 0, level * residual, (level - 1.0) * residual)


class ExpectileLoss(_LevelsMetric):
    """``expectile`` / ``expectile@alpha`` / ``expectile@a,b,...``: expectile loss.

    Per-row loss ``alpha * (y - pred)**2`` when ``y >= pred`` and
    ``(1 - alpha) * (y - pred)**2`` otherwise (twice the loss whose gradient
    ``reg:expectileerror`` follows); ``pred`` raw. Several levels as ``pinball``.

    Parameters
    ----------
    alpha : float or sequence of float, default=DEFAULT_EXPECTILE_ALPHA
        Target expectile(s), ``0 < alpha < 1``, increasing.
    """

    base_name = "expectile"
    default_level = DEFAULT_EXPECTILE_ALPHA

    def _level_loss(self, xp, y, pred, level):
        residual = y - pred
        squared = residual * residual
        return xp.where(residual >= 0, level * squared, (1.0 - level) * squared)


class PoissonNegLogLik(_PointwiseMetric):
    """``poisson-nloglik``: Poisson negative log-likelihood.

    Per-row loss ``lgamma(y + 1) + mu - y * log(mu)`` with the expected value
    ``mu = max(pred, MIN_EXPECTED_VALUE)``; ``lgamma`` and ``log`` are
    :mod:`gpuboost.core.strict_math`'s (the same bits on every platform).
    """

    name = "poisson-nloglik"

    def _pointwise_loss(self, xp, y, pred):
        expected = xp.maximum(pred, MIN_EXPECTED_VALUE)
        return strict_math.lgamma(xp, y + 1.0) + expected - y * strict_math.log(xp, expected)


class GammaNegLogLik(_PointwiseMetric):
    """``gamma-nloglik``: gamma negative log-likelihood with dispersion 1.

    Per-row loss ``y / mu + log(mu)`` with ``mu = max(pred,
    MIN_EXPECTED_VALUE)``; with unit dispersion the label-only term of the
    exponential-family form vanishes (XGBoost's definition).
    """

    name = "gamma-nloglik"

    def _pointwise_loss(self, xp, y, pred):
        expected = xp.maximum(pred, MIN_EXPECTED_VALUE)
        return y / expected + strict_math.log(xp, expected)


class TweedieNegLogLik(_PointwiseMetric):
    """``tweedie-nloglik`` / ``tweedie-nloglik@rho``: Tweedie negative log-likelihood.

    Per-row loss, up to a label-only term (XGBoost's definition),
    ``-y * mu**(1 - rho) / (1 - rho) + mu**(2 - rho) / (2 - rho)`` with
    ``mu = max(pred, MIN_EXPECTED_VALUE)``. At ``rho = 1`` the first term
    diverges by the label-only constant ``y / (1 - rho)``; its limit with
    that constant dropped, ``mu - y * log(mu)``, is used.

    Parameters
    ----------
    variance_power : float, default=DEFAULT_TWEEDIE_VARIANCE_POWER
        ``rho``, in ``TWEEDIE_VARIANCE_POWER_RANGE`` = [1, 2).
    """

    def __init__(self, variance_power=DEFAULT_TWEEDIE_VARIANCE_POWER):
        variance_power = float(variance_power)
        low, high = TWEEDIE_VARIANCE_POWER_RANGE
        if not low <= variance_power < high:
            raise ValueError(
                f"tweedie variance power must be in [{low}, {high}), got {variance_power}"
            )
        self.variance_power = variance_power
        self.name = metric_name("tweedie-nloglik", variance_power)

    def _pointwise_loss(self, xp, y, pred):
        expected = xp.maximum(pred, MIN_EXPECTED_VALUE)
        log_expected = strict_math.log(xp, expected)
        rho = self.variance_power
        if rho == TWEEDIE_VARIANCE_POWER_RANGE[0]:
            return expected - y * log_expected
        first = y * strict_math.exp(xp, (1.0 - rho) * log_expected) / (1.0 - rho)
        second = strict_math.exp(xp, (2.0 - rho) * log_expected) / (2.0 - rho)
        return second - first
