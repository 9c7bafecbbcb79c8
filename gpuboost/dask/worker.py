"""The worker side of distributed training: the state a Dask worker keeps between calls.

Every Dask worker that holds partitions of the training data keeps one
:class:`WorkerState` per training run, a ``distributed`` actor created on it by the
client (:class:`gpuboost.dask.comm.Exchange`). It holds the worker's partitions
concatenated in global row order (a :class:`gpuboost.data.dataset.Dataset` of those
rows, binned with the client's :class:`~gpuboost.data.binning.BinMapper`), their
global row ids, the running margins, the round's gradients and, for the tree being
grown, the quantized gradients, the sampled rows and the row partition keyed by the
nodes' *global* segments
``(begin, end)`` (the client's grower only knows global counts).

The client (:mod:`gpuboost.dask.train`) calls its methods; they return only
small values (maxima, counts, int64 histograms, metrics' inputs). No per-row array
leaves the worker except the evaluation sets' predictions (see DESIGN "Distributed
training").
"""

import numpy as np

from ..backends.categorical import bins_going_left
from ..backends.numpy.partition import goes_left
from ..boosting.gbtree import training_objective
from ..boosting.train import training_backend
from ..core.array import get_array_module, to_numpy
from ..core.dtypes import SAMPLE_INDEX_DTYPE
from ..core.random import row_uniforms_at
from ..data.binning import BinMapper
from ..data.dataset import Dataset, label_arguments
from ..model.booster import Booster
from ..objectives.classification import row_class_weights
from ..objectives.ranking import fixed_point_scale
from ..tree.sampling import goss_keep

__all__ = ["WorkerState", "host_array", "take_rows", "RADIX_BITS", "RADIX_SIZE"]

#: Bits of a key examined per pass of the distributed radix select (GOSS).
RADIX_BITS = 8
#: Distinct digits of one pass.
RADIX_SIZE = 1 << RADIX_BITS


def _values(part):
    """A partition's array: pandas / cuDF frames and series by their ``values`` (a
    cuDF partition's are a CuPy array)."""
    return getattr(part, "values", part)


def host_array(part):
    """One partition as a host NumPy array (a device partition -- a dask-cuda worker's
    CuPy array -- copied to the host: labels, weights, margins)."""
    return to_numpy(_values(part))


def _concat(parts):
    """Partitions -> one host array, in order."""
    return np.concatenate([host_array(part) for part in parts], axis=0)


def _concat_features(parts):
    """Feature partitions -> one matrix, in order: on the device when the partitions
    are device arrays (a dask-cuda worker's), so the worker's Dataset keeps them there
    (gpuboost.data.device), else on the host."""
    values = [_values(part) for part in parts]
    xp = get_array_module(*values)
    if xp is np:
        return _concat(parts)
    return xp.concatenate([xp.asarray(value) for value in values], axis=0)


def _int64(*sequences):
    """Host int64 arrays of the sequences (arguments of the backend's partition)."""
    return [np.asarray(values, dtype=np.int64) for values in sequences]


def take_rows(part, rows):
    """Rows ``rows`` (local indices) of one partition, host array (of a device partition,
    only those rows are copied)."""
    rows = np.asarray(rows, dtype=np.int64)
    values = _values(part)
    xp = get_array_module(values)
    if xp is not np:
        return to_numpy(values[xp.asarray(rows)])
    return host_array(part)[rows]


