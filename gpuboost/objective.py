"""Compatibility: ``gpuboost.objective`` moved to :mod:`gpuboost.objectives`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""
from .objectives import Objective, get_objective, OBJECTIVES, CustomObjective, CUSTOM_OBJECTIVE_NAME

__all__ = ["Objective", "get_objective", "OBJECTIVES", "CustomObjective", "CUSTOM_OBJECTIVE_NAME"]
