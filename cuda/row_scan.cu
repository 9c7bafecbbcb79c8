// row_scan.cu -- best split candidates of small nodes straight from their rows
// (Backend.find_best_splits_of_rows: defined as build_histograms then find_best_splits).
//
// Deep in a tree a node has a few hundred to a few thousand rows, but its global
// histogram has n_features * n_bins cells (172 KB for 28 features x 256 bins): zeroing it,
// flushing into it, subtracting it from its parent for the sibling and scanning it move
// about six such tables per pair of children, far more than the rows. Here a block builds
// one node's histogram of a feature group in shared memory (histogram_shared.cuh: the
// layout and exact 32-bit atomics of histogram.cu) and scans it in place with the split
// scan's code (split_candidates.cuh: same float64 operation order, tie rule, missing
// directions, feature masks, monotone bounds, admissibility); no histogram ever reaches
// global memory. It writes the per-(node, feature) best candidates (FEATURE_BEST_WORDS
// int64) and the node sums, then, when one block holds all features, the node's record;
// with several feature groups split_select_nodes (split_scan.cu) reduces them to the
// node records, as after split_scan_features. The records are bit for bit those of
// build_histograms + find_best_splits (integer sums are order-free; the scan is the same
// code).
//
// Layouts: X_binned row-major (n_rows, n_features) uint8, row r at byte r * row_stride
// (padded rows: gpuboost/backends/cuda/binned_rows.py); quantized_pairs (n_rows, 2)
// int32, 8-byte aligned, row r's (gradient, hessian) read as one int2; node i owns
// sample_indices[node_begins[i] .. node_ends[i] - 1], at most MAX_ROWS_PER_PASS rows (the
// host checks; the shared cells hold one pass). feature_best (n_nodes * n_features,
// FEATURE_BEST_WORDS) int64, node_sums (n_nodes, 3) int64, records (n_nodes, RECORD_WORDS)
// int64.
#include "common.cuh"
#include "gain.cuh"
#include "histogram_cell.cuh"
#include "histogram_shared.cuh"
#include "split_candidates.cuh"

//: Threads of a block: one per bin in the scan (a power of two >= n_bins from the host).
constexpr int ROW_SCAN_MAX_THREADS = SPLIT_SCAN_MAX_THREADS;

// The best candidate of feature `feature` of node `node` (its cells at plane index
// feature_cells), with `cell_sums(cell, sums)` giving a cell's exact sums (the block's own
// shared cells, or the cluster's summed cells): published at best_out (FEATURE_BEST_WORDS
// int64: the node's and feature's words of feature_best, or of a cluster's shared bests),
// or NO_CANDIDATE there for a feature the mask excludes (the same for the whole block, so no
// barrier of scan_feature is skipped by some threads only). Called by every thread (bin
// threadIdx.x).
template <class CellSums>
GPUBOOST_DEVICE_INLINE Candidate scan_node_feature(
    const CellSums& cell_sums, int64_t node, int32_t feature, int32_t feature_cells,
    int32_t n_features, const int32_t* __restrict__ n_value_bins,
    const uint8_t* __restrict__ feature_mask, int32_t has_feature_mask,
    const int8_t* __restrict__ monotone, int32_t has_monotone, int32_t missing_bin,
    const int64_t (&parent)[HISTOGRAM_FIELDS], double scale_gradients, double scale_hessians,
    double parent_score, const GainParams& params, double lower, double upper,
    SharedCells& shared_cells, double* shared_gain, int32_t* shared_key, int64_t* best_out) {
  const int32_t bin = static_cast<int32_t>(threadIdx.x);
  const int64_t node_feature = node * n_features + feature;
  if (has_feature_mask != 0 && feature_mask[node_feature] == 0) {
    if (bin == 0) publish_best_word(best_out + FEATURE_BEST_BIN, NO_CANDIDATE);
    return Candidate{0.0, NO_CANDIDATE};
  }
  const int32_t n_candidate_bins = missing_bin - 1;
  int64_t own_cell[HISTOGRAM_FIELDS] = {0, 0, 0};
  int64_t missing_cell[HISTOGRAM_FIELDS];
  if (bin < n_candidate_bins) cell_sums(feature_cells + bin, own_cell);
  cell_sums(feature_cells + missing_bin, missing_cell);
  return scan_feature(own_cell, missing_cell, parent, feature, n_candidate_bins, n_value_bins,
                      has_monotone != 0 ? monotone[feature] : 0, has_monotone != 0,
                      scale_gradients, scale_hessians, parent_score, params, lower, upper,
                      shared_cells, shared_gain, shared_key, best_out);
}

