"""gpuboost.dask with categorical features: the single-node model, byte for byte.

The categories are numbered from the counts of all partitions, as one Dataset of all
the rows numbers them (decreasing count, ties by the dtype's order or sorted labels),
and the partitions are re-coded by label on the workers, so the model does not depend
on how the rows are cut, nor on each partition's own ``category`` dtype.
"""

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("pandas")
pytest.importorskip("dask.dataframe")

import _dask_cluster as dc
import dask.dataframe as dd
import pandas as pd
from _tiers import SLOW, sampled

import gpuboost
from gpuboost.dask import DaskDataset, DaskGBClassifier, predict, train

#: Every Dask test on one xdist worker (pyproject: --dist loadgroup), which starts the
#: session's clusters once.
pytestmark = pytest.mark.xdist_group("dask")

ROUNDS = 4
#: 40 categories, at most 16 bins (max_cat): the 25 rarest share the "other" bin.
N_BIG, MAX_CAT = 40, 16
PARAMS = {
    "objective": "binary:logistic",
    "max_depth": 4,
    "max_cat": MAX_CAT,
    "min_data_per_group": 20,
    "cat_smooth": 5.0,
    "seed": 3,
    "device": "cpu",
}
LAYOUTS = [(2, 2), (5, 3), (7, 3)]  # (partitions, workers)


def _frame(seed=0):
    """Numeric ``x0``, ``x1``; ``big``: 40 categories with tied counts and missing rows
    (its rarest category's rows last, so most partitions lack it); ``small``: 4 (split
    one-vs-rest). Categories in a non-sorted dtype order."""
    rng = np.random.default_rng(seed)
    counts = np.linspace(240, 12, N_BIG).astype(int)
    counts[2], counts[9], counts[30] = counts[1], counts[8], counts[29]  # ties
    labels = [f"c{i:02d}" for i in range(N_BIG)]
    big = np.repeat(np.array(labels, dtype=object), counts)
    big = np.concatenate([big, np.full(150, None, dtype=object)])
    rng.shuffle(big)
    rarest = big == labels[-1]
    big = np.concatenate([big[~rarest], big[rarest]])
    n_rows = len(big)
    small = rng.choice(np.array(["a", "b", "c", "d"], dtype=object), size=n_rows)
    x0, x1 = rng.normal(size=n_rows), rng.normal(size=n_rows)
    effect = dict(zip(labels, rng.normal(scale=1.5, size=N_BIG)))
    score = x0 + np.array([effect.get(v, 0.0) for v in big]) + (small == "b") - 0.5 * x1
    y = (score + 0.3 * rng.normal(size=n_rows) > 0.3).astype(np.float64)
    order = list(rng.permutation(labels))
    frame = pd.DataFrame(
        {
            "x0": x0,
            "big": pd.Categorical(big, categories=order),
            "x1": x1,
            "small": pd.Categorical(small, categories=["d", "b", "a", "c"]),
        }
    )
    return frame, y


def _categorical_split_kinds(booster, feature):
    """Sizes of the left sets of ``feature``'s categorical splits in every tree."""
    sizes = set()
    for tree in booster.trees:
        for node in np.flatnonzero(tree.is_categorical):
            if tree.feature[node] == feature:
                sizes.add(len(tree.category_set(node)))
    return sizes


def _label_series(client, y, sizes, n_workers):
    return dc.spread(client, y, sizes, n_workers)


@pytest.mark.parametrize("layout", sampled(LAYOUTS, [(7, 3)]))
def test_category_frames_give_the_single_node_model(client, layout):
    """Partitions sharing the frame's dtype (non-sorted order, ties in count): 2 and 3
    workers, 2, 5 and 7 uneven partitions (the slow tier adds the first two layouts);
    one-vs-rest and many-vs-many splits and the "other" bin; predictions of the frame and
    of the DaskDataset."""
    frame, y = _frame()
    dataset = gpuboost.Dataset(frame, label=y)
    single = gpuboost.train(PARAMS, dataset, ROUNDS)
    assert single.categories[1][0] == dataset.categories[1][0]
    assert len(single.categories[1]) == N_BIG
    assert any(size > 1 for size in _categorical_split_kinds(single, 1))  # many-vs-many
    assert _categorical_split_kinds(single, 3) == {1}  # one-vs-rest
    expected = single.save_raw()
    n_partitions, n_workers = layout
    sizes = dc.uneven_sizes(len(frame), n_partitions, seed=n_partitions)
    dtrain = DaskDataset(
        client,
        dc.spread_frame(client, dc.frame_pieces(frame, sizes), n_workers),
        label=_label_series(client, y, sizes, n_workers),
    )
    assert dtrain.categories == dataset.categories
    assert len(dtrain.workers()) == n_workers
    model = train(client, PARAMS, dtrain, ROUNDS, verbose_eval=False)
    assert model.save_raw() == expected, (n_partitions, n_workers)
    lazy = predict(client, model, dc.spread_frame(client, dc.frame_pieces(frame, sizes), 2))
    np.testing.assert_array_equal(lazy.compute(), single.predict(frame))
    np.testing.assert_array_equal(predict(client, model, dtrain).compute(), single.predict(frame))


