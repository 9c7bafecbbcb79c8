// Sample kernels for tests/backends/emulation/test_sanitizer.py: each planted bug must be
// found by one check of the sanitizer (GPUBOOST_SANITIZE), and its fixed twin must pass.
#include "common.cuh"

//: Threads per block of the shared-memory samples (one per element of the tile).
constexpr int kTileThreads = 64;

// memcheck: the bound is off by one, so the last thread writes one element past the end.
extern "C" __global__ void copy_off_by_one(const int32_t* source, int32_t n, int32_t* out) {
  const int32_t i = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i <= n) out[i] = i < n ? source[i] : -1;
}

// memcheck: reads one element before the start of the array.
extern "C" __global__ void read_before_start(const int32_t* source, int32_t n, int32_t* out) {
  const int32_t i = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = source[i - 1];
}

// memcheck: writes through a pointer that was received as const.
extern "C" __global__ void write_through_const(const int32_t* values, int32_t n) {
  const int32_t i = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) const_cast<int32_t*>(values)[i] = 0;
}

// memcheck: indexes dynamic shared memory one element past what the launch provides
// (the host passes shared_mem = blockDim.x * sizeof(int32_t)).
extern "C" __global__ void dynamic_shared_overflow(int32_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, buffer);
  buffer[threadIdx.x + 1] = static_cast<int32_t>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = buffer[threadIdx.x];
}

// memcheck: a static shared array indexed past its end.
extern "C" __global__ void static_shared_overflow(const int32_t* values, int32_t* out) {
  __shared__ int32_t tile[kTileThreads];
  tile[threadIdx.x + kTileThreads] = values[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}

// racecheck: every thread clears its slot, then writes it again and reads the slot of a
// thread of the other warp without __syncthreads in between (a block-level hazard). With
// `synchronize` the barrier is there and the kernel is correct.
extern "C" __global__ void shared_neighbour(const int32_t* values, int32_t synchronize,
                                            int32_t* out) {
  __shared__ int32_t tile[kTileThreads];
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  tile[thread] = 0;
  __syncthreads();
  tile[thread] = values[thread];
  if (synchronize != 0) __syncthreads();
  out[thread] = tile[(thread + warpSize) % kTileThreads];
}

// racecheck: lanes of one warp exchange values through shared memory in two rounds;
// without __syncwarp between writing and reading the round is a warp-level hazard.
extern "C" __global__ void warp_exchange_rounds(const int32_t* values, int32_t synchronize,
                                                int32_t* out) {
  __shared__ int32_t slots[kTileThreads];
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  const int32_t lane = thread % warpSize;
  const int32_t warp_base = thread - lane;
  slots[thread] = values[thread];
  __syncthreads();
  int32_t value = slots[warp_base + (lane + 1) % warpSize];
  if (synchronize != 0) __syncwarp();
  slots[thread] = value * 2;
  if (synchronize != 0) __syncwarp();
  out[thread] = slots[warp_base + (lane + 1) % warpSize];
}

// racecheck: every thread of every block writes out[0] (a cross-block and intra-block
// write-after-write); atomics instead of the plain store are fine.
extern "C" __global__ void everyone_writes_first(int32_t use_atomics, int32_t* out) {
  if (use_atomics != 0) {
    atomicAdd(out, 1);
  } else {
    out[0] = static_cast<int32_t>(threadIdx.x);
  }
}

// initcheck: reads every element of `values`, of which the host wrote only some.
extern "C" __global__ void sum_all(const double* values, int32_t n, double* total) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    double sum = 0.0;
    for (int32_t i = 0; i < n; ++i) sum += values[i];
    *total = sum;
  }
}

// initcheck: fills `out` (made by xp.empty) only below n_written; a later launch or
// array operation that reads the rest reads uninitialised memory.
extern "C" __global__ void fill_prefix(int32_t n_written, int32_t* out) {
  const int32_t i = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n_written) out[i] = i;
}

// initcheck: reads a shared slot that no thread of the block wrote (thread 0 skips its
// own) after the barrier.
extern "C" __global__ void shared_read_unwritten(int32_t* out) {
  __shared__ int32_t tile[kTileThreads];
  if (threadIdx.x != 0) tile[threadIdx.x] = static_cast<int32_t>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % kTileThreads];
}
