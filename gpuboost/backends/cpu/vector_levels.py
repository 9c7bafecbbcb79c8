"""Vector-leaf trees grown level after level in one call (compiled CPU backend; the
definition: the grower's level loop, gpuboost.tree.grower.TreeGrower._expand with
:class:`~gpuboost.tree.splitters.multi_output.MultiOutputSplitter`, which the tests
compare it with bit for bit).

A vector-leaf tree's level is a handful of kernels (partition, every output's
histograms, the summed-gain scan) and, between them, the grower's Python: node tables,
split records, batches of histograms, the drivers. On 20k rows x 20 features x 4 outputs
that Python was half of a tree's time (about 8 ms of 16). Depthwise without a leaf
budget the levels need nothing from Python, so here they run in one compiled call on the
grower's node table (:data:`NODE_COLUMNS`), the whole tree at once::

    frontier (admissible leaves with their splits, in id order; or a tree's root,
    whose sums come from its rows and which is scanned first)
        |  children: ids size, size + 1, ... in pairs, left then right; segments, the
        |  2k sums and counts from the parents' split records; which may split (depth,
        |  2 * min_data_in_leaf rows, some output's 2 * min_child_weight hessian)
        v
    every parent partitioned, stably (:func:`.partition._split_whole`):
        [ left rows | right rows ] in each parent's segment
        v
    the histograms of both children of a parent with a splittable child: the smaller
    built from its rows, its sibling the parent's minus it (the parent's kept from the
    level before; both built when it is not), one :func:`.histogram._build_outputs`
        v
    the splittable children scanned (:func:`.vector_split._scan`, the gain summed over
    the outputs), each one's best feature the first of the largest gains
        v
    the next frontier: the children with a split, their histograms kept

with the kernels the grower's loop calls for the same steps, so the nodes, the row
partition and the split records are the loop's bit for bit whatever the threads.

Histograms live in two level buffers (the parents' level and the children's, swapped
each level) from :func:`gpuboost.backends.cpu.recycled.recycled_empty`, sized for the
tree's widest level where that fits in :data:`LEVEL_BUFFER_BYTES`; a level that needs more
rows than a buffer holds ends the call, and the grower calls again with that level's
parents (their children then both built from their rows: the same integers).

Not here (the grower's loop does them): feature masks drawn per level or node, interaction
constraints, a leaf budget (``max_leaves``), the sparse layout.
"""

import numpy as np

from ...core.dtypes import HIST_DTYPE
from ...core.vector_split import cell_width, scan_candidates
from .histogram import ROWS_INTERLEAVED, _build_outputs_of_width, _output_scratch
from .jit import kernel, prange, threads
from .partition import _split_whole
from .recycled import VECTOR_ALIGNMENT, recycled_empty
from .row_levels import NODE_COLUMNS, add_children, next_frontier
from .split_scan import _leaf_score
from .vector_split import _scan

__all__ = ["grow_vector_levels", "LEVEL_BUFFER_BYTES", "NODE_COLUMNS"]

#: Bytes of each of the two level buffers of histograms (cells and counts) at most, unless
#: a level needs more (at 20 features x 256 bins x 4 outputs a node takes 368 kB: 350
#: nodes a level).
LEVEL_BUFFER_BYTES = 1 << 27


@kernel
def _can_split(sums, count, node, scale_hessians, twice_data, twice_weight, depth, max_depth):
    """The vector-leaf splitter's can-split rule (``MultiOutputSplitter.can_split`` and
    ``max_depth``): at least ``2 * min_data_in_leaf`` rows, some output's hessian sum at
    least ``2 * min_child_weight``, and a depth below ``max_depth`` (0: no limit)."""
    largest = -np.inf
    for output in range(scale_hessians.shape[0]):
        largest = max(largest, np.float64(sums[node, 2 * output + 1]) / scale_hessians[output])
    return (
        count[node] >= twice_data
        and largest >= twice_weight
        and (max_depth == 0 or depth[node] < max_depth)
    )


