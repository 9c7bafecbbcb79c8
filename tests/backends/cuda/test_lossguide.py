"""Speculative lossguide steps on the CUDA backend (emulated kernels).

The CUDA backend's grower expands ahead every leaf the one-leaf order may still reach
and replays that order from the gains (LookaheadLossguideDriver), or, where told so,
expands a batch of the best leaves per step and undoes the tail the one-leaf order would
not take (LossguideDriver; gpuboost.tree.grower, docs/DESIGN.md "Growth"). The models
must be the CPU backend's, byte for byte, and those of one leaf per step.
"""

import numpy as np
import pytest
from _cases import messy_features
from _parity import assert_models_match
from _tiers import sampled

import gpuboost
from gpuboost import Dataset
from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.emulation.device_array import count_operations
from gpuboost.tree import grower as grower_module

pytestmark = pytest.mark.usefixtures("cuda_emulation")

N_ROWS = 1500
MAX_BIN = 31

#: name -> (params, label kind)
CASES = {
    "leaves_8": ({"max_leaves": 8, "max_depth": 0}, "regression"),
    "leaves_31_depth_5": ({"max_leaves": 31, "max_depth": 5}, "regression"),
    "leaves_255": (
        {  # leaves of any size: the cap, 255 leaves on 1,500 rows, is what ends a tree
            "max_leaves": 255,
            "max_depth": 0,
            "min_child_weight": 0.0,
            "min_data_in_leaf": 1,
            "reg_lambda": 0.1,
            "split_penalty": 0.0,
        },
        "regression",
    ),
    "min_child_weight": (
        {
            "max_leaves": 40,
            "max_depth": 0,
            "min_child_weight": 8.0,
            "gamma": 0.01,
            "split_penalty": 0.0,
        },  # fmt: skip
        "regression",
    ),
    "monotone": (
        {
            "max_leaves": 31,
            "max_depth": 0,
            "monotone_constraints": [1, 0, -1, 0, 0, 0],
            "split_penalty": 0.0,
        },  # fmt: skip
        "regression",
    ),
    "huber_refit": (  # leaf values refit from float sums over each leaf's rows, in order
        {"objective": "reg:huber", "huber_delta": 0.8, "max_leaves": 20, "max_depth": 0},
        "regression",
    ),
    "goss": (  # sampled rows: sample_indices a subset, increasing within every segment
        {"max_leaves": 48, "max_depth": 0, "data_sample_strategy": "goss", "top_rate": 0.3},
        "regression",
    ),
    "binary": ({"objective": "binary:logistic", "max_leaves": 24, "max_depth": 0}, "binary"),
    "multiclass": (
        {"objective": "multi:softprob", "num_class": 3, "max_leaves": 16, "max_depth": 0},
        "multiclass",
    ),
}


def _data(kind):
    rng = np.random.default_rng(41)
    X = messy_features(N_ROWS, seed=7)[:, :6]
    signal = (
        np.nan_to_num(X[:, 0], posinf=3.0, neginf=-3.0)
        + np.sin(3 * np.nan_to_num(X[:, 1]))
        - 0.7 * (np.nan_to_num(X[:, 2]) > 0.1)
        + 0.3 * rng.normal(size=N_ROWS)
    )
    if kind == "binary":
        return X, (signal > 0.2).astype(np.float64)
    if kind == "multiclass":
        return X, np.digitize(signal, [-0.5, 0.8]).astype(np.float64)
    return X, signal


def _train(params, X, y, device):
    return gpuboost.train(
        dict(params, grow_policy="lossguide", device=device, max_bin=MAX_BIN, seed=3),
        Dataset(X, label=y, max_bin=MAX_BIN),
        num_boost_round=3,
        verbose_eval=False,
    )


def _recording(monkeypatch):
    """Record the steps of both lossguide drivers and every tree's final row partition:
    ``(sizes, partitions)``, sizes ``{"kept": [...], "cut": [...], "ahead": [...],
    "splits": [...]}`` (batch sizes of LossguideDriver's steps kept whole or cut, of
    LookaheadLossguideDriver's steps, and each tree's expansions)."""
    sizes = {"kept": [], "cut": [], "ahead": [], "splits": []}
    push = grower_module.LossguideDriver.push
    pop = grower_module.LookaheadLossguideDriver.pop
    grow = grower_module.TreeGrower.grow
    partitions = []  # host copies

    def recording_push(driver, ids):
        size = len(driver.batch)
        taken_back = push(driver, ids)
        sizes["cut" if len(taken_back) else "kept"].append(size)
        return taken_back

    def recording_pop(driver, n_leaves):
        batch, dropped = pop(driver, n_leaves)
        if len(batch):
            sizes["ahead"].append(len(batch))
        return batch, dropped

    def recording_grow(grower):
        grown = grow(grower)
        partitions.append(getattr(grown.sample_indices, "get", grown.sample_indices.copy)())
        sizes["splits"].append(grown.tree.n_leaves - 1)
        return grown

    monkeypatch.setattr(grower_module.LossguideDriver, "push", recording_push)
    monkeypatch.setattr(grower_module.LookaheadLossguideDriver, "pop", recording_pop)
    monkeypatch.setattr(grower_module.TreeGrower, "grow", recording_grow)
    return sizes, partitions


#: (case, driver) pairs of the fast tier: every case once, each driver on the paths that
#: matter to it (undone expansions for "prefix"); the slow tier runs the other pairs.
FAST_PAIRS = [
    ("leaves_8", "ahead"),
    ("leaves_31_depth_5", "ahead"),
    ("monotone", "ahead"),
    ("huber_refit", "ahead"),
    ("binary", "ahead"),
    ("multiclass", "ahead"),
    ("min_child_weight", "prefix"),
    ("goss", "prefix"),
]


