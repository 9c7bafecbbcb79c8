"""Training objectives: gradients, hessians, optimal constants, links.

Every objective is backend agnostic: the per-row computations (``gradients``,
``output``, ``mean``, ``refit_residuals``) take the array module ``xp``
(``numpy`` or ``cupy``) as an argument and use only functions both modules
provide, with no Python loop over rows. The one-off computations that run once
per training (``check_labels``, ``base_margin``, ``base_score_to_margin``) run
on the host with NumPy.

All labels, weights, margins, gradients and hessians are float64
(:data:`gpuboost._dtypes.Y_DTYPE`). When a sample weight is given, the
objective returns ``grad * weight`` and ``hess * weight``; callers must not
apply the weight again.

CPU/GPU contract
----------------
The only transcendental functions used on row data are ``xp.exp`` and
``xp.log``; everything else is ``+ - * /``, comparisons, ``abs``, ``sign``,
``clip``, ``maximum``/``minimum``, ``where`` and ``argmax``. Sums over the
classes of a row are accumulated left to right in class order, never with a
reduction whose order the library chooses. Hence NumPy and CuPy results may
differ in the last bits only where ``exp``/``log`` differ.

Overflow
--------
The formulas are used as written (as XGBoost does). Objectives with an
exponential term (``binary:exponential``, ``count:poisson``, ``reg:gamma``,
``reg:tweedie``) overflow to ``inf`` for margins beyond roughly +-700. The
sigmoid and the softmax are written so that they never overflow.
"""
import numbers

import numpy as np

from ..core.dtypes import Y_DTYPE
from ..core.quantile import check_host_weights, weighted_quantile

#: Lower bound on the hessian of ``binary:logistic`` and ``multi:*`` (as in
#: XGBoost), so that saturated rows still have a positive hessian.
HESSIAN_FLOOR = 1e-16
#: Multiclass hessian ``MULTICLASS_HESSIAN_FACTOR * p * (1 - p)``: 1.0 takes the
#: exact diagonal of the softmax cross-entropy's hessian (scikit-learn HGB's
#: choice). XGBoost uses 2.0, an upper bound that halves the Newton step; on the
#: reference multiclass data (100 rounds, eta 0.1) that left test mlogloss at
#: 1.3755 against 1.2827 with the exact diagonal.
MULTICLASS_HESSIAN_FACTOR = 1.0
#: XGBoost's default ``max_delta_step`` of ``count:poisson``: the hessian is
#: ``exp(F + POISSON_MAX_DELTA_STEP)``, which damps the Newton step by
#: ``exp(-POISSON_MAX_DELTA_STEP)``.
POISSON_MAX_DELTA_STEP = 0.7
#: Probabilities (weighted label means, class priors) are clipped to
#: ``[PROBABILITY_CLIP, 1 - PROBABILITY_CLIP]`` before the inverse link is
#: applied in ``base_margin``, so that a pure label set gives a finite margin.
PROBABILITY_CLIP = 1e-7
#: Weighted label means are floored at ``LOG_LINK_MEAN_FLOOR`` before the
#: log link is applied in ``base_margin`` (all-zero Poisson/Tweedie labels).
LOG_LINK_MEAN_FLOOR = 1e-7

#: Default parameter values (XGBoost's).
DEFAULT_HUBER_DELTA = 1.0
DEFAULT_QUANTILE_ALPHA = 0.5
DEFAULT_TWEEDIE_VARIANCE_POWER = 1.5
#: Inclusive lower and exclusive upper bound of ``tweedie_variance_power``.
TWEEDIE_VARIANCE_POWER_RANGE = (1.0, 2.0)
#: Smallest ``num_class`` of the multiclass objectives.
MIN_NUM_CLASS = 2


# ---------------------------------------------------------------------------
# Host helpers
# ---------------------------------------------------------------------------

def _host_label_and_weight(y, weight, who):
    """Return ``(y, weight)`` as validated float64 host arrays."""
    y = np.asarray(y, dtype=Y_DTYPE)
    if y.ndim != 1 or y.shape[0] == 0:
        raise ValueError(
            f"{who}: labels must be a non-empty 1-D array, got shape "
            f"{y.shape}")
    return y, check_host_weights(weight, y.shape[0], who)


def _format_level(value):
    """Format a metric parameter (``pinball@0.9``, ``tweedie-nloglik@1.5``)."""
    return repr(float(value))


# ---------------------------------------------------------------------------
# Array-module helpers (row data)
# ---------------------------------------------------------------------------

