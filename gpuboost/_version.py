"""The package version, stated once.

``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``) and
``gpuboost.__version__`` re-exports it; change it only here.
"""

__version__ = "0.1.0"
