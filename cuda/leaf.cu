// leaf.cu -- per-leaf primitives: adding leaf values to the rows' margins (also
// routing the rows of an unpartitioned last split to its two leaves), and
// the weighted quantile of each leaf's values (leaf refit of quantile objectives).
//
// Leaves are segments [begin_s, end_s) of sample_indices (docs/DESIGN.md, "Row
// partition"). The segment-parallel kernels cut every segment into tiles of
// kLeafTileRows positions (a tile never straddles two segments): segment s owns
// tiles [first_tile[s], first_tile[s + 1]) and a block takes one tile (segments.cuh),
// as in partition.cu. The per-segment table comes from the host in one copy; leaf
// values are float64 rows of it (their bits stored as int64).
//
// Weighted quantile (gpuboost.core.quantile.weighted_quantile, per segment):
// values sorted ascending with a stable sort, cumulative weight in sorted order
// accumulated sequentially in float64 (as np.cumsum), result = the first sorted
// value whose cumulative weight is >= alpha * total. backends/cuda/leaf.py gathers
// and sorts on the device (stable sorts by value, then by segment); the kernel
// select_segment_quantiles then scans each segment with one thread, because only
// a sequential sum rounds exactly as np.cumsum does. With unit weights the
// cumulative weights are the integers 1, 2, ..., n (exact in float64), so the
// thread binary-searches them instead.
#include "common.cuh"
#include "segments.cuh"

//: Threads per block of the tiled kernels (backends/cuda/leaf.py: LEAF_THREADS_PER_BLOCK).
constexpr int32_t kLeafThreadsPerBlock = 128;
//: Positions each thread handles per tile (backends/cuda/leaf.py: LEAF_ITEMS_PER_THREAD).
constexpr int32_t kLeafItemsPerThread = 8;
//: Positions per tile.
constexpr int32_t kLeafTileRows = kLeafThreadsPerBlock * kLeafItemsPerThread;
//: The split feature of add_split_leaf_values' leaf segments over ahead_indices
//: (backends/cuda/leaf.py: AHEAD_LEAF_SEGMENT); any other negative one (LEAF_SEGMENT, -1)
//: is a leaf segment over sample_indices.
constexpr int64_t kAheadLeafSegment = -2;

// add_leaf_values: raw[sample_indices[p], output] += segment_values[s] for every
// position p of every segment s. grid = one block per tile; a thread handles
// positions tile_begin + item * blockDim.x + threadIdx.x. Each row appears at
// most once in the segments, so no two threads touch the same margin.
//   raw (n_rows, n_outputs) float64, C order, updated in place
extern "C" __global__ void __launch_bounds__(kLeafThreadsPerBlock)
add_leaf_values(
    const int32_t* sample_indices, const int64_t* segment_begins, const int64_t* segment_ends,
    const int64_t* first_tile, int32_t n_segments, const double* segment_values, int32_t n_outputs,
    int32_t output, double* raw) {
  const int64_t tile = blockIdx.x;
  const int32_t segment = gpuboost_segment_of_tile(first_tile, n_segments, tile);
  const int64_t tile_begin =
      segment_begins[segment] + (tile - first_tile[segment]) * kLeafTileRows;
  const int64_t segment_end = segment_ends[segment];
  const double value = segment_values[segment];
  for (int32_t item = 0; item < kLeafItemsPerThread; ++item) {
    const int64_t position =
        tile_begin + static_cast<int64_t>(item) * kLeafThreadsPerBlock + threadIdx.x;
    if (position < segment_end) {
      const int64_t row = sample_indices[position];
      raw[row * n_outputs + output] += value;
    }
  }
}