@kernel
def _output_score(sums, node, output, inverse_g, inverse_h, reg_lambda, reg_alpha, max_delta_step):
    """``S(G_t, H_t)`` of output ``output``'s sums of a node (powers-of-two scales
    multiplied by their inverses: the definition's divisions, the same bits)."""
    return _leaf_score(
        np.float64(sums[node, 2 * output]) * inverse_g[output],
        np.float64(sums[node, 2 * output + 1]) * inverse_h[output],
        reg_lambda,
        reg_alpha,
        max_delta_step,
    )


@kernel
def _node_score(sums, node, inverse_g, inverse_h, reg_lambda, reg_alpha, max_delta_step):
    """``sum_t S(G_t, H_t)`` of a node's sums, in output order
    (gpuboost.core.vector_split.node_scores)."""
    total = 0.0
    for output in range(inverse_g.shape[0]):
        score = _output_score(
            sums, node, output, inverse_g, inverse_h, reg_lambda, reg_alpha, max_delta_step
        )
        total = score if output == 0 else total + score
    return total


@kernel(parallel=True)
def _partition_parents(
    X_binned_columns,
    sample_indices,
    begin,
    end,
    feature,
    bin_,
    default_left,
    parents,
    n_parents,
    missing_bin,
    scratch,
):
    """Partition the segments of ``parents[:n_parents]`` by their splits, a parent per
    thread at a time (:func:`.partition._split_whole`: stable, left rows first)."""
    for k in prange(n_parents):
        parent = parents[k]
        _split_whole(
            X_binned_columns[feature[parent]],
            sample_indices,
            begin[parent],
            end[parent],
            bin_[parent],
            np.int64(default_left[parent]),
            missing_bin,
            scratch,
        )


