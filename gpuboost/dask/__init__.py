"""Distributed training on Dask: the same model as on one machine, byte for byte.

``DaskDataset`` holds the data as partitions on the workers; :func:`train` grows
every tree from the workers' exact integer histograms; :func:`predict` is a lazy,
partition-parallel prediction; ``DaskGBRegressor``, ``DaskGBClassifier`` and
``DaskGBRanker`` are the scikit-learn-style estimators. Needs the optional extra ``gpuboost[dask]``
(``dask[distributed]``). See docs/DESIGN.md "Distributed training" and docs/guide/dask.md.
"""

from .dataset import DaskDataset
from .estimators import (
    DaskGBClassifier,
    DaskGBRanker,
    DaskGBRegressor,
    DaskGBRFClassifier,
    DaskGBRFRegressor,
)
from .predict import predict
from .train import train

__all__ = [
    "DaskDataset",
    "train",
    "predict",
    "DaskGBRegressor",
    "DaskGBClassifier",
    "DaskGBRanker",
    "DaskGBRFRegressor",
    "DaskGBRFClassifier",
]
