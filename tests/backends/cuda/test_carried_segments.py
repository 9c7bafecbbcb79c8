"""Tests of the segments sent ahead (gpuboost.backends.cuda.carried_segments): a level's
row-scanned node table travels in the histogram build's host-to-device copy, the build's
histograms unchanged, and the row scan reading it gives the records of its own copy; a
table kept for other segments is never used."""

import numpy as np
import pytest

from gpuboost import Dataset
from gpuboost.backends.cuda import histogram as cuda_histogram
from gpuboost.backends.cuda import partition as cuda_partition
from gpuboost.backends.cuda import row_scan as cuda_row_scan
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.cuda.carried_segments import CarriedSegments, segment_table
from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.cuda.split_scan import records_from_words
from gpuboost.backends.emulation.device_array import count_operations
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.core.gain import SplitParams

pytestmark = pytest.mark.usefixtures("cuda_emulation")


def test_segment_table_and_take():
    """``take`` returns the kept device table only for its own segments, once."""
    table = segment_table([0, 5, 9], [5, 9, 12])
    assert table.dtype == np.int64
    np.testing.assert_array_equal(table, [0, 5, 9, 5, 9, 12])
    with pytest.raises(ValueError, match="begins"):
        segment_table([0, 1], [2])
    carried = CarriedSegments()
    assert carried.take([0], [1]) is None  # nothing kept
    device = xp.asarray(table)
    carried.put(table, device)
    assert carried.take(np.array([0, 5, 9]), np.array([5, 9, 12])) is device
    assert carried.take([0, 5, 9], [5, 9, 12]) is None  # taken once
    carried.put(table, device)
    assert carried.take([0, 5, 9], [5, 9, 11]) is None  # other segments: not used
    assert carried.take([0, 5, 9], [5, 9, 12]) is None  # and dropped
    carried.put(table, device)
    carried.clear()
    assert carried.take([0, 5, 9], [5, 9, 12]) is None


def _problem(rng, n_rows=400, n_features=4, max_bin=15):
    X_binned = rng.integers(0, max_bin + 1, size=(n_rows, n_features), dtype=np.uint8)
    gradients = rng.integers(-1000, 1000, size=n_rows, dtype=np.int32)
    hessians = rng.integers(1, 1000, size=n_rows, dtype=np.int32)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    return X_binned, gradients, hessians, sample_indices


def test_the_build_carries_the_row_scan_table():
    """A children build with ``carry``: the same histograms and one host-to-device copy as
    without; the kept view holds the table, and the row scan given it (no copy of its
    own) writes the records of the row scan that copies its table itself."""
    rng = np.random.default_rng(3)
    max_bin, n_bins = 15, 16
    X_binned, gradients, hessians, sample_indices = _problem(rng, max_bin=max_bin)
    device_arrays = [xp.asarray(a) for a in (X_binned, gradients, hessians, sample_indices)]
    launcher = KernelLauncher(EMULATED, check_launches=True)
    parents = xp.asarray(rng.integers(-(2**30), 2**30, size=(2, 4, n_bins, 3)))
    begins, ends, parent_rows = [0, 150], [60, 230], [1, 0]
    row_begins, row_ends = np.array([230, 300, 320]), np.array([300, 320, 400])
    table = segment_table(row_begins, row_ends)

    def build(**carry):
        with count_operations() as counts:
            histograms = cuda_histogram.build_children_histograms(
                xp, launcher, *device_arrays, begins, ends, n_bins, parents, parent_rows, **carry
            )
        return xp.asnumpy(histograms), counts["to_device"]

    carried = CarriedSegments()
    plain, plain_copies = build()
    with_table, copies = build(carry=table, carried_segments=carried)
    np.testing.assert_array_equal(with_table, plain)
    assert copies == plain_copies == 1
    node_table = carried.take(row_begins, row_ends)
    assert node_table is not None
    np.testing.assert_array_equal(xp.asnumpy(node_table), table)
    with pytest.raises(ValueError, match="together"):
        build(carry=table)

    n_value_bins = xp.asarray(np.full(4, max_bin, dtype=np.int32))
    scan = (row_begins, row_ends, n_bins, n_value_bins, max_bin, 1e-3, 1e-3, SplitParams())

    def row_scan(**given):
        with count_operations() as counts:
            words = cuda_row_scan.row_scan_words(xp, launcher, *device_arrays, *scan, **given)
        return records_from_words(xp.asnumpy(words)), counts["to_device"]

    expected, own_copies = row_scan()
    got, no_copies = row_scan(node_table=node_table)
    assert got.tobytes() == expected.tobytes()
    assert (own_copies, no_copies) == (1, 0)
    assert (got["feature"] >= 0).any()  # not vacuous
    with pytest.raises(ValueError, match="node_table"):
        row_scan(node_table=node_table[:4])


