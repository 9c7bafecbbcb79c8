"""The training-objective interface, its link mixins and shared helpers.

An objective supplies gradients, hessians, the optimal constant margin, the
transform of margins to predictions and, for some, a leaf refit. The
objectives themselves live by family:

* :mod:`gpuboost.objectives.regression`: squared error, absolute error,
  Huber, quantile, Poisson, gamma, Tweedie;
* :mod:`gpuboost.objectives.classification`: logistic, exponential, softmax;
* :mod:`gpuboost.objectives.ranking`: the LambdaMART objectives;
* :mod:`gpuboost.objectives.custom`: a user callable;

and :mod:`gpuboost.objectives.registry` builds them by name.

Every objective is backend agnostic: the per-row computations (``gradients``,
``output``, ``mean``, ``refit_residuals``) take the array module ``xp``
(``numpy`` or ``cupy``) as their first argument and use only functions both modules
provide, with no Python loop over rows. The one-off computations that run once
per training (``check_labels``, ``base_margin``, ``base_score_to_margin``) run
on the host with NumPy.

All labels, weights, margins, gradients and hessians are float64
(:data:`gpuboost.core.dtypes.Y_DTYPE`). When a sample weight is given, the
objective returns ``grad * weight`` and ``hess * weight``; callers must not
apply the weight again.

CPU/GPU contract
----------------
The only transcendental functions used on row data are
:mod:`gpuboost.core.strict_math`'s ``exp`` and ``log`` (the same bits on every CPU and
GPU, never the array module's); everything else is ``+ - * /``, comparisons, ``abs``,
``sign``, ``clip``, ``maximum``/``minimum``, ``where`` and ``argmax``. Sums over the
classes of a row are accumulated left to right in class order, never with a
reduction whose order the library chooses, and sums over rows are
:mod:`gpuboost.core.reproducible_sum`'s. Hence NumPy and CuPy give the same bits
(docs/DESIGN.md, "Platform-independent arithmetic").

Overflow
--------
The formulas are used as written (as XGBoost does). Objectives with an
exponential term (``binary:exponential``, ``count:poisson``, ``reg:gamma``,
``reg:tweedie``) overflow to ``inf`` for margins beyond roughly +-700. The
sigmoid and the softmax are written so that they never overflow.
"""

import numpy as np

from ..core import strict_math
from ..core.dtypes import Y_DTYPE
from ..core.quantile import check_host_weights
from ..core.reproducible_sum import reproducible_mean

__all__ = ["Objective", "LOG_LINK_MEAN_FLOOR"]

#: Weighted label means are floored at ``LOG_LINK_MEAN_FLOOR`` before the
#: log link is applied in ``base_margin`` (all-zero Poisson/Tweedie labels).
LOG_LINK_MEAN_FLOOR = 1e-7


# ---------------------------------------------------------------------------
# Host helpers
# ---------------------------------------------------------------------------


def _host_label_and_weight(y, weight, who):
    """Return labels and weights as validated float64 host arrays.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels; must be a non-empty 1-D array.
    weight : array-like of shape (n_samples,) or None
        Sample weights (see :func:`gpuboost.core.quantile.check_host_weights`).
    who : str
        Name used in error messages (the objective's name).

    Returns
    -------
    y, weight : ndarray of shape (n_samples,), float64
        ``weight`` is all ones when None was given.
    """
    y = np.asarray(y, dtype=Y_DTYPE)
    if y.ndim != 1 or y.shape[0] == 0:
        raise ValueError(f"{who}: labels must be a non-empty 1-D array, got shape {y.shape}")
    return y, check_host_weights(weight, y.shape[0], who)


# ---------------------------------------------------------------------------
# Array-module helpers (row data)
# ---------------------------------------------------------------------------


def _sigmoid(xp, x):
    """``1 / (1 + exp(-x))`` without overflow, using ``exp`` only.

    ``e = exp(-|x|)`` is in ``(0, 1]``; the result is ``1 / (1 + e)`` for
    ``x >= 0`` and ``e / (1 + e)`` for ``x < 0``.

    Parameters
    ----------
    xp : module
        The array module (``numpy`` or ``cupy``).
    x : array of any shape, float64

    Returns
    -------
    array of the shape of ``x``, float64, in ``[0, 1]``
    """
    e = strict_math.exp(xp, -xp.abs(x))
    one_plus_e = 1.0 + e
    return xp.where(x >= 0, 1.0 / one_plus_e, e / one_plus_e)


