"""The depthwise subtrees of small nodes in one call (compiled CPU backend; the
definition: the grower's own level loop, gpuboost.tree.grower.TreeGrower._expand, which
the tests compare it with node for node and bit for bit).

Depthwise without a leaf budget, a node's subtree depends on nothing but its own rows.
Below a node small enough that the loop scans its children from their rows
(:mod:`.row_scan`), no histogram is kept: each level partitions its parents' segments
and scans the children from their rows. The grower's loop spends most of such a
level's time in Python between kernels (node tables, records, drivers: about 2 ms a
round at 1,000 rows against 0.5 ms of kernels). Here the level loop runs in one
compiled call on the grower's node table, for all the small nodes the grower hands it
(:func:`levels_from_rows_max_rows`; in a small tree every node below the root)::

    parents (admissible leaves, in id order)
        |  children: ids size, size + 1, ... in pairs, left then right; segments,
        |  sums and counts from the parents' split records
        v
    splittable children (depth, 2 * min_data_in_leaf rows, 2 * min_child_weight hessian)
        |  a parent both of whose children are leaves is left unpartitioned where the
        |  grower defers final partitions; the others are partitioned, stably:
        |      [ left rows | right rows ] in each parent's segment
        v
    every splittable child scanned:
        large ones (LARGE_ROWS_PER_BIN): histograms over all threads, the smaller of
            two large siblings built and the other = parent - it; features scanned
            over all threads
        the others from their rows (one scratch histogram per thread, a node at a time)
        v
    the next parents: the children with a split, in id order

with the kernels the grower's loop calls for the same steps (:func:`.partition._split_whole`,
:func:`.histogram._build`, :func:`.split_scan._scan`, :func:`.row_scan.scan_segment`), so
the nodes, the row
partition and the deferred splits are the loop's bit for bit whatever the threads; the
grower renumbers the nodes as the loop numbers them when it handed over nodes of
several levels (gpuboost.tree.grower.TreeGrower._number_by_levels).

Categorical features (:class:`CategoricalLevels`): every scanned node's histogram is also
scanned by the categorical scan's per-node kernel (:func:`.categorical_scan.scan_node`),
the better split kept as the loop keeps it, and categorical splits partitioned by
:func:`.partition.split_by_set`; a tree's root is then scanned by the loop, whose scan
estimates the tree's ``cat_smooth`` (docs/DESIGN.md, "Categorical features").

Not here (the grower's loop does them): feature masks drawn per level or node, monotone
and interaction constraints, a leaf budget (``max_leaves``), sparse or bundled bins.
"""

import numpy as np

from ...core.categorical import SPLIT_SET_WORDS, CategoricalParams
from ...core.dtypes import HIST_FIELDS
from .categorical_scan import _DEFAULT_LEFT as _CAT_DEFAULT_LEFT
from .categorical_scan import _FEATURE as _CAT_FEATURE
from .categorical_scan import _INT_COLUMNS as _CAT_INT_COLUMNS
from .categorical_scan import _LEFT as _CAT_LEFT
from .categorical_scan import _OVERFLOW as _CAT_OVERFLOW
from .categorical_scan import scan_node as scan_categorical_node
from .histogram import WIDE_CELL_FIELDS, _build, wide_scratch
from .jit import kernel, prange, sized, threads
from .partition import _split_whole, split_by_set
from .row_scan import clear_rows, scan_segment, scratch_cells
from .split_scan import (
    _BIN,
    _CHUNKS_PER_THREAD,
    _DEFAULT_LEFT,
    _FEATURE,
    _LEFT,
    INT_COLUMNS,
    _leaf_score,
    _scan,
    scan_arguments,
    words_per_feature,
)

__all__ = [
    "CategoricalLevels",
    "add_children",
    "grow_levels_from_rows",
    "levels_from_rows_max_rows",
    "next_frontier",
    "NODE_COLUMNS",
]