// Best candidate of every feature of one feature group of one node, from its rows.
// Block: (node, group) = (blockIdx.x / n_groups, blockIdx.x % n_groups); the group is the
//   features group * features_per_group .. (one fewer for the last groups where the
//   host balanced them: min(n_features, ...)). blockDim.x is a power of two >= n_bins.
//   1. zero the group's shared cells; 2. add the node's rows (shared_histogram_add_rows,
//   (row, feature) pairs, consecutive lanes on consecutive features of a row);
//   3. the node's sums from the group's first feature (every row lies in exactly one of
//   its bins, so these are the sums of any feature, those NumPy takes from feature 0);
//   4. each feature of the group in turn: thread b decodes cell b and the missing bin from
//   the planes and scan_feature evaluates and reduces its candidates.
// Dynamic shared memory: SHARED_WORDS_PER_CELL * features_per_group * feature_stride words.
// Output: FEATURE_BEST_WORDS int64 per (node, feature) of the group; the block of group 0
//   also writes the node's sums. With one group (n_groups == 1) the block also selects
//   the node's best feature and writes its record (RECORD_WORDS int64; no
//   split_select_nodes launch); with several, records is not written.
extern "C" __global__ void __launch_bounds__(ROW_SCAN_MAX_THREADS)
    row_scan_features(const uint8_t* __restrict__ X_binned, int64_t row_stride,
                      const int32_t* __restrict__ quantized_pairs,
                      const int32_t* __restrict__ sample_indices,
                      const int64_t* __restrict__ node_begins,
                      const int64_t* __restrict__ node_ends, int32_t n_features,
                      int32_t features_per_group, int32_t n_groups, int32_t feature_stride,
                      const int32_t* __restrict__ n_value_bins,
                      const uint8_t* __restrict__ feature_mask, int32_t has_feature_mask,
                      const int8_t* __restrict__ monotone, const double* __restrict__ node_bounds,
                      int32_t has_monotone, int32_t n_bins, int32_t missing_bin,
                      double scale_gradients, double scale_hessians, double reg_lambda,
                      double reg_alpha, double max_delta_step, double min_child_weight,
                      int64_t min_data_in_leaf, double gamma, double split_gain_eps,
                      int64_t* __restrict__ feature_best, int64_t* __restrict__ node_sums,
                      int64_t* __restrict__ records) {
  GPUBOOST_DYNAMIC_SHARED(uint32_t, shared_words);
  __shared__ SharedCells shared_cells;
  __shared__ double shared_gain[ROW_SCAN_MAX_THREADS];
  __shared__ int32_t shared_key[ROW_SCAN_MAX_THREADS];
  const GainParams params{reg_lambda,       reg_alpha, max_delta_step, min_child_weight,
                          min_data_in_leaf, gamma,     split_gain_eps};
  const int64_t node = blockIdx.x / n_groups;
  const int32_t group = static_cast<int32_t>(blockIdx.x % n_groups);
  const int32_t first_feature = group * features_per_group;
  const int32_t features_left = n_features - first_feature;
  const int32_t group_features =
      features_left < features_per_group ? features_left : features_per_group;
  const int32_t plane_words = group_features * feature_stride;
  const int32_t group_words = plane_words * SHARED_WORDS_PER_CELL;
  const SharedPlanes planes = shared_planes(shared_words, plane_words);
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t bin = static_cast<int32_t>(threadIdx.x);

  for (int32_t word = bin; word < group_words; word += threads) shared_words[word] = 0u;
  __syncthreads();
  const int64_t begin = node_begins[node];
  shared_histogram_add_rows(X_binned, reinterpret_cast<const int2*>(quantized_pairs),
                            sample_indices, begin, node_ends[node] - begin, row_stride,
                            first_feature, group_features, feature_stride, planes);
  __syncthreads();

  // Node sums: the cells of the group's first feature (thread t: bins t, t + blockDim.x...).
  int64_t parent[HISTOGRAM_FIELDS];
  {
    int64_t mine[HISTOGRAM_FIELDS] = {0, 0, 0};
    for (int32_t cell = bin; cell < n_bins; cell += threads) {
      int64_t sums[HISTOGRAM_FIELDS];
      shared_cell_sums(planes, cell, sums);
      for (int field = 0; field < HISTOGRAM_FIELDS; ++field) mine[field] += sums[field];
    }
    block_sum_cells(mine, shared_cells, parent);
  }
  if (group == 0 && bin == 0) {
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
      node_sums[node * HISTOGRAM_FIELDS + field] = parent[field];
    }
  }
  // Monotone constraints: the node's weight bounds, scores at the clipped weights.
  const double lower = has_monotone != 0 ? node_bounds[node * 2] : 0.0;
  const double upper = has_monotone != 0 ? node_bounds[node * 2 + 1] : 0.0;
  const double parent_score = node_parent_score(parent, scale_gradients, scale_hessians, params,
                                                has_monotone != 0, lower, upper);

  // The node's best feature so far (one group: the whole node), the same in every thread:
  // features in increasing order, replaced only by a strictly better one (larger gain;
  // equal gains keep the lower feature), as split_select_nodes' reduction.
  Candidate node_best{0.0, NO_CANDIDATE};
  // The cells are only read from here on (no barrier needed between features).
  const auto own_cells = [&](int32_t cell, int64_t (&sums)[HISTOGRAM_FIELDS]) {
    shared_cell_sums(planes, cell, sums);
  };
  for (int32_t group_feature = 0; group_feature < group_features; ++group_feature) {
    const int32_t feature = first_feature + group_feature;
    const Candidate best = scan_node_feature(
        own_cells, node, feature, group_feature * feature_stride, n_features, n_value_bins,
        feature_mask, has_feature_mask, monotone, has_monotone, missing_bin, parent,
        scale_gradients, scale_hessians, parent_score, params, lower, upper, shared_cells,
        shared_gain, shared_key,
        feature_best + (node * n_features + feature) * FEATURE_BEST_WORDS);
    if (best.key != NO_CANDIDATE && better_candidate(best.gain, feature, node_best.gain,
                                                     node_best.key)) {
      node_best = Candidate{best.gain, feature};
    }
  }
  if (n_groups != 1) return;  // split_select_nodes reduces the groups' bests
  // One group: the node's record, as split_select_nodes would write it. The barrier makes
  // the winning threads' best_out words visible to thread 0.
  __syncthreads();
  if (bin == 0) {
    write_node_record(node_best, feature_best + node * n_features * FEATURE_BEST_WORDS, parent,
                      records + node * RECORD_WORDS);
  }
}

