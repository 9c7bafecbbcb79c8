"""The package layout: every subpackage is packaged, no module only re-exports another
(docs/DESIGN.md "Layout"), and every public name has a docstring."""

import importlib
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO_ROOT = Path(__file__).resolve().parents[1]

#: The flat module paths of before the package layout (docs/DESIGN.md "Layout"). There has
#: been no release, so nobody imports them: they are gone, one public name per thing
#: (issue 34).
REMOVED = (
    "gpuboost.booster",
    "gpuboost.training",
    "gpuboost.callback",
    "gpuboost.model_io",
    "gpuboost.emulation",
    "gpuboost.objective",
    "gpuboost.dataset",
    "gpuboost.metric",
)


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


@pytest.mark.parametrize("old", REMOVED)
def test_no_module_only_re_exports_another(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def _public_names(module):
    return [name for name in getattr(module, "__all__", ()) if not name.startswith("_")]


def test_every_public_name_has_a_docstring():
    """``gpuboost.__all__`` and each subpackage's ``__all__`` are the public API; each of
    their functions and classes says what it is."""
    import gpuboost

    modules = [gpuboost] + [
        importlib.import_module(f"gpuboost.{name}")
        for name in (
            "backends",
            "boosting",
            "core",
            "data",
            "metrics",
            "model",
            "objectives",
            "tree",
        )
    ]
    missing = []
    for module in modules:
        for name in _public_names(module):
            value = getattr(module, name)
            if callable(value) and not (getattr(value, "__doc__", None) or "").strip():
                missing.append(f"{module.__name__}.{name}")
    assert missing == []


def test_readme_imports():
    import gpuboost
    from gpuboost import GBClassifier, GBRanker, GBRegressor  # noqa: F401
    from gpuboost.data import load_query_file, load_svmlight  # noqa: F401

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