#: Trees of at most this many rows times features are grown whole here, root included
#: (the large nodes near the root with histograms over every thread and siblings by
#: subtraction, as the grower's loop builds them, without its Python per level). Above,
#: the loop grows the tree and hands over the nodes it would scan from their rows.
#: Measured on 2 cores (Intel Xeon, AVX-512; 2026-11-29; benchmarks/small_levels.py
#: --whole-rows), binary, depth 6, 20 features, ms a round with 2**19 against grown
#: whole: 50k rows 9.64 against 6.72, 100k 10.53 against 8.06, 200k 16.89 against 14.37;
#: 500k x 28 depth 8 65.0 against 63.4 (not raised that far: a level's large nodes keep
#: a histogram each, at most rows / 1,024 of them).
LEVELS_FROM_ROWS_MAX_CELLS = 1 << 22

#: Children of at least this many rows per bin (``n_bins``) have their histograms built
#: over every thread, rows cut into equal ranges whatever the nodes, and where both
#: children of a parent are this large, the smaller one only, its sibling by subtraction
#: from the parent's (:func:`_large_histograms`); then their features are scanned over
#: every thread. A node per thread would leave a thread idle while another adds the rows
#: of a large node, near the root where nodes are few and of unequal sizes. Measured on
#: 2 cores (Intel Xeon, AVX-512; 2026-11-29), 20 features, depth 6, 255 bins, best of 10
#: runs per round: 25k rows 3.88 ms a node per thread against 3.35 ms with this path
#: above 1,024 rows (4.87 ms above 2,048); 10k rows 2.38 against 2.46 ms, 100k rows
#: 8.08 against 7.89 ms (both within the noise).
LARGE_ROWS_PER_BIN = 4

#: The node-table columns the kernel reads and writes, in its argument order
#: (gpuboost.tree.grower.NodeTable's names).
NODE_COLUMNS = (
    "begin",
    "end",
    "depth",
    "count",
    "left",
    "right",
    "feature",
    "bin",
    "default_left",
    "gain",
    "sums",
    "left_sums",
    "left_count",
)


@kernel
def _can_split(count, sum_hessians, depth, twice_data, twice_weight, scale_hessians, max_depth):
    """The grower's can-split rule (``GradientRecords.can_split`` and ``max_depth``): at
    least ``2 * min_data_in_leaf`` rows and ``2 * min_child_weight`` hessian, and a depth
    below ``max_depth`` (0: no limit)."""
    return (
        count >= twice_data
        and np.float64(sum_hessians) / scale_hessians >= twice_weight
        and (max_depth == 0 or depth < max_depth)
    )


@kernel
def add_children(
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
):
    """The children of ``frontier[:n_frontier]`` as the grower's
    ``NodeTable.add_children`` makes them: ids ``size, size + 1, ...`` in pairs, left then
    right, written to ``level[:2 * n_frontier]``; their segments from the parents' left
    counts, depths, sums (every column) and counts from the split records, no split yet;
    the parents' ``left`` and ``right`` set."""
    for i in range(n_frontier):
        parent = frontier[i]
        lo = size + 2 * i
        hi = lo + 1
        level[2 * i], level[2 * i + 1] = lo, hi
        middle = begin[parent] + left_count[parent]
        begin[lo], end[lo] = begin[parent], middle
        begin[hi], end[hi] = middle, end[parent]
        depth[lo] = depth[hi] = depth[parent] + 1
        for field in range(sums.shape[1]):
            sums[lo, field] = left_sums[parent, field]
            sums[hi, field] = sums[parent, field] - left_sums[parent, field]
        count[lo] = left_count[parent]
        count[hi] = count[parent] - left_count[parent]
        for child in (lo, hi):
            left[child] = right[child] = feature[child] = bin_[child] = -1
        left[parent], right[parent] = lo, hi


@kernel
def next_frontier(level, n_level, feature, rows, frontier, frontier_row):
    """The nodes of ``level[:n_level]`` that have a split, in order, into ``frontier``,
    and their ``rows`` (a histogram's row, -1: none) into ``frontier_row``; returns their
    number."""
    n_next = 0
    for i in range(n_level):
        if feature[level[i]] >= 0:
            frontier[n_next] = level[i]
            frontier_row[n_next] = rows[i]
            n_next += 1
    return n_next


@kernel
def _is_categorical(left_sets, node):
    """Whether ``node``'s split is categorical (a left set with members)."""
    for word in range(left_sets.shape[1]):
        if left_sets[node, word] != 0:
            return True
    return False


