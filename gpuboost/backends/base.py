"""The backend interface: the per-backend primitives of one boosting round.

A backend owns where arrays live (``xp`` is ``numpy`` or ``cupy``) and the hot
primitives; everything else (boosting loop, objectives, metrics, Tree, model
format, APIs) is shared code. The NumPy backend is the reference; the CUDA
backend must return bit-identical results (docs/DESIGN.md).

Host/device traffic per round is limited to split records (a few KB), small
per-node scalars and the finished tree; no per-row data crosses.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.array import ArrayLike
from ..core.categorical import find_best_categorical_splits
from ..core.dtypes import GRAD_QUANT_DTYPE, SAMPLE_INDEX_DTYPE
from ..core.quantize import dispersion_sums, quantize, quantize_with_scale
from ..core.random import row_uniforms
from ..core.vector_split import OutputHistograms, find_best_vector_splits
from .categorical import partition_categorical

if TYPE_CHECKING:  # annotations only
    from ..core.gain import SplitParams
    from ..data.binning import BinMapper
    from ..tree.tree import Tree

__all__ = ["Backend", "DeviceData", "LazyBinnedArrays"]

#: A gpuboost.data.Dataset (not imported: the data package imports this module).
DatasetLike = Any


class LazyBinnedArrays(dict):
    """``DeviceData.arrays`` whose binned-matrix entries are made at first use.

    For a Dataset built from a sparse matrix, training on feature bundles reads only the
    bundled matrix (gpuboost.tree.splitters.bundled): the per-feature binned matrix
    (``n_features`` bytes per row, twice on the CPU backends) is then never built.

    Parameters
    ----------
    make_layout : callable () -> dict
        The backend's ``binned_layout`` of the Dataset's bins.
    keys : iterable of str
        The entries ``make_layout`` gives.
    """

    def __init__(self, make_layout, keys, **entries):
        super().__init__(**entries)
        self._make_layout = make_layout
        self._lazy_keys = frozenset(keys)

    def __missing__(self, key):
        if key not in self._lazy_keys:
            raise KeyError(key)
        self.update(self._make_layout())
        return dict.__getitem__(self, key)


class DeviceData:
    """A Dataset's arrays as one backend keeps them.

    Attributes
    ----------
    n_rows, n_features : int
    n_bins : int
        Histogram width (``max_bin + 1``).
    missing_bin : int
    n_value_bins : ndarray of shape (n_features,), int32 (host)
    label, weight : backend arrays of shape (n_rows,), float64 (weight may be None)
    arrays : dict
        Backend-specific layouts of the binned features and anything else cached.
    """

    def __init__(
        self,
        n_rows: int,
        n_features: int,
        n_bins: int,
        missing_bin: int | None,
        n_value_bins: np.ndarray | None,
        label: ArrayLike | None,
        weight: ArrayLike | None,
        arrays: dict[str, ArrayLike],
    ) -> None:
        self.n_rows = n_rows
        self.n_features = n_features
        self.n_bins = n_bins
        self.missing_bin = missing_bin
        self.n_value_bins = n_value_bins
        self.label = label
        self.weight = weight
        self.arrays = arrays


class Backend:
    """Base class; subclasses implement the primitives marked abstract.

    ``begins``, ``ends`` (host int sequences) name segments ``[begin, end)`` of
    ``sample_indices`` (docs/DESIGN.md, "Row partition"); every other array argument
    and result is a backend array (``ArrayLike``) unless documented as host.
    """

    #: 'numpy' or 'cuda'
    name: str | None = None
    #: the array module (numpy or cupy)
    xp: ModuleType = np

    def configure(self, params: dict[str, Any]) -> None:
        """Take run-time settings (e.g. ``nthread``) from validated params."""

    def guard(self, action: str) -> contextlib.AbstractContextManager[None]:
        """Context manager around a whole operation (e.g. training): on a GPU it
        selects the device and turns an out-of-memory error into a clear one."""
        return contextlib.nullcontext()

    # ---- memory -----------------------------------------------------------
    def to_device(self, array: np.ndarray) -> ArrayLike:
        """Host NumPy array -> backend array."""
        return self.xp.asarray(array)

    def to_host(self, array: ArrayLike) -> np.ndarray:
        """Backend array -> host NumPy array."""
        return np.asarray(array)

    def synchronize(self) -> None:
        """Wait for queued device work (for timings)."""

    def release_memory(self) -> None:
        """Free pooled device memory."""

    # ---- data -------------------------------------------------------------
    def prepare(self, dataset: DatasetLike) -> DeviceData:
        """Device copies of a Dataset, cached on it (``dataset._backend_cache``)."""
        cached = dataset._backend_cache.get(self.name)
        if cached is None:
            cached = self._prepare(dataset)
            dataset._backend_cache[self.name] = cached
        return cached

    def _prepare(self, dataset: DatasetLike) -> DeviceData:  # pragma: no cover - abstract
        raise NotImplementedError

    def binned_layout(self, X_binned: ArrayLike) -> dict[str, ArrayLike]:  # pragma: no cover
        """The ``DeviceData.arrays`` entries the histogram, partition and binned
        prediction primitives read, for a row-major uint8 binned matrix already on
        the backend (as ``_prepare`` lays out the Dataset's bins; used for derived
        matrices such as feature bundles, gpuboost.data.bundling)."""
        raise NotImplementedError

    def prepare_features(self, X: np.ndarray) -> ArrayLike:
        """Raw float64 (or float32) features (host, C order) -> the layout ``predict_*_raw``
        takes."""
        return self.to_device(X)

    # ---- one round --------------------------------------------------------
    def gradients(
        self,
        objective: Any,
        label: ArrayLike,
        margins: ArrayLike,
        weight: ArrayLike | None,
        dataset: DatasetLike = None,
    ) -> tuple[ArrayLike, ArrayLike]:
        """``objective.gradients(xp, label, margins, weight, dataset=dataset)``: the
        weighted gradients and hessians of the round (a backend may compute the
        built-in objectives' formulas with its own kernels, bit for bit)."""
        return objective.gradients(self.xp, label, margins, weight, dataset=dataset)

    def quantize(self, values: ArrayLike) -> tuple[ArrayLike, float]:
        """Quantize one column: ``(int32 array, scale)`` (see gpuboost.core.quantize)."""
        return quantize(self.xp, values)

    def quantize_with_scales(
        self,
        gradients: ArrayLike,
        hessians: ArrayLike,
        scale_gradients: float,
        scale_hessians: float,
    ) -> tuple[ArrayLike, ArrayLike]:
        """A tree's gradient and hessian columns quantized with scales chosen elsewhere
        (distributed training: the global ones): ``rint(column * scale)`` as int32 each
        (:func:`gpuboost.core.quantize.quantize_with_scale`). A backend may lay both out
        together (CUDA: as :meth:`quantize_gradients` does), bit for bit."""
        return (
            quantize_with_scale(self.xp, gradients, scale_gradients),
            quantize_with_scale(self.xp, hessians, scale_hessians),
        )

    def dispersion_sums(
        self, quantized_gradients: ArrayLike, quantized_hessians: ArrayLike, rows: ArrayLike
    ) -> tuple[int, int, int, int]:
        """The exact integer parts of a tree's dispersion over ``rows`` (its sampled row
        ids): :func:`gpuboost.core.quantize.dispersion_sums`, the reference; integer sums,
        so a backend may add them in any order (the CPU backend: one compiled pass)."""
        return dispersion_sums(self.xp, quantized_gradients, quantized_hessians, rows)

    def quantize_gradients(
        self, gradients: ArrayLike, hessians: ArrayLike, round_output: int | None = None
    ) -> tuple[tuple[ArrayLike, float], tuple[ArrayLike, float]]:
        """Quantize a tree's gradient and hessian columns (each of shape (n_rows,),
        float64): ``(self.quantize(gradients), self.quantize(hessians))``, each an
        ``(int32 array, scale)`` pair.

        ``round_output``: the columns are output ``round_output`` of what the last
        :meth:`gradients` call returned, unchanged (None: other values, e.g. scaled by
        sampling multipliers). A backend may then reuse what it computed with them (the
        CUDA backend: the columns' maxima) and may quantize both columns together, bit
        for bit."""
        return self.quantize(gradients), self.quantize(hessians)

    def row_sample(self, n_rows: int, seed: int, stream: int, fraction: float) -> ArrayLike:
        """Sample indices (int32) of the rows kept for one tree (all rows when
        fraction == 1).

        Row ``i`` is kept when ``row_uniforms(xp, seed, stream, n_rows)[i] < fraction``.
        """
        xp = self.xp
        if fraction >= 1.0:
            return xp.arange(n_rows, dtype=SAMPLE_INDEX_DTYPE)
        uniforms = row_uniforms(xp, seed, stream, n_rows)
        return xp.flatnonzero(uniforms < fraction).astype(SAMPLE_INDEX_DTYPE)

    def build_histograms(
        self,
        data: DeviceData,
        quantized_gradients: ArrayLike,
        quantized_hessians: ArrayLike,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
    ) -> ArrayLike:  # pragma: no cover - abstract
        """Histograms (n_nodes, n_features, n_bins, 3) int64 of the nodes' segments."""
        raise NotImplementedError

    def build_children_histograms(
        self,
        data: DeviceData,
        quantized_gradients: ArrayLike,
        quantized_hessians: ArrayLike,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        parents: ArrayLike,
        parent_rows: Sequence[int],
    ) -> ArrayLike:
        """Histograms of sibling pairs as one batch (2 * n_pairs, n_features, n_bins, 3):
        rows ``0 .. n_pairs - 1`` built from the segments ``begins``/``ends`` (the
        smaller children), row ``n_pairs + i`` their siblings
        ``parents[parent_rows[i]] - built[i]`` (exact)."""
        built = self.build_histograms(
            data, quantized_gradients, quantized_hessians, sample_indices, begins, ends
        )
        rows = np.asarray(parent_rows, dtype=np.int64)
        if len(rows) == int(parents.shape[0]) and np.array_equal(rows, np.arange(len(rows))):
            parent_histograms = parents
        else:
            parent_histograms = parents[self.xp.asarray(rows)]
        return self.stack_histograms([built, self.subtract_histograms(parent_histograms, built)])

    #: Whether :meth:`build_histograms` and :meth:`build_children_histograms` take the
    #: sparse layout of a DeviceData whose arrays hold ``sparse_indptr``, ``sparse_cells``
    #: and ``sparse_default_bins`` (every row's non-default histogram cells, CSR, and each
    #: feature's default bin: gpuboost.data.bundling.BundleMap.non_default_cells).
    builds_sparse_histograms = False

    def subtract_histograms(self, parent: ArrayLike, child: ArrayLike) -> ArrayLike:
        """Sibling histogram ``parent - child`` (exact)."""
        return parent - child

    def stack_histograms(self, histograms: Sequence[ArrayLike]) -> ArrayLike:
        """Concatenate node histograms along the node axis."""
        return self.xp.concatenate(histograms, axis=0)

    def quantize_output_pairs(
        self, gradients: ArrayLike, hessians: ArrayLike
    ) -> tuple[ArrayLike, list[tuple[float, float]]]:
        """Quantize every output's gradient and hessian column of a vector-leaf tree
        (``gradients``, ``hessians`` of shape (n_rows, k), float64), each column as
        :meth:`quantize` does: ``(pairs, scales)``, ``pairs`` of shape (n_rows, 2k) int32
        holding row ``r``'s ``(g_0, h_0, g_1, h_1, ...)`` (what
        :meth:`build_output_histograms` reads), ``scales`` the k ``(scale_gradients,
        scale_hessians)``. A backend may quantize all columns in one pass, bit for bit."""
        n_rows, n_outputs = gradients.shape
        pairs = self.xp.empty((n_rows, 2 * n_outputs), dtype=GRAD_QUANT_DTYPE)
        scales = []
        for output in range(n_outputs):
            (pairs[:, 2 * output], scale_g), (pairs[:, 2 * output + 1], scale_h) = (
                self.quantize_gradients(
                    self.xp.ascontiguousarray(gradients[:, output]),
                    self.xp.ascontiguousarray(hessians[:, output]),
                )
            )
            scales.append((scale_g, scale_h))
        return pairs, scales

    def build_output_histograms(
        self,
        data: DeviceData,
        output_pairs: ArrayLike,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
    ) -> OutputHistograms:
        """Histograms of several outputs (vector-leaf trees) of their quantized
        ``output_pairs`` (n_rows, 2k) (:meth:`quantize_output_pairs`): output ``t``'s
        :meth:`build_histograms` of columns ``2t``, ``2t + 1``, in one batch
        (gpuboost.core.vector_split.OutputHistograms). A backend may build every output
        in one pass (the same integers)."""
        xp = self.xp
        return OutputHistograms.from_per_output(
            xp,
            xp.stack(
                [
                    self.build_histograms(
                        data,
                        xp.ascontiguousarray(output_pairs[:, 2 * output]),
                        xp.ascontiguousarray(output_pairs[:, 2 * output + 1]),
                        sample_indices,
                        begins,
                        ends,
                    )
                    for output in range(output_pairs.shape[1] // 2)
                ]
            ),
        )

    def build_output_children_histograms(
        self,
        data: DeviceData,
        output_pairs: ArrayLike,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        parents: OutputHistograms,
        parent_rows: Sequence[int],
    ) -> OutputHistograms:
        """:meth:`build_children_histograms` of several outputs: [the built nodes..., their
        siblings...], sibling ``i`` as ``parents[parent_rows[i]]`` minus node ``i``."""
        built = self.build_output_histograms(data, output_pairs, sample_indices, begins, ends)
        rows = self.xp.asarray(np.asarray(parent_rows, dtype=np.int64))
        return OutputHistograms.stack(self.xp, [built, parents[rows] - built])

    def find_best_vector_splits(
        self,
        data: DeviceData,
        histograms: OutputHistograms,
        scales: Sequence[tuple[float, float]],
        params: SplitParams,
        feature_mask: np.ndarray | None,
    ) -> dict[str, np.ndarray]:
        """The best split of every node of vector-leaf histograms by the gain summed
        over the outputs: :func:`gpuboost.core.vector_split.find_best_vector_splits`
        (its definition, in this backend's array module; a backend may run a compiled
        kernel, bit for bit). ``scales``: per output ``(scale_gradients,
        scale_hessians)``; returns host arrays."""
        return find_best_vector_splits(
            self.xp,
            histograms,
            scales,
            np.asarray(data.n_value_bins),
            data.missing_bin,
            params,
            feature_mask,
        )

    def host_columns(self, histograms: ArrayLike, features: np.ndarray) -> np.ndarray:
        """The histograms of ``features`` only, ``(n_nodes, len(features), n_bins, 3)``,
        as a host ndarray (a copy)."""
        return self.to_host(histograms[:, self.xp.asarray(features)])

    def find_best_categorical_splits(
        self,
        histograms: ArrayLike,
        features: np.ndarray,
        n_value_bins: np.ndarray,
        missing_bin: int,
        scale_gradients: float,
        scale_hessians: float,
        split_params: SplitParams,
        cat_params: Any,
        feature_mask: np.ndarray | None,
        smoothing: np.ndarray | None,
        host_histograms: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The best categorical split of every node, ``(records, left_sets)`` (host
        arrays), from the nodes' histograms (this backend's array of shape ``(n_nodes,
        n_features, n_bins, 3)``) and the categorical ``features``: the host scan
        :func:`gpuboost.core.categorical.find_best_categorical_splits` of their slice
        (its definition, with its other arguments; the slice is copied to the host for
        it, unless ``host_histograms`` is that copy already (see
        :attr:`copies_categorical_with_records`), and a backend may run a compiled
        version, bit for bit)."""
        return find_best_categorical_splits(
            self.host_columns(histograms, features) if host_histograms is None else host_histograms,
            features,
            n_value_bins,
            missing_bin,
            scale_gradients,
            scale_hessians,
            split_params,
            cat_params,
            feature_mask,
            smoothing,
        )

    def find_best_splits(
        self,
        data: DeviceData,
        histograms: ArrayLike,
        scale_gradients: float,
        scale_hessians: float,
        split_params: SplitParams,
        feature_mask: np.ndarray | None,
        node_bounds: np.ndarray | None = None,
    ) -> np.ndarray:  # pragma: no cover - abstract
        """Host ``SPLIT_RECORD_DTYPE`` records, one per node (see gpuboost.core.gain);
        ``node_bounds`` (n_nodes, 2) float64: the nodes' weight bounds under monotone
        constraints (``split_params.monotone``), unbounded when None."""
        raise NotImplementedError

    #: Whether ``build_histograms`` and ``build_children_histograms`` take
    #: ``next_pairs``, the most pairs the next depthwise level may build (an upper
    #: bound the grower passes), to prepare that level's batch ahead (CUDA: its built
    #: half zeroed by this level's launches, not by an operation of its own).
    reserves_histograms = False
    #: Whether ``build_children_histograms`` takes ``row_segments``, ``(begins, ends)``
    #: of the level's nodes scanned from their rows (a depthwise level scanned both
    #: ways: :meth:`find_best_splits_mixed` follows with those segments), to send them
    #: to the device with the build's own data (CUDA: one host-to-device copy fewer).
    #: The results do not depend on it.
    carries_row_segments = False
    #: Whether :meth:`find_best_splits_mixed` costs less than its two calls (CUDA: one
    #: records copy a level); where not, the grower makes the two calls, each timed in
    #: its own phase (``row_scan``, ``split``).
    scans_mixed_levels = False
    #: Whether a lossguide tree grows in steps of every leaf its one-leaf order may still
    #: expand, the order replayed from the gains (gpuboost.tree.grower.
    #: LookaheadLossguideDriver): fewer, larger steps for expansions that may be dropped.
    #: Where a step costs launches and a synchronisation whatever its size (CUDA); the
    #: tree is the same.
    expands_lossguide_ahead = False
    #: Whether ``partition`` takes ``then_build`` (the histogram build that follows it in
    #: the grower's step) to send that build's data with its own (CUDA: one host-to-device
    #: copy fewer per level). The results do not depend on it.
    carries_build_tables = False
    #: Whether ``build_children_histograms`` takes ``siblings_in_scan``: the batch's
    #: sibling half is then written by the batch's split scan (CUDA: the parent and the
    #: built child read once), or before any other backend call reads histograms; the
    #: caller reads the batch only through the backend. The results do not depend on it.
    scans_siblings = False
    #: Whether ``build_histograms`` takes ``rows_in_order``: true when every segment's
    #: positions hold rows in increasing order (a tree's ``sample_indices`` as row
    #: sampling makes them, before the first partition: its root), which lets the backend
    #: read the bins column by column (CUDA: coalesced, in feature groups that flush
    #: smaller tables). The results do not depend on it.
    takes_rows_in_order = False
    #: Whether ``partition`` takes ``left_counts`` (the rows of each segment that go left,
    #: from the split records), with which it may return the partition as a new array:
    #: every position of ``sample_indices``, the listed segments split, the others
    #: copied, and ``sample_indices`` itself left as it was (CUDA: one pass over the
    #: indices, no scratch copy, where the split segments hold at least half of the
    #: positions, as every other position is copied); it returns None where it split in
    #: place. The results do not depend on it.
    moves_partitioned_rows = False
    #: Whether ``find_best_splits`` takes ``categorical_features`` and then returns
    #: ``(records, host_columns)``: the records and the slice of those features'
    #: histograms (``host_columns``) copied to the host together, for
    #: ``find_best_categorical_splits(..., host_histograms=)`` (CUDA: one device-to-host
    #: copy per level instead of two). The results do not depend on it.
    copies_categorical_with_records = False
    #: Whether the backend offers ``grow_levels_from_rows(data, quantized_gradients,
    #: quantized_hessians, sample_indices, scale_gradients, scale_hessians, split_params,
    #: feature_mask, max_depth, defer_final, columns, size, parents, scanned, unsplit,
    #: scan_parents=False)`` -> ``(size, frontier, n_unsplit, overflowed)``: the
    #: depthwise subtrees of nodes of at most ``levels_from_rows_max_rows(data,
    #: n_samples)`` rows (with ``scan_parents``, their own splits first), grown in one
    #: call on the grower's node table (the compiled CPU backend,
    #: gpuboost.backends.cpu.row_levels). Its definition is the grower's level loop
    #: (gpuboost.tree.grower.TreeGrower), which every other backend runs.
    grows_levels_from_rows = False

    def grows_vector_levels(self, data: DeviceData) -> bool:
        """Whether the backend offers ``grow_vector_levels(data, output_pairs,
        sample_indices, scales, split_params, feature_mask, max_depth, columns, size,
        parents, scan_parents=False)`` -> ``(size, frontier, overflowed)`` on ``data``:
        the depthwise levels of a vector-leaf tree grown in one call on the grower's node
        table (the compiled CPU backend, gpuboost.backends.cpu.vector_levels). Its
        definition is the grower's level loop (gpuboost.tree.grower.TreeGrower), which
        every other backend runs."""
        return False

    def row_scan_max_rows(self, data: DeviceData) -> int:
        """The most rows of a parent whose children's splits this backend finds faster
        with :meth:`find_best_splits_of_rows` than from stored histograms (0: never;
        the default, where the method is only its definition)."""
        return 0

    def find_best_splits_of_rows(
        self,
        data: DeviceData,
        quantized_gradients: ArrayLike,
        quantized_hessians: ArrayLike,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        scale_gradients: float,
        scale_hessians: float,
        split_params: SplitParams,
        feature_mask: np.ndarray | None,
        node_bounds: np.ndarray | None = None,
    ) -> np.ndarray:
        """The split records of the nodes' segments without keeping their histograms.

        This definition, for every backend: :meth:`build_histograms` of the segments,
        then :meth:`find_best_splits` (arguments as theirs). A backend may build and scan
        one node at a time in cache-sized scratch (the compiled CPU backend: small
        nodes, :meth:`row_scan_max_rows`); the records are the same bit for bit.
        """
        histograms = self.build_histograms(
            data, quantized_gradients, quantized_hessians, sample_indices, begins, ends
        )
        extra = () if node_bounds is None else (node_bounds,)
        return self.find_best_splits(
            data, histograms, scale_gradients, scale_hessians, split_params, feature_mask, *extra
        )

    def find_best_splits_mixed(
        self,
        data: DeviceData,
        quantized_gradients: ArrayLike,
        quantized_hessians: ArrayLike,
        sample_indices: ArrayLike,
        row_begins: Sequence[int],
        row_ends: Sequence[int],
        histograms: ArrayLike,
        scale_gradients: float,
        scale_hessians: float,
        split_params: SplitParams,
        row_feature_mask: np.ndarray | None,
        feature_mask: np.ndarray | None,
        row_node_bounds: np.ndarray | None = None,
        node_bounds: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The split records of a level scanned both ways: ``(row_records, records)``.

        ``row_records``: those of :meth:`find_best_splits_of_rows` of the segments
        ``[row_begins[i], row_ends[i])`` (``row_feature_mask``, ``row_node_bounds``: its
        ``feature_mask`` and ``node_bounds``); ``records``: those of
        :meth:`find_best_splits` of ``histograms`` (``feature_mask``, ``node_bounds``).
        This definition, for every backend: the two calls. A backend may launch both
        scans and copy their records to the host at once (CUDA: one synchronization a
        level instead of two); the records are the same bit for bit.
        """
        row_extra = () if row_node_bounds is None else (row_node_bounds,)
        row_records = self.find_best_splits_of_rows(
            data,
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            row_begins,
            row_ends,
            scale_gradients,
            scale_hessians,
            split_params,
            row_feature_mask,
            *row_extra,
        )
        extra = () if node_bounds is None else (node_bounds,)
        records = self.find_best_splits(
            data, histograms, scale_gradients, scale_hessians, split_params, feature_mask, *extra
        )
        return row_records, records

    def partition(
        self,
        data: DeviceData,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        features: Sequence[int],
        threshold_bins: Sequence[int],
        default_left: Sequence[bool],
    ) -> ArrayLike | None:  # pragma: no cover - abstract
        """Stable in-place split of the listed segments of ``sample_indices`` (None); with
        ``left_counts=`` where :attr:`moves_partitioned_rows`, the split as a new array."""
        raise NotImplementedError

    def partition_categorical(
        self,
        data: DeviceData,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        features: Sequence[int],
        left_sets: np.ndarray,
        default_left: Sequence[bool],
    ) -> None:
        """Stable in-place split of the listed segments by categorical splits: rows whose
        bin is in ``left_sets[i]`` (uint32 bitset words) go left, the missing bin follows
        ``default_left`` (the array-module definition, gpuboost.backends.categorical;
        the compiled CPU and the CUDA backends override it with their partition
        kernels)."""
        partition_categorical(
            self.xp,
            self.to_device,
            data.arrays["X_binned"],
            sample_indices,
            begins,
            ends,
            features,
            left_sets,
            default_left,
            data.missing_bin,
        )

    def add_leaf_values(
        self,
        raw: ArrayLike,
        output: int,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        values: Sequence[float],
    ) -> None:
        """``raw[sample_indices[begin:end], output] += value`` for every leaf segment (in place)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def add_leaf_vectors(
        self,
        raw: ArrayLike,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        values: np.ndarray,
    ) -> None:
        """``raw[sample_indices[begin:end], t] += values[leaf, t]`` for every leaf segment
        and output ``t`` (vector leaves; ``values`` (n_segments, k) host): every output's
        :meth:`add_leaf_values` (a backend may add a row's k values at once)."""
        for output in range(values.shape[1]):
            self.add_leaf_values(raw, output, sample_indices, begins, ends, values[:, output])

    def add_split_leaf_values(
        self,
        data: DeviceData,
        raw: ArrayLike,
        output: int,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        n_left: Sequence[int],
        features: Sequence[int],
        threshold_bins: Sequence[int],
        default_left: Sequence[bool],
        left_values: Sequence[float],
        right_values: Sequence[float],
    ) -> None:
        """The margin update of splits whose rows were not partitioned (their children
        are leaves; ``gpuboost.tree.grower.GrownTree.unsplit_parents``): every row of
        segment ``i`` gets ``left_values[i]`` if it goes left at split ``i`` (as
        :meth:`partition` decides), else ``right_values[i]``, in ``raw[row, output]``.

        This definition, for every backend: :meth:`partition` the segments (left rows
        first, ``n_left[i]`` of them), then :meth:`add_leaf_values` over the children's
        segments. A backend may route and add in one pass without moving the rows (the
        same margins: one addition per row either way).
        """
        self.partition(data, sample_indices, begins, ends, features, threshold_bins, default_left)
        begins = np.asarray(begins, dtype=np.int64)
        middles = begins + np.asarray(n_left, dtype=np.int64)
        self.add_leaf_values(
            raw,
            output,
            sample_indices,
            np.concatenate([begins, middles]),
            np.concatenate([middles, np.asarray(ends, dtype=np.int64)]),
            np.concatenate([np.asarray(left_values), np.asarray(right_values)]),
        )

    def add_tree_leaf_values(
        self,
        data: DeviceData | None,
        raw: ArrayLike,
        output: int,
        sample_indices: ArrayLike,
        leaf_begins: Sequence[int],
        leaf_ends: Sequence[int],
        leaf_values: Sequence[float],
        begins: Sequence[int],
        ends: Sequence[int],
        n_left: Sequence[int],
        features: Sequence[int],
        threshold_bins: Sequence[int],
        default_left: Sequence[bool],
        left_values: Sequence[float],
        right_values: Sequence[float],
    ) -> None:
        """The margin update of a grown tree: :meth:`add_leaf_values` over the leaves'
        segments, then :meth:`add_split_leaf_values` over the unpartitioned splits
        (``begins`` ... ``right_values``; none: empty, and ``data`` may be None).

        This definition makes the two calls; a backend may do both in one pass (the
        same margins: the segments are disjoint, one addition per row either way).
        """
        self.add_leaf_values(raw, output, sample_indices, leaf_begins, leaf_ends, leaf_values)
        if len(begins):
            self.add_split_leaf_values(
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
            )

    def segment_weighted_quantile(
        self,
        values: ArrayLike,
        weights: ArrayLike | None,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
        alpha: float,
    ) -> np.ndarray:  # pragma: no cover - abstract
        """Per segment, the lower weighted ``alpha``-quantile of ``values`` (host float64)."""
        raise NotImplementedError

    def segment_sums(
        self,
        values: ArrayLike,
        sample_indices: ArrayLike,
        begins: Sequence[int],
        ends: Sequence[int],
    ) -> np.ndarray:  # pragma: no cover - abstract
        """Per segment, the sequential float64 sum of ``values[sample_indices[p]]`` in
        position order from +0.0 (host float64; see gpuboost.backends.numpy.segment_reduce)."""
        raise NotImplementedError

    def rebin(
        self, data: DeviceData, raw_features: ArrayLike, bin_mapper: BinMapper
    ) -> DeviceData:  # pragma: no cover - abstract
        """A new DeviceData: ``data`` (labels, weights kept) with its features re-binned
        from ``raw_features`` (from prepare_features) by the fitted ``bin_mapper``
        (the same ``max_bin``), as ``bin_mapper.transform`` would (tree_method='approx')."""
        raise NotImplementedError

    def predict_tree_binned(
        self, data: DeviceData, tree: Tree
    ) -> ArrayLike:  # pragma: no cover - abstract
        """Leaf value (float64) of every training row, traversing on binned features."""
        raise NotImplementedError

    def predict_tree_raw(self, X: ArrayLike, tree: Tree) -> ArrayLike:  # pragma: no cover
        """Leaf value (float64) of every row of raw features ``X`` (from prepare_features)."""
        raise NotImplementedError

    def predict_forest_raw(
        self, X: ArrayLike, trees: Sequence[Tree], tree_outputs: Sequence[int], margins: ArrayLike
    ) -> ArrayLike:  # pragma: no cover - abstract
        """Add every tree's leaf value to ``margins[:, tree_output]`` (in place), tree by
        tree in order, so the float sums equal the training-time updates; returns margins.

        ``margins``: backend array (n_rows, n_outputs) float64, starting at the base margin.
        """
        raise NotImplementedError

    #: Whether :meth:`predict_forest_sparse` traverses sparse rows itself (else the
    #: caller predicts dense blocks of them with :meth:`predict_forest_raw`).
    predicts_sparse_rows = False

    def predict_forest_sparse(
        self,
        rows: Any,
        absent: float,
        trees: Sequence[Tree],
        tree_outputs: Sequence[int],
        margins: ArrayLike,
    ) -> ArrayLike:  # pragma: no cover - abstract
        """:meth:`predict_forest_raw` of a canonical scipy.sparse CSR matrix ``rows``
        (host), an entry it does not store reading as ``absent`` (0.0, or NaN: missing),
        never densified; trees without categorical splits. Only where
        :attr:`predicts_sparse_rows`."""
        raise NotImplementedError

    def predict_forest_leaves(
        self, X: ArrayLike, trees: Sequence[Tree]
    ) -> ArrayLike:  # pragma: no cover - abstract
        """Leaf index of every row in every tree, shape (n_rows, n_trees) int32."""
        raise NotImplementedError

    def predict_contributions(
        self, X: ArrayLike, trees: Sequence[Tree], tree_outputs: Sequence[int], n_outputs: int
    ) -> ArrayLike:  # pragma: no cover - abstract
        """SHAP values (TreeSHAP, docs/DESIGN.md "SHAP") of every row of raw features
        ``X`` (from prepare_features), shape (n_rows, n_outputs, n_features + 1) float64:
        per output, one column per feature and last the sum of the trees' expected
        values (the base margin is not added)."""
        raise NotImplementedError

    def predict_interactions(
        self, X: ArrayLike, trees: Sequence[Tree], tree_outputs: Sequence[int], n_outputs: int
    ) -> ArrayLike:  # pragma: no cover - abstract
        """SHAP interaction values, shape (n_rows, n_outputs, n_features + 1,
        n_features + 1) float64; each row sums over the last axis to
        :meth:`predict_contributions` (the base margin is not added)."""
        raise NotImplementedError
