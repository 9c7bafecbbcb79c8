// quantize.cu -- fixed-point quantization of a tree's gradient and hessian columns
// (gpuboost.core.quantize.quantize of each column; docs/DESIGN.md "Quantization").
//
// Two kernels over both columns at once (backends/cuda/quantize.py):
//   1. column_pair_max_magnitudes: every block's largest |gradient| and |hessian|. The
//      host takes the maximum over the blocks (one copy, one synchronization for both
//      columns) and computes each scale with gpuboost.core.quantize.quantization_scale.
//   2. quantize_column_pair: q = rint(value * scale) as int32 for both columns (float64
//      multiply, compiled with --fmad=false; rint rounds half to even as np.rint).
//
// Maxima as bits: for a non-negative double (fabs clears the sign bit) the unsigned
// order of its IEEE bits is its numeric order, +inf above every finite value and every
// NaN above +inf. The maximum of the bits is therefore exact (order-free) and NaN
// propagates as in np.max, so that quantization_scale rejects a NaN or inf column as the
// reference does.
//
// Layouts: gradients, hessians (n_rows,) float64; block_maxima (gridDim.x, 2) uint64,
// column 0 the gradients', column 1 the hessians'; quantized columns (n_rows,) int32.
// Both kernels are grid-stride loops: in each step a block covers blockDim.x consecutive
// rows (coalesced 8-byte reads and 4-byte writes), a thread one row.
#include "common.cuh"

//: Threads of a block of either kernel (backends/cuda/quantize.py:
//: QUANTIZE_THREADS_PER_BLOCK; a power of two, for the block reduction).
constexpr int QUANTIZE_THREADS_PER_BLOCK = 256;
//: Columns of block_maxima.
constexpr int QUANTIZE_COLUMNS = 2;

//: The bits of |value| (sign cleared), ordered as the magnitudes (NaN above +inf).
GPUBOOST_DEVICE_INLINE uint64_t quantize_magnitude_bits(double value) {
  return static_cast<uint64_t>(__double_as_longlong(fabs(value)));
}

// Largest magnitude of each column per block.
// Thread: rows threadIdx.x + blockIdx.x * blockDim.x + k * gridDim.x * blockDim.x; keeps
//   the largest bits of each column, then the block reduces them in shared memory (tree
//   of halves) and thread 0 writes the block's row of block_maxima.
extern "C" __global__ void __launch_bounds__(QUANTIZE_THREADS_PER_BLOCK)
    column_pair_max_magnitudes(const double* __restrict__ gradients,
                               const double* __restrict__ hessians, int64_t n_rows,
                               uint64_t* __restrict__ block_maxima) {
  __shared__ uint64_t shared_maxima[QUANTIZE_COLUMNS][QUANTIZE_THREADS_PER_BLOCK];
  uint64_t largest_g = 0;
  uint64_t largest_h = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += stride) {
    const uint64_t bits_g = quantize_magnitude_bits(gradients[row]);
    const uint64_t bits_h = quantize_magnitude_bits(hessians[row]);
    largest_g = bits_g > largest_g ? bits_g : largest_g;
    largest_h = bits_h > largest_h ? bits_h : largest_h;
  }
  const unsigned thread = threadIdx.x;
  shared_maxima[0][thread] = largest_g;
  shared_maxima[1][thread] = largest_h;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (thread < half) {
      for (int column = 0; column < QUANTIZE_COLUMNS; ++column) {
        const uint64_t other = shared_maxima[column][thread + half];
        if (other > shared_maxima[column][thread]) shared_maxima[column][thread] = other;
      }
    }
    __syncthreads();
  }
  if (thread == 0) {
    for (int column = 0; column < QUANTIZE_COLUMNS; ++column) {
      block_maxima[static_cast<int64_t>(blockIdx.x) * QUANTIZE_COLUMNS + column] =
          shared_maxima[column][0];
    }
  }
}

// q = rint(value * scale) as int32 for both columns; the scales keep |value * scale| <=
// GRAD_QUANT_MAX (2**30), so the conversion never overflows.
// Thread: one row per grid-stride step.
extern "C" __global__ void __launch_bounds__(QUANTIZE_THREADS_PER_BLOCK)
    quantize_column_pair(const double* __restrict__ gradients,
                         const double* __restrict__ hessians, int64_t n_rows,
                         double scale_gradients, double scale_hessians,
                         int32_t* __restrict__ quantized_gradients,
                         int32_t* __restrict__ quantized_hessians) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += stride) {
    quantized_gradients[row] = static_cast<int32_t>(rint(gradients[row] * scale_gradients));
    quantized_hessians[row] = static_cast<int32_t>(rint(hessians[row] * scale_hessians));
  }
}
