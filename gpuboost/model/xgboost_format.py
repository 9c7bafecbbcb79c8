"""XGBoost's JSON model format <-> a gpuboost model state (export and import).

Like :mod:`gpuboost.model.model_io` this module knows the format and nothing of the
Booster: :func:`state_to_xgboost_json` takes a model *state* (the Booster's
constructor arguments) and :func:`state_from_xgboost_json` returns one. It never
imports xgboost: the file it writes is read by ``xgboost.Booster(model_file=...)``,
``treelite.frontend.load_xgboost_model`` and ``shap.TreeExplainer`` (through
xgboost), and it reads files xgboost (1.x to 3.x, JSON) wrote.

Thresholds (the exact rule)
---------------------------
gpuboost sends ``x <= t`` left, with ``x`` and ``t`` float64; XGBoost sends
``x < t'`` left, with ``x`` converted to float32 and ``t'`` a float32. For every
float32 ``x`` (finite or infinite; NaN is missing in both)::

    x <= t  <=>  x <= f  <=>  x < nextafter32(f, +inf)

where ``f`` is the largest float32 ``<= t`` (``t`` rounded toward -inf). So the export
writes ``t' = nextafter32(f, +inf)`` (:func:`xgboost_threshold`), and the import reads
``t = nextafter32(t', -inf)`` (:func:`gpuboost_threshold`, as float64): on float32
inputs both libraries send every row to the same leaf. On float64 inputs that are
not float32 values XGBoost rounds ``x`` first, so a row within a float32 rounding of a
threshold may go the other way. A threshold ``t >= FLT_MAX`` (every finite float32
goes left, +inf right) has no finite ``t'`` and is refused.

Values
------
XGBoost stores leaf values, covers, gains and ``base_score`` as float32 and sums the
trees in float32, so its margins equal gpuboost's to float32 rounding (about 1e-7
relative per tree), not bit for bit. ``base_score`` is stored in output space
(a probability for ``binary:logistic``, a mean for the log link) and mapped back to a
margin by XGBoost, except for the multiclass objectives, whose ``base_score`` is the
vector of margins (XGBoost >= 3.1).

Objectives: ``reg:squarederror``, ``reg:absoluteerror``, ``reg:quantile``
(``reg:quantileerror``), ``reg:huber`` (``reg:pseudohubererror``: the same identity
link, so the same predictions), ``binary:logistic``, ``multi:softprob``,
``multi:softmax``, ``count:poisson``, ``reg:gamma``, ``reg:tweedie``, ``rank:ndcg``,
``rank:map``, ``rank:pairwise``. Not expressible: AdaBoost (SAMME scores divided by
the tree weights), ``binary:exponential`` and custom objectives (ValueError).

Categorical splits
------------------
A gpuboost categorical split sends the category codes of its set left; XGBoost's
``split_type`` 1 node lists the codes going *right* (``categories_nodes``,
``categories_segments``, ``categories_sizes``, ``categories``). The export lists the
feature's codes ``0 .. k-1`` outside the set, and marks the feature ``"c"`` in
``feature_types``; the exported model reads gpuboost's *codes* (the positions in
``Booster.categories``): give XGBoost a DataFrame whose category columns have exactly
those categories in that order (``pd.Categorical(values, categories=labels)``), or the
codes themselves (``feature_types`` ``'c'``). Missing values follow ``default_left`` in
both. String labels are also written to XGBoost's ``cats`` (XGBoost >= 3.1 then
re-codes DataFrames by label, as gpuboost does). The import takes a feature's categories
from ``cats`` when the file has them (labels), else as the codes ``0 .. m + 1`` (``m``
the largest code any split lists; labels: the integers); the left set is the codes not
listed. A code past them goes left in XGBoost and takes the default direction in
gpuboost (as any unseen category).
"""

import json
import math

import numpy as np

from ..core import strict_math
from ..core.categorical import bitset_from_members, bitset_words
from ..data.convert import DEFAULT_FEATURE_NAME_PREFIX
from ..tree.tree import TREE_ARRAYS, Tree
from .model_io import state_from_json, state_to_json

