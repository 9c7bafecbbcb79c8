"""Tests of gpuboost.backends.cpu.bundling: the compiled greedy bundling against
``gpuboost.data.bundling.find_bundles`` (the reference) on random row sets (hypothesis),
and the CSR row table a Dataset hands it, from dense and sparse input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from gpuboost import Dataset
from gpuboost.backends.cpu.bundling import find_bundles as find_bundles_compiled
from gpuboost.core.segments import offsets
from gpuboost.data import bundling
from gpuboost.data.bundling import MAX_BUNDLE_BINS, _NonDefaultRows, find_bundles


@st.composite
def _problems(draw):
    n_rows = draw(st.integers(1, 40))
    n_features = draw(st.integers(1, 30))
    row_sets = []
    for _ in range(n_features):
        rows = draw(st.lists(st.integers(0, n_rows - 1), max_size=n_rows, unique=True))
        row_sets.append(np.array(sorted(rows), dtype=np.int64))
    # Slots from 0 (never leaves its default bin) up to wide enough to close bundles.
    n_slots = np.array(
        draw(
            st.lists(
                st.sampled_from([0, 1, 2, 5, 100, 200]), min_size=n_features, max_size=n_features
            )
        ),
        dtype=np.int64,
    )
    shareable = np.array(
        draw(st.lists(st.booleans(), min_size=n_features, max_size=n_features)), dtype=bool
    )
    max_conflicts = draw(st.integers(0, 5))
    max_searched = draw(st.sampled_from([1, 2, 64]))
    return n_rows, row_sets, n_slots, shareable, max_conflicts, max_searched


@settings(max_examples=150, deadline=None)
@given(problem=_problems())
def test_compiled_bundles_equal_the_reference(problem):
    n_rows, row_sets, n_slots, shareable, max_conflicts, max_searched = problem
    counts = np.array([len(r) for r in row_sets], dtype=np.int64)
    original = bundling.MAX_BUNDLES_SEARCHED
    bundling.MAX_BUNDLES_SEARCHED = max_searched
    try:
        expected = find_bundles(
            counts, n_slots, row_sets.__getitem__, n_rows, max_conflicts, shareable
        )
    finally:
        bundling.MAX_BUNDLES_SEARCHED = original
    indptr = offsets(counts)
    rows = np.concatenate(row_sets) if row_sets else np.zeros(0, dtype=np.int64)
    got = find_bundles_compiled(
        counts,
        n_slots,
        indptr,
        rows,
        n_rows,
        max_conflicts,
        MAX_BUNDLE_BINS,
        max_searched,
        shareable,
    )
    assert got == expected


def _csr_rows(indptr, rows, feature):
    return rows[indptr[feature] : indptr[feature + 1]]


@pytest.mark.parametrize("unsorted", [False, True])
def test_row_table_equals_the_rows_of_each_feature(unsorted):
    rng = np.random.default_rng(0)
    X = sparse.random(300, 40, density=0.1, format="csc", random_state=1)
    X.data = np.round(rng.normal(size=X.nnz), 1)  # some stored values fall in the default bin
    X.data[::17] = np.nan
    dataset = Dataset(X.tocsr())
    dense = X.toarray()
    wanted = rng.random(40) < 0.7
    for columns in (X, None):
        if columns is not None and unsorted:
            columns = columns.copy()
            for f in range(columns.shape[1]):  # reverse each column's entries
                lo, hi = columns.indptr[f], columns.indptr[f + 1]
                columns.indices[lo:hi] = columns.indices[lo:hi][::-1].copy()
                columns.data[lo:hi] = columns.data[lo:hi][::-1].copy()
            columns.has_sorted_indices = False
        non_default = _NonDefaultRows(dense, dataset.bin_mapper, columns)
        indptr, rows = non_default.row_table(wanted)
        for feature in range(40):
            expected = non_default.rows(feature) if wanted[feature] else np.zeros(0)
            np.testing.assert_array_equal(_csr_rows(indptr, rows, feature), expected)


def test_datasets_bundle_alike_with_and_without_compiled_kernels(monkeypatch):
    X = sparse.random(2000, 300, density=0.01, format="csr", random_state=2)
    for rate in (0.0, 0.01):
        compiled = Dataset(X).bundle_map(rate)
        monkeypatch.setenv("GPUBOOST_CPU_KERNELS", "numpy")
        reference = Dataset(X).bundle_map(rate)
        monkeypatch.delenv("GPUBOOST_CPU_KERNELS")
        assert [list(m) for m in compiled.members] == [list(m) for m in reference.members]
        assert compiled.n_conflicts == reference.n_conflicts
        assert compiled.n_bundles < 300
