"""
Quantiles that never cross
==========================

One model for the 10 %, 50 % and 90 % quantiles (``quantile_alpha=[0.1, 0.5, 0.9]``):
its predictions are rearranged so that the levels never cross on any row, which never
increases the pinball loss.
"""

import matplotlib.pyplot as plt
import numpy as np

import gpuboost

rng = np.random.default_rng(0)
x = rng.uniform(0, 10, size=3_000)
y = np.sin(x) + (0.2 + 0.1 * x) * rng.normal(size=len(x))  # noise grows with x
params = {"objective": "reg:quantile", "quantile_alpha": [0.1, 0.5, 0.9], "max_depth": 3}
booster = gpuboost.train(params, gpuboost.Dataset(x[:, None], label=y), 200)

grid = np.linspace(0, 10, 400)
low, median, high = booster.predict(grid[:, None]).T
print("rows where the levels cross:", int(np.sum((low > median) | (median > high))))

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.scatter(x, y, s=2, color="lightgrey")
ax.fill_between(grid, low, high, alpha=0.3, label="10 %-90 %")
ax.plot(grid, median, label="median")
ax.legend()
fig.tight_layout()