@kernel
def _better_of(out_int, gain, cat_int, cat_gain, cat_set, left_set):
    """A node's split between its best numeric one (``out_int`` (INT_COLUMNS,), ``gain``;
    IN, OUT) and its best categorical one (``cat_int``, ``cat_gain``, ``cat_set``:
    :func:`.categorical_scan.scan_node`'s), as ``HistogramSplitter.find_best_splits``
    chooses: the larger gain, ties to the lower feature. Writes the chosen split's bins
    going left to ``left_set`` (zeros: numeric) and returns the node's gain: inf where
    the categorical sums overflowed float64 (no split; the caller's overflow rule)."""
    for word in range(left_set.shape[0]):
        left_set[word] = 0
    if cat_int[_CAT_OVERFLOW] == 1:
        out_int[_FEATURE] = -1
        return np.inf
    feature = cat_int[_CAT_FEATURE]
    numeric_feature = out_int[_FEATURE]
    numeric_gain = gain if numeric_feature >= 0 else -np.inf
    if feature < 0 or not (
        cat_gain > numeric_gain or (cat_gain == numeric_gain and feature < numeric_feature)
    ):
        return gain
    out_int[_FEATURE] = feature
    out_int[_BIN] = 0  # unused by categorical splits
    out_int[_DEFAULT_LEFT] = cat_int[_CAT_DEFAULT_LEFT]
    for field in range(3):
        out_int[_LEFT + field] = cat_int[_CAT_LEFT + field]
    for word in range(left_set.shape[0]):
        left_set[word] = cat_set[word]
    return cat_gain


@kernel
def _with_categorical(hist, settings, scratch, thread, out_int, gain, left_set):
    """:func:`_better_of` a node's numeric split (``out_int``, ``gain``) and its best
    categorical one, :func:`.categorical_scan.scan_node` of ``hist`` with ``settings``
    (its arguments from ``n_value_bins`` to ``use_mask``, the features first) and row
    ``thread`` of the scratch arrays ``scratch`` (``keys, order, rank, prefix, cat_int,
    cat_set``, a row per thread); returns the node's gain."""
    keys, order, rank, prefix, cat_int, cat_set = scratch
    cat_gain = scan_categorical_node(
        hist,
        settings[0],  # the columns of hist are the features
        *settings,
        keys[thread],
        order[thread],
        rank[thread],
        prefix[thread],
        cat_int[thread],
        cat_set[thread],
    )
    return _better_of(out_int, gain, cat_int[thread], cat_gain, cat_set[thread], left_set)


