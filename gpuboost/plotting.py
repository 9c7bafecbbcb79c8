"""Plots of a Booster: importances, learning curves, trees and SHAP summaries.

matplotlib is optional (``pip install 'gpuboost[plot]'``) and imported only when a
plot is drawn, so ``import gpuboost`` never loads it; without it every plot raises an
ImportError that says what to install. Each function draws on ``ax`` (a new figure
when None) and returns the Axes. :func:`plot_tree` needs nothing but matplotlib;
:func:`to_graphviz` returns a ``graphviz.Source`` (the ``graphviz`` package) of
:func:`tree_to_dot`'s text.
"""

import numpy as np

__all__ = [
    "plot_importance",
    "plot_metric",
    "plot_tree",
    "plot_shap_summary",
    "to_graphviz",
    "tree_to_dot",
]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "gpuboost's plots need matplotlib: pip install 'gpuboost[plot]' (or matplotlib)."
        ) from error
    return plt


def _axes(ax, figsize=None):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def plot_importance(
    booster,
    ax=None,
    importance_type="weight",
    max_num_features=None,
    title="Feature importance",
    xlabel=None,
    ylabel="Features",
    height=0.6,
    show_values=True,
    grid=True,
):
    """Horizontal bars of the features' importances, largest on top.

    Parameters
    ----------
    booster : Booster
    ax : matplotlib Axes, optional
    importance_type : str
        Any type of :meth:`Booster.feature_importance` ('weight', 'gain',
        'total_gain', 'cover', 'total_cover').
    max_num_features : int, optional
        Show only this many of the most important features.
    title, xlabel, ylabel : str
        ``xlabel`` defaults to the importance type.
    height : float
        Bar height.
    show_values : bool
        Write each value at the end of its bar.
    grid : bool

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        No feature has a non-zero importance (a model without splits).
    """
    values = np.asarray(booster.feature_importance(importance_type), dtype=np.float64)
    used = np.flatnonzero(values > 0)
    if len(used) == 0:
        raise ValueError(
            "No feature is used by the model's splits, so there is no importance to plot."
        )
    order = used[np.argsort(-values[used], kind="stable")]
    if max_num_features is not None:
        order = order[: int(max_num_features)]
    order = order[::-1]  # barh draws bottom up
    ax = _axes(ax)
    positions = np.arange(len(order))
    ax.barh(positions, values[order], height=height, align="center")
    ax.set_yticks(positions)
    ax.set_yticklabels([booster.feature_names[i] for i in order])
    if show_values:
        for position, value in zip(positions, values[order]):
            ax.text(value, position, f" {value:.4g}", va="center")
    ax.set_xlim(0, values[order].max() * 1.15)
    ax.set_title(title)
    ax.set_xlabel(xlabel if xlabel is not None else importance_type)
    ax.set_ylabel(ylabel)
    ax.grid(grid)
    return ax


def plot_metric(evals_result, metric=None, ax=None, title="Metric during training", grid=True):
    """Learning curves: one line per evaluation set of one metric against the round.

    Parameters
    ----------
    evals_result : dict
        ``{eval_name: {metric_name: [value per round]}}``, as ``gpuboost.train(...,
        evals_result=...)`` fills it (also XGBoost's format).
    metric : str, optional
        Default: the first metric of the first evaluation set.
    ax : matplotlib Axes, optional
    title : str
    grid : bool

    Returns
    -------
    matplotlib Axes
    """
    if not evals_result:
        raise ValueError(
            "evals_result is empty: pass evals=[(dvalid, 'valid')] and evals_result={} "
            "to gpuboost.train, then plot that dict."
        )
    names = list(evals_result)
    if metric is None:
        metric = next(iter(evals_result[names[0]]))
    ax = _axes(ax)
    for name in names:
        if metric not in evals_result[name]:
            raise ValueError(
                f"Metric {metric!r} was not recorded for {name!r}; recorded: "
                f"{sorted(evals_result[name])}."
            )
        values = evals_result[name][metric]
        ax.plot(np.arange(len(values)), values, label=name)
    ax.legend(loc="best")
    ax.set_title(title)
    ax.set_xlabel("Iterations")
    ax.set_ylabel(metric)
    ax.grid(grid)
    return ax


# ---- trees ------------------------------------------------------------------------
def _node_label(tree, node, feature_names, precision, categories=None):
    if tree.feature[node] < 0:
        values = np.atleast_1d(tree.value[node])
        text = ",".join(f"{v:.{precision}g}" for v in values)
        return f"leaf={text}" if len(values) == 1 else f"leaf=[{text}]"
    feature = int(tree.feature[node])
    name = feature_names[feature] if feature_names is not None else f"f{feature}"
    if tree.is_categorical[node]:  # the categories going left (by label)
        return tree.dump_split(node, name, None if categories is None else categories[feature])
    return f"{name}<={tree.threshold[node]:.{precision}g}"


