"""Compatibility: ``gpuboost.booster`` moved to :mod:`gpuboost.model.booster`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""

from .model.booster import Booster

__all__ = ["Booster"]
