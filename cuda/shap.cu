// shap.cu -- exact TreeSHAP values and interaction values of raw float64 features.
//
// Contract (docs/DESIGN.md "SHAP"; gpuboost/backends/cpu/shap.py is the CPU version
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
//   element_category_offsets (n_elements + 1,) int64, element_category_bits uint32: a
//   categorical element owns words [offsets[e], offsets[e + 1]) (none: numeric), the set of
//   category codes c (bit c % 32 of word c / 32) that take its edges; a value that is not
//   an integer in [0, 32 * n_words) takes them when element_missing (as predict sends it).
//
// Design: one thread per row walks all paths in order (a grid-stride loop over rows), and
// adds each path's share to its own row of the output: no atomics, so the sums are
// taken in a fixed order and repeated runs give the same bits. All threads of a warp
// process the same path at the same time (the path's elements are broadcast reads;
// only the row's feature values differ), so the warp does not diverge but on the one
// fraction of an element. GPUTreeShap's warp per path group with shuffles would use
// fewer registers on very deep trees, but adds float atomics across paths, whose order
// varies from run to run. A path's weights live in per-thread arrays of
// kShapMaxPathLength entries (the host refuses longer paths). The NumPy backend runs the
// same operations on blocks of rows and reuses the weights of the prefix a path shares
// with the previous one; extending again here gives the same bits.
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

//: 1.0 when x takes every edge of a categorical path element (its set: bits[0 .. n_words)),
//: else 0.0; a value that is not a code of the set's range (NaN fails x >= 0) takes them
//: when `missing`.
GPUBOOST_DEVICE_INLINE double shap_category_fraction(double x, const uint32_t* bits,
                                                     int64_t n_words, int32_t missing) {
  if (x >= 0.0 && x < static_cast<double>(n_words * 32) && floor(x) == x) {
    const int64_t code = static_cast<int64_t>(x);
    return static_cast<double>((bits[code / 32] >> (code % 32)) & 1u);
  }
  return missing != 0 ? 1.0 : 0.0;
}

//: The one fraction of path element `element` for the row `x`: by its category set when
//: it has one, else by its interval.
GPUBOOST_DEVICE_INLINE double shap_element_one_fraction(
    const double* x, int64_t element, const int32_t* element_feature,
    const double* element_lower, const double* element_upper, const int32_t* element_missing,
    const int64_t* element_category_offsets, const uint32_t* element_category_bits) {
  const double value = x[element_feature[element]];
  const int64_t begin = element_category_offsets[element];
  const int64_t n_words = element_category_offsets[element + 1] - begin;
  if (n_words > 0) {
    return shap_category_fraction(value, element_category_bits + begin, n_words,
                                  element_missing[element]);
  }
  return shap_one_fraction(value, element_lower[element], element_upper[element],
                           element_missing[element]);
}

//: inverse[k] = 1.0 / k for k = 1 .. n (the kernels multiply by these instead of
//: dividing, as backends/cpu/shap.py does with the same table).
GPUBOOST_DEVICE_INLINE void shap_reciprocals(double* inverse, int32_t n) {
  inverse[0] = 0.0;
  for (int32_t k = 1; k <= n; ++k) {
    inverse[k] = 1.0 / static_cast<double>(k);
  }
}

//: Lundberg's ExtendPath in place: weights[0 .. length] from weights[0 .. length - 1] and
//: the element at index `length` (zero fraction, one fraction 0 or 1).
GPUBOOST_DEVICE_INLINE void shap_extend(double* weights, int32_t length, double zero_fraction,
                                        double one_fraction, const double* inverse) {
  if (length == 0) {
    weights[0] = 1.0;
    return;
  }
  const double scale = inverse[length + 1];
  weights[length] = 0.0;
  for (int32_t i = length - 1; i >= 0; --i) {
    const double grow = static_cast<double>(i + 1) * scale;
    const double shrink = zero_fraction * (static_cast<double>(length - i) * scale);
    const double weight = weights[i];
    weights[i + 1] += one_fraction * weight * grow;
    weights[i] = weight * shrink;
  }
}

//: UnwoundPathSum * zero_fraction of every element the row does not take: the same for all
//: of them (their one fraction is 0), so their share is -cold.
GPUBOOST_DEVICE_INLINE double shap_cold_sum(const double* weights, int32_t depth,
                                            const double* inverse) {
  double cold = 0.0;
  for (int32_t i = depth - 1; i >= 0; --i) {
    cold += weights[i] * (static_cast<double>(depth + 1) * inverse[depth - i]);
  }
  return cold;
}

//: Element k's SHAP value per unit of leaf value (UnwoundPathSum * (one - zero)) on the
//: path weights weights[0 .. depth]; `cold` from shap_cold_sum.
GPUBOOST_DEVICE_INLINE double shap_element_share(const double* weights, int32_t depth,
                                                 double zero_fraction, double one_fraction,
                                                 double cold, const double* inverse) {
  if (one_fraction == 0.0) {
    return -cold;
  }
  const double scale = inverse[depth + 1];
  double next_one_portion = weights[depth];
  double total = 0.0;
  for (int32_t i = depth - 1; i >= 0; --i) {
    const double grow = static_cast<double>(depth + 1) * inverse[i + 1];
    const double shrink = static_cast<double>(depth - i) * scale;
    const double tmp = next_one_portion * grow;
    total += tmp;
    next_one_portion = weights[i] - tmp * (zero_fraction * shrink);
  }
  return total * (1.0 - zero_fraction);
}

