// histogram.cu -- per-node gradient / hessian / count histograms
// (gpuboost.backends.numpy.histogram).
//
// For a batch of nodes, node i owning rows sample_indices[begins[i]:ends[i]], build
//     histograms[node, feature, bin, :] = (sum of quantized gradients,
//                                          sum of quantized hessians, row count)
// as exact int64 sums (docs/DESIGN.md, "Quantization"): integer sums do not depend on
// the order of the atomics, so the result equals the NumPy backend's bit for bit.
//
// Layouts: X_binned is row-major (n_rows, n_features) uint8 (Dataset.X_binned). Rows
// are gathered through sample_indices, so a feature-major layout would make every
// thread of a warp touch a different cache line; row-major lets consecutive threads
// read consecutive features of the same row. histograms is (n_nodes, n_features,
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
// feature group in shared memory, then flushes the non-empty bins to global memory with
// 64-bit atomics. A cell is four 32-bit words updated with native 32-bit shared atomics
// only (a 64-bit shared atomicAdd compiles to a compare-and-swap loop on sm_80 / sm_90,
// ATOMS.CAST.SPIN.64, which serializes when many threads hit one bin):
//   * the gradient sum as a 64-bit two's complement number split in a low and a high
//     word; adding a value adds its low half to the low word, and its high half plus
//     the carry out of that atomic (known from the old value it returns) to the high word,
//     so the pair holds the exact 64-bit sum whatever the order of the atomics;
//   * the hessian sum the same way, with the row count packed into its high word:
//     high word = count * 2^16 + (high half of the hessian sum); see the constants.
// The four words of a cell lie in four planes (see the kernel: no bank conflicts between
// lanes at the same bin of consecutive features). 16 bytes per cell, with one padding bin
// per feature when n_bins is even: 28 features x 257 x 16 = 115,136 bytes fit one block on
// sm_80 (opt-in limit 163 KiB; 40 features fit) and sm_90 (227 KiB, 56 features). When a
// dataset's cells do not fit, the host splits the features into groups that do (grid
// dimension above).
// Global-memory kernel: the fallback when not even one feature's bins fit in shared
// memory: every (row, feature) pair adds straight to global memory.
#include "common.cuh"
#include "segments.cuh"

//: Threads per block of both kernels (the host launches with at most this many).
constexpr int HISTOGRAM_MAX_BLOCK_THREADS = 1024;
//: Blocks of the shared-memory kernel an SM must hold (its __launch_bounds__): two blocks
//: of 1024 threads need at most 32 registers a thread (64 K registers per SM); nvcc takes
//: 46 on sm_80 without the bound, and 32 with it, without spilling. Two blocks of 28
//: features fit the shared memory of an sm_90 SM (host: TARGET_BLOCKS_PER_SM).
constexpr int HISTOGRAM_MIN_BLOCKS_PER_SM = 2;
//: Fields of a histogram cell and their order (gpuboost.core.dtypes).
constexpr int HISTOGRAM_FIELDS = 3;
constexpr int HISTOGRAM_GRADIENT = 0;
constexpr int HISTOGRAM_HESSIAN = 1;
constexpr int HISTOGRAM_COUNT = 2;
//: Shared-memory words per cell (one per plane), in this plane order.
constexpr int SHARED_WORDS_PER_CELL = 4;
constexpr int WORD_GRADIENT_LOW = 0;
constexpr int WORD_GRADIENT_HIGH = 1;
constexpr int WORD_HESSIAN_LOW = 2;
constexpr int WORD_HESSIAN_HIGH_COUNT = 3;
//: Bits of the low word of a 64-bit sum.
constexpr int LOW_WORD_BITS = 32;
constexpr uint32_t LOW_WORD_MAX = 0xffffffffu;
//: Largest magnitude of a quantized gradient / hessian (gpuboost.core.dtypes.GRAD_QUANT_MAX).
constexpr int64_t GRAD_QUANT_MAX = int64_t{1} << 30;
//: Rows accumulated in shared memory before a flush. With at most 2^15 rows a cell's
//: hessian sum S satisfies |S| <= 2^15 * 2^30 = 2^45, so its high word floor(S / 2^32)
//: lies in [-2^13, 2^13], and its count n <= 2^15.
constexpr int64_t MAX_ROWS_PER_PASS = int64_t{1} << 15;
//: The packed word is n * 2^16 + floor(S / 2^32) (mod 2^32). As |floor(S / 2^32)| < 2^15,
//: n = (word + 2^15) >> 16 and the high word is word - n * 2^16 (as int32); the word stays
//: below 2^15 * 2^16 + 2^15 + 2^13 < 2^32, so it never wraps.
constexpr int PACKED_COUNT_SHIFT = 16;
constexpr uint32_t PACKED_COUNT_UNIT = 1u << PACKED_COUNT_SHIFT;
constexpr uint32_t PACKED_ROUNDING_HALF = PACKED_COUNT_UNIT >> 1;
static_assert(MAX_ROWS_PER_PASS * GRAD_QUANT_MAX / (int64_t{1} << LOW_WORD_BITS) <
                  static_cast<int64_t>(PACKED_ROUNDING_HALF),
              "the high word of one pass's hessian sum must stay below half a count unit");
