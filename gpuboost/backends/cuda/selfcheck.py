"""The CUDA backend verifies itself against the NumPy backend.

The CUDA backend must give the NumPy backend's results bit for bit (docs/DESIGN.md), and
CI proves it only under the CPU emulation of the kernels. So on the first CUDA training
of a process, :func:`verify` runs a small parity check on the real device -- every
primitive on generated inputs, then a few boosting rounds on a few thousand generated
rows, the model bytes compared -- which takes well under a second after the kernels
are compiled. On a mismatch or an exception, ``device='auto'`` warns once (naming the
step that differed and asking for a bug report with the output of ``gpuboost doctor``)
and trains on the CPU; ``device='cuda'`` raises :class:`gpuboost.errors.GpuSelfCheckError`.
``gpuboost doctor`` (gpuboost.doctor) runs the same checks with more configurations.

``GPUBOOST_SELFCHECK=0`` turns the check off; ``=1`` turns it on under the emulation too
(where it is off by default: the emulation is what CI already compares).

This module knows the backends only: the training it compares is done by a
``train_function`` passed in (:func:`gpuboost.train`).
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from ...core.gain import SplitParams
from ...data.dataset import Dataset
from ...errors import GpuOutOfMemoryError, GpuSelfCheckError
from ..numpy import NumpyBackend

__all__ = [
    "SELFCHECK_ENV_VAR",
    "CONFIGURATIONS",
    "QUICK_CONFIGURATIONS",
    "CheckResult",
    "self_check_data",
    "check_primitives",
    "check_training",
    "run_checks",
    "enabled",
    "verify",
    "first_model_difference",
    "reset",
]

#: Environment variable: "0" turns the self-check off, "1" on (also under the emulation).
SELFCHECK_ENV_VAR = "GPUBOOST_SELFCHECK"
#: Rows, features and boosting rounds of the generated training data.
SELFCHECK_ROWS = 4096
SELFCHECK_FEATURES = 8
SELFCHECK_ROUNDS = 3
#: Rows of the small eval set: a metric over thousands of rows can round a one-ulp
#: difference of its terms away (their errors cancel below half an ulp of the sum); over
#: three rows every term shows.
SELFCHECK_FEW_ROWS = 3
#: Seed of the generated data.
SELFCHECK_SEED = 2024
#: Quantile level of the segment-quantile check.
QUANTILE_ALPHA = 0.3
#: Whole trainings compared, by name. Those with ``eval_metric`` train with the training
#: set and a few of its rows (:data:`SELFCHECK_FEW_ROWS`) as eval sets and compare the
#: eval histories too; the exp / log objectives and metrics check that the device
#: computes them with strict_math and reproducible sums (docs/DESIGN.md,
#: "Platform-independent arithmetic"), not with CUDA's exp / log or CuPy's reductions.
CONFIGURATIONS: Dict[str, dict] = {
    "squarederror": {"max_depth": 4, "subsample": 0.8, "colsample_bytree": 0.8},
    "logistic_eval": {
        "objective": "binary:logistic",
        "max_depth": 3,
        "eval_metric": ["logloss", "auc", "error"],
    },
    "poisson_eval": {
        "objective": "count:poisson",
        "max_depth": 3,
        "eval_metric": ["poisson-nloglik", "rmse"],
    },
    "lossguide": {"grow_policy": "lossguide", "max_leaves": 15, "max_depth": 0, "max_bin": 63},
    "absoluteerror": {"objective": "reg:absoluteerror", "max_depth": 3},
    "approx": {"tree_method": "approx", "max_depth": 3, "max_bin": 31},
}
#: The configurations of the check at the first CUDA training.
QUICK_CONFIGURATIONS = ("squarederror", "logistic_eval")

#: (kernel mode, device ordinal) -> None (passed), the GpuSelfCheckError, or _RUNNING.
_STATE: dict = {}
_RUNNING = object()
_ABSENT = object()
#: Whether device='auto' has warned about a failed check in this process.
_WARNED = []


@dataclass
class CheckResult:
    """The outcome of one step of the self-check.

    Attributes
    ----------
    step : str
        What was compared (a primitive and its kernel file, or a training).
    passed : bool
    detail : str
        What differed, or the exception; empty when passed.
    seconds : float
    """

    step: str
    passed: bool
    detail: str
    seconds: float


def self_check_data(n_rows=SELFCHECK_ROWS, n_features=SELFCHECK_FEATURES, seed=SELFCHECK_SEED):
    """Generated regression data with the cases the kernels treat apart.

    Returns
    -------
    X : ndarray of shape (n_rows, n_features), float64
        Normal features; NaN in feature 1 (missing values), a constant feature 2, few
        distinct values in feature 3, more distinct values than bins elsewhere.
    y, weight : ndarray of shape (n_rows,), float64
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(n_rows) < 0.1, 1] = np.nan
    X[:, 2] = 1.5
    X[:, 3] = np.round(X[:, 3] * 2)
    y = (
        X[:, 0]
        + np.where(np.isnan(X[:, 1]), 1.0, np.sin(np.nan_to_num(X[:, 1])))
        + 0.5 * X[:, 3]
        + 0.1 * rng.normal(size=n_rows)
    )
    weight = rng.uniform(0.5, 2.0, size=n_rows)
    return X, y, weight


