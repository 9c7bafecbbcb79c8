"""Histogram primitive of the compiled CPU backend (NumPy reference and naive loop:
:mod:`gpuboost.backends.numpy.histogram`; CUDA: ``cuda/histogram.cu``).

One pass over the rows of every node of a batch, row-major: each row's quantized
gradient and hessian are added to the cell of its bin in every feature, as exact int64
sums (docs/DESIGN.md, "Quantization"), so the result is the reference's bit for bit
whatever the order of rows and threads.

Threads: the batch's positions (the nodes' segments laid end to end) are cut into one
equal range per thread. A node lying wholly inside a thread's range is summed by that
thread straight into the output; a node cut by a range boundary (at most two per thread)
is summed into the thread's own scratch histogram, and the scratch histograms are added
into the output afterwards. So the work is balanced by rows whatever the node sizes, and
no two threads ever write the same cell.

Several outputs (:func:`build_output_histograms`, vector-leaf trees): each cell holds
every output's sums side by side, the row counts apart (gpuboost.core.vector_split.
OutputHistograms), so a row's bin of a feature is looked up once for all ``k`` outputs,
its ``2k`` increments added as a few 256-bit vectors and its count once (4 outputs: 2
vector additions and a count where ``k`` one-output builds take 4 lookups and 4
additions: 1.4-1.7x faster, 150k rows x 20 features, 2 threads). The batch's cells are
that layout, so whole nodes are summed straight into it; the threads as above.

Sparse rows (:func:`build_sparse_histograms`): each row lists the histogram cells of its
entries that are not at their feature's *default bin* (a CSR layout, e.g. the
non-default members of feature bundles, gpuboost.data.bundling); only those are added,
and each feature's default bin is then the node's total minus the feature's other bins
(exact int64 arithmetic, so the histograms are those of the dense bins, bit for bit).
Nodes in parallel: the work of a node is its rows' few entries plus one pass over its
histogram (zeroing; the default bins take one cell per feature).
"""

import threading

import numpy as np

from ...core.bin_edges import flat_edges
from ...core.dtypes import HIST_DTYPE, HIST_FIELDS
from .binning import entry_bin
from .jit import kernel, prange, prefetch, sized, threads, vector_add4, vector_add_cell
from .ranges import CUT_NODES_PER_THREAD, equal_ranges, segment_offsets, thread_pieces

__all__ = [
    "build_histograms",
    "build_children_histograms",
    "build_output_histograms",
    "build_sparse_histograms",
    "column_cells",
    "wide_zeros",
    "wide_scratch",
    "WIDE_CELL_FIELDS",
]

#: Fields of a cell of the scratch histograms: (gradient, hessian, count, padding), 32
#: bytes, so a row adds to a cell with one 256-bit vector addition
#: (:func:`gpuboost.backends.cpu.jit.vector_add_cell`) instead of three scalar ones.
WIDE_CELL_FIELDS = 4
#: Rows ahead whose bins, gradient and hessian are prefetched: rows of deep nodes lie
#: scattered over the whole matrix, so each would otherwise wait for memory.
PREFETCH_ROWS_AHEAD = 16
#: A node whose rows times features reach this many times the cells of a histogram is
#: summed in wide cells and copied out; a smaller one straight into the output (the
#: copy would cost more than the narrower additions save).
_WIDE_MIN_UPDATES_PER_CELL = 1


#: Bytes of the part of a histogram one pass over the rows updates: with more features
#: than fit, the features are taken in blocks, one pass each, so that the cells being
#: updated stay in the core's cache (wide data, e.g. 300 features x 256 bins x 32 bytes
#: = 2.4 MB, would otherwise miss it on most updates).
HISTOGRAM_BLOCK_BYTES = 1 << 19


