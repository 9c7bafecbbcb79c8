// vector_split.cu -- the split scan of vector-leaf trees: the best candidate of every
// (node, feature) pair by the gain summed over the outputs
// (gpuboost.core.vector_split.find_best_vector_splits; the compiled CPU backend's
// gpuboost/backends/cpu/vector_split.py runs the same candidate loop).
//
// vector_split_prefix: one thread per (pair, field): the exact int64 running sums of one
// cell field, or of the row counts, over the pair's bins in bin order.
// vector_split_pairs: one thread per (node, feature) pair: every candidate in the order
// (bin, missing right before missing left), its children's sums of every output from the
// running sums (plus the missing values' for missing left; the right child the node's
// minus the left), each output's leaf score (gain.cuh: gpuboost.core.gain.leaf_score,
// --fmad=false) added in output order from the first, the largest hessian of each side,
// gain = (left + right) - parent score, admissible as the definition says, strictly
// better replacing. So a pair's best is the definition's first of equal maxima over its
// candidates; the host takes each node's first best feature (numpy.argmax), as the CPU
// backend does. The scales are powers of two, so a sum times the inverse scale is the
// definition's sum divided by the scale, bit for bit.
//
// Layouts (gpuboost.core.vector_split.OutputHistograms): cells (n_nodes, n_features,
// n_bins, width) int64, C order, output t's gradient and hessian sums in fields 2t and
// 2t + 1; counts (n_nodes, n_features, n_bins) int64; the missing bin `missing_bin`,
// candidate bins 0 .. min(n_value_bins[f] - 1, n_candidates) - 1. parents (n_outputs,
// n_nodes, 3) int64: each output's node sums and the node's rows. Outputs per pair:
// best_gain (-inf: none), best_bin, best_direction (1: missing left), best_left (3 words
// an output: the left child's gradient, hessian and rows).
#include "common.cuh"
#include "gain.cuh"

//: Threads of a block of either kernel at most (the host launches this many:
//: gpuboost/backends/cuda/vector_split.py VECTOR_SPLIT_THREADS_PER_BLOCK).
constexpr int VECTOR_SPLIT_MAX_THREADS = 128;
//: The bits of float64 -inf.
constexpr int64_t VECTOR_SPLIT_NEGATIVE_INFINITY_BITS = static_cast<int64_t>(0xfff0000000000000ull);

extern "C" __global__ void __launch_bounds__(VECTOR_SPLIT_MAX_THREADS) vector_split_prefix(const int64_t* __restrict__ cells,
                                               const int64_t* __restrict__ counts,
                                               int64_t n_pairs, int32_t n_bins, int32_t width,
                                               int64_t* __restrict__ prefix_cells,
                                               int64_t* __restrict__ prefix_counts) {
  const int64_t fields = static_cast<int64_t>(width) + 1;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (thread >= n_pairs * fields) return;
  const int64_t pair = thread / fields;
  const int64_t field = thread - pair * fields;
  int64_t running = 0;
  if (field == width) {
    const int64_t* const source = counts + pair * n_bins;
    int64_t* const target = prefix_counts + pair * n_bins;
    for (int32_t bin = 0; bin < n_bins; ++bin) {
      running += source[bin];
      target[bin] = running;
    }
    return;
  }
  const int64_t* const source = cells + pair * n_bins * width + field;
  int64_t* const target = prefix_cells + pair * n_bins * width + field;
  for (int32_t bin = 0; bin < n_bins; ++bin) {
    running += source[static_cast<int64_t>(bin) * width];
    target[static_cast<int64_t>(bin) * width] = running;
  }
}

//: Output t's children's scores and hessians of one candidate, added to the running
//: totals of the outputs before it (`first`: t == 0, the totals are its own).
GPUBOOST_DEVICE_INLINE void vector_split_add_output(int64_t left_g, int64_t left_h,
                                                    int64_t parent_g, int64_t parent_h,
                                                    double inverse_g, double inverse_h,
                                                    const GainParams& params, bool first,
                                                    double& left_score, double& right_score,
                                                    double& left_hessian,
                                                    double& right_hessian) {
  const double g = static_cast<double>(left_g) * inverse_g;
  const double h = static_cast<double>(left_h) * inverse_h;
  const double right_g = static_cast<double>(parent_g - left_g) * inverse_g;
  const double right_h = static_cast<double>(parent_h - left_h) * inverse_h;
  const double s_left = gain_leaf_score(g, h, params);
  const double s_right = gain_leaf_score(right_g, right_h, params);
  left_score = first ? s_left : left_score + s_left;
  right_score = first ? s_right : right_score + s_right;
  left_hessian = first || h > left_hessian ? h : left_hessian;
  right_hessian = first || right_h > right_hessian ? right_h : right_hessian;
}

