// histogram_cell.cuh -- the fields of a histogram cell (gpuboost.core.dtypes), shared by
// the kernels that build histograms (histogram.cu, row_scan.cu) and scan them
// (split_scan.cu, row_scan.cu).
#ifndef GPUBOOST_HISTOGRAM_CELL_CUH
#define GPUBOOST_HISTOGRAM_CELL_CUH

#include "common.cuh"

//: Fields of a histogram cell and their order: int64 (sum of quantized gradients, sum
//: of quantized hessians, row count).
constexpr int HISTOGRAM_FIELDS = 3;
constexpr int HISTOGRAM_GRADIENT = 0;
constexpr int HISTOGRAM_HESSIAN = 1;
constexpr int HISTOGRAM_COUNT = 2;

//: Exact a - b of histogram words (two's complement, as NumPy's int64 subtraction): a
//: sibling's word from its parent's and its built sibling's.
GPUBOOST_DEVICE_INLINE int64_t exact_difference(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

//: The zeroing blocks of a launch that also zeroes the next level's children batch ahead
//: (histogram_subtract_siblings, split_scan_features with pairs): blocks first_block ..
//: gridDim.x - 1 write zeros over words[0 .. n_words - 1], block z taking the words
//: z * blockDim.x + thread, strided by the zeroing blocks' threads (coalesced stores).
//: Called by every thread of such a block.
GPUBOOST_DEVICE_INLINE void zero_in_tail_blocks(int64_t first_block, int64_t n_words,
                                                int64_t* __restrict__ words) {
  const int64_t zero_block = static_cast<int64_t>(blockIdx.x) - first_block;
  const int64_t zero_stride = (static_cast<int64_t>(gridDim.x) - first_block) * blockDim.x;
  for (int64_t word = zero_block * blockDim.x + threadIdx.x; word < n_words;
       word += zero_stride) {
    words[word] = 0;
  }
}

#endif  // GPUBOOST_HISTOGRAM_CELL_CUH