@kernel(parallel=True)
def _grow_levels(
    X_binned,
    X_binned_columns,
    gradients,
    hessians,
    sample_indices,
    n_bins,
    scale_gradients,
    scale_hessians,
    n_value_bins,
    missing_bin,
    reg_lambda,
    reg_alpha,
    max_delta_step,
    min_child_weight,
    min_data_in_leaf,
    gamma,
    feature_mask,
    use_mask,
    max_depth,
    defer_final,
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
    cells,
    wide,
    large_rows,
    scan_frontier,
    scanned,
    unsplit,
    n_unsplit,
    left_sets,
    cat_features,
    cat_n_value_bins,
    mvm_gamma,
    max_cat_to_onehot,
    max_cat_threshold,
    cat_l2,
    min_data_per_group,
    smoothing,
    cat_mask,
    cat_use_mask,
):
    """Expand the levels from ``frontier[:n_frontier]`` (IN, OUT) while the node table
    (capacity ``len(begin)``) has room for a level's children; returns ``(size,
    n_frontier, n_unsplit, overflowed)``: the nodes, the level still to expand (0: the
    tree is done), the deferred parents in ``unsplit`` (OUT), the first scanned node
    whose score or gain overflowed float64 (-1: none). With ``scan_frontier`` the frontier's
    nodes are scanned first (their sums from their rows; the ones that cannot split
    left as leaves). ``scanned`` (OUT) marks the nodes scanned. Each thread scans a small
    node at a time from its rows in its scratch histogram ``cells[thread]``
    (:func:`.row_scan.scan_segment`; zero, and left zero: :func:`.row_scan.scratch_cells`);
    large nodes take :func:`_large_histograms` and the scan over all threads.

    Categorical features ``cat_features`` (none: empty): ``feature_mask`` leaves them
    out of the numeric scan, and each scanned node's histogram (a large node's, or the
    scratch of a small one before it is cleared) is also scanned by
    :func:`.categorical_scan.scan_node` (their ``cat_n_value_bins``, the many-vs-many
    splits' ``mvm_gamma``, the categorical parameters, each feature's ``cat_smooth`` in
    ``smoothing``, the tree's features ``cat_mask`` where ``cat_use_mask``); the better
    split is kept (:func:`_better_of`), its bins going left in ``left_sets`` (OUT; zeros:
    numeric), and categorical splits are partitioned by :func:`.partition.split_by_set`
    and never deferred."""
    capacity = begin.shape[0]
    n_categorical = cat_features.shape[0]
    cat_keys = np.empty((cells.shape[0], n_bins), dtype=np.float64)
    cat_order = np.empty((cells.shape[0], n_bins), dtype=np.int64)
    cat_rank = np.empty((cells.shape[0], n_bins), dtype=np.int64)
    cat_prefix = np.zeros((cells.shape[0], n_bins + 1, 3), dtype=np.int64)
    cat_int = np.empty((cells.shape[0], _CAT_INT_COLUMNS), dtype=np.int64)
    cat_set = np.empty((cells.shape[0], SPLIT_SET_WORDS), dtype=np.uint32)
    cat_scratch = (cat_keys, cat_order, cat_rank, cat_prefix, cat_int, cat_set)
    cat_settings = (
        cat_features,
        cat_n_value_bins,
        missing_bin,
        scale_gradients,
        scale_hessians,
        reg_lambda,
        reg_alpha,
        max_delta_step,
        min_child_weight,
        min_data_in_leaf,
        gamma,
        mvm_gamma,
        max_cat_to_onehot,
        max_cat_threshold,
        cat_l2,
        min_data_per_group,
        smoothing,
        cat_mask,
        cat_use_mask,
    )
    n_threads = cells.shape[0]
    n_features = X_binned.shape[1]
    row_scratch = np.empty(sample_indices.shape[0], dtype=sample_indices.dtype)
    scratch_int = np.empty((n_threads, 4, n_bins), dtype=np.int64)
    scratch_float = np.empty((n_threads, 6, n_bins), dtype=np.float64)
    best_int = np.empty((n_threads, 5), dtype=np.int64)
    words = np.empty((n_threads, n_features, words_per_feature(n_bins)), dtype=np.uint64)
    no_monotone = np.zeros(1, dtype=np.int64)
    no_bounds = np.zeros((1, 2), dtype=np.float64)
    # The histograms of the previous level's large nodes, and the row of each frontier
    # node's in them (-1: none).
    kept = np.zeros((1, 1), dtype=np.int64)
    frontier_row = np.full(frontier.shape[0], -1, dtype=np.int64)
    twice_weight = 2 * min_child_weight
    twice_data = 2 * min_data_in_leaf
    # The nodes of the level being scanned, and which of them are.
    level = np.empty(capacity, dtype=np.int64)
    splittable = np.zeros(capacity, dtype=np.bool_)
    first = scan_frontier
    overflowed = -1
    while True:
        if first:
            # The frontier's own nodes: their sums, then their scan (no siblings).
            n_level = n_frontier
            paired = False
            for i in range(n_level):
                node = level[i] = frontier[i]
                total_g = np.int64(0)
                total_h = np.int64(0)
                for position in range(begin[node], end[node]):
                    row = sample_indices[position]
                    total_g += gradients[row]
                    total_h += hessians[row]
                sums[node, 0], sums[node, 1] = total_g, total_h
                count[node] = end[node] - begin[node]
                left[node] = right[node] = feature[node] = bin_[node] = -1
                left_sets[node] = 0
                scanned[node] = False
                splittable[i] = _can_split(
                    count[node],
                    sums[node, 1],
                    depth[node],
                    twice_data,
                    twice_weight,
                    scale_hessians,
                    max_depth,
                )
        else:
            if not (n_frontier > 0 and size + 2 * n_frontier <= capacity):
                break
            # The children of the frontier: ids size, size + 1, ... (left, right).
            n_level = 2 * n_frontier
            paired = True
            moved = np.empty(n_frontier, dtype=np.int64)
            n_moved = 0
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
            for i in range(n_frontier):
                parent = frontier[i]
                for position in (2 * i, 2 * i + 1):
                    child = level[position]
                    left_sets[child] = 0
                    scanned[child] = False
                    splittable[position] = _can_split(
                        count[child],
                        sums[child, 1],
                        depth[child],
                        twice_data,
                        twice_weight,
                        scale_hessians,
                        max_depth,
                    )
                if (
                    defer_final
                    and not (splittable[2 * i] or splittable[2 * i + 1])
                    and not _is_categorical(left_sets, parent)
                ):
                    unsplit[n_unsplit] = parent
                    n_unsplit += 1
                else:
                    moved[n_moved] = parent
                    n_moved += 1
            for k in prange(n_moved):
                parent = moved[k]
                if _is_categorical(left_sets, parent):
                    split_by_set(
                        X_binned_columns[feature[parent]],
                        sample_indices,
                        begin[parent],
                        end[parent],
                        left_sets[parent],
                        np.int64(default_left[parent]),
                        missing_bin,
                        row_scratch,
                    )
                else:
                    _split_whole(
                        X_binned_columns[feature[parent]],
                        sample_indices,
                        begin[parent],
                        end[parent],
                        bin_[parent],
                        np.int64(default_left[parent]),
                        missing_bin,
                        row_scratch,
                    )
        evaluated = np.flatnonzero(splittable[:n_level])  # positions in the level
        n_evaluated = evaluated.shape[0]
        out_int = np.empty((n_evaluated, INT_COLUMNS), dtype=np.int64)
        out_gain = np.empty(n_evaluated, dtype=np.float64)
        out_sets = np.zeros((n_evaluated, SPLIT_SET_WORDS), dtype=np.uint32)
        # Large nodes: histograms over every thread, then their scan (see the module
        # docstring); the others from their rows, a node per thread at a time.
        large = np.zeros(n_level, dtype=np.bool_)
        n_large = 0
        for k in range(n_evaluated):
            if count[level[evaluated[k]]] >= large_rows:
                large[evaluated[k]] = True
                n_large += 1
        kept_row = np.full(n_level, -1, dtype=np.int64)
        if n_large > 0:
            kept, kept_row = _large_histograms(
                X_binned,
                gradients,
                hessians,
                sample_indices,
                n_bins,
                begin,
                end,
                count,
                level,
                n_level,
                paired,
                large,
                n_large,
                kept,
                frontier_row,
                wide,
            )
            large_int = np.empty((n_large, INT_COLUMNS), dtype=np.int64)
            large_gain = np.empty(n_large, dtype=np.float64)
            large_mask = np.empty((n_large if use_mask else 1, n_features), dtype=np.bool_)
            for row in range(large_mask.shape[0]):
                large_mask[row] = feature_mask[0]
            _scan(
                kept.reshape((n_large, n_features, n_bins, HIST_FIELDS)),
                scale_gradients,
                scale_hessians,
                n_value_bins,
                missing_bin,
                reg_lambda,
                reg_alpha,
                max_delta_step,
                min_child_weight,
                min_data_in_leaf,
                gamma,
                large_mask,
                use_mask,
                no_monotone,
                False,
                no_bounds,
                max(1, min(n_large * n_features, _CHUNKS_PER_THREAD * n_threads)),
                large_int,
                large_gain,
            )
            large_sets = np.zeros((n_large, SPLIT_SET_WORDS), dtype=np.uint32)
            if n_categorical > 0:
                large_histograms = kept.reshape((n_large, n_features, n_bins, HIST_FIELDS))
                used = max(1, min(n_threads, n_large))
                for thread in prange(used):
                    for row in range(thread, n_large, used):
                        large_gain[row] = _with_categorical(
                            large_histograms[row],
                            cat_settings,
                            cat_scratch,
                            thread,
                            large_int[row],
                            large_gain[row],
                            large_sets[row],
                        )
            for k in range(n_evaluated):
                row = kept_row[evaluated[k]]
                if row >= 0:
                    out_int[k] = large_int[row]
                    out_gain[k] = large_gain[row]
                    out_sets[k] = large_sets[row]
        small = np.empty(n_evaluated - n_large, dtype=np.int64)
        n_small = 0
        for k in range(n_evaluated):
            if not large[evaluated[k]]:
                small[n_small] = k
                n_small += 1
        used_threads = max(1, min(n_threads, n_small))
        for thread in prange(used_threads):
            for j in range(thread, n_small, used_threads):
                k = small[j]
                node = level[evaluated[k]]
                out_gain[k] = scan_segment(
                    X_binned,
                    gradients,
                    hessians,
                    sample_indices,
                    begin[node],
                    end[node],
                    n_bins,
                    cells[thread],
                    scale_gradients,
                    scale_hessians,
                    n_value_bins,
                    missing_bin,
                    reg_lambda,
                    reg_alpha,
                    max_delta_step,
                    min_child_weight,
                    min_data_in_leaf,
                    gamma,
                    feature_mask[0],
                    use_mask,
                    no_monotone,
                    False,
                    -np.inf,
                    np.inf,
                    words[thread],
                    scratch_int[thread],
                    scratch_float[thread],
                    best_int[thread],
                    out_int[k],
                    n_categorical == 0,
                )
                if n_categorical > 0:
                    out_gain[k] = _with_categorical(
                        cells[thread].reshape((n_features, n_bins, WIDE_CELL_FIELDS)),
                        cat_settings,
                        cat_scratch,
                        thread,
                        out_int[k],
                        out_gain[k],
                        out_sets[k],
                    )
                    clear_rows(
                        cells[thread], X_binned, sample_indices, begin[node], end[node], n_bins
                    )
        # The split records, as the loop's set_splits writes them (no split: feature and
        # bin -1, gain -inf, zero sums); the first node whose own score or best gain
        # overflowed float64 (GradientRecords.check_scores's rule).
        for k in range(n_evaluated):
            node = level[evaluated[k]]
            scanned[node] = True
            if overflowed < 0:
                score = _leaf_score(
                    np.float64(sums[node, 0]) / scale_gradients,
                    np.float64(sums[node, 1]) / scale_hessians,
                    reg_lambda,
                    reg_alpha,
                    max_delta_step,
                )
                if not np.isfinite(score) or out_gain[k] == np.inf:
                    overflowed = node
            found = out_int[k, _FEATURE] >= 0
            feature[node] = out_int[k, _FEATURE] if found else -1
            bin_[node] = out_int[k, _BIN] if found else -1
            default_left[node] = found and out_int[k, _DEFAULT_LEFT] == 1
            gain[node] = out_gain[k] if found else -np.inf
            left_sums[node, 0] = out_int[k, _LEFT] if found else 0
            left_sums[node, 1] = out_int[k, _LEFT + 1] if found else 0
            left_count[node] = out_int[k, _LEFT + 2] if found else 0
            for word in range(SPLIT_SET_WORDS):
                left_sets[node, word] = out_sets[k, word] if found else 0
        # The next level's parents, with the row of their histogram among the large
        # nodes' (-1: none).
        n_next = next_frontier(level, n_level, feature, kept_row, frontier, frontier_row)
        if not first:
            size += n_level
        first = False
        n_frontier = n_next
    return size, n_frontier, n_unsplit, overflowed


