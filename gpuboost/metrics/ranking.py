"""Ranking metrics: ``ndcg`` and ``map`` (optionally ``@k``), computed on the host.

See :mod:`gpuboost.metrics.base` for the conventions (queries, query weights,
ties). This module also owns the NDCG gains and position discounts, which the
LambdaMART objectives (:mod:`gpuboost.objectives.ranking`) use as well.
"""

import numpy as np

from ..core import strict_math
from ..core.array import to_numpy
from ..core.dtypes import Y_DTYPE
from ..core.reproducible_sum import reproducible_mean
from ..core.segments import offsets
from .base import Metric, _as_single_output_predictions, metric_name

__all__ = ["NDCG", "MeanAveragePrecision", "ndcg_gains", "position_discounts"]

#: Integer dtype of query sizes and hit counts in ranking metrics (that of the
#: query offsets, :func:`gpuboost.core.segments.offsets`).
_QUERY_OFFSET_DTYPE = np.int64


def ndcg_gains(labels):
    """NDCG gains ``2**label - 1`` of relevance labels (host).

    Parameters
    ----------
    labels : array-like of any shape
        Relevance labels.

    Returns
    -------
    gains : ndarray of the shape of ``labels``, float64
    """
    return strict_math.exp2(np, np.asarray(labels, dtype=np.float64)) - 1.0


def position_discounts(n_positions):
    """NDCG discounts ``1 / log2(rank + 1)`` of the first ``n_positions`` ranks (host).

    Parameters
    ----------
    n_positions : int

    Returns
    -------
    discounts : ndarray of shape (n_positions,), float64
        ``discounts[p] = 1 / log2(p + 2)`` for the 0-based position ``p``
        (rank ``p + 1``).
    """
    return 1.0 / strict_math.log2(np, np.arange(n_positions, dtype=np.float64) + 2.0)


class _RankingMetric(Metric):
    """Mean over queries of a per-query ranking score, computed on the host.

    Parameters
    ----------
    k : int or None, default=None
        Number of top positions evaluated; None evaluates all positions.
    """

    higher_is_better = True
    _base_name = None

    def __init__(self, k=None):
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
                raise ValueError(f"{self._base_name}@k needs an integer k >= 1, got {k!r}")
            k = int(k)
        self.k = k
        self.name = metric_name(self._base_name, k)

    def _evaluate(self, xp, y, pred, weight, group):
        n_samples = y.shape[0]
        labels = to_numpy(y)
        scores = to_numpy(_as_single_output_predictions(xp, pred, n_samples))
        group_sizes = self._check_group(group, n_samples)
        query_weight = self._check_query_weight(weight, group_sizes, n_samples)
        if np.any(labels < 0):
            raise ValueError(f"{self._base_name} needs non-negative relevance labels")

        n_queries = group_sizes.shape[0]
        query_offsets = offsets(group_sizes)
        query_of_row = np.repeat(np.arange(n_queries), group_sizes)
        # Rows are contiguous per query, so sorting by (query, -score) with a
        # stable sort ranks each query by decreasing score, ties in row order.
        ranked_rows = np.lexsort((-scores, query_of_row))
        # 0-based position of each ranked row within its query.
        positions = np.arange(n_samples) - query_offsets[query_of_row]
        if self.k is None:
            in_top_k = np.ones(n_samples, dtype=bool)
        else:
            in_top_k = positions < self.k
        per_query = self._score_queries(
            labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets
        )
        return reproducible_mean(np, per_query, query_weight)

    def _score_queries(self, labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets):
        """Per-query scores, ndarray of shape (n_queries,).

        Parameters
        ----------
        labels : ndarray of shape (n_samples,)
            Relevance labels in row order.
        ranked_rows : ndarray of shape (n_samples,)
            Row ids in ranked order: query by query, decreasing score.
        positions, in_top_k, query_of_row : ndarray of shape (n_samples,)
            For the i-th ranked row: its 0-based position in the query,
            whether that position is among the top k, and its query id.
        query_offsets : ndarray of shape (n_queries + 1,)
            First ranked row of each query, then n_samples.
        """
        raise NotImplementedError

    def _check_group(self, group, n_samples):
        """Return query sizes as an int64 array of shape (n_groups,)."""
        if group is None:
            raise ValueError(f"ranking metric '{self.name}' needs group (the query sizes)")
        group_sizes = to_numpy(group)
        if group_sizes.ndim != 1:
            raise ValueError(f"group must have shape (n_groups,), got shape {group_sizes.shape}")
        if group_sizes.dtype.kind not in "iu":
            if not np.all(group_sizes == np.floor(group_sizes)):
                raise ValueError("group sizes must be integers")
        group_sizes = group_sizes.astype(_QUERY_OFFSET_DTYPE)
        if np.any(group_sizes < 0):
            raise ValueError("group sizes must be non-negative")
        if int(group_sizes.sum()) != n_samples:
            raise ValueError(
                f"group sizes sum to {int(group_sizes.sum())}, expected {n_samples} "
                f"(the number of samples)"
            )
        return group_sizes

    def _check_query_weight(self, weight, group_sizes, n_samples):
        """Return per-query weights of shape (n_groups,), or None.

        Per-row weights (``len(weight) == n_samples != len(group)``) are
        ignored (None is returned).
        """
        if weight is None:
            return None
        weight = to_numpy(weight).astype(Y_DTYPE)
        n_queries = group_sizes.shape[0]
        if weight.shape == (n_queries,):
            if np.any(weight < 0) or not np.sum(weight) > 0:
                raise ValueError("query weights must be non-negative with a positive sum")
            return weight
        if weight.shape == (n_samples,):
            return None
        raise ValueError(
            f"weight for a ranking metric must have one entry per query "
            f"({n_queries},) or per row ({n_samples},), got shape {weight.shape}"
        )


