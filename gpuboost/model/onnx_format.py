"""ONNX export: a model as an ``ai.onnx.ml`` tree ensemble that ONNX Runtime (and every
ONNX serving stack: Triton, a C++ service) predicts with.

Like :mod:`gpuboost.model.xgboost_format` this module knows trees and parameters, not the
Booster: :func:`ensemble_spec` takes the trees as prediction adds them (DART's already
weighted, ``Booster._prediction_trees``), the output each adds to, the base margins and a
divisor of the summed margins (AdaBoost's SAMME scale, else 1). It needs the ``onnx``
package (``pip install onnx``; optional, imported when a model is exported).

The graph: input ``input``, float32 (n_rows, n_features), NaN missing; then

============================  ==========================================================
objective                      graph (outputs)
============================  ==========================================================
regression, ranking, one       ``TreeEnsembleRegressor`` -> ``variable`` (n_rows, 1)
quantile / expectile level
several levels                 ``TreeEnsembleRegressor`` -> ``TopK`` ascending: the
                               rearranged levels -> ``variable`` (n_rows, n_levels)
log link (``count:poisson``,   ``TreeEnsembleRegressor`` -> ``Exp`` -> ``variable``
``reg:gamma``, ``reg:tweedie``,
``survival:cox``, ``survival:aft``)
``binary:logistic``            ``TreeEnsembleClassifier``, ``LOGISTIC`` ->
(``binary:exponential``: the   ``label`` (n_rows,), ``probabilities`` (n_rows, 2)
margins doubled, exactly)
``multi:softprob`` /           ``TreeEnsembleClassifier``, ``SOFTMAX`` -> ``label``,
``multi:softmax``              ``probabilities`` (n_rows, n_classes)
============================  ==========================================================

Splits: gpuboost sends ``x <= t`` left; the export writes ``BRANCH_LEQ`` with the float32
``f`` = the largest float32 ``<= t``, so every float32 input takes the same branch
(``x <= t`` iff ``x <= f``); missing values follow ``default_left``
(``nodes_missing_value_tracks_true``). Leaf values and base margins are rounded to
float32 and summed by the runtime in float, so predictions equal gpuboost's to float32
rounding. Categorical splits and custom objectives are refused with the reason.
"""

import numpy as np

__all__ = [
    "ensemble_spec",
    "ensemble_to_onnx",
    "ONNX_ML_DOMAIN",
    "ONNX_ML_OPSET",
    "ONNX_OPSET",
    "LOG_LINK_OBJECTIVES",
]

#: Opsets of the graph: the default domain (TopK with ``largest``, Exp) and ai.onnx.ml.
ONNX_OPSET = 17
ONNX_ML_OPSET = 3
ONNX_ML_DOMAIN = "ai.onnx.ml"
#: Objectives whose predictions are ``exp(margin)``.
LOG_LINK_OBJECTIVES = (
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
    "survival:cox",
    "survival:aft",
)
#: Objectives whose predictions are their margins.
IDENTITY_OBJECTIVES = (
    "reg:squarederror",
    "reg:absoluteerror",
    "reg:huber",
    "reg:quantile",
    "reg:expectileerror",
    "rank:ndcg",
    "rank:map",
    "rank:pairwise",
)
BINARY_OBJECTIVES = ("binary:logistic", "binary:exponential")
MULTICLASS_OBJECTIVES = ("multi:softprob", "multi:softmax")


def onnx_threshold(threshold):
    """The largest float32 ``f <= threshold`` (``x <= threshold`` iff ``x <= f`` for every
    float32 ``x``)."""
    with np.errstate(over="ignore"):  # beyond float32: +-inf, then stepped back below
        f = np.float32(threshold)
    if float(f) > threshold:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def _check_exportable(objective, trees):
    if not isinstance(objective, str) or objective not in (
        IDENTITY_OBJECTIVES + LOG_LINK_OBJECTIVES + BINARY_OBJECTIVES + MULTICLASS_OBJECTIVES
    ):
        raise ValueError(
            f"Objective {objective!r} has no ONNX export: its link is not known to "
            f"gpuboost (export the margins yourself with predict(output_margin=True))."
        )
    if any(tree.has_categorical for tree in trees):
        raise ValueError(
            "The model has categorical splits: ai.onnx.ml's TreeEnsembleRegressor / "
            "Classifier (opset 3) have no set-membership branch. Encode the categories "
            "as numbers to export it."
        )


