"""AdaBoost (SAMME, gpuboost.boosting.adaboost): agreement with scikit-learn's
AdaBoostClassifier, the Gini split scan against its naive loop, perfect and
worse-than-chance rounds, CPU/CUDA parity (emulation), the model file, and the
scikit-learn style estimator."""

import json

import numpy as np
import pytest
from _parity import assert_runs_match, train_on_both

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import get_backend
from gpuboost.boosting.adaboost import PERFECT_ROUND_TREE_WEIGHT, adaboost_params
from gpuboost.model.booster import samme_score_scale
from gpuboost.tree.splitters.exact import FeatureRanks
from gpuboost.tree.splitters.gini import (
    build_rank_class_histograms,
    build_rank_class_histograms_naive,
    find_best_gini_splits,
    find_best_gini_splits_naive,
)

sklearn_ensemble = pytest.importorskip("sklearn.ensemble")
sklearn_tree = pytest.importorskip("sklearn.tree")
sklearn_datasets = pytest.importorskip("sklearn.datasets")
sklearn_base = pytest.importorskip("sklearn.base")

N_TRAIN = 2000
N_ROUNDS = 50
#: The issue's bar: test error within one percentage point of scikit-learn's.
ERROR_TOLERANCE = 0.01
#: With tree_method='hist', continuous features are binned (255 quantile bins) where
#: scikit-learn splits between any two values, so the stumps differ slightly.
BINNED_ERROR_TOLERANCE = 0.03
#: scikit-learn's trees compare float32 features with midpoints of float32 values.
SKLEARN_THRESHOLD_RTOL = 1e-6


def _classification(n_classes, seed, decimals=None):
    X, y = sklearn_datasets.make_classification(
        n_samples=2 * N_TRAIN,
        n_features=10,
        n_informative=5,
        n_redundant=2,
        n_classes=n_classes,
        random_state=seed,
    )
    if decimals is not None:
        # At most 255 distinct values a feature: the bins are the midpoints between
        # values, exactly the thresholds scikit-learn's trees consider.
        X = np.round(X, decimals)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


def _sklearn_adaboost(X, y, n_rounds=N_ROUNDS, max_depth=1, sample_weight=None):
    model = sklearn_ensemble.AdaBoostClassifier(
        sklearn_tree.DecisionTreeClassifier(max_depth=max_depth),
        n_estimators=n_rounds,
        random_state=0,
    )
    return model.fit(X, y, sample_weight=sample_weight)


def _train(X, y, n_classes, rounds=N_ROUNDS, weight=None, **params):
    params = dict(params, booster="adaboost", device=params.get("device", "cpu"))
    if n_classes > 2:
        params["num_class"] = n_classes
    return gpuboost.train(params, Dataset(X, label=y, weight=weight), rounds, verbose_eval=False)


def _predicted_classes(booster, X):
    prediction = booster.predict(X)
    return (prediction > 0.5).astype(int) if prediction.ndim == 1 else np.argmax(prediction, 1)


# ---- agreement with scikit-learn -------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
def test_error_matches_sklearn_samme(n_classes):
    X, y, X_test, y_test = _classification(n_classes, seed=0, decimals=1)
    booster = _train(X, y, n_classes)
    reference = _sklearn_adaboost(X, y)
    error = np.mean(_predicted_classes(booster, X_test) != y_test)
    reference_error = np.mean(reference.predict(X_test) != y_test)
    assert abs(error - reference_error) <= ERROR_TOLERANCE, (error, reference_error)
    # The same weak learners: the same tree weights and probabilities.
    assert booster.num_boosted_rounds() == len(reference.estimators_) == N_ROUNDS
    np.testing.assert_allclose(booster.tree_weights, reference.estimator_weights_, rtol=1e-6)
    probabilities = booster.predict(X_test)
    if n_classes == 2:
        probabilities = np.column_stack([1.0 - probabilities, probabilities])
    np.testing.assert_allclose(probabilities, reference.predict_proba(X_test), atol=1e-6)
    assert error < 0.4  # better than chance by far


