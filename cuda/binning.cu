// binning.cu -- map raw float64 feature values to uint8 bins on the device.
//
// The contract is gpuboost/data/binning.py (BinMapper.transform) and docs/DESIGN.md
// ("Binning"): a non-missing value x of feature f goes to the first bin b whose
// upper edge satisfies edges_f[b] >= x, i.e. the number of edges strictly below
// x, which is np.searchsorted(edges_f, x, side='left'); +inf lands in the last
// value bin (every edge is finite), -inf in bin 0; NaN goes to missing_bin.
//
// The edges of all features are concatenated into one float64 array; feature f
// owns edges[edge_offsets[f] .. edge_offsets[f + 1]) (strictly increasing, at
// most MAX_BIN_LIMIT - 1 = 254 of them).
#include "common.cuh"

//: Number of the n_edges sorted edges that are strictly below value (value is not NaN):
//: the lower bound of value, as np.searchsorted(edges, value, side='left').
GPUBOOST_DEVICE_INLINE int32_t binning_lower_bound(const double* edges, int32_t n_edges,
                                                   double value) {
  int32_t low = 0;
  int32_t high = n_edges;  // the answer lies in [low, high]
  while (low < high) {
    const int32_t middle = low + (high - low) / 2;
    if (edges[middle] < value) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

// bin_features: bins rows [0, n_rows) of a chunk of raw features and writes them
// to rows [first_output_row, first_output_row + n_rows) of the binned matrix.
//   features      (n_rows, n_features) float64, C order (the chunk)
//   edges         all features' edges, concatenated
//   edge_offsets  (n_features + 1,) int64
//   binned        (n_total_rows, n_features) uint8, row-major, row r at byte
//                 r * row_stride (>= n_features; the padding bytes are not written:
//                 gpuboost/backends/cuda/binned_rows.py)
// Grid-stride loop over the n_rows * n_features elements of the chunk in memory
// order: a block covers blockDim.x consecutive elements per step (coalesced reads,
// and writes that skip only each row's padding bytes), a thread bins one element
// (row, feature) per step. Any 1-D launch shape works (backends/cuda/binning.py:
// BINNING_THREADS_PER_BLOCK).
extern "C" __global__ void bin_features(
    const double* features, int64_t n_rows, int32_t n_features, const double* edges,
    const int64_t* edge_offsets, int32_t missing_bin, int64_t first_output_row,
    int64_t row_stride, uint8_t* binned) {
  const int64_t n_elements = n_rows * static_cast<int64_t>(n_features);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t element = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       element < n_elements; element += stride) {
    const int64_t row = element / n_features;
    const int32_t feature = static_cast<int32_t>(element - row * n_features);
    const double value = features[element];
    int32_t bin = missing_bin;
    if (!gpuboost_is_nan(value)) {
      const int64_t first_edge = edge_offsets[feature];
      const int32_t n_edges = static_cast<int32_t>(edge_offsets[feature + 1] - first_edge);
      bin = binning_lower_bound(edges + first_edge, n_edges, value);
    }
    binned[(first_output_row + row) * row_stride + feature] = static_cast<uint8_t>(bin);
  }
}

// weighted_run_totals: the cumulative weights of the weighted bin edges
// (gpuboost/data/binning.py: weighted_bin_edges), as the definition sums them.
//   sorted_values  (n_features, n_columns) float64: row f holds feature f's values of
//                  the sampled rows sorted ascending, a stable sort (rows of equal values
//                  in increasing row order); its first counts[f] are the non-missing ones
//   sorted_weights (n_features, n_columns) float64: their rows' weights, same order
//   counts         (n_features,) int64
//   totals         (n_features, n_columns) float64, out: at the last position of each run
//                  of equal values, the cumulative weight through that run (other
//                  positions: the cumulative weight before it)
// Each run's weights are added one after another in row order (np.bincount), the run
// sums then one after another in value order (np.cumsum): float sums whose order is the
// definition's, so one thread walks one feature. Threads: features, grid-stride.
extern "C" __global__ void weighted_run_totals(const double* sorted_values,
                                               const double* sorted_weights,
                                               const int64_t* counts, int64_t n_columns,
                                               int32_t n_features, double* totals) {
  const int32_t stride = static_cast<int32_t>(gridDim.x * blockDim.x);
  for (int32_t feature = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
       feature < n_features; feature += stride) {
    const double* values = sorted_values + feature * n_columns;
    const double* weights = sorted_weights + feature * n_columns;
    double* out = totals + feature * n_columns;
    const int64_t count = counts[feature];
    double total = 0.0;
    double run = 0.0;
    for (int64_t position = 0; position < count; ++position) {
      run = run + weights[position];
      if (position + 1 == count || values[position + 1] != values[position]) {
        total = total + run;
        run = 0.0;
      }
      out[position] = total;
    }
  }
}