extern "C" __global__ void __launch_bounds__(VECTOR_SPLIT_MAX_THREADS) vector_split_pairs(
    const int64_t* __restrict__ cells, const int64_t* __restrict__ counts,
    const int64_t* __restrict__ prefix_cells, const int64_t* __restrict__ prefix_counts,
    int32_t n_nodes, int32_t n_features, int32_t n_bins, int32_t width, int32_t n_outputs,
    const double* __restrict__ inverse_g, const double* __restrict__ inverse_h,
    const int32_t* __restrict__ n_value_bins, int32_t missing_bin, int32_t n_candidates,
    const uint8_t* __restrict__ feature_mask, int32_t has_feature_mask,
    const int64_t* __restrict__ parents, const double* __restrict__ parent_scores,
    double reg_lambda, double reg_alpha, double max_delta_step, double min_child_weight,
    int64_t min_data_in_leaf, double gamma, double split_gain_eps,
    double* __restrict__ best_gain, int64_t* __restrict__ best_bin,
    int64_t* __restrict__ best_direction, int64_t* __restrict__ best_left) {
  const int64_t pair = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pair >= static_cast<int64_t>(n_nodes) * n_features) return;
  const int64_t node = pair / n_features;
  const int32_t feature = static_cast<int32_t>(pair - node * n_features);
  const double negative_infinity = gain_bits_to_double(VECTOR_SPLIT_NEGATIVE_INFINITY_BITS);
  best_gain[pair] = negative_infinity;
  best_bin[pair] = -1;
  best_direction[pair] = 0;
  if (has_feature_mask != 0 && feature_mask[pair] == 0) return;
  const int32_t last = n_value_bins[feature] - 1;
  const int32_t n = last < n_candidates ? last : n_candidates;
  if (n <= 0) return;
  const GainParams params{reg_lambda, reg_alpha,        max_delta_step, min_child_weight,
                          min_data_in_leaf, gamma, split_gain_eps};
  const int64_t* const cell = cells + pair * n_bins * width;
  const int64_t* const prefix = prefix_cells + pair * n_bins * width;
  const int64_t* const prefix_count = prefix_counts + pair * n_bins;
  const int64_t* const missing = cell + static_cast<int64_t>(missing_bin) * width;
  const int64_t missing_count = counts[pair * n_bins + missing_bin];
  const int32_t n_directions = missing_count > 0 ? 2 : 1;
  const int64_t parent_count = parents[node * 3 + 2];
  const double parent_score = parent_scores[node];
  double best = negative_infinity;
  int32_t chosen_bin = -1;
  int32_t chosen_direction = 0;
  for (int32_t bin = 0; bin < n; ++bin) {
    const int64_t* const running = prefix + static_cast<int64_t>(bin) * width;
    for (int32_t direction = 0; direction < n_directions; ++direction) {
      const int64_t left_count = prefix_count[bin] + (direction == 1 ? missing_count : 0);
      double left_score = 0.0;
      double right_score = 0.0;
      double left_hessian = 0.0;
      double right_hessian = 0.0;
      for (int32_t output = 0; output < n_outputs; ++output) {
        const int64_t* const parent = parents + (static_cast<int64_t>(output) * n_nodes + node) * 3;
        const int32_t field = 2 * output;
        vector_split_add_output(
            running[field] + (direction == 1 ? missing[field] : 0),
            running[field + 1] + (direction == 1 ? missing[field + 1] : 0), parent[0], parent[1],
            inverse_g[output], inverse_h[output], params, output == 0, left_score, right_score,
            left_hessian, right_hessian);
      }
      const double gain = (left_score + right_score) - parent_score;
      if (left_hessian >= min_child_weight && right_hessian >= min_child_weight &&
          left_count >= min_data_in_leaf && parent_count - left_count >= min_data_in_leaf &&
          gain > gamma && gain > split_gain_eps && gain > best) {
        best = gain;
        chosen_bin = bin;
        chosen_direction = direction;
      }
    }
  }
  best_gain[pair] = best;
  if (chosen_bin < 0) return;
  best_bin[pair] = chosen_bin;
  best_direction[pair] = chosen_direction;
  const int64_t* const running = prefix + static_cast<int64_t>(chosen_bin) * width;
  int64_t* const left = best_left + pair * 3 * n_outputs;
  for (int32_t output = 0; output < n_outputs; ++output) {
    for (int32_t field = 0; field < 2; ++field) {
      const int32_t word = 2 * output + field;
      left[3 * output + field] = running[word] + (chosen_direction == 1 ? missing[word] : 0);
    }
    left[3 * output + 2] = prefix_count[chosen_bin] + (chosen_direction == 1 ? missing_count : 0);
  }
}
