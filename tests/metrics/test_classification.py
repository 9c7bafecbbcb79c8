"""Classification metrics (gpuboost.metrics.classification): logloss, error, auc,
mlogloss, merror against naive loops, scikit-learn and hand-computed values."""

import math

import numpy as np
import pytest
from _metric_references import (
    N_CLASSES,
    _binary_data,
    _multiclass_data,
    _regression_data,
    _weights_or_none,
    assert_matches_naive_loop,
    naive_auc,
    naive_error,
    naive_logloss,
    naive_merror,
    naive_mlogloss,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.metrics import DEFAULT_ERROR_THRESHOLD, LOGLOSS_EPS, get_metric

CLASSIFICATION_CASES = [
    ("logloss", _binary_data, naive_logloss),
    ("error", _binary_data, naive_error(DEFAULT_ERROR_THRESHOLD)),
    ("error@0.7", _binary_data, naive_error(0.7)),
    ("error@0.25", _binary_data, naive_error(0.25)),
    ("auc", _binary_data, naive_auc),
    ("mlogloss", _multiclass_data, naive_mlogloss),
    ("merror", _multiclass_data, naive_merror),
]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name, make_data, reference", CLASSIFICATION_CASES)
def test_metric_matches_naive_loop(rng, name, make_data, reference, weighted):
    assert_matches_naive_loop(rng, name, make_data, reference, weighted)


def test_logloss_clips_probabilities():
    logloss = get_metric("logloss")
    assert logloss(np.array([1.0]), np.array([0.0])) == pytest.approx(-math.log(LOGLOSS_EPS))
    # 1 - LOGLOSS_EPS is rounded in float64, hence the explicit expression
    expected = -math.log(1.0 - (1.0 - LOGLOSS_EPS))
    assert logloss(np.array([0.0]), np.array([1.0])) == pytest.approx(expected)
    assert math.isfinite(get_metric("mlogloss")(np.array([0.0]), np.array([[0.0, 1.0]])))


# ---------------------------------------------------------------------------
# scikit-learn as a second reference
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
def test_against_sklearn(rng, weighted):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    weight = _weights_or_none(rng, weighted)
    _regression_data(rng)  # drawn first, as in the pointwise half: the same data follow

    y, pred = _binary_data(rng)
    interior = (pred > 0) & (pred < 1)  # sklearn clips extreme probabilities differently
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
        sklearn_metrics.log_loss(y, proba, sample_weight=weight, labels=range(N_CLASSES))
    )
    assert get_metric("merror")(y, proba, weight) == pytest.approx(
        1 - sklearn_metrics.accuracy_score(y, proba.argmax(axis=1), sample_weight=weight)
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
    assert get_metric("auc")(y, pred, weight) == pytest.approx((3 * 0.5 + 3 + 2) / (4 * 2))


def test_auc_with_one_class_is_nan():
    assert math.isnan(get_metric("auc")(np.ones(5), np.linspace(0, 1, 5)))
    # a class present only with zero weight counts as absent
    y = np.array([0.0, 1.0, 1.0])
    assert math.isnan(get_metric("auc")(y, np.array([0.1, 0.2, 0.3]), np.array([0.0, 1.0, 1.0])))


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


def test_error_threshold_parsing():
    metric = get_metric("error@0.7")
    assert metric.threshold == 0.7
    y = np.array([1.0, 1.0, 0.0, 0.0])
    pred = np.array([0.6, 0.8, 0.6, 0.71])
    # at 0.7: predicted 0, 1, 0, 1 -> mistakes on rows 0 and 3
    assert metric(y, pred) == 0.5
    # at 0.5: predicted 1, 1, 1, 1 -> mistakes on rows 2 and 3
    assert get_metric("error")(y, pred) == 0.5
    assert get_metric("error@0.65")(np.array([1.0]), np.array([0.65])) == 1.0  # strictly greater
