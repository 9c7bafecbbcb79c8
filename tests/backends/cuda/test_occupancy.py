"""Cluster co-scheduling (gpuboost.backends.cuda.occupancy; issue 29): the backend asks
whether a cluster of each cluster kernel can be placed before it plans one, the emulated
device answers with its profile's model (and refuses a launch it cannot place, as a GPU
does), and a device that cannot place one trains the CPU's bytes with the per-block
kernels."""

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import gpuboost
from gpuboost.backends.cuda import histogram as cuda_histogram
from gpuboost.backends.cuda import occupancy
from gpuboost.backends.cuda import row_scan as cuda_row_scan
from gpuboost.backends.cuda.histogram import device_cluster_blocks, device_limits
from gpuboost.backends.cuda.launch import EMULATED, get_kernel
from gpuboost.backends.cuda.sources import cuda_source_dir
from gpuboost.backends.emulation.device_profiles import (
    EMULATE_DEVICE_ENV_VAR,
    MAX_ACTIVE_CLUSTERS_ENV_VAR,
    PROFILES,
    max_active_clusters,
)
from gpuboost.backends.emulation.launcher import parse_cluster_dims

pytestmark = pytest.mark.usefixtures("cuda_emulation")

KIB = 1024


def test_the_registry_names_every_cluster_kernel_of_the_sources():
    found = set()
    for path in sorted(cuda_source_dir().glob("*.cu")):
        found |= {(path.stem, name) for name in parse_cluster_dims(path.read_text())}
    assert found == set(occupancy.CLUSTER_KERNELS)


def test_the_model_counts_blocks_per_sm_and_whole_clusters_per_gpc(monkeypatch):
    monkeypatch.delenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, raising=False)
    h100 = PROFILES["H100"]
    # 1024 threads and a block's whole opt-in shared memory: one block per SM; 8 GPCs of
    # 16 SMs hold two clusters of 8 each.
    assert max_active_clusters(h100, 8, 1024, 227 * KIB) == 16
    # 256 threads, 48 KiB: min(2048 / 256, 32, 228 KiB / 49 KiB) = 4 blocks per SM.
    assert max_active_clusters(h100, 8, 256, 48 * KIB) == 8 * (16 * 4 // 8)
    # 32 threads and no shared memory: the 32-block limit.
    assert max_active_clusters(h100, 8, 32, 0) == 8 * (16 * 32 // 8)
    assert max_active_clusters(h100, 8, 1024, 228 * KIB) == 0  # with the reserved KiB
    assert max_active_clusters(PROFILES["A100"], 8, 256, 0) == 0  # no clusters
    monkeypatch.setenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, "3")
    assert max_active_clusters(h100, 8, 256, 48 * KIB) == 3
    monkeypatch.setenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, "many")
    with pytest.raises(ValueError, match="must be a non-negative integer"):
        max_active_clusters(h100, 8, 256, 0)


@pytest.mark.usefixtures("clusters")
def test_the_backend_uses_clusters_only_where_one_can_be_placed(monkeypatch):
    monkeypatch.delenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, raising=False)
    assert device_cluster_blocks(EMULATED) == cuda_histogram.CLUSTER_BLOCKS
    for file_stem, name in occupancy.CLUSTER_KERNELS:
        kernel = get_kernel(EMULATED, file_stem, name)
        heaviest = device_limits(EMULATED)[1] - kernel.shared_size_bytes
        clusters = occupancy.max_active_clusters(
            EMULATED, file_stem, name, kernel.max_threads_per_block, heaviest
        )
        assert clusters >= 1
    monkeypatch.setenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, "0")  # a MIG slice: none fits
    assert not occupancy.clusters_placeable(EMULATED, device_limits(EMULATED)[1])
    assert device_cluster_blocks(EMULATED) == 1
    monkeypatch.setenv(EMULATE_DEVICE_ENV_VAR, "A100")
    monkeypatch.delenv(MAX_ACTIVE_CLUSTERS_ENV_VAR)
    assert device_cluster_blocks(EMULATED) == 1


