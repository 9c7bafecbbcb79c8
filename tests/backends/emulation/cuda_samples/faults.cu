// Sample kernels for tests/backends/emulation/test_emulation.py: kernels that fail, and must
// fail as a RuntimeError under emulation rather than crash.
#include "common.cuh"

extern "C" __global__ void assert_positive(const int* __restrict__ values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(values[i] > 0);
}

extern "C" __global__ void trap_on_negative(const int* __restrict__ values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && values[i] < 0) __trap();
}

// Half of the block waits at one __syncthreads, half at another.
extern "C" __global__ void divergent_barrier(int* __restrict__ out) {
  if (threadIdx.x < blockDim.x / 2) {
    __syncthreads();
    out[threadIdx.x] = 1;
  } else {
    __syncthreads();
    out[threadIdx.x] = 2;
  }
}

// Lanes >= 16 return before a full-mask shuffle (undefined on a GPU).
extern "C" __global__ void shuffle_after_early_return(int* __restrict__ out) {
  const int lane = threadIdx.x % warpSize;
  if (lane >= warpSize / 2) return;
  out[threadIdx.x] = __shfl_down_sync(GPUBOOST_FULL_WARP_MASK, lane, 1);
}

// Lanes 0-15 wait at __syncthreads while lanes 16-31 of the same warp wait in
// a full-warp shuffle: neither can finish (a hang or undefined on a GPU).
extern "C" __global__ void barrier_shuffle_deadlock(int* __restrict__ out) {
  const int lane = threadIdx.x % warpSize;
  if (lane < warpSize / 2) {
    __syncthreads();
    out[threadIdx.x] = 0;
  } else {
    out[threadIdx.x] = __shfl_xor_sync(GPUBOOST_FULL_WARP_MASK, lane, 1);
  }
}
