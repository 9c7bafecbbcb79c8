// histogram.cu -- per-node gradient / hessian / count histograms
// (gpuboost.backends.numpy.histogram).
//
// For a batch of nodes, node i owning rows sample_indices[begins[i]:ends[i]], build
//     histograms[node, feature, bin, :] = (sum of quantized gradients,
//                                          sum of quantized hessians, row count)
// as exact int64 sums (docs/DESIGN.md, "Quantization"): integer sums do not depend on
// the order of the atomics, so the result equals the NumPy backend's bit for bit.
//
// Layouts: X_binned is row-major (n_rows, n_features) uint8 (Dataset.X_binned), row r
// at byte r * row_stride (>= n_features; the device layout pads a row to whole 32-byte
// sectors when that adds at most a quarter of it, gpuboost/backends/cuda/binned_rows.py,
// so a gathered row of 28 features is one sector). Rows are gathered through
// sample_indices, so a feature-major layout would make every thread of a warp touch a
// different cache line; row-major lets consecutive threads read consecutive features of
// the same row. quantized_pairs is (n_rows, 2) int32, C
// order, 8-byte aligned: row r's (gradient, hessian), read as one int2 (quantize.cu).
// histograms is (n_nodes, n_features,
// n_bins, 3) int64, C order, zero on entry.
//
// Work distribution (both kernels): the grid is flat. blockIdx.x = feature_group *
// blocks_per_group + row_block. The rows of the batch's nodes, one node after another,
// form the batch's rows: node i holds positions node_offsets[i] .. node_offsets[i+1]-1
// of them (node_offsets: the prefix sum of the node lengths, from the host), the rows
// sample_indices[begins[i] ...]. Row block k takes the batch's rows k * rows_per_block
// .. (k + 1) * rows_per_block - 1, whichever nodes they belong to: the host sizes the
// blocks for about one wave over the device, and a block walks its range node by node
// (a *piece* per node, found by binary search), flushing once per piece. So a level
// flushes about (blocks + nodes) shared histograms, not one per row block of every
// node.
//
// Shared-memory kernel: the block accumulates its rows into a private histogram of its
// feature group in shared memory (histogram_shared.cuh: four planes of 32-bit words, native
// 32-bit shared atomics, exact), then flushes the non-empty bins to global memory with
// 64-bit atomics. 16 bytes per cell, with one padding bin per feature when n_bins is even:
// 28 features x 257 x 16 = 115,136 bytes fit one block on sm_80 (opt-in limit 163 KiB; 40
// features fit) and sm_90 (227 KiB, 56 features). When a dataset's cells do not fit, the
// host splits the features into groups that do (grid dimension above).
// Global-memory kernel: the fallback when not even one feature's bins fit in shared
// memory: every (row, feature) pair adds straight to global memory.
#include "common.cuh"
#include "histogram_shared.cuh"
#include "segments.cuh"

//: Threads per block of both kernels (the host launches with at most this many).
constexpr int HISTOGRAM_MAX_BLOCK_THREADS = 1024;
//: Blocks of the shared-memory kernel an SM must hold (its __launch_bounds__): two blocks
//: of 1024 threads need at most 32 registers a thread (64 K registers per SM); nvcc takes
//: 46 on sm_80 without the bound, and 32 with it, without spilling. Two blocks of 28
//: features fit the shared memory of an sm_90 SM (host: TARGET_BLOCKS_PER_SM).
constexpr int HISTOGRAM_MIN_BLOCKS_PER_SM = 2;
//: A piece of a block's rows: the rows of one node inside the block's range of the batch.
struct RowPiece {
  int32_t node;           // the node whose rows these are
  int64_t begin;          // positions [begin, end) in sample_indices
  int64_t end;
  int64_t next_position;  // where the block's next piece starts, in the batch's rows
};

