"""The Metric interface and its shared input checks (gpuboost.metrics.base), with
the array-module helpers it dispatches on (gpuboost.core.array)."""

import numpy as np
import pytest
from _metric_references import _binary_data, _multiclass_data, _ranking_data, _weights_or_none

from gpuboost.core.array import get_array_module, to_numpy
from gpuboost.metrics import get_metric


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


def test_lists_are_accepted(rng):
    assert get_metric("mae")([1.0, 2.0], [2.0, 4.0], weight=[1.0, 3.0]) == pytest.approx(7 / 4)


# ---------------------------------------------------------------------------
# array-module helpers
# ---------------------------------------------------------------------------


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
        assert get_metric(name)(*device) == pytest.approx(get_metric(name)(y, pred, weight))
    y, proba = _multiclass_data(rng)
    for name in ("mlogloss", "merror"):
        assert get_metric(name)(cupy.asarray(y), cupy.asarray(proba)) == pytest.approx(
            get_metric(name)(y, proba)
        )
    y, pred, group = _ranking_data(rng)
    for name in ("ndcg@3", "map"):
        assert get_metric(name)(cupy.asarray(y), cupy.asarray(pred), group=group) == pytest.approx(
            get_metric(name)(y, pred, group=group)
        )
