"""gpuboost.dask: the distributed model is byte-identical to the single-node one.

The session's LocalCluster of 3 worker processes (conftest.py); a 2-worker training is one
whose partitions are all on two of them. Data are small (CI time): each configuration
trains a few rounds on a few thousand rows, once on one machine, then on 2 and 3
workers with 2, 5 and 7 uneven partitions.
"""

import os

import numpy as np
import pytest

pytest.importorskip("distributed")

import _dask_cluster as dc
from _tiers import sampled

import gpuboost
from gpuboost.boosting.callback import TrainingCheckPoint
from gpuboost.dask import DaskDataset, predict, train

#: Every Dask test on one xdist worker (pyproject: --dist loadgroup), which starts the
#: session's clusters once.
pytestmark = pytest.mark.xdist_group("dask")

N_ROWS, N_FEATURES = 3000, 8
ROUNDS = 4


def _data(kind, n_rows=N_ROWS, n_features=N_FEATURES, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(n_rows) < 0.1, 1] = np.nan
    score = X[:, 0] - np.nan_to_num(X[:, 1]) + 0.5 * X[:, 2] ** 2 + 0.3 * rng.normal(size=n_rows)
    if kind == "binary":
        y = (score > 0.5).astype(np.float64)
    elif kind == "multiclass":
        y = np.digitize(score, [-0.5, 0.5, 1.5]).astype(np.float64)
    else:
        y = score
    weight = rng.uniform(0.5, 2.0, size=n_rows)
    return X, y, weight


def _dask_dataset(client, X, y, weight, n_partitions, n_workers, seed=0, **kwargs):
    sizes = dc.uneven_sizes(len(X), n_partitions, seed)
    return DaskDataset(
        client,
        dc.spread(client, X, sizes, n_workers),
        label=dc.spread(client, y, sizes, n_workers),
        weight=None if weight is None else dc.spread(client, weight, sizes, n_workers),
        **kwargs,
    )


CONFIGS = {
    "binary": ("binary", {"objective": "binary:logistic", "max_depth": 4}),
    "multiclass": ("multiclass", {"objective": "multi:softprob", "num_class": 4, "max_depth": 3}),
    "regression_sampled": (
        "regression",
        {
            "objective": "reg:squarederror",
            "subsample": 0.7,
            "colsample_bytree": 0.8,
            "colsample_bylevel": 0.9,
            "colsample_bynode": 0.8,
            "max_depth": 5,
        },
    ),
    "goss": (
        "binary",
        {"objective": "binary:logistic", "data_sample_strategy": "goss", "max_depth": 4},
    ),
    "constraints": (
        "regression",
        {
            "objective": "reg:squarederror",
            "monotone_constraints": [1, 0, -1, 0, 0, 1, 0, 0],
            "interaction_constraints": [[0, 1, 2], [2, 3, 4, 5], [6, 7]],
            "max_depth": 4,
            "path_smooth": 5.0,  # smoothed weights clipped to the constraints' bounds
            "huber_alpha": 0.9,  # reg:huber's only: ignored here, as on one machine
        },
    ),
    "scale_pos_weight": (
        "binary",
        {"objective": "binary:logistic", "scale_pos_weight": 3.0, "max_depth": 4},
    ),
    "is_unbalance": ("binary", {"objective": "binary:logistic", "is_unbalance": True}),
    "lossguide": (
        "regression",
        {
            "objective": "reg:squarederror",
            "grow_policy": "lossguide",
            "max_leaves": 12,
            "max_depth": 0,
            "min_child_weight": 3.0,
            "path_smooth": 8.0,
        },
    ),
}


