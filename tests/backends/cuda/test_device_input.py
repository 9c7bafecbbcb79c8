"""Device-resident input (gpuboost.data.device; issue 29, point 5): features already on
a GPU -- the emulation's device arrays, objects exporting them through
``__cuda_array_interface__`` or DLPack -- train the model of their host copy, with the
bin edges computed on the device and no copy of X to the host (the traffic model's
copies), and their predictions of every kind are device arrays with the host's values."""

import collections
import types

import numpy as np
import pytest
from _foreign_arrays import ArrayInterfaceOnly, DLPackOnly
from _tiers import SLOW

import gpuboost
from gpuboost.backends import get_backend
from gpuboost.backends.cuda import binning as cuda_binning
from gpuboost.backends.emulation import device_array
from gpuboost.backends.emulation.device_array import DeviceArray
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.backends.emulation.traffic import record_traffic
from gpuboost.core.bin_edges import FLOAT64_MAX
from gpuboost.data.binning import BinMapper
from gpuboost.sklearn import GBClassifier, GBRegressor

pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.usefixtures("cuda_emulation")


def _data(n_rows=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 2] = np.round(X[:, 2])  # few distinct values
    X[:5, 3] = [np.inf, -np.inf, FLOAT64_MAX, -0.0, 0.0]
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1] * X[:, 2])
    return X, signal


PARAMS = {"objective": "binary:logistic", "max_depth": 4, "verbosity": 0}


def _train(X, y, device, **dataset_kwargs):
    dataset = gpuboost.Dataset(X, label=y, **dataset_kwargs)
    return gpuboost.train(dict(PARAMS, device=device), dataset, 5)


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("max_bin", [255, 16])
def test_the_device_edges_are_the_hosts(weighted, max_bin, monkeypatch):
    """device_bin_edges == BinMapper.fit bit for bit: ties, NaN, +-inf, -0.0, more and
    fewer distinct values than max_bin, a subsample, features taken a few at a time."""
    monkeypatch.setattr(cuda_binning, "EDGES_BLOCK_BYTES", 3 * 8 * 4 * 2000)
    X, _ = _data()
    weight = np.random.default_rng(1).random(len(X)) * (np.arange(len(X)) % 7 != 0)
    weight = weight if weighted else None
    mapper = BinMapper(max_bin=max_bin, subsample=2000, seed=3)
    expected = mapper.fit(X, sample_weight=weight).bin_edges_
    rows, weights = mapper.binning_rows(len(X), weight)
    got = get_backend("cuda").bin_edges(xp.asarray(X), rows, weights, max_bin)
    assert [edges.tobytes() for edges in got] == [edges.tobytes() for edges in expected]


@pytest.mark.parametrize(
    "wrap, dtype",
    [  # the slow tier: float32 and the interface-only wrapper (dlpack's sibling)
        (xp.asarray, np.float64),
        pytest.param(xp.asarray, np.float32, marks=SLOW),
        pytest.param(lambda X: ArrayInterfaceOnly(xp.asarray(X)), np.float64, marks=SLOW),
        (lambda X: DLPackOnly(xp.asarray(X)), np.float64),
    ],
    ids=["device-array", "float32", "cuda-array-interface", "dlpack"],
)
def test_device_features_train_the_model_of_their_host_copy(wrap, dtype):
    X, signal = _data()
    with np.errstate(over="ignore"):  # FLOAT64_MAX becomes inf in float32
        X = X.astype(dtype)
    y = (signal > 0).astype(float)
    weight = np.random.default_rng(2).random(len(X)) + 0.1
    expected = _train(X, y, "cpu", weight=weight).save_raw()
    for device in ("cuda", "auto"):
        dataset = gpuboost.Dataset(wrap(X), label=xp.asarray(y), weight=weight)
        assert dataset.device_features.array.dtype == dtype and dataset._features is None
        model = gpuboost.train(dict(PARAMS, device=device), dataset, 5)
        assert dataset._features is None  # never copied to the host
        assert model.save_raw() == expected


def test_the_features_never_cross_to_the_host():
    """The traffic model: what training copies to the host does not grow with X (edges,
    per-node records and per-block maxima are bounded), and what it copies to the device
    grows by the per-row vectors (labels, margins), not by X (here 24 features, 192
    bytes a row)."""
    copied = {}
    for n_rows in (1500, 6000):
        X, signal = _data(n_rows)
        X = np.hstack([X, np.random.default_rng(3).normal(size=(n_rows, 18))])
        on_device = xp.asarray(X)  # the caller's own copy
        with record_traffic() as log:
            dataset = gpuboost.Dataset(on_device, label=(signal > 0).astype(float))
            gpuboost.train(dict(PARAMS, device="cuda", max_depth=3), dataset, 2)
        totals = collections.Counter()
        for event in log.events:
            totals[event.kind] += event.bytes
        copied[n_rows] = (totals["to_host"], totals["to_device"], X.nbytes)
    (small_host, small_device, small_X), (large_host, large_device, large_X) = (
        copied[1500],
        copied[6000],
    )
    assert large_host - small_host < (large_X - small_X) / 20
    assert large_host < small_X / 2
    assert large_device - small_device < (large_X - small_X) / 4


