"""Discrete AdaBoost (SAMME): ``train(params, ...)`` with ``booster='adaboost'``.

The algorithm (Zhu, Zou, Rosset and Hastie 2009, "Multi-class AdaBoost"; the
algorithm of scikit-learn's ``AdaBoostClassifier``) for ``K >= 2`` classes:
row weights start at the sample weights (1 without them); each round

1. fits a classification tree (the *weak learner*: depth ``max_depth``, stumps
   by default) to the weighted labels,
2. computes its weighted error ``eps`` (the weight of the rows it
   misclassifies over the total weight),
3. gives it the weight ``c = learning_rate * (log((1 - eps) / eps) + log(K - 1))``,
4. multiplies the weights of the misclassified rows by ``exp(c)``.

The model's score of class ``k`` is ``sum over rounds of c * [tree predicts k]``;
the prediction is the class of the largest score. Probabilities follow
scikit-learn (Zhu et al., eq. 15, with the symmetric class coding ``f_k = c`` if
the tree predicts ``k`` else ``-c / (K - 1)``, summed and divided by
``sum(c)``): ``softmax(f / (K - 1))``, which is
``softmax(K * score / ((K - 1)**2 * sum(c)))`` (a shift common to all classes
cancels), and for two classes ``sigmoid(2 * (score_1 - score_0) / sum(c))``.

Special rounds (as scikit-learn does): a perfect tree (``eps == 0``) is kept
with weight :data:`PERFECT_ROUND_TREE_WEIGHT` and training stops; a tree no
better than chance (``eps >= 1 - 1/K``) is discarded and training stops, and
if it is the first tree ``ValueError`` is raised.

The weak learner
----------------
A classification tree with scikit-learn's criterion: each split maximizes the
decrease of the weighted Gini impurity, ``S(left) + S(right) - S(parent)``
with ``S(node) = sum_k W_k**2 / W`` (``W_k`` the weight of class ``k`` in the
node, ``W`` their sum); every impure node is split while the depth allows and
both children keep ``min_data_in_leaf`` rows and positive weight. A leaf
predicts the class of the largest weight (lowest class on ties). Split
candidates, missing values and tie-breaking follow docs/DESIGN.md ("Gain and
leaf value", with this gain). The tree cannot be grown by
:class:`gpuboost.grower.TreeGrower`, whose split scan sees one gradient column;
it reuses the backend primitives instead:

* row weights are quantized once per round (``backend.quantize``: fixed point,
  ``2**30`` for the largest weight) and split into one int32 column per class
  (the row's quantized weight if it has that class, else 0);
* ``backend.build_histograms`` sums two class columns per call (as its
  "gradient" and "hessian" fields), so a node's exact int64 class sums per
  feature and bin take ``ceil(K / 2)`` calls; the larger child's histograms
  come from the parent's by subtraction, as in gradient boosting;
* the class histograms of the nodes being split (``n_features x (max_bin + 1)
  x K`` integers a node, not per-row data) are copied to the host, where
  :func:`find_best_gini_splits` scans them;
* ``backend.partition`` splits the rows; ``backend.predict_tree_binned``
  gives each training row its predicted class.

Determinism: the error ``eps`` is computed from the exact integer class sums
of the leaves, the weight update multiplies by the host scalar ``exp(c)`` and
renormalizes by the maximum weight (not the sum, a float reduction whose order
differs between backends), and every float on the host is computed from
integers, so both backends give byte-identical models, also on a real GPU.
Renormalizing by the maximum instead of the sum changes nothing: the tree fit
and ``eps`` are invariant to a common factor. Rows whose weight falls below
``2**-30`` of the largest quantize to 0 and stop counting (scikit-learn clips
weights at ``2**-52`` of their sum instead).

The model
---------
A :class:`~gpuboost.Booster` with ``params['booster'] == 'adaboost'`` and
``tree_weights`` (the ``c`` of every round, saved in the model JSON). For two
classes it has one output and one tree per round whose leaves hold ``+c``
(class 1) or ``-c`` (class 0); for ``K > 2`` classes, ``K`` outputs and ``K``
trees per round with the same structure, tree ``k``'s leaves holding ``c``
where the weak learner predicts ``k`` and 0 elsewhere. The margins
(``predict(output_margin=True)``) are therefore the SAMME scores (for two
classes, their difference), computed by the ordinary tree ensemble
prediction of both backends; ``Booster.predict`` divides them by
:func:`samme_score_scale` before the objective's link, ``binary:logistic``'s
sigmoid or ``multi:softprob``'s softmax (``multi:softmax`` returns the class),
which gives scikit-learn's probabilities.

Parameters
----------
``objective`` selects the task and the link: ``binary:logistic`` (labels 0 and
1; the default unless ``num_class >= 3``), ``multi:softprob`` or
``multi:softmax`` (labels ``0 .. num_class - 1``); its gradients are not used.
Used: ``learning_rate`` (default **1.0** here), ``max_depth`` (default **1**,
at least 1), ``min_data_in_leaf``, ``num_class``, ``eval_metric`` (default
``error`` / ``merror``), ``max_bin`` and ``seed`` (through the Dataset),
``device``, ``verbosity``, ``nthread``. Giving any other training parameter a
non-default value raises ``ValueError``. Not supported: ``init_model``, a
custom objective (``obj``), ``base_margin``.
"""
import math