//: The piece that starts at `position` (< block_end <= node_offsets[n_nodes]) of a block
//: whose range of the batch's rows ends at block_end: the node whose range holds
//: `position` (nodes without rows hold none), up to the end of that node or of the block.
//: Every thread of the block gets the same answer.
GPUBOOST_DEVICE_INLINE RowPiece find_row_piece(int64_t position, int64_t block_end,
                                               const int64_t* node_begins,
                                               const int64_t* node_offsets, int32_t n_nodes) {
  RowPiece piece;
  piece.node = gpuboost_segment_of_tile(node_offsets, n_nodes, position);
  const int64_t node_end = node_offsets[piece.node + 1];
  piece.next_position = block_end < node_end ? block_end : node_end;
  piece.begin = node_begins[piece.node] + (position - node_offsets[piece.node]);
  piece.end = piece.begin + (piece.next_position - position);
  return piece;
}

//: Flat index of histogram cell (node, feature, bin), field 0.
GPUBOOST_DEVICE_INLINE int64_t histogram_cell(int32_t node, int64_t feature, int32_t bin,
                                              int32_t n_features, int32_t n_bins) {
  return ((static_cast<int64_t>(node) * n_features + feature) * n_bins + bin) * HISTOGRAM_FIELDS;
}

//: The bins a shared-memory histogram block reads, row-major (X_binned, gathered rows):
//: shared_histogram_add_rows.
struct RowMajorBins {
  const uint8_t* __restrict__ X_binned;
  int64_t row_stride;
  GPUBOOST_DEVICE_INLINE void add(const int2* __restrict__ gradient_pairs,
                                  const int32_t* __restrict__ sample_indices,
                                  int64_t pass_begin, int64_t pass_rows, int64_t first_feature,
                                  int32_t group_features, int32_t feature_stride,
                                  const SharedPlanes& planes) const {
    shared_histogram_add_rows(X_binned, gradient_pairs, sample_indices, pass_begin, pass_rows,
                              row_stride, first_feature, group_features, feature_stride, planes);
  }
};

//: The bins column by column (the partition's column-major copy), for positions whose rows
//: are in increasing order: shared_histogram_add_columns.
struct ColumnBins {
  const uint8_t* __restrict__ X_columns;
  int64_t n_rows;
  GPUBOOST_DEVICE_INLINE void add(const int2* __restrict__ gradient_pairs,
                                  const int32_t* __restrict__ sample_indices,
                                  int64_t pass_begin, int64_t pass_rows, int64_t first_feature,
                                  int32_t group_features, int32_t feature_stride,
                                  const SharedPlanes& planes) const {
    shared_histogram_add_columns(X_columns, n_rows, gradient_pairs, sample_indices, pass_begin,
                                 pass_rows, first_feature, group_features, feature_stride,
                                 planes);
  }
};

//: The shared cell (an index into a plane) of the group's global word `word` (n_bins cells
//: per feature, HISTOGRAM_FIELDS words per cell, in memory order; the planes hold
//: feature_stride cells per feature), and in `*field` the word's field.
GPUBOOST_DEVICE_INLINE int32_t shared_cell_of_word(int32_t word, int32_t n_bins,
                                                   int32_t feature_stride, int32_t* field) {
  const int32_t cell_index = word / HISTOGRAM_FIELDS;  // feature * n_bins + bin
  *field = word - cell_index * HISTOGRAM_FIELDS;
  return cell_index + (cell_index / n_bins) * (feature_stride - n_bins);
}