@pytest.mark.parametrize(
    "name",
    # the slow tier adds goss, constraints and the class weights to these
    sampled(sorted(CONFIGS), {"binary", "multiclass", "regression_sampled", "lossguide"}),
)
def test_model_bytes_equal_single_node(client, name):
    """2 and 3 workers, 2, 5 and 7 uneven partitions: the single-node model's bytes."""
    kind, params = CONFIGS[name]
    params = dict(params, seed=7, device="cpu")
    X, y, weight = _data(kind)
    if name == "goss":
        weight = None  # round 0's |g| ties (two values): the tie rule across workers
    single = gpuboost.train(params, gpuboost.Dataset(X, label=y, weight=weight), ROUNDS)
    expected = single.save_raw()
    layouts = [(5, 2), (7, 3)] if name != "binary" else [(2, 2), (5, 3), (7, 3)]
    for n_partitions, n_workers in layouts:
        dtrain = _dask_dataset(client, X, y, weight, n_partitions, n_workers, seed=n_partitions)
        assert len(dtrain.workers()) == n_workers
        model = train(client, params, dtrain, ROUNDS, verbose_eval=False)
        assert model.save_raw() == expected, (name, n_partitions, n_workers)


def test_binning_sample_and_ci_sized_data(client):
    """50k x 20 with a binning subsample smaller than the rows: the bin edges come from
    the same rows (by global row id) as on one machine."""
    X, y, _ = _data("binary", n_rows=50_000, n_features=20, seed=3)
    params = {"objective": "binary:logistic", "max_depth": 6, "seed": 1, "device": "cpu"}
    dataset = gpuboost.Dataset(X, label=y, binning_subsample=20_000)
    single = gpuboost.train(params, dataset, 2)
    dtrain = _dask_dataset(client, X, y, None, 5, 3, binning_subsample=20_000)
    mapper = dtrain.bind_binning(255, 1)
    for ours, theirs in zip(mapper.bin_edges_, dataset.bin_mapper.bin_edges_):
        np.testing.assert_array_equal(ours, theirs)
    assert train(client, params, dtrain, 2, verbose_eval=False).save_raw() == single.save_raw()


def test_eval_sets_metrics_and_early_stopping(client):
    """Evaluation sets on the workers: every reported value, and where early stopping
    stops, equal single-node training's."""
    X, y, weight = _data("binary", seed=5)
    Xv, yv, wv = _data("binary", n_rows=1000, seed=6)
    params = {
        "objective": "binary:logistic",
        "eval_metric": ["logloss", "auc", "error"],
        "learning_rate": 0.5,
        "max_depth": 6,
        "seed": 2,
        "device": "cpu",
    }
    dtrain_single = gpuboost.Dataset(X, label=y, weight=weight)
    expected_log = {}
    single = gpuboost.train(
        params,
        dtrain_single,
        40,
        evals=[(dtrain_single, "train"), (gpuboost.Dataset(Xv, label=yv, weight=wv), "valid")],
        early_stopping_rounds=3,
        evals_result=expected_log,
        verbose_eval=False,
    )
    assert single.num_boosted_rounds() < 40  # it stopped early
    dtrain = _dask_dataset(client, X, y, weight, 5, 3)
    dvalid = _dask_dataset(client, Xv, yv, wv, 3, 2, seed=9)
    log = {}
    model = train(
        client,
        params,
        dtrain,
        40,
        evals=[(dtrain, "train"), (dvalid, "valid")],
        early_stopping_rounds=3,
        evals_result=log,
        verbose_eval=False,
    )
    assert log == expected_log
    assert model.best_iteration == single.best_iteration
    assert model.save_raw() == single.save_raw()


def test_predict_is_lazy_and_partitionwise(client):
    X, y, _ = _data("multiclass", seed=8)
    params = {"objective": "multi:softprob", "num_class": 4, "max_depth": 3, "device": "cpu"}
    booster = gpuboost.train(params, gpuboost.Dataset(X, label=y), 3)
    dX = dc.spread(client, X, dc.uneven_sizes(len(X), 4), 3)
    lazy = predict(client, booster, dX)
    assert lazy.shape == (len(X), 4)
    np.testing.assert_array_equal(lazy.compute(), booster.predict(X))
    margins = predict(client, booster, dX, output_margin=True).compute()
    np.testing.assert_array_equal(margins, booster.predict(X, output_margin=True))


