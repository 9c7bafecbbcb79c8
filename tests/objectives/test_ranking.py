"""Ranking objectives (gpuboost.objectives.ranking): lambda gradients against a naive
per-query pair loop, accuracy on LightGBM's rank example, CPU/CUDA parity (emulation),
group and qid inputs, and the scikit-learn ranker."""

import types

import _reference_data as ref
import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both
from _tiers import SLOW

import gpuboost
from gpuboost import Dataset
from gpuboost.data.io import load_query_file, load_svmlight
from gpuboost.metrics import get_metric
from gpuboost.metrics import ranking as ranking_metrics
from gpuboost.objectives import OBJECTIVES, get_objective, ranking
from gpuboost.objectives.ranking import (
    RANKING_OBJECTIVE_CLASSES,
    ideal_dcg,
    lambdarank_gradients_naive,
)

RANK_OBJECTIVES = list(RANKING_OBJECTIVE_CLASSES)
#: The fixed-point pair sums round at 2**-40 of the largest pair term.
GRADIENT_RTOL = 1e-9

#: REFERENCE.md: LightGBM lambdarank, learning rate 0.1, num_leaves 31, min_data_in_leaf 50,
#: min_sum_hessian_in_leaf 5, 100 rounds, on rank.train / rank.test.
LIGHTGBM_NDCG = {1: 0.5937, 3: 0.6467, 5: 0.6703}
RANK_PARAMS = {
    "objective": "rank:ndcg",
    "grow_policy": "lossguide",
    "max_leaves": 31,
    "max_depth": 0,
    "min_data_in_leaf": 50,
    "min_child_weight": 5.0,
    "learning_rate": 0.1,
}
RANK_ROUNDS = 100


def _queries(seed, sizes, n_grades=4):
    """Labels, scores with ties, query sizes."""
    rng = np.random.default_rng(seed)
    group = np.asarray(sizes, dtype=np.int64)
    labels = rng.integers(0, n_grades, group.sum()).astype(np.float64)
    scores = np.round(rng.normal(size=group.sum()), 1)  # many tied scores
    return labels, scores, group


def _gradients(name, labels, scores, group, truncation_level, weight=None):
    objective = RANKING_OBJECTIVE_CLASSES[name](truncation_level)
    dataset = types.SimpleNamespace(label=labels, group=group)
    return objective.gradients(np, labels, scores, weight, dataset=dataset)


def _assert_close(actual, expected):
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=GRADIENT_RTOL * scale)


# ---- gradients against the naive loop --------------------------------------------
@pytest.mark.parametrize("name", RANK_OBJECTIVES)
@pytest.mark.parametrize("truncation_level", [1, 3, 30])
def test_gradients_match_naive_pair_loop(name, truncation_level):
    labels, scores, group = _queries(1, [5, 1, 12, 7, 3, 40, 2])
    labels[5] = 2.0  # a query of one document: no pairs
    labels[6:18] = 1.0  # a query whose labels are all equal: no pairs
    grad, hess = _gradients(name, labels, scores, group, truncation_level)
    grad_naive, hess_naive = lambdarank_gradients_naive(
        name, labels, scores, group, truncation_level
    )
    _assert_close(grad, grad_naive)
    _assert_close(hess, hess_naive)
    assert np.count_nonzero(grad_naive) >= 10  # not vacuous
    assert np.all(grad[5:18] == 0) and np.all(hess[5:18] == 0)
    assert np.all(hess >= 0)


@pytest.mark.parametrize("name", RANK_OBJECTIVES)
def test_truncation_limits_the_pairs(name):
    """With truncation level 1 only pairs with the top document count: the gradients
    differ from those of every pair, and documents below the top with the same label
    as the top one get nothing."""
    labels = np.array([0.0, 2.0, 1.0, 0.0, 1.0])
    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0])  # ranked in row order
    group = np.array([5])
    grad_top, _ = _gradients(name, labels, scores, group, 1)
    grad_all, _ = _gradients(name, labels, scores, group, 5)
    assert not np.allclose(grad_top, grad_all)
    # The top document (label 0) is below every relevant one in label: pushed down.
    assert grad_top[0] > 0
    assert grad_top[3] == 0  # label 0 like the top document: no pair with it


def test_gradients_are_weighted_per_row():
    labels, scores, group = _queries(2, [6, 9, 4])
    weight = np.linspace(0.5, 2.0, len(labels))
    grad, hess = _gradients("rank:ndcg", labels, scores, group, 30)
    grad_w, hess_w = _gradients("rank:ndcg", labels, scores, group, 30, weight=weight)
    np.testing.assert_array_equal(grad_w, grad * weight)
    np.testing.assert_array_equal(hess_w, hess * weight)


