"""Learning-to-rank objectives: ``rank:ndcg`` (LambdaMART), ``rank:map``, ``rank:pairwise``.

Rows come in queries (``Dataset.group``: the sizes of consecutive row blocks);
labels are relevance grades ``>= 0``. Every round, each query's documents are
ranked by their current score (decreasing; ties in row order) and every pair
``(i, j)`` of documents with different labels in which at least one of the two
is ranked among the top ``lambdarank_truncation_level`` positions contributes
(``high`` is the document with the larger label)::

    rho      = 1 / (1 + exp(sigma * (s_high - s_low)))     (sigma = RANK_SIGMOID)
    lambda   = sigma * rho * |delta|
    g_high  -= lambda,             g_low += lambda
    h_high  += sigma^2 * rho * (1 - rho) * |delta|,  h_low likewise

This is the gradient and (diagonal) hessian of the LambdaMART loss
``|delta| * log(1 + exp(-sigma * (s_high - s_low)))`` summed over the pairs,
where ``|delta|`` is the change of the query's metric if the two documents
swapped positions:

* ``rank:ndcg``: ``|delta| = |gain_i - gain_j| * |discount_i - discount_j| / IDCG``
  with ``gain = 2**label - 1``, ``discount(position p) = 1 / log2(p + 2)``
  (positions from 0; both defined in :mod:`gpuboost.metrics.ranking`) and
  ``IDCG`` the ideal DCG of the query's top ``lambdarank_truncation_level``
  positions (the normalization of NDCG);
* ``rank:map``: the exact change of the query's average precision
  (``label > 0`` is relevant), computed in closed form from running hit
  counts (pairs of two relevant or two irrelevant documents have ``delta = 0``);
* ``rank:pairwise``: ``|delta| = 1`` (RankNet).

The truncation bounds the work to ``O(truncation_level * query size)`` pairs
per query; set ``lambdarank_truncation_level`` to the largest query size to use
every pair. Sample weights (one per row) multiply each row's gradient and
hessian. The link is the identity (predictions are scores, higher ranks
first); the base margin is 0. Default evaluation metric: ``ndcg`` over all
positions (``map`` for ``rank:map``).

Implementation
--------------
Vectorized with the array module ``xp`` (NumPy or CuPy): no per-row data
leaves the device. Queries are padded to a common length within *chunks* of
queries of similar size (planned once per Dataset on the host from the query
sizes and labels, and copied to the device once), a chunk's documents are
sorted with one ``xp.lexsort`` on (query, -score, position), and the pairs of
a chunk form a dense ``(queries, truncation, length)`` tensor. Per chunk and
round, two scalars (the largest pair gradient and hessian) are read on the host.

Determinism: each row's gradient is a sum over its pairs, whose order of
summation would differ between NumPy and a GPU reduction. The pair terms are
therefore converted to 64-bit fixed point (``rint(term * scale)`` with
``scale = PAIR_FIXED_POINT_MAX / max|term|`` per chunk) and summed as exact
integers, then divided back. The rounding (relative ``2**-40`` of the
largest term) is far below the gradient quantization that follows
(``2**-30``, docs/DESIGN.md). The running sums along a ranking that
average precision needs are exact integer cumulative sums as well (hit counts,
and reciprocal ranks in fixed point). The per-query constants (ideal DCG, number of
relevant documents) depend on the labels only and are computed once on the
host. The only transcendental function on row data is ``exp`` (the sigmoid), and
the gains and discounts use ``exp2`` and ``log2``, all :mod:`gpuboost.core.strict_math`'s:
the same bits on every CPU and GPU.
"""

import numbers

import numpy as np

from ..core import strict_math
from ..core.dtypes import Y_DTYPE
from ..core.segments import offsets
from ..metrics.ranking import ndcg_gains, position_discounts
from ..params import PARAMETERS
from .base import Objective, _apply_weight, _IdentityLinkMixin, _sigmoid

