// Sample kernels for tests/backends/emulation/test_clusters.py: thread-block clusters
// (__cluster_dims__, the gpuboost_cluster_* helpers of common.cuh, distributed shared
// memory) under the emulation, a correct exchange and one planted bug per check of the
// sanitizer. nvcc compiles them for sm_90 (scripts/cuda_compile_check.py).
#include "common.cuh"

#if GPUBOOST_CLUSTERS  // sm_90 and the emulation; nothing for sm_80

//: Blocks per cluster of the samples.
constexpr int kClusterBlocks = 4;

// Every block stores its values in its shared memory; after a cluster barrier each block
// sums the word of its thread over the blocks of its cluster (distributed shared memory)
// and writes sum * 16 + its rank; `blocks` receives the cluster size. A second barrier
// keeps every block's shared memory alive until all have read it.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_sums(const int32_t* values, int64_t* out, int32_t* blocks) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  gpuboost_cluster_sync();
  int64_t sum = 0;
  for (unsigned rank = 0; rank < gpuboost_cluster_blocks(); ++rank) {
    sum += gpuboost_cluster_shared(words, rank)[threadIdx.x];
  }
  out[i] = sum * 16 + gpuboost_cluster_rank();
  if (i == 0) *blocks = static_cast<int32_t>(gpuboost_cluster_blocks());
  gpuboost_cluster_sync();
}

// A cluster of one block: the cluster is the block itself (as in a launch without
// clusters, where the emulation runs the same way).
extern "C" __global__ void __cluster_dims__(1, 1, 1) cluster_of_one(const int32_t* values, int64_t* out, int32_t* blocks) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  gpuboost_cluster_sync();
  out[i] = static_cast<int64_t>(gpuboost_cluster_shared(words, 0)[blockDim.x - 1 - threadIdx.x]) *
               16 + gpuboost_cluster_rank();
  if (i == 0) *blocks = static_cast<int32_t>(gpuboost_cluster_blocks());
}

// racecheck: reads the other blocks' words without the first cluster barrier.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_read_before_barrier(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  __syncthreads();  // orders the block's own threads only
  int64_t sum = 0;
  for (unsigned rank = 0; rank < gpuboost_cluster_blocks(); ++rank) {
    sum += gpuboost_cluster_shared(words, rank)[threadIdx.x];  // the planted race
  }
  out[i] = sum;
  gpuboost_cluster_sync();
}

// memcheck: no cluster barrier after the reads, so a block may exit while another still
// reads its shared memory.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_exit_while_read(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  gpuboost_cluster_sync();
  // Rank 0 reads the next rank; the next rank returns in the same phase (the planted bug).
  const unsigned next = (gpuboost_cluster_rank() + 1) % gpuboost_cluster_blocks();
  out[i] = gpuboost_cluster_rank() == 0 ? gpuboost_cluster_shared(words, next)[threadIdx.x] : 0;
}

// memcheck: reads one word past the end of the next block's dynamic shared memory.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_remote_overflow(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  gpuboost_cluster_sync();
  const unsigned next = (gpuboost_cluster_rank() + 1) % gpuboost_cluster_blocks();
  out[i] = gpuboost_cluster_shared(words, next)[threadIdx.x + 1];  // the planted overflow
  gpuboost_cluster_sync();
}

// initcheck: reads a word of another block that its block never wrote (only the even
// threads write).
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_unwritten_read(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (threadIdx.x % 2 == 0) words[threadIdx.x] = values[i];
  gpuboost_cluster_sync();
  const unsigned next = (gpuboost_cluster_rank() + 1) % gpuboost_cluster_blocks();
  out[i] = gpuboost_cluster_shared(words, next)[threadIdx.x];  // odd words: never written
  gpuboost_cluster_sync();
}

// A rank beyond the cluster.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_rank_out_of_range(int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  words[threadIdx.x] = 1;
  gpuboost_cluster_sync();
  out[threadIdx.x] = gpuboost_cluster_shared(words, gpuboost_cluster_blocks())[threadIdx.x];
  gpuboost_cluster_sync();
}

// One block of each cluster returns before the cluster barrier the others wait at.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_early_return(int64_t* out) {
  if (gpuboost_cluster_rank() == 1) return;
  gpuboost_cluster_sync();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// Global memory between blocks of a cluster: rank 0 writes, rank 1 reads, with or
// without a cluster barrier between (racecheck: ordered only with it).
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_global_handoff(int64_t* cells, int32_t with_barrier) {
  const unsigned cluster_index = blockIdx.x / kClusterBlocks;
  if (gpuboost_cluster_rank() == 0) cells[cluster_index * blockDim.x + threadIdx.x] = threadIdx.x;
  if (with_barrier != 0) gpuboost_cluster_sync();
  if (gpuboost_cluster_rank() == 1) cells[cluster_index * blockDim.x + threadIdx.x] += 1;
  if (with_barrier == 0) gpuboost_cluster_sync();
}

// Distributed shared-memory atomics: every block adds its values into the shared words of
// block (rank + 1) % blocks of its cluster and of itself; after a barrier each block writes
// its words (two blocks' values each, in any order: atomics, no race).
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_remote_atomics(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = 0;
  gpuboost_cluster_sync();  // every block's words are zero before any adds into them
  const unsigned next = (gpuboost_cluster_rank() + 1) % gpuboost_cluster_blocks();
  atomicAdd(&gpuboost_cluster_shared(words, next)[threadIdx.x], values[i]);
  atomicAdd(&words[threadIdx.x], values[i]);
  gpuboost_cluster_sync();  // all adds are done
  out[i] = words[threadIdx.x];
}

// A cluster kernel with a static __shared__ variable (refused by the emulation).
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_static_shared(int32_t* out) {
  __shared__ int32_t tile[64];
  tile[threadIdx.x] = static_cast<int32_t>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[threadIdx.x];
}

#endif  // GPUBOOST_CLUSTERS