__all__ = [
    "state_to_xgboost_json",
    "state_from_xgboost_json",
    "xgboost_threshold",
    "gpuboost_threshold",
    "XGBOOST_OBJECTIVES",
]

#: XGBoost version written into the file.
XGBOOST_VERSION = [3, 2, 0]
_FLT_MAX = float(np.finfo(np.float32).max)

#: gpuboost objective -> (XGBoost objective, link of base_score).
XGBOOST_OBJECTIVES = {
    "reg:squarederror": ("reg:squarederror", "identity"),
    "reg:absoluteerror": ("reg:absoluteerror", "identity"),
    "reg:quantile": ("reg:quantileerror", "identity"),
    "reg:huber": ("reg:pseudohubererror", "identity"),
    "binary:logistic": ("binary:logistic", "logit"),
    "multi:softprob": ("multi:softprob", "margin"),
    "multi:softmax": ("multi:softmax", "margin"),
    "count:poisson": ("count:poisson", "log"),
    "reg:gamma": ("reg:gamma", "log"),
    "reg:tweedie": ("reg:tweedie", "log"),
    "rank:ndcg": ("rank:ndcg", "identity"),
    "rank:map": ("rank:map", "identity"),
    "rank:pairwise": ("rank:pairwise", "identity"),
    "survival:cox": ("survival:cox", "log"),
    "survival:aft": ("survival:aft", "log"),
}
#: XGBoost objective -> gpuboost objective (import; the aliases XGBoost accepts too).
_FROM_XGBOOST = {xgb: ours for ours, (xgb, _) in XGBOOST_OBJECTIVES.items()}
_FROM_XGBOOST["reg:linear"] = "reg:squarederror"  # XGBoost's old name


# ---- thresholds --------------------------------------------------------------------
def xgboost_threshold(threshold):
    """XGBoost's float32 ``t'`` with ``x < t'`` exactly when ``x <= threshold`` for
    every float32 ``x`` (see the module docstring).

    Raises
    ------
    ValueError
        ``threshold >= FLT_MAX``: no finite float32 expresses it.
    """
    t = float(threshold)
    if not t < _FLT_MAX:
        raise ValueError(
            f"The split threshold {t!r} is at or above the largest float32; XGBoost's "
            f"float32 `x < t` cannot express it. Such a model cannot be exported."
        )
    with np.errstate(over="ignore"):
        floor = np.float32(t)
    if float(floor) > t:
        floor = np.nextafter(floor, np.float32(-np.inf))
    return np.nextafter(floor, np.float32(np.inf))


def gpuboost_threshold(threshold):
    """gpuboost's float64 ``t`` with ``x <= t`` exactly when ``x < threshold`` (XGBoost,
    float32) for every float32 ``x``: the float32 just below ``threshold``, or
    ``-2 * FLT_MAX`` for ``threshold == -FLT_MAX`` (only -inf goes left; gpuboost's
    thresholds are finite).

    Raises
    ------
    ValueError
        ``threshold`` is NaN or -inf (no row goes left).
    """
    t = np.float32(threshold)
    if not t > -np.inf:
        _fail(f"split condition {float(threshold)!r} sends no value left")
    if t == -np.float32(_FLT_MAX):
        return -2.0 * _FLT_MAX
    return float(np.nextafter(t, np.float32(-np.inf)))


def _float32_text(value):
    """The shortest text of ``float32(value)`` (XGBoost parses floats as float32)."""
    return repr(float(np.float32(value)))


