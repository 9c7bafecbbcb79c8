"""Draw the README's figures: docs/shap_summary.png and docs/plot_tree.png.

    python scripts/make_readme_figures.py

A model on HIGGS-like data (gpuboost.datasets.make_higgs_like), its SHAP values
(``predict(pred_contribs=True)``) as a beeswarm summary, and its first tree.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

import gpuboost
from gpuboost.datasets import make_higgs_like

DOCS = Path(__file__).resolve().parent.parent / "docs"


def main():
    X, y = make_higgs_like(6000, seed=0)
    names = [f"x{i}" for i in range(X.shape[1])]
    booster = gpuboost.train(
        {"objective": "binary:logistic", "max_depth": 4, "device": "cpu"},
        gpuboost.Dataset(X[:5000], label=y[:5000], feature_names=names),
        60,
    )
    contributions = booster.predict(X[5000:], pred_contribs=True)
    ax = gpuboost.plot_shap_summary(contributions, X[5000:], names, max_display=10)
    ax.figure.savefig(DOCS / "shap_summary.png", dpi=72, bbox_inches="tight")
    plt.close(ax.figure)
    small = gpuboost.train(
        {"objective": "binary:logistic", "max_depth": 2, "device": "cpu"},
        gpuboost.Dataset(X[:5000], label=y[:5000], feature_names=names),
        1,
    )
    ax = gpuboost.plot_tree(small, tree_index=0, fontsize=9)
    ax.figure.savefig(DOCS / "plot_tree.png", dpi=90, bbox_inches="tight")
    plt.close(ax.figure)


if __name__ == "__main__":
    main()