// shap_contributions: contributions[row, path_output[p], element_feature[e]] += the share of
// element e of path p times the path's leaf value, for every path in order. One thread
// per row.
//   features      (n_rows, n_features) float64, C order
//   contributions (n_rows, n_outputs, n_features + 1) float64, C order, updated in place
//                 (the host has set the bias column)
extern "C" __global__ void __launch_bounds__(kShapThreadsPerBlock)
    shap_contributions(const double* features, int64_t n_rows, int32_t n_features,
                       const int64_t* path_offsets, const double* path_value,
                       const int64_t* path_output, int64_t n_paths,
                       const int32_t* element_feature, const double* element_zero,
                       const double* element_lower, const double* element_upper,
                       const int32_t* element_missing,
                       const int64_t* element_category_offsets,
                       const uint32_t* element_category_bits, int32_t n_outputs,
                       double* contributions) {
  double inverse[kShapMaxPathLength + 2];
  double weights[kShapMaxPathLength];
  double ones[kShapMaxPathLength];
  shap_reciprocals(inverse, kShapMaxPathLength + 1);
  const int64_t row_width = static_cast<int64_t>(n_outputs) * (n_features + 1);
  const int64_t grid_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += grid_stride) {
    const double* x = features + row * n_features;
    double* phi = contributions + row * row_width;
    for (int64_t p = 0; p < n_paths; ++p) {
      const int64_t first = path_offsets[p];
      const int32_t depth = static_cast<int32_t>(path_offsets[p + 1] - first);
      shap_extend(weights, 0, 1.0, 1.0, inverse);
      for (int32_t e = 0; e < depth; ++e) {
        const int64_t element = first + e;
        ones[e + 1] = shap_element_one_fraction(x, element, element_feature, element_lower,
                                                element_upper, element_missing,
                                                element_category_offsets, element_category_bits);
        shap_extend(weights, e + 1, element_zero[element], ones[e + 1], inverse);
      }
      const double cold = shap_cold_sum(weights, depth, inverse);
      const double value = path_value[p];
      double* phi_output = phi + path_output[p] * (n_features + 1);
      for (int32_t k = 1; k <= depth; ++k) {
        const int64_t element = first + k - 1;
        const double share =
            shap_element_share(weights, depth, element_zero[element], ones[k], cold, inverse);
        phi_output[element_feature[element]] += share * value;
      }
    }
  }
}

// shap_interactions: interactions[row, k, j, i] (i != j) += the share of element i on path p
// without element j, times the leaf value, times (one_j - zero_j) / 2 (half the
// difference of j present and absent), for every path in order; then the diagonal
// [j, j] = contributions[row, k, j] minus the row's other entries (in feature order) and
// [n_features, n_features] = the bias. One thread per row.
//   contributions (n_rows, n_outputs, n_features + 1) float64 (from shap_contributions)
//   interactions  (n_rows, n_outputs, n_features + 1, n_features + 1) float64, zeros
extern "C" __global__ void __launch_bounds__(kShapThreadsPerBlock)
    shap_interactions(const double* features, int64_t n_rows, int32_t n_features,
                      const int64_t* path_offsets, const double* path_value,
                      const int64_t* path_output, int64_t n_paths,
                      const int32_t* element_feature, const double* element_zero,
                      const double* element_lower, const double* element_upper,
                      const int32_t* element_missing,
                      const int64_t* element_category_offsets,
                      const uint32_t* element_category_bits, int32_t n_outputs,
                      const double* contributions, double* interactions) {
  double inverse[kShapMaxPathLength + 2];
  double all_ones[kShapMaxPathLength];
  double weights[kShapMaxPathLength];
  shap_reciprocals(inverse, kShapMaxPathLength + 1);
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
        all_ones[e + 1] = shap_element_one_fraction(x, element, element_feature, element_lower,
                                                    element_upper, element_missing,
                                                    element_category_offsets,
                                                    element_category_bits);
      }
      const double value = path_value[p];
      double* inter_output = inter + path_output[p] * width * width;
      for (int32_t j = 1; j <= depth; ++j) {  // condition on element j: the path without it
        shap_extend(weights, 0, 1.0, 1.0, inverse);
        int32_t length = 0;
        for (int32_t e = 1; e <= depth; ++e) {
          if (e != j) {
            ++length;
            shap_extend(weights, length, element_zero[first + e - 1], all_ones[e], inverse);
          }
        }
        const double cold = shap_cold_sum(weights, depth - 1, inverse);
        const int32_t feature_j = element_feature[first + j - 1];
        const double half = (all_ones[j] - element_zero[first + j - 1]) * 0.5;
        for (int32_t e = 1; e <= depth; ++e) {
          if (e != j) {
            const int64_t element = first + e - 1;
            const double share = shap_element_share(weights, depth - 1, element_zero[element],
                                                    all_ones[e], cold, inverse);
            inter_output[feature_j * width + element_feature[element]] += share * value * half;
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
