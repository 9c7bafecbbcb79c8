"""Whether the device can co-schedule the thread-block clusters of the cluster kernels.

A cluster's blocks must run at the same time on the SMs of one GPC. Compute capability
9.0 says clusters exist, not that one can be placed: a MIG slice, a process limited by
MPS or a GPU whose GPCs have had SMs fused off may hold fewer. A launch whose cluster
cannot be placed fails. So before the backend plans a cluster kernel
(:func:`gpuboost.backends.cuda.histogram.device_cluster_blocks`), it asks the driver
once per device (``cuOccupancyMaxActiveClusters``, CUDA 11.8 and later) how many
clusters of each kernel in :data:`CLUSTER_KERNELS` can be resident, at the launch that
needs the most of an SM: the kernel's ``__launch_bounds__`` threads and all the shared
memory a block may opt into. Every real launch takes at most that, so when one such
cluster fits, every launch does; when none does (or the query fails), the backend takes
the kernels that flush per block, which compute the same bytes (docs/DESIGN.md, "GPU
performance model", the histogram phase's placement).

Under the emulation the answer is the profile's model
(:func:`gpuboost.backends.emulation.device_profiles.max_active_clusters`; with
``GPUBOOST_EMULATE_MAX_ACTIVE_CLUSTERS=N`` at most N, the stand-in for a MIG slice),
and the emulated launcher refuses a cluster launch the model cannot place, as a GPU
does.
"""

import ctypes
import sys

from ..emulation.device_profiles import current_profile, max_active_clusters_override
from .launch import EMULATED, get_kernel

__all__ = [
    "CLUSTER_KERNELS",
    "clusters_placeable",
    "max_active_clusters",
    "LaunchConfig",
]

#: ``(file stem, kernel)`` of every kernel with ``__cluster_dims__`` (a test checks this
#: against the sources).
CLUSTER_KERNELS = (
    ("histogram", "histogram_cluster_memory"),
    ("histogram", "histogram_cluster_columns"),
    ("row_scan", "row_scan_cluster"),
)

#: (mode, device key) -> bool.
_PLACEABLE = {}
#: The driver library's ``cuOccupancyMaxActiveClusters`` (loaded once), or the reason it
#: is missing.
_DRIVER = {}


class LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` of ``cuda.h`` (CUDA 12), the argument of the driver's occupancy
    query (a test compares its layout with the header's where ``cuda.h`` exists)."""

    _fields_ = [
        ("gridDimX", ctypes.c_uint),
        ("gridDimY", ctypes.c_uint),
        ("gridDimZ", ctypes.c_uint),
        ("blockDimX", ctypes.c_uint),
        ("blockDimY", ctypes.c_uint),
        ("blockDimZ", ctypes.c_uint),
        ("sharedMemBytes", ctypes.c_uint),
        ("hStream", ctypes.c_void_p),
        ("attrs", ctypes.c_void_p),
        ("numAttrs", ctypes.c_uint),
    ]


def _driver_query():
    """``cuOccupancyMaxActiveClusters`` of the CUDA driver library, or None when the driver
    lacks it (older than CUDA 11.8)."""
    if "query" not in _DRIVER:
        name = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
        try:
            query = ctypes.CDLL(name).cuOccupancyMaxActiveClusters
        except (OSError, AttributeError):
            query = None
        else:
            query.restype = ctypes.c_int
            query.argtypes = [
                ctypes.POINTER(ctypes.c_int),
                ctypes.c_void_p,
                ctypes.POINTER(LaunchConfig),
            ]
        _DRIVER["query"] = query
    return _DRIVER["query"]


def max_active_clusters(mode, file_stem, kernel_name, threads, shared_bytes):
    """Clusters of the kernel that can be resident at once on the current device, launched
    with ``threads`` threads per block and ``shared_bytes`` dynamic shared bytes per block.

    Parameters
    ----------
    mode : {'cupy', 'emulated'}
    file_stem, kernel_name : str
        A kernel with ``__cluster_dims__`` (its cluster size is the kernel's).
    threads, shared_bytes : int

    Returns
    -------
    int
        0 when no cluster can be placed; on a GPU also when the driver cannot answer
        (a driver older than CUDA 11.8, or an error of the query).
    """
    kernel = get_kernel(mode, file_stem, kernel_name)
    if mode == EMULATED:
        return kernel.max_active_clusters(int(threads), int(shared_bytes))
    query = _driver_query()
    if query is None:
        return 0
    import cupy

    if kernel.max_dynamic_shared_size_bytes < shared_bytes:
        kernel.max_dynamic_shared_size_bytes = int(shared_bytes)
    # A grid of one cluster: the kernel's compile-time __cluster_dims__ give its size (the
    # query rejects a grid that is not a whole number of clusters; 8 is every kernel's).
    config = LaunchConfig(
        gridDimX=8,
        gridDimY=1,
        gridDimZ=1,
        blockDimX=int(threads),
        blockDimY=1,
        blockDimZ=1,
        sharedMemBytes=int(shared_bytes),
        hStream=cupy.cuda.get_current_stream().ptr,
        attrs=None,
        numAttrs=0,
    )
    clusters = ctypes.c_int(0)
    status = query(ctypes.byref(clusters), kernel.kernel.ptr, ctypes.byref(config))
    return int(clusters.value) if status == 0 else 0


def _device_key(mode):
    if mode == EMULATED:
        return current_profile().key, max_active_clusters_override()
    import cupy

    return cupy.cuda.Device().id


def clusters_placeable(mode, optin_limit):
    """Whether at least one cluster of every kernel of :data:`CLUSTER_KERNELS` can be
    placed on the current device at its heaviest launch (the kernel's
    ``__launch_bounds__`` threads, ``optin_limit`` bytes of shared memory in all): then
    every launch the backend makes can. Asked once per device (under the emulation, per
    profile and ``GPUBOOST_EMULATE_MAX_ACTIVE_CLUSTERS``)."""
    key = (mode, _device_key(mode))
    placeable = _PLACEABLE.get(key)
    if placeable is None:
        placeable = True
        for file_stem, kernel_name in CLUSTER_KERNELS:
            kernel = get_kernel(mode, file_stem, kernel_name)
            shared = int(optin_limit) - int(kernel.shared_size_bytes)
            threads = int(kernel.max_threads_per_block)
            if max_active_clusters(mode, file_stem, kernel_name, threads, shared) < 1:
                placeable = False
                break
        _PLACEABLE[key] = placeable
    return placeable
