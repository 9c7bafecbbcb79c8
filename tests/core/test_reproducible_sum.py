"""Tests of gpuboost.core.reproducible_sum: the same bits for any order of the terms,
within a few ulps of the exact sum (math.fsum), IEEE's answer for non-finite terms."""

import math

import numpy as np
import pytest

from gpuboost.backends.cpu import jit
from gpuboost.core import reproducible_sum as module
from gpuboost.core.reproducible_sum import (
    reproducible_cumsum,
    reproducible_mean,
    reproducible_sum,
)


def _terms(rng, n, spread):
    return rng.normal(size=n) * np.exp(rng.uniform(-spread, spread, n))


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 100_000])
@pytest.mark.parametrize("spread", [0.0, 30.0, 600.0])
def test_any_order_gives_the_same_bits_close_to_the_exact_sum(n, spread):
    rng = np.random.default_rng(n)
    values = _terms(rng, n, spread)
    total = float(reproducible_sum(np, values))
    for _ in range(3):
        assert float(reproducible_sum(np, rng.permutation(values))) == total
    assert float(reproducible_sum(np, values[::-1].copy())) == total
    exact = math.fsum(values)
    assert abs(total - exact) <= 2 * math.ulp(exact) + 2.0**-62 * np.abs(values).max()


def test_cancellation_and_extremes():
    assert float(reproducible_sum(np, np.array([1e308, 1e308, -1e308]))) == 1e308
    # Below 2**-62 of the largest term, remainders are dropped (module docstring).
    assert abs(float(reproducible_sum(np, np.array([1.0, 1e-30, -1.0]))) - 1e-30) < 2.0**-100
    assert float(reproducible_sum(np, np.array([1.0, 2.0**-60, -1.0]))) == 2.0**-60
    assert float(reproducible_sum(np, np.array([5e-324, 5e-324]))) == 1e-323
    assert float(reproducible_sum(np, np.zeros(4))) == 0.0
    assert float(reproducible_sum(np, np.zeros(0))) == 0.0
    values = np.array([0.1] * 10)
    assert float(reproducible_sum(np, values)) == math.fsum(values)  # 1.0, not 0.9999999999999999


def test_non_finite_terms():
    def total(*values):
        return float(reproducible_sum(np, np.array(values)))

    assert total(1.0, np.inf, 3.0) == np.inf
    assert total(-np.inf, 1.0) == -np.inf
    assert math.isnan(total(np.inf, -np.inf))
    assert math.isnan(total(np.nan, 1.0))


def test_sums_along_an_axis_are_per_output():
    rng = np.random.default_rng(2)
    values = _terms(rng, 60, 20.0).reshape(6, 10)
    values[1] *= 1e-200  # another scale: its own quantum
    values[4, 3] = np.inf
    rows = reproducible_sum(np, values, axis=1)
    assert rows.shape == (6,)
    for i in range(6):
        assert rows[i] == float(reproducible_sum(np, values[i])), i
        assert rows[i] == float(reproducible_sum(np, rng.permutation(values[i])))
    columns = reproducible_sum(np, values, axis=0)
    assert columns.shape == (10,) and columns[3] == np.inf
    np.testing.assert_array_equal(reproducible_sum(np, values[:, :0], axis=1), np.zeros(6))


def test_cumsum_and_mean():
    rng = np.random.default_rng(4)
    values = rng.uniform(0.0, 3.0, 500)
    running = reproducible_cumsum(np, values)
    assert running.shape == (500,)
    np.testing.assert_allclose(running, np.cumsum(values), rtol=1e-14)
    assert running[-1] == float(reproducible_sum(np, values))  # one quantum for the array
    np.testing.assert_array_equal(reproducible_cumsum(np, np.ones(4)), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="finite"):
        reproducible_cumsum(np, np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="1-D"):
        reproducible_cumsum(np, np.ones((2, 2)))
    weight = rng.uniform(0.0, 2.0, 500)
    mean = float(reproducible_mean(np, values, weight))
    assert mean == float(reproducible_sum(np, weight * values)) / float(
        reproducible_sum(np, weight)
    )
    assert float(reproducible_mean(np, values)) == float(reproducible_sum(np, values)) / 500


@pytest.mark.skipif(not jit.NUMBA_AVAILABLE, reason="needs Numba")
@pytest.mark.parametrize("n", [1, 5, 70_000, 300_000])
def test_the_compiled_loop_gives_the_array_codes_integers(n, monkeypatch):
    """gpuboost.backends.cpu.reproducible_sum's one-pass loop (registered on import) and
    the array code give the same sums; the loop declines under GPUBOOST_CPU_KERNELS=numpy."""
    assert "fold_sums" in module._HOST_LOOPS
    rng = np.random.default_rng(n)
    for values in (_terms(rng, n, 40.0), _terms(rng, n, 0.0) * 1e-310, _terms(rng, n, 700.0)):
        compiled = float(reproducible_sum(np, values))
        with monkeypatch.context() as patch:
            patch.setattr(module, "_HOST_LOOPS", {})
            assert float(reproducible_sum(np, values)) == compiled
    monkeypatch.setenv(jit.CPU_KERNELS_ENV_VAR, "numpy")
    assert module._HOST_LOOPS["fold_sums"](values, np.ones((2, 4))) is None
