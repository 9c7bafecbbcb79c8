// gradients.cu -- gradients and hessians of built-in pointwise objectives, fused with the
// sample weights (the definitions: the objectives' _gradients in gpuboost/objectives and
// _apply_weight in gpuboost/objectives/base.py; backends/cuda/gradients.py).
//
// Each kernel does an objective's float64 arithmetic in the reference's operation order
// (compiled with --fmad=false, so every operation rounds as NumPy's), its exp, and
// multiplies by the row's weight, in one pass over the rows. exp is strict_exp
// (strict_math.cuh), which gives the bits of the references' gpuboost.core.strict_math.exp
// on every GPU (docs/DESIGN.md, "Platform-independent arithmetic"); CUDA's own exp differs
// from other libraries' in the last bit.
//
// The one-output kernels also write every block's largest |grad| and |hess|
// (column_maxima.cuh), so that quantizing these columns needs no pass of its own to find
// the scales (quantize.cu).
//
// Layouts: y, weight (n_rows,) float64; raw, grad, hess (n_rows,) float64 for one output,
// (n_rows, n_classes) C order for softmax; block_maxima (gridDim.x, 2) uint64. weight is
// read only when has_weight != 0.
// The one-output kernels are grid-stride loops over rows: a block covers blockDim.x
// consecutive rows per step (coalesced), a thread one row. The softmax kernels go
// through shared-memory tiles (below).
#include "common.cuh"
#include "column_maxima.cuh"
#include "strict_math.cuh"

//: Threads per block of every kernel (backends/cuda/gradients.py:
//: GRADIENT_THREADS_PER_BLOCK).
constexpr int GRADIENT_THREADS_PER_BLOCK = 256;
static_assert(GRADIENT_THREADS_PER_BLOCK <= COLUMN_MAXIMA_MAX_THREADS, "shared maxima too small");

//: np.maximum: NaN when either is NaN; on equal values (+0.0 and -0.0) the second.
GPUBOOST_DEVICE_INLINE double gradient_numpy_maximum(double first, double second) {
  if (gpuboost_is_nan(first)) return first;
  if (gpuboost_is_nan(second)) return second;
  return first > second ? first : second;
}

//: The row's gradient and hessian, times its weight when there are weights
//: (_apply_weight: grad * weight, hess * weight), in place.
GPUBOOST_DEVICE_INLINE void gradient_weigh(double& grad, double& hess,
                                           const double* __restrict__ weight,
                                           int32_t has_weight, int64_t row) {
  if (has_weight != 0) {
    const double row_weight = weight[row];
    grad *= row_weight;
    hess *= row_weight;
  }
}

//: Weighs and stores one output's gradient and hessian of `row`, and keeps the thread's
//: largest magnitude bits of each column (column_maxima.cuh).
GPUBOOST_DEVICE_INLINE void gradient_store_tracking(double grad, double hess,
                                                    const double* __restrict__ weight,
                                                    int32_t has_weight, int64_t row,
                                                    double* __restrict__ grad_out,
                                                    double* __restrict__ hess_out,
                                                    uint64_t& largest_grad,
                                                    uint64_t& largest_hess) {
  gradient_weigh(grad, hess, weight, has_weight, row);
  grad_out[row] = grad;
  hess_out[row] = hess;
  largest_grad = column_larger_bits(largest_grad, column_magnitude_bits(grad));
  largest_hess = column_larger_bits(largest_hess, column_magnitude_bits(hess));
}