def _node_attributes(trees, outputs, scale):
    """The ensemble's per-node and per-leaf attribute lists (``scale`` multiplies every
    leaf value: the SAMME divisor's inverse, or 2 for ``binary:exponential``)."""
    nodes = {
        "nodes_treeids": [],
        "nodes_nodeids": [],
        "nodes_featureids": [],
        "nodes_values": [],
        "nodes_modes": [],
        "nodes_truenodeids": [],
        "nodes_falsenodeids": [],
        "nodes_missing_value_tracks_true": [],
    }
    leaves = {"treeids": [], "nodeids": [], "ids": [], "weights": []}
    for tree_id, (tree, output) in enumerate(zip(trees, outputs)):
        for node in range(tree.n_nodes):
            leaf = tree.feature[node] < 0
            nodes["nodes_treeids"].append(tree_id)
            nodes["nodes_nodeids"].append(node)
            nodes["nodes_featureids"].append(0 if leaf else int(tree.feature[node]))
            nodes["nodes_values"].append(0.0 if leaf else onnx_threshold(tree.threshold[node]))
            nodes["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            nodes["nodes_truenodeids"].append(0 if leaf else int(tree.left_child[node]))
            nodes["nodes_falsenodeids"].append(0 if leaf else int(tree.right_child[node]))
            nodes["nodes_missing_value_tracks_true"].append(
                0 if leaf else int(bool(tree.default_left[node]))
            )
            if leaf:
                leaves["treeids"].append(tree_id)
                leaves["nodeids"].append(node)
                leaves["ids"].append(int(output))
                leaves["weights"].append(float(tree.value[node]) * scale)
    return nodes, leaves


def ensemble_spec(
    objective, n_outputs, base_margin, trees, outputs, divisor=1.0, labels=None, n_targets=1
):
    """The ensemble's ONNX operator and what follows it (see the module docstring), for
    :func:`ensemble_to_onnx` and the skl2onnx converters (gpuboost.onnx).

    Parameters
    ----------
    objective : str
        The objective's name (its link decides the graph).
    n_outputs : int
    base_margin : sequence of float, length n_outputs
    trees : list of Tree
        As prediction adds them (DART's weighted).
    outputs : list of int
        The output each tree adds to.
    divisor : float
        The summed margins are divided by it before the link (AdaBoost's SAMME scale).
    labels : sequence of int or str, optional
        A classifier's class labels (default ``0 .. n_classes - 1``).
    n_targets : int
        Targets (label columns, ``num_target``): above 1, each output is its target's
        margin, its link applied on its own (a regressor; ``binary:logistic``'s
        probabilities by the LOGISTIC post-transform), never sorted as levels are.

    Returns
    -------
    dict
        ``op_type`` ('TreeEnsembleRegressor' or 'TreeEnsembleClassifier'),
        ``attributes`` (of the ai.onnx.ml operator), ``after`` (None, 'Exp' or 'TopK':
        applied to the regressor's output), ``n_outputs``.

    Raises
    ------
    ValueError
        Categorical splits, an objective without a known link.
    """
    _check_exportable(objective, trees)
    scale = 2.0 / divisor if objective == "binary:exponential" else 1.0 / divisor
    nodes, leaves = _node_attributes(trees, outputs, scale)
    base = [float(m) * scale for m in base_margin]
    if objective in BINARY_OBJECTIVES + MULTICLASS_OBJECTIVES and n_targets == 1:
        n_classes = 2 if n_outputs == 1 else n_outputs
        labels = list(range(n_classes)) if labels is None else list(labels)
        if all(
            isinstance(v, (int, float, np.integer, np.floating)) and float(v).is_integer()
            for v in labels
        ):
            label_attribute = {"classlabels_int64s": [int(v) for v in labels]}
        else:
            label_attribute = {"classlabels_strings": [str(v) for v in labels]}
        attributes = dict(
            label_attribute,
            class_treeids=leaves["treeids"],
            class_nodeids=leaves["nodeids"],
            class_ids=leaves["ids"],
            class_weights=leaves["weights"],
            base_values=base,
            post_transform="LOGISTIC" if n_outputs == 1 else "SOFTMAX",
            **nodes,
        )
        return {
            "op_type": "TreeEnsembleClassifier",
            "attributes": attributes,
            "after": None,
            "n_outputs": n_classes,
        }
    attributes = dict(
        n_targets=n_outputs,
        target_treeids=leaves["treeids"],
        target_nodeids=leaves["nodeids"],
        target_ids=leaves["ids"],
        target_weights=leaves["weights"],
        base_values=base,
        aggregate_function="SUM",
        post_transform="LOGISTIC" if objective in BINARY_OBJECTIVES else "NONE",
        **nodes,
    )
    levels = n_outputs > 1 and n_targets == 1  # several levels: rearranged
    after = "Exp" if objective in LOG_LINK_OBJECTIVES else "TopK" if levels else None
    return {
        "op_type": "TreeEnsembleRegressor",
        "attributes": attributes,
        "after": after,
        "n_outputs": n_outputs,
    }


def ensemble_to_onnx(spec, n_features):
    """The model of :func:`ensemble_spec` as ONNX bytes (a serialized ``ModelProto``:
    input ``input``; outputs ``variable``, or ``label`` and ``probabilities``).

    Raises
    ------
    ImportError
        The ``onnx`` package is not installed.
    """
    try:
        import onnx  # optional: only the export needs it
        from onnx import TensorProto, helper
    except ImportError:
        raise ImportError("to_onnx needs the onnx package: pip install onnx") from None
    features = helper.make_tensor_value_info("input", TensorProto.FLOAT, [None, n_features])
    n_outputs = spec["n_outputs"]
    if spec["op_type"] == "TreeEnsembleClassifier":
        graph_nodes = [
            helper.make_node(
                spec["op_type"],
                ["input"],
                ["label", "probabilities"],
                domain=ONNX_ML_DOMAIN,
                **spec["attributes"],
            )
        ]
        label_type = (
            TensorProto.INT64 if "classlabels_int64s" in spec["attributes"] else TensorProto.STRING
        )
        graph_outputs = [
            helper.make_tensor_value_info("label", label_type, [None]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, n_outputs]),
        ]
    else:
        margins = "variable" if spec["after"] is None else "margins"
        graph_nodes = [
            helper.make_node(
                spec["op_type"], ["input"], [margins], domain=ONNX_ML_DOMAIN, **spec["attributes"]
            )
        ]
        if spec["after"] == "Exp":
            graph_nodes.append(helper.make_node("Exp", [margins], ["variable"]))
        elif spec["after"] == "TopK":  # several levels: rearranged, as gpuboost predicts
            k = helper.make_tensor("k", TensorProto.INT64, [1], [n_outputs])
            graph_nodes.append(helper.make_node("Constant", [], ["k"], value=k))
            graph_nodes.append(
                helper.make_node(
                    "TopK", [margins, "k"], ["variable", "order"], axis=-1, largest=0, sorted=1
                )
            )
        graph_outputs = [
            helper.make_tensor_value_info("variable", TensorProto.FLOAT, [None, n_outputs])
        ]
    graph = helper.make_graph(graph_nodes, "gpuboost", [features], graph_outputs)
    model = helper.make_model(
        graph,
        producer_name="gpuboost",
        opset_imports=[
            helper.make_opsetid("", ONNX_OPSET),
            helper.make_opsetid(ONNX_ML_DOMAIN, ONNX_ML_OPSET),
        ],
    )
    model.ir_version = min(model.ir_version, 9)  # runtimes of 2024 on read it
    onnx.checker.check_model(model)
    return model.SerializeToString()
