"""Tests of the emulated device arrays (gpuboost.backends.emulation.device_array).

They must refuse what CuPy refuses (implicit host conversion, host arrays where
device arrays are needed, NumPy functions CuPy lacks) and otherwise compute
exactly what NumPy computes.
"""

import copy
import pickle
import weakref
from pathlib import Path

import numpy as np
import pytest

from gpuboost.backends.emulation import EmulatedModule
from gpuboost.backends.emulation.device_array import DeviceArray, is_device_array
from gpuboost.backends.emulation.device_array import namespace as xp
from gpuboost.core.array import get_array_module, to_numpy

#: The kernel includes the project's common.cuh.
KERNEL_INCLUDE = (f"-I{Path(__file__).resolve().parents[3] / 'cuda'}",)
KERNEL_SOURCE = r"""
#include "common.cuh"
extern "C" __global__ void scale(const double* values, double factor, int n, double* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = values[i] * factor;
}
"""


@pytest.fixture
def values():
    return np.array([3.0, -1.0, 2.5, 0.0, 7.0])


# ---- what may cross between host and device ---------------------------------------
def test_implicit_conversion_to_numpy_is_refused(values):
    device = xp.asarray(values)
    for convert in (
        np.asarray,
        np.array,
        lambda a: np.array([a[0], a[1]]),
        lambda a: values[a.astype(np.int64)],
        lambda a: np.int32(a[0]),
    ):
        with pytest.raises(TypeError, match="Implicit conversion"):
            convert(device)


def test_explicit_copies_and_scalar_conversions(values):
    device = xp.asarray(values)
    host = device.get()
    assert isinstance(host, np.ndarray) and not is_device_array(host)
    np.testing.assert_array_equal(host, values)
    host[0] = 99.0
    assert float(device[0]) == 3.0  # .get() copies
    np.testing.assert_array_equal(xp.asnumpy(device), values)
    np.testing.assert_array_equal(xp.asnumpy(values), values)  # host input passes through
    np.testing.assert_array_equal(to_numpy(device), values)
    assert float(device.sum()) == values.sum()
    assert int(device.argmax()) == 4 and bool(device[1] < 0)
    assert device[2].item() == 2.5 and device.tolist() == values.tolist()
    assert f"{device[2]:.2f}" == "2.50"
    assert len(device) == 5 and [float(v) for v in device] == values.tolist()


def test_host_memory_is_copied_on_transfer(values):
    device = xp.asarray(values)
    values[0] = -5.0
    assert float(device[0]) == 3.0
    assert xp.asarray(device) is device  # device to device: no copy


def test_integer_index_is_not_an_index():
    with pytest.raises(TypeError):
        range(xp.asarray(np.int64(3)))
    with pytest.raises(TypeError):
        [1, 2, 3][xp.arange(3)[1]]


def test_ufuncs_refuse_host_arrays_and_lists(values):
    device = xp.asarray(values)
    for operation in (
        lambda: device + values,
        lambda: values + device,
        lambda: np.add(device, values),
        lambda: xp.exp(values),
        lambda: xp.maximum(device, values),
        lambda: device == values,
        lambda: device + np.array(1.0),
    ):
        with pytest.raises(TypeError, match="Unsupported type"):
            operation()
    with pytest.raises(TypeError):
        xp.add(device, [1.0] * 5)
    # Scalars, NumPy scalars and (in comparisons) 0-d host arrays are fine.
    np.testing.assert_array_equal((device * np.float64(2.0) + 1).get(), values * 2 + 1)
    np.testing.assert_array_equal((device < np.array(2.0)).get(), values < 2.0)


def test_functions_refuse_host_arrays(values):
    device = xp.asarray(values)
    for call in (
        lambda: xp.concatenate([device, values]),
        lambda: xp.where(values > 0),
        lambda: xp.ascontiguousarray(values),
        lambda: xp.cumsum(values),
        lambda: np.concatenate([device, values]),
        lambda: xp.stack([device, values]),
    ):
        with pytest.raises(TypeError, match="Unsupported type"):
            call()


def test_assignment_rules(values):
    device = xp.zeros(5)
    device[1:3] = xp.asarray(values[:2])
    device[0] = np.float64(4.0)
    device[4] = np.array(6.0)  # 0-d host array: a scalar
    np.testing.assert_array_equal(device.get(), [4.0, 3.0, -1.0, 0.0, 6.0])
    with pytest.raises(ValueError, match="non-scalar"):
        device[1:3] = values[:2]
    with pytest.raises(ValueError, match="non-scalar"):
        device[:2] = [1.0, 2.0]
    # Advanced indices take host values (CuPy copies them).
    device[np.array([0, 2])] = np.array([8.0, 9.0])
    device[xp.asarray(np.array([False, True, False, False, False]))] = 7.0
    np.testing.assert_array_equal(device.get(), [8.0, 7.0, 9.0, 0.0, 6.0])


