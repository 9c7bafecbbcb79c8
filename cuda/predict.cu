// predict.cu -- tree traversal on raw float64 features and on binned features.
//
// Contract (gpuboost/backends/numpy/predict.py, gpuboost/tree/tree.py): node 0 is the root, a node
// is a leaf when feature < 0; otherwise raw traversal sends x <= threshold left
// and NaN along default_left, binned traversal sends bin <= threshold_bin left
// and missing_bin along default_left.
//
// Categorical splits (docs/DESIGN.md, "Categorical features"; the definition is
// gpuboost/backends/categorical.py: predict_leaves): a node with cat_words > 0 sends
// left the codes of its set, cat_words uint32 words at cat_bits[cat_begin ..] (code c:
// bit c % 32 of word c / 32). A missing value (NaN; the missing bin) takes default_left;
// so does, on raw features, a value that is no code below the tree's code_limit (negative,
// fractional, or at least code_limit), and on binned features a bin of at least
// code_limit; a code below code_limit past the node's words is not in its set.
//
// Trees come from the host as flat per-node arrays; a forest is the trees'
// arrays concatenated, tree t owning nodes [tree_node_offsets[t],
// tree_node_offsets[t + 1]) with child ids local to the tree:
//   node_ints   (8, n_nodes) int32 rows: feature, left_child, right_child,
//               threshold_bin, default_left (0 or 1), cat_begin (into the forest's
//               cat_bits), cat_words (0: a numeric split), code_limit (the tree's)
//   node_floats (2, n_nodes) float64 rows: threshold, value
//   cat_bits    (>= 1,) uint32: the trees' category sets concatenated
// (backends/cuda/predict.py packs them, NODE_INT_ROWS / NODE_FLOAT_ROWS; the row indices
// are the constants below), with `stride` = the number of packed nodes.
// A traversal takes at most n_nodes steps, so a malformed tree cannot hang the GPU.
//
// Every kernel is a grid-stride loop with one thread per row; a block covers
// blockDim.x consecutive rows per step. Any 1-D launch shape works
// (backends/cuda/predict.py: PREDICT_THREADS_PER_BLOCK). The forest kernel walks the trees in
// order, so each margin receives the trees' values in tree order, exactly as the
// NumPy backend adds them (compiled with --fmad=false; only additions are done).
#include "common.cuh"

//: Rows of node_ints.
constexpr int32_t kNodeFeature = 0;
constexpr int32_t kNodeLeftChild = 1;
constexpr int32_t kNodeRightChild = 2;
constexpr int32_t kNodeThresholdBin = 3;
constexpr int32_t kNodeDefaultLeft = 4;
constexpr int32_t kNodeCatBegin = 5;
constexpr int32_t kNodeCatWords = 6;
constexpr int32_t kNodeCodeLimit = 7;
//: Rows of node_floats.
constexpr int32_t kNodeThreshold = 0;
constexpr int32_t kNodeValue = 1;

//: Per-node arrays of one tree (pointers already offset to the tree's first node).
struct TreeView {
  const int32_t* feature;
  const int32_t* left_child;
  const int32_t* right_child;
  const int32_t* threshold_bin;
  const int32_t* default_left;
  const int32_t* cat_begin;
  const int32_t* cat_words;
  const int32_t* code_limit;
  const uint32_t* cat_bits;  // the forest's (cat_begin is an offset into it)
  const double* threshold;
  const double* value;
  int64_t n_nodes;
};

//: The tree owning nodes [first_node, first_node + n_nodes) of a packed forest
//: whose arrays have `stride` nodes per row.
GPUBOOST_DEVICE_INLINE TreeView predict_tree_view(const int32_t* node_ints,
                                                  const double* node_floats,
                                                  const uint32_t* cat_bits, int64_t stride,
                                                  int64_t first_node, int64_t n_nodes) {
  TreeView tree;
  tree.feature = node_ints + kNodeFeature * stride + first_node;
  tree.left_child = node_ints + kNodeLeftChild * stride + first_node;
  tree.right_child = node_ints + kNodeRightChild * stride + first_node;
  tree.threshold_bin = node_ints + kNodeThresholdBin * stride + first_node;
  tree.default_left = node_ints + kNodeDefaultLeft * stride + first_node;
  tree.cat_begin = node_ints + kNodeCatBegin * stride + first_node;
  tree.cat_words = node_ints + kNodeCatWords * stride + first_node;
  tree.code_limit = node_ints + kNodeCodeLimit * stride + first_node;
  tree.cat_bits = cat_bits;
  tree.threshold = node_floats + kNodeThreshold * stride + first_node;
  tree.value = node_floats + kNodeValue * stride + first_node;
  tree.n_nodes = n_nodes;
  return tree;
}

//: Whether code `code` (0 <= code < the tree's code_limit) is in the set of the
//: categorical `node` (a code past the node's words is not).
GPUBOOST_DEVICE_INLINE bool predict_in_set(const TreeView& tree, int32_t node, int32_t code) {
  const int32_t word = code / 32;
  return word < tree.cat_words[node] &&
         ((tree.cat_bits[tree.cat_begin[node] + word] >> (code % 32)) & 1u) != 0;
}