def test_evaluation_sets_and_subsets_stay_on_the_device():
    X, signal = _data()
    y = (signal > 0).astype(float)
    dtrain = gpuboost.Dataset(xp.asarray(X[:2000]), label=y[:2000])
    dvalid = gpuboost.Dataset(xp.asarray(X[2000:]), label=y[2000:], reference=dtrain)
    part = dtrain.subset(np.arange(0, 2000, 3))
    assert isinstance(part.device_features.array, DeviceArray)
    history = {}
    model = gpuboost.train(
        dict(PARAMS, device="cuda", eval_metric=["logloss", "auc"]),
        dtrain,
        5,
        evals=[(dvalid, "valid")],
        evals_result=history,
        verbose_eval=False,
    )
    host_history = {}
    host = gpuboost.Dataset(X[:2000], label=y[:2000])
    host_model = gpuboost.train(
        dict(PARAMS, device="cpu", eval_metric=["logloss", "auc"]),
        host,
        5,
        evals=[(gpuboost.Dataset(X[2000:], label=y[2000:], reference=host), "valid")],
        evals_result=host_history,
        verbose_eval=False,
    )
    assert model.save_raw() == host_model.save_raw() and history == host_history
    assert dtrain._features is None and dvalid._features is None
    sub_model = gpuboost.train(dict(PARAMS, device="cuda"), part, 3)
    host_part = gpuboost.Dataset(X[:2000], label=y[:2000]).subset(np.arange(0, 2000, 3))
    assert (
        sub_model.save_raw() == gpuboost.train(dict(PARAMS, device="cpu"), host_part, 3).save_raw()
    )


@pytest.mark.parametrize(
    "params",
    [PARAMS, {"objective": "multi:softprob", "num_class": 3, "max_depth": 3, "verbosity": 0}],
    ids=["binary", "softprob"],
)
def test_predictions_of_device_input_are_device_arrays(params):
    X, signal = _data(800)
    y = np.digitize(signal, [-0.5, 0.5]).astype(float) if "num_class" in params else signal > 0
    model = gpuboost.train(dict(params, device="cpu"), gpuboost.Dataset(X, label=y), 4)
    for kind in (
        {},
        {"output_margin": True},
        {"pred_leaf": True},
        {"pred_contribs": True},
        {"pred_interactions": True},
    ):
        on_device = model.predict(xp.asarray(X), **kind)
        assert isinstance(on_device, DeviceArray), kind
        expected = model.predict(X, **kind)
        assert on_device.get().tobytes() == expected.tobytes(), kind
    dataset = gpuboost.Dataset(xp.asarray(X))
    assert model.inplace_predict(dataset).get().tobytes() == model.predict(X).tobytes()


def test_the_data_trains_on_its_own_device(monkeypatch):
    monkeypatch.setenv(device_array.EMULATE_DEVICES_ENV_VAR, "2")
    X, signal = _data(1000)
    y = (signal > 0).astype(float)
    with device_array.device(1):
        on_second = xp.asarray(X)
    dataset = gpuboost.Dataset(on_second, label=y)
    assert dataset.device_features.device == 1
    model = gpuboost.train(dict(PARAMS, device="cuda"), dataset, 5)
    assert model.save_raw() == _train(X, y, "cpu").save_raw()
    with pytest.raises(ValueError, match="live on cuda:1, but device='cuda:0'"):
        gpuboost.train(dict(PARAMS, device="cuda:0"), dataset, 5)
    prediction = model.predict(on_second)
    assert prediction.device.id == 1
    assert prediction.get().tobytes() == model.predict(X).tobytes()


def test_the_estimators_take_device_input():
    X, signal = _data(600)
    y = (signal > 0).astype(float)
    regressor = GBRegressor(n_estimators=4, device="cuda").fit(xp.asarray(X), xp.asarray(signal))
    host = GBRegressor(n_estimators=4, device="cpu").fit(X, signal)
    prediction = regressor.predict(xp.asarray(X))
    assert isinstance(prediction, DeviceArray) and regressor.n_features_in_ == 6
    assert prediction.get().tobytes() == host.predict(X).tobytes()
    classifier = GBClassifier(n_estimators=4, device="cuda").fit(xp.asarray(X), xp.asarray(y))
    host_classifier = GBClassifier(n_estimators=4, device="cpu").fit(X, y)
    assert (
        classifier.predict_proba(xp.asarray(X)).get().tobytes()
        == host_classifier.predict_proba(X).tobytes()
    )
    assert np.array_equal(classifier.predict(xp.asarray(X)), host_classifier.predict(X))
    with pytest.raises(ValueError, match="X has 5 features"):
        regressor.predict(xp.asarray(X[:, :5]))