def _sigmoid(x, xp):
    """``1 / (1 + exp(-x))`` without overflow, using ``exp`` only.

    ``e = exp(-|x|)`` is in ``(0, 1]``; the result is ``1 / (1 + e)`` for
    ``x >= 0`` and ``e / (1 + e)`` for ``x < 0``.
    """
    e = xp.exp(-xp.abs(x))
    one_plus_e = 1.0 + e
    return xp.where(x >= 0, 1.0 / one_plus_e, e / one_plus_e)


def _softmax(raw, xp):
    """Row-wise softmax of ``raw`` (n, K) without overflow.

    The row maximum is subtracted before ``exp``, so every exponent is
    ``<= 0`` and the largest term of each row is exactly 1. The row sum is
    accumulated left to right in class order (a loop over the K classes,
    not over rows), so that both backends add in the same order.
    """
    shifted = raw - xp.max(raw, axis=1, keepdims=True)
    exp_shifted = xp.exp(shifted)
    row_sum = exp_shifted[:, 0].copy()
    for k in range(1, raw.shape[1]):
        row_sum = row_sum + exp_shifted[:, k]
    return exp_shifted / row_sum[:, None]


def _apply_weight(grad, hess, weight, xp):
    """Return ``(grad * weight, hess * weight)``, or the inputs if None."""
    if weight is None:
        return grad, hess
    weight = xp.asarray(weight, dtype=Y_DTYPE)
    if grad.ndim == 2:
        weight = weight[:, None]
    return grad * weight, hess * weight


def _to_host(array, xp):
    """Copy an ``xp`` array to a NumPy array (no copy for NumPy input)."""
    if hasattr(xp, "asnumpy"):
        return xp.asnumpy(array)
    return np.asarray(array)


# ---------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------

