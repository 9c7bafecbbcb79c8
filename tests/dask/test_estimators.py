"""gpuboost.dask estimators: the boosters of the single-node estimators, lazy predictions."""

import numpy as np
import pytest

pytest.importorskip("distributed")

import _dask_cluster as dc

import gpuboost
from gpuboost.dask import DaskGBClassifier, DaskGBRanker, DaskGBRegressor

#: Every Dask test on one xdist worker (pyproject: --dist loadgroup), which starts the
#: session's clusters once.
pytestmark = pytest.mark.xdist_group("dask")


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1500, 6))
    return X, rng


def test_regressor_matches_gbregressor(client):
    X, rng = _data(0)
    y = X[:, 0] * 2 + rng.normal(size=len(X))
    Xv, yv = X[:300] + 0.1, y[:300]
    kwargs = dict(
        n_estimators=8,
        max_depth=3,
        subsample=0.8,
        device="cpu",
        random_state=3,
        early_stopping_rounds=2,
        learning_rate=0.8,
    )
    single = gpuboost.GBRegressor(**kwargs).fit(X, y, eval_set=[(Xv, yv)])
    sizes = dc.uneven_sizes(len(X), 3)
    model = DaskGBRegressor(**kwargs)
    model.client = client
    model.fit(
        dc.spread(client, X, sizes, 2),
        dc.spread(client, y, sizes, 2),
        eval_set=[(dc.spread(client, Xv, [100, 200], 2), dc.spread(client, yv, [100, 200], 2))],
    )
    assert model.get_booster().save_raw() == single.get_booster().save_raw()
    assert model.evals_result_ == single.evals_result_
    assert model.best_iteration == single.best_iteration
    np.testing.assert_array_equal(
        model.predict(dc.spread(client, X, sizes, 2)).compute(), single.predict(X)
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_matches_gbclassifier(client, n_classes):
    X, rng = _data(1)
    labels = np.array(["ant", "bee", "cat"])[:n_classes]
    y = labels[np.digitize(X[:, 0] + 0.3 * rng.normal(size=len(X)), [-0.4, 0.4][: n_classes - 1])]
    kwargs = dict(n_estimators=4, max_depth=3, device="cpu")
    single = gpuboost.GBClassifier(**kwargs).fit(X, y)
    sizes = dc.uneven_sizes(len(X), 4)
    model = DaskGBClassifier(**kwargs)
    model.client = client
    dX = dc.spread(client, X, sizes, 2)
    model.fit(dX, dc.spread(client, y, sizes, 2))
    assert model.get_booster().save_raw() == single.get_booster().save_raw()
    assert model.classes_.tolist() == labels.tolist()
    np.testing.assert_array_equal(model.predict(dX).compute(), single.predict(X))
    np.testing.assert_array_equal(model.predict_proba(dX).compute(), single.predict_proba(X))


def test_ranker_matches_gbranker(client):
    X, rng = _data(2)
    group = np.full(50, 30)
    y = np.clip(np.rint(X[:, 0] + rng.normal(size=len(X))), 0, 3)
    Xv, yv, gv = X[:300], y[:300], np.full(10, 30)
    kwargs = dict(n_estimators=4, max_depth=3, device="cpu")
    single = gpuboost.GBRanker(**kwargs).fit(
        X, y, group=group, eval_set=[(Xv, yv)], eval_group=[gv]
    )
    sizes = dc.uneven_sizes(len(X), 5)
    model = DaskGBRanker(**kwargs)
    model.client = client
    dX = dc.spread(client, X, sizes, 3)
    model.fit(
        dX,
        dc.spread(client, y, sizes, 3),
        group=group,
        eval_set=[(dc.spread(client, Xv, [120, 180], 2), dc.spread(client, yv, [120, 180], 2))],
        eval_group=[gv],
    )
    assert model.get_booster().save_raw() == single.get_booster().save_raw()
    assert model.evals_result_ == single.evals_result_
    np.testing.assert_array_equal(model.predict(dX).compute(), single.predict(X))


def test_ranker_takes_query_ids(client):
    X, rng = _data(5)
    qid = np.repeat(np.arange(50)[::-1], 30)
    y = np.clip(np.rint(X[:, 0] + rng.normal(size=len(X))), 0, 3)
    Xv, yv, qv = X[:300], y[:300], np.repeat(np.arange(10), 30)
    kwargs = dict(n_estimators=4, max_depth=3, device="cpu")
    single = gpuboost.GBRanker(**kwargs).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    sizes = dc.uneven_sizes(len(X), 4)
    model = DaskGBRanker(**kwargs)
    model.client = client
    model.fit(
        dc.spread(client, X, sizes, 2),
        dc.spread(client, y, sizes, 2),
        qid=dc.spread(client, qid, sizes, 2),
        eval_set=[(dc.spread(client, Xv, [120, 180], 2), dc.spread(client, yv, [120, 180], 2))],
        eval_qid=[dc.spread(client, qv, [120, 180], 2)],
    )
    assert model.get_booster().save_raw() == single.get_booster().save_raw()
    assert model.evals_result_ == single.evals_result_


def _pseudo_huber(y_true, raw_margin):
    """A per-row custom objective of the scikit-learn style (y_true, raw_margin)."""
    residual = raw_margin - y_true
    scale = np.sqrt(1.0 + residual**2)
    return residual / scale, 1.0 / scale**3


def test_regressor_takes_a_custom_objective(client):
    X, rng = _data(4)
    y = X[:, 0] * 2 + rng.standard_t(2, size=len(X))
    kwargs = dict(n_estimators=4, max_depth=3, device="cpu", objective=_pseudo_huber)
    single = gpuboost.GBRegressor(**kwargs).fit(X, y)
    sizes = dc.uneven_sizes(len(X), 3)
    model = DaskGBRegressor(**kwargs)
    model.client = client
    model.fit(dc.spread(client, X, sizes, 2), dc.spread(client, y, sizes, 2))
    assert model.get_booster().save_raw() == single.get_booster().save_raw()
    np.testing.assert_array_equal(
        model.predict(dc.spread(client, X, sizes, 2)).compute(), single.predict(X)
    )


def test_the_estimators_take_feature_weights(client):
    X, rng = _data(4)
    y = X @ rng.normal(size=6) + rng.normal(size=len(X))
    weights = np.array([0.1, 1.0, 0.0, 2.0, 0.5, 1.0])
    kwargs = dict(n_estimators=4, max_depth=3, colsample_bynode=0.5, device="cpu")
    single = gpuboost.GBRegressor(**kwargs).fit(X, y, feature_weights=weights)
    sizes = dc.uneven_sizes(len(X), 3)
    model = DaskGBRegressor(**kwargs)
    model.client = client
    model.fit(
        dc.spread(client, X, sizes, 2), dc.spread(client, y, sizes, 2), feature_weights=weights
    )
    assert model.get_booster().save_raw() == single.get_booster().save_raw()
    assert model.get_booster().feature_importance("weight")[2] == 0  # weight 0: never drawn


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_forests_match_the_single_node_forests(client, kind):
    """DaskGBRFRegressor / DaskGBRFClassifier: XGBoost's forest defaults, one round of
    n_estimators trees, the single-node forest's bytes."""
    from gpuboost.dask import DaskGBRFClassifier, DaskGBRFRegressor

    X, rng = _data(7)
    y = X[:, 0] * 2 + rng.normal(size=len(X))
    if kind == "classifier":
        y = (y > 0).astype(float)
    single_class, dask_class = (
        (gpuboost.GBRFRegressor, DaskGBRFRegressor)
        if kind == "regressor"
        else (gpuboost.GBRFClassifier, DaskGBRFClassifier)
    )
    kwargs = dict(n_estimators=6, max_depth=3, device="cpu", random_state=4)
    single = single_class(**kwargs).fit(X, y)
    sizes = dc.uneven_sizes(len(X), 3)
    model = dask_class(**kwargs)
    assert model.get_params()["subsample"] == 0.8 and model.get_params()["learning_rate"] == 1.0
    model.client = client
    model.fit(dc.spread(client, X, sizes, 2), dc.spread(client, y, sizes, 2))
    assert model.get_booster().num_boosted_rounds() == 1
    assert model.get_booster().save_raw() == single.get_booster().save_raw()
    with pytest.raises(ValueError, match="init_model"):
        model.fit(
            dc.spread(client, X, sizes, 2),
            dc.spread(client, y, sizes, 2),
            init_model=single.get_booster(),
        )
