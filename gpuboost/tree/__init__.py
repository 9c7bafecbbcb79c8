"""Trees: the ``Tree`` arrays, the grower and its drivers, the splitters, column and row
sampling, and approx re-binning."""

from .tree import TREE_ARRAYS, Tree

__all__ = ["Tree", "TREE_ARRAYS"]