#if GPUBOOST_CLUSTERS  // sm_90 and the emulation (common.cuh); the host launches it there
//: Blocks of a thread-block cluster of row_scan_cluster (host: CLUSTER_BLOCKS of
//: gpuboost/backends/cuda/histogram.py, the portable cluster size of sm_90).
constexpr int ROW_SCAN_CLUSTER_BLOCKS = 8;
//: Dynamic shared bytes of row_scan_cluster after its planes (8-byte aligned): the scan's
//: cells, gains and keys (row_scan_features keeps them static; a cluster kernel keeps all
//: its shared memory dynamic, docs/EMULATION.md).
constexpr int ROW_SCAN_CLUSTER_SCRATCH_BYTES = static_cast<int>(
    sizeof(SharedCells) + ROW_SCAN_MAX_THREADS * (sizeof(double) + sizeof(int32_t)));
static_assert(ROW_SCAN_CLUSTER_SCRATCH_BYTES == 9216, "host: ROW_SCAN_CLUSTER_SCRATCH_BYTES");

//: The node's split as the partition ahead applies it, set by rank 0 and read by every
//: block of the cluster (distributed shared memory), and a block's left rows.
struct AheadSplit {
  int32_t feature;  // NO_CANDIDATE: the node has no split, nothing is written
  int32_t threshold_bin;
  int32_t default_left;
  int32_t block_lefts;  // this block's rows going left
};
//: Bytes of the partition ahead's shared memory before its rows (host: AHEAD_SPLIT_BYTES).
constexpr int ROW_SCAN_AHEAD_SPLIT_BYTES = static_cast<int>(sizeof(AheadSplit));
static_assert(ROW_SCAN_AHEAD_SPLIT_BYTES == 16, "host: AHEAD_SPLIT_BYTES");