@pytest.mark.usefixtures("clusters")
def test_the_emulation_refuses_a_cluster_it_cannot_place(monkeypatch):
    monkeypatch.setenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, "0")
    kernel = get_kernel(EMULATED, "row_scan", "row_scan_cluster")
    with pytest.raises(ValueError, match="cannot be co-scheduled on the emulated H100"):
        kernel((8,), (256,), ())
    with pytest.raises(ValueError, match="has no __cluster_dims__"):
        get_kernel(EMULATED, "histogram", "histogram_shared_memory").max_active_clusters(256, 0)


def _train(device, X, y):
    params = {
        "objective": "binary:logistic",
        "max_depth": 4,
        "max_bin": 63,
        "verbosity": 0,
        "device": device,
    }
    return gpuboost.train(params, gpuboost.Dataset(X, label=y), 3).save_raw()


@pytest.mark.usefixtures("clusters")
@pytest.mark.parametrize("placeable", [True, False], ids=["clusters", "no-cluster-fits"])
def test_a_device_that_cannot_place_a_cluster_trains_the_cpus_bytes(
    placeable, kernel_launches, monkeypatch
):
    """The same training launches the cluster kernels where the H100 places them and
    only the per-block kernels where it cannot (``GPUBOOST_EMULATE_MAX_ACTIVE_CLUSTERS=0``,
    under which a cluster launch would fail); the model is the CPU's either way."""
    if placeable:
        monkeypatch.delenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(MAX_ACTIVE_CLUSTERS_ENV_VAR, "0")
    monkeypatch.setattr(cuda_row_scan, "CLUSTER_BOUND_FACTOR", 1)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4000, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(float)
    assert _train("cuda", X, y) == _train("cpu", X, y)
    launched = {name for name, _ in kernel_launches}
    cluster_kernels = {name for _, name in occupancy.CLUSTER_KERNELS}
    assert bool(launched & cluster_kernels) == placeable
    per_block = {cuda_histogram.SHARED_KERNEL, cuda_histogram.COLUMNS_KERNEL}
    assert launched & per_block
    if placeable:  # per block only the batches of one row block: one block a group
        grids = {grid for name, grid in kernel_launches if name in per_block}
        assert grids and max(grids) == 1, grids


def _launch_config_layout_source():
    """``(folder of cuda.h, C compiler, a C program printing sizeof(CUlaunchConfig) and
    its fields' offsets)``, or None without the toolkit's header or a compiler."""
    folders = [Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"]
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        folders.append(Path(nvcc).resolve().parent.parent / "include")
    header_dir = next((folder for folder in folders if (folder / "cuda.h").exists()), None)
    compiler = shutil.which("cc") or shutil.which("gcc")
    if header_dir is None or compiler is None:
        return None
    fields = [name for name, _ in occupancy.LaunchConfig._fields_]
    source = "#include <stddef.h>\n#include <stdio.h>\n#include <cuda.h>\nint main(void) {\n"
    source += '  printf("%zu\\n", sizeof(CUlaunchConfig));\n'
    source += "".join(f'  printf("%zu\\n", offsetof(CUlaunchConfig, {f}));\n' for f in fields)
    return header_dir, compiler, source + "  return 0;\n}\n"


def test_the_launch_config_matches_the_driver_header(tmp_path):
    """The ctypes ``CUlaunchConfig`` the driver query gets has ``cuda.h``'s layout (this
    test needs the CUDA toolkit's header; CI installs it with nvcc)."""
    found = _launch_config_layout_source()
    if found is None:
        pytest.skip("no cuda.h and C compiler here")
    header_dir, compiler, source = found
    (tmp_path / "layout.c").write_text(source)
    subprocess.run(
        [compiler, f"-I{header_dir}", "layout.c", "-o", "layout"], cwd=tmp_path, check=True
    )
    printed = subprocess.run(
        [str(tmp_path / "layout")], check=True, capture_output=True, text=True
    ).stdout.split()
    ours = [ctypes.sizeof(occupancy.LaunchConfig)] + [
        getattr(occupancy.LaunchConfig, name).offset for name, _ in occupancy.LaunchConfig._fields_
    ]
    assert [int(value) for value in printed] == ours
