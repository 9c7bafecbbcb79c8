"""Ranking metrics (gpuboost.metrics.ranking): ndcg and map against naive per-query
loops and hand-computed values; the NDCG gains and discounts."""

import math

import numpy as np
import pytest
from _metric_references import (
    RELATIVE_TOLERANCE,
    _ranking_data,
    _weights_or_none,
    naive_map_query,
    naive_ndcg_query,
    naive_ranking,
)

from gpuboost.metrics import NDCG, MeanAveragePrecision, get_metric
from gpuboost.metrics.ranking import ndcg_gains, position_discounts


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [None, 1, 3, 6])
@pytest.mark.parametrize(
    "metric_class, query_metric",
    [(NDCG, naive_ndcg_query), (MeanAveragePrecision, naive_map_query)],
)
def test_ranking_metric_matches_naive_loop(rng, metric_class, query_metric, k, weighted):
    y, pred, group = _ranking_data(rng)
    query_weight = _weights_or_none(rng, weighted, n_samples=len(group))
    value = metric_class(k)(y, pred, weight=query_weight, group=group)
    expected = naive_ranking(query_metric, k)(y, pred, group, query_weight)
    assert value == pytest.approx(expected, rel=RELATIVE_TOLERANCE)


# ---------------------------------------------------------------------------
# hand-computed cases
# ---------------------------------------------------------------------------


def _dcg(*gains_in_rank_order):
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains_in_rank_order, 1))


def test_ndcg_hand_computed():
    labels = np.array([0.0, 3.0, 1.0, 2.0])
    pred = np.array([0.9, 0.8, 0.1, 0.3])
    group = [4]
    # ranked labels: 0, 3, 2, 1 -> gains 0, 7, 3, 1; ideal 7, 3, 1, 0
    assert get_metric("ndcg")(labels, pred, group=group) == pytest.approx(
        _dcg(0, 7, 3, 1) / _dcg(7, 3, 1, 0)
    )
    assert get_metric("ndcg@2")(labels, pred, group=group) == pytest.approx(_dcg(0, 7) / _dcg(7, 3))
    assert get_metric("ndcg@1")(labels, pred, group=group) == 0.0
    # k beyond the query size is the same as all positions
    assert get_metric("ndcg@10")(labels, pred, group=group) == pytest.approx(
        get_metric("ndcg")(labels, pred, group=group)
    )


def test_ndcg_ties_keep_original_order_within_query():
    # both documents have the same score: the first row is ranked first
    pred = np.array([0.5, 0.5])
    assert get_metric("ndcg@1")(np.array([0.0, 2.0]), pred, group=[2]) == 0.0
    assert get_metric("ndcg@1")(np.array([2.0, 0.0]), pred, group=[2]) == 1.0
    # same in a later query (positions are counted from the query start)
    labels = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    pred = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    value = get_metric("ndcg")(labels, pred, group=[3, 3])
    first = _dcg(1, 0, 1) / _dcg(1, 1, 0)
    second = _dcg(0, 0, 1) / _dcg(1, 0, 0)
    assert value == pytest.approx((first + second) / 2)


def test_ndcg_query_without_relevance_counts_as_one():
    labels = np.array([0.0, 0.0, 0.0, 1.0, 0.0])
    pred = np.array([0.3, 0.2, 0.1, 0.1, 0.9])
    # query 1: all zero -> 1; query 2 (labels 1, 0; ranked 0, 1) -> 1/log2(3)
    expected = (1.0 + 1.0 / math.log2(3)) / 2
    assert get_metric("ndcg")(labels, pred, group=[3, 2]) == pytest.approx(expected)
    assert get_metric("ndcg")(np.zeros(4), np.arange(4.0), group=[2, 2]) == 1.0


def test_map_hand_computed():
    labels = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 2.0])
    pred = np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0])  # already ranked; hits at ranks 1, 3, 6
    group = [6]
    assert get_metric("map")(labels, pred, group=group) == pytest.approx((1 + 2 / 3 + 3 / 6) / 3)
    assert get_metric("map@3")(labels, pred, group=group) == pytest.approx((1 + 2 / 3) / 3)
    assert get_metric("map@2")(labels, pred, group=group) == pytest.approx(1 / 2)
    assert get_metric("map@1")(labels, pred, group=group) == 1.0


def test_map_ties_and_query_without_relevant_document():
    labels = np.array([0.0, 1.0, 0.0, 0.0])
    pred = np.array([1.0, 1.0, 7.0, 3.0])
    # query 1: tie, first row (irrelevant) ranked first -> AP = 1/2; query 2: none -> 1
    assert get_metric("map")(labels, pred, group=[2, 2]) == pytest.approx((0.5 + 1.0) / 2)


def test_ranking_query_weights(rng):
    labels = np.array([0.0, 2.0, 1.0, 0.0, 0.0])
    pred = np.array([0.9, 0.1, 0.4, 0.5, 0.2])
    group = np.array([2, 3])
    ndcg = get_metric("ndcg")
    per_query = [
        ndcg(labels[:2], pred[:2], group=[2]),
        ndcg(labels[2:], pred[2:], group=[3]),
    ]
    assert per_query[1] < 1.0 and per_query[0] < 1.0
    query_weight = np.array([3.0, 1.0])
    assert ndcg(labels, pred, weight=query_weight, group=group) == pytest.approx(
        (3 * per_query[0] + per_query[1]) / 4
    )
    # per-row weights are ignored for ranking metrics
    row_weight = rng.uniform(0.5, 2.0, size=labels.shape[0])
    assert ndcg(labels, pred, weight=row_weight, group=group) == pytest.approx(np.mean(per_query))
    with pytest.raises(ValueError, match="one entry per query"):
        ndcg(labels, pred, weight=np.ones(4), group=group)


def test_empty_query_counts_as_query_without_relevant_document():
    labels = np.array([1.0, 0.0])
    pred = np.array([0.0, 1.0])
    with_empty = get_metric("map")(labels, pred, group=[0, 2])
    assert with_empty == pytest.approx((1.0 + 0.5) / 2)


# ---------------------------------------------------------------------------
# gains, discounts and errors
# ---------------------------------------------------------------------------


def test_gains_and_discounts_follow_the_definitions():
    np.testing.assert_array_equal(ndcg_gains([0, 1, 2, 3]), [0.0, 1.0, 3.0, 7.0])
    np.testing.assert_array_equal(ndcg_gains(np.array([[1.0], [4.0]])), [[1.0], [15.0]])
    discounts = position_discounts(4)
    assert discounts.shape == (4,) and discounts.dtype == np.float64
    np.testing.assert_allclose(
        discounts, [1.0 / math.log2(rank + 1) for rank in range(1, 5)], rtol=1e-15
    )
    assert position_discounts(0).shape == (0,)


def test_constructor_validation():
    with pytest.raises(ValueError):
        NDCG(k=0)
    with pytest.raises(ValueError):
        MeanAveragePrecision(k=2.0)


@pytest.mark.parametrize("name", ["ndcg", "ndcg@3", "map", "map@2"])
def test_ranking_without_group_raises(name):
    with pytest.raises(ValueError, match="group"):
        get_metric(name)(np.array([1.0, 0.0]), np.array([0.2, 0.1]))


def test_group_must_cover_all_rows():
    with pytest.raises(ValueError, match="sum to 3"):
        get_metric("ndcg")(np.zeros(4), np.zeros(4), group=[1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        get_metric("ndcg")(np.zeros(2), np.zeros(2), group=[3, -1])
