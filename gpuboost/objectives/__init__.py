"""Objectives: gradients, hessians, links and optimal constants."""
from .base import CUSTOM_OBJECTIVE_NAME, OBJECTIVES, CustomObjective, Objective, get_objective

__all__ = ["Objective", "get_objective", "OBJECTIVES", "CustomObjective", "CUSTOM_OBJECTIVE_NAME"]