//: Add the shared histogram of a pass (cells of the group's features, planes) into the
//: node's global cells `out` (the group's group_fields int64 words, contiguous), the
//: non-empty cells only. Called by every thread of the block, after a barrier.
GPUBOOST_DEVICE_INLINE void flush_shared_histogram(const SharedPlanes& planes,
                                                   int32_t group_fields, int32_t n_bins,
                                                   int32_t feature_stride,
                                                   int64_t* __restrict__ out) {
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t lane = static_cast<int32_t>(threadIdx.x) & (HISTOGRAM_WARP_LANES - 1);
  const int32_t warp_first_thread = static_cast<int32_t>(threadIdx.x) - lane;
  const uint32_t warp_mask = histogram_warp_mask();
  for (int32_t warp_word = warp_first_thread; warp_word < group_fields; warp_word += threads) {
    const int32_t word = warp_word + lane;
    int32_t field = 0;
    const int32_t cell = shared_cell_of_word(word, n_bins, feature_stride, &field);
    // A cell without rows holds 0 (n rows leave at least n * (2^16 - 1) in its packed
    // word).
    const uint32_t packed = word < group_fields ? planes.hessian_high_count[cell] : 0u;
    if (packed != 0u) {
      gpuboost_atomic_add_int64(&out[word], shared_cell_field(planes, cell, field, packed));
    }
    __syncwarp(warp_mask);
  }
}

// Shared-memory histogram of one (feature group, row block).
// Block: the batch's rows of its range, node by node (pieces), for the features
//   first_feature .. first_feature + group_features - 1, accumulated in a private
//   shared-memory histogram in passes of at most MAX_ROWS_PER_PASS rows of one piece, each
//   pass flushed to global memory (to the piece's node).
// Shared layout: the planes of histogram_shared.cuh (bank-conflict-free odd feature
//   stride).
// Thread: the rows' (row, feature) pairs as `bins` reads them (RowMajorBins: the pairs
//   of its warp's tiles of rows, consecutive lanes on consecutive features of a row,
//   coalesced reads of X_binned; ColumnBins: consecutive threads on consecutive
//   positions, coalesced reads of a column), 2 to 4 native 32-bit shared atomics each.
//   The flush walks the group's global words (node, feature, bin, field) in memory
//   order: consecutive threads add to consecutive int64 words (32 lanes: 8 sectors per
//   atomic instruction, against 24 per field when a lane adds a whole 24-byte cell), and
//   read the planes at consecutive cells (no bank conflict).
// Dynamic shared memory: SHARED_WORDS_PER_CELL * features_per_group * feature_stride words.
template <class Bins>
GPUBOOST_DEVICE_INLINE void histogram_shared_block(
    const Bins& bins, const int32_t* __restrict__ quantized_pairs,
    const int32_t* __restrict__ sample_indices, const int64_t* __restrict__ node_begins,
    const int64_t* __restrict__ node_offsets, int32_t n_nodes, int32_t n_features,
    int32_t n_bins, int32_t features_per_group, int32_t feature_stride,
    int64_t blocks_per_group, int64_t rows_per_block, int64_t* __restrict__ histograms) {
  GPUBOOST_DYNAMIC_SHARED(uint32_t, shared_words);
  const int2* const gradient_pairs = reinterpret_cast<const int2*>(quantized_pairs);
  const int64_t group = static_cast<int64_t>(blockIdx.x) / blocks_per_group;
  const int64_t row_block = static_cast<int64_t>(blockIdx.x) % blocks_per_group;
  const int64_t block_begin = row_block * rows_per_block;
  const int64_t batch_rows = node_offsets[n_nodes];
  const int64_t block_end =
      batch_rows - block_begin < rows_per_block ? batch_rows : block_begin + rows_per_block;
  const int64_t first_feature = group * features_per_group;
  const int64_t features_left = n_features - first_feature;
  const int32_t group_features = static_cast<int32_t>(
      features_left < features_per_group ? features_left : features_per_group);
  const int32_t plane_words = group_features * feature_stride;
  const int32_t group_words = plane_words * SHARED_WORDS_PER_CELL;
  const SharedPlanes planes = shared_planes(shared_words, plane_words);
  const int32_t group_fields = group_features * n_bins * HISTOGRAM_FIELDS;
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  for (int64_t position = block_begin; position < block_end;) {
    const RowPiece rows =
        find_row_piece(position, block_end, node_begins, node_offsets, n_nodes);
    position = rows.next_position;
    // The group's cells are contiguous in global memory: group_fields int64 words from out.
    int64_t* const out =
        histograms + histogram_cell(rows.node, first_feature, 0, n_features, n_bins);
    for (int64_t pass_begin = rows.begin; pass_begin < rows.end;
         pass_begin += MAX_ROWS_PER_PASS) {
      const int64_t pass_rows =
          rows.end - pass_begin < MAX_ROWS_PER_PASS ? rows.end - pass_begin : MAX_ROWS_PER_PASS;
      for (int32_t word = thread; word < group_words; word += threads) shared_words[word] = 0u;
      __syncthreads();
      bins.add(gradient_pairs, sample_indices, pass_begin, pass_rows, first_feature,
               group_features, feature_stride, planes);
      __syncthreads();
      flush_shared_histogram(planes, group_fields, n_bins, feature_stride, out);
      __syncthreads();  // the next pass clears the cells this pass just flushed
    }
  }
}

