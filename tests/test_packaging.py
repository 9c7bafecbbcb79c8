"""The package layout: every subpackage is packaged, and the old module paths users may
import still work (thin re-exports, docs/DESIGN.md "Layout")."""

import importlib
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO_ROOT = Path(__file__).resolve().parents[1]

#: Old module path -> (new module path, names it must re-export).
MOVED = {
    "gpuboost.callback": (
        "gpuboost.boosting.callback",
        ["TrainingCallback", "EarlyStopping", "EvaluationMonitor", "TrainingCheckPoint"],
    ),
    "gpuboost.dataset": ("gpuboost.data.dataset", ["Dataset", "load_svmlight", "load_query_file"]),
    "gpuboost.booster": ("gpuboost.model.booster", ["Booster"]),
    "gpuboost.training": ("gpuboost.boosting.train", ["train"]),
    "gpuboost.model_io": ("gpuboost.model.model_io", ["atomic_write_text", "FORMAT_VERSION"]),
    "gpuboost.objective": ("gpuboost.objectives", ["get_objective", "OBJECTIVES", "Objective"]),
    "gpuboost.metric": ("gpuboost.metrics", ["get_metric", "evaluate", "Metric"]),
    "gpuboost.emulation": (
        "gpuboost.backends.emulation",
        ["emulated_kernels", "emulation_enabled", "EMULATE_ENV_VAR"],
    ),
    "gpuboost.tree": ("gpuboost.tree.tree", ["Tree", "TREE_ARRAYS"]),
}


def test_every_subpackage_is_packaged():
    listed = set(
        tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(path.parent.relative_to(REPO_ROOT).parts)
        for path in (REPO_ROOT / "gpuboost").rglob("__init__.py")
    }
    assert found - listed == set(), "add these subpackages to pyproject.toml"
    assert listed - found == {"gpuboost._cuda"}  # the kernel folder, mapped from cuda/


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_paths_re_export_the_new_names(old):
    new, names = MOVED[old]
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(old_module, name) is getattr(new_module, name), name


def test_readme_imports():
    import gpuboost
    from gpuboost import GBClassifier, GBRanker, GBRegressor  # noqa: F401
    from gpuboost.dataset import load_query_file, load_svmlight  # noqa: F401

    for name in (
        "train",
        "Dataset",
        "Booster",
        "TrainingCheckPoint",
        "cuda_available",
        "release_memory",
        "DeviceUnavailableError",
        "GpuOutOfMemoryError",
    ):
        assert hasattr(gpuboost, name), name


def test_license_file_is_stated_in_pyproject():
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    license_text = (REPO_ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License")
    assert pyproject["project"]["license"] == {"text": "MIT"}


@pytest.mark.parametrize("extra, package", [("cuda12", "cupy-cuda12x"), ("cuda13", "cupy-cuda13x")])
def test_gpu_extras_install_nvrtc(extra, package):
    # CuPy compiles the kernels with NVRTC at run time; only CuPy >= 14's [ctk] extra
    # brings it (the driver does not).
    requirements = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ][extra]
    cupy = [requirement for requirement in requirements if requirement.startswith(package)]
    assert cupy == [f"{package}[ctk]>=14"]
