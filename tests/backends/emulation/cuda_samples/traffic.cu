// Sample kernels for tests/backends/emulation/test_traffic.py: access patterns whose
// coalescing, bank conflicts and atomics a GPU (and the traffic model) counts exactly.
#include "common.cuh"

// Every thread copies element (thread * stride) of `source` to element thread of `out`:
// stride 1 is coalesced (a warp reads 4 sectors of 32 bytes), stride 8 touches one
// sector per lane.
extern "C" __global__ void strided_copy(const int32_t* source, int32_t stride, int32_t* out) {
  const int32_t thread = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  out[thread] = source[thread * stride];
}

// Every thread reads element 0 (one sector per warp: a broadcast).
extern "C" __global__ void broadcast_read(const int64_t* source, int64_t* out) {
  const int32_t thread = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  out[thread] = source[0];
}

// Lane l writes shared word (l * stride) % 1024 of a 4 KiB buffer: stride 1 has no bank
// conflict, stride 2 is a 2-way conflict, stride 32 a 32-way one, stride 33 none.
extern "C" __global__ void shared_strided_store(int32_t stride, int32_t* out) {
  __shared__ uint32_t words[1024];
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  words[(thread * stride) % 1024] = static_cast<uint32_t>(thread);
  __syncthreads();
  if (thread == 0) out[0] = static_cast<int32_t>(words[thread]);
}

// Every thread adds 1 to the same global counter and to the same shared counter, which
// the first warp clears (with its neighbours) first.
extern "C" __global__ void same_address_atomics(int32_t* counter) {
  __shared__ int32_t shared_counters[32];
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  if (thread < warpSize) shared_counters[thread] = 0;
  __syncthreads();
  atomicAdd(&shared_counters[0], 1);
  atomicAdd(counter, 1);
}
