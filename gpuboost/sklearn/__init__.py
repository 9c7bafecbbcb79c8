"""The scikit-learn style estimators (scikit-learn optional): ``GBRegressor``,
``GBClassifier``, ``GBRanker`` (:mod:`.estimators`, on the shared :mod:`.base`), the
random forests ``GBRFRegressor`` and ``GBRFClassifier`` (:mod:`.forest`) and
``AdaBoostClassifier`` (:mod:`.adaboost`); :mod:`.compat` supplies scikit-learn's
base classes or stand-ins, :mod:`.validation` the input checks."""

from .adaboost import AdaBoostClassifier
from .compat import SKLEARN_INSTALLED, NotFittedError
from .estimators import GBClassifier, GBRanker, GBRegressor
from .forest import GBRFClassifier, GBRFRegressor

__all__ = [
    "GBRegressor",
    "GBClassifier",
    "GBRanker",
    "GBRFRegressor",
    "GBRFClassifier",
    "AdaBoostClassifier",
    "NotFittedError",
    "SKLEARN_INSTALLED",
]
