"""
The CUDA backend without a GPU: the emulation
=============================================

With ``GPUBOOST_EMULATE_CUDA=1`` the CUDA backend's kernels (``cuda/*.cu``) run on the
CPU, compiled by the host compiler with a model of the GPU's memory and threads; this is
how CI proves the GPU code without a GPU. The emulated GPU grows byte for byte the model
of the CPU backend. The figure is the first tree, drawn by :func:`gpuboost.plot_tree`.
"""

import os

import numpy as np

import gpuboost

rng = np.random.default_rng(0)
X = rng.normal(size=(5_000, 8))
y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(float)
params = {"objective": "binary:logistic", "max_depth": 3}

os.environ["GPUBOOST_EMULATE_CUDA"] = "1"  # read at each training
try:
    on_gpu = gpuboost.train({**params, "device": "cuda"}, gpuboost.Dataset(X, label=y), 20)
finally:
    del os.environ["GPUBOOST_EMULATE_CUDA"]
on_cpu = gpuboost.train({**params, "device": "cpu"}, gpuboost.Dataset(X, label=y), 20)
print("emulated CUDA == CPU, byte for byte:", on_gpu.save_raw() == on_cpu.save_raw())

ax = gpuboost.plot_tree(on_cpu, tree_index=0)
ax.figure.set_size_inches(9, 4)
ax.figure.tight_layout()
