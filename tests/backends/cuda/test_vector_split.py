"""Tests of the CUDA vector-leaf split scan (gpuboost.backends.cuda.vector_split,
cuda/vector_split.cu). The kernels run under the CPU emulation (``GPUBOOST_EMULATE_CUDA=1``)
and must return exactly the table of the definition,
:func:`gpuboost.core.vector_split.find_best_vector_splits`: every field equal, gains bit
for bit, ties broken the same way."""

import itertools

import numpy as np
import pytest

from gpuboost.backends.cuda.launch import EMULATED, KernelLauncher
from gpuboost.backends.cuda.vector_split import find_best_vector_splits
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.core.gain import SplitParams
from gpuboost.core.quantize import quantize
from gpuboost.core.vector_split import OutputHistograms, cell_width
from gpuboost.core.vector_split import find_best_vector_splits as definition

#: SplitParams options on and off (lambda 0 lets H + lambda <= 0 occur).
PARAMS = [
    SplitParams(
        reg_lambda=lam, reg_alpha=alpha, max_delta_step=mds, min_child_weight=mcw, gamma=gamma
    )
    for lam, alpha, mds, mcw, gamma in itertools.product(
        (0.0, 1.0), (0.0, 0.7), (0.0, 0.4), (0.0, 30.0), (0.0, 0.5)
    )
] + [SplitParams(min_data_in_leaf=40), SplitParams(min_data_in_leaf=0, min_child_weight=0.0)]


def _histograms(rng, n_outputs, n_nodes=7, n_features=4, n_bins=12, missing=True):
    """Random OutputHistograms of nodes of 0 to 90 rows (quantized gradients of mixed
    signs, hessians of positive ones; the missing bin last, empty where ``missing`` is
    False), their power-of-two scales and the features' value bins."""
    width = cell_width(n_outputs)
    cells = np.zeros((n_nodes, n_features, n_bins, width), dtype=np.int64)
    counts = np.zeros((n_nodes, n_features, n_bins), dtype=np.int64)
    n_value_bins = rng.integers(2, n_bins, size=n_features)
    scales = []
    columns = []
    for output in range(n_outputs):
        g, scale_g = quantize(np, rng.normal(size=5000) * (output + 1))
        h, scale_h = quantize(np, rng.uniform(0.1, 2.0, size=5000))
        columns.append((g, h))
        scales.append((scale_g, scale_h))
    row = 0
    for node in range(n_nodes):
        n_rows = int(rng.integers(0, 90))
        rows = np.arange(row, row + n_rows)
        row += n_rows
        for feature in range(n_features):
            bins = rng.integers(0, n_value_bins[feature] - 1, size=n_rows)
            if missing:
                bins[rng.random(n_rows) < 0.2] = n_bins - 1
            np.add.at(counts[node, feature], bins, 1)
            for output, (g, h) in enumerate(columns):
                np.add.at(cells[node, feature, :, 2 * output], bins, g[rows])
                np.add.at(cells[node, feature, :, 2 * output + 1], bins, h[rows])
    return OutputHistograms(cells, counts, n_outputs), scales, n_value_bins, n_bins - 1


def _compare(histograms, scales, n_value_bins, missing_bin, params, mask=None):
    expected = definition(np, histograms, scales, n_value_bins, missing_bin, params, mask)
    device = OutputHistograms(
        xp.asarray(histograms.cells), xp.asarray(histograms.counts), histograms.n_outputs
    )
    launcher = KernelLauncher(EMULATED, check_launches=True)
    table = find_best_vector_splits(
        xp, launcher, device, scales, n_value_bins, missing_bin, params, mask
    )
    for name in expected:
        np.testing.assert_array_equal(table[name], expected[name], err_msg=name)
    return expected


@pytest.mark.parametrize("n_outputs", [1, 3, 9])
@pytest.mark.parametrize("missing", [True, False])
def test_the_kernels_give_the_definitions_table(n_outputs, missing):
    rng = np.random.default_rng(n_outputs + 10 * missing)
    histograms, scales, n_value_bins, missing_bin = _histograms(rng, n_outputs, missing=missing)
    found = 0
    for params in PARAMS:
        expected = _compare(histograms, scales, n_value_bins, missing_bin, params)
        found += int((expected["feature"] >= 0).sum())
        mask = rng.random((len(histograms), len(n_value_bins))) < 0.6
        _compare(histograms, scales, n_value_bins, missing_bin, params, mask)
    assert found > len(PARAMS)  # not vacuous: splits found


def test_ties_take_the_first_feature_and_bin_as_the_definition():
    """Features holding the same cells tie: the first feature wins, and within a feature
    the lowest bin, then missing values right."""
    rng = np.random.default_rng(5)
    histograms, scales, n_value_bins, missing_bin = _histograms(rng, 2, n_features=1)
    cells = np.repeat(histograms.cells, 3, axis=1)
    counts = np.repeat(histograms.counts, 3, axis=1)
    tied = OutputHistograms(cells, counts, 2)
    expected = _compare(tied, scales, np.repeat(n_value_bins, 3), missing_bin, SplitParams())
    assert (expected["feature"] <= 0).all() and (expected["feature"] == 0).any()


def test_scales_that_are_not_powers_of_two_take_the_definition():
    rng = np.random.default_rng(6)
    histograms, scales, n_value_bins, missing_bin = _histograms(rng, 2)
    scales = [(g * 3.0, h) for g, h in scales]
    _compare(histograms, scales, n_value_bins, missing_bin, SplitParams())
