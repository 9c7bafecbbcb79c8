// histogram_shared.cuh -- a node's histogram of one feature group in shared memory,
// exact with native 32-bit shared atomics: the layout and the accumulation shared by
// histogram.cu (flushed to global memory) and row_scan.cu (scanned in place).
//
// A cell is four 32-bit words updated with native 32-bit shared atomics only (a 64-bit
// shared atomicAdd compiles to a compare-and-swap loop on sm_80 / sm_90,
// ATOMS.CAST.SPIN.64, which serializes when many threads hit one bin):
//   * the gradient sum as a 64-bit two's complement number split in a low and a high
//     word; adding a value adds its low half to the low word, and its high half plus
//     the carry out of that atomic (known from the old value it returns) to the high word,
//     so the pair holds the exact 64-bit sum whatever the order of the atomics;
//   * the hessian sum the same way, with the row count packed into its high word:
//     high word = count * 2^16 + (high half of the hessian sum); see the constants.
// Planes: SHARED_WORDS_PER_CELL planes of plane_words = group_features * feature_stride
//   32-bit words; word w of cell (feature f, bin b) lies at w * plane_words +
//   f * feature_stride + b. feature_stride is n_bins rounded up to an odd number (host:
//   shared_feature_stride), so the bank of (f, b) is (f * feature_stride + b) mod 32
//   (+ a per-plane constant): the lanes of a warp take consecutive features of one row,
//   and lanes at the same bin of consecutive features hit consecutive banks (an odd
//   stride is invertible mod 32); lanes at random bins hit random banks. (Cells of 4
//   contiguous words put the 4 words 16 bytes apart per bin, so every shared atomic of a
//   warp spread over only 8 banks.)
#ifndef GPUBOOST_HISTOGRAM_SHARED_CUH
#define GPUBOOST_HISTOGRAM_SHARED_CUH

#include "common.cuh"
#include "histogram_cell.cuh"

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

//: The four planes of a shared histogram of plane_words cells each (see the header).
struct SharedPlanes {
  uint32_t* gradient_low;
  uint32_t* gradient_high;
  uint32_t* hessian_low;
  uint32_t* hessian_high_count;
};

//: The planes of the shared histogram that starts at `shared_words`.
GPUBOOST_DEVICE_INLINE SharedPlanes shared_planes(uint32_t* shared_words, int32_t plane_words) {
  return SharedPlanes{shared_words + WORD_GRADIENT_LOW * plane_words,
                      shared_words + WORD_GRADIENT_HIGH * plane_words,
                      shared_words + WORD_HESSIAN_LOW * plane_words,
                      shared_words + WORD_HESSIAN_HIGH_COUNT * plane_words};
}

//: The exact int64 sums (gradient, hessian, count) of shared cell `cell` (an index into
//: a plane) after at most MAX_ROWS_PER_PASS rows were added.
GPUBOOST_DEVICE_INLINE void shared_cell_sums(const SharedPlanes& planes, int32_t cell,
                                             int64_t (&sums)[HISTOGRAM_FIELDS]) {
  const uint32_t packed = planes.hessian_high_count[cell];
  const uint32_t count = (packed + PACKED_ROUNDING_HALF) >> PACKED_COUNT_SHIFT;
  const int32_t hessian_high = static_cast<int32_t>(packed - (count << PACKED_COUNT_SHIFT));
  const uint64_t gradient_high = static_cast<uint64_t>(planes.gradient_high[cell]);
  sums[HISTOGRAM_GRADIENT] =
      static_cast<int64_t>((gradient_high << LOW_WORD_BITS) | planes.gradient_low[cell]);
  sums[HISTOGRAM_HESSIAN] = static_cast<int64_t>(hessian_high) * (int64_t{1} << LOW_WORD_BITS) +
                            static_cast<int64_t>(planes.hessian_low[cell]);
  sums[HISTOGRAM_COUNT] = static_cast<int64_t>(count);
}

//: Field `field` (HISTOGRAM_GRADIENT, _HESSIAN or _COUNT) of shared cell `cell` as an exact
//: int64 sum, given the cell's packed word `packed` (the caller read it, to skip empty cells).
GPUBOOST_DEVICE_INLINE int64_t shared_cell_field(const SharedPlanes& planes, int32_t cell,
                                                 int32_t field, uint32_t packed) {
  const uint32_t count = (packed + PACKED_ROUNDING_HALF) >> PACKED_COUNT_SHIFT;
  if (field == HISTOGRAM_GRADIENT) {
    const uint64_t high = static_cast<uint64_t>(planes.gradient_high[cell]) << LOW_WORD_BITS;
    return static_cast<int64_t>(high | planes.gradient_low[cell]);
  }
  if (field == HISTOGRAM_HESSIAN) {
    const int32_t high = static_cast<int32_t>(packed - (count << PACKED_COUNT_SHIFT));
    return static_cast<int64_t>(high) * (int64_t{1} << LOW_WORD_BITS) +
           static_cast<int64_t>(planes.hessian_low[cell]);
  }
  return static_cast<int64_t>(count);
}

