"""gpuboost: gradient-boosted decision trees on NVIDIA GPUs and on any CPU.

The same boosting loop runs on a NumPy backend and a CUDA backend, and both
produce byte-identical models (docs/DESIGN.md).
"""

from ._version import __version__
from .backends import cuda_available, release_memory
from .boosting.callback import (
    EarlyStopping,
    EvaluationMonitor,
    LearningRateScheduler,
    TrainingCallback,
    TrainingCheckPoint,
    reset_parameter,
)
from .boosting.cv import cv
from .boosting.train import train
from .data.dataset import Dataset
from .errors import DeviceUnavailableError, GpuOutOfMemoryError, GpuSelfCheckError
from .model.booster import Booster

#: The scikit-learn API (gpuboost.sklearn, whose __all__ names them too), loaded on first
#: use: importing it imports scikit-learn.
_ESTIMATORS = (
    "GBRegressor",
    "GBClassifier",
    "GBRanker",
    "GBRFRegressor",
    "GBRFClassifier",
    "AdaBoostClassifier",
    "GBSurvival",
)
#: Plotting functions, loaded on first use (gpuboost.plotting; matplotlib is optional
#: and imported only when a plot is drawn).
_PLOTTING = ("plot_importance", "plot_metric", "plot_tree", "plot_shap_summary", "to_graphviz")

__all__ = [
    "__version__",
    "Dataset",
    "Booster",
    "train",
    "cv",
    "TrainingCallback",
    "EarlyStopping",
    "EvaluationMonitor",
    "TrainingCheckPoint",
    "LearningRateScheduler",
    "reset_parameter",
    "cuda_available",
    "release_memory",
    "DeviceUnavailableError",
    "GpuOutOfMemoryError",
    "GpuSelfCheckError",
    *_ESTIMATORS,
    *_PLOTTING,
]


def __getattr__(name):  # scikit-learn API loads lazily (scikit-learn is optional)
    if name in _ESTIMATORS:
        from . import sklearn as _sklearn_api

        return getattr(_sklearn_api, name)
    if name in _PLOTTING:
        from . import plotting as _plotting

        return getattr(_plotting, name)
    raise AttributeError(f"module 'gpuboost' has no attribute {name!r}")
