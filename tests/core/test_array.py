"""Tests of gpuboost.core.array: array-module dispatch and host copies."""

import numpy as np

from gpuboost.core.array import get_array_module, to_numpy


def test_get_array_module_numpy_without_importing_cupy():
    assert get_array_module(np.zeros(2), None, [1, 2], 3.0) is np
    assert get_array_module() is np


def test_to_numpy():
    host = np.arange(3.0)
    assert to_numpy(host) is host
    np.testing.assert_array_equal(to_numpy([1, 2]), np.array([1, 2]))