//: The loop of the one-output kernels below: a grid-stride loop over the rows (a block
//: covers blockDim.x consecutive rows per step, coalesced; a thread one row), in which
//: `row_gradients(row, g, h)` sets the objective's unweighted gradient and hessian of the
//: row, which are weighed, stored and tracked; then the block's largest magnitudes.
template <class RowGradients>
GPUBOOST_DEVICE_INLINE void gradient_tracked_rows(int64_t n_rows,
                                                  const double* __restrict__ weight,
                                                  int32_t has_weight, double* __restrict__ grad,
                                                  double* __restrict__ hess,
                                                  uint64_t* __restrict__ block_maxima,
                                                  ColumnMaximaShared& shared_maxima,
                                                  RowGradients row_gradients) {
  uint64_t largest_grad = 0;
  uint64_t largest_hess = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += stride) {
    double g;
    double h;
    row_gradients(row, g, h);
    gradient_store_tracking(g, h, weight, has_weight, row, grad, hess, largest_grad,
                            largest_hess);
  }
  column_maxima_store_block(largest_grad, largest_hess, shared_maxima, block_maxima);
}

// reg:squarederror: grad = raw - y, hess = 1.
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    squared_error_gradients(const double* __restrict__ y, const double* __restrict__ raw,
                            const double* __restrict__ weight, int32_t has_weight, int64_t n_rows,
                            double* __restrict__ grad, double* __restrict__ hess,
                            uint64_t* __restrict__ block_maxima) {
  __shared__ ColumnMaximaShared shared_maxima;
  const auto row_gradients = [=](int64_t row, double& g, double& h) {
    g = raw[row] - y[row];
    h = 1.0;
  };
  gradient_tracked_rows(n_rows, weight, has_weight, grad, hess, block_maxima, shared_maxima,
                        row_gradients);
}

// binary:logistic, e = exp(-|raw|): p = 1 / (1 + e) for raw >= 0, else e / (1 + e)
// (_sigmoid); grad = p - y, hess = max(p * (1 - p), hessian_floor) (LogisticLoss;
// hessian_floor = gpuboost.objectives.classification.HESSIAN_FLOOR).
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    logistic_gradients(const double* __restrict__ y, const double* __restrict__ raw,
                       const double* __restrict__ weight, int32_t has_weight, int64_t n_rows,
                       double hessian_floor, double* __restrict__ grad, double* __restrict__ hess,
                       uint64_t* __restrict__ block_maxima) {
  __shared__ ColumnMaximaShared shared_maxima;
  const auto row_gradients = [=](int64_t row, double& g, double& h) {
    const double e = strict_exp(-fabs(raw[row]));
    const double one_plus_e = 1.0 + e;
    const double probability = raw[row] >= 0.0 ? 1.0 / one_plus_e : e / one_plus_e;
    g = probability - y[row];
    h = gradient_numpy_maximum(probability * (1.0 - probability), hessian_floor);
  };
  gradient_tracked_rows(n_rows, weight, has_weight, grad, hess, block_maxima, shared_maxima,
                        row_gradients);
}

// The other objectives with an exp (one output; each row's exp computed here).

// binary:exponential: s = 2y - 1, e = exp(-s raw); grad = -s e, hess = e (ExponentialLoss).
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    exponential_gradients(const double* __restrict__ y, const double* __restrict__ raw,
                          const double* __restrict__ weight, int32_t has_weight, int64_t n_rows,
                          double* __restrict__ grad, double* __restrict__ hess,
                          uint64_t* __restrict__ block_maxima) {
  __shared__ ColumnMaximaShared shared_maxima;
  const auto row_gradients = [=](int64_t row, double& g, double& h) {
    const double sign = 2.0 * y[row] - 1.0;
    const double e = strict_exp(-sign * raw[row]);
    g = -sign * e;
    h = e;
  };
  gradient_tracked_rows(n_rows, weight, has_weight, grad, hess, block_maxima, shared_maxima,
                        row_gradients);
}

// count:poisson: grad = exp(raw) - y, hess = exp(raw + max_delta_step) (PoissonLoss).
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    poisson_gradients(const double* __restrict__ y, const double* __restrict__ raw,
                      const double* __restrict__ weight, int32_t has_weight, int64_t n_rows,
                      double max_delta_step, double* __restrict__ grad, double* __restrict__ hess,
                      uint64_t* __restrict__ block_maxima) {
  __shared__ ColumnMaximaShared shared_maxima;
  const auto row_gradients = [=](int64_t row, double& g, double& h) {
    const double margin = raw[row];
    g = strict_exp(margin) - y[row];
    h = strict_exp(margin + max_delta_step);
  };
  gradient_tracked_rows(n_rows, weight, has_weight, grad, hess, block_maxima, shared_maxima,
                        row_gradients);
}

