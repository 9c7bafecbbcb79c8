"""
Categorical features
====================

A pandas ``category`` column is split on sets of categories (LightGBM's many-vs-many
search; XGBoost's ``enable_categorical``), with no one-hot encoding. Here the target
depends on which of 30 cities a row is in; the categorical model is compared with the
same model on the cities' integer codes.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gpuboost
from gpuboost.metrics import get_metric

rng = np.random.default_rng(0)
n = 6_000
cities = [f"city_{i:02d}" for i in range(30)]
effect = dict(zip(cities, rng.normal(scale=2.0, size=len(cities))))
frame = pd.DataFrame(
    {
        "city": pd.Categorical(rng.choice(cities, size=n), categories=cities),
        "size": rng.uniform(20, 200, size=n),
    }
)
y = frame["city"].map(effect).astype(float).to_numpy() + frame["size"].to_numpy() / 50
y += rng.normal(scale=0.5, size=n)

train, test = slice(0, 4_500), slice(4_500, n)
params = {"max_depth": 4, "learning_rate": 0.1, "min_data_per_group": 20}
categorical = gpuboost.train(params, gpuboost.Dataset(frame[train], label=y[train]), 100)
codes = frame.assign(city=frame["city"].cat.codes)  # the same column as plain integers
numeric = gpuboost.train(params, gpuboost.Dataset(codes[train], label=y[train]), 100)

rmse = {
    "categorical splits": get_metric("rmse")(y[test], categorical.predict(frame[test])),
    "integer codes": get_metric("rmse")(y[test], numeric.predict(codes[test])),
}
print(rmse)
print(categorical.get_dump()[0].splitlines()[0])

fig, ax = plt.subplots(figsize=(5, 3))
ax.barh(list(rmse), list(rmse.values()))
ax.set_xlabel("held-out RMSE (lower is better)")
fig.tight_layout()
