"""The boosting loop: ``train``, the learners of each model family (gradient boosting,
AdaBoost) and the training callbacks."""

from .callback import EarlyStopping, EvaluationMonitor, TrainingCallback, TrainingCheckPoint
from .train import train

__all__ = ["train", "TrainingCallback", "EarlyStopping", "EvaluationMonitor", "TrainingCheckPoint"]