def test_checkpoint_resume_gives_the_uninterrupted_model(client, tmp_path):
    X, y, weight = _data("regression", seed=11)
    params = {"objective": "reg:squarederror", "subsample": 0.8, "max_depth": 4, "seed": 4}
    params["device"] = "cpu"
    dtrain = _dask_dataset(client, X, y, weight, 5, 2)
    full = train(client, params, dtrain, 6, verbose_eval=False)
    checkpoint = TrainingCheckPoint(tmp_path, interval=3)
    train(client, params, dtrain, 3, callbacks=[checkpoint], verbose_eval=False)
    resumed = train(client, params, dtrain, 3, init_model=checkpoint.path, verbose_eval=False)
    assert resumed.num_boosted_rounds() == 6
    assert resumed.save_raw() == full.save_raw()


def test_emulated_cuda_workers_give_the_single_node_model(client):
    """Workers on the CUDA backend (the CPU emulation of its kernels): histograms come
    from the device, the model is single-node's (CPU == CUDA contract)."""
    X, y, _ = _data("binary", n_rows=400, n_features=4, seed=12)
    params = {"objective": "binary:logistic", "max_depth": 3, "seed": 5, "device": "cuda"}
    dtrain = _dask_dataset(client, X, y, None, 3, 2)
    # A lambda travels by value; os.environ inside it is the worker's.
    client.run(lambda: os.environ.__setitem__("GPUBOOST_EMULATE_CUDA", "1"))
    try:
        backends = client.run(lambda: __import__("gpuboost").backends.get_backend("cuda").name)
        assert set(backends.values()) == {"cuda"}
        model = train(client, params, dtrain, 2, verbose_eval=False)
    finally:
        client.run(lambda: os.environ.pop("GPUBOOST_EMULATE_CUDA", None))
    single = gpuboost.train(dict(params, device="cpu"), gpuboost.Dataset(X, label=y), 2)
    assert model.params["device"] == "cuda"
    model.params = single.params  # the only difference the device makes in the file
    assert model.save_raw() == single.save_raw()


def _on_device(block):
    """A partition as a device array of the worker's (emulated) CUDA backend, as
    ``cupy.asarray`` makes a dask-cuda worker's partitions."""
    from gpuboost.backends import get_backend

    return get_backend("cuda").xp.asarray(block)


def _record_host_copies():
    """On a worker: record the shape and dtype of every device-to-host copy
    (``DeviceArray.get``)."""
    from gpuboost.backends.emulation import device_array

    original = device_array.DeviceArray.get
    copies = []

    def get(self, *args, **kwargs):
        copies.append((self.shape, self.dtype.kind))
        return original(self, *args, **kwargs)

    device_array.DeviceArray.get = get
    device_array.recorded_host_copies = (copies, original)


def _recorded_host_copies():
    """On a worker: stop recording; the copies recorded."""
    from gpuboost.backends.emulation import device_array

    copies, original = device_array.recorded_host_copies
    device_array.DeviceArray.get = original
    return copies


