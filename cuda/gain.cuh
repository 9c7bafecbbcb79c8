// gain.cuh -- the gain and leaf-weight formulas of gpuboost/core/gain.py as device functions.
//
// Every function mirrors its NumPy counterpart in gpuboost/core/gain.py operation by
// operation (docs/DESIGN.md, "Gain and leaf value"); kernels that use them are
// compiled with --fmad=false, so no multiply-add is contracted and every float64
// result is bit-identical to NumPy's, signed zeros included. Comparisons are
// written as NumPy evaluates them (np.sign, np.maximum, np.clip, np.where), and
// no <cmath> function or INFINITY macro is used (NVRTC has no standard headers).
#ifndef GPUBOOST_GAIN_CUH
#define GPUBOOST_GAIN_CUH

#include "common.cuh"

//: Regularization and admissibility parameters (gpuboost.core.gain.SplitParams), plus the
//: gain threshold SPLIT_GAIN_EPS, passed to kernels as float64 / int64 scalars.
struct GainParams {
  double reg_lambda;
  double reg_alpha;
  double max_delta_step;
  double min_child_weight;
  int64_t min_data_in_leaf;
  double gamma;
  double split_gain_eps;
};

//: The float64 whose IEEE-754 bits are `bits` (exact reinterpretation).
GPUBOOST_DEVICE_INLINE double gain_bits_to_double(int64_t bits) {
  return __longlong_as_double(static_cast<long long>(bits));
}

//: The IEEE-754 bits of a float64 (exact reinterpretation).
GPUBOOST_DEVICE_INLINE int64_t gain_double_to_bits(double value) {
  return static_cast<int64_t>(__double_as_longlong(value));
}

//: True for finite values (inf - inf and NaN - NaN are NaN), as np.isfinite.
GPUBOOST_DEVICE_INLINE bool gain_is_finite(double value) { return value - value == 0.0; }

//: np.sign: 1, -1, 0 (positive zero for both zeros), NaN for NaN.
GPUBOOST_DEVICE_INLINE double gain_numpy_sign(double value) {
  if (value > 0.0) return 1.0;
  if (value < 0.0) return -1.0;
  if (value == 0.0) return 0.0;
  return value;
}

//: np.maximum(value, 0.0): NaN propagates; when equal (zeros) the second operand.
GPUBOOST_DEVICE_INLINE double gain_numpy_maximum_zero(double value) {
  if (gpuboost_is_nan(value)) return value;
  return value > 0.0 ? value : 0.0;
}

//: threshold_l1: G when alpha == 0, else np.sign(G) * np.maximum(np.abs(G) - alpha, 0.0).
GPUBOOST_DEVICE_INLINE double gain_threshold_l1(double sum_gradients, double reg_alpha) {
  if (reg_alpha == 0.0) return sum_gradients;
  return gain_numpy_sign(sum_gradients) *
         gain_numpy_maximum_zero(fabs(sum_gradients) - reg_alpha);
}

//: np.clip(value, -bound, bound) (NaN propagates).
GPUBOOST_DEVICE_INLINE double gain_clip(double value, double bound) {
  if (gpuboost_is_nan(value)) return value;
  const double at_least_low = value > -bound ? value : -bound;
  return at_least_low < bound ? at_least_low : bound;
}

//: leaf_weight: -T(G) / (H + lambda), 0 where H + lambda <= 0, clipped by max_delta_step > 0.
GPUBOOST_DEVICE_INLINE double gain_leaf_weight(double sum_gradients, double sum_hessians,
                                               const GainParams& params) {
  const double thresholded = gain_threshold_l1(sum_gradients, params.reg_alpha);
  const double denominator = sum_hessians + params.reg_lambda;
  double weight = denominator > 0.0 ? (-thresholded) / denominator : 0.0;
  if (params.max_delta_step > 0.0) weight = gain_clip(weight, params.max_delta_step);
  return weight;
}

