"""Compatibility: ``gpuboost.dataset`` moved to :mod:`gpuboost.data.dataset`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""

from .data.dataset import Dataset, load_query_file, load_svmlight

__all__ = ["Dataset", "load_svmlight", "load_query_file"]