def test_device_partitions_on_emulated_cuda_workers(client):
    """Partitions that are device arrays (CuPy's role played by the emulation's arrays,
    which refuse implicit host conversion) stay on their workers: each worker's CUDA
    backend trains on them (no copy of a feature partition to the host: the binning
    sample's rows only), the model is single-node's; predict takes them too."""
    X, y, weight = _data("regression", n_rows=500, n_features=4, seed=15)
    params = {"max_depth": 3, "seed": 5, "device": "cuda"}
    sizes = dc.uneven_sizes(len(X), 4, 2)
    client.run(lambda: os.environ.__setitem__("GPUBOOST_EMULATE_CUDA", "1"))
    try:
        device_X = dc.spread(client, X, sizes, 2).map_blocks(
            _on_device, dtype=X.dtype, meta=np.empty((0, 0))
        )
        parts = [
            dc.spread(client, values, sizes, 2).map_blocks(
                _on_device, dtype=values.dtype, meta=np.empty((0,))
            )
            for values in (y, weight)
        ]
        dtrain = DaskDataset(
            client, device_X, label=parts[0], weight=parts[1], binning_subsample=40
        )
        kinds = client.gather([client.submit(type, part["X"]) for part in dtrain.partitions])
        assert {kind.__name__ for kind in kinds} == {"DeviceArray"}
        client.run(_record_host_copies)
        try:
            model = train(client, params, dtrain, 2, verbose_eval=False)
        finally:
            copies = client.run(_recorded_host_copies)
        # Rows of the features (2-D, float, n_features columns): the sample's only.
        feature_rows = [
            shape[0]
            for worker_copies in copies.values()
            for shape, kind in worker_copies
            if len(shape) == 2 and shape[1] == X.shape[1] and kind == "f"
        ]
        assert feature_rows and sum(feature_rows) <= 40
        lazy = predict(client, model, device_X).compute()
    finally:
        client.run(lambda: os.environ.pop("GPUBOOST_EMULATE_CUDA", None))
    single = gpuboost.train(
        dict(params, device="cpu"),
        gpuboost.Dataset(X, label=y, weight=weight, binning_subsample=40),
        2,
    )
    model.params = single.params  # the only difference the device makes in the file
    assert model.save_raw() == single.save_raw()
    np.testing.assert_array_equal(lazy, single.predict(X))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"tree_method": "exact"}, "tree_method='exact'"),
        ({"tree_method": "approx"}, "tree_method='approx'"),
        ({"objective": "reg:absoluteerror"}, "leaf refit"),
        ({"sampling_method": "gradient_based", "subsample": 0.5}, "gradient_based"),
        ({"booster": "adaboost", "objective": "binary:logistic"}, "adaboost"),
        ({"objective": "reg:quantile"}, "leaf refit"),
        ({"objective": "reg:huber", "huber_alpha": 0.9}, "leaf refit"),
        ({"enable_bundle": True, "max_conflict_rate": 0.1}, "max_conflict_rate"),
    ],
)
def test_refuses_what_it_cannot_make_identical(client, params, match):
    X, y, _ = _data("binary", n_rows=200, seed=1)
    dtrain = _dask_dataset(client, X, y, None, 2, 2)
    with pytest.raises(ValueError, match=match):
        train(client, params, dtrain, 1)


def _weighted_logistic(margin, dataset):
    """A custom objective: weighted logistic loss, per row (reads the Dataset's rows)."""
    probability = 1.0 / (1.0 + np.exp(-margin))
    weight = dataset.get_weight()
    return (
        (probability - dataset.get_label()) * weight,
        np.maximum(probability * (1.0 - probability), 1e-16) * weight,
    )


def test_custom_objective_is_called_on_each_workers_rows(client):
    """A per-row custom objective (obj= or a callable objective parameter), called by each
    worker on a Dataset of its rows: the single-node model."""
    X, y, weight = _data("binary", seed=16)
    params = {"max_depth": 4, "seed": 2, "device": "cpu"}
    single = gpuboost.train(
        params, gpuboost.Dataset(X, label=y, weight=weight), ROUNDS, obj=_weighted_logistic
    )
    dtrain = _dask_dataset(client, X, y, weight, 5, 3)
    model = train(client, params, dtrain, ROUNDS, verbose_eval=False, obj=_weighted_logistic)
    assert model.save_raw() == single.save_raw()
    given = dict(params, objective=_weighted_logistic)
    assert train(client, given, dtrain, ROUNDS, verbose_eval=False).save_raw() == single.save_raw()


