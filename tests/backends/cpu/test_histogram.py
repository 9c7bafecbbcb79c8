"""Tests of gpuboost.backends.cpu.histogram: the compiled histograms against the NumPy
reference and its naive loop, on random data (hypothesis)."""

import numpy as np
import pytest
from _cases import binned_problem, random_segments
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuboost.backends.cpu import histogram as cpu_histogram
from gpuboost.backends.cpu.histogram import (
    build_children_histograms,
    build_histograms,
    build_output_histograms,
    build_sparse_histograms,
)
from gpuboost.backends.numpy.histogram import build_histograms as reference_histograms
from gpuboost.backends.numpy.histogram import build_histograms_naive
from gpuboost.core.dtypes import GRAD_QUANT_MAX, HIST_DTYPE
from gpuboost.core.vector_split import OutputHistograms, cell_width
from gpuboost.data import Dataset


def _reference(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins):
    reference = reference_histograms(
        np.ascontiguousarray(X_binned.T), gradients, hessians, sample_indices, begins, ends, n_bins
    )
    naive = build_histograms_naive(
        X_binned, gradients, hessians, sample_indices, begins, ends, n_bins
    )
    np.testing.assert_array_equal(reference, naive)
    return reference


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 500),
    n_features=st.integers(1, 5),
    max_bin=st.sampled_from([2, 3, 16, 63, 255]),
    n_nodes=st.integers(1, 8),
    n_threads=st.integers(1, 7),
)
def test_matches_the_reference_and_the_naive_loop(
    seed, n_rows, n_features, max_bin, n_nodes, n_threads
):
    """Nodes of every size (empty, below and above the wide-cell threshold of n_bins rows,
    cut by the ranges of up to seven threads), in random order, rows permuted."""
    rng = np.random.default_rng(seed)
    X_binned, gradients, hessians = binned_problem(rng, n_rows, n_features, max_bin)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    n_bins = max_bin + 1
    compiled = build_histograms(
        X_binned, gradients, hessians, sample_indices, begins, ends, n_bins, n_threads
    )
    assert compiled.dtype == HIST_DTYPE
    assert compiled.shape == (n_nodes, n_features, n_bins, 3)
    np.testing.assert_array_equal(
        compiled, _reference(X_binned, gradients, hessians, sample_indices, begins, ends, n_bins)
    )


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(1, 600),
    n_pairs=st.integers(1, 6),
    n_threads=st.integers(1, 5),
)
def test_children_are_the_built_nodes_then_the_parents_minus_them(seed, n_rows, n_pairs, n_threads):
    rng = np.random.default_rng(seed)
    X_binned, gradients, hessians = binned_problem(rng, n_rows, 3, 31)
    sample_indices = np.arange(n_rows, dtype=np.int32)
    begins, ends = random_segments(rng, n_rows, n_pairs)
    parents = _reference(
        X_binned, gradients, hessians, sample_indices, *random_segments(rng, n_rows, 7), 32
    )
    parent_rows = rng.integers(0, 7, size=n_pairs)
    children = build_children_histograms(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        32,
        parents,
        parent_rows,
        n_threads,
    )
    built = _reference(X_binned, gradients, hessians, sample_indices, begins, ends, 32)
    np.testing.assert_array_equal(children[:n_pairs], built)
    np.testing.assert_array_equal(children[n_pairs:], parents[parent_rows] - built)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 400),
    n_outputs=st.integers(1, 9),
    n_nodes=st.integers(1, 6),
    n_threads=st.integers(1, 7),
    with_parents=st.booleans(),
)
def test_output_cells_are_every_outputs_histograms(
    seed, n_rows, n_outputs, n_nodes, n_threads, with_parents
):
    """Every output in one pass (cell widths 4 to 20: 1 to 9 outputs, the widest with
    their increments in memory, not registers), nodes empty or
    cut by the ranges of up to seven threads, rows permuted, padding written zero (the
    batch starts as garbage): each output's cells are its one-output histograms, the
    counts theirs, and with parents the siblings are the parents minus the built nodes."""
    rng = np.random.default_rng(seed)
    X_binned, _, _ = binned_problem(rng, n_rows, 3, 63)
    columns = [binned_problem(rng, n_rows, 1, 3)[1 + t % 2] for t in range(2 * n_outputs)]
    pairs = np.column_stack(columns) if n_rows else np.zeros((0, 2 * n_outputs), np.int32)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    width = cell_width(n_outputs)
    n_cells = 3 * 64 * width
    parent_rows = rng.integers(0, 3, size=n_nodes)
    n_out = (2 if with_parents else 1) * n_nodes
    out = rng.integers(-9, 9, size=(n_out, n_cells))
    out_counts = rng.integers(-9, 9, size=(n_out, 3 * 64))
    parents = ()
    if with_parents:
        parents = (
            rng.integers(-(2**40), 2**40, size=(3, n_cells)),
            rng.integers(0, 2**40, size=(3, 3 * 64)),
            parent_rows,
        )
    build_output_histograms(
        X_binned,
        pairs,
        sample_indices,
        begins,
        ends,
        64,
        out,
        out_counts,
        *parents,
        n_threads=n_threads,
    )
    cells = out.reshape(-1, 3, 64, width)
    counts = out_counts.reshape(-1, 3, 64)
    expected = np.stack(
        [
            _reference(
                X_binned, pairs[:, 2 * t], pairs[:, 2 * t + 1], sample_indices, begins, ends, 64
            )
            for t in range(n_outputs)
        ]
    )
    built = OutputHistograms(cells[:n_nodes], counts[:n_nodes], n_outputs)
    np.testing.assert_array_equal(built.per_output(np), expected)
    reference = OutputHistograms.from_per_output(np, expected)
    np.testing.assert_array_equal(built.cells, reference.cells)
    np.testing.assert_array_equal(built.counts, reference.counts)
    if with_parents:
        parent_cells, parent_counts, _ = parents
        np.testing.assert_array_equal(
            cells[n_nodes:], parent_cells.reshape(-1, 3, 64, width)[parent_rows] - cells[:n_nodes]
        )
        np.testing.assert_array_equal(
            counts[n_nodes:], parent_counts.reshape(-1, 3, 64)[parent_rows] - counts[:n_nodes]
        )


