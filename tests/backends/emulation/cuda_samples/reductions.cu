// Sample kernels for tests/backends/emulation/test_emulation.py: block and warp reductions.
#include "common.cuh"

//: Largest block the static-shared reduction supports.
#define MAX_REDUCTION_BLOCK 256

// Sum of each block's values (blockDim.x a power of two <= 256), tree
// reduction in static shared memory.
extern "C" __global__ void block_sum_static(const int64_t* __restrict__ values,
                                            int64_t* __restrict__ block_sums, int n) {
  __shared__ int64_t partial[MAX_REDUCTION_BLOCK];
  assert(blockDim.x <= MAX_REDUCTION_BLOCK);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? values[i] : 0;
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) block_sums[blockIdx.x] = partial[0];
}

// Same in dynamic shared memory (shared_mem = blockDim.x * sizeof(double)).
extern "C" __global__ void block_sum_dynamic(const double* __restrict__ values,
                                             double* __restrict__ block_sums, int n) {
  GPUBOOST_DYNAMIC_SHARED(double, partial);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? values[i] : 0.0;
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) block_sums[blockIdx.x] = partial[0];
}

// Sum of each warp's values with __shfl_down_sync; lane 0 writes it.
extern "C" __global__ void warp_sum(const int* __restrict__ values, int* __restrict__ warp_sums,
                                    int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int value = i < n ? values[i] : 0;
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    value += __shfl_down_sync(GPUBOOST_FULL_WARP_MASK, value, offset);
  }
  if (threadIdx.x % warpSize == 0) warp_sums[i / warpSize] = value;
}

// Per warp: the ballot of values > threshold and its population count; also
// each lane's value broadcast from lane 0 (__shfl_sync) and its inclusive
// prefix sum (__shfl_up_sync) and the warp maximum (__shfl_xor_sync).
extern "C" __global__ void warp_votes(const float* __restrict__ values, float threshold,
                                      unsigned int* __restrict__ ballots,
                                      int* __restrict__ counts, float* __restrict__ broadcast,
                                      float* __restrict__ prefix, float* __restrict__ maxima) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % warpSize;
  const float value = values[i];
  const unsigned int ballot = __ballot_sync(GPUBOOST_FULL_WARP_MASK, value > threshold);
  if (lane == 0) {
    ballots[i / warpSize] = ballot;
    counts[i / warpSize] = __popc(ballot);
  }
  broadcast[i] = __shfl_sync(GPUBOOST_FULL_WARP_MASK, value, 0);
  float running = value;
  for (int offset = 1; offset < warpSize; offset *= 2) {
    const float before = __shfl_up_sync(GPUBOOST_FULL_WARP_MASK, running, offset);
    if (lane >= offset) running += before;
  }
  prefix[i] = running;
  float largest = value;
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    largest = fmaxf(largest, __shfl_xor_sync(GPUBOOST_FULL_WARP_MASK, largest, offset));
  }
  maxima[i] = largest;
}

// __syncthreads_count / _and / _or of (values[i] > 0) per block.
extern "C" __global__ void block_votes(const int* __restrict__ values, int* __restrict__ results) {
  const int positive = values[blockIdx.x * blockDim.x + threadIdx.x] > 0;
  const int count = __syncthreads_count(positive);
  const int all = __syncthreads_and(positive);
  const int any = __syncthreads_or(positive);
  if (threadIdx.x == 0) {
    results[3 * blockIdx.x + 0] = count;
    results[3 * blockIdx.x + 1] = all;
    results[3 * blockIdx.x + 2] = any;
  }
}

// Block 0 writes its static and dynamic shared slots; every block then
// reports what it reads there. On a GPU the other blocks would read garbage;
// the emulator fills shared memory with 0xff bytes (NaN) before every block.
extern "C" __global__ void read_shared_before_write(float* __restrict__ seen) {
  __shared__ float static_slot[1];
  GPUBOOST_DYNAMIC_SHARED(float, dynamic_slot);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    static_slot[0] = 1.0f;
    dynamic_slot[0] = 2.0f;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    seen[2 * blockIdx.x] = static_slot[0];
    seen[2 * blockIdx.x + 1] = dynamic_slot[0];
  }
}
