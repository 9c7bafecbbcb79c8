"""Tests of the siblings a children build leaves to its split scan
(gpuboost.backends.cuda.histogram.SiblingDebt, ``split_scan_features`` with pairs): the
scan of the batch writes the siblings as it scans them, with the records and the batch
of a build that subtracts first and a plain scan, and without the subtraction launch;
every other reader of the batch through the backend has the siblings written first."""

import numpy as np
import pytest

from gpuboost import Dataset
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.histogram import SiblingDebt, SiblingDebts
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.core.gain import SplitParams

pytestmark = pytest.mark.usefixtures("cuda_emulation")

SUBTRACT = "histogram_subtract_siblings"
SCAN = "split_scan_features"
SCALES = (2.0**20, 2.0**21)


class _Recording:
    """A kernel launcher that records the names of the kernels it launches."""

    def __init__(self, launcher):
        self.launcher = launcher
        self.kernels = []

    def __call__(self, file, kernel, *args, **kwargs):
        self.kernels.append(kernel)
        return self.launcher(file, kernel, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.launcher, name)


def _level(seed=0, n_rows=900, n_features=5, max_bin=15, next_pairs=0):
    """A backend (its launcher recording), its data, and the arguments of a children
    build of three pairs whose parents are the histograms of three segments."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    label = X[:, 0].copy()
    X[rng.random(X.shape) < 0.1] = np.nan  # missing values: both directions scanned
    backend = CudaBackend()
    data = backend.prepare(Dataset(X, label=label, max_bin=max_bin))
    gradients = xp.asarray(rng.integers(-(2**20), 2**20, size=n_rows, dtype=np.int32))
    hessians = xp.asarray(rng.integers(1, 2**20, size=n_rows, dtype=np.int32))
    indices = xp.asarray(rng.permutation(n_rows).astype(np.int32))
    parents = backend.build_histograms(
        data, gradients, hessians, indices, [0, 300, 600], [300, 600, 900]
    )
    # Pairs in another order than the parents: the build reads each parent by row.
    children = ([600, 0, 300], [710, 140, 420], [2, 0, 1])
    build = (data, gradients, hessians, indices, *children[:2], parents, children[2])
    backend.launcher = _Recording(backend.launcher)
    return backend, data, build, {"next_pairs": next_pairs}


def _scan(backend, data, histograms, mask=None, bounds=None, params=None):
    params = SplitParams(min_data_in_leaf=3) if params is None else params
    return backend.find_best_splits(data, histograms, *SCALES, params, mask, bounds)


def _reference(seed=0, **level):
    """The batch and its records by a build that subtracts, then a plain scan."""
    backend, data, build, next_level = _level(seed, **level)
    batch = backend.build_children_histograms(*build, **next_level)
    assert SUBTRACT in backend.launcher.kernels
    return backend, data, xp.asnumpy(batch)


def test_the_scan_writes_the_siblings_it_scans():
    backend, data, expected = _reference()
    records = _scan(backend, data, xp.asarray(expected))
    assert (records["feature"] >= 0).sum() >= 4  # not vacuous
    backend, data, build, next_level = _level()
    batch = backend.build_children_histograms(*build, siblings_in_scan=True, **next_level)
    assert backend.launcher.kernels[-1] != SUBTRACT
    backend.launcher.kernels.clear()
    got = _scan(backend, data, batch)
    assert backend.launcher.kernels == [SCAN]  # no subtraction launch
    assert got.tobytes() == records.tobytes()
    np.testing.assert_array_equal(xp.asnumpy(batch), expected)
    # Paid: a second scan of the batch is a plain one.
    backend.launcher.kernels.clear()
    assert _scan(backend, data, batch).tobytes() == records.tobytes()
    assert backend.launcher.kernels == [SCAN]


@pytest.mark.parametrize("rows", [slice(1, 5), slice(0, 3), slice(3, 6), slice(2, 3)])
def test_a_scan_of_some_rows_pays_for_the_whole_batch(rows):
    """A scan of consecutive rows of the batch (the grower's view of the nodes it
    evaluates), with feature masks and monotone bounds: the records of those rows, and
    the whole batch written."""
    backend, data, expected = _reference(seed=1)
    n = rows.stop - rows.start
    rng = np.random.default_rng(7)
    mask = rng.random((n, 5)) < 0.7
    mask[:, 0] = True
    bounds = np.tile(np.array([[-0.5, 0.5]]), (n, 1))
    params = SplitParams(min_data_in_leaf=3, monotone=(1, 0, -1, 0, 0))
    records = _scan(backend, data, xp.asarray(expected[rows]), mask, bounds, params)
    backend, data, build, next_level = _level(seed=1)
    batch = backend.build_children_histograms(*build, siblings_in_scan=True, **next_level)
    backend.launcher.kernels.clear()
    got = _scan(backend, data, batch[rows], mask, bounds, params)
    assert backend.launcher.kernels == [SCAN]
    assert got.tobytes() == records.tobytes()
    np.testing.assert_array_equal(xp.asnumpy(batch), expected)


@pytest.mark.parametrize(
    "reader",
    [
        lambda backend, batch: backend.to_host(batch[4:5]),
        lambda backend, batch: backend.stack_histograms([batch[5:6], batch[0:1]]),
        lambda backend, batch: backend.subtract_histograms(batch[3:4], batch[0:1]),
        lambda backend, batch: backend.release_memory(),
    ],
)
def test_other_readers_have_the_siblings_written_first(reader):
    backend, data, expected = _reference(seed=2)
    backend, data, build, next_level = _level(seed=2)
    batch = backend.build_children_histograms(*build, siblings_in_scan=True, **next_level)
    backend.launcher.kernels.clear()
    reader(backend, batch)
    assert backend.launcher.kernels[:1] == [SUBTRACT]
    np.testing.assert_array_equal(xp.asnumpy(batch), expected)


def test_a_scan_of_other_histograms_and_the_next_build_settle_first():
    """A scan of histograms that are not whole rows of the batch (a copy, every other
    row) and the next level's build both launch the subtraction first; the next level's
    build from the batch equals the build from the complete batch."""
    backend, data, expected = _reference(seed=3, next_pairs=2)
    for histograms in (lambda batch: xp.asarray(expected[1:3]), lambda batch: batch[::2]):
        backend, data, build, next_level = _level(seed=3, next_pairs=2)
        batch = backend.build_children_histograms(*build, siblings_in_scan=True, **next_level)
        backend.launcher.kernels.clear()
        viewed = histograms(batch)
        params = SplitParams(min_data_in_leaf=3)
        backend.find_best_splits(data, viewed, *SCALES, params, None)
        assert backend.launcher.kernels == [SUBTRACT, SCAN]
        np.testing.assert_array_equal(xp.asnumpy(batch), expected)
    backend, data, build, next_level = _level(seed=3, next_pairs=2)
    batch = backend.build_children_histograms(*build, siblings_in_scan=True, **next_level)
    gradients, hessians, indices = build[1:4]
    backend.launcher.kernels.clear()
    following = backend.build_children_histograms(
        data, gradients, hessians, indices, [0, 150], [10, 160], batch, [0, 4], next_pairs=0
    )
    assert backend.launcher.kernels[0] == SUBTRACT
    np.testing.assert_array_equal(xp.asnumpy(batch), expected)
    unpaid = xp.asnumpy(following)
    # The same following build from the complete batch.
    reference = backend.build_children_histograms(
        data, gradients, hessians, indices, [0, 150], [10, 160], xp.asarray(expected), [0, 4]
    )
    np.testing.assert_array_equal(unpaid, xp.asnumpy(reference))


def test_the_mixed_scan_pays_the_debt():
    """``find_best_splits_mixed`` (rows and histograms, one copy) scans the owed batch
    with the fused kernel: the records of the plain scan."""
    backend, data, expected = _reference(seed=4)
    arguments = (data, *_level(seed=4)[2][1:4])
    params = SplitParams(min_data_in_leaf=3)
    row_segments = ([150, 450], [300, 600])
    records = backend.find_best_splits_mixed(
        *arguments, *row_segments, xp.asarray(expected), *SCALES, params, None, None
    )
    backend, data, build, next_level = _level(seed=4)
    batch = backend.build_children_histograms(*build, siblings_in_scan=True, **next_level)
    backend.launcher.kernels.clear()
    got = backend.find_best_splits_mixed(
        data, *build[1:4], *row_segments, batch, *SCALES, params, None, None
    )
    assert SUBTRACT not in backend.launcher.kernels
    assert got[0].tobytes() == records[0].tobytes()
    assert got[1].tobytes() == records[1].tobytes()
    np.testing.assert_array_equal(xp.asnumpy(batch), expected)


def test_sibling_debts_keep_one_debt_and_find_rows():
    batch = xp.asarray(np.zeros((4, 2, 3, 3), dtype=np.int64))
    debt = SiblingDebt(batch, 2, batch, xp.asarray(np.zeros(2, dtype=np.int64)), batch, 0)
    assert debt.first_row(batch) == 0
    assert debt.first_row(batch[1:3]) == 1
    assert debt.first_row(batch[3:]) == 3
    assert debt.first_row(batch[:, :1]) is None  # not whole rows
    assert debt.first_row(xp.asarray(np.zeros((1, 2, 3, 3), dtype=np.int64))) is None
    debts = SiblingDebts()
    debts.put(debt)
    with pytest.raises(RuntimeError, match="settle"):
        debts.put(debt)
    assert debts.take(batch[2:4], launcher=None) == (debt, 2)
    debts.settle(launcher=None)  # nothing owed: nothing launched