import numpy as np

from ..core.dtypes import GRAD_QUANT_DTYPE, NODE_DTYPE, SAMPLE_INDEX_DTYPE, Y_DTYPE
from ..core.profiling import PhaseTimer
from ..backends import get_backend
from ..model.booster import Booster
from .callback import CallbackContainer, EarlyStopping, EvaluationMonitor
from ..data.dataset import Dataset
from ..metrics import get_metric
from ..objectives import get_objective
from ..params import PARAMETERS, canonical_name, validate_params
from ..tree.tree import Tree
from .train import finish_training, record_metrics

__all__ = ["train_adaboost", "adaboost_params", "samme_score_scale", "find_best_gini_splits",
           "find_best_gini_splits_naive", "ClassTreeGrower", "PERFECT_ROUND_TREE_WEIGHT",
           "ADABOOST_PARAMETERS", "ADABOOST_DEFAULTS"]

#: The ``booster`` parameter value that selects this module.
ADABOOST = "adaboost"
#: Weight of a perfect tree (``eps == 0``), after which training stops
#: (scikit-learn's value).
PERFECT_ROUND_TREE_WEIGHT = 1.0
#: Training parameters the SAMME loop uses (others must keep their defaults).
ADABOOST_PARAMETERS = frozenset({
    "booster", "objective", "num_class", "eval_metric", "learning_rate", "max_depth",
    "min_data_in_leaf", "max_bin", "seed", "device", "verbosity", "nthread", "tree_method"})
#: Defaults that differ from gradient boosting's (scikit-learn's AdaBoostClassifier).
ADABOOST_DEFAULTS = {"learning_rate": 1.0, "max_depth": 1}
#: ``tree_method`` values the weak learner implements (quantized histograms).
HISTOGRAM_TREE_METHODS = ("hist", "auto")
#: Objectives (links) an AdaBoost model can have, and the default ones.
ADABOOST_OBJECTIVES = ("binary:logistic", "multi:softprob", "multi:softmax")
BINARY_OBJECTIVE = "binary:logistic"
MULTICLASS_OBJECTIVE = "multi:softprob"
#: Default evaluation metric for two classes / more.
BINARY_METRIC = "error"
MULTICLASS_METRIC = "merror"
#: Verbosity from which per-phase timings are printed (as gpuboost.training).
VERBOSITY_TIMINGS = 2
#: Histogram fields holding the two class columns of one build, and the row count.
_FIRST_CLASS_FIELD, _SECOND_CLASS_FIELD, _COUNT_FIELD = 0, 1, 2
_CLASSES_PER_BUILD = 2


# ---------------------------------------------------------------------------
# Parameters and the score scale
# ---------------------------------------------------------------------------