@pytest.mark.parametrize("layout", sampled([(5, 2), (7, 3)], [(7, 3)]))
def test_partitions_with_other_category_dtypes_are_recoded_by_label(client, layout):
    """Each partition's ``category`` dtype holds only its own categories, in its own
    order (the rarest category absent from most): the categories are those of one
    frame of all the rows (ties: sorted labels), the model single-node's (7 partitions
    on 3 workers; the slow tier adds 5 on 2)."""
    frame, y = _frame(seed=1)
    rng = np.random.default_rng(5)
    sorted_frame = frame.copy()
    for column in ("big", "small"):
        sorted_frame[column] = frame[column].cat.set_categories(
            sorted(frame[column].cat.categories)
        )
    single = gpuboost.train(PARAMS, gpuboost.Dataset(sorted_frame, label=y), ROUNDS)
    n_partitions, n_workers = layout
    sizes = dc.uneven_sizes(len(frame), n_partitions, seed=n_partitions + 1)
    pieces = []
    for piece in dc.frame_pieces(frame, sizes):
        piece = piece.copy()
        for column in ("big", "small"):
            present = piece[column].cat.remove_unused_categories()
            categories = list(present.cat.categories)
            piece[column] = present.cat.reorder_categories(rng.permutation(categories))
        pieces.append(piece)
    assert any("c39" not in piece["big"].cat.categories for piece in pieces)
    assert len({tuple(piece["big"].cat.categories) for piece in pieces}) > 1
    dtrain = DaskDataset(
        client,
        dc.spread_frame(client, pieces, n_workers),
        label=_label_series(client, y, sizes, n_workers),
    )
    model = train(client, PARAMS, dtrain, ROUNDS, verbose_eval=False)
    assert model.save_raw() == single.save_raw(), (n_partitions, n_workers)
    lazy = predict(client, model, dc.spread_frame(client, pieces, 3))
    np.testing.assert_array_equal(lazy.compute(), single.predict(frame))


@pytest.mark.parametrize(
    "features", [["big", "small"], pytest.param([1, 3], marks=SLOW)], ids=["names", "indices"]
)
def test_dask_arrays_of_codes_by_index_and_by_name(client, features):
    """A dask array whose columns 1 and 3 hold integer codes, named as categorical by
    feature name (or, in the slow tier, by index): the single-node model of the same
    array."""
    frame, y = _frame(seed=2)
    X = np.column_stack(
        [
            frame["x0"],
            frame["big"].cat.codes.replace(-1, np.nan) * 3.0,  # any numbers are labels
            frame["x1"],
            frame["small"].cat.codes,
        ]
    ).astype(np.float64)
    single = gpuboost.train(
        PARAMS, gpuboost.Dataset(X, label=y, categorical_features=[1, 3]), ROUNDS
    )
    names = ["x0", "big", "x1", "small"]
    sizes = dc.uneven_sizes(len(X), 5, seed=4)
    dtrain = DaskDataset(
        client,
        dc.spread(client, X, sizes, 3),
        label=dc.spread(client, y, sizes, 3),
        categorical_features=features,
        feature_names=names if isinstance(features[0], str) else None,
    )
    model = train(client, PARAMS, dtrain, ROUNDS, verbose_eval=False)
    if isinstance(features[0], str):
        model.feature_names = single.feature_names  # the names are the only difference
    assert model.save_raw() == single.save_raw()
    lazy = predict(client, single, dc.spread(client, X, sizes, 2))
    np.testing.assert_array_equal(lazy.compute(), single.predict(X))


def test_string_columns_with_enable_categorical(client):
    frame, y = _frame(seed=3)
    strings = frame.astype({"big": object, "small": object})
    single = gpuboost.train(
        PARAMS, gpuboost.Dataset(strings, label=y, enable_categorical=True), ROUNDS
    )
    ddf = dd.from_pandas(strings, npartitions=3)
    with pytest.raises(TypeError, match="enable_categorical"):
        DaskDataset(client, ddf, label=dd.from_pandas(pd.Series(y), npartitions=3))
    dtrain = DaskDataset(
        client, ddf, label=dd.from_pandas(pd.Series(y), npartitions=3), enable_categorical=True
    )
    model = train(client, PARAMS, dtrain, ROUNDS, verbose_eval=False)
    assert model.save_raw() == single.save_raw()
    np.testing.assert_array_equal(predict(client, model, ddf).compute(), single.predict(strings))


