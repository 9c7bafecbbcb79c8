"""Property tests (hypothesis): odd data never crash training or give a wrong model.

For random shapes (1 row to thousands, 1 to 300 features), NaN patterns (whole
columns, whole rows, scattered), constant and duplicate columns, duplicate rows,
huge and tiny values (+/-1e300, the float64 limits, subnormals), +/-inf,
integer and boolean dtypes, C and Fortran order, non-contiguous views, and
zero, tiny or huge sample weights, :func:`gpuboost.train` either

* returns a model whose predictions (transformed and raw margins) are finite
  and that saves and reloads to the same bytes, or
* raises ``ValueError`` with a message,

and never anything else: no other exception, no NaN prediction, no hang (each
example runs under a time limit). Inputs without overflow hazards (weights and
labels of moderate size) must train, so a library that rejected everything
would fail. The same holds on the CUDA backend under the CPU emulation, where
the model must moreover be byte-identical to the NumPy backend's.

The examples are derandomized, so CI runs are reproducible.
"""

import contextlib
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from _timeouts import time_limit  # noqa: E402
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import gpuboost  # noqa: E402
from gpuboost import Booster  # noqa: E402
from gpuboost.backends.emulation import emulated_kernels  # noqa: E402
from gpuboost.data.binning import BinMapper  # noqa: E402

#: Examples per test on the NumPy backend, and on the (slow) emulated CUDA backend.
CPU_EXAMPLES = 100
CUDA_EXAMPLES = 15
#: Shape bounds on the NumPy backend: rows x features <= CPU_MAX_CELLS.
CPU_MAX_ROWS, CPU_MAX_FEATURES, CPU_MAX_CELLS = 3000, 300, 12_000
#: Shape bounds under the emulation (tiny: every kernel runs on the CPU).
CUDA_MAX_ROWS, CUDA_MAX_FEATURES = 40, 5
#: Boosting rounds per example.
N_ROUNDS = 3
#: Seconds one example may take before it counts as a hang.
EXAMPLE_TIME_LIMIT_S = 60
#: Largest |label| and weight of a "benign" example, which must train.
BENIGN_LIMIT = 1e6

#: Values injected into features.
HUGE_VALUES = (1e300, -1e300, np.finfo(np.float64).max, -np.finfo(np.float64).max)
TINY_VALUES = (5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 0.0, -0.0)
INFINITE_VALUES = (np.inf, -np.inf)
#: Data patterns a strategy applies (each possibly several times).
PATTERNS = (
    "nan_column",
    "nan_row",
    "scattered_nan",
    "constant_column",
    "duplicate_column",
    "duplicate_row",
    "huge_values",
    "tiny_values",
    "infinite_values",
    "infinite_column",
)
DTYPES = ("float64", "float32", "int64", "int32", "int8", "uint8", "bool")
LAYOUTS = ("C", "F", "strided_rows", "strided_columns", "reversed")
WEIGHT_KINDS = ("none", "some_zero", "tiny", "huge", "mixed_extremes", "all_zero")
#: Objectives and how their labels are drawn.
OBJECTIVES = (
    "reg:squarederror",
    "reg:absoluteerror",
    "reg:huber",
    "reg:quantile",
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
    "binary:logistic",
    "binary:exponential",
    "multi:softprob",
    "multi:softmax",
)
N_CLASSES = 3


