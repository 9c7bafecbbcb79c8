// partition.cu -- stable row partition of several nodes' segments at once.
//
// Contract (docs/DESIGN.md, "Row partition"; reference gpuboost/backends/numpy/partition.py):
// node i owns positions [begin_i, end_i) of sample_indices; after the split the
// rows going left (bin <= threshold_bin, or bin == missing_bin when default_left)
// fill the first positions of the segment and the others the rest, both in their
// original order.
//
// Two launches per batch of nodes, with no host round trip in between:
//   1. partition_flag_tiles: every segment is cut into tiles of
//      kPartitionTileRows positions (a tile never straddles two segments,
//      segments.cuh); a block takes one tile, saves its rows to `saved_rows`,
//      stores the go-left flag of every position and the tile's number of left rows.
//   2. (host side, on the device) an inclusive cumulative sum of the per-tile
//      left counts over all tiles (int64).
//   3. partition_scatter_tiles: a block takes one tile again, ranks its left and
//      right rows with a block-wide exclusive scan, adds the offsets of the
//      earlier tiles of the same segment (from the cumulative sum) and writes every
//      saved row to its final position in sample_indices.
// Kernel 1 reads sample_indices and kernel 3 only writes it, so the reorder is
// in place without a race; the scratch costs 5 bytes per position.
//
// The per-segment table comes from the host as int64 arrays: begins, ends and
// first_tile (n_segments + 1 entries: segment s owns tiles
// [first_tile[s], first_tile[s + 1]); empty segments own none), and the split of
// each segment (feature, threshold_bin, default_left).
#include "common.cuh"
#include "segments.cuh"

//: Threads per block of both kernels (backends/cuda/partition.py: PARTITION_THREADS_PER_BLOCK).
constexpr int32_t kPartitionThreadsPerBlock = 128;
//: Positions each thread handles per tile (backends/cuda/partition.py: PARTITION_ITEMS_PER_THREAD).
constexpr int32_t kPartitionItemsPerThread = 8;
//: Positions per tile.
constexpr int32_t kPartitionTileRows = kPartitionThreadsPerBlock * kPartitionItemsPerThread;
//: Threads per warp.
constexpr int32_t kPartitionWarpSize = 32;
//: Warps per block.
constexpr int32_t kPartitionWarpsPerBlock = kPartitionThreadsPerBlock / kPartitionWarpSize;
static_assert(kPartitionThreadsPerBlock % kPartitionWarpSize == 0,
              "the block scan needs whole warps");
static_assert(kPartitionWarpsPerBlock <= kPartitionWarpSize,
              "the block scan scans the warp totals with one warp");

//: Inclusive prefix sum of `value` over the lanes of the calling warp.
GPUBOOST_DEVICE_INLINE int32_t partition_warp_inclusive_scan(int32_t value) {
  const int32_t lane = static_cast<int32_t>(threadIdx.x) % kPartitionWarpSize;
  for (int32_t offset = 1; offset < kPartitionWarpSize; offset <<= 1) {
    const int32_t from_below = __shfl_up_sync(GPUBOOST_FULL_WARP_MASK, value, offset);
    if (lane >= offset) value += from_below;
  }
  return value;
}

//: Block-wide exclusive prefix sum of `value` in thread order; `*block_total`
//: receives the sum over the block. Every thread of the block must call it, once
//: per kernel with a __shared__ `warp_totals` of kPartitionWarpsPerBlock entries
//: (not reused afterwards: a second call would need a barrier first).
GPUBOOST_DEVICE_INLINE int32_t partition_block_exclusive_scan(int32_t value,
                                                              int32_t* warp_totals,
                                                              int32_t* block_total) {
  const int32_t lane = static_cast<int32_t>(threadIdx.x) % kPartitionWarpSize;
  const int32_t warp = static_cast<int32_t>(threadIdx.x) / kPartitionWarpSize;
  const int32_t inclusive = partition_warp_inclusive_scan(value);
  if (lane == kPartitionWarpSize - 1) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const int32_t total = lane < kPartitionWarpsPerBlock ? warp_totals[lane] : 0;
    const int32_t scanned = partition_warp_inclusive_scan(total);
    if (lane < kPartitionWarpsPerBlock) warp_totals[lane] = scanned;
  }
  __syncthreads();
  *block_total = warp_totals[kPartitionWarpsPerBlock - 1];
  const int32_t warps_below = warp > 0 ? warp_totals[warp - 1] : 0;
  return warps_below + inclusive - value;
}

//: Half-open positions [*tile_begin, *tile_end) of `tile`, which belongs to `segment`.
GPUBOOST_DEVICE_INLINE void partition_tile_bounds(const int64_t* segment_begins,
                                                  const int64_t* segment_ends,
                                                  const int64_t* first_tile, int32_t segment,
                                                  int64_t tile, int64_t* tile_begin,
                                                  int64_t* tile_end) {
  const int64_t begin =
      segment_begins[segment] + (tile - first_tile[segment]) * kPartitionTileRows;
  const int64_t full_end = begin + kPartitionTileRows;
  *tile_begin = begin;
  *tile_end = full_end < segment_ends[segment] ? full_end : segment_ends[segment];
}

