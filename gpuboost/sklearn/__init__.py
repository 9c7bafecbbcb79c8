"""The scikit-learn style estimators (scikit-learn optional): ``GBRegressor``,
``GBClassifier``, ``GBRanker``, ``AdaBoostClassifier`` (:mod:`.estimators`)."""
from .estimators import (SKLEARN_INSTALLED, AdaBoostClassifier, GBClassifier, GBRanker,
                         GBRegressor, NotFittedError)

__all__ = ["GBRegressor", "GBClassifier", "GBRanker", "AdaBoostClassifier", "NotFittedError",
           "SKLEARN_INSTALLED"]