//: Leaf reached by one row of raw features (`row` points at its n_features values).
GPUBOOST_DEVICE_INLINE int32_t predict_leaf_raw(const TreeView& tree, const double* row) {
  int32_t node = 0;
  for (int64_t step = 0; step < tree.n_nodes && tree.feature[node] >= 0; ++step) {
    const double value = row[tree.feature[node]];
    bool left;
    if (gpuboost_is_nan(value)) {
      left = tree.default_left[node] != 0;
    } else if (tree.cat_words[node] == 0) {
      left = value <= tree.threshold[node];
    } else if (value >= 0.0 && value < static_cast<double>(tree.code_limit[node]) &&
               floor(value) == value) {
      left = predict_in_set(tree, node, static_cast<int32_t>(value));
    } else {
      left = tree.default_left[node] != 0;  // no code of the tree's sets
    }
    node = left ? tree.left_child[node] : tree.right_child[node];
  }
  return node;
}

//: Leaf reached by one row of binned features.
GPUBOOST_DEVICE_INLINE int32_t predict_leaf_binned(const TreeView& tree, const uint8_t* row,
                                                   int32_t missing_bin) {
  int32_t node = 0;
  for (int64_t step = 0; step < tree.n_nodes && tree.feature[node] >= 0; ++step) {
    const int32_t bin = row[tree.feature[node]];
    bool left;
    if (bin == missing_bin) {
      left = tree.default_left[node] != 0;
    } else if (tree.cat_words[node] == 0) {
      left = bin <= tree.threshold_bin[node];
    } else if (bin < tree.code_limit[node]) {
      left = predict_in_set(tree, node, bin);
    } else {
      left = tree.default_left[node] != 0;
    }
    node = left ? tree.left_child[node] : tree.right_child[node];
  }
  return node;
}

// predict_forest_margins: margins[row, tree_outputs[t]] += value of the row's leaf
// in tree t, for t = 0 .. n_trees - 1 in order. One thread per row.
//   features          (n_rows, n_features) float64, C order
//   tree_node_offsets (n_trees + 1,) int64; tree_outputs (n_trees,) int64
//   margins           (n_rows, n_outputs) float64, C order, updated in place
extern "C" __global__ void predict_forest_margins(
    const double* features, int64_t n_rows, int32_t n_features, const int32_t* node_ints,
    const double* node_floats, const uint32_t* cat_bits, int64_t stride,
    const int64_t* tree_node_offsets, const int64_t* tree_outputs, int32_t n_trees,
    int32_t n_outputs, double* margins) {
  const int64_t grid_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += grid_stride) {
    const double* row_values = features + row * n_features;
    double* row_margins = margins + row * n_outputs;
    for (int32_t t = 0; t < n_trees; ++t) {
      const int64_t first_node = tree_node_offsets[t];
      const TreeView tree = predict_tree_view(node_ints, node_floats, cat_bits, stride,
                                              first_node, tree_node_offsets[t + 1] - first_node);
      const int32_t leaf = predict_leaf_raw(tree, row_values);
      row_margins[tree_outputs[t]] += tree.value[leaf];
    }
  }
}

// predict_forest_leaf_indices: leaves[row, t] = leaf (node id within tree t) of the
// row in tree t. One thread per row.
//   leaves (n_rows, n_trees) int32, C order
extern "C" __global__ void predict_forest_leaf_indices(
    const double* features, int64_t n_rows, int32_t n_features, const int32_t* node_ints,
    const double* node_floats, const uint32_t* cat_bits, int64_t stride,
    const int64_t* tree_node_offsets, int32_t n_trees, int32_t* leaves) {
  const int64_t grid_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += grid_stride) {
    const double* row_values = features + row * n_features;
    for (int32_t t = 0; t < n_trees; ++t) {
      const int64_t first_node = tree_node_offsets[t];
      const TreeView tree = predict_tree_view(node_ints, node_floats, cat_bits, stride,
                                              first_node, tree_node_offsets[t + 1] - first_node);
      leaves[row * n_trees + t] = predict_leaf_raw(tree, row_values);
    }
  }
}

// predict_tree_values_raw: values[row] = leaf value of the row in one tree (the
// packed arrays hold that tree only: stride == n_nodes). One thread per row.
extern "C" __global__ void predict_tree_values_raw(
    const double* features, int64_t n_rows, int32_t n_features, const int32_t* node_ints,
    const double* node_floats, const uint32_t* cat_bits, int64_t n_nodes, double* values) {
  const TreeView tree = predict_tree_view(node_ints, node_floats, cat_bits, n_nodes, 0, n_nodes);
  const int64_t grid_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += grid_stride) {
    values[row] = tree.value[predict_leaf_raw(tree, features + row * n_features)];
  }
}

// predict_tree_values_binned: values[row] = leaf value of the row in one tree,
// traversing on the binned features. One thread per row.
//   binned (n_rows, n_features) uint8, row-major, row r at byte r * row_stride (padded
//   rows: gpuboost/backends/cuda/binned_rows.py)
extern "C" __global__ void predict_tree_values_binned(
    const uint8_t* binned, int64_t n_rows, int64_t row_stride, int32_t missing_bin,
    const int32_t* node_ints, const double* node_floats, const uint32_t* cat_bits,
    int64_t n_nodes, double* values) {
  const TreeView tree = predict_tree_view(node_ints, node_floats, cat_bits, n_nodes, 0, n_nodes);
  const int64_t grid_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < n_rows;
       row += grid_stride) {
    values[row] =
        tree.value[predict_leaf_binned(tree, binned + row * row_stride, missing_bin)];
  }
}
