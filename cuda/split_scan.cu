// split_scan.cu -- best split of every node of a batch
// (gpuboost.backends.numpy.split_scan.find_best_splits).
//
// Two kernels:
//   1. split_scan_features: one block per (node, chunk of features). For each feature of
//      the chunk an exact int64 prefix scan of its bins gives the left child of every
//      threshold bin; every candidate (bin, missing direction) is evaluated with the
//      float64 formulas of gain.cuh and the block reduces to the feature's best
//      candidate.
//   2. split_select_nodes: one block per node reduces the per-feature bests to the node's
//      record.
// Tie-breaking equals NumPy's argmax over candidates ordered (feature, bin, direction),
// direction 0 = missing right before 1 = missing left: maximum gain, then the lowest
// feature, then the lowest bin, then missing-right. Inadmissible candidates never win
// (NumPy gives them gain -inf). As in NumPy, a node whose best gain is not finite
// (+inf: the float64 sums overflowed) gets no split, and its record keeps that gain so
// that the host reports the overflow.
//
// Layouts: histograms (n_nodes, n_features, n_bins, 3) int64, C order; the missing bin is
// `missing_bin`, candidate bins are 0 .. missing_bin - 2 and b <= n_value_bins[f] - 2.
// Monotone constraints (has_monotone != 0): monotone (n_features,) int8 directions and
// node_bounds (n_nodes, 2) float64 weight bounds; gains by gain_monotone_split.
#include "common.cuh"
#include "gain.cuh"

//: Threads of a split_scan_features block: at most one per histogram bin
//: (gpuboost.core.dtypes.MAX_BIN_LIMIT + 1 bins). The host launches a power of two
//: >= n_bins, at most this many.
constexpr int SPLIT_SCAN_MAX_THREADS = 256;
//: Threads of a split_select_nodes block (a power of two; each strides over features).
constexpr int SPLIT_SELECT_MAX_THREADS = 256;
//: Fields of a histogram cell and their order (gpuboost.core.dtypes).
constexpr int HISTOGRAM_FIELDS = 3;
constexpr int HISTOGRAM_GRADIENT = 0;
constexpr int HISTOGRAM_HESSIAN = 1;
constexpr int HISTOGRAM_COUNT = 2;
//: Candidates per threshold bin (missing right, missing left); key = bin * 2 + direction.
constexpr int32_t DIRECTIONS = 2;
constexpr int32_t DIRECTION_MISSING_LEFT = 1;
//: Key of "no admissible candidate".
constexpr int32_t NO_CANDIDATE = -1;

//: Words of a per-(node, feature) best candidate (int64; the gain stored as its bits).
constexpr int FEATURE_BEST_GAIN_BITS = 0;
constexpr int FEATURE_BEST_BIN = 1;  // NO_CANDIDATE when the feature has none
constexpr int FEATURE_BEST_DEFAULT_LEFT = 2;
constexpr int FEATURE_BEST_LEFT_SUMS = 3;  // 3 words: left gradient, hessian, count
constexpr int FEATURE_BEST_WORDS = FEATURE_BEST_LEFT_SUMS + HISTOGRAM_FIELDS;

//: Words of a node record (int64), in SPLIT_RECORD_DTYPE's field order.
constexpr int RECORD_FEATURE = 0;
constexpr int RECORD_BIN = 1;
constexpr int RECORD_DEFAULT_LEFT = 2;
constexpr int RECORD_GAIN_BITS = 3;
constexpr int RECORD_LEFT_SUMS = 4;    // 3 words
constexpr int RECORD_NODE_SUMS = RECORD_LEFT_SUMS + HISTOGRAM_FIELDS;  // 3 words
constexpr int RECORD_WORDS = RECORD_NODE_SUMS + HISTOGRAM_FIELDS;
//: The bits of float64 -inf, the gain of a node without a split.
constexpr long long FLOAT64_NEGATIVE_INFINITY_BITS = static_cast<long long>(0xfff0000000000000ull);

//: A candidate in a block-wide arg-max: its gain and its key (NO_CANDIDATE: none).
struct Candidate {
  double gain;
  int32_t key;
};