def adaboost_params(given_params):
    """Validate parameters for ``booster='adaboost'``; apply its defaults.

    Parameters
    ----------
    given_params : dict or None
        The user's parameters (any aliases).

    Returns
    -------
    dict
        All parameters under canonical names, ``booster == 'adaboost'``, the
        objective filled in.

    Raises
    ------
    ValueError
        A parameter the SAMME loop does not use has a non-default value,
        ``max_depth < 1``, or the objective is not a classification link.
    """
    given_params = dict(given_params or {})
    given_names = {canonical_name(key) for key in given_params}
    params = validate_params(given_params)
    unused = sorted(name for name in given_names if name not in ADABOOST_PARAMETERS
                    and params[name] != PARAMETERS[name].default)
    if unused:
        raise ValueError(f"booster='adaboost' does not use the parameters {unused}; remove them "
                         f"(it uses {sorted(ADABOOST_PARAMETERS)}).")
    for name, value in ADABOOST_DEFAULTS.items():
        if name not in given_names:
            params[name] = value
    params["booster"] = ADABOOST
    if params["tree_method"] not in HISTOGRAM_TREE_METHODS:
        raise ValueError(f"booster='adaboost' grows histogram trees: tree_method must be one of "
                         f"{list(HISTOGRAM_TREE_METHODS)}, got {params['tree_method']!r}.")
    if params["max_depth"] < 1:
        raise ValueError(f"booster='adaboost' grows depth-limited trees: max_depth must be >= 1, "
                         f"got {params['max_depth']}.")
    if "objective" not in given_names:
        params["objective"] = MULTICLASS_OBJECTIVE if params["num_class"] > 2 \
            else BINARY_OBJECTIVE
    objective = params["objective"]
    if objective not in ADABOOST_OBJECTIVES:
        raise ValueError(f"booster='adaboost' trains a classifier: objective must be one of "
                         f"{list(ADABOOST_OBJECTIVES)} (the link of its probabilities), got "
                         f"{objective!r}.")
    if objective == BINARY_OBJECTIVE and params["num_class"] > 2:
        raise ValueError(f"objective {BINARY_OBJECTIVE!r} has two classes, but num_class is "
                         f"{params['num_class']}; use {MULTICLASS_OBJECTIVE!r}.")
    return params


def samme_score_scale(tree_weights, n_outputs):
    """Divisor of the SAMME scores before the probability link.

    Parameters
    ----------
    tree_weights : sequence of float
        The weights ``c`` of the rounds used.
    n_outputs : int
        1 (two classes) or the number of classes ``K``.

    Returns
    -------
    float
        ``sum(c) * (K - 1)**2 / K`` with ``K = 2`` for one output (see the
        module docstring), ``sum(c)`` summed exactly (``math.fsum``); 1.0 when
        no round is used.
    """
    total = math.fsum(float(w) for w in tree_weights)
    if total <= 0.0:
        return 1.0
    n_classes = _n_classes(n_outputs)
    return total * ((n_classes - 1) * (n_classes - 1)) / n_classes


def _n_classes(n_outputs):
    return 2 if n_outputs == 1 else n_outputs


# ---------------------------------------------------------------------------
# The Gini split scan (host, exact integer inputs)
# ---------------------------------------------------------------------------

#: One record per node: the best split (``feature == -1`` when none) and its left child.
GINI_SPLIT_FIELDS = ("feature", "bin", "default_left", "gain", "left_class_sums",
                     "left_count")


def _gini_scores(class_sums):
    """``sum_k W_k**2 / W`` over the last axis (classes added in order; 0 where W == 0)."""
    class_sums = class_sums.astype(np.float64)
    squares = class_sums[..., 0] * class_sums[..., 0]
    totals = class_sums[..., 0].copy()
    for k in range(1, class_sums.shape[-1]):
        squares = squares + class_sums[..., k] * class_sums[..., k]
        totals = totals + class_sums[..., k]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, squares / totals, 0.0)


def _no_split():
    return {"feature": -1, "bin": -1, "default_left": False, "gain": 0.0,
            "left_class_sums": None, "left_count": 0}


