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
// shared cells, or the cluster's summed cells): published in feature_best, or
// NO_CANDIDATE there for a feature the mask excludes (the same for the whole block, so no
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
    SharedCells& shared_cells, double* shared_gain, int32_t* shared_key,
    int64_t* __restrict__ feature_best) {
  const int32_t bin = static_cast<int32_t>(threadIdx.x);
  const int64_t node_feature = node * n_features + feature;
  int64_t* const best_out = feature_best + node_feature * FEATURE_BEST_WORDS;
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
        shared_gain, shared_key, feature_best);
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

// row_scan_features for larger nodes: a thread-block cluster of ROW_SCAN_CLUSTER_BLOCKS
// blocks per node, all features in one group (the host launches it only so).
// Cluster: node blockIdx.x / ROW_SCAN_CLUSTER_BLOCKS. Block `rank` adds the rank-th of the
//   cluster's equal shares of the node's rows (at most MAX_ROWS_PER_PASS: the host
//   checks) to its own shared cells of every feature; after a cluster barrier it scans the
//   rank-th of equal slices of the features, each cell the exact sum of the cluster's
//   blocks' cells (distributed shared memory, gpuboost_cluster_shared), with the node's
//   sums from feature 0 summed the same way (every block the same). After a second
//   barrier (the per-feature bests are written) rank 0 selects the node's best feature
//   as split_select_nodes does (split_candidates.cuh: select_best_feature) and writes its
//   record and sums; the cells are not read after that barrier, so blocks may leave.
// So a node of up to ROW_SCAN_CLUSTER_BLOCKS * MAX_ROWS_PER_PASS rows is scanned from its
// rows with ROW_SCAN_CLUSTER_BLOCKS blocks' parallelism and no global histogram.
// Dynamic shared memory: the planes (SHARED_WORDS_PER_CELL * n_features * feature_stride
// words, rounded up to 8 bytes), then ROW_SCAN_CLUSTER_SCRATCH_BYTES.
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
                     int64_t* __restrict__ feature_best, int64_t* __restrict__ node_sums,
                     int64_t* __restrict__ records) {
  GPUBOOST_DYNAMIC_SHARED(uint32_t, shared_words);
  const int32_t plane_words = n_features * feature_stride;
  const int32_t group_words = plane_words * SHARED_WORDS_PER_CELL;
  unsigned char* const scratch =
      reinterpret_cast<unsigned char*>(shared_words) + ((group_words * 4 + 7) / 8) * 8;
  SharedCells& shared_cells = *reinterpret_cast<SharedCells*>(scratch);
  double* const shared_gain = reinterpret_cast<double*>(scratch + sizeof(SharedCells));
  int32_t* const shared_key = reinterpret_cast<int32_t*>(
      scratch + sizeof(SharedCells) + ROW_SCAN_MAX_THREADS * sizeof(double));
  const GainParams params{reg_lambda,       reg_alpha, max_delta_step, min_child_weight,
                          min_data_in_leaf, gamma,     split_gain_eps};
  const int64_t blocks = ROW_SCAN_CLUSTER_BLOCKS;  // gpuboost_cluster_blocks(), known to nvcc
  const int64_t rank = gpuboost_cluster_rank();
  const int64_t node = blockIdx.x / ROW_SCAN_CLUSTER_BLOCKS;
  const int32_t threads = static_cast<int32_t>(blockDim.x);
  const int32_t bin = static_cast<int32_t>(threadIdx.x);

  for (int32_t word = bin; word < group_words; word += threads) shared_words[word] = 0u;
  __syncthreads();
  const int64_t begin = node_begins[node];
  const int64_t rows = node_ends[node] - begin;
  const int64_t share = (rows + blocks - 1) / blocks;
  const int64_t own_begin = rank * share < rows ? rank * share : rows;
  const int64_t own_rows = rows - own_begin < share ? rows - own_begin : share;
  shared_histogram_add_rows(X_binned, reinterpret_cast<const int2*>(quantized_pairs),
                            sample_indices, begin + own_begin, own_rows, row_stride, 0,
                            n_features, feature_stride, shared_planes(shared_words, plane_words));
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
                      lower, upper, shared_cells, shared_gain, shared_key, feature_best);
  }
  gpuboost_cluster_sync();  // every feature's best is written (cluster scope)
  if (rank == 0) {
    int64_t* const node_best = feature_best + node * n_features * FEATURE_BEST_WORDS;
    const Candidate best = select_best_feature(node_best, n_features, shared_gain, shared_key);
    if (bin == 0) {
      for (int field = 0; field < HISTOGRAM_FIELDS; ++field) {
        node_sums[node * HISTOGRAM_FIELDS + field] = parent[field];
      }
      write_node_record(best, node_best, parent, records + node * RECORD_WORDS);
    }
  }
  // No block reads another's cells after the second barrier: blocks may leave.
}
#endif  // GPUBOOST_CLUSTERS