class Objective:
    """Base class of the training objectives.

    Subclasses set the class attributes below and implement ``_gradients``
    (unweighted gradient and hessian), ``base_margin``,
    ``base_score_to_margin`` and, if the link is not the identity,
    ``output``.

    Attributes
    ----------
    name : str
        The XGBoost objective name, e.g. ``'reg:squarederror'``.
    default_metric : str
        Name of the evaluation metric used when none is given.
    refit_alpha : float or None
        If not None, after a tree is grown the backend replaces each leaf
        value by the :func:`weighted_quantile` (level ``refit_alpha``) of the
        residuals :meth:`refit_residuals` of the rows in the leaf (the default
        :meth:`refit_leaf_values`).
    """

    name = None
    default_metric = None
    refit_alpha = None

    def n_outputs(self):
        """Number of margin columns: 1, or ``num_class`` for ``multi:*``."""
        return 1

    def get_params(self):
        """Return the objective parameters as a dict (for model files)."""
        return {}

    def __repr__(self):
        params = ", ".join(f"{key}={value!r}"
                           for key, value in self.get_params().items())
        return f"{type(self).__name__}({params})"

    # -- labels ------------------------------------------------------------

    def check_labels(self, y):
        """Validate labels on the host; raise ValueError if invalid.

        Parameters
        ----------
        y : ndarray of shape (n_samples,)
            Labels.

        Raises
        ------
        ValueError
            If a label is NaN or infinite, or outside the objective's domain.
            The message names the objective and the problem.
        """
        y = np.asarray(y, dtype=Y_DTYPE)
        if y.ndim != 1:
            raise ValueError(
                f"objective {self.name!r}: labels must be a 1-D array, got "
                f"shape {y.shape}")
        if not np.isfinite(y).all():
            n_bad = int((~np.isfinite(y)).sum())
            raise ValueError(
                f"objective {self.name!r}: labels contain {n_bad} NaN or "
                "infinite value(s)")
        self._check_label_domain(y)

    def _check_label_domain(self, y):
        """Objective-specific label checks on finite host labels."""

    def _label_error(self, problem, y, bad):
        """Raise a ValueError about the labels ``y[bad]``."""
        n_bad = int(bad.sum())
        example = float(y[bad][0])
        raise ValueError(
            f"objective {self.name!r}: {problem}; found {n_bad} invalid "
            f"label(s), e.g. {example!r}")

    # -- gradients ---------------------------------------------------------

    def gradients(self, y, raw, weight, xp, dataset=None):
        """Gradient and hessian of the loss with respect to the margins.

        Parameters
        ----------
        y : array of shape (n_samples,)
            Labels (an ``xp`` array).
        raw : array of shape (n_samples,) or (n_samples, n_outputs)
            Raw predictions (margins); two-dimensional iff ``n_outputs() > 1``.
        weight : array of shape (n_samples,) or None
            Sample weights; if given, gradient and hessian are multiplied by
            them.
        xp : module
            The array module (``numpy`` or ``cupy``).
        dataset : object, optional
            Passed through to a custom objective; ignored otherwise.

        Returns
        -------
        grad, hess : arrays of the shape of ``raw``, dtype float64
        """
        y = xp.asarray(y, dtype=Y_DTYPE)
        raw = xp.asarray(raw, dtype=Y_DTYPE)
        self._check_raw_shape(y, raw)
        grad, hess = self._gradients(y, raw, xp)
        return _apply_weight(grad, hess, weight, xp)

    def _check_raw_shape(self, y, raw):
        n_outputs = self.n_outputs()
        expected = ((y.shape[0],) if n_outputs == 1
                    else (y.shape[0], n_outputs))
        if raw.shape != expected:
            raise ValueError(
                f"objective {self.name!r}: raw predictions must have shape "
                f"{expected}, got {raw.shape}")

    def _gradients(self, y, raw, xp):
        """Unweighted ``(grad, hess)`` for valid float64 ``xp`` arrays."""
        raise NotImplementedError

    # -- constants ---------------------------------------------------------

    def base_margin(self, y, weight):
        """Optimal constant raw prediction (margin) for the labels (host).

        Parameters
        ----------
        y : ndarray of shape (n_samples,)
            Labels, assumed valid (see :meth:`check_labels`).
        weight : ndarray of shape (n_samples,) or None
            Sample weights.

        Returns
        -------
        margin : ndarray of shape (n_outputs,), dtype float64
        """
        raise NotImplementedError

    def base_score_to_margin(self, base_score):
        """Convert a user ``base_score`` (output space) to a margin (host).

        As in XGBoost, ``base_score`` is given in the space of the
        predictions (a probability for logistic, a mean for log-link
        objectives) and mapped through the inverse link.

        Parameters
        ----------
        base_score : float

        Returns
        -------
        margin : ndarray of shape (n_outputs,), dtype float64

        Raises
        ------
        ValueError
            If ``base_score`` is outside the domain of the inverse link.
        """
        raise NotImplementedError

    def _check_base_score(self, base_score, condition, domain):
        """Return ``float(base_score)`` if finite and ``condition(value)``."""
        try:
            value = float(base_score)
        except (TypeError, ValueError):
            raise ValueError(
                f"objective {self.name!r}: base_score must be a number, got "
                f"{base_score!r}") from None
        if not (np.isfinite(value) and condition(value)):
            raise ValueError(
                f"objective {self.name!r}: base_score must be {domain}, got "
                f"{base_score!r}")
        return value

    # -- transforms --------------------------------------------------------

    def output(self, raw, xp):
        """Transform margins to what ``Booster.predict`` returns.

        Parameters
        ----------
        raw : array of shape (n_samples,) or (n_samples, n_outputs)
        xp : module

        Returns
        -------
        prediction : array of shape (n_samples,) or (n_samples, n_outputs)
            The identity here; subclasses apply their inverse link.
        """
        return xp.asarray(raw, dtype=Y_DTYPE)

    def mean(self, raw, xp):
        """Transform margins to the space evaluation metrics use.

        The same as :meth:`output` except for ``multi:softmax`` (which
        returns probabilities here and class indices from ``output``).
        """
        return self.output(raw, xp)

    def refit_residuals(self, y, raw, xp):
        """Residuals ``y - raw`` of shape (n_samples,) for the leaf refit."""
        return xp.asarray(y, dtype=Y_DTYPE) - xp.asarray(raw, dtype=Y_DTYPE)

    # -- per-round hooks of the boosting loop --------------------------------

    @property
    def has_leaf_refit(self):
        """Whether the loop replaces leaf values by :meth:`refit_leaf_values`."""
        return self.refit_alpha is not None

    def begin_round(self, backend, y, raw, weight):
        """Called by the boosting loop once per round, before :meth:`gradients`.

        Objectives whose gradients depend on statistics of the whole round
        (``reg:huber`` with ``huber_alpha``) compute them here, with the
        backend's primitives. The default does nothing.

        Parameters
        ----------
        backend : gpuboost.backends.base.Backend
        y : backend array of shape (n_samples,)
        raw : backend array of shape (n_samples,) or (n_samples, n_outputs)
        weight : backend array of shape (n_samples,) or None
        """

    def refit_leaf_values(self, backend, y, raw, weight, sample_indices, begins, ends):
        """New values of a grown tree's leaves (before the learning rate).

        The default: per leaf, the weighted lower ``refit_alpha``-quantile of
        the residuals :meth:`refit_residuals` of its rows
        (``backend.segment_weighted_quantile``).

        Parameters
        ----------
        backend : gpuboost.backends.base.Backend
        y : backend array of shape (n_samples,)
            Labels.
        raw : backend array of shape (n_samples,), float64
            Margins of the tree's output column before the tree is added.
        weight : backend array of shape (n_samples,) or None
            Row weights (sample weights times the row-sampling multipliers).
        sample_indices : backend array, int32
            The tree's row partition.
        begins, ends : ndarray of int (host)
            The leaves' segments of ``sample_indices``, each non-empty.

        Returns
        -------
        values : ndarray of shape (n_leaves,), float64 (host)
        """
        residuals = self.refit_residuals(y, raw, backend.xp)
        return backend.segment_weighted_quantile(residuals, weight, sample_indices, begins,
                                                 ends, self.refit_alpha)


