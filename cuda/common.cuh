// common.cuh -- included first by every kernel file in cuda/.
//
// The same kernel sources are compiled three ways, and this header is clean
// under all of them:
//   * nvcc (CI: `scripts/cuda_compile_check.py`, sm_80 / sm_90, warnings are errors);
//   * NVRTC through cupy.RawModule (`__CUDACC_RTC__`; no C++ standard headers);
//   * g++ for the CPU emulation (`GPUBOOST_EMULATION`; see docs/EMULATION.md).
//
// Kernel files must:
//   * declare kernels `extern "C" __global__ void name(...)` (the launcher finds
//     them by name and checks every argument against the C signature);
//   * declare dynamic shared memory with GPUBOOST_DYNAMIC_SHARED, never with
//     `extern __shared__` (it cannot be emulated);
//   * declare static shared memory with `__shared__` inside functions;
//   * not include C++ standard headers themselves (NVRTC has none).
#ifndef GPUBOOST_COMMON_CUH
#define GPUBOOST_COMMON_CUH

// ---------------------------------------------------------------------------
// Fixed-width integer types.
// ---------------------------------------------------------------------------
#if defined(GPUBOOST_EMULATION)
// g++: the emulation header (normally force-included already) brings <cstdint>.
#include "cuda_emu.h"
#elif defined(__CUDACC_RTC__)
// NVRTC has no <cstdint>: the LP64 (Linux) definitions, the same types that
// nvcc and g++ use there, so overloads resolve identically in all three builds.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
#ifndef assert  // in case this NVRTC has no built-in assert: stop the kernel, without a message
#define assert(condition) ((condition) ? static_cast<void>(0) : __trap())
#endif
#else
#include <cstdint>
#include <assert.h>  // device-side assert under nvcc (NVRTC and the emulation have it built in)
#endif

static_assert(sizeof(int8_t) == 1 && sizeof(int16_t) == 2 && sizeof(int32_t) == 4 &&
                  sizeof(int64_t) == 8,
              "gpuboost kernels need an LP64 or LLP64 data model");
static_assert(sizeof(unsigned long long) == sizeof(int64_t),
              "64-bit atomics reinterpret int64_t as unsigned long long");

// ---------------------------------------------------------------------------
// Portable spellings.
// ---------------------------------------------------------------------------
//: A device helper that is always inlined.
#define GPUBOOST_DEVICE_INLINE __device__ __forceinline__

//: Full-warp mask for the *_sync warp intrinsics.
#define GPUBOOST_FULL_WARP_MASK 0xffffffffu

//: Alignment of the start of the dynamic shared memory buffer.
#define GPUBOOST_DYNAMIC_SHARED_ALIGNMENT 16

// GPUBOOST_DYNAMIC_SHARED(type, name); declares `type* const name` pointing to
// the launch's dynamic shared memory (`shared_mem=` bytes at the launch). Use
// it at function scope; several declarations in one kernel alias the same
// bytes, exactly like `extern __shared__` arrays.
#if defined(GPUBOOST_EMULATION)
#define GPUBOOST_DYNAMIC_SHARED(type, name) \
  type* const name = reinterpret_cast<type*>(::gpuboost_emu::dynamic_shared_memory())
#else
#define GPUBOOST_DYNAMIC_SHARED(type, name)                                                 \
  extern __shared__ __align__(GPUBOOST_DYNAMIC_SHARED_ALIGNMENT)                            \
      unsigned char gpuboost_dynamic_shared_bytes[];                                        \
  type* const name = reinterpret_cast<type*>(gpuboost_dynamic_shared_bytes)
#endif

