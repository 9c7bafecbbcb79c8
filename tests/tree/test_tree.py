"""Tests of gpuboost.tree: the flat-array Tree."""

import json

import numpy as np
import pytest

from gpuboost.tree.tree import TREE_ARRAYS, Tree


def small_tree():
    """Root splits f0 <= 0.5 (NaN left); node 2 splits f1 <= -0.25 (NaN right)."""
    return Tree(
        {
            "feature": [0, -1, 1, -1, -1],
            "threshold_bin": [3, 0, 7, 0, 0],
            "threshold": [0.5, 0.0, -0.25, 0.0, 0.0],
            "default_left": [True, False, False, False, False],
            "left_child": [1, -1, 3, -1, -1],
            "right_child": [2, -1, 4, -1, -1],
            "value": [0.1, -1.0, 0.7, 0.5, 2.0],
            "gain": [9.5, 0.0, 1.25, 0.0, 0.0],
            "cover": [30.0, 10.0, 20.0, 12.0, 8.0],
            "count": [30, 10, 20, 12, 8],
        }
    )


def test_arrays_have_the_contract_dtypes():
    tree = small_tree()
    for name, dtype in TREE_ARRAYS.items():
        array = getattr(tree, name)
        assert array.dtype == dtype and array.flags.c_contiguous and array.shape == (5,)
    assert TREE_ARRAYS["feature"] == np.int32 and TREE_ARRAYS["count"] == np.int64


def test_basic_facts():
    tree = small_tree()
    assert tree.n_nodes == 5
    np.testing.assert_array_equal(tree.is_leaf, [False, True, False, True, True])
    assert tree.n_leaves == 3
    assert tree.depth() == 2


def test_single_leaf_tree():
    tree = Tree(
        {name: [0] for name in TREE_ARRAYS}
        | {"feature": [-1], "left_child": [-1], "right_child": [-1]}
    )
    assert tree.n_nodes == tree.n_leaves == 1 and tree.depth() == 0


def test_missing_or_mismatched_arrays_raise():
    arrays = small_tree().to_dict()
    arrays["value"] = arrays["value"][:-1]
    with pytest.raises(ValueError, match="'value'"):
        Tree(arrays)
    with pytest.raises(ValueError, match="at least one node"):
        Tree({name: [] for name in TREE_ARRAYS})
    with pytest.raises(ValueError, match="1-D"):
        Tree({name: np.zeros((2, 2)) for name in TREE_ARRAYS})
    arrays = small_tree().to_dict()
    del arrays["gain"]
    with pytest.raises(KeyError):
        Tree(arrays)


def test_dict_round_trip_is_exact_through_json():
    tree = small_tree()
    tree.value[1] = 0.1 + 0.2  # not a short decimal
    tree.threshold[2] = np.nextafter(-0.25, 0.0)
    data = tree.to_dict()
    assert list(data) == list(TREE_ARRAYS)
    assert data["default_left"] == [1, 0, 0, 0, 0]
    assert all(type(v) is int for v in data["feature"])
    restored = Tree.from_dict(json.loads(json.dumps(data)))
    assert restored == tree
    for name in TREE_ARRAYS:
        assert getattr(restored, name).tobytes() == getattr(tree, name).tobytes()


def test_equality():
    tree = small_tree()
    assert tree == small_tree()
    other = small_tree()
    other.value[3] = np.nextafter(other.value[3], 1.0)
    assert tree != other
    assert tree != "tree"


def test_dump_lists_every_node_indented_by_depth():
    text = small_tree().dump()
    lines = text.splitlines()
    assert lines == [
        "0:[f0<=0.5] yes=1,no=2,missing=1,gain=9.5,cover=30.0,count=30",
        "\t1:leaf=-1.0,cover=10.0,count=10",
        "\t2:[f1<=-0.25] yes=3,no=4,missing=4,gain=1.25,cover=20.0,count=20",
        "\t\t3:leaf=0.5,cover=12.0,count=12",
        "\t\t4:leaf=2.0,cover=8.0,count=8",
    ]


def test_dump_with_names_and_without_stats():
    text = small_tree().dump(feature_names=["age", "income"], with_stats=False)
    assert text.splitlines() == [
        "0:[age<=0.5] yes=1,no=2,missing=1",
        "\t1:leaf=-1.0",
        "\t2:[income<=-0.25] yes=3,no=4,missing=4",
        "\t\t3:leaf=0.5",
        "\t\t4:leaf=2.0",
    ]
