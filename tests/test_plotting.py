"""Plots (gpuboost/plotting.py): rendered to PNG with matplotlib's Agg backend and
checked not to be blank; errors without matplotlib / graphviz, and for bad input."""

import subprocess
import sys

import numpy as np
import pytest
from _cases import shap_case

import gpuboost

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(scope="module")
def model():
    booster, X = shap_case(11, n_rounds=4)
    return booster, X


def _render(ax, tmp_path):
    """Save the Axes' figure as PNG and return the image (height, width, 4) in [0, 1]."""
    path = tmp_path / "plot.png"
    ax.figure.savefig(path, dpi=60)
    plt.close(ax.figure)
    image = plt.imread(path)
    assert image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50
    return image


def _assert_not_blank(image):
    rgb = image[..., :3]
    # a blank figure is one color; a drawn one has many pixels far from the background
    background = np.median(rgb.reshape(-1, 3), axis=0)
    drawn = np.abs(rgb - background).sum(axis=-1) > 0.3
    assert drawn.mean() > 0.005, f"only {drawn.mean():.4f} of the pixels are drawn"


def test_plot_importance(model, tmp_path):
    booster, _ = model
    ax = gpuboost.plot_importance(booster, importance_type="gain", max_num_features=3)
    assert len(ax.get_yticklabels()) == 3
    labels = [label.get_text() for label in ax.get_yticklabels()]
    gains = booster.feature_importance("gain")
    assert labels[-1] == booster.feature_names[int(np.argmax(gains))]  # largest on top
    assert ax.get_xlabel() == "gain"
    _assert_not_blank(_render(ax, tmp_path))


def test_plot_metric(tmp_path):
    X, y = shap_case(12, n_rounds=1)[1], None
    y = np.nan_to_num(X[:, 0], posinf=3, neginf=-3)
    train = gpuboost.Dataset(X[:300], label=y[:300])
    valid = gpuboost.Dataset(X[300:], label=y[300:], reference=train)
    history = {}
    gpuboost.train(
        {"eval_metric": ["rmse", "mae"]},
        train,
        8,
        evals=[(train, "train"), (valid, "valid")],
        evals_result=history,
        verbose_eval=False,
    )
    ax = gpuboost.plot_metric(history, metric="mae")
    assert [line.get_label() for line in ax.get_lines()] == ["train", "valid"]
    np.testing.assert_array_equal(ax.get_lines()[1].get_ydata(), history["valid"]["mae"])
    _assert_not_blank(_render(ax, tmp_path))
    with pytest.raises(ValueError, match="not recorded"):
        gpuboost.plot_metric(history, metric="logloss")
    with pytest.raises(ValueError, match="evals_result is empty"):
        gpuboost.plot_metric({})


def test_plot_tree_draws_every_node(model, tmp_path):
    booster, _ = model
    tree = booster.trees[1]
    ax = gpuboost.plot_tree(booster, tree_index=1)
    texts = [text.get_text() for text in ax.texts]
    assert sum(text.startswith("leaf=") for text in texts) == tree.n_leaves
    internal = tree.n_nodes - tree.n_leaves
    assert sum("<=" in text for text in texts) == internal
    assert sum("missing" in text for text in texts) == internal  # one default edge each
    _assert_not_blank(_render(ax, tmp_path))
    with pytest.raises(IndexError, match="out of range"):
        gpuboost.plot_tree(booster, tree_index=len(booster.trees))


def test_to_graphviz_source(model):
    booster, _ = model
    graphviz = pytest.importorskip("graphviz")
    tree = booster.trees[0]
    source = gpuboost.to_graphviz(booster, 0)
    assert isinstance(source, graphviz.Source)
    assert source.source.count("->") == 2 * (tree.n_nodes - tree.n_leaves)
    assert source.source.count("leaf=") == tree.n_leaves


def test_plot_shap_summary(model, tmp_path):
    booster, X = model
    contributions = booster.predict(X, pred_contribs=True)
    ax = gpuboost.plot_shap_summary(contributions, X, booster.feature_names, max_display=4)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    top = booster.feature_names[int(np.argmax(np.abs(contributions[:, :-1]).mean(axis=0)))]
    assert len(labels) == 4 and labels[-1] == top
    points = sum(len(collection.get_offsets()) for collection in ax.collections)
    assert points == 4 * len(X)
    _assert_not_blank(_render(ax, tmp_path))
    with pytest.raises(ValueError, match="one output"):
        gpuboost.plot_shap_summary(contributions[:, None, :], X)


def test_import_gpuboost_does_not_import_matplotlib_and_plots_explain_a_missing_one():
    code = (
        "import sys; import gpuboost; assert 'matplotlib' not in sys.modules; "
        "sys.modules['matplotlib'] = None; sys.modules['matplotlib.pyplot'] = None\n"
        "try:\n    gpuboost.plot_metric({'a': {'b': [1.0]}})\n"
        'except ImportError as e:\n    assert "gpuboost[plot]" in str(e), e\n'
        "else:\n    raise SystemExit('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