def test_bad_device_input_is_refused_clearly():
    X, signal = _data(100)
    with pytest.raises(ValueError, match="must be 2-dimensional"):
        gpuboost.Dataset(xp.asarray(X[:, 0]))
    with pytest.raises(ValueError, match="no rows"):
        gpuboost.Dataset(xp.asarray(X[:0]))
    with pytest.raises(TypeError, match="not numeric"):
        gpuboost.Dataset(xp.asarray(X.astype(complex)))
    with pytest.raises(ValueError, match="Categorical columns named by categorical_features"):
        gpuboost.Dataset(xp.asarray(X), categorical_features=[0])
    integers = gpuboost.Dataset(xp.asarray(np.round(np.nan_to_num(X[:, :3]) * 3).astype(np.int32)))
    assert integers.device_features.array.dtype == np.float64
    with pytest.raises(BufferError, match="only a device library's from_dlpack"):
        np.from_dlpack(xp.asarray(X))  # numpy cannot read CUDA memory
    with pytest.raises(BufferError, match="not a CUDA device"):
        xp.from_dlpack(np.zeros(3))


class _FakeCudfSeries:
    """The part of a cuDF Series device input reads, over a pandas Series (device
    arrays: the emulation's)."""

    def __init__(self, series):
        self._series = series
        if isinstance(series.dtype, pd.CategoricalDtype):
            self.cat = types.SimpleNamespace(
                codes=_FakeCudfSeries(series.cat.codes),
                categories=types.SimpleNamespace(to_pandas=lambda: series.cat.categories),
            )

    def to_cupy(self, dtype=None, na_value=None):
        return xp.asarray(self._series.to_numpy(dtype=dtype, na_value=na_value))


class _FakeCudfFrame:
    """The part of a cuDF DataFrame device input reads (``columns``, ``dtypes``,
    ``frame[column]``, ``to_cupy``), over a pandas DataFrame."""

    def __init__(self, frame):
        self._frame = frame
        self.columns = frame.columns
        self.dtypes = frame.dtypes

    def __getitem__(self, column):
        return _FakeCudfSeries(self._frame[column])

    def to_cupy(self, dtype=None, na_value=None):
        return xp.asarray(self._frame.to_numpy(dtype=dtype, na_value=na_value))


_FakeCudfFrame.__module__ = _FakeCudfSeries.__module__ = "cudf.core.dataframe"


def _frame(n_rows, seed):
    rng = np.random.default_rng(seed)
    colour = pd.Categorical(
        rng.choice(["red", "green", "blue", "grey"], n_rows, p=[0.4, 0.3, 0.2, 0.1]),
        categories=["blue", "green", "grey", "red", "unused"],
    )
    colour[rng.random(n_rows) < 0.05] = np.nan
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=n_rows),
            "colour": colour,
            "size": rng.integers(0, 5, n_rows).astype(np.int32),
        }
    )
    signal = frame["x"].to_numpy() + (frame["colour"] == "red").to_numpy() * 1.5
    return frame, (signal > 0.5).astype(float)


def test_a_cudf_frame_with_category_columns_is_encoded_on_the_device():
    """Category columns numbered by frequency as a pandas frame's are, an evaluation
    frame whose dtype lists the categories in another order re-coded by label, and
    predictions of a frame re-coded against the model's labels: the host's bytes."""
    frame, y = _frame(1500, 0)
    valid, valid_y = _frame(400, 1)
    valid["colour"] = valid["colour"].cat.reorder_categories(
        ["red", "grey", "unused", "green", "blue"]
    )
    params = dict(PARAMS, device="cuda", eval_metric="logloss")
    results = {}
    for name, wrap in (("host", lambda f: f), ("device", _FakeCudfFrame)):
        dtrain = gpuboost.Dataset(wrap(frame), label=y)
        dvalid = gpuboost.Dataset(wrap(valid), label=valid_y, reference=dtrain)
        history = {}
        model = gpuboost.train(
            params, dtrain, 4, evals=[(dvalid, "valid")], evals_result=history, verbose_eval=False
        )
        results[name] = (dtrain.categories, model.save_raw(), history, model.predict(wrap(valid)))
    host, device = results["host"], results["device"]
    assert device[0] == host[0] == [None, ["red", "green", "blue", "grey"], None]
    assert device[1:3] == host[1:3]
    assert isinstance(device[3], DeviceArray)
    assert device[3].get().tobytes() == host[3].tobytes()
    model_with_categories = gpuboost.train(params, gpuboost.Dataset(frame, label=y), 1)
    with pytest.raises(ValueError, match="cannot carry by label"):
        model_with_categories.predict(xp.asarray(np.zeros((3, 3))))
    with pytest.raises(TypeError, match="categorical_features='auto'"):
        gpuboost.Dataset(_FakeCudfFrame(frame), categorical_features=None)
