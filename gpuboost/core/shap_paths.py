"""TreeSHAP's input: every tree cut into its root-to-leaf paths (docs/DESIGN.md, "SHAP").

The exact TreeSHAP algorithm (Lundberg et al. 2020, Algorithm 2; XGBoost's
``TreeShap``) walks a tree recursively and keeps, per node, the *unique path* of
the features split on above it. The same values come from each root-to-leaf path
on its own (GPUTreeShap, Mitchell et al. 2022): a leaf's contribution depends only
on the features of its path, and for each of them on

* the *zero fraction* ``z``: the product, over the path's edges on that feature,
  of ``cover[child] / cover[parent]`` (the share of the training rows that took
  the edge), and
* the *one fraction* ``o``: 1 when the row takes every edge of the path on that
  feature, else 0. For numerical splits the edges on one feature make an interval
  ``lower < x <= upper`` (``lower`` is ``-inf`` when no edge goes right, and then
  every non-missing ``x`` passes it; ``upper`` is ``+inf`` when no edge goes left),
  and a missing ``x`` takes them all when every edge is its node's default
  direction (``missing``). For categorical splits the edges on one feature make a
  *category set*: the codes ``c`` with ``c`` in the left set of every edge going
  left and outside that of every edge going right (the intersection of the sets
  and complements, a bitset); a value that is not such a code (missing, negative,
  fractional, or past the bitset) takes them all when every edge is its node's
  default direction (``missing``), as prediction sends it
  (:mod:`gpuboost.backends.categorical`).

This module builds that table once per forest on the host (both backends' kernels
read it: ``gpuboost/backends/cpu/shap.py`` and ``cuda/shap.cu``), and the expected
value of every tree (the cover-weighted mean of its leaves, XGBoost's
``FillNodeMeanValue``), the bias of the contributions. An element on a categorical
feature holds its category set instead of the interval; the kernels' one-fraction
test is the only code that reads either.

Cover fractions: ``cover`` is the hessian sum of the node's training rows. A node
with zero cover (possible with ``min_child_weight=0``) splits its weight by
``count`` instead, and one with no rows in half, so fractions are always finite.
"""

import numpy as np

from .categorical import BITSET_DTYPE

__all__ = ["ShapPaths", "build_shap_paths", "child_fractions", "tree_expected_value"]


def child_fractions(tree, node):
    """``(left, right)`` shares of ``node``'s weight taken by its children.

    ``cover[child] / cover[node]``; by ``count`` when the node's cover is not
    positive; ``(0.5, 0.5)`` when neither is.
    """
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    for weights in (tree.cover, tree.count):
        total = float(weights[node])
        if total > 0.0:
            return float(weights[left]) / total, float(weights[right]) / total
    return 0.5, 0.5


def tree_expected_value(tree):
    """The cover-weighted mean of the leaf values of ``tree`` (float).

    Bottom-up ``mean[node] = f_left * mean[left] + f_right * mean[right]`` with the
    fractions of :func:`child_fractions`; a leaf's mean is its value.
    """
    means = {}
    order = [0]
    for node in order:  # preorder; children come after their parent
        if tree.feature[node] >= 0:
            order.extend((int(tree.left_child[node]), int(tree.right_child[node])))
    for node in reversed(order):
        if tree.feature[node] < 0:
            means[node] = float(tree.value[node])
        else:
            f_left, f_right = child_fractions(tree, node)
            left, right = int(tree.left_child[node]), int(tree.right_child[node])
            means[node] = f_left * means[left] + f_right * means[right]
    return means[0]


class ShapPaths:
    """The root-to-leaf paths of a forest, as flat arrays (the layout of the kernels).

    Path ``p`` owns elements ``path_offsets[p] .. path_offsets[p + 1] - 1``, one per
    distinct feature on it, ordered by the depth of the feature's deepest edge on the
    path. Consecutive paths then share their leading
    elements down to where they part (:attr:`path_shared`), so a kernel may reuse the
    path weights of that prefix (they are the same bits, computed or reused).

    Attributes
    ----------
    path_offsets : ndarray of shape (n_paths + 1,), int64
    path_value : ndarray of shape (n_paths,), float64
        The leaf value.
    path_output : ndarray of shape (n_paths,), int64
        The output (class) column of the path's tree.
    path_shared : ndarray of shape (n_paths,), int64
        How many leading elements path ``p`` has identical to path ``p - 1`` (0 for
        the first path).
    element_feature : ndarray of shape (n_elements,), int32
    element_zero_fraction : ndarray of shape (n_elements,), float64
    element_lower, element_upper : ndarray of shape (n_elements,), float64
        The row takes the element's edges when ``lower < x <= upper`` (``lower ==
        -inf``: no lower bound).
    element_missing : ndarray of shape (n_elements,), int32
        1 when a missing value takes every edge of the element (on a categorical
        element: any value that is not a code of its set's range, see below).
    element_category_offsets : ndarray of shape (n_elements + 1,), int64
        Element ``e`` is categorical when it owns words, ``element_category_bits[
        element_category_offsets[e]:element_category_offsets[e + 1]]``: the codes
        ``c`` (bit ``c % 32`` of word ``c // 32``) whose rows take every edge of the
        element; ``lower, upper`` are then ``-inf, inf``. A row's value ``x`` is such a
        code when it is an integer in ``[0, 32 * n_words)``; any other value takes the
        element when ``missing``. ``n_words`` is the widest set of the element's tree
        (:meth:`gpuboost.tree.tree.Tree.category_table`), the codes prediction tests.
    element_category_bits : ndarray of shape (n_category_words,), uint32
    expected_value : ndarray of shape (n_outputs,), float64
        Sum of the trees' expected values per output (in tree order).
    max_length : int
        Most elements of one path.
    """

    def __init__(self, n_outputs):
        self.n_outputs = int(n_outputs)
        self.path_offsets = np.zeros(1, dtype=np.int64)
        self.path_value = np.zeros(0, dtype=np.float64)
        self.path_output = np.zeros(0, dtype=np.int64)
        self.path_shared = np.zeros(0, dtype=np.int64)
        self.element_feature = np.zeros(0, dtype=np.int32)
        self.element_zero_fraction = np.zeros(0, dtype=np.float64)
        self.element_lower = np.zeros(0, dtype=np.float64)
        self.element_upper = np.zeros(0, dtype=np.float64)
        self.element_missing = np.zeros(0, dtype=np.int32)
        self.element_category_offsets = np.zeros(1, dtype=np.int64)
        self.element_category_bits = np.zeros(0, dtype=BITSET_DTYPE)
        self.expected_value = np.zeros(self.n_outputs, dtype=np.float64)
        self.max_length = 0

    @property
    def n_paths(self):
        return len(self.path_value)


