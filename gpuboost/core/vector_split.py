"""The split scan of vector-leaf trees: the best split by the gain summed over outputs.

Backend-agnostic (docs/DESIGN.md, "Vector leaves"): :func:`find_best_vector_splits` runs
in the array module of its histograms (NumPy, or CuPy on the device), with elementwise
IEEE operations on values recovered from exact integer sums, so that every backend gets
the same bits; :func:`find_best_vector_splits_naive` is the loop version kept for tests.
The histograms of a batch of nodes for ``k`` outputs are an :class:`OutputHistograms`:
``cells`` (n_nodes, n_features, n_bins, W) int64, each cell holding every output's sums
(``G_t`` in field ``2t``, ``H_t`` in ``2t + 1``) then zeros up to ``W`` =
:func:`cell_width` ``(k)``, a multiple of 4, and the row counts of the cells, ``counts``
(n_nodes, n_features, n_bins) int64: one bin of every output in a few 32-byte vectors, so
that a row is added to a cell of every output at once (one bin lookup for ``k`` outputs:
the compiled CPU build), and the counts, which every output shares, once; indexed by node
like one-output batches. ``OutputHistograms.per_output(xp)`` gives output ``t``'s one-output
histograms (``(k, n_nodes, n_features, n_bins, 3)``, as ``Backend.build_histograms``
gives them). The node records hold each output's fields side by side: output ``t`` in fields
:func:`output_fields` ``(t)`` of ``3k`` (gradient, hessian, row count).

The rule (XGBoost's ``multi_output_tree``)::

    gain = (sum_t S(L_t) + sum_t S(R_t)) - sum_t S(P_t)        (sums in output order)

``S`` the leaf score of :func:`gpuboost.core.gain.leaf_score`; a candidate is admissible
when both children keep ``min_data_in_leaf`` rows and, for at least one output,
``min_child_weight`` hessian, and ``gain > gamma``, ``gain > SPLIT_GAIN_EPS``.
Candidates, missing values and ties are the one-output scan's (lowest feature, then
lowest bin, then missing values right first; a feature without missing rows in the node
sends them to the larger child, ties left). With one output, gain, admissibility and
split are the one-output scan's (tested).
"""

import numpy as np

from .dtypes import HIST_COUNT, HIST_FIELDS, HIST_GRAD, HIST_HESS
from .gain import SPLIT_GAIN_EPS, leaf_score

__all__ = [
    "OutputHistograms",
    "cell_width",
    "find_best_vector_splits",
    "find_best_vector_splits_naive",
    "node_scores",
    "output_fields",
    "scan_candidates",
    "table_of_best",
    "table_of_pairs",
]

#: Candidate cells (nodes x features x bins x outputs) the array scan evaluates at once.
_SCAN_CHUNK_CELLS = 1 << 20


def output_fields(output):
    """The histogram fields ``(gradient, hessian, count)`` of output ``output``."""
    first = HIST_FIELDS * output
    return first + HIST_GRAD, first + HIST_HESS, first + HIST_COUNT


#: Cell fields are padded to a multiple of this many int64 (one 256-bit vector).
CELL_VECTOR_FIELDS = 4


