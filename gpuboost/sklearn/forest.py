"""``GBRFRegressor`` and ``GBRFClassifier``: random forests (XGBoost's ``XGBRFRegressor`` /
``XGBRFClassifier``).

A forest is one round of ``n_estimators`` trees per output (``num_parallel_tree``), each
grown on its own sample of rows and of features at every node from the gradients of the
base margin, its leaves ``learning_rate / n_estimators`` times the Newton step: with
``learning_rate=1`` the mean of the trees (for squared error, a forest of regression
trees on the labels; for the classifiers, of Newton steps on the log loss). The
estimators are :class:`~gpuboost.GBRegressor` and :class:`~gpuboost.GBClassifier` with
XGBoost's forest defaults (``learning_rate=1``, ``subsample=0.8``,
``colsample_bynode=0.8``, ``reg_lambda=1e-5``); every other argument is theirs. A
boosted forest (several rounds of forests) is ``gpuboost.train`` with
``num_parallel_tree`` and ``num_boost_round`` > 1.
"""

from __future__ import annotations

import types

from .base import BaseGBModel
from .estimators import GBClassifier, GBRegressor

__all__ = ["GBRFRegressor", "GBRFClassifier", "FOREST_DEFAULTS"]

#: XGBoost's defaults for its random-forest estimators.
FOREST_DEFAULTS = {
    "learning_rate": 1.0,
    "subsample": 0.8,
    "colsample_bynode": 0.8,
    "reg_lambda": 1e-5,
}

_FOREST_DOC = """
    A random forest: :class:`{base}` with one round of ``n_estimators`` trees per output
    (``num_parallel_tree``) and XGBoost's forest defaults, ``learning_rate=1.0``,
    ``subsample=0.8``, ``colsample_bynode=0.8``, ``reg_lambda=1e-5`` (see
    :mod:`gpuboost.sklearn.forest`). ``n_estimators`` is the number of trees;
    ``early_stopping_rounds`` and ``init_model`` are refused (one round). Other
    parameters and attributes are :class:`{base}`'s.

    Examples
    --------
    >>> import numpy as np
    >>> from gpuboost import {name}
    >>> X = np.random.default_rng(0).random((200, 3))
    >>> model = {name}(n_estimators=20, device="cpu").fit(X, X[:, 0] > 0.5)
    >>> model.get_booster().num_boosted_rounds()
    1
"""


def _forest_init():
    """``BaseGBModel.__init__`` with :data:`FOREST_DEFAULTS` as its defaults (its
    arguments are keyword-only, so only ``__kwdefaults__`` differ; scikit-learn's
    ``get_params`` and ``clone`` read the signature)."""
    base = BaseGBModel.__init__
    init = types.FunctionType(
        base.__code__, base.__globals__, "__init__", base.__defaults__, base.__closure__
    )
    init.__kwdefaults__ = {**base.__kwdefaults__, **FOREST_DEFAULTS}
    init.__qualname__ = "ForestMixin.__init__"
    init.__doc__ = base.__doc__
    return init


class ForestMixin:
    """One round of ``n_estimators`` trees per output (see the module docstring)."""

    __init__ = _forest_init()

    def _checked_rounds(self, eval_set):
        n_estimators, early_stopping_rounds = super()._checked_rounds(eval_set)
        if early_stopping_rounds is not None:
            raise ValueError(
                f"{type(self).__name__} grows one round of n_estimators trees: "
                f"early_stopping_rounds has no rounds to stop (as XGBoost's random forests)."
            )
        return 1, None

    def _training_params(self):
        params = super()._training_params()
        params["num_parallel_tree"] = self.n_estimators
        return params

    def _check_init_model(self, init_model):
        """ValueError when ``init_model`` is given (a forest is one round)."""
        if init_model is not None:
            raise ValueError(
                f"{type(self).__name__} grows one forest; it does not continue an "
                f"init_model (train a boosted forest with gpuboost.train and "
                f"num_parallel_tree instead)."
            )


class GBRFRegressor(ForestMixin, GBRegressor):
    __doc__ = "Random-forest regression (scikit-learn API).\n" + _FOREST_DOC.format(
        base="GBRegressor", name="GBRFRegressor"
    ).replace("X[:, 0] > 0.5", "X[:, 0]")

    _managed_params = GBRegressor._managed_params | {"num_parallel_tree"}


class GBRFClassifier(ForestMixin, GBClassifier):
    __doc__ = "Random-forest classification (scikit-learn API).\n" + _FOREST_DOC.format(
        base="GBClassifier", name="GBRFClassifier"
    )

    _managed_params = GBClassifier._managed_params | {"num_parallel_tree"}