//: Whether a is preferred to b: admissible, larger gain, or equal gain and smaller key.
GPUBOOST_DEVICE_INLINE bool better_candidate(double gain_a, int32_t key_a, double gain_b,
                                             int32_t key_b) {
  if (key_a == NO_CANDIDATE) return false;
  if (key_b == NO_CANDIDATE) return true;
  return gain_a > gain_b || (gain_a == gain_b && key_a < key_b);
}

//: Block-wide arg-max (blockDim.x a power of two) over per-thread candidates, through
//: shared arrays of blockDim.x entries. Every thread returns the winner.
GPUBOOST_DEVICE_INLINE Candidate block_best_candidate(Candidate mine, double* shared_gain,
                                                      int32_t* shared_key) {
  const unsigned thread = threadIdx.x;
  shared_gain[thread] = mine.gain;
  shared_key[thread] = mine.key;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (thread < half && better_candidate(shared_gain[thread + half], shared_key[thread + half],
                                          shared_gain[thread], shared_key[thread])) {
      shared_gain[thread] = shared_gain[thread + half];
      shared_key[thread] = shared_key[thread + half];
    }
    __syncthreads();
  }
  Candidate best{shared_gain[0], shared_key[0]};
  __syncthreads();  // the arrays may be reused right after
  return best;
}

//: One histogram cell (gradient, hessian, count sums) per thread, in shared memory.
typedef int64_t SharedCells[HISTOGRAM_FIELDS][SPLIT_SCAN_MAX_THREADS];

//: Exact block-wide sum (blockDim.x a power of two) of one cell per thread, field by
//: field. Every thread gets the totals in `total`.
GPUBOOST_DEVICE_INLINE void block_sum_cells(const int64_t (&mine)[HISTOGRAM_FIELDS],
                                            SharedCells& shared,
                                            int64_t (&total)[HISTOGRAM_FIELDS]) {
  const unsigned thread = threadIdx.x;
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) shared[field][thread] = mine[field];
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (thread < half) {
      for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
        shared[field][thread] += shared[field][thread + half];
      }
    }
    __syncthreads();
  }
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) total[field] = shared[field][0];
  __syncthreads();  // the array may be reused right after
}

//: Exact block-wide inclusive prefix sum (Hillis-Steele) of one cell per thread, field by
//: field. Thread t gets the sums of threads 0 .. t in `inclusive`.
GPUBOOST_DEVICE_INLINE void block_scan_cells(const int64_t (&mine)[HISTOGRAM_FIELDS],
                                             SharedCells& shared,
                                             int64_t (&inclusive)[HISTOGRAM_FIELDS]) {
  const unsigned thread = threadIdx.x;
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) shared[field][thread] = mine[field];
  __syncthreads();
  for (unsigned distance = 1; distance < blockDim.x; distance *= 2) {
    int64_t addend[HISTOGRAM_FIELDS];
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
      addend[field] = thread >= distance ? shared[field][thread - distance] : 0;
    }
    __syncthreads();
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) shared[field][thread] += addend[field];
    __syncthreads();
  }
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) inclusive[field] = shared[field][thread];
  __syncthreads();  // the array may be reused right after
}

//: Sums of the histogram fields over one feature's n_bins cells, read coalesced: thread t
//: reads the int64 words t, t + blockDim.x, ... of the feature's n_bins * 3 words (a
//: warp reads 32 consecutive words) and keeps one sum per field (word w is field w % 3);
//: the block then adds the threads' sums. Every thread gets the totals (exact int64
//: sums, in any order the same).
GPUBOOST_DEVICE_INLINE void block_feature_totals(const int64_t* __restrict__ feature_histogram,
                                                 int32_t n_bins, SharedCells& shared,
                                                 int64_t (&total)[HISTOGRAM_FIELDS]) {
  int64_t mine[HISTOGRAM_FIELDS] = {0, 0, 0};
  const int32_t n_words = n_bins * HISTOGRAM_FIELDS;
  for (int32_t word = static_cast<int32_t>(threadIdx.x); word < n_words;
       word += static_cast<int32_t>(blockDim.x)) {
    mine[word % HISTOGRAM_FIELDS] += feature_histogram[word];
  }
  block_sum_cells(mine, shared, total);
}

