"""The gain formulas and the split record: one definition for every backend.

The formulas (docs/DESIGN.md, "Gain and leaf value") are written once here and
used by every backend's host code; the CUDA kernel ``cuda/split_scan.cu`` evaluates
the same expressions in the same operation order (``cuda/gain.cuh``, compiled with
``--fmad=false``), so gains are bit-identical. All arithmetic is float64 on values
recovered from exact integer sums: ``G = sum_quantized_gradients / scale_gradients``.
"""

from dataclasses import dataclass, replace

import numpy as np

__all__ = [
    "SplitParams",
    "SPLIT_RECORD_DTYPE",
    "SPLIT_GAIN_EPS",
    "threshold_l1",
    "leaf_weight",
    "leaf_score",
    "split_gain",
    "admissible",
    "no_split_records",
    "bounded_weight",
    "clipped_weight",
    "leaf_score_given_weight",
    "monotone_split_gain",
    "path_smoothed",
]

#: A split must improve the loss by more than this (XGBoost's kRtEps) and by
#: more than ``gamma``.
SPLIT_GAIN_EPS = 1e-6
#: One record per node: the best split (``feature == -1`` when none is admissible),
#: the left child's integer sums, and the node's own integer sums.
SPLIT_RECORD_DTYPE = np.dtype(
    [
        ("feature", np.int32),
        ("bin", np.int32),
        ("default_left", np.bool_),
        ("gain", np.float64),
        ("left_sum_gradients", np.int64),
        ("left_sum_hessians", np.int64),
        ("left_count", np.int64),
        ("sum_gradients", np.int64),
        ("sum_hessians", np.int64),
        ("count", np.int64),
    ]
)


@dataclass(frozen=True)
class SplitParams:
    """Regularization and admissibility parameters of the split scan."""

    reg_lambda: float = 1.0
    reg_alpha: float = 0.0
    max_delta_step: float = 0.0
    min_child_weight: float = 1.0
    min_data_in_leaf: int = 1
    gamma: float = 0.0
    #: LightGBM's ``path_smooth``: node weights pulled towards their parent's
    #: (:func:`path_smoothed`); 0: none.
    path_smooth: float = 0.0
    #: A split must gain more than ``gamma + split_penalty * dispersion`` (the tree's
    #: :meth:`~gpuboost.core.quantize.GradientQuantiser.dispersion`; :meth:`penalized`).
    split_penalty: float = 0.0
    #: The split penalty of a many-vs-many categorical split, as a multiple of
    #: ``split_penalty`` (:meth:`penalized`, :meth:`many_vs_many`).
    cat_penalty_factor: float = 0.0
    #: ``gamma`` of the many-vs-many categorical splits once :meth:`penalized` (None:
    #: ``gamma``).
    many_vs_many_gamma: float = None
    #: Monotone direction (1, -1, 0) per feature; ``()``: no constraint, and the scans
    #: take the unconstrained formulas (docs/DESIGN.md, "Monotone constraints").
    monotone: tuple = ()

    @classmethod
    def from_params(cls, params):
        """Build from a validated parameter dict (``gpuboost.params``)."""
        return cls(
            reg_lambda=float(params["reg_lambda"]),
            reg_alpha=float(params["reg_alpha"]),
            max_delta_step=float(params["max_delta_step"]),
            min_child_weight=float(params["min_child_weight"]),
            min_data_in_leaf=int(params["min_data_in_leaf"]),
            gamma=float(params["gamma"]),
            path_smooth=float(params["path_smooth"]),
            split_penalty=float(params["split_penalty"]),
            cat_penalty_factor=float(params["cat_penalty_factor"]),
        )

    def penalized(self, dispersion):
        """These parameters for a tree of gradient dispersion ``dispersion`` (float): the
        split penalty folded into ``gamma`` (``gamma + split_penalty * dispersion``, one
        multiplication and one addition in float64; docs/DESIGN.md, "Split penalty"),
        so that every scan kernel applies it as ``gamma``, and the many-vs-many
        categorical splits' into ``many_vs_many_gamma`` (``gamma + (cat_penalty_factor *
        split_penalty) * dispersion``: the same value at factor 1). Unchanged when the
        penalty is 0."""
        if self.split_penalty == 0.0:
            return self
        dispersion = float(dispersion)
        many_vs_many_penalty = self.cat_penalty_factor * self.split_penalty
        return replace(
            self,
            gamma=self.gamma + self.split_penalty * dispersion,
            many_vs_many_gamma=self.gamma + many_vs_many_penalty * dispersion,
            split_penalty=0.0,
        )

    def many_vs_many(self):
        """These parameters for the many-vs-many categorical splits: ``gamma`` theirs once
        :meth:`penalized` (``many_vs_many_gamma``), else unchanged. One-vs-rest splits
        (a category against the rest: one parameter, as a numeric threshold) take
        ``gamma``."""
        if self.many_vs_many_gamma is None:
            return self
        return replace(self, gamma=self.many_vs_many_gamma, many_vs_many_gamma=None)


