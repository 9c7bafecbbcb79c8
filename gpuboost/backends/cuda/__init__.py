"""The CUDA backend: CuPy arrays and the raw kernels of ``cuda/*.cu``.

One module per primitive (``binning``, ``histogram``, ``split_scan``, ``partition``,
``leaf``, ``segment_reduce``, ``predict``, ``shap``) holds the host code of its kernels;
``launch`` loads and launches kernels, ``memory`` owns device memory accounting and
out-of-memory errors, ``sources`` finds the kernel sources, and ``backend`` the
:class:`CudaBackend` that delegates to them. Nothing here imports CuPy at import time.
"""

from .backend import CudaBackend

__all__ = ["CudaBackend"]