def test_eval_sets_need_the_training_categories(client):
    """An evaluation set built with reference=dtrain is re-coded by label (an unseen
    category: missing): metrics and early stopping as on one machine; without the
    reference its own numbering is refused."""
    frame, y = _frame(seed=4)
    valid, yv = _frame(seed=5)
    valid = valid.iloc[:800].copy()
    yv = yv[:800]
    valid["small"] = valid["small"].cat.add_categories(["unseen"])
    valid.iloc[:5, 3] = "unseen"
    params = dict(PARAMS, eval_metric=["logloss", "auc"], learning_rate=0.5)
    dataset = gpuboost.Dataset(frame, label=y)
    expected_log = {}
    single = gpuboost.train(
        params,
        dataset,
        30,
        evals=[(gpuboost.Dataset(valid, label=yv, reference=dataset), "valid")],
        early_stopping_rounds=2,
        evals_result=expected_log,
        verbose_eval=False,
    )
    ddf, dvalid_frame = dd.from_pandas(frame, npartitions=4), dd.from_pandas(valid, npartitions=3)
    dtrain = DaskDataset(client, ddf, label=dd.from_pandas(pd.Series(y), npartitions=4))
    dy = dd.from_pandas(pd.Series(yv), npartitions=3)
    dvalid = DaskDataset(client, dvalid_frame, label=dy, reference=dtrain)
    log = {}
    model = train(
        client,
        params,
        dtrain,
        30,
        evals=[(dvalid, "valid")],
        early_stopping_rounds=2,
        evals_result=log,
        verbose_eval=False,
    )
    assert log == expected_log
    assert model.save_raw() == single.save_raw()
    own = DaskDataset(client, dvalid_frame, label=dy)
    with pytest.raises(ValueError, match="reference=dtrain"):
        train(client, params, dtrain, 1, evals=[(own, "valid")])


def test_max_cat_of_the_training_bins_the_dataset(client):
    """Without max_cat the default (255): every category its own bin, as one machine."""
    frame, y = _frame(seed=6)
    params = {k: v for k, v in PARAMS.items() if k != "max_cat"}
    dataset = gpuboost.Dataset(frame, label=y)
    single = gpuboost.train(params, dataset, 2)
    dtrain = DaskDataset(
        client, dd.from_pandas(frame, npartitions=3), label=dd.from_pandas(pd.Series(y), 3)
    )
    model = train(client, params, dtrain, 2, verbose_eval=False)
    assert dtrain.bind_binning().n_value_bins_[1] == N_BIG
    assert model.save_raw() == single.save_raw()


def test_dask_classifier_takes_categorical_frames(client):
    frame, y = _frame(seed=7)
    kwargs = dict(n_estimators=3, max_depth=3, max_cat=MAX_CAT, min_data_per_group=20)
    local = gpuboost.GBClassifier(**kwargs).fit(frame, y)
    model = DaskGBClassifier(**kwargs)
    model.client = client
    model.fit(dd.from_pandas(frame, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=4))
    assert model.get_booster().save_raw() == local.get_booster().save_raw()
    probabilities = model.predict_proba(dd.from_pandas(frame, npartitions=2)).compute()
    np.testing.assert_array_equal(probabilities, local.predict_proba(frame))


def test_continued_training_on_categories_gives_the_uninterrupted_model(client):
    """``init_model`` with categorical features: the workers start from the margins of
    the codes they hold (``Booster.margins_to_continue``), not of codes taken for labels
    (all unseen, so missing); with ``cat_smooth_estimate`` on (binary logistic loss)."""
    frame, y = _frame()
    single = gpuboost.train(PARAMS, gpuboost.Dataset(frame, label=y), ROUNDS)
    sizes = dc.uneven_sizes(len(frame), 5, seed=5)
    dtrain = DaskDataset(
        client,
        dc.spread_frame(client, dc.frame_pieces(frame, sizes), 2),
        label=_label_series(client, y, sizes, 2),
    )
    first = train(client, PARAMS, dtrain, ROUNDS - 2, verbose_eval=False)
    resumed = train(client, PARAMS, dtrain, 2, init_model=first, verbose_eval=False)
    assert resumed.save_raw() == single.save_raw()