//: Add one row's (gradient, hessian) and a count of 1 to shared cell `cell`: 2 to 4 native
//: 32-bit shared atomics.
GPUBOOST_DEVICE_INLINE void shared_add_row(const SharedPlanes& planes, int32_t cell,
                                           int32_t gradient, int32_t hessian) {
  shared_add_wide(&planes.gradient_low[cell], &planes.gradient_high[cell], gradient, 0u);
  shared_add_wide(&planes.hessian_low[cell], &planes.hessian_high_count[cell], hessian,
                  PACKED_COUNT_UNIT);
}

// Add rows sample_indices[pass_begin .. pass_begin + pass_rows - 1] (pass_rows <=
// MAX_ROWS_PER_PASS) to the shared histogram of the features first_feature ..
// first_feature + group_features - 1 (cells zero or holding earlier rows of the pass).
// Called by every thread of the block (no barrier inside; the caller synchronizes
// before reading the cells).
// X_binned: row r's bins start at byte r * row_stride (the device layout pads rows to
// whole 32-byte sectors, gpuboost/backends/cuda/binned_rows.py: a gathered row of 28
// features is one sector, not 1.84). gradient_pairs: (n_rows,) int2, row r's (quantized gradient, quantized hessian)
// (quantize.cu writes them so): a gathered row costs one 8-byte load, one 32-byte sector,
// not one sector in each of two int32 columns.
//: Bytes of a word of X_binned (the kernels load a row's bins in 4-byte words).
constexpr int32_t BIN_WORD_BYTES = 4;
constexpr int32_t BIN_WORD_SHIFT = 2;
constexpr int32_t BIN_BITS = 8;
constexpr uint32_t BIN_MASK = 0xffu;

//: Words of a row's bins that hold features first_feature .. + group_features - 1.
GPUBOOST_DEVICE_INLINE int32_t shared_row_words(int64_t first_feature, int32_t group_features) {
  return static_cast<int32_t>(
      ((first_feature + group_features + BIN_WORD_BYTES - 1) >> BIN_WORD_SHIFT) -
      (first_feature >> BIN_WORD_SHIFT));
}

