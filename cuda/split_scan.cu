// split_scan.cu -- best split of every node of a batch
// (gpuboost.backends.numpy.split_scan.find_best_splits).
//
// split_scan_features: one block per (node, chunk of features), one launch per batch.
// For each feature of the chunk an exact int64 prefix scan of its bins gives the left
// child of every threshold bin; every candidate (bin, missing direction) is evaluated
// with the float64 formulas of gain.cuh and the block reduces to the feature's best
// candidate, which it publishes (split_candidates.cuh: atomics). The last block of a node
// to finish (threadFenceReduction: every thread fences its writes, then one atomic
// arrival per block on the node's counter) reduces the node's per-feature bests to the
// node's record. Which block that is does not matter: it reads every feature's best and
// reduces them in a fixed order, so the record is the same whatever order the blocks ran
// in.
// split_select_nodes: one block per node reduces per-feature bests written by an earlier
// launch (row_scan.cu with several feature groups) to the node records.
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
// Arrival counters: node_arrivals (>= n_nodes,) uint64, never cleared: a word holds the
// launch's epoch (bits 32..62, new for every launch on this buffer: the host's
// partition.TileStatus) and the blocks of the node arrived in that launch (bits 0..31);
// a word of an earlier epoch counts as none arrived.
#include "common.cuh"
#include "gain.cuh"
#include "histogram_cell.cuh"
#include "split_candidates.cuh"

//: Threads of a split_select_nodes block (a power of two; each strides over features).
constexpr int SPLIT_SELECT_MAX_THREADS = 256;
//: First bit of the epoch in an arrival counter word; the bits below count the blocks.
constexpr int SPLIT_ARRIVAL_EPOCH_SHIFT = 32;
constexpr unsigned long long SPLIT_ARRIVAL_COUNT_MASK = 0xffffffffull;

//: Counts one more block of the launch `epoch` in the arrival word `counter` (a word of
//: an earlier epoch counts as zero) and returns the blocks arrived so far, this one
//: included. One thread per block.
GPUBOOST_DEVICE_INLINE uint32_t split_arrive(uint64_t* counter, int64_t epoch) {
  unsigned long long* const word = reinterpret_cast<unsigned long long*>(counter);
  const unsigned long long epoch_bits = static_cast<unsigned long long>(epoch)
                                        << SPLIT_ARRIVAL_EPOCH_SHIFT;
  unsigned long long seen = atomicAdd(word, 0ull);
  for (;;) {
    const unsigned long long next =
        (seen & ~SPLIT_ARRIVAL_COUNT_MASK) == epoch_bits ? seen + 1 : epoch_bits | 1ull;
    const unsigned long long before = atomicCAS(word, seen, next);
    if (before == seen) return static_cast<uint32_t>(next & SPLIT_ARRIVAL_COUNT_MASK);
    seen = before;
  }
}
//: Sums of the histogram fields over one feature's n_bins cells, read coalesced: thread t
//: reads the int64 words t, t + blockDim.x, ... of the feature's n_bins * 3 words (a
//: warp reads 32 consecutive words) and keeps one sum per field (word w is field w % 3);
//: the block then adds the threads' sums. Every thread gets the totals (exact int64
//: sums, in any order the same).
GPUBOOST_DEVICE_INLINE void block_feature_totals(const int64_t* feature_histogram,
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

//: A node a scan block evaluates: its row of the batch, its sums, its weight bounds
//: (monotone constraints) and the score its children are compared with.
struct ScannedNode {
  int64_t row;
  int64_t sums[HISTOGRAM_FIELDS];
  double lower;
  double upper;
  double score;
};

//: The ScannedNode of batch row `row` with sums `sums` (the inputs shared by all nodes:
//: node_bounds, scales, params).
GPUBOOST_DEVICE_INLINE ScannedNode scanned_node(int64_t row, const int64_t (&sums)[HISTOGRAM_FIELDS],
                                                const double* __restrict__ node_bounds,
                                                bool has_monotone, double scale_gradients,
                                                double scale_hessians, const GainParams& params) {
  ScannedNode node;
  node.row = row;
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) node.sums[field] = sums[field];
  node.lower = has_monotone ? node_bounds[row * 2] : 0.0;
  node.upper = has_monotone ? node_bounds[row * 2 + 1] : 0.0;
  node.score = node_parent_score(sums, scale_gradients, scale_hessians, params, has_monotone,
                                 node.lower, node.upper);
  return node;
}

//: The FEATURE_BEST_WORDS words of (node row, feature) in feature_best.
GPUBOOST_DEVICE_INLINE int64_t* best_of(int64_t* feature_best, int64_t row, int32_t feature,
                                        int32_t n_features) {
  return feature_best + (row * n_features + feature) * FEATURE_BEST_WORDS;
}

