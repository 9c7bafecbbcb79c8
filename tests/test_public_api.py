"""The public API documents itself (issue 34, point 3): every class, function and module
named in the ``__all__`` of gpuboost or of any of its modules has a docstring, and every
name in an ``__all__`` exists."""

import importlib
import inspect
import pkgutil

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
