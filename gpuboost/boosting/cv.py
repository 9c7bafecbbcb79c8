"""``gpuboost.cv``: k-fold cross-validation, XGBoost's ``xgboost.cv``.

The folds are trained in lockstep, round by round, each by the learner
:func:`gpuboost.train` uses (:data:`gpuboost.boosting.train.LEARNERS`), on
Datasets of its rows (``Dataset.subset``: the folds share the bin edges of
``dtrain``, computed on all its rows, as LightGBM's cv does). After every round
the mean and the standard deviation (population, over the folds; order-free sums of
:mod:`gpuboost.core.reproducible_sum`) of every metric
on the training and the test rows are recorded; early stopping watches the mean of
the last metric on the test rows.

Folds are deterministic for a ``seed``: the rows (or, for ranking data, the
queries, which stay whole) are permuted by ``numpy.random.default_rng(seed)`` and
cut into ``nfold`` parts; ``stratified=True`` deals the rows of every class out in
turn instead.
"""

from __future__ import annotations

import types
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..core.reproducible_sum import reproducible_mean
from ..data.dataset import Dataset
from ..params import canonical_name, validate_params
from .callback import EarlyStopping, EvaluationMonitor, metric_maximized
from .loop import check_dtrain, check_num_boost_round
from .train import LEARNERS, training_backend
from .update import refuse_update

__all__ = ["cv", "make_folds", "CV_SETS"]

#: Names of the two sets of a fold, in the order of the result's columns.
CV_SETS = ("train", "test")
#: Suffixes of the result's columns: ``<set>-<metric>-mean`` and ``-std``.
MEAN_SUFFIX = "-mean"
STD_SUFFIX = "-std"


def _check_fold_pairs(pairs, dtrain):
    """``(train rows, test rows)`` pairs as sorted int64 arrays, checked."""
    checked = []
    query_of_row = (
        None if dtrain.group is None else np.repeat(np.arange(len(dtrain.group)), dtrain.group)
    )
    for index, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise ValueError(
                "folds must be (train_indices, test_indices) pairs, or a KFold-like object "
                "with split()."
            )
        train_rows, test_rows = (
            np.sort(np.asarray(rows, dtype=np.int64).reshape(-1)) for rows in pair
        )
        for name, rows in (("train", train_rows), ("test", test_rows)):
            if len(rows) == 0 or rows[0] < 0 or rows[-1] >= dtrain.n_rows:
                raise ValueError(
                    f"fold {index}: the {name} indices must be 1 or more rows in [0, "
                    f"{dtrain.n_rows})."
                )
        if query_of_row is not None:
            split = np.intersect1d(query_of_row[train_rows], query_of_row[test_rows])
            if len(split):
                raise ValueError(
                    f"fold {index}: query {int(split[0])} has rows in both the training and "
                    f"the test rows; ranking folds must keep every query whole."
                )
        checked.append((train_rows, test_rows))
    if not checked:
        raise ValueError("folds holds no fold.")
    return checked