// add_split_leaf_values: the margin update of splits whose rows were never
// partitioned (both children leaves; XGBoost's FinalisePosition; the definition:
// gpuboost/backends/base.py, Backend.add_split_leaf_values). Every position p of
// segment s holds a row that goes left at split s (bin <= threshold_bin, the
// missing bin by default_left, as partition.cu decides) or right; the kernel adds
// left_values[s] or right_values[s] to
// raw[row, output] without moving the row. grid = one block per tile; a thread
// handles positions tile_begin + item * blockDim.x + threadIdx.x (coalesced
// sample_indices; the bin and the margin are gathers). Each row appears at most
// once in the segments, so no two threads touch the same margin. A segment whose
// split feature is negative is a leaf's own (partitioned) segment: every row gets
// left_values[s] and no bin is read, as add_leaf_values does, so one launch (and
// one table copy) updates the margins of a whole tree (backends/cuda/leaf.py:
// add_tree_leaf_values); kAheadLeafSegment the same over ahead_indices (a leaf's rows
// as the row scan partitioned them ahead, backends/cuda/partition_ahead.py).
//   binned_columns (n_features, n_rows) uint8, C order: the bins column by column,
//                  as partition.cu reads them
//   ahead_indices  (n_positions,) int32: read at kAheadLeafSegment segments only
//   split_features (n_segments,) int64: the split's feature, or a leaf segment
//   left_values, right_values (n_segments,) float64
//   raw            (n_rows, n_outputs) float64, C order, updated in place
extern "C" __global__ void __launch_bounds__(kLeafThreadsPerBlock)
add_split_leaf_values(
    const uint8_t* binned_columns, int64_t n_rows, const int32_t* sample_indices,
    const int32_t* ahead_indices, const int64_t* segment_begins, const int64_t* segment_ends,
    const int64_t* first_tile, const int64_t* split_features,
    const int64_t* split_threshold_bins, const int64_t* split_default_left, int32_t n_segments,
    int32_t missing_bin, const double* left_values, const double* right_values,
    int32_t n_outputs, int32_t output, double* raw) {
  const int64_t tile = blockIdx.x;
  const int32_t segment = gpuboost_segment_of_tile(first_tile, n_segments, tile);
  const int64_t tile_begin =
      segment_begins[segment] + (tile - first_tile[segment]) * kLeafTileRows;
  const int64_t segment_end = segment_ends[segment];
  const int64_t feature = split_features[segment];
  const bool routed = feature >= 0;  // the same for the whole block
  const int32_t* const indices = feature == kAheadLeafSegment ? ahead_indices : sample_indices;
  const uint8_t* column = binned_columns + (routed ? feature : 0) * n_rows;
  const int32_t threshold_bin = static_cast<int32_t>(split_threshold_bins[segment]);
  const bool missing_goes_left = split_default_left[segment] != 0;
  const double left_value = left_values[segment];
  const double right_value = right_values[segment];
  for (int32_t item = 0; item < kLeafItemsPerThread; ++item) {
    const int64_t position =
        tile_begin + static_cast<int64_t>(item) * kLeafThreadsPerBlock + threadIdx.x;
    if (position < segment_end) {
      const int64_t row = indices[position];
      bool left = true;
      if (routed) {
        const int32_t bin = column[row];
        left = bin <= threshold_bin || (bin == missing_bin && missing_goes_left);
      }
      raw[row * n_outputs + output] += left ? left_value : right_value;
    }
  }
}

// gather_segment_rows: lays the segments' rows out contiguously, segment after
// segment: rows[output_offsets[s] + (p - begin_s)] = sample_indices[p] and
// segment_of[...] = s. grid = one block per tile; a thread handles positions
// tile_begin + item * blockDim.x + threadIdx.x.
//   output_offsets (n_segments + 1,) int64: exclusive prefix sum of the lengths
extern "C" __global__ void __launch_bounds__(kLeafThreadsPerBlock)
gather_segment_rows(
    const int32_t* sample_indices, const int64_t* segment_begins, const int64_t* segment_ends,
    const int64_t* first_tile, const int64_t* output_offsets, int32_t n_segments, int32_t* rows,
    int32_t* segment_of) {
  const int64_t tile = blockIdx.x;
  const int32_t segment = gpuboost_segment_of_tile(first_tile, n_segments, tile);
  const int64_t segment_begin = segment_begins[segment];
  const int64_t tile_begin = segment_begin + (tile - first_tile[segment]) * kLeafTileRows;
  const int64_t segment_end = segment_ends[segment];
  for (int32_t item = 0; item < kLeafItemsPerThread; ++item) {
    const int64_t position =
        tile_begin + static_cast<int64_t>(item) * kLeafThreadsPerBlock + threadIdx.x;
    if (position < segment_end) {
      const int64_t destination = output_offsets[segment] + (position - segment_begin);
      rows[destination] = sample_indices[position];
      segment_of[destination] = segment;
    }
  }
}

// select_segment_quantiles: one thread per segment; a block holds blockDim.x
// consecutive segments (any 1-D launch shape works; backends/cuda/leaf.py:
// QUANTILE_THREADS_PER_BLOCK). Segment s owns sorted_values[o_s .. o_{s+1})
// (o = output_offsets, non-empty segments), sorted ascending and stably, and the
// matching sorted_weights when has_weights != 0 (unit weights otherwise; then
// sorted_weights is not read). quantiles[s] = the first sorted value whose
// cumulative weight is >= alpha * (total weight), the last one if none is.
extern "C" __global__ void select_segment_quantiles(
    const double* sorted_values, const double* sorted_weights, int32_t has_weights,
    const int64_t* output_offsets, int32_t n_segments, double alpha, double* quantiles) {
  const int64_t segment = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (segment >= n_segments) return;
  const int64_t begin = output_offsets[segment];
  const int64_t end = output_offsets[segment + 1];
  const int64_t count = end - begin;
  int64_t chosen = count - 1;  // np.searchsorted past the end, clipped to the last element
  if (has_weights != 0) {
    // Two sequential passes in sorted order: the total (== the last cumulative
    // sum), then the first cumulative sum reaching the target.
    const double* weights = sorted_weights + begin;
    double total = 0.0;
    for (int64_t i = 0; i < count; ++i) total += weights[i];
    const double target = alpha * total;
    double cumulative = 0.0;
    for (int64_t i = 0; i < count; ++i) {
      cumulative += weights[i];
      if (cumulative >= target) {
        chosen = i;
        break;
      }
    }
  } else {
    // Cumulative weights are 1, 2, ..., count: the smallest i with i + 1 >= target.
    const double target = alpha * static_cast<double>(count);
    int64_t low = 0;
    int64_t high = count;  // the smallest such i lies in [low, high]; high: none
    while (low < high) {
      const int64_t middle = low + (high - low) / 2;
      if (static_cast<double>(middle + 1) >= target) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    if (low < count) chosen = low;
  }
  quantiles[segment] = sorted_values[begin + chosen];
}