def test_score_ties_rank_in_row_order():
    """Equal scores are ranked by row: the earlier row sits higher, which changes the
    NDCG swap weights (positions differ), so the order matters and is fixed."""
    labels = np.array([2.0, 0.0, 1.0, 0.0])
    scores = np.zeros(4)
    grad, hess = _gradients("rank:ndcg", labels, scores, np.array([4]), 30)
    grad_naive, hess_naive = lambdarank_gradients_naive("rank:ndcg", labels, scores, [4], 30)
    _assert_close(grad, grad_naive)
    _assert_close(hess, hess_naive)
    permuted = _gradients("rank:ndcg", labels[::-1].copy(), scores, np.array([4]), 30)[0]
    assert not np.allclose(permuted[::-1], grad)  # row order decided the ranking


def test_chunking_does_not_change_the_gradients(monkeypatch):
    labels, scores, group = _queries(3, [3, 17, 8, 8, 25, 1, 6, 11])
    expected = _gradients("rank:map", labels, scores, group, 5)
    monkeypatch.setattr(ranking, "MAX_PAIR_CELLS_PER_CHUNK", 40)  # about a query a chunk
    layout = ranking.QueryLayout(labels, group, 5, np.asarray)
    assert len(layout.chunks) > 4
    got = _gradients("rank:map", labels, scores, group, 5)
    for actual, wanted in zip(got, expected):
        _assert_close(actual, wanted)


def test_ideal_dcg_is_truncated():
    labels = np.array([0.0, 3.0, 1.0, 2.0, 1.0])
    group = np.array([3, 2])
    discount = 1.0 / np.log2(np.arange(2, 5))
    np.testing.assert_allclose(
        ideal_dcg(labels, group, 2),
        [7.0 * discount[0] + 1.0 * discount[1], 3.0 * discount[0] + 1.0 * discount[1]],
    )
    np.testing.assert_allclose(ideal_dcg(labels, group, 1), [7.0, 3.0])


def test_gains_and_discounts_are_the_ndcg_metric_s():
    """One definition of the NDCG gains and discounts, shared with the metric."""
    assert ranking.ndcg_gains is ranking_metrics.ndcg_gains
    assert ranking.position_discounts is ranking_metrics.position_discounts


def test_objectives_are_registered_with_their_parameter():
    for name in RANK_OBJECTIVES:
        assert name in OBJECTIVES
        objective = get_objective(name, {"lambdarank_truncation_level": 7})
        assert objective.truncation_level == 7
        assert objective.get_params() == {"lambdarank_truncation_level": 7}
    assert (
        gpuboost.params.validate_params({"lambdarank_num_pair_per_sample": 4})[
            "lambdarank_truncation_level"
        ]
        == 4
    )


def test_errors():
    objective = get_objective("rank:ndcg")
    labels, scores, group = _queries(4, [4, 4])
    with pytest.raises(ValueError, match="group"):
        objective.gradients(
            np, labels, scores, None, dataset=types.SimpleNamespace(label=labels, group=None)
        )
    with pytest.raises(ValueError, match="non-negative"):
        objective.check_labels(np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="lambdarank_truncation_level"):
        ranking.NDCGLambdaRank(0)
    with pytest.raises(ValueError, match="group|qid"):
        gpuboost.train(
            {"objective": "rank:ndcg"}, Dataset(np.zeros((8, 1)), label=labels), num_boost_round=1
        )


# ---- training ---------------------------------------------------------------------
def _ranking_data(n_queries, seed, n_features=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 14, n_queries)
    X = rng.normal(size=(sizes.sum(), n_features))
    X[rng.random(sizes.sum()) < 0.1, 1] = np.nan
    relevance = X[:, 0] + 0.5 * np.nan_to_num(X[:, 1]) + 0.4 * rng.normal(size=sizes.sum())
    labels = np.digitize(relevance, [-0.5, 0.5, 1.2]).astype(np.float64)
    return X, labels, sizes


@pytest.mark.parametrize("name", RANK_OBJECTIVES)
def test_training_improves_ndcg(name):
    X, y, group = _ranking_data(60, seed=5)
    dtrain = Dataset(X, label=y, group=group)
    results = {}
    booster = gpuboost.train(
        {
            "objective": name,
            "max_depth": 3,
            "learning_rate": 0.3,
            "device": "cpu",
            "eval_metric": ["ndcg@5", "map"],
        },
        dtrain,
        num_boost_round=15,
        evals=[(dtrain, "train")],
        evals_result=results,
        verbose_eval=False,
    )
    ndcg = results["train"]["ndcg@5"]
    assert ndcg[-1] > ndcg[0] + 0.02
    scores = booster.predict(X)
    assert get_metric("ndcg@5")(y, scores, group=group) == pytest.approx(ndcg[-1])
    assert booster.objective.output(np, np.array([1.5]))[0] == 1.5  # identity link


def test_default_metric_and_model_round_trip(tmp_path):
    X, y, group = _ranking_data(20, seed=6)
    dtrain = Dataset(X, label=y, group=group)
    results = {}
    booster = gpuboost.train(
        {
            "objective": "rank:map",
            "lambdarank_truncation_level": 4,
            "max_depth": 2,
            "device": "cpu",
        },
        dtrain,
        num_boost_round=3,
        evals=[(dtrain, "train")],
        evals_result=results,
        verbose_eval=False,
    )
    assert list(results["train"]) == ["map"]
    path = tmp_path / "rank.json"
    booster.save_model(path)
    loaded = gpuboost.Booster.load_model(path)
    assert loaded.objective.truncation_level == 4
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


def test_group_and_qid_give_the_same_model():
    X, y, group = _ranking_data(25, seed=7)
    qid = np.repeat(np.arange(100, 100 + len(group)), group)
    params = {"objective": "rank:ndcg", "max_depth": 3, "device": "cpu"}
    by_group = gpuboost.train(params, Dataset(X, label=y, group=group), num_boost_round=4)
    by_qid = gpuboost.train(params, Dataset(X, label=y, qid=qid), num_boost_round=4)
    assert by_group.save_raw() == by_qid.save_raw()
    # The query structure matters: other query boundaries give another model.
    other = gpuboost.train(params, Dataset(X, label=y, group=[len(y)]), num_boost_round=4)
    assert other.save_raw() != by_group.save_raw()


def test_ranker_estimator_fits_every_ranking_objective():
    X, y, group = _ranking_data(40, seed=8)
    qid = np.repeat(np.arange(len(group)), group)
    for name in RANK_OBJECTIVES:
        ranker = gpuboost.GBRanker(
            objective=name, n_estimators=10, max_depth=3, learning_rate=0.3, device="cpu"
        )
        ranker.fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid])
        assert ranker.booster_.params["objective"] == name
        assert ranker.score(X, y, group=group) > 0.8
        assert "ndcg" in ranker.evals_result()["validation_0"]
    default = gpuboost.GBRanker(n_estimators=5, device="cpu").fit(X, y, group=group)
    assert default.booster_.params["objective"] == "rank:ndcg"
    with pytest.raises(ValueError, match="rank:nonsense"):
        gpuboost.GBRanker(objective="rank:nonsense", device="cpu").fit(X, y, group=group)


# ---- CPU / CUDA parity (emulated kernels) ------------------------------------------
@pytest.mark.parametrize("name", RANK_OBJECTIVES)
def test_cpu_and_cuda_models_are_identical(name, emulated_cuda):
    X, y, group = _ranking_data(30, seed=9)
    runs = train_on_both(
        {"objective": name, "max_depth": 3, "lambdarank_truncation_level": 5},
        lambda: Dataset(X, label=y, group=group, max_bin=31),
        3,
        evaluate_train=True,
    )
    assert_runs_match(runs)
    assert runs["cuda"].dataset._X_binned is None  # the CUDA backend bins on the device
    assert sum(tree.n_leaves for tree in runs["cpu"].model.trees) > 3


# ---- accuracy on LightGBM's rank example --------------------------------------------
@SLOW  # fast siblings: the rank:ndcg trainings above (the same objective, small data)
def test_ndcg_at_least_lightgbm_lambdarank():
    folder = ref.data_dir()
    files = [
        folder / name for name in ("rank.train", "rank.train.query", "rank.test", "rank.test.query")
    ]
    if not all(path.exists() for path in files):
        pytest.skip(f"rank.* example files not found in {folder}")
    X_train, y_train = load_svmlight(files[0])
    X_test, y_test = load_svmlight(files[2], n_features=X_train.shape[1])
    group_train, group_test = load_query_file(files[1]), load_query_file(files[3])
    dtrain = Dataset(X_train, label=y_train, group=group_train)
    booster = gpuboost.train(
        dict(RANK_PARAMS, device="cpu"), dtrain, RANK_ROUNDS, verbose_eval=False
    )
    scores = booster.predict(X_test)
    ndcg = {k: get_metric(f"ndcg@{k}")(y_test, scores, group=group_test) for k in LIGHTGBM_NDCG}
    for k, bar in LIGHTGBM_NDCG.items():
        assert ndcg[k] >= bar, f"NDCG@{k} {ndcg[k]:.4f} < LightGBM's {bar}; all: {ndcg}"