def _sign(xp, x):
    """``np.sign`` on every array module: NaN stays NaN (CuPy's ``sign`` gives 0 for NaN,
    which would hide a NaN margin on a GPU where the CPU raises).

    Parameters
    ----------
    xp : module
    x : array of any shape, float64

    Returns
    -------
    array of the shape of ``x``, float64: -1, 0 or 1, and ``x`` itself where it is NaN
    """
    return xp.where(x != x, x, xp.sign(x))


def _softmax(xp, raw):
    """Row-wise softmax of ``raw`` (n, K) without overflow.

    The row maximum is subtracted before ``exp``, so every exponent is
    ``<= 0`` and the largest term of each row is exactly 1. The row sum is
    accumulated left to right in class order (a loop over the K classes,
    not over rows), so that both backends add in the same order.

    Parameters
    ----------
    xp : module
        The array module (``numpy`` or ``cupy``).
    raw : array of shape (n_samples, n_classes), float64

    Returns
    -------
    array of shape (n_samples, n_classes), float64
        Each row sums to 1 (up to rounding).
    """
    shifted = raw - xp.max(raw, axis=1, keepdims=True)
    exp_shifted = strict_math.exp(xp, shifted)
    row_sum = exp_shifted[:, 0].copy()
    for k in range(1, raw.shape[1]):
        row_sum = row_sum + exp_shifted[:, k]
    return exp_shifted / row_sum[:, None]


def _apply_weight(xp, grad, hess, weight):
    """Return ``(grad * weight, hess * weight)``, or the inputs if ``weight`` is None.

    Parameters
    ----------
    xp : module
        The array module (``numpy`` or ``cupy``).
    grad, hess : arrays of shape (n_samples,) or (n_samples, n_outputs)
    weight : array of shape (n_samples,) or None
        Row weights, broadcast over the outputs of a row.

    Returns
    -------
    grad, hess : arrays of the shape of the inputs
    """
    if weight is None:
        return grad, hess
    weight = xp.asarray(weight, dtype=Y_DTYPE)
    if grad.ndim == 2:
        weight = weight[:, None]
    return grad * weight, hess * weight