__all__ = [
    "NDCGLambdaRank",
    "MAPLambdaRank",
    "PairwiseRank",
    "RANKING_OBJECTIVE_CLASSES",
    "DEFAULT_TRUNCATION_LEVEL",
    "RANK_SIGMOID",
    "lambdarank_gradients_naive",
    "plan_query_chunks",
    "fixed_point_scale",
]

#: Default of ``lambdarank_truncation_level`` (LightGBM's), read from its owner,
#: the parameter table (:data:`gpuboost.params.PARAMETERS`).
DEFAULT_TRUNCATION_LEVEL = PARAMETERS["lambdarank_truncation_level"].default
#: Steepness ``sigma`` of the pairwise logistic loss.
RANK_SIGMOID = 1.0
#: Largest magnitude of a pair term in fixed point. A row sums at most
#: ``MAX_QUERY_SIZE`` terms, so sums stay below ``2**62`` (exact in int64).
PAIR_FIXED_POINT_MAX = 2**40
#: Largest number of documents in one query.
MAX_QUERY_SIZE = 2**22
#: Fixed-point unit of the reciprocal ranks ``1 / (p + 1)`` summed along a ranking
#: (average precision): a query's sum is below ``(1 + ln MAX_QUERY_SIZE) * 2**48 < 2**53``.
RECIPROCAL_RANK_FIXED_POINT_ONE = 2**48
#: Padded pair cells ``(queries x truncation x length)`` of one chunk; bounds the
#: memory of the pair tensors (about 100 bytes a cell at the peak). A single
#: query larger than this still forms a chunk of its own.
MAX_PAIR_CELLS_PER_CHUNK = 1 << 20
#: Integer type of the fixed-point sums.
_FIXED_POINT_DTYPE = np.int64


# ---------------------------------------------------------------------------
# Host helpers
# ---------------------------------------------------------------------------


def plan_query_chunks(group, truncation_level):
    """The queries of each chunk: by increasing size (so that a chunk pads little), as
    many as fit ``MAX_PAIR_CELLS_PER_CHUNK`` padded pair cells.

    Parameters
    ----------
    group : ndarray of shape (n_queries,), int
    truncation_level : int

    Returns
    -------
    list of ndarray of int64
        Query indices, one array per chunk.
    """
    group = np.asarray(group, dtype=np.int64)
    order = np.argsort(group, kind="stable")
    plan = []
    start = 0
    while start < len(order):
        stop = start + 1
        length = int(group[order[start]])
        while stop < len(order):
            next_length = max(length, int(group[order[stop]]))
            cells = (stop + 1 - start) * min(truncation_level, next_length) * next_length
            if cells > MAX_PAIR_CELLS_PER_CHUNK:
                break
            length = next_length
            stop += 1
        plan.append(order[start:stop])
        start = stop
    return plan


def ideal_dcg(labels, group, truncation_level):
    """Ideal DCG of every query over its top ``truncation_level`` positions (host).

    Parameters
    ----------
    labels : ndarray of shape (n_rows,)
    group : ndarray of shape (n_queries,), int
    truncation_level : int

    Returns
    -------
    ndarray of shape (n_queries,), float64
        Summed position by position in rank order.
    """
    labels = np.asarray(labels, dtype=np.float64)
    query_offsets = offsets(group)
    query_of_row = np.repeat(np.arange(len(group)), group)
    ideal_labels = labels[np.lexsort((-labels, query_of_row))]
    positions = np.arange(len(labels)) - query_offsets[query_of_row]
    longest = int(np.max(group, initial=0))
    discounts = position_discounts(longest)
    out = np.zeros(len(group), dtype=np.float64)
    for position in range(min(truncation_level, longest)):
        at_position = positions == position  # at most one row per query
        out[query_of_row[at_position]] += (
            ndcg_gains(ideal_labels[at_position]) * discounts[position]
        )
    return out


# ---------------------------------------------------------------------------
# Query layout: chunks of padded queries
# ---------------------------------------------------------------------------