def _edge_labels(tree, node):
    """(left label, right label): yes / no, with 'missing' on the default side."""
    left, right = "yes", "no"
    if tree.default_left[node]:
        left += ", missing"
    else:
        right += ", missing"
    return left, right


def _tree_layout(tree):
    """(x, depth) of every node: leaves at consecutive x in left-to-right order, an
    internal node midway between its children."""
    x = np.zeros(tree.n_nodes)
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    next_leaf = [0.0]

    def place(node, level):
        depth[node] = level
        if tree.feature[node] < 0:
            x[node] = next_leaf[0]
            next_leaf[0] += 1.0
            return
        left, right = int(tree.left_child[node]), int(tree.right_child[node])
        place(left, level + 1)
        place(right, level + 1)
        x[node] = (x[left] + x[right]) / 2.0

    place(0, 0)
    return x, depth


def plot_tree(booster, tree_index=0, ax=None, precision=4, fontsize=8, show_edges=True):
    """Draw one tree with matplotlib (no graphviz needed).

    Internal nodes show ``feature<=threshold`` (the row goes left when true); leaves
    their value; edges say yes / no and which side missing values take.

    Parameters
    ----------
    booster : Booster
    tree_index : int
        Index into ``booster.trees`` (round ``r``, output ``k`` is
        ``r * n_outputs + k``).
    ax : matplotlib Axes, optional
        Default: a new figure sized to the tree.
    precision : int
        Significant digits of thresholds and values.
    fontsize : float
    show_edges : bool
        Label the edges.

    Returns
    -------
    matplotlib Axes
    """
    if not -len(booster.trees) <= tree_index < len(booster.trees):
        raise IndexError(
            f"tree_index {tree_index} is out of range: the model has {len(booster.trees)} trees."
        )
    tree = booster.trees[tree_index]
    x, depth = _tree_layout(tree)
    n_leaves = max(int(x.max()) + 1, 1)
    ax = _axes(ax, figsize=(max(4.0, 1.6 * n_leaves), max(3.0, 1.3 * (depth.max() + 1))))
    box = {"boxstyle": "round,pad=0.3", "facecolor": "white", "edgecolor": "0.3"}
    leaf_box = dict(box, facecolor="#e8f0fe")
    for node in range(tree.n_nodes):
        if tree.feature[node] >= 0:
            labels = _edge_labels(tree, node)
            for child, label in zip((tree.left_child[node], tree.right_child[node]), labels):
                ax.plot([x[node], x[child]], [-depth[node], -depth[child]], color="0.5", lw=1)
                if show_edges:
                    ax.text(
                        (x[node] + x[child]) / 2.0,
                        -(depth[node] + depth[child]) / 2.0,
                        label,
                        ha="center",
                        va="center",
                        fontsize=fontsize * 0.85,
                        color="0.35",
                        backgroundcolor="white",
                    )
        ax.text(
            x[node],
            -depth[node],
            _node_label(tree, node, booster.feature_names, precision, booster.categories),
            ha="center",
            va="center",
            fontsize=fontsize,
            bbox=leaf_box if tree.feature[node] < 0 else box,
        )
    ax.set_xlim(x.min() - 0.7, x.max() + 0.7)
    ax.set_ylim(-depth.max() - 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(f"tree {tree_index}")
    return ax


def tree_to_dot(booster, tree_index=0, precision=4):
    """The Graphviz DOT text of one tree (the source :func:`to_graphviz` renders)."""
    tree = booster.trees[tree_index]
    lines = [f"digraph tree_{tree_index} {{", "  graph [rankdir=TB];", "  node [shape=box];"]
    for node in range(tree.n_nodes):
        label = _node_label(
            tree, node, booster.feature_names, precision, booster.categories
        ).replace('"', '\\"')
        shape = ', style=filled, fillcolor="#e8f0fe"' if tree.feature[node] < 0 else ""
        lines.append(f'  {node} [label="{label}"{shape}];')
        if tree.feature[node] >= 0:
            labels = _edge_labels(tree, node)
            for child, edge in zip((tree.left_child[node], tree.right_child[node]), labels):
                lines.append(f'  {node} -> {int(child)} [label="{edge}"];')
    lines.append("}")
    return "\n".join(lines)


def to_graphviz(booster, tree_index=0, precision=4):
    """One tree as a ``graphviz.Source`` (render it with ``.render()`` or show it in a
    notebook; rendering needs Graphviz's ``dot`` program).

    Raises
    ------
    ImportError
        The ``graphviz`` Python package is not installed (use :func:`plot_tree`,
        which needs only matplotlib).
    """
    try:
        import graphviz
    except ImportError as error:
        raise ImportError(
            "to_graphviz needs the graphviz package: pip install graphviz (or draw the "
            "tree with gpuboost.plot_tree, which needs only matplotlib)."
        ) from error
    return graphviz.Source(tree_to_dot(booster, tree_index, precision))


# ---- SHAP -------------------------------------------------------------------------
def _beeswarm_offsets(values, n_bins=100, width=0.4):
    """Vertical offsets that spread points of similar value apart (deterministic):
    the k-th point of a value bin goes to alternating sides, k/2 steps out."""
    n = len(values)
    if n == 0:
        return np.zeros(0)
    low, high = float(values.min()), float(values.max())
    span = high - low if high > low else 1.0
    bins = np.minimum(((values - low) / span * n_bins).astype(np.int64), n_bins - 1)
    order = np.argsort(bins, kind="stable")
    offsets = np.zeros(n)
    counts = np.bincount(bins, minlength=n_bins)
    rank = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    sides = np.where(rank % 2 == 0, 1.0, -1.0) * np.ceil(rank / 2.0)
    scale = width / max(counts.max() / 2.0, 1.0)
    offsets[order] = sides * scale
    return offsets


def plot_shap_summary(
    contributions,
    X,
    feature_names=None,
    max_display=20,
    ax=None,
    cmap="coolwarm",
    title="SHAP values",
):
    """A beeswarm summary of SHAP values (for users without the shap package).

    One row per feature, most important (largest mean ``|SHAP|``) on top; each dot is
    a row of ``X`` at its SHAP value, colored by the feature's value (low blue, high
    red, per-feature percentiles; missing values gray).

    Parameters
    ----------
    contributions : ndarray of shape (n_rows, n_features) or (n_rows, n_features + 1)
        ``booster.predict(X, pred_contribs=True)`` (the bias column is dropped); for a
        multi-output model pick one output: ``contributions[:, k, :]``.
    X : array-like of shape (n_rows, n_features)
    feature_names : list of str, optional
    max_display : int
        Features shown.
    ax : matplotlib Axes, optional
    cmap : str
    title : str

    Returns
    -------
    matplotlib Axes
    """
    values = np.asarray(contributions, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(
            f"contributions must be 2-D (rows, features), got shape {values.shape}; for a "
            f"multi-output model pass one output, contributions[:, k, :]."
        )
    if X.ndim != 2 or X.shape[0] != values.shape[0]:
        raise ValueError(f"X must be (n_rows, n_features) with {values.shape[0]} rows.")
    n_features = X.shape[1]
    if values.shape[1] == n_features + 1:
        values = values[:, :n_features]
    elif values.shape[1] != n_features:
        raise ValueError(
            f"contributions have {values.shape[1]} columns, X has {n_features} features."
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("contributions hold NaN or infinite values.")
    if feature_names is None:
        feature_names = [f"f{i}" for i in range(n_features)]
    importance = np.abs(values).mean(axis=0)
    order = np.argsort(-importance, kind="stable")[: int(max_display)][::-1]
    plt = _pyplot()
    ax = _axes(ax, figsize=(7.0, 0.45 * len(order) + 1.5))
    colormap = plt.get_cmap(cmap)
    for position, feature in enumerate(order):
        column = X[:, feature]
        shap_values = values[:, feature]
        offsets = _beeswarm_offsets(shap_values)
        missing = np.isnan(column)
        if np.any(~missing):
            low, high = np.nanpercentile(column, [5, 95])
            if not high > low:
                low, high = np.nanmin(column), np.nanmax(column)
            scale = (high - low) if high > low else 1.0
            color = np.clip((column[~missing] - low) / scale, 0.0, 1.0)
            ax.scatter(
                shap_values[~missing],
                position + offsets[~missing],
                c=colormap(color),
                s=10,
                linewidths=0,
                alpha=0.8,
                rasterized=len(column) > 5000,
            )
        if np.any(missing):
            ax.scatter(
                shap_values[missing], position + offsets[missing], color="0.6", s=10, linewidths=0
            )
    ax.axvline(0.0, color="0.5", lw=0.8)
    ax.set_yticks(np.arange(len(order)))
    ax.set_yticklabels([feature_names[i] for i in order])
    ax.set_ylim(-0.7, len(order) - 0.3)
    ax.set_xlabel("SHAP value (impact on the margin)")
    ax.set_title(title)
    mappable = plt.cm.ScalarMappable(cmap=colormap)
    mappable.set_array(np.array([0.0, 1.0]))
    colorbar = ax.figure.colorbar(mappable, ax=ax, ticks=[0, 1], aspect=40, pad=0.02)
    colorbar.set_ticklabels(["low", "high"])
    colorbar.set_label("feature value")
    return ax
