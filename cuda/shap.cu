// shap.cu -- exact TreeSHAP values and interaction values of raw float64 features.
//
// Contract (docs/DESIGN.md "SHAP"; gpuboost/backends/numpy/shap.py is the CPU version
// with the same arithmetic in the same order, so the values agree to rounding and, with
// --fmad=false, usually bit for bit): every tree is cut on the host into its
// root-to-leaf paths (gpuboost/core/shap_paths.py), one element per distinct feature
// of a path:
//   path_offsets  (n_paths + 1,) int64: path p owns elements [path_offsets[p], path_offsets[p + 1])
//   path_value    (n_paths,) float64: the leaf value; path_output (n_paths,) int64: its output
//   element_feature (n_elements,) int32, element_zero (n_elements,) float64: the product of
//   the cover fractions of the path's edges on the feature; element_lower / element_upper
//   (n_elements,) float64: the row takes those edges when lower < x <= upper (lower == -inf:
//   no lower bound); element_missing (n_elements,) int32: a missing x takes them.
//
// Design: one thread per row walks all paths in order (a grid-stride loop over rows), and
// adds each path's share to its own row of the output: no atomics, so the sums are
// taken in a fixed order and repeated runs give the same bits. All threads of a warp
// process the same path at the same time (the path's elements are broadcast reads;
// only the row's feature values differ), so the warp does not diverge but on the one
// fraction of an element. GPUTreeShap's warp per path group with shuffles would use
// fewer registers on very deep trees, but adds float atomics across paths, whose order
// varies from run to run. A path's weights live in per-thread arrays of
// kShapMaxPathLength entries (the host refuses longer paths).
#include "common.cuh"

//: Most elements of a path plus one (the root element); backends/cuda/shap.py
//: SHAP_MAX_PATH_LENGTH.
constexpr int32_t kShapMaxPathLength = 33;
//: Threads per block (any multiple of 32 up to this works).
constexpr int32_t kShapThreadsPerBlock = 128;

//: 1.0 when x takes every edge of a path element, else 0.0.
GPUBOOST_DEVICE_INLINE double shap_one_fraction(double x, double lower, double upper,
                                                int32_t missing) {
  if (gpuboost_is_nan(x)) {
    return missing != 0 ? 1.0 : 0.0;
  }
  // lower < -DBL_MAX: lower is -inf, no edge goes right (thresholds are finite).
  return (x <= upper && (lower < -1.7976931348623157e308 || x > lower)) ? 1.0 : 0.0;
}

//: Append an element at index `length` (elements 0 .. length - 1 exist).
GPUBOOST_DEVICE_INLINE void shap_extend(double* weights, double* zeros, double* ones,
                                        int32_t length, double zero_fraction,
                                        double one_fraction) {
  zeros[length] = zero_fraction;
  ones[length] = one_fraction;
  weights[length] = length == 0 ? 1.0 : 0.0;
  for (int32_t i = length - 1; i >= 0; --i) {
    weights[i + 1] += one_fraction * weights[i] * static_cast<double>(i + 1) /
                      static_cast<double>(length + 1);
    weights[i] = zero_fraction * weights[i] * static_cast<double>(length - i) /
                 static_cast<double>(length + 1);
  }
}

//: Sum of the path weights with element `index` removed (`depth`: the last index).
GPUBOOST_DEVICE_INLINE double shap_unwound_sum(const double* weights, const double* zeros,
                                               const double* ones, int32_t depth,
                                               int32_t index) {
  const double one_fraction = ones[index];
  const double zero_fraction = zeros[index];
  double next_one_portion = weights[depth];
  double total = 0.0;
  for (int32_t i = depth - 1; i >= 0; --i) {
    if (one_fraction != 0.0) {
      const double tmp = next_one_portion * static_cast<double>(depth + 1) /
                         (static_cast<double>(i + 1) * one_fraction);
      total += tmp;
      next_one_portion =
          weights[i] - tmp * zero_fraction *
                           (static_cast<double>(depth - i) / static_cast<double>(depth + 1));
    } else if (zero_fraction != 0.0) {
      total += (weights[i] / zero_fraction) /
               (static_cast<double>(depth - i) / static_cast<double>(depth + 1));
    }
  }
  return total;
}

