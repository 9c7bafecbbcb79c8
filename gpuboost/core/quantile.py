"""Weighted quantiles on the host: the one definition every backend follows.

The leaf refit of ``reg:absoluteerror``, ``reg:quantile`` and ``reg:huber``
(:mod:`gpuboost.objectives.regression`) and the backends' per-segment primitive
``segment_weighted_quantile`` (NumPy: a loop over this function; CUDA:
``cuda/leaf.cu``) all compute :func:`weighted_quantile`.
"""

import numpy as np

from .dtypes import Y_DTYPE

__all__ = ["weighted_quantile", "check_host_weights"]


def weighted_quantile(values, weights, alpha):
    """Deterministic weighted 'lower' quantile of a 1-D sample (NumPy, host).

    Definition (the same in every backend, including the segmented per-leaf
    primitive used to refit leaf values):

    1. sort ``values`` ascending (ties may be in any order: they have equal
       values, so the result does not depend on it), carrying the weights
       along;
    2. ``cum[i] = weights_sorted[0] + ... + weights_sorted[i]``, accumulated
       in float64 in sorted order; the total weight is ``cum[-1]``;
    3. the result is ``values_sorted[i]`` for the smallest ``i`` with
       ``cum[i] >= alpha * cum[-1]`` (the product computed in float64).

    With unit weights this is ``np.quantile(values, alpha,
    method='inverted_cdf')``. Rows of zero weight are never returned, except
    that ``alpha == 0`` returns the smallest value.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        The sample; must not contain NaN.
    weights : array-like of shape (n_samples,) or None
        Non-negative finite weights with a positive total; None means unit
        weights.
    alpha : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    quantile : float
        An element of ``values``.
    """
    values = np.asarray(values, dtype=Y_DTYPE)
    if values.ndim != 1 or values.shape[0] == 0:
        raise ValueError(
            f"weighted_quantile: values must be a non-empty 1-D array, got shape {values.shape}"
        )
    if np.isnan(values).any():
        raise ValueError("weighted_quantile: values contain NaN")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"weighted_quantile: alpha must be in [0, 1], got {alpha!r}")
    weights = check_host_weights(weights, values.shape[0], "weighted_quantile")
    order = np.argsort(values, kind="stable")
    cumulative_weight = np.cumsum(weights[order])
    target = alpha * cumulative_weight[-1]
    position = np.searchsorted(cumulative_weight, target, side="left")
    position = min(int(position), values.shape[0] - 1)
    return float(values[order[position]])


def check_host_weights(weights, n_samples, who):
    """Validate host sample weights; return float64 weights (unit if None).

    Parameters
    ----------
    weights : array-like of shape (n_samples,) or None
    n_samples : int
    who : str
        Name used in error messages.

    Returns
    -------
    weights : ndarray of shape (n_samples,), dtype float64

    Raises
    ------
    ValueError
        A wrong shape, a NaN or infinite weight, a negative weight, or a total
        weight that is not positive.
    """
    if weights is None:
        return np.ones(n_samples, dtype=Y_DTYPE)
    weights = np.asarray(weights, dtype=Y_DTYPE)
    if weights.shape != (n_samples,):
        raise ValueError(f"{who}: weights must have shape ({n_samples},), got {weights.shape}")
    if not np.isfinite(weights).all():
        raise ValueError(f"{who}: weights contain NaN or infinite values")
    if (weights < 0).any():
        raise ValueError(f"{who}: weights must be non-negative")
    if not weights.sum() > 0:
        raise ValueError(f"{who}: the total weight must be positive")
    return weights