def make_folds(dtrain, nfold=5, stratified=False, folds=None, seed=0, shuffle=True):
    """The ``(train rows, test rows)`` of every fold (see the module docstring).

    Parameters
    ----------
    dtrain : Dataset
    nfold : int, default=5
        Number of folds (at least 2, at most the number of rows or queries).
    stratified : bool, default=False
        Keep the class proportions in every fold (labels must be class labels).
    folds : sequence of (train, test) index arrays, or an object with ``split(X, y)``
        (a scikit-learn splitter), optional
        Used as given instead of ``nfold`` / ``stratified`` / ``seed``.
    seed : int, default=0
    shuffle : bool, default=True
        Permute the rows (queries) before cutting them; else consecutive parts.

    Returns
    -------
    list of (ndarray, ndarray)
        Sorted int64 row indices.

    Raises
    ------
    ValueError
        Too few rows or queries for ``nfold``, stratified folds of ranking data or of
        labels that are not classes, folds that split a query.
    """
    if folds is not None:
        if hasattr(folds, "split"):
            folds = folds.split(dtrain.data, dtrain.label)
        return _check_fold_pairs(list(folds), dtrain)
    if isinstance(nfold, bool) or not isinstance(nfold, (int, np.integer)) or nfold < 2:
        raise ValueError(f"nfold must be an integer >= 2, got {nfold!r}.")
    rng = np.random.default_rng(seed)
    n_rows = dtrain.n_rows
    if dtrain.group is not None:
        if stratified:
            raise ValueError("stratified folds are for classification, not ranking data.")
        n_queries = len(dtrain.group)
        if nfold > n_queries:
            raise ValueError(f"nfold={nfold} folds need {nfold} queries; dtrain has {n_queries}.")
        order = rng.permutation(n_queries) if shuffle else np.arange(n_queries)
        starts = np.concatenate([[0], np.cumsum(dtrain.group)])
        fold_of_row = np.empty(n_rows, dtype=np.int64)
        for fold, queries in enumerate(np.array_split(order, nfold)):
            for query in queries:
                fold_of_row[starts[query] : starts[query + 1]] = fold
    elif stratified:
        label = dtrain.label
        if label is None or not np.all(label == np.round(label)):
            raise ValueError("stratified folds need class labels (integers) in dtrain.")
        fold_of_row = np.empty(n_rows, dtype=np.int64)
        dealt = 0
        for value in np.unique(label):
            rows = np.flatnonzero(label == value)
            if shuffle:
                rows = rng.permutation(rows)
            fold_of_row[rows] = (dealt + np.arange(len(rows))) % nfold
            dealt += len(rows)
        if nfold > n_rows:
            raise ValueError(f"nfold={nfold} folds need {nfold} rows; dtrain has {n_rows}.")
    else:
        if nfold > n_rows:
            raise ValueError(f"nfold={nfold} folds need {nfold} rows; dtrain has {n_rows}.")
        order = rng.permutation(n_rows) if shuffle else np.arange(n_rows)
        fold_of_row = np.empty(n_rows, dtype=np.int64)
        for fold, rows in enumerate(np.array_split(order, nfold)):
            fold_of_row[rows] = fold
    return [
        (np.flatnonzero(fold_of_row != fold), np.flatnonzero(fold_of_row == fold))
        for fold in range(nfold)
    ]


def _with_metrics(params, metrics):
    """``params`` with ``eval_metric`` replaced by ``metrics`` (when given)."""
    params = dict(params or {})
    if isinstance(metrics, str):
        metrics = [metrics]
    if metrics:
        for key in [key for key in params if canonical_name(key) == "eval_metric"]:
            del params[key]
        params["eval_metric"] = list(metrics)
    return params