// Shared-memory histogram of gathered rows (any order): histogram_shared_block over the
// row-major bins. X_binned: row r at byte r * row_stride.
extern "C" __global__ void
__launch_bounds__(HISTOGRAM_MAX_BLOCK_THREADS, HISTOGRAM_MIN_BLOCKS_PER_SM)
    histogram_shared_memory(const uint8_t* __restrict__ X_binned, int64_t row_stride,
                            const int32_t* __restrict__ quantized_pairs,
                            const int32_t* __restrict__ sample_indices,
                            const int64_t* __restrict__ node_begins,
                            const int64_t* __restrict__ node_offsets, int32_t n_nodes,
                            int32_t n_features, int32_t n_bins, int32_t features_per_group,
                            int32_t feature_stride, int64_t blocks_per_group,
                            int64_t rows_per_block, int64_t* __restrict__ histograms) {
  histogram_shared_block(RowMajorBins{X_binned, row_stride}, quantized_pairs, sample_indices,
                         node_begins, node_offsets, n_nodes, n_features, n_bins,
                         features_per_group, feature_stride, blocks_per_group, rows_per_block,
                         histograms);
}

// Shared-memory histogram of nodes whose positions hold rows in increasing order (the
// host passes it only so: a tree's root before any partition), from the column-major
// bins: histogram_shared_block over X_columns, (n_features, n_rows) uint8, C order. The
// host picks this kernel, and its feature groups, where it moves fewer bytes than
// gathering rows (gpuboost/backends/cuda/histogram.py: plan_histograms): a block reads
// its rows' positions and gradient pairs once per group, and the group's bin bytes
// coalesced, and flushes only the group's cells, so more groups of fewer features each
// flush smaller tables for more rows read.
extern "C" __global__ void
__launch_bounds__(HISTOGRAM_MAX_BLOCK_THREADS, HISTOGRAM_MIN_BLOCKS_PER_SM)
    histogram_shared_columns(const uint8_t* __restrict__ X_columns, int64_t n_rows,
                             const int32_t* __restrict__ quantized_pairs,
                             const int32_t* __restrict__ sample_indices,
                             const int64_t* __restrict__ node_begins,
                             const int64_t* __restrict__ node_offsets, int32_t n_nodes,
                             int32_t n_features, int32_t n_bins, int32_t features_per_group,
                             int32_t feature_stride, int64_t blocks_per_group,
                             int64_t rows_per_block, int64_t* __restrict__ histograms) {
  histogram_shared_block(ColumnBins{X_columns, n_rows}, quantized_pairs, sample_indices,
                         node_begins, node_offsets, n_nodes, n_features, n_bins,
                         features_per_group, feature_stride, blocks_per_group, rows_per_block,
                         histograms);
}

#if GPUBOOST_CLUSTERS  // sm_90 and the emulation (common.cuh); the host launches these there

//: Blocks of a thread-block cluster of the cluster kernels (host: CLUSTER_BLOCKS; the
//: portable cluster size of sm_90).
constexpr int HISTOGRAM_CLUSTER_BLOCKS = 8;

