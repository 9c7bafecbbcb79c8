"""Tests of gpuboost.metric (and the array-module helpers in gpuboost._array).

Every metric is compared with a naive per-row / per-query loop written here,
with scikit-learn where it has the same definition, and with small cases
computed by hand.
"""

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.core.array import get_array_module, to_numpy
from gpuboost.metrics import (DEFAULT_ERROR_THRESHOLD, LOGLOSS_EPS, NDCG, Metric, MeanAveragePrecision, TweedieNegLogLik, evaluate, get_metric)

N_SAMPLES = 300
N_CLASSES = 4
RELATIVE_TOLERANCE = 1e-10


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _weights_or_none(rng, weighted, n_samples=N_SAMPLES):
    return rng.uniform(0.1, 3.0, size=n_samples) if weighted else None


def _weighted_mean_loop(losses, weight):
    weight = [1.0] * len(losses) if weight is None else list(weight)
    return sum(w * loss for w, loss in zip(weight, losses)) / sum(weight)


# ---------------------------------------------------------------------------
# naive references (plain Python loops over rows)
# ---------------------------------------------------------------------------


def naive_rmse(y, pred, weight):
    return math.sqrt(
        _weighted_mean_loop([(a - b) ** 2 for a, b in zip(y, pred)], weight)
    )


def naive_mae(y, pred, weight):
    return _weighted_mean_loop([abs(a - b) for a, b in zip(y, pred)], weight)


def naive_logloss(y, pred, weight):
    losses = []
    for label, proba in zip(y, pred):
        proba = min(max(proba, LOGLOSS_EPS), 1 - LOGLOSS_EPS)
        losses.append(-(label * math.log(proba) + (1 - label) * math.log(1 - proba)))
    return _weighted_mean_loop(losses, weight)


def naive_error(threshold):
    def error(y, pred, weight):
        mistakes = [
            float((proba > threshold) != (label == 1)) for label, proba in zip(y, pred)
        ]
        return _weighted_mean_loop(mistakes, weight)

    return error


def naive_poisson(y, pred, weight):
    losses = [math.lgamma(a + 1) + mu - a * math.log(mu) for a, mu in zip(y, pred)]
    return _weighted_mean_loop(losses, weight)


def naive_gamma(y, pred, weight):
    return _weighted_mean_loop(
        [a / mu + math.log(mu) for a, mu in zip(y, pred)], weight
    )


def naive_tweedie(rho):
    def tweedie(y, pred, weight):
        losses = [
            -a * mu ** (1 - rho) / (1 - rho) + mu ** (2 - rho) / (2 - rho)
            for a, mu in zip(y, pred)
        ]
        return _weighted_mean_loop(losses, weight)

    return tweedie


def naive_pinball(alpha):
    def pinball(y, pred, weight):
        losses = [
            alpha * (a - q) if a >= q else (1 - alpha) * (q - a)
            for a, q in zip(y, pred)
        ]
        return _weighted_mean_loop(losses, weight)

    return pinball


def naive_auc(y, pred, weight):
    """Weighted fraction of (positive, negative) pairs ordered correctly; ties 1/2."""
    weight = [1.0] * len(y) if weight is None else list(weight)
    concordant = 0.0
    for i in range(len(y)):
        if y[i] != 1:
            continue
        for j in range(len(y)):
            if y[j] != 0:
                continue
            if pred[i] > pred[j]:
                concordant += weight[i] * weight[j]
            elif pred[i] == pred[j]:
                concordant += 0.5 * weight[i] * weight[j]
    positive = sum(w for w, label in zip(weight, y) if label == 1)
    negative = sum(w for w, label in zip(weight, y) if label == 0)
    return concordant / (positive * negative)


def naive_mlogloss(y, proba, weight):
    losses = []
    for label, row in zip(y, proba):
        p = min(max(row[int(label)], LOGLOSS_EPS), 1 - LOGLOSS_EPS)
        losses.append(-math.log(p))
    return _weighted_mean_loop(losses, weight)


def naive_merror(y, proba, weight):
    losses = []
    for label, row in zip(y, proba):
        best_class = max(range(len(row)), key=lambda c: (row[c], -c))
        losses.append(float(best_class != int(label)))
    return _weighted_mean_loop(losses, weight)