// Rows in tiles of one warp: in each round of blockDim.x rows, the warp's lanes read the
// position and the (gradient, hessian) pair of one row each (coalesced where the rows are:
// sample_indices always), then read the tile's rows in 4-byte words of bins, whole rows
// per warp instruction: with row_words words covering the group's features, a step takes
// warp_lanes / row_words rows, lanes r * row_words .. (r + 1) * row_words - 1 on the
// words of the step's row r, which take the row's index, gradient and hessian from its
// lane by shuffle (each read once per row). A row is thus touched by one load
// instruction, in the sectors its words span (one for a 32-byte padded row), not by the
// two instructions a row split between two (row, feature) steps met; each lane adds the
// bins of its word's bytes that are features of the group. Words past warp_lanes in a
// row (groups of more than 124 features) are taken by the same lanes in turn.
// Requires X_binned and row_stride aligned to BIN_WORD_BYTES (the host:
// gpuboost/backends/cuda/binned_rows.py, word_rows) and the bytes of a row's last word
// past its features initialised (the device layout zeroes its padding): they are read,
// never used. The loops are warp-uniform and meet at the shuffles every step, so the lanes
// of a warp issue each step's shared atomics together. 2 to 4 native 32-bit shared
// atomics per (row, feature) pair.
// saved_rows, saved_words (both or neither; shared memory): where given, the pass's first
// saved_limit rows are kept for a later step of the block (row_scan.cu: the partition
// ahead): position pass_begin + i's row at saved_rows[i] and its words at
// saved_words[i * row_words ..] (row_words: shared_row_words), for i < saved_limit.
GPUBOOST_DEVICE_INLINE void shared_histogram_add_rows(
    const uint8_t* __restrict__ X_binned, const int2* __restrict__ gradient_pairs,
    const int32_t* __restrict__ sample_indices,
    int64_t pass_begin, int64_t pass_rows, int64_t row_stride, int64_t first_feature,
    int32_t group_features, int32_t feature_stride, const SharedPlanes& planes,
    int32_t* saved_rows = nullptr, uint32_t* saved_words = nullptr, int64_t saved_limit = 0) {
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  const int32_t lane = thread & (HISTOGRAM_WARP_LANES - 1);
  const int32_t warp_first_thread = thread - lane;
  const int32_t warp_lanes = threads - warp_first_thread < HISTOGRAM_WARP_LANES
                                 ? threads - warp_first_thread
                                 : HISTOGRAM_WARP_LANES;
  const uint32_t warp_mask = histogram_warp_mask();
  // The words of a row holding the group's features, and how a step lays rows on lanes.
  const int64_t word_first = first_feature >> BIN_WORD_SHIFT;
  const int32_t row_words = shared_row_words(first_feature, group_features);
  const int32_t lanes_per_row = row_words < warp_lanes ? row_words : warp_lanes;
  const int32_t rows_per_step = warp_lanes / lanes_per_row;
  const int32_t step_row = lane / lanes_per_row;  // this lane's row of a step
  const int32_t lane_word = lane - step_row * lanes_per_row;
  // Group feature of byte 0 of the row's word `lane_word` (negative: before the group).
  const int32_t lane_word_feature =
      static_cast<int32_t>((word_first + lane_word) * BIN_WORD_BYTES - first_feature);
  const int64_t row_stride_words = row_stride >> BIN_WORD_SHIFT;
  const uint32_t* const words = reinterpret_cast<const uint32_t*>(X_binned) + word_first;
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
      const int2 pair = gpuboost_load_int2(&gradient_pairs[lane_row]);
      lane_gradient = pair.x;
      lane_hessian = pair.y;
      if (saved_rows != nullptr && tile_begin + lane < saved_limit) {
        saved_rows[tile_begin + lane] = lane_row;
      }
    }
    for (int32_t step_first = 0; step_first < tile_rows; step_first += rows_per_step) {
      const int32_t tile_row = step_first + step_row;
      const bool active = step_row < rows_per_step && tile_row < tile_rows;
      const int32_t source = active ? tile_row : 0;
      const int64_t row = __shfl_sync(warp_mask, lane_row, source);
      const int32_t gradient = __shfl_sync(warp_mask, lane_gradient, source);
      const int32_t hessian = __shfl_sync(warp_mask, lane_hessian, source);
      if (!active) continue;
      const uint32_t* const row_words_at = words + row * row_stride_words;
      uint32_t* const saved_at = saved_words != nullptr && tile_begin + tile_row < saved_limit
                                     ? saved_words + (tile_begin + tile_row) * row_words
                                     : nullptr;
      for (int32_t word = lane_word; word < row_words; word += lanes_per_row) {
        const uint32_t bins = row_words_at[word];
        if (saved_at != nullptr) saved_at[word] = bins;
        const int32_t word_feature = lane_word_feature + (word - lane_word) * BIN_WORD_BYTES;
        for (int32_t byte = 0; byte < BIN_WORD_BYTES; ++byte) {
          const int32_t feature = word_feature + byte;
          if (feature < 0 || feature >= group_features) continue;
          const int32_t bin = static_cast<int32_t>((bins >> (byte * BIN_BITS)) & BIN_MASK);
          shared_add_row(planes, feature * feature_stride + bin, gradient, hessian);
        }
      }
    }
  }
}

// The same sums as shared_histogram_add_rows from the bins column by column: X_columns is
// (n_features, n_rows) uint8, C order (feature f's bins start at byte f * n_rows; the
// partition's copy, gpuboost/backends/cuda/partition.py: binned_columns). For positions
// whose rows are in increasing order (a tree's sample_indices before any partition: the
// root), so that consecutive threads take consecutive positions and read the bins of
// nearby rows of one column: with every row sampled, a warp's 32 bins are one 32-byte
// sector, one byte per (row, feature), where a gathered row-major row costs a sector for
// the row. Thread: the positions pass_begin + thread, strided by blockDim.x; it reads the
// position's row and (gradient, hessian) pair once (coalesced), then the row's bin of
// each feature of the group. No barrier inside; called by every thread of the block.
GPUBOOST_DEVICE_INLINE void shared_histogram_add_columns(
    const uint8_t* __restrict__ X_columns, int64_t n_rows,
    const int2* __restrict__ gradient_pairs, const int32_t* __restrict__ sample_indices,
    int64_t pass_begin, int64_t pass_rows, int64_t first_feature, int32_t group_features,
    int32_t feature_stride, const SharedPlanes& planes) {
  const uint8_t* const group_columns = X_columns + first_feature * n_rows;
  const int32_t* const pass_indices = sample_indices + pass_begin;
  const int32_t group_cells = group_features * feature_stride;
  for (int64_t offset = threadIdx.x; offset < pass_rows; offset += blockDim.x) {
    const int64_t row = pass_indices[offset];
    const int2 pair = gpuboost_load_int2(&gradient_pairs[row]);
    const uint8_t* bin = group_columns + row;  // the row's bin of the feature, column by column
#pragma unroll 1
    for (int32_t cells = 0; cells < group_cells; cells += feature_stride) {
      shared_add_row(planes, cells + *bin, pair.x, pair.y);
      bin += n_rows;
    }
  }
}

#endif  // GPUBOOST_HISTOGRAM_SHARED_CUH