@pytest.mark.parametrize("n_classes", [2, 3])
def test_exact_stumps_are_sklearns_on_continuous_features(n_classes):
    """The default tree_method='exact' considers every threshold between two distinct
    training values, as scikit-learn's stumps do: on 2,000 rows of continuous features
    (far more distinct values than 255 bins) the same stumps, weights and classes."""
    X, y, X_test, y_test = _classification(n_classes, seed=1)
    booster = _train(X, y, n_classes)
    reference = _sklearn_adaboost(X, y)
    assert booster.num_boosted_rounds() == len(reference.estimators_)
    np.testing.assert_allclose(booster.tree_weights, reference.estimator_weights_, rtol=1e-6)
    for tree, stump in zip(booster.trees[:: booster.n_outputs], reference.estimators_):
        assert tree.feature[0] == stump.tree_.feature[0]
        np.testing.assert_allclose(
            tree.threshold[0], stump.tree_.threshold[0], rtol=SKLEARN_THRESHOLD_RTOL
        )
    np.testing.assert_array_equal(_predicted_classes(booster, X_test), reference.predict(X_test))
    # The bins lose thresholds here: 'hist' grows other stumps, close in error.
    binned = _train(X, y, n_classes, tree_method="hist")
    assert binned.tree_weights != booster.tree_weights
    error = np.mean(_predicted_classes(binned, X_test) != y_test)
    reference_error = np.mean(reference.predict(X_test) != y_test)
    assert abs(error - reference_error) <= BINNED_ERROR_TOLERANCE, (error, reference_error)


def test_exact_and_hist_trees_agree_where_the_bins_are_lossless():
    """At most max_bin distinct values a feature: the bins are the midpoints between the
    values, the thresholds of 'exact', so both methods grow the same model."""
    X, y, X_test, _ = _classification(3, seed=4, decimals=1)
    models = [_train(X, y, 3, rounds=8, max_depth=2, tree_method=m) for m in ("exact", "hist")]
    assert models[0].tree_weights == models[1].tree_weights
    np.testing.assert_array_equal(models[0].predict(X_test), models[1].predict(X_test))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_rank_class_histograms_match_the_naive_loop(device, request):
    """Class sums and counts per node, feature and distinct value (missing values in the
    last bin), on NumPy and the CUDA backend's arrays (emulated)."""
    if device == "cuda":
        request.getfixturevalue("emulated_cuda")
    backend = get_backend(device)
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(120, 4)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    ranks = FeatureRanks(X)
    n_bins = int(ranks.n_distinct.max()) + 1
    columns = [rng.integers(0, 2**30, 120, dtype=np.int64).astype(np.int32) for _ in range(3)]
    sample_indices = rng.permutation(120).astype(np.int32)
    begins, ends = [0, 50, 50, 90], [50, 50, 90, 120]  # an empty node too
    got = build_rank_class_histograms(
        backend.xp,
        backend.to_device(ranks.ranks),
        n_bins,
        [backend.to_device(column) for column in columns],
        backend.to_device(sample_indices),
        begins,
        ends,
    )
    expected = build_rank_class_histograms_naive(
        ranks.ranks, n_bins, columns, sample_indices, begins, ends
    )
    np.testing.assert_array_equal(backend.to_host(got), expected)
    assert expected[..., -1].sum() == 4 * 120 and expected[1].sum() == 0


def test_deeper_trees_and_sample_weights_match_sklearn():
    X, y, X_test, _ = _classification(3, seed=2, decimals=1)
    weight = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    booster = _train(X, y, 3, rounds=10, weight=weight, max_depth=3, learning_rate=0.5)
    reference = sklearn_ensemble.AdaBoostClassifier(
        sklearn_tree.DecisionTreeClassifier(max_depth=3),
        n_estimators=10,
        learning_rate=0.5,
        random_state=0,
    ).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(booster.tree_weights, reference.estimator_weights_, rtol=1e-6)
    # The same partitions of the training rows. Below the root scikit-learn puts a
    # threshold halfway between the values present in the node, gpuboost at its
    # bins (between values of the whole training set), so a few unseen values fall
    # on different sides.
    np.testing.assert_allclose(booster.predict(X), reference.predict_proba(X), atol=1e-6)
    agreement = np.mean(np.argmax(booster.predict(X_test), axis=1) == reference.predict(X_test))
    assert agreement >= 0.99
    assert max(tree.depth() for tree in booster.trees) == 3