static_assert(MAX_ROWS_PER_PASS * PACKED_COUNT_UNIT + 2 * PACKED_ROUNDING_HALF <=
                  static_cast<int64_t>(LOW_WORD_MAX),
              "the packed count word of one pass must not wrap");

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

//: Add the 64-bit `value` (two's complement) to the 64-bit sum held in the shared words
//: `*low` (bits 0-31) and `*high` (bits 32-63, plus `high_extra`), with two native 32-bit
//: atomics. The carry out of the low word is read from the value the atomic returns, so
//: the pair is the exact modular sum of all additions, in any order.
GPUBOOST_DEVICE_INLINE void shared_add_wide(uint32_t* low, uint32_t* high, int64_t value,
                                            uint32_t high_extra) {
  const uint64_t bits = static_cast<uint64_t>(value);
  const uint32_t value_low = static_cast<uint32_t>(bits);
  const uint32_t value_high = static_cast<uint32_t>(bits >> LOW_WORD_BITS);
  const uint32_t previous_low = atomicAdd(low, value_low);
  const uint32_t carry = previous_low > LOW_WORD_MAX - value_low ? 1u : 0u;
  const uint32_t high_addend = value_high + carry + high_extra;  // mod 2^32
  if (high_addend != 0u) atomicAdd(high, high_addend);
}

//: Lanes of a warp.
constexpr int32_t HISTOGRAM_WARP_LANES = 32;

//: The lanes of the calling thread's warp that exist (the last warp of a block whose size is
//: not a multiple of 32 is partial): the mask of its __syncwarp.
GPUBOOST_DEVICE_INLINE uint32_t histogram_warp_mask() {
  const int32_t first_lane = static_cast<int32_t>(threadIdx.x) & ~(HISTOGRAM_WARP_LANES - 1);
  const int32_t lanes = static_cast<int32_t>(blockDim.x) - first_lane;
  return lanes >= HISTOGRAM_WARP_LANES ? GPUBOOST_FULL_WARP_MASK : (1u << lanes) - 1u;
}

//: Flat index of histogram cell (node, feature, bin), field 0.
GPUBOOST_DEVICE_INLINE int64_t histogram_cell(int32_t node, int64_t feature, int32_t bin,
                                              int32_t n_features, int32_t n_bins) {
  return ((static_cast<int64_t>(node) * n_features + feature) * n_bins + bin) * HISTOGRAM_FIELDS;
}

