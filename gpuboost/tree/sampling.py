"""Row sampling for one tree: bagging, GOSS and gradient-based sampling.

The boosting loop calls :func:`sample_rows` once per tree (per round and output
column), after the objective and before quantization. It returns the rows the
tree is grown on and, for the gradient-weighted strategies, per-row multipliers
of the gradients and hessians. The loop multiplies the float64 gradients and
hessians by the multipliers *before* quantizing them, so every histogram sum
stays an exact integer sum (docs/DESIGN.md, "Quantization").

Strategies
----------
``data_sample_strategy='bagging'``, ``sampling_method='uniform'`` (default)
    Row ``r`` is kept when ``u[r] < subsample``; no multipliers. This is
    :meth:`gpuboost.backends.base.Backend.row_sample`, unchanged, so models
    trained before this module existed are reproduced bit for bit.

``data_sample_strategy='goss'`` (LightGBM's Gradient-based One-Side Sampling)
    With ``a = top_rate``, ``b = other_rate`` and ``n`` rows: the
    ``n_top = floor(a * n)`` rows with the largest ``|g|`` are kept with
    multiplier 1, ties broken by the lower row id (:func:`goss_top_rows`: a
    threshold value, then the tied rows in row order), so the chosen set is the
    same on every backend. Every other row is kept when ``u[r] < b / (1 - a)`` and gets
    the multiplier ``(1 - a) / b``, the inverse of its probability of being
    kept, so that gradient sums stay unbiased. The rest are dropped
    (multiplier 0). The expected sample size is ``(a + b) * n``.

    Differences from LightGBM: the top rows are ranked by ``|g|`` (as in the
    GOSS paper; LightGBM ranks by ``|g * h|`` summed over the classes), the
    other rows are drawn independently (Bernoulli) rather than as a fixed-size
    subset, and sampling starts at the first round (LightGBM skips it for the
    first ``1 / learning_rate`` rounds). For multi-class objectives every class
    tree ranks and samples on its own gradient column (its own random stream).

``sampling_method='gradient_based'`` (XGBoost), with ``subsample < 1``
    Each row has the magnitude ``v = sqrt(g**2 + reg_lambda * h**2)`` and is kept
    with probability ``p = min(1, v / u)``, weighted by ``1 / p``, where ``u`` is
    chosen so that ``sum(p) = m = max(1, floor(subsample * n))``. To make ``u``
    exact and identical on every backend, the magnitudes are quantized to
    integers ``q`` (``gpuboost.core.quantize.quantize``: ``q = rint(v * 2**30 /
    max v)``) and ``u`` is solved in integer arithmetic: with ``q`` sorted in
    descending order and ``S_k = q_k + q_{k+1} + ...`` (int64), the number of
    rows certain to be kept is the smallest ``k`` with ``q_k * (m - k) <= S_k``,
    and then ``p = min(1, q * (m - k) / S_k)`` (one float64 division per row).
    Rows whose magnitude quantizes to 0 (below ``2**-31`` of the largest) are
    never kept. With ``subsample == 1`` every row is kept with multiplier 1,
    as XGBoost's formula gives.

Per-row randomness is :func:`gpuboost.core.random.row_uniforms` of ``(seed,
stream)`` (the same stream for all strategies, which exclude one another), and
every step is an elementwise ``xp`` operation, a sort or an integer cumulative
sum, so NumPy and CuPy give the same rows and the same multipliers. Only two
scalars per tree cross from the device to the host (gradient-based sampling).
"""

import numpy as np

from ..core.dtypes import SAMPLE_INDEX_DTYPE
from ..core.quantize import quantize
from ..core.random import row_uniforms

__all__ = [
    "sample_rows",
    "sampled_row_weights",
    "goss_sample",
    "goss_top_rows",
    "goss_top_count",
    "goss_keep",
    "gradient_based_sample",
    "goss_sample_naive",
    "gradient_based_probabilities",
    "gradient_based_probabilities_naive",
]

#: Multiplier of the rows that are not sampled.
DROPPED_MULTIPLIER = 0.0


def sample_rows(backend, params, gradients, hessians, seed, stream):
    """The rows one tree is grown on, and the multipliers of their gradients.

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    params : dict
        Validated parameters (``subsample``, ``data_sample_strategy``,
        ``top_rate``, ``other_rate``, ``sampling_method``, ``reg_lambda``).
    gradients, hessians : backend arrays of shape (n_rows,), float64
        This tree's column (already multiplied by the sample weights).
    seed : int
    stream : int
        Random stream of this tree (see :func:`gpuboost.core.random.row_uniforms`).

    Returns
    -------
    sample_indices : backend array of shape (n_samples,), int32
        Kept row ids in increasing order.
    multipliers : backend array of shape (n_rows,), float64, or None
        Factor of each row's gradient and hessian (0 for dropped rows); None
        means 1 for every row.
    """
    n_rows = int(gradients.shape[0])
    if params["data_sample_strategy"] == "goss":
        return goss_sample(
            backend.xp, gradients, seed, stream, params["top_rate"], params["other_rate"]
        )
    if params["sampling_method"] == "gradient_based" and params["subsample"] < 1.0:
        return gradient_based_sample(
            backend.xp, gradients, hessians, seed, stream, params["subsample"], params["reg_lambda"]
        )
    return backend.row_sample(n_rows, seed, stream, params["subsample"]), None


