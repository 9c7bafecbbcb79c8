// Sample kernel for tests/backends/emulation/test_emulation.py: shared-memory histogram with
// 32-bit and 64-bit atomics.
#include "common.cuh"

//: Bins of the sample histogram (uint8 keys).
#define SAMPLE_BINS 256

// counts[b] += number of rows with bins[row] == b; sums[b] += weights of those rows.
extern "C" __global__ void histogram_shared(const uint8_t* __restrict__ bins,
                                            const int32_t* __restrict__ weights, int n,
                                            int32_t* __restrict__ counts,
                                            int64_t* __restrict__ sums) {
  __shared__ int block_counts[SAMPLE_BINS];
  __shared__ unsigned long long block_sums[SAMPLE_BINS];
  for (int b = threadIdx.x; b < SAMPLE_BINS; b += blockDim.x) {
    block_counts[b] = 0;
    block_sums[b] = 0;
  }
  __syncthreads();
  for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < n; row += gridDim.x * blockDim.x) {
    atomicAdd(&block_counts[bins[row]], 1);
    atomicAdd(&block_sums[bins[row]], static_cast<unsigned long long>(static_cast<int64_t>(weights[row])));
  }
  __syncthreads();
  for (int b = threadIdx.x; b < SAMPLE_BINS; b += blockDim.x) {
    if (block_counts[b] != 0) {
      atomicAdd(&counts[b], block_counts[b]);
      gpuboost_atomic_add_int64(&sums[b], static_cast<int64_t>(block_sums[b]));
    }
  }
}
