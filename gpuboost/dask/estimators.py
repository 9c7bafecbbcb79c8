"""``DaskGBRegressor``, ``DaskGBClassifier``: the scikit-learn-style estimators on Dask.

The hyperparameters, fitted attributes and model files are those of
:class:`gpuboost.GBRegressor` / :class:`gpuboost.GBClassifier` (subclasses); ``fit``
takes Dask collections and trains with :func:`gpuboost.dask.train` (the same booster as
the single-node estimator on the same rows), ``predict`` / ``predict_proba`` return
lazy Dask arrays (:func:`gpuboost.dask.predict`). The client is the ``client``
attribute when set, else Dask's default client (``distributed.default_client()``).
``DaskGBRanker`` takes the query sizes (``group``) as a host array, or the per-row query
ids (``qid``) as a dask collection. ``DaskGBRFRegressor`` / ``DaskGBRFClassifier`` are the
random forests (:mod:`gpuboost.sklearn.forest`) on the cluster.
"""

import numpy as np

from ..core.dtypes import Y_DTYPE
from ..params import validate_params
from ..sklearn.base import (
    BINARY_DECISION_THRESHOLD,
    DEFAULT_REGRESSION_OBJECTIVE,
    EVAL_SET_NAME_PREFIX,
    MIN_CLASSES,
    MULTICLASS_PREFIX,
    sklearn_objective,
)
from ..sklearn.estimators import GBClassifier, GBRanker, GBRegressor
from ..sklearn.forest import ForestMixin
from .dataset import DaskDataset, _as_dask_array
from .predict import predict as dask_predict
from .train import train

__all__ = [
    "DaskGBRegressor",
    "DaskGBClassifier",
    "DaskGBRanker",
    "DaskGBRFRegressor",
    "DaskGBRFClassifier",
]


class _DaskModel:
    """What the Dask estimators share: the client, and ``fit`` through gpuboost.dask."""

    #: The distributed.Client to train with; None: Dask's default client.
    client = None

    def _dask_client(self):
        if self.client is not None:
            return self.client
        from distributed import default_client  # optional dependency (gpuboost[dask])

        return default_client()

    def predict(self, X, output_margin=False, iteration_range=None):
        """Lazy predictions, or ranking scores (dask array of shape (n_rows,); the
        classifier's are labels)."""
        self._check_is_fitted()
        return dask_predict(
            self._dask_client(),
            self.booster_,
            X,
            output_margin=output_margin,
            iteration_range=iteration_range,
        )

    def fit(
        self,
        X,
        y,
        sample_weight=None,
        eval_set=None,
        sample_weight_eval_set=None,
        verbose=False,
        init_model=None,
        feature_weights=None,
    ):
        """Train on Dask collections: ``X`` a dask array or DataFrame, ``y`` and
        ``sample_weight`` dask arrays or Series, ``eval_set`` a list of such ``(X, y)``
        (``sample_weight_eval_set``: one weight collection or None each);
        ``feature_weights`` a host array (``DaskDataset.feature_weights``).

        Returns
        -------
        self
        """
        eval_set = list(eval_set or ())
        label, eval_labels, params = self._dask_targets(y, [y_eval for _, y_eval in eval_set])
        return self._dask_train(
            X,
            label,
            params,
            sample_weight,
            eval_set,
            eval_labels,
            sample_weight_eval_set,
            verbose,
            init_model,
            feature_weights=feature_weights,
        )

    def _dask_train(
        self,
        X,
        label,
        params,
        sample_weight,
        eval_set,
        eval_labels,
        sample_weight_eval_set,
        verbose,
        init_model,
        group=None,
        eval_groups=None,
        qid=None,
        eval_qids=None,
        feature_weights=None,
    ):
        """Train on the cluster and set the fitted attributes; returns self."""
        client = self._dask_client()
        self._check_init_model(init_model)
        n_estimators, early_stopping_rounds = self._checked_rounds(eval_set)
        params = validate_params(params)
        dtrain = DaskDataset(
            client,
            X,
            label=label,
            weight=sample_weight,
            group=group,
            qid=qid,
            max_bin=params["max_bin"],
            seed=params["seed"],
            categorical_features=self.categorical_features,
            enable_categorical=self.enable_categorical,
            feature_weights=feature_weights,
        )
        weights = sample_weight_eval_set or [None] * len(eval_set)
        groups = eval_groups or [None] * len(eval_set)
        qids = eval_qids or [None] * len(eval_set)
        evals = [
            (
                DaskDataset(
                    client,
                    X_eval,
                    label=y_eval,
                    weight=weight,
                    group=eval_group,
                    qid=eval_qid,
                    categorical_features=self.categorical_features,
                    enable_categorical=self.enable_categorical,
                    reference=dtrain,
                ),
                f"{EVAL_SET_NAME_PREFIX}{index}",
            )
            for index, ((X_eval, _), y_eval, weight, eval_group, eval_qid) in enumerate(
                zip(eval_set, eval_labels, weights, groups, qids)
            )
        ]
        if hasattr(init_model, "get_booster"):
            init_model = init_model.get_booster()
        evals_result = {}
        self.booster_ = train(
            client,
            params,
            dtrain,
            n_estimators,
            evals=evals,
            early_stopping_rounds=early_stopping_rounds,
            evals_result=evals_result,
            verbose_eval=verbose,
            init_model=init_model,
            callbacks=list(self.callbacks or ()),
        )
        self.evals_result_ = evals_result
        self.n_features_in_ = dtrain.n_features
        if dtrain.has_feature_names:
            self.feature_names_in_ = np.asarray(dtrain.feature_names, dtype=object)
        return self


