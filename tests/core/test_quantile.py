"""Tests of gpuboost.core.quantile: the weighted lower quantile of the leaf refits."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.core.dtypes import Y_DTYPE
from gpuboost.core.quantile import weighted_quantile


@pytest.mark.parametrize(
    "values, weights, alpha, expected",
    [
        ([3.0, 1.0, 2.0], None, 0.5, 2.0),
        ([1.0, 2.0, 3.0, 4.0], None, 0.5, 2.0),  # lower median
        ([5.0, 1.0, 1.0, 3.0], None, 0.5, 1.0),  # ties
        ([5.0, 1.0, 1.0, 3.0], None, 0.51, 3.0),
        ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0], 0.25, 1.0),  # exactly reached
        ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0], 0.3, 3.0),  # skips zero weight
        ([1.0, 2.0, 3.0], [1.0, 1.0, 0.0], 1.0, 2.0),
        ([2.0, 1.0, 3.0], [0.0, 1.0, 1.0], 0.0, 1.0),  # alpha 0: smallest
        ([7.0], [2.0], 0.9, 7.0),
        ([2.0, 2.0, 1.0, 1.0], [0.25, 0.25, 0.25, 0.25], 0.5, 1.0),
    ],
)
def test_weighted_quantile_hand_made(values, weights, alpha, expected):
    assert weighted_quantile(values, weights, alpha) == expected


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 4)), min_size=1, max_size=30).filter(
        lambda pairs: sum(w for _, w in pairs) > 0
    ),
    alpha=st.floats(0.01, 1.0),
)
def test_weighted_quantile_matches_inverted_cdf(data, alpha):
    values = np.array([v for v, _ in data], dtype=Y_DTYPE)
    weights = np.array([w for _, w in data], dtype=Y_DTYPE)
    expected = np.quantile(values, alpha, method="inverted_cdf", weights=weights)
    assert weighted_quantile(values, weights, alpha) == expected


def test_weighted_quantile_errors():
    with pytest.raises(ValueError, match="non-empty"):
        weighted_quantile([], None, 0.5)
    with pytest.raises(ValueError, match="NaN"):
        weighted_quantile([1.0, np.nan], None, 0.5)
    with pytest.raises(ValueError, match="alpha"):
        weighted_quantile([1.0], None, 1.5)
    with pytest.raises(ValueError, match="total weight"):
        weighted_quantile([1.0, 2.0], [0.0, 0.0], 0.5)