def _timed(step, compare):
    """Run ``compare() -> detail or None`` as one step; exceptions fail the step, except
    running out of memory (a ``MemoryError``: CuPy's and gpuboost's out-of-memory errors
    are), which says nothing of the device's results and propagates."""
    start = time.perf_counter()
    try:
        detail = compare()
    except MemoryError:
        raise
    except Exception as error:  # any other failure of the device is a failed check
        detail = f"raised {type(error).__name__}: {error}"
    return CheckResult(step, detail is None, detail or "", time.perf_counter() - start)


def _differs(name, expected, got):
    """None when two arrays are identical (bits, shape, dtype), else what differs."""
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.shape != got.shape or expected.dtype != got.dtype:
        return f"{name}: {got.dtype}{got.shape} instead of {expected.dtype}{expected.shape}"
    if expected.tobytes() == got.tobytes():
        return None
    flat_expected = np.ascontiguousarray(expected).reshape(-1)
    flat_got = np.ascontiguousarray(got).reshape(-1)
    element_bytes = flat_expected.view(np.uint8).reshape(flat_expected.size, -1)
    index = int(
        np.flatnonzero(
            (element_bytes != flat_got.view(np.uint8).reshape(element_bytes.shape)).any(axis=1)
        )[0]
    )
    position = np.unravel_index(index, expected.shape)
    return (
        f"{name} differs at {tuple(int(p) for p in position)}: "
        f"{flat_got[index]!r} instead of {flat_expected[index]!r}"
    )


