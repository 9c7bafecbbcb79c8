"""Evaluation metrics."""
from .base import Metric, evaluate, get_metric

__all__ = ["Metric", "get_metric", "evaluate"]