//: leaf_score: T^2 / (H + lambda), or -(2 T w + (H + lambda) w^2) with max_delta_step > 0;
//: 0 where H + lambda <= 0.
GPUBOOST_DEVICE_INLINE double gain_leaf_score(double sum_gradients, double sum_hessians,
                                              const GainParams& params) {
  const double thresholded = gain_threshold_l1(sum_gradients, params.reg_alpha);
  const double denominator = sum_hessians + params.reg_lambda;
  if (params.max_delta_step == 0.0) {
    return denominator > 0.0 ? (thresholded * thresholded) / denominator : 0.0;
  }
  const double weight = gain_leaf_weight(sum_gradients, sum_hessians, params);
  return denominator > 0.0
             ? -(((2.0 * thresholded) * weight) + ((denominator * weight) * weight))
             : 0.0;
}

//: split_gain: (S(left) + S(right)) - S(parent), in this operation order.
GPUBOOST_DEVICE_INLINE double gain_split(double left_g, double left_h, double right_g,
                                         double right_h, double parent_score,
                                         const GainParams& params) {
  return (gain_leaf_score(left_g, left_h, params) + gain_leaf_score(right_g, right_h, params)) -
         parent_score;
}

//: The admissibility rule of gpuboost.core.gain.admissible (NaN gains are never admissible).
GPUBOOST_DEVICE_INLINE bool gain_admissible(double left_h, int64_t left_count, double right_h,
                                            int64_t right_count, double gain,
                                            const GainParams& params) {
  return left_h >= params.min_child_weight && right_h >= params.min_child_weight &&
         left_count >= params.min_data_in_leaf && right_count >= params.min_data_in_leaf &&
         gain > params.gamma && gain > params.split_gain_eps;
}

//: bounded_weight: gain_leaf_weight clipped to a node's bounds [lower, upper] (monotone
//: constraints; np.where(w < lower, lower, np.where(w > upper, upper, w))).
GPUBOOST_DEVICE_INLINE double gain_bounded_weight(double sum_gradients, double sum_hessians,
                                                  const GainParams& params, double lower,
                                                  double upper) {
  const double weight = gain_leaf_weight(sum_gradients, sum_hessians, params);
  return weight < lower ? lower : (weight > upper ? upper : weight);
}

//: leaf_score_given_weight: -(2 T(G) w + (H + lambda) w^2), 0 where H + lambda <= 0.
GPUBOOST_DEVICE_INLINE double gain_score_given_weight(double sum_gradients, double sum_hessians,
                                                      double weight, const GainParams& params) {
  const double thresholded = gain_threshold_l1(sum_gradients, params.reg_alpha);
  const double denominator = sum_hessians + params.reg_lambda;
  return denominator > 0.0
             ? -(((2.0 * thresholded) * weight) + ((denominator * weight) * weight))
             : 0.0;
}

//: monotone_split_gain: the children's weights clipped to [lower, upper], scored at those
//: weights, (S(left) + S(right)) - parent_score; -inf (as `negative_infinity`) when the
//: weights break `direction` (1: left <= right, -1: left >= right).
GPUBOOST_DEVICE_INLINE double gain_monotone_split(double left_g, double left_h, double right_g,
                                                  double right_h, double parent_score,
                                                  const GainParams& params, double lower,
                                                  double upper, int32_t direction,
                                                  double negative_infinity) {
  const double left_w = gain_bounded_weight(left_g, left_h, params, lower, upper);
  const double right_w = gain_bounded_weight(right_g, right_h, params, lower, upper);
  const double gain = (gain_score_given_weight(left_g, left_h, left_w, params) +
                       gain_score_given_weight(right_g, right_h, right_w, params)) -
                      parent_score;
  if ((direction > 0 && left_w > right_w) || (direction < 0 && left_w < right_w)) {
    return negative_infinity;
  }
  return gain;
}

#endif  // GPUBOOST_GAIN_CUH
