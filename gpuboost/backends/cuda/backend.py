"""The CUDA backend: CuPy arrays and the raw kernels of ``cuda/*.cu``.

Every per-row array of a training run lives on the GPU; the primitives are raw
CUDA kernels loaded through :mod:`gpuboost.backends.cuda.launch` (compiled with
``--fmad=false``), so results are bit-identical to the NumPy backend
(docs/DESIGN.md). Per round only split records, per-node scalars and the
finished tree cross between host and device.

With ``GPUBOOST_EMULATE_CUDA=1`` the same Python code runs on the emulation's
device arrays and the kernels run in the CPU emulation
(:mod:`gpuboost.backends.emulation`): ``xp`` is
:data:`gpuboost.backends.emulation.device_array.namespace` (NumPy computing under
CuPy's host/device rules); the device context, memory pools and synchronization
are no-ops.

:class:`CudaBackend` only delegates: one module per primitive holds the host code of
its kernels (launch geometry, argument packing, checks), with the same names as the
NumPy backend's modules and the kernel files:

=====================================  ===================================================
``bin_features``, ``rebin``            :mod:`.binning` (``cuda/binning.cu``); the host copy
                                       ``Dataset.X_binned`` is never computed
``gradients``                          :mod:`.gradients` (``cuda/gradients.cu``) for squared
                                       error, logistic and softmax; the base class (the
                                       objective's array code) for the others
``quantize_gradients``                 :mod:`.quantize` (``cuda/quantize.cu``)
``build_histograms``,                  :mod:`.histogram` (``cuda/histogram.cu``)
``build_children_histograms``
``find_best_splits``                   :mod:`.split_scan` (``cuda/split_scan.cu``)
``find_best_splits_of_rows``,          :mod:`.row_scan` (``cuda/row_scan.cu``; small nodes)
``row_scan_max_rows``
``find_best_splits_mixed``             :mod:`.row_scan` and :mod:`.split_scan`, one copy
                                       (the row scan's node table: :mod:`.carried_segments`)
``partition``                          :mod:`.partition` (``cuda/partition.cu``)
``add_leaf_values``,                   :mod:`.leaf` (``cuda/leaf.cu``)
``add_split_leaf_values``,
``add_tree_leaf_values``,
``segment_weighted_quantile``
``segment_sums``                       :mod:`.segment_reduce` (``cuda/segment_reduce.cu``)
``find_best_vector_splits``            :mod:`.vector_split` (``cuda/vector_split.cu``;
                                       vector leaves)
``predict_*``                          :mod:`.predict` (``cuda/predict.cu``)
``predict_contributions``,             :mod:`.shap` (``cuda/shap.cu``)
``predict_interactions``
=====================================  ===================================================

``binned_layout`` (feature bundles, gpuboost.data.bundling): every kernel reads the bins
row-major, ``DeviceData.arrays['X_binned']`` (rows padded to whole sectors where that is
cheap, the layout of :mod:`.binned_rows`), except the partition's (and
``add_split_leaf_values``), which read a column-major copy made at their first call
(:func:`.partition.binned_columns`). ``quantize`` (one column), ``row_sample``,
``subtract_histograms``, ``stack_histograms``: array-module code of the base class.
Device memory per row and out-of-memory errors: :mod:`.memory`.

Checking kernel errors
----------------------
Kernel launches are asynchronous: a fault surfaces at the next synchronizing
call. Set ``GPUBOOST_CUDA_CHECK_LAUNCHES=1`` (or ``backend.check_launches =
True``) to synchronize after every launch and report the failing kernel by
name; tests do this. Under the emulation the launcher raises at the launch.
"""

import contextlib
import threading

import numpy as np

from ...core.array import to_numpy
from ...core.dtypes import X_DTYPE, Y_DTYPE
from ...core.gain import no_split_records
from ...core.profiling import nvtx_range
from ...errors import DeviceUnavailableError, GpuOutOfMemoryError
from ..base import Backend, DeviceData, LazyBinnedArrays
from ..cpu.categorical_scan import find_best_categorical_splits as compiled_categorical_scan
from ..cpu.jit import compiled_kernels_reason
from ..emulation.device_array import EMULATE_DEVICES_ENV_VAR
from ..emulation.device_array import device as emulated_device
from ..emulation.device_array import device_count as emulated_device_count
from .binned_rows import lay_out_binned
from .binning import bin_device_features, bin_features, device_bin_edges
from .carried_segments import CarriedSegments, segment_table
from .gradients import gradients as objective_gradients
from .histogram import (
    SiblingDebts,
    ZeroedBatches,
    build_children_histograms,
    build_histograms,
    children_build_table,
)
from .launch import EMULATED, array_module, default_launcher
from .leaf import (
    add_leaf_values,
    add_split_leaf_values,
    add_tree_leaf_values,
    segment_weighted_quantile,
)
from .memory import device_call, device_memory_info, out_of_memory_error
from .partition import (
    TileStatus,
    binned_columns,
    move_partitioned_rows,
    moving_moves_fewer_bytes,
    partition_rows,
)
from .partition_ahead import PartitionAhead
from .predict import (
    predict_forest_leaves,
    predict_forest_raw,
    predict_tree_binned,
    predict_tree_raw,
)
from .quantize import quantize_columns, quantize_with_scales
from .row_scan import find_best_splits_of_rows, row_scan_max_rows, row_scan_words
from .segment_reduce import segment_sums
from .shap import predict_contributions, predict_interactions
from .split_scan import (
    RECORD_WORDS,
    SplitScanScratch,
    find_best_splits,
    nothing_to_scan,
    records_from_words,
    split_scan_words,
)
from .vector_split import find_best_vector_splits

