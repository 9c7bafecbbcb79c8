"""The public API documents itself (issue 34, point 3): every class, function and module
named in the ``__all__`` of gpuboost or of any of its modules has a docstring, and every
name in an ``__all__`` exists."""

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import gpuboost

#: Modules that cannot be imported without an optional package, and the package.
OPTIONAL = {"gpuboost.dask": "distributed", "gpuboost.plotting": "matplotlib"}


def _modules():
    names = ["gpuboost"]
    for info in pkgutil.walk_packages(gpuboost.__path__, "gpuboost."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module_name", _modules())
def test_every_public_name_exists_and_has_a_docstring(module_name):
    for prefix, package in OPTIONAL.items():
        if module_name.startswith(prefix):
            pytest.importorskip(package)
    module = importlib.import_module(module_name)
    assert (module.__doc__ or "").strip(), f"{module_name} has no module docstring"
    undocumented = []
    for name in getattr(module, "__all__", ()):
        assert hasattr(module, name), f"{module_name}.__all__ names {name!r}, which is absent"
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value) or inspect.ismodule(value):
            if not (value.__doc__ or "").strip():
                undocumented.append(name)
    assert not undocumented, f"{module_name}: public names without a docstring: {undocumented}"


#: Modules whose ``__all__`` is the public API (issue 34, point 3): the package, its
#: subpackages and the public modules at its top level. The command-line modules
#: (``cli``, ``doctor``, ``warmup``) are documented as commands, in the guide.
PUBLIC_MODULES = (
    ["gpuboost"]
    + [f"gpuboost.{info.name}" for info in pkgutil.iter_modules(gpuboost.__path__) if info.ispkg]
    + [
        "gpuboost.datasets",
        "gpuboost.errors",
        "gpuboost.onnx",
        "gpuboost.params",
        "gpuboost.plotting",
    ]
)

API_REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "api.rst"


def _reference_entries():
    """``(module, name)`` of every autosummary entry of docs/api.rst."""
    entries, module, in_autosummary = [], None, False
    for line in API_REFERENCE.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith(".. currentmodule::"):
            module = stripped.split("::", 1)[1].strip()
        elif stripped.startswith(".. autosummary::"):
            in_autosummary = True
        elif (
            in_autosummary and line.startswith("   ") and stripped and not stripped.startswith(":")
        ):
            entries.append((module, stripped))
        elif stripped and not line.startswith(" "):
            in_autosummary = False
    return entries


def test_every_public_name_has_a_reference_page():
    """Each name of a public ``__all__`` is listed in docs/api.rst (autosummary then
    writes its page from the docstring): under its own module, or, for a class or
    function re-exported elsewhere, wherever the same object is listed."""
    entries = _reference_entries()
    listed = set(entries)
    objects = set()
    for module_name, name in entries:
        for prefix, package in OPTIONAL.items():
            if module_name.startswith(prefix):
                pytest.importorskip(package)
        module = importlib.import_module(module_name)
        assert hasattr(module, name), f"docs/api.rst lists {module_name}.{name}, which is absent"
        objects.add(id(getattr(module, name)))
    missing = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            if name.startswith("__"):
                continue
            value = getattr(module, name)
            shared = inspect.isclass(value) or inspect.isfunction(value)
            if (module_name, name) not in listed and not (shared and id(value) in objects):
                missing.append(f"{module_name}.{name}")
    assert not missing, f"public names without a page in docs/api.rst: {missing}"