class _IdentityLinkMixin:
    """Identity link: any finite ``base_score`` is the margin itself."""

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: True, "finite")
        return np.array([value], dtype=Y_DTYPE)


class _LogLinkMixin:
    """Log link: prediction ``exp(F)``; base margin ``log(weighted mean)``."""

    def output(self, raw, xp):
        return xp.exp(xp.asarray(raw, dtype=Y_DTYPE))

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        weighted_mean = np.sum(weight * y) / np.sum(weight)
        weighted_mean = max(weighted_mean, LOG_LINK_MEAN_FLOOR)
        return np.array([np.log(weighted_mean)], dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: v > 0,
                                       "positive and finite")
        return np.array([np.log(value)], dtype=Y_DTYPE)


# ---------------------------------------------------------------------------
# Regression
# ---------------------------------------------------------------------------

class SquaredError(_IdentityLinkMixin, Objective):
    """``reg:squarederror``: loss ``(F - y)**2 / 2``.

    ``grad = F - y``, ``hess = 1``; base margin: the weighted mean.
    """

    name = "reg:squarederror"
    default_metric = "rmse"

    def _gradients(self, y, raw, xp):
        return raw - y, xp.ones_like(raw)

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([np.sum(weight * y) / np.sum(weight)], dtype=Y_DTYPE)


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

    def _gradients(self, y, raw, xp):
        return xp.sign(raw - y), xp.ones_like(raw)

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([weighted_quantile(y, weight, self.refit_alpha)],
                        dtype=Y_DTYPE)


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
        if (not isinstance(huber_delta, numbers.Real)
                or not np.isfinite(huber_delta) or huber_delta <= 0):
            raise ValueError(
                f"objective {self.name!r}: huber_delta must be a positive "
                f"finite number, got {huber_delta!r}")
        if huber_alpha is not None and (
                isinstance(huber_alpha, bool) or not isinstance(huber_alpha, numbers.Real)
                or not 0.0 < huber_alpha < 1.0):
            raise ValueError(
                f"objective {self.name!r}: huber_alpha must be None or in (0, 1), "
                f"got {huber_alpha!r}")
        self.huber_delta = float(huber_delta)
        self.huber_alpha = None if huber_alpha is None else float(huber_alpha)
        self.round_delta = self.huber_delta

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
        absolute_residuals = xp.ascontiguousarray(xp.abs(self.refit_residuals(y, raw, xp)))
        n_rows = int(absolute_residuals.shape[0])
        all_rows = xp.arange(n_rows, dtype=np.int32)
        self.round_delta = float(backend.segment_weighted_quantile(
            absolute_residuals, weight, all_rows, np.array([0]), np.array([n_rows]),
            self.huber_alpha)[0])

    def _gradients(self, y, raw, xp):
        grad = xp.clip(raw - y, -self.round_delta, self.round_delta)
        return grad, xp.ones_like(raw)

    def refit_leaf_values(self, backend, y, raw, weight, sample_indices, begins, ends):
        """Friedman's one-step Huber leaf values (see the class docstring)."""
        xp = backend.xp
        residuals = xp.ascontiguousarray(self.refit_residuals(y, raw, xp))
        medians = backend.segment_weighted_quantile(residuals, weight, sample_indices, begins,
                                                    ends, 0.5)
        leaf_median_of_row = xp.zeros((residuals.shape[0], 1), dtype=Y_DTYPE)
        backend.add_leaf_values(leaf_median_of_row, 0, sample_indices, begins, ends, medians)
        deviations = residuals - leaf_median_of_row[:, 0]
        clipped = xp.sign(deviations) * xp.minimum(xp.abs(deviations), self.round_delta)
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
        if (not isinstance(quantile_alpha, numbers.Real)
                or not 0.0 < quantile_alpha < 1.0):
            raise ValueError(
                f"objective {self.name!r}: quantile_alpha must be in (0, 1), "
                f"got {quantile_alpha!r}")
        self.quantile_alpha = float(quantile_alpha)
        self.refit_alpha = self.quantile_alpha
        self.default_metric = f"pinball@{_format_level(self.quantile_alpha)}"

    def get_params(self):
        return {"quantile_alpha": self.quantile_alpha}

    def _gradients(self, y, raw, xp):
        grad = xp.where(raw >= y, 1.0 - self.quantile_alpha,
                        -self.quantile_alpha)
        return grad, xp.ones_like(raw)

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        return np.array([weighted_quantile(y, weight, self.quantile_alpha)],
                        dtype=Y_DTYPE)