def cv(
    params: Optional[Dict[str, Any]],
    dtrain: Dataset,
    num_boost_round: int = 10,
    nfold: int = 5,
    stratified: bool = False,
    folds: Union[Sequence[Tuple[Any, Any]], Any, None] = None,
    metrics: Union[str, Sequence[str]] = (),
    obj: Optional[Callable] = None,
    custom_metric: Optional[Callable] = None,
    maximize: Optional[bool] = None,
    early_stopping_rounds: Optional[int] = None,
    as_pandas: bool = True,
    verbose_eval: Union[bool, int, None] = None,
    seed: int = 0,
    shuffle: bool = True,
) -> Union[Dict[str, List[float]], Any]:
    """Cross-validate a training: the per-round mean and std of every metric over folds.

    Parameters
    ----------
    params : dict
        Training parameters, as for :func:`gpuboost.train`.
    dtrain : Dataset
        All the rows, with labels (and queries, for ranking).
    num_boost_round : int, default=10
    nfold, stratified, folds, seed, shuffle
        How the rows are cut into folds: see :func:`make_folds`.
    metrics : str or sequence of str, default=()
        Metrics to evaluate, replacing ``params['eval_metric']`` when given.
    obj, custom_metric, maximize
        As for :func:`gpuboost.train`.
    early_stopping_rounds : int, optional
        Stop when the mean of the last metric on the test rows has not improved for
        this many rounds; the result then ends at the best round.
    as_pandas : bool, default=True
        Return a pandas DataFrame (one row per round) when pandas is installed.
    verbose_eval : bool or int, optional
        Print the means and stds every round (True) or every ``verbose_eval`` rounds.

    Returns
    -------
    dict of str -> list of float, or pandas.DataFrame
        Columns ``train-<metric>-mean``, ``train-<metric>-std``,
        ``test-<metric>-mean``, ``test-<metric>-std`` for every metric, one entry
        per round.

    Raises
    ------
    ValueError
        As :func:`gpuboost.train` and :func:`make_folds`.
    """
    check_dtrain(dtrain)
    check_num_boost_round(num_boost_round)
    given_params = _with_metrics(params, metrics)
    validated = validate_params(given_params)
    refuse_update(validated, "gpuboost.cv")
    fold_rows = make_folds(dtrain, nfold, stratified, folds, seed, shuffle)
    backend = training_backend(validated, dtrain.device_features)
    callbacks = []
    if verbose_eval:
        callbacks.append(EvaluationMonitor(period=1 if verbose_eval is True else verbose_eval))
    with backend.guard("cross-validation"):
        learners = []
        for train_rows, test_rows in fold_rows:
            fold_train, fold_test = dtrain.subset(train_rows), dtrain.subset(test_rows)
            evals = [(fold_train, CV_SETS[0]), (fold_test, CV_SETS[1])]
            learners.append(
                LEARNERS[validated["booster"]](
                    given_params, fold_train, evals, obj, custom_metric, None, backend
                )
            )
        history = {}  # {set: {metric-mean / metric-std: [per round]}}
        fold_logs = [{} for _ in learners]
        stopping = None
        model = types.SimpleNamespace(best_iteration=None, best_score=None)
        for round_index in range(num_boost_round):
            if not all([learner.update(round_index) for learner in learners]):
                break  # a fold discarded its round (AdaBoost): end at the last whole round
            for learner, log in zip(learners, fold_logs):
                learner.evaluate(log)
            for set_name in CV_SETS:
                summary = history.setdefault(set_name, {})
                for metric_name in fold_logs[0][set_name]:
                    scores = np.array([log[set_name][metric_name][-1] for log in fold_logs])
                    mean = float(reproducible_mean(np, scores))
                    deviations = scores - mean
                    std = float(np.sqrt(reproducible_mean(np, deviations * deviations)))
                    summary.setdefault(metric_name + MEAN_SUFFIX, []).append(mean)
                    summary.setdefault(metric_name + STD_SUFFIX, []).append(std)
            if early_stopping_rounds is not None and stopping is None:
                watched = list(fold_logs[0][CV_SETS[1]])[-1]
                stopping = EarlyStopping(
                    early_stopping_rounds,
                    metric_name=watched + MEAN_SUFFIX,
                    data_name=CV_SETS[1],
                    maximize=metric_maximized(watched) if maximize is None else maximize,
                )
                callbacks.append(stopping)
            stop = any(
                [callback.after_iteration(model, round_index, history) for callback in callbacks]
            )
            if stop or any(learner.done for learner in learners):
                break
        for callback in callbacks:
            callback.after_training(model)
    n_rounds = None if model.best_iteration is None else model.best_iteration + 1
    metric_names = list(fold_logs[0].get(CV_SETS[1], {}))
    result = {  # XGBoost's order: per metric, train mean, train std, test mean, test std
        f"{set_name}-{metric}{suffix}": history[set_name][metric + suffix][:n_rounds]
        for metric in metric_names
        for set_name in CV_SETS
        for suffix in (MEAN_SUFFIX, STD_SUFFIX)
    }
    if as_pandas:
        try:
            import pandas  # optional: the result is a dict without it
        except ImportError:
            return result
        return pandas.DataFrame(result)
    return result
