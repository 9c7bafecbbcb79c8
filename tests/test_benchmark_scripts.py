"""The GPU performance model's scripts: benchmarks/device_ops.py (a round under the
emulation's traffic model, against the floor) and the model-against-measured comparison
of benchmarks/gpu_bench.py (run by benchmarks/gpu_check.sh on a GPU machine)."""

import cProfile
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from _tiers import SLOW

from gpuboost.backends.cuda.backend import CudaBackend
from gpuboost.backends.emulation import emulated_kernels, traffic

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _script(name):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def device_ops():
    return _script("device_ops")


@pytest.fixture(scope="module")
def gpu_bench():
    return _script("gpu_bench")


def _data(n_rows, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    return X, (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.float64)


@pytest.fixture(scope="module")
def measured(device_ops):
    """A depth-3 round at 3000 and at 1500 rows with the fit of its bytes, and the round
    modeled at 1M rows."""
    params = {"objective": "binary:logistic", "max_depth": 3}
    X, y = _data(3000)
    with emulated_kernels():
        big = device_ops.measure(X, y, params, rounds=2)
        small = device_ops.measure(X[:1500], y[:1500], params, rounds=1)
    big["fit"] = device_ops.fit(big, small)
    return big, small, device_ops.model_round(big, 1_000_000)


def test_device_ops_restores_the_histogram_planner(measured):
    from gpuboost.backends.cuda import histogram

    assert histogram.plan_histograms.__name__ == "plan_histograms"
    assert measured[0]["histogram_plans"]  # one plan per histogram launch of the round


def test_device_ops_reports_a_round_against_its_floor(measured):
    result, _, _ = measured
    per_round = result["per_round"]
    phases = result["per_phase"]
    assert {"gradients", "quantize", "histogram", "split", "partition"} <= set(phases)
    assert per_round["launches"] == pytest.approx(sum(p["launches"] for p in phases.values()))
    assert per_round["device_bytes"] == pytest.approx(
        sum(p["device_bytes"] for p in phases.values())
    )
    assert result["levels_per_round"] == 3  # one depth-3 tree per round (mean of 2 rounds)
    assert result["per_level"]["launches"] == pytest.approx(per_round["launches"] / 3)
    floor = traffic.floor_bytes(3000, 5, 3)
    assert result["floor_bytes_per_round"] == floor
    assert result["modeled_bytes_to_floor_ratio"] == pytest.approx(
        per_round["device_bytes"] / floor
    )
    assert result["modeled_ms_per_round"] == pytest.approx(
        1e3
        * traffic.modeled_seconds(
            per_round["device_bytes"], per_round["launches"], per_round["syncs"]
        )
    )
    histogram = result["per_kernel"]["histogram_cluster_columns"]  # the root (the rest: rows)
    assert histogram["bank_conflict_ways"] == pytest.approx(
        histogram["shared_wavefronts"] / histogram["shared_requests"]
    )
    assert phases["histogram"]["bank_conflict_ways"] >= 1.0


def test_device_ops_splits_bytes_into_per_row_fixed_and_per_block_parts(measured, device_ops):
    big, small, scaled = measured
    lines = big["fit"]["per_phase"]
    flush = big["histogram_flush"]
    assert flush["blocks"] > 0 and flush["atomics"] > 0
    for phase, line in lines.items():  # the fit holds at both sizes
        at_3000 = line["fixed_bytes"] + line["bytes_per_row"] * 3000
        at_1500 = line["fixed_bytes"] + line["bytes_per_row"] * 1500
        flush_3000 = flush["bytes"] if phase == "histogram" else 0.0
        flush_1500 = small["histogram_flush"]["bytes"] if phase == "histogram" else 0.0
        assert at_3000 + flush_3000 == pytest.approx(big["per_phase"][phase]["device_bytes"])
        assert at_1500 + flush_1500 == pytest.approx(
            small["per_phase"].get(phase, {}).get("device_bytes", 0.0), abs=1e-6
        )
    assert lines["histogram"]["bytes_per_row"] > 0  # the rows' bins and gradients
    # the flush: bytes per table as measured, tables of the plans for 1M / 3000 x the rows
    assert device_ops.histogram_blocks(big, 3000) == (flush["blocks"], flush["tables"])
    assert 0 < flush["tables"] <= flush["blocks"]
    per_table = flush["bytes"] / flush["tables"]
    assert scaled["histogram_flush"]["tables"] > flush["tables"]
    assert scaled["histogram_flush"]["bytes"] == pytest.approx(
        per_table * scaled["histogram_flush"]["tables"]
    )
    assert scaled["modeled_bytes_per_round"] == pytest.approx(
        scaled["fixed_bytes"]
        + scaled["bytes_per_row"] * 1_000_000
        + scaled["histogram_flush"]["bytes"]
    )
    assert scaled["floor_bytes_per_round"] == traffic.floor_bytes(1_000_000, 5, 3)
    assert device_ops.model_round(big, 3000)["modeled_bytes_per_round"] == pytest.approx(
        big["per_round"]["device_bytes"]
    )


def test_device_ops_prints_and_writes_its_report(device_ops, measured, capsys, tmp_path):
    result, small, scaled = measured
    result = dict(result, scaled=scaled, smaller=small)
    json.dumps(result)  # what device_ops.py writes with --json

    class Arguments:
        rows, rounds, fit_rows, scale_rows = 3000, 1, 1500, 1_000_000

    device_ops.print_report({"tiny": result}, Arguments, 5)
    printed = capsys.readouterr().out
    assert f"| tiny | {result['per_round']['launches']:.0f} |" in printed
    assert "Modeled at 1,000,000 rows" in printed and "| histogram |" in printed


def test_gpu_bench_parses_phase_timings(gpu_bench):
    line = (
        "[gpuboost] cuda backend phase timings: gradients 0.100s, histogram 2.000s, "
        "partition 0.500s"
    )
    assert gpu_bench.phase_ms_per_round("noise\n" + line, 10) == {
        "gradients": pytest.approx(10.0),
        "histogram": pytest.approx(200.0),
        "partition": pytest.approx(50.0),
    }


def test_gpu_bench_host_profile_lists_own_time_per_round(gpu_bench):
    def busy():
        return sum(i * i for i in range(20_000))

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(4):
        busy()
    profiler.disable()
    rows = gpu_bench.host_profile(profiler, rounds=2, top=3)
    assert rows[0]["function"] == "(all)" and len(rows) == 4
    own = [row["own_ms_per_round"] for row in rows[1:]]
    assert own == sorted(own, reverse=True) and sum(own) <= rows[0]["own_ms_per_round"] + 1e-9
    busy_row = next(row for row in rows[1:] if row["function"].endswith("(<genexpr>)"))
    assert busy_row["calls"] == 4 * 20_001  # the generator's resumptions
    assert busy_row["cumulative_ms_per_round"] >= busy_row["own_ms_per_round"]
    assert "tests/test_benchmark_scripts.py" in busy_row["function"]


def test_gpu_bench_models_each_phase_at_its_size(gpu_bench, measured, tmp_path, capsys):
    result, _, scaled = measured
    document = {
        "features": 5,
        "model": {
            "bandwidth_bytes_per_second": traffic.H100_BANDWIDTH_BYTES_PER_SECOND,
            "launch_seconds": traffic.LAUNCH_SECONDS,
            "sync_seconds": traffic.SYNC_SECONDS,
        },
        "configurations": {gpu_bench.MODEL_CONFIGURATION: dict(result, scaled=scaled)},
    }
    path = tmp_path / "device_ops.json"
    path.write_text(json.dumps(document))
    model = gpu_bench.load_model(path)
    modeled = gpu_bench.modeled_phase_ms(model, 3000)
    for phase, measured_phase in result["per_phase"].items():  # the fit holds at 3000 rows
        assert modeled[phase] == pytest.approx(1e3 * measured_phase["modeled_seconds"], rel=1e-6)
    runs = [
        {
            "size": "3k x 5",
            "rows": 3000,
            "features": 5,
            "library": "gpuboost",
            "ms_per_round": 9.0,
            "phase_ms_per_round": {"histogram": 4.0},
        },
        {
            "size": "3k x 5",
            "rows": 3000,
            "features": 5,
            "library": "xgboost",
            "ms_per_round": 7.0,
            "device": "cuda",
        },
        {"size": "3k x 9", "rows": 3000, "features": 9, "library": "gpuboost", "ms_per_round": 9.0},
    ]
    rows = gpu_bench.print_model_comparison(model, runs)
    printed = capsys.readouterr().out
    histogram = next(row for row in rows if row["phase"] == "histogram")
    assert (histogram["measured_ms"], histogram["modeled_ms"]) == (4.0, modeled["histogram"])
    total = next(row for row in rows if row["phase"] == "round")
    assert total["modeled_ms"] == pytest.approx(sum(modeled.values()))
    assert (total["measured_ms"], total["xgboost_ms"]) == (9.0, 7.0)
    assert "MODEL: 3k x 5 modeled" in printed and "model is for 5 features" in printed
    path.write_text(json.dumps({"features": 5, "configurations": {}}))
    with pytest.raises(ValueError, match="binary depth 8"):
        gpu_bench.load_model(path)


def test_dask_scaling_compares_the_distributed_model_and_skips_without_dask_cuda(tmp_path, capsys):
    """benchmarks/dask_scaling.py (benchmarks/gpu_check.sh runs it with --cuda): a small
    LocalCluster run reports an identical model; --cuda without dask-cuda prints a SKIP
    line and succeeds."""
    pytest.importorskip("distributed")
    dask_scaling = _script("dask_scaling")
    out = tmp_path / "run.json"
    argv = ["--rows", "3000", "--features", "4", "--rounds", "2", "--depth", "3"]
    assert dask_scaling.main(argv + ["--workers", "1", "--no-peer", "--json", str(out)]) == 0
    run = json.loads(out.read_text())["runs"][0]
    assert run["workers"] == 1 and run["gpuboost"]["identical_to_single_node"] is True
    try:
        import dask_cuda  # noqa: F401
    except ImportError:
        assert dask_scaling.main(argv + ["--cuda"]) == 0
        assert capsys.readouterr().out.strip().splitlines()[-1].startswith("SKIP: dask-cuda")


def test_device_ops_fits_with_roots_from_gathered_rows(device_ops):
    """Inside ``without_root_columns`` the root is built from gathered rows (the columns'
    group count changes with the rows, which a two-point fit would take for a per-row
    cost); outside it the root reads the columns again."""
    params = {"objective": "binary:logistic", "max_depth": 3}
    X, y = _data(3000)
    with emulated_kernels():
        with device_ops.without_root_columns():
            gathered = device_ops.measure(X, y, params, rounds=1)
        assert CudaBackend.takes_rows_in_order is True
        columns = device_ops.measure(X, y, params, rounds=1)
    assert "histogram_cluster_columns" not in gathered["per_kernel"]
    assert columns["per_kernel"]["histogram_cluster_columns"]["launches"] == 1


def test_device_ops_fits_without_the_row_scan(device_ops):
    """The fit's measurements run without the small-node row scan (its fixed row cutoff
    would make the per-row slope wrong): inside ``without_row_scan`` no node is scanned
    from its rows and every level builds histograms; outside it the backend's cutoff is
    back and the same round scans small nodes from their rows."""
    original = CudaBackend.row_scan_max_rows
    params = {"objective": "binary:logistic", "max_depth": 3}
    X, y = _data(3000)
    with emulated_kernels():
        with device_ops.without_row_scan():
            plain = device_ops.measure(X, y, params, rounds=1)
        assert CudaBackend.row_scan_max_rows is original
        scanned = device_ops.measure(X, y, params, rounds=1)
    assert "row_scan" not in plain["per_phase"]
    assert "row_scan" in scanned["per_phase"] or (
        scanned["per_phase"]["split"]["launches"] > plain["per_phase"]["split"]["launches"]
    )
    assert len(plain["histogram_plans"]) > len(scanned["histogram_plans"])


@SLOW  # fast sibling: test_device_ops_reports_a_round_against_its_floor (same script)
def test_device_ops_compares_lossguide_and_depthwise_per_leaf(device_ops, measured, capsys):
    """The per-leaf cost of issue 14's lossguide bar: modeled time over the round's
    leaves, lossguide against depthwise from the same run; CUDA lossguide expands ahead,
    so it synchronises far less often than once per leaf."""
    depthwise, _, _ = measured
    X, y = _data(3000)
    params = {"objective": "binary:logistic", "grow_policy": "lossguide", "max_leaves": 24}
    with emulated_kernels():
        lossguide = device_ops.measure(X, y, params | {"max_depth": 0}, rounds=1)
    for result in (depthwise, lossguide):
        assert result["modeled_us_per_leaf"] == pytest.approx(
            1e3 * result["modeled_ms_per_round"] / result["leaves_per_round"]
        )
    assert lossguide["leaves_per_round"] == 24
    assert lossguide["per_round"]["syncs"] < lossguide["leaves_per_round"] / 2
    results = {device_ops.LOSSGUIDE_PER_LEAF: lossguide, device_ops.DEPTHWISE_PER_LEAF: depthwise}
    per_leaf = device_ops.lossguide_per_leaf(results)
    assert per_leaf["ratio"] == pytest.approx(
        lossguide["modeled_us_per_leaf"] / depthwise["modeled_us_per_leaf"]
    )
    assert device_ops.lossguide_per_leaf({"tiny": depthwise}) is None

    class Arguments:
        rows, rounds, fit_rows, scale_rows = 3000, 1, 0, 1_000_000

    device_ops.print_report(results, Arguments, 5)
    assert f"**{per_leaf['ratio']:.2f}x**" in capsys.readouterr().out


def test_device_ops_plans_each_histogram_launch_once(device_ops):
    """The recorded plans are those of the histogram launches only (the partition that
    sends a build's node table ahead plans it too): their blocks are the launches'."""
    X, y = _data(3000)
    with emulated_kernels(), device_ops.without_row_scan():
        result = device_ops.measure(X, y, {"objective": "binary:logistic", "max_depth": 4}, 1)
    launches = sum(
        result["per_kernel"].get(kernel, {}).get("launches", 0)
        for kernel in device_ops.HISTOGRAM_KERNELS
    )
    assert len(result["histogram_plans"]) == launches
    assert result["per_kernel"]["histogram_cluster_columns"]["launches"] == 1  # the root
    blocks, tables = device_ops.histogram_blocks(result, 3000)
    assert (blocks, tables) == (
        result["histogram_flush"]["blocks"],
        result["histogram_flush"]["tables"],
    )
    from gpuboost.backends.cuda import histogram

    assert histogram._launch_build.__name__ == "_launch_build"


def test_ordered_target_statistics_see_only_earlier_rows():
    """benchmarks/categorical_encodings.py (issue 33's study): a training row's statistic
    uses the rows before it in the permutation only; a test row's, every training row."""
    encodings = _script("categorical_encodings")

    class FirstOrder:  # the identity permutation
        def permutation(self, n):
            return np.arange(n)

    codes = np.array([0, 1, 0, 0, 1])
    y = np.array([2.0, 4.0, 6.0, 8.0, 0.0])  # prior 4
    train, test = encodings.ordered_target_statistics(
        codes, y, np.array([0, 1, 2]), 3, 1.0, FirstOrder()
    )
    assert train.tolist() == [4.0, 4.0, (2.0 + 4.0) / 2.0, (8.0 + 4.0) / 3.0, (4.0 + 4.0) / 2.0]
    assert test.tolist() == [(16.0 + 4.0) / 4.0, (4.0 + 4.0) / 3.0, 4.0]


@SLOW  # 3 s: four libraries' trainings
def test_accuracy_early_stopping_gives_every_library_the_same_validation_rows(monkeypatch):
    """benchmarks/accuracy_defaults.py --early-stopping: each library trains on 80 % of a
    split's training rows and stops on the same other 20 %, predicting with its best
    round; without it, all ``--rounds`` rounds. The peers that are installed (scikit-learn
    and XGBoost are in the test extra; LightGBM where present)."""
    pytest.importorskip("sklearn")
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its _machine module
    accuracy = _script("accuracy_defaults")
    peers = tuple(p for p in accuracy.PEERS if importlib.util.find_spec(p) is not None)
    monkeypatch.setattr(accuracy, "PEERS", peers)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 4))
    y = X[:, 0] + rng.normal(scale=2.0, size=400)  # noisy: every library stops early
    seen = []
    fit_predict = accuracy._fit_predict

    def recording(library, task, n_classes, X_train, y_train, X_test, args, valid=None):
        seen.append((library, len(y_train), None if valid is None else valid[1].tobytes()))
        return fit_predict(library, task, n_classes, X_train, y_train, X_test, args, valid)

    monkeypatch.setattr(accuracy, "_fit_predict", recording)
    args = accuracy.argparse.Namespace(
        splits=1, rounds=300, lr=0.3, depth=3, threads=1, gpuboost_params={}, early_stopping=5
    )
    scores, rounds = accuracy.run_table("noisy", "regression", X, y, args)
    assert [library for library, _, _ in seen] == ["gpuboost", *peers]
    assert {n for _, n, _ in seen} == {240} and len({v for _, _, v in seen}) == 1
    assert all(1 <= used < 300 for used in rounds.values()), rounds
    assert all(np.isfinite(values).all() for values in scores.values())
    seen.clear()
    args.early_stopping, args.rounds = 0, 7
    scores, rounds = accuracy.run_table("noisy", "regression", X, y, args)
    assert {n for _, n, v in seen if v is None} == {300} and len(seen) == 1 + len(peers)
    assert rounds == dict.fromkeys(rounds, 7.0)