__all__ = ["CudaBackend"]


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
        ``cupy``, or the emulated device namespace under the emulation.
    emulated : bool
        Whether the kernels run in the CPU emulation (fixed at construction, from
        ``GPUBOOST_EMULATE_CUDA``).
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
        Launches the kernels of this backend's mode.
    check_launches : bool
        Synchronize and check for errors after every kernel launch (default:
        ``GPUBOOST_CUDA_CHECK_LAUNCHES=1``).
    """

    name = "cuda"

    def __init__(self, device_ordinal=0):
        self.device_ordinal = int(device_ordinal)
        self.launcher = default_launcher()
        self.emulated = self.launcher.mode == EMULATED
        self.xp = array_module(self.launcher.mode)
        self._data_shape = None
        self._data_has_weight = False
        #: The partition's look-back status words (gpuboost.backends.cuda.partition).
        self._partition_status = TileStatus()
        #: The split scan's arrival counters and per-feature bests (.split_scan).
        self._split_scratch = SplitScanScratch()
        #: The next depthwise level's children batch, its built half zeroed (.histogram).
        self._zeroed_batches = ZeroedBatches()
        #: A children batch's siblings left to its split scan (.histogram.SiblingDebt).
        self._sibling_debts = SiblingDebts()
        #: The row-scanned segments a level's build sent to the device (.carried_segments).
        self._carried_segments = CarriedSegments()
        #: The rows a row scan partitioned ahead by its records (.partition_ahead).
        self._partition_ahead = PartitionAhead()
        #: Per thread (a backend serves every training on its device, in any thread):
        #: ``maxima``, the block maxima of the thread's last gradients() call's
        #: one-output columns, or None.
        self._round_state = threading.local()
        if self.emulated:
            self._cupy = None
            self._out_of_memory_errors = ()
            n_devices = emulated_device_count()
            if not 0 <= self.device_ordinal < n_devices:
                raise DeviceUnavailableError(
                    f"device='cuda:{self.device_ordinal}' was requested but the emulation has "
                    f"{n_devices} device(s) (ordinals 0..{n_devices - 1}; "
                    f"{EMULATE_DEVICES_ENV_VAR} sets how many)."
                )
            return
        import cupy

        self._cupy = cupy
        self._out_of_memory_errors = (cupy.cuda.memory.OutOfMemoryError,)
        n_devices = cupy.cuda.runtime.getDeviceCount()
        if not 0 <= self.device_ordinal < n_devices:
            raise DeviceUnavailableError(
                f"device='cuda:{self.device_ordinal}' was requested but only {n_devices} CUDA "
                f"device(s) are visible (ordinals 0..{n_devices - 1})."
            )

    def __repr__(self):
        return f"CudaBackend(device_ordinal={self.device_ordinal}, {self.launcher.mode})"

    @property
    def check_launches(self):
        return self.launcher.check_launches

    @check_launches.setter
    def check_launches(self, value):
        self.launcher.check_launches = bool(value)

    # ---- device, errors -----------------------------------------------------------
    def _device_context(self):
        if self.emulated:
            return emulated_device(self.device_ordinal)
        return self._cupy.cuda.Device(self.device_ordinal)

    def _out_of_memory(self, action, error):
        """A :class:`GpuOutOfMemoryError` for a failed allocation while ``action``."""
        return out_of_memory_error(
            action,
            error,
            self.device_ordinal,
            device_memory_info(self._cupy),
            self._data_shape,
            self._data_has_weight,
        )

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

    # ---- memory -----------------------------------------------------------------
    @device_call("copying an array to the device")
    def to_device(self, array):
        """Host NumPy array -> device array (always a copy, also under the emulation)."""
        return self.xp.array(array, copy=True)

    def to_host(self, array):
        """Device array -> host NumPy array (a copy)."""
        if isinstance(array, np.ndarray):
            return np.array(array, copy=True)
        with self._device_context():
            self._settle_siblings()
            return self.xp.asnumpy(array)

    def synchronize(self):
        """Wait for all queued work on the device; raises a pending kernel error."""
        if self.emulated:
            return
        with self._device_context():
            self._cupy.cuda.runtime.deviceSynchronize()

    def release_memory(self):
        """Return the unused blocks of CuPy's device and pinned memory pools, after
        dropping what this thread kept from call to call: the reserved histogram batch,
        the carried segments, the partition ahead, the partition's and the split scan's
        status words and the last gradients' block maxima (the next calls make them
        again), so that after an out-of-memory error no more device memory is in use
        than before the call, also when that call made them."""
        with self._device_context():
            self._settle_siblings()
        self._zeroed_batches.clear()
        self._carried_segments.clear()
        self._partition_ahead.discard()
        self._partition_status.discard()
        self._split_scratch.discard()
        self._round_state.maxima = None
        if self.emulated:
            return
        with self._device_context():
            self._cupy.get_default_memory_pool().free_all_blocks()
            self._cupy.get_default_pinned_memory_pool().free_all_blocks()

    # ---- data -----------------------------------------------------------------
    def _device_data(self, n_rows, n_features, bin_mapper, binned, label, weight):
        """DeviceData of row-major device bins, with a device copy of the value-bin
        counts (split scan), so no call re-sends them."""
        n_value_bins = np.asarray(bin_mapper.n_value_bins_, dtype=np.int32)
        arrays = {"X_binned": binned, "n_value_bins": self.xp.array(n_value_bins)}
        return DeviceData(
            n_rows,
            n_features,
            bin_mapper.n_bins,
            bin_mapper.missing_bin,
            np.asarray(bin_mapper.n_value_bins_),
            label,
            weight,
            arrays,
        )

    @device_call("copying and binning the training data")
    def _prepare(self, dataset):
        with nvtx_range("cuda_prepare"):
            xp = self.xp
            self._data_shape = (dataset.n_rows, dataset.n_features)
            self._data_has_weight = dataset.weight is not None
            label = None if dataset.label is None else xp.array(dataset.label, dtype=Y_DTYPE)
            weight = None if dataset.weight is None else xp.array(dataset.weight, dtype=Y_DTYPE)
            if getattr(dataset, "sparse_columns", None) is not None:
                # Sparse input: binned on the host column by column (never densified),
                # copied to the device only if a primitive reads the per-feature bins
                # (training on feature bundles does not).
                data = self._device_data(
                    dataset.n_rows, dataset.n_features, dataset.bin_mapper, None, label, weight
                )
                data.arrays = LazyBinnedArrays(
                    lambda: self.binned_layout(xp.asarray(dataset.X_binned)),
                    ("X_binned",),
                    n_value_bins=data.arrays["n_value_bins"],
                )
                return data
            device = getattr(dataset, "device_features", None)
            if device is not None:  # binned where it lives: no host copy of X
                binned = bin_device_features(
                    xp, self.launcher, self.prepare_features(device.array), dataset.bin_mapper
                )
            else:
                binned = self.bin_features(dataset.data, dataset.bin_mapper)
            return self._device_data(
                dataset.n_rows, dataset.n_features, dataset.bin_mapper, binned, label, weight
            )

    @device_call("binning features on the device")
    def bin_features(self, data, bin_mapper):
        """Bin host features on the device (:func:`.binning.bin_features`): a device
        array (n_rows, n_features) uint8 equal to ``bin_mapper.transform(data)``."""
        return bin_features(self.xp, self.launcher, data, bin_mapper)

    @device_call("re-binning features on the device")
    def rebin(self, data, raw_features, bin_mapper):
        """``data`` with its features re-binned from the device's raw features
        (:func:`.binning.bin_device_features`, one launch; tree_method='approx')."""
        binned = bin_device_features(self.xp, self.launcher, raw_features, bin_mapper)
        n_rows, n_features = raw_features.shape
        return self._device_data(n_rows, n_features, bin_mapper, binned, data.label, data.weight)

    @device_call("laying out binned features")
    def binned_layout(self, X_binned):
        """Row-major bins with padded rows (:mod:`.binned_rows`), the layout of every
        kernel reading bins."""
        return {"X_binned": lay_out_binned(self.xp, X_binned)}

    @device_call("copying features to the device")
    def prepare_features(self, X):
        """Raw features -> float64 device array (n_rows, n_features), C order: host
        features copied, device features (of this backend's device) converted there."""
        xp = self.xp
        if isinstance(X, xp.ndarray):
            self._check_own_device(X, "the features")
            return xp.ascontiguousarray(X.astype(X_DTYPE, copy=False))
        return xp.array(np.ascontiguousarray(X, dtype=X_DTYPE))

    def _check_own_device(self, array, what):
        """ValueError unless the device array lives on this backend's device."""
        device = int(array.device.id)
        if device != self.device_ordinal:
            raise ValueError(
                f"{what} live on cuda:{device}, but this runs on cuda:{self.device_ordinal}; "
                f"pass device='cuda:{device}' (or 'cuda' for the data's device)."
            )

    @device_call("computing bin edges on the device")
    def bin_edges(self, features, sample_rows, weights, max_bin):
        """The bin edges of device features (:func:`.binning.device_bin_edges`): a list
        of host float64 arrays, ``BinMapper.fit``'s edges of the same values."""
        self._check_own_device(features, "the features")
        return device_bin_edges(self.xp, self.launcher, features, sample_rows, weights, max_bin)

    # ---- one round ------------------------------------------------------------
    @device_call("computing gradients")
    def gradients(self, objective, label, margins, weight, dataset=None):
        """Built-in squared error, logistic and softmax objectives by the kernels of
        :mod:`.gradients` (bit for bit); the others by their array-module code. The
        kernels' block maxima of one-output gradients are kept for
        :meth:`quantize_gradients` of the same columns."""
        state = self._round_state
        state.maxima = None
        computed = objective_gradients(self.xp, self.launcher, objective, label, margins, weight)
        if computed is None:
            return super().gradients(objective, label, margins, weight, dataset)
        grad, hess, state.maxima = computed
        return grad, hess

    @device_call("quantizing gradients")
    def quantize(self, values):
        return super().quantize(values)

    @device_call("quantizing gradients")
    def quantize_gradients(self, gradients, hessians, round_output=None):
        """Both columns in two launches and one synchronization (:mod:`.quantize`); one
        launch when they are the last :meth:`gradients` call's one-output columns
        (``round_output == 0``) in this thread, whose maxima its kernels kept."""
        state = self._round_state
        maxima = getattr(state, "maxima", None) if round_output == 0 else None
        state.maxima = None  # used once: the next columns are another round's
        return quantize_columns(self.xp, self.launcher, gradients, hessians, maxima)

    @device_call("quantizing gradients")
    def quantize_with_scales(self, gradients, hessians, scale_gradients, scale_hessians):
        """Both columns in one launch, laid out as :meth:`quantize_gradients` lays them
        (one pair array, which the histogram and row-scan kernels read without a copy)."""
        return quantize_with_scales(
            self.xp, self.launcher, gradients, hessians, scale_gradients, scale_hessians
        )

    @device_call("sampling rows")
    def row_sample(self, n_rows, seed, stream, fraction):
        return super().row_sample(n_rows, seed, stream, fraction)

    #: The next level's batch is reserved and zeroed ahead (``next_pairs`` of the build
    #: calls; :class:`.histogram.ZeroedBatches`): one zeroing per tree, not per level.
    reserves_histograms = True
    #: ``build_children_histograms`` takes ``row_segments`` (the level's row-scanned
    #: nodes) and sends their node table in its own copy: one copy fewer per level
    #: scanned both ways (:mod:`.carried_segments`).
    carries_row_segments = True
    #: A level scanned both ways copies its records once (:meth:`find_best_splits_mixed`).
    scans_mixed_levels = True
    #: ``partition`` takes ``then_build`` and sends the level's histogram-build node table
    #: in its own copy: one host-to-device copy fewer per level (:mod:`.carried_segments`).
    carries_build_tables = True
    #: Lossguide steps expand ahead (docs/DESIGN.md, "Growth"): a step's launches and its
    #: one sync cost more than the expansions the replay may drop.
    expands_lossguide_ahead = True
    #: ``build_children_histograms`` takes ``siblings_in_scan``: the batch's siblings are
    #: written by its split scan, which reads the parents and the built children once
    #: (.histogram.SiblingDebt); any other reader of histograms through this backend
    #: first has them written by the subtraction launch.
    scans_siblings = True
    #: ``build_histograms`` takes ``rows_in_order`` (a tree's root): the build may read
    #: the partition's column-major bins, coalesced, in feature groups that flush smaller
    #: tables (.histogram.plan_histograms).
    takes_rows_in_order = True
    #: ``partition`` takes ``left_counts`` and returns the partition in a new array, in one
    #: launch that reads each index once (.partition.move_partitioned_rows), where the
    #: split segments hold at least half of the positions.
    moves_partitioned_rows = True
    #: ``find_best_splits`` takes ``categorical_features``: the level's split records and
    #: its categorical histogram slice come back in one copy (one synchronization).
    copies_categorical_with_records = True

    def _settle_siblings(self):
        """Write the siblings a build left to a scan that did not come (one launch)."""
        self._sibling_debts.settle(self.launcher)

    @device_call("building histograms")
    def build_histograms(
        self,
        data,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        begins,
        ends,
        next_pairs=0,
        rows_in_order=False,
    ):
        """As ``Backend.build_histograms``; ``next_pairs`` > 0 reserves the next level's
        batch, its built half zeroed with these histograms (:func:`.histogram.build_histograms`);
        ``rows_in_order`` (:attr:`takes_rows_in_order`): the build may read the bins'
        column-major copy (:func:`.partition.binned_columns`)."""
        self._settle_siblings()
        columns = binned_columns(self.xp, data) if rows_in_order else None
        return build_histograms(
            self.xp,
            self.launcher,
            data.arrays["X_binned"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            next_pairs=next_pairs,
            zeroed_batches=self._zeroed_batches,
            binned_columns=columns,
        )

    @device_call("building histograms")
    def build_children_histograms(
        self,
        data,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        begins,
        ends,
        parents,
        parent_rows,
        next_pairs=0,
        row_segments=None,
        siblings_in_scan=False,
    ):
        """As ``Backend.build_children_histograms``, in one allocation: the built
        children and their siblings (``parents[parent_rows] - built``, read by row) are
        written straight into the batch (:func:`.histogram.build_children_histograms`),
        taken from the reservation of the level before when there is one; ``next_pairs``
        > 0 reserves the next level's, its built half zeroed by this level's
        subtraction. ``row_segments``: ``(begins, ends)`` (host) of the level's
        row-scanned nodes, whose node table travels in the build's copy
        (:mod:`.carried_segments`, taken by :meth:`find_best_splits_mixed`).
        ``siblings_in_scan``: the siblings are left to the batch's split scan
        (:attr:`scans_siblings`); the caller's next reader of the batch must be this
        backend."""
        self._settle_siblings()
        carry = {}
        if row_segments is not None:
            carry = {
                "carry": segment_table(*row_segments),
                "carried_segments": self._carried_segments,
            }
        return build_children_histograms(
            self.xp,
            self.launcher,
            data.arrays["X_binned"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            parents,
            parent_rows,
            next_pairs=next_pairs,
            zeroed_batches=self._zeroed_batches,
            table_ahead=self._carried_segments,
            sibling_debts=self._sibling_debts if siblings_in_scan else None,
            **carry,
        )

    @device_call("subtracting histograms")
    def subtract_histograms(self, parent, child):
        self._settle_siblings()
        return parent - child

    @device_call("stacking histograms")
    def stack_histograms(self, histograms):
        self._settle_siblings()
        return self.xp.concatenate(histograms, axis=0)

    @device_call("finding the best splits")
    def find_best_splits(
        self,
        data,
        histograms,
        scale_gradients,
        scale_hessians,
        split_params,
        feature_mask,
        node_bounds=None,
        categorical_features=None,
    ):
        """As ``Backend.find_best_splits``; when ``histograms`` are rows of a batch whose
        siblings are owed, the scan writes them (:meth:`build_children_histograms`).
        With ``categorical_features`` (:attr:`copies_categorical_with_records`):
        ``(records, host_columns)``, the records' words and those features' histogram
        slice gathered after the scan (siblings written) and copied to the host in one
        transfer."""
        scan = (
            self.xp,
            self.launcher,
            histograms,
            scale_gradients,
            scale_hessians,
            data.arrays["n_value_bins"],
            data.missing_bin,
            split_params,
            feature_mask,
            node_bounds,
        )
        options = {
            "scratch": self._split_scratch,
            "siblings": self._sibling_debts.take(histograms, self.launcher),
        }
        if categorical_features is None:
            return find_best_splits(*scan, **options)
        words = split_scan_words(*scan, **options)
        columns = histograms[:, self.xp.asarray(categorical_features)]
        if words is None:
            return no_split_records(int(histograms.shape[0])), self.to_host(columns)
        both = to_numpy(self.xp.concatenate([words.reshape(-1), columns.reshape(-1)]))
        n_words = int(words.size)
        return (
            records_from_words(both[:n_words].reshape(words.shape)),
            both[n_words:].reshape(columns.shape),
        )

    def row_scan_max_rows(self, data):
        """The parents whose children are scanned from their rows: ``16 * n_bins`` rows
        (:func:`.row_scan.row_scan_max_rows`, which explains the choice); 0 when one
        feature's shared cells do not fit a block."""
        return row_scan_max_rows(self.launcher, int(data.n_features), int(data.n_bins))

    @device_call("finding the best splits")
    def find_best_splits_of_rows(
        self,
        data,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        begins,
        ends,
        scale_gradients,
        scale_hessians,
        split_params,
        feature_mask,
        node_bounds=None,
    ):
        """One block per (node, feature group) builds the node's histogram in shared memory
        and scans it there (:func:`.row_scan.find_best_splits_of_rows`), partitioning the
        nodes it can ahead (:mod:`.partition_ahead`); the definition
        (``Backend.find_best_splits_of_rows``) where that kernel cannot take the batch."""
        ahead = self._ahead_indices(data, sample_indices, begins, ends)
        records = find_best_splits_of_rows(
            self.xp,
            self.launcher,
            data.arrays["X_binned"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            data.n_bins,
            data.arrays["n_value_bins"],
            data.missing_bin,
            scale_gradients,
            scale_hessians,
            split_params,
            feature_mask,
            node_bounds,
            scratch=self._split_scratch,
            ahead_indices=ahead,
        )
        if records is None:
            self._partition_ahead.discard()
            return super().find_best_splits_of_rows(
                data,
                quantized_gradients,
                quantized_hessians,
                sample_indices,
                begins,
                ends,
                scale_gradients,
                scale_hessians,
                split_params,
                feature_mask,
                node_bounds,
            )
        self._keep_ahead(ahead, data, sample_indices, begins, ends, records)
        return records

    def _ahead_indices(self, data, sample_indices, begins, ends):
        """The array a row scan of these segments partitions ahead into, or None
        (:meth:`.partition_ahead.PartitionAhead.indices_for`)."""
        return self._partition_ahead.indices_for(
            self.xp,
            self.launcher,
            int(data.arrays["X_binned"].shape[1]),
            int(data.n_bins),
            sample_indices,
            begins,
            ends,
        )

    def _keep_ahead(self, ahead, data, sample_indices, begins, ends, records):
        """Keep the partition ahead of a row scan into ``ahead`` that gave ``records``."""
        self._partition_ahead.keep(
            ahead, sample_indices, data.arrays["X_binned"], begins, ends, records
        )

    @device_call("finding the best splits")
    def find_best_splits_mixed(
        self,
        data,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        row_begins,
        row_ends,
        histograms,
        scale_gradients,
        scale_hessians,
        split_params,
        row_feature_mask,
        feature_mask,
        row_node_bounds=None,
        node_bounds=None,
    ):
        """The row scan (:func:`.row_scan.row_scan_words`) and the histogram scan
        (:func:`.split_scan.split_scan_words`) write their records into the two halves
        of one device array, copied to the host once: one synchronization for a level
        scanned both ways. The definition (``Backend.find_best_splits_mixed``, two copies)
        where a part has nothing to scan or the row-scan kernel cannot take its batch."""
        arguments = (
            data,
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            row_begins,
            row_ends,
            histograms,
            scale_gradients,
            scale_hessians,
            split_params,
            row_feature_mask,
            feature_mask,
            row_node_bounds,
            node_bounds,
        )
        n_row_nodes, n_nodes = len(row_begins), int(histograms.shape[0])
        if nothing_to_scan(min(n_row_nodes, n_nodes), data.missing_bin):
            self._partition_ahead.discard()
            return super().find_best_splits_mixed(*arguments)
        siblings = self._sibling_debts.take(histograms, self.launcher)
        # Rows [0, n_row_nodes): the row scan's records; the rest: the histogram scan's.
        words = self.xp.empty((n_row_nodes + n_nodes, RECORD_WORDS), dtype=np.int64)
        # The row scan's node table, when the level's build sent it (else copied there).
        node_table = self._carried_segments.take(row_begins, row_ends)
        ahead = self._ahead_indices(data, sample_indices, row_begins, row_ends)
        row_words = row_scan_words(
            self.xp,
            self.launcher,
            data.arrays["X_binned"],
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            row_begins,
            row_ends,
            data.n_bins,
            data.arrays["n_value_bins"],
            data.missing_bin,
            scale_gradients,
            scale_hessians,
            split_params,
            row_feature_mask,
            row_node_bounds,
            scratch=self._split_scratch,
            words=words[:n_row_nodes],
            node_table=node_table,
            ahead_indices=ahead,
        )
        if row_words is None:
            self._partition_ahead.discard()
            if siblings is not None:
                siblings[0].pay(self.launcher)
            return super().find_best_splits_mixed(*arguments)
        split_scan_words(
            self.xp,
            self.launcher,
            histograms,
            scale_gradients,
            scale_hessians,
            data.arrays["n_value_bins"],
            data.missing_bin,
            split_params,
            feature_mask,
            node_bounds,
            scratch=self._split_scratch,
            words=words[n_row_nodes:],
            siblings=siblings,
        )
        records = records_from_words(to_numpy(words))  # the level's one copy
        self._keep_ahead(ahead, data, sample_indices, row_begins, row_ends, records[:n_row_nodes])
        return records[:n_row_nodes], records[n_row_nodes:]

    @device_call("partitioning rows")
    def partition(
        self,
        data,
        sample_indices,
        begins,
        ends,
        features,
        threshold_bins,
        default_left,
        then_build=None,
        left_counts=None,
    ):
        """``then_build``: ``(build data, begins, ends, parent_rows, row_segments)`` of the
        :meth:`build_children_histograms` call that follows (``carries_build_tables``):
        its node table travels in this partition's copy (:mod:`.carried_segments`).
        ``left_counts`` (:attr:`moves_partitioned_rows`): the rows of each segment going
        left; where that moves fewer bytes (the segments hold at least half of the
        positions: :func:`.partition.moving_moves_fewer_bytes`), the split is written into
        a new array, returned, in one launch (:func:`.partition.move_partitioned_rows`),
        into the last row scan's partition ahead where it has some of these splits
        (:mod:`.partition_ahead`: their segments are not written again); else, and
        without them, in place (None)."""
        ahead = self._partition_ahead.take(sample_indices, data.arrays["X_binned"])
        carry = {}
        if then_build is not None:
            build_data, build_begins, build_ends, parent_rows, row_segments = then_build
            table = children_build_table(
                self.launcher,
                build_begins,
                build_ends,
                build_data.arrays["X_binned"].shape[1],
                build_data.n_bins,
                parent_rows,
                None if row_segments is None else segment_table(*row_segments),
            )
            if table is not None:
                carry = {"carry": table, "carried_segments": self._carried_segments}
        splits = (
            *self._partition_inputs(data, sample_indices),
            begins,
            ends,
            features,
            threshold_bins,
            default_left,
        )
        options = {"status": self._partition_status, **carry}
        if left_counts is not None and moving_moves_fewer_bytes(
            begins, ends, sample_indices.shape[0]
        ):
            written = (
                np.zeros(len(begins), dtype=bool)
                if ahead is None
                else ahead.written(
                    begins, ends, features, threshold_bins, default_left, left_counts
                )
            )
            if written.any():
                left = ~written
                splits = (
                    *splits[:4],
                    *(np.asarray(column)[left] for column in splits[4:]),
                )
                options.update(
                    moved=ahead.indices,
                    written=(np.asarray(begins)[written], np.asarray(ends)[written]),
                )
                left_counts = np.asarray(left_counts)[left]
            return move_partitioned_rows(*splits, left_counts, data.missing_bin, **options)
        partition_rows(*splits, data.missing_bin, **options)
        return None

    def find_best_categorical_splits(self, histograms, features, *args, host_histograms=None):
        """``Backend.find_best_categorical_splits``: the categorical slice copied to the
        host (unless ``host_histograms`` is that copy) and scanned there, by the compiled
        CPU scan (:mod:`gpuboost.backends.cpu.categorical_scan`, the definition's records
        bit for bit) where the compiled CPU kernels are in use, else by the definition."""
        if host_histograms is None:
            host_histograms = self.host_columns(histograms, features)
        if compiled_kernels_reason() is not None:
            return super().find_best_categorical_splits(
                histograms, features, *args, host_histograms=host_histograms
            )
        return compiled_categorical_scan(
            host_histograms,
            features,
            *args,
            columns=np.arange(len(features), dtype=np.int64),
        )

    def _partition_inputs(self, data, sample_indices):
        """The first arguments of :func:`.partition.partition_rows` and
        :func:`.partition.move_partitioned_rows` on ``data``'s column-major bins."""
        return self.xp, self.launcher, binned_columns(self.xp, data), sample_indices

    @device_call("partitioning rows by categorical splits")
    def partition_categorical(
        self, data, sample_indices, begins, ends, features, left_sets, default_left
    ):
        """``Backend.partition_categorical`` (in place) by the partition kernels
        (:func:`.partition.partition_rows` with ``left_sets``: each segment's bins going
        left, sent in the segment table's one copy; no device-to-host copy), after
        discarding any partition ahead of ``sample_indices``, whose rows it reorders."""
        self._partition_ahead.discard()
        partition_rows(
            *self._partition_inputs(data, sample_indices),
            begins,
            ends,
            features,
            np.full(len(begins), -1, dtype=np.int64),  # every segment: its left set
            default_left,
            data.missing_bin,
            status=self._partition_status,
            left_sets=left_sets,
        )

    @device_call("adding leaf values to the margins")
    def add_leaf_values(self, raw, output, sample_indices, begins, ends, values):
        add_leaf_values(self.xp, self.launcher, raw, output, sample_indices, begins, ends, values)

    @device_call("adding leaf values to the margins")
    def add_split_leaf_values(
        self,
        data,
        raw,
        output,
        sample_indices,
        begins,
        ends,
        n_left,
        features,
        threshold_bins,
        default_left,
        left_values,
        right_values,
    ):
        """Routed and added in one launch, the rows left where they are (``n_left`` is
        not needed)."""
        add_split_leaf_values(
            self.xp,
            self.launcher,
            raw,
            output,
            binned_columns(self.xp, data),
            data.missing_bin,
            sample_indices,
            begins,
            ends,
            features,
            threshold_bins,
            default_left,
            left_values,
            right_values,
        )

    @device_call("adding leaf values to the margins")
    def add_tree_leaf_values(
        self,
        data,
        raw,
        output,
        sample_indices,
        leaf_begins,
        leaf_ends,
        leaf_values,
        begins,
        ends,
        n_left,
        features,
        threshold_bins,
        default_left,
        left_values,
        right_values,
    ):
        """The leaves and the unpartitioned splits in one launch and one table copy
        (:func:`.leaf.add_tree_leaf_values`); without unpartitioned splits,
        :meth:`add_leaf_values` (no column-major copy of the bins needed). A split the
        last row scan partitioned ahead (:mod:`.partition_ahead`) is added as its two
        leaves' segments of that partition, no bin read."""
        ahead_leaves = None
        if not len(begins):  # no split to route: nothing of a partition ahead to take
            self._partition_ahead.discard()
            ahead = None
        else:
            ahead = self._partition_ahead.take(sample_indices, data.arrays["X_binned"])
        if ahead is not None:
            written = ahead.written(begins, ends, features, threshold_bins, default_left, n_left)
            if written.any():
                split_begins, split_ends = np.asarray(begins)[written], np.asarray(ends)[written]
                middles = split_begins + np.asarray(n_left)[written]
                ahead_leaves = (
                    ahead.indices,
                    np.concatenate([split_begins, middles]),
                    np.concatenate([middles, split_ends]),
                    np.concatenate(
                        [np.asarray(left_values)[written], np.asarray(right_values)[written]]
                    ),
                )
                routed = ~written
                begins, ends, n_left, features, threshold_bins, default_left = (
                    np.asarray(column)[routed]
                    for column in (begins, ends, n_left, features, threshold_bins, default_left)
                )
                left_values = np.asarray(left_values)[routed]
                right_values = np.asarray(right_values)[routed]
        if not len(begins) and ahead_leaves is None:
            self.add_leaf_values(raw, output, sample_indices, leaf_begins, leaf_ends, leaf_values)
            return
        add_tree_leaf_values(
            self.xp,
            self.launcher,
            raw,
            output,
            binned_columns(self.xp, data),
            data.missing_bin,
            sample_indices,
            leaf_begins,
            leaf_ends,
            leaf_values,
            begins,
            ends,
            features,
            threshold_bins,
            default_left,
            left_values,
            right_values,
            ahead_leaves=ahead_leaves,
        )

    @device_call("computing leaf quantiles")
    def segment_weighted_quantile(self, values, weights, sample_indices, begins, ends, alpha):
        return segment_weighted_quantile(
            self.xp, self.launcher, values, weights, sample_indices, begins, ends, alpha
        )

    @device_call("summing leaf values")
    def segment_sums(self, values, sample_indices, begins, ends):
        return segment_sums(self.xp, self.launcher, values, sample_indices, begins, ends)

    def find_best_vector_splits(self, data, histograms, scales, params, feature_mask):
        """The kernels of ``cuda/vector_split.cu`` (:mod:`.vector_split`): the
        definition's table bit for bit."""
        return find_best_vector_splits(
            self.xp,
            self.launcher,
            histograms,
            scales,
            data.n_value_bins,
            data.missing_bin,
            params,
            feature_mask,
        )

    # ---- prediction ---------------------------------------------------------------
    @device_call("predicting")
    def predict_tree_binned(self, data, tree):
        return predict_tree_binned(
            self.xp, self.launcher, data.arrays["X_binned"], data.missing_bin, tree
        )

    @device_call("predicting")
    def predict_tree_raw(self, X, tree):
        return predict_tree_raw(self.xp, self.launcher, X, tree)

    @device_call("predicting")
    def predict_forest_raw(self, X, trees, tree_outputs, margins):
        return predict_forest_raw(self.xp, self.launcher, X, trees, tree_outputs, margins)

    @device_call("predicting leaf indices")
    def predict_forest_leaves(self, X, trees):
        return predict_forest_leaves(self.xp, self.launcher, X, trees)

    @device_call("computing SHAP values")
    def predict_contributions(self, X, trees, tree_outputs, n_outputs):
        return predict_contributions(self.xp, self.launcher, X, trees, tree_outputs, n_outputs)

    @device_call("computing SHAP interaction values")
    def predict_interactions(self, X, trees, tree_outputs, n_outputs):
        return predict_interactions(self.xp, self.launcher, X, trees, tree_outputs, n_outputs)
