"""Compatibility: ``gpuboost.metric`` moved to :mod:`gpuboost.metrics`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""

from .metrics import Metric, evaluate, get_metric

__all__ = ["Metric", "get_metric", "evaluate"]
