"""One LocalCluster of worker processes for the gpuboost.dask tests that do not kill
workers (a cluster and its workers' first training cost seconds)."""

import pytest


@pytest.fixture(scope="session")
def client():
    pytest.importorskip("distributed")
    import _dask_cluster as dc

    cluster, client = dc.start_cluster(dc.WORKER_PROCESSES)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
