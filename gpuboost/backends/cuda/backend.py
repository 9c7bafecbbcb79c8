"""The CUDA backend: CuPy arrays and the raw kernels of ``cuda/*.cu``.

Every per-row array of a training run lives on the GPU; the primitives are raw
CUDA kernels loaded through :mod:`gpuboost.backends.cuda_module` (compiled with
``--fmad=false``), so results are bit-identical to the NumPy backend
(docs/DESIGN.md). Per round only split records, per-node scalars and the
finished tree cross between host and device.

With ``GPUBOOST_EMULATE_CUDA=1`` the same Python code runs on the emulation's
device arrays and the kernels run in the CPU emulation (:mod:`gpuboost.emulation`):
``xp`` is :data:`gpuboost.emulation.device_array.namespace` (NumPy computing under
CuPy's host/device rules); the device context, memory pools and synchronization
are no-ops.

Primitives and kernels
----------------------
* ``_prepare``: the data are binned on the device, ``cuda/binning.cu``
  ``bin_features`` (one thread per element, binary search over the feature's
  edges); the host copy ``Dataset.X_binned`` is never computed.
* ``partition``: ``cuda/partition.cu``, per-tile go-left flags and counts, a
  device cumulative sum of the counts, then a stable scatter (a block-wide scan
  per tile); one small host-to-device copy of the segment table per batch of
  nodes, no device-to-host copy.
* ``add_leaf_values``: ``cuda/leaf.cu`` ``add_leaf_values``, one thread per position.
* ``segment_sums``: ``cuda/segment_reduce.cu``, one thread per segment summing
  sequentially in position order (the definition of gpuboost.segment_reduce).
* ``rebin`` (tree_method='approx'): ``cuda/binning.cu`` on the device copy of the
  raw features, with the round's edges.
* ``binned_layout`` (feature bundles, gpuboost.bundling): every kernel reads the
  bins row-major, ``DeviceData.arrays['X_binned']``.
* ``segment_weighted_quantile``: ``cuda/leaf.cu``, a gather, stable device
  sorts, then ``select_segment_quantiles`` (one thread per leaf).
* ``predict_*``: ``cuda/predict.cu``, one thread per row, trees copied to the
  device as flat arrays.
* ``build_histograms`` / ``find_best_splits``:
  :func:`gpuboost.backends.cuda_histogram.build_histograms` and
  :func:`gpuboost.backends.cuda_split.find_best_splits`.
* ``quantize``, ``row_sample``, ``subtract_histograms``, ``stack_histograms``:
  array-module code of the base class.

Weighted quantile (leaf refit): the cumulative weights must round exactly as
NumPy's sequential ``np.cumsum`` in sorted order, which no parallel scan does.
The rows of every leaf are therefore gathered and sorted on the device (a stable
sort by value, ``-0.0`` canonicalized to ``+0.0`` so that a radix sort orders
ties as NumPy's comparison sort does, then a stable sort by leaf), and one thread
per leaf sums the sorted weights sequentially. With unit weights the cumulative
weights are exact integers and the thread binary-searches them instead. The
sequential pass costs O(rows of the largest leaf) per tree, only for quantile
objectives with sample weights.

Device memory per row
---------------------
What one training row costs on the GPU during training (``K`` = number of
outputs, 1 except for multi-class), see :func:`device_bytes_per_row`; the
temporaries are an estimate of the peak, the rest is exact:

==========================================================  =================
binned features (uint8, row-major)                          ``n_features``
label (float64, DeviceData's copy)                          8 
sample weight (float64, when given)                         8 
margins (float64 per output)                                8 K
gradients and hessians (float64 per output)                 16 K
quantized gradient and hessian (int32, one output)          8
sample indices (int32)                                      4
partition scratch (saved row int32 + go-left flag uint8)    5
temporaries (quantization, row sampling, prediction)        up to 32
==========================================================  =================

For example 28 features, one output, no weights: 28 + 8 + 8 + 16 + 8 + 4 + 5 +
32 = 109 bytes per row, about 1.1 GB for 10 million rows. Not per row: the
histograms, ``n_nodes x n_features x (max_bin + 1) x 24`` bytes per batch of
nodes (plus the parents' histograms kept for the subtraction trick). While the
data are binned, the raw float64 features are copied to the device in chunks of
at most :data:`BINNING_CHUNK_BYTES` and freed afterwards. Every evaluation set
other than the training set costs ``8 n_features + 8 K + 8`` bytes per row (raw
features, margins, label) plus 8 with weights. With ``tree_method='approx'`` the
raw training features stay on the device (``8 n_features`` more per row) and each
tree is grown on its own binned copy (``n_features`` more). Exclusive feature bundles
(gpuboost.bundling) add the bundled matrix, ``n_bundles`` bytes per row (with
``max_conflict_rate > 0`` also a decoded copy of the bins, ``n_features``);
``tree_method='exact'`` adds an int32 rank per feature (``4 n_features``), plus the raw
features (``8 n_features``) when rows are subsampled.

A CUDA out-of-memory error inside the backend is re-raised as
:class:`GpuOutOfMemoryError` (a ``MemoryError``) naming the data shape, the
bytes requested, the bytes per row and what to change.

Checking kernel errors
----------------------
Kernel launches are asynchronous: a fault surfaces at the next synchronizing
call. Set ``GPUBOOST_CUDA_CHECK_LAUNCHES=1`` (or ``backend.check_launches =
True``) to synchronize after every launch and report the failing kernel by
name; tests do this. Under the emulation the launcher raises at the launch.
"""
import contextlib
import functools
import os
import re

