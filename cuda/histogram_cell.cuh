// histogram_cell.cuh -- the fields of a histogram cell (gpuboost.core.dtypes), shared by
// the kernels that build histograms (histogram.cu, row_scan.cu) and scan them
// (split_scan.cu, row_scan.cu).
#ifndef GPUBOOST_HISTOGRAM_CELL_CUH
#define GPUBOOST_HISTOGRAM_CELL_CUH

//: Fields of a histogram cell and their order: int64 (sum of quantized gradients, sum
//: of quantized hessians, row count).
constexpr int HISTOGRAM_FIELDS = 3;
constexpr int HISTOGRAM_GRADIENT = 0;
constexpr int HISTOGRAM_HESSIAN = 1;
constexpr int HISTOGRAM_COUNT = 2;

#endif  // GPUBOOST_HISTOGRAM_CELL_CUH