def _ranked_labels(labels, scores):
    """Labels of one query by decreasing score, ties in original order."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [labels[i] for i in order]


def naive_ndcg_query(labels, scores, k):
    k = len(labels) if k is None else k

    def dcg(ranked):
        return sum(
            (2**rel - 1) / math.log2(rank + 1) for rank, rel in enumerate(ranked[:k], 1)
        )

    ideal = dcg(sorted(labels, reverse=True))
    return 1.0 if ideal == 0 else dcg(_ranked_labels(labels, scores)) / ideal


def naive_map_query(labels, scores, k):
    k = len(labels) if k is None else k
    ranked = _ranked_labels(labels, scores)
    n_relevant = sum(1 for rel in labels if rel > 0)
    if n_relevant == 0:
        return 1.0
    hits, precision_sum = 0, 0.0
    for rank, rel in enumerate(ranked[:k], 1):
        if rel > 0:
            hits += 1
            precision_sum += hits / rank
    return precision_sum / min(n_relevant, k)


def naive_ranking(query_metric, k):
    def metric(y, pred, group, query_weight=None):
        scores, start = [], 0
        for size in group:
            scores.append(
                query_metric(
                    list(y[start : start + size]), list(pred[start : start + size]), k
                )
            )
            start += size
        return _weighted_mean_loop(scores, query_weight)

    return metric


# ---------------------------------------------------------------------------
# random data
# ---------------------------------------------------------------------------


def _binary_data(rng):
    y = rng.integers(0, 2, size=N_SAMPLES).astype(np.float64)
    # rounding creates many tied scores
    pred = np.round(np.clip(0.3 * y + rng.uniform(0, 0.7, size=N_SAMPLES), 0, 1), 2)
    pred[:3] = [0.0, 1.0, 0.5]  # exercise the clipping and the threshold
    return y, pred


def _regression_data(rng):
    y = rng.normal(size=N_SAMPLES)
    return y, y + rng.normal(scale=0.5, size=N_SAMPLES)


def _positive_data(rng):
    y = rng.poisson(2.0, size=N_SAMPLES).astype(np.float64)
    return y, rng.uniform(0.2, 5.0, size=N_SAMPLES)


def _gamma_data(rng):
    return rng.gamma(2.0, 1.5, size=N_SAMPLES), rng.uniform(0.2, 5.0, size=N_SAMPLES)


def _multiclass_data(rng):
    y = rng.integers(0, N_CLASSES, size=N_SAMPLES).astype(np.float64)
    logits = rng.normal(size=(N_SAMPLES, N_CLASSES))
    logits[np.arange(N_SAMPLES), y.astype(int)] += 1.0
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    proba[0] = [0.25] * N_CLASSES  # tie across all classes
    return y, proba


def _ranking_data(rng):
    group = np.array([1, 5, 8, 3, 12, 7, 4, 10])
    n_samples = group.sum()
    y = rng.integers(0, 4, size=n_samples).astype(np.float64)
    y[1:6] = 0  # the second query has no relevant document
    pred = np.round(rng.normal(size=n_samples), 1)  # tied scores
    return y, pred, group


POINTWISE_CASES = [
    ("rmse", _regression_data, naive_rmse),
    ("mae", _regression_data, naive_mae),
    ("logloss", _binary_data, naive_logloss),
    ("error", _binary_data, naive_error(DEFAULT_ERROR_THRESHOLD)),
    ("error@0.7", _binary_data, naive_error(0.7)),
    ("error@0.25", _binary_data, naive_error(0.25)),
    ("auc", _binary_data, naive_auc),
    ("mlogloss", _multiclass_data, naive_mlogloss),
    ("merror", _multiclass_data, naive_merror),
    ("poisson-nloglik", _positive_data, naive_poisson),
    ("gamma-nloglik", _gamma_data, naive_gamma),
    ("tweedie-nloglik", _positive_data, naive_tweedie(1.5)),
    ("tweedie-nloglik@1.2", _positive_data, naive_tweedie(1.2)),
    ("pinball", _regression_data, naive_pinball(0.5)),
    ("pinball@0.9", _regression_data, naive_pinball(0.9)),
]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name, make_data, reference", POINTWISE_CASES)
def test_metric_matches_naive_loop(rng, name, make_data, reference, weighted):
    y, pred = make_data(rng)
    weight = _weights_or_none(rng, weighted)
    value = get_metric(name)(y, pred, weight=weight)
    assert type(value) is float
    expected = reference(
        list(y), [list(row) if np.ndim(row) else row for row in pred], weight
    )
    assert value == pytest.approx(expected, rel=RELATIVE_TOLERANCE)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [None, 1, 3, 6])
@pytest.mark.parametrize(
    "metric_class, query_metric",
    [(NDCG, naive_ndcg_query), (MeanAveragePrecision, naive_map_query)],
)
def test_ranking_metric_matches_naive_loop(
    rng, metric_class, query_metric, k, weighted
):
    y, pred, group = _ranking_data(rng)
    query_weight = _weights_or_none(rng, weighted, n_samples=len(group))
    value = metric_class(k)(y, pred, weight=query_weight, group=group)
    expected = naive_ranking(query_metric, k)(y, pred, group, query_weight)
    assert value == pytest.approx(expected, rel=RELATIVE_TOLERANCE)


def test_poisson_uses_log_gamma_of_labels():
    # Poisson(mu=1) probability of y=3 is exp(-1) / 3!, so nloglik = 1 + log 6.
    value = get_metric("poisson-nloglik")(np.array([3.0]), np.array([1.0]))
    assert value == pytest.approx(1.0 + math.log(6.0))


def test_poisson_log_gamma_without_scipy(rng, monkeypatch):
    y, pred = _positive_data(rng)
    with_scipy = get_metric("poisson-nloglik")(y, pred)
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # import fails
    assert get_metric("poisson-nloglik")(y, pred) == pytest.approx(with_scipy)
    assert with_scipy == pytest.approx(naive_poisson(list(y), list(pred), None))


def test_tweedie_at_variance_power_one_is_poisson_without_label_term(rng):
    y, pred = _positive_data(rng)
    weight = _weights_or_none(rng, True)
    expected = _weighted_mean_loop(
        [mu - a * math.log(mu) for a, mu in zip(y, pred)], weight
    )
    assert get_metric("tweedie-nloglik@1")(y, pred, weight) == pytest.approx(expected)
    # continuity: close to rho = 1, the loss differs only by the label term y / (1 - rho)
    rho = 1.0 + 1e-7
    near = get_metric(f"tweedie-nloglik@{rho!r}")(y, pred, weight)
    label_term = _weighted_mean_loop([a / (1 - rho) for a in y], weight)
    assert near + label_term == pytest.approx(expected, rel=1e-5)


def test_logloss_clips_probabilities():
    logloss = get_metric("logloss")
    assert logloss(np.array([1.0]), np.array([0.0])) == pytest.approx(
        -math.log(LOGLOSS_EPS)
    )
    # 1 - LOGLOSS_EPS is rounded in float64, hence the explicit expression
    expected = -math.log(1.0 - (1.0 - LOGLOSS_EPS))
    assert logloss(np.array([0.0]), np.array([1.0])) == pytest.approx(expected)
    assert math.isfinite(
        get_metric("mlogloss")(np.array([0.0]), np.array([[0.0, 1.0]]))
    )


# ---------------------------------------------------------------------------
# scikit-learn as a second reference
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
def test_against_sklearn(rng, weighted):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    weight = _weights_or_none(rng, weighted)

    y, pred = _regression_data(rng)
    assert get_metric("rmse")(y, pred, weight) == pytest.approx(
        math.sqrt(sklearn_metrics.mean_squared_error(y, pred, sample_weight=weight))
    )
    assert get_metric("mae")(y, pred, weight) == pytest.approx(
        sklearn_metrics.mean_absolute_error(y, pred, sample_weight=weight)
    )
    for alpha in (0.1, 0.5, 0.9):
        assert get_metric(f"pinball@{alpha}")(y, pred, weight) == pytest.approx(
            sklearn_metrics.mean_pinball_loss(
                y, pred, alpha=alpha, sample_weight=weight
            )
        )

    y, pred = _binary_data(rng)
    interior = (pred > 0) & (
        pred < 1
    )  # sklearn clips extreme probabilities differently
    w = None if weight is None else weight[interior]
    assert get_metric("logloss")(y[interior], pred[interior], w) == pytest.approx(
        sklearn_metrics.log_loss(y[interior], pred[interior], sample_weight=w)
    )
    assert get_metric("auc")(y, pred, weight) == pytest.approx(
        sklearn_metrics.roc_auc_score(y, pred, sample_weight=weight)
    )
    assert get_metric("error")(y, pred, weight) == pytest.approx(
        1 - sklearn_metrics.accuracy_score(y, pred > 0.5, sample_weight=weight)
    )

    y, proba = _multiclass_data(rng)
    assert get_metric("mlogloss")(y, proba, weight) == pytest.approx(
        sklearn_metrics.log_loss(
            y, proba, sample_weight=weight, labels=range(N_CLASSES)
        )
    )
    assert get_metric("merror")(y, proba, weight) == pytest.approx(
        1
        - sklearn_metrics.accuracy_score(y, proba.argmax(axis=1), sample_weight=weight)
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_likelihoods_against_sklearn_deviances(rng, weighted):
    """The negative log-likelihoods are half the unit deviance plus a label-only term."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    weight = _weights_or_none(rng, weighted)

    def mean(values):
        return _weighted_mean_loop(list(values), weight)

    y, mu = _positive_data(rng)
    y_log_y = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)
    log_factorial = [math.lgamma(a + 1) for a in y]
    poisson_deviance = sklearn_metrics.mean_poisson_deviance(
        y, mu, sample_weight=weight
    )
    assert get_metric("poisson-nloglik")(y, mu, weight) == pytest.approx(
        poisson_deviance / 2 + mean(log_factorial - y_log_y + y)
    )
    for rho in (1.2, 1.5, 1.8):
        tweedie_deviance = sklearn_metrics.mean_tweedie_deviance(
            y, mu, power=rho, sample_weight=weight
        )
        label_term = mean(y ** (2 - rho) / ((1 - rho) * (2 - rho)))
        assert get_metric(f"tweedie-nloglik@{rho}")(y, mu, weight) == pytest.approx(
            tweedie_deviance / 2 - label_term
        )

    y, mu = _gamma_data(rng)
    gamma_deviance = sklearn_metrics.mean_gamma_deviance(y, mu, sample_weight=weight)
    assert get_metric("gamma-nloglik")(y, mu, weight) == pytest.approx(
        gamma_deviance / 2 + mean(np.log(y)) + 1
    )