@kernel
def _large_histograms(
    X_binned,
    gradients,
    hessians,
    sample_indices,
    n_bins,
    begin,
    end,
    count,
    level,
    n_level,
    paired,
    large,
    n_large,
    parents,
    parent_row,
    wide,
):
    """The histograms of the large nodes of a level (``large[i]`` for node ``level[i]``),
    in one :func:`.histogram._build` over all threads. With ``paired`` the level holds
    siblings (``level[2 i]``, ``level[2 i + 1]``: the children of frontier node ``i``);
    where both are large and their parent's histogram is row ``parent_row[i] >= 0`` of
    ``parents`` (the previous level's), the child of fewer rows is built and its sibling
    is the parent's minus it (exact integers: the histogram it would have from its rows).
    Returns the histograms (n_large, n_cells) and each node's row in them (n_level,; -1:
    not large)."""
    n_cells = X_binned.shape[1] * n_bins * HIST_FIELDS
    built = np.empty(n_large, dtype=np.int64)  # level positions built from rows: pairs first
    derived = np.empty(n_large, dtype=np.int64)
    pair_rows = np.empty(n_large, dtype=np.int64)
    from_parent = np.zeros(n_level, dtype=np.bool_)
    n_pairs = 0
    if paired:
        for i in range(n_level // 2):
            lo, hi = 2 * i, 2 * i + 1
            if large[lo] and large[hi] and parent_row[i] >= 0:
                smaller = lo if count[level[lo]] <= count[level[hi]] else hi
                built[n_pairs] = smaller
                derived[n_pairs] = lo + hi - smaller
                pair_rows[n_pairs] = parent_row[i]
                from_parent[lo] = from_parent[hi] = True
                n_pairs += 1
    n_built = n_pairs
    for i in range(n_level):
        if large[i] and not from_parent[i]:
            built[n_built] = i
            n_built += 1
    begins = np.empty(n_built, dtype=np.int64)
    ends = np.empty(n_built, dtype=np.int64)
    for k in range(n_built):
        begins[k] = begin[level[built[k]]]
        ends[k] = end[level[built[k]]]
    histograms = np.empty((n_large, n_cells), dtype=np.int64)
    _build(
        X_binned,
        gradients,
        hessians,
        sample_indices,
        begins,
        ends,
        n_bins,
        histograms,
        wide,
        parents,
        pair_rows[:n_pairs],
    )
    row_of = np.full(n_level, -1, dtype=np.int64)
    for k in range(n_built):
        row_of[built[k]] = k
    for k in range(n_pairs):
        row_of[derived[k]] = n_built + k
    return histograms, row_of


class CategoricalLevels:
    """The categorical features of :func:`grow_levels_from_rows` and their scan's
    parameters (:func:`.categorical_scan.scan_node`'s).

    Parameters
    ----------
    features : ndarray of shape (n_categorical,), int
        Increasing.
    n_value_bins : ndarray of shape (n_categorical,), int
    cat_params : CategoricalParams
    smoothing : ndarray of shape (n_categorical,), float64, or None
        Each feature's ``cat_smooth`` in this tree (None: ``cat_params.cat_smooth``).
    feature_mask : ndarray of shape (n_features,), bool, or None
        The features a node's categorical scan may split on (None: all).
    """

    def __init__(self, features, n_value_bins, cat_params, smoothing=None, feature_mask=None):
        self.features = np.ascontiguousarray(features, dtype=np.int64)
        self.n_value_bins = np.ascontiguousarray(n_value_bins, dtype=np.int64)
        self.cat_params = cat_params
        self.smoothing = np.ascontiguousarray(
            np.full(len(self.features), cat_params.cat_smooth) if smoothing is None else smoothing,
            dtype=np.float64,
        )
        self.feature_mask = feature_mask

    @classmethod
    def none(cls):
        """No categorical feature."""
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), _NO_CATEGORIES)

    def arguments(self, n_features, many_vs_many_gamma):
        """The kernel's categorical arguments, from ``cat_features`` on
        (``many_vs_many_gamma``: ``SplitParams.many_vs_many``'s ``gamma``)."""
        use_mask = self.feature_mask is not None
        mask = self.feature_mask if use_mask else np.ones(n_features, dtype=np.bool_)
        p = self.cat_params
        return (
            self.features,
            self.n_value_bins,
            float(many_vs_many_gamma),
            int(p.max_cat_to_onehot),
            int(p.max_cat_threshold),
            float(p.cat_l2),
            int(p.min_data_per_group),
            self.smoothing,
            np.ascontiguousarray(mask, dtype=np.bool_),
            use_mask,
        )