@kernel
def _grow_vector_levels(
    X_binned,
    X_binned_columns,
    pairs,
    sample_indices,
    n_bins,
    inverse_g,
    inverse_h,
    scale_hessians,
    n_value_bins,
    missing_bin,
    n_candidates,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    feature_mask,
    use_mask,
    max_depth,
    begin,
    end,
    depth,
    count,
    left,
    right,
    feature,
    bin_,
    default_left,
    gain,
    sums,
    left_sums,
    left_count,
    frontier,
    n_frontier,
    size,
    scan_frontier,
    cells_a,
    counts_a,
    cells_b,
    counts_b,
    scratch,
    scratch_counts,
    increments,
):
    """Expand the levels from ``frontier[:n_frontier]`` (IN, OUT) while the node table
    (capacity ``len(begin)``) and the level buffers (``cells_a``/``counts_a`` and
    ``cells_b``/``counts_b``, each (rows, n_features * n_bins * W) and (rows, n_features *
    n_bins) int64) have room for a level's children; returns ``(size, n_frontier,
    overflowed)``: the nodes, the level still to expand (0: the tree is done), the first
    scanned node one of whose outputs' score ``S(G_t, H_t)`` is not finite or whose best
    gain is inf (-1: none). With ``scan_frontier`` the frontier's nodes are scanned first
    (their sums from their rows; the ones that cannot split left as leaves).
    ``scratch``, ``scratch_counts``, ``increments``: those of
    :func:`.histogram._build_outputs` (zero, left zero). Not a parallel kernel itself
    (the kernels it calls are): one compile whatever the threads and the outputs."""
    capacity = begin.shape[0]
    n_outputs = inverse_g.shape[0]
    n_sums = 2 * n_outputs
    n_features = X_binned.shape[1]
    buffer_rows = cells_a.shape[0]
    width = cells_a.shape[1] // max(1, n_features * n_bins)
    n_threads = scratch.shape[0]
    twice_weight = 2 * min_child_weight
    twice_data = 2 * min_data_in_leaf
    row_scratch = np.empty(sample_indices.shape[0], dtype=sample_indices.dtype)
    level = np.empty(capacity, dtype=np.int64)
    splittable = np.zeros(capacity, dtype=np.bool_)
    # The row of each frontier node's histogram in the parents' buffer (-1: none).
    frontier_row = np.full(capacity, -1, dtype=np.int64)
    parent_cells, parent_counts = cells_a, counts_a
    level_cells, level_counts = cells_b, counts_b
    totals = np.zeros(n_sums, dtype=np.int64)
    first = scan_frontier
    overflowed = -1
    while True:
        if first:
            # The frontier's own nodes: their sums from their rows (no siblings).
            n_level = n_frontier
            paired = False
            for i in range(n_level):
                node = level[i] = frontier[i]
                totals[:] = 0
                for position in range(begin[node], end[node]):
                    row = sample_indices[position]
                    for field in range(n_sums):
                        totals[field] += pairs[row, field]
                sums[node, :n_sums] = totals
                count[node] = end[node] - begin[node]
                left[node] = right[node] = feature[node] = bin_[node] = -1
                splittable[i] = _can_split(
                    sums, count, node, scale_hessians, twice_data, twice_weight, depth, max_depth
                )
        else:
            if not (
                n_frontier > 0
                and size + 2 * n_frontier <= capacity
                and 2 * n_frontier <= buffer_rows
            ):
                break
            # The children of the frontier: ids size, size + 1, ... (left, right).
            n_level = 2 * n_frontier
            paired = True
            add_children(
                frontier,
                n_frontier,
                size,
                level,
                begin,
                end,
                depth,
                count,
                left,
                right,
                feature,
                bin_,
                sums,
                left_sums,
                left_count,
            )
            for position in range(n_level):
                splittable[position] = _can_split(
                    sums,
                    count,
                    level[position],
                    scale_hessians,
                    twice_data,
                    twice_weight,
                    depth,
                    max_depth,
                )
            _partition_parents(
                X_binned_columns,
                sample_indices,
                begin,
                end,
                feature,
                bin_,
                default_left,
                frontier,
                n_frontier,
                missing_bin,
                row_scratch,
            )
        # The level's histograms: both children of a parent with a splittable child (the
        # smaller built, ties left, the other the parent's minus it where the parent's is
        # kept); the frontier's splittable nodes at a first level. Rows: the built ones
        # (those with a sibling by subtraction first), then the siblings.
        built = np.empty(n_level, dtype=np.int64)  # level positions
        derived = np.empty(n_level, dtype=np.int64)
        pair_rows = np.empty(n_level, dtype=np.int64)
        with_histogram = np.zeros(n_level, dtype=np.bool_)
        n_derived = 0
        for i in range(n_level):
            with_histogram[i] = (
                (splittable[i - i % 2] or splittable[i - i % 2 + 1]) if paired else splittable[i]
            )
        if paired:
            for i in range(n_frontier):
                lo, hi = 2 * i, 2 * i + 1
                if with_histogram[lo] and frontier_row[i] >= 0:
                    smaller = lo if count[level[lo]] <= count[level[hi]] else hi
                    built[n_derived] = smaller
                    derived[n_derived] = lo + hi - smaller
                    pair_rows[n_derived] = frontier_row[i]
                    n_derived += 1
        n_built = n_derived
        for i in range(n_level):
            if with_histogram[i] and not (paired and frontier_row[i // 2] >= 0):
                built[n_built] = i
                n_built += 1
        n_rows = n_built + n_derived
        row_of = np.full(n_level, -1, dtype=np.int64)
        begins = np.empty(n_built, dtype=np.int64)
        ends = np.empty(n_built, dtype=np.int64)
        for k in range(n_built):
            row_of[built[k]] = k
            begins[k] = begin[level[built[k]]]
            ends[k] = end[level[built[k]]]
        for k in range(n_derived):
            row_of[derived[k]] = n_built + k
        best_gain = np.full((n_rows, max(n_features, 1)), -np.inf)
        best_bin = np.zeros((n_rows, max(n_features, 1)), dtype=np.int64)
        best_direction = np.zeros((n_rows, max(n_features, 1)), dtype=np.int64)
        best_left = np.zeros((n_rows, max(n_features, 1), 3 * n_outputs), dtype=np.int64)
        if n_rows > 0:
            _build_outputs_of_width(
                X_binned,
                pairs,
                sample_indices,
                begins,
                ends,
                n_bins,
                level_cells[:n_rows],
                level_counts[:n_rows],
                scratch,
                scratch_counts,
                increments,
                parent_cells,
                parent_counts,
                pair_rows[:n_derived],
            )
        # The splittable nodes scanned (the others' features masked out).
        if n_rows > 0 and n_features > 0 and n_candidates > 0:
            scan_mask = np.zeros((n_rows, n_features), dtype=np.bool_)
            parents = np.zeros((n_outputs, n_rows, 3), dtype=np.int64)
            parent_scores = np.zeros(n_rows, dtype=np.float64)
            for i in range(n_level):
                row = row_of[i]
                if not splittable[i] or row < 0:
                    continue
                node = level[i]
                for f in range(n_features):
                    scan_mask[row, f] = feature_mask[f] if use_mask else True
                for output in range(n_outputs):
                    parents[output, row, 0] = sums[node, 2 * output]
                    parents[output, row, 1] = sums[node, 2 * output + 1]
                    parents[output, row, 2] = count[node]
                parent_scores[row] = _node_score(
                    sums, node, inverse_g, inverse_h, reg_lambda, reg_alpha, max_delta_step
                )
            _scan(
                level_cells[:n_rows].reshape((n_rows, n_features, n_bins, width)),
                level_counts[:n_rows].reshape((n_rows, n_features, n_bins)),
                n_outputs,
                inverse_g,
                inverse_h,
                n_value_bins,
                missing_bin,
                n_candidates,
                reg_lambda,
                reg_alpha,
                max_delta_step,
                min_child_weight,
                min_data_in_leaf,
                gamma,
                scan_mask,
                True,
                parents,
                parent_scores,
                max(1, min(n_rows * n_features, 4 * n_threads)),
                best_gain,
                best_bin,
                best_direction,
                best_left,
            )
        # The split records, as the loop's set_splits writes them (no split: feature and
        # bin -1, gain -inf (inf where a gain overflowed), zero sums); the first node whose
        # own score or best gain overflowed float64 (MultiOutputSplitter's rule).
        for i in range(n_level):
            if not splittable[i]:
                continue
            node = level[i]
            row = row_of[i]
            best = 0
            for f in range(1, n_features):
                if best_gain[row, f] > best_gain[row, best]:
                    best = f
            node_gain = best_gain[row, best]
            if overflowed < 0:
                for output in range(n_outputs):
                    score = _output_score(
                        sums,
                        node,
                        output,
                        inverse_g,
                        inverse_h,
                        reg_lambda,
                        reg_alpha,
                        max_delta_step,
                    )
                    if not np.isfinite(score):
                        overflowed = node
                if node_gain == np.inf:
                    overflowed = node
            if np.isfinite(node_gain):
                n_left = best_left[row, best, 2]
                has_missing = level_counts[row, best * n_bins + missing_bin] > 0
                feature[node] = best
                bin_[node] = best_bin[row, best]
                n_right = count[node] - n_left
                default_left[node] = (
                    best_direction[row, best] == 1 if has_missing else n_left >= n_right
                )
                gain[node] = node_gain
                for output in range(n_outputs):
                    left_sums[node, 2 * output] = best_left[row, best, 3 * output]
                    left_sums[node, 2 * output + 1] = best_left[row, best, 3 * output + 1]
                left_count[node] = n_left
            else:
                feature[node] = bin_[node] = -1
                default_left[node] = False
                gain[node] = node_gain if node_gain == np.inf else -np.inf
                left_sums[node, :n_sums] = 0
                left_count[node] = 0
        # The next level's parents, with the row of their histogram (kept: the buffers
        # swap).
        n_next = next_frontier(level, n_level, feature, row_of, frontier, frontier_row)
        parent_cells, level_cells = level_cells, parent_cells
        parent_counts, level_counts = level_counts, parent_counts
        if not first:
            size += n_level
        first = False
        n_frontier = n_next
    return size, n_frontier, overflowed


def _buffer_rows(n_parents, max_depth, row_bytes):
    """Rows of each level buffer: the widest level of a tree of ``max_depth`` (2^(depth
    - 1) nodes; 0: no limit) where :data:`LEVEL_BUFFER_BYTES` hold them, at least two per
    parent (a level always fits)."""
    widest = 1 << (max_depth - 1) if 0 < max_depth <= 40 else np.iinfo(np.int64).max
    return max(2 * n_parents, 1, min(widest, LEVEL_BUFFER_BYTES // row_bytes))


def grow_vector_levels(
    X_binned,
    X_binned_columns,
    pairs,
    sample_indices,
    n_bins,
    n_value_bins,
    missing_bin,
    scales,
    params,
    feature_mask,
    max_depth,
    columns,
    size,
    parents,
    scan_parents=False,
):
    """Expand the depthwise vector-leaf levels from ``parents`` while the node table has
    room.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order  # IN
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8  # IN
    pairs : ndarray of shape (n_rows, 2k), int32, C order  # IN
        Each row's quantized ``(g_0, h_0, g_1, h_1, ...)``.
    sample_indices : ndarray of shape (n_samples,), int32  # IN, OUT
        The row partition.
    n_bins, n_value_bins, missing_bin
        The binned data's.
    scales : sequence of k ``(scale_gradients, scale_hessians)``, powers of two
    params : SplitParams
    feature_mask : ndarray of shape (n_features,), bool, or None
        The features every node may split on (None: all).
    max_depth : int
        0: no limit.
    columns : dict of ndarrays  # IN, OUT
        The node table's columns :data:`NODE_COLUMNS` (one capacity; ``sums`` and
        ``left_sums`` (capacity, 2k)).
    size : int
        The nodes in the table.
    parents : ndarray of shape (n_parents,), int64
        The nodes to expand: admissible leaves in id order, with their splits found; or
        with ``scan_parents`` nodes whose segments, depths and counts are all the table
        holds of them (a tree's root): their sums and splits are found first, and those
        that cannot split stay leaves (feature -1).

    Returns
    -------
    size : int
    frontier : ndarray of int64
        The nodes still to expand (empty: done).
    overflowed : int
        The first scanned node one of whose outputs' score is not finite or whose best
        gain is inf (the float64 sums overflowed; -1: none).
    """
    n_outputs = len(scales)
    n_features = X_binned.shape[1]
    width = cell_width(n_outputs)
    n_cells = n_features * int(n_bins) * width
    n_bin_cells = n_features * int(n_bins)
    rows = _buffer_rows(len(parents), int(max_depth), 8 * (n_cells + n_bin_cells))
    buffers = [
        recycled_empty((rows, n_cells), HIST_DTYPE, VECTOR_ALIGNMENT),
        recycled_empty((rows, n_bin_cells), HIST_DTYPE),
        recycled_empty((rows, n_cells), HIST_DTYPE, VECTOR_ALIGNMENT),
        recycled_empty((rows, n_bin_cells), HIST_DTYPE),
    ]
    n_threads = max(1, threads())
    scratch, scratch_counts = _output_scratch(n_threads, n_cells, n_bin_cells)
    frontier = np.zeros(len(columns["begin"]), dtype=np.int64)
    frontier[: len(parents)] = parents
    use_mask = feature_mask is not None
    size, n_frontier, overflowed = _grow_vector_levels(
        np.ascontiguousarray(X_binned),
        X_binned_columns,
        np.ascontiguousarray(pairs),
        sample_indices,
        int(n_bins),
        np.array([1.0 / g for g, _ in scales]),
        np.array([1.0 / h for _, h in scales]),
        np.array([float(h) for _, h in scales]),
        np.asarray(n_value_bins, dtype=np.int64),
        int(missing_bin),
        scan_candidates(n_value_bins, missing_bin),
        params.reg_lambda,
        params.reg_alpha,
        params.max_delta_step,
        params.min_child_weight,
        params.min_data_in_leaf,
        params.gamma,
        np.ascontiguousarray(feature_mask) if use_mask else np.ones(1, dtype=bool),
        use_mask,
        int(max_depth),
        *(columns[name] for name in NODE_COLUMNS),
        frontier,
        len(parents),
        int(size),
        bool(scan_parents),
        *buffers,
        scratch,
        scratch_counts,
        np.zeros((n_threads, ROWS_INTERLEAVED, width), dtype=HIST_DTYPE),
    )
    return int(size), frontier[:n_frontier].copy(), int(overflowed)