# ---- the Gini split scan ---------------------------------------------------------------
def _random_histograms(rng, n_nodes, n_features, n_bins, n_classes, with_missing):
    """Histograms of random rows: each row has a class, an integer weight and a bin
    per feature (the missing bin ``n_bins - 1`` only ``with_missing``)."""
    class_sums = np.zeros((n_nodes, n_features, n_bins, n_classes), dtype=np.int64)
    counts = np.zeros((n_nodes, n_features, n_bins), dtype=np.int64)
    for node in range(n_nodes):
        n_rows = int(rng.integers(5, 40))
        classes = rng.integers(0, n_classes, n_rows)
        weights = rng.integers(0, 100, n_rows)
        for feature in range(n_features):
            bins = rng.integers(0, n_bins if with_missing else n_bins - 1, n_rows)
            np.add.at(class_sums[node, feature], (bins, classes), weights)
            np.add.at(counts[node, feature], bins, 1)
    return class_sums, counts


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_gini_scan_matches_naive_loop(n_classes):
    rng = np.random.default_rng(n_classes)
    n_bins = 9  # missing bin 8
    for trial in range(6):
        class_sums, counts = _random_histograms(rng, 4, 3, n_bins, n_classes, trial % 2 == 0)
        class_sums[0, :, :, 1:] = 0  # node 0 is pure: never split
        class_sums[:, 1, 1:] = 0  # feature 1 is constant (one value bin) ...
        counts[:, 1, 1:] = 0
        class_sums[:, 1, 0] = class_sums[:, 0].sum(axis=1)  # ... holding every row
        counts[:, 1, 0] = counts[:, 0].sum(axis=1)
        n_value_bins = np.array([8, 1, 5])
        for min_data_in_leaf in (1, 5):
            fast = find_best_gini_splits(
                class_sums, counts, n_value_bins, n_bins - 1, min_data_in_leaf
            )
            naive = find_best_gini_splits_naive(
                class_sums, counts, n_value_bins, n_bins - 1, min_data_in_leaf
            )
            for got, expected in zip(fast, naive):
                for key in ("feature", "bin", "default_left", "left_count"):
                    assert got[key] == expected[key], (key, got, expected)
                assert got["gain"] == pytest.approx(expected["gain"], rel=1e-12)
                if expected["feature"] >= 0:
                    np.testing.assert_array_equal(
                        got["left_class_sums"], expected["left_class_sums"]
                    )
                    assert got["feature"] != 1
            assert fast[0]["feature"] == -1
            assert any(record["feature"] >= 0 for record in fast)


# ---- special rounds ----------------------------------------------------------------------
def test_perfect_round_stops_with_sklearn_weight():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    y = (X[:, 1] > 0.2).astype(np.float64)  # one stump separates the classes
    booster = _train(X, y, 2, rounds=10)
    assert booster.num_boosted_rounds() == 1
    assert booster.tree_weights == [PERFECT_ROUND_TREE_WEIGHT]
    assert np.array_equal(_predicted_classes(booster, X), y)
    reference = _sklearn_adaboost(X, y, n_rounds=10)
    assert len(reference.estimators_) == 1 and reference.estimator_weights_[0] == 1.0


def test_worse_than_chance_first_round_raises():
    X = np.ones((40, 2))  # nothing to split on
    y = np.tile([0.0, 1.0], 20)  # balanced: the single leaf errs on half the weight
    with pytest.raises(ValueError, match="no better than chance"):
        _train(X, y, 2)
    with pytest.raises(ValueError, match="worse than random"):  # scikit-learn agrees
        _sklearn_adaboost(X, y)


def test_worse_than_chance_later_round_stops():
    """One binary feature: after the first stump reweights the rows, the only split
    left has error exactly 1/2, so the second tree is discarded and training stops."""
    x = np.repeat([0.0, 1.0], 50)
    y = np.concatenate([np.repeat([0.0, 1.0], [40, 10]), np.repeat([1.0, 0.0], [40, 10])])
    booster = _train(x[:, None], y, 2, rounds=10)
    assert booster.num_boosted_rounds() == 1 == len(booster.tree_weights)
    assert booster.tree_weights[0] == pytest.approx(np.log(0.8 / 0.2))
    assert np.mean(_predicted_classes(booster, x[:, None]) != y) == pytest.approx(0.2)


