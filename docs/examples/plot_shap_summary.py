"""
SHAP values and their summary plot
==================================

Exact TreeSHAP values (``pred_contribs=True``) of a model of scikit-learn's diabetes
table, drawn with :func:`gpuboost.plot_shap_summary` (no ``shap`` package needed). Each
row's values and its bias sum to the model's margin.
"""

import numpy as np
from sklearn.datasets import load_diabetes

import gpuboost

data = load_diabetes()
booster = gpuboost.train(
    {"max_depth": 4, "learning_rate": 0.05},
    gpuboost.Dataset(data.data, label=data.target, feature_names=list(data.feature_names)),
    num_boost_round=200,
)
contributions = booster.predict(data.data, pred_contribs=True)  # (442, 10 features + bias)
margin = booster.predict(data.data, output_margin=True)
print("largest |sum - margin|:", np.abs(contributions.sum(axis=1) - margin).max())

ax = gpuboost.plot_shap_summary(contributions, data.data, booster.feature_names)
ax.figure.tight_layout()