def test_sums_at_the_int32_extremes_are_exact():
    """Every row at +-GRAD_QUANT_MAX in one bin: sums far beyond int32 and float64's
    integer precision of the summands' products stay exact."""
    n_rows = 5000
    X_binned = np.zeros((n_rows, 2), dtype=np.uint8)
    gradients = np.full(n_rows, -GRAD_QUANT_MAX, dtype=np.int32)
    hessians = np.full(n_rows, GRAD_QUANT_MAX, dtype=np.int32)
    sample_indices = np.arange(n_rows, dtype=np.int32)
    histograms = build_histograms(
        X_binned, gradients, hessians, sample_indices, [0], [n_rows], 256, 2
    )
    assert histograms[0, 1, 0].tolist() == [
        -GRAD_QUANT_MAX * n_rows,
        GRAD_QUANT_MAX * n_rows,
        n_rows,
    ]
    assert not histograms[0, :, 1:].any()


def test_no_nodes():
    X_binned = np.zeros((4, 2), dtype=np.uint8)
    values = np.ones(4, dtype=np.int32)
    histograms = build_histograms(X_binned, values, values, np.arange(4, dtype=np.int32), [], [], 8)
    assert histograms.shape == (0, 2, 8, 3)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(1, 400),
    n_nodes=st.integers(1, 6),
    conflict_rate=st.sampled_from([0.0, 0.2]),
    extreme=st.booleans(),
)
def test_sparse_histograms_are_those_of_the_decoded_bins(
    seed, n_rows, n_nodes, conflict_rate, extreme
):
    """build_sparse_histograms on the non-default cells of a bundled matrix (with and
    without conflicts) == the NumPy reference histograms of the per-feature bins decoded
    from it (missing bin moved to the narrow width's last column) == the naive expansion
    of the reference's bundle histograms; children: parents minus the built nodes."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(seed)
    X = scipy_sparse.random(n_rows, 12, density=0.15, format="csc", random_state=seed)
    X.data = np.round(X.data * rng.choice([3, 40]))
    X.data[rng.random(X.nnz) < 0.1] = np.nan
    dataset = Dataset(X)
    bundle_map = dataset.bundle_map(conflict_rate)
    X_bundled = bundle_map.encode_sparse(dataset.sparse_columns, dataset.bin_mapper)
    n_bins = bundle_map.scan_bins
    indptr, cells = bundle_map.non_default_cells(X_bundled, n_bins, n_bins - 1)
    scale = GRAD_QUANT_MAX if extreme else 1000
    gradients = rng.integers(-scale, scale + 1, size=n_rows).astype(np.int32)
    hessians = rng.integers(0, scale + 1, size=n_rows).astype(np.int32)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    built = build_sparse_histograms(
        indptr,
        cells,
        bundle_map.default_bins,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_bins,
    )
    decoded = bundle_map.decode(np, X_bundled)
    decoded[decoded == bundle_map.missing_bin] = n_bins - 1
    expected = _reference(decoded, gradients, hessians, sample_indices, begins, ends, n_bins)
    np.testing.assert_array_equal(built, expected)
    bundle_histograms = reference_histograms(
        np.ascontiguousarray(X_bundled.T),
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        bundle_map.n_bins,
    )
    wide = bundle_map.expand_histograms_naive(bundle_histograms, bundle_map.missing_bin + 1)
    np.testing.assert_array_equal(built[:, :, : n_bins - 1], wide[:, :, : n_bins - 1])
    np.testing.assert_array_equal(built[:, :, n_bins - 1], wide[:, :, bundle_map.missing_bin])
    parent_rows = rng.integers(0, n_nodes, size=n_nodes)
    children = build_sparse_histograms(
        indptr,
        cells,
        bundle_map.default_bins,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_bins,
        expected,
        parent_rows,
    )
    np.testing.assert_array_equal(children[:n_nodes], expected)
    np.testing.assert_array_equal(children[n_nodes:], expected[parent_rows] - expected)


@pytest.mark.parametrize("n_nodes", [1, 2, 3])
@pytest.mark.parametrize("n_threads", [1, 2, 5])
def test_sparse_histograms_of_rows_cut_into_ranges(monkeypatch, n_nodes, n_threads):
    """A batch of fewer nodes than threads has each node's rows cut into ranges added
    apart and summed: the histograms (default cells included) of one range per node."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(n_nodes * 10 + n_threads)
    n_rows = 500
    X = scipy_sparse.random(n_rows, 30, density=0.1, format="csc", random_state=3)
    X.data = np.round(X.data * 5)
    dataset = Dataset(X)
    bundle_map = dataset.bundle_map(0.0)
    X_bundled = bundle_map.encode_sparse(dataset.sparse_columns, dataset.bin_mapper)
    n_bins = bundle_map.scan_bins
    indptr, cells = bundle_map.non_default_cells(X_bundled, n_bins, n_bins - 1)
    gradients = rng.integers(-1000, 1001, size=n_rows).astype(np.int32)
    hessians = rng.integers(0, 1001, size=n_rows).astype(np.int32)
    sample_indices = rng.permutation(n_rows).astype(np.int32)
    begins, ends = random_segments(rng, n_rows, n_nodes)
    arguments = (indptr, cells, bundle_map.default_bins, gradients, hessians, sample_indices)
    monkeypatch.setattr(cpu_histogram, "threads", lambda: 1)
    one_range = build_sparse_histograms(*arguments, begins, ends, n_bins)
    monkeypatch.setattr(cpu_histogram, "threads", lambda: n_threads)
    ranges = build_sparse_histograms(*arguments, begins, ends, n_bins)
    np.testing.assert_array_equal(ranges, one_range)
    parent_rows = rng.integers(0, n_nodes, size=n_nodes)
    children = build_sparse_histograms(*arguments, begins, ends, n_bins, one_range, parent_rows)
    np.testing.assert_array_equal(children[n_nodes:], one_range[parent_rows] - one_range)
