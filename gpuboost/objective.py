"""Compatibility: ``gpuboost.objective`` moved to :mod:`gpuboost.objectives`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""

from .objectives import CUSTOM_OBJECTIVE_NAME, OBJECTIVES, CustomObjective, Objective, get_objective

__all__ = ["Objective", "get_objective", "OBJECTIVES", "CustomObjective", "CUSTOM_OBJECTIVE_NAME"]
