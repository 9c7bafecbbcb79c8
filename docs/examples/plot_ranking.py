"""
Learning to rank
================

``rank:ndcg`` (LambdaMART) on generated queries: 200 queries of 30 documents, relevance
0-3 from two of the features. The NDCG@5 of the training and held-out queries as the
model grows, recorded with ``evals_result``.
"""

import numpy as np

import gpuboost

rng = np.random.default_rng(0)
n_queries, per_query = 200, 30
X = rng.normal(size=(n_queries * per_query, 12))
score = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=len(X))
relevance = np.digitize(score, [0.0, 1.0, 2.0]).astype(float)  # 0, 1, 2, 3
group = np.full(n_queries, per_query)

split = 150 * per_query
dtrain = gpuboost.Dataset(X[:split], label=relevance[:split], group=group[:150])
dtest = gpuboost.Dataset(X[split:], label=relevance[split:], group=group[150:], reference=dtrain)

history = {}
booster = gpuboost.train(
    {"objective": "rank:ndcg", "eval_metric": "ndcg@5", "max_depth": 4, "learning_rate": 0.1},
    dtrain,
    num_boost_round=100,
    evals=[(dtrain, "train"), (dtest, "test")],
    evals_result=history,
    verbose_eval=False,
)
print("held-out NDCG@5 after 100 rounds", history["test"]["ndcg@5"][-1])

ax = gpuboost.plot_metric(history, metric="ndcg@5", title="NDCG@5 by round")
ax.figure.set_size_inches(6, 3.5)
ax.figure.tight_layout()
