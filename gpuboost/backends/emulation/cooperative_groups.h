// cooperative_groups.h -- the emulation's stand-in for CUDA's <cooperative_groups.h>
// (found first on the emulation's include path, gpuboost/backends/emulation/compiler.py):
// the thread-block cluster subset that the kernels use, on cuda_emu.h's runtime
// (docs/EMULATION.md, "Thread-block clusters"). A kernel writes
//     #include <cooperative_groups.h>
//     namespace cg = cooperative_groups;
//     const cg::cluster_group cluster = cg::this_cluster();
//     cluster.sync();
//     uint32_t* remote = cluster.map_shared_rank(shared_words, rank);
// as it does for nvcc (sm_90). The emulation maps only dynamic shared memory.
#ifndef GPUBOOST_EMU_COOPERATIVE_GROUPS_H
#define GPUBOOST_EMU_COOPERATIVE_GROUPS_H

#ifndef GPUBOOST_CUDA_EMU_H
#error "the emulation's cooperative_groups.h needs cuda_emu.h (force-included by the emulation)"
#endif

namespace cooperative_groups {

//: The blocks of the calling block's cluster (one block without __cluster_dims__).
class cluster_group {
 public:
  //: Barrier of every thread of the cluster; also orders its shared-memory accesses.
  void sync(int line = __builtin_LINE()) const {
    gpuboost_emu::block_sync(0, line, gpuboost_emu::kClusterSiteBit);
  }
  //: Rank of the calling block in its cluster, 0 .. num_blocks() - 1.
  unsigned block_rank() const { return gpuboost_emu::cluster_block_rank(); }
  //: Blocks of the cluster.
  unsigned num_blocks() const { return gpuboost_emu::cluster_blocks(); }
  dim3 dim_blocks() const { return dim3(num_blocks(), 1, 1); }
  //: The address at the same offset of block `rank`'s shared memory (distributed shared
  //: memory).
  template <class T>
  T* map_shared_rank(T* address, unsigned rank, int line = __builtin_LINE()) const {
    return static_cast<T*>(gpuboost_emu::cluster_map_shared(address, rank, line));
  }
};

inline cluster_group this_cluster() { return cluster_group(); }

}  // namespace cooperative_groups

#endif  // GPUBOOST_EMU_COOPERATIVE_GROUPS_H
