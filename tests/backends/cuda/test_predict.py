"""The CUDA backend's prediction kernels (``cuda/predict.cu``) against the NumPy backend.

Runs under the CPU emulation of the kernels (``GPUBOOST_EMULATE_CUDA=1``); every
launch is checked. Results must equal the NumPy backend's bit for bit.
"""

import numpy as np
import pytest

import gpuboost
from gpuboost import Dataset
from gpuboost.backends import NumpyBackend
from gpuboost.backends.cuda import predict as cuda_predict
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.sources import read_cuda_source
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.tree.tree import Tree

N_ROWS = 300
N_FEATURES = 5
MAX_BIN = 15


@pytest.fixture(scope="module")
def backend():
    """A CudaBackend on the emulated kernels, checking every launch."""
    with emulated_kernels():
        cuda = CudaBackend()
        cuda.check_launches = True
        yield cuda


def _features(seed, n_rows=N_ROWS):
    """Features with NaN (feature 1), +/-inf (feature 0) and a constant (feature 4)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, N_FEATURES))
    X[rng.random(n_rows) < 0.15, 1] = np.nan
    X[rng.random(n_rows) < 0.03, 0] = np.inf
    X[rng.random(n_rows) < 0.03, 0] = -np.inf
    X[:, 4] = 1.0
    return X


@pytest.fixture(scope="module")
def multiclass_model():
    """A 3-class model (4 rounds x 3 trees) trained on the CPU."""
    X = _features(0)
    y = np.digitize(
        np.nan_to_num(X[:, 0], posinf=3, neginf=-3) + 0.5 * np.nan_to_num(X[:, 1]), [-0.5, 0.5]
    ).astype(np.float64)
    params = {
        "objective": "multi:softprob",
        "num_class": 3,
        "max_depth": 4,
        "device": "cpu",
        "max_bin": MAX_BIN,
    }
    return gpuboost.train(params, Dataset(X, label=y, max_bin=MAX_BIN), num_boost_round=4)


@pytest.fixture(scope="module")
def regression_dataset():
    X = _features(1)
    y = np.nan_to_num(X[:, 0], posinf=4, neginf=-4) + np.where(np.isnan(X[:, 1]), 2.0, X[:, 2])
    return Dataset(X, label=y, max_bin=MAX_BIN)


@pytest.fixture(scope="module")
def regression_model(regression_dataset):
    params = {"max_depth": 5, "device": "cpu", "learning_rate": 0.37}
    return gpuboost.train(params, regression_dataset, num_boost_round=5)


def _bits(array):
    """float64 values as int64 bit patterns (distinguishes -0.0 and +0.0)."""
    return np.ascontiguousarray(array, dtype=np.float64).view(np.int64)


def test_forest_margins_match_numpy(backend, multiclass_model):
    X = _features(2)
    trees = multiclass_model.trees
    outputs = [i % 3 for i in range(len(trees))]
    start = np.random.default_rng(3).normal(size=(N_ROWS, 3))
    expected = NumpyBackend().predict_forest_raw(X, trees, outputs, start.copy())
    features = backend.prepare_features(X)
    margins = backend.to_device(start)
    returned = backend.predict_forest_raw(features, trees, outputs, margins)
    backend.synchronize()
    assert returned is margins
    np.testing.assert_array_equal(_bits(backend.to_host(margins)), _bits(expected))
    assert not np.array_equal(expected, start)  # the trees did add something


def test_forest_margins_non_contiguous(backend, regression_model):
    """A Fortran-ordered margins array is updated in place too."""
    X = _features(4)
    trees = regression_model.trees
    start = np.asfortranarray(np.random.default_rng(5).normal(size=(N_ROWS, 2)))
    outputs = [1] * len(trees)
    expected = NumpyBackend().predict_forest_raw(X, trees, outputs, start.copy())
    margins = backend.to_device(start)
    backend.predict_forest_raw(backend.prepare_features(X), trees, outputs, margins)
    np.testing.assert_array_equal(_bits(backend.to_host(margins)), _bits(expected))


def test_forest_leaves_match_numpy(backend, multiclass_model):
    X = _features(6)
    expected = NumpyBackend().predict_forest_leaves(X, multiclass_model.trees)
    leaves = backend.predict_forest_leaves(backend.prepare_features(X), multiclass_model.trees)
    backend.synchronize()
    got = backend.to_host(leaves)
    assert got.dtype == np.int32 and got.shape == (N_ROWS, len(multiclass_model.trees))
    np.testing.assert_array_equal(got, expected)
    assert len(np.unique(got)) > 3


def test_tree_raw_and_binned_match_numpy(backend, regression_model, regression_dataset):
    numpy_backend = NumpyBackend()
    numpy_data = numpy_backend.prepare(regression_dataset)
    data = backend.prepare(regression_dataset)
    X = _features(7)
    features = backend.prepare_features(X)
    for tree in regression_model.trees:
        raw = backend.predict_tree_raw(features, tree)
        binned = backend.predict_tree_binned(data, tree)
        backend.synchronize()
        np.testing.assert_array_equal(
            _bits(backend.to_host(raw)), _bits(numpy_backend.predict_tree_raw(X, tree))
        )
        np.testing.assert_array_equal(
            _bits(backend.to_host(binned)),
            _bits(numpy_backend.predict_tree_binned(numpy_data, tree)),
        )
    assert regression_model.trees[0].n_leaves > 4


def test_hand_made_tree_edge_cases(backend):
    """NaN both ways, x == threshold goes left, +/-inf, a negative zero leaf value."""
    tree = Tree(
        {
            "feature": [0, 1, -1, -1, -1],
            "threshold_bin": [2, 0, 0, 0, 0],
            "threshold": [0.5, -1.0, 0.0, 0.0, 0.0],
            "default_left": [True, False, False, False, False],
            "left_child": [1, 3, -1, -1, -1],
            "right_child": [2, 4, -1, -1, -1],
            "value": [0.0, 0.0, 7.0, -0.0, -2.5],
            "gain": [0.0] * 5,
            "cover": [0.0] * 5,
            "count": [0] * 5,
        }
    )
    X = np.array(
        [
            [0.5, -1.0],
            [np.nan, np.nan],
            [np.inf, 0.0],
            [-np.inf, -1.0],
            [0.5000000000000001, 0.0],
            [np.nan, -2.0],
        ]
    )
    expected = NumpyBackend().predict_tree_raw(X, tree)
    got = backend.to_host(backend.predict_tree_raw(backend.prepare_features(X), tree))
    np.testing.assert_array_equal(_bits(got), _bits(expected))
    np.testing.assert_array_equal(got, [-0.0, -2.5, 7.0, -0.0, 7.0, -0.0])


@pytest.fixture(scope="module")
def categorical_model():
    """A model with categorical splits (70 categories on 15 bins: the 'other' bin's codes
    give sets of three words; 4 more, one-vs-rest-free) and numeric ones, and its Dataset."""
    rng = np.random.default_rng(3)
    big, small, x = rng.integers(0, 70, 800), rng.integers(0, 4, 800), rng.normal(size=800)
    y = rng.normal(size=70)[big] * 2 + (small == 1) + x
    X = np.column_stack([big.astype(np.float64), small.astype(np.float64), x])
    X[rng.random(800) < 0.1, 0] = np.nan
    dataset = Dataset(X, label=y, categorical_features=[0, 1], max_bin=MAX_BIN)
    params = {"max_depth": 4, "device": "cpu", "max_cat_to_onehot": 1, "min_data_per_group": 5}
    return gpuboost.train(params, dataset, num_boost_round=4), dataset


def _categorical_codes(seed):
    """Codes as prediction sees them: every code, none (NaN, +/-inf), negative, fractional
    and -0.0 ones, and codes at and past the trees' code limits."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 70, size=(N_ROWS, 2)).astype(np.float64)
    odd = np.array([np.nan, np.inf, -np.inf, -1.0, 2.5, -0.0, 63.0, 64.0, 95.0, 96.0, 1e9])
    codes[: len(odd), 0], codes[len(odd) : 2 * len(odd), 1] = odd, odd
    return np.column_stack([codes, rng.normal(size=N_ROWS)])