// Best candidate of every feature of a chunk of one node's features.
// Block: (node, chunk) = (blockIdx.x / chunks_per_node, blockIdx.x % chunks_per_node); the
//   chunk is features [chunk * features_per_block, min(n_features, (chunk + 1) *
//   features_per_block)); blockDim.x is a power of two >= n_bins. The block sums
//   feature 0 of the node once (the parent sums, as NumPy), then for each feature of
//   the chunk in turn: copies the feature's cells to shared memory (coalesced: a warp
//   reads 32 consecutive int64 words), prefix-scans its candidate bins, evaluates every
//   candidate and reduces. Chunks trade parallelism against re-reading feature 0: the
//   host picks features_per_block (backends/cuda/split_scan.py).
// Thread: bin b = threadIdx.x: evaluates threshold b with missing values right and, when
//   the feature has missing rows in the node, left.
// Output: FEATURE_BEST_WORDS int64 per (node, feature); the block of chunk 0 also writes
//   the node's sums.
extern "C" __global__ void __launch_bounds__(SPLIT_SCAN_MAX_THREADS)
    split_scan_features(const int64_t* __restrict__ histograms,
                        const int32_t* __restrict__ n_value_bins,
                        const uint8_t* __restrict__ feature_mask, int32_t has_feature_mask,
                        const int8_t* __restrict__ monotone, const double* __restrict__ node_bounds,
                        int32_t has_monotone, int32_t n_features, int32_t features_per_block,
                        int32_t chunks_per_node, int32_t n_bins, int32_t missing_bin,
                        double scale_gradients, double scale_hessians, double reg_lambda,
                        double reg_alpha, double max_delta_step, double min_child_weight,
                        int64_t min_data_in_leaf, double gamma, double split_gain_eps,
                        int64_t* __restrict__ feature_best, int64_t* __restrict__ node_sums) {
  __shared__ SharedCells shared_cells;
  __shared__ int64_t staged_cells[SPLIT_SCAN_MAX_THREADS * HISTOGRAM_FIELDS];
  __shared__ double shared_gain[SPLIT_SCAN_MAX_THREADS];
  __shared__ int32_t shared_key[SPLIT_SCAN_MAX_THREADS];
  const GainParams params{reg_lambda,       reg_alpha, max_delta_step, min_child_weight,
                          min_data_in_leaf, gamma,     split_gain_eps};
  const int64_t node = blockIdx.x / chunks_per_node;
  const int32_t chunk = static_cast<int32_t>(blockIdx.x % chunks_per_node);
  const int32_t first_feature = chunk * features_per_block;
  const int32_t end_feature =
      first_feature + features_per_block < n_features ? first_feature + features_per_block
                                                      : n_features;
  const int32_t bin = static_cast<int32_t>(threadIdx.x);
  const int32_t n_words = n_bins * HISTOGRAM_FIELDS;
  const int64_t* const node_histogram = histograms + node * n_features * n_words;

  // Parent sums: every row of the node is in exactly one bin of feature 0.
  int64_t parent[HISTOGRAM_FIELDS];
  block_feature_totals(node_histogram, n_bins, shared_cells, parent);
  if (chunk == 0 && bin == 0) {
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
      node_sums[node * HISTOGRAM_FIELDS + field] = parent[field];
    }
  }
  const double parent_g = static_cast<double>(parent[HISTOGRAM_GRADIENT]) / scale_gradients;
  const double parent_h = static_cast<double>(parent[HISTOGRAM_HESSIAN]) / scale_hessians;
  // Monotone constraints: the node's weight bounds, scores at the clipped weights.
  const double lower = has_monotone != 0 ? node_bounds[node * 2] : 0.0;
  const double upper = has_monotone != 0 ? node_bounds[node * 2 + 1] : 0.0;
  const double parent_score =
      has_monotone != 0
          ? gain_score_given_weight(parent_g, parent_h,
                                    gain_bounded_weight(parent_g, parent_h, params, lower, upper),
                                    params)
          : gain_leaf_score(parent_g, parent_h, params);
  const int32_t n_candidate_bins = missing_bin - 1;

  for (int32_t feature = first_feature; feature < end_feature; ++feature) {
    const int64_t node_feature = node * n_features + feature;
    int64_t* const best_out = feature_best + node_feature * FEATURE_BEST_WORDS;
    // The same for the whole block: no barrier is skipped by some threads only.
    if (has_feature_mask != 0 && feature_mask[node_feature] == 0) {
      if (bin == 0) best_out[FEATURE_BEST_BIN] = NO_CANDIDATE;
      continue;
    }
    const int64_t* const feature_histogram =
        node_histogram + static_cast<int64_t>(feature) * n_words;
    for (int32_t word = bin; word < n_words; word += static_cast<int32_t>(blockDim.x)) {
      staged_cells[word] = feature_histogram[word];
    }
    __syncthreads();
    // Left sums of threshold `bin` with missing values right: bins 0 .. bin.
    int64_t own_cell[HISTOGRAM_FIELDS];
    int64_t missing_cell[HISTOGRAM_FIELDS];
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
      own_cell[field] = bin < n_candidate_bins ? staged_cells[bin * HISTOGRAM_FIELDS + field] : 0;
      missing_cell[field] = staged_cells[missing_bin * HISTOGRAM_FIELDS + field];
    }
    // (block_scan_cells synchronizes after these reads, before the next feature's copy.)
    int64_t left[HISTOGRAM_FIELDS];
    block_scan_cells(own_cell, shared_cells, left);
    const bool has_missing = missing_cell[HISTOGRAM_COUNT] > 0;
    const int32_t direction_sign = has_monotone != 0 ? monotone[feature] : 0;
    Candidate mine{0.0, NO_CANDIDATE};
    if (bin < n_candidate_bins && bin <= n_value_bins[feature] - 2) {
      const int32_t n_directions = has_missing ? DIRECTIONS : 1;
      for (int32_t direction = 0; direction < n_directions; ++direction) {
        int64_t left_sums[HISTOGRAM_FIELDS];
        int64_t right_sums[HISTOGRAM_FIELDS];
        for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
          left_sums[field] =
              left[field] + (direction == DIRECTION_MISSING_LEFT ? missing_cell[field] : 0);
          right_sums[field] = parent[field] - left_sums[field];
        }
        const double left_g =
            static_cast<double>(left_sums[HISTOGRAM_GRADIENT]) / scale_gradients;
        const double left_h = static_cast<double>(left_sums[HISTOGRAM_HESSIAN]) / scale_hessians;
        const double right_g =
            static_cast<double>(right_sums[HISTOGRAM_GRADIENT]) / scale_gradients;
        const double right_h =
            static_cast<double>(right_sums[HISTOGRAM_HESSIAN]) / scale_hessians;
        const double gain =
            has_monotone != 0
                ? gain_monotone_split(left_g, left_h, right_g, right_h, parent_score, params,
                                      lower, upper, direction_sign,
                                      gain_bits_to_double(FLOAT64_NEGATIVE_INFINITY_BITS))
                : gain_split(left_g, left_h, right_g, right_h, parent_score, params);
        const int32_t key = bin * DIRECTIONS + direction;
        if (gain_admissible(left_h, left_sums[HISTOGRAM_COUNT], right_h,
                            right_sums[HISTOGRAM_COUNT], gain, params) &&
            better_candidate(gain, key, mine.gain, mine.key)) {
          mine = Candidate{gain, key};
        }
      }
    }
    const Candidate best = block_best_candidate(mine, shared_gain, shared_key);
    if (best.key == NO_CANDIDATE) {
      if (bin == 0) best_out[FEATURE_BEST_BIN] = NO_CANDIDATE;
      continue;
    }
    const int32_t best_bin = best.key / DIRECTIONS;
    const int32_t best_direction = best.key % DIRECTIONS;
    if (bin != best_bin) continue;
    int64_t left_sums[HISTOGRAM_FIELDS];
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
      left_sums[field] =
          left[field] + (best_direction == DIRECTION_MISSING_LEFT ? missing_cell[field] : 0);
      best_out[FEATURE_BEST_LEFT_SUMS + field] = left_sums[field];
    }
    // Default direction: the chosen one when there are missing rows, else the larger
    // child (ties left).
    const bool default_left =
        has_missing ? best_direction == DIRECTION_MISSING_LEFT
                    : left_sums[HISTOGRAM_COUNT] >=
                          parent[HISTOGRAM_COUNT] - left_sums[HISTOGRAM_COUNT];
    best_out[FEATURE_BEST_GAIN_BITS] = gain_double_to_bits(best.gain);
    best_out[FEATURE_BEST_BIN] = best_bin;
    best_out[FEATURE_BEST_DEFAULT_LEFT] = default_left ? 1 : 0;
  }
}