def cell_width(n_outputs):
    """Fields of a cell of an :class:`OutputHistograms` of ``n_outputs`` outputs: the
    ``2k`` sums, padded to a multiple of :data:`CELL_VECTOR_FIELDS`."""
    fields = 2 * int(n_outputs)
    return -(-fields // CELL_VECTOR_FIELDS) * CELL_VECTOR_FIELDS


class OutputHistograms:
    """The histograms of a batch of nodes for ``k`` outputs (see the module docstring).

    Parameters
    ----------
    cells : array of shape (n_nodes, n_features, n_bins, cell_width(k)), int64
        Cell fields ``(G_0, H_0, ..., G_{k-1}, H_{k-1}, 0, ...)``.
    counts : array of shape (n_nodes, n_features, n_bins), int64
        The cells' row counts.
    n_outputs : int
        ``k``.

    Indexing selects nodes (``batch[rows]``, ``batch[a:b]``: an OutputHistograms of those
    nodes, a view where the array module gives one), ``len`` is the number of nodes.
    """

    __slots__ = ("cells", "counts", "n_outputs")

    def __init__(self, cells, counts, n_outputs):
        self.n_outputs = int(n_outputs)
        if cells.shape[-1] != cell_width(self.n_outputs) or counts.shape != cells.shape[:3]:
            raise ValueError(
                f"cells of shape {cells.shape} and counts of shape {counts.shape} for "
                f"{self.n_outputs} outputs (expected {cell_width(self.n_outputs)} fields "
                f"and the cells' first three axes)"
            )
        self.cells = cells
        self.counts = counts

    @classmethod
    def from_per_output(cls, xp, per_output):
        """The batch of every output's one-output histograms ``per_output`` (k, n_nodes,
        n_features, n_bins, 3), int64 (the row counts are output 0's: every output's)."""
        k = per_output.shape[0]
        cells = xp.zeros(per_output.shape[1:4] + (cell_width(k),), dtype=per_output.dtype)
        for output in range(k):
            cells[..., 2 * output] = per_output[output, ..., HIST_GRAD]
            cells[..., 2 * output + 1] = per_output[output, ..., HIST_HESS]
        counts = xp.ascontiguousarray(per_output[0, ..., HIST_COUNT])
        return cls(cells, counts, k)

    def per_output(self, xp):
        """(k, n_nodes, n_features, n_bins, 3) int64: each output's one-output histograms
        (a new array of the array module ``xp``)."""
        k, cells = self.n_outputs, self.cells
        fields = xp.empty((k,) + cells.shape[:3] + (HIST_FIELDS,), dtype=cells.dtype)
        for output in range(k):
            fields[output, ..., HIST_GRAD] = cells[..., 2 * output]
            fields[output, ..., HIST_HESS] = cells[..., 2 * output + 1]
            fields[output, ..., HIST_COUNT] = self.counts
        return fields

    def __len__(self):
        return int(self.cells.shape[0])

    def __getitem__(self, rows):
        return OutputHistograms(self.cells[rows], self.counts[rows], self.n_outputs)

    @staticmethod
    def stack(xp, batches):
        """The batches' nodes in one batch (concatenated along the node axis)."""
        return OutputHistograms(
            xp.concatenate([b.cells for b in batches], axis=0),
            xp.concatenate([b.counts for b in batches], axis=0),
            batches[0].n_outputs,
        )

    def __sub__(self, other):
        return OutputHistograms(
            self.cells - other.cells, self.counts - other.counts, self.n_outputs
        )


def _scores(xp, sums, scales, params):
    """``(sum_t S_t, max_t H_t)`` of (k, ..., 3) integer sums: the leaf scores added in
    output order, and the largest hessian sum (float64 arrays of shape ``sums[0, ..., 0]``)."""
    total = largest = None
    for output, (scale_g, scale_h) in enumerate(scales):
        hessians = sums[output][..., HIST_HESS] / scale_h
        score = leaf_score(sums[output][..., HIST_GRAD] / scale_g, hessians, params)
        total = score if total is None else total + score
        largest = hessians if largest is None else xp.maximum(largest, hessians)
    return total, largest


def node_scores(xp, parents, scales, params):
    """``sum_t S(P_t)`` of every node, its (k, n_nodes, 3) integer sums ``parents``."""
    return _scores(xp, parents, scales, params)[0]


def node_fields(xp, histograms):
    """Every node's own (k, n_nodes, 3) integer sums of an :class:`OutputHistograms`
    (every row is in one bin of feature 0), an array of its array module ``xp``."""
    k = histograms.n_outputs
    sums = histograms.cells[:, 0, :, : 2 * k].sum(axis=1)  # (n_nodes, 2k)
    fields = xp.empty((k, len(histograms), HIST_FIELDS), dtype=sums.dtype)
    fields[:, :, HIST_GRAD] = sums[:, 0::2].T
    fields[:, :, HIST_HESS] = sums[:, 1::2].T
    fields[:, :, HIST_COUNT] = histograms.counts[:, 0, :].sum(axis=1)[None, :]
    return fields


def _side_by_side(fields):
    """(n, 3k) host fields of (k, n, 3) ones: output ``t`` in :func:`output_fields`."""
    k, n = fields.shape[:2]
    return np.ascontiguousarray(np.transpose(fields, (1, 0, 2))).reshape(n, k * HIST_FIELDS)


def _empty_table(n_nodes, n_outputs):
    return {
        "feature": np.full(n_nodes, -1, dtype=np.int64),
        "bin": np.full(n_nodes, -1, dtype=np.int64),
        "default_left": np.zeros(n_nodes, dtype=bool),
        "gain": np.full(n_nodes, -np.inf),
        "left_fields": np.zeros((n_nodes, HIST_FIELDS * n_outputs), dtype=np.int64),
        "fields": np.zeros((n_nodes, HIST_FIELDS * n_outputs), dtype=np.int64),
    }


def _host(xp, array):
    return array if xp is np else xp.asnumpy(array)


def table_of_best(parents, best_gain, feature, bin_, direction, left, has_missing):
    """The table :func:`find_best_vector_splits` returns (host arrays).

    Parameters
    ----------
    parents : ndarray of shape (k, n_nodes, 3), int64: the nodes' own fields
    best_gain : ndarray of shape (n_nodes,), float64
        -inf: no admissible candidate; +inf: an admissible candidate overflowed.
    feature, bin_, direction : ndarrays of shape (n_nodes,), int
        The best candidate where ``best_gain`` is finite (direction 1: missing left).
    left : ndarray of shape (n_nodes, 3k), int64
        Its left child's fields (output ``t`` in :func:`output_fields`).
    has_missing : ndarray of shape (n_nodes, n_features), bool, or None (no node)
        Whether the node has rows with the feature missing.
    """
    n_nodes = len(best_gain)
    table = _empty_table(n_nodes, parents.shape[0])
    table["fields"] = _side_by_side(np.asarray(parents, dtype=np.int64))
    table["gain"][best_gain == np.inf] = np.inf
    found = np.flatnonzero(np.isfinite(best_gain))
    if not len(found):
        return table
    left = np.asarray(left, dtype=np.int64)[found]
    left_count = left[:, HIST_COUNT]
    right_count = table["fields"][found, HIST_COUNT] - left_count
    table["feature"][found] = feature[found]
    table["bin"][found] = bin_[found]
    table["gain"][found] = best_gain[found]
    table["left_fields"][found] = left
    table["default_left"][found] = np.where(
        has_missing[found, feature[found]], direction[found] == 1, left_count >= right_count
    )
    return table


def scan_candidates(n_value_bins, missing_bin):
    """The candidate bins a compiled scan reads per feature at most (``n_candidates``): up
    to the missing bin, and below the largest feature's last value bin; 0: none."""
    n_candidates = missing_bin - 1
    if n_candidates <= 0 or not len(n_value_bins):
        return max(n_candidates, 0)
    return max(1, min(n_candidates, int(np.max(n_value_bins)) - 1))


def table_of_pairs(parents, best_gain, best_bin, best_direction, best_left, has_missing):
    """:func:`table_of_best` of every node's best (node, feature) pair: the first of its
    features' equal largest gains (``numpy.argmax``: feature order), as a compiled scan
    of the pairs gives them (host arrays).

    Parameters
    ----------
    parents : ndarray of shape (k, n_nodes, 3), int64
    best_gain, best_bin, best_direction : ndarrays of shape (n_nodes, n_features)
        Each pair's best candidate (gain -inf: none).
    best_left : ndarray of shape (n_nodes, n_features, 3k), int64
    has_missing : ndarray of shape (n_nodes, n_features), bool
    """
    n_nodes = best_gain.shape[0]
    rows = np.arange(n_nodes)
    feature = np.argmax(best_gain, axis=1) if n_nodes else np.zeros(0, dtype=np.int64)
    return table_of_best(
        parents,
        best_gain[rows, feature],
        feature,
        best_bin[rows, feature],
        best_direction[rows, feature],
        best_left[rows, feature],
        has_missing if n_nodes else None,
    )


def _left_fields(xp, per_output, feature, bin_, direction, missing_bin):
    """(n_nodes, 3k) host left fields of each node's candidate (zeros where ``feature``
    is -1)."""
    n_outputs, n_nodes = per_output.shape[:2]
    left = np.zeros((n_nodes, HIST_FIELDS * n_outputs), dtype=np.int64)
    found = np.flatnonzero(feature >= 0)
    if not len(found):
        return left
    columns = per_output[:, xp.asarray(found), xp.asarray(feature[found])]  # (k, m, bins, 3)
    running = xp.cumsum(columns[:, :, : int(bin_[found].max()) + 1], axis=2)
    fields = running[:, xp.arange(len(found)), xp.asarray(bin_[found])]  # (k, m, 3)
    missing = columns[:, :, missing_bin] * xp.asarray(direction[found])[None, :, None]
    left[found] = _side_by_side(_host(xp, fields + missing))
    return left


def find_best_vector_splits(
    xp, histograms, scales, n_value_bins, missing_bin, params, feature_mask=None
):
    """Best split of every node of a batch by the gain summed over the outputs.

    Parameters
    ----------
    xp : module
        The array module of ``histograms`` (numpy or cupy).
    histograms : OutputHistograms  # IN
    scales : sequence of k ``(scale_gradients, scale_hessians)`` pairs (host floats)
    n_value_bins : ndarray of shape (n_features,), int (host)
        A threshold bin ``b`` is a candidate when ``b <= n_value_bins[f] - 2``.
    missing_bin : int
    params : SplitParams
    feature_mask : ndarray of shape (n_nodes, n_features), bool, optional (host)

    Returns
    -------
    dict of host ndarrays, one row per node
        ``feature`` (-1: no admissible split), ``bin``, ``default_left``, ``gain``
        (-inf without a split; +inf where an admissible candidate's gain overflowed,
        which then has no split), ``left_fields`` and ``fields`` (n_nodes, 3k) int64:
        the left child's and the node's own histogram fields.
    """
    per_output = histograms.per_output(xp)
    n_outputs, n_nodes, n_features = per_output.shape[:3]
    parents = node_fields(xp, histograms)
    best_gain = np.full(n_nodes, -np.inf)
    best = np.zeros(n_nodes, dtype=np.int64)
    n_candidates = missing_bin - 1
    if n_nodes and n_features and n_candidates > 0:
        n_candidates = max(1, min(n_candidates, int(np.max(n_value_bins)) - 1))
        bin_is_candidate = xp.asarray(
            np.arange(n_candidates)[None, :] <= (np.asarray(n_value_bins)[:, None] - 2)
        )
        step = max(1, _SCAN_CHUNK_CELLS // (n_features * n_candidates * n_outputs))
        for start in range(0, n_nodes, step):
            stop = min(n_nodes, start + step)
            mask = None if feature_mask is None else feature_mask[start:stop]
            best_gain[start:stop], best[start:stop] = _scan_chunk(
                xp,
                per_output[:, start:stop],
                parents[:, start:stop],
                scales,
                bin_is_candidate,
                missing_bin,
                params,
                mask,
            )
    feature, rest = np.divmod(best, max(n_candidates, 1) * 2)
    bin_, direction = np.divmod(rest, 2)
    feature = np.where(np.isfinite(best_gain), feature, -1)
    left = _left_fields(xp, per_output, feature, bin_, direction, missing_bin)
    has_missing = _host(xp, per_output[0, :, :, missing_bin, HIST_COUNT] > 0)
    return table_of_best(_host(xp, parents), best_gain, feature, bin_, direction, left, has_missing)


def _scan_chunk(xp, per_output, parent, scales, bin_is_candidate, missing_bin, params, mask):
    """``(best gain, best position)`` of every node of a chunk (host arrays); positions
    in the candidate order (feature, bin, direction)."""
    n_nodes = per_output.shape[1]
    n_candidates = bin_is_candidate.shape[1]
    missing = per_output[:, :, :, missing_bin]  # (k, n, F, 3)
    left_missing_right = xp.cumsum(per_output[:, :, :, :n_candidates], axis=3)
    has_missing = missing[0][..., HIST_COUNT] > 0  # output 0's row count: every output's
    valid = xp.broadcast_to(bin_is_candidate[None], left_missing_right.shape[1:4])
    if mask is not None:
        valid = valid & xp.asarray(mask)[:, :, None]
    parent_score = node_scores(xp, parent, scales, params)
    gains = []
    for direction in range(2):
        left = left_missing_right if direction == 0 else left_missing_right + missing[:, :, :, None]
        right = parent[:, :, None, None, :] - left
        left_score, left_hessian = _scores(xp, left, scales, params)
        right_score, right_hessian = _scores(xp, right, scales, params)
        gain = (left_score + right_score) - parent_score[:, None, None]
        ok = (
            valid
            & (left_hessian >= params.min_child_weight)
            & (right_hessian >= params.min_child_weight)
            & (left[0][..., HIST_COUNT] >= params.min_data_in_leaf)
            & (right[0][..., HIST_COUNT] >= params.min_data_in_leaf)
            & (gain > params.gamma)
            & (gain > SPLIT_GAIN_EPS)
        )
        if direction == 1:
            ok = ok & has_missing[:, :, None]
        gains.append(xp.where(ok, gain, -np.inf))
    # Candidate order (feature, bin, direction); the first of equal maxima (an order-free
    # minimum over positions, not argmax, whose tie rule a device reduction need not keep).
    stacked = xp.stack(gains, axis=-1).reshape(n_nodes, -1)
    best_gain = stacked.max(axis=1)
    positions = xp.arange(stacked.shape[1], dtype=np.int64)
    best = xp.where(stacked == best_gain[:, None], positions[None, :], stacked.shape[1]).min(axis=1)
    return _host(xp, best_gain), _host(xp, best)


def find_best_vector_splits_naive(histograms, scales, n_value_bins, missing_bin, params):
    """Reference loop version of :func:`find_best_vector_splits` (NumPy, no feature mask;
    same contract), for tests: each node's outputs side by side, ``(n_features, n_bins,
    3k)``, scanned candidate by candidate."""
    per_output = histograms.per_output(np)
    n_outputs, n_nodes, n_features = per_output.shape[:3]
    n_fields = HIST_FIELDS * n_outputs
    table = _empty_table(n_nodes, n_outputs)

    def scores(fields):
        total, largest = 0.0, -np.inf
        for output, (scale_g, scale_h) in enumerate(scales):
            grad, hess, _ = output_fields(output)
            hessians = fields[hess] / scale_h
            score = float(leaf_score(fields[grad] / scale_g, hessians, params))
            total = score if output == 0 else total + score
            largest = max(largest, hessians)
        return total, largest

    for node in range(n_nodes):
        hist = np.concatenate(list(per_output[:, node].astype(np.int64)), axis=-1)
        parent = hist[0].sum(axis=0)
        table["fields"][node] = parent
        parent_score, _ = scores(parent)
        best = None
        for feature in range(n_features):
            missing = hist[feature, missing_bin]
            running = np.zeros(n_fields, dtype=np.int64)
            for bin_ in range(int(n_value_bins[feature]) - 1):
                running = running + hist[feature, bin_]
                for missing_left in (False, True) if missing[HIST_COUNT] > 0 else (False,):
                    left = running + missing if missing_left else running
                    right = parent - left
                    left_score, left_h = scores(left)
                    right_score, right_h = scores(right)
                    gain = (left_score + right_score) - parent_score
                    if not (
                        left_h >= params.min_child_weight
                        and right_h >= params.min_child_weight
                        and left[HIST_COUNT] >= params.min_data_in_leaf
                        and right[HIST_COUNT] >= params.min_data_in_leaf
                        and gain > params.gamma
                        and gain > SPLIT_GAIN_EPS
                    ):
                        continue
                    if best is None or gain > best[0]:
                        default_left = missing_left
                        if missing[HIST_COUNT] == 0:
                            default_left = left[HIST_COUNT] >= right[HIST_COUNT]
                        best = (gain, feature, bin_, default_left, left)
        if best is not None and best[0] == np.inf:
            table["gain"][node] = np.inf
        elif best is not None:
            gain, feature, bin_, default_left, left = best
            table["feature"][node], table["bin"][node] = feature, bin_
            table["default_left"][node], table["gain"][node] = default_left, gain
            table["left_fields"][node] = left
    return table
