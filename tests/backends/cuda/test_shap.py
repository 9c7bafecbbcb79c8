"""The CUDA backend's SHAP kernels (``cuda/shap.cu``) against the compiled CPU backend.

Runs under the CPU emulation of the kernels; every launch is checked. The two
backends run the same arithmetic in the same order (docs/DESIGN.md, "SHAP"): the
contract is 1e-12 relative, and under the emulation the values are bit-identical; on
numeric and on categorical splits.
"""

import re

import numpy as np
import pytest
from _cases import categorical_shap_case, shap_case, small_categorical_tree
from _shap_references import brute_force_contributions, brute_force_interactions

from gpuboost.backends import CpuBackend
from gpuboost.backends.cuda import shap as cuda_shap
from gpuboost.backends.cuda.sources import read_cuda_source
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.tree.tree import TREE_ARRAYS, Tree

pytestmark = pytest.mark.usefixtures("cuda_emulation")


def _outputs(booster):
    return [i % booster.n_outputs for i in range(len(booster.trees))]


def _assert_equal_to_the_cpu_backend(backend, X, booster):
    """Contributions and interactions of ``booster``'s trees on ``X``: equal to the
    compiled CPU backend's to 1e-12 (the contract), and bit for bit under the emulation
    (the same order of operations)."""
    trees, outputs, n = booster.trees, _outputs(booster), booster.n_outputs
    cpu_backend = CpuBackend()
    features = backend.prepare_features(X)
    contributions = backend.to_host(backend.predict_contributions(features, trees, outputs, n))
    expected = cpu_backend.predict_contributions(X, trees, outputs, n)
    np.testing.assert_allclose(contributions, expected, rtol=1e-12, atol=1e-14)
    assert np.array_equal(contributions, expected)
    interactions = backend.to_host(backend.predict_interactions(features, trees, outputs, n))
    expected = cpu_backend.predict_interactions(X, trees, outputs, n)
    np.testing.assert_allclose(interactions, expected, rtol=1e-12, atol=1e-14)
    assert np.array_equal(interactions, expected)


