"""
Distributed training on Dask
============================

A local Dask cluster of two workers trains on a Dask array partitioned across them. The
model is byte for byte the one a single machine trains on the same rows: histograms are
exact integer sums, so how the rows are split between workers changes nothing.
"""

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster

import gpuboost
import gpuboost.dask as gbd

rng = np.random.default_rng(0)
X_local = rng.normal(size=(20_000, 10))
y_local = X_local[:, 0] + np.sin(3 * X_local[:, 1]) + 0.1 * rng.normal(size=len(X_local))
params = {"max_depth": 5, "learning_rate": 0.1}

with LocalCluster(n_workers=2, threads_per_worker=1, processes=False) as cluster:
    with Client(cluster) as client:
        X = da.from_array(X_local, chunks=(5_000, 10))  # four partitions on two workers
        y = da.from_array(y_local, chunks=5_000)
        dask_model = gbd.train(client, params, gbd.DaskDataset(client, X, label=y), 50)
        dask_prediction = gbd.predict(client, dask_model, X).compute()

local_model = gpuboost.train(params, gpuboost.Dataset(X_local, label=y_local), 50)
print("same model bytes as one machine:", dask_model.save_raw() == local_model.save_raw())
print("same predictions:", np.array_equal(dask_prediction, local_model.predict(X_local)))

fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(local_model.predict(X_local[:2_000]), dask_prediction[:2_000], s=4)
ax.set_xlabel("one machine")
ax.set_ylabel("Dask cluster")
ax.set_title("predictions (identical)")
fig.tight_layout()