def find_best_gini_splits(class_sums, counts, n_value_bins, missing_bin, min_data_in_leaf):
    """Best Gini split of every node (vectorized NumPy, one node at a time).

    Parameters
    ----------
    class_sums : ndarray of shape (n_nodes, n_features, n_bins, n_classes), int64
        Quantized class weights per feature and bin.
    counts : ndarray of shape (n_nodes, n_features, n_bins), int64
        Rows per feature and bin.
    n_value_bins : ndarray of shape (n_features,), int
        A threshold bin ``b`` is a candidate when ``b <= n_value_bins[f] - 2``.
    missing_bin : int
    min_data_in_leaf : int

    Returns
    -------
    list of dict
        Per node the keys of :data:`GINI_SPLIT_FIELDS`; ``gain`` in quantized
        units, ``left_class_sums`` an int64 array (n_classes,). A pure node
        (one class holds all its weight) is not split. Ties: lowest feature,
        then lowest bin, then missing values to the right; when the feature has
        no missing rows in the node they go to the child with more rows (ties
        left).
    """
    n_candidates = missing_bin - 1
    candidate_bins = np.arange(max(n_candidates, 0))
    bin_is_candidate = candidate_bins[None, :] <= (np.asarray(n_value_bins)[:, None] - 2)
    records = []
    for node_sums, node_counts in zip(class_sums, counts):
        parent = node_sums[0].sum(axis=0)  # every row is in one bin of feature 0
        parent_count = int(node_counts[0].sum())
        if n_candidates <= 0 or parent.max() == parent.sum():
            records.append(_no_split())
            continue
        missing = node_sums[:, missing_bin]                       # (F, K)
        missing_count = node_counts[:, missing_bin]               # (F,)
        left_missing_right = np.cumsum(node_sums[:, :n_candidates], axis=1)  # (F, C, K)
        count_missing_right = np.cumsum(node_counts[:, :n_candidates], axis=1)
        directions = [(left_missing_right, count_missing_right),
                      (left_missing_right + missing[:, None, :],
                       count_missing_right + missing_count[:, None])]
        parent_score = _gini_scores(parent)
        gains = []
        for direction, (left, left_count) in enumerate(directions):
            right = parent - left
            right_count = parent_count - left_count
            gain = (_gini_scores(left) + _gini_scores(right)) - parent_score
            ok = (bin_is_candidate & (left_count >= min_data_in_leaf)
                  & (right_count >= min_data_in_leaf)
                  & (left.sum(axis=2) > 0) & (right.sum(axis=2) > 0))
            if direction == 1:
                ok = ok & (missing_count > 0)[:, None]
            gains.append(np.where(ok, gain, -np.inf))
        stacked = np.stack(gains, axis=-1)  # (F, C, 2): candidate order feature, bin, direction
        best = int(np.argmax(stacked))
        if not np.isfinite(stacked.flat[best]):
            records.append(_no_split())
            continue
        feature, bin_, direction = np.unravel_index(best, stacked.shape)
        left, left_count = directions[direction]
        n_left = int(left_count[feature, bin_])
        if missing_count[feature] > 0:
            default_left = direction == 1
        else:
            default_left = n_left >= parent_count - n_left
        records.append({"feature": int(feature), "bin": int(bin_),
                        "default_left": bool(default_left), "gain": float(stacked.flat[best]),
                        "left_class_sums": left[feature, bin_].astype(np.int64),
                        "left_count": n_left})
    return records


def find_best_gini_splits_naive(class_sums, counts, n_value_bins, missing_bin,
                                min_data_in_leaf):
    """Reference loop version of :func:`find_best_gini_splits` (same contract)."""
    records = []
    n_classes = class_sums.shape[-1]

    def score(sums):
        total = 0
        for value in sums:
            total += int(value)
        if total == 0:
            return 0.0
        squares = float(sums[0]) * float(sums[0])
        for k in range(1, n_classes):
            squares = squares + float(sums[k]) * float(sums[k])
        return squares / float(total)

    for node_sums, node_counts in zip(class_sums, counts):
        parent = [int(v) for v in node_sums[0].sum(axis=0)]
        parent_count = int(node_counts[0].sum())
        best = None
        if max(parent) < sum(parent):
            parent_score = score(parent)
            for feature in range(node_sums.shape[0]):
                missing = [int(v) for v in node_sums[feature, missing_bin]]
                missing_count = int(node_counts[feature, missing_bin])
                running = [0] * n_classes
                running_count = 0
                for bin_ in range(int(n_value_bins[feature]) - 1):
                    running = [running[k] + int(node_sums[feature, bin_, k])
                               for k in range(n_classes)]
                    running_count += int(node_counts[feature, bin_])
                    for missing_left in ((False, True) if missing_count > 0 else (False,)):
                        left = [running[k] + (missing[k] if missing_left else 0)
                                for k in range(n_classes)]
                        left_count = running_count + (missing_count if missing_left else 0)
                        right = [parent[k] - left[k] for k in range(n_classes)]
                        right_count = parent_count - left_count
                        if (left_count < min_data_in_leaf or right_count < min_data_in_leaf
                                or sum(left) <= 0 or sum(right) <= 0):
                            continue
                        gain = (score(left) + score(right)) - parent_score
                        if best is None or gain > best[0]:
                            default_left = missing_left if missing_count > 0 \
                                else left_count >= right_count
                            best = (gain, feature, bin_, default_left, left, left_count)
        if best is None:
            records.append(_no_split())
        else:
            gain, feature, bin_, default_left, left, left_count = best
            records.append({"feature": feature, "bin": bin_, "default_left": bool(default_left),
                            "gain": gain, "left_class_sums": np.array(left, dtype=np.int64),
                            "left_count": left_count})
    return records


