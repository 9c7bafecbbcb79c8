// strict_math.cu -- the platform-independent functions of strict_math.cuh applied to every
// element of an array (backends/cuda/strict_math.py): out[i] = f(x[i]) with f one of
// exp, exp2, log, log2. The gradient kernels call the device functions directly; these
// kernels serve the array code of the CUDA backend and the tests, which compare them
// with gpuboost/core/strict_math.py bit for bit.
//
// Layouts: x, out (n,) float64. Grid-stride loops over the elements.
#include "common.cuh"
#include "strict_math.cuh"

//: Threads per block (backends/cuda/strict_math.py: STRICT_MATH_THREADS_PER_BLOCK).
constexpr int STRICT_MATH_THREADS_PER_BLOCK = 256;

// out[i] = strict_exp(x[i]).
extern "C" __global__ void __launch_bounds__(STRICT_MATH_THREADS_PER_BLOCK)
    strict_exp_values(const double* __restrict__ x, int64_t n, double* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = strict_exp(x[i]);
  }
}

// out[i] = strict_exp2(x[i]).
extern "C" __global__ void __launch_bounds__(STRICT_MATH_THREADS_PER_BLOCK)
    strict_exp2_values(const double* __restrict__ x, int64_t n, double* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = strict_exp2(x[i]);
  }
}

// out[i] = strict_log(x[i]).
extern "C" __global__ void __launch_bounds__(STRICT_MATH_THREADS_PER_BLOCK)
    strict_log_values(const double* __restrict__ x, int64_t n, double* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = strict_log(x[i]);
  }
}

// out[i] = strict_log2(x[i]).
extern "C" __global__ void __launch_bounds__(STRICT_MATH_THREADS_PER_BLOCK)
    strict_log2_values(const double* __restrict__ x, int64_t n, double* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = strict_log2(x[i]);
  }
}