def test_categorical_trees_match_numpy(backend, categorical_model):
    """Categorical splits traversed by the kernels (raw and binned, one tree and a forest,
    leaf indices): the array-module definition's results bit for bit."""
    model, dataset = categorical_model
    trees = model.trees
    assert all(tree.has_categorical for tree in trees)
    assert max(int(np.diff(tree.cat_offsets).max()) for tree in trees) >= 3
    numpy_backend = NumpyBackend()
    X = _categorical_codes(4)
    features = backend.prepare_features(X)
    expected = numpy_backend.predict_forest_raw(X, trees, [0] * len(trees), np.zeros((N_ROWS, 1)))
    got = backend.predict_forest_raw(
        features, trees, [0] * len(trees), backend.to_device(np.zeros((N_ROWS, 1)))
    )
    np.testing.assert_array_equal(_bits(backend.to_host(got)), _bits(expected))
    np.testing.assert_array_equal(
        backend.to_host(backend.predict_forest_leaves(features, trees)),
        numpy_backend.predict_forest_leaves(X, trees),
    )
    data, numpy_data = backend.prepare(dataset), numpy_backend.prepare(dataset)
    for tree in trees:
        np.testing.assert_array_equal(
            _bits(backend.to_host(backend.predict_tree_raw(features, tree))),
            _bits(numpy_backend.predict_tree_raw(X, tree)),
        )
        np.testing.assert_array_equal(
            _bits(backend.to_host(backend.predict_tree_binned(data, tree))),
            _bits(numpy_backend.predict_tree_binned(numpy_data, tree)),
        )


def test_empty_inputs(backend, regression_model):
    trees = regression_model.trees
    empty = backend.prepare_features(np.zeros((0, N_FEATURES)))
    assert backend.predict_forest_leaves(empty, trees).shape == (0, len(trees))
    assert backend.predict_tree_raw(empty, trees[0]).shape == (0,)
    X = _features(8)
    margins = backend.to_device(np.ones((N_ROWS, 1)))
    backend.predict_forest_raw(backend.prepare_features(X), [], [], margins)
    np.testing.assert_array_equal(backend.to_host(margins), 1.0)
    assert backend.predict_forest_leaves(backend.prepare_features(X), []).shape == (N_ROWS, 0)


def test_feature_count_mismatch_raises(backend, regression_model):
    X = backend.prepare_features(np.zeros((4, 1)))
    with pytest.raises(ValueError, match="features"):
        backend.predict_tree_raw(X, regression_model.trees[0])


def test_node_table_layout_matches_kernel_source():
    """backends/cuda/predict.py packs the node arrays in the row order predict.cu reads."""
    source = read_cuda_source("predict.cu")
    for row, name in enumerate(cuda_predict.NODE_INT_ROWS):
        constant = "kNode" + "".join(part.capitalize() for part in name.split("_"))
        assert f"constexpr int32_t {constant} = {row};" in source, constant
    for row, name in enumerate(cuda_predict.NODE_FLOAT_ROWS):
        constant = "kNode" + "".join(part.capitalize() for part in name.split("_"))
        assert f"constexpr int32_t {constant} = {row};" in source, constant