# ---------------------------------------------------------------------------
# The weak learner
# ---------------------------------------------------------------------------

class _ClassNode:
    __slots__ = ("id", "begin", "end", "depth", "class_sums", "count", "histograms", "record",
                 "left", "right")

    def __init__(self, node_id, begin, end, depth, class_sums, count):
        self.id = node_id
        self.begin, self.end, self.depth = begin, end, depth
        self.class_sums = class_sums
        self.count = count
        self.histograms = None
        self.record = None
        self.left = self.right = -1


class ClassTree:
    """A grown weak learner.

    Attributes
    ----------
    structure : dict of str -> ndarray
        The Tree arrays except ``value`` (see :data:`gpuboost.tree.TREE_ARRAYS`).
    node_class : ndarray of shape (n_nodes,), int
        The class every node predicts (largest weight, lowest on ties).
    leaf_nodes : ndarray of int
    weighted_error : int
        Quantized weight of the training rows the tree misclassifies.
    total_weight : int
        Quantized weight of all rows.
    """

    def __init__(self, structure, node_class, leaf_nodes, weighted_error, total_weight):
        self.structure = structure
        self.node_class = node_class
        self.leaf_nodes = leaf_nodes
        self.weighted_error = weighted_error
        self.total_weight = total_weight

    def tree(self, values):
        """A :class:`~gpuboost.tree.Tree` of this structure with per-node ``values``."""
        return Tree(dict(self.structure, value=np.asarray(values, dtype=np.float64)))