def _target_objective_names():
    """The names of the objectives that take several targets (``supports_targets``)."""
    names, pending = set(), list(Objective.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.supports_targets and cls.name:
            names.add(cls.name)
    return sorted(names)


# ---------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------


class Objective:
    """Base class of the training objectives.

    Subclasses set the class attributes below and implement ``_gradients``
    (unweighted gradient and hessian), ``base_margin``,
    ``base_score_to_margin`` and, if the link is not the identity,
    ``output``; those with parameters override :meth:`from_params`, which
    :func:`gpuboost.objectives.registry.get_objective` calls.

    Attributes
    ----------
    name : str
        The XGBoost objective name, e.g. ``'reg:squarederror'``.
    default_metric : str
        Name of the evaluation metric used when none is given.
    refit_alpha : float or None
        If not None, after a tree is grown the backend replaces each leaf
        value by the :func:`~gpuboost.core.quantile.weighted_quantile` (level
        ``refit_alpha``) of the residuals :meth:`refit_residuals` of the rows
        in the leaf (the default :meth:`refit_leaf_values`).
    """

    name = None
    default_metric = None
    refit_alpha = None
    #: Whether the objective's labels are intervals (``label_lower_bound`` /
    #: ``label_upper_bound``; ``survival:aft``) rather than one value per row.
    takes_label_bounds = False
    #: Whether a row's gradient depends on its own label, weight and margin only; False
    #: where it sums over other rows (``survival:cox``: the risk sets), so that
    #: distributed training computes the gradients of all rows in one place
    #: (gpuboost.dask.train).
    row_local_gradients = True
    #: Whether the objective takes several targets (a label of shape (n_samples, k), one
    #: margin column per target): its loss, gradients, link and base margin are those of
    #: each column on its own (elementwise objectives without a leaf refit).
    supports_targets = False
    #: Targets (label columns) of this instance (:meth:`with_targets`); 1 by default.
    n_targets = 1

    @classmethod
    def from_params(cls, params):
        """Build the objective from validated training parameters.

        Parameters
        ----------
        params : dict
            Already-validated parameter values (:func:`gpuboost.params.validate_params`).
            Subclasses read the keys they use; a missing key takes the default of
            the parameter table (:data:`gpuboost.params.PARAMETERS`); other keys
            are ignored.

        Returns
        -------
        objective : Objective
        """
        return cls()

    def n_outputs(self):
        """Number of margin columns: 1, ``num_class`` for ``multi:*``, the number of
        targets for several (:meth:`with_targets`)."""
        return self.n_targets

    def with_targets(self, n_targets):
        """This objective for ``n_targets`` label columns (``num_target``; 0 or 1: one);
        ``self`` for one.

        Raises
        ------
        ValueError
            Several targets for an objective that takes one label per row.
        """
        n_targets = max(1, int(n_targets))
        if n_targets == 1:
            return self
        if not self.supports_targets:
            raise ValueError(
                f"objective {self.name!r} takes one label per row, but the labels have "
                f"{n_targets} columns (num_target={n_targets}); several targets are "
                f"trained with {', '.join(map(repr, _target_objective_names()))}, or "
                f"train one model per column."
            )
        self.n_targets = n_targets
        return self

    def get_params(self):
        """Return the objective parameters as a dict (for model files)."""
        return {}

    def __repr__(self):
        params = ", ".join(f"{key}={value!r}" for key, value in self.get_params().items())
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
        if self.n_targets > 1:
            if y.ndim != 2 or y.shape[1] != self.n_targets:
                raise ValueError(
                    f"objective {self.name!r} with {self.n_targets} targets needs labels of "
                    f"shape (n_samples, {self.n_targets}), got shape {y.shape}"
                )
            for column in range(self.n_targets):
                self._check_finite_labels(np.ascontiguousarray(y[:, column]))
            return
        if y.ndim == 2 and y.shape[1] == 2:
            raise ValueError(
                f"objective {self.name!r} takes one label per row (label=), but the Dataset "
                f"has interval labels (label_lower_bound / label_upper_bound), which only "
                f"'survival:aft' takes"
            )
        if y.ndim != 1:
            raise ValueError(
                f"objective {self.name!r}: labels must be a 1-D array, got shape {y.shape}"
                + (
                    "; several targets (one label column each) are trained by "
                    "objectives that take them (num_target, docs/DESIGN.md 'Vector leaves')"
                    if y.ndim == 2
                    else ""
                )
            )
        self._check_finite_labels(y)

    def _check_finite_labels(self, y):
        """The checks of :meth:`check_labels` on one column of finite-to-be labels."""
        if not np.isfinite(y).all():
            n_bad = int((~np.isfinite(y)).sum())
            raise ValueError(
                f"objective {self.name!r}: labels contain {n_bad} NaN or infinite value(s)"
            )
        self._check_label_domain(y)

    def _check_label_domain(self, y):
        """Objective-specific label checks on finite host labels."""

    def _label_error(self, problem, y, bad):
        """Raise a ValueError about the labels ``y[bad]``."""
        n_bad = int(bad.sum())
        example = float(y[bad][0])
        raise ValueError(
            f"objective {self.name!r}: {problem}; found {n_bad} invalid label(s), e.g. {example!r}"
        )

    # -- gradients ---------------------------------------------------------

    def gradients(self, xp, y, raw, weight, dataset=None):
        """Gradient and hessian of the loss with respect to the margins.

        Parameters
        ----------
        xp : module
            The array module (``numpy`` or ``cupy``).
        y : array of shape (n_samples,)
            Labels (an ``xp`` array).
        raw : array of shape (n_samples,) or (n_samples, n_outputs)
            Raw predictions (margins); two-dimensional iff ``n_outputs() > 1``.
        weight : array of shape (n_samples,) or None
            Sample weights; if given, gradient and hessian are multiplied by
            them.
        dataset : object, optional
            Passed through to a custom objective; ignored otherwise.

        Returns
        -------
        grad, hess : arrays of the shape of ``raw``, dtype float64
        """
        y = xp.asarray(y, dtype=Y_DTYPE)
        raw = xp.asarray(raw, dtype=Y_DTYPE)
        self._check_raw_shape(y, raw)
        grad, hess = self._gradients(xp, y, raw)
        return _apply_weight(xp, grad, hess, weight)

    def _check_raw_shape(self, y, raw):
        n_outputs = self.n_outputs()
        expected = (y.shape[0],) if n_outputs == 1 else (y.shape[0], n_outputs)
        if raw.shape != expected:
            raise ValueError(
                f"objective {self.name!r}: raw predictions must have shape "
                f"{expected}, got {raw.shape}"
            )

    def _gradients(self, xp, y, raw):
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

    def target_base_margin(self, y, weight):
        """:meth:`base_margin`, of each target column on its own for several targets
        (ndarray of shape (n_outputs,), float64, host)."""
        if self.n_targets == 1:
            return self.base_margin(y, weight)
        y = np.asarray(y, dtype=Y_DTYPE)
        return np.concatenate(
            [self.base_margin(np.ascontiguousarray(y[:, t]), weight) for t in range(y.shape[1])]
        )

    def target_base_score_to_margin(self, base_score):
        """:meth:`base_score_to_margin`, the same margin for every target column."""
        return np.tile(self.base_score_to_margin(base_score), self.n_targets)

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
                f"objective {self.name!r}: base_score must be a number, got {base_score!r}"
            ) from None
        if not (np.isfinite(value) and condition(value)):
            raise ValueError(
                f"objective {self.name!r}: base_score must be {domain}, got {base_score!r}"
            )
        return value

    # -- transforms --------------------------------------------------------

    def output(self, xp, raw):
        """Transform margins to what ``Booster.predict`` returns.

        Parameters
        ----------
        xp : module
            The array module (``numpy`` or ``cupy``).
        raw : array of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        prediction : array of shape (n_samples,) or (n_samples, n_outputs)
            The identity here; subclasses apply their inverse link.
        """
        return xp.asarray(raw, dtype=Y_DTYPE)

    def mean(self, xp, raw):
        """Transform margins to the space evaluation metrics use.

        The same as :meth:`output` except for ``multi:softmax`` (which
        returns probabilities here and class indices from ``output``).
        """
        return self.output(xp, raw)

    def refit_residuals(self, xp, y, raw):
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

    def refit_level(self, output):
        """The quantile level the leaves of output ``output``'s trees are refit to
        (``refit_alpha``; per output for several levels)."""
        return self.refit_alpha

    def refit_leaf_values(self, backend, y, raw, weight, sample_indices, begins, ends, output=0):
        """New values of a grown tree's leaves (before the learning rate).

        The default: per leaf, the weighted lower :meth:`refit_level` quantile of
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
        output : int
            The tree's output column.

        Returns
        -------
        values : ndarray of shape (n_leaves,), float64 (host)
        """
        residuals = self.refit_residuals(backend.xp, y, raw)
        return backend.segment_weighted_quantile(
            residuals, weight, sample_indices, begins, ends, self.refit_level(output)
        )


class _IdentityLinkMixin:
    """Identity link: any finite ``base_score`` is the margin itself."""

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: True, "finite")
        return np.array([value], dtype=Y_DTYPE)


class _LogLinkMixin:
    """Log link: prediction ``exp(F)``; base margin ``log(weighted mean)``."""

    def output(self, xp, raw):
        return strict_math.exp(xp, xp.asarray(raw, dtype=Y_DTYPE))

    def base_margin(self, y, weight):
        y, weight = _host_label_and_weight(y, weight, self.name)
        weighted_mean = float(reproducible_mean(np, y, weight))
        weighted_mean = max(weighted_mean, LOG_LINK_MEAN_FLOOR)
        return np.array([strict_math.log(np, weighted_mean)], dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: v > 0, "positive and finite")
        return np.array([strict_math.log(np, value)], dtype=Y_DTYPE)