def test_class_weights_need_a_binary_objective(client):
    X, y, _ = _data("regression", n_rows=200, seed=1)
    dtrain = _dask_dataset(client, X, y, None, 2, 2)
    with pytest.raises(ValueError, match="binary objective"):
        train(client, {"scale_pos_weight": 2.0}, dtrain, 1)


@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:map", "rank:pairwise"])
def test_ranking_matches_single_node(client, monkeypatch, objective):
    """Queries never split across workers (partitions re-cut at query bounds), the pair
    sums' fixed-point scales from every worker's maxima per chunk of the single-node
    plan (several chunks here): the single-node model and ranking metrics."""
    import gpuboost.objectives.ranking as ranking

    monkeypatch.setattr(ranking, "MAX_PAIR_CELLS_PER_CHUNK", 5000)  # 19 chunks
    rng = np.random.default_rng(4)
    group = rng.integers(2, 40, size=150)
    n_rows = int(group.sum())
    X = rng.normal(size=(n_rows, 6))
    y = np.clip(np.rint(X[:, 0] + rng.normal(size=n_rows)), 0, 4)
    assert len(ranking.plan_query_chunks(group, 30)) > 1
    params = {"objective": objective, "max_depth": 4, "device": "cpu"}
    params["eval_metric"] = ["ndcg@5", "map"]
    dataset = gpuboost.Dataset(X, label=y, group=group)
    expected_log = {}
    single = gpuboost.train(
        params, dataset, 3, evals=[(dataset, "train")], evals_result=expected_log
    )
    sizes = dc.uneven_sizes(n_rows, 7, 7)  # bounds inside queries: re-cut
    dtrain = DaskDataset(
        client,
        dc.spread(client, X, sizes, 3),
        label=dc.spread(client, y, sizes, 3),
        group=group,
    )
    bounds = dtrain.row_offsets
    assert set(bounds.tolist()) <= set(np.concatenate([[0], np.cumsum(group)]).tolist())
    log = {}
    model = train(
        client, params, dtrain, 3, evals=[(dtrain, "train")], evals_result=log, verbose_eval=False
    )
    assert model.save_raw() == single.save_raw()
    assert log == expected_log


def test_qid_gives_the_single_node_queries_and_model(client):
    """Per-row query ids (not sorted, each query's rows contiguous) in partitions cut
    inside queries: the workers' runs merged on the client are the single-node query
    sizes, and the model is the single-node one."""
    rng = np.random.default_rng(6)
    group = rng.integers(2, 30, size=60)
    n_rows = int(group.sum())
    qid = np.repeat(rng.permutation(1000)[: len(group)], group)
    X = rng.normal(size=(n_rows, 5))
    y = np.clip(np.rint(X[:, 0] + rng.normal(size=n_rows)), 0, 4)
    params = {"objective": "rank:ndcg", "max_depth": 3, "device": "cpu"}
    single = gpuboost.train(params, gpuboost.Dataset(X, label=y, qid=qid), 3)
    sizes = dc.uneven_sizes(n_rows, 5, 3)
    dtrain = DaskDataset(
        client,
        dc.spread(client, X, sizes, 2),
        label=dc.spread(client, y, sizes, 2),
        qid=dc.spread(client, qid, sizes, 2),
    )
    np.testing.assert_array_equal(dtrain.group, group)
    model = train(client, params, dtrain, 3, verbose_eval=False)
    assert model.save_raw() == single.save_raw()


def test_bad_qid_is_refused(client):
    X, y, _ = _data("binary", n_rows=200, seed=1)
    sizes = [100, 100]
    qid = np.repeat([3, 1, 3, 2], 50)  # query 3 comes back after query 1
    with pytest.raises(ValueError, match="qid 3 reappears at row 100"):
        DaskDataset(
            client,
            dc.spread(client, X, sizes, 2),
            label=dc.spread(client, y, sizes, 2),
            qid=dc.spread(client, qid, sizes, 2),
        )
    with pytest.raises(ValueError, match="either group"):
        DaskDataset(
            client,
            dc.spread(client, X, sizes, 2),
            group=[100, 100],
            qid=dc.spread(client, qid, sizes, 2),
        )