// Shared-memory histogram of one (feature group, row block).
// Block: the batch's rows of its range, node by node (pieces), for the features
//   first_feature .. first_feature + group_features - 1, accumulated in a private
//   shared-memory histogram in passes of at most MAX_ROWS_PER_PASS rows of one piece, each
//   pass flushed to global memory (to the piece's node).
// Shared layout: SHARED_WORDS_PER_CELL planes of plane_words = group_features *
//   feature_stride 32-bit words; word w of cell (feature f, bin b) lies at
//   w * plane_words + f * feature_stride + b. feature_stride is n_bins rounded up to an
//   odd number (host: shared_feature_stride), so the bank of (f, b) is
//   (f * feature_stride + b) mod 32 (+ a per-plane constant): the lanes of a warp take
//   consecutive features of one row, and lanes at the same bin of consecutive features
//   hit consecutive banks (an odd stride is invertible mod 32); lanes at random bins hit
//   random banks. (Cells of 4 contiguous words put the 4 words 16 bytes apart per bin,
//   so every shared atomic of a warp spread over only 8 banks.)
// Thread: the (row, feature) pairs of its warp's tiles of rows (see the loop; consecutive
//   lanes take consecutive features of a row: coalesced reads of X_binned), 2 to 4 native
//   32-bit shared atomics each. The flush walks the group's global words (node, feature,
//   bin, field) in memory order: consecutive threads add to consecutive int64 words
//   (32 lanes: 8 sectors per atomic instruction, against 24 per field when a lane adds
//   a whole 24-byte cell), and read the planes at consecutive cells (no bank conflict).
// Dynamic shared memory: SHARED_WORDS_PER_CELL * features_per_group * feature_stride words.
extern "C" __global__ void
__launch_bounds__(HISTOGRAM_MAX_BLOCK_THREADS, HISTOGRAM_MIN_BLOCKS_PER_SM)
    histogram_shared_memory(const uint8_t* __restrict__ X_binned,
                            const int32_t* __restrict__ quantized_gradients,
                            const int32_t* __restrict__ quantized_hessians,
                            const int32_t* __restrict__ sample_indices,
                            const int64_t* __restrict__ node_begins,
                            const int64_t* __restrict__ node_offsets, int32_t n_nodes,
                            int32_t n_features, int32_t n_bins, int32_t features_per_group,
                            int32_t feature_stride, int64_t blocks_per_group,
                            int64_t rows_per_block, int64_t* __restrict__ histograms) {
  GPUBOOST_DYNAMIC_SHARED(uint32_t, shared_words);
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
  uint32_t* const gradient_low = shared_words + WORD_GRADIENT_LOW * plane_words;
  uint32_t* const gradient_high = shared_words + WORD_GRADIENT_HIGH * plane_words;
  uint32_t* const hessian_low = shared_words + WORD_HESSIAN_LOW * plane_words;
  uint32_t* const hessian_high_count = shared_words + WORD_HESSIAN_HIGH_COUNT * plane_words;
  const int32_t group_fields = group_features * n_bins * HISTOGRAM_FIELDS;

  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  const int32_t lane = thread & (HISTOGRAM_WARP_LANES - 1);
  const int32_t warp_first_thread = thread - lane;
  const int32_t warp_lanes = threads - warp_first_thread < HISTOGRAM_WARP_LANES
                                 ? threads - warp_first_thread
                                 : HISTOGRAM_WARP_LANES;
  const uint32_t warp_mask = histogram_warp_mask();
  // Advancing a (row, feature) pair of a warp's tile by warp_lanes pairs moves it by these.
  const int32_t tile_row_step = warp_lanes / group_features;
  const int32_t tile_feature_step = warp_lanes % group_features;

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

      // Rows in tiles of one warp: in each round of blockDim.x rows, the warp's lanes
      // read the position, gradient and hessian of one row each (coalesced where the rows
      // are: sample_indices always), then walk the tile's (row, feature) pairs, consecutive
      // lanes on consecutive features of a row (coalesced reads of X_binned), taking the
      // row's index, gradient and hessian from its lane by shuffle: each is read once per
      // row, not once per warp instruction that touches the row.
      // The loops are warp-uniform and meet at the shuffles every step, so the lanes of a
      // warp issue each step's shared atomics (and the flush's global atomics) together.
      for (int64_t round_begin = 0; round_begin < pass_rows; round_begin += threads) {
        const int64_t tile_begin = round_begin + warp_first_thread;
        const int64_t rows_left = pass_rows - tile_begin;
        const int32_t tile_rows = static_cast<int32_t>(
            rows_left < warp_lanes ? (rows_left > 0 ? rows_left : 0) : warp_lanes);
        int32_t lane_row = 0;
        int32_t lane_gradient = 0;
        int32_t lane_hessian = 0;
        if (lane < tile_rows) {
          lane_row = sample_indices[pass_begin + tile_begin + lane];
          lane_gradient = quantized_gradients[lane_row];
          lane_hessian = quantized_hessians[lane_row];
        }
        const int32_t tile_pairs = tile_rows * group_features;
        int32_t tile_row = lane / group_features;
        int32_t feature = lane % group_features;
        for (int32_t warp_pair = 0; warp_pair < tile_pairs; warp_pair += warp_lanes) {
          const int32_t source = tile_row < tile_rows ? tile_row : 0;
          const int64_t row = __shfl_sync(warp_mask, lane_row, source);
          const int32_t gradient = __shfl_sync(warp_mask, lane_gradient, source);
          const int32_t hessian = __shfl_sync(warp_mask, lane_hessian, source);
          if (tile_row < tile_rows) {  // this lane's pair, warp_pair + lane, exists
            const int32_t bin = X_binned[row * n_features + first_feature + feature];
            const int32_t cell = feature * feature_stride + bin;
            shared_add_wide(&gradient_low[cell], &gradient_high[cell], gradient, 0u);
            shared_add_wide(&hessian_low[cell], &hessian_high_count[cell], hessian,
                            PACKED_COUNT_UNIT);
          }
          tile_row += tile_row_step;
          feature += tile_feature_step;
          if (feature >= group_features) {
            feature -= group_features;
            ++tile_row;
          }
        }
      }
      __syncthreads();

      for (int32_t warp_word = warp_first_thread; warp_word < group_fields;
           warp_word += threads) {
        const int32_t word = warp_word + lane;
        const int32_t cell_index = word / HISTOGRAM_FIELDS;  // feature * n_bins + bin
        const int32_t field = word - cell_index * HISTOGRAM_FIELDS;
        const int32_t cell = cell_index + (cell_index / n_bins) * (feature_stride - n_bins);
        // A cell without rows holds 0 (n rows leave at least n * (2^16 - 1) in its packed
        // word).
        const uint32_t packed = word < group_fields ? hessian_high_count[cell] : 0u;
        if (packed != 0u) {
          const uint32_t count = (packed + PACKED_ROUNDING_HALF) >> PACKED_COUNT_SHIFT;
          int64_t value = static_cast<int64_t>(count);
          if (field == HISTOGRAM_GRADIENT) {
            const uint64_t high = static_cast<uint64_t>(gradient_high[cell]) << LOW_WORD_BITS;
            value = static_cast<int64_t>(high | gradient_low[cell]);
          } else if (field == HISTOGRAM_HESSIAN) {
            const int32_t high = static_cast<int32_t>(packed - (count << PACKED_COUNT_SHIFT));
            value = static_cast<int64_t>(high) * (int64_t{1} << LOW_WORD_BITS) +
                    static_cast<int64_t>(hessian_low[cell]);
          }
          gpuboost_atomic_add_int64(&out[word], value);
        }
        __syncwarp(warp_mask);
      }
      __syncthreads();  // the next pass clears the cells this pass just flushed
    }
  }
}

