"""
Early stopping with a metric plot
=================================

Training stops when the validation log loss has not improved for 20 rounds; the booster
keeps every round and predicts with the best one (``best_iteration``).
:func:`gpuboost.plot_metric` draws the recorded history.
"""

import numpy as np

import gpuboost

rng = np.random.default_rng(1)
X = rng.normal(size=(3_000, 15))
y = (X[:, 0] - X[:, 1] + 0.8 * rng.normal(size=len(X)) > 0).astype(float)
dtrain = gpuboost.Dataset(X[:2_000], label=y[:2_000])
dvalid = gpuboost.Dataset(X[2_000:], label=y[2_000:], reference=dtrain)

history = {}
booster = gpuboost.train(
    {"objective": "binary:logistic", "eval_metric": "logloss", "learning_rate": 0.3},
    dtrain,
    num_boost_round=500,
    evals=[(dtrain, "train"), (dvalid, "valid")],
    evals_result=history,
    early_stopping_rounds=20,
    verbose_eval=False,
)
print("best iteration", booster.best_iteration, "best score", booster.best_score)
print("rounds trained", booster.num_boosted_rounds())

ax = gpuboost.plot_metric(history, metric="logloss")
ax.axvline(booster.best_iteration, color="grey", linestyle="--", label="best iteration")
ax.legend()
ax.figure.set_size_inches(6, 3.5)
ax.figure.tight_layout()