# ---- export -----------------------------------------------------------------------
def _base_score(params, base_margin):
    name = params["objective"]
    link = XGBOOST_OBJECTIVES[name][1]
    margins = [float(v) for v in base_margin]
    if link in ("identity", "margin"):
        scores = margins
    elif link == "log":
        scores = [float(strict_math.exp(np, m)) for m in margins]
    else:
        scores = [1.0 / (1.0 + float(strict_math.exp(np, -m))) for m in margins]
        if not all(0.0 < float(np.float32(s)) < 1.0 for s in scores):
            raise ValueError(
                f"The base margin {margins} is a probability of 0 or 1 in float32; XGBoost "
                f"cannot store it as base_score. Train with a less extreme base_score."
            )
    if not all(math.isfinite(float(np.float32(s))) for s in scores):
        raise ValueError(f"The base margin {margins} overflows XGBoost's float32 base_score.")
    return "[" + ",".join(_float32_text(s) for s in scores) + "]"


def _objective_section(params, n_outputs):
    name = params["objective"]
    xgb_name = XGBOOST_OBJECTIVES[name][0]
    section = {"name": xgb_name}
    if name in ("reg:squarederror", "binary:logistic", "reg:gamma"):
        section["reg_loss_param"] = {"scale_pos_weight": "1"}
    elif name == "reg:quantile":
        section["quantile_loss_param"] = {"quantile_alpha": f"[{params['quantile_alpha']!r}]"}
    elif name == "reg:huber":
        section["pseudo_huber_param"] = {"huber_slope": repr(float(params["huber_delta"]))}
    elif name.startswith("multi:"):
        section["softmax_multiclass_param"] = {"num_class": str(n_outputs)}
    elif name == "count:poisson":
        section["poisson_regression_param"] = {"max_delta_step": "0.7"}
    elif name == "reg:tweedie":
        power = repr(float(params["tweedie_variance_power"]))
        section["tweedie_regression_param"] = {"tweedie_variance_power": power}
    elif name == "survival:aft":
        section["aft_loss_param"] = {
            "aft_loss_distribution": params["aft_loss_distribution"],
            "aft_loss_distribution_scale": _float32_text(params["aft_loss_distribution_scale"]),
        }
    elif name.startswith("rank:"):
        section["lambdarank_param"] = {
            "lambdarank_num_pair_per_sample": str(int(params["lambdarank_truncation_level"])),
            "lambdarank_pair_method": "topk",
            "lambdarank_unbiased": "0",
            "lambdarank_bias_norm": "1",
            "lambdarank_normalization": "1",
            "lambdarank_score_normalization": "1",
            "ndcg_exp_gain": "1",
        }
    return section


def _check_exportable(state):
    params = state["params"]
    if state["tree_weights"] is not None:
        raise ValueError(
            "An AdaBoost (SAMME) model cannot be exported to XGBoost: its probabilities "
            "divide the summed scores by the tree weights, which XGBoost has no way to "
            "express. Export a gradient-boosted model (booster='gbtree')."
        )
    name = params["objective"]
    if isinstance(params.get("quantile_alpha"), list) and name == "reg:quantile":
        raise ValueError(
            "A model of several quantile levels cannot be exported to XGBoost: gpuboost "
            "rearranges its predictions so that they never cross, and XGBoost's "
            "multi-quantile model would predict them unsorted. Export one model per level."
        )
    if not isinstance(name, str) or name not in XGBOOST_OBJECTIVES:
        raise ValueError(
            f"Objective {name!r} has no XGBoost equivalent; exportable objectives: "
            f"{sorted(XGBOOST_OBJECTIVES)}."
        )


def xgboost_tree_order(n_rounds, n_outputs, n_parallel):
    """Per position of XGBoost's tree list, the gpuboost tree there: XGBoost stores a
    round's trees output after output (the ``p``-th tree of output ``k`` at ``k *
    n_parallel + p``), gpuboost forest after forest (at ``p * n_outputs + k``)."""
    per_round = n_outputs * n_parallel
    return [
        r * per_round + p * n_outputs + k
        for r in range(n_rounds)
        for k in range(n_outputs)
        for p in range(n_parallel)
    ]