class NDCG(_RankingMetric):
    """``ndcg`` / ``ndcg@k``: normalized discounted cumulative gain.

    ``DCG@k = sum over the top k ranked documents of (2**rel - 1) /
    log2(rank + 1)`` with rank counted from 1; the ideal DCG@k ranks the
    labels in decreasing order. A query whose ideal DCG is 0 (no document with
    positive relevance) scores 1. Ties in predictions keep the original row
    order within the query.

    Parameters
    ----------
    k : int or None, default=None
        Number of top positions; None (plain ``ndcg``) uses all of them.
    """

    _base_name = "ndcg"

    def _score_queries(self, labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets):
        n_queries = query_offsets.shape[0] - 1
        discounts = position_discounts(int(positions.max()) + 1)
        discount = np.where(in_top_k, discounts[positions], 0.0)
        dcg = np.bincount(
            query_of_row,
            weights=ndcg_gains(labels[ranked_rows]) * discount,
            minlength=n_queries,
        )
        ideal_rows = np.lexsort((-labels, query_of_row))
        ideal_dcg = np.bincount(
            query_of_row,
            weights=ndcg_gains(labels[ideal_rows]) * discount,
            minlength=n_queries,
        )
        has_gain = ideal_dcg > 0
        return np.where(has_gain, dcg / np.where(has_gain, ideal_dcg, 1.0), 1.0)


class MeanAveragePrecision(_RankingMetric):
    """``map`` / ``map@k``: mean average precision.

    Documents with relevance > 0 are relevant. For a query with ``R``
    relevant documents, ``AP@k = sum over relevant documents ranked in the top
    k of precision@rank / min(R, k)`` (XGBoost's definition). A query without
    relevant documents scores 1 (XGBoost's convention). Ties in predictions
    keep the original row order within the query.

    Parameters
    ----------
    k : int or None, default=None
        Number of top positions; None (plain ``map``) uses all of them.
    """

    _base_name = "map"

    def _score_queries(self, labels, ranked_rows, positions, in_top_k, query_of_row, query_offsets):
        n_queries = query_offsets.shape[0] - 1
        is_relevant = (labels[ranked_rows] > 0).astype(_QUERY_OFFSET_DTYPE)
        cumulative_hits = np.cumsum(is_relevant)
        hits_before_query = np.concatenate([[0], cumulative_hits])[query_offsets[:-1]]
        hits_up_to_position = cumulative_hits - hits_before_query[query_of_row]
        precision = hits_up_to_position / (positions + 1.0)
        precision_sum = np.bincount(
            query_of_row,
            weights=precision * (is_relevant * in_top_k),
            minlength=n_queries,
        )
        n_relevant = np.bincount(query_of_row, weights=is_relevant, minlength=n_queries)
        n_counted = n_relevant if self.k is None else np.minimum(n_relevant, self.k)
        has_relevant = n_relevant > 0
        return np.where(has_relevant, precision_sum / np.where(has_relevant, n_counted, 1.0), 1.0)