def test_the_partition_carries_the_build_table():
    """The backend's partition given ``then_build`` sends the following children build's
    node table (and its row-scan carry) in its own copy: the same partition, the build's
    histograms unchanged and no copy of its own, and the row-scan table still taken from
    the build; a build of other segments copies its own table."""
    rng = np.random.default_rng(5)
    n_rows, max_bin = 600, 15
    X = rng.normal(size=(n_rows, 4))
    backend = CudaBackend()
    data = backend.prepare(Dataset(X, label=X[:, 0], max_bin=max_bin))
    gradients = xp.asarray(rng.integers(-1000, 1000, size=n_rows, dtype=np.int32))
    hessians = xp.asarray(rng.integers(1, 1000, size=n_rows, dtype=np.int32))
    parents = xp.asarray(rng.integers(-(2**30), 2**30, size=(2, 4, data.n_bins, 3)))
    split = ([0, 300], [300, 600], [1, 2], [7, 3], [True, False])  # two nodes
    begins, ends, parent_rows = [0, 300], [90, 420], [1, 0]  # their smaller children
    row_segments = (np.array([420, 500]), np.array([500, 600]))

    def step(then_build, build_begins=begins):
        indices = xp.asarray(np.arange(n_rows, dtype=np.int32))
        with count_operations() as partition_counts:
            backend.partition(data, indices, *split, **then_build)
        with count_operations() as build_counts:
            histograms = backend.build_children_histograms(
                data,
                gradients,
                hessians,
                indices,
                build_begins,
                ends,
                parents,
                parent_rows,
                row_segments=row_segments,
            )
        row_table = backend._carried_segments.take(*row_segments)
        return (
            xp.asnumpy(indices),
            xp.asnumpy(histograms),
            partition_counts["to_device"],
            build_counts["to_device"],
            None if row_table is None else xp.asnumpy(row_table),
        )

    plain = step({})
    ahead = step({"then_build": (data, begins, ends, parent_rows, row_segments)})
    np.testing.assert_array_equal(ahead[0], plain[0])
    np.testing.assert_array_equal(ahead[1], plain[1])
    assert (plain[2], plain[3]) == (1, 1)
    assert (ahead[2], ahead[3]) == (1, 0)
    np.testing.assert_array_equal(plain[4], segment_table(*row_segments))
    np.testing.assert_array_equal(ahead[4], segment_table(*row_segments))
    # Sent for other segments: the build copies its own table, and the result holds.
    other = step({"then_build": (data, [0, 300], [80, 420], parent_rows, None)})
    np.testing.assert_array_equal(other[1], plain[1])
    assert (other[2], other[3]) == (1, 1)
    with pytest.raises(ValueError, match="together"):
        cuda_partition.partition_rows(
            xp,
            backend.launcher,
            cuda_partition.binned_columns(xp, data),
            xp.asarray(np.arange(n_rows, dtype=np.int32)),
            *split,
            data.missing_bin,
            carry=np.zeros(2, dtype=np.int64),
        )
