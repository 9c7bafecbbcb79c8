"""The tree: flat arrays, identical on both backends.

Node 0 is the root. A node is a leaf when ``feature[node] == -1``; otherwise rows
with ``x[feature] <= threshold`` (binned: ``bin <= threshold_bin``) go to
``left_child``, the others to ``right_child``, and missing values (NaN / the
missing bin) follow ``default_left``. ``value`` holds the leaf value (learning
rate applied) for every node (internal nodes keep the value they would have as a
leaf). A vector-leaf tree (``multi_strategy='multi_output_tree'``, docs/DESIGN.md
"Vector leaves") holds a value per output: ``value`` of shape (n_nodes, k), k > 1; the
tree of output ``t`` alone (:meth:`Tree.output_tree`) is its structure with the values
``value[:, t]``.

Categorical splits (docs/DESIGN.md "Categorical features") keep their left set in two
more flat arrays: ``cat_offsets`` (``n_nodes + 1`` int64) and ``cat_bits`` (uint32
words): node ``i``'s set is the bitset ``cat_bits[cat_offsets[i]:cat_offsets[i + 1]]``
over the feature's category codes (bit ``c % 32`` of word ``c // 32``; a code is also
the bin of its category, the codes sharing the "other" bin all have its bit). A node
with words is a categorical split (``threshold``, ``threshold_bin`` unused, 0): rows
whose code is in the set go left, missing ones (and codes outside the set's words)
follow ``default_left``. A tree without categorical splits has ``cat_offsets`` all 0
and no words, and its file holds neither array (format version 1).
"""

import numpy as np

from ..core.dtypes import NODE_DTYPE

__all__ = ["Tree", "TREE_ARRAYS", "CATEGORICAL_ARRAYS"]

#: Name -> dtype of every per-node array, in model-file order.
TREE_ARRAYS = {
    "feature": NODE_DTYPE,
    "threshold_bin": np.int32,
    "threshold": np.float64,
    "default_left": np.bool_,
    "left_child": NODE_DTYPE,
    "right_child": NODE_DTYPE,
    "value": np.float64,
    "gain": np.float64,
    "cover": np.float64,
    "count": np.int64,
}
#: The category sets of categorical splits (written only by trees that have one).
CATEGORICAL_ARRAYS = {"cat_offsets": np.int64, "cat_bits": np.uint32}