// After a cluster barrier: the cluster's exact sums of this block's slice of the group's
// group_fields global words (block `rank` of the cluster: the rank-th of equal slices of
// whole warps of words), read from the shared histograms of every block of the cluster
// (distributed shared memory), added into `out` (the group's words of the node), the
// non-empty cells only. Consecutive lanes on consecutive words, as
// flush_shared_histogram. Called by every thread of the block.
GPUBOOST_DEVICE_INLINE void flush_cluster_share(uint32_t* shared_words, int32_t plane_words,
                                                int32_t group_fields, int32_t n_bins,
                                                int32_t feature_stride,
                                                int64_t* __restrict__ out) {
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t lane = static_cast<int32_t>(threadIdx.x) & (HISTOGRAM_WARP_LANES - 1);
  const int32_t warp_first_thread = static_cast<int32_t>(threadIdx.x) - lane;
  const uint32_t warp_mask = histogram_warp_mask();
  const unsigned blocks = HISTOGRAM_CLUSTER_BLOCKS;  // gpuboost_cluster_blocks(), known to nvcc
  const int32_t slice_words =
      (group_fields + static_cast<int32_t>(blocks) * HISTOGRAM_WARP_LANES - 1) /
      (static_cast<int32_t>(blocks) * HISTOGRAM_WARP_LANES) * HISTOGRAM_WARP_LANES;
  const int32_t slice_begin = static_cast<int32_t>(gpuboost_cluster_rank()) * slice_words;
  const int32_t first_word = slice_begin < group_fields ? slice_begin : group_fields;
  const int32_t last_word =
      group_fields - first_word < slice_words ? group_fields : first_word + slice_words;
  for (int32_t warp_word = first_word + warp_first_thread; warp_word < last_word;
       warp_word += threads) {
    const int32_t word = warp_word + lane;
    uint64_t sum = 0;  // exact: int64 two's complement, modular
    bool has_rows = false;
    if (word < last_word) {
      int32_t field = 0;
      const int32_t cell = shared_cell_of_word(word, n_bins, feature_stride, &field);
      for (unsigned rank = 0; rank < blocks; ++rank) {
        const SharedPlanes planes =
            shared_planes(gpuboost_cluster_shared(shared_words, rank), plane_words);
        const uint32_t packed = planes.hessian_high_count[cell];
        if (packed != 0u) {
          has_rows = true;
          sum += static_cast<uint64_t>(shared_cell_field(planes, cell, field, packed));
        }
      }
    }
    if (has_rows) gpuboost_atomic_add_int64(&out[word], static_cast<int64_t>(sum));
    __syncwarp(warp_mask);
  }
}

