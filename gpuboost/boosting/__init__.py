"""The boosting loop: ``train``, ``cv``, the learners of each model family (gradient boosting,
AdaBoost) and the training callbacks."""

from .callback import EarlyStopping, EvaluationMonitor, TrainingCallback, TrainingCheckPoint
from .cv import cv
from .train import train

__all__ = [
    "train",
    "cv",
    "TrainingCallback",
    "EarlyStopping",
    "EvaluationMonitor",
    "TrainingCheckPoint",
]
