"""Tests of gpuboost.model.booster: prediction, importances, dumps, copies and pickling."""

import json
import pickle

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.numpy.predict import predict_leaves_raw
from gpuboost.model.booster import Booster

N_ROUNDS = 6


def train(X, y, n_rounds=N_ROUNDS, **params):
    return gpuboost.train(
        {"device": "cpu", "max_depth": 3, **params},
        gpuboost.Dataset(X, label=y),
        num_boost_round=n_rounds,
        verbose_eval=False,
    )


@pytest.fixture
def regression_booster(regression_data):
    return train(*regression_data)


@pytest.fixture
def softprob_booster(multiclass_data):
    return train(*multiclass_data, objective="multi:softprob", num_class=3)


def manual_margins(booster, X, first_round=0, last_round=None):
    last_round = booster.num_boosted_rounds() if last_round is None else last_round
    margins = np.tile(booster.base_margin, (len(X), 1))
    for index in range(first_round * booster.n_outputs, last_round * booster.n_outputs):
        tree = booster.trees[index]
        margins[:, index % booster.n_outputs] += tree.value[predict_leaves_raw(tree, X)]
    return margins


# ---------------------------------------------------------------------------
# Prediction
# ---------------------------------------------------------------------------


def test_basic_facts(regression_booster, softprob_booster):
    assert regression_booster.num_boosted_rounds() == len(regression_booster) == N_ROUNDS
    assert len(regression_booster.trees) == N_ROUNDS and regression_booster.n_outputs == 1
    assert regression_booster.num_features() == 5
    assert softprob_booster.n_outputs == 3 and len(softprob_booster.trees) == 3 * N_ROUNDS
    assert softprob_booster.num_boosted_rounds() == N_ROUNDS
    assert "rounds=6" in repr(regression_booster) and "n_features=5" in repr(regression_booster)


def test_regression_prediction_is_the_sum_of_leaf_values(regression_booster, regression_data):
    X, _ = regression_data
    prediction = regression_booster.predict(X)
    assert prediction.shape == (len(X),) and prediction.dtype == np.float64
    expected = manual_margins(regression_booster, X)[:, 0]
    np.testing.assert_array_equal(prediction, expected)
    np.testing.assert_array_equal(regression_booster.predict(X, output_margin=True), expected)
    np.testing.assert_array_equal(regression_booster.inplace_predict(X), expected)


def test_binary_prediction_is_a_probability(binary_data):
    X, y = binary_data
    booster = train(X, y, objective="binary:logistic")
    probability = booster.predict(X)
    margin = booster.predict(X, output_margin=True)
    assert probability.shape == margin.shape == (len(X),)
    np.testing.assert_allclose(probability, 1 / (1 + np.exp(-margin)), rtol=1e-12)
    np.testing.assert_array_equal(margin, manual_margins(booster, X)[:, 0])


