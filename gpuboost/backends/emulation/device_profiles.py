"""The GPUs the emulation stands in for (``GPUBOOST_EMULATE_DEVICE``).

A kernel's launch configuration depends on the device: how many blocks fill it (SM
count), how much shared memory a block may opt into (which decides the histogram plan
and the row scan's tiles), and whether thread-block clusters exist (compute capability
9.0 and later: the cluster histogram and row-scan kernels). So that every branch the
backend takes on our users' GPUs runs in CI, the emulation takes the limits of one of
these profiles, everywhere the backend reads a device attribute
(:func:`gpuboost.backends.cuda.histogram.device_limits` and ``device_cluster_blocks``, the
launcher's shared-memory checks, ``gpuboost doctor``):

============  ====  =====  ==================  ===============  ========  =====
profile       cc    SMs    shared/block opt-in shared per SM    clusters  arch
============  ====  =====  ==================  ===============  ========  =====
``A100``      8.0   108    163 KiB             164 KiB          no        sm_80
``L4``        8.9   58     99 KiB              100 KiB          no        sm_89
``H100``      9.0   132    227 KiB             228 KiB          yes       sm_90
``H200``      9.0   132    227 KiB             228 KiB          yes       sm_90
============  ====  =====  ==================  ===============  ========  =====

(CUDA C++ Programming Guide, "Compute Capabilities", and the devices' data sheets; the
H200 is an H100 with more and faster memory.) The default is ``H100``.
"""

import os
from dataclasses import dataclass

__all__ = [
    "DeviceProfile",
    "PROFILES",
    "EMULATE_DEVICE_ENV_VAR",
    "DEFAULT_PROFILE",
    "current_profile",
]

#: Environment variable naming the emulated device.
EMULATE_DEVICE_ENV_VAR = "GPUBOOST_EMULATE_DEVICE"
#: The profile without the variable.
DEFAULT_PROFILE = "H100"


@dataclass(frozen=True)
class DeviceProfile:
    """One emulated GPU's limits (see the module docstring)."""

    key: str
    name: str
    compute_capability: tuple
    multiprocessors: int
    shared_per_block_optin: int
    shared_per_multiprocessor: int
    clusters: bool
    memory_bytes: int

    @property
    def arch(self):
        """``sm_XY`` of the compute capability."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"


KIB = 1024
GIB = 1024**3
_A100 = DeviceProfile(
    "A100", "NVIDIA A100-SXM4-80GB", (8, 0), 108, 163 * KIB, 164 * KIB, False, 80 * GIB
)
_L4 = DeviceProfile("L4", "NVIDIA L4", (8, 9), 58, 99 * KIB, 100 * KIB, False, 24 * GIB)
_H100 = DeviceProfile(
    "H100", "NVIDIA H100 80GB HBM3", (9, 0), 132, 227 * KIB, 228 * KIB, True, 80 * GIB
)
_H200 = DeviceProfile("H200", "NVIDIA H200", (9, 0), 132, 227 * KIB, 228 * KIB, True, 141 * GIB)
#: The profiles by name.
PROFILES = {profile.key: profile for profile in (_A100, _L4, _H100, _H200)}


def current_profile():
    """The emulated device's :class:`DeviceProfile` (``GPUBOOST_EMULATE_DEVICE``, read at
    every call so that tests may switch it).

    Raises
    ------
    ValueError
        For a name that is not a profile.
    """
    key = os.environ.get(EMULATE_DEVICE_ENV_VAR, "").strip() or DEFAULT_PROFILE
    profile = PROFILES.get(key.upper())
    if profile is None:
        raise ValueError(
            f"{EMULATE_DEVICE_ENV_VAR}={key!r} is not an emulated device; choose one of "
            f"{', '.join(PROFILES)}."
        )
    return profile
