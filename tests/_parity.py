"""The one CPU-vs-CUDA parity helper of the test suite.

Every test that compares the NumPy backend with the CUDA backend (under the CPU
emulation in CI, on a real GPU in the GPU suite) trains through
:func:`train_on_both` and compares with :func:`assert_models_match`. The contract
(docs/DESIGN.md, "Quantization" and "Platform-independent arithmetic"): byte-identical
model files and evaluation results, for every objective, under the emulation and on a
real GPU alike.
"""

import collections
import json

import numpy as np

import gpuboost
from gpuboost.backends.cuda.selfcheck import first_model_difference

__all__ = [
    "assert_models_match",
    "bits",
    "ParityRun",
    "train_on_both",
    "assert_runs_match",
    "assert_predictions_match",
]


# ---- the comparison helper (reused by the GPU suite) ---------------------------------
def assert_models_match(model_a, model_b):
    """Assert that two Boosters are the same model: byte-identical saved JSON.

    Parameters
    ----------
    model_a, model_b : Booster
    """
    where = first_model_difference(model_a, model_b)
    if where is not None:
        raise AssertionError(
            f"models differ ({len(model_a.save_raw())} vs {len(model_b.save_raw())} "
            f"bytes of JSON); first difference: {where}"
        )


def bits(array):
    """float64 values as int64 bit patterns (distinguishes -0.0 and +0.0, NaN payloads)."""
    return np.ascontiguousarray(array, dtype=np.float64).view(np.int64)


#: One device's run of :func:`train_on_both`.
ParityRun = collections.namedtuple("ParityRun", ["model", "dataset", "evals_result"])


def train_on_both(
    params,
    make_dataset,
    num_boost_round,
    devices=("cpu", "cuda"),
    evaluate_train=False,
    **train_kwargs,
):
    """Train the same model on each device; returns ``{device: ParityRun}``.

    Parameters
    ----------
    params : dict
        Training parameters without ``device``.
    make_dataset : callable () -> gpuboost.Dataset
        Called once per device, so that no device reuses another's cached copies.
    num_boost_round : int
    devices : sequence of str
    evaluate_train : bool
        Evaluate the training Dataset every round (``ParityRun.evals_result``).
    **train_kwargs
        Passed to :func:`gpuboost.train` (``verbose_eval`` defaults to False).
    """
    train_kwargs.setdefault("verbose_eval", False)
    runs = {}
    for device in devices:
        dataset = make_dataset()
        evals_result = {}
        evals = [(dataset, "train")] if evaluate_train else ()
        model = gpuboost.train(
            dict(params, device=device),
            dataset,
            num_boost_round,
            evals=evals,
            evals_result=evals_result,
            **train_kwargs,
        )
        runs[device] = ParityRun(model, dataset, evals_result)
    return runs


def assert_runs_match(runs):
    """:func:`assert_models_match` of every run against the first, and identical
    evaluation results."""
    first, *others = runs.values()
    for run in others:
        assert_models_match(first.model, run.model)
        assert json.dumps(first.evals_result) == json.dumps(run.evals_result)


def assert_predictions_match(
    model_a, model_b, X, kinds=({}, {"output_margin": True}, {"pred_leaf": True})
):
    """Assert bit-identical predictions of two Boosters on ``X`` for every kind."""
    for kwargs in kinds:
        expected = model_a.predict(X, **kwargs)
        got = model_b.predict(X, **kwargs)
        assert got.dtype == expected.dtype and got.shape == expected.shape, kwargs
        if expected.dtype == np.float64:
            np.testing.assert_array_equal(bits(got), bits(expected), err_msg=str(kwargs))
        else:
            np.testing.assert_array_equal(got, expected, err_msg=str(kwargs))