import numpy as np

from . import launch as cuda_module
from ..base import Backend, DeviceData
from ...core.dtypes import GRAD_QUANT_DTYPE, SAMPLE_INDEX_DTYPE, X_BINNED_DTYPE, X_DTYPE, Y_DTYPE
from ...core.profiling import nvtx_range
from ...errors import DeviceUnavailableError, GpuOutOfMemoryError

__all__ = ["CudaBackend", "GpuOutOfMemoryError", "device_bytes_per_row",
           "CHECK_LAUNCHES_ENV_VAR", "BINNING_CHUNK_BYTES"]

# ---- launch configuration --------------------------------------------------------
# The tile geometry of the partition and leaf kernels is compiled into the .cu files
# and must equal the constants named there (tests/test_cuda_partition.py checks it);
# the grid-stride kernels (binning, prediction, quantile selection) take any block size.
#: Threads per block of ``bin_features``.
BINNING_THREADS_PER_BLOCK = 256
#: Threads per block of the partition kernels (partition.cu: kPartitionThreadsPerBlock).
PARTITION_THREADS_PER_BLOCK = 128
#: Positions per thread and tile (partition.cu: kPartitionItemsPerThread).
PARTITION_ITEMS_PER_THREAD = 8
PARTITION_TILE_ROWS = PARTITION_THREADS_PER_BLOCK * PARTITION_ITEMS_PER_THREAD
#: Threads per block of the tiled leaf kernels (leaf.cu: kLeafThreadsPerBlock).
LEAF_THREADS_PER_BLOCK = 128
#: Positions per thread and tile (leaf.cu: kLeafItemsPerThread).
LEAF_ITEMS_PER_THREAD = 8
LEAF_TILE_ROWS = LEAF_THREADS_PER_BLOCK * LEAF_ITEMS_PER_THREAD
#: Threads (one per leaf) per block of ``select_segment_quantiles``.
QUANTILE_THREADS_PER_BLOCK = 128
#: Threads (one per segment) per block of ``segment_sequential_sums``.
SEGMENT_SUM_THREADS_PER_BLOCK = 128
#: Threads per block of the prediction kernels.
PREDICT_THREADS_PER_BLOCK = 256
#: Most blocks of a grid-stride kernel (binning, prediction): enough to fill any
#: current GPU several times over; larger inputs loop.
GRID_STRIDE_MAX_BLOCKS = 4096

#: Largest chunk of raw float64 features copied to the device at once for binning.
BINNING_CHUNK_BYTES = 256 * 1024 * 1024
#: Rows of the packed int32 node table of predict.cu, in order.
NODE_INT_ROWS = ("feature", "left_child", "right_child", "threshold_bin", "default_left")
#: Rows of the packed float64 node table of predict.cu, in order.
NODE_FLOAT_ROWS = ("threshold", "value")

#: Environment variable: "1" synchronizes and checks for errors after every launch.
CHECK_LAUNCHES_ENV_VAR = "GPUBOOST_CUDA_CHECK_LAUNCHES"

# ---- device memory per row (bytes; see the module docstring) ----------------------
_FLOAT64_BYTES = np.dtype(np.float64).itemsize
#: DeviceData's copy, which the training loop uses directly (gpuboost/training.py).
_BYTES_LABEL = _FLOAT64_BYTES
_BYTES_WEIGHT = _FLOAT64_BYTES
_BYTES_MARGIN_PER_OUTPUT = _FLOAT64_BYTES
_BYTES_GRADIENT_PAIR_PER_OUTPUT = 2 * _FLOAT64_BYTES
_BYTES_QUANTIZED_PAIR = 2 * np.dtype(GRAD_QUANT_DTYPE).itemsize
_BYTES_SAMPLE_INDEX = np.dtype(SAMPLE_INDEX_DTYPE).itemsize
_BYTES_PARTITION_SCRATCH = np.dtype(SAMPLE_INDEX_DTYPE).itemsize + np.dtype(np.uint8).itemsize
_BYTES_TEMPORARIES = 4 * _FLOAT64_BYTES
#: Bytes of one histogram cell (three int64 sums).
HISTOGRAM_CELL_BYTES = 3 * np.dtype(np.int64).itemsize

#: Pattern of the requested size in CuPy's out-of-memory message.
_CUPY_REQUEST_PATTERN = re.compile(r"allocating ([\d,]+) bytes")