def test_dataframes_and_feature_names(client):
    """dask DataFrame / Series input: the column names, and the single-node model."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y, weight = _data("regression", n_rows=1200, n_features=4, seed=13)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    params = {"max_depth": 3, "device": "cpu"}
    single = gpuboost.train(params, gpuboost.Dataset(frame, label=y, weight=weight), 3)
    dtrain = DaskDataset(
        client,
        dd.from_pandas(frame, npartitions=3),
        label=dd.from_pandas(pd.Series(y), npartitions=3),
        weight=dd.from_pandas(pd.Series(weight), npartitions=3),
    )
    assert dtrain.feature_names == ["a", "b", "c", "d"]
    model = train(client, params, dtrain, 3, verbose_eval=False)
    assert model.feature_names == ["a", "b", "c", "d"]
    assert model.save_raw() == single.save_raw()


class _DeviceFrame:
    """Stands for a cuDF DataFrame: ``values`` is a device array."""

    def __init__(self, values):
        self.values = values


def test_device_partitions_are_copied_to_the_host_only_where_needed():
    """Labels come to the host whole; of features only the binning sample's rows (the
    worker's matrix stays a device array)."""
    from gpuboost.backends.emulation.device_array import namespace as xp
    from gpuboost.backends.emulation.traffic import record_traffic
    from gpuboost.dask.worker import _concat_features, host_array, take_rows

    values = np.arange(12.0).reshape(4, 3)
    for part in (xp.asarray(values), _DeviceFrame(xp.asarray(values))):
        np.testing.assert_array_equal(host_array(part), values)
        with record_traffic() as log:
            np.testing.assert_array_equal(take_rows(part, [1, 3]), values[[1, 3]])
        assert sum(e.bytes for e in log.events if e.kind == "to_host") == 2 * 3 * 8
    matrix = _concat_features([xp.asarray(values[:1]), _DeviceFrame(xp.asarray(values[1:]))])
    assert type(matrix).__name__ == "DeviceArray"
    np.testing.assert_array_equal(matrix.get(), values)


def test_empty_partitions_are_dropped(client):
    import dask.array as da

    X, y, weight = _data("regression", n_rows=1000, n_features=3, seed=14)
    chunks = (500, 0, 500)
    dtrain = DaskDataset(
        client,
        da.from_array(X, chunks=(chunks, (3,))),
        label=da.from_array(y, chunks=(chunks,)),
        weight=da.from_array(weight, chunks=(chunks,)),
    )
    assert dtrain.row_offsets.tolist() == [0, 500, 1000]
    params = {"max_depth": 3, "device": "cpu"}
    single = gpuboost.train(params, gpuboost.Dataset(X, label=y, weight=weight), 2)
    assert train(client, params, dtrain, 2, verbose_eval=False).save_raw() == single.save_raw()


def test_feature_weights_give_the_single_node_model(client):
    """``DaskDataset(feature_weights=)``: the client samples the columns by weight as one
    machine does (gpuboost.tree.feature_sampler.weighted_choice)."""
    rng = np.random.default_rng(21)
    X = rng.normal(size=(600, 8))
    y = X @ rng.normal(size=8) + 0.3 * rng.normal(size=600)
    weights = np.linspace(0.1, 1.0, 8)
    params = {"max_depth": 3, "colsample_bytree": 0.5, "colsample_bynode": 0.6, "device": "cpu"}
    sizes = dc.uneven_sizes(len(X), 3, 2)
    dtrain = DaskDataset(
        client,
        dc.spread(client, X, sizes, 2),
        label=dc.spread(client, y, sizes, 2),
        feature_weights=weights,
    )
    model = train(client, params, dtrain, 6, verbose_eval=False)
    single = gpuboost.train(params, gpuboost.Dataset(X, label=y, feature_weights=weights), 6)
    assert model.save_raw() == single.save_raw()