def _tree_to_xgboost(tree, index, n_features, categories=None):
    n = tree.n_nodes
    internal = tree.feature >= 0
    categorical = tree.is_categorical
    category_nodes, category_sizes, right_codes = [], [], []
    for node in np.flatnonzero(categorical):
        left = set(tree.category_set(node).tolist())
        n_codes = len(categories[int(tree.feature[node])])
        right = [code for code in range(n_codes) if code not in left]
        category_nodes.append(int(node))
        category_sizes.append(len(right))
        right_codes.extend(right)
    parents = [2147483647] * n
    for node in np.flatnonzero(internal):
        parents[int(tree.left_child[node])] = int(node)
        parents[int(tree.right_child[node])] = int(node)
    conditions = [
        (0.0 if categorical[node] else float(xgboost_threshold(tree.threshold[node])))
        if internal[node]
        else float(np.float32(tree.value[node]))
        for node in range(n)
    ]
    return {
        "base_weights": [float(np.float32(v)) for v in tree.value],
        "categories": right_codes,
        "categories_nodes": category_nodes,
        "categories_segments": np.concatenate([[0], np.cumsum(category_sizes)[:-1]])
        .astype(int)
        .tolist()
        if category_sizes
        else [],
        "categories_sizes": category_sizes,
        "default_left": [int(v) for v in tree.default_left],
        "id": index,
        "left_children": tree.left_child.tolist(),
        "loss_changes": [float(np.float32(v)) for v in np.where(internal, tree.gain, 0.0)],
        "parents": parents,
        "right_children": tree.right_child.tolist(),
        "split_conditions": conditions,
        "split_indices": np.where(internal, tree.feature, 0).tolist(),
        "split_type": [int(v) for v in categorical],
        "sum_hessian": [float(np.float32(v)) for v in tree.cover],
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(n_features),
            "num_nodes": str(n),
            "size_leaf_vector": "1",
        },
    }


def _vector_tree_to_xgboost(tree, index, n_features):
    """A vector-leaf tree in XGBoost's layout of multi-target trees (``size_leaf_vector``
    k): ``base_weights`` every node's k values, ``leaf_weights`` the leaves' in node
    order, a leaf's ``right_children`` entry its place in that order."""
    n, k = tree.n_nodes, tree.n_outputs
    internal = tree.feature >= 0
    parents = [-1] * n
    for node in np.flatnonzero(internal):
        parents[int(tree.left_child[node])] = int(node)
        parents[int(tree.right_child[node])] = int(node)
    leaves = np.flatnonzero(~internal)
    right = tree.right_child.copy()
    right[leaves] = np.arange(len(leaves))
    return {
        "base_weights": [float(np.float32(v)) for v in tree.value.reshape(-1)],
        "categories": [],
        "categories_nodes": [],
        "categories_segments": [],
        "categories_sizes": [],
        "default_left": [int(v) for v in tree.default_left],
        "id": index,
        "leaf_weights": [float(np.float32(v)) for v in tree.value[leaves].reshape(-1)],
        "left_children": tree.left_child.tolist(),
        "loss_changes": [float(np.float32(v)) for v in np.where(internal, tree.gain, 0.0)],
        "parents": parents,
        "right_children": right.tolist(),
        "split_conditions": [
            float(xgboost_threshold(tree.threshold[node])) if internal[node] else 0.0
            for node in range(n)
        ],
        "split_indices": np.where(internal, tree.feature, 0).tolist(),
        "split_type": [0] * n,
        "sum_hessian": [float(np.float32(v)) for v in tree.cover],
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(n_features),
            "num_nodes": str(n),
            "size_leaf_vector": str(k),
        },
    }


def _exported_feature_names(names):
    default = [f"{DEFAULT_FEATURE_NAME_PREFIX}{i}" for i in range(len(names))]
    return [] if list(names) == default else list(names)


