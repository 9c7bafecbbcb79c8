"""Column sampling by tree, by level and by node (XGBoost semantics), uniform or by
feature weight (``Dataset.feature_weights``)."""

import numpy as np

from ..core import strict_math

__all__ = ["FeatureSampler", "weighted_choice"]


def weighted_choice(rng, features, weights, n_chosen):
    """``n_chosen`` of ``features`` drawn without replacement with probabilities
    proportional to ``weights`` (Efraimidis and Spirakis' keys, as XGBoost's
    ``feature_weights``): each feature gets ``log(u) / w`` for a uniform ``u`` of ``rng``
    (one draw per feature, in order), and the largest keys are chosen (ties: the lower
    feature). ``log`` is gpuboost's own (:mod:`gpuboost.core.strict_math`), so every machine
    draws the same features. Features of weight 0 are never chosen (then fewer than
    ``n_chosen`` may be).

    Parameters
    ----------
    rng : numpy.random.Generator
    features : ndarray of shape (n,), int
        Candidates, increasing.
    weights : ndarray of shape (n_features,), float64
        Every feature's weight (non-negative), indexed by feature.
    n_chosen : int

    Returns
    -------
    ndarray of int, increasing
    """
    uniforms = rng.random(len(features))
    candidate_weights = weights[features]
    positive = candidate_weights > 0
    keys = np.full(len(features), -np.inf)
    with np.errstate(divide="ignore"):  # u == 0: log is -inf, the smallest key
        keys[positive] = strict_math.log(np, uniforms[positive]) / candidate_weights[positive]
    order = np.lexsort((features, -keys))  # largest key first, ties: lower feature
    chosen = order[: min(int(n_chosen), int(np.count_nonzero(positive)))]
    return np.sort(features[chosen])


class FeatureSampler:
    """Column sampling by tree, by level and by node (XGBoost semantics).

    Parameters
    ----------
    n_features : int
    params : dict
        Validated parameters (``colsample_bytree``, ``colsample_bylevel``,
        ``colsample_bynode``).
    rng : numpy.random.Generator, or a callable () -> Generator
        Host generator for this tree; draws happen in node-expansion order, which
        is deterministic, so both backends draw the same features. A callable is called
        at the first draw only (making a generator costs about 0.1 ms, a tenth of a
        small tree's round, and a tree without column sampling draws nothing).
    feature_weights : ndarray of shape (n_features,), float64, optional
        Sample columns by weight (:func:`weighted_choice`; ``Dataset.feature_weights``)
        at every level of sampling; None: uniformly.
    """

    def __init__(self, n_features, params, rng, feature_weights=None):
        self.n_features = n_features
        self.by_level = params["colsample_bylevel"]
        self.by_node = params["colsample_bynode"]
        self._rng = rng
        self.feature_weights = feature_weights
        self.tree_features = self._choose(np.arange(n_features), params["colsample_bytree"])
        self.level_features = {}
        self.trivial = (
            len(self.tree_features) == n_features and self.by_level >= 1.0 and self.by_node >= 1.0
        )

    @property
    def rng(self):
        """The tree's generator (made at first use when given as a callable)."""
        if callable(self._rng):
            self._rng = self._rng()
        return self._rng

    @property
    def draws_per_node(self):
        """Whether :meth:`mask` draws features by level or by node (else every node of
        the tree gets the tree's features)."""
        return self.by_level < 1.0 or self.by_node < 1.0

    def _choose(self, features, fraction):
        if fraction >= 1.0:
            return features
        n_chosen = max(1, int(fraction * len(features)))
        if self.feature_weights is not None:
            return weighted_choice(self.rng, features, self.feature_weights, n_chosen)
        return np.sort(self.rng.choice(features, size=n_chosen, replace=False))

    def mask(self, depths):
        """Allowed features per node, shape (n_nodes, n_features) bool, or None (all)."""
        if self.trivial:
            return None
        masks = np.zeros((len(depths), self.n_features), dtype=bool)
        for i, depth in enumerate(depths):
            if depth not in self.level_features:
                self.level_features[depth] = self._choose(self.tree_features, self.by_level)
            masks[i, self._choose(self.level_features[depth], self.by_node)] = True
        return masks
