"""Column sampling by tree, by level and by node (XGBoost semantics)."""

import numpy as np

__all__ = ["FeatureSampler"]


class FeatureSampler:
    """Column sampling by tree, by level and by node (XGBoost semantics).

    Parameters
    ----------
    n_features : int
    params : dict
        Validated parameters (``colsample_bytree``, ``colsample_bylevel``,
        ``colsample_bynode``).
    rng : numpy.random.Generator
        Host generator for this tree; draws happen in node-expansion order, which
        is deterministic, so both backends draw the same features.
    """

    def __init__(self, n_features, params, rng):
        self.n_features = n_features
        self.by_level = params["colsample_bylevel"]
        self.by_node = params["colsample_bynode"]
        self.rng = rng
        self.tree_features = self._choose(np.arange(n_features), params["colsample_bytree"])
        self.level_features = {}
        self.trivial = (
            len(self.tree_features) == n_features and self.by_level >= 1.0 and self.by_node >= 1.0
        )

    def _choose(self, features, fraction):
        if fraction >= 1.0:
            return features
        n_chosen = max(1, int(fraction * len(features)))
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
