"""The GPU suite's distributed test: CUDA workers on real GPUs (skipped without one;
``benchmarks/gpu_check.sh`` runs ``pytest -m gpu``). With dask-cuda, one worker per GPU
(``LocalCUDACluster``); without it, one worker process on the first GPU. Histograms go
device -> host for the exchange; the model equals the single-node CUDA model byte for
byte (the workers' per-row arithmetic is the single-node kernels'). Under the emulation
the same path is tested in every CI run (test_train.py)."""

import os

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.emulation import EMULATE_ENV_VAR

pytestmark = pytest.mark.gpu


def test_cuda_workers_give_the_single_node_gpu_model():
    pytest.importorskip("distributed")
    if os.environ.get(EMULATE_ENV_VAR) == "1":
        pytest.skip("the GPU suite needs a real GPU, not the emulation")
    cupy = pytest.importorskip("cupy")
    try:
        n_gpus = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # no driver
        pytest.skip(f"no usable CUDA device: {error}")
    if n_gpus < 1:
        pytest.skip("no CUDA device")
    import _dask_cluster as dc
    from distributed import Client

    from gpuboost.dask import DaskDataset, train

    try:
        from dask_cuda import LocalCUDACluster

        cluster = LocalCUDACluster(dashboard_address=":0")
        client = Client(cluster)
    except ImportError:
        cluster, client = dc.start_cluster(1)
    try:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(100_000, 20))
        y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.float64)
        params = {"objective": "binary:logistic", "max_depth": 6, "device": "cuda"}
        single = gpuboost.train(params, gpuboost.Dataset(X, label=y), 10)
        n_workers = len(dc.workers_of(client))
        sizes = dc.uneven_sizes(len(X), 2 * n_workers + 1)
        dtrain = DaskDataset(
            client,
            dc.spread(client, X, sizes, n_workers),
            label=dc.spread(client, y, sizes, n_workers),
        )
        model = train(client, params, dtrain, 10, verbose_eval=False)
        assert model.save_raw() == single.save_raw()
    finally:
        client.close()
        cluster.close()