class _Chunk:
    """Queries of similar size padded to ``length`` (device arrays unless noted).

    Attributes
    ----------
    length : int
        Padded query length (the largest query of the chunk).
    top : int
        ``min(truncation_level, length)``: positions that pair with later ones.
    rows : (n_queries, length) int64
        Row ids in row order; padding holds ``n_rows`` (a dummy row).
    valid : (n_queries, length) bool
    labels, gains : (n_queries, length) float64
    relevant_count : (n_queries,) float64
        Number of documents with ``label > 0`` (rank:map).
    inverse_ideal_dcg : (n_queries,) float64
        ``1 / IDCG`` (0 for a query whose IDCG is 0).
    position_key, query_key : (n_queries * length,) float64
        Sort keys: position within the padded query, and the query.
    """


class QueryLayout:
    """The padded chunks of a Dataset's queries, built once on the host.

    Parameters
    ----------
    labels : ndarray of shape (n_rows,), host float64
    group : ndarray of shape (n_queries,), host int
    truncation_level : int
    to_device : callable
        Host array -> device array.
    chunk_plan : list of int arrays, optional
        The queries of each chunk (default :func:`plan_query_chunks`); distributed
        training gives each worker its queries of the whole data's chunks.
    """

    def __init__(self, labels, group, truncation_level, to_device, chunk_plan=None):
        labels = np.asarray(labels, dtype=np.float64)
        group = np.asarray(group, dtype=np.int64)
        n_rows = len(labels)
        if int(group.sum()) != n_rows:
            raise ValueError(
                f"query sizes sum to {int(group.sum())}, but there are {n_rows} labels."
            )
        if len(group) and int(group.max()) > MAX_QUERY_SIZE:
            raise ValueError(
                f"a query has {int(group.max())} documents; at most {MAX_QUERY_SIZE} are supported."
            )
        self.n_rows = n_rows
        query_offsets = offsets(group)
        idcg = ideal_dcg(labels, group, truncation_level)
        relevant = np.bincount(
            np.repeat(np.arange(len(group)), group),
            weights=(labels > 0).astype(np.float64),
            minlength=len(group),
        )
        longest = max(int(group.max(initial=1)), 1)
        self.discounts = to_device(position_discounts(longest))
        reciprocal = np.rint(
            RECIPROCAL_RANK_FIXED_POINT_ONE / np.arange(1, longest + 1, dtype=np.float64)
        )
        self.reciprocal_ranks = to_device(reciprocal.astype(_FIXED_POINT_DTYPE))
        self.chunks = []
        if chunk_plan is None:
            chunk_plan = plan_query_chunks(group, truncation_level)
        for queries in chunk_plan:
            queries = np.asarray(queries, dtype=np.int64)
            self.chunks.append(
                self._chunk(
                    queries,
                    int(group[queries].max()),
                    query_offsets,
                    group,
                    labels,
                    idcg,
                    relevant,
                    truncation_level,
                    to_device,
                )
            )

    @staticmethod
    def _chunk(
        queries, length, query_offsets, group, labels, idcg, relevant, truncation_level, to_device
    ):
        n_queries = len(queries)
        n_rows = len(labels)
        positions = np.arange(length)
        valid = positions[None, :] < group[queries][:, None]
        rows = np.where(valid, query_offsets[queries][:, None] + positions[None, :], n_rows)
        padded_labels = np.where(valid, np.append(labels, 0.0)[rows], 0.0)
        chunk = _Chunk()
        chunk.length = length
        chunk.top = min(truncation_level, length)
        chunk.rows = to_device(rows.astype(np.int64))
        chunk.valid = to_device(valid)
        chunk.labels = to_device(padded_labels)
        chunk.gains = to_device(np.where(valid, ndcg_gains(padded_labels), 0.0))
        chunk.relevant_count = to_device(relevant[queries])
        query_idcg = idcg[queries]
        chunk.inverse_ideal_dcg = to_device(
            np.where(query_idcg > 0, 1.0 / np.where(query_idcg > 0, query_idcg, 1.0), 0.0)
        )
        chunk.position_key = to_device(np.tile(positions.astype(np.float64), n_queries))
        chunk.query_key = to_device(np.repeat(np.arange(n_queries, dtype=np.float64), length))
        return chunk


# ---------------------------------------------------------------------------
# Objectives
# ---------------------------------------------------------------------------