# ---- GOSS -----------------------------------------------------------------------------
def goss_top_count(n_rows, top_rate):
    """Number of rows GOSS keeps for their large gradients: ``floor(top_rate * n_rows)``."""
    return int(np.floor(float(top_rate) * n_rows))


def goss_top_rows(xp, magnitudes, n_top):
    """Mask of the ``n_top`` rows of largest magnitude, ties broken by the lower row id.

    Selection by value, without a sort of the rows: ``threshold`` is the
    ``n_top``-th largest magnitude (``xp.partition``, which returns values, so
    any algorithm gives the same one); every row above it is taken, then the
    rows equal to it in increasing row order until ``n_top`` are taken.

    Parameters
    ----------
    xp : module
    magnitudes : array of shape (n_rows,), float64
        Non-negative, not NaN.
    n_top : int
        In ``[0, n_rows]``.

    Returns
    -------
    is_top : array of shape (n_rows,), bool
    """
    n_rows = int(magnitudes.shape[0])
    if n_top >= n_rows:
        return xp.ones(n_rows, dtype=bool)
    if n_top == 0:
        return xp.zeros(n_rows, dtype=bool)
    threshold = xp.partition(magnitudes, n_rows - n_top)[n_rows - n_top]
    is_top = magnitudes > threshold
    n_tied_taken = n_top - int(xp.count_nonzero(is_top))
    is_top[xp.flatnonzero(magnitudes == threshold)[:n_tied_taken]] = True
    return is_top


def goss_sample(xp, gradients, seed, stream, top_rate, other_rate):
    """GOSS (see the module docstring).

    Parameters
    ----------
    xp : module
        numpy or cupy.
    gradients : array of shape (n_rows,), float64
    seed, stream : int
    top_rate : float in [0, 1)
    other_rate : float in (0, 1], ``top_rate + other_rate <= 1``

    Returns
    -------
    sample_indices : array of shape (n_samples,), int32
    multipliers : array of shape (n_rows,), float64
        1 for the top rows, ``(1 - top_rate) / other_rate`` for the sampled
        others, 0 for the dropped rows.
    """
    n_rows = int(gradients.shape[0])
    is_top = goss_top_rows(xp, xp.abs(gradients), goss_top_count(n_rows, top_rate))
    return goss_keep(xp, is_top, row_uniforms(xp, seed, stream, n_rows), top_rate, other_rate)


def goss_keep(xp, is_top, uniforms, top_rate, other_rate):
    """GOSS's rows and multipliers once the top rows are chosen: the others kept when
    ``uniforms < other_rate / (1 - top_rate)`` (shared with distributed training,
    gpuboost.dask, whose top rows are selected across workers).

    Parameters
    ----------
    xp : module
    is_top : array of shape (n_rows,), bool
    uniforms : array of shape (n_rows,), float64
        The rows' numbers of ``row_uniforms`` (by row id).
    top_rate, other_rate : float

    Returns
    -------
    sample_indices : array of shape (n_samples,), int32
    multipliers : array of shape (n_rows,), float64
    """
    other_probability = float(other_rate) / (1.0 - float(top_rate))
    is_other = ~is_top & (uniforms < other_probability)
    other_multiplier = (1.0 - float(top_rate)) / float(other_rate)
    multipliers = xp.where(is_top, 1.0, xp.where(is_other, other_multiplier, DROPPED_MULTIPLIER))
    sample_indices = xp.flatnonzero(is_top | is_other).astype(SAMPLE_INDEX_DTYPE)
    return sample_indices, multipliers


def goss_sample_naive(gradients, seed, stream, top_rate, other_rate):
    """Reference for :func:`goss_sample`: Python loops on host NumPy arrays."""
    gradients = np.asarray(gradients, dtype=np.float64)
    n_rows = len(gradients)
    n_top = goss_top_count(n_rows, top_rate)
    ranked = sorted(range(n_rows), key=lambda row: (-abs(float(gradients[row])), row))
    top = set(ranked[:n_top])
    uniforms = row_uniforms(np, seed, stream, n_rows)
    other_probability = other_rate / (1.0 - top_rate)
    rows, multipliers = [], np.zeros(n_rows)
    for row in range(n_rows):
        if row in top:
            rows.append(row)
            multipliers[row] = 1.0
        elif uniforms[row] < other_probability:
            rows.append(row)
            multipliers[row] = (1.0 - top_rate) / other_rate
    return np.array(rows, dtype=SAMPLE_INDEX_DTYPE), multipliers