// shap_contributions: contributions[row, path_output[p], element_feature[e]] += the share of
// element e of path p, for every path in order. One thread per row.
//   features      (n_rows, n_features) float64, C order
//   contributions (n_rows, n_outputs, n_features + 1) float64, C order, updated in place
//                 (the host has set the bias column)
extern "C" __global__ void __launch_bounds__(kShapThreadsPerBlock)
    shap_contributions(const double* features, int64_t n_rows, int32_t n_features,
                       const int64_t* path_offsets, const double* path_value,
                       const int64_t* path_output, int64_t n_paths,
                       const int32_t* element_feature, const double* element_zero,
                       const double* element_lower, const double* element_upper,
                       const int32_t* element_missing, int32_t n_outputs,
                       double* contributions) {
  double weights[kShapMaxPathLength];
  double zeros[kShapMaxPathLength];
  double ones[kShapMaxPathLength];
  const int64_t row_width = static_cast<int64_t>(n_outputs) * (n_features + 1);
  const int64_t grid_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += grid_stride) {
    const double* x = features + row * n_features;
    double* phi = contributions + row * row_width;
    for (int64_t p = 0; p < n_paths; ++p) {
      const int64_t first = path_offsets[p];
      const int32_t depth = static_cast<int32_t>(path_offsets[p + 1] - first);
      shap_extend(weights, zeros, ones, 0, 1.0, 1.0);
      for (int32_t e = 0; e < depth; ++e) {
        const int64_t element = first + e;
        const double one = shap_one_fraction(x[element_feature[element]], element_lower[element],
                                             element_upper[element], element_missing[element]);
        shap_extend(weights, zeros, ones, e + 1, element_zero[element], one);
      }
      const double value = path_value[p];
      double* phi_output = phi + path_output[p] * (n_features + 1);
      for (int32_t k = 1; k <= depth; ++k) {
        const double w = shap_unwound_sum(weights, zeros, ones, depth, k);
        phi_output[element_feature[first + k - 1]] += w * (ones[k] - zeros[k]) * value;
      }
    }
  }
}

// shap_interactions: interactions[row, k, j, i] (i != j) += the share of element i of
// path p conditioned on element j (halved difference of present and absent), for every
// path in order; then the diagonal [j, j] = contributions[row, k, j] minus the row's
// other entries (in feature order) and [n_features, n_features] = the bias. One thread
// per row.
//   contributions (n_rows, n_outputs, n_features + 1) float64 (from shap_contributions)
//   interactions  (n_rows, n_outputs, n_features + 1, n_features + 1) float64, zeros
extern "C" __global__ void __launch_bounds__(kShapThreadsPerBlock)
    shap_interactions(const double* features, int64_t n_rows, int32_t n_features,
                      const int64_t* path_offsets, const double* path_value,
                      const int64_t* path_output, int64_t n_paths,
                      const int32_t* element_feature, const double* element_zero,
                      const double* element_lower, const double* element_upper,
                      const int32_t* element_missing, int32_t n_outputs,
                      const double* contributions, double* interactions) {
  double all_zeros[kShapMaxPathLength];
  double all_ones[kShapMaxPathLength];
  double weights[kShapMaxPathLength];
  double zeros[kShapMaxPathLength];
  double ones[kShapMaxPathLength];
  const int64_t width = n_features + 1;
  const int64_t grid_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += grid_stride) {
    const double* x = features + row * n_features;
    double* inter = interactions + row * n_outputs * width * width;
    for (int64_t p = 0; p < n_paths; ++p) {
      const int64_t first = path_offsets[p];
      const int32_t depth = static_cast<int32_t>(path_offsets[p + 1] - first);
      for (int32_t e = 0; e < depth; ++e) {
        const int64_t element = first + e;
        all_zeros[e + 1] = element_zero[element];
        all_ones[e + 1] = shap_one_fraction(x[element_feature[element]], element_lower[element],
                                            element_upper[element], element_missing[element]);
      }
      const double value = path_value[p];
      double* inter_output = inter + path_output[p] * width * width;
      for (int32_t j = 1; j <= depth; ++j) {  // condition on element j
        const double scale = (all_ones[j] - all_zeros[j]) * 0.5;
        const int32_t feature_j = element_feature[first + j - 1];
        shap_extend(weights, zeros, ones, 0, 1.0, 1.0);
        int32_t length = 0;
        for (int32_t e = 1; e <= depth; ++e) {
          if (e != j) {
            ++length;
            shap_extend(weights, zeros, ones, length, all_zeros[e], all_ones[e]);
          }
        }
        length = 0;
        for (int32_t e = 1; e <= depth; ++e) {
          if (e != j) {
            ++length;
            const double w = shap_unwound_sum(weights, zeros, ones, depth - 1, length);
            const int32_t feature_i = element_feature[first + e - 1];
            inter_output[feature_j * width + feature_i] +=
                w * (ones[length] - zeros[length]) * value * scale;
          }
        }
      }
    }
    const double* phi = contributions + row * n_outputs * width;
    for (int32_t k = 0; k < n_outputs; ++k) {
      double* matrix = inter + k * width * width;
      for (int32_t j = 0; j < n_features; ++j) {
        double diagonal = phi[k * width + j];
        for (int32_t i = 0; i < n_features; ++i) {
          if (i != j) {
            diagonal -= matrix[j * width + i];
          }
        }
        matrix[j * width + j] = diagonal;
      }
      matrix[n_features * width + n_features] = phi[k * width + n_features];
    }
  }
}
