"""Tests of the device layout of the row-major bins (gpuboost.backends.cuda.binned_rows):
the row stride, the padded allocation and what kernels are handed, and that the
histogram kernel reads a gathered padded row of 28 features in one sector."""

import numpy as np
import pytest

from gpuboost.backends.cuda.binned_rows import (
    binned_row_stride,
    empty_binned,
    kernel_rows,
    lay_out_binned,
    word_rows,
)
from gpuboost.backends.cuda.histogram import build_histograms
from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.emulation import traffic
from gpuboost.backends.emulation.device_array import namespace as xp

pytestmark = pytest.mark.usefixtures("cuda_emulation")


@pytest.mark.parametrize(
    "n_features, stride",
    [
        (0, 0),
        (1, 4),  # 31 bytes of padding would be 31 times the row: words
        (20, 20),  # 12 of 20: words
        (24, 24),  # 8 of 24: more than a quarter
        (26, 32),  # 6 of 26
        (28, 32),  # the case: 4 of 28
        (32, 32),
        (33, 36),
        (100, 100),  # 28 of 100: more than a quarter
        (103, 128),  # 25 of 103
        (97, 100),  # 31 of 97 > a quarter
    ],
)
def test_row_stride_is_whole_sectors_when_cheap_else_words(n_features, stride):
    assert binned_row_stride(n_features) == stride
    assert stride >= n_features and stride % 4 == 0


def test_empty_binned_is_a_view_of_a_padded_allocation():
    binned = empty_binned(xp, 5, 28)
    assert binned.shape == (5, 28) and binned.dtype == np.uint8
    assert binned.strides == (32, 1) and not binned.flags.c_contiguous
    rows, stride = kernel_rows(xp, binned)
    assert stride == 32 and rows.shape == (5, 32) and rows.flags.c_contiguous
    assert np.shares_memory(rows._array, binned._array)


def test_kernel_rows_takes_c_order_as_it_is_and_refuses_other_layouts():
    host = np.arange(60, dtype=np.uint8).reshape(6, 10)
    plain = xp.asarray(host)
    rows, stride = kernel_rows(xp, plain)
    assert stride == 10 and rows is plain
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel_rows(xp, xp.asarray(np.asfortranarray(host)))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel_rows(xp, plain[::2])  # rows skipped: not one allocation's leading columns
    with pytest.raises(TypeError, match="X_binned"):
        kernel_rows(xp, xp.asarray(host.astype(np.int32)))
    with pytest.raises(TypeError, match="X_binned"):
        kernel_rows(xp, host)


@pytest.mark.parametrize("n_features", [1, 7, 28, 32, 40])
def test_lay_out_binned_keeps_the_values(n_features):
    host = np.random.default_rng(n_features).integers(0, 255, size=(9, n_features))
    host = host.astype(np.uint8)
    laid_out = lay_out_binned(xp, xp.asarray(host))
    np.testing.assert_array_equal(laid_out.get(), host)
    _, stride = kernel_rows(xp, laid_out)
    assert stride == binned_row_stride(n_features)
    assert lay_out_binned(xp, laid_out) is laid_out  # already laid out: no copy


def test_padding_is_zero():
    """Kernels loading a row's bins in 4-byte words read its padding (never used): it is
    initialised, so that the sanitizer's initcheck has nothing to report."""
    rows, stride = kernel_rows(xp, empty_binned(xp, 3, 26))
    assert stride == 32
    np.testing.assert_array_equal(rows[:, 26:].get(), 0)


@pytest.mark.parametrize("n_features, copied", [(7, True), (8, False), (28, False)])
def test_word_rows_copies_only_strides_that_are_not_whole_words(n_features, copied):
    host = np.random.default_rng(n_features).integers(0, 255, size=(5, n_features))
    plain = xp.asarray(host.astype(np.uint8))
    rows, stride = word_rows(xp, plain)
    assert stride % 4 == 0 and (rows is not plain) == copied
    np.testing.assert_array_equal(rows.get()[:, :n_features], host)
    laid_out = lay_out_binned(xp, plain)
    assert word_rows(xp, laid_out)[1] == binned_row_stride(n_features)


def _load_sectors(X_binned, sample_indices):
    pairs = xp.asarray(np.ones((X_binned.shape[0], 2), dtype=np.int32))
    with traffic.record_traffic() as log:
        build_histograms(
            xp,
            KernelLauncher(EMULATED, check_launches=True),
            X_binned,
            pairs[:, 0],
            pairs[:, 1],
            xp.asarray(sample_indices),
            [0],
            [len(sample_indices)],
            2,
            block_threads=64,
            cluster_blocks=1,
        )
    (event,) = [event for event in log.events if event.name == "histogram_shared_memory"]
    return event.counters["global_load_sectors"]


def _modeled_bin_sectors(rows, row_stride, n_features, warp_lanes=32):
    """Sectors of the bin reads of shared_histogram_add_rows under the traffic model: per
    warp tile of 32 rows, steps of whole rows (``warp_lanes // row_words`` rows, a lane per
    4-byte word of the row's features), each step's distinct 32-byte sectors (the
    allocation starts sector-aligned)."""
    row_words = -(-n_features // 4)
    rows_per_step = warp_lanes // row_words
    sectors = 0
    for tile_begin in range(0, len(rows), warp_lanes):
        tile = rows[tile_begin : tile_begin + warp_lanes]
        for first in range(0, len(tile), rows_per_step):
            sectors += len(
                {
                    (row * row_stride + 4 * word) // 32
                    for row in tile[first : first + rows_per_step]
                    for word in range(row_words)
                }
            )
    return sectors


def test_gathered_padded_rows_of_28_features_cost_fewer_sectors():
    """Rows 5 apart (no two gathered rows share a sector). With 28-byte rows, row r starts
    at byte 28 r (a multiple of 4 mod 32) and straddles two sectors 3 times in 4; with
    32-byte rows it is one sector. Under the model a warp instruction loads the words of
    whole rows (4 rows of 7 words), so a row is counted once: 1.75 sectors a row with
    28-byte rows, 1 with 32-byte rows. Everything else of the build (positions, gradient
    pairs, the flush) is the same."""
    n_rows, n_features, spacing = 4000, 28, 5
    host = np.zeros((n_rows, n_features), dtype=np.uint8)
    gathered = np.arange(0, n_rows, spacing, dtype=np.int32)
    plain = _load_sectors(xp.asarray(host), gathered)
    padded = _load_sectors(lay_out_binned(xp, xp.asarray(host)), gathered)
    rows = [int(row) for row in gathered]
    modeled_plain = _modeled_bin_sectors(rows, n_features, n_features)
    modeled_padded = _modeled_bin_sectors(rows, 32, n_features)
    assert (modeled_plain, modeled_padded) == (len(rows) * 7 // 4, len(rows))
    assert plain - padded == modeled_plain - modeled_padded
