"""A pytest run in a child process, for the slow tests that run a part of the suite under
other settings (the sanitizer, another emulated device): the child is no xdist worker of
this run, imports the checkout's gpuboost and the tests' helpers, and runs from the
repository root."""

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["REPO_ROOT", "child_environment", "run_pytest"]

REPO_ROOT = Path(__file__).resolve().parents[1]


def child_environment(environment=None):
    """This process's environment variables plus ``environment``'s, for a child process
    that imports the checkout's gpuboost and the tests' helpers and is no xdist worker.

    Returns
    -------
    dict
    """
    child = dict(os.environ, **(environment or {}))
    child["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT), str(REPO_ROOT / "tests"), *filter(None, [child.get("PYTHONPATH")])]
    )
    for name in list(child):
        if name.startswith("PYTEST_XDIST") or name == "PYTEST_CURRENT_TEST":
            del child[name]
    return child


def run_pytest(arguments, environment=None, timeout=None):
    """``python -m pytest -q -p no:cacheprovider *arguments`` with ``environment``'s
    variables added to this process's.

    Returns
    -------
    (int, str)
        The exit status, and stdout followed by stderr.
    """
    child = child_environment(environment)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, arguments)],
        cwd=REPO_ROOT,
        env=child,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr
