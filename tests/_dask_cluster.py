"""Shared helpers of the gpuboost.dask tests: a LocalCluster of worker processes and
collections whose partitions are placed on chosen workers."""

import time

import numpy as np

WORKER_PROCESSES = 3
#: Seconds the placement helpers wait for the workers they place partitions on.
WORKERS_TIMEOUT_S = 120


def start_cluster(n_workers=WORKER_PROCESSES, **kwargs):
    """``(cluster, client)``: worker processes, one thread each, no dashboard."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=n_workers,
        processes=True,
        threads_per_worker=1,
        dashboard_address=":0",
        **kwargs,
    )
    return cluster, Client(cluster)


def workers_of(client):
    return sorted(client.scheduler_info(n_workers=-1)["workers"])


def ready_workers(client, n_workers):
    """The cluster's first ``n_workers`` workers, once that many are there: a worker process
    the nanny restarted (a busy machine) is waited for, and the scheduler's list asked again
    until it shows them (it can lag behind ``wait_for_workers``)."""
    deadline = time.monotonic() + WORKERS_TIMEOUT_S
    while True:
        client.wait_for_workers(n_workers, timeout=WORKERS_TIMEOUT_S)
        workers = workers_of(client)[:n_workers]
        if len(workers) == n_workers:
            return workers
        assert time.monotonic() < deadline, f"{len(workers)} of {n_workers} workers listed"
        time.sleep(0.2)


def spread(client, array, sizes, n_workers):
    """A dask array of ``array`` cut into partitions of ``sizes`` rows, partition ``i``
    held by worker ``i % n_workers`` (of the cluster's first ``n_workers``)."""
    import dask
    import dask.array as da

    assert sum(sizes) == len(array)
    workers = ready_workers(client, n_workers)
    pieces, start = [], 0
    for index, size in enumerate(sizes):
        chunk = np.ascontiguousarray(array[start : start + size])
        start += size
        future = client.scatter(chunk, workers=[workers[index % len(workers)]], hash=False)
        pieces.append(da.from_delayed(dask.delayed(future), shape=chunk.shape, dtype=chunk.dtype))
    return da.concatenate(pieces, axis=0)


def uneven_sizes(n_rows, n_partitions, seed=0):
    """``n_partitions`` positive sizes summing to ``n_rows``, deliberately uneven."""
    rng = np.random.default_rng(seed)
    weights = rng.random(n_partitions) + 0.2
    sizes = np.maximum((weights / weights.sum() * n_rows).astype(int), 1)
    sizes[-1] = n_rows - sizes[:-1].sum()
    assert sizes.min() > 0
    return sizes.tolist()


def spread_frame(client, pieces, n_workers):
    """A dask DataFrame of the pandas DataFrames ``pieces`` (its partitions, in order),
    partition ``i`` held by worker ``i % n_workers``; the pieces may differ in dtype
    (e.g. ``category`` columns with other categories or another order)."""
    import dask
    import dask.dataframe as dd

    workers = ready_workers(client, n_workers)
    futures = [
        client.scatter(piece, workers=[workers[index % len(workers)]], hash=False)
        for index, piece in enumerate(pieces)
    ]
    frame = dd.from_delayed(
        [dask.delayed(future) for future in futures], meta=pieces[0].iloc[:0], verify_meta=False
    )
    return client.persist(frame)  # holds the pieces (the frame's graph does not)


def frame_pieces(frame, sizes):
    """``frame`` cut into consecutive pieces of ``sizes`` rows."""
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [frame.iloc[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
