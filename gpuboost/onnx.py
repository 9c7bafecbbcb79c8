"""ONNX for scikit-learn pipelines: :func:`register_skl2onnx`.

``Booster.to_onnx`` and the estimators' ``to_onnx`` write a model alone
(gpuboost.model.onnx_format). A scikit-learn ``Pipeline`` holding a gpuboost estimator
converts as a whole with skl2onnx once gpuboost's converters are registered::

    import gpuboost.onnx
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType

    gpuboost.onnx.register_skl2onnx()
    onx = convert_sklearn(pipeline, initial_types=[("input", FloatTensorType([None, n]))])

The converters emit the operator of ``ensemble_spec`` (the same as ``to_onnx``) on the
pipeline's float tensor: ``GBRegressor``, ``GBRFRegressor`` and ``GBRanker`` a
regressor (``variable``), ``GBClassifier``, ``GBRFClassifier`` and
``AdaBoostClassifier`` a classifier (``label``, ``probabilities``; skl2onnx's ``zipmap``
option as for its own classifiers). Needs skl2onnx (and onnx).
"""

from .model.onnx_format import ONNX_ML_DOMAIN, ONNX_ML_OPSET
from .sklearn import (
    AdaBoostClassifier,
    GBClassifier,
    GBRanker,
    GBRegressor,
    GBRFClassifier,
    GBRFRegressor,
)

__all__ = ["register_skl2onnx", "REGRESSORS", "CLASSIFIERS"]

#: Estimators converted to ``TreeEnsembleRegressor`` (and what follows it).
REGRESSORS = (GBRegressor, GBRFRegressor, GBRanker)
#: Estimators converted to ``TreeEnsembleClassifier``.
CLASSIFIERS = (GBClassifier, GBRFClassifier, AdaBoostClassifier)


def _spec(operator):
    estimator = operator.raw_operator
    labels = getattr(estimator, "classes_", None)
    return estimator.get_booster()._onnx_spec(None if labels is None else list(labels))


def _convert(scope, operator, container):
    """skl2onnx converter: the estimator's ensemble on the operator's input."""
    from onnx import TensorProto  # optional: skl2onnx brings onnx

    spec = _spec(operator)
    name = scope.get_unique_operator_name(spec["op_type"])
    inputs = [operator.inputs[0].full_name]
    if spec["op_type"] == "TreeEnsembleClassifier":
        outputs = [operator.outputs[0].full_name, operator.outputs[1].full_name]
        container.add_node(
            spec["op_type"],
            inputs,
            outputs,
            op_domain=ONNX_ML_DOMAIN,
            op_version=ONNX_ML_OPSET,
            name=name,
            **spec["attributes"],
        )
        return
    output = operator.outputs[0].full_name
    margins = output if spec["after"] is None else scope.get_unique_variable_name("margins")
    container.add_node(
        spec["op_type"],
        inputs,
        [margins],
        op_domain=ONNX_ML_DOMAIN,
        op_version=ONNX_ML_OPSET,
        name=name,
        **spec["attributes"],
    )
    if spec["after"] == "Exp":
        container.add_node("Exp", [margins], [output], name=scope.get_unique_operator_name("Exp"))
    elif spec["after"] == "TopK":
        k = scope.get_unique_variable_name("k")
        container.add_initializer(k, TensorProto.INT64, [1], [spec["n_outputs"]])
        container.add_node(
            "TopK",
            [margins, k],
            [output, scope.get_unique_variable_name("order")],
            axis=-1,
            largest=0,
            sorted=1,
            op_version=11,
            name=scope.get_unique_operator_name("TopK"),
        )


def _regressor_shape(operator):
    """``variable``: (n_rows, n_outputs), float."""
    from skl2onnx.common.data_types import FloatTensorType

    n_rows = operator.inputs[0].get_first_dimension()
    n_outputs = operator.raw_operator.get_booster().n_outputs
    operator.outputs[0].type = FloatTensorType([n_rows, n_outputs])


def register_skl2onnx():
    """Register gpuboost's estimators with skl2onnx (see the module docstring); idempotent.

    Raises
    ------
    ImportError
        skl2onnx is not installed.
    """
    try:
        from skl2onnx import update_registered_converter
        from skl2onnx.common.shape_calculator import calculate_linear_classifier_output_shapes
    except ImportError:
        raise ImportError("register_skl2onnx needs skl2onnx: pip install skl2onnx") from None
    for estimator in REGRESSORS:
        update_registered_converter(
            estimator, f"Gpuboost{estimator.__name__}", _regressor_shape, _convert
        )
    for estimator in CLASSIFIERS:
        update_registered_converter(
            estimator,
            f"Gpuboost{estimator.__name__}",
            calculate_linear_classifier_output_shapes,
            _convert,
            options={"nocl": [True, False], "zipmap": [True, False, "columns"]},
        )
