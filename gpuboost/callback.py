"""Compatibility: ``gpuboost.callback`` moved to :mod:`gpuboost.boosting.callback`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""

from .boosting.callback import (
    CallbackContainer,
    EarlyStopping,
    EvaluationMonitor,
    TrainingCallback,
    TrainingCheckPoint,
)

__all__ = [
    "TrainingCallback",
    "EarlyStopping",
    "EvaluationMonitor",
    "TrainingCheckPoint",
    "CallbackContainer",
]
