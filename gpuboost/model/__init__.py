"""The trained model: ``Booster`` (prediction, importances, dumps) and its file format."""

from .booster import Booster

__all__ = ["Booster"]
