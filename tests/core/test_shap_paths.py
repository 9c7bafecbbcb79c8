"""The path table of TreeSHAP (gpuboost/core/shap_paths.py): intervals on numeric
features, category sets on categorical ones."""

import numpy as np
import pytest
from _cases import small_categorical_tree

from gpuboost.core.categorical import bitset_members
from gpuboost.core.shap_paths import build_shap_paths, child_fractions, tree_expected_value
from gpuboost.tree.tree import TREE_ARRAYS, Tree


def _tree(feature, threshold, default_left, left, right, value, cover, count=None):
    n = len(feature)
    arrays = {name: np.zeros(n, dtype=dtype) for name, dtype in TREE_ARRAYS.items()}
    arrays.update(
        feature=feature,
        threshold=threshold,
        default_left=default_left,
        left_child=left,
        right_child=right,
        value=value,
        cover=cover,
        count=count if count is not None else [int(c) for c in cover],
    )
    return Tree(arrays)


# x0 <= 1 -> (x0 <= 0.5 -> leaf 3 | leaf 4) | (x1 <= 2 -> leaf 5 | leaf 6)
TREE = _tree(
    feature=[0, 0, 1, -1, -1, -1, -1],
    threshold=[1.0, 0.5, 2.0, 0, 0, 0, 0],
    default_left=[1, 0, 1, 0, 0, 0, 0],
    left=[1, 3, 5, -1, -1, -1, -1],
    right=[2, 4, 6, -1, -1, -1, -1],
    value=[0, 0, 0, 1.0, 2.0, 3.0, 4.0],
    cover=[10.0, 6.0, 4.0, 2.0, 4.0, 1.0, 3.0],
)


def test_paths_merge_repeated_features_into_intervals():
    paths = build_shap_paths([TREE], [0], 1)
    assert paths.path_offsets.tolist() == [0, 1, 2, 4, 6]  # leaves 3, 4, 5, 6
    assert paths.path_value.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert paths.max_length == 2
    # leaf 4: x0 <= 1 then x0 > 0.5 -> one element 0.5 < x0 <= 1, zero 0.6 * 4/6
    assert paths.element_feature[1] == 0
    assert paths.element_lower[1] == 0.5 and paths.element_upper[1] == 1.0
    assert paths.element_zero_fraction[1] == pytest.approx(0.6 * 4 / 6, rel=1e-15)
    # missing goes left at the root, right at node 1: takes leaf 4's edges only
    assert paths.element_missing[:2].tolist() == [0, 1]
    # leaf 6: x0 > 1 (not default), x1 > 2 (not default)
    assert paths.element_feature[4:6].tolist() == [0, 1]
    assert paths.element_lower[4:6].tolist() == [1.0, 2.0]
    assert np.isinf(paths.element_upper[4:6]).all() and paths.element_missing[4:6].tolist() == [
        0,
        0,
    ]


def test_expected_value_is_the_cover_weighted_leaf_mean():
    expected = (2 * 1.0 + 4 * 2.0 + 1 * 3.0 + 3 * 4.0) / 10
    assert tree_expected_value(TREE) == pytest.approx(expected, rel=1e-15)
    paths = build_shap_paths([TREE, TREE], [1, 1], 2)
    assert paths.expected_value[0] == 0.0
    assert paths.expected_value[1] == pytest.approx(2 * expected, rel=1e-15)


def test_zero_cover_falls_back_to_counts_then_halves():
    tree = _tree(
        feature=[0, -1, -1],
        threshold=[0.0, 0, 0],
        default_left=[1, 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        value=[0, 1.0, 3.0],
        cover=[0.0, 0.0, 0.0],
        count=[4, 1, 3],
    )
    assert child_fractions(tree, 0) == (0.25, 0.75)
    tree.count[:] = 0
    assert child_fractions(tree, 0) == (0.5, 0.5)
    assert tree_expected_value(tree) == 2.0


def test_single_leaf_trees_only_add_to_the_bias():
    leaf = _tree([-1], [0.0], [0], [-1], [-1], [0.25], [5.0])
    paths = build_shap_paths([leaf], [0], 1)
    assert paths.n_paths == 1 and paths.path_offsets.tolist() == [0, 0]
    assert paths.expected_value.tolist() == [0.25]


def test_categorical_elements_hold_the_intersection_of_their_edges_sets():
    paths = build_shap_paths([small_categorical_tree()], [0], 1)
    offsets, bits = paths.element_category_offsets, paths.element_category_bits

    def members(element):
        return bitset_members(bits[offsets[element] : offsets[element + 1]]).tolist()

    assert paths.path_offsets.tolist() == [0, 1, 2, 4, 6]
    assert np.diff(offsets).tolist() == [2] * 6  # every element categorical, two words
    assert members(0) == [2, 33]  # leaf 3: in both sets
    assert members(1) == [1, 5]  # leaf 4: in the first, not in the second
    assert paths.element_missing[:2].tolist() == [0, 1]  # default: left, then right
    everything_else = sorted(set(range(64)) - {1, 2, 5, 33})
    assert paths.element_feature[2:6].tolist() == [0, 1, 0, 1]
    assert members(2) == everything_else and members(3) == [0]  # leaf 5
    assert members(4) == everything_else and members(5) == list(range(1, 64))  # leaf 6
    assert paths.element_missing[2:6].tolist() == [0, 1, 0, 0]
    assert np.isinf(paths.element_lower).all() and np.isinf(paths.element_upper).all()
    assert paths.path_shared.tolist() == [0, 0, 0, 1]


def test_numeric_elements_have_no_category_words():
    paths = build_shap_paths([TREE], [0], 1)
    assert paths.element_category_offsets.tolist() == [0] * 7
    assert len(paths.element_category_bits) == 0


def test_a_feature_split_by_threshold_and_by_set_on_one_path_is_refused():
    tree = small_categorical_tree()
    tree.cat_offsets[1:] -= 2  # node 0 splits x0 <= 0 now, node 1 by its set
    tree.cat_bits = tree.cat_bits[2:]
    with pytest.raises(ValueError, match="both by thresholds and by category sets"):
        build_shap_paths([tree], [0], 1)
