// quantize.cu -- fixed-point quantization of a tree's gradient and hessian columns
// (gpuboost.core.quantize.quantize of each column; docs/DESIGN.md "Quantization").
//
// Two kernels over both columns at once (backends/cuda/quantize.py):
//   1. column_pair_max_magnitudes: every block's largest |gradient| and |hessian|
//      (column_maxima.cuh). The host takes the maximum over the blocks (one copy, one
//      synchronization for both columns) and computes each scale with
//      gpuboost.core.quantize.quantization_scale. The gradient kernels of gradients.cu
//      write the same block maxima while they write the columns, and then this kernel is
//      not launched.
//   2. quantize_column_pair: q = rint(value * scale) as int32 for both columns (float64
//      multiply, compiled with --fmad=false; rint rounds half to even as np.rint).
//
// Layouts: gradients, hessians (n_rows,) float64; block_maxima (gridDim.x, 2) uint64
// (column_maxima.cuh); quantized_pairs (n_rows, 2) int32, C order: row r holds
// (gradient, hessian) in words 2r and 2r + 1, one 8-byte-aligned int2 per row (the host
// allocates it, so it starts 256-byte aligned). The histogram and row-scan kernels gather
// rows through the partition: one row's pair is one 8-byte load inside one 32-byte sector,
// where two separate columns cost two sectors per gathered row.
// Both kernels are grid-stride loops: in each step a block covers blockDim.x consecutive
// rows (coalesced 8-byte reads and 8-byte writes), a thread one row.
#include "common.cuh"
#include "column_maxima.cuh"

//: Threads of a block of either kernel (backends/cuda/quantize.py:
//: QUANTIZE_THREADS_PER_BLOCK; a power of two, for the block reduction).
constexpr int QUANTIZE_THREADS_PER_BLOCK = 256;
static_assert(QUANTIZE_THREADS_PER_BLOCK <= COLUMN_MAXIMA_MAX_THREADS, "shared maxima too small");

// Largest magnitude of each column per block.
// Thread: rows threadIdx.x + blockIdx.x * blockDim.x + k * gridDim.x * blockDim.x; keeps
//   the largest bits of each column, then the block reduces them in shared memory (tree
//   of halves) and thread 0 writes the block's row of block_maxima.
extern "C" __global__ void __launch_bounds__(QUANTIZE_THREADS_PER_BLOCK)
    column_pair_max_magnitudes(const double* __restrict__ gradients,
                               const double* __restrict__ hessians, int64_t n_rows,
                               uint64_t* __restrict__ block_maxima) {
  __shared__ ColumnMaximaShared shared_maxima;
  uint64_t largest_g = 0;
  uint64_t largest_h = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += stride) {
    largest_g = column_larger_bits(largest_g, column_magnitude_bits(gradients[row]));
    largest_h = column_larger_bits(largest_h, column_magnitude_bits(hessians[row]));
  }
  column_maxima_store_block(largest_g, largest_h, shared_maxima, block_maxima);
}

// q = rint(value * scale) as int32 for both columns, written as one (gradient, hessian)
// pair per row; the scales keep |value * scale| <= GRAD_QUANT_MAX (2**30), so the
// conversion never overflows.
// Thread: one row per grid-stride step, one 8-byte store of its pair (a warp writes 256
// consecutive bytes: 8 sectors).
extern "C" __global__ void __launch_bounds__(QUANTIZE_THREADS_PER_BLOCK)
    quantize_column_pair(const double* __restrict__ gradients,
                         const double* __restrict__ hessians, int64_t n_rows,
                         double scale_gradients, double scale_hessians,
                         int32_t* __restrict__ quantized_pairs) {
  int2* const pairs = reinterpret_cast<int2*>(quantized_pairs);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += stride) {
    gpuboost_store_int2(
        &pairs[row], make_int2(static_cast<int32_t>(rint(gradients[row] * scale_gradients)),
                               static_cast<int32_t>(rint(hessians[row] * scale_hessians))));
  }
}
