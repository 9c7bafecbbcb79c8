"""Tests of gpuboost.core.profiling: per-phase timers and the verbose timing line."""

import itertools
import re

import pytest

import gpuboost
from gpuboost.core import profiling as _profiling
from gpuboost.core.profiling import PHASES, PhaseTimer, active_range, nvtx_range


@pytest.fixture
def fake_clock(monkeypatch):
    """perf_counter returning 0, 1, 2, ... (one tick per call)."""
    ticks = itertools.count()
    monkeypatch.setattr(_profiling.time, "perf_counter", lambda: float(next(ticks)))


def test_disabled_timer_records_nothing_and_never_synchronizes(fake_clock):
    calls = []
    timer = PhaseTimer(enabled=False, synchronize=lambda: calls.append(1))
    with timer.phase("histogram"):
        pass
    assert dict(timer.seconds) == {} and calls == []
    assert timer.report() == ""


def test_enabled_timer_accumulates_per_phase(fake_clock):
    calls = []
    timer = PhaseTimer(enabled=True, synchronize=lambda: calls.append(1))
    for _ in range(3):
        with timer.phase("split"):
            pass
    with timer.phase("histogram"):
        pass
    assert timer.seconds == {"split": 3.0, "histogram": 1.0}
    assert len(calls) == 8  # before and after every block


def test_time_is_recorded_when_the_block_raises(fake_clock):
    timer = PhaseTimer(enabled=True)
    with pytest.raises(RuntimeError):
        with timer.phase("partition"):
            raise RuntimeError("boom")
    assert timer.seconds["partition"] == 1.0


def test_report_follows_the_phase_order(fake_clock):
    timer = PhaseTimer(enabled=True)
    for name in ("metric", "custom_b", "histogram", "gradients", "custom_a"):
        with timer.phase(name):
            pass
    assert timer.report() == (
        "gradients 1.000s, histogram 1.000s, metric 1.000s, custom_b 1.000s, custom_a 1.000s"
    )


def test_phases_are_listed_once():
    assert len(set(PHASES)) == len(PHASES)
    assert {"histogram", "split", "partition", "gradients"} <= set(PHASES)


def test_nvtx_range_is_a_context_manager():
    with nvtx_range("anything"):
        value = 1
    assert value == 1


def test_active_range_is_the_innermost_open_range(fake_clock):
    assert active_range() is None
    timer = PhaseTimer(enabled=False)
    with timer.phase("histogram"):
        assert active_range() == "histogram"
        with nvtx_range("inner"):
            assert active_range() == "inner"
        assert active_range() == "histogram"
    with pytest.raises(KeyError):
        with nvtx_range("failing"):
            raise KeyError("left through an exception")
    assert active_range() is None


def test_verbosity_2_prints_the_phase_timings(regression_data, capsys):
    X, y = regression_data
    dataset = gpuboost.Dataset(X, label=y)
    gpuboost.train(
        {"device": "cpu", "verbosity": 2},
        dataset,
        2,
        evals=[(dataset, "train")],
        verbose_eval=False,
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    match = re.fullmatch(r"\[gpuboost\] (?:cpu|numpy) backend phase timings: (.*)", lines[0])
    assert match
    names = [part.split(" ")[0] for part in match.group(1).split(", ")]
    # The compiled backend grows the whole tree of these 400 rows in one call (the
    # root's split and the partitions and scans of every level: the row_scan phase);
    # the reference builds and scans histograms and partitions level by level.
    compiled = lines[0].startswith("[gpuboost] cpu")
    levels = ["row_scan"] if compiled else ["histogram", "split", "partition"]
    assert names == ["gradients", "sample", "quantize", *levels, "predict_update", "metric"]
    for part in match.group(1).split(", "):
        assert re.fullmatch(r"\w+ \d+\.\d{3}s", part)


def test_refit_objectives_time_the_leaf_values(regression_data, capsys):
    X, y = regression_data
    gpuboost.train(
        {"device": "cpu", "verbosity": 2, "objective": "reg:absoluteerror"},
        gpuboost.Dataset(X, label=y),
        1,
        verbose_eval=False,
    )
    assert "leaf_values" in capsys.readouterr().out


def test_lower_verbosity_prints_no_timings(regression_data, capsys):
    X, y = regression_data
    gpuboost.train(
        {"device": "cpu", "verbosity": 1}, gpuboost.Dataset(X, label=y), 2, verbose_eval=False
    )
    assert capsys.readouterr().out == ""