class ClassTreeGrower:
    """Grow one Gini classification tree depthwise (see the module docstring).

    Parameters
    ----------
    backend : gpuboost.backends.base.Backend
    data : DeviceData
    class_columns : list of backend arrays of shape (n_rows,), int32
        Quantized weight of each row in the column of its class, 0 elsewhere.
    scale : float
        Quantization scale of the weights (for ``gain`` and ``cover``).
    max_depth, min_data_in_leaf : int
    thresholds : callable (feature, bin) -> float
    timer : gpuboost._profiling.PhaseTimer
    """

    def __init__(self, backend, data, class_columns, scale, max_depth, min_data_in_leaf,
                 thresholds, timer):
        self.backend = backend
        self.data = data
        self.n_classes = len(class_columns)
        zeros = backend.xp.zeros_like(class_columns[0])
        padded = list(class_columns) + [zeros] * (len(class_columns) % _CLASSES_PER_BUILD)
        self.column_pairs = [(padded[i], padded[i + 1])
                             for i in range(0, len(padded), _CLASSES_PER_BUILD)]
        self.scale = scale
        self.max_depth = max_depth
        self.min_data_in_leaf = min_data_in_leaf
        self.thresholds = thresholds
        self.timer = timer
        self.nodes = []
        self.sample_indices = None

    def _build(self, nodes):
        """Per node, the list of its class-pair histograms (backend arrays (1, F, B, 3))."""
        begins = [node.begin for node in nodes]
        ends = [node.end for node in nodes]
        with self.timer.phase("histogram"):
            built = [self.backend.build_histograms(self.data, first, second, self.sample_indices,
                                                   begins, ends)
                     for first, second in self.column_pairs]
        return [[batch[i:i + 1] for batch in built] for i in range(len(nodes))]

    def _host_class_histograms(self, nodes):
        """Host (class_sums (n, F, B, K), counts (n, F, B)) of the nodes' histograms."""
        class_sums, counts = [], []
        for node in nodes:
            pairs = [self.backend.to_host(h)[0] for h in node.histograms]
            columns = []
            for pair in pairs:
                columns += [pair[..., _FIRST_CLASS_FIELD], pair[..., _SECOND_CLASS_FIELD]]
            class_sums.append(np.stack(columns[:self.n_classes], axis=-1))
            counts.append(pairs[0][..., _COUNT_FIELD])
        return np.stack(class_sums), np.stack(counts)

    def _find_splits(self, nodes):
        if not nodes:
            return
        class_sums, counts = self._host_class_histograms(nodes)
        with self.timer.phase("split"):
            records = find_best_gini_splits(class_sums, counts, self.data.n_value_bins,
                                            self.data.missing_bin, self.min_data_in_leaf)
        for node, record, sums in zip(nodes, records, class_sums):
            node.record = record
            if node.class_sums is None:
                node.class_sums = sums[0].sum(axis=0)

    def _new_node(self, begin, end, depth, class_sums, count):
        node = _ClassNode(len(self.nodes), begin, end, depth, class_sums, count)
        self.nodes.append(node)
        return node

    def grow(self):
        """Grow the tree; returns a :class:`ClassTree`."""
        xp = self.backend.xp
        n_rows = self.data.n_rows
        self.sample_indices = xp.arange(n_rows, dtype=SAMPLE_INDEX_DTYPE)
        root = self._new_node(0, n_rows, 0, None, n_rows)
        root.histograms = self._build([root])[0]
        self._find_splits([root])
        frontier = [root]
        while frontier:
            parents = [node for node in frontier
                       if node.depth < self.max_depth and node.record["feature"] >= 0]
            for node in frontier:
                if node not in parents:
                    node.histograms = None
            if not parents:
                break
            frontier = self._expand(parents)
        return self._finish()

    def _expand(self, parents):
        with self.timer.phase("partition"):
            self.backend.partition(
                self.data, self.sample_indices,
                np.array([p.begin for p in parents], dtype=np.int64),
                np.array([p.end for p in parents], dtype=np.int64),
                np.array([p.record["feature"] for p in parents], dtype=np.int64),
                np.array([p.record["bin"] for p in parents], dtype=np.int64),
                np.array([p.record["default_left"] for p in parents], dtype=bool))
        children, smaller, larger, owners = [], [], [], []
        for parent in parents:
            record = parent.record
            n_left = record["left_count"]
            left = self._new_node(parent.begin, parent.begin + n_left, parent.depth + 1,
                                  record["left_class_sums"], n_left)
            right = self._new_node(parent.begin + n_left, parent.end, parent.depth + 1,
                                   parent.class_sums - record["left_class_sums"],
                                   parent.count - n_left)
            parent.left, parent.right = left.id, right.id
            children += [left, right]
            if parent.depth + 1 < self.max_depth:  # the children may split: histograms
                small, large = (left, right) if left.count <= right.count else (right, left)
                smaller.append(small)
                larger.append(large)
                owners.append(parent)
        if smaller:
            built = self._build(smaller)
            with self.timer.phase("histogram"):
                for small, large, parent, histograms in zip(smaller, larger, owners, built):
                    small.histograms = histograms
                    large.histograms = [self.backend.subtract_histograms(p, s)
                                        for p, s in zip(parent.histograms, histograms)]
            self._find_splits(smaller + larger)
        for parent in parents:
            parent.histograms = None
        for child in children:
            if child.record is None:  # at the depth limit
                child.record = _no_split()
        return children

    def _finish(self):
        n_nodes = len(self.nodes)
        feature = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        threshold_bin = np.zeros(n_nodes, dtype=np.int32)
        threshold = np.zeros(n_nodes, dtype=np.float64)
        default_left = np.zeros(n_nodes, dtype=bool)
        gain = np.zeros(n_nodes, dtype=np.float64)
        left_child = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        right_child = np.full(n_nodes, -1, dtype=NODE_DTYPE)
        for node in self.nodes:
            node.histograms = None
            if node.left < 0:
                continue
            record = node.record
            feature[node.id] = record["feature"]
            threshold_bin[node.id] = record["bin"]
            threshold[node.id] = self.thresholds(record["feature"], record["bin"])
            default_left[node.id] = record["default_left"]
            gain[node.id] = record["gain"] / self.scale
            left_child[node.id], right_child[node.id] = node.left, node.right
        class_sums = np.stack([np.asarray(node.class_sums, dtype=np.int64)
                               for node in self.nodes])
        node_class = np.argmax(class_sums, axis=1)
        leaves = np.flatnonzero(feature < 0)
        total = int(sum(int(v) for v in self.nodes[0].class_sums))
        correct = sum(int(class_sums[leaf, node_class[leaf]]) for leaf in leaves)
        structure = {
            "feature": feature, "threshold_bin": threshold_bin, "threshold": threshold,
            "default_left": default_left, "left_child": left_child, "right_child": right_child,
            "gain": gain, "cover": class_sums.sum(axis=1).astype(np.float64) / self.scale,
            "count": np.array([node.count for node in self.nodes], dtype=np.int64)}
        return ClassTree(structure, node_class, leaves, total - correct, total)