//: Whether a row whose bin of the split feature is `bin` goes left at `split`
//: (partition.cu's rule: bin <= threshold, or the missing bin where missing rows go left).
GPUBOOST_DEVICE_INLINE bool ahead_goes_left(int32_t bin, const AheadSplit& split,
                                            int32_t missing_bin) {
  return bin <= split.threshold_bin || (bin == missing_bin && split.default_left != 0);
}

//: The bin of feature `feature` in a row's saved words.
GPUBOOST_DEVICE_INLINE int32_t ahead_saved_bin(const uint32_t* words, int32_t feature) {
  return static_cast<int32_t>(
      (words[feature >> BIN_WORD_SHIFT] >> ((feature & (BIN_WORD_BYTES - 1)) * BIN_BITS)) &
      BIN_MASK);
}

//: Walks a block's `own_rows` rows in chunks of blockDim.x (thread t: row chunk + t) with
//: `goes_left(local)` the side of its local row `local`, and calls `place(local, left,
//: before)` with `before` the left rows of the block before it (a right row has `local -
//: before` right rows before it); returns the block's left rows. warp_counts:
//: blockDim.x / 32 int32 of shared scratch. Called by every thread; barriers inside.
template <class GoesLeft, class Place>
GPUBOOST_DEVICE_INLINE int32_t ahead_scan_chunks(int64_t own_rows, int32_t* warp_counts,
                                                 const GoesLeft& goes_left,
                                                 const Place& place) {
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t thread = static_cast<int32_t>(threadIdx.x);
  const int32_t lane = thread & (HISTOGRAM_WARP_LANES - 1);
  const int32_t warp = thread / HISTOGRAM_WARP_LANES;
  const int32_t n_warps = (threads + HISTOGRAM_WARP_LANES - 1) / HISTOGRAM_WARP_LANES;
  int32_t lefts_before_chunk = 0;
  for (int64_t chunk = 0; chunk < own_rows; chunk += threads) {
    const int64_t local = chunk + thread;
    const bool present = local < own_rows;
    const bool left = present && goes_left(local);
    const uint32_t lefts = __ballot_sync(histogram_warp_mask(), left ? 1 : 0);
    if (lane == 0) warp_counts[warp] = __popc(lefts);
    __syncthreads();
    int32_t before = lefts_before_chunk;
    int32_t chunk_lefts = 0;
    for (int32_t other = 0; other < n_warps; ++other) {
      if (other < warp) before += warp_counts[other];
      chunk_lefts += warp_counts[other];
    }
    before += __popc(lefts & ((1u << lane) - 1u));
    if (present) place(local, left, before);
    lefts_before_chunk += chunk_lefts;
    __syncthreads();  // warp_counts is rewritten by the next chunk
  }
  return lefts_before_chunk;
}

