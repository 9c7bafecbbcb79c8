"""Monotone and interaction constraints: what the grower tracks per node.

Both are host-side state of a growing tree, derived from the split records only (so
both backends make the same choices):

* **Interaction constraints** (XGBoost's ``FeatureInteractionConstraintHost``): the root
  may split on any feature; a child may split on the features used on its path so far
  and on every feature of each constraint set that holds *all* of them. Along a path,
  the features used are then all in one set (or the path uses a single feature that is
  in no set). :class:`InteractionConstraints` gives the per-node feature masks, which
  the grower intersects with column sampling's.
* **Monotone constraints** (XGBoost's method, docs/DESIGN.md "Monotone constraints"):
  every node has bounds ``[lower, upper]`` on its weight, ``(-inf, inf)`` at the root.
  The split scan clips the children's weights to the node's bounds, scores them with
  the clipped weights and rejects a candidate on a constrained feature whose clipped
  weights go the wrong way (``gpuboost.core.gain.monotone_split_gain``). A split on a
  feature of direction ``c != 0`` gives the children the bounds of the parent, cut at
  the midpoint ``mid`` of the two clipped weights: ``c = 1`` the left child's upper
  bound and the right child's lower bound become ``mid`` (``c = -1`` the reverse), so
  every leaf left of the split is ``<= mid <=`` every leaf right of it.
  :func:`children_bounds` computes them; leaf values are clipped to their bounds.
"""

import numpy as np

from ..core.gain import bounded_weight

__all__ = [
    "resolve_monotone",
    "resolve_interactions",
    "InteractionConstraints",
    "children_bounds",
    "UNBOUNDED",
]

#: The bounds ``(lower, upper)`` of the root's weight.
UNBOUNDED = (-np.inf, np.inf)


def _feature_index(key, n_features, feature_names, parameter):
    """The index of a feature given by index or by name (ValueError when it is neither)."""
    if isinstance(key, str):
        names = list(feature_names or [])
        if key not in names:
            raise ValueError(
                f"{parameter} names the feature {key!r}, which the training data do not have "
                f"(its features: {names[:20]}{' ...' if len(names) > 20 else ''})."
            )
        return names.index(key)
    if not 0 <= key < n_features:
        raise ValueError(
            f"{parameter} names feature {key}, but the training data have {n_features} "
            f"features (indices 0 .. {n_features - 1})."
        )
    return int(key)


def resolve_monotone(value, n_features, feature_names):
    """The validated ``monotone_constraints`` as one direction per feature.

    Parameters
    ----------
    value : None, list of int or dict
        From :func:`gpuboost.params.validate_params`.
    n_features : int
    feature_names : list of str or None

    Returns
    -------
    tuple of int of length n_features, or ``()`` when no feature is constrained.

    Raises
    ------
    ValueError
        A list whose length is not ``n_features``, or an unknown feature.
    """
    if value is None:
        return ()
    directions = [0] * n_features
    if isinstance(value, dict):
        for key, direction in value.items():
            directions[_feature_index(key, n_features, feature_names, "monotone_constraints")] = (
                direction
            )
    else:
        if len(value) != n_features:
            raise ValueError(
                f"monotone_constraints has {len(value)} entries, the training data "
                f"{n_features} features: give one direction per feature, or a dict "
                f"{{feature: direction}}."
            )
        directions = list(value)
    return tuple(int(d) for d in directions) if any(directions) else ()


def resolve_interactions(value, n_features, feature_names):
    """The validated ``interaction_constraints`` as lists of feature indices (None: none)."""
    if value is None:
        return None
    return [
        sorted(
            {_feature_index(k, n_features, feature_names, "interaction_constraints") for k in group}
        )
        for group in value
    ]


class InteractionConstraints:
    """Which features each node of a tree may split on (XGBoost's rule, module docstring).

    Parameters
    ----------
    groups : list of list of int
        The constraint sets (:func:`resolve_interactions`).
    n_features : int

    Notes
    -----
    Per node it keeps the features used on its path (a bool row) and the sets still
    holding all of them (a bool row over the sets); a child's rows are its parent's with
    the parent's split feature added.
    """

    def __init__(self, groups, n_features):
        self.n_features = n_features
        #: (n_sets, n_features) bool: membership.
        self.sets = np.zeros((len(groups), n_features), dtype=bool)
        for row, group in enumerate(groups):
            self.sets[row, group] = True
        self.path = np.zeros((1, n_features), dtype=bool)
        self.open_sets = np.ones((1, len(groups)), dtype=bool)

    def _reserve(self, size):
        if size > len(self.path):
            capacity = max(size, 2 * len(self.path))
            for name in ("path", "open_sets"):
                old = getattr(self, name)
                new = np.zeros((capacity, old.shape[1]), dtype=bool)
                new[: len(old)] = old
                setattr(self, name, new)

    def split(self, parents, features, children):
        """Record the splits of ``parents`` on ``features`` into ``children`` (pairs: left,
        right per parent, as ``NodeTable.add_children`` numbers them)."""
        children = np.asarray(children, dtype=np.int64)
        self._reserve(int(children.max()) + 1 if len(children) else 0)
        parents2 = np.repeat(np.asarray(parents, dtype=np.int64), 2)
        features2 = np.repeat(np.asarray(features, dtype=np.int64), 2)
        self.path[children] = self.path[parents2]
        self.path[children, features2] = True
        self.open_sets[children] = self.open_sets[parents2] & self.sets[:, features2].T

    def mask(self, ids):
        """Allowed features per node, (len(ids), n_features) bool; the root: all."""
        ids = np.asarray(ids, dtype=np.int64)
        path = self.path[ids]
        allowed = path | (self.open_sets[ids].astype(np.uint8) @ self.sets.astype(np.uint8) > 0)
        allowed[~path.any(axis=1)] = True  # nothing used yet (the root): every feature
        return allowed


def children_bounds(lower, upper, directions, left_weights, right_weights):
    """The bounds of the children of split nodes (XGBoost's ``AddSplit``).

    Parameters
    ----------
    lower, upper : ndarray of shape (n,), float64
        The parents' bounds.
    directions : ndarray of shape (n,), int
        The monotone direction of each parent's split feature.
    left_weights, right_weights : ndarray of shape (n,), float64
        The children's weights clipped to the parents' bounds (:func:`child_weights`).

    Returns
    -------
    (left_lower, left_upper, right_lower, right_upper) : ndarrays of shape (n,), float64
    """
    mid = (left_weights + right_weights) / 2.0
    left_lower = np.where(directions < 0, mid, lower)
    left_upper = np.where(directions > 0, mid, upper)
    right_lower = np.where(directions > 0, mid, lower)
    right_upper = np.where(directions < 0, mid, upper)
    return left_lower, left_upper, right_lower, right_upper


def child_weights(quantiser, params, sums, left_sums, lower, upper):
    """The weights of the two children of split nodes, clipped to the parents' bounds
    (what the split scan compared), from the exact integer sums ``(G_q, H_q)``."""
    sums = np.asarray(sums, dtype=np.int64).reshape(-1, 2)
    left_sums = np.asarray(left_sums, dtype=np.int64).reshape(-1, 2)
    right_sums = sums - left_sums
    weights = []
    for part in (left_sums, right_sums):
        weights.append(
            bounded_weight(
                quantiser.gradients(part[:, 0]),
                quantiser.hessians(part[:, 1]),
                params,
                lower,
                upper,
            )
        )
    return weights[0], weights[1]