# ---------------------------------------------------------------------------
# The SAMME loop
# ---------------------------------------------------------------------------

def _output_trees(class_tree, tree_weight, n_outputs):
    """The round's trees: one per output (see "The model" in the module docstring)."""
    if n_outputs == 1:
        return [class_tree.tree(np.where(class_tree.node_class == 1, tree_weight, -tree_weight))]
    return [class_tree.tree(np.where(class_tree.node_class == k, tree_weight, 0.0))
            for k in range(n_outputs)]


def _check_labels(label, n_classes):
    bad = (label != np.floor(label)) | (label < 0) | (label >= n_classes)
    if np.any(bad):
        raise ValueError(f"booster='adaboost' with {n_classes} classes needs labels in "
                         f"{{0, ..., {n_classes - 1}}}; found e.g. {float(label[bad][0])!r}.")


class _AdaBoostEvalSet:
    """An evaluation set's features, labels and running SAMME scores on the backend."""

    def __init__(self, backend, dataset, name, n_outputs, is_train):
        if dataset.base_margin is not None:
            raise ValueError(f"booster='adaboost' does not take a base_margin (evaluation set "
                             f"{name!r} has one).")
        self.dataset = dataset
        self.name = name
        self.is_train = is_train
        self.features = None if is_train else backend.prepare_features(dataset.data)
        self.scores = backend.to_device(np.zeros((dataset.n_rows, n_outputs), dtype=Y_DTYPE))
        self.label = backend.to_device(dataset.label)
        self.weight = None if dataset.weight is None else backend.to_device(dataset.weight)