# ---------------------------------------------------------------------------
# hand-computed cases
# ---------------------------------------------------------------------------


def test_auc_hand_computed_with_ties():
    y = np.array([0.0, 1.0, 0.0, 1.0])
    pred = np.array([0.5, 0.5, 0.2, 0.8])
    # pairs (pos, neg): (0.5, 0.5) tie -> 1/2, (0.5, 0.2), (0.8, 0.5), (0.8, 0.2) -> 1
    assert get_metric("auc")(y, pred) == pytest.approx(3.5 / 4)
    # weight 3 on the tied positive: pairs with it count 3 times
    weight = np.array([1.0, 3.0, 1.0, 1.0])
    assert get_metric("auc")(y, pred, weight) == pytest.approx(
        (3 * 0.5 + 3 + 2) / (4 * 2)
    )


def test_auc_with_one_class_is_nan():
    assert math.isnan(get_metric("auc")(np.ones(5), np.linspace(0, 1, 5)))
    # a class present only with zero weight counts as absent
    y = np.array([0.0, 1.0, 1.0])
    assert math.isnan(
        get_metric("auc")(y, np.array([0.1, 0.2, 0.3]), np.array([0.0, 1.0, 1.0]))
    )


def test_auc_rejects_labels_outside_unit_interval():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        get_metric("auc")(np.array([0.0, 2.0]), np.array([0.1, 0.9]))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 5), st.floats(0.1, 10.0)),
        min_size=2,
        max_size=30,
    )
)
def test_auc_matches_pairwise_definition_and_is_rank_invariant(rows):
    y = np.array([row[0] for row in rows], dtype=np.float64)
    score = np.array([row[1] for row in rows], dtype=np.float64)
    weight = np.array([row[2] for row in rows])
    value = get_metric("auc")(y, score, weight)
    if y.min() == y.max():
        assert math.isnan(value)
        return
    assert value == pytest.approx(naive_auc(list(y), list(score), list(weight)))
    # a strictly increasing transform of the scores keeps every pair and tie
    assert get_metric("auc")(y, np.exp(score / 3), weight) == pytest.approx(value)


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
    assert get_metric("ndcg@2")(labels, pred, group=group) == pytest.approx(
        _dcg(0, 7) / _dcg(7, 3)
    )
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
    pred = np.array(
        [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    )  # already ranked; hits at ranks 1, 3, 6
    group = [6]
    assert get_metric("map")(labels, pred, group=group) == pytest.approx(
        (1 + 2 / 3 + 3 / 6) / 3
    )
    assert get_metric("map@3")(labels, pred, group=group) == pytest.approx(
        (1 + 2 / 3) / 3
    )
    assert get_metric("map@2")(labels, pred, group=group) == pytest.approx(1 / 2)
    assert get_metric("map@1")(labels, pred, group=group) == 1.0


def test_map_ties_and_query_without_relevant_document():
    labels = np.array([0.0, 1.0, 0.0, 0.0])
    pred = np.array([1.0, 1.0, 7.0, 3.0])
    # query 1: tie, first row (irrelevant) ranked first -> AP = 1/2; query 2: none -> 1
    assert get_metric("map")(labels, pred, group=[2, 2]) == pytest.approx(
        (0.5 + 1.0) / 2
    )


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
    assert ndcg(labels, pred, weight=row_weight, group=group) == pytest.approx(
        np.mean(per_query)
    )
    with pytest.raises(ValueError, match="one entry per query"):
        ndcg(labels, pred, weight=np.ones(4), group=group)


def test_empty_query_counts_as_query_without_relevant_document():
    labels = np.array([1.0, 0.0])
    pred = np.array([0.0, 1.0])
    with_empty = get_metric("map")(labels, pred, group=[0, 2])
    assert with_empty == pytest.approx((1.0 + 0.5) / 2)


# ---------------------------------------------------------------------------
# names, parameters and errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, canonical_name, higher_is_better",
    [
        ("rmse", "rmse", False),
        ("mae", "mae", False),
        ("logloss", "logloss", False),
        ("error", "error", False),
        ("error@0.7", "error@0.7", False),
        ("error@0.5", "error", False),
        ("auc", "auc", True),
        ("mlogloss", "mlogloss", False),
        ("merror", "merror", False),
        ("poisson-nloglik", "poisson-nloglik", False),
        ("gamma-nloglik", "gamma-nloglik", False),
        ("tweedie-nloglik", "tweedie-nloglik@1.5", False),
        ("tweedie-nloglik@1.5", "tweedie-nloglik@1.5", False),
        ("tweedie-nloglik@1.20", "tweedie-nloglik@1.2", False),
        ("pinball", "pinball@0.5", False),
        ("pinball@0.9", "pinball@0.9", False),
        ("pinball@.25", "pinball@0.25", False),
        ("tweedie-nloglik@1", "tweedie-nloglik@1.0", False),
        ("ndcg@05", "ndcg@5", True),
        ("ndcg", "ndcg", True),
        ("ndcg@5", "ndcg@5", True),
        ("map", "map", True),
        ("map@3", "map@3", True),
    ],
)
def test_names_and_direction(name, canonical_name, higher_is_better):
    metric = get_metric(name)
    assert isinstance(metric, Metric)
    assert metric.name == canonical_name
    assert metric.higher_is_better is higher_is_better
    assert get_metric(metric.name).name == canonical_name