// partition_flag_tiles (launch 1): grid = one block per tile, block =
// kPartitionThreadsPerBlock threads. A block saves its tile's rows, stores the
// go-left flag of each position and writes the tile's left count; a thread
// handles positions tile_begin + item * blockDim.x + threadIdx.x (coalesced).
//   binned           (n_rows, n_features) uint8, C order
//   saved_rows       (n_positions,) int32: copy of sample_indices at the tiles' positions
//   goes_left        (n_positions,) uint8: 1 when the row at that position goes left
//   tile_left_counts (n_tiles,) int32
extern "C" __global__ void __launch_bounds__(kPartitionThreadsPerBlock)
partition_flag_tiles(
    const uint8_t* binned, int32_t n_features, const int32_t* sample_indices,
    const int64_t* segment_begins, const int64_t* segment_ends, const int64_t* first_tile,
    const int64_t* split_features, const int64_t* split_threshold_bins,
    const int64_t* split_default_left, int32_t n_segments, int32_t missing_bin,
    int32_t* saved_rows, uint8_t* goes_left, int32_t* tile_left_counts) {
  const int64_t tile = blockIdx.x;
  const int32_t segment = gpuboost_segment_of_tile(first_tile, n_segments, tile);
  int64_t tile_begin;
  int64_t tile_end;
  partition_tile_bounds(segment_begins, segment_ends, first_tile, segment, tile, &tile_begin,
                        &tile_end);
  const int64_t feature = split_features[segment];
  const int32_t threshold_bin = static_cast<int32_t>(split_threshold_bins[segment]);
  const bool missing_goes_left = split_default_left[segment] != 0;
  int32_t n_left = 0;
  for (int32_t item = 0; item < kPartitionItemsPerThread; ++item) {
    const int64_t position =
        tile_begin + static_cast<int64_t>(item) * kPartitionThreadsPerBlock + threadIdx.x;
    if (position < tile_end) {
      const int32_t row = sample_indices[position];
      saved_rows[position] = row;
      const int32_t bin = binned[static_cast<int64_t>(row) * n_features + feature];
      const bool left = bin <= threshold_bin || (bin == missing_bin && missing_goes_left);
      goes_left[position] = left ? 1 : 0;
      n_left += left ? 1 : 0;
    }
  }
  __shared__ int32_t warp_totals[kPartitionWarpsPerBlock];
  int32_t tile_total;
  partition_block_exclusive_scan(n_left, warp_totals, &tile_total);
  if (threadIdx.x == 0) tile_left_counts[tile] = tile_total;
}

// partition_scatter_tiles (launch 3): grid = one block per tile, block =
// kPartitionThreadsPerBlock threads. A block writes its tile's saved rows to
// their final positions; a thread handles kPartitionItemsPerThread consecutive
// positions, tile_begin + threadIdx.x * kPartitionItemsPerThread + item, so that
// thread order is position order and the block scan of the per-thread left
// counts gives every row its stable rank.
//   tile_left_inclusive (n_tiles,) int64: inclusive cumulative sum of tile_left_counts
//   sample_indices      written at the positions of every tile
extern "C" __global__ void __launch_bounds__(kPartitionThreadsPerBlock)
partition_scatter_tiles(
    const int32_t* saved_rows, const uint8_t* goes_left, const int32_t* tile_left_counts,
    const int64_t* tile_left_inclusive, const int64_t* segment_begins, const int64_t* segment_ends,
    const int64_t* first_tile, int32_t n_segments, int32_t* sample_indices) {
  const int64_t tile = blockIdx.x;
  const int32_t segment = gpuboost_segment_of_tile(first_tile, n_segments, tile);
  int64_t tile_begin;
  int64_t tile_end;
  partition_tile_bounds(segment_begins, segment_ends, first_tile, segment, tile, &tile_begin,
                        &tile_end);
  const int64_t thread_begin =
      tile_begin + static_cast<int64_t>(threadIdx.x) * kPartitionItemsPerThread;
  int32_t thread_lefts = 0;
  for (int32_t item = 0; item < kPartitionItemsPerThread; ++item) {
    const int64_t position = thread_begin + item;
    if (position < tile_end) thread_lefts += goes_left[position];
  }
  __shared__ int32_t warp_totals[kPartitionWarpsPerBlock];
  int32_t tile_total;
  const int32_t lefts_before_thread =
      partition_block_exclusive_scan(thread_lefts, warp_totals, &tile_total);

  // Left rows of the segment before this tile, and in the whole segment.
  const int64_t segment_first = first_tile[segment];
  const int64_t segment_last = first_tile[segment + 1] - 1;
  const int64_t lefts_before_segment =
      tile_left_inclusive[segment_first] - tile_left_counts[segment_first];
  const int64_t lefts_before_tile =
      tile_left_inclusive[tile] - tile_left_counts[tile] - lefts_before_segment;
  const int64_t segment_n_left = tile_left_inclusive[segment_last] - lefts_before_segment;
  const int64_t segment_begin = segment_begins[segment];

  int64_t lefts_before = lefts_before_tile + lefts_before_thread;  // in the segment
  for (int32_t item = 0; item < kPartitionItemsPerThread; ++item) {
    const int64_t position = thread_begin + item;
    if (position < tile_end) {
      const int64_t offset_in_segment = position - segment_begin;
      int64_t destination;
      if (goes_left[position] != 0) {
        destination = segment_begin + lefts_before;
        ++lefts_before;
      } else {
        destination = segment_begin + segment_n_left + (offset_in_segment - lefts_before);
      }
      sample_indices[destination] = saved_rows[position];
    }
  }
}
