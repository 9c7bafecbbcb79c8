// Sample kernels for tests/backends/emulation/test_emulation.py: element-wise work and indexing.
#include "common.cuh"

//: Values written per thread by record_indices.
#define INDEX_RECORD_FIELDS 12

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

// Every thread of a 3-D grid of 3-D blocks records its coordinates at its
// global linear index.
extern "C" __global__ void record_indices(int32_t* records) {
  const int32_t thread_in_block =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int32_t block_in_grid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int32_t threads_per_block = blockDim.x * blockDim.y * blockDim.z;
  int32_t* record = records + (block_in_grid * threads_per_block + thread_in_block) * INDEX_RECORD_FIELDS;
  record[0] = threadIdx.x;
  record[1] = threadIdx.y;
  record[2] = threadIdx.z;
  record[3] = blockIdx.x;
  record[4] = blockIdx.y;
  record[5] = blockIdx.z;
  record[6] = blockDim.x;
  record[7] = blockDim.y;
  record[8] = blockDim.z;
  record[9] = gridDim.x;
  record[10] = gridDim.y;
  record[11] = gridDim.z;
}

// One parameter of every supported kind; out[i] = scale * values[i] + offset
// (+ flag) for i < count, and out_bytes[i] = bytes[i] + 1.
extern "C" __global__ void scale_and_shift(const double* __restrict__ values,
                                           double* __restrict__ out, long long count,
                                           double scale, float offset, bool add_one,
                                           unsigned int stride, const uint8_t* bytes,
                                           uint8_t* out_bytes, size_t byte_count,
                                           const void* untyped) {
  (void)untyped;
  const unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
  for (long long i = first; i < count; i += stride) {
    out[i] = scale * values[i] + static_cast<double>(offset) + (add_one ? 1.0 : 0.0);
  }
  for (size_t i = first; i < byte_count; i += stride) out_bytes[i] = bytes[i] + 1;
}