def fixed_point_scale(max_abs):
    """Scale of the pair terms of one chunk (1.0 when all are zero)."""
    max_abs = float(max_abs)
    return PAIR_FIXED_POINT_MAX / max_abs if max_abs > 0.0 else 1.0


class _LambdaRankObjective(_IdentityLinkMixin, Objective):
    """Shared pair machinery; subclasses define :meth:`_pair_deltas`.

    Parameters
    ----------
    lambdarank_truncation_level : int, default=DEFAULT_TRUNCATION_LEVEL
        Pairs are formed between a document among the top this many positions
        (by current score) and every document ranked below it.
    """

    default_metric = "ndcg"

    def __init__(self, lambdarank_truncation_level=DEFAULT_TRUNCATION_LEVEL):
        if (
            isinstance(lambdarank_truncation_level, bool)
            or not isinstance(lambdarank_truncation_level, numbers.Integral)
            or lambdarank_truncation_level < 1
        ):
            raise ValueError(
                f"objective {self.name!r}: lambdarank_truncation_level must be a "
                f"positive integer, got {lambdarank_truncation_level!r}"
            )
        self.truncation_level = int(lambdarank_truncation_level)
        self._layout_key = None
        self._layout = None
        #: Distributed training (gpuboost.dask): this worker's queries of the whole data's
        #: chunks (QueryLayout's ``chunk_plan``), and the fixed-point scales of each of
        #: those chunks from the maxima over every worker (None: the chunk's own).
        self.chunk_plan = None
        self.chunk_scales = None

    @classmethod
    def from_params(cls, params):
        """Build from validated parameters (``lambdarank_truncation_level``)."""
        return cls(params.get("lambdarank_truncation_level", DEFAULT_TRUNCATION_LEVEL))

    def get_params(self):
        return {"lambdarank_truncation_level": self.truncation_level}

    def _check_label_domain(self, y):
        bad = y < 0
        if bad.any():
            self._label_error("relevance labels must be non-negative", y, bad)

    def base_margin(self, y, weight):
        return np.zeros(1, dtype=Y_DTYPE)

    # -- gradients ---------------------------------------------------------

    def _query_layout(self, xp, dataset):
        group = None if dataset is None else dataset.group
        if group is None:
            raise ValueError(
                f"objective {self.name!r} needs the queries of the training data: "
                f"pass group= (query sizes) or qid= to the Dataset."
            )
        label = dataset.label
        key = (id(label), id(group), xp.__name__)
        if self._layout_key is None or self._layout_key[0] != key:
            layout = QueryLayout(label, group, self.truncation_level, xp.asarray, self.chunk_plan)
            # The arrays are kept in the key so that their ids stay unique.
            self._layout_key = (key, label, group)
            self._layout = layout
        return self._layout

    def gradients(self, xp, y, raw, weight, dataset=None):
        """Lambda gradients and hessians of every row.

        Parameters
        ----------
        xp : module
        y : array of shape (n_rows,)
            Relevance labels; they must equal ``dataset.label``, from which the
            per-query constants are computed (once, on the host).
        raw : array of shape (n_rows,)
            Current scores.
        weight : array of shape (n_rows,) or None
        dataset : Dataset
            Provides ``group`` (query sizes) and ``label``.

        Returns
        -------
        grad, hess : arrays of shape (n_rows,), float64
        """
        layout, scores = self._layout_and_scores(xp, y, raw, dataset)
        grad = xp.zeros(layout.n_rows + 1, dtype=Y_DTYPE)
        hess = xp.zeros(layout.n_rows + 1, dtype=Y_DTYPE)
        for index, chunk in enumerate(layout.chunks):
            scales = None if self.chunk_scales is None else self.chunk_scales[index]
            rows, chunk_grad, chunk_hess = self._chunk_gradients(xp, chunk, layout, scores, scales)
            grad[rows] = chunk_grad
            hess[rows] = chunk_hess
        return _apply_weight(xp, grad[:-1], hess[:-1], weight)

    def _layout_and_scores(self, xp, y, raw, dataset):
        """The query layout and the scores with one extra slot (padding positions read
        and write the dummy row ``n_rows``)."""
        y = xp.asarray(y, dtype=Y_DTYPE)
        raw = xp.asarray(raw, dtype=Y_DTYPE)
        self._check_raw_shape(y, raw)
        layout = self._query_layout(xp, dataset)
        if layout.n_rows != y.shape[0]:
            raise ValueError(
                f"objective {self.name!r}: {y.shape[0]} labels, but the dataset's "
                f"queries hold {layout.n_rows} rows"
            )
        return layout, xp.concatenate([raw, xp.zeros(1, dtype=Y_DTYPE)])

    def chunk_maxima(self, xp, y, raw, dataset):
        """The largest pair gradient and pair hessian of every chunk (host float64
        (n_chunks, 2)): what the fixed-point scales are made of. Distributed training
        takes their maxima over the workers (exact) and sets :attr:`chunk_scales`."""
        layout, scores = self._layout_and_scores(xp, y, raw, dataset)
        maxima = np.zeros((len(layout.chunks), 2), dtype=np.float64)
        for index, chunk in enumerate(layout.chunks):
            _, _, lambdas, pair_hessians, _ = self._chunk_terms(xp, chunk, layout, scores)
            maxima[index] = float(xp.max(lambdas)), float(xp.max(pair_hessians))
        return maxima

    def _chunk_gradients(self, xp, chunk, layout, scores, scales=None):
        """Sorted row ids and their gradients / hessians, each (n_queries, length);
        ``scales``: the fixed-point ``(gradient, hessian)`` scales (default: from the
        chunk's own maxima)."""
        ranked, i_is_high, lambdas, pair_hessians, top = self._chunk_terms(
            xp, chunk, layout, scores
        )
        if scales is None:
            grad_scale = fixed_point_scale(xp.max(lambdas))
            hess_scale = fixed_point_scale(xp.max(pair_hessians))
        else:
            grad_scale, hess_scale = scales
        fixed_lambdas = xp.rint(lambdas * grad_scale).astype(_FIXED_POINT_DTYPE)
        fixed_hessians = xp.rint(pair_hessians * hess_scale).astype(_FIXED_POINT_DTYPE)
        # The high document's gradient decreases by lambda, the low one's increases.
        toward_i = xp.where(i_is_high, -fixed_lambdas, fixed_lambdas)
        grad_fixed = -xp.sum(toward_i, axis=1)
        grad_fixed[:, :top] += xp.sum(toward_i, axis=2)
        hess_fixed = xp.sum(fixed_hessians, axis=1)
        hess_fixed[:, :top] += xp.sum(fixed_hessians, axis=2)
        return (
            ranked.rows,
            grad_fixed.astype(Y_DTYPE) / grad_scale,
            hess_fixed.astype(Y_DTYPE) / hess_scale,
        )

    def _chunk_terms(self, xp, chunk, layout, scores):
        """A chunk's documents in rank order, which of each pair is the higher, and the
        pair gradients and hessians, each (n_queries, top, length); and ``top``."""
        n_queries, length = chunk.valid.shape
        top = chunk.top
        padded_scores = scores[chunk.rows]
        # -score + 0.0 turns -0.0 into +0.0, so that any sort sees one zero.
        sort_key = xp.where(chunk.valid, -padded_scores + 0.0, xp.inf)
        order = xp.lexsort(xp.stack([chunk.position_key, sort_key.ravel(), chunk.query_key]))
        order = order.reshape(n_queries, length)
        ranked = _Ranked(
            rows=chunk.rows.ravel()[order],
            valid=chunk.valid.ravel()[order],
            scores=padded_scores.ravel()[order],
            labels=chunk.labels.ravel()[order],
            gains=chunk.gains.ravel()[order],
        )
        label_i = ranked.labels[:, :top, None]
        label_j = ranked.labels[:, None, :]
        position_i = xp.arange(top)[None, :, None]
        position_j = xp.arange(length)[None, None, :]
        in_pair = (
            ranked.valid[:, :top, None]
            & ranked.valid[:, None, :]
            & (position_j > position_i)
            & (label_i != label_j)
        )
        i_is_high = label_i > label_j
        score_i = ranked.scores[:, :top, None]
        score_j = ranked.scores[:, None, :]
        high_minus_low = xp.where(i_is_high, score_i - score_j, score_j - score_i)
        rho = _sigmoid(xp, -RANK_SIGMOID * high_minus_low)
        delta = self._pair_deltas(xp, ranked, chunk, layout, top)
        lambdas = xp.where(in_pair, RANK_SIGMOID * rho * delta, 0.0)
        pair_hessians = xp.where(
            in_pair, (RANK_SIGMOID * RANK_SIGMOID) * rho * (1.0 - rho) * delta, 0.0
        )
        return ranked, i_is_high, lambdas, pair_hessians, top

    def _pair_deltas(self, xp, ranked, chunk, layout, top):
        """``|delta|`` of every (i < top, j) pair, shape broadcastable to (n, top, length)."""
        raise NotImplementedError