// Thread-block clusters (sm_90): GPUBOOST_CLUSTERS is 1 where they exist -- sm_90 and the
// emulation (docs/EMULATION.md, "Thread-block clusters"), although the emulation reports
// sm_80. Cluster kernels (`__cluster_dims__(K, 1, 1)`) sit inside `#if GPUBOOST_CLUSTERS`
// (nvcc has neither the attribute nor the builtins for sm_80; the host launches them only
// where the device has clusters) and use these helpers, which need no header (NVRTC
// finds no <cooperative_groups.h>):
//   gpuboost_cluster_sync()            barrier of every thread of the cluster (arrive and
//                                      wait back to back), ordering shared memory too;
//   gpuboost_cluster_rank()            the block's rank in its cluster;
//   gpuboost_cluster_blocks()          blocks of the cluster;
//   gpuboost_cluster_shared(p, rank)   the address at p's offset in block `rank`'s shared
//                                      memory (distributed shared memory; the emulation
//                                      maps dynamic shared memory only).
#if defined(GPUBOOST_EMULATION)
#define GPUBOOST_CLUSTERS 1
GPUBOOST_DEVICE_INLINE void gpuboost_cluster_sync(int line = __builtin_LINE()) {
  ::gpuboost_emu::block_sync(0, line, ::gpuboost_emu::kClusterSiteBit);
}
GPUBOOST_DEVICE_INLINE unsigned gpuboost_cluster_rank() {
  return ::gpuboost_emu::cluster_block_rank();
}
GPUBOOST_DEVICE_INLINE unsigned gpuboost_cluster_blocks() {
  return ::gpuboost_emu::cluster_blocks();
}
template <class T>
GPUBOOST_DEVICE_INLINE T* gpuboost_cluster_shared(T* address, unsigned rank,
                                                  int line = __builtin_LINE()) {
  return static_cast<T*>(::gpuboost_emu::cluster_map_shared(address, rank, line));
}
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GPUBOOST_CLUSTERS 1
GPUBOOST_DEVICE_INLINE void gpuboost_cluster_sync() {
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
}
GPUBOOST_DEVICE_INLINE unsigned gpuboost_cluster_rank() { return __clusterRelativeBlockRank(); }
GPUBOOST_DEVICE_INLINE unsigned gpuboost_cluster_blocks() { return __clusterSizeInBlocks(); }
template <class T>
GPUBOOST_DEVICE_INLINE T* gpuboost_cluster_shared(T* address, unsigned rank) {
  return static_cast<T*>(__cluster_map_shared_rank(address, rank));
}
#else
#define GPUBOOST_CLUSTERS 0
#endif

// ---------------------------------------------------------------------------
// Atomics on int64_t. CUDA's 64-bit atomicAdd only takes unsigned long long;
// two's complement makes the unsigned sum bit-identical to the signed one.
// ---------------------------------------------------------------------------
//: atomically add `value` to `*address`; returns the previous value.
GPUBOOST_DEVICE_INLINE int64_t gpuboost_atomic_add_int64(int64_t* address, int64_t value) {
  return static_cast<int64_t>(atomicAdd(reinterpret_cast<unsigned long long*>(address),
                                        static_cast<unsigned long long>(value)));
}

// ===========================================================================
// Shared device helpers go below this line (larger families have their own
// header: gain.cuh for the gain formulas, segments.cuh for segment tiles).
// Keep them GPUBOOST_DEVICE_INLINE and free of C++ standard headers.
// ===========================================================================

//: True for NaN (IEEE: NaN is the only value unequal to itself), as np.isnan;
//: no <cmath> isnan (NVRTC has no standard headers).
GPUBOOST_DEVICE_INLINE bool gpuboost_is_nan(double value) { return value != value; }

// One int2 (two int32 in 8 aligned bytes; x first) moved with one 8-byte access. A GPU
// loads and stores a vector type with one 64-bit instruction (LDG.E.64 / STG.E.64);
// the emulation's g++ splits a struct copy into one access per field, which its traffic
// model would count as two requests touching the sectors twice (docs/EMULATION.md,
// "Traffic model"). Going through a 64-bit integer is one access in all three builds
// (little-endian: x is the low word on the GPU and on x86-64).
//: The int2 at `address` (8-byte aligned), one 8-byte load.
GPUBOOST_DEVICE_INLINE int2 gpuboost_load_int2(const int2* address) {
  const uint64_t bits = *reinterpret_cast<const uint64_t*>(address);
  return make_int2(static_cast<int32_t>(static_cast<uint32_t>(bits)),
                   static_cast<int32_t>(static_cast<uint32_t>(bits >> 32)));
}
//: Store `value` at `address` (8-byte aligned), one 8-byte store.
GPUBOOST_DEVICE_INLINE void gpuboost_store_int2(int2* address, int2 value) {
  *reinterpret_cast<uint64_t*>(address) =
      (static_cast<uint64_t>(static_cast<uint32_t>(value.y)) << 32) |
      static_cast<uint64_t>(static_cast<uint32_t>(value.x));
}

#endif  // GPUBOOST_COMMON_CUH
