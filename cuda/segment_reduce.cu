// segment_reduce.cu -- per-segment float64 sums in a fixed sequential order.
//
// The contract is gpuboost/backends/numpy/segment_reduce.py (segment_sums): segment s is the
// positions [begin_s, end_s) of sample_indices (a leaf of the row partition,
// docs/DESIGN.md "Row partition"), and its sum is accumulated in float64 from
// +0.0 in increasing position order:
//
//     total = 0.0; for p in [begin_s, end_s): total += values[sample_indices[p]]
//
// Only a sequential sum rounds the same way on every backend, so one thread sums
// one segment. The cost is O(rows of the largest segment) per launch; it is meant
// for per-leaf sums (a tree has at most a few thousand leaves), not for large
// reductions. Compiled with --fmad=false like every kernel (there is no multiply
// here, so no contraction could happen anyway).
#include "common.cuh"

// segment_sequential_sums: one thread per segment; a block holds blockDim.x
// consecutive segments (any 1-D launch shape works; backends/cuda/segment_reduce.py:
// SEGMENT_SUM_THREADS_PER_BLOCK).
//   values          (n_rows,) float64, indexed by row id
//   sample_indices  (n_positions,) int32
//   segment_begins, segment_ends  (n_segments,) int64
//   sums            (n_segments,) float64, written
extern "C" __global__ void segment_sequential_sums(
    const double* values, const int32_t* sample_indices, const int64_t* segment_begins,
    const int64_t* segment_ends, int32_t n_segments, double* sums) {
  const int64_t segment = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (segment >= n_segments) return;
  const int64_t end = segment_ends[segment];
  double total = 0.0;
  for (int64_t position = segment_begins[segment]; position < end; ++position) {
    total += values[sample_indices[position]];
  }
  sums[segment] = total;
}