@pytest.mark.parametrize(
    "case, driver",
    sampled(
        [(case, driver) for case in CASES for driver in ("ahead", "prefix")],
        FAST_PAIRS,
        unpack=True,
    ),
)
def test_speculative_cuda_lossguide_is_the_cpu_and_the_one_leaf_model(case, driver, monkeypatch):
    """CUDA lossguide, expanding ahead (its default: LookaheadLossguideDriver) or in
    speculative batches taken back in part (LossguideDriver), gives the CPU backend's
    model and the one-leaf-per-step model and row partition, byte for byte."""
    params, kind = CASES[case]
    X, y = _data(kind)
    if driver == "prefix":
        monkeypatch.setattr(CudaBackend, "expands_lossguide_ahead", False)
    sizes, partitions = _recording(monkeypatch)
    speculative = _train(params, X, y, "cuda")
    speculative_partitions, partitions[:] = list(partitions), []
    if driver == "prefix":
        assert not sizes["ahead"]
        assert max(sizes["kept"]) > 1, "no step expanded several leaves"
        if case in ("leaves_255", "min_child_weight", "monotone", "huber_refit"):
            assert sizes["cut"], "no speculative expansion was undone"
    else:
        assert not sizes["kept"] and not sizes["cut"]
        assert len(sizes["ahead"]) < sum(sizes["splits"]), "no step expanded several leaves"
        if case in ("leaves_255", "min_child_weight", "monotone", "huber_refit"):
            assert sum(sizes["ahead"]) > sum(sizes["splits"]), "no expansion was dropped"
    cpu = _train(params, X, y, "cpu")
    assert_models_match(cpu, speculative)
    monkeypatch.setattr(grower_module, "LOSSGUIDE_MAX_BATCH", 1)
    for steps in sizes.values():
        steps.clear()
    partitions.clear()
    one_leaf = _train(params, X, y, "cuda")
    assert max(sizes["kept"]) == 1 and not sizes["ahead"]
    # The dropped or undone expansions left their rows in their order: the same
    # partition (the leaves' rows in the same order, which float sums over a leaf
    # depend on).
    assert len(partitions) == len(speculative_partitions)
    for one_leaf_rows, speculative_rows in zip(partitions, speculative_partitions):
        np.testing.assert_array_equal(one_leaf_rows, speculative_rows)
    assert speculative.save_raw() == one_leaf.save_raw()
    assert speculative.save_raw() == cpu.save_raw()


def _counted_restores(monkeypatch):
    """Record every ``TreeGrower._restore_order`` call: ``(leaves it sorts, operation
    counts)``."""
    restores = []
    restore = grower_module.TreeGrower._restore_order

    def counted_restore(self):
        leaves = [n for n in self._disordered if self.nodes.left[n] < 0]
        with count_operations() as counts:
            restore(self)
        restores.append((len(leaves), dict(counts)))

    monkeypatch.setattr(grower_module.TreeGrower, "_restore_order", counted_restore)
    return restores


@pytest.mark.parametrize("case", sampled(["min_child_weight", "leaves_255"], ["min_child_weight"]))
def test_dropping_the_expansions_ahead_costs_no_device_operation(monkeypatch, case):
    """Adopting the one-leaf order (dropping the expansions it does not reach) runs
    nothing on the device; the finished tree sorts the segments of the expanded nodes
    that stayed leaves with a fixed number of array operations and one copy to the
    device, however many they are."""
    params, kind = CASES[case]
    X, y = _data(kind)
    adopts = []
    adopt = grower_module.TreeGrower._adopt_order

    def counted_adopt(self, order):
        with count_operations() as counts:
            adopt(self, order)
        adopts.append(dict(counts))

    monkeypatch.setattr(grower_module.TreeGrower, "_adopt_order", counted_adopt)
    restores = _counted_restores(monkeypatch)
    _train(params, X, y, "cuda")
    assert adopts
    for counts in adopts:
        assert not any(counts.values()), counts
    assert max(n_leaves for n_leaves, _ in restores) > 2, "too few expansions were dropped"
    many = [counts for n_leaves, counts in restores if n_leaves > 1]
    assert all(counts == many[0] for counts in many), many
    assert many[0]["to_device"] == 1 and many[0]["to_host"] == many[0]["sync"] == 0
    assert many[0]["array_op"] == 5, many[0]  # gather, add, sort, mask, scatter


@pytest.mark.parametrize("case", sampled(["min_child_weight", "leaves_255"], ["min_child_weight"]))
def test_undoing_a_speculative_expansion_costs_no_device_operation(monkeypatch, case):
    """Taking an expansion back (LossguideDriver) runs nothing on the device (its rows
    stay partitioned); the finished tree sorts the segments of the taken-back nodes
    that stayed leaves, one in-place sort for one, and nothing else."""
    params, kind = CASES[case]
    X, y = _data(kind)
    monkeypatch.setattr(CudaBackend, "expands_lossguide_ahead", False)
    undos = []
    undo = grower_module.TreeGrower._undo

    def counted_undo(self, batch, taken_back):
        with count_operations() as counts:
            undo(self, batch, taken_back)
        undos.append((len(taken_back), dict(counts)))

    monkeypatch.setattr(grower_module.TreeGrower, "_undo", counted_undo)
    restores = _counted_restores(monkeypatch)
    _train(params, X, y, "cuda")
    assert any(n_back for n_back, _ in undos)
    for _, counts in undos:
        assert not any(counts.values()), counts
    assert any(n_leaves for n_leaves, _ in restores), "no taken-back node stayed a leaf"
    for n_leaves, counts in restores:
        if n_leaves == 1:
            assert counts["array_op"] == 1
            assert counts["to_device"] == counts["to_host"] == counts["sync"] == 0