// Node records from the per-feature bests.
// Block: one node (blockIdx.x); blockDim.x is a power of two.
// Thread: features threadIdx.x, threadIdx.x + blockDim.x, ...: keeps the best (maximum gain,
//   then lowest feature); the block reduces and thread 0 writes the RECORD_WORDS words.
extern "C" __global__ void __launch_bounds__(SPLIT_SELECT_MAX_THREADS)
    split_select_nodes(const int64_t* __restrict__ feature_best,
                       const int64_t* __restrict__ node_sums, int32_t n_features,
                       int64_t* __restrict__ records) {
  __shared__ double shared_gain[SPLIT_SELECT_MAX_THREADS];
  __shared__ int32_t shared_key[SPLIT_SELECT_MAX_THREADS];
  const int64_t node = blockIdx.x;
  const int64_t* const node_best = feature_best + node * n_features * FEATURE_BEST_WORDS;
  Candidate mine{0.0, NO_CANDIDATE};
  for (int32_t feature = static_cast<int32_t>(threadIdx.x); feature < n_features;
       feature += static_cast<int32_t>(blockDim.x)) {
    const int64_t* const best = node_best + static_cast<int64_t>(feature) * FEATURE_BEST_WORDS;
    if (best[FEATURE_BEST_BIN] == NO_CANDIDATE) continue;
    const double gain = gain_bits_to_double(best[FEATURE_BEST_GAIN_BITS]);
    if (better_candidate(gain, feature, mine.gain, mine.key)) mine = Candidate{gain, feature};
  }
  const Candidate best = block_best_candidate(mine, shared_gain, shared_key);
  if (threadIdx.x != 0) return;
  int64_t* const record = records + node * RECORD_WORDS;
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
    record[RECORD_NODE_SUMS + field] = node_sums[node * HISTOGRAM_FIELDS + field];
  }
  if (best.key == NO_CANDIDATE || !gain_is_finite(best.gain)) {  // NumPy: found = isfinite(gain)
    record[RECORD_FEATURE] = NO_CANDIDATE;
    record[RECORD_BIN] = NO_CANDIDATE;
    record[RECORD_DEFAULT_LEFT] = 0;
    record[RECORD_GAIN_BITS] = best.key == NO_CANDIDATE ? FLOAT64_NEGATIVE_INFINITY_BITS
                                                         : gain_double_to_bits(best.gain);
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) record[RECORD_LEFT_SUMS + field] = 0;
    return;
  }
  const int64_t* const chosen = node_best + static_cast<int64_t>(best.key) * FEATURE_BEST_WORDS;
  record[RECORD_FEATURE] = best.key;
  record[RECORD_BIN] = chosen[FEATURE_BEST_BIN];
  record[RECORD_DEFAULT_LEFT] = chosen[FEATURE_BEST_DEFAULT_LEFT];
  record[RECORD_GAIN_BITS] = chosen[FEATURE_BEST_GAIN_BITS];
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
    record[RECORD_LEFT_SUMS + field] = chosen[FEATURE_BEST_LEFT_SUMS + field];
  }
}