class _Ranked:
    """A chunk's padded arrays in rank order, each (n_queries, length)."""

    def __init__(self, rows, valid, scores, labels, gains):
        self.rows, self.valid, self.scores = rows, valid, scores
        self.labels, self.gains = labels, gains


class NDCGLambdaRank(_LambdaRankObjective):
    """``rank:ndcg``: LambdaMART with NDCG swap weights (see the module docstring)."""

    name = "rank:ndcg"
    default_metric = "ndcg"

    def _check_label_domain(self, y):
        super()._check_label_domain(y)
        bad = ~np.isfinite(strict_math.exp2(np, y))
        if bad.any():
            self._label_error("relevance labels must be below 1024 (gain 2**label - 1)", y, bad)

    def _pair_deltas(self, xp, ranked, chunk, layout, top):
        length = ranked.labels.shape[1]
        discounts = layout.discounts[:length]
        gain_gap = xp.abs(ranked.gains[:, :top, None] - ranked.gains[:, None, :])
        discount_gap = xp.abs(discounts[:top, None] - discounts[None, :])
        return gain_gap * discount_gap[None] * chunk.inverse_ideal_dcg[:, None, None]


class MAPLambdaRank(_LambdaRankObjective):
    """``rank:map``: LambdaMART with average-precision swap weights.

    For ``i < j`` (0-based positions), ``H(k)`` relevant documents among
    positions ``0 .. k`` and ``B`` the sum of ``1 / (m + 1)`` over relevant
    documents strictly between ``i`` and ``j``, swapping a relevant document
    at ``i`` with an irrelevant one at ``j`` changes AP by
    ``(H(j) / (j + 1) - H(i) / (i + 1) - B) / R``, and an irrelevant one at
    ``i`` with a relevant one at ``j`` by
    ``((H(i) + 1) / (i + 1) - H(j) / (j + 1) + B) / R`` (``R`` relevant
    documents in the query).
    """

    name = "rank:map"
    default_metric = "map"

    def _pair_deltas(self, xp, ranked, chunk, layout, top):
        length = ranked.labels.shape[1]
        relevant = ranked.valid & (ranked.labels > 0)
        hits = xp.cumsum(relevant.astype(_FIXED_POINT_DTYPE), axis=1).astype(Y_DTYPE)
        reciprocal = xp.where(relevant, layout.reciprocal_ranks[None, :length], 0)
        reciprocal_sums = xp.cumsum(reciprocal.astype(_FIXED_POINT_DTYPE), axis=1)
        # Sum over relevant positions m with i < m < j: sums[j - 1] - sums[i] (exact).
        sums_before_j = xp.concatenate(
            [
                xp.zeros((reciprocal_sums.shape[0], 1), dtype=_FIXED_POINT_DTYPE),
                reciprocal_sums[:, :-1],
            ],
            axis=1,
        )
        between = (sums_before_j[:, None, :] - reciprocal_sums[:, :top, None]).astype(
            Y_DTYPE
        ) / RECIPROCAL_RANK_FIXED_POINT_ONE
        rank_i = xp.arange(1, top + 1, dtype=Y_DTYPE)[None, :, None]
        rank_j = xp.arange(1, length + 1, dtype=Y_DTYPE)[None, None, :]
        hits_i = hits[:, :top, None]
        hits_j = hits[:, None, :]
        relevant_i = relevant[:, :top, None]
        relevant_j = relevant[:, None, :]
        down = hits_j / rank_j - hits_i / rank_i - between
        up = (hits_i + 1.0) / rank_i - hits_j / rank_j + between
        change = xp.where(
            relevant_i & ~relevant_j, down, xp.where(~relevant_i & relevant_j, up, 0.0)
        )
        count = chunk.relevant_count[:, None, None]
        return xp.abs(change) / xp.where(count > 0, count, 1.0)


