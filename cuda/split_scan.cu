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
// Output: FEATURE_BEST_WORDS int64 per (node, feature), published with atomics. Then
//   every thread fences its writes, thread 0 counts the block's arrival on the node's
//   counter (node_arrivals, launch `epoch`: see the top of the file), and the block that
//   arrives last (chunks_per_node arrivals) fences again, selects the node's best feature
//   from all its per-feature bests (select_best_feature) and writes the node's record
//   (RECORD_WORDS int64) with the parent sums it computed itself. One chunk per node:
//   the block is its node's last.
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
                        int64_t epoch, uint64_t* __restrict__ node_arrivals,
                        int64_t* __restrict__ feature_best, int64_t* __restrict__ records) {
  __shared__ SharedCells shared_cells;
  __shared__ int32_t block_is_last;
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
  // Monotone constraints: the node's weight bounds, scores at the clipped weights.
  const double lower = has_monotone != 0 ? node_bounds[node * 2] : 0.0;
  const double upper = has_monotone != 0 ? node_bounds[node * 2 + 1] : 0.0;
  const double parent_score = node_parent_score(parent, scale_gradients, scale_hessians, params,
                                                has_monotone != 0, lower, upper);
  const int32_t n_candidate_bins = missing_bin - 1;

  for (int32_t feature = first_feature; feature < end_feature; ++feature) {
    const int64_t node_feature = node * n_features + feature;
    int64_t* const best_out = feature_best + node_feature * FEATURE_BEST_WORDS;
    // The same for the whole block: no barrier is skipped by some threads only.
    if (has_feature_mask != 0 && feature_mask[node_feature] == 0) {
      if (bin == 0) publish_best_word(best_out + FEATURE_BEST_BIN, NO_CANDIDATE);
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
    scan_feature(own_cell, missing_cell, parent, feature, n_candidate_bins, n_value_bins,
                 has_monotone != 0 ? monotone[feature] : 0, has_monotone != 0, scale_gradients,
                 scale_hessians, parent_score, params, lower, upper, shared_cells, shared_gain,
                 shared_key, best_out);
  }

  // The node's last block selects (threadFenceReduction): each thread's published words
  // are visible device-wide before the block's arrival is counted.
  __threadfence();
  __syncthreads();
  if (bin == 0) block_is_last = split_arrive(node_arrivals + node, epoch) == chunks_per_node;
  __syncthreads();
  if (block_is_last == 0) return;  // the same for the whole block
  __threadfence();  // the other blocks' words are read after their arrivals
  int64_t* const node_best = feature_best + node * n_features * FEATURE_BEST_WORDS;
  const Candidate best = select_best_feature(node_best, n_features, shared_gain, shared_key);
  if (bin == 0) write_node_record(best, node_best, parent, records + node * RECORD_WORDS);
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
