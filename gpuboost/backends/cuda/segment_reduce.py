"""Per-segment sequential sums on the CUDA backend (``cuda/segment_reduce.cu``).

The definition is :mod:`gpuboost.backends.numpy.segment_reduce`: segment ``s`` sums
``values[sample_indices[p]]`` in float64 from ``+0.0`` in increasing position order.
Only a sequential sum rounds the same way on every backend, so one thread sums one
segment (meant for per-leaf sums, not for large reductions).
"""

import numpy as np

from ...core.array import to_numpy
from ...core.dtypes import SAMPLE_INDEX_DTYPE, Y_DTYPE
from ...core.segments import checked_segments
from .launch import ceil_div, require_array, segment_table

__all__ = ["segment_sums", "SEGMENT_SUM_THREADS_PER_BLOCK"]

#: Kernel file (``cuda/segment_reduce.cu``) and its kernel.
KERNEL_FILE = "segment_reduce"
KERNEL = "segment_sequential_sums"
#: Threads (one per segment) per block of ``segment_sequential_sums`` (any block size).
SEGMENT_SUM_THREADS_PER_BLOCK = 128


def segment_sums(xp, launcher, values, sample_indices, begins, ends):
    """Sequential float64 sum of every segment's values (see the module docstring).

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    values : xp array of shape (n_rows,), float64  # IN
    sample_indices : xp array of shape (n_positions,), int32  # IN
    begins, ends : sequence of int, shape (n_segments,) (host)
        Disjoint segments.

    Returns
    -------
    sums : ndarray of shape (n_segments,), float64 (host)  # OUT
    """
    require_array(xp, values, Y_DTYPE, "values", ndim=1)
    require_array(xp, sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
    begins, ends = checked_segments(begins, ends, sample_indices.shape[0], disjoint=True)
    n_segments = len(begins)
    if n_segments == 0:
        return np.zeros(0, dtype=np.float64)
    table = segment_table(xp, [begins, ends])
    sums = xp.empty(n_segments, dtype=np.float64)
    launcher(
        KERNEL_FILE,
        KERNEL,
        ceil_div(n_segments, SEGMENT_SUM_THREADS_PER_BLOCK),
        SEGMENT_SUM_THREADS_PER_BLOCK,
        (values, sample_indices, table[0], table[1], np.int32(n_segments), sums),
    )
    return to_numpy(sums)
