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

Clusters must also be *placed*: all blocks of a cluster run at once on the SMs of one GPC.
:func:`max_active_clusters` is the emulation's answer to the driver's
``cuOccupancyMaxActiveClusters``: blocks per SM from the threads (2,048 per SM), the
shared memory (the SM's, less 1 KiB the system reserves per block) and 32 blocks at most;
whole clusters per GPC of ``gpc_multiprocessors`` SMs (16 on the H100 and H200: their
132 SMs sit in 8 GPCs of 16 to 18); at most ``GPUBOOST_EMULATE_MAX_ACTIVE_CLUSTERS`` when
set (0 stands in for a MIG slice or an MPS client that cannot place a cluster of 8).
"""

import os
from dataclasses import dataclass

__all__ = [
    "DeviceProfile",
    "PROFILES",
    "EMULATE_DEVICE_ENV_VAR",
    "DEFAULT_PROFILE",
    "current_profile",
    "max_active_clusters",
    "max_active_clusters_override",
    "MAX_ACTIVE_CLUSTERS_ENV_VAR",
]

#: Environment variable naming the emulated device.
EMULATE_DEVICE_ENV_VAR = "GPUBOOST_EMULATE_DEVICE"
#: The profile without the variable.
DEFAULT_PROFILE = "H100"
#: Environment variable: the most clusters the emulated device places (a MIG slice: 0).
MAX_ACTIVE_CLUSTERS_ENV_VAR = "GPUBOOST_EMULATE_MAX_ACTIVE_CLUSTERS"
#: Resident threads per SM (compute capability 8.0 and 9.0).
MAX_THREADS_PER_MULTIPROCESSOR = 2048
#: Resident blocks per SM (8.0 and 9.0).
MAX_BLOCKS_PER_MULTIPROCESSOR = 32
#: Shared memory the system reserves for each resident block (8.0 and later).
RESERVED_SHARED_PER_BLOCK = 1024


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
    gpc_multiprocessors: int

    @property
    def arch(self):
        """``sm_XY`` of the compute capability."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"


KIB = 1024
GIB = 1024**3
_A100 = DeviceProfile(
    "A100", "NVIDIA A100-SXM4-80GB", (8, 0), 108, 163 * KIB, 164 * KIB, False, 80 * GIB, 14
)
_L4 = DeviceProfile("L4", "NVIDIA L4", (8, 9), 58, 99 * KIB, 100 * KIB, False, 24 * GIB, 10)
_H100 = DeviceProfile(
    "H100", "NVIDIA H100 80GB HBM3", (9, 0), 132, 227 * KIB, 228 * KIB, True, 80 * GIB, 16
)
_H200 = DeviceProfile("H200", "NVIDIA H200", (9, 0), 132, 227 * KIB, 228 * KIB, True, 141 * GIB, 16)
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


def max_active_clusters_override():
    """``GPUBOOST_EMULATE_MAX_ACTIVE_CLUSTERS`` as an int, or None when unset.

    Raises
    ------
    ValueError
        For a value that is not a non-negative integer.
    """
    text = os.environ.get(MAX_ACTIVE_CLUSTERS_ENV_VAR, "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise ValueError(
            f"{MAX_ACTIVE_CLUSTERS_ENV_VAR}={text!r} must be a non-negative integer "
            "(the most thread-block clusters the emulated device places)."
        )
    return int(text)


def max_active_clusters(profile, cluster_blocks, threads, shared_bytes):
    """Clusters of ``cluster_blocks`` blocks that can be resident at once on ``profile``
    (the emulation's ``cuOccupancyMaxActiveClusters``; see the module docstring).

    Parameters
    ----------
    profile : DeviceProfile
    cluster_blocks : int
        Blocks per cluster.
    threads : int
        Threads per block.
    shared_bytes : int
        Shared memory per block, static and dynamic.

    Returns
    -------
    int
        0 on a profile without clusters, or when a cluster cannot be placed.
    """
    if not profile.clusters:
        return 0
    per_multiprocessor = min(
        MAX_THREADS_PER_MULTIPROCESSOR // max(int(threads), 1),
        MAX_BLOCKS_PER_MULTIPROCESSOR,
        profile.shared_per_multiprocessor // (int(shared_bytes) + RESERVED_SHARED_PER_BLOCK),
    )
    per_gpc = (profile.gpc_multiprocessors * per_multiprocessor) // int(cluster_blocks)
    clusters = (profile.multiprocessors // profile.gpc_multiprocessors) * per_gpc
    override = max_active_clusters_override()
    return clusters if override is None else min(clusters, override)