# ---- parameters and inputs -----------------------------------------------------------
def test_adaboost_defaults_and_parameter_checks():
    params = adaboost_params({"booster": "adaboost"})
    assert params["learning_rate"] == 1.0 and params["max_depth"] == 1
    assert params["min_data_in_leaf"] == 1 and params["tree_method"] == "exact"
    assert adaboost_params({"booster": "adaboost", "tree_method": "hist"})["tree_method"] == "hist"
    assert params["objective"] == "binary:logistic"
    assert adaboost_params({"booster": "adaboost", "num_class": 4})["objective"] == "multi:softprob"
    assert (
        adaboost_params({"booster": "adaboost", "eta": 0.5, "max_depth": 2})["learning_rate"] == 0.5
    )
    assert adaboost_params({"booster": "adaboost", "reg_lambda": 1.0})["booster"] == "adaboost"
    for bad, match in (
        ({"reg_lambda": 3.0}, "does not use"),
        ({"max_depth": 0}, "max_depth"),
        ({"objective": "reg:squarederror"}, "objective"),
        ({"objective": "binary:logistic", "num_class": 3}, "num_class"),
        ({"tree_method": "approx"}, "tree_method"),
    ):
        with pytest.raises(ValueError, match=match):
            adaboost_params(dict(bad, booster="adaboost"))


def test_invalid_inputs_raise():
    X, y, _, _ = _classification(2, seed=5, decimals=1)
    with pytest.raises(ValueError, match="labels"):
        _train(X, y + 0.5, 2)
    with pytest.raises(ValueError, match="labels"):
        _train(X, y * 3.0, 3)
    booster = _train(X[:100], y[:100], 2, rounds=2)
    with pytest.raises(ValueError, match="init_model"):
        gpuboost.train({"booster": "adaboost"}, Dataset(X, label=y), 2, init_model=booster)
    with pytest.raises(ValueError, match="AdaBoost"):  # gradient boosting cannot continue it
        gpuboost.train({}, Dataset(X[:100], label=y[:100]), 2, init_model=booster)
    with pytest.raises(ValueError, match="base_margin"):
        gpuboost.train(
            {"booster": "adaboost"}, Dataset(X, label=y, base_margin=np.zeros(len(y))), 2
        )


# ---- prediction, evaluation, the model file ----------------------------------------------
def test_iteration_range_equals_a_shorter_training():
    X, y, X_test, _ = _classification(3, seed=6, decimals=1)
    full = _train(X, y, 3, rounds=12)
    short = _train(X, y, 3, rounds=5)
    np.testing.assert_array_equal(
        full.predict(X_test, iteration_range=(0, 5)), short.predict(X_test)
    )
    margins = full.predict(X_test, output_margin=True)
    expected = samme_score_scale(full.tree_weights, 3)
    np.testing.assert_allclose(np.sum(full.tree_weights) * 4 / 3, expected)
    np.testing.assert_allclose(margins.sum(axis=1), np.sum(full.tree_weights))  # one vote a tree


def test_evaluation_and_early_stopping_keep_the_model_consistent():
    X, y, X_test, y_test = _classification(2, seed=7)
    dtrain, dtest = Dataset(X, label=y), Dataset(X_test, label=y_test)
    results = {}
    booster = gpuboost.train(
        {"booster": "adaboost", "device": "cpu", "max_depth": 3},
        dtrain,
        200,
        evals=[(dtrain, "train"), (dtest, "test")],
        evals_result=results,
        early_stopping_rounds=3,
        callbacks=[gpuboost.EarlyStopping(3, save_best=True)],
        verbose_eval=False,
    )
    assert list(results["test"]) == ["error"]
    n_rounds = booster.num_boosted_rounds()
    assert n_rounds < 200 and len(booster.tree_weights) == n_rounds
    assert results["test"]["error"][booster.best_iteration] == pytest.approx(
        np.mean(_predicted_classes(booster, X_test) != y_test)
    )
    assert results["train"]["error"][-1] < results["train"]["error"][0]
    assert gpuboost.Booster.from_json(booster.save_raw().decode()) == booster


