// column_maxima.cuh -- every block's largest |gradient| and |hessian|, for the
// quantization scales (gpuboost.core.quantize; backends/cuda/quantize.py). Kernels that
// write a gradient and a hessian column (gradients.cu) or read one (quantize.cu) reduce
// their rows' magnitudes per block and write one row of block_maxima; the host takes the
// maximum over the blocks.
//
// Maxima as bits: for a non-negative double (fabs clears the sign bit) the unsigned order
// of its IEEE bits is its numeric order, +inf above every finite value and every NaN above
// +inf. The maximum of the bits is therefore exact (order-free) and NaN propagates as in
// np.max, so that quantization_scale rejects a NaN or inf column as the reference does.
//
// Layout: block_maxima (gridDim.x, COLUMN_MAXIMA_COLUMNS) uint64, column 0 the gradients',
// column 1 the hessians'.
#ifndef GPUBOOST_COLUMN_MAXIMA_CUH
#define GPUBOOST_COLUMN_MAXIMA_CUH

#include "common.cuh"

//: Columns of block_maxima (gradient, hessian).
constexpr int COLUMN_MAXIMA_COLUMNS = 2;
//: Most threads of a block that reduces maxima (the size of its shared arrays).
constexpr int COLUMN_MAXIMA_MAX_THREADS = 256;

//: Shared memory of the block reduction: one entry per thread and column.
typedef uint64_t ColumnMaximaShared[COLUMN_MAXIMA_COLUMNS][COLUMN_MAXIMA_MAX_THREADS];

//: The bits of |value| (sign cleared), ordered as the magnitudes (NaN above +inf).
GPUBOOST_DEVICE_INLINE uint64_t column_magnitude_bits(double value) {
  return static_cast<uint64_t>(__double_as_longlong(fabs(value)));
}

//: The larger of two magnitude bit patterns.
GPUBOOST_DEVICE_INLINE uint64_t column_larger_bits(uint64_t first, uint64_t second) {
  return second > first ? second : first;
}

//: Reduces the threads' largest bits (blockDim.x a power of two, at most
//: COLUMN_MAXIMA_MAX_THREADS; every thread of the block calls it) and thread 0 writes the
//: block's row of block_maxima.
GPUBOOST_DEVICE_INLINE void column_maxima_store_block(uint64_t largest_gradient,
                                                      uint64_t largest_hessian,
                                                      ColumnMaximaShared& shared,
                                                      uint64_t* __restrict__ block_maxima) {
  const unsigned thread = threadIdx.x;
  shared[0][thread] = largest_gradient;
  shared[1][thread] = largest_hessian;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (thread < half) {
      for (int column = 0; column < COLUMN_MAXIMA_COLUMNS; ++column) {
        shared[column][thread] =
            column_larger_bits(shared[column][thread], shared[column][thread + half]);
      }
    }
    __syncthreads();
  }
  if (thread == 0) {
    for (int column = 0; column < COLUMN_MAXIMA_COLUMNS; ++column) {
      block_maxima[static_cast<int64_t>(blockIdx.x) * COLUMN_MAXIMA_COLUMNS + column] =
          shared[column][0];
    }
  }
}

#endif  // GPUBOOST_COLUMN_MAXIMA_CUH
