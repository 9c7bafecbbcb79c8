"""The scikit-learn style estimators (scikit-learn optional): ``GBRegressor``,
``GBClassifier``, ``GBRanker`` (:mod:`.estimators`, on the shared :mod:`.base`), the
random forests ``GBRFRegressor`` and ``GBRFClassifier`` (:mod:`.forest`),
``AdaBoostClassifier`` (:mod:`.adaboost`) and ``GBSurvival`` (:mod:`.survival`);
:mod:`.compat` supplies scikit-learn's base classes or stand-ins, :mod:`.validation`
the input checks."""

from .adaboost import AdaBoostClassifier
from .compat import SKLEARN_INSTALLED, NotFittedError
from .estimators import GBClassifier, GBRanker, GBRegressor
from .forest import GBRFClassifier, GBRFRegressor
from .survival import GBSurvival

__all__ = [
    "GBRegressor",
    "GBClassifier",
    "GBRanker",
    "GBRFRegressor",
    "GBRFClassifier",
    "AdaBoostClassifier",
    "GBSurvival",
    "NotFittedError",
    "SKLEARN_INSTALLED",
]