def test_a_learning_rate_schedule_gives_the_single_node_model(client):
    """Callbacks' schedules run on the client's learner as on one machine; the workers
    sample rows with the run's subsample, which therefore cannot change between rounds."""
    X, y, _ = _data("regression", n_rows=500, n_features=4, seed=22)
    params = {"max_depth": 3, "device": "cpu"}
    rates = [0.5, 0.3, 0.2, 0.1]
    sizes = dc.uneven_sizes(len(X), 3, 2)
    dtrain = DaskDataset(
        client, dc.spread(client, X, sizes, 2), label=dc.spread(client, y, sizes, 2)
    )
    model = train(
        client,
        params,
        dtrain,
        4,
        callbacks=[gpuboost.reset_parameter(learning_rate=rates, reg_lambda=[1, 2, 3, 4])],
        verbose_eval=False,
    )
    single = gpuboost.train(
        params,
        gpuboost.Dataset(X, label=y),
        4,
        callbacks=[gpuboost.reset_parameter(learning_rate=rates, reg_lambda=[1, 2, 3, 4])],
    )
    assert model.save_raw() == single.save_raw()
    with pytest.raises(ValueError, match="subsample cannot change between rounds"):
        train(
            client,
            params,
            dtrain,
            2,
            callbacks=[gpuboost.reset_parameter(subsample=[1.0, 0.5])],
            verbose_eval=False,
        )


def test_the_update_process_is_refused_on_a_cluster(client):
    X, y, _ = _data("regression", n_rows=100, n_features=3, seed=23)
    sizes = dc.uneven_sizes(len(X), 2, 2)
    dtrain = DaskDataset(
        client, dc.spread(client, X, sizes, 2), label=dc.spread(client, y, sizes, 2)
    )
    with pytest.raises(ValueError, match="gpuboost.dask.train grows new trees"):
        train(client, {"process_type": "update", "device": "cpu"}, dtrain, 1)


def test_forests_give_the_single_node_model_and_dart_is_refused(client):
    """``num_parallel_tree``: every tree of a round's forest samples its rows by global
    row id and its columns on the client, as on one machine. DART re-predicts every tree
    in its dropping rounds and is refused."""
    X, y, _ = _data("regression", n_rows=500, n_features=4, seed=24)
    sizes = dc.uneven_sizes(len(X), 3, 2)
    dtrain = DaskDataset(
        client, dc.spread(client, X, sizes, 2), label=dc.spread(client, y, sizes, 2)
    )
    params = {
        "max_depth": 3,
        "num_parallel_tree": 3,
        "subsample": 0.7,
        "colsample_bynode": 0.6,
        "device": "cpu",
    }
    model = train(client, params, dtrain, 2, verbose_eval=False)
    single = gpuboost.train(params, gpuboost.Dataset(X, label=y), 2)
    assert len(model.trees) == 6 and model.save_raw() == single.save_raw()
    with pytest.raises(ValueError, match="booster='dart'"):
        train(client, {"booster": "dart", "device": "cpu"}, dtrain, 1, verbose_eval=False)


def test_several_expectile_levels_give_the_single_node_model(client):
    """One output per level with no leaf refit trains on a cluster as on one machine
    (several quantile levels refit their leaves and are refused, as reg:quantile is)."""
    X, y, _ = _data("regression", n_rows=500, n_features=4, seed=25)
    sizes = dc.uneven_sizes(len(X), 3, 2)
    dtrain = DaskDataset(
        client, dc.spread(client, X, sizes, 2), label=dc.spread(client, y, sizes, 2)
    )
    params = {
        "objective": "reg:expectileerror",
        "expectile_alpha": [0.2, 0.8],
        "max_depth": 3,
        "device": "cpu",
    }
    model = train(client, params, dtrain, 3, verbose_eval=False)
    single = gpuboost.train(params, gpuboost.Dataset(X, label=y), 3)
    assert model.save_raw() == single.save_raw()
    with pytest.raises(ValueError, match="reg:quantile"):
        train(
            client,
            {"objective": "reg:quantile", "quantile_alpha": [0.2, 0.8], "device": "cpu"},
            dtrain,
            1,
            verbose_eval=False,
        )