# ---- strategies ---------------------------------------------------------------------
def _apply_pattern(X, pattern, rng):
    n_rows, n_features = X.shape
    column, row = rng.integers(n_features), rng.integers(n_rows)
    some_rows = rng.random(n_rows) < rng.uniform(0.05, 0.6)
    if pattern == "nan_column":
        X[:, column] = np.nan
    elif pattern == "nan_row":
        X[row, :] = np.nan
    elif pattern == "scattered_nan":
        X[rng.random(X.shape) < rng.uniform(0.05, 0.9)] = np.nan
    elif pattern == "constant_column":
        X[:, column] = rng.choice([0.0, -2.5, 7.0])
    elif pattern == "duplicate_column":
        X[:, column] = X[:, rng.integers(n_features)]
    elif pattern == "duplicate_row":
        X[row, :] = X[rng.integers(n_rows), :]
    elif pattern == "huge_values":
        X[some_rows, column] = rng.choice(HUGE_VALUES, size=int(some_rows.sum()))
    elif pattern == "tiny_values":
        X[some_rows, column] = rng.choice(TINY_VALUES, size=int(some_rows.sum()))
    elif pattern == "infinite_values":
        X[some_rows, column] = rng.choice(INFINITE_VALUES, size=int(some_rows.sum()))
    elif pattern == "infinite_column":
        X[:, column] = rng.choice(INFINITE_VALUES, size=n_rows)


def _cast(X, dtype):
    if dtype.startswith("float"):
        with np.errstate(over="ignore"):
            return X.astype(dtype)  # float32: huge values become +/-inf, which is allowed
    if dtype == "bool":
        return np.nan_to_num(X) > 0
    info = np.iinfo(dtype)
    # The largest float64 not above the integer range (int64's max rounds up to 2**63).
    high, low = np.nextafter(float(info.max), 0.0), float(info.min)
    finite = np.nan_to_num(X, nan=0.0, posinf=high, neginf=low)
    return np.clip(np.round(finite), low, high).astype(dtype)


def _lay_out(X, layout):
    """``X`` (same values) in the memory layout ``layout``."""
    if layout == "F":
        return np.asfortranarray(X)
    if layout == "strided_rows":
        wide = np.zeros((2 * X.shape[0], X.shape[1]), dtype=X.dtype)
        wide[::2] = X
        return wide[::2]
    if layout == "strided_columns":
        wide = np.zeros((X.shape[0], 2 * X.shape[1]), dtype=X.dtype)
        wide[:, 1::2] = X
        return wide[:, 1::2]
    if layout == "reversed":
        return np.ascontiguousarray(X[::-1, ::-1])[::-1, ::-1]
    return np.ascontiguousarray(X)


def _labels(objective, n_rows, rng, huge):
    if objective.startswith("binary:"):
        return (rng.random(n_rows) < 0.5).astype(np.float64)
    if objective.startswith("multi:"):
        return rng.integers(0, N_CLASSES, n_rows).astype(np.float64)
    if huge:
        y = rng.choice([1e300, -1e300, 1e150, 1e-310, 0.0, 1.0], size=n_rows)
    else:
        y = rng.normal(size=n_rows) * 10.0 ** rng.integers(-3, 4)
    if objective in ("count:poisson", "reg:tweedie"):
        return np.abs(y)
    if objective == "reg:gamma":
        return np.abs(y) + 1.0
    return y


def _weights(kind, n_rows, rng):
    if kind == "none":
        return None
    if kind == "some_zero":
        weight = rng.uniform(0.1, 3.0, n_rows)
        weight[rng.random(n_rows) < 0.5] = 0.0
        weight[rng.integers(n_rows)] = 1.0
        return weight
    if kind == "tiny":
        return rng.choice([5e-324, 1e-300, 1e-200], size=n_rows)
    if kind == "huge":
        return np.full(n_rows, rng.choice([1e300, 1e308]))
    if kind == "mixed_extremes":
        return rng.choice([0.0, 1e-300, 1.0, 1e300, 1e308], size=n_rows)
    return np.zeros(n_rows)  # all_zero: must be rejected