class Tree:
    """One regression tree stored as flat per-node arrays (see :data:`TREE_ARRAYS`).

    Parameters
    ----------
    arrays : dict of str -> ndarray of shape (n_nodes,)
        One array per key of :data:`TREE_ARRAYS`.
    """

    def __init__(self, arrays):
        n_nodes = None
        for name, dtype in TREE_ARRAYS.items():
            array = np.ascontiguousarray(arrays[name], dtype=dtype)
            if name == "value" and array.ndim == 2 and array.shape[1] > 1:
                ndim_ok = True  # a vector leaf: one value per output
            else:
                ndim_ok = array.ndim == 1
            if not ndim_ok or (n_nodes is not None and len(array) != n_nodes):
                raise ValueError(
                    f"Tree array {name!r} must be 1-D with one entry per node (value: "
                    f"or 2-D, one row of k > 1 outputs per node)."
                )
            n_nodes = len(array)
            setattr(self, name, array)
        if not n_nodes:
            raise ValueError("A tree needs at least one node.")
        offsets = arrays.get("cat_offsets")
        bits = arrays.get("cat_bits")
        self.cat_offsets = (
            np.zeros(n_nodes + 1, dtype=np.int64)
            if offsets is None
            else np.ascontiguousarray(offsets, dtype=np.int64)
        )
        self.cat_bits = (
            np.zeros(0, dtype=np.uint32)
            if bits is None
            else np.ascontiguousarray(bits, dtype=np.uint32)
        )
        if len(self.cat_offsets) != n_nodes + 1 or (len(self.cat_bits) != self.cat_offsets[-1]):
            raise ValueError("cat_offsets must have n_nodes + 1 entries ending at len(cat_bits).")

    def replaced(self, **arrays):
        """A new Tree with some of the per-node arrays of :data:`TREE_ARRAYS` replaced
        (the others, and the category sets, shared)."""
        kept = {name: getattr(self, name) for name in TREE_ARRAYS}
        kept.update(arrays, cat_offsets=self.cat_offsets, cat_bits=self.cat_bits)
        return Tree(kept)

    @property
    def n_outputs(self):
        """Values per leaf: 1, or k for a vector-leaf tree."""
        return 1 if self.value.ndim == 1 else int(self.value.shape[1])

    def output_tree(self, output):
        """The tree of output ``output`` alone: this structure (shared arrays) with the
        values ``value[:, output]`` (a one-output tree: itself, for output 0)."""
        if self.value.ndim == 1:
            if output != 0:
                raise ValueError(f"a one-output tree has no output {output}")
            return self
        return self.replaced(value=self.value[:, output])

    @property
    def has_categorical(self):
        """Whether the tree has a categorical split."""
        return len(self.cat_bits) > 0

    @property
    def is_categorical(self):
        """ndarray of shape (n_nodes,), bool: the categorical splits."""
        return (np.diff(self.cat_offsets) > 0) & (self.feature >= 0)

    def category_set(self, node):
        """The codes going left at a categorical split, ndarray of int64 (increasing)."""
        words = self.cat_bits[self.cat_offsets[node] : self.cat_offsets[node + 1]]
        bits = (words[:, None] >> np.arange(32, dtype=np.uint32)[None, :]) & 1
        return np.flatnonzero(bits.reshape(-1)).astype(np.int64)

    def category_table(self):
        """ndarray of shape (n_nodes, n_words), uint32: every node's set padded with
        zero words to the longest (one zero word when the tree has none)."""
        sizes = np.diff(self.cat_offsets)
        table = np.zeros((self.n_nodes, max(1, int(sizes.max(initial=0)))), dtype=np.uint32)
        for node in np.flatnonzero(sizes):
            begin, end = self.cat_offsets[node], self.cat_offsets[node + 1]
            table[node, : end - begin] = self.cat_bits[begin:end]
        return table

    @property
    def n_nodes(self):
        """Number of nodes."""
        return len(self.feature)

    @property
    def is_leaf(self):
        """ndarray of shape (n_nodes,), bool."""
        return self.feature < 0

    @property
    def n_leaves(self):
        """Number of leaves."""
        return int(np.count_nonzero(self.is_leaf))

    def depth(self):
        """Depth of the deepest leaf (a single-leaf tree has depth 0)."""
        deepest = 0
        stack = [(0, 0)]
        while stack:
            node, depth = stack.pop()
            deepest = max(deepest, depth)
            if self.feature[node] >= 0:
                stack.append((int(self.left_child[node]), depth + 1))
                stack.append((int(self.right_child[node]), depth + 1))
        return deepest

    def to_dict(self):
        """JSON-ready dict of lists (floats round-trip exactly through ``repr``)."""
        out = {}
        for name in TREE_ARRAYS:
            array = getattr(self, name)
            if array.dtype == np.bool_:
                out[name] = [int(v) for v in array]
            else:
                out[name] = array.tolist()
        if self.has_categorical:
            out["cat_offsets"] = self.cat_offsets.tolist()
            out["cat_bits"] = self.cat_bits.tolist()
        return out

    @classmethod
    def from_dict(cls, data):
        """Inverse of :meth:`to_dict` (validation is done by ``gpuboost.model.model_io``)."""
        return cls(
            {
                name: np.asarray(data[name])
                for name in (*TREE_ARRAYS, *CATEGORICAL_ARRAYS)
                if name in data
            }
        )

    def __eq__(self, other):
        return isinstance(other, Tree) and all(
            np.array_equal(getattr(self, n), getattr(other, n))
            for n in (*TREE_ARRAYS, *CATEGORICAL_ARRAYS)
        )

    def leaf_value(self, node):
        """A leaf's value: a float, or the list of a vector leaf's values."""
        if self.value.ndim == 1:
            return float(self.value[node])
        return [float(v) for v in self.value[node]]

    def _leaf_text(self, node):
        """A leaf's value as dump text: ``repr`` of the float, ``[v0,v1,...]`` for a
        vector leaf (XGBoost's text dump of vector leaves)."""
        if self.value.ndim == 1:
            return repr(float(self.value[node]))
        return "[" + ",".join(repr(float(v)) for v in self.value[node]) + "]"

    def dump_split(self, node, name, feature_categories=None):
        """The text of a split: ``name<=threshold``, or ``name in {a,b}`` (the categories
        going left, by label with ``feature_categories``, else by code)."""
        return self._split_text(node, name, feature_categories)[0]

    def _split_text(self, node, name, feature_categories=None):
        """``name<=threshold`` or ``name in {categories}`` (labels when known)."""
        if not (self.cat_offsets[node + 1] > self.cat_offsets[node]):
            return f"{name}<={float(self.threshold[node])!r}", float(self.threshold[node])
        codes = self.category_set(node).tolist()
        labels = feature_categories
        if labels is not None:
            codes = [c for c in codes if c < len(labels)]
            shown = [labels[c] for c in codes]
        else:
            shown = codes
        return (
            f"{name} in {{{','.join(repr(v) if isinstance(v, str) else str(v) for v in shown)}}}",
            shown,
        )

    def dump_dict(self, feature_names=None, with_stats=True, categories=None):
        """The tree as nested dicts, XGBoost's JSON dump format.

        Internal nodes: ``nodeid``, ``depth``, ``split`` (the feature name),
        ``split_condition`` (the threshold), ``decision_type`` (``'<='``: rows with
        ``x <= split_condition`` go to ``yes``; XGBoost's own dumps mean ``<``), ``yes``,
        ``no``, ``missing`` and ``children`` (``[yes, no]``); leaves: ``nodeid`` and
        ``leaf`` (the value). With ``with_stats``: ``gain`` (internal nodes), ``cover``
        and ``count``. A categorical split has ``decision_type`` ``'in'`` and the list of
        categories going to ``yes`` as ``split_condition`` (their labels, with
        ``categories``: the model's labels per feature, else their codes).
        """

        def node_dict(node, depth):
            stats = {}
            if with_stats:
                stats = {"cover": float(self.cover[node]), "count": int(self.count[node])}
            if self.feature[node] < 0:
                return {"nodeid": node, "leaf": self.leaf_value(node), **stats}
            feature = int(self.feature[node])
            left, right = int(self.left_child[node]), int(self.right_child[node])
            if with_stats:
                stats = {"gain": float(self.gain[node]), **stats}
            _, condition = self._split_text(
                node, "", None if categories is None else categories[feature]
            )
            return {
                "nodeid": node,
                "depth": depth,
                "split": feature_names[feature] if feature_names is not None else f"f{feature}",
                "split_condition": condition,
                "decision_type": "in" if isinstance(condition, list) else "<=",
                "yes": left,
                "no": right,
                "missing": left if self.default_left[node] else right,
                **stats,
                "children": [node_dict(left, depth + 1), node_dict(right, depth + 1)],
            }

        return node_dict(0, 0)

    def dump(self, feature_names=None, with_stats=True, categories=None):
        """Readable text of the tree, one node per line, indented by depth.

        Internal nodes read ``id:[name<=threshold] yes=left,no=right,missing=child``
        (categorical splits ``id:[name in {a,b}] ...``: the categories going left, by
        label with ``categories``, else by code) and leaves ``id:leaf=value``;
        ``gain``, ``cover`` and ``count`` follow when ``with_stats``.
        """
        lines = []
        stack = [(0, 0)]
        while stack:
            node, depth = stack.pop()
            indent = "\t" * depth
            stats = ""
            if self.feature[node] < 0:
                if with_stats:
                    stats = f",cover={float(self.cover[node])!r},count={int(self.count[node])}"
                lines.append(f"{indent}{node}:leaf={self._leaf_text(node)}{stats}")
                continue
            feature = int(self.feature[node])
            name = feature_names[feature] if feature_names is not None else f"f{feature}"
            left, right = int(self.left_child[node]), int(self.right_child[node])
            missing = left if self.default_left[node] else right
            if with_stats:
                stats = (
                    f",gain={float(self.gain[node])!r},cover={float(self.cover[node])!r},"
                    f"count={int(self.count[node])}"
                )
            condition, _ = self._split_text(
                node, name, None if categories is None else categories[feature]
            )
            lines.append(
                f"{indent}{node}:[{condition}] yes={left},no={right},missing={missing}{stats}"
            )
            stack.append((right, depth + 1))
            stack.append((left, depth + 1))
        return "\n".join(lines)