def state_to_xgboost_json(state):
    """XGBoost's JSON model text of a gpuboost model state.

    Parameters
    ----------
    state : dict
        The Booster's constructor arguments (see gpuboost.model.model_io).

    Returns
    -------
    str
        The JSON document (deterministic). Every round is exported;
        ``best_iteration`` and ``best_score`` go to the attributes, as XGBoost's
        early stopping writes them.

    Raises
    ------
    ValueError
        AdaBoost models, objectives XGBoost lacks (``binary:exponential``, custom),
        thresholds beyond float32, base margins XGBoost's float32 ``base_score``
        cannot hold.
    """
    _check_exportable(state)
    params = state["params"]
    n_outputs = int(state["n_outputs"])
    n_features = int(state["n_features"])
    trees = state["trees"]
    attributes = {str(k): str(v) for k, v in state["attributes"].items()}
    if state["best_iteration"] is not None:
        attributes["best_iteration"] = str(int(state["best_iteration"]))
    if state["best_score"] is not None:
        attributes["best_score"] = repr(float(state["best_score"]))
    names = _exported_feature_names(state["feature_names"])
    categories = state.get("categories")
    types = ["float"] * len(names)
    if categories is not None:
        names = list(state["feature_names"])  # feature types need the names
        types = ["float" if labels is None else "c" for labels in categories]
    n_parallel = int(params["num_parallel_tree"])
    vector = n_outputs > 1 and params.get("multi_strategy") == "multi_output_tree"
    per_round = (1 if vector else n_outputs) * n_parallel
    n_rounds = len(trees) // per_round
    if vector:  # one tree for every output: the same order, output 0 in tree_info
        order = list(range(len(trees)))
        tree_info = [0] * len(trees)
        exported = [_vector_tree_to_xgboost(t, i, n_features) for i, t in enumerate(trees)]
    else:
        order = xgboost_tree_order(n_rounds, n_outputs, n_parallel)
        tree_info = [i % n_outputs for i in order]
        exported = [
            _tree_to_xgboost(trees[i], j, n_features, categories) for j, i in enumerate(order)
        ]
    multiclass = params["objective"].startswith("multi:")
    gbtree = {
        "model": {
            "cats": _write_encoded_categories(categories)
            if categories is not None
            else {"enc": [], "feature_segments": [], "sorted_idx": []},
            "gbtree_model_param": {
                "num_parallel_tree": str(n_parallel),
                "num_trees": str(len(trees)),
            },
            "iteration_indptr": [r * per_round for r in range(n_rounds + 1)],
            "tree_info": tree_info,
            "trees": exported,
        },
        "name": "gbtree",
    }
    if state.get("weight_drop") is not None:  # DART: XGBoost's "dart" wraps the gbtree
        gbtree = {
            "gbtree": gbtree,
            "name": "dart",
            "weight_drop": [float(state["weight_drop"][i]) for i in order],
        }
    document = {
        "learner": {
            "attributes": dict(sorted(attributes.items())),
            "feature_names": names,
            "feature_types": types,
            "gradient_booster": gbtree,
            "learner_model_param": {
                "base_score": _base_score(params, state["base_margin"]),
                "boost_from_average": "1",
                "num_class": str(n_outputs if multiclass else 0),
                "num_feature": str(n_features),
                "num_target": str(1 if multiclass else n_outputs),
            },
            "objective": _objective_section(params, n_outputs),
        },
        "version": XGBOOST_VERSION,
    }
    return json.dumps(document, separators=(",", ":"), allow_nan=False)


# ---- import -----------------------------------------------------------------------
def _fail(message):
    raise ValueError(f"Cannot import the XGBoost model: {message}")


def _get(mapping, *keys):
    for key in keys:
        if not isinstance(mapping, dict) or key not in mapping:
            _fail(f"the JSON lacks {'/'.join(keys)}")
        mapping = mapping[key]
    return mapping


def _parse_base_score(text):
    text = str(text).strip()
    if text.startswith("["):
        return [float(v) for v in text.strip("[]").split(",") if v.strip()]
    return [float(text)]


def _margin_of(link, score):
    if link in ("identity", "margin"):
        return score
    if link == "log":
        if score <= 0.0:
            _fail(f"base_score {score!r} is not a positive mean")
        return float(strict_math.log(np, score))
    if not 0.0 < score < 1.0:
        _fail(f"base_score {score!r} is not a probability")
    return float(strict_math.log(np, score / (1.0 - score)))


