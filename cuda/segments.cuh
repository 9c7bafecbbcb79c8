// segments.cuh -- segments of a position array cut into tiles, shared by the
// segment-parallel kernels (partition.cu, leaf.cu).
//
// A segment is a half-open range [begin_s, end_s) of sample_indices (docs/DESIGN.md,
// "Row partition"). The host (gpuboost/backends/cuda/launch.py, segment_tiles) cuts
// every segment into tiles of a kernel's tile size, so that a tile never straddles
// two segments, and passes first_tile (n_segments + 1 entries, int64): segment s owns
// tiles [first_tile[s], first_tile[s + 1]); an empty segment owns none. A block takes
// one tile (blockIdx.x) and finds its segment with gpuboost_segment_of_tile.
#ifndef GPUBOOST_SEGMENTS_CUH
#define GPUBOOST_SEGMENTS_CUH

#include "common.cuh"

//: The segment that owns `tile`: the largest s with first_tile[s] <= tile
//: (first_tile is non-decreasing, first_tile[0] == 0 and first_tile[n_segments]
//: is the number of tiles, which is larger than any tile index).
GPUBOOST_DEVICE_INLINE int32_t gpuboost_segment_of_tile(const int64_t* first_tile,
                                                        int32_t n_segments, int64_t tile) {
  int32_t low = 0;              // first_tile[low] <= tile
  int32_t high = n_segments;    // first_tile[high] > tile
  while (high - low > 1) {
    const int32_t middle = low + (high - low) / 2;
    if (first_tile[middle] <= tile) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

#endif  // GPUBOOST_SEGMENTS_CUH