def test_error_threshold_parsing():
    metric = get_metric("error@0.7")
    assert metric.threshold == 0.7
    y = np.array([1.0, 1.0, 0.0, 0.0])
    pred = np.array([0.6, 0.8, 0.6, 0.71])
    # at 0.7: predicted 0, 1, 0, 1 -> mistakes on rows 0 and 3
    assert metric(y, pred) == 0.5
    # at 0.5: predicted 1, 1, 1, 1 -> mistakes on rows 2 and 3
    assert get_metric("error")(y, pred) == 0.5
    assert (
        get_metric("error@0.65")(np.array([1.0]), np.array([0.65])) == 1.0
    )  # strictly greater


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError) as error:
        get_metric("accuracy")
    message = str(error.value)
    assert "accuracy" in message
    for valid in (
        "rmse",
        "auc",
        "ndcg@<k>",
        "tweedie-nloglik@<rho>",
        "pinball@<alpha>",
    ):
        assert valid in message


@pytest.mark.parametrize(
    "name",
    [
        "rmse@3",
        "auc@0.5",
        "error@",
        "error@abc",
        "error@nan",
        "ndcg@0",
        "ndcg@-1",
        "ndcg@2.5",
        "map@x",
        "tweedie-nloglik@2",
        "tweedie-nloglik@0.9",
        "pinball@0",
        "pinball@1",
        "RMSE",
        "",
    ],
)
def test_invalid_names_raise(name):
    with pytest.raises(ValueError):
        get_metric(name)