def test_indexing_accepts_host_and_device_indices(values):
    device = xp.asarray(values)
    np.testing.assert_array_equal(device[np.array([4, 0])].get(), values[[4, 0]])
    np.testing.assert_array_equal(device[[1, 2]].get(), values[[1, 2]])
    np.testing.assert_array_equal(device[device > 0].get(), values[values > 0])
    scalar = device[0]
    assert is_device_array(scalar) and scalar.shape == ()


def test_reductions_return_zero_dimensional_device_arrays(values):
    device = xp.asarray(values)
    for result in (
        device.sum(),
        xp.max(device),
        np.sum(device),
        xp.count_nonzero(device),
        xp.any(device > 5),
        device.argmax(),
    ):
        assert is_device_array(result) and result.shape == ()


# ---- the namespace ------------------------------------------------------------------
def test_numpy_functions_cupy_lacks_are_missing():
    with pytest.raises(AttributeError, match="CuPy lacks it"):
        xp.errstate
    with pytest.raises(AttributeError):
        xp.frobnicate
    with pytest.raises(TypeError):  # NumPy's dispatch finds no implementation
        np.block([xp.zeros(2)])


def test_sorts_are_stable_and_kind_is_restricted():
    keys = xp.asarray(np.array([2, 1, 2, 1, 0, 2] * 50))
    np.testing.assert_array_equal(xp.argsort(keys).get(), np.argsort(keys.get(), kind="stable"))
    np.testing.assert_array_equal(keys.argsort().get(), np.argsort(keys.get(), kind="stable"))
    with pytest.raises(ValueError, match="kind"):
        xp.argsort(keys, kind="quicksort")
    with pytest.raises(TypeError):
        keys.argsort(kind="stable")  # CuPy 13's method takes no kind