// reg:gamma: scaled = y exp(-raw); grad = 1 - scaled, hess = scaled (GammaLoss).
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    gamma_gradients(const double* __restrict__ y, const double* __restrict__ raw,
                    const double* __restrict__ weight, int32_t has_weight, int64_t n_rows,
                    double* __restrict__ grad, double* __restrict__ hess,
                    uint64_t* __restrict__ block_maxima) {
  __shared__ ColumnMaximaShared shared_maxima;
  const auto row_gradients = [=](int64_t row, double& g, double& h) {
    const double scaled_label = y[row] * strict_exp(-raw[row]);
    g = 1.0 - scaled_label;
    h = scaled_label;
  };
  gradient_tracked_rows(n_rows, weight, has_weight, grad, hess, block_maxima, shared_maxima,
                        row_gradients);
}

// reg:tweedie: a = exp((1 - rho) raw), b = exp((2 - rho) raw); grad = -y a + b,
// hess = -y (1 - rho) a + (2 - rho) b (TweedieLoss; the factors come from the host).
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    tweedie_gradients(const double* __restrict__ y, const double* __restrict__ raw,
                      const double* __restrict__ weight, int32_t has_weight, int64_t n_rows,
                      double one_minus_rho, double two_minus_rho, double* __restrict__ grad,
                      double* __restrict__ hess, uint64_t* __restrict__ block_maxima) {
  __shared__ ColumnMaximaShared shared_maxima;
  const auto row_gradients = [=](int64_t row, double& g, double& h) {
    const double exp_one = strict_exp(one_minus_rho * raw[row]);
    const double exp_two = strict_exp(two_minus_rho * raw[row]);
    const double label = y[row];
    g = -label * exp_one + exp_two;
    h = -label * one_minus_rho * exp_one + two_minus_rho * exp_two;
  };
  gradient_tracked_rows(n_rows, weight, has_weight, grad, hess, block_maxima, shared_maxima,
                        row_gradients);
}

// Softmax tiles: a block takes tiles of tile_rows consecutive rows (tile_rows * n_classes
// <= SOFTMAX_TILE_VALUES values, contiguous in the (n_rows, n_classes) arrays; the host
// picks tile_rows), grid-stride over the tiles. The block copies a tile's values to shared
// memory with coalesced loads, a thread computes one row of it there (its n_classes
// values in class order), and the block copies the results back with coalesced stores:
// a thread reading its own row from global memory would make every warp instruction touch
// the sectors of n_classes values of 32 rows.

//: Most values of a softmax tile (backends/cuda/gradients.py: SOFTMAX_TILE_VALUES).
constexpr int32_t SOFTMAX_TILE_VALUES = 2048;

//: Copies `count` doubles from `source` to `destination` with the whole block (coalesced
//: when one side is global memory).
GPUBOOST_DEVICE_INLINE void softmax_block_copy(const double* __restrict__ source,
                                               double* __restrict__ destination,
                                               int32_t count) {
  for (int32_t index = static_cast<int32_t>(threadIdx.x); index < count;
       index += static_cast<int32_t>(blockDim.x)) {
    destination[index] = source[index];
  }
}