def train_adaboost(given_params, dtrain, num_boost_round=50, evals=(), obj=None,
                   custom_metric=None, early_stopping_rounds=None, evals_result=None,
                   verbose_eval=True, callbacks=(), init_model=None):
    """Train a SAMME AdaBoost classifier (``gpuboost.train`` with ``booster='adaboost'``).

    Parameters
    ----------
    given_params : dict
        The user's parameters (see the module docstring).
    dtrain : Dataset
        Labels 0/1 (binary) or ``0 .. num_class - 1``; its sample weights are
        the initial row weights.
    num_boost_round : int
        Largest number of trees (rounds); fewer after a perfect or a
        worse-than-chance round.
    evals, custom_metric, early_stopping_rounds, evals_result, verbose_eval, callbacks
        As for :func:`gpuboost.train`; metrics see the probabilities.
    obj, init_model
        Not supported (ValueError when given).

    Returns
    -------
    Booster
        With ``tree_weights`` set.

    Raises
    ------
    ValueError
        Unsupported parameters or inputs, invalid labels, or a first tree no
        better than chance.
    """
    from .train import _check_evals  # the same checks as gradient boosting
    params = adaboost_params(given_params)
    if obj is not None:
        raise ValueError("booster='adaboost' does not take a custom objective (obj).")
    if init_model is not None:
        raise ValueError("booster='adaboost' cannot continue an init_model.")
    if not isinstance(dtrain, Dataset):
        raise TypeError(f"dtrain must be a gpuboost.Dataset, got {type(dtrain).__name__}.")
    if dtrain.label is None:
        raise ValueError("dtrain has no label: pass label= to Dataset.")
    if dtrain.base_margin is not None:
        raise ValueError("booster='adaboost' does not take a base_margin.")
    objective = get_objective(params["objective"], params)
    n_outputs = objective.n_outputs()
    n_classes = _n_classes(n_outputs)
    evals = _check_evals(evals, dtrain)
    for dataset, _ in [(dtrain, "dtrain")] + evals:
        _check_labels(dataset.label, n_classes)

    backend = get_backend(params["device"])
    if hasattr(backend, "configure"):
        backend.configure(params)
    xp = backend.xp
    timer = PhaseTimer(enabled=params["verbosity"] >= VERBOSITY_TIMINGS,
                       synchronize=backend.synchronize)
    data = backend.prepare(dtrain)
    label = backend.to_device(dtrain.label)
    initial = np.ones(dtrain.n_rows) if dtrain.weight is None else dtrain.weight
    row_weights = backend.to_device(initial / np.max(initial))
    booster = Booster(params, n_outputs, np.zeros(n_outputs), dtrain.n_features,
                      dtrain.feature_names, tree_weights=[])
    booster._objective = objective
    eval_sets = [_AdaBoostEvalSet(backend, dataset, name, n_outputs, dataset is dtrain)
                 for dataset, name in evals]
    metric_names = params["eval_metric"] or [
        BINARY_METRIC if n_outputs == 1 else MULTICLASS_METRIC]
    metrics = [get_metric(name) for name in metric_names]

    callback_list = list(callbacks)
    if verbose_eval and eval_sets:
        callback_list.append(EvaluationMonitor(period=1 if verbose_eval is True else verbose_eval))
    if early_stopping_rounds is not None:
        callback_list.append(EarlyStopping(
            early_stopping_rounds, maximize=False if custom_metric is not None else None))
    container = CallbackContainer(callback_list)
    booster = container.before_training(booster)
    evals_log = {}
    thresholds = dtrain.bin_mapper.threshold_for_bin
    class_values = xp.arange(n_classes, dtype=Y_DTYPE)

    for round_index in range(num_boost_round):
        if container.before_iteration(booster, round_index, evals_log):
            break
        with timer.phase("quantize"):
            quantized, scale = backend.quantize(row_weights)
            class_columns = [xp.where(label == class_values[k], quantized, 0).astype(
                GRAD_QUANT_DTYPE) for k in range(n_classes)]
        grower = ClassTreeGrower(backend, data, class_columns, scale, params["max_depth"],
                                 params["min_data_in_leaf"], thresholds, timer)
        class_tree = grower.grow()
        error = class_tree.weighted_error / class_tree.total_weight
        perfect = class_tree.weighted_error == 0
        if perfect:
            tree_weight = PERFECT_ROUND_TREE_WEIGHT
        elif error >= 1.0 - 1.0 / n_classes:
            if not booster.trees:
                raise ValueError(f"The first AdaBoost tree is no better than chance (weighted "
                                 f"error {error:.6g} >= 1 - 1/{n_classes}); the ensemble cannot "
                                 f"be fit.")
            break
        else:
            tree_weight = params["learning_rate"] * (
                math.log((1.0 - error) / error) + math.log(n_classes - 1.0))
        trees = _output_trees(class_tree, tree_weight, n_outputs)
        booster.append_round(trees)
        booster.tree_weights.append(tree_weight)

        with timer.phase("predict_update"):
            predicted = backend.predict_tree_binned(data, class_tree.tree(class_tree.node_class))
            for eval_set in eval_sets:
                for output, tree in enumerate(trees):
                    if eval_set.is_train:
                        eval_set.scores[:, output] += backend.predict_tree_binned(data, tree)
                    else:
                        eval_set.scores[:, output] += backend.predict_tree_raw(
                            eval_set.features, tree)
            if not perfect:
                boosted = xp.where(predicted != label, row_weights * math.exp(tree_weight),
                                   row_weights)
                row_weights = boosted / xp.max(boosted)
        if eval_sets:
            with timer.phase("metric"):
                _evaluate(eval_sets, booster, objective, metrics, custom_metric, backend,
                          evals_log)
        if container.after_iteration(booster, round_index, evals_log) or perfect:
            break

    booster = finish_training(container, booster, evals_log, evals_result, timer, backend,
                              label="AdaBoost ")
    booster.tree_weights = booster.tree_weights[:booster.num_boosted_rounds()]  # save_best
    return booster


def _evaluate(eval_sets, booster, objective, metrics, custom_metric, backend, evals_log):
    """Append every metric of every evaluation set to ``evals_log``."""
    score_scale = samme_score_scale(booster.tree_weights, booster.n_outputs)
    for eval_set in eval_sets:
        scores = eval_set.scores[:, 0] if booster.n_outputs == 1 else eval_set.scores
        record_metrics(evals_log, eval_set, objective.mean(backend.xp, scores / score_scale),
                       metrics, custom_metric, backend)
