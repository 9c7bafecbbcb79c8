"""Naive references and random data of the metric tests (tests/metrics/): plain
Python loops over rows and queries, written independently of gpuboost.metrics."""

import math

import numpy as np
import pytest

from gpuboost.metrics import LOGLOSS_EPS, get_metric

N_SAMPLES = 300
N_CLASSES = 4
RELATIVE_TOLERANCE = 1e-10


def _weights_or_none(rng, weighted, n_samples=N_SAMPLES):
    return rng.uniform(0.1, 3.0, size=n_samples) if weighted else None


def _weighted_mean_loop(losses, weight):
    weight = [1.0] * len(losses) if weight is None else list(weight)
    return sum(w * loss for w, loss in zip(weight, losses)) / sum(weight)


# ---------------------------------------------------------------------------
# naive references (plain Python loops over rows)
# ---------------------------------------------------------------------------


def naive_rmse(y, pred, weight):
    return math.sqrt(_weighted_mean_loop([(a - b) ** 2 for a, b in zip(y, pred)], weight))


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
        mistakes = [float((proba > threshold) != (label == 1)) for label, proba in zip(y, pred)]
        return _weighted_mean_loop(mistakes, weight)

    return error


def naive_poisson(y, pred, weight):
    losses = [math.lgamma(a + 1) + mu - a * math.log(mu) for a, mu in zip(y, pred)]
    return _weighted_mean_loop(losses, weight)


def naive_gamma(y, pred, weight):
    return _weighted_mean_loop([a / mu + math.log(mu) for a, mu in zip(y, pred)], weight)


def naive_tweedie(rho):
    def tweedie(y, pred, weight):
        losses = [
            -a * mu ** (1 - rho) / (1 - rho) + mu ** (2 - rho) / (2 - rho) for a, mu in zip(y, pred)
        ]
        return _weighted_mean_loop(losses, weight)

    return tweedie


def naive_pinball(alpha):
    def pinball(y, pred, weight):
        losses = [alpha * (a - q) if a >= q else (1 - alpha) * (q - a) for a, q in zip(y, pred)]
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
        return sum((2**rel - 1) / math.log2(rank + 1) for rank, rel in enumerate(ranked[:k], 1))

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
                query_metric(list(y[start : start + size]), list(pred[start : start + size]), k)
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


def assert_matches_naive_loop(rng, name, make_data, reference, weighted):
    """``get_metric(name)`` on ``make_data(rng)`` equals the naive ``reference``."""
    y, pred = make_data(rng)
    weight = _weights_or_none(rng, weighted)
    value = get_metric(name)(y, pred, weight=weight)
    assert type(value) is float
    expected = reference(list(y), [list(row) if np.ndim(row) else row for row in pred], weight)
    assert value == pytest.approx(expected, rel=RELATIVE_TOLERANCE)