// multi:softprob / multi:softmax, the terms of _softmax: out = exp(raw - max(raw of the
// row)) (np.max: NaN propagates).
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    softmax_exp_terms(const double* __restrict__ raw, int64_t n_rows, int32_t n_classes,
                         int32_t tile_rows, double* __restrict__ out) {
  __shared__ double tile[SOFTMAX_TILE_VALUES];
  const int64_t n_tiles = (n_rows + tile_rows - 1) / tile_rows;
  for (int64_t tile_index = blockIdx.x; tile_index < n_tiles; tile_index += gridDim.x) {
    const int64_t first_row = tile_index * tile_rows;
    const int32_t rows = static_cast<int32_t>(
        n_rows - first_row < tile_rows ? n_rows - first_row : tile_rows);
    const int64_t offset = first_row * n_classes;
    softmax_block_copy(raw + offset, tile, rows * n_classes);
    __syncthreads();
    for (int32_t row = static_cast<int32_t>(threadIdx.x); row < rows;
         row += static_cast<int32_t>(blockDim.x)) {
      double* const values = tile + row * n_classes;
      double largest = values[0];
      for (int32_t k = 1; k < n_classes && !gpuboost_is_nan(largest); ++k) {
        const double value = values[k];
        if (value > largest || gpuboost_is_nan(value)) largest = value;
      }
      for (int32_t k = 0; k < n_classes; ++k) values[k] = strict_exp(values[k] - largest);
    }
    __syncthreads();
    softmax_block_copy(tile, out + offset, rows * n_classes);
    __syncthreads();  // the tile is reused by the next step
  }
}

// multi:softprob / multi:softmax, exp_shifted = exp(raw - row max): the row sum in class
// order, p = exp_shifted / sum (_softmax); grad = p - (y == k),
// hess = max(hessian_factor * p * (1 - p), hessian_floor) (SoftmaxLoss; the factor is
// MULTICLASS_HESSIAN_FACTOR).
extern "C" __global__ void __launch_bounds__(GRADIENT_THREADS_PER_BLOCK)
    softmax_gradients(const double* __restrict__ y, const double* __restrict__ exp_shifted,
                      const double* __restrict__ weight, int32_t has_weight, int64_t n_rows,
                      int32_t n_classes, int32_t tile_rows, double hessian_factor,
                      double hessian_floor, double* __restrict__ grad,
                      double* __restrict__ hess) {
  __shared__ double tile_grad[SOFTMAX_TILE_VALUES];  // exp_shifted in, gradients out
  __shared__ double tile_hess[SOFTMAX_TILE_VALUES];
  const int64_t n_tiles = (n_rows + tile_rows - 1) / tile_rows;
  for (int64_t tile_index = blockIdx.x; tile_index < n_tiles; tile_index += gridDim.x) {
    const int64_t first_row = tile_index * tile_rows;
    const int32_t rows = static_cast<int32_t>(
        n_rows - first_row < tile_rows ? n_rows - first_row : tile_rows);
    const int64_t offset = first_row * n_classes;
    softmax_block_copy(exp_shifted + offset, tile_grad, rows * n_classes);
    __syncthreads();
    for (int32_t tile_row = static_cast<int32_t>(threadIdx.x); tile_row < rows;
         tile_row += static_cast<int32_t>(blockDim.x)) {
      const int64_t row = first_row + tile_row;
      double* const terms = tile_grad + tile_row * n_classes;
      double row_sum = terms[0];
      for (int32_t k = 1; k < n_classes; ++k) row_sum = row_sum + terms[k];
      const double label = y[row];
      for (int32_t k = 0; k < n_classes; ++k) {
        const double probability = terms[k] / row_sum;
        const double one_hot = label == static_cast<double>(k) ? 1.0 : 0.0;
        double class_hess = gradient_numpy_maximum(
            hessian_factor * probability * (1.0 - probability), hessian_floor);
        double class_grad = probability - one_hot;
        gradient_weigh(class_grad, class_hess, weight, has_weight, row);
        terms[k] = class_grad;  // this thread's own value, read above
        tile_hess[tile_row * n_classes + k] = class_hess;
      }
    }
    __syncthreads();
    softmax_block_copy(tile_grad, grad + offset, rows * n_classes);
    softmax_block_copy(tile_hess, hess + offset, rows * n_classes);
    __syncthreads();  // the tiles are reused by the next step
  }
}