// Global-memory histogram (fallback when one feature's bins exceed shared memory).
// Block: the batch's rows of its range (node by node), all features (blocks_per_group ==
//   grid size).
// Thread: (row, feature) pairs strided by blockDim.x, three 64-bit global atomics each.
extern "C" __global__ void __launch_bounds__(HISTOGRAM_MAX_BLOCK_THREADS)
    histogram_global_memory(const uint8_t* __restrict__ X_binned,
                            const int32_t* __restrict__ quantized_gradients,
                            const int32_t* __restrict__ quantized_hessians,
                            const int32_t* __restrict__ sample_indices,
                            const int64_t* __restrict__ node_begins,
                            const int64_t* __restrict__ node_offsets, int32_t n_nodes,
                            int32_t n_features, int32_t n_bins, int64_t rows_per_block,
                            int64_t* __restrict__ histograms) {
  const int64_t block_begin = static_cast<int64_t>(blockIdx.x) * rows_per_block;
  const int64_t batch_rows = node_offsets[n_nodes];
  const int64_t block_end =
      batch_rows - block_begin < rows_per_block ? batch_rows : block_begin + rows_per_block;
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  const int64_t row_stride = threads / n_features;
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
      const int32_t bin = X_binned[row * n_features + feature];
      const int64_t out = histogram_cell(rows.node, feature, bin, n_features, n_bins);
      gpuboost_atomic_add_int64(&histograms[out + HISTOGRAM_GRADIENT], quantized_gradients[row]);
      gpuboost_atomic_add_int64(&histograms[out + HISTOGRAM_HESSIAN], quantized_hessians[row]);
      gpuboost_atomic_add_int64(&histograms[out + HISTOGRAM_COUNT], 1);
      row_offset += row_stride;
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
// parents, no concatenation).
// histograms is (2 * n_pairs, node_words) int64, C order (node_words = n_features * n_bins *
// HISTOGRAM_FIELDS): rows 0 .. n_pairs - 1 hold the built children (complete: this launch
// follows their build on the stream), and this kernel writes rows n_pairs .. 2 n_pairs - 1:
//     histograms[n_pairs + i, :] = parents[parent_rows[i], :] - histograms[i, :]
// exact (two's complement, as NumPy's int64 subtraction). parents is (n_parent_rows,
// node_words) int64, another allocation.
// Block: blocks_per_pair blocks per pair (blockIdx.x = pair * blocks_per_pair + k), block k
//   of a pair takes the words k * blockDim.x + thread, strided by blocks_per_pair *
//   blockDim.x; the pair's parent row is read once per thread.
// Thread: consecutive threads take consecutive words of one node, so the reads of the
//   parent and the built row and the writes of the sibling row are coalesced (8 sectors
//   per warp instruction).
extern "C" __global__ void __launch_bounds__(SUBTRACT_BLOCK_THREADS)
    histogram_subtract_siblings(const int64_t* __restrict__ parents,
                                const int64_t* __restrict__ parent_rows, int32_t n_pairs,
                                int64_t node_words, int64_t blocks_per_pair,
                                int64_t* __restrict__ histograms) {
  const int64_t pair = static_cast<int64_t>(blockIdx.x) / blocks_per_pair;
  const int64_t block_in_pair = static_cast<int64_t>(blockIdx.x) % blocks_per_pair;
  const int64_t* const parent = parents + parent_rows[pair] * node_words;
  const int64_t* const built = histograms + pair * node_words;
  int64_t* const sibling = histograms + (n_pairs + pair) * node_words;
  const int64_t stride = blocks_per_pair * blockDim.x;
  for (int64_t word = block_in_pair * blockDim.x + threadIdx.x; word < node_words;
       word += stride) {
    sibling[word] = static_cast<int64_t>(static_cast<uint64_t>(parent[word]) -
                                         static_cast<uint64_t>(built[word]));
  }
}