//: Publish "no candidate" for (node row, feature) (a feature the node's mask excludes).
GPUBOOST_DEVICE_INLINE void publish_no_candidate(int64_t row, int32_t feature, int32_t n_features,
                                                 int64_t* __restrict__ feature_best) {
  publish_best_word(best_of(feature_best, row, feature, n_features) + FEATURE_BEST_BIN,
                    NO_CANDIDATE);
}

//: Scan one feature of `node` from its cells staged in shared memory (n_bins cells of
//: HISTOGRAM_FIELDS words) and publish its best candidate. Every thread of the block
//: calls it.
GPUBOOST_DEVICE_INLINE void scan_staged_feature(
    const ScannedNode& node, const int64_t* cells, int32_t feature, int32_t n_features,
    int32_t n_candidate_bins, int32_t missing_bin, const int32_t* __restrict__ n_value_bins,
    int32_t direction_sign, bool bounded, double scale_gradients, double scale_hessians,
    const GainParams& params, SharedCells& shared_cells, double* shared_gain,
    int32_t* shared_key, int64_t* __restrict__ feature_best) {
  const int32_t bin = static_cast<int32_t>(threadIdx.x);
  // Left sums of threshold `bin` with missing values right: bins 0 .. bin.
  int64_t own_cell[HISTOGRAM_FIELDS];
  int64_t missing_cell[HISTOGRAM_FIELDS];
  for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
    own_cell[field] = bin < n_candidate_bins ? cells[bin * HISTOGRAM_FIELDS + field] : 0;
    missing_cell[field] = cells[missing_bin * HISTOGRAM_FIELDS + field];
  }
  // (block_scan_cells synchronizes after these reads, before the next feature's copy.)
  scan_feature(own_cell, missing_cell, node.sums, feature, n_candidate_bins, n_value_bins,
               direction_sign, bounded, scale_gradients, scale_hessians, node.score, params,
               node.lower, node.upper, shared_cells, shared_gain, shared_key,
               best_of(feature_best, node.row, feature, n_features));
}

//: Select `node`'s best feature from its per-feature bests and write its record when its
//: row lies in [record_first, record_first + record_count). Every thread of the block
//: calls it.
GPUBOOST_DEVICE_INLINE void select_node_record(const ScannedNode& node, int32_t n_features,
                                               int64_t* __restrict__ feature_best,
                                               int32_t record_first, int32_t record_count,
                                               double* shared_gain, int32_t* shared_key,
                                               int64_t* __restrict__ records) {
  int64_t* const node_best = best_of(feature_best, node.row, 0, n_features);
  const Candidate best = select_best_feature(node_best, n_features, shared_gain, shared_key);
  if (threadIdx.x == 0 && node.row >= record_first && node.row < record_first + record_count) {
    int64_t* const record = records + (node.row - record_first) * RECORD_WORDS;
    write_node_record(best, node_best, node.sums, record);
  }
}