def _tree_paths(tree):
    """Yield ``(leaf, elements)`` for every leaf of ``tree`` (depth first, left first);
    ``elements`` is a list of ``(feature, zero_fraction, lower, upper, missing, codes)``
    in the order of :class:`ShapPaths` (``codes``: the category set as a tuple of
    words, None on numeric features).

    Raises
    ------
    ValueError
        A path splits one feature both by a threshold and by a category set.
    """
    categorical = tree.is_categorical
    # every node's left set, padded to the tree's widest set: the codes predict tests
    table = tree.category_table() if categorical.any() else None
    stack = [(0, {})]
    while stack:
        node, elements = stack.pop()
        if tree.feature[node] < 0:
            yield node, [(feature, *row) for feature, row in elements.items()]
            continue
        feature = int(tree.feature[node])
        threshold = float(tree.threshold[node])
        f_left, f_right = child_fractions(tree, node)
        children = []
        for child, fraction, goes_left in (
            (int(tree.left_child[node]), f_left, True),
            (int(tree.right_child[node]), f_right, False),
        ):
            below = dict(elements)
            # popped and re-inserted: the dict keeps the features in the order of
            # their deepest edge
            zero, lower, upper, missing, codes = below.pop(
                feature, (1.0, -np.inf, np.inf, True, None)
            )
            if categorical[node]:
                side = table[node] if goes_left else ~table[node]
                if codes is not None:
                    side = side & np.asarray(codes, dtype=BITSET_DTYPE)
                codes = tuple(int(word) for word in side)
            elif goes_left:
                upper = min(upper, threshold)
            else:
                lower = max(lower, threshold)
            if codes is not None and (lower != -np.inf or upper != np.inf):
                raise ValueError(
                    f"Feature {feature} is split both by thresholds and by category sets "
                    f"on one path of a tree: its SHAP values are undefined. A model file "
                    f"that passes validation never does this; retrain the model."
                )
            missing = missing and bool(tree.default_left[node]) == goes_left
            below[feature] = (zero * fraction, lower, upper, missing, codes)
            children.append((child, below))
        stack.append(children[1])
        stack.append(children[0])


def build_shap_paths(trees, tree_outputs, n_outputs):
    """The :class:`ShapPaths` of ``trees``.

    Parameters
    ----------
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
        The output column of every tree.
    n_outputs : int

    Returns
    -------
    ShapPaths
    """
    paths = ShapPaths(n_outputs)
    lengths, values, outputs, shared, element_rows = [], [], [], [], []
    expected = [0.0] * paths.n_outputs
    previous = []
    for tree, output in zip(trees, tree_outputs):
        expected[int(output)] += tree_expected_value(tree)
        for leaf, elements in _tree_paths(tree):
            common = 0
            while (
                common < min(len(elements), len(previous)) and elements[common] == previous[common]
            ):
                common += 1
            shared.append(common)
            previous = elements
            lengths.append(len(elements))
            values.append(float(tree.value[leaf]))
            outputs.append(int(output))
            element_rows.extend(elements)
    paths.expected_value = np.asarray(expected, dtype=np.float64)
    if not values:
        return paths
    paths.path_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    paths.path_value = np.asarray(values, dtype=np.float64)
    paths.path_output = np.asarray(outputs, dtype=np.int64)
    paths.path_shared = np.asarray(shared, dtype=np.int64)
    paths.max_length = int(max(lengths))
    if element_rows:
        columns = list(zip(*element_rows))
        paths.element_feature = np.asarray(columns[0], dtype=np.int32)
        paths.element_zero_fraction = np.asarray(columns[1], dtype=np.float64)
        paths.element_lower = np.asarray(columns[2], dtype=np.float64)
        paths.element_upper = np.asarray(columns[3], dtype=np.float64)
        paths.element_missing = np.asarray(columns[4], dtype=np.int32)
        words = [codes or () for codes in columns[5]]
        paths.element_category_offsets = np.concatenate(
            [[0], np.cumsum([len(w) for w in words])]
        ).astype(np.int64)
        paths.element_category_bits = np.asarray(
            [word for w in words for word in w], dtype=BITSET_DTYPE
        )
    return paths