def _import_params(objective, n_outputs):
    xgb_name = _get(objective, "name")
    if xgb_name not in _FROM_XGBOOST:
        _fail(
            f"objective {xgb_name!r} has no gpuboost equivalent; importable objectives: "
            f"{sorted(_FROM_XGBOOST)}"
        )
    name = _FROM_XGBOOST[xgb_name]
    params = {"objective": name}
    if name.startswith("multi:"):
        params["num_class"] = n_outputs
    elif name == "reg:quantile":
        alphas = _parse_base_score(_get(objective, "quantile_loss_param", "quantile_alpha"))
        if len(alphas) != 1:
            _fail("multi-quantile models (several quantile_alpha) are not supported")
        params["quantile_alpha"] = alphas[0]
    elif name == "reg:huber":
        params["huber_delta"] = float(_get(objective, "pseudo_huber_param", "huber_slope"))
    elif name == "reg:tweedie":
        power = _get(objective, "tweedie_regression_param", "tweedie_variance_power")
        params["tweedie_variance_power"] = float(power)
    elif name == "survival:aft":
        params["aft_loss_distribution"] = _get(objective, "aft_loss_param", "aft_loss_distribution")
        scale = _get(objective, "aft_loss_param", "aft_loss_distribution_scale")
        params["aft_loss_distribution_scale"] = float(scale)
    return name, params


def _right_sets(data, index):
    """Node -> the category codes XGBoost sends right at a categorical split."""
    split_type = [int(v) for v in data.get("split_type", [])]
    nodes = [int(v) for v in data.get("categories_nodes", [])]
    segments = [int(v) for v in data.get("categories_segments", [])]
    sizes = [int(v) for v in data.get("categories_sizes", [])]
    codes = [int(v) for v in data.get("categories", [])]
    if not (len(nodes) == len(segments) == len(sizes)) or sorted(nodes) != [
        node for node, kind in enumerate(split_type) if kind == 1
    ]:
        _fail(f"tree {index}: inconsistent categorical split lists")
    sets = {}
    for node, begin, size in zip(nodes, segments, sizes):
        if begin < 0 or size < 0 or begin + size > len(codes):
            _fail(f"tree {index}: a category segment is out of range")
        members = codes[begin : begin + size]
        if any(code < 0 for code in members):
            _fail(f"tree {index}: negative category")
        sets[node] = members
    return sets


def _encoded_categories(model, n_features):
    """Per feature, the category labels XGBoost (>= 3.1) stored in ``cats`` (None: none):
    strings (UTF-8 bytes with offsets) or numbers."""
    encodings = (model.get("cats") or {}).get("enc") or []
    labels = [None] * n_features
    for feature, entry in enumerate(encodings[:n_features]):
        values = entry.get("values") if isinstance(entry, dict) else None
        if not values:
            continue
        offsets = entry.get("offsets")
        if offsets:
            data = bytes(int(v) for v in values)
            labels[feature] = [
                data[begin:end].decode("utf-8") for begin, end in zip(offsets[:-1], offsets[1:])
            ]
        else:
            labels[feature] = [v if isinstance(v, (int, float)) else float(v) for v in values]
    return labels


def _write_encoded_categories(categories):
    """XGBoost's ``cats`` of gpuboost's labels: string labels as UTF-8 bytes with
    offsets (numbers are not written: XGBoost then reads codes)."""
    encodings, segments, sorted_idx = [], [0], []
    for labels in categories:
        if labels is not None and all(isinstance(v, str) for v in labels):
            data = [label.encode("utf-8") for label in labels]
            offsets = np.concatenate([[0], np.cumsum([len(b) for b in data])]).astype(int)
            encodings.append({"offsets": offsets.tolist(), "values": list(b"".join(data))})
            sorted_idx.extend(np.argsort(np.array(data, dtype=object), kind="stable").tolist())
            segments.append(segments[-1] + len(labels))
        else:
            encodings.append({"offsets": [], "values": []})
            segments.append(segments[-1])
    if len(sorted_idx) == 0:
        return {"enc": [], "feature_segments": [], "sorted_idx": []}
    return {"enc": encodings, "feature_segments": segments, "sorted_idx": sorted_idx}


