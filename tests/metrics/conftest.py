"""The random generator fixture of the metric tests."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)
