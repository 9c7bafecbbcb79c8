"""CustomObjective (gpuboost.objectives.custom): a user callable's gradients."""

import numpy as np
import pytest

from gpuboost.core.dtypes import Y_DTYPE
from gpuboost.objectives import CustomObjective, get_objective


def squared_error_func(raw, dataset):
    labels = dataset["label"]
    return raw - labels, np.ones_like(raw)


def test_custom_objective_passes_margins_and_dataset():
    dataset = {"label": np.array([1.0, 2.0, 3.0])}
    seen = []

    def func(raw, data):
        seen.append((raw, data))
        return squared_error_func(raw, data)

    objective = get_objective(func, {})
    assert isinstance(objective, CustomObjective)
    raw = np.array([0.0, 0.0, 1.0])
    weight = np.array([5.0, 5.0, 5.0])
    grad, hess = objective.gradients(np, dataset["label"], raw, weight, dataset=dataset)
    assert seen[0][1] is dataset
    np.testing.assert_array_equal(seen[0][0], raw)
    # Weights are not applied to custom gradients (XGBoost semantics).
    np.testing.assert_array_equal(grad, [-1.0, -2.0, -2.0])
    np.testing.assert_array_equal(hess, [1.0, 1.0, 1.0])
    assert grad.dtype == Y_DTYPE
    np.testing.assert_array_equal(objective.output(np, raw), raw)
    np.testing.assert_array_equal(objective.base_margin(raw, None), [0.0])


def test_custom_objective_multiclass_flat_result_is_reshaped():
    n, k = 3, 2
    flat = np.arange(n * k, dtype=np.int64)

    def func(raw, dataset):
        return flat, flat.astype(np.float32) + 1

    objective = get_objective(func, {"num_class": k})
    assert objective.n_outputs() == k
    grad, hess = objective.gradients(np, np.zeros(n), np.zeros((n, k)), None)
    np.testing.assert_array_equal(grad, flat.reshape(n, k))
    np.testing.assert_array_equal(hess, flat.reshape(n, k) + 1)
    assert grad.dtype == Y_DTYPE and hess.dtype == Y_DTYPE


@pytest.mark.parametrize(
    "result, message",
    [
        ((np.zeros(3), np.ones(4)), "hess of shape"),
        ((np.zeros((3, 1)), np.ones(3)), "grad of shape"),
        ((np.array([0.0, np.nan, 0.0]), np.ones(3)), "grad with NaN"),
        ((np.zeros(3), np.array([1.0, np.inf, 1.0])), "hess with NaN or infinite"),
        ((np.array(["a", "b", "c"]), np.ones(3)), "float64"),
        ((np.zeros(3, dtype=complex), np.ones(3)), "complex"),
        (np.zeros(3), "pair"),
        ((np.zeros(3),), "pair"),
        ((np.ones(3), -np.ones(3)), "hessians that are all <= 0"),
        ((np.ones(3), np.zeros(3)), "hessians that are all <= 0"),
    ],
)
def test_custom_objective_validates_result(result, message):
    objective = CustomObjective(lambda raw, dataset: result)
    with pytest.raises(ValueError, match=message):
        objective.gradients(np, np.zeros(3), np.zeros(3), None)


def test_custom_objective_multiclass_rejects_wrong_flat_size():
    objective = CustomObjective(lambda raw, dataset: (np.zeros(5), np.ones(6)), n_outputs=2)
    with pytest.raises(ValueError, match=r"grad of shape \(5,\)"):
        objective.gradients(np, np.zeros(3), np.zeros((3, 2)), None)


def test_custom_objective_rejects_an_output_without_positive_hessians():
    hess = np.ones((3, 2))
    hess[:, 1] = -1.0
    objective = CustomObjective(lambda raw, dataset: (np.zeros((3, 2)), hess), n_outputs=2)
    with pytest.raises(ValueError, match=r"all <= 0 \(output 1\)"):
        objective.gradients(np, np.zeros(3), np.zeros((3, 2)), None)
    mixed = np.array([1.0, -1.0, 0.0])  # some positive hessians: accepted (as XGBoost)
    objective = CustomObjective(lambda raw, dataset: (np.zeros(3), mixed))
    objective.gradients(np, np.zeros(3), np.zeros(3), None)
