"""The CUDA backend's self-check (gpuboost.backends.cuda.selfcheck) under the emulation:
it passes on a correct backend, runs once at the first CUDA training, and a primitive
made to return a wrong value makes device='cuda' raise naming the step and
device='auto' warn once and train on the CPU."""

import importlib
import warnings

import numpy as np
import pytest

import gpuboost
from gpuboost import Dataset, GpuSelfCheckError
from gpuboost.backends import get_backend
from gpuboost.backends.cuda import selfcheck
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.core import strict_math
from gpuboost.metrics import classification

pytestmark = pytest.mark.usefixtures("cuda_emulation")
#: The module of gpuboost.train (the package exports the function under the same name).
train_module = importlib.import_module("gpuboost.boosting.train")

#: Rows of the generated data in these tests (the default is larger; the emulation is slow).
TEST_ROWS = 500


@pytest.fixture
def fresh_check(monkeypatch):
    """The self-check on (it is off under the emulation by default), not yet run."""
    monkeypatch.setenv(selfcheck.SELFCHECK_ENV_VAR, "1")
    monkeypatch.setattr(selfcheck, "SELFCHECK_ROWS", TEST_ROWS)
    selfcheck.reset()
    yield
    selfcheck.reset()


def _dataset(regression_data):
    X, y = regression_data
    return Dataset(X, label=y)


def test_every_check_passes_on_the_emulated_backend(fresh_check):
    # (every configuration: tests/test_doctor.py)
    results = selfcheck.run_checks(get_backend("cuda"), gpuboost.train)
    assert [result.step for result in results][:3] == [
        "binning (cuda/binning.cu)",
        "quantization",
        "histograms (cuda/histogram.cu)",
    ]
    assert len(results) == 9 + len(selfcheck.QUICK_CONFIGURATIONS)  # 9 primitives
    assert all(result.passed and result.detail == "" for result in results), results


def test_the_first_cuda_training_checks_once(fresh_check, monkeypatch, regression_data):
    runs = []
    run_checks = selfcheck.run_checks

    def counted(*args, **kwargs):
        runs.append(args)
        return run_checks(*args, **kwargs)

    monkeypatch.setattr(selfcheck, "run_checks", counted)
    for _ in range(2):
        gpuboost.train({"device": "cuda", "max_depth": 2}, _dataset(regression_data), 2)
    assert len(runs) == 1


def test_off_under_the_emulation_by_default_and_with_the_variable(monkeypatch):
    backend = get_backend("cuda")
    monkeypatch.delenv(selfcheck.SELFCHECK_ENV_VAR, raising=False)
    assert not selfcheck.enabled(backend)
    monkeypatch.setattr(backend, "emulated", False)  # as on a GPU
    assert selfcheck.enabled(backend)
    monkeypatch.setenv(selfcheck.SELFCHECK_ENV_VAR, "0")
    assert not selfcheck.enabled(backend)


def test_cuda_raises_naming_the_step(fresh_check, broken_histograms, regression_data):
    for _ in range(2):  # the outcome is kept: the second training raises too
        with pytest.raises(GpuSelfCheckError, match=r"histograms \(cuda/histogram.cu\)") as error:
            gpuboost.train({"device": "cuda"}, _dataset(regression_data), 1)
        assert "gpuboost doctor" in str(error.value) and "differs at" in error.value.detail
        assert error.value.step == "histograms (cuda/histogram.cu)"
    assert isinstance(error.value, gpuboost.DeviceUnavailableError)


def test_auto_warns_once_and_trains_on_the_cpu(
    fresh_check, broken_histograms, monkeypatch, regression_data
):
    def auto_picks_the_gpu(device):  # 'auto' never picks the emulation by itself
        return get_backend("cuda" if device == "auto" else device)

    monkeypatch.setattr(train_module, "get_backend", auto_picks_the_gpu)
    with pytest.warns(RuntimeWarning, match=r"histograms \(cuda/histogram.cu\).*on the CPU"):
        model = gpuboost.train({"device": "auto"}, _dataset(regression_data), 2)
    cpu = gpuboost.train({"device": "cpu"}, _dataset(regression_data), 2)
    assert model.save_raw() == cpu.save_raw()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second 'auto' training does not warn again
        gpuboost.train({"device": "auto"}, _dataset(regression_data), 2)


def test_turned_off_the_check_lets_the_broken_backend_train(
    broken_histograms, monkeypatch, regression_data
):
    monkeypatch.setenv(selfcheck.SELFCHECK_ENV_VAR, "0")
    selfcheck.reset()
    broken = gpuboost.train({"device": "cuda"}, _dataset(regression_data), 1)
    cpu = gpuboost.train({"device": "cpu"}, _dataset(regression_data), 1)
    assert broken.save_raw() != cpu.save_raw()  # what the check is there to catch


def test_a_difference_only_in_whole_training_is_named(fresh_check, monkeypatch):
    """A primitive the primitive checks do not cover (the binned traversal of the
    sampled rounds): the training check finds the models differ and says where."""
    traverse = CudaBackend.predict_tree_binned

    def shifted(self, data, tree):
        return traverse(self, data, tree) + 1e-3

    monkeypatch.setattr(CudaBackend, "predict_tree_binned", shifted)
    results = selfcheck.run_checks(get_backend("cuda"), gpuboost.train)
    assert all(result.passed for result in results[:-1])
    assert results[-1].step == "training 'squarederror'" and not results[-1].passed
    assert results[-1].detail.startswith("the models differ: tree 1")


def test_first_model_difference(regression_data):
    dataset = _dataset(regression_data)
    model = gpuboost.train({"device": "cpu", "max_depth": 2}, dataset, 3)
    assert selfcheck.first_model_difference(model, model.copy()) is None
    other = model.copy()
    other.trees[2].value[0] += 1.0
    assert selfcheck.first_model_difference(model, other) == "tree 2, array 'value'"
    assert "number of trees" in selfcheck.first_model_difference(model, model[:2])
    assert np.array_equal(other.trees[0].value, model.trees[0].value)


def test_a_metric_with_the_platforms_log_fails_the_quick_check(fresh_check, monkeypatch):
    """The first-use check trains an exp / log objective with an eval set: a metric that
    took the array module's ``log`` (CUDA's on a GPU, one ulp off under the emulation)
    instead of strict_math's is caught, naming the eval histories."""

    class PlatformLog:
        def log(self, xp, values):
            return xp.log(values)

        def __getattr__(self, name):
            return getattr(strict_math, name)

    monkeypatch.setattr(classification, "strict_math", PlatformLog())
    result = selfcheck.check_training(get_backend("cuda"), gpuboost.train, "logistic_eval")
    assert not result.passed
    assert "eval histories differ" in result.detail
