"""PEP 517 build backend: setuptools, plus the CPU kernels compiled at editable install.

``pip install -e .`` (the README's install command) builds through this module
(pyproject.toml's ``[build-system]``, ``backend-path = ["scripts"]``). Every hook is
setuptools' own, except for editable installs:

* :func:`get_requires_for_build_editable` adds NumPy, Numba and SciPy to the build
  environment, the same unpinned requirements the package has at run time, so pip
  resolves the same versions for both;
* :func:`build_editable` builds the editable wheel with setuptools, then runs
  :func:`gpuboost.warmup.warm_up` from the source tree: Numba compiles every kernel
  signature the README's trainings use and writes them to its cache next to the sources
  (``gpuboost/backends/cpu/__pycache__``), which is where the installed package reads
  them, since an editable install runs from this tree. The first training after install
  then loads the kernels instead of compiling them (docs/DESIGN.md, "Cold start").

The warm-up never fails the install: when it cannot run (no compiler toolchain for
llvmlite, a read-only tree, ``GPUBOOST_COMPILE_AT_INSTALL=0``) or fails, pip goes on and
the kernels compile at first use as before; ``gpuboost compile`` builds the cache later.
``GPUBOOST_COMPILE_AT_INSTALL=strict`` (what CI sets: its install is the suite's check that
the warm-up fills an empty cache) makes a warm-up that did not run or failed fail the
install instead.
When the Numba installed at run time differs from the build environment's, the cache's
fingerprint (:func:`gpuboost.backends.cpu.jit.kernel_sources_fingerprint`) no longer
matches and the stale kernels are deleted on import, so they are never loaded wrongly.

Wheels and sdists (``pip install .``, ``python -m build``) are setuptools' unchanged: an
installed wheel's kernels are cached on first use or by ``gpuboost compile``.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (every hook, setuptools' own)

#: Set to 0 to skip compiling the kernels at editable install, to ``strict`` to fail the
#: install when the warm-up fails.
COMPILE_AT_INSTALL_ENV_VAR = "GPUBOOST_COMPILE_AT_INSTALL"
#: The value of :data:`COMPILE_AT_INSTALL_ENV_VAR` that makes a failed warm-up an error.
STRICT = "strict"
#: Run-time requirements the warm-up imports (NumPy and Numba are the package's own;
#: SciPy lets it compile the sparse-input kernels).
WARM_UP_REQUIREMENTS = ["numpy", "numba>=0.59", "scipy"]
#: Upper bound of the warm-up, in seconds (2 cores need about 70).
WARM_UP_TIMEOUT_SECONDS = 900
#: The repository root: the folder of pyproject.toml.
_ROOT = Path(__file__).resolve().parent.parent


def _compile_at_install():
    return os.environ.get(COMPILE_AT_INSTALL_ENV_VAR, "1").strip() not in ("0", "false", "no")


def get_requires_for_build_editable(config_settings=None):
    requirements = _setuptools.get_requires_for_build_editable(config_settings)
    if _compile_at_install():
        requirements = requirements + WARM_UP_REQUIREMENTS
    return requirements


def _strict():
    return os.environ.get(COMPILE_AT_INSTALL_ENV_VAR, "").strip() == STRICT


def _failed(message, output=""):
    """Says ``message`` (the warm-up did not run or failed) and the warm-up's ``output``:
    a warning, or under ``GPUBOOST_COMPILE_AT_INSTALL=strict`` an error that fails the
    install."""
    if _strict():
        raise RuntimeError(
            f"gpuboost: {message} ({COMPILE_AT_INSTALL_ENV_VAR}={STRICT}):\n{output}"
        )
    print(
        f"gpuboost: warning: {message}; the kernels compile at first use "
        f"('gpuboost compile' does it now):\n{output}",
        file=sys.stderr,
    )


def _warm_up():
    """Compile the kernels from the source tree in a child process; raises only under
    ``GPUBOOST_COMPILE_AT_INSTALL=strict``."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(_ROOT)] + [p for p in [environment.get("PYTHONPATH")] if p]
    )
    command = [
        sys.executable,
        "-c",
        "import gpuboost.warmup as w; w.warm_up(say=print)",
    ]
    print(
        "gpuboost: compiling the CPU kernels into Numba's cache "
        f"({COMPILE_AT_INSTALL_ENV_VAR}=0 skips this) ...",
        file=sys.stderr,
    )
    try:
        result = subprocess.run(
            command,
            cwd=_ROOT,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=WARM_UP_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.SubprocessError) as error:
        _failed(f"the kernel warm-up did not run ({error})")
        return
    if result.returncode != 0:
        _failed("the kernel warm-up failed", result.stdout[-3000:])
    else:
        print(result.stdout, file=sys.stderr)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if _compile_at_install():
        _warm_up()
    return wheel
