// split_candidates.cuh -- the split candidates of one feature of one node, evaluated by a
// block (one thread per threshold bin): the block-wide exact scans and the arg-max with
// NumPy's tie rule, shared by split_scan.cu (cells read from global histograms) and
// row_scan.cu (cells read from a shared-memory histogram).
//
// Tie-breaking equals NumPy's argmax over candidates ordered (feature, bin, direction),
// direction 0 = missing right before 1 = missing left: maximum gain, then the lowest
// feature, then the lowest bin, then missing-right. Inadmissible candidates never win
// (NumPy gives them gain -inf).
#ifndef GPUBOOST_SPLIT_CANDIDATES_CUH
#define GPUBOOST_SPLIT_CANDIDATES_CUH

#include "common.cuh"
#include "gain.cuh"
#include "histogram_cell.cuh"

//: Threads of a split_scan_features block: at most one per histogram bin
//: (gpuboost.core.dtypes.MAX_BIN_LIMIT + 1 bins). The host launches a power of two
//: >= n_bins, at most this many.
constexpr int SPLIT_SCAN_MAX_THREADS = 256;
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

//: The per-(node, feature) best words are published with atomics and read back with
//: atomics: in split_scan.cu the last block of a node to finish reads the words the
//: node's other blocks wrote (after a __threadfence and an arrival counter), and atomics
//: are performed at L2, never served from a stale L1 line. The traffic is that of plain
//: accesses (one thread per word either way).
GPUBOOST_DEVICE_INLINE void publish_best_word(int64_t* address, int64_t value) {
  atomicExch(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
}
GPUBOOST_DEVICE_INLINE int64_t read_best_word(int64_t* address) {
  return gpuboost_atomic_add_int64(address, 0);
}

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

//: The score of a node with sums `parent` that its children's scores are compared with:
//: its leaf score, or under monotone constraints (has_monotone) its score at its weight
//: clipped to its bounds [lower, upper].
GPUBOOST_DEVICE_INLINE double node_parent_score(const int64_t (&parent)[HISTOGRAM_FIELDS],
                                                double scale_gradients, double scale_hessians,
                                                const GainParams& params, bool has_monotone,
                                                double lower, double upper) {
  const double parent_g = static_cast<double>(parent[HISTOGRAM_GRADIENT]) / scale_gradients;
  const double parent_h = static_cast<double>(parent[HISTOGRAM_HESSIAN]) / scale_hessians;
  return has_monotone
             ? gain_score_given_weight(parent_g, parent_h,
                                       gain_bounded_weight(parent_g, parent_h, params, lower,
                                                           upper),
                                       params)
             : gain_leaf_score(parent_g, parent_h, params);
}

// The best candidate of one feature of a node, written to best_out (FEATURE_BEST_WORDS
// int64: its gain bits, bin (NO_CANDIDATE: none), default direction, left sums) and
// returned to every thread (its gain and key bin * DIRECTIONS + direction, or
// NO_CANDIDATE).
// Block: blockDim.x a power of two, at most SPLIT_SCAN_MAX_THREADS and above
//   n_candidate_bins; every thread calls it (block-wide barriers inside).
// Thread: bin b = threadIdx.x, holding own_cell (the cell of bin b, zero when b >=
//   n_candidate_bins) and missing_cell (the feature's missing bin); evaluates threshold b
//   with missing values right and, when the feature has missing rows in the node, left,
//   with the float64 formulas of gain.cuh (in NumPy's operation order).
// parent: the node's sums; parent_score: its score (at its bounded weight under monotone
// constraints, has_monotone); direction_sign: the feature's monotone direction.
GPUBOOST_DEVICE_INLINE Candidate scan_feature(
    const int64_t (&own_cell)[HISTOGRAM_FIELDS], const int64_t (&missing_cell)[HISTOGRAM_FIELDS],
    const int64_t (&parent)[HISTOGRAM_FIELDS], int32_t feature, int32_t n_candidate_bins,
    const int32_t* __restrict__ n_value_bins, int32_t direction_sign, bool has_monotone,
    double scale_gradients, double scale_hessians, double parent_score,
    const GainParams& params, double lower, double upper, SharedCells& shared_cells,
    double* shared_gain, int32_t* shared_key, int64_t* __restrict__ best_out) {
  const int32_t bin = static_cast<int32_t>(threadIdx.x);
  int64_t left[HISTOGRAM_FIELDS];
  block_scan_cells(own_cell, shared_cells, left);
  const bool has_missing = missing_cell[HISTOGRAM_COUNT] > 0;
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
          has_monotone
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
    if (bin == 0) publish_best_word(best_out + FEATURE_BEST_BIN, NO_CANDIDATE);
    return best;
  }
  const int32_t best_bin = best.key / DIRECTIONS;
  const int32_t best_direction = best.key % DIRECTIONS;
  if (bin != best_bin) return best;
  int64_t left_sums[HISTOGRAM_FIELDS];
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
    left_sums[field] =
        left[field] + (best_direction == DIRECTION_MISSING_LEFT ? missing_cell[field] : 0);
    publish_best_word(best_out + FEATURE_BEST_LEFT_SUMS + field, left_sums[field]);
  }
  // Default direction: the chosen one when there are missing rows, else the larger
  // child (ties left).
  const bool default_left =
      has_missing ? best_direction == DIRECTION_MISSING_LEFT
                  : left_sums[HISTOGRAM_COUNT] >=
                        parent[HISTOGRAM_COUNT] - left_sums[HISTOGRAM_COUNT];
  publish_best_word(best_out + FEATURE_BEST_GAIN_BITS, gain_double_to_bits(best.gain));
  publish_best_word(best_out + FEATURE_BEST_BIN, best_bin);
  publish_best_word(best_out + FEATURE_BEST_DEFAULT_LEFT, default_left ? 1 : 0);
  return best;
}