def test_multiclass_prediction_shapes(softprob_booster, multiclass_data):
    X, y = multiclass_data
    probability = softprob_booster.predict(X)
    margin = softprob_booster.predict(X, output_margin=True)
    assert probability.shape == margin.shape == (len(X), 3)
    np.testing.assert_allclose(probability.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(margin, manual_margins(softprob_booster, X))
    softmax = train(X, y, objective="multi:softmax", num_class=3)
    classes = softmax.predict(X)
    assert classes.shape == (len(X),)
    np.testing.assert_array_equal(
        classes, np.argmax(softmax.predict(X, output_margin=True), axis=1)
    )


def test_pred_leaf(softprob_booster, multiclass_data):
    X, _ = multiclass_data
    leaves = softprob_booster.predict(X, pred_leaf=True)
    assert leaves.shape == (len(X), 3 * N_ROUNDS) and leaves.dtype == np.int32
    for index, tree in enumerate(softprob_booster.trees):
        np.testing.assert_array_equal(leaves[:, index], predict_leaves_raw(tree, X))
    some = softprob_booster.predict(X, pred_leaf=True, iteration_range=(2, 4))
    np.testing.assert_array_equal(some, leaves[:, 6:12])


@pytest.mark.parametrize("iteration_range", [(0, 1), (0, 3), (2, 5), (5, 6), (3, 3)])
def test_iteration_range(softprob_booster, multiclass_data, iteration_range):
    X, _ = multiclass_data
    margin = softprob_booster.predict(X, output_margin=True, iteration_range=iteration_range)
    np.testing.assert_array_equal(margin, manual_margins(softprob_booster, X, *iteration_range))


def test_full_iteration_range_equals_default(regression_booster, regression_data):
    X, _ = regression_data
    default = regression_booster.predict(X)
    np.testing.assert_array_equal(regression_booster.predict(X, iteration_range=(0, 0)), default)
    np.testing.assert_array_equal(
        regression_booster.predict(X, iteration_range=(0, N_ROUNDS)), default
    )


@pytest.mark.parametrize("iteration_range", [(0, N_ROUNDS + 1), (-1, 2), (4, 2), (7, 7)])
def test_iteration_range_out_of_bounds(regression_booster, regression_data, iteration_range):
    X, _ = regression_data
    with pytest.raises(ValueError, match="iteration_range"):
        regression_booster.predict(X, iteration_range=iteration_range)


def test_best_iteration_is_the_default_end(regression_booster, regression_data):
    X, _ = regression_data
    regression_booster.best_iteration = 2
    np.testing.assert_array_equal(
        regression_booster.predict(X), regression_booster.predict(X, iteration_range=(0, 3))
    )
    assert not np.array_equal(
        regression_booster.predict(X), regression_booster.predict(X, iteration_range=(0, N_ROUNDS))
    )


def test_wrong_feature_count_raises(regression_booster, regression_data):
    X, _ = regression_data
    with pytest.raises(ValueError, match="4 features.*5 features"):
        regression_booster.predict(X[:, :4])
    with pytest.raises(ValueError, match="features"):
        regression_booster.predict(gpuboost.Dataset(np.hstack([X, X[:, :1]])))


def test_predict_accepts_lists_frames_and_datasets(regression_booster, regression_data):
    import pandas as pd

    X, _ = regression_data
    expected = regression_booster.predict(X)
    np.testing.assert_array_equal(regression_booster.predict(X.tolist()), expected)
    np.testing.assert_array_equal(regression_booster.predict(pd.DataFrame(X)), expected)
    np.testing.assert_array_equal(regression_booster.predict(gpuboost.Dataset(X)), expected)
    single = regression_booster.predict(X[:1])
    assert single.shape == (1,) and single[0] == expected[0]


def test_dataframe_columns_are_matched_by_name(regression_data):
    pd = pytest.importorskip("pandas")
    X, y = regression_data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    booster = gpuboost.train(
        {"device": "cpu", "max_depth": 3}, gpuboost.Dataset(frame, label=y), 4, verbose_eval=False
    )
    expected = booster.predict(frame)
    shuffled = frame[["e", "c", "a", "d", "b"]]
    np.testing.assert_array_equal(booster.predict(shuffled), expected)
    named = gpuboost.Dataset(shuffled.to_numpy(), feature_names=list(shuffled.columns))
    np.testing.assert_array_equal(booster.predict(named), expected)
    # Without names on one side: by position.
    np.testing.assert_array_equal(booster.predict(X), expected)
    with pytest.raises(ValueError, match=r"missing \['a'\]; not in the model \['z'\]"):
        booster.predict(frame.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match=r"missing \['e'\]"):
        booster.predict(frame[["a", "b", "c", "d"]])
    with pytest.raises(ValueError, match=r"not in the model \['extra'\]"):
        booster.predict(frame.assign(extra=1.0))


def test_predict_on_zero_rows_gives_empty_results(regression_booster, softprob_booster):
    regression = regression_booster.predict(np.zeros((0, 5)))
    assert regression.shape == (0,) and regression.dtype == np.float64
    assert softprob_booster.predict(np.zeros((0, 4))).shape == (0, 3)
    assert softprob_booster.predict(np.zeros((0, 4)), output_margin=True).shape == (0, 3)
    leaves = softprob_booster.predict(np.zeros((0, 4)), pred_leaf=True)
    assert leaves.shape == (0, 3 * N_ROUNDS) and leaves.dtype == np.int32
    with pytest.raises(ValueError, match="4 features"):
        regression_booster.predict(np.zeros((0, 4)))


def test_predict_on_zero_rows_on_the_emulated_cuda_backend(regression_data, emulated_cuda):
    X, y = regression_data
    booster = gpuboost.train(
        {"device": "cuda", "max_depth": 2}, gpuboost.Dataset(X, label=y), 2, verbose_eval=False
    )
    assert booster.predict(X[:0]).shape == (0,)


def test_dataset_base_margin_replaces_the_base_score(regression_booster, regression_data):
    X, _ = regression_data
    offset = np.linspace(-1, 1, len(X))
    with_margin = regression_booster.predict(gpuboost.Dataset(X, base_margin=offset))
    trees_only = regression_booster.predict(X) - regression_booster.base_margin[0]
    np.testing.assert_allclose(with_margin, offset + trees_only, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "rounds", [slice(2, 5), slice(0, N_ROUNDS), slice(None, 3), slice(-2, None)]
)
def test_slicing_equals_the_iteration_range(softprob_booster, multiclass_data, rounds):
    X, _ = multiclass_data
    begin, end, _ = rounds.indices(N_ROUNDS)
    sliced = softprob_booster[rounds]
    assert sliced.num_boosted_rounds() == end - begin and sliced.n_outputs == 3
    for kwargs in ({}, {"output_margin": True}, {"pred_leaf": True}):
        np.testing.assert_array_equal(
            sliced.predict(X, **kwargs),
            softprob_booster.predict(X, iteration_range=(begin, end), **kwargs),
        )


def test_slicing_with_a_step_an_index_and_errors(regression_booster, regression_data):
    X, _ = regression_data
    every_other = regression_booster[::2]
    assert every_other.trees == regression_booster.trees[::2]
    last = regression_booster[-1]
    assert last.trees == regression_booster.trees[-1:]
    np.testing.assert_array_equal(
        last.predict(X), regression_booster.predict(X, iteration_range=(N_ROUNDS - 1, N_ROUNDS))
    )
    reloaded = Booster.from_json(regression_booster[1:4].to_json())
    np.testing.assert_array_equal(reloaded.predict(X), regression_booster[1:4].predict(X))
    with pytest.raises(IndexError, match="out of range"):
        regression_booster[N_ROUNDS]
    with pytest.raises(ValueError, match="no round"):
        regression_booster[4:2]
    with pytest.raises(TypeError, match="rounds"):
        regression_booster["a"]


def test_slicing_an_adaboost_model_keeps_its_tree_weights(binary_data):
    X, y = binary_data
    booster = train(X, y, 5, booster="adaboost", max_depth=1)
    sliced = booster[1:4]
    assert sliced.tree_weights == booster.tree_weights[1:4]
    np.testing.assert_array_equal(sliced.predict(X), booster.predict(X, iteration_range=(1, 4)))


# ---------------------------------------------------------------------------
# Importances and dumps
# ---------------------------------------------------------------------------


def test_feature_importance_types(regression_booster):
    trees = regression_booster.trees
    weight = np.zeros(5)
    total_gain = np.zeros(5)
    total_cover = np.zeros(5)
    for tree in trees:
        for node in np.flatnonzero(tree.feature >= 0):
            weight[tree.feature[node]] += 1
            total_gain[tree.feature[node]] += tree.gain[node]
            total_cover[tree.feature[node]] += tree.cover[node]
    importance = regression_booster.feature_importance
    np.testing.assert_array_equal(importance("weight"), weight)
    np.testing.assert_allclose(importance("total_gain"), total_gain, rtol=1e-12)
    np.testing.assert_array_equal(importance("split"), weight)
    np.testing.assert_allclose(
        importance("relative_influence"), total_gain / len(trees), rtol=1e-12
    )
    used = weight > 0
    # 'gain' is XGBoost's: the average gain of the feature's splits.
    np.testing.assert_allclose(importance("gain")[used], total_gain[used] / weight[used])
    assert (importance("gain")[~used] == 0).all()
    np.testing.assert_allclose(importance("total_cover"), total_cover, rtol=1e-12)
    np.testing.assert_allclose(
        importance("cover")[used], total_cover[used] / weight[used], rtol=1e-12
    )
    assert (importance("cover")[~used] == 0).all()
    assert weight.sum() == sum(t.n_nodes - t.n_leaves for t in trees)
    assert importance().shape == (5,)
    np.testing.assert_array_equal(importance(), importance("gain"))


def test_feature_importance_over_an_iteration_range(regression_booster):
    first = regression_booster.trees[0]
    expected = np.bincount(first.feature[first.feature >= 0], minlength=5)
    np.testing.assert_array_equal(
        regression_booster.feature_importance("weight", iteration_range=(0, 1)), expected
    )


def test_unknown_importance_type(regression_booster):
    with pytest.raises(ValueError, match="importance_type"):
        regression_booster.feature_importance("frequency")


def test_get_score_names_only_used_features(regression_data):
    X, y = regression_data
    names = ["a", "b", "c", "d", "e"]
    booster = gpuboost.train(
        {"device": "cpu", "max_depth": 2},
        gpuboost.Dataset(X[:, :5], label=X[:, 0] * 3, feature_names=names),
        num_boost_round=3,
        verbose_eval=False,
    )
    score = booster.get_score()
    assert set(score) == {"a"}
    assert score["a"] == booster.feature_importance("weight")[0] > 0
    gains = booster.get_score("total_gain")
    assert gains["a"] == pytest.approx(booster.feature_importance("total_gain")[0])


def test_dump_model_contains_every_split(regression_booster):
    dumps = regression_booster.dump_model()
    assert len(dumps) == N_ROUNDS and dumps == regression_booster.get_dump()
    for tree, text in zip(regression_booster.trees, dumps):
        lines = text.splitlines()
        assert len(lines) == tree.n_nodes
        for node in range(tree.n_nodes):
            if tree.feature[node] >= 0:
                expected = (
                    f"{node}:[f{tree.feature[node]}<={float(tree.threshold[node])!r}] "
                    f"yes={tree.left_child[node]},no={tree.right_child[node]}"
                )
            else:
                expected = f"{node}:leaf={float(tree.value[node])!r}"
            assert sum(line.strip().startswith(expected) for line in lines) == 1
        assert "gain=" in text
    assert "gain=" not in "".join(regression_booster.dump_model(with_stats=False))


def check_dumped_node(tree, node, depth, seen):
    """Compare one node of a JSON dump (and its subtree) with the tree's arrays."""
    seen.append(node["nodeid"])
    i = node["nodeid"]
    assert node["cover"] == tree.cover[i] and node["count"] == tree.count[i]
    if "leaf" in node:
        assert tree.feature[i] < 0 and node["leaf"] == tree.value[i]
        return
    assert node["depth"] == depth and node["decision_type"] == "<="
    assert node["split"] == f"f{tree.feature[i]}"
    assert node["split_condition"] == tree.threshold[i] and node["gain"] == tree.gain[i]
    assert [node["yes"], node["no"]] == [tree.left_child[i], tree.right_child[i]]
    assert node["missing"] == (node["yes"] if tree.default_left[i] else node["no"])
    assert [child["nodeid"] for child in node["children"]] == [node["yes"], node["no"]]
    for child in node["children"]:
        check_dumped_node(tree, child, depth + 1, seen)


def test_json_dump_describes_every_node(softprob_booster, multiclass_data):
    dumps = softprob_booster.dump_model(format="json")
    assert dumps == softprob_booster.get_dump(dump_format="json")
    assert len(dumps) == len(softprob_booster.trees)
    for tree, text in zip(softprob_booster.trees, dumps):
        seen = []
        check_dumped_node(tree, json.loads(text), 0, seen)
        assert sorted(seen) == list(range(tree.n_nodes))
    bare = json.loads(softprob_booster.dump_model(with_stats=False, format="json")[0])
    assert "cover" not in bare and "gain" not in bare
    with pytest.raises(ValueError, match="'text' or 'json'"):
        softprob_booster.dump_model(format="dot")


def test_trees_to_dataframe(regression_data):
    pd = pytest.importorskip("pandas")
    X, y = regression_data
    names = ["a", "b", "c", "d", "e"]
    booster = gpuboost.train(
        {"device": "cpu", "max_depth": 3},
        gpuboost.Dataset(X, label=y, feature_names=names),
        3,
        verbose_eval=False,
    )
    frame = booster.trees_to_dataframe()
    xgboost_columns = "Tree Node ID Feature Split Yes No Missing Gain Cover".split()
    assert list(frame.columns) == [*xgboost_columns, "Count"]
    assert len(frame) == sum(tree.n_nodes for tree in booster.trees)
    for row in frame.itertuples():
        tree = booster.trees[row.Tree]
        node = row.Node
        assert row.ID == f"{row.Tree}-{node}" and row.Cover == tree.cover[node]
        if tree.feature[node] < 0:
            assert row.Feature == "Leaf" and np.isnan(row.Split) and pd.isna(row.Yes)
            assert row.Gain == tree.value[node]
        else:
            assert row.Feature == names[tree.feature[node]] and row.Split == tree.threshold[node]
            assert row.Yes == f"{row.Tree}-{tree.left_child[node]}"
            assert row.Gain == tree.gain[node]
    assert isinstance(frame, pd.DataFrame)


def test_dump_text_headers_and_file(regression_booster, tmp_path):
    path = tmp_path / "dump.txt"
    text = regression_booster.dump_text(path)
    assert path.read_text(encoding="utf-8") == text
    for index in range(N_ROUNDS):
        assert f"booster[{index}]:\n" in text


# ---------------------------------------------------------------------------
# Copies, pickling, attributes
# ---------------------------------------------------------------------------


def test_pickle_round_trip(softprob_booster, multiclass_data):
    X, _ = multiclass_data
    softprob_booster.set_attr(note="hello")
    restored = pickle.loads(pickle.dumps(softprob_booster))
    assert restored == softprob_booster
    assert restored.save_raw() == softprob_booster.save_raw()
    np.testing.assert_array_equal(restored.predict(X), softprob_booster.predict(X))
    assert restored.attr("note") == "hello"


def test_copy_is_equal_and_independent(regression_booster, regression_data):
    X, _ = regression_data
    copy = regression_booster.copy()
    assert copy == regression_booster and copy is not regression_booster
    np.testing.assert_array_equal(copy.predict(X), regression_booster.predict(X))
    copy.trees[0].value[:] += 1.0
    assert copy != regression_booster
    copy.trees.pop()
    assert len(regression_booster.trees) == N_ROUNDS
    assert regression_booster != "model"


def test_attributes(regression_booster):
    regression_booster.set_attr(a=1, b="two")
    assert regression_booster.attr("a") == "1" and regression_booster.attr("b") == "two"
    regression_booster.set_attr(a=None)
    assert regression_booster.attr("a") is None
    assert regression_booster.copy().attr("b") == "two"


def test_append_round_needs_one_tree_per_output(softprob_booster):
    with pytest.raises(ValueError, match="num_parallel_tree trees per output"):
        softprob_booster.append_round(softprob_booster.trees[:2])
    softprob_booster.append_round(softprob_booster.trees[:3])
    assert softprob_booster.num_boosted_rounds() == N_ROUNDS + 1


def test_empty_booster_predicts_its_base_margin(regression_data):
    X, _ = regression_data
    booster = Booster({"objective": "reg:squarederror"}, 1, [0.25], 5, list("abcde"))
    np.testing.assert_array_equal(booster.predict(X), np.full(len(X), 0.25))
    assert booster.num_boosted_rounds() == 0


def test_custom_objective_booster_predicts_margins_after_copy_pickle_and_load(
    regression_data, tmp_path
):
    X, y = regression_data

    def squared_error(margin, dataset):
        return margin - dataset.get_label(), np.ones_like(margin)

    booster = gpuboost.train(
        {"device": "cpu"}, gpuboost.Dataset(X, label=y), 3, obj=squared_error, verbose_eval=False
    )
    expected = booster.predict(X)
    np.testing.assert_array_equal(expected, booster.predict(X, output_margin=True))
    path = tmp_path / "custom.json"
    booster.save_model(path)
    for restored in (booster.copy(), pickle.loads(pickle.dumps(booster)), Booster.load_model(path)):
        assert restored.params["objective"] == "custom"
        np.testing.assert_array_equal(restored.predict(X), expected)


# ---------------------------------------------------------------------------
# Split value histogram
# ---------------------------------------------------------------------------


def test_split_value_histogram_counts_every_split_on_the_feature(regression_booster):
    booster = regression_booster
    thresholds = np.concatenate([tree.threshold[tree.feature == 0] for tree in booster.trees])
    table = booster.get_split_value_histogram(0, as_pandas=False)
    assert table[:, 1].sum() == len(thresholds) > 0
    distinct = np.unique(thresholds)
    assert len(table) <= len(distinct)  # as many equal bins as distinct thresholds
    np.testing.assert_allclose(table[-1, 0], distinct.max())
    coarse = booster.get_split_value_histogram(booster.feature_names[0], bins=2, as_pandas=False)
    assert len(coarse) <= 2 and coarse[:, 1].sum() == len(thresholds)
    frame = booster.get_split_value_histogram(0)
    assert list(frame.columns) == ["SplitValue", "Count"]
    assert len(booster.get_split_value_histogram(4, as_pandas=False)) <= len(booster.trees)
    with pytest.raises(ValueError, match="Unknown feature"):
        booster.get_split_value_histogram("nope")
    with pytest.raises(ValueError, match="out of range"):
        booster.get_split_value_histogram(7)