@kernel
def _feature_block(n_features, n_bins, cell_bytes):
    """Features per pass (see :data:`HISTOGRAM_BLOCK_BYTES`)."""
    return np.uint64(max(1, min(n_features, HISTOGRAM_BLOCK_BYTES // (n_bins * cell_bytes))))


#: Rows whose updates are interleaved, feature by feature: two rows in the same bin of a
#: feature update the same cell, and the second addition waits for the first one's
#: store; with two rows in flight the CPU overlaps independent ones. About 2.3x faster
#: on features whose rows fall in a few bins (skewed data), the same on uniform bins
#: (four rows: 3x on the former, but 5 % slower on the latter, short of registers).
ROWS_INTERLEAVED = 2


@kernel
def _prefetch_rows(bins, gradients, hessians, sample_indices, position, n_features, first):
    """Prefetch the bins (from feature ``first``), gradient and hessian of the
    :data:`ROWS_INTERLEAVED` rows at ``position`` (the caller checks they exist)."""
    for k in range(ROWS_INTERLEAVED):
        ahead = np.uint64(sample_indices[position + k])
        prefetch(bins, ahead * n_features + first)
        prefetch(gradients, ahead)
        prefetch(hessians, ahead)


@kernel
def _add_cell(cells, cell, gradient, hessian, wide):
    """``cells[cell:cell + 3] += (gradient, hessian, 1)``: one 4 x int64 vector addition
    into a wide cell (:func:`~gpuboost.backends.cpu.jit.vector_add_cell`), else three."""
    if wide:
        vector_add_cell(cells, cell, gradient, hessian)
    else:
        cells[cell] += gradient
        cells[cell + np.uint64(1)] += hessian
        cells[cell + np.uint64(2)] += np.int64(1)


@kernel
def _accumulate(X_binned, gradients, hessians, sample_indices, start, stop, cells, n_bins, wide):
    """Add rows ``sample_indices[start:stop]`` to one node's flat histogram ``cells``:
    ``(n_features * n_bins * 3,)`` int64, or with ``wide`` of wide cells
    ``(n_features * n_bins * 4,)``, 32-byte aligned (the branch on ``wide`` is
    loop-invariant: the compiler takes it out of the loops)."""
    n_features = np.uint64(X_binned.shape[1])
    width = np.uint64(n_bins)
    fields = np.uint64(WIDE_CELL_FIELDS if wide else HIST_FIELDS)
    bins = X_binned.ravel()
    block = _feature_block(n_features, n_bins, 8 * (WIDE_CELL_FIELDS if wide else HIST_FIELDS))
    for first in range(np.uint64(0), n_features, block):
        last = min(n_features, first + block)
        grouped = start
        while grouped + ROWS_INTERLEAVED <= stop:
            position = grouped
            if position + PREFETCH_ROWS_AHEAD + ROWS_INTERLEAVED <= stop:
                _prefetch_rows(
                    bins,
                    gradients,
                    hessians,
                    sample_indices,
                    position + PREFETCH_ROWS_AHEAD,
                    n_features,
                    first,
                )
            # Unsigned indices: no negative-index wraparound code in the inner loop.
            row0 = np.uint64(sample_indices[position])
            row1 = np.uint64(sample_indices[position + 1])
            g0, h0 = np.int64(gradients[row0]), np.int64(hessians[row0])
            g1, h1 = np.int64(gradients[row1]), np.int64(hessians[row1])
            for feature in range(first, last):
                base = feature * width
                cell0 = (base + np.uint64(X_binned[row0, feature])) * fields
                cell1 = (base + np.uint64(X_binned[row1, feature])) * fields
                _add_cell(cells, cell0, g0, h0, wide)
                _add_cell(cells, cell1, g1, h1, wide)
            grouped += ROWS_INTERLEAVED
        for position in range(grouped, stop):
            row = np.uint64(sample_indices[position])
            gradient = np.int64(gradients[row])
            hessian = np.int64(hessians[row])
            for feature in range(first, last):
                cell = (feature * width + np.uint64(X_binned[row, feature])) * fields
                _add_cell(cells, cell, gradient, hessian, wide)


@kernel
def _move_wide(wide, histogram, add):
    """``histogram (= or +=) wide`` cell by cell (dropping the padding); zeroes ``wide``."""
    n_cells = histogram.shape[0] // HIST_FIELDS
    for cell in range(n_cells):
        for field in range(HIST_FIELDS):
            value = wide[cell * WIDE_CELL_FIELDS + field]
            if add:
                histogram[cell * HIST_FIELDS + field] += value
            else:
                histogram[cell * HIST_FIELDS + field] = value
        for field in range(WIDE_CELL_FIELDS):
            wide[cell * WIDE_CELL_FIELDS + field] = 0


@kernel
def _is_first_piece(scratch_node, owner, node):
    """Whether no thread before ``owner`` holds a piece of the cut node ``node``."""
    for earlier in range(owner):
        for slot in range(CUT_NODES_PER_THREAD):
            if scratch_node[earlier, slot] == node:
                return False
    return True


@kernel(parallel=True)
def _build(
    X_binned,
    gradients,
    hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    out,
    wide,
    parents,
    parent_rows,
):
    """Fill ``out`` (n_nodes (+ n_pairs), n_cells) with the histograms of the segments,
    and, with ``n_pairs = len(parent_rows) > 0``, ``out[n_nodes + i]`` with
    ``parents[parent_rows[i]] - out[i]``.

    ``wide`` (n_threads, 1 + 2, n_features * n_bins * 4) int64, zero, 32-byte aligned
    rows: per thread one wide histogram for whole nodes and one per cut node; left zero.
    Two parallel loops: the rows of each thread's range; then, each thread over its own
    range of cells, the sums of the cut nodes' pieces and the subtractions.
    """
    n_nodes = begins.shape[0]
    n_pairs = parent_rows.shape[0]
    n_cells = out.shape[1]
    n_features = X_binned.shape[1]
    n_threads = wide.shape[0]
    offsets = segment_offsets(begins, ends)
    bounds = equal_ranges(offsets, n_threads)
    for node in range(n_nodes):
        if ends[node] == begins[node]:
            out[node, :] = 0
    wide_min_rows = _WIDE_MIN_UPDATES_PER_CELL * (n_cells // HIST_FIELDS) // n_features
    scratch_node = np.full((n_threads, CUT_NODES_PER_THREAD), -1, dtype=np.int64)
    for thread in prange(n_threads):
        pieces = np.empty((n_nodes, 4), dtype=np.int64)
        used = 0
        for piece in range(
            thread_pieces(offsets, begins, bounds[thread], bounds[thread + 1], pieces)
        ):
            node, start, stop = pieces[piece, 0], pieces[piece, 1], pieces[piece, 2]
            whole = pieces[piece, 3] == 1
            # A large whole node in the thread's wide histogram (moved to ``out`` after),
            # a small one straight into ``out``, a cut node's piece in a wide scratch one.
            in_wide = not whole or stop - start >= wide_min_rows
            if not whole:
                scratch_node[thread, used] = node
                target = wide[thread, 1 + used]
                used += 1
            elif in_wide:
                target = wide[thread, 0]
            else:
                out[node, :] = 0
                target = out[node]
            _accumulate(
                X_binned, gradients, hessians, sample_indices, start, stop, target, n_bins, in_wide
            )
            if whole and in_wide:
                _move_wide(target, out[node], False)
    if n_pairs == 0 and scratch_node.max() < 0:
        return
    cells_per_histogram = n_cells // HIST_FIELDS
    for thread in prange(n_threads):
        low = thread * cells_per_histogram // n_threads
        high = (thread + 1) * cells_per_histogram // n_threads
        # Cut nodes: the sum of their pieces (in thread order).
        for owner in range(n_threads):
            for slot in range(CUT_NODES_PER_THREAD):
                node = scratch_node[owner, slot]
                if node >= 0:
                    first_piece = _is_first_piece(scratch_node, owner, node)
                    _move_wide(
                        wide[owner, 1 + slot, low * WIDE_CELL_FIELDS : high * WIDE_CELL_FIELDS],
                        out[node, low * HIST_FIELDS : high * HIST_FIELDS],
                        not first_piece,
                    )
        # Siblings: parent minus the built child.
        for pair in range(n_pairs):
            parent = parents[parent_rows[pair]]
            for cell in range(low * HIST_FIELDS, high * HIST_FIELDS):
                out[n_nodes + pair, cell] = parent[cell] - out[pair, cell]


#: Vectors of the widest cells whose increments a row keeps in registers (16 fields: up
#: to 8 outputs); wider cells read them from memory (:func:`_add_row_from_memory`).
_REGISTER_VECTORS = 4


def _width_tag(fields):
    """The ``vectors`` argument of :func:`_accumulate_outputs` for cells of ``fields``:
    a tuple of ``fields / 4`` zeros up to :data:`_REGISTER_VECTORS`, one more zero for
    any wider cell (whose width the kernel reads from its scratch): five compiled
    variants whatever the number of outputs."""
    return (0,) * min(fields // 4, _REGISTER_VECTORS + 1)


@kernel
def _lane(pairs, row, n_sums, field):
    """Increment of field ``field`` of a row's cell: its sum, then 0 (the padding)."""
    return np.int64(pairs[row, field]) if field < n_sums else np.int64(0)


@kernel
def _row_bins(X_binned, row0, row1, feature, width):
    """The histogram bins (``feature * n_bins + bin``) of rows ``row0``, ``row1`` in
    ``feature``."""
    base = feature * width
    return base + np.uint64(X_binned[row0, feature]), base + np.uint64(X_binned[row1, feature])


@kernel
def _add_row_from_memory(cells, cell, lanes, n_vectors):
    """``cells[cell:cell + 4 * n_vectors] += lanes`` (cells wider than
    :data:`_REGISTER_VECTORS` vectors)."""
    for vector in range(n_vectors):
        lane = 4 * vector
        vector_add4(
            cells,
            cell + np.uint64(lane),
            lanes[lane],
            lanes[lane + 1],
            lanes[lane + 2],
            lanes[lane + 3],
        )


@kernel
def _accumulate_outputs(
    X_binned, pairs, sample_indices, start, stop, cells, counts, n_bins, increments, vectors
):
    """Add rows ``sample_indices[start:stop]`` to one node's cells of every output and
    their counts: ``cells`` flat ``(n_features * n_bins * W,)`` int64 (W =
    ``increments.shape[1]``, a multiple of 4), ``counts`` flat ``(n_features * n_bins,)``
    int64, ``pairs`` (n_rows, 2k) int32 each row's ``(g_0, h_0, ...)``.

    A row's ``W`` increments (its sums, zeros) are added to its cell of each feature as
    ``W / 4`` vectors, and 1 to the cell's count. ``vectors`` (:func:`_width_tag`): a
    tuple of ``W / 4`` zeros, whose length the kernel is compiled for (a constant: the
    branches on the width vanish and the increments stay in vector registers over the
    feature loop; with the width a run-time value they did not: 1.2x against 1.65x
    faster than one-output builds). Cells wider than :data:`_REGISTER_VECTORS` vectors
    read their increments from ``increments`` (ROWS_INTERLEAVED, W) int64 scratch."""
    n_features = np.uint64(X_binned.shape[1])
    width = np.uint64(n_bins)
    n_sums = pairs.shape[1]
    wide = len(vectors) > _REGISTER_VECTORS
    fields = increments.shape[1] if wide else 4 * len(vectors)
    n_vectors = fields // 4
    stride = np.uint64(fields)
    bins = X_binned.ravel()
    flat_pairs = pairs.ravel()
    block = _feature_block(n_features, n_bins, 8 * fields)
    for first in range(np.uint64(0), n_features, block):
        last = min(n_features, first + block)
        for position in range(start, stop, ROWS_INTERLEAVED):
            if position + PREFETCH_ROWS_AHEAD + ROWS_INTERLEAVED <= stop:
                for k in range(ROWS_INTERLEAVED):
                    ahead = np.uint64(sample_indices[position + PREFETCH_ROWS_AHEAD + k])
                    prefetch(bins, ahead * n_features + first)
                    prefetch(flat_pairs, ahead * np.uint64(n_sums))
            # A lone last row is added twice with zero increments as its second.
            row0 = np.uint64(sample_indices[position])
            paired = position + 1 < stop
            row1 = np.uint64(sample_indices[position + 1]) if paired else row0
            if wide:
                for field in range(fields):
                    increments[0, field] = _lane(pairs, row0, n_sums, field)
                    increments[1, field] = _lane(pairs, row1, n_sums, field) if paired else 0
                for feature in range(first, last):
                    bin0, bin1 = _row_bins(X_binned, row0, row1, feature, width)
                    counts[bin0] += 1
                    counts[bin1] += 1 if paired else 0
                    _add_row_from_memory(cells, bin0 * stride, increments[0], n_vectors)
                    _add_row_from_memory(cells, bin1 * stride, increments[1], n_vectors)
                continue
            a0 = _lane(pairs, row0, n_sums, 0)
            a1 = _lane(pairs, row0, n_sums, 1)
            a2 = _lane(pairs, row0, n_sums, 2)
            a3 = _lane(pairs, row0, n_sums, 3)
            a4 = _lane(pairs, row0, n_sums, 4)
            a5 = _lane(pairs, row0, n_sums, 5)
            a6 = _lane(pairs, row0, n_sums, 6)
            a7 = _lane(pairs, row0, n_sums, 7)
            a8 = _lane(pairs, row0, n_sums, 8)
            a9 = _lane(pairs, row0, n_sums, 9)
            a10 = _lane(pairs, row0, n_sums, 10)
            a11 = _lane(pairs, row0, n_sums, 11)
            a12 = _lane(pairs, row0, n_sums, 12)
            a13 = _lane(pairs, row0, n_sums, 13)
            a14 = _lane(pairs, row0, n_sums, 14)
            a15 = _lane(pairs, row0, n_sums, 15)
            scale = np.int64(1) if paired else np.int64(0)
            b0 = scale * _lane(pairs, row1, n_sums, 0)
            b1 = scale * _lane(pairs, row1, n_sums, 1)
            b2 = scale * _lane(pairs, row1, n_sums, 2)
            b3 = scale * _lane(pairs, row1, n_sums, 3)
            b4 = scale * _lane(pairs, row1, n_sums, 4)
            b5 = scale * _lane(pairs, row1, n_sums, 5)
            b6 = scale * _lane(pairs, row1, n_sums, 6)
            b7 = scale * _lane(pairs, row1, n_sums, 7)
            b8 = scale * _lane(pairs, row1, n_sums, 8)
            b9 = scale * _lane(pairs, row1, n_sums, 9)
            b10 = scale * _lane(pairs, row1, n_sums, 10)
            b11 = scale * _lane(pairs, row1, n_sums, 11)
            b12 = scale * _lane(pairs, row1, n_sums, 12)
            b13 = scale * _lane(pairs, row1, n_sums, 13)
            b14 = scale * _lane(pairs, row1, n_sums, 14)
            b15 = scale * _lane(pairs, row1, n_sums, 15)
            for feature in range(first, last):
                bin0, bin1 = _row_bins(X_binned, row0, row1, feature, width)
                counts[bin0] += 1
                counts[bin1] += scale
                cell0, cell1 = bin0 * stride, bin1 * stride
                vector_add4(cells, cell0, a0, a1, a2, a3)
                vector_add4(cells, cell1, b0, b1, b2, b3)
                if n_vectors > 1:
                    vector_add4(cells, cell0 + np.uint64(4), a4, a5, a6, a7)
                    vector_add4(cells, cell1 + np.uint64(4), b4, b5, b6, b7)
                if n_vectors > 2:
                    vector_add4(cells, cell0 + np.uint64(8), a8, a9, a10, a11)
                    vector_add4(cells, cell1 + np.uint64(8), b8, b9, b10, b11)
                if n_vectors > 3:
                    vector_add4(cells, cell0 + np.uint64(12), a12, a13, a14, a15)
                    vector_add4(cells, cell1 + np.uint64(12), b12, b13, b14, b15)


@kernel(parallel=True)
def _build_outputs(
    X_binned,
    pairs,
    sample_indices,
    begins,
    ends,
    n_bins,
    out,
    out_counts,
    scratch,
    scratch_counts,
    increments,
    vectors,
    parents,
    parent_counts,
    parent_rows,
):
    """Fill ``out`` (n_nodes (+ n_pairs), n_features * n_bins * W) and ``out_counts``
    (n_nodes (+ n_pairs), n_features * n_bins) with the cells of every output and the
    counts of the segments, and, with ``n_pairs = len(parent_rows) > 0``, row
    ``n_nodes + i`` with the parent's (``parents``, ``parent_counts`` row
    ``parent_rows[i]``) minus row ``i``.

    The threads as :func:`_build`'s: ``scratch`` (n_threads, 2, n_cells) and
    ``scratch_counts`` (n_threads, 2, n_features * n_bins) int64, zero, one histogram per
    cut node of a thread (left zero); ``increments`` (n_threads, ROWS_INTERLEAVED, W)
    int64 (each thread's rows' increments); ``vectors``: the cells' :func:`_width_tag`."""
    n_nodes = begins.shape[0]
    n_pairs = parent_rows.shape[0]
    n_threads = scratch.shape[0]
    offsets = segment_offsets(begins, ends)
    bounds = equal_ranges(offsets, n_threads)
    for node in range(n_nodes):
        if ends[node] == begins[node]:
            out[node, :] = 0
            out_counts[node, :] = 0
    scratch_node = np.full((n_threads, CUT_NODES_PER_THREAD), -1, dtype=np.int64)
    for thread in prange(n_threads):
        pieces = np.empty((n_nodes, 4), dtype=np.int64)
        used = 0
        for piece in range(
            thread_pieces(offsets, begins, bounds[thread], bounds[thread + 1], pieces)
        ):
            node, start, stop = pieces[piece, 0], pieces[piece, 1], pieces[piece, 2]
            whole = pieces[piece, 3] == 1
            if whole:
                cells, counts = out[node], out_counts[node]
                cells[:] = 0
                counts[:] = 0
            else:
                scratch_node[thread, used] = node
                cells, counts = scratch[thread, used], scratch_counts[thread, used]
                used += 1
            _accumulate_outputs(
                X_binned,
                pairs,
                sample_indices,
                start,
                stop,
                cells,
                counts,
                n_bins,
                increments[thread],
                vectors,
            )
    if n_pairs == 0 and scratch_node.max() < 0:
        return
    for thread in prange(n_threads):
        _merge_and_subtract(out, scratch, parents, scratch_node, parent_rows, thread)
        _merge_and_subtract(
            out_counts, scratch_counts, parent_counts, scratch_node, parent_rows, thread
        )


@kernel
def _merge_and_subtract(target, pieces, parents, scratch_node, parent_rows, thread):
    """Thread ``thread``'s range of the columns of ``target`` (:func:`_build_outputs`'
    cells or counts, n_nodes + n_pairs rows): the cut nodes' sums of their ``pieces``
    (in thread order; the pieces left zero), then the siblings, parent minus built."""
    n_threads = pieces.shape[0]
    n_pairs = parent_rows.shape[0]
    n_nodes = target.shape[0] - n_pairs
    n_cells = target.shape[1]
    low = thread * n_cells // n_threads
    high = (thread + 1) * n_cells // n_threads
    for owner in range(n_threads):
        for slot in range(CUT_NODES_PER_THREAD):
            node = scratch_node[owner, slot]
            if node >= 0:
                first_piece = _is_first_piece(scratch_node, owner, node)
                piece = pieces[owner, slot]
                for cell in range(low, high):
                    if first_piece:
                        target[node, cell] = piece[cell]
                    else:
                        target[node, cell] += piece[cell]
                    piece[cell] = 0
    for pair in range(n_pairs):
        parent = parents[parent_rows[pair]]
        for cell in range(low, high):
            target[n_nodes + pair, cell] = parent[cell] - target[pair, cell]


@kernel
def _build_outputs_of_width(
    X_binned,
    pairs,
    sample_indices,
    begins,
    ends,
    n_bins,
    out,
    out_counts,
    scratch,
    scratch_counts,
    increments,
    parents,
    parent_counts,
    parent_rows,
):
    """:func:`_build_outputs` with the ``vectors`` tag (:func:`_width_tag`) of the cells'
    width, ``increments.shape[2]``, chosen at run time: a kernel that builds histograms
    of any width compiles once (with the five variants of the build linked in), not once
    per width. The branches are :func:`_width_tag`'s for :data:`_REGISTER_VECTORS` = 4."""
    n_vectors = increments.shape[2] // 4
    arguments = (X_binned, pairs, sample_indices, begins, ends, n_bins, out, out_counts)
    scratches = (scratch, scratch_counts, increments)
    parent_batch = (parents, parent_counts, parent_rows)
    if n_vectors == 1:
        _build_outputs(*arguments, *scratches, (0,), *parent_batch)
    elif n_vectors == 2:
        _build_outputs(*arguments, *scratches, (0, 0), *parent_batch)
    elif n_vectors == 3:
        _build_outputs(*arguments, *scratches, (0, 0, 0), *parent_batch)
    elif n_vectors == 4:
        _build_outputs(*arguments, *scratches, (0, 0, 0, 0), *parent_batch)
    else:
        _build_outputs(*arguments, *scratches, (0, 0, 0, 0, 0), *parent_batch)


assert _REGISTER_VECTORS == 4, "_build_outputs_of_width's branches are those of 4 vectors"


def build_output_histograms(
    X_binned,
    pairs,
    sample_indices,
    begins,
    ends,
    n_bins,
    out,
    out_counts,
    parents=None,
    parent_counts=None,
    parent_rows=None,
    n_threads=None,
):
    """The cells of every output and the counts of a batch of nodes (see the module
    docstring), and, with ``parents``, their siblings' by subtraction.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order
    pairs : ndarray of shape (n_rows, 2k), int32, C order
        Each row's quantized ``(g_0, h_0, g_1, h_1, ...)``.
    sample_indices : ndarray of shape (n_samples,), int32
    begins, ends : sequence of int, length n_nodes
    n_bins : int
    out : ndarray of shape (n_nodes or 2 * n_nodes, n_features * n_bins * W), int64  # OUT
        C order (best 32-byte aligned), ``W = cell_width(k)``; fields past ``2k`` are
        written zero.
    out_counts : ndarray of shape (len(out), n_features * n_bins), int64  # OUT
        C order.
    parents, parent_counts : ndarrays of shapes (n_parents, n_features * n_bins * W) and
        (n_parents, n_features * n_bins), int64, optional
        A batch holding the parents' cells and counts; row ``n_nodes + i`` of ``out``
        becomes ``parents[parent_rows[i]] - out[i]``, and so for the counts.
    parent_rows : sequence of int, length n_nodes (with ``parents``)
    n_threads : int, optional
        Ranges of rows the batch is cut into; does not change the result.
    """
    begins, ends = _segments(begins, ends)
    n_cells = out.shape[1]
    n_bin_cells = out_counts.shape[1]
    fields = n_cells // n_bin_cells
    if not len(begins):
        return
    build = sized(_build_outputs)
    n_ranges = 1 if build is _build_outputs.serial else _ranges(n_threads, begins, ends)
    if parents is None:
        parents, parent_counts, parent_rows = _NO_PARENTS, _NO_PARENTS, _NO_PARENT_ROWS
    else:
        parent_rows = np.ascontiguousarray(parent_rows, dtype=np.int64).reshape(-1)
    scratch, scratch_counts = _output_scratch(n_ranges, n_cells, n_bin_cells)
    build(
        np.ascontiguousarray(X_binned),
        np.ascontiguousarray(pairs),
        sample_indices,
        begins,
        ends,
        n_bins,
        out,
        out_counts,
        scratch,
        scratch_counts,
        np.zeros((n_ranges, ROWS_INTERLEAVED, fields), dtype=HIST_DTYPE),
        _width_tag(fields),
        np.ascontiguousarray(parents),
        np.ascontiguousarray(parent_counts),
        parent_rows,
    )


def _output_scratch(n_threads, n_cells, n_bin_cells):
    """Zeroed scratch for :func:`_build_outputs`' cut nodes: cells (n_threads, 2,
    n_cells) int64 with 32-byte aligned rows and counts (n_threads, 2, n_bin_cells);
    kept per calling thread for the next call (the kernel leaves them zero)."""
    shape = (n_threads, CUT_NODES_PER_THREAD, n_cells)
    cached = getattr(_scratch, "outputs", None)
    if cached is None or cached[0].shape != shape or cached[1].shape[2] != n_bin_cells:
        cached = _scratch.outputs = (
            wide_zeros(shape),
            np.zeros((n_threads, CUT_NODES_PER_THREAD, n_bin_cells), dtype=HIST_DTYPE),
        )
    return cached


_scratch = threading.local()
#: ``_build``'s parents when it builds nodes without siblings.
_NO_PARENTS = np.zeros((1, 1), dtype=HIST_DTYPE)
_NO_PARENT_ROWS = np.zeros(0, dtype=np.int64)


def wide_zeros(shape):
    """Zeroed int64 array of ``shape`` whose last axis holds wide cells
    (:data:`WIDE_CELL_FIELDS` each), every row starting 32-byte aligned
    (``shape[-1]`` a multiple of the cell width): what ``_accumulate(..., wide=True)``
    adds into."""
    size = int(np.prod(shape))
    flat = np.zeros(size + WIDE_CELL_FIELDS, dtype=HIST_DTYPE)
    skip = (-flat.ctypes.data % (8 * WIDE_CELL_FIELDS)) // 8
    return flat[skip : skip + size].reshape(shape)


def wide_scratch(n_threads, n_cells):
    """Zeroed wide-cell scratch (n_threads, 3, n_cells / 3 * 4) int64 with 32-byte
    aligned rows; kept per calling thread for the next call (``_build`` leaves it zero)."""
    n_wide = n_cells // HIST_FIELDS * WIDE_CELL_FIELDS
    shape = (n_threads, 1 + CUT_NODES_PER_THREAD, n_wide)
    cached = getattr(_scratch, "wide", None)
    if cached is None or cached.shape != shape:
        cached = _scratch.wide = wide_zeros(shape)
    return cached


def _segments(begins, ends):
    return (
        np.ascontiguousarray(begins, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(ends, dtype=np.int64).reshape(-1),
    )


def _ranges(n_threads, begins, ends):
    """Ranges of positions the kernels cut the batch into: one per thread by default."""
    return max(1, min(threads() if n_threads is None else n_threads, int(np.sum(ends - begins))))


def _sized_build(n_threads):
    """:func:`_build` or its serial twin (:func:`.jit.sized`), and the ranges to cut the
    batch into (one for the twin)."""
    build = sized(_build)
    return build, (1 if build is _build.serial else n_threads)


def build_histograms(
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    n_threads=None,
    out=None,
):
    """Histograms of a batch of nodes (same contract as the NumPy reference).

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8, C order
    quantized_gradients, quantized_hessians : ndarray of shape (n_rows,), int32
    sample_indices : ndarray of shape (n_samples,), int32
        The row partition; node ``i`` owns ``sample_indices[begins[i]:ends[i]]``.
    begins, ends : sequence of int, length n_nodes
    n_bins : int
    n_threads : int, optional
        Ranges of rows the batch is cut into (default: the threads of the parallel
        kernels, :func:`gpuboost.backends.cpu.jit.threads`); does not change the result.
    out : ndarray of shape (n_nodes, n_features * n_bins * 3), int64, C order, optional
        Written instead of a new array (e.g. one output's part of a vector-leaf batch).

    Returns
    -------
    histograms : ndarray of shape (n_nodes, n_features, n_bins, 3), int64
    """
    begins, ends = _segments(begins, ends)
    n_features = X_binned.shape[1]
    n_cells = n_features * n_bins * HIST_FIELDS
    if out is None:
        out = np.empty((len(begins), n_cells), dtype=HIST_DTYPE)
    if len(begins):
        build, n_threads = _sized_build(n_threads)
        build(
            np.ascontiguousarray(X_binned),
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            n_bins,
            out,
            wide_scratch(_ranges(n_threads, begins, ends), n_cells),
            _NO_PARENTS,
            _NO_PARENT_ROWS,
        )
    return out.reshape(len(begins), n_features, n_bins, HIST_FIELDS)


def build_children_histograms(
    X_binned,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    parents,
    parent_rows,
    n_threads=None,
    out=None,
):
    """The histograms of sibling pairs: the smaller children built, the larger ones
    derived from their parents by subtraction, in one batch.

    Parameters
    ----------
    X_binned, quantized_gradients, quantized_hessians, sample_indices, n_bins, n_threads
        As for :func:`build_histograms`; ``out`` of shape (2 * n_pairs, n_cells).
    begins, ends : sequence of int, length n_pairs
        The segments of the children to build.
    parents : ndarray of shape (n_parents, n_features, n_bins, 3), int64
        A batch holding the parents' histograms.
    parent_rows : sequence of int, length n_pairs
        Row of ``parents`` holding the parent of pair ``i``.

    Returns
    -------
    histograms : ndarray of shape (2 * n_pairs, n_features, n_bins, 3), int64
        Rows ``0 .. n_pairs - 1``: the built children; row ``n_pairs + i``:
        ``parents[parent_rows[i]] - histograms[i]``.
    """
    begins, ends = _segments(begins, ends)
    n_pairs = len(begins)
    n_features = X_binned.shape[1]
    n_cells = n_features * n_bins * HIST_FIELDS
    if out is None:
        out = np.empty((2 * n_pairs, n_cells), dtype=HIST_DTYPE)
    if n_pairs:
        build, n_threads = _sized_build(n_threads)
        build(
            np.ascontiguousarray(X_binned),
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            n_bins,
            out,
            wide_scratch(_ranges(n_threads, begins, ends), n_cells),
            np.ascontiguousarray(parents).reshape(len(parents), n_cells),
            np.ascontiguousarray(parent_rows, dtype=np.int64).reshape(-1),
        )
    return out.reshape(2 * n_pairs, n_features, n_bins, HIST_FIELDS)


@kernel
def _add_sparse_rows(indptr, cells, gradients, hessians, sample_indices, start, stop, histogram):
    """Add the non-default cells of rows ``sample_indices[start:stop]`` to ``histogram``
    (n_cells,); returns the rows' gradient and hessian totals."""
    fields = np.int64(HIST_FIELDS)
    total_gradient = np.int64(0)
    total_hessian = np.int64(0)
    for position in range(start, stop):
        row = np.int64(sample_indices[position])
        gradient = np.int64(gradients[row])
        hessian = np.int64(hessians[row])
        total_gradient += gradient
        total_hessian += hessian
        for entry in range(indptr[row], indptr[row + 1]):
            cell = np.int64(cells[entry]) * fields
            histogram[cell] += gradient
            histogram[cell + 1] += hessian
            histogram[cell + 2] += np.int64(1)
    return total_gradient, total_hessian


@kernel(parallel=True)
def _build_sparse(
    indptr,
    cells,
    default_bins,
    gradients,
    hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    out,
    parents,
    parent_rows,
    n_threads,
):
    """Fill ``out`` (n_nodes (+ n_pairs), n_features * n_bins * 3) as :func:`_build`
    does, from the non-default cells of the rows (see :func:`build_sparse_histograms`).

    Each node's rows are cut into ``n_threads // n_nodes`` (at least 1) ranges, so that
    a batch of fewer nodes than threads (the root, a level of one built child) keeps
    every thread busy: the ranges add into the node's histogram (the first) or one of
    their own, then the pieces are summed cell by cell (exact integers, in range
    order). No entry is at its feature's default bin, so that cell is still zero: it
    becomes the node's totals minus the feature's other cells, summed in one sequential
    pass (not per entry, which would cost a second scattered update per entry)."""
    n_nodes = begins.shape[0]
    n_pairs = parent_rows.shape[0]
    n_features = default_bins.shape[0]
    n_cells = out.shape[1]
    fields = np.int64(HIST_FIELDS)
    pieces = max(1, n_threads // max(1, n_nodes))
    n_units = n_nodes * pieces
    extra = np.zeros((n_nodes * (pieces - 1), n_cells), dtype=np.int64)
    totals = np.zeros((n_units, 2), dtype=np.int64)
    for unit in prange(n_units):
        node = unit // pieces
        piece = unit - node * pieces
        rows = ends[node] - begins[node]
        start = begins[node] + piece * rows // pieces
        stop = begins[node] + (piece + 1) * rows // pieces
        if piece == 0:
            out[node, :] = 0
            histogram = out[node]
        else:
            histogram = extra[node * (pieces - 1) + piece - 1]
        totals[unit, 0], totals[unit, 1] = _add_sparse_rows(
            indptr, cells, gradients, hessians, sample_indices, start, stop, histogram
        )
    if pieces > 1:
        for chunk in prange(n_threads):
            low = chunk * n_cells // n_threads
            high = (chunk + 1) * n_cells // n_threads
            for node in range(n_nodes):
                for piece in range(1, pieces):
                    part = extra[node * (pieces - 1) + piece - 1]
                    for cell in range(low, high):
                        out[node, cell] += part[cell]
    for unit in prange(n_nodes * pieces):
        # The default cells of a range of features of one node.
        node = unit // pieces
        piece = unit - node * pieces
        histogram = out[node]
        total_gradient = np.int64(0)
        total_hessian = np.int64(0)
        for other in range(pieces):
            total_gradient += totals[node * pieces + other, 0]
            total_hessian += totals[node * pieces + other, 1]
        count = np.int64(ends[node] - begins[node])
        for feature in range(piece * n_features // pieces, (piece + 1) * n_features // pieces):
            moved_g = np.int64(0)
            moved_h = np.int64(0)
            moved_n = np.int64(0)
            first = feature * n_bins * fields
            for cell in range(first, first + n_bins * fields, fields):
                moved_g += histogram[cell]
                moved_h += histogram[cell + 1]
                moved_n += histogram[cell + 2]
            default = (feature * n_bins + np.int64(default_bins[feature])) * fields
            histogram[default] = total_gradient - moved_g
            histogram[default + 1] = total_hessian - moved_h
            histogram[default + 2] = count - moved_n
    for pair in prange(n_pairs):
        parent = parents[parent_rows[pair]]
        for cell in range(n_cells):
            out[n_nodes + pair, cell] = parent[cell] - out[pair, cell]


def build_sparse_histograms(
    indptr,
    cells,
    default_bins,
    quantized_gradients,
    quantized_hessians,
    sample_indices,
    begins,
    ends,
    n_bins,
    parents=None,
    parent_rows=None,
):
    """Histograms of a batch of nodes from the non-default entries of the rows (and with
    ``parents``, their siblings' by subtraction, as :func:`build_children_histograms`).

    Parameters
    ----------
    indptr : ndarray of shape (n_rows + 1,), int64
    cells : ndarray of shape (indptr[-1],), int32
        Row ``r``'s entries that are not at their feature's default bin, as histogram
        cells ``feature * n_bins + bin``: ``cells[indptr[r]:indptr[r + 1]]``.
    default_bins : ndarray of shape (n_features,), int64
        Every feature's default bin: the bin of every row not listed for the feature.
    quantized_gradients, quantized_hessians, sample_indices, begins, ends
        As for :func:`build_histograms`.
    n_bins : int
    parents, parent_rows : optional
        As for :func:`build_children_histograms`.

    Returns
    -------
    histograms : ndarray of shape (n_nodes (or 2 * n_pairs), n_features, n_bins, 3), int64
        Those of :func:`build_histograms` on the dense bins, bit for bit.
    """
    begins, ends = _segments(begins, ends)
    n_features = len(default_bins)
    n_cells = n_features * n_bins * HIST_FIELDS
    n_built = len(begins)
    if parents is None:
        parents, parent_rows, n_out = _NO_PARENTS, _NO_PARENT_ROWS, n_built
    else:
        parents = np.ascontiguousarray(parents).reshape(len(parents), n_cells)
        parent_rows = np.ascontiguousarray(parent_rows, dtype=np.int64).reshape(-1)
        n_out = 2 * n_built
    out = np.empty((n_out, n_cells), dtype=HIST_DTYPE)
    if n_built:
        sized(_build_sparse)(
            indptr,
            cells,
            np.ascontiguousarray(default_bins, dtype=np.int64),
            quantized_gradients,
            quantized_hessians,
            sample_indices,
            begins,
            ends,
            np.int64(n_bins),
            out,
            parents,
            parent_rows,
            max(1, threads()),
        )
    return out.reshape(n_out, n_features, n_bins, HIST_FIELDS)


@kernel
def _bin_entries(
    indptr, indices, data, edges, edge_starts, default_bins, missing_bin, entry_bins, row_counts
):
    for feature in range(indptr.shape[0] - 1):
        feature_edges = edges[edge_starts[feature] : edge_starts[feature + 1]]
        for k in range(indptr[feature], indptr[feature + 1]):
            bin_ = entry_bin(feature_edges, data[k], missing_bin)
            entry_bins[k] = bin_
            if bin_ != default_bins[feature]:
                row_counts[indices[k] + 1] += 1


@kernel
def _fill_cells(indptr, indices, entry_bins, default_bins, missing_bin, n_bins, row_next, cells):
    for feature in range(indptr.shape[0] - 1):
        for k in range(indptr[feature], indptr[feature + 1]):
            bin_ = np.int64(entry_bins[k])
            if bin_ != default_bins[feature]:
                row = indices[k]
                cells[row_next[row]] = feature * n_bins + (
                    n_bins - 1 if bin_ == missing_bin else bin_
                )
                row_next[row] += 1


def column_cells(columns, bin_edges, default_bins, missing_bin, n_bins):
    """The sparse histograms' cells (:func:`build_sparse_histograms`) straight from the
    stored entries of sparse columns: every entry binned as ``BinMapper.transform_sparse``
    bins it, and the entries away from their feature's default bin listed per row as
    cells ``feature * n_bins + bin`` (the missing bin at ``n_bins - 1``), in feature
    order. Two compiled passes over the entries; no binned or bundled matrix.

    Parameters
    ----------
    columns : scipy.sparse CSC matrix of shape (n_rows, n_features), float64  # IN
        Canonical (sorted indices, no duplicates); absent entries are 0.0.
    bin_edges : list of ndarray of float64  # IN
    default_bins : ndarray of shape (n_features,), int  # IN
        The bin of 0.0 of every feature.
    missing_bin : int
        The Dataset's missing bin (what ``entry_bins`` hold for NaN).
    n_bins : int
        Width of the per-feature histograms.

    Returns
    -------
    indptr : ndarray of shape (n_rows + 1,), int64
    cells : ndarray of shape (indptr[-1],), int32
    entry_bins : ndarray of shape (columns.nnz,), uint8
        The bin of every stored entry, in the columns' order.
    """
    n_rows = columns.shape[0]
    column_indptr = np.ascontiguousarray(columns.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(columns.indices, dtype=np.int64)
    default_bins = np.ascontiguousarray(default_bins, dtype=np.int64)
    edges, edge_starts = flat_edges(bin_edges)
    entry_bins = np.empty(len(indices), dtype=np.uint8)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    _bin_entries(
        column_indptr,
        indices,
        np.ascontiguousarray(columns.data, dtype=np.float64),
        edges,
        edge_starts,
        default_bins,
        np.int64(missing_bin),
        entry_bins,
        indptr,
    )
    np.cumsum(indptr, out=indptr)
    cells = np.empty(int(indptr[-1]), dtype=np.int32)
    _fill_cells(
        column_indptr,
        indices,
        entry_bins,
        default_bins,
        np.int64(missing_bin),
        np.int64(n_bins),
        indptr[:-1].copy(),
        cells,
    )
    return indptr, cells, entry_bins