// The shared-memory histogram of histogram_shared_block, flushed once per cluster of
// blocks instead of once per block.
// Cluster: HISTOGRAM_CLUSTER_BLOCKS consecutive row blocks of one feature group
//   (blocks_per_group is a multiple of the cluster size: host) take the batch's rows of
//   their ranges together, rows_per_block * blocks rows from the cluster's first block's
//   start, piece by piece (a node's rows in the range, as find_row_piece cuts them). Per
//   pass of a piece (at most blocks * MAX_ROWS_PER_PASS rows) every block accumulates its
//   share (whole warps of positions, at most MAX_ROWS_PER_PASS) in its own shared
//   histogram; after a cluster barrier, block `rank` adds the cluster's sums of its share
//   of the group's global words (a warp-aligned slice) into the node's histogram, reading
//   every block's cells; a second barrier keeps the cells until all have read them.
//   Every block of a cluster walks the same pieces and passes (they depend on the
//   cluster's range only), so all meet at the same barriers.
// So a level flushes about (clusters + nodes) tables per group where
// histogram_shared_block flushes (blocks + nodes), at the cost of reading each cell from
// the cluster's blocks over the SM-to-SM network (not DRAM).
template <class Bins>
GPUBOOST_DEVICE_INLINE void histogram_cluster_block(
    const Bins& bins, const int32_t* __restrict__ quantized_pairs,
    const int32_t* __restrict__ sample_indices, const int64_t* __restrict__ node_begins,
    const int64_t* __restrict__ node_offsets, int32_t n_nodes, int32_t n_features,
    int32_t n_bins, int32_t features_per_group, int32_t feature_stride,
    int64_t blocks_per_group, int64_t rows_per_block, int64_t* __restrict__ histograms) {
  GPUBOOST_DYNAMIC_SHARED(uint32_t, shared_words);
  const int64_t blocks = HISTOGRAM_CLUSTER_BLOCKS;  // gpuboost_cluster_blocks(), known to nvcc
  const int2* const gradient_pairs = reinterpret_cast<const int2*>(quantized_pairs);
  const int64_t group = static_cast<int64_t>(blockIdx.x) / blocks_per_group;
  const int64_t row_block = static_cast<int64_t>(blockIdx.x) % blocks_per_group;
  const int64_t cluster_rows = rows_per_block * blocks;
  const int64_t cluster_begin = (row_block / blocks) * cluster_rows;
  const int64_t batch_rows = node_offsets[n_nodes];
  const int64_t cluster_end =
      batch_rows - cluster_begin < cluster_rows ? batch_rows : cluster_begin + cluster_rows;
  const int64_t first_feature = group * features_per_group;
  const int64_t features_left = n_features - first_feature;
  const int32_t group_features = static_cast<int32_t>(
      features_left < features_per_group ? features_left : features_per_group);
  const int32_t plane_words = group_features * feature_stride;
  const int32_t group_words = plane_words * SHARED_WORDS_PER_CELL;
  const SharedPlanes planes = shared_planes(shared_words, plane_words);
  const int32_t group_fields = group_features * n_bins * HISTOGRAM_FIELDS;
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  for (int64_t position = cluster_begin; position < cluster_end;) {
    const RowPiece rows =
        find_row_piece(position, cluster_end, node_begins, node_offsets, n_nodes);
    position = rows.next_position;
    int64_t* const out =
        histograms + histogram_cell(rows.node, first_feature, 0, n_features, n_bins);
    for (int64_t pass_begin = rows.begin; pass_begin < rows.end;
         pass_begin += blocks * MAX_ROWS_PER_PASS) {
      const int64_t pass_rows = rows.end - pass_begin < blocks * MAX_ROWS_PER_PASS
                                    ? rows.end - pass_begin
                                    : blocks * MAX_ROWS_PER_PASS;
      // Whole warps of positions (at most MAX_ROWS_PER_PASS, a multiple of a warp).
      const int64_t block_share = (pass_rows + blocks * HISTOGRAM_WARP_LANES - 1) /
                                  (blocks * HISTOGRAM_WARP_LANES) * HISTOGRAM_WARP_LANES;
      const int64_t own_offset = static_cast<int64_t>(gpuboost_cluster_rank()) * block_share;
      const int64_t own_begin = own_offset < pass_rows ? own_offset : pass_rows;
      const int64_t own_rows =
          pass_rows - own_begin < block_share ? pass_rows - own_begin : block_share;
      for (int32_t word = thread; word < group_words; word += threads) shared_words[word] = 0u;
      __syncthreads();
      bins.add(gradient_pairs, sample_indices, pass_begin + own_begin, own_rows, first_feature,
               group_features, feature_stride, planes);
      gpuboost_cluster_sync();  // every block's cells are complete
      flush_cluster_share(shared_words, plane_words, group_fields, n_bins, feature_stride, out);
      gpuboost_cluster_sync();  // every block has read the cells the next pass clears
    }
  }
}