def _as_float64(values):
    """``np.float64(values)``, except that a CuPy array stays a CuPy array (so the
    formulas below also run on the device, e.g. in gpuboost.tree.splitters.exact)."""
    if hasattr(values, "__cuda_array_interface__"):
        return values.astype(np.float64, copy=False)
    return np.float64(values)


def threshold_l1(sum_gradients, reg_alpha):
    """L1 soft thresholding ``sign(G) * max(|G| - alpha, 0)`` (float64, elementwise)."""
    if reg_alpha == 0.0:
        return sum_gradients
    return np.sign(sum_gradients) * np.maximum(np.abs(sum_gradients) - reg_alpha, 0.0)


def leaf_weight(sum_gradients, sum_hessians, params):
    """Optimal leaf weight ``-T(G) / (H + lambda)``, clipped by ``max_delta_step``.

    Parameters
    ----------
    sum_gradients, sum_hessians : float or ndarray, float64
    params : SplitParams

    Returns
    -------
    weight : float64 or ndarray; 0 where ``H + lambda <= 0``.
    """
    thresholded = threshold_l1(_as_float64(sum_gradients), params.reg_alpha)
    denominator = _as_float64(sum_hessians) + params.reg_lambda
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(denominator > 0.0, -thresholded / denominator, 0.0)
    if params.max_delta_step > 0.0:
        weight = np.clip(weight, -params.max_delta_step, params.max_delta_step)
    return weight


def leaf_score(sum_gradients, sum_hessians, params):
    """Loss reduction of a leaf: ``T(G)^2 / (H + lambda)``.

    With ``max_delta_step > 0`` the score of the clipped weight ``w``:
    ``-(2 T(G) w + (H + lambda) w^2)``. Zero where ``H + lambda <= 0``.
    """
    thresholded = threshold_l1(_as_float64(sum_gradients), params.reg_alpha)
    denominator = _as_float64(sum_hessians) + params.reg_lambda
    if params.max_delta_step == 0.0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denominator > 0.0, thresholded * thresholded / denominator, 0.0)
    weight = leaf_weight(sum_gradients, sum_hessians, params)
    return np.where(
        denominator > 0.0, -(2.0 * thresholded * weight + denominator * weight * weight), 0.0
    )


def split_gain(left_g, left_h, right_g, right_h, parent_g, parent_h, params):
    """``(S(left) + S(right)) - S(parent)`` in this operation order."""
    return (leaf_score(left_g, left_h, params) + leaf_score(right_g, right_h, params)) - leaf_score(
        parent_g, parent_h, params
    )


def admissible(left_h, left_n, right_h, right_n, gain, params):
    """Whether a candidate split is admissible (docs/DESIGN.md, "Gain and leaf value"):
    both children have ``H >= min_child_weight`` and ``count >= min_data_in_leaf``,
    and ``gain > gamma`` and ``gain > SPLIT_GAIN_EPS`` (elementwise)."""
    return (
        (left_h >= params.min_child_weight)
        & (right_h >= params.min_child_weight)
        & (left_n >= params.min_data_in_leaf)
        & (right_n >= params.min_data_in_leaf)
        & (gain > params.gamma)
        & (gain > SPLIT_GAIN_EPS)
    )


def no_split_records(n_nodes):
    """Records of ``n_nodes`` nodes without a split (feature -1, gain -inf, zero sums)."""
    records = np.zeros(n_nodes, dtype=SPLIT_RECORD_DTYPE)
    records["feature"] = -1
    records["bin"] = -1
    records["gain"] = -np.inf
    return records


# ---- monotone constraints (docs/DESIGN.md, "Monotone constraints") ----------------------
def bounded_weight(sum_gradients, sum_hessians, params, lower, upper):
    """:func:`leaf_weight` clipped to a node's bounds: ``lower`` where it is below,
    ``upper`` where above (XGBoost's ``CalcWeight`` with constraints)."""
    return clipped_weight(leaf_weight(sum_gradients, sum_hessians, params), lower, upper)