def device_bytes_per_row(n_features, n_outputs=1, has_weight=False):
    """Device memory one training row costs during training, itemized.

    Parameters
    ----------
    n_features : int
    n_outputs : int
        Trees per round (classes of a multi-class objective, else 1).
    has_weight : bool
        Whether the Dataset has sample weights.

    Returns
    -------
    parts : dict of str -> int
        Bytes per row of every per-row device array (see the module docstring);
        ``sum(parts.values())`` is the total.
    """
    return {
        "binned features": int(n_features) * np.dtype(X_BINNED_DTYPE).itemsize,
        "label": _BYTES_LABEL,
        "weight": _BYTES_WEIGHT if has_weight else 0,
        "margins": _BYTES_MARGIN_PER_OUTPUT * int(n_outputs),
        "gradients and hessians": _BYTES_GRADIENT_PAIR_PER_OUTPUT * int(n_outputs),
        "quantized gradient and hessian": _BYTES_QUANTIZED_PAIR,
        "sample indices": _BYTES_SAMPLE_INDEX,
        "partition scratch": _BYTES_PARTITION_SCRATCH,
        "temporaries": _BYTES_TEMPORARIES,
    }


def _device_call(action):
    """Decorator of backend methods: run on the backend's device and turn a CUDA
    out-of-memory error into :class:`GpuOutOfMemoryError` describing ``action``."""

    def decorate(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            with self._device_context():
                try:
                    return method(self, *args, **kwargs)
                except self._out_of_memory_errors as error:
                    raise self._out_of_memory(action, error) from error
        return wrapper
    return decorate


def _grid_stride_blocks(n_items, threads_per_block):
    """Blocks of a grid-stride kernel over ``n_items`` (> 0) items."""
    return int(min(-(-n_items // threads_per_block), GRID_STRIDE_MAX_BLOCKS))


def _segment_tiles(begins, ends, tile_rows):
    """Tiles of ``tile_rows`` positions per segment (a tile never spans two segments).

    Returns
    -------
    first_tile : ndarray of shape (n_segments + 1,), int64
        Segment ``s`` owns tiles ``first_tile[s] .. first_tile[s + 1] - 1``.
    n_tiles : int
    """
    lengths = ends - begins
    tiles = -(-lengths // tile_rows)
    first_tile = np.zeros(len(begins) + 1, dtype=np.int64)
    np.cumsum(tiles, out=first_tile[1:])
    return first_tile, int(first_tile[-1])


def _packed_edges(bin_edges):
    """All features' bin edges concatenated, and the offsets of each feature's edges.

    Returns
    -------
    edges : ndarray of shape (n_edges + 1,), float64
        One spare entry keeps the array non-empty when no feature has an edge.
    edge_offsets : ndarray of shape (n_features + 1,), int64
    """
    edge_offsets = np.zeros(len(bin_edges) + 1, dtype=np.int64)
    np.cumsum([len(edges) for edges in bin_edges], out=edge_offsets[1:])
    edges = np.zeros(int(edge_offsets[-1]) + 1, dtype=X_DTYPE)
    if edge_offsets[-1]:
        edges[:-1] = np.concatenate(bin_edges)
    return edges, edge_offsets


def _padded(values, width):
    """``values`` as int64, padded with zeros to ``width`` entries."""
    out = np.zeros(width, dtype=np.int64)
    out[:len(values)] = values
    return out


class CudaBackend(Backend):
    """Primitives as raw CUDA kernels on CuPy arrays (see the module docstring).

    Parameters
    ----------
    device_ordinal : int
        The CUDA device (``device='cuda:N'``). Every method runs with this device
        current and every array it returns lives there.

    Attributes
    ----------
    xp : module
        ``cupy``, or ``numpy`` under the emulation.
    check_launches : bool
        Synchronize and check for errors after every kernel launch (default:
        ``GPUBOOST_CUDA_CHECK_LAUNCHES=1``).
    """

    name = "cuda"

    def __init__(self, device_ordinal=0):
        self.device_ordinal = int(device_ordinal)
        self.emulated = cuda_module.emulated()
        self.xp = cuda_module.array_module()
        self.check_launches = os.environ.get(CHECK_LAUNCHES_ENV_VAR) == "1"
        self._data_shape = None
        self._data_has_weight = False
        if self.emulated:
            self._cupy = None
            self._out_of_memory_errors = ()
            return
        import cupy
        self._cupy = cupy
        self._out_of_memory_errors = (cupy.cuda.memory.OutOfMemoryError,)
        n_devices = cupy.cuda.runtime.getDeviceCount()
        if not 0 <= self.device_ordinal < n_devices:
            raise DeviceUnavailableError(
                f"device='cuda:{self.device_ordinal}' was requested but only {n_devices} CUDA "
                f"device(s) are visible (ordinals 0..{n_devices - 1}).")

    def __repr__(self):
        mode = "emulated" if self.emulated else "cupy"
        return f"CudaBackend(device_ordinal={self.device_ordinal}, {mode})"

    # ---- device, errors -----------------------------------------------------------
    def _device_context(self):
        if self.emulated:
            return contextlib.nullcontext()
        return self._cupy.cuda.Device(self.device_ordinal)

    def _out_of_memory(self, action, error):
        """A :class:`GpuOutOfMemoryError` for a failed allocation while ``action``."""
        match = _CUPY_REQUEST_PATTERN.search(str(error))
        requested = int(match.group(1).replace(",", "")) if match else None
        requested_text = f"{requested:,} bytes requested" if requested is not None else \
            "allocation failed"
        lines = [f"CUDA out of memory while {action} on device cuda:{self.device_ordinal}: "
                 f"{requested_text} ({error})."]
        free_total = self._memory_info()
        if free_total is not None:
            lines.append(f"Device memory: {free_total[0]:,} bytes free of {free_total[1]:,}.")
        bytes_per_row = None
        if self._data_shape is not None:
            n_rows, n_features = self._data_shape
            parts = device_bytes_per_row(n_features, 1, self._data_has_weight)
            bytes_per_row = sum(parts.values())
            itemized = ", ".join(f"{name} {size}" for name, size in parts.items() if size)
            lines.append(
                f"Training data: {n_rows:,} rows x {n_features} features; the CUDA backend "
                f"keeps about {bytes_per_row} bytes per row on the device ({itemized}; +24 per "
                f"extra output class), about {n_rows * bytes_per_row:,} bytes in all, plus "
                f"histograms of n_nodes x {n_features} x (max_bin + 1) x "
                f"{HISTOGRAM_CELL_BYTES} bytes.")
        lines.append("To fit: train on fewer rows (subsample the data), use a lower max_bin "
                     "(smaller histograms), free other GPU memory "
                     "(gpuboost.backends.release_memory(), other processes), or train with "
                     "device='cpu'.")
        return GpuOutOfMemoryError(" ".join(lines), action=action, requested_bytes=requested,
                                   bytes_per_row=bytes_per_row, data_shape=self._data_shape)

    @contextlib.contextmanager
    def guard(self, action):
        """Run ``action`` on this device; a CUDA out-of-memory error anywhere inside
        (backend primitives, objectives, the boosting loop's own arrays) becomes a
        :class:`GpuOutOfMemoryError`, after the pooled blocks it left are freed."""
        with self._device_context():
            try:
                yield
            except GpuOutOfMemoryError:
                self.release_memory()
                raise
            except self._out_of_memory_errors as error:
                self.release_memory()
                raise self._out_of_memory(action, error) from error

    def _memory_info(self):
        """(free, total) device bytes, or None (emulation, or the query failed)."""
        if self.emulated:
            return None
        try:
            return tuple(int(v) for v in self._cupy.cuda.runtime.memGetInfo())
        except Exception:  # the query itself may fail on a device in a bad state
            return None

    def _launch(self, file_stem, kernel_name, grid, block, args):
        """Launch ``kernel_name`` of ``cuda/<file_stem>.cu``; with :attr:`check_launches`,
        wait for it and raise a RuntimeError naming the kernel when it failed."""
        kernel = cuda_module.get_kernel(file_stem, kernel_name)
        kernel((int(grid),), (int(block),), tuple(args))
        if self.check_launches and not self.emulated:
            try:
                self._cupy.cuda.runtime.deviceSynchronize()
            except self._cupy.cuda.runtime.CUDARuntimeError as error:
                raise RuntimeError(f"CUDA kernel {file_stem}.cu:{kernel_name} failed: "
                                   f"{error}") from error

    def _require(self, array, dtype, name, ndim=None):
        """Check that a device array has the dtype, layout and rank a kernel expects."""
        if not isinstance(array, self.xp.ndarray):
            raise TypeError(f"{name} must be a {self.xp.__name__} array (a backend array), got "
                            f"{type(array).__name__}.")
        if array.dtype != dtype or not array.flags.c_contiguous or \
                (ndim is not None and array.ndim != ndim):
            raise TypeError(f"{name} must be a C-contiguous {np.dtype(dtype).name} array"
                            f"{'' if ndim is None else f' with {ndim} dimension(s)'}, got "
                            f"{array.dtype} of shape {array.shape} "
                            f"(C-contiguous: {array.flags.c_contiguous}).")

    # ---- memory -----------------------------------------------------------------
    @_device_call("copying an array to the device")
    def to_device(self, array):
        """Host NumPy array -> device array (always a copy, also under the emulation)."""
        return self.xp.array(array, copy=True)

    def to_host(self, array):
        """Device array -> host NumPy array (a copy)."""
        if isinstance(array, np.ndarray):
            return np.array(array, copy=True)
        with self._device_context():
            return self.xp.asnumpy(array)

    def synchronize(self):
        """Wait for all queued work on the device; raises a pending kernel error."""
        if self.emulated:
            return
        with self._device_context():
            self._cupy.cuda.runtime.deviceSynchronize()

    def release_memory(self):
        """Return the unused blocks of CuPy's device and pinned memory pools."""
        if self.emulated:
            return
        with self._device_context():
            self._cupy.get_default_memory_pool().free_all_blocks()
            self._cupy.get_default_pinned_memory_pool().free_all_blocks()

    # ---- data -----------------------------------------------------------------
    @_device_call("copying and binning the training data")
    def _prepare(self, dataset):
        with nvtx_range("cuda_prepare"):
            xp = self.xp
            mapper = dataset.bin_mapper
            self._data_shape = (dataset.n_rows, dataset.n_features)
            self._data_has_weight = dataset.weight is not None
            binned = self.bin_features(dataset.data, mapper)
            label = None if dataset.label is None else xp.array(dataset.label, dtype=Y_DTYPE)
            weight = None if dataset.weight is None else xp.array(dataset.weight, dtype=Y_DTYPE)
            # Row-major bins (histogram, partition and binned prediction kernels) and a
            # device copy of the value-bin counts (split scan), so no call re-sends them.
            arrays = {"X_binned": binned,
                      "n_value_bins": xp.array(np.asarray(mapper.n_value_bins_, dtype=np.int32))}
            return DeviceData(dataset.n_rows, dataset.n_features, mapper.n_bins,
                              mapper.missing_bin, np.asarray(mapper.n_value_bins_), label,
                              weight, arrays)

    @_device_call("binning features on the device")
    def bin_features(self, data, bin_mapper):
        """Bin raw features on the device (``cuda/binning.cu``).

        Parameters
        ----------
        data : ndarray of shape (n_rows, n_features), float64 (host)
        bin_mapper : BinMapper
            Fitted.

        Returns
        -------
        binned : device array of shape (n_rows, n_features), uint8, C order
            Equal to ``bin_mapper.transform(data)``.
        """
        xp = self.xp
        data = np.ascontiguousarray(data, dtype=X_DTYPE)
        n_rows, n_features = data.shape
        binned, launch = self._binning_launcher(n_rows, n_features, bin_mapper, "data")
        if binned.size == 0:
            return binned
        chunk_rows = max(1, BINNING_CHUNK_BYTES // (n_features * data.itemsize))
        with nvtx_range("binning"):
            for start in range(0, n_rows, chunk_rows):
                stop = min(start + chunk_rows, n_rows)
                chunk = xp.array(data[start:stop])
                launch(chunk, start)
                del chunk
        return binned

    def _binning_launcher(self, n_rows, n_features, bin_mapper, what):
        """The output array of ``cuda/binning.cu`` and a function binning a chunk of rows
        into it: ``launch(features_chunk, first_row)``. Edges are copied to the device once."""
        if n_features != len(bin_mapper.bin_edges_):
            raise ValueError(f"{what} has {n_features} features, the BinMapper "
                             f"{len(bin_mapper.bin_edges_)}.")
        xp = self.xp
        edges, edge_offsets = _packed_edges(bin_mapper.bin_edges_)
        binned = xp.empty((n_rows, n_features), dtype=X_BINNED_DTYPE)
        if binned.size == 0:
            return binned, None
        edges_device, offsets_device = xp.array(edges), xp.array(edge_offsets)

        def launch(chunk, first_row):
            self._launch("binning", "bin_features",
                         _grid_stride_blocks(chunk.size, BINNING_THREADS_PER_BLOCK),
                         BINNING_THREADS_PER_BLOCK, (
                             chunk, np.int64(chunk.shape[0]), np.int32(n_features),
                             edges_device, offsets_device, np.int32(bin_mapper.missing_bin),
                             np.int64(first_row), binned))
        return binned, launch

    @_device_call("re-binning features on the device")
    def rebin(self, data, raw_features, bin_mapper):
        """``data`` with its features re-binned from the device's raw features
        (``cuda/binning.cu``, one launch; tree_method='approx').

        Parameters
        ----------
        data : DeviceData
        raw_features : device array of shape (n_rows, n_features), float64, C order
            From :meth:`prepare_features`.
        bin_mapper : BinMapper
            Fitted, with ``data``'s ``max_bin``.

        Returns
        -------
        DeviceData
        """
        xp = self.xp
        self._require(raw_features, X_DTYPE, "raw_features", ndim=2)
        n_rows, n_features = raw_features.shape
        binned, launch = self._binning_launcher(n_rows, n_features, bin_mapper, "raw_features")
        if binned.size:
            launch(raw_features, 0)
        n_value_bins = np.asarray(bin_mapper.n_value_bins_, dtype=np.int32)
        arrays = {"X_binned": binned, "n_value_bins": xp.array(n_value_bins)}
        return DeviceData(n_rows, n_features, bin_mapper.n_bins, bin_mapper.missing_bin,
                          n_value_bins, data.label, data.weight, arrays)

    @_device_call("laying out binned features")
    def binned_layout(self, X_binned):
        """Row-major bins, the layout of every kernel reading bins."""
        return {"X_binned": self.xp.ascontiguousarray(X_binned)}

    @_device_call("copying features to the device")
    def prepare_features(self, X):
        """Raw float64 features (host) -> device array (n_rows, n_features), C order."""
        return self.xp.array(np.ascontiguousarray(X, dtype=X_DTYPE))

    # ---- one round ------------------------------------------------------------
    @_device_call("quantizing gradients")
    def quantize(self, values):
        return super().quantize(values)

    @_device_call("sampling rows")
    def row_sample(self, n_rows, seed, stream, fraction):
        return super().row_sample(n_rows, seed, stream, fraction)

    @_device_call("building histograms")
    def build_histograms(self, data, quantized_gradients, quantized_hessians, sample_indices,
                         begins, ends):
        from .histogram import build_histograms
        return build_histograms(self.xp, data.arrays["X_binned"], quantized_gradients,
                                quantized_hessians, sample_indices, begins, ends, data.n_bins)

    @_device_call("subtracting histograms")
    def subtract_histograms(self, parent, child):
        return parent - child

    @_device_call("stacking histograms")
    def stack_histograms(self, histograms):
        return self.xp.concatenate(histograms, axis=0)

    @_device_call("finding the best splits")
    def find_best_splits(self, data, histograms, scale_gradients, scale_hessians, split_params,
                         feature_mask):
        from .split_scan import find_best_splits
        return find_best_splits(self.xp, histograms, scale_gradients, scale_hessians,
                                data.arrays["n_value_bins"], data.missing_bin, split_params,
                                feature_mask)

    def _segments(self, begins, ends, n_positions):
        """Host int64 segment bounds, checked: inside ``[0, n_positions]`` and disjoint."""
        begins = np.asarray(begins, dtype=np.int64).reshape(-1)
        ends = np.asarray(ends, dtype=np.int64).reshape(-1)
        if begins.shape != ends.shape:
            raise ValueError(f"begins and ends differ in length ({len(begins)} vs {len(ends)}).")
        if np.any(begins < 0) or np.any(ends < begins) or np.any(ends > n_positions):
            raise ValueError(f"Segments must satisfy 0 <= begin <= end <= {n_positions}.")
        non_empty = ends > begins
        order = np.argsort(begins[non_empty], kind="stable")
        if np.any(ends[non_empty][order][:-1] > begins[non_empty][order][1:]):
            raise ValueError("Segments must not overlap.")
        return begins, ends

    @_device_call("partitioning rows")
    def partition(self, data, sample_indices, begins, ends, features, threshold_bins,
                  default_left):
        """Stable in-place split of the listed segments (``cuda/partition.cu``)."""
        self._partition(data, sample_indices, begins, ends, features, threshold_bins,
                        default_left)

    def _partition(self, data, sample_indices, begins, ends, features, threshold_bins,
                   default_left, return_left_counts=False):
        """:meth:`partition`; with ``return_left_counts``, also the rows sent left per
        segment (a device int64 array; for tests, training knows them from the records)."""
        xp = self.xp
        self._require(sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
        X_binned = data.arrays["X_binned"]
        begins, ends = self._segments(begins, ends, sample_indices.shape[0])
        n_segments = len(begins)
        features = np.asarray(features, dtype=np.int64).reshape(-1)
        threshold_bins = np.asarray(threshold_bins, dtype=np.int64).reshape(-1)
        default_left = np.asarray(default_left, dtype=bool).reshape(-1).astype(np.int64)
        if not (len(features) == len(threshold_bins) == len(default_left) == n_segments):
            raise ValueError("features, threshold_bins and default_left need one entry per "
                             "segment.")
        if np.any(features < 0) or np.any(features >= data.n_features):
            raise ValueError(f"Split features must be in [0, {data.n_features}).")
        first_tile, n_tiles = _segment_tiles(begins, ends, PARTITION_TILE_ROWS)
        if n_tiles == 0:
            return xp.zeros(n_segments, dtype=np.int64) if return_left_counts else None
        width = n_segments + 1
        table = xp.array(np.stack([_padded(begins, width), _padded(ends, width), first_tile,
                                   _padded(features, width), _padded(threshold_bins, width),
                                   _padded(default_left, width)]))
        segment_begins, segment_ends, segment_first_tile, split_features, split_bins, \
            split_default_left = table
        n_positions = sample_indices.shape[0]
        saved_rows = xp.empty(n_positions, dtype=SAMPLE_INDEX_DTYPE)
        goes_left = xp.empty(n_positions, dtype=np.uint8)
        tile_left_counts = xp.empty(n_tiles, dtype=np.int32)
        self._launch("partition", "partition_flag_tiles", n_tiles, PARTITION_THREADS_PER_BLOCK, (
            X_binned, np.int32(data.n_features), sample_indices, segment_begins, segment_ends,
            segment_first_tile, split_features, split_bins, split_default_left,
            np.int32(n_segments), np.int32(data.missing_bin), saved_rows, goes_left,
            tile_left_counts))
        tile_left_inclusive = xp.cumsum(tile_left_counts, dtype=np.int64)
        self._launch("partition", "partition_scatter_tiles", n_tiles,
                     PARTITION_THREADS_PER_BLOCK, (
                         saved_rows, goes_left, tile_left_counts, tile_left_inclusive,
                         segment_begins, segment_ends, segment_first_tile, np.int32(n_segments),
                         sample_indices))
        if not return_left_counts:
            return None
        inclusive = xp.concatenate([xp.zeros(1, dtype=np.int64), tile_left_inclusive])
        first = xp.array(first_tile)
        return inclusive[first[1:]] - inclusive[first[:-1]]

    @_device_call("adding leaf values to the margins")
    def add_leaf_values(self, raw, output, sample_indices, begins, ends, values):
        """``raw[sample_indices[begin:end], output] += value`` per leaf (``cuda/leaf.cu``).

        Each row must appear at most once in the segments (true of a row partition).
        """
        xp = self.xp
        self._require(raw, Y_DTYPE, "raw", ndim=2)
        self._require(sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
        begins, ends = self._segments(begins, ends, sample_indices.shape[0])
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if len(values) != len(begins):
            raise ValueError("values needs one entry per segment.")
        n_outputs = raw.shape[1]
        if not 0 <= int(output) < n_outputs:
            raise ValueError(f"output must be in [0, {n_outputs}), got {output!r}.")
        first_tile, n_tiles = _segment_tiles(begins, ends, LEAF_TILE_ROWS)
        if n_tiles == 0:
            return
        width = len(begins) + 1
        table = xp.array(np.stack([_padded(begins, width), _padded(ends, width), first_tile]))
        self._launch("leaf", "add_leaf_values", n_tiles, LEAF_THREADS_PER_BLOCK, (
            sample_indices, table[0], table[1], table[2], np.int32(len(begins)),
            xp.array(values), np.int32(n_outputs), np.int32(output), raw))

    @_device_call("computing leaf quantiles")
    def segment_weighted_quantile(self, values, weights, sample_indices, begins, ends, alpha):
        """Per segment, ``gpuboost.core.quantile.weighted_quantile`` of its rows' values.

        See the module docstring for how the float64 cumulative weights are made to
        round exactly as NumPy's.

        Returns
        -------
        quantiles : ndarray of shape (n_segments,), float64 (host)
        """
        xp = self.xp
        alpha = float(alpha)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"weighted_quantile: alpha must be in [0, 1], got {alpha!r}")
        self._require(sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
        begins, ends = self._segments(begins, ends, sample_indices.shape[0])
        n_segments = len(begins)
        if n_segments == 0:
            return np.zeros(0, dtype=np.float64)
        lengths = ends - begins
        if np.any(lengths == 0):
            raise ValueError("weighted_quantile: values must be a non-empty 1-D array, got "
                             "shape (0,)")
        output_offsets = np.zeros(n_segments + 1, dtype=np.int64)
        np.cumsum(lengths, out=output_offsets[1:])
        n_gathered = int(output_offsets[-1])
        first_tile, n_tiles = _segment_tiles(begins, ends, LEAF_TILE_ROWS)
        width = n_segments + 1
        table = xp.array(np.stack([_padded(begins, width), _padded(ends, width), first_tile,
                                   output_offsets]))
        rows = xp.empty(n_gathered, dtype=SAMPLE_INDEX_DTYPE)
        segment_of = xp.empty(n_gathered, dtype=np.int32)
        self._launch("leaf", "gather_segment_rows", n_tiles, LEAF_THREADS_PER_BLOCK, (
            sample_indices, table[0], table[1], table[2], table[3], np.int32(n_segments), rows,
            segment_of))
        gathered = xp.asarray(values, dtype=Y_DTYPE)[rows]
        if bool(xp.isnan(gathered).any()):
            raise ValueError("weighted_quantile: values contain NaN")
        # Stable sort by value, then stable sort by segment: within each segment the
        # values ascend and ties keep their order, as NumPy's stable argsort. Adding
        # +0.0 turns -0.0 into +0.0 so that a radix sort sees the ties NumPy sees.
        order = xp.argsort(gathered + 0.0, kind="stable")
        order = order[xp.argsort(segment_of[order], kind="stable")]
        sorted_values = xp.ascontiguousarray(gathered[order])
        if weights is None:
            sorted_weights, has_weights = sorted_values, 0  # not read by the kernel
        else:
            sorted_weights = xp.ascontiguousarray(xp.asarray(weights, dtype=Y_DTYPE)[rows][order])
            has_weights = 1
        quantiles = xp.empty(n_segments, dtype=np.float64)
        self._launch("leaf", "select_segment_quantiles",
                     -(-n_segments // QUANTILE_THREADS_PER_BLOCK), QUANTILE_THREADS_PER_BLOCK, (
                         sorted_values, sorted_weights, np.int32(has_weights), table[3],
                         np.int32(n_segments), np.float64(alpha), quantiles))
        return self.to_host(quantiles)

    @_device_call("summing leaf values")
    def segment_sums(self, values, sample_indices, begins, ends):
        """Per segment, the sequential float64 sum of its rows' values
        (``cuda/segment_reduce.cu``; the definition of gpuboost.segment_reduce).

        Returns
        -------
        sums : ndarray of shape (n_segments,), float64 (host)
        """
        xp = self.xp
        self._require(values, Y_DTYPE, "values", ndim=1)
        self._require(sample_indices, SAMPLE_INDEX_DTYPE, "sample_indices", ndim=1)
        begins, ends = self._segments(begins, ends, sample_indices.shape[0])
        n_segments = len(begins)
        if n_segments == 0:
            return np.zeros(0, dtype=np.float64)
        table = xp.array(np.stack([begins, ends]))
        sums = xp.empty(n_segments, dtype=np.float64)
        self._launch("segment_reduce", "segment_sequential_sums",
                     -(-n_segments // SEGMENT_SUM_THREADS_PER_BLOCK),
                     SEGMENT_SUM_THREADS_PER_BLOCK, (
                         values, sample_indices, table[0], table[1], np.int32(n_segments), sums))
        return self.to_host(sums)

    # ---- prediction ---------------------------------------------------------------
    def _pack_trees(self, trees, n_features):
        """Device node tables of ``trees`` (see cuda/predict.cu) and host node offsets."""
        for tree in trees:
            internal = tree.feature >= 0
            if np.any(tree.feature[internal] >= n_features):
                raise ValueError(f"A tree splits on feature {int(tree.feature.max())}, but the "
                                 f"data have {n_features} features.")
        node_offsets = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum([tree.n_nodes for tree in trees], out=node_offsets[1:])
        node_ints = np.stack([np.concatenate([getattr(tree, name) for tree in trees])
                              .astype(np.int32) for name in NODE_INT_ROWS])
        node_floats = np.stack([np.concatenate([getattr(tree, name) for tree in trees])
                                .astype(np.float64) for name in NODE_FLOAT_ROWS])
        return self.xp.array(node_ints), self.xp.array(node_floats), node_offsets

    def _check_features(self, X):
        self._require(X, X_DTYPE, "X (from prepare_features)", ndim=2)
        return X.shape

    @_device_call("predicting")
    def predict_tree_binned(self, data, tree):
        """Leaf value of every training row, traversing on the device's binned features."""
        with nvtx_range("predict_tree_binned"):
            X_binned = data.arrays["X_binned"]
            values = self.xp.empty(data.n_rows, dtype=np.float64)
            if data.n_rows == 0:
                return values
            node_ints, node_floats, _ = self._pack_trees([tree], data.n_features)
            self._launch("predict", "predict_tree_values_binned",
                         _grid_stride_blocks(data.n_rows, PREDICT_THREADS_PER_BLOCK),
                         PREDICT_THREADS_PER_BLOCK, (
                             X_binned, np.int64(data.n_rows), np.int32(data.n_features),
                             np.int32(data.missing_bin), node_ints, node_floats,
                             np.int64(tree.n_nodes), values))
            return values

    @_device_call("predicting")
    def predict_tree_raw(self, X, tree):
        """Leaf value of every row of raw features ``X`` (from :meth:`prepare_features`)."""
        with nvtx_range("predict_tree_raw"):
            n_rows, n_features = self._check_features(X)
            values = self.xp.empty(n_rows, dtype=np.float64)
            if n_rows == 0:
                return values
            node_ints, node_floats, _ = self._pack_trees([tree], n_features)
            self._launch("predict", "predict_tree_values_raw",
                         _grid_stride_blocks(n_rows, PREDICT_THREADS_PER_BLOCK),
                         PREDICT_THREADS_PER_BLOCK, (
                             X, np.int64(n_rows), np.int32(n_features), node_ints, node_floats,
                             np.int64(tree.n_nodes), values))
            return values

    @_device_call("predicting")
    def predict_forest_raw(self, X, trees, tree_outputs, margins):
        """Add every tree's leaf value to ``margins[:, tree_output]`` in tree order (in place)."""
        with nvtx_range("predict_forest"):
            xp = self.xp
            n_rows, n_features = self._check_features(X)
            trees = list(trees)
            tree_outputs = np.asarray(tree_outputs, dtype=np.int64).reshape(-1)
            if len(tree_outputs) != len(trees):
                raise ValueError("tree_outputs needs one entry per tree.")
            if margins.ndim != 2 or margins.shape[0] != n_rows:
                raise ValueError(f"margins must have shape ({n_rows}, n_outputs), got "
                                 f"{margins.shape}.")
            n_outputs = margins.shape[1]
            if np.any(tree_outputs < 0) or np.any(tree_outputs >= n_outputs):
                raise ValueError(f"tree_outputs must be in [0, {n_outputs}).")
            if not trees or n_rows == 0:
                return margins
            contiguous = margins.dtype == np.float64 and margins.flags.c_contiguous
            work = margins if contiguous else xp.ascontiguousarray(margins, dtype=np.float64)
            node_ints, node_floats, node_offsets = self._pack_trees(trees, n_features)
            tree_table = xp.array(np.stack([node_offsets,
                                            _padded(tree_outputs, len(node_offsets))]))
            self._launch("predict", "predict_forest_margins",
                         _grid_stride_blocks(n_rows, PREDICT_THREADS_PER_BLOCK),
                         PREDICT_THREADS_PER_BLOCK, (
                             X, np.int64(n_rows), np.int32(n_features), node_ints, node_floats,
                             np.int64(node_offsets[-1]), tree_table[0], tree_table[1],
                             np.int32(len(trees)), np.int32(n_outputs), work))
            if work is not margins:
                margins[...] = work
            return margins

    @_device_call("predicting leaf indices")
    def predict_forest_leaves(self, X, trees):
        """Leaf index of every row in every tree, shape (n_rows, n_trees) int32."""
        with nvtx_range("predict_forest_leaves"):
            xp = self.xp
            n_rows, n_features = self._check_features(X)
            trees = list(trees)
            leaves = xp.empty((n_rows, len(trees)), dtype=np.int32)
            if not trees or n_rows == 0:
                return leaves
            node_ints, node_floats, node_offsets = self._pack_trees(trees, n_features)
            self._launch("predict", "predict_forest_leaf_indices",
                         _grid_stride_blocks(n_rows, PREDICT_THREADS_PER_BLOCK),
                         PREDICT_THREADS_PER_BLOCK, (
                             X, np.int64(n_rows), np.int32(n_features), node_ints, node_floats,
                             np.int64(node_offsets[-1]), xp.array(node_offsets),
                             np.int32(len(trees)), leaves))
            return leaves