//: The best feature of a node from its per-feature bests node_best (FEATURE_BEST_WORDS
//: per feature, read with read_best_word): its gain and key = the feature, NO_CANDIDATE
//: when no feature has a candidate. Thread t takes features t, t + blockDim.x, ...
//: (consecutive threads 48 bytes apart) and keeps the best (maximum gain, then lowest
//: feature); the block reduces with block_best_candidate (blockDim.x a power of two,
//: shared arrays of blockDim.x entries). Every thread returns the winner.
GPUBOOST_DEVICE_INLINE Candidate select_best_feature(int64_t* node_best, int32_t n_features,
                                                     double* shared_gain, int32_t* shared_key) {
  Candidate mine{0.0, NO_CANDIDATE};
  for (int32_t feature = static_cast<int32_t>(threadIdx.x); feature < n_features;
       feature += static_cast<int32_t>(blockDim.x)) {
    int64_t* const best = node_best + static_cast<int64_t>(feature) * FEATURE_BEST_WORDS;
    if (read_best_word(best + FEATURE_BEST_BIN) == NO_CANDIDATE) continue;
    const double gain = gain_bits_to_double(read_best_word(best + FEATURE_BEST_GAIN_BITS));
    if (better_candidate(gain, feature, mine.gain, mine.key)) mine = Candidate{gain, feature};
  }
  return block_best_candidate(mine, shared_gain, shared_key);
}

//: Write a node's record (RECORD_WORDS int64) from `best`, its best feature (gain and key =
//: the feature, NO_CANDIDATE: none), the per-feature bests node_best (FEATURE_BEST_WORDS
//: per feature, read with read_best_word) and its sums. As NumPy (found =
//: isfinite(gain)), a node whose best gain is not finite (+inf: the float64 sums
//: overflowed) gets no split but keeps that gain, so that the host reports the overflow.
GPUBOOST_DEVICE_INLINE void write_node_record(Candidate best, int64_t* node_best,
                                              const int64_t* sums, int64_t* record) {
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
    record[RECORD_NODE_SUMS + field] = sums[field];
  }
  if (best.key == NO_CANDIDATE || !gain_is_finite(best.gain)) {
    record[RECORD_FEATURE] = NO_CANDIDATE;
    record[RECORD_BIN] = NO_CANDIDATE;
    record[RECORD_DEFAULT_LEFT] = 0;
    record[RECORD_GAIN_BITS] = best.key == NO_CANDIDATE ? FLOAT64_NEGATIVE_INFINITY_BITS
                                                         : gain_double_to_bits(best.gain);
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) record[RECORD_LEFT_SUMS + field] = 0;
    return;
  }
  int64_t* const chosen = node_best + static_cast<int64_t>(best.key) * FEATURE_BEST_WORDS;
  record[RECORD_FEATURE] = best.key;
  record[RECORD_BIN] = read_best_word(chosen + FEATURE_BEST_BIN);
  record[RECORD_DEFAULT_LEFT] = read_best_word(chosen + FEATURE_BEST_DEFAULT_LEFT);
  record[RECORD_GAIN_BITS] = read_best_word(chosen + FEATURE_BEST_GAIN_BITS);
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
    record[RECORD_LEFT_SUMS + field] = read_best_word(chosen + FEATURE_BEST_LEFT_SUMS + field);
  }
}

#endif  // GPUBOOST_SPLIT_CANDIDATES_CUH