#: The parameters of :meth:`CategoricalLevels.none` (never read: no feature).
_NO_CATEGORIES = CategoricalParams()


def levels_from_rows_max_rows(n_samples, n_features, row_scan_max_rows):
    """The nodes whose subtrees are grown here, in a tree of ``n_samples`` rows: all
    below the root when the rows times ``n_features`` are at most
    :data:`LEVELS_FROM_ROWS_MAX_CELLS`, else those the loop would scan from their rows
    anyway (``row_scan_max_rows``)."""
    if n_samples * n_features <= LEVELS_FROM_ROWS_MAX_CELLS:
        return max(int(n_samples), int(row_scan_max_rows))
    return int(row_scan_max_rows)


def grow_levels_from_rows(
    X_binned,
    X_binned_columns,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    n_bins,
    n_value_bins,
    missing_bin,
    scale_gradients,
    scale_hessians,
    params,
    feature_mask,
    max_depth,
    defer_final,
    columns,
    size,
    parents,
    scanned,
    unsplit,
    scan_parents=False,
    categorical=None,
):
    """Expand the depthwise subtrees of ``parents`` while the node table has room.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order  # IN
    X_binned_columns : ndarray of shape (n_features, n_rows), uint8  # IN
    quantized_gradients, quantized_hessians : ndarray of shape (n_rows,), int32  # IN
    sample_indices : ndarray of shape (n_samples,), int32  # IN, OUT
        The row partition.
    n_bins, n_value_bins, missing_bin, scale_gradients, scale_hessians, params
        As for ``find_best_splits_of_rows``; ``params.monotone`` must be empty.
    feature_mask : ndarray of shape (n_features,), bool, or None
        The features every node may split on (None: all); with ``categorical``, the
        numeric scan's (the categorical features left out).
    max_depth : int
        0: no limit.
    defer_final : bool
        Leave the rows of a split whose children are both leaves unpartitioned.
    columns : dict of ndarrays  # IN, OUT
        The node table's columns :data:`NODE_COLUMNS` (one capacity; ``sums`` and
        ``left_sums`` (capacity, 2)).
    size : int
        The nodes in the table.
    parents : ndarray of shape (n_parents,), int64
        The nodes to expand: admissible leaves in id order (of any depths), with their
        splits found; or with ``scan_parents`` nodes whose segments, depths and counts
        are all the table holds of them (a tree's root): their sums and splits are
        found first, and those that cannot split stay leaves (feature -1).
    scanned : ndarray of shape (capacity,), bool  # OUT
        The nodes scanned.
    unsplit : ndarray of shape (capacity,), int64  # OUT
        The deferred parents, from position 0.
    categorical : CategoricalLevels, optional
        The categorical features and their scan's parameters (None: every feature
        numeric); ``columns`` then also hold the parents' ``left_sets``, and the kernel
        writes the new nodes'.

    Returns
    -------
    size : int
    frontier : ndarray of int64
        The nodes still to expand when the table ran out of room (empty: done).
    n_unsplit : int
    overflowed : int
        The first scanned node whose own score ``S(G, H)`` is not finite or whose best
        gain is inf (the float64 sums overflowed; -1: none).
    """
    assert not params.monotone, "monotone constraints take the grower's loop"
    n_threads = max(1, threads())
    if categorical is None:
        categorical = CategoricalLevels.none()
    frontier = np.zeros(len(columns["begin"]), dtype=np.int64)
    frontier[: len(parents)] = parents
    arguments = scan_arguments(
        n_value_bins,
        missing_bin,
        scale_gradients,
        scale_hessians,
        params,
        1,
        None if feature_mask is None else np.asarray(feature_mask).reshape(1, -1),
        None,
    )[:12]  # up to use_mask: no monotone constraints
    size, n_frontier, n_unsplit, overflowed = sized(_grow_levels)(
        np.ascontiguousarray(X_binned),
        X_binned_columns,
        quantized_gradients,
        quantized_hessians,
        sample_indices,
        int(n_bins),
        *arguments,
        int(max_depth),
        bool(defer_final),
        *(columns[name] for name in NODE_COLUMNS),
        frontier,
        len(parents),
        int(size),
        scratch_cells(n_threads, X_binned.shape[1], n_bins),
        wide_scratch(n_threads, X_binned.shape[1] * n_bins * HIST_FIELDS),
        LARGE_ROWS_PER_BIN * int(n_bins),
        bool(scan_parents),
        scanned,
        unsplit,
        0,
        columns["left_sets"],
        *categorical.arguments(X_binned.shape[1], params.many_vs_many().gamma),
    )
    return int(size), frontier[:n_frontier].copy(), int(n_unsplit), int(overflowed)