class PairwiseRank(_LambdaRankObjective):
    """``rank:pairwise``: RankNet, every pair weighted 1 (see the module docstring)."""

    name = "rank:pairwise"
    default_metric = "ndcg"

    def _pair_deltas(self, xp, ranked, chunk, layout, top):
        return 1.0


#: The ranking family by name (gpuboost.objectives.registry lists the same classes).
RANKING_OBJECTIVE_CLASSES = {cls.name: cls for cls in (NDCGLambdaRank, MAPLambdaRank, PairwiseRank)}


# ---------------------------------------------------------------------------
# Naive reference (tests)
# ---------------------------------------------------------------------------


def _dcg(gains_in_rank_order):
    return sum(g / np.log2(p + 2.0) for p, g in enumerate(gains_in_rank_order))


def _average_precision(relevant_in_rank_order):
    n_relevant = sum(relevant_in_rank_order)
    if n_relevant == 0:
        return 0.0
    hits = 0
    total = 0.0
    for position, is_relevant in enumerate(relevant_in_rank_order):
        if is_relevant:
            hits += 1
            total += hits / (position + 1.0)
    return total / n_relevant


def lambdarank_gradients_naive(
    objective_name, labels, scores, group, truncation_level=DEFAULT_TRUNCATION_LEVEL, weight=None
):
    """Reference loop version of the ranking gradients (same contract).

    Swap weights are computed by swapping the two documents and recomputing the
    metric (full DCG divided by the truncated ideal DCG; average precision).

    Returns
    -------
    grad, hess : ndarray of shape (n_rows,), float64
    """
    labels = np.asarray(labels, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    grad = np.zeros(len(labels))
    hess = np.zeros(len(labels))
    start = 0
    for size in np.asarray(group, dtype=np.int64):
        rows = list(range(start, start + int(size)))
        start += int(size)
        ranking = sorted(rows, key=lambda row: (-scores[row], row))
        ideal = sorted((labels[row] for row in rows), reverse=True)[:truncation_level]
        idcg = _dcg([2.0**label - 1.0 for label in ideal])
        for i in range(min(truncation_level, len(ranking))):
            for j in range(i + 1, len(ranking)):
                row_i, row_j = ranking[i], ranking[j]
                if labels[row_i] == labels[row_j]:
                    continue
                swapped = list(ranking)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                if objective_name == "rank:ndcg":
                    before = _dcg([2.0 ** labels[r] - 1.0 for r in ranking])
                    after = _dcg([2.0 ** labels[r] - 1.0 for r in swapped])
                    delta = abs(after - before) / idcg if idcg > 0 else 0.0
                elif objective_name == "rank:map":
                    delta = abs(
                        _average_precision([labels[r] > 0 for r in swapped])
                        - _average_precision([labels[r] > 0 for r in ranking])
                    )
                else:
                    delta = 1.0
                high, low = (row_i, row_j) if labels[row_i] > labels[row_j] else (row_j, row_i)
                rho = 1.0 / (1.0 + np.exp(RANK_SIGMOID * (scores[high] - scores[low])))
                grad[high] -= RANK_SIGMOID * rho * delta
                grad[low] += RANK_SIGMOID * rho * delta
                pair_hessian = RANK_SIGMOID * RANK_SIGMOID * rho * (1.0 - rho) * delta
                hess[high] += pair_hessian
                hess[low] += pair_hessian
    if weight is not None:
        grad *= weight
        hess *= weight
    return grad, hess
