// Sample kernels for tests/backends/emulation/test_clusters.py: thread-block clusters
// (__cluster_dims__, cooperative_groups::this_cluster(), distributed shared memory) under
// the emulation, a correct exchange and one planted bug per check of the sanitizer.
#include "common.cuh"

#if GPUBOOST_CLUSTERS  // sm_90 and the emulation; nothing for sm_80
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

//: Blocks per cluster of the samples.
constexpr int kClusterBlocks = 4;

// Every block stores its values in its shared memory; after a cluster barrier each block
// sums the word of its thread over the blocks of its cluster (distributed shared memory)
// and writes sum * 16 + its rank; `blocks` receives the cluster size. A second barrier
// keeps every block's shared memory alive until all have read it.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_sums(const int32_t* values, int64_t* out, int32_t* blocks) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  cluster.sync();
  int64_t sum = 0;
  for (unsigned rank = 0; rank < cluster.num_blocks(); ++rank) {
    sum += cluster.map_shared_rank(words, rank)[threadIdx.x];
  }
  out[i] = sum * 16 + cluster.block_rank();
  if (i == 0) *blocks = static_cast<int32_t>(cluster.num_blocks());
  cluster.sync();
}

// The same without a cluster launch: this_cluster() is the block itself.
extern "C" __global__ void cluster_of_one(const int32_t* values, int64_t* out, int32_t* blocks) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  cluster.sync();
  out[i] = static_cast<int64_t>(cluster.map_shared_rank(words, 0)[blockDim.x - 1 - threadIdx.x]) *
               16 + cluster.block_rank();
  if (i == 0) *blocks = static_cast<int32_t>(cluster.num_blocks());
}

// racecheck: reads the other blocks' words without the first cluster barrier.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_read_before_barrier(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  __syncthreads();  // orders the block's own threads only
  int64_t sum = 0;
  for (unsigned rank = 0; rank < cluster.num_blocks(); ++rank) {
    sum += cluster.map_shared_rank(words, rank)[threadIdx.x];  // the planted race
  }
  out[i] = sum;
  cluster.sync();
}

// memcheck: no cluster barrier after the reads, so a block may exit while another still
// reads its shared memory.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_exit_while_read(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  cluster.sync();
  // Rank 0 reads the next rank; the next rank returns in the same phase (the planted bug).
  const unsigned next = (cluster.block_rank() + 1) % cluster.num_blocks();
  out[i] = cluster.block_rank() == 0 ? cluster.map_shared_rank(words, next)[threadIdx.x] : 0;
}

// memcheck: reads one word past the end of the next block's dynamic shared memory.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_remote_overflow(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  words[threadIdx.x] = values[i];
  cluster.sync();
  const unsigned next = (cluster.block_rank() + 1) % cluster.num_blocks();
  out[i] = cluster.map_shared_rank(words, next)[threadIdx.x + 1];  // the planted overflow
  cluster.sync();
}

// initcheck: reads a word of another block that its block never wrote (only the even
// threads write).
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_unwritten_read(const int32_t* values, int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (threadIdx.x % 2 == 0) words[threadIdx.x] = values[i];
  cluster.sync();
  const unsigned next = (cluster.block_rank() + 1) % cluster.num_blocks();
  out[i] = cluster.map_shared_rank(words, next)[threadIdx.x];  // odd words: never written
  cluster.sync();
}

// A rank beyond the cluster.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_rank_out_of_range(int64_t* out) {
  GPUBOOST_DYNAMIC_SHARED(int32_t, words);
  const cg::cluster_group cluster = cg::this_cluster();
  words[threadIdx.x] = 1;
  cluster.sync();
  out[threadIdx.x] = cluster.map_shared_rank(words, cluster.num_blocks())[threadIdx.x];
  cluster.sync();
}

// One block of each cluster returns before the cluster barrier the others wait at.
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_early_return(int64_t* out) {
  const cg::cluster_group cluster = cg::this_cluster();
  if (cluster.block_rank() == 1) return;
  cluster.sync();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// Global memory between blocks of a cluster: rank 0 writes, rank 1 reads, with or
// without a cluster barrier between (racecheck: ordered only with it).
extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1)
    cluster_global_handoff(int64_t* cells, int32_t with_barrier) {
  const cg::cluster_group cluster = cg::this_cluster();
  const unsigned cluster_index = blockIdx.x / kClusterBlocks;
  if (cluster.block_rank() == 0) cells[cluster_index * blockDim.x + threadIdx.x] = threadIdx.x;
  if (with_barrier != 0) cluster.sync();
  if (cluster.block_rank() == 1) cells[cluster_index * blockDim.x + threadIdx.x] += 1;
  if (with_barrier == 0) cluster.sync();
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
