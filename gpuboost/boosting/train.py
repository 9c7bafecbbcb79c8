"""``gpuboost.train``: validate and set up, then the boosting loop.

The loop itself and its scaffolding are :mod:`gpuboost.boosting.loop`'s; a model
family's setup and round step are a *learner*'s: gradient boosting
(:mod:`gpuboost.boosting.gbtree`), DART (:mod:`gpuboost.boosting.dart`,
``booster='dart'``) or SAMME AdaBoost (:mod:`gpuboost.boosting.adaboost`,
``booster='adaboost'``).
"""

from __future__ import annotations

import functools
import inspect
import os
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ..backends import get_backend
from ..backends.cuda import selfcheck
from ..data.dataset import Dataset
from ..data.device import training_device
from ..errors import GpuOutOfMemoryError, GpuSelfCheckError
from ..model.booster import Booster
from ..params import validate_params
from .adaboost import AdaBoostLearner
from .callback import LearningRateScheduler, TrainingCallback
from .dart import DartLearner
from .gbtree import ROW_STREAMS_PER_ROUND, GBTreeLearner
from .loop import check_dtrain, check_num_boost_round, run_with_callbacks
from .update import update_model

__all__ = ["train", "training_backend", "LEARNERS", "ROW_STREAMS_PER_ROUND"]

#: ``booster`` parameter -> learner class.
LEARNERS = {"gbtree": GBTreeLearner, "dart": DartLearner, "adaboost": AdaBoostLearner}


def training_backend(params, features=None):
    """The backend a training with the validated ``params`` runs on, configured: for
    device input (``features``, ``Dataset.device_features``) with ``device='auto'`` or
    ``'cuda'``, the features' device (:func:`gpuboost.data.device.training_device`).

    The first CUDA training of a process checks the GPU against the CPU
    (gpuboost.backends.cuda.selfcheck): when that fails, ``device='auto'`` warns once
    and trains on the CPU, ``device='cuda'`` raises GpuSelfCheckError.
    """
    backend = get_backend(training_device(params["device"], features))
    if backend.name == "cuda" and selfcheck.enabled(backend):
        try:
            selfcheck.verify(backend, train)
        except GpuSelfCheckError as error:
            if params["device"] != "auto":
                raise
            selfcheck.warn_once(error)
            backend = get_backend("cpu")
    backend.configure(params)
    return backend