// Best candidate of every feature of a chunk of features of one node, or of one pair of
// sibling nodes whose second histogram it also writes (n_pairs > 0).
// Units: without pairs (n_pairs == 0) a unit is a node (n_units = n_nodes); with pairs, a
//   unit is pair p: the built node p and its sibling n_pairs + p (n_nodes = 2 * n_pairs),
//   whose histogram the block computes as parents[parent_rows[p]] - histograms[p] (exact),
//   writes into row n_pairs + p of histograms and scans from shared memory: the
//   subtraction of histogram.cu's histogram_subtract_siblings fused with the scan, so that
//   the parent and the built child are read once and the sibling is written once, never
//   read back (3 table passes per pair against 5).
// Block: (unit, chunk) = (blockIdx.x / chunks_per_node, blockIdx.x % chunks_per_node) for
//   the first n_units * chunks_per_node blocks; the chunk is features [chunk *
//   features_per_block, min(n_features, (chunk + 1) * features_per_block)); blockDim.x is
//   a power of two >= n_bins. For each feature of the chunk in turn the block copies the
//   feature's cells to shared memory (coalesced: a warp reads 32 consecutive int64 words;
//   with pairs it also reads the parent's and writes the sibling's), prefix-scans the
//   candidate bins of each of its nodes, evaluates every candidate and reduces. A node's
//   sums: without pairs, feature 0's, summed once per block (chunks trade parallelism
//   against re-reading feature 0: the host picks features_per_block,
//   backends/cuda/split_scan.py); with pairs, those of the chunk's first feature as
//   staged (every row lies in one bin of each feature: the same exact sums, no re-read).
//   The blocks after them (none without next_words) write zeros over next_zeroed[0 ..
//   next_words - 1], the built half of the next level's batch, as
//   histogram_subtract_siblings does.
// Thread: bin b = threadIdx.x: evaluates threshold b with missing values right and, when
//   the feature has missing rows in the node, left.
// Output: FEATURE_BEST_WORDS int64 per (node, feature), published with atomics. Then
//   every thread fences its writes, thread 0 counts the block's arrival on the unit's
//   counter (node_arrivals, launch `epoch`: see the top of the file), and the block that
//   arrives last (chunks_per_node arrivals) fences again, selects each of the unit's nodes'
//   best feature from all its per-feature bests (select_best_feature) and writes the
//   record (RECORD_WORDS int64) of each node whose row lies in [record_first, record_first
//   + record_count), at records[row - record_first], with the sums it computed itself.
extern "C" __global__ void __launch_bounds__(SPLIT_SCAN_MAX_THREADS)
    split_scan_features(int64_t* __restrict__ histograms, int32_t n_nodes,
                        const int64_t* __restrict__ parents,
                        const int64_t* __restrict__ parent_rows, int32_t n_pairs,
                        int64_t next_words, int64_t* __restrict__ next_zeroed,
                        const int32_t* __restrict__ n_value_bins,
                        const uint8_t* __restrict__ feature_mask, int32_t has_feature_mask,
                        const int8_t* __restrict__ monotone, const double* __restrict__ node_bounds,
                        int32_t has_monotone, int32_t n_features, int32_t features_per_block,
                        int32_t chunks_per_node, int32_t n_bins, int32_t missing_bin,
                        double scale_gradients, double scale_hessians, double reg_lambda,
                        double reg_alpha, double max_delta_step, double min_child_weight,
                        int64_t min_data_in_leaf, double gamma, double split_gain_eps,
                        int64_t epoch, uint64_t* __restrict__ node_arrivals,
                        int64_t* __restrict__ feature_best, int32_t record_first,
                        int32_t record_count, int64_t* __restrict__ records) {
  __shared__ SharedCells shared_cells;
  __shared__ int32_t block_is_last;
  __shared__ int64_t staged_cells[SPLIT_SCAN_MAX_THREADS * HISTOGRAM_FIELDS];
  __shared__ int64_t staged_sibling[SPLIT_SCAN_MAX_THREADS * HISTOGRAM_FIELDS];
  __shared__ double shared_gain[SPLIT_SCAN_MAX_THREADS];
  __shared__ int32_t shared_key[SPLIT_SCAN_MAX_THREADS];
  const bool pairs = n_pairs > 0;
  const int64_t n_units = pairs ? n_pairs : n_nodes;
  const int64_t scan_blocks = n_units * chunks_per_node;
  if (static_cast<int64_t>(blockIdx.x) >= scan_blocks) {  // the whole block: zeroing
    zero_in_tail_blocks(scan_blocks, next_words, next_zeroed);
    return;
  }
  const GainParams params{reg_lambda,       reg_alpha, max_delta_step, min_child_weight,
                          min_data_in_leaf, gamma,     split_gain_eps};
  const int64_t unit = blockIdx.x / chunks_per_node;
  const int32_t chunk = static_cast<int32_t>(blockIdx.x % chunks_per_node);
  const int32_t first_feature = chunk * features_per_block;
  const int32_t end_feature =
      first_feature + features_per_block < n_features ? first_feature + features_per_block
                                                      : n_features;
  const int32_t bin = static_cast<int32_t>(threadIdx.x);
  const int32_t n_words = n_bins * HISTOGRAM_FIELDS;
  const int64_t node_words = static_cast<int64_t>(n_features) * n_words;
  const int64_t* const node_histogram = histograms + unit * node_words;
  const int64_t* const parent_histogram = pairs ? parents + parent_rows[unit] * node_words : nullptr;
  int64_t* const sibling_histogram = pairs ? histograms + (n_pairs + unit) * node_words : nullptr;
  const bool bounded = has_monotone != 0;

  // Sums: every row of a node lies in exactly one bin of every feature. Without pairs
  // they are feature 0's (as NumPy's); with pairs, the chunk's first feature's, from the
  // cells the block stages anyway (the same exact sums; no re-read of feature 0).
  const int64_t first_row = unit;
  const int64_t second_row = n_pairs + unit;  // with pairs
  ScannedNode first{};
  ScannedNode second{};
  if (!pairs) {
    int64_t sums[HISTOGRAM_FIELDS];
    block_feature_totals(node_histogram, n_bins, shared_cells, sums);
    first = scanned_node(first_row, sums, node_bounds, bounded, scale_gradients, scale_hessians, params);
  }
  const int32_t n_candidate_bins = missing_bin - 1;

  for (int32_t feature = first_feature; feature < end_feature; ++feature) {
    const bool scanned[2] = {
        has_feature_mask == 0 || feature_mask[first_row * n_features + feature] != 0,
        pairs && (has_feature_mask == 0 || feature_mask[second_row * n_features + feature] != 0)};
    // The same for the whole block: no barrier is skipped by some threads only.
    if (!scanned[0] && bin == 0) publish_no_candidate(first_row, feature, n_features, feature_best);
    if (pairs && !scanned[1] && bin == 0) {
      publish_no_candidate(second_row, feature, n_features, feature_best);
    }
    if (!pairs && !scanned[0]) continue;  // (a pair's sibling is written in any case)
    const int64_t feature_offset = static_cast<int64_t>(feature) * n_words;
    for (int32_t word = bin; word < n_words; word += static_cast<int32_t>(blockDim.x)) {
      const int64_t built = node_histogram[feature_offset + word];
      staged_cells[word] = built;
      if (pairs) {
        const int64_t sibling = exact_difference(parent_histogram[feature_offset + word], built);
        staged_sibling[word] = sibling;
        sibling_histogram[feature_offset + word] = sibling;
      }
    }
    __syncthreads();
    if (pairs && feature == first_feature) {  // the same for the whole block
      int64_t sums[HISTOGRAM_FIELDS];
      block_feature_totals(staged_cells, n_bins, shared_cells, sums);
      first = scanned_node(first_row, sums, node_bounds, bounded, scale_gradients, scale_hessians,
                           params);
      block_feature_totals(staged_sibling, n_bins, shared_cells, sums);
      second = scanned_node(second_row, sums, node_bounds, bounded, scale_gradients,
                            scale_hessians, params);
    }
    if (scanned[0]) {  // the same for the whole block
      scan_staged_feature(first, staged_cells, feature, n_features, n_candidate_bins, missing_bin,
                          n_value_bins, bounded ? monotone[feature] : 0, bounded,
                          scale_gradients, scale_hessians, params, shared_cells, shared_gain,
                          shared_key, feature_best);
    }
    if (scanned[1]) {
      scan_staged_feature(second, staged_sibling, feature, n_features, n_candidate_bins,
                          missing_bin, n_value_bins, bounded ? monotone[feature] : 0, bounded,
                          scale_gradients, scale_hessians, params, shared_cells, shared_gain,
                          shared_key, feature_best);
    }
    // A feature no node of the block scanned read the staged cells in no thread: the next
    // feature's copy may follow at once.
  }

  // The unit's last block selects (threadFenceReduction): each thread's published words
  // are visible device-wide before the block's arrival is counted.
  __threadfence();
  __syncthreads();
  if (bin == 0) block_is_last = split_arrive(node_arrivals + unit, epoch) == chunks_per_node;
  __syncthreads();
  if (block_is_last == 0) return;  // the same for the whole block
  __threadfence();  // the other blocks' words are read after their arrivals
  select_node_record(first, n_features, feature_best, record_first, record_count, shared_gain,
                     shared_key, records);
  if (pairs) {
    select_node_record(second, n_features, feature_best, record_first, record_count,
                       shared_gain, shared_key, records);
  }
}

// Node records from per-feature bests of an earlier launch (row_scan_features with
// several feature groups).
// Block: one node (blockIdx.x); blockDim.x is a power of two.
// Thread: features threadIdx.x, threadIdx.x + blockDim.x, ...: keeps the best (maximum gain,
//   then lowest feature); the block reduces and thread 0 writes the RECORD_WORDS words.
extern "C" __global__ void __launch_bounds__(SPLIT_SELECT_MAX_THREADS)
    split_select_nodes(int64_t* __restrict__ feature_best,
                       const int64_t* __restrict__ node_sums, int32_t n_features,
                       int64_t* __restrict__ records) {
  __shared__ double shared_gain[SPLIT_SELECT_MAX_THREADS];
  __shared__ int32_t shared_key[SPLIT_SELECT_MAX_THREADS];
  const int64_t node = blockIdx.x;
  int64_t* const node_best = feature_best + node * n_features * FEATURE_BEST_WORDS;
  const Candidate best = select_best_feature(node_best, n_features, shared_gain, shared_key);
  if (threadIdx.x != 0) return;
  write_node_record(best, node_best, node_sums + node * HISTOGRAM_FIELDS,
                    records + node * RECORD_WORDS);
}