def test_constructor_validation():
    with pytest.raises(ValueError):
        NDCG(k=0)
    with pytest.raises(ValueError):
        MeanAveragePrecision(k=2.0)
    with pytest.raises(ValueError):
        TweedieNegLogLik(variance_power=2.0)
    assert TweedieNegLogLik(1.0).name == "tweedie-nloglik@1.0"


@pytest.mark.parametrize("name", ["ndcg", "ndcg@3", "map", "map@2"])
def test_ranking_without_group_raises(name):
    with pytest.raises(ValueError, match="group"):
        get_metric(name)(np.array([1.0, 0.0]), np.array([0.2, 0.1]))


def test_group_must_cover_all_rows():
    with pytest.raises(ValueError, match="sum to 3"):
        get_metric("ndcg")(np.zeros(4), np.zeros(4), group=[1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        get_metric("ndcg")(np.zeros(2), np.zeros(2), group=[3, -1])


def test_input_validation():
    with pytest.raises(ValueError, match="shape"):
        get_metric("rmse")(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        get_metric("rmse")(np.zeros(3), np.zeros(3), weight=np.ones(2))
    with pytest.raises(ValueError, match="non-negative"):
        get_metric("rmse")(np.zeros(2), np.zeros(2), weight=np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="positive"):
        get_metric("rmse")(np.zeros(2), np.zeros(2), weight=np.zeros(2))
    with pytest.raises(ValueError, match="zero samples"):
        get_metric("mae")(np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError, match="n_classes"):
        get_metric("mlogloss")(np.zeros(3), np.full(3, 0.5))
    with pytest.raises(ValueError, match="integers"):
        get_metric("merror")(np.array([0.0, 3.0]), np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="integers"):
        get_metric("mlogloss")(np.array([0.5, 1.0]), np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="non-negative"):
        get_metric("ndcg")(np.array([-1.0, 1.0]), np.zeros(2), group=[2])


def test_column_predictions_accepted():
    y = np.array([1.0, 2.0, 4.0])
    pred = np.array([1.5, 2.0, 3.0])
    assert get_metric("rmse")(y, pred[:, None]) == get_metric("rmse")(y, pred)


def test_evaluate_returns_names_and_values_in_order(rng):
    y, pred = _binary_data(rng)
    weight = _weights_or_none(rng, True)
    names = ["auc", "error@0.7", "logloss"]
    results = evaluate(names, y, pred, weight=weight)
    assert [name for name, _ in results] == names
    for (_, value), name in zip(results, names):
        assert value == get_metric(name)(y, pred, weight=weight)
    assert evaluate("rmse", y, pred) == [("rmse", get_metric("rmse")(y, pred))]
    assert evaluate([NDCG(2)], y[:4], pred[:4], group=[4])[0][0] == "ndcg@2"


def test_lists_are_accepted(rng):
    assert get_metric("mae")(
        [1.0, 2.0], [2.0, 4.0], weight=[1.0, 3.0]
    ) == pytest.approx(7 / 4)


# ---------------------------------------------------------------------------
# array-module helpers
# ---------------------------------------------------------------------------


def test_get_array_module_numpy_without_importing_cupy():
    assert get_array_module(np.zeros(2), None, [1, 2], 3.0) is np
    assert get_array_module() is np


def test_to_numpy():
    host = np.arange(3.0)
    assert to_numpy(host) is host
    np.testing.assert_array_equal(to_numpy([1, 2]), np.array([1, 2]))


@pytest.mark.gpu
def test_cupy_arrays_match_numpy():
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(1)
    y, pred = _binary_data(rng)
    weight = _weights_or_none(rng, True)
    device = [cupy.asarray(a) for a in (y, pred, weight)]
    assert get_array_module(np.zeros(1), device[0]) is cupy
    np.testing.assert_array_equal(to_numpy(device[1]), pred)
    for name in (
        "rmse",
        "mae",
        "logloss",
        "error",
        "auc",
        "pinball@0.3",
        "poisson-nloglik",
    ):
        assert get_metric(name)(*device) == pytest.approx(
            get_metric(name)(y, pred, weight)
        )
    y, proba = _multiclass_data(rng)
    for name in ("mlogloss", "merror"):
        assert get_metric(name)(cupy.asarray(y), cupy.asarray(proba)) == pytest.approx(
            get_metric(name)(y, proba)
        )
    y, pred, group = _ranking_data(rng)
    for name in ("ndcg@3", "map"):
        assert get_metric(name)(
            cupy.asarray(y), cupy.asarray(pred), group=group
        ) == pytest.approx(get_metric(name)(y, pred, group=group))