def _clear_finished_frames(error):
    """Drop the local variables of the finished frames of ``error``'s traceback chain."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


def _device_memory_restored_on_out_of_memory(train_function):
    """Decorator of :func:`train`: a CUDA out-of-memory error leaves no more device
    memory in use than before the call (the backend's per-thread working buffers,
    which it remakes on demand, are dropped too: ``release_memory``).

    The arrays the failed call allocated are referenced only by the finished frames
    of the error's traceback; those are cleared, so the arrays are freed even while
    the caller holds the exception. Device copies of Datasets cached by this call are
    dropped and the memory pool returns its unused blocks.
    """
    signature = inspect.signature(train_function)

    @functools.wraps(train_function)
    def wrapper(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        evals = arguments.get("evals", ())
        datasets = [arguments["dtrain"]] + (
            [item[0] for item in evals if isinstance(item, (tuple, list)) and item]
            if isinstance(evals, (tuple, list))
            else []
        )
        cached_before = [
            (dataset, set(dataset._backend_cache))
            for dataset in datasets
            if isinstance(dataset, Dataset)
        ]
        try:
            return train_function(*args, **kwargs)
        except MemoryError as error:
            # backend.guard() (around the boosting loop) has already turned a CUDA
            # out-of-memory error into GpuOutOfMemoryError; free what the call left.
            if not isinstance(error, GpuOutOfMemoryError):
                raise
            for dataset, keys in cached_before:
                for key in set(dataset._backend_cache) - keys:
                    del dataset._backend_cache[key]
            _clear_finished_frames(error)
            get_backend(validate_params(arguments["params"])["device"]).release_memory()
            raise

    return wrapper


@_device_memory_restored_on_out_of_memory
def train(
    params: Optional[Dict[str, Any]],
    dtrain: Dataset,
    num_boost_round: int = 100,
    evals: Sequence[Tuple[Dataset, str]] = (),
    obj: Optional[Callable] = None,
    custom_metric: Optional[Callable] = None,
    early_stopping_rounds: Optional[int] = None,
    evals_result: Optional[Dict[str, Dict[str, List[float]]]] = None,
    verbose_eval: Union[bool, int] = True,
    callbacks: Sequence[TrainingCallback] = (),
    init_model: Union[Booster, str, "os.PathLike[str]", None] = None,
    maximize: Optional[bool] = None,
    learning_rates: Union[Sequence[float], Callable[[int], float], None] = None,
) -> Booster:
    """Train a gradient-boosted tree model.

    Parameters
    ----------
    params : dict
        Training parameters (see ``gpuboost.params`` and the parameters page, docs/parameters.md).
    dtrain : Dataset
        Training data with labels.
    num_boost_round : int
        Boosting rounds (one tree per output each).
    evals : sequence of (Dataset, str)
        Evaluated after every round; the last metric of the last set drives
        early stopping.
    obj : callable, optional
        Custom objective ``obj(raw_margin, dtrain) -> (grad, hess)``; overrides
        ``params['objective']`` for training.
    custom_metric : callable, optional
        ``custom_metric(pred, dataset) -> (name, value)`` evaluated on every set
        (pred: the objective's mean-space predictions as host NumPy). Early stopping
        watches it (it is the last metric) and takes lower as better unless
        ``maximize=True``.
    early_stopping_rounds : int, optional
        Stop when the watched score (the last metric of the last evaluation set) has
        not improved for this many rounds; sets ``best_iteration`` and ``best_score``
        on the Booster.
    evals_result : dict, optional
        Filled with ``{set_name: {metric: [score per round]}}``.
    verbose_eval : bool or int
        Print the evaluation every round (True) or every ``verbose_eval`` rounds.
    callbacks : sequence of TrainingCallback
    init_model : Booster or path, optional
        Continue training from this model.
    maximize : bool, optional
        Whether early stopping takes higher scores as better. None: built-in metrics
        know their direction (auc, ndcg, map: higher); a custom metric is minimized.
    learning_rates : sequence of float or callable, optional
        A learning-rate schedule (:class:`~gpuboost.boosting.callback.LearningRateScheduler`,
        run before the other callbacks): the rate of round ``r``, counted from the start
        of the model (``init_model``'s rounds included), is ``learning_rates[r]`` or
        ``learning_rates(r)``; the model records every round's.

    Returns
    -------
    Booster

    Raises
    ------
    GpuOutOfMemoryError
        The GPU ran out of memory (the message names the sizes); no more device
        memory is then in use than before the call.
    GpuSelfCheckError
        ``device='cuda'`` and the GPU failed its self-check (the first CUDA training of
        a process compares it with the CPU; ``device='auto'`` warns and uses the CPU).
    """
    check_dtrain(dtrain)
    check_num_boost_round(num_boost_round)
    given_params = params
    params = validate_params(params)  # the learner validates them again, for its family
    backend = training_backend(params, dtrain.device_features)
    if params["process_type"] == "update":
        if evals or callbacks or early_stopping_rounds is not None or learning_rates is not None:
            raise ValueError(
                "process_type='update' changes existing trees: evals, callbacks, "
                "early_stopping_rounds and learning_rates belong to growing new ones."
            )
        return update_model(params, dtrain, num_boost_round, init_model, backend)
    with backend.guard("training"):
        learner = LEARNERS[params["booster"]](
            given_params, dtrain, evals, obj, custom_metric, init_model, backend
        )
        if learning_rates is not None:
            callbacks = [LearningRateScheduler(learning_rates), *callbacks]
        return run_with_callbacks(
            learner,
            num_boost_round,
            callbacks,
            verbose_eval,
            early_stopping_rounds,
            maximize,
            evals_result,
            backend,
        )