def clipped_weight(weight, lower, upper):
    """``lower`` where ``weight`` is below it, ``upper`` where above, else ``weight``."""
    return np.where(weight < lower, lower, np.where(weight > upper, upper, weight))


def leaf_score_given_weight(sum_gradients, sum_hessians, weight, params):
    """The loss reduction of a leaf of weight ``w``: ``-(2 T(G) w + (H + lambda) w^2)``,
    0 where ``H + lambda <= 0`` (XGBoost's ``CalcGainGivenWeight``)."""
    thresholded = threshold_l1(_as_float64(sum_gradients), params.reg_alpha)
    denominator = _as_float64(sum_hessians) + params.reg_lambda
    return np.where(
        denominator > 0.0, -(2.0 * thresholded * weight + denominator * weight * weight), 0.0
    )


def monotone_split_gain(
    left_g, left_h, right_g, right_h, parent_score, params, lower, upper, direction
):
    """The gain of a split under monotone constraints, ``-inf`` where it breaks them.

    Each child's weight is clipped to the node's bounds ``[lower, upper]`` and scored
    with :func:`leaf_score_given_weight`; ``(S(left) + S(right)) - parent_score`` in this
    order, where ``parent_score`` is the node's own score at its clipped weight. A
    candidate on a feature of ``direction`` 1 whose left weight exceeds its right weight
    (-1: is below it) gets ``-inf``.
    """
    left_w = bounded_weight(left_g, left_h, params, lower, upper)
    right_w = bounded_weight(right_g, right_h, params, lower, upper)
    gain = (
        leaf_score_given_weight(left_g, left_h, left_w, params)
        + leaf_score_given_weight(right_g, right_h, right_w, params)
    ) - parent_score
    broken = ((direction > 0) & (left_w > right_w)) | ((direction < 0) & (left_w < right_w))
    return np.where(broken, -np.inf, gain)


# ---- path smoothing (docs/DESIGN.md, "Path smoothing") ----------------------------------
def path_smoothed(weights, counts, left_child, right_child, path_smooth, lower=None, upper=None):
    """Node weights pulled towards their parent's (LightGBM's ``path_smooth``).

    From the root (node 0, kept as it is) down, level after level, a child of ``n = count``
    rows and raw weight ``w`` gets ``w * (n / s) / (n / s + 1) + w_parent / (n / s + 1)``
    with ``s = path_smooth`` and ``w_parent`` the parent's smoothed weight, in this
    operation order (float64); under monotone constraints each smoothed weight is then
    clipped to its node's bounds ``[lower, upper]``, as :func:`bounded_weight` clips.

    Parameters
    ----------
    weights : ndarray of shape (n_nodes,) or (n_nodes, n_outputs), float64  # IN
        Raw node weights (vector leaves: one column an output).
    counts : ndarray of shape (n_nodes,)  # IN
        Rows of every node.
    left_child, right_child : ndarray of shape (n_nodes,)  # IN
        Children ids, -1 at leaves.
    path_smooth : float
        ``s > 0``.
    lower, upper : ndarray of shape (n_nodes,), float64, or None  # IN

    Returns
    -------
    smoothed : ndarray like ``weights``  # OUT
    """
    out = np.array(weights, dtype=np.float64, copy=True)
    left_child = np.asarray(left_child)
    right_child = np.asarray(right_child)
    ratio = np.asarray(counts, dtype=np.float64) / path_smooth
    denominator = ratio + 1.0
    if out.ndim == 2:
        ratio, denominator = ratio[:, None], denominator[:, None]
    frontier = np.zeros(1, dtype=np.int64) if len(out) else np.zeros(0, dtype=np.int64)
    while frontier.size:
        parents = frontier[left_child[frontier] >= 0]
        children = np.concatenate([left_child[parents], right_child[parents]]).astype(np.int64)
        parents = np.concatenate([parents, parents])
        out[children] = (
            out[children] * ratio[children] / denominator[children]
            + out[parents] / denominator[children]
        )
        if lower is not None:
            low, high = lower[children], upper[children]
            if out.ndim == 2:
                low, high = low[:, None], high[:, None]
            out[children] = clipped_weight(out[children], low, high)
        frontier = children
    return out
