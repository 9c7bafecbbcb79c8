"""The tree: flat arrays, identical on both backends.

Node 0 is the root. A node is a leaf when ``feature[node] == -1``; otherwise rows
with ``x[feature] <= threshold`` (binned: ``bin <= threshold_bin``) go to
``left_child``, the others to ``right_child``, and missing values (NaN / the
missing bin) follow ``default_left``. ``value`` holds the leaf value (learning
rate applied) for every node (internal nodes keep the value they would have as a
leaf). Room is left for categorical splits: a future ``split_type`` array and
category bitsets per node, with the format version bumped.
"""

import numpy as np

from ..core.dtypes import NODE_DTYPE

__all__ = ["Tree", "TREE_ARRAYS"]

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
            if array.ndim != 1 or (n_nodes is not None and len(array) != n_nodes):
                raise ValueError(f"Tree array {name!r} must be 1-D with one entry per node.")
            n_nodes = len(array)
            setattr(self, name, array)
        if not n_nodes:
            raise ValueError("A tree needs at least one node.")

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
        return out

    @classmethod
    def from_dict(cls, data):
        """Inverse of :meth:`to_dict` (validation is done by ``gpuboost.model.model_io``)."""
        return cls({name: np.asarray(data[name]) for name in TREE_ARRAYS})

    def __eq__(self, other):
        return isinstance(other, Tree) and all(
            np.array_equal(getattr(self, n), getattr(other, n)) for n in TREE_ARRAYS
        )

    def dump_dict(self, feature_names=None, with_stats=True):
        """The tree as nested dicts, XGBoost's JSON dump format.

        Internal nodes: ``nodeid``, ``depth``, ``split`` (the feature name),
        ``split_condition`` (the threshold), ``decision_type`` (``'<='``: rows with
        ``x <= split_condition`` go to ``yes``; XGBoost's own dumps mean ``<``), ``yes``,
        ``no``, ``missing`` and ``children`` (``[yes, no]``); leaves: ``nodeid`` and
        ``leaf`` (the value). With ``with_stats``: ``gain`` (internal nodes), ``cover``
        and ``count``.
        """

        def node_dict(node, depth):
            stats = {}
            if with_stats:
                stats = {"cover": float(self.cover[node]), "count": int(self.count[node])}
            if self.feature[node] < 0:
                return {"nodeid": node, "leaf": float(self.value[node]), **stats}
            feature = int(self.feature[node])
            left, right = int(self.left_child[node]), int(self.right_child[node])
            if with_stats:
                stats = {"gain": float(self.gain[node]), **stats}
            return {
                "nodeid": node,
                "depth": depth,
                "split": feature_names[feature] if feature_names is not None else f"f{feature}",
                "split_condition": float(self.threshold[node]),
                "decision_type": "<=",
                "yes": left,
                "no": right,
                "missing": left if self.default_left[node] else right,
                **stats,
                "children": [node_dict(left, depth + 1), node_dict(right, depth + 1)],
            }

        return node_dict(0, 0)

    def dump(self, feature_names=None, with_stats=True):
        """Readable text of the tree, one node per line, indented by depth.

        Internal nodes read ``id:[name<=threshold] yes=left,no=right,missing=child``
        and leaves ``id:leaf=value``; ``gain``, ``cover`` and ``count`` follow when
        ``with_stats``.
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
                lines.append(f"{indent}{node}:leaf={float(self.value[node])!r}{stats}")
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
            lines.append(
                f"{indent}{node}:[{name}<={float(self.threshold[node])!r}] "
                f"yes={left},no={right},missing={missing}{stats}"
            )
            stack.append((right, depth + 1))
            stack.append((left, depth + 1))
        return "\n".join(lines)