# ---- gradient-based sampling ----------------------------------------------------------
def gradient_based_target(n_rows, fraction):
    """Expected sample size ``m = max(1, floor(fraction * n_rows))`` (0 without rows)."""
    if n_rows == 0:
        return 0
    return max(1, int(np.floor(float(fraction) * n_rows)))


def _quantized_magnitudes(xp, gradients, hessians, reg_lambda):
    """``rint(sqrt(g**2 + reg_lambda * h**2) * scale)`` as int64 (see the module docstring)."""
    magnitude = xp.sqrt(gradients * gradients + float(reg_lambda) * (hessians * hessians))
    levels, _ = quantize(xp, magnitude)
    return levels.astype(xp.int64)


def gradient_based_probabilities(xp, gradients, hessians, fraction, reg_lambda):
    """Keep probabilities of gradient-based sampling (see the module docstring).

    Returns
    -------
    probabilities : array of shape (n_rows,), float64
        In [0, 1]; their exact (real) sum is ``gradient_based_target(n, fraction)``
        unless fewer rows than that have a non-zero magnitude (then those are kept
        with probability 1).
    """
    n_rows = int(gradients.shape[0])
    levels = _quantized_magnitudes(xp, gradients, hessians, reg_lambda)
    target = gradient_based_target(n_rows, fraction)
    if target == 0:
        return xp.zeros(0, dtype=xp.float64)
    descending = xp.sort(levels)[::-1]
    # suffix_sums[k] = descending[k] + descending[k + 1] + ... (exact int64).
    suffix_sums = descending.sum() - xp.cumsum(descending) + descending
    candidates = xp.arange(target, dtype=xp.int64)
    settled = descending[:target] * (target - candidates) <= suffix_sums[:target]
    # The first k that holds (settled[target - 1] always does); argmax of 0/1 integers.
    n_certain = int(xp.argmax(settled.astype(xp.int8)))
    remaining_sum = int(suffix_sums[n_certain])
    slots = target - n_certain
    if remaining_sum == 0:
        return (levels > 0).astype(xp.float64)
    scaled = (levels * slots).astype(xp.float64) / float(remaining_sum)
    return xp.minimum(scaled, 1.0)


def gradient_based_sample(xp, gradients, hessians, seed, stream, fraction, reg_lambda):
    """XGBoost's gradient-based sampling (see the module docstring).

    Returns
    -------
    sample_indices : array of shape (n_samples,), int32
    multipliers : array of shape (n_rows,), float64
        ``1 / p`` for kept rows, 0 for dropped rows.
    """
    n_rows = int(gradients.shape[0])
    probabilities = gradient_based_probabilities(xp, gradients, hessians, fraction, reg_lambda)
    uniforms = row_uniforms(xp, seed, stream, n_rows)
    kept = uniforms < probabilities
    inverse = 1.0 / xp.where(kept, probabilities, 1.0)
    multipliers = xp.where(kept, inverse, DROPPED_MULTIPLIER)
    return xp.flatnonzero(kept).astype(SAMPLE_INDEX_DTYPE), multipliers


def gradient_based_probabilities_naive(gradients, hessians, fraction, reg_lambda):
    """Reference for :func:`gradient_based_probabilities`: the threshold found by
    trying every number of certain rows in turn, with Python integers."""
    gradients = np.asarray(gradients, dtype=np.float64)
    hessians = np.asarray(hessians, dtype=np.float64)
    levels = [int(v) for v in _quantized_magnitudes(np, gradients, hessians, reg_lambda)]
    target = gradient_based_target(len(levels), fraction)
    descending = sorted(levels, reverse=True)
    for n_certain in range(target):
        remaining_sum = sum(descending[n_certain:])
        slots = target - n_certain
        if descending[n_certain] * slots <= remaining_sum:
            break
    if remaining_sum == 0:
        return np.array([1.0 if level > 0 else 0.0 for level in levels])
    return np.array([min(1.0, float(level * slots) / float(remaining_sum)) for level in levels])


def sampled_row_weights(weight, multipliers):
    """Row weights of a sampled tree: sample weights times the sampling multipliers.

    Parameters
    ----------
    weight : backend array of shape (n_rows,), float64, or None
    multipliers : backend array of shape (n_rows,), float64, or None

    Returns
    -------
    backend array of shape (n_rows,), float64, or None (all ones)
    """
    if multipliers is None:
        return weight
    return multipliers if weight is None else weight * multipliers