class WorkerState:
    """One worker's share of a training run (see the module docstring).

    Parameters
    ----------
    setup : dict
        ``params`` (validated; ``device`` picks the backend), ``bin_mapper`` (its
        ``to_dict``), ``row_offsets`` (global id of each partition's first row),
        ``base_margins`` (host float64 (n_outputs,)), ``init_model`` (JSON text or None),
        ``n_outputs``, ``class_multipliers`` (``scale_pos_weight`` / ``is_unbalance``:
        the (negative, positive) row multipliers, or None), ``custom_objective`` (the
        user's callable, or None); ranking: ``group`` (this worker's query sizes),
        ``chunk_plan`` and ``chunk_ids`` (its queries of each chunk of the whole data, and
        those chunks' ids).
    features, labels, weights, margins : lists of partitions (weights, margins: or None)
    eval_sets : list of (features partitions, labels, weights)
        This worker's partitions of each evaluation set, with their global offsets.
    """

    def __init__(self, setup, features, labels, weights, margins, eval_sets):
        params = setup["params"]
        self.params = params
        self.n_outputs = setup["n_outputs"]
        bin_mapper = BinMapper.from_dict(setup["bin_mapper"])
        row_ids = [
            np.arange(offset, offset + len(part), dtype=np.int64)
            for offset, part in zip(setup["row_offsets"], features)
        ]
        self.row_ids = np.concatenate(row_ids) if row_ids else np.zeros(0, dtype=np.int64)
        label = _concat(labels)
        weight = None if weights is None else _concat(weights)
        class_weights = row_class_weights(label, setup.get("class_multipliers"))
        if class_weights is not None:  # scale_pos_weight / is_unbalance, as one machine
            weight = class_weights if weight is None else weight * class_weights
        self.dataset = Dataset(
            _concat_features(features),
            **label_arguments(label),
            weight=weight,
            base_margin=None if margins is None else _concat(margins),
            group=None if setup.get("group") is None else setup["group"],
        )
        self.dataset._bin_mapper = bin_mapper  # the client's edges, never refitted here
        # As one machine picks it: device='auto' -> the worker's GPU if usable (device
        # partitions: their device); a CUDA backend checks itself against the CPU at its
        # first training in the process.
        self.backend = backend = training_backend(params, self.dataset.device_features)
        self.data = backend.prepare(self.dataset)
        self.device_row_ids = backend.to_device(self.row_ids)
        custom = setup.get("custom_objective")
        self.objective = training_objective(
            params if custom is None else dict(params, objective=custom)
        )
        self.objective.check_labels(self.dataset.label)
        #: Ranking: the whole data's chunk ids of this worker's chunks (gpuboost.dask.train).
        self.chunk_ids = setup.get("chunk_ids")
        if self.chunk_ids is not None:
            self.objective.chunk_plan = setup["chunk_plan"]
        init_model = None if setup["init_model"] is None else Booster.from_json(setup["init_model"])
        self.margins = backend.to_device(
            self._initial_margins(self.dataset, setup["base_margins"], init_model)
        )
        self.eval_sets = []
        for features_parts, labels_parts, weights_parts in eval_sets:
            if not features_parts:  # none of this set's partitions is evaluated here
                self.eval_sets.append((None, np.zeros((0, self.n_outputs))))
                continue
            dataset = Dataset(
                _concat_features(features_parts),
                **label_arguments(_concat(labels_parts)),
                weight=None if weights_parts is None else _concat(weights_parts),
            )
            margins = self._initial_margins(dataset, setup["base_margins"], init_model)
            self.eval_sets.append(
                (
                    backend.prepare_features(dataset.features_for(backend)),
                    backend.to_device(margins),
                )
            )
        self.gradients = self.hessians = None
        self._tree = None

    def _initial_margins(self, dataset, base_margins, init_model):
        """As ``gpuboost.boosting.gbtree._initial_margins`` (row-wise, so per worker)."""
        n_rows = dataset.n_rows
        if dataset.base_margin is not None:
            margins = np.asarray(dataset.base_margin, dtype=np.float64)
            return margins.reshape(n_rows, self.n_outputs).copy()
        if init_model is not None and init_model.trees:
            return init_model.margins_to_continue(dataset.features_for(self.backend))
        return np.broadcast_to(base_margins, (n_rows, self.n_outputs)).copy()

    def n_rows(self):
        """This worker's training rows."""
        return len(self.row_ids)

    def run(self, calls):
        """Run ``[(method, args), ...]`` in order; the last one's result (the deferred
        calls of :meth:`gpuboost.dask.comm.Exchange.defer`, then the call itself)."""
        result = None
        for method, args in calls:
            result = getattr(self, method)(*args)
        return result

    # ---- one round -----------------------------------------------------------
    def ranking_maxima(self, n_chunks):
        """Ranking: the largest pair gradient and hessian of each of the whole data's
        ``n_chunks`` chunks among this worker's queries (0 where it has none)."""
        maxima = np.zeros((n_chunks, 2), dtype=np.float64)
        margin_view = self.margins[:, 0]
        local = self.objective.chunk_maxima(
            self.backend.xp, self.data.label, margin_view, self.dataset
        )
        maxima[self.chunk_ids] = local
        return maxima

    def begin_round(self, chunk_maxima=None):
        """The round's weighted gradients and hessians of every output (kept here);
        ranking: with the fixed-point scales of the maxima over every worker."""
        backend, label, weight = self.backend, self.data.label, self.data.weight
        margin_view = self.margins[:, 0] if self.n_outputs == 1 else self.margins
        if chunk_maxima is not None:
            self.objective.chunk_scales = [
                (
                    fixed_point_scale(chunk_maxima[chunk, 0]),
                    fixed_point_scale(chunk_maxima[chunk, 1]),
                )
                for chunk in self.chunk_ids
            ]
        self.objective.begin_round(backend, label, margin_view, weight)
        gradients, hessians = backend.gradients(
            self.objective, label, margin_view, weight, self.dataset
        )
        self.gradients = gradients.reshape(len(self.row_ids), self.n_outputs)
        self.hessians = hessians.reshape(len(self.row_ids), self.n_outputs)
        return None

    def set_gradients(self, gradients, hessians):
        """The round's weighted gradients and hessians of this worker's rows (host
        (n_rows, n_outputs)), computed by the client over every worker's rows (an
        objective whose gradients are not row-local: ``survival:cox``)."""
        backend = self.backend
        self.gradients = backend.to_device(np.asarray(gradients, dtype=np.float64))
        self.hessians = backend.to_device(np.asarray(hessians, dtype=np.float64))

    def _column(self, output):
        xp = self.backend.xp
        return (
            xp.ascontiguousarray(self.gradients[:, output]),
            xp.ascontiguousarray(self.hessians[:, output]),
        )

    def _magnitude_keys(self, output):
        """GOSS's ``|g|`` as order-preserving int64 keys (non-negative float64 bits)."""
        xp = self.backend.xp
        return xp.abs(self._column(output)[0]).view(xp.int64)

    def radix_counts(self, output, key_kind, threshold, prefix, shift):
        """Counts of the ``RADIX_BITS``-bit digit ``(key >> shift) & 255`` of the keys whose
        higher bits ``key >> (shift + RADIX_BITS)`` equal ``prefix`` (int64 (256,)).

        ``key_kind`` 'magnitude': every row's ``|g|`` bits; 'tied_rows': the global row
        ids of the rows whose ``|g|`` bits equal ``threshold``.
        """
        xp = self.backend.xp
        keys = self._magnitude_keys(output)
        if key_kind == "tied_rows":
            keys = self.device_row_ids[keys == threshold]
        high = keys >> (shift + RADIX_BITS) if shift + RADIX_BITS < 64 else xp.zeros_like(keys)
        digits = (keys[high == prefix] >> shift) & (RADIX_SIZE - 1)
        return self.backend.to_host(xp.bincount(digits, minlength=RADIX_SIZE)).astype(np.int64)

    def count_above(self, output, threshold):
        """Rows whose ``|g|`` bits exceed ``threshold``."""
        return int(self.backend.xp.count_nonzero(self._magnitude_keys(output) > threshold))

    def sample(self, output, stream, goss):
        """Sample this tree's rows and apply the multipliers (as ``tree.sampling``, by
        global row id); returns ``(local max|g|, local max|h|, local sample count)``.

        ``goss``: None for bagging, else ``(threshold bits, last tied global row id,
        top_rate, other_rate)`` selected by the client.
        """
        xp, params = self.backend.xp, self.params
        column_g, column_h = self._column(output)
        seed = params["seed"]
        multipliers = None
        if goss is not None:
            threshold, last_tied, top_rate, other_rate = goss
            keys = self._magnitude_keys(output)
            is_top = (keys > threshold) | ((keys == threshold) & (self.device_row_ids <= last_tied))
            uniforms = row_uniforms_at(xp, seed, stream, self.device_row_ids)
            sample_indices, multipliers = goss_keep(xp, is_top, uniforms, top_rate, other_rate)
        elif params["subsample"] < 1.0:
            uniforms = row_uniforms_at(xp, seed, stream, self.device_row_ids)
            sample_indices = xp.flatnonzero(uniforms < params["subsample"]).astype(
                SAMPLE_INDEX_DTYPE
            )
        else:
            sample_indices = xp.arange(len(self.row_ids), dtype=SAMPLE_INDEX_DTYPE)
        if multipliers is not None:
            column_g, column_h = column_g * multipliers, column_h * multipliers
        self._tree = {"g": column_g, "h": column_h, "rows": sample_indices, "segments": {}}
        n_samples = int(sample_indices.shape[0])
        if len(self.row_ids) == 0:
            return 0.0, 0.0, n_samples
        return float(xp.max(xp.abs(column_g))), float(xp.max(xp.abs(column_h))), n_samples

    def quantize(self, scale_g, scale_h, n_samples):
        """Quantize the tree's column with the global scales; the root is the global
        segment ``(0, n_samples)``."""
        tree = self._tree
        tree["qg"], tree["qh"] = self.backend.quantize_with_scales(
            tree.pop("g"), tree.pop("h"), scale_g, scale_h
        )
        tree["segments"] = {(0, n_samples): (0, int(tree["rows"].shape[0]))}

    def dispersion(self, scale_g, scale_h, n_samples):
        """Quantize the tree's column (:meth:`quantize`) and return the exact integer
        parts of its sampled rows' dispersion (``Backend.dispersion_sums``), which
        the client adds over the workers (docs/DESIGN.md, "Split penalty")."""
        self.quantize(scale_g, scale_h, n_samples)
        tree = self._tree
        return self.backend.dispersion_sums(tree["qg"], tree["qh"], tree["rows"])

    def _partition(self, splits):
        """Apply the splits ``(begin, end, middle, feature, bin, default_left, left_set)``
        (global segments; ``left_set``: the bins going left of a categorical split, uint32
        words, else None) to the local row partition (a backend call per kind)."""
        if not splits:
            return
        backend, xp, tree = self.backend, self.backend.xp, self._tree
        segments, rows = tree["segments"], tree["rows"]
        binned = self.data.arrays["X_binned"]
        missing_bin = self.data.missing_bin
        numeric, categorical = [], []
        for begin, end, middle, feature, threshold_bin, default_left, left_set in splits:
            local_begin, local_end = segments.pop((begin, end))
            column = binned[rows[local_begin:local_end], feature]
            if left_set is None:
                left = goes_left(column, threshold_bin, bool(default_left), missing_bin)
                numeric.append((local_begin, local_end, feature, threshold_bin, default_left))
            else:  # a categorical split: its left set over bins (gpuboost.backends.categorical)
                table = backend.to_device(bins_going_left(left_set, default_left, missing_bin))
                left = table[column.astype(np.int64)]
                categorical.append((local_begin, local_end, feature, left_set, default_left))
            n_left = int(xp.count_nonzero(left))
            segments[(begin, middle)] = (local_begin, local_begin + n_left)
            segments[(middle, end)] = (local_begin + n_left, local_end)
        if numeric:
            begins, ends, features, bins, lefts = zip(*numeric)
            backend.partition(
                self.data, rows, *_int64(begins, ends, features, bins), np.asarray(lefts, bool)
            )
        if categorical:
            begins, ends, features, left_sets, lefts = zip(*categorical)
            backend.partition_categorical(
                self.data,
                rows,
                *_int64(begins, ends, features),
                np.stack(left_sets),
                np.asarray(lefts, bool),
            )

    def histograms(self, quantization, splits, nodes):
        """Quantize (at a tree's first exchange: ``quantization`` = the global scales and
        sample count, else None), apply the pending ``splits``, then the local int64
        histograms of ``nodes`` (global segments), host (n_nodes, n_features, n_bins, 3)."""
        if quantization is not None:
            self.quantize(*quantization)
        self._partition(splits)
        tree = self._tree
        local = [tree["segments"][node] for node in nodes]
        begins = np.array([segment[0] for segment in local], dtype=np.int64)
        ends = np.array([segment[1] for segment in local], dtype=np.int64)
        histograms = self.backend.build_histograms(
            self.data, tree["qg"], tree["qh"], tree["rows"], begins, ends
        )
        return self.backend.to_host(histograms)

    def end_tree(self, output, tree):
        """The tree's leaf values added to the training and evaluation margins."""
        self._tree = None
        self.margins[:, output] += self.backend.predict_tree_binned(self.data, tree)
        for features, margins in self.eval_sets:
            if features is not None:
                margins[:, output] += self.backend.predict_tree_raw(features, tree)

    def eval_margins(self, index):
        """The running margins of evaluation set ``index`` (host (n_rows, n_outputs))."""
        if index < 0:
            return self.backend.to_host(self.margins)
        return self.backend.to_host(self.eval_sets[index][1])