def _category_counts(trees_data, n_features, labels=None):
    """Per feature, its number of categories: those of ``labels`` (XGBoost's ``cats``),
    else 2 + the largest code a categorical split lists (None: no such split)."""
    counts = [None] * n_features
    for index, data in enumerate(trees_data):
        split_indices = data.get("split_indices", [])
        for node, members in _right_sets(data, index).items():
            feature = int(split_indices[node])
            if not 0 <= feature < n_features:
                _fail(f"tree {index}: feature index out of range")
            counts[feature] = max(counts[feature] or 1, max(members, default=0) + 2)
    for feature, names in enumerate(labels or []):
        if names is not None and counts[feature] is not None:
            if counts[feature] - 1 > len(names):
                _fail(f"feature {feature}: a split lists a category beyond its categories")
            counts[feature] = len(names)
    return counts


def _tree_from_xgboost(data, index, category_counts=None):
    right_sets = _right_sets(data, index)
    if str(_get(data, "tree_param", "size_leaf_vector")) not in ("0", "1"):
        _fail(f"tree {index} has vector leaves (multi_strategy='multi_output_tree')")
    left, right = data["left_children"], data["right_children"]
    # XGBoost's node ids (so pred_leaf agrees), renumbered in preorder from the root
    # only when deleted nodes leave holes.
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if left[node] != -1:
            stack.append(right[node])
            stack.append(left[node])
    if len(order) == len(left):
        order = list(range(len(left)))
    new_id = {node: new for new, node in enumerate(order)}
    arrays = {name: np.zeros(len(order), dtype=dtype) for name, dtype in TREE_ARRAYS.items()}
    for new, node in enumerate(order):
        leaf = left[node] == -1
        arrays["feature"][new] = -1 if leaf else data["split_indices"][node]
        arrays["left_child"][new] = -1 if leaf else new_id[left[node]]
        arrays["right_child"][new] = -1 if leaf else new_id[right[node]]
        arrays["default_left"][new] = bool(data["default_left"][node]) and not leaf
        condition = float(data["split_conditions"][node])
        arrays["threshold"][new] = 0.0 if leaf else gpuboost_threshold(condition)
        arrays["value"][new] = condition if leaf else float(data["base_weights"][node])
        arrays["gain"][new] = 0.0 if leaf else float(data["loss_changes"][node])
        arrays["cover"][new] = float(data["sum_hessian"][node])
    if right_sets:  # categorical splits: the codes not listed go left
        sizes = np.zeros(len(order), dtype=np.int64)
        words = []
        for new, node in enumerate(order):
            if node not in right_sets:
                continue
            n_codes = category_counts[int(data["split_indices"][node])]
            right = set(right_sets[node])
            left = [code for code in range(n_codes) if code not in right]
            if not left:
                _fail(f"tree {index}: a categorical split sends every category right")
            node_words = bitset_from_members(left, bitset_words(n_codes))
            sizes[new] = len(node_words)
            words.append(node_words)
            arrays["threshold"][new] = 0.0
        arrays["cat_offsets"] = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        arrays["cat_bits"] = np.concatenate(words)
    return Tree(arrays)


def _in_gpuboost_order(values, order):
    """Per-tree ``values`` in XGBoost's order (:func:`xgboost_tree_order`) put in
    gpuboost's."""
    out = [None] * len(values)
    for position, index in enumerate(order):
        out[index] = values[position]
    return out