def test_cox_trains_the_single_node_model_from_gradients_over_every_worker(client):
    """survival:cox: each row's gradient sums over its risk set, the rows of every worker;
    the client computes them from the gathered margins in global row order: the same
    bytes and evaluations as one machine (issue 31)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(700, 5))
    time = np.round(np.exp(1.0 + X[:, 0] + 0.3 * rng.normal(size=700)), 1)  # ties
    y = np.where(rng.random(700) < 0.3, -time, time)  # negative: censored
    weight = rng.uniform(0.5, 2.0, size=700)
    params = {"objective": "survival:cox", "max_depth": 3, "device": "cpu", "seed": 3}
    metrics = {"eval_metric": ["cox-nloglik", "c-index"]}
    single_data = gpuboost.Dataset(X, label=y, weight=weight)
    expected_log, log = {}, {}
    single = gpuboost.train(
        dict(params, **metrics),
        single_data,
        5,
        evals=[(single_data, "train")],
        evals_result=expected_log,
        verbose_eval=False,
    )
    dtrain = _dask_dataset(client, X, y, weight, 3, 2, seed=4)
    model = train(
        client,
        dict(params, **metrics),
        dtrain,
        5,
        evals=[(dtrain, "train")],
        evals_result=log,
        verbose_eval=False,
    )
    assert model.save_raw() == single.save_raw()
    assert log == expected_log
    sampled = dict(params, subsample=0.6, colsample_bynode=0.7)
    assert (
        train(client, sampled, _dask_dataset(client, X, y, None, 4, 2, seed=6), 3).save_raw()
        == gpuboost.train(sampled, gpuboost.Dataset(X, label=y), 3).save_raw()
    )


def test_interval_labels_train_the_single_node_aft_model(client):
    """survival:aft with label_lower_bound / label_upper_bound on the workers: the same
    bytes and evaluations as one machine (issue 31)."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(900, 5))
    time = np.exp(1.0 + X[:, 0] + 0.3 * rng.normal(size=900))
    lower = np.where(rng.random(900) < 0.2, 0.0, time)
    upper = np.where(rng.random(900) < 0.3, np.inf, np.maximum(time, lower))
    params = {
        "objective": "survival:aft",
        "aft_loss_distribution": "extreme",
        "eval_metric": ["aft-nloglik", "interval-regression-accuracy"],
        "max_depth": 3,
        "device": "cpu",
    }
    single_data = gpuboost.Dataset(X, label_lower_bound=lower, label_upper_bound=upper)
    expected_log, log = {}, {}
    single = gpuboost.train(
        params,
        single_data,
        6,
        evals=[(single_data, "train")],
        evals_result=expected_log,
        verbose_eval=False,
    )
    chunks = (300, 250, 350)
    data = DaskDataset(
        client,
        da.from_array(X, chunks=(chunks, 5)),
        label_lower_bound=da.from_array(lower, chunks=(chunks,)),
        label_upper_bound=da.from_array(upper, chunks=(chunks,)),
    )
    model = train(
        client, params, data, 6, evals=[(data, "train")], evals_result=log, verbose_eval=False
    )
    assert model.save_raw() == single.save_raw()
    assert log == expected_log
    with pytest.raises(ValueError, match="not both"):
        DaskDataset(
            client,
            da.from_array(X, chunks=(300, 5)),
            label=da.from_array(lower, chunks=300),
            label_lower_bound=da.from_array(lower, chunks=300),
            label_upper_bound=da.from_array(upper, chunks=300),
        )