// histogram_shared_memory flushed per cluster (histogram_cluster_block).
extern "C" __global__ void __cluster_dims__(HISTOGRAM_CLUSTER_BLOCKS, 1, 1)
__launch_bounds__(HISTOGRAM_MAX_BLOCK_THREADS, HISTOGRAM_MIN_BLOCKS_PER_SM)
    histogram_cluster_memory(const uint8_t* __restrict__ X_binned, int64_t row_stride,
                             const int32_t* __restrict__ quantized_pairs,
                             const int32_t* __restrict__ sample_indices,
                             const int64_t* __restrict__ node_begins,
                             const int64_t* __restrict__ node_offsets, int32_t n_nodes,
                             int32_t n_features, int32_t n_bins, int32_t features_per_group,
                             int32_t feature_stride, int64_t blocks_per_group,
                             int64_t rows_per_block, int64_t* __restrict__ histograms) {
  histogram_cluster_block(RowMajorBins{X_binned, row_stride}, quantized_pairs, sample_indices,
                          node_begins, node_offsets, n_nodes, n_features, n_bins,
                          features_per_group, feature_stride, blocks_per_group, rows_per_block,
                          histograms);
}

// histogram_shared_columns flushed per cluster (histogram_cluster_block).
extern "C" __global__ void __cluster_dims__(HISTOGRAM_CLUSTER_BLOCKS, 1, 1)
__launch_bounds__(HISTOGRAM_MAX_BLOCK_THREADS, HISTOGRAM_MIN_BLOCKS_PER_SM)
    histogram_cluster_columns(const uint8_t* __restrict__ X_columns, int64_t n_rows,
                              const int32_t* __restrict__ quantized_pairs,
                              const int32_t* __restrict__ sample_indices,
                              const int64_t* __restrict__ node_begins,
                              const int64_t* __restrict__ node_offsets, int32_t n_nodes,
                              int32_t n_features, int32_t n_bins, int32_t features_per_group,
                              int32_t feature_stride, int64_t blocks_per_group,
                              int64_t rows_per_block, int64_t* __restrict__ histograms) {
  histogram_cluster_block(ColumnBins{X_columns, n_rows}, quantized_pairs, sample_indices,
                          node_begins, node_offsets, n_nodes, n_features, n_bins,
                          features_per_group, feature_stride, blocks_per_group, rows_per_block,
                          histograms);
}
#endif  // GPUBOOST_CLUSTERS

// Global-memory histogram (fallback when one feature's bins exceed shared memory).
// Block: the batch's rows of its range (node by node), all features (blocks_per_group ==
//   grid size).
// Thread: (row, feature) pairs strided by blockDim.x, three 64-bit global atomics each.
extern "C" __global__ void __launch_bounds__(HISTOGRAM_MAX_BLOCK_THREADS)
    histogram_global_memory(const uint8_t* __restrict__ X_binned, int64_t row_stride,
                            const int32_t* __restrict__ quantized_pairs,
                            const int32_t* __restrict__ sample_indices,
                            const int64_t* __restrict__ node_begins,
                            const int64_t* __restrict__ node_offsets, int32_t n_nodes,
                            int32_t n_features, int32_t n_bins, int64_t rows_per_block,
                            int64_t* __restrict__ histograms) {
  const int2* const gradient_pairs = reinterpret_cast<const int2*>(quantized_pairs);
  const int64_t block_begin = static_cast<int64_t>(blockIdx.x) * rows_per_block;
  const int64_t batch_rows = node_offsets[n_nodes];
  const int64_t block_end =
      batch_rows - block_begin < rows_per_block ? batch_rows : block_begin + rows_per_block;
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  const int64_t row_offset_step = threads / n_features;
  const int32_t feature_step = threads % n_features;
  for (int64_t position = block_begin; position < block_end;) {
    const RowPiece rows =
        find_row_piece(position, block_end, node_begins, node_offsets, n_nodes);
    position = rows.next_position;
    const int64_t n_rows = rows.end - rows.begin;
    int64_t row_offset = thread / n_features;
    int32_t feature = thread % n_features;
    while (row_offset < n_rows) {
      const int64_t row = sample_indices[rows.begin + row_offset];
      const int32_t bin = X_binned[row * row_stride + feature];
      const int64_t out = histogram_cell(rows.node, feature, bin, n_features, n_bins);
      const int2 pair = gpuboost_load_int2(&gradient_pairs[row]);
      gpuboost_atomic_add_int64(&histograms[out + HISTOGRAM_GRADIENT], pair.x);
      gpuboost_atomic_add_int64(&histograms[out + HISTOGRAM_HESSIAN], pair.y);
      gpuboost_atomic_add_int64(&histograms[out + HISTOGRAM_COUNT], 1);
      row_offset += row_offset_step;
      feature += feature_step;
      if (feature >= n_features) {
        feature -= n_features;
        ++row_offset;
      }
    }
  }
}

