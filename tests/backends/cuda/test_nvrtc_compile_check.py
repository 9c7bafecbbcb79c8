"""Tests of scripts/nvrtc_compile_check.py: the kernels compile with NVRTC as CuPy compiles them.

They need the NVRTC library (the ``nvrtc`` extra, ``pip install nvidia-cuda-nvrtc``;
CI installs it) and skip cleanly without it. No GPU is needed.
"""

import importlib.util
import sys
from pathlib import Path

import pytest
from _tiers import SLOW

import gpuboost.backends.emulation

REPO_ROOT = Path(__file__).resolve().parents[3]
SCRIPT = REPO_ROOT / "scripts" / "nvrtc_compile_check.py"
CUDA_DIR = REPO_ROOT / "cuda"
SAMPLES_DIR = REPO_ROOT / "tests" / "backends" / "emulation" / "cuda_samples"


def _load_script():
    spec = importlib.util.spec_from_file_location("nvrtc_compile_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load_script()


def _nvrtc_or_skip():
    try:
        library, _ = check.load_nvrtc()
    except check.NvrtcLibraryNotFound as error:
        pytest.skip(str(error))
    return library


@pytest.fixture(scope="module")
def nvrtc():
    return _nvrtc_or_skip()


def test_ptx_entries_counts_parameters():
    ptx = """
.visible .entry first(
\t.param .u64 first_param_0,
\t.param .u32 first_param_1
)
{
}
.visible .entry second()
{
}
"""
    assert check.ptx_entries(ptx) == {"first": 2, "second": 0}


def test_cupy_options_extend_the_backend_options():
    from gpuboost.backends.cuda.launch import NVCC_OPTIONS

    options = check.cupy_options(CUDA_DIR / "histogram.cu", "sm_90")
    assert options[: len(NVCC_OPTIONS)] == NVCC_OPTIONS
    assert "--fmad=false" in options and "-ftz=true" in options
    assert options[-1] == "-arch=sm_90"


def test_missing_library_is_a_clear_usage_error(tmp_path, capsys):
    status = check.main(["--library", str(tmp_path / "libnvrtc.so.0")])
    assert status == check.EXIT_USAGE
    assert "no NVRTC library found" in capsys.readouterr().err


@SLOW  # .ci/run's NVRTC step runs the script on them; fast sibling: test_sample_kernels_compile
def test_project_kernels_compile_as_cupy_compiles_them(nvrtc, capsys):
    del nvrtc
    status = check.main([str(CUDA_DIR)])
    output = capsys.readouterr().out
    assert status == check.EXIT_OK, output
    n_sources = len(list(CUDA_DIR.glob("*.cu")))
    assert f"{2 * n_sources} of {2 * n_sources} NVRTC compilations passed" in output


def test_sample_kernels_compile(nvrtc, capsys):
    del nvrtc
    assert check.main([str(SAMPLES_DIR), "--quiet"]) == check.EXIT_OK, capsys.readouterr().out


@pytest.mark.parametrize(
    "source, problem",
    [
        (
            '#include <cstdio>\nextern "C" __global__ void k(int* out) { out[0] = 1; }\n',
            "compilation to a cubin failed",
        ),
        ("__global__ void mangled(int* out) { out[0] = 1; }\n", "exported kernels"),
        (
            'extern "C" __global__ void k(int* out) { int unused_value; out[0] = 1; }\n',
            "printed warnings",
        ),
    ],
    ids=["host-header", "no-extern-c", "warning"],
)
def test_failures_are_reported(nvrtc, tmp_path, capsys, source, problem):
    del nvrtc
    path = tmp_path / "bad.cu"
    path.write_text(source)
    status = check.main([str(path), "--arch", "sm_80"])
    output = capsys.readouterr().out
    assert status == check.EXIT_COMPILE_FAILED, output
    assert "FAILED" in output and problem in output


def test_parameter_count_mismatch_is_reported(nvrtc, tmp_path, monkeypatch):
    del nvrtc
    path = tmp_path / "kernel.cu"
    path.write_text('extern "C" __global__ void k(int* out, int n) { if (n) out[0] = 1; }\n')
    library, _ = check.load_nvrtc()
    assert check.check_source(library, path, "sm_80").ok
    # The emulation's parser is the reference the PTX is compared with.
    monkeypatch.setattr(
        gpuboost.backends.emulation, "parse_kernel_signatures", lambda text: {"k": [object()]}
    )
    result = check.check_source(library, path, "sm_80")
    assert not result.ok and "2 parameters in the PTX, 1 in the source" in result.problems[0]


def test_script_runs_as_a_program(nvrtc):
    del nvrtc
    import subprocess

    completed = subprocess.run(
        [sys.executable, str(SCRIPT), str(SAMPLES_DIR), "--arch", "sm_80", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.startswith("NVRTC ")