class DaskGBRegressor(_DaskModel, GBRegressor):
    """:class:`gpuboost.GBRegressor` on a Dask cluster (see the module docstring)."""

    def _dask_targets(self, y, eval_labels):
        """``(label, eval_labels, params)``: the objective defaults to squared error; a
        callable ``objective(y_true, raw_margin)`` is a custom objective, called by each
        worker on its rows (:func:`gpuboost.dask.train`'s ``obj``)."""
        params = self._training_params()
        if callable(self.objective):
            params["objective"] = sklearn_objective(self.objective)
            return y, eval_labels, params
        objective = params.setdefault("objective", DEFAULT_REGRESSION_OBJECTIVE)
        if str(objective).startswith(MULTICLASS_PREFIX):
            raise ValueError(
                f"{type(self).__name__} cannot use the multiclass objective {objective!r}; "
                f"use DaskGBClassifier."
            )
        return y, eval_labels, params


def _encode(block, classes):
    """Labels of one partition -> their positions in ``classes`` (float64)."""
    return np.searchsorted(classes, np.asarray(block)).astype(Y_DTYPE)


class DaskGBClassifier(_DaskModel, GBClassifier):
    """:class:`gpuboost.GBClassifier` on a Dask cluster (see the module docstring).

    The classes come from ``dask.array.unique`` of the labels (only the distinct values
    reach the client); labels are encoded on the workers.
    """

    def _dask_targets(self, y, eval_labels):
        """``(label, eval_labels, params)``: labels encoded by ``classes_`` on the workers,
        the objective and ``num_class`` from the number of classes."""
        import dask.array as da  # optional dependency (gpuboost[dask])

        if self.class_weight is not None:
            raise ValueError(
                f"{type(self).__name__} does not take class_weight yet; pass sample_weight."
            )
        y = _as_dask_array(y, "y")
        classes = np.asarray(da.unique(y).compute())
        if len(classes) < MIN_CLASSES:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least {MIN_CLASSES} classes in "
                f"the data, got {classes.tolist()}."
            )
        self.classes_, self.n_classes_ = classes, len(classes)
        params = self._training_params()
        if self._classification_objective(params) is not None:
            raise ValueError(f"{type(self).__name__} does not take a custom objective.")
        encoded = [
            _as_dask_array(labels, "eval_set label").map_blocks(_encode, classes, dtype=Y_DTYPE)
            for labels in eval_labels
        ]
        return y.map_blocks(_encode, classes, dtype=Y_DTYPE), encoded, params

    def predict_proba(self, X, iteration_range=None):
        """Lazy class probabilities (dask array of shape (n_rows, n_classes))."""
        self._check_is_fitted()
        probabilities = dask_predict(
            self._dask_client(), self.booster_, X, iteration_range=iteration_range
        )
        if probabilities.ndim == 1:
            return probabilities.map_blocks(
                lambda p: np.column_stack([1.0 - p, p]),
                new_axis=1,
                chunks=(probabilities.chunks[0], (2,)),
                dtype=Y_DTYPE,
            )
        return probabilities

    def predict(self, X, output_margin=False, iteration_range=None):
        """Lazy class labels from ``classes_`` (or raw margins)."""
        self._check_is_fitted()
        if output_margin:
            return dask_predict(
                self._dask_client(),
                self.booster_,
                X,
                output_margin=True,
                iteration_range=iteration_range,
            )
        classes = self.classes_

        def labels(p):
            if p.shape[1] == MIN_CLASSES:
                indices = (p[:, 1] > BINARY_DECISION_THRESHOLD).astype(np.intp)
            else:
                indices = np.argmax(p, axis=1)
            return classes[indices]

        probabilities = self.predict_proba(X, iteration_range)
        return probabilities.map_blocks(labels, drop_axis=1, dtype=classes.dtype)