def check_primitives(backend, train_function, n_rows=None):
    """Every primitive of ``backend`` against the NumPy backend's, on generated inputs.

    Parameters
    ----------
    backend : CudaBackend
    train_function : callable
        :func:`gpuboost.train`, for the trees the prediction kernels traverse (grown
        on the CPU).
    n_rows : int, optional
        Rows of the generated data; default :data:`SELFCHECK_ROWS`.

    Returns
    -------
    list of CheckResult
        One per primitive, in the order of a boosting round; they end at the first
        failure (later steps use its results).
    """
    n_rows = SELFCHECK_ROWS if n_rows is None else n_rows
    reference = NumpyBackend()
    X, y, weight = self_check_data(n_rows)
    dataset = Dataset(X, label=y, weight=weight, max_bin=63)
    host = backend.to_host
    state = {}

    def binning():
        state["data"] = backend.prepare(dataset)
        state["reference"] = reference.prepare(dataset)
        return _differs(
            "bins", dataset.X_binned, host(backend.bin_features(dataset.data, dataset.bin_mapper))
        )

    def quantize():
        gradients = (y - y.mean()) * weight
        quantized, scale = backend.quantize(backend.to_device(gradients))
        expected, expected_scale = reference.quantize(gradients)
        hessians, scale_h = reference.quantize(weight)
        state.update(
            gradients=(expected, quantized),
            hessians=(hessians, backend.to_device(hessians)),
            scales=(expected_scale, scale_h),
        )
        if scale != expected_scale:
            return f"scale {scale!r} instead of {expected_scale!r}"
        return _differs("quantized gradients", expected, host(quantized))

    third = n_rows // 3
    begins, ends = [0, third], [third, n_rows]

    def histograms():
        indices = np.arange(n_rows, dtype=np.int32)
        state["indices"] = (indices, backend.to_device(indices))
        built = [
            b.build_histograms(data, g, h, i, begins, ends)
            for b, data, g, h, i in (
                (
                    reference,
                    state["reference"],
                    state["gradients"][0],
                    state["hessians"][0],
                    indices,
                ),
                (
                    backend,
                    state["data"],
                    state["gradients"][1],
                    state["hessians"][1],
                    state["indices"][1],
                ),
            )
        ]
        state["histograms"] = built
        return _differs("histograms", built[0], host(built[1]))

    def split_scan():
        records = [
            b.find_best_splits(data, hist, *state["scales"], SplitParams(), None)
            for b, data, hist in (
                (reference, state["reference"], state["histograms"][0]),
                (backend, state["data"], state["histograms"][1]),
            )
        ]
        state["records"] = records[0]
        return _differs("split records", records[0].view(np.uint8), records[1].view(np.uint8))

    def vector_split_scan():
        # Three outputs: the gradients, their negation halved, the gradients times the
        # weights (hessians the weights); every output's histograms, then the scan of
        # the gain summed over the outputs.
        g, h = state["gradients"][0], state["hessians"][0]
        pairs = np.column_stack([g, h, -g // 2, h, g, 2 * h]).astype(np.int32)
        scale_g, scale_h = state["scales"]
        scales = [(scale_g, scale_h), (scale_g, scale_h), (scale_g, 2 * scale_h)]
        indices = state["indices"]
        tables = [
            b.find_best_vector_splits(
                data,
                b.build_output_histograms(data, b.to_device(pairs), rows, begins, ends),
                scales,
                SplitParams(),
                None,
            )
            for b, data, rows in (
                (reference, state["reference"], indices[0]),
                (backend, state["data"], indices[1]),
            )
        ]
        for name, expected in tables[0].items():
            difference = _differs(f"vector-leaf split table ({name})", expected, tables[1][name])
            if difference:
                return difference
        return None

    def partition():
        records = state["records"]
        if (records["feature"] < 0).any():
            return "the generated data gave a node without a split"
        arguments = (
            begins,
            ends,
            records["feature"].tolist(),
            records["bin"].tolist(),
            records["default_left"].tolist(),
        )
        expected = state["indices"][0].copy()
        got = backend.to_device(expected)
        reference.partition(state["reference"], expected, *arguments)
        backend.partition(state["data"], got, *arguments)
        state["partitioned"] = (expected, got)
        return _differs("sample indices", expected, host(got))

    def leaf_values():
        values = [0.25, -1.5]
        expected = np.zeros((n_rows, 1))
        got = backend.to_device(expected)
        reference.add_leaf_values(expected, 0, state["partitioned"][0], begins, ends, values)
        backend.add_leaf_values(got, 0, state["partitioned"][1], begins, ends, values)
        # The last level's update: the unpartitioned rows routed by the same splits.
        records = state["records"]
        splits = (
            begins,
            ends,
            records["left_count"].tolist(),
            records["feature"].tolist(),
            records["bin"].tolist(),
            records["default_left"].tolist(),
            [0.5, -0.75],
            [2.0, 1.25],
        )
        routed = np.zeros((n_rows, 1))
        routed_got = backend.to_device(routed)
        indices = state["indices"]
        reference.add_split_leaf_values(state["reference"], routed, 0, indices[0].copy(), *splits)
        backend.add_split_leaf_values(state["data"], routed_got, 0, indices[1], *splits)
        return _differs("margins", expected, host(got)) or _differs(
            "routed margins", routed, host(routed_got)
        )

    def segment_reductions():
        values = y * weight
        sums = [
            b.segment_sums(v, i, begins, ends)
            for b, v, i in (
                (reference, values, state["partitioned"][0]),
                (backend, backend.to_device(values), state["partitioned"][1]),
            )
        ]
        quantiles = [
            b.segment_weighted_quantile(v, w, i, begins, ends, QUANTILE_ALPHA)
            for b, v, w, i in (
                (reference, y, weight, state["partitioned"][0]),
                (
                    backend,
                    backend.to_device(y),
                    backend.to_device(weight),
                    state["partitioned"][1],
                ),
            )
        ]
        return _differs("segment sums", *sums) or _differs("segment quantiles", *quantiles)

    def prediction():
        model = train_function(
            {"device": "cpu", "max_depth": 4, "objective": "multi:softprob", "num_class": 3},
            Dataset(X, label=np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(float)),
            2,
            verbose_eval=False,
        )
        outputs = [index % 3 for index in range(len(model.trees))]
        margins = np.zeros((n_rows, 3))
        expected = reference.predict_forest_raw(
            reference.prepare_features(X), model.trees, outputs, margins.copy()
        )
        features = backend.prepare_features(X)
        got = backend.predict_forest_raw(features, model.trees, outputs, backend.to_device(margins))
        leaves = reference.predict_forest_leaves(reference.prepare_features(X), model.trees)
        return _differs("forest margins", expected, host(got)) or _differs(
            "leaf indices", leaves, host(backend.predict_forest_leaves(features, model.trees))
        )

    steps = [
        ("binning (cuda/binning.cu)", binning),
        ("quantization", quantize),
        ("histograms (cuda/histogram.cu)", histograms),
        ("split scan (cuda/split_scan.cu)", split_scan),
        ("vector-leaf split scan (cuda/vector_split.cu)", vector_split_scan),
        ("row partition (cuda/partition.cu)", partition),
        ("leaf values (cuda/leaf.cu add_leaf_values, add_split_leaf_values)", leaf_values),
        ("leaf refits (cuda/segment_reduce.cu, cuda/leaf.cu)", segment_reductions),
        ("prediction (cuda/predict.cu)", prediction),
    ]
    results = []
    for step, compare in steps:
        results.append(_timed(step, compare))
        if not results[-1].passed:
            break  # the later steps use this one's results
    return results


def first_model_difference(model_a, model_b):
    """None when two Boosters save to the same bytes, else where they first differ
    (``"tree 3, array 'value'"``, the number of trees, or the fields outside the trees)."""
    if model_a.save_raw() == model_b.save_raw():
        return None
    if len(model_a.trees) != len(model_b.trees):
        return f"the number of trees ({len(model_a.trees)} vs {len(model_b.trees)})"
    for index, (tree_a, tree_b) in enumerate(zip(model_a.trees, model_b.trees)):
        arrays_b = tree_b.to_dict()
        for name, values in tree_a.to_dict().items():
            if values != arrays_b[name]:
                return f"tree {index}, array {name!r}"
    return "model fields outside the trees"


def check_training(backend, train_function, name, n_rows=None):
    """Train configuration ``name`` of :data:`CONFIGURATIONS` on the CPU and on
    ``backend``; the model files and predictions must be identical.

    Returns
    -------
    CheckResult
    """
    X, y, weight = self_check_data(SELFCHECK_ROWS if n_rows is None else n_rows)
    device = f"cuda:{backend.device_ordinal}"
    params = CONFIGURATIONS[name]
    objective = params.get("objective", "")
    if objective.startswith("binary:"):
        y = (y > np.median(y)).astype(np.float64)
    elif objective == "count:poisson":
        y = np.floor(np.abs(y) * 2.0)

    # The first row of each label and the first row: both classes of a binary label.
    few = np.unique([int(np.argmin(y)), int(np.argmax(y)), 0])[:SELFCHECK_FEW_ROWS]

    def compare():
        models, histories = [], []
        for on in ("cpu", device):
            dtrain = Dataset(X, label=y, weight=weight)
            dfew = Dataset(X[few], label=y[few], weight=weight[few])
            history = {}
            models.append(
                train_function(
                    dict(params, device=on, seed=SELFCHECK_SEED),
                    dtrain,
                    SELFCHECK_ROUNDS,
                    evals=[(dtrain, "train"), (dfew, "few")] if "eval_metric" in params else (),
                    evals_result=history,
                    verbose_eval=False,
                )
            )
            histories.append(history)
        where = first_model_difference(*models)
        if where is not None:
            return f"the models differ: {where}"
        if histories[0] != histories[1]:
            return f"the eval histories differ: {histories[0]} on the CPU, {histories[1]}"
        return _differs("predictions", models[0].predict(X), models[1].predict(X))

    return _timed(f"training {name!r}", compare)


def run_checks(
    backend,
    train_function: Callable,
    configurations: Sequence[str] = QUICK_CONFIGURATIONS,
    n_rows: Optional[int] = None,
) -> List[CheckResult]:
    """The primitives, then the whole trainings ``configurations`` (see the module
    docstring); stops at the first failure. Never raises for a failed check."""
    with _checking(_key(backend)):  # its own CUDA trainings do not check again
        results = check_primitives(backend, train_function, n_rows)
        if all(result.passed for result in results):
            for name in configurations:
                results.append(check_training(backend, train_function, name, n_rows))
                if not results[-1].passed:
                    break
    return results


def _key(backend):
    return (backend.launcher.mode, backend.device_ordinal)


@contextlib.contextmanager
def _checking(key):
    """Mark ``key``'s check as running (:func:`verify` returns at once meanwhile)."""
    previous = _STATE.get(key, _ABSENT)
    _STATE[key] = _RUNNING
    try:
        yield
    finally:
        if previous is _ABSENT:
            del _STATE[key]
        else:
            _STATE[key] = previous


def enabled(backend):
    """Whether the first CUDA training checks ``backend`` (see :data:`SELFCHECK_ENV_VAR`)."""
    setting = os.environ.get(SELFCHECK_ENV_VAR)
    if setting in ("0", "1"):
        return setting == "1"
    return not backend.emulated


def reset():
    """Forget the outcome of every check of this process (the next training checks again)."""
    _STATE.clear()
    _WARNED.clear()


def verify(backend, train_function):
    """Check ``backend`` once per process (:func:`run_checks` with the quick
    configurations); a no-op while a check runs (its own trainings) or once passed.

    Raises
    ------
    GpuSelfCheckError
        The check failed (now or earlier in the process), naming the step.
    GpuOutOfMemoryError
        The device ran out of memory during the check (other processes' memory, a small
        MIG slice): nothing is concluded or remembered, the memory the check took is
        freed, and the next CUDA training checks again.
    """
    key = _key(backend)
    if key not in _STATE:
        try:
            with backend.guard("running the first-use self-check against the CPU"):
                results = run_checks(backend, train_function)
        except GpuOutOfMemoryError as error:
            raise GpuOutOfMemoryError(
                f"The first-use self-check (a small training on the CPU and on the GPU, "
                f"compared) ran out of GPU memory: {error} Nothing was concluded about the "
                f"GPU and the next CUDA training checks again; set {SELFCHECK_ENV_VAR}=0 to "
                f"skip the check.",
                action=error.action,
                requested_bytes=error.requested_bytes,
                bytes_per_row=error.bytes_per_row,
                data_shape=error.data_shape,
            ) from error
        failed = [result for result in results if not result.passed]
        _STATE[key] = (
            GpuSelfCheckError(failed[0].step, failed[0].detail, backend.device_ordinal)
            if failed
            else None
        )
    outcome = _STATE[key]
    if outcome is not None and outcome is not _RUNNING:
        raise outcome


def warn_once(error):
    """Warn (once per process) that ``device='auto'`` trains on the CPU after ``error``."""
    if _WARNED:
        return
    _WARNED.append(True)
    warnings.warn(
        f"{error} device='auto' trains on the CPU instead. Set {SELFCHECK_ENV_VAR}=0 to skip "
        f"the check.",
        RuntimeWarning,
        stacklevel=3,
    )
