"""Tests of gpuboost.backends.cpu.row_scan: the split records of small nodes scanned from
their rows equal the compiled histogram scan's and the NumPy reference's bit for bit
(random data, hypothesis), and trainings that scan small nodes from their rows give the
models of trainings that never do."""

import dataclasses

import numpy as np
import pytest
from _cases import row_scan_problem, row_scan_split_params
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuboost
from gpuboost.backends.cpu import backend as cpu_backend
from gpuboost.backends.cpu.row_scan import find_best_splits_of_rows
from gpuboost.backends.numpy.histogram import build_histograms
from gpuboost.backends.numpy.split_scan import find_best_splits as reference_scan


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 400),
    n_features=st.integers(1, 6),
    max_bin=st.sampled_from([2, 7, 255]),
    n_nodes=st.integers(1, 6),
    missing_fraction=st.sampled_from([0.0, 0.2]),
    params=row_scan_split_params,
    with_mask=st.booleans(),
    monotone=st.booleans(),
)
def test_records_equal_the_histogram_scan(
    seed, n_rows, n_features, max_bin, n_nodes, missing_fraction, params, with_mask, monotone
):
    (
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_value_bins,
        mask,
        bounds,
        directions,
    ) = row_scan_problem(
        seed, n_rows, n_features, max_bin, n_nodes, missing_fraction, with_mask, monotone
    )
    if monotone:
        params = dataclasses.replace(params, monotone=directions)
    scales = (2.0**-8, 2.0**-6)  # powers of two, as quantization gives them
    histograms = build_histograms(
        np.ascontiguousarray(X_binned.T),
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        max_bin + 1,
    )
    expected = reference_scan(
        histograms, *scales, n_value_bins, max_bin, params, mask, node_bounds=bounds
    )
    got = find_best_splits_of_rows(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        max_bin + 1,
        n_value_bins,
        max_bin,
        *scales,
        params,
        mask,
        bounds,
    )
    assert got.tobytes() == expected.tobytes()


def _model(params, X, y, monkeypatch, rows_per_cell, **dataset):
    monkeypatch.setattr(cpu_backend, "ROW_SCAN_MAX_ROWS_PER_CELL", rows_per_cell)
    booster = gpuboost.train(
        {"device": "cpu", "verbosity": 0, **params}, gpuboost.Dataset(X, label=y, **dataset), 4
    )
    return booster.save_raw()


@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 8},
        {"max_depth": 6, "colsample_bynode": 0.5, "colsample_bylevel": 0.8, "subsample": 0.7},
        {"max_depth": 7, "monotone_constraints": "(1,-1,0,0,1,0)", "min_child_weight": 3.0},
        {"max_depth": 7, "interaction_constraints": [[0, 1], [2, 3, 4]], "reg_alpha": 0.5},
        {"max_depth": 6, "objective": "multi:softprob", "num_class": 3, "max_delta_step": 0.7},
    ],
)
def test_models_equal_those_trained_from_histograms_only(params, monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = X[:, 0] - 2 * np.nan_to_num(X[:, 1]) + rng.normal(size=3000)
    if params.get("num_class"):
        y = np.digitize(y, [-1.0, 1.0]).astype(float)
    else:
        y = (y > 0).astype(float)
    weight = rng.random(3000) + 0.5
    # 8 rows per cell: parents below 8 * 256 rows (from the second level on) are scanned
    # from their rows; 0: never.
    from_rows = _model(params, X, y, monkeypatch, 8, weight=weight)
    from_histograms = _model(params, X, y, monkeypatch, 0, weight=weight)
    assert from_rows == from_histograms