@pytest.mark.parametrize(
    "objective, params",
    [
        ("reg:squarederror", {}),
        ("multi:softprob", {"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 10}),
    ],
)
def test_contributions_and_interactions_equal_the_cpu_backend(backend, objective, params):
    booster, X = shap_case(7, objective, n_rows=300, **params)
    X = X[:40]
    _assert_equal_to_the_cpu_backend(backend, X, booster)


def test_values_equal_brute_force_shapley_values_and_add_up(backend):
    booster, X = shap_case(12, "binary:logistic", n_rows=200, n_rounds=2)
    X = X[:6]
    trees, outputs = booster.trees, _outputs(booster)
    features = backend.prepare_features(X)
    contributions = backend.to_host(backend.predict_contributions(features, trees, outputs, 1))
    expected = brute_force_contributions(X, trees, outputs, 1)
    np.testing.assert_allclose(contributions, expected, rtol=0, atol=1e-12)
    margin = booster.predict(X, output_margin=True) - booster.base_margin[0]
    np.testing.assert_allclose(contributions.sum(axis=-1)[:, 0], margin, rtol=1e-9, atol=1e-12)
    interactions = backend.to_host(backend.predict_interactions(features, trees, outputs, 1))
    expected = brute_force_interactions(X[:3], trees, outputs, 1)
    np.testing.assert_allclose(interactions[:3], expected, rtol=0, atol=1e-12)


def test_booster_on_the_cuda_device_gives_the_same_values(backend):
    booster, X = shap_case(8, "binary:logistic", n_rows=200)
    on_cpu = booster.predict(X[:30], pred_contribs=True)
    with emulated_kernels():
        booster.params["device"] = "cuda"
        on_cuda = booster.predict(X[:30], pred_contribs=True)
    np.testing.assert_array_equal(on_cpu, on_cuda)


def test_no_trees_and_no_rows(backend):
    booster, X = shap_case(9, n_rows=100, n_rounds=1)
    features = backend.prepare_features(X[:3])
    empty = backend.to_host(backend.predict_interactions(features, [], [], 1))
    assert empty.shape == (3, 1, 7, 7) and np.all(empty == 0.0)
    none = backend.predict_contributions(backend.prepare_features(X[:0]), booster.trees, [0], 1)
    assert none.shape == (0, 1, 7)


def test_paths_longer_than_the_kernel_arrays_are_refused(backend):
    limit = cuda_shap.SHAP_MAX_PATH_LENGTH
    features = backend.prepare_features(np.zeros((2, limit + 5)))
    deep = _chain_tree(limit + 2)
    with pytest.raises(ValueError, match="device='cpu'"):
        backend.predict_contributions(features, [deep], [0], 1)


def _chain_tree(depth):
    """A tree splitting on features 0, 1, ..., depth - 1 down its left spine."""
    n = 2 * depth + 1
    arrays = {name: np.zeros(n, dtype=dtype) for name, dtype in TREE_ARRAYS.items()}
    arrays["feature"][:] = -1
    arrays["left_child"][:] = -1
    arrays["right_child"][:] = -1
    arrays["cover"][:] = 1.0
    for level in range(depth):
        node = 2 * level
        arrays["feature"][node] = level
        arrays["left_child"][node] = node + 2
        arrays["right_child"][node] = node + 1
    return Tree(arrays)


def test_kernel_constants_match_the_host():
    source = read_cuda_source("shap.cu")

    def constant(name):
        return int(re.search(rf"constexpr int32_t {name} = (\d+);", source).group(1))

    assert constant("kShapThreadsPerBlock") == cuda_shap.SHAP_THREADS_PER_BLOCK
    assert constant("kShapMaxPathLength") == cuda_shap.SHAP_MAX_PATH_LENGTH


# ---- categorical splits ---------------------------------------------------------------
@pytest.mark.parametrize(
    "objective, max_cat_to_onehot",
    [("reg:squarederror", 64), ("multi:softprob", 1), ("binary:logistic", 4)],
)
def test_categorical_splits_equal_the_cpu_backend(backend, objective, max_cat_to_onehot):
    booster, _, codes = categorical_shap_case(
        13, objective, n_rows=300, max_cat_to_onehot=max_cat_to_onehot
    )
    assert any(tree.has_categorical for tree in booster.trees)
    X = np.ascontiguousarray(codes[:30])
    # codes prediction sends along the default (past the sets, negative, fractional) or
    # looks up past a set's categories (40, 63)
    X[:6, 0] = [40.0, 63.0, 64.0, -1.0, 2.5, np.inf]
    X[6:12, 1] = [40.0, 63.0, 64.0, -1.0, 2.5, np.nan]
    _assert_equal_to_the_cpu_backend(backend, X, booster)


def test_handmade_categorical_tree_equals_brute_force(backend):
    tree = small_categorical_tree()
    X = np.array([[2, 0], [1, 40], [40, 0], [9, 40], [9, 64], [np.nan, 1], [2.5, 7]], dtype=float)
    features = backend.prepare_features(X)
    contributions = backend.to_host(backend.predict_contributions(features, [tree], [0], 1))
    np.testing.assert_allclose(
        contributions, brute_force_contributions(X, [tree], [0], 1), rtol=0, atol=1e-12
    )
    interactions = backend.to_host(backend.predict_interactions(features, [tree], [0], 1))
    np.testing.assert_allclose(
        interactions, brute_force_interactions(X, [tree], [0], 1), rtol=0, atol=1e-12
    )


def test_booster_with_categorical_splits_on_the_cuda_device(backend):
    booster, X, _ = categorical_shap_case(14, "binary:logistic", n_rows=300)
    X = X[:40].copy()
    X[:5, 0] = 999.0  # unseen: as missing
    on_cpu = booster.predict(X, pred_contribs=True)
    with emulated_kernels():
        booster.params["device"] = "cuda"
        on_cuda = booster.predict(X, pred_contribs=True)
        margin = booster.predict(X, output_margin=True)
    np.testing.assert_array_equal(on_cpu, on_cuda)
    np.testing.assert_allclose(on_cuda.sum(axis=-1), margin, rtol=1e-9, atol=1e-12)