// row_scan_features for larger nodes: a thread-block cluster of ROW_SCAN_CLUSTER_BLOCKS
// blocks per node, all features in one group (the host launches it only so).
// Cluster: node blockIdx.x / ROW_SCAN_CLUSTER_BLOCKS. Block `rank` adds the rank-th of the
//   cluster's equal shares of the node's rows (at most MAX_ROWS_PER_PASS: the host
//   checks) to its own shared cells of every feature; after a cluster barrier it scans the
//   rank-th of equal slices of the features, each cell the exact sum of the cluster's
//   blocks' cells (distributed shared memory, gpuboost_cluster_shared), with the node's
//   sums from feature 0 summed the same way (every block the same), and publishes each
//   feature's best in rank 0's shared bests (distributed shared memory: no global
//   memory for them). After a second barrier rank 0 selects the node's best feature as
//   split_select_nodes does (split_candidates.cuh: select_best_feature) and writes its
//   record and sums; the cells are not read after that barrier.
// So a node of up to ROW_SCAN_CLUSTER_BLOCKS * MAX_ROWS_PER_PASS rows is scanned from its
// rows with ROW_SCAN_CLUSTER_BLOCKS blocks' parallelism and no global histogram.
// With ahead_capacity > 0 the cluster then partitions the node ahead (below).
// Dynamic shared memory: the planes (SHARED_WORDS_PER_CELL * n_features * feature_stride
// words, rounded up to 8 bytes), ROW_SCAN_CLUSTER_SCRATCH_BYTES, the bests (n_features *
// FEATURE_BEST_WORDS int64); with ahead_capacity > 0 then an AheadSplit and
// ahead_capacity saved rows (an int32 index and shared_row_words(0, n_features) words).
extern "C" __global__ void __cluster_dims__(ROW_SCAN_CLUSTER_BLOCKS, 1, 1)
__launch_bounds__(ROW_SCAN_MAX_THREADS)
    row_scan_cluster(const uint8_t* __restrict__ X_binned, int64_t row_stride,
                     const int32_t* __restrict__ quantized_pairs,
                     const int32_t* __restrict__ sample_indices,
                     const int64_t* __restrict__ node_begins,
                     const int64_t* __restrict__ node_ends, int32_t n_features,
                     int32_t feature_stride, const int32_t* __restrict__ n_value_bins,
                     const uint8_t* __restrict__ feature_mask, int32_t has_feature_mask,
                     const int8_t* __restrict__ monotone, const double* __restrict__ node_bounds,
                     int32_t has_monotone, int32_t n_bins, int32_t missing_bin,
                     double scale_gradients, double scale_hessians, double reg_lambda,
                     double reg_alpha, double max_delta_step, double min_child_weight,
                     int64_t min_data_in_leaf, double gamma, double split_gain_eps,
                     int32_t ahead_capacity, int32_t ahead_flag_words,
                     int32_t* __restrict__ ahead_indices,
                     int64_t* __restrict__ node_sums, int64_t* __restrict__ records) {
  GPUBOOST_DYNAMIC_SHARED(uint32_t, shared_words);
  const int32_t plane_words = n_features * feature_stride;
  const int32_t group_words = plane_words * SHARED_WORDS_PER_CELL;
  unsigned char* const scratch =
      reinterpret_cast<unsigned char*>(shared_words) + ((group_words * 4 + 7) / 8) * 8;
  SharedCells& shared_cells = *reinterpret_cast<SharedCells*>(scratch);
  double* const shared_gain = reinterpret_cast<double*>(scratch + sizeof(SharedCells));
  int32_t* const shared_key = reinterpret_cast<int32_t*>(
      scratch + sizeof(SharedCells) + ROW_SCAN_MAX_THREADS * sizeof(double));
  // The per-feature bests (rank 0's are the node's: every block publishes its features'
  // there, through distributed shared memory), then the partition ahead's shared memory:
  // the split, then the block's saved rows and words.
  int64_t* const shared_bests =
      reinterpret_cast<int64_t*>(scratch + ROW_SCAN_CLUSTER_SCRATCH_BYTES);
  int64_t* const node_bests = gpuboost_cluster_shared(shared_bests, 0u);
  AheadSplit* const ahead_split =
      reinterpret_cast<AheadSplit*>(shared_bests + n_features * FEATURE_BEST_WORDS);
  uint32_t* const ahead_flags = reinterpret_cast<uint32_t*>(ahead_split + 1);
  int32_t* const saved_rows = reinterpret_cast<int32_t*>(ahead_flags + ahead_flag_words);
  uint32_t* const saved_words = reinterpret_cast<uint32_t*>(saved_rows + ahead_capacity);
  const int32_t row_words = shared_row_words(0, n_features);
  const GainParams params{reg_lambda,       reg_alpha, max_delta_step, min_child_weight,
                          min_data_in_leaf, gamma,     split_gain_eps};
  const int64_t blocks = ROW_SCAN_CLUSTER_BLOCKS;  // gpuboost_cluster_blocks(), known to nvcc
  const int64_t rank = gpuboost_cluster_rank();
  const int64_t node = blockIdx.x / ROW_SCAN_CLUSTER_BLOCKS;
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t bin = static_cast<int32_t>(threadIdx.x);

  for (int32_t word = bin; word < group_words; word += threads) shared_words[word] = 0u;
  // The bests are published by atomic exchange, which reads the word: written first (the
  // first cluster barrier orders these stores before any block publishes).
  for (int32_t word = bin; word < n_features * FEATURE_BEST_WORDS; word += threads) {
    shared_bests[word] = 0;
  }
  __syncthreads();
  const int64_t begin = node_begins[node];
  const int64_t rows = node_ends[node] - begin;
  const int64_t share = (rows + blocks - 1) / blocks;
  const int64_t own_begin = rank * share < rows ? rank * share : rows;
  const int64_t own_rows = rows - own_begin < share ? rows - own_begin : share;
  // Partitioned ahead (ahead_flag_words > 0: every node of the launch): the first
  // ahead_capacity rows of the block's share are kept in shared memory.
  const bool ahead = ahead_flag_words > 0;
  shared_histogram_add_rows(X_binned, reinterpret_cast<const int2*>(quantized_pairs),
                            sample_indices, begin + own_begin, own_rows, row_stride, 0,
                            n_features, feature_stride, shared_planes(shared_words, plane_words),
                            ahead ? saved_rows : nullptr, ahead ? saved_words : nullptr,
                            ahead_capacity);
  gpuboost_cluster_sync();  // every block's cells are complete

  // The cluster's sums of cell `cell` (an index into a plane), from every block's planes.
  auto cluster_cell = [&](int32_t cell, int64_t (&sums)[HISTOGRAM_FIELDS]) {
    for (int field = 0; field < HISTOGRAM_FIELDS; ++field) sums[field] = 0;
    for (int64_t source = 0; source < blocks; ++source) {
      int64_t part[HISTOGRAM_FIELDS];
      shared_cell_sums(shared_planes(gpuboost_cluster_shared(shared_words,
                                                             static_cast<unsigned>(source)),
                                     plane_words),
                       cell, part);
      for (int field = 0; field < HISTOGRAM_FIELDS; ++field) sums[field] += part[field];
    }
  };
  // Node sums: the cells of feature 0 (thread t: bins t, t + blockDim.x, ...).
  int64_t parent[HISTOGRAM_FIELDS];
  {
    int64_t mine[HISTOGRAM_FIELDS] = {0, 0, 0};
    for (int32_t cell = bin; cell < n_bins; cell += threads) {
      int64_t sums[HISTOGRAM_FIELDS];
      cluster_cell(cell, sums);
      for (int field = 0; field < HISTOGRAM_FIELDS; ++field) mine[field] += sums[field];
    }
    block_sum_cells(mine, shared_cells, parent);
  }
  const double lower = has_monotone != 0 ? node_bounds[node * 2] : 0.0;
  const double upper = has_monotone != 0 ? node_bounds[node * 2 + 1] : 0.0;
  const double parent_score = node_parent_score(parent, scale_gradients, scale_hessians, params,
                                                has_monotone != 0, lower, upper);
  const int32_t slice = static_cast<int32_t>((n_features + blocks - 1) / blocks);
  const int32_t first = static_cast<int32_t>(rank) * slice;
  const int32_t last = n_features - first < slice ? n_features : first + slice;
  for (int32_t feature = first; feature < last; ++feature) {
    scan_node_feature(cluster_cell, node, feature, feature * feature_stride, n_features,
                      n_value_bins, feature_mask, has_feature_mask, monotone, has_monotone,
                      missing_bin, parent, scale_gradients, scale_hessians, parent_score, params,
                      lower, upper, shared_cells, shared_gain, shared_key,
                      node_bests + static_cast<int64_t>(feature) * FEATURE_BEST_WORDS);
  }
  gpuboost_cluster_sync();  // every feature's best is written (cluster scope)
  if (rank == 0) {
    int64_t* const node_best = shared_bests;  // rank 0's own
    const Candidate best = select_best_feature(node_best, n_features, shared_gain, shared_key);
    if (bin == 0) {
      for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
        node_sums[node * HISTOGRAM_FIELDS + field] = parent[field];
      }
      int64_t* const record = records + node * RECORD_WORDS;
      write_node_record(best, node_best, parent, record);
    }
    if (bin == 0 && ahead) {
      const int64_t* const record = records + node * RECORD_WORDS;
      ahead_split->feature = static_cast<int32_t>(record[RECORD_FEATURE]);
      ahead_split->threshold_bin = static_cast<int32_t>(record[RECORD_BIN]);
      ahead_split->default_left = static_cast<int32_t>(record[RECORD_DEFAULT_LEFT]);
    }
  }
  if (!ahead) return;  // no block reads another's cells after the second barrier
  // The partition ahead (ahead_flag_words > 0): the node's rows split by its record into
  // ahead_indices at the node's positions, as partition_move_tiles would split them once
  // the host applies the record (stable: left rows first, each side in position order).
  // Block `rank` holds the rank-th share of the positions: its left rows follow the left
  // rows of the lower ranks, its right rows the node's left rows and the lower ranks'
  // right rows. A saved row's side comes from its saved words; a row past the block's
  // ahead_capacity is read again (its index, coalesced, and the split feature's byte).
  // The first pass keeps each row's side in ahead_flags (a bit per row), the second
  // places the rows. Nothing is written for a node without a split.
  gpuboost_cluster_sync();  // rank 0's split is set
  const AheadSplit* const chosen = gpuboost_cluster_shared(ahead_split, 0u);
  const AheadSplit split{chosen->feature, chosen->threshold_bin, chosen->default_left, 0};
  const bool moves = split.feature != NO_CANDIDATE;
  int32_t* const warp_counts = shared_key;  // free once rank 0 has selected
  const int32_t* const own_indices = sample_indices + begin + own_begin;
  if (moves) {
    for (int32_t word = bin; word < ahead_flag_words; word += threads) ahead_flags[word] = 0u;
    __syncthreads();
    const auto goes_left = [&](int64_t local) {
      const int32_t split_bin =
          local < ahead_capacity
              ? ahead_saved_bin(saved_words + local * row_words, split.feature)
              : static_cast<int32_t>(X_binned[own_indices[local] * row_stride + split.feature]);
      const bool left = ahead_goes_left(split_bin, split, missing_bin);
      if (left) atomicOr(&ahead_flags[local >> 5], 1u << (local & 31));
      return left;
    };
    const int32_t lefts =
        ahead_scan_chunks(own_rows, warp_counts, goes_left, [](int64_t, bool, int32_t) {});
    if (bin == 0) ahead_split->block_lefts = lefts;
  }
  gpuboost_cluster_sync();  // every block's left rows are counted
  int64_t lefts_before = 0;
  int64_t node_lefts = 0;
  if (moves) {
    for (int64_t source = 0; source < blocks; ++source) {
      const int32_t lefts =
          gpuboost_cluster_shared(ahead_split, static_cast<unsigned>(source))->block_lefts;
      if (source < rank) lefts_before += lefts;
      node_lefts += lefts;
    }
  }
  gpuboost_cluster_sync();  // no block reads another's shared memory after this barrier
  if (!moves) return;
  int32_t* const left_out = ahead_indices + begin + lefts_before;
  int32_t* const right_out = ahead_indices + begin + node_lefts + (own_begin - lefts_before);
  ahead_scan_chunks(
      own_rows, warp_counts,
      [&](int64_t local) { return ((ahead_flags[local >> 5] >> (local & 31)) & 1u) != 0; },
      [&](int64_t local, bool left, int32_t lefts_before_row) {
        const int32_t row = local < ahead_capacity ? saved_rows[local] : own_indices[local];
        if (left) {
          left_out[lefts_before_row] = row;
        } else {
          right_out[local - lefts_before_row] = row;
        }
      });
}
#endif  // GPUBOOST_CLUSTERS