//: Threads per block of histogram_subtract_siblings.
constexpr int SUBTRACT_BLOCK_THREADS = 256;

// Sibling histograms by subtraction (histogram subtraction trick), written straight into
// the second half of the batch that holds the built children (no gathered copy of the
// parents, no concatenation), and the zeroed built half of the next level's batch.
// histograms is (2 * n_pairs, node_words) int64, C order (node_words = n_features * n_bins *
// HISTOGRAM_FIELDS): rows 0 .. n_pairs - 1 hold the built children (complete: this launch
// follows their build on the stream), and this kernel writes rows n_pairs .. 2 n_pairs - 1:
//     histograms[n_pairs + i, :] = parents[parent_rows[i], :] - histograms[i, :]
// exact (two's complement, as NumPy's int64 subtraction). parents is (n_parent_rows,
// node_words) int64, another allocation.
// Block: the first n_pairs * blocks_per_pair blocks subtract: blocks_per_pair blocks per
//   pair (blockIdx.x = pair * blocks_per_pair + k), block k of a pair takes the words
//   k * blockDim.x + thread, strided by blocks_per_pair * blockDim.x; the pair's parent row
//   is read once per thread. The blocks after them (about SUBTRACT_WORDS_PER_THREAD words
//   per thread: backends/cuda/histogram.py; none without a next batch) write zeros over next_zeroed[0 .. next_words - 1] (the built half of the
//   next level's batch, which that level's build adds into): block z takes the words
//   z * blockDim.x + thread, strided by the zeroing blocks' threads. This replaces one
//   zeroing operation per level by stores in a launch that runs anyway (the same bytes).
// Thread: consecutive threads take consecutive words of one node (or of next_zeroed), so
//   the reads of the parent and the built row and the writes of the sibling row and the
//   zeros are coalesced (8 sectors per warp instruction).
extern "C" __global__ void __launch_bounds__(SUBTRACT_BLOCK_THREADS)
    histogram_subtract_siblings(const int64_t* __restrict__ parents,
                                const int64_t* __restrict__ parent_rows, int32_t n_pairs,
                                int64_t node_words, int64_t blocks_per_pair,
                                int64_t next_words, int64_t* __restrict__ histograms,
                                int64_t* __restrict__ next_zeroed) {
  const int64_t subtract_blocks = n_pairs * blocks_per_pair;
  if (static_cast<int64_t>(blockIdx.x) >= subtract_blocks) {  // the whole block
    zero_in_tail_blocks(subtract_blocks, next_words, next_zeroed);
    return;
  }
  const int64_t pair = static_cast<int64_t>(blockIdx.x) / blocks_per_pair;
  const int64_t block_in_pair = static_cast<int64_t>(blockIdx.x) % blocks_per_pair;
  const int64_t* const parent = parents + parent_rows[pair] * node_words;
  const int64_t* const built = histograms + pair * node_words;
  int64_t* const sibling = histograms + (n_pairs + pair) * node_words;
  const int64_t stride = blocks_per_pair * blockDim.x;
  for (int64_t word = block_in_pair * blockDim.x + threadIdx.x; word < node_words;
       word += stride) {
    sibling[word] = exact_difference(parent[word], built[word]);
  }
}
