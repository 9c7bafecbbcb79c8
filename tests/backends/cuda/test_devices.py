"""Several emulated devices (GPUBOOST_EMULATE_DEVICES; issue 29): each device's arrays
are usable only while it is current, as CuPy without peer access, so every entry point
must run in its device's context; training and every kind of prediction on cuda:1 give
the CPU's bytes, and a device that does not exist is refused."""

import numpy as np
import pytest

import gpuboost
from gpuboost.backends import get_backend
from gpuboost.backends.emulation import device_array, emulated_kernels
from gpuboost.errors import DeviceUnavailableError


@pytest.fixture
def two_devices(monkeypatch):
    monkeypatch.setenv(device_array.EMULATE_DEVICES_ENV_VAR, "2")
    with emulated_kernels():
        yield


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(240, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1] * X[:, 2])
    return X, signal


PREDICTIONS = (
    {},
    {"output_margin": True},
    {"pred_leaf": True},
    {"pred_contribs": True},
    {"pred_interactions": True},
)


@pytest.mark.parametrize(
    "params",
    [
        {"objective": "binary:logistic", "eval_metric": ["logloss", "auc"]},
        {"objective": "multi:softprob", "num_class": 3, "eval_metric": ["mlogloss"]},
        {"booster": "adaboost", "objective": "binary:logistic", "max_depth": 2},
    ],
    ids=["binary", "softprob", "adaboost"],
)
def test_training_and_prediction_on_the_second_device_give_the_cpus_bytes(two_devices, params):
    X, signal = _data()
    if params.get("num_class"):
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
    else:
        y = (signal > 0).astype(float)
    results = {}
    for device in ("cpu", "cuda:1"):
        history = {}
        evals = [(gpuboost.Dataset(X[:80], label=y[:80]), "valid")]
        model = gpuboost.train(
            dict({"max_depth": 3}, **params, device=device),
            gpuboost.Dataset(X, label=y),
            4,
            evals=evals if "eval_metric" in params else (),
            evals_result=history,
            early_stopping_rounds=2 if "eval_metric" in params else None,
            verbose_eval=False,
        )
        predictions = [np.asarray(model.predict(X, **kind)).tobytes() for kind in PREDICTIONS]
        results[device] = (model.save_raw(), history, predictions)
    assert results["cuda:1"] == results["cpu"]
    assert get_backend("cuda:1").device_ordinal == 1


def test_a_device_that_does_not_exist_is_refused(two_devices):
    X, signal = _data()
    with pytest.raises(DeviceUnavailableError, match="'cuda:2'.*2 device"):
        gpuboost.train({"device": "cuda:2"}, gpuboost.Dataset(X, label=signal), 1)


def test_an_array_of_another_device_is_refused_as_cupy_refuses_it(two_devices):
    xp = device_array.namespace
    with device_array.device(1):
        on_one = xp.asarray(np.arange(4.0))
        assert on_one.device.id == 1
        np.testing.assert_array_equal((on_one * 2.0).get(), [0.0, 2.0, 4.0, 6.0])
    assert device_array.current_device() == 0
    for use in (lambda: on_one * 2.0, lambda: on_one[1:], lambda: xp.sum(on_one)):
        with pytest.raises(ValueError, match="resides on device 1, but the current device is 0"):
            use()
    np.testing.assert_array_equal(on_one.get(), np.arange(4.0))  # a copy to the host: fine
    with pytest.raises(ValueError, match="emulated device 2 does not exist"):
        with device_array.device(2):
            pass
