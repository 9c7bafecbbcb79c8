"""The NumPy backend: the reference implementation of every primitive.

One module per primitive (``binning``, ``histogram``, ``split_scan``, ``partition``,
``leaf``, ``segment_reduce``, ``predict``, ``shap``), each with a naive loop version kept for
tests, and ``backend`` the :class:`NumpyBackend` that delegates to them.
"""

from .backend import NumpyBackend

__all__ = ["NumpyBackend"]