def state_from_xgboost_json(text):
    """A gpuboost model state from XGBoost's JSON model text.

    The trees keep XGBoost's structure, float32 values and covers (so SHAP values
    use the same covers); thresholds follow :func:`gpuboost_threshold`; bins and
    row counts, which XGBoost does not store, are 0. The state is validated as a
    gpuboost model file is.

    Raises
    ------
    ValueError
        Not an XGBoost JSON model, or one gpuboost cannot represent: gblinear
        boosters, vector leaves, objectives without a gpuboost equivalent. Forests
        (``num_parallel_tree``) and DART (``weight_drop``) are read.
    """
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        _fail(f"not valid JSON ({error}); save it with booster.save_model('model.json')")
    learner = _get(document, "learner")
    booster = _get(learner, "gradient_booster")
    weight_drop = None
    if _get(booster, "name") == "dart":
        weight_drop = [float(w) for w in _get(booster, "weight_drop")]
        booster = _get(booster, "gbtree")
    if _get(booster, "name") != "gbtree":
        _fail(f"booster {booster['name']!r} is not supported (only 'gbtree' and 'dart')")
    model = _get(booster, "model")
    n_parallel = int(_get(model, "gbtree_model_param", "num_parallel_tree"))
    if n_parallel < 1:
        _fail(f"num_parallel_tree is {n_parallel}")
    model_param = _get(learner, "learner_model_param")
    n_features = int(_get(model_param, "num_feature"))
    n_outputs = max(int(_get(model_param, "num_class")), 1)
    if int(model_param.get("num_target", "1")) != 1:
        _fail("multi-target models are not supported")
    name, params = _import_params(_get(learner, "objective"), n_outputs)
    if n_parallel > 1:
        params["num_parallel_tree"] = n_parallel
    if weight_drop is not None:
        params["booster"] = "dart"
    scores = _parse_base_score(_get(model_param, "base_score"))
    if len(scores) == 1:
        scores = scores * n_outputs
    elif len(scores) != n_outputs:
        _fail(f"{len(scores)} base scores for {n_outputs} outputs")
    link = XGBOOST_OBJECTIVES[name][1]
    base_margin = [_margin_of(link, float(np.float32(s))) for s in scores]
    trees_data = _get(model, "trees")
    per_round = n_outputs * n_parallel
    if len(trees_data) % per_round:
        _fail(f"{len(trees_data)} trees are not whole rounds of {per_round}")
    order = xgboost_tree_order(len(trees_data) // per_round, n_outputs, n_parallel)
    tree_info = [int(v) for v in _get(model, "tree_info")]
    if tree_info != [i % n_outputs for i in order]:
        _fail(
            "the trees are not num_parallel_tree per output and round in output order "
            "(XGBoost's layout)"
        )
    if weight_drop is not None and len(weight_drop) != len(trees_data):
        _fail(f"{len(weight_drop)} DART weights for {len(trees_data)} trees")
    names = list(learner.get("feature_names") or [])
    if not names:
        names = [f"{DEFAULT_FEATURE_NAME_PREFIX}{i}" for i in range(n_features)]
    labels = _encoded_categories(model, n_features)
    counts = _category_counts(trees_data, n_features, labels)
    categories = None
    if any(count is not None for count in counts):
        categories = [
            None if count is None else (labels[f] if labels[f] is not None else list(range(count)))
            for f, count in enumerate(counts)
        ]
    attributes = {str(k): str(v) for k, v in (learner.get("attributes") or {}).items()}
    best_iteration = attributes.pop("best_iteration", None)
    best_score = attributes.pop("best_score", None)
    state = {
        "params": params,
        "n_outputs": n_outputs,
        "base_margin": np.asarray(base_margin, dtype=np.float64),
        "n_features": n_features,
        "feature_names": names,
        "trees": _in_gpuboost_order(
            [_tree_from_xgboost(t, i, counts) for i, t in enumerate(trees_data)], order
        ),
        "best_iteration": None if best_iteration is None else int(best_iteration),
        "best_score": None if best_score is None else float(best_score),
        "attributes": attributes,
        "tree_weights": None,
        "categories": categories,
        "weight_drop": None if weight_drop is None else _in_gpuboost_order(weight_drop, order),
    }
    return state_from_json(state_to_json(state))  # validated as a gpuboost model file
