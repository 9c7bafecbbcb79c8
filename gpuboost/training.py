"""Compatibility: ``gpuboost.training`` moved to :mod:`gpuboost.boosting.train`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""

from .boosting.train import train

__all__ = ["train"]