@st.composite
def training_problems(draw, max_rows, max_features, max_cells):
    """(X, y, weight, params, benign) of a random, often odd, training problem."""
    n_rows = draw(st.one_of(st.integers(1, 4), st.integers(1, max_rows)))
    n_features = draw(
        st.one_of(st.integers(1, 3), st.integers(1, max(1, min(max_features, max_cells // n_rows))))
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(n_rows, n_features)) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    for pattern in draw(st.lists(st.sampled_from(PATTERNS), max_size=4)):
        _apply_pattern(X, pattern, rng)
    X = _lay_out(_cast(X, draw(st.sampled_from(DTYPES))), draw(st.sampled_from(LAYOUTS)))
    objective = draw(st.sampled_from(OBJECTIVES))
    huge_labels = draw(st.booleans()) and not objective.startswith(("binary:", "multi:"))
    y = _labels(objective, n_rows, rng, huge_labels)
    weight_kind = draw(st.sampled_from(WEIGHT_KINDS))
    weight = _weights(weight_kind, n_rows, rng)
    params = {
        "objective": objective,
        "max_depth": draw(st.integers(1, 6)),
        "max_bin": draw(st.sampled_from([2, 3, 16, 255])),
        "grow_policy": draw(st.sampled_from(["depthwise", "lossguide"])),
        "max_leaves": draw(st.sampled_from([0, 2, 5])),
        "learning_rate": draw(st.sampled_from([0.3, 1.0])),
        "reg_lambda": draw(st.sampled_from([0.0, 1.0])),
        "reg_alpha": draw(st.sampled_from([0.0, 0.5])),
        "min_child_weight": draw(st.sampled_from([0.0, 1.0])),
        "min_data_in_leaf": draw(st.sampled_from([1, 3])),
        "gamma": draw(st.sampled_from([0.0, 0.5])),
        "max_delta_step": draw(st.sampled_from([0.0, 0.7])),
        "subsample": draw(st.sampled_from([1.0, 0.5])),
        "colsample_bytree": draw(st.sampled_from([1.0, 0.6])),
        "colsample_bynode": draw(st.sampled_from([1.0, 0.6])),
        "seed": draw(st.integers(0, 3)),
        "verbosity": 0,
    }
    if objective.startswith("multi:"):
        params["num_class"] = N_CLASSES
    benign = weight_kind in ("none", "some_zero") and not huge_labels
    return X, y, weight, params, benign


# ---- the property ----------------------------------------------------------------
def train_or_value_error(X, y, weight, params):
    """The trained Booster, or None when training raised ValueError (with a message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow on the way to a ValueError
            dataset = gpuboost.Dataset(X, label=y, weight=weight)
            return gpuboost.train(params, dataset, num_boost_round=N_ROUNDS, verbose_eval=False)
    except ValueError as error:
        assert str(error), "a ValueError without a message"
        return None


def assert_sound_model(booster, X):
    """Finite predictions and margins; the model saves and reloads to the same bytes."""
    prediction = booster.predict(X)
    margins = booster.predict(X, output_margin=True)
    assert np.all(np.isfinite(prediction)), "non-finite prediction"
    assert np.all(np.isfinite(margins)), "non-finite margin"
    assert prediction.shape[0] == X.shape[0]
    raw = booster.save_raw()  # refuses NaN / inf: a model with them is not a model
    assert Booster.from_json(raw.decode("utf-8")).save_raw() == raw


def check_problem(problem, device):
    X, y, weight, params, benign = problem
    with time_limit(EXAMPLE_TIME_LIMIT_S, "training"):
        booster = train_or_value_error(X, y, weight, dict(params, device=device))
        event("ValueError" if booster is None else "trained")
        if booster is None:
            assert not benign, "training rejected data without overflow hazards"
            return None
        assert_sound_model(booster, X)
    return booster


@settings(
    max_examples=CPU_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(problem=training_problems(CPU_MAX_ROWS, CPU_MAX_FEATURES, CPU_MAX_CELLS))
def test_numpy_backend_trains_or_raises_value_error(problem):
    check_problem(problem, "cpu")


@pytest.fixture(scope="module")
def emulated_cuda():
    """Kernels run in the CPU emulation for the CUDA property test."""
    with emulated_kernels():
        yield


@settings(
    max_examples=CUDA_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(problem=training_problems(CUDA_MAX_ROWS, CUDA_MAX_FEATURES, CUDA_MAX_ROWS))
def test_emulated_cuda_backend_trains_or_raises_value_error(emulated_cuda, problem):
    on_cuda = check_problem(problem, "cuda")
    on_cpu = train_or_value_error(*problem[:3], dict(problem[3], device="cpu"))
    # Same outcome on both backends: both raise ValueError, or the same model bytes.
    assert (on_cuda is None) == (on_cpu is None)
    if on_cuda is not None:
        assert on_cuda.save_raw() == on_cpu.save_raw()


def test_all_zero_weights_and_overflowing_labels_are_value_errors():
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match="weights are zero"):
        gpuboost.train(
            {"device": "cpu"}, gpuboost.Dataset(X, label=np.ones(6), weight=np.zeros(6)), 2
        )
    # The weighted mean of labels 3 under weight 1e308 overflows: a clear error, not a
    # model whose every prediction is inf.
    for objective in ("reg:gamma", "reg:squarederror", "count:poisson"):
        with pytest.raises(ValueError, match="not finite"):
            gpuboost.train(
                {"device": "cpu", "objective": objective, "verbosity": 0},
                gpuboost.Dataset(X[:1], label=[3.0], weight=[1e308]),
                2,
            )


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize(
    "labels, weight, params",
    [
        (lambda y: y * 1e152, None, {}),  # labels: the children's sums overflow when squared
        (lambda y: y, 1e152, {}),  # weights
        (lambda y: y * 1e152, None, {"tree_method": "exact"}),
        (lambda y: y * 1e152, None, {"grow_policy": "lossguide", "max_leaves": 4}),
        # vector leaves: an output's sums (the levels in one call on the CPU)
        (
            lambda y: np.column_stack([y, y * 1e152]),
            None,
            {"multi_strategy": "multi_output_tree"},
        ),
    ],
)
def test_overflowing_split_gains_are_value_errors(device, labels, weight, params):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] > 0).astype(np.float64)
    dataset = gpuboost.Dataset(
        X, label=labels(y), weight=None if weight is None else np.full(2000, weight)
    )
    context = emulated_kernels() if device == "cuda" else contextlib.nullcontext()
    with context, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="split gains overflow float64.*scale them down"):
            gpuboost.train({"device": device, "verbosity": 0, **params}, dataset, 2)


# ---- weighted bin edges ----------------------------------------------------------
@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(1, 400),
    max_bin=st.sampled_from([2, 3, 7, 32, 255]),
    rounding=st.sampled_from([None, 0, 1]),
)
def test_integer_weights_give_the_bin_edges_of_repeated_rows(seed, n_rows, max_bin, rounding):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 3)) * 100
    if rounding is not None:
        X = np.round(X, rounding)  # ties
    X[rng.random(X.shape) < 0.1] = np.nan
    weight = rng.integers(0, 4, n_rows).astype(np.float64)
    weight[rng.integers(n_rows)] = 1.0
    weighted = BinMapper(max_bin=max_bin).fit(X, sample_weight=weight)
    repeated = BinMapper(max_bin=max_bin).fit(np.repeat(X, weight.astype(int), axis=0))
    unit = BinMapper(max_bin=max_bin).fit(X, sample_weight=np.ones(n_rows))
    plain = BinMapper(max_bin=max_bin).fit(X)
    for feature in range(X.shape[1]):
        np.testing.assert_array_equal(weighted.bin_edges_[feature], repeated.bin_edges_[feature])
        np.testing.assert_array_equal(unit.bin_edges_[feature], plain.bin_edges_[feature])


def test_zero_weight_rows_do_not_shape_the_bin_edges():
    X = np.array([[0.0], [1.0], [2.0], [100.0]])
    weight = np.array([1.0, 1.0, 1.0, 0.0])
    dataset = gpuboost.Dataset(X, label=np.zeros(4), weight=weight)
    np.testing.assert_array_equal(dataset.bin_mapper.bin_edges_[0], [0.5, 1.5])
    np.testing.assert_array_equal(
        gpuboost.Dataset(X, label=np.zeros(4)).bin_mapper.bin_edges_[0], [0.5, 1.5, 51.0]
    )
    with pytest.raises(ValueError, match="non-negative"):
        BinMapper().fit(X, sample_weight=-weight)
