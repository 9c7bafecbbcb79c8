"""Locate and read the CUDA kernel sources (``cuda/*.cu``, ``cuda/*.cuh``).

The kernels live in the repository's top-level ``cuda/`` folder. Two layouts
exist at run time:

* a source checkout, including an editable install (``pip install -e .``):
  ``gpuboost/`` sits next to ``cuda/`` and ``pyproject.toml``;
* an installed wheel (``pip install .``): ``pyproject.toml`` maps ``cuda/`` to
  the package ``gpuboost._cuda``, so the sources are installed as
  ``<site-packages>/gpuboost/_cuda/*.cu`` and ``*.cuh``.

The checkout is recognised by the ``pyproject.toml`` beside ``cuda/``, so a
foreign top-level ``cuda`` package in ``site-packages`` (for example NVIDIA's
``cuda-python``) is never mistaken for the kernel folder.
"""

import hashlib
from pathlib import Path

#: Folder of the package (``.../gpuboost``; this file is gpuboost/backends/cuda/sources.py).
_PACKAGE_DIR = Path(__file__).resolve().parents[2]
#: The folder that holds ``gpuboost/`` (the checkout root, or site-packages).
_PARENT_DIR = _PACKAGE_DIR.parent
#: Kernel folder in a source checkout (also used by editable installs).
_CHECKOUT_CUDA_DIR = _PARENT_DIR / "cuda"
#: File that marks ``_PARENT_DIR`` as a source checkout.
_CHECKOUT_MARKER = _PARENT_DIR / "pyproject.toml"
#: Kernel folder in an installed wheel (package ``gpuboost._cuda``).
_INSTALLED_CUDA_DIR = _PACKAGE_DIR / "_cuda"
#: File name suffixes of kernel sources.
CUDA_SOURCE_SUFFIXES = (".cu", ".cuh")
#: Hex digits of :func:`source_hash` (64 bits: an ``unsigned long long`` literal).
SOURCE_HASH_DIGITS = 16


def cuda_source_dir():
    """Return the folder holding the CUDA kernel sources.

    Returns
    -------
    pathlib.Path
        The checkout's ``cuda/`` when running from a source checkout or an
        editable install, otherwise the installed ``gpuboost/_cuda``.

    Raises
    ------
    FileNotFoundError
        If neither folder exists (a broken installation).
    """
    if _CHECKOUT_MARKER.is_file() and _CHECKOUT_CUDA_DIR.is_dir():
        return _CHECKOUT_CUDA_DIR
    if _INSTALLED_CUDA_DIR.is_dir():
        return _INSTALLED_CUDA_DIR
    raise FileNotFoundError(
        "gpuboost: CUDA kernel sources not found; looked for "
        f"{_CHECKOUT_CUDA_DIR} (source checkout) and {_INSTALLED_CUDA_DIR} "
        "(installed package). Reinstall gpuboost."
    )


def list_cuda_sources():
    """Return the file names of all kernel sources, sorted.

    Returns
    -------
    list of str
        Names such as ``"histogram.cu"`` or ``"common.cuh"``.
    """
    return sorted(
        path.name
        for path in cuda_source_dir().iterdir()
        if path.is_file() and path.suffix in CUDA_SOURCE_SUFFIXES
    )


def read_cuda_source(name):
    """Return the text of one kernel source file.

    Parameters
    ----------
    name : str
        Plain file name inside the kernel folder, e.g. ``"histogram.cu"``;
        paths (with ``/`` or ``\\``) are refused.

    Returns
    -------
    str
        The file's contents, decoded as UTF-8.

    Raises
    ------
    ValueError
        If ``name`` is not a plain ``.cu`` / ``.cuh`` file name.
    FileNotFoundError
        If the kernel folder has no such file.
    """
    if (
        not isinstance(name, str)
        or Path(name).name != name
        or "\\" in name
        or Path(name).suffix not in CUDA_SOURCE_SUFFIXES
    ):
        raise ValueError(
            f"expected a plain kernel file name ending in {CUDA_SOURCE_SUFFIXES}, got {name!r}"
        )
    path = cuda_source_dir() / name
    if not path.is_file():
        raise FileNotFoundError(
            f"no CUDA source {name!r} in {path.parent}; available: {list_cuda_sources()}"
        )
    return path.read_text(encoding="utf-8")


def source_hash(source_dir=None):
    """The hash of every kernel source: the name and bytes of each ``.cu`` / ``.cuh``.

    It goes into the compile options (``-DGPUBOOST_SOURCE_HASH=...``,
    :func:`gpuboost.backends.cuda.launch.compile_options`), because CuPy's kernel cache
    is keyed by the source text and the options only: without it, an upgrade that
    changes only an included header (``common.cuh``, ``gain.cuh``, ...) would silently
    reuse kernels compiled from the old one.

    Parameters
    ----------
    source_dir : path, optional
        The kernel folder; default :func:`cuda_source_dir`.

    Returns
    -------
    str
        ``'0x'`` and :data:`SOURCE_HASH_DIGITS` hex digits of a SHA-256 (a C integer
        literal).
    """
    folder = cuda_source_dir() if source_dir is None else Path(source_dir)
    digest = hashlib.sha256()
    names = sorted(
        path.name
        for path in folder.iterdir()
        if path.is_file() and path.suffix in CUDA_SOURCE_SUFFIXES
    )
    for name in names:
        digest.update(name.encode("utf-8") + b"\0")
        digest.update((folder / name).read_bytes() + b"\0")
    return "0x" + digest.hexdigest()[:SOURCE_HASH_DIGITS]