def test_lexsort_partition_and_searchsorted_follow_cupy():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, size=20), rng.integers(0, 3, size=20)
    keys = xp.stack([xp.asarray(a), xp.asarray(b)])
    np.testing.assert_array_equal(xp.lexsort(keys).get(), np.lexsort((a, b)))
    with pytest.raises(TypeError, match="2-D"):
        xp.lexsort((xp.asarray(a), xp.asarray(b)))
    values = xp.asarray(rng.normal(size=10))
    assert float(xp.partition(values, 3)[3]) == np.sort(values.get())[3]
    with pytest.raises(TypeError, match="Python int"):
        xp.partition(values, np.int64(3))
    edges = xp.asarray(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(
        xp.searchsorted(edges, xp.asarray(np.array([0.5, 2.0])), side="right").get(), [1, 3]
    )
    with pytest.raises(NotImplementedError, match="device arrays"):
        xp.searchsorted(edges, np.array([0.5]))


def test_ufunc_methods_within_cupy_limits():
    target = xp.zeros(4, dtype=np.float64)
    xp.add.at(target, xp.asarray(np.array([0, 0, 3])), 1.5)
    np.testing.assert_array_equal(target.get(), [3.0, 0.0, 0.0, 1.5])
    with pytest.raises(TypeError, match="int64"):
        xp.add.at(xp.zeros(4, dtype=np.int64), np.array([0]), 1)
    with pytest.raises(TypeError, match="indices"):
        xp.add.at(target, [0, 1], 1.0)
    with pytest.raises(NotImplementedError):
        xp.maximum.reduce(target)
    assert float(xp.add.reduce(target)) == 4.5
    with pytest.raises(AttributeError):
        xp.add.frobnicate


def test_in_place_operators_write_the_same_memory(values):
    device = xp.asarray(values)
    view = device[1:3]
    view *= 2
    device += 1
    np.testing.assert_array_equal(device.get(), [4.0, -1.0, 6.0, 1.0, 8.0])
    out = xp.empty(5)
    assert xp.multiply(device, 2.0, out=out) is out


def test_like_functions_accept_host_prototypes(values):
    like = xp.zeros_like(values)
    assert is_device_array(like) and like.shape == values.shape and like.dtype == values.dtype


def test_basic_arithmetic_equals_numpy_bit_for_bit():
    rng = np.random.default_rng(1)
    raw = rng.normal(scale=30.0, size=1000)
    device = xp.asarray(raw)
    expected = 1.0 / (1.0 + np.sqrt(raw * raw) * 0.5 - raw / 3.0)
    result = (1.0 / (1.0 + xp.sqrt(device * device) * 0.5 - device / 3.0)).get()
    np.testing.assert_array_equal(result.view(np.int64), expected.view(np.int64))


def _ulps(result, expected):
    return np.abs(result.view(np.int64) - expected.view(np.int64))


def test_transcendental_ufuncs_differ_from_numpy_in_the_last_bit_as_a_gpu_may():
    rng = np.random.default_rng(1)
    raw = rng.normal(scale=30.0, size=1000)
    for name in ("exp", "log", "log1p", "sin"):
        argument = np.abs(raw) if name.startswith("log") else raw
        result = getattr(xp, name)(xp.asarray(argument)).get()
        expected = getattr(np, name)(argument)
        ulps = _ulps(result, expected)
        assert ulps.max() == 1 and ulps.mean() > 0.9, name  # not NumPy's, within 1 ulp
    assert _ulps(xp.tanh(xp.asarray(raw / 30.0)).get(), np.tanh(raw / 30.0)).mean() > 0.9
    powered = (xp.asarray(np.abs(raw)) ** 1.5).get()
    assert _ulps(powered, np.abs(raw) ** 1.5).max() == 1
    out = xp.empty(1000)
    xp.exp(xp.asarray(raw), out=out)
    assert _ulps(out.get(), np.exp(raw)).max() == 1
    # What a GPU computes exactly stays exact: special values, zeros and integers.
    exact = np.array([0.0, 3.0, -np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(xp.exp2(xp.asarray(exact)).get(), np.exp2(exact))
    np.testing.assert_array_equal(xp.log(xp.asarray(np.ones(3))).get(), np.zeros(3))


def test_float_sums_add_in_another_order_integer_sums_are_exact():
    values = np.array([1.0, 2.0**-53, 2.0**-53])
    device = xp.asarray(values)
    # Left to right 1.0, right to left 1.0000000000000002.
    assert float(xp.sum(device)) != float(np.sum(values))
    assert float(device.sum()) == float(xp.sum(device)) == float(np.sum(values[::-1]))
    assert float(xp.mean(device)) == float(np.sum(values[::-1])) / 3
    assert float(xp.add.reduce(device)) == float(np.sum(values[::-1]))
    tenths = np.full(10, 0.1)
    running = xp.cumsum(xp.asarray(tenths)).get()
    assert not np.array_equal(running, np.cumsum(tenths))
    np.testing.assert_allclose(running, np.cumsum(tenths), rtol=1e-15)
    np.testing.assert_array_equal(xp.add.accumulate(xp.asarray(tenths)).get(), running)
    integers = np.arange(1000, dtype=np.int64)
    assert int(xp.sum(xp.asarray(integers))) == int(integers.sum())
    np.testing.assert_array_equal(xp.cumsum(xp.asarray(integers)).get(), np.cumsum(integers))
    # Exact float sums (small integers) are exact in every order.
    assert float(xp.sum(xp.asarray(np.ones(7)))) == 7.0
    weights = rng_values = np.random.default_rng(2).uniform(size=(4, 6))
    assert (
        _ulps(xp.asarray(weights).dot(xp.asarray(rng_values.T)).get(), weights @ rng_values.T).max()
        <= 1
    )


def test_array_protocols(values):
    device = xp.asarray(values)
    assert get_array_module(device) is xp and get_array_module(values) is np
    assert xp.get_array_module(device) is xp
    interface = device.__cuda_array_interface__
    assert interface["shape"] == (5,) and interface["typestr"] == "<f8"
    assert device.flags.c_contiguous and device.flags["C_CONTIGUOUS"]
    with pytest.raises(AttributeError):
        device.flags.writeable  # not a flag of cupy.ndarray
    assert weakref.ref(device)() is device
    for clone in (copy.deepcopy(device), pickle.loads(pickle.dumps(device))):
        np.testing.assert_array_equal(clone.get(), values)
    with pytest.raises(TypeError, match="casting"):
        device.astype(np.float32, casting="same_kind")
    assert device.astype(np.float64, copy=False) is device
    with pytest.raises(TypeError):
        hash(device)
    with pytest.raises(TypeError, match="wraps a numpy.ndarray"):
        DeviceArray([1.0])


# ---- kernels ----------------------------------------------------------------------
def test_kernels_of_device_modules_refuse_host_arrays(values):
    module = EmulatedModule(code=KERNEL_SOURCE, device_arrays_only=True, options=KERNEL_INCLUDE)
    kernel = module.get_function("scale")
    out = xp.empty(5)
    kernel((1,), (32,), (xp.asarray(values), np.float64(2.0), np.int32(5), out))
    np.testing.assert_array_equal(out.get(), values * 2.0)
    with pytest.raises(TypeError, match="host numpy.ndarray"):
        kernel((1,), (32,), (values, np.float64(2.0), np.int32(5), out))
    with pytest.raises(TypeError, match="NumPy scalar"):
        kernel((1,), (32,), (xp.asarray(values), xp.asarray(np.float64(2.0)), np.int32(5), out))
    # Modules of the emulation's own tests still take NumPy arrays.
    plain = EmulatedModule(code=KERNEL_SOURCE, options=KERNEL_INCLUDE).get_function("scale")
    host_out = np.empty(5)
    plain((1,), (32,), (values, np.float64(3.0), np.int32(5), host_out))
    np.testing.assert_array_equal(host_out, values * 3.0)


# ---- operation counts -------------------------------------------------------------
def test_count_operations_counts_launches_copies_and_syncs(values):
    from gpuboost.backends.emulation.device_array import OPERATION_KINDS, count_operations

    module = EmulatedModule(code=KERNEL_SOURCE, device_arrays_only=True, options=KERNEL_INCLUDE)
    kernel = module.get_function("scale")
    device = xp.asarray(values)  # not counted: outside the block
    with count_operations() as counts:
        out = xp.empty(5)  # allocation only
        kernel((1,), (32,), (device, np.float64(2.0), np.int32(5), out))  # kernel
        total = (out + 1.0).sum()  # 2 array ops
        view = out.reshape(5, 1)[1:3].ravel()  # views: nothing
        gathered = device[np.array([0, 3])]  # gather + index upload
        host = float(total)  # to_host (synchronizes)
        copy = xp.asnumpy(view)  # to_host
        xp.asarray(values)  # to_device
        device[device > 0.0]  # mask: a comparison and a gather, which synchronizes
        xp.flatnonzero(device)  # synchronizes
        xp.where(device > 0.0, device, 0.0)  # two array ops, no sync
    assert dict(counts) == {"kernel": 1, "array_op": 8, "to_device": 2, "to_host": 2, "sync": 4}
    assert tuple(counts) == OPERATION_KINDS
    assert host == float((values * 2 + 1).sum()) and copy.shape == (2,)
    assert gathered.shape == (2,)
    with count_operations() as outer:
        device.sum()
        with count_operations() as inner:
            device.max()
        device.min()
    assert (outer["array_op"], inner["array_op"]) == (2, 1)


def test_nan_semantics_are_cupys():
    """CuPy's ``sign(NaN)`` is 0, its ``maximum`` / ``minimum`` (and ``fmax`` / ``fmin`` of
    two NaN) return the canonical NaN (NumPy: NaN, and the NaN operand itself), and
    ``where`` copies bits in both, so code relying on NumPy's NaN behaviour fails under the
    emulation as on a GPU (issue 29)."""
    payload = np.array(0x7FF8000000000123, dtype=np.int64).view(np.float64)
    values = np.array([payload, -2.0, 0.0, 3.0])
    np.testing.assert_array_equal(xp.sign(xp.asarray(values)).get(), [0.0, -1.0, 0.0, 1.0])
    assert np.isnan(np.sign(values)[0])  # NumPy's
    for function in (xp.maximum, xp.minimum):
        result = function(xp.asarray(values), 1.0).get()
        assert result.view(np.int64)[0] == 0x7FF8000000000000  # canonical, not the payload
        assert np.isnan(result[0]) and not np.isnan(result[1:]).any()
    out = xp.empty(4)
    xp.sign(xp.asarray(values), out=out)
    assert out.get()[0] == 0.0
    for function in (xp.fmax, xp.fmin):  # one NaN: the other operand; two: canonical
        result = function(xp.asarray(values), xp.asarray([payload, 1.0, 1.0, 1.0])).get()
        assert result.view(np.int64)[0] == 0x7FF8000000000000
        assert not np.isnan(result[1:]).any()
        assert function(xp.asarray(values), 1.0).get()[0] == 1.0
    assert np.fmax(values, payload).view(np.int64)[0] == 0x7FF8000000000123  # NumPy's
    kept = xp.where(xp.asarray([True, False]), xp.asarray([payload, 0.0]), 1.0).get()
    assert kept.view(np.int64)[0] == 0x7FF8000000000123  # where copies bits, as CuPy