# ---------------------------------------------------------------------------
# Binary classification
# ---------------------------------------------------------------------------

def _clipped_weighted_mean(y, weight, who):
    """Weighted label mean clipped into ``[PROBABILITY_CLIP, 1 - CLIP]``."""
    y, weight = _host_label_and_weight(y, weight, who)
    probability = np.sum(weight * y) / np.sum(weight)
    return float(np.clip(probability, PROBABILITY_CLIP,
                         1.0 - PROBABILITY_CLIP))


def _check_probability(objective, base_score):
    return objective._check_base_score(
        base_score, lambda v: 0.0 < v < 1.0, "in the open interval (0, 1)")


class LogisticLoss(Objective):
    """``binary:logistic``: cross-entropy with the sigmoid link.

    Loss ``log(1 + exp(F)) - y * F`` with labels in ``[0, 1]`` (fractional
    labels allowed, as in XGBoost); with ``p = sigmoid(F)``:
    ``grad = p - y``, ``hess = max(p * (1 - p), HESSIAN_FLOOR)``.
    Prediction: ``p``. Base margin: log-odds of the weighted label mean,
    clipped to ``[PROBABILITY_CLIP, 1 - PROBABILITY_CLIP]``.
    """

    name = "binary:logistic"
    default_metric = "logloss"

    def _check_label_domain(self, y):
        bad = (y < 0) | (y > 1)
        if bad.any():
            self._label_error("labels must be in [0, 1]", y, bad)

    def _gradients(self, y, raw, xp):
        probability = _sigmoid(raw, xp)
        hess = xp.maximum(probability * (1.0 - probability), HESSIAN_FLOOR)
        return probability - y, hess

    def base_margin(self, y, weight):
        probability = _clipped_weighted_mean(y, weight, self.name)
        return np.array([np.log(probability / (1.0 - probability))],
                        dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        probability = _check_probability(self, base_score)
        return np.array([np.log(probability / (1.0 - probability))],
                        dtype=Y_DTYPE)

    def output(self, raw, xp):
        return _sigmoid(xp.asarray(raw, dtype=Y_DTYPE), xp)


class ExponentialLoss(Objective):
    """``binary:exponential``: the AdaBoost loss ``exp(-(2y - 1) F)``.

    Labels are 0 or 1; with ``s = 2y - 1`` and ``e = exp(-s F)``:
    ``grad = -s e``, ``hess = e``. Prediction: the probability
    ``1 / (1 + exp(-2F))``. Base margin: half the log-odds of the weighted
    label mean (clipped as for ``binary:logistic``), the exact minimizer.
    """

    name = "binary:exponential"
    default_metric = "logloss"

    def _check_label_domain(self, y):
        bad = (y != 0) & (y != 1)
        if bad.any():
            self._label_error("labels must be 0 or 1", y, bad)

    def _gradients(self, y, raw, xp):
        sign = 2.0 * y - 1.0
        exp_loss = xp.exp(-sign * raw)
        return -sign * exp_loss, exp_loss

    def base_margin(self, y, weight):
        probability = _clipped_weighted_mean(y, weight, self.name)
        return np.array([0.5 * np.log(probability / (1.0 - probability))],
                        dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        probability = _check_probability(self, base_score)
        return np.array([0.5 * np.log(probability / (1.0 - probability))],
                        dtype=Y_DTYPE)

    def output(self, raw, xp):
        return _sigmoid(2.0 * xp.asarray(raw, dtype=Y_DTYPE), xp)


# ---------------------------------------------------------------------------
# Multiclass
# ---------------------------------------------------------------------------

class SoftmaxLoss(Objective):
    """``multi:softprob``: softmax cross-entropy over ``num_class`` classes.

    Labels are class indices ``0 .. num_class - 1`` (stored as float64).
    Loss ``-log p_y`` with ``p = softmax(F)`` row-wise; for class ``k``:
    ``grad_k = p_k - [y == k]``,
    ``hess_k = max(MULTICLASS_HESSIAN_FACTOR * p_k * (1 - p_k),
    HESSIAN_FLOOR)`` (the diagonal of the softmax hessian).
    Prediction: the probabilities, shape (n_samples, num_class).
    Base margin: log of the weighted class priors (clipped to
    ``[PROBABILITY_CLIP, 1]``), centered to mean 0.

    Parameters
    ----------
    num_class : int
        Number of classes, at least 2.
    """

    name = "multi:softprob"
    default_metric = "mlogloss"

    def __init__(self, num_class):
        if (isinstance(num_class, bool)
                or not isinstance(num_class, numbers.Integral)
                or num_class < MIN_NUM_CLASS):
            raise ValueError(
                f"objective {self.name!r}: num_class must be an integer >= "
                f"{MIN_NUM_CLASS}, got {num_class!r}")
        self.num_class = int(num_class)

    def n_outputs(self):
        return self.num_class

    def get_params(self):
        return {"num_class": self.num_class}

    def _check_label_domain(self, y):
        bad = y != np.floor(y)
        if bad.any():
            self._label_error("labels must be integer class indices", y, bad)
        bad = (y < 0) | (y >= self.num_class)
        if bad.any():
            self._label_error(
                f"labels must be in [0, num_class) = [0, {self.num_class})",
                y, bad)

    def _gradients(self, y, raw, xp):
        probability = _softmax(raw, xp)
        classes = xp.arange(self.num_class, dtype=Y_DTYPE)
        one_hot = (y[:, None] == classes[None, :]).astype(Y_DTYPE)
        hess = xp.maximum(
            MULTICLASS_HESSIAN_FACTOR * probability * (1.0 - probability),
            HESSIAN_FLOOR)
        return probability - one_hot, hess

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        class_weight = np.bincount(y.astype(np.intp), weights=weight,
                                   minlength=self.num_class)
        priors = np.clip(class_weight / np.sum(weight), PROBABILITY_CLIP, 1.0)
        log_priors = np.log(priors)
        return (log_priors - np.mean(log_priors)).astype(Y_DTYPE)

    def base_score_to_margin(self, base_score):
        """``base_score`` added to every class margin (XGBoost semantics).

        A shift common to all classes leaves the probabilities unchanged
        (uniform), so any finite value is accepted and used as the margin.
        """
        value = self._check_base_score(base_score, lambda v: True, "finite")
        return np.full(self.num_class, value, dtype=Y_DTYPE)

    def output(self, raw, xp):
        return _softmax(xp.asarray(raw, dtype=Y_DTYPE), xp)


class SoftmaxClassLoss(SoftmaxLoss):
    """``multi:softmax``: as ``multi:softprob``, predicting class indices.

    :meth:`output` returns the index of the largest margin of each row
    (lowest index on ties) as float64, shape (n_samples,); :meth:`mean`
    returns the probabilities, shape (n_samples, num_class).
    """

    name = "multi:softmax"

    def output(self, raw, xp):
        raw = xp.asarray(raw, dtype=Y_DTYPE)
        return xp.argmax(raw, axis=1).astype(Y_DTYPE)

    def mean(self, raw, xp):
        return _softmax(xp.asarray(raw, dtype=Y_DTYPE), xp)


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

    name = "count:poisson"
    default_metric = "poisson-nloglik"

    def __init__(self, max_delta_step=POISSON_MAX_DELTA_STEP):
        if (not isinstance(max_delta_step, numbers.Real)
                or not np.isfinite(max_delta_step) or max_delta_step < 0):
            raise ValueError(
                f"objective {self.name!r}: max_delta_step must be a "
                f"non-negative finite number, got {max_delta_step!r}")
        self.max_delta_step = float(max_delta_step)

    def get_params(self):
        return {"max_delta_step": self.max_delta_step}

    def _check_label_domain(self, y):
        bad = y < 0
        if bad.any():
            self._label_error("labels must be non-negative", y, bad)

    def _gradients(self, y, raw, xp):
        return xp.exp(raw) - y, xp.exp(raw + self.max_delta_step)


class GammaLoss(_LogLinkMixin, Objective):
    """``reg:gamma``: gamma negative log-likelihood (up to constants).

    Log link. Loss ``y * exp(-F) + F`` (labels > 0);
    ``grad = 1 - y * exp(-F)``, ``hess = y * exp(-F)``. Prediction
    ``exp(F)``; base margin ``log`` of the weighted label mean (the exact
    minimizer).
    """

    name = "reg:gamma"
    default_metric = "gamma-nloglik"

    def _check_label_domain(self, y):
        bad = y <= 0
        if bad.any():
            self._label_error("labels must be positive (> 0)", y, bad)

    def _gradients(self, y, raw, xp):
        scaled_label = y * xp.exp(-raw)
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

    name = "reg:tweedie"

    def __init__(self, tweedie_variance_power=DEFAULT_TWEEDIE_VARIANCE_POWER):
        low, high = TWEEDIE_VARIANCE_POWER_RANGE
        if (not isinstance(tweedie_variance_power, numbers.Real)
                or not low <= tweedie_variance_power < high):
            raise ValueError(
                f"objective {self.name!r}: tweedie_variance_power must be in "
                f"[{low}, {high}), got {tweedie_variance_power!r}")
        self.tweedie_variance_power = float(tweedie_variance_power)
        self.default_metric = (
            f"tweedie-nloglik@{_format_level(self.tweedie_variance_power)}")

    def get_params(self):
        return {"tweedie_variance_power": self.tweedie_variance_power}

    def _check_label_domain(self, y):
        bad = y < 0
        if bad.any():
            self._label_error("labels must be non-negative", y, bad)

    def _gradients(self, y, raw, xp):
        rho = self.tweedie_variance_power
        exp_one = xp.exp((1.0 - rho) * raw)
        exp_two = xp.exp((2.0 - rho) * raw)
        grad = -y * exp_one + exp_two
        hess = -y * (1.0 - rho) * exp_one + (2.0 - rho) * exp_two
        return grad, hess


# ---------------------------------------------------------------------------
# Custom objective
# ---------------------------------------------------------------------------

#: The objective name recorded in a model trained with a user callable.
CUSTOM_OBJECTIVE_NAME = "custom"


class CustomObjective(_IdentityLinkMixin, Objective):
    """A user objective ``func(raw_margin, dataset) -> (grad, hess)``.

    As with XGBoost's ``obj=``: ``func`` receives the raw margins as a host
    NumPy array of shape (n_samples,) or (n_samples, n_outputs) and the
    training dataset (passed through unchanged), and returns gradient and
    hessian, each of the shape of the margins or, when ``n_outputs > 1``,
    flat of size ``n_samples * n_outputs`` in row-major order (element
    ``i * n_outputs + k`` is row ``i``, class ``k``).

    The returned values are used as they are: sample weights are NOT
    applied (``func`` can read them from the dataset), as in XGBoost.
    The link is the identity: predictions are raw margins, the base margin
    is 0 and ``base_score`` is used as the margin.

    Parameters
    ----------
    func : callable
    n_outputs : int, default=1
        Number of margin columns.
    """

    name = "custom"
    default_metric = "rmse"

    def __init__(self, func, n_outputs=1):
        if func is not None and not callable(func):
            raise TypeError(
                f"CustomObjective: func must be callable, got {func!r}")
        if (isinstance(n_outputs, bool)
                or not isinstance(n_outputs, numbers.Integral)
                or n_outputs < 1):
            raise ValueError(
                "CustomObjective: n_outputs must be a positive integer, got "
                f"{n_outputs!r}")
        self.func = func
        self._n_outputs = int(n_outputs)

    def n_outputs(self):
        return self._n_outputs

    def get_params(self):
        return {"func": self.func, "n_outputs": self._n_outputs}

    def gradients(self, y, raw, weight, xp, dataset=None):
        """Call ``func(raw_as_numpy, dataset)`` and validate its result.

        ``y`` and ``weight`` are not used (see the class docstring).

        Returns
        -------
        grad, hess : arrays of the shape of ``raw``, dtype float64

        Raises
        ------
        ValueError
            If ``func`` does not return two arrays of the expected shape,
            convertible to float64, with finite values.
        """
        raw = xp.asarray(raw, dtype=Y_DTYPE)
        if self.func is None:
            raise ValueError(
                "this model was trained with a custom objective, which is not "
                "saved in the model file; pass obj= to train() to continue training")
        result = self.func(_to_host(raw, xp), dataset)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise ValueError(
                "custom objective must return a pair (grad, hess), got "
                f"{type(result).__name__}")
        grad = self._validated(result[0], "grad", raw.shape)
        hess = self._validated(result[1], "hess", raw.shape)
        return xp.asarray(grad), xp.asarray(hess)

    @staticmethod
    def _validated(values, what, raw_shape):
        """Return ``values`` as a float64 host array of shape ``raw_shape``."""
        if np.iscomplexobj(values):
            raise ValueError(
                f"custom objective returned a complex {what}; real values "
                "are required")
        try:
            values = np.asarray(values, dtype=Y_DTYPE)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"custom objective returned a {what} that cannot be "
                f"converted to float64: {error}") from None
        flat_size = int(np.prod(raw_shape))
        if values.shape != raw_shape:
            if len(raw_shape) == 2 and values.shape == (flat_size,):
                values = values.reshape(raw_shape)
            else:
                expected = f"{raw_shape}"
                if len(raw_shape) == 2:
                    expected += f" or ({flat_size},)"
                raise ValueError(
                    f"custom objective returned {what} of shape "
                    f"{values.shape}; expected {expected}")
        if not np.isfinite(values).all():
            raise ValueError(
                f"custom objective returned a {what} with NaN or infinite "
                "values")
        return values

    def base_margin(self, y, weight):
        return np.zeros(self._n_outputs, dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: True, "finite")
        return np.full(self._n_outputs, value, dtype=Y_DTYPE)


# ---------------------------------------------------------------------------
# Factory
# ---------------------------------------------------------------------------

_OBJECTIVE_CLASSES = {
    SquaredError.name: SquaredError,
    AbsoluteError.name: AbsoluteError,
    HuberError.name: HuberError,
    QuantileError.name: QuantileError,
    LogisticLoss.name: LogisticLoss,
    ExponentialLoss.name: ExponentialLoss,
    SoftmaxClassLoss.name: SoftmaxClassLoss,
    SoftmaxLoss.name: SoftmaxLoss,
    PoissonLoss.name: PoissonLoss,
    GammaLoss.name: GammaLoss,
    TweedieLoss.name: TweedieLoss,
}
# The ranking objectives live in gpuboost/ranking.py (they subclass Objective,
# defined above, hence the import here).
from .ranking import RANKING_OBJECTIVE_CLASSES  # noqa: E402
_OBJECTIVE_CLASSES.update(RANKING_OBJECTIVE_CLASSES)

#: Names accepted by :func:`get_objective`.
OBJECTIVES = tuple(_OBJECTIVE_CLASSES)


def get_objective(name_or_callable, params=None):
    """Build an objective from its name (or a callable for a custom one).

    Parameters
    ----------
    name_or_callable : str, callable or Objective
        One of :data:`OBJECTIVES`; a callable ``func(raw_margin, dataset)
        -> (grad, hess)`` (wrapped in :class:`CustomObjective`); or an
        :class:`Objective` instance, returned unchanged.
    params : dict or None
        Already-validated parameter values. Keys used: ``num_class``
        (``multi:*``, and the number of outputs of a custom objective when
        greater than 1), ``huber_delta``, ``huber_alpha``, ``quantile_alpha``,
        ``tweedie_variance_power``, ``lambdarank_truncation_level``
        (``rank:*``). Missing keys take the defaults; other keys are ignored.

    Returns
    -------
    objective : Objective

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid names) or a
        parameter is invalid for the objective.
    TypeError
        If ``name_or_callable`` is neither a string nor callable.
    """
    params = {} if params is None else params
    if isinstance(name_or_callable, Objective):
        return name_or_callable
    if isinstance(name_or_callable, str) and name_or_callable != CUSTOM_OBJECTIVE_NAME:
        name = name_or_callable
        if name not in _OBJECTIVE_CLASSES:
            raise ValueError(
                f"unknown objective {name!r}; valid objectives are: "
                f"{', '.join(OBJECTIVES)}")
        if name in (SoftmaxLoss.name, SoftmaxClassLoss.name):
            num_class = params.get("num_class")
            if num_class is None:
                raise ValueError(
                    f"objective {name!r} requires the parameter num_class "
                    f"(an integer >= {MIN_NUM_CLASS})")
            return _OBJECTIVE_CLASSES[name](num_class=num_class)
        if name == HuberError.name:
            return HuberError(
                huber_delta=params.get("huber_delta", DEFAULT_HUBER_DELTA),
                huber_alpha=params.get("huber_alpha"))
        if name == QuantileError.name:
            return QuantileError(quantile_alpha=params.get(
                "quantile_alpha", DEFAULT_QUANTILE_ALPHA))
        if name == TweedieLoss.name:
            return TweedieLoss(tweedie_variance_power=params.get(
                "tweedie_variance_power", DEFAULT_TWEEDIE_VARIANCE_POWER))
        if name in RANKING_OBJECTIVE_CLASSES:
            return RANKING_OBJECTIVE_CLASSES[name].from_params(params)
        return _OBJECTIVE_CLASSES[name]()
    if callable(name_or_callable) or name_or_callable == CUSTOM_OBJECTIVE_NAME:
        # A saved model records a custom objective by name only: it predicts
        # raw margins (identity output) and cannot compute gradients.
        func = name_or_callable if callable(name_or_callable) else None
        num_class = params.get("num_class")
        n_outputs = num_class if num_class is not None and num_class > 1 else 1
        return CustomObjective(func, n_outputs=n_outputs)
    raise TypeError(
        "objective must be a string or a callable, got "
        f"{type(name_or_callable).__name__}")