class DaskGBRanker(_DaskModel, GBRanker):
    """:class:`gpuboost.GBRanker` on a Dask cluster (see the module docstring): ``group``
    (query sizes, a host array) or ``qid`` (per-row query ids, a dask collection) per
    training and evaluation set; no query is split across workers."""

    def fit(
        self,
        X,
        y,
        group=None,
        sample_weight=None,
        eval_set=None,
        eval_group=None,
        sample_weight_eval_set=None,
        verbose=False,
        init_model=None,
        qid=None,
        eval_qid=None,
        feature_weights=None,
    ):
        """Train on Dask collections (see :meth:`DaskGBRegressor.fit`) with the query
        sizes ``group`` or the per-row query ids ``qid`` (and ``eval_group`` or
        ``eval_qid``: one per evaluation set).

        Returns
        -------
        self
        """
        name = type(self).__name__
        if group is None and qid is None:
            raise ValueError(
                f"{name}.fit needs the queries: pass group (query sizes) or qid (query ids)."
            )
        eval_set = list(eval_set or ())
        if eval_set and eval_group is None and eval_qid is None:
            raise ValueError(
                "With eval_set, pass eval_group or eval_qid (the queries of each set)."
            )
        params = self._training_params()
        self._ranking_objective(params)
        return self._dask_train(
            X,
            y,
            params,
            sample_weight,
            eval_set,
            [y_eval for _, y_eval in eval_set],
            sample_weight_eval_set,
            verbose,
            init_model,
            group=group,
            eval_groups=eval_group,
            qid=qid,
            eval_qids=eval_qid,
            feature_weights=feature_weights,
        )


class DaskGBRFRegressor(ForestMixin, DaskGBRegressor):
    """:class:`gpuboost.GBRFRegressor` on a Dask cluster (see the module docstring)."""

    _managed_params = DaskGBRegressor._managed_params | {"num_parallel_tree"}


class DaskGBRFClassifier(ForestMixin, DaskGBClassifier):
    """:class:`gpuboost.GBRFClassifier` on a Dask cluster (see the module docstring)."""

    _managed_params = DaskGBClassifier._managed_params | {"num_parallel_tree"}
