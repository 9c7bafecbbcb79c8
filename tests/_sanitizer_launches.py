"""pytest plugin of the sanitizer run (tests/backends/emulation/test_sanitizer.py): each
process of the run (xdist's workers included) records the names of the kernels it
launched instrumented, and writes them, one per line, to a file of its own in the folder
``$GPUBOOST_SANITIZER_LAUNCHES`` when its session ends."""

import os
from pathlib import Path

from gpuboost.backends.emulation import launcher

#: Environment variable naming the folder of the launch records.
LAUNCHES_ENV_VAR = "GPUBOOST_SANITIZER_LAUNCHES"

_launched = []


def pytest_configure(config):
    original = launcher.EmulatedKernel._launch_instrumented

    def counting(self, *args, **kwargs):
        _launched.append(self.name)
        return original(self, *args, **kwargs)

    launcher.EmulatedKernel._launch_instrumented = counting


def pytest_sessionfinish(session):
    folder = Path(os.environ[LAUNCHES_ENV_VAR])
    (folder / f"{os.getpid()}.txt").write_text("".join(f"{name}\n" for name in _launched))