def test_model_round_trip(tmp_path):
    X, y, X_test, _ = _classification(3, seed=8, decimals=1)
    booster = _train(X, y, 3, rounds=6, objective="multi:softmax")
    path = tmp_path / "adaboost.json"
    booster.save_model(path)
    loaded = gpuboost.Booster.load_model(path)
    assert loaded.save_raw() == booster.save_raw()
    assert loaded.tree_weights == booster.tree_weights
    assert loaded.params["booster"] == "adaboost"
    np.testing.assert_array_equal(loaded.predict(X_test), booster.predict(X_test))
    assert set(np.unique(loaded.predict(X_test))) <= {0.0, 1.0, 2.0}  # softmax: classes
    document = json.loads(booster.save_raw())
    for tree_weights in ([1.0] * 5, [-1.0] * 6, None):
        bad = json.loads(json.dumps(document))
        if tree_weights is None:
            del bad["learner"]["tree_weights"]
        else:
            bad["learner"]["tree_weights"] = tree_weights
        with pytest.raises(ValueError, match="tree_weights"):
            gpuboost.Booster.from_json(json.dumps(bad))


# ---- CPU / CUDA parity (emulated kernels) ------------------------------------------------
@pytest.mark.parametrize(
    "n_classes, max_depth, tree_method", [(2, 3, "exact"), (3, 2, "exact"), (3, 2, "hist")]
)
def test_cpu_and_cuda_models_are_identical(n_classes, max_depth, tree_method, emulated_cuda):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 4))
    X[rng.random(300) < 0.15, 1] = np.nan
    signal = X[:, 0] + np.where(np.isnan(X[:, 1]), 0.8, X[:, 1]) + 0.5 * rng.normal(size=300)
    y = np.digitize(signal, [-0.5, 0.6][: n_classes - 1]).astype(np.float64)
    weight = rng.uniform(0.5, 1.5, 300)
    runs = train_on_both(
        {
            "booster": "adaboost",
            "max_depth": max_depth,
            "num_class": n_classes if n_classes > 2 else 0,
            "tree_method": tree_method,
        },
        lambda: Dataset(X, label=y, weight=weight, max_bin=31),
        4,
        evaluate_train=True,
    )
    assert_runs_match(runs)
    assert runs["cuda"].dataset._X_binned is None  # the CUDA backend bins on the device
    models = {device: run.model for device, run in runs.items()}
    assert models["cpu"].num_boosted_rounds() == 4
    assert max(tree.depth() for tree in models["cpu"].trees) == max_depth
    assert any(tree.default_left.any() for tree in models["cpu"].trees)  # missing values used


# ---- the scikit-learn style estimator ------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
def test_estimator_matches_sklearn(n_classes):
    X, y, X_test, _ = _classification(n_classes, seed=10, decimals=1)
    labels = np.array(["ant", "bee", "cat"])[y]
    model = gpuboost.AdaBoostClassifier(n_estimators=20, device="cpu").fit(X, labels)
    reference = _sklearn_adaboost(X, labels, n_rounds=20)
    np.testing.assert_array_equal(model.classes_, reference.classes_)
    np.testing.assert_array_equal(model.predict(X_test), reference.predict(X_test))
    np.testing.assert_allclose(
        model.decision_function(X_test), reference.decision_function(X_test), atol=1e-6
    )
    np.testing.assert_allclose(
        model.predict_proba(X_test), reference.predict_proba(X_test), atol=1e-6
    )
    np.testing.assert_allclose(model.estimator_weights_, reference.estimator_weights_, rtol=1e-6)
    np.testing.assert_allclose(
        model.feature_importances_, reference.feature_importances_, atol=1e-6
    )
    assert model.score(X_test, reference.predict(X_test)) == 1.0


def test_estimator_api():
    X, y, _, _ = _classification(2, seed=11, decimals=1)
    model = gpuboost.AdaBoostClassifier(
        n_estimators=5, max_depth=2, learning_rate=0.5, device="cpu"
    )
    clone = sklearn_base.clone(model)
    assert clone.get_params() == model.get_params()
    with pytest.raises(Exception, match="not fitted"):
        model.predict(X)
    model.fit(X, y)
    assert model.get_booster().params["max_depth"] == 2
    assert model.get_booster().params["learning_rate"] == 0.5
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="one class"):
        gpuboost.AdaBoostClassifier(device="cpu").fit(X, np.zeros(len(X)))


def _scikit_learn_checks():
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    return checks.parametrize_with_checks(
        [gpuboost.AdaBoostClassifier(n_estimators=10, device="cpu", verbosity=0)]
    )


@_scikit_learn_checks()
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
