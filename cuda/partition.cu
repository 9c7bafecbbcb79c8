// partition.cu -- stable row partition of several nodes' segments at once.
//
// Contract (docs/DESIGN.md, "Row partition"; reference gpuboost/backends/numpy/partition.py):
// node i owns positions [begin_i, end_i) of sample_indices; after the split the
// rows going left (bin <= threshold_bin, or bin == missing_bin when default_left)
// fill the first positions of the segment and the others the rest, both in their
// original order.
//
// Two launches per batch of nodes, with no host round trip in between:
//   1. partition_flag_tiles: every segment is cut into tiles of
//      kPartitionTileRows positions (a tile never straddles two segments,
//      segments.cuh); a block takes one tile, saves its rows to `saved_rows`,
//      stores one 32-bit go-left mask per 32 positions (a warp ballot) and the
//      left rows of its segment up to the end of the tile (a decoupled
//      look-back over the earlier tiles of the segment, below).
//   2. partition_scatter_tiles: a block takes one tile again and writes every
//      saved row to its final position in sample_indices: the stable rank of a
//      row is the left rows of the earlier tiles of its segment (launch 1), of
//      the earlier chunks of its tile (a one-warp scan of the masks' popcounts)
//      and of the lower lanes of its chunk (popcount of its mask). The tile is
//      reordered in shared memory first, so that its left rows and its right
//      rows are each written as one coalesced run.
// Kernel 1 reads sample_indices and kernel 2 only writes it, so the reorder is
// in place without a race; the scratch costs 4 bytes per position plus one bit.
//
// Decoupled look-back (kernel 1; the single-pass scan of Merrill and Garland,
// as CUB's): every tile publishes a 64-bit status word in `tile_status`, first
// its own left count (kPartitionStatusAggregate), then, once known, the left
// rows of its segment through its end (kPartitionStatusInclusive). A tile sums
// the words of the tiles before it in its segment, from the nearest back, until
// an inclusive one; the first tile of a segment is inclusive at once. The word
// packs the value (low 32 bits), the kind (bit 32) and the launch's `epoch`
// (bits 33..63): words of earlier launches read as not yet published, so the
// buffer is never cleared (the host makes each launch's epoch new and zeroes
// the buffer once). Statuses are only accessed through atomics. A block waits
// only for blocks of lower index, which a GPU starts first (the emulation runs
// blocks in order).
//
// Access pattern (both kernels): a tile is kPartitionChunksPerTile chunks of
// kPartitionWarpSize consecutive positions; chunk c = item * kPartitionWarpsPerBlock +
// warp is handled by warp `warp` at step `item`, lane l taking position
// tile_begin + 32 c + l. Consecutive lanes thus read consecutive sample_indices /
// saved_rows (one 128-byte line per warp instruction); kernel 3 writes
// sample_indices from shared memory in runs of consecutive positions. The bins
// are read from a column-major copy (one column per split): the rows of a
// segment are in increasing order, so a warp's 32 bins lie in few sectors while
// the segments are dense (at the root, 32 consecutive bytes); row-major they
// would be n_features bytes apart. Deep down, a sector per row either way.
//
// The per-segment table comes from the host as int64 arrays: begins, ends and
// first_tile (n_segments + 1 entries: segment s owns tiles
// [first_tile[s], first_tile[s + 1]); empty segments own none), and the split of
// each segment (feature, threshold_bin, default_left).
//
// Categorical splits (partition_flag_tiles only; docs/DESIGN.md, "Categorical
// features"): a segment whose threshold_bin is negative sends left the value bins of
// its left set, kPartitionSetWords 64-bit words at split_left_sets[kPartitionSetWords *
// s ..] (bin b: bit b % 64 of word b / 64, the host's uint32 bitset words read two at a
// time, little-endian on both), and the missing bin when default_left. A launch of
// numeric splits only passes any int64 array there; it is never read. Either way a
// block first turns its segment's split into the set of bins going left
// (partition_left_set), so one shared-memory lookup decides every row.
#include "common.cuh"
#include "segments.cuh"

//: 64-bit words of a categorical split's left set: one bit per bin of 256
//: (backends/cuda/partition.py: PARTITION_SET_WORDS; core/categorical.py: SPLIT_SET_WORDS
//: uint32 words).
constexpr int32_t kPartitionSetWords = 4;

//: Threads per block of both kernels (backends/cuda/partition.py: PARTITION_THREADS_PER_BLOCK).
constexpr int32_t kPartitionThreadsPerBlock = 128;
//: Positions each thread handles per tile (backends/cuda/partition.py: PARTITION_ITEMS_PER_THREAD).
constexpr int32_t kPartitionItemsPerThread = 8;
//: Positions per tile.
constexpr int32_t kPartitionTileRows = kPartitionThreadsPerBlock * kPartitionItemsPerThread;
//: Threads per warp.
constexpr int32_t kPartitionWarpSize = 32;
//: Warps per block.
constexpr int32_t kPartitionWarpsPerBlock = kPartitionThreadsPerBlock / kPartitionWarpSize;
//: Chunks of kPartitionWarpSize positions per tile (one go-left mask word each).
constexpr int32_t kPartitionChunksPerTile = kPartitionTileRows / kPartitionWarpSize;
static_assert(kPartitionThreadsPerBlock % kPartitionWarpSize == 0,
              "a chunk is one warp's positions");
static_assert(kPartitionChunksPerTile == kPartitionWarpSize,
              "one warp scans the chunks of a tile, a chunk per lane");
//: Status word kinds (bit 32) and the first bit of the epoch.
constexpr uint64_t kPartitionStatusAggregate = 0;
constexpr uint64_t kPartitionStatusInclusive = uint64_t{1} << 32;
constexpr int32_t kPartitionStatusEpochShift = 33;
//: The value bits of a status word.
constexpr uint64_t kPartitionStatusValueMask = (uint64_t{1} << 32) - 1;

//: Inclusive prefix sum of `value` over the lanes of the calling warp.
GPUBOOST_DEVICE_INLINE int32_t partition_warp_inclusive_scan(int32_t value) {
  const int32_t lane = static_cast<int32_t>(threadIdx.x) % kPartitionWarpSize;
  for (int32_t offset = 1; offset < kPartitionWarpSize; offset <<= 1) {
    const int32_t from_below = __shfl_up_sync(GPUBOOST_FULL_WARP_MASK, value, offset);
    if (lane >= offset) value += from_below;
  }
  return value;
}

//: What every thread of a block needs about its tile and its segment. Thread 0
//: reads it from the segment table into shared memory (partition_load_tile), so
//: that one thread, not every warp, searches first_tile and reads the table.
struct PartitionTile {
  int64_t begin;          // first position of the tile
  int64_t end;            // one past its last position
  int64_t segment_begin;  // first position of its segment
  int64_t segment_first;  // first tile of its segment
  int64_t segment_last;   // last tile of its segment
  int32_t segment;
};

//: The PartitionTile of `tile` (segment table: see the top of the file).
GPUBOOST_DEVICE_INLINE PartitionTile partition_load_tile(const int64_t* segment_begins,
                                                         const int64_t* segment_ends,
                                                         const int64_t* first_tile,
                                                         int32_t n_segments, int64_t tile) {
  PartitionTile info;
  info.segment = gpuboost_segment_of_tile(first_tile, n_segments, tile);
  info.segment_first = first_tile[info.segment];
  info.segment_last = first_tile[info.segment + 1] - 1;
  info.segment_begin = segment_begins[info.segment];
  info.begin = info.segment_begin + (tile - info.segment_first) * kPartitionTileRows;
  const int64_t full_end = info.begin + kPartitionTileRows;
  const int64_t segment_end = segment_ends[info.segment];
  info.end = full_end < segment_end ? full_end : segment_end;
  return info;
}

//: Publishes `value` of kind `kind` (kPartitionStatus*) as the status of a tile
//: in the launch `epoch_bits` (the epoch already shifted into place).
GPUBOOST_DEVICE_INLINE void partition_publish_status(uint64_t* status, uint64_t epoch_bits,
                                                     uint64_t kind, int64_t value) {
  atomicExch(reinterpret_cast<unsigned long long*>(status),
             static_cast<unsigned long long>(epoch_bits | kind | static_cast<uint64_t>(value)));
}

//: The left rows of the tiles [first, tile) of a segment, from their status
//: words (decoupled look-back: the nearest tiles first, until an inclusive word;
//: waits for words not yet published in this launch).
GPUBOOST_DEVICE_INLINE int64_t partition_look_back(uint64_t* tile_status, uint64_t epoch_bits,
                                                   int64_t first, int64_t tile) {
  int64_t lefts = 0;
  for (int64_t earlier = tile - 1; earlier >= first; --earlier) {
    uint64_t word;
    do {
      word = atomicAdd(reinterpret_cast<unsigned long long*>(tile_status + earlier), 0ull);
    } while ((word >> kPartitionStatusEpochShift) != (epoch_bits >> kPartitionStatusEpochShift));
    lefts += static_cast<int64_t>(word & kPartitionStatusValueMask);
    if ((word & kPartitionStatusInclusive) != 0) break;
  }
  return lefts;
}

//: The left rows of a segment's tiles before `tile` (decoupled look-back), once this
//: tile's own `tile_lefts` are published; then publishes the left rows through the tile
//: (inclusive). Called by one thread of the block. The first tile of a segment looks at
//: none.
GPUBOOST_DEVICE_INLINE int64_t partition_resolve_tile(uint64_t* tile_status, int64_t epoch,
                                                      int64_t segment_first, int64_t tile,
                                                      int32_t tile_lefts) {
  const uint64_t epoch_bits = static_cast<uint64_t>(epoch) << kPartitionStatusEpochShift;
  int64_t lefts_before = 0;
  if (tile != segment_first) {
    partition_publish_status(tile_status + tile, epoch_bits, kPartitionStatusAggregate,
                             tile_lefts);
    lefts_before = partition_look_back(tile_status, epoch_bits, segment_first, tile);
  }
  partition_publish_status(tile_status + tile, epoch_bits, kPartitionStatusInclusive,
                           lefts_before + tile_lefts);
  return lefts_before;
}

//: The slot in the tile's final order (its left rows, then its right rows, each in
//: position order) of the position at `offset` in the tile, lane `lane` of its chunk,
//: whose go-left mask is `mask` and whose earlier chunks hold `chunk_lefts_before` left
//: rows; `n_left`: the tile's left rows.
GPUBOOST_DEVICE_INLINE int32_t partition_staged_slot(uint32_t mask, int32_t chunk_lefts_before,
                                                     int32_t lane, int32_t offset,
                                                     int32_t n_left) {
  const int32_t lefts_before = chunk_lefts_before + __popc(mask & ((1u << lane) - 1u));
  return ((mask >> lane) & 1u) != 0 ? lefts_before : n_left + (offset - lefts_before);
}

// The bins one segment's split sends left, as kPartitionSetWords 64-bit words (bin b: bit
// b % 64 of word b / 64; missing_bin <= 255 is a bin like the others): a numeric split's
// bins 0 .. threshold_bin, a categorical one's left set (threshold_bin < 0: `set`, read
// only then), and the missing bin when default_left. One lookup then decides every row.
__device__ __forceinline__ void partition_left_set(int64_t threshold_bin, bool default_left,
                                                   const int64_t* set, int32_t missing_bin,
                                                   uint64_t* left_set) {
  for (int32_t word = 0; word < kPartitionSetWords; ++word) {
    uint64_t bits;
    if (threshold_bin < 0) {
      bits = static_cast<uint64_t>(set[word]);
    } else {
      const int64_t top = threshold_bin - 64 * static_cast<int64_t>(word);  // in this word
      bits = top >= 63 ? ~uint64_t{0} : (top < 0 ? uint64_t{0} : (uint64_t{2} << top) - 1u);
    }
    if (missing_bin / 64 == word) {
      const uint64_t missing = uint64_t{1} << (missing_bin % 64);
      bits = default_left ? (bits | missing) : (bits & ~missing);
    }
    left_set[word] = bits;
  }
}

// partition_flag_tiles (launch 1): grid = one block per tile, block =
// kPartitionThreadsPerBlock threads (chunk layout: top of the file). A block saves
// its tile's rows, stores the go-left mask of each chunk (bit l: position
// tile_begin + 32 c + l goes left; positions past the segment's end are 0) and
// the left rows of its segment through the tile. The masks pass through shared
// memory so that one warp writes the tile's kPartitionChunksPerTile words in one
// instruction; its last lane then does the look-back.
//   binned_columns     (n_features, n_rows) uint8, C order: the bins column by column
//   epoch              in [1, 2^31): new for every launch on this tile_status
//   tile_status        (>= n_tiles,) uint64: status words (zeroes or earlier epochs')
//   saved_rows         (n_positions,) int32: copy of sample_indices at the tiles' positions
//   left_masks         (n_tiles * kPartitionChunksPerTile,) uint32
//   tile_lefts_through (n_tiles,) int64: left rows of the tile's segment up to the
//                      tile's end
//   split_left_sets    (kPartitionSetWords * n_segments,) int64: the left sets of the
//                      segments whose threshold_bin is negative (the top of the file)
extern "C" __global__ void __launch_bounds__(kPartitionThreadsPerBlock)
partition_flag_tiles(
    const uint8_t* binned_columns, int64_t n_rows, const int32_t* sample_indices,
    const int64_t* segment_begins, const int64_t* segment_ends, const int64_t* first_tile,
    const int64_t* split_features, const int64_t* split_threshold_bins,
    const int64_t* split_default_left, const int64_t* split_left_sets, int32_t n_segments,
    int32_t missing_bin, int64_t epoch, uint64_t* tile_status, int32_t* saved_rows,
    uint32_t* left_masks, int64_t* tile_lefts_through) {
  const int64_t tile = blockIdx.x;
  __shared__ PartitionTile block_tile;
  __shared__ int64_t column_offset;
  __shared__ uint64_t left_set[kPartitionSetWords];  // the bins going left, missing included
  if (threadIdx.x == 0) {
    block_tile = partition_load_tile(segment_begins, segment_ends, first_tile, n_segments, tile);
    const int64_t segment = block_tile.segment;
    column_offset = split_features[segment] * n_rows;
    partition_left_set(split_threshold_bins[segment], split_default_left[segment] != 0,
                       split_left_sets + static_cast<int64_t>(kPartitionSetWords) * segment,
                       missing_bin, left_set);
  }
  __syncthreads();
  const int64_t tile_begin = block_tile.begin;
  const int64_t tile_end = block_tile.end;
  const uint8_t* column = binned_columns + column_offset;
  const int32_t lane = static_cast<int32_t>(threadIdx.x) % kPartitionWarpSize;
  const int32_t warp = static_cast<int32_t>(threadIdx.x) / kPartitionWarpSize;
  __shared__ uint32_t chunk_masks[kPartitionChunksPerTile];
  for (int32_t item = 0; item < kPartitionItemsPerThread; ++item) {
    const int32_t chunk = item * kPartitionWarpsPerBlock + warp;
    const int64_t position = tile_begin + static_cast<int64_t>(chunk) * kPartitionWarpSize + lane;
    bool left = false;
    if (position < tile_end) {
      const int32_t row = sample_indices[position];
      saved_rows[position] = row;
      const int32_t bin = column[row];
      left = ((left_set[bin >> 6] >> (bin & 63)) & 1u) != 0;
    }
    const uint32_t mask = __ballot_sync(GPUBOOST_FULL_WARP_MASK, left ? 1 : 0);
    if (lane == 0) chunk_masks[chunk] = mask;
  }
  __syncthreads();
  if (warp == 0) {
    const uint32_t mask = chunk_masks[lane];
    left_masks[tile * kPartitionChunksPerTile + lane] = mask;
    const int32_t tile_lefts = partition_warp_inclusive_scan(__popc(mask));
    if (lane == kPartitionWarpSize - 1) {
      const int64_t lefts_before = partition_resolve_tile(
          tile_status, epoch, block_tile.segment_first, tile, tile_lefts);
      tile_lefts_through[tile] = lefts_before + tile_lefts;
    }
  }
}

// partition_scatter_tiles (launch 2): grid = one block per tile, block =
// kPartitionThreadsPerBlock threads, the chunk layout of partition_flag_tiles.
// Warp 0 loads the tile's masks and scans their popcounts (the left rows of the
// earlier chunks). Every thread then puts the saved rows of its positions into
// `staged`, the tile in its final order (its left rows, then its right rows,
// each in position order); the block finally writes `staged` out with
// consecutive threads on consecutive entries: the tile's left rows are one run
// of consecutive positions of the segment and its right rows another, so every
// warp store is coalesced.
//   tile_lefts_through  (n_tiles,) int64: from partition_flag_tiles
//   sample_indices      written at the positions of every tile
extern "C" __global__ void __launch_bounds__(kPartitionThreadsPerBlock)
partition_scatter_tiles(
    const int32_t* saved_rows, const uint32_t* left_masks, const int64_t* tile_lefts_through,
    const int64_t* segment_begins, const int64_t* segment_ends,
    const int64_t* first_tile, int32_t n_segments, int32_t* sample_indices) {
  const int64_t tile = blockIdx.x;
  const int32_t lane = static_cast<int32_t>(threadIdx.x) % kPartitionWarpSize;
  const int32_t warp = static_cast<int32_t>(threadIdx.x) / kPartitionWarpSize;
  __shared__ PartitionTile block_tile;
  __shared__ int64_t segment_lefts[2];  // left rows of the segment through the tile, in all
  __shared__ uint32_t chunk_masks[kPartitionChunksPerTile];
  __shared__ int32_t chunk_lefts_before[kPartitionChunksPerTile];  // in the tile
  __shared__ int32_t tile_n_left;
  __shared__ int32_t staged[kPartitionTileRows];
  if (threadIdx.x == 0) {
    block_tile = partition_load_tile(segment_begins, segment_ends, first_tile, n_segments, tile);
    segment_lefts[0] = tile_lefts_through[tile];
    segment_lefts[1] = tile_lefts_through[block_tile.segment_last];
  }
  if (warp == 0) {
    const uint32_t mask = left_masks[tile * kPartitionChunksPerTile + lane];
    const int32_t lefts = __popc(mask);
    const int32_t lefts_through = partition_warp_inclusive_scan(lefts);
    chunk_masks[lane] = mask;
    chunk_lefts_before[lane] = lefts_through - lefts;
    if (lane == kPartitionWarpSize - 1) tile_n_left = lefts_through;
  }
  __syncthreads();

  // Stage: left rows at [0, tile_n_left) of `staged`, right rows after them.
  const int64_t tile_begin = block_tile.begin;
  const int32_t tile_rows = static_cast<int32_t>(block_tile.end - tile_begin);
  const int32_t n_left = tile_n_left;
  for (int32_t item = 0; item < kPartitionItemsPerThread; ++item) {
    const int32_t chunk = item * kPartitionWarpsPerBlock + warp;
    const int32_t offset = chunk * kPartitionWarpSize + lane;  // in the tile
    if (offset < tile_rows) {  // the chunk's mask: one word for the whole warp, a broadcast
      staged[partition_staged_slot(chunk_masks[chunk], chunk_lefts_before[chunk], lane, offset,
                                   n_left)] = saved_rows[tile_begin + offset];
    }
  }
  __syncthreads();

  // Left rows of the segment before this tile, and in the whole segment.
  const int64_t lefts_before_tile = segment_lefts[0] - n_left;
  const int64_t segment_n_left = segment_lefts[1];
  const int64_t segment_begin = block_tile.segment_begin;
  const int64_t rights_before_tile = (tile_begin - segment_begin) - lefts_before_tile;
  // staged[i] goes to left_base + i (i < n_left) or right_base + i (i >= n_left).
  const int64_t left_base = segment_begin + lefts_before_tile;
  const int64_t right_base = segment_begin + segment_n_left + rights_before_tile - n_left;
  for (int32_t i = static_cast<int32_t>(threadIdx.x); i < tile_rows;
       i += kPartitionThreadsPerBlock) {
    sample_indices[(i < n_left ? left_base : right_base) + i] = staged[i];
  }
}

// partition_move_tiles (one launch, double-buffered): the same stable split written into
// another array, in one pass, for segments whose left counts the host knows (a depthwise
// level: the split records' counts, which the rows realise). grid = one block per tile,
// block = kPartitionThreadsPerBlock threads (the chunk layout above). A block reads its
// tile's rows once and keeps them in registers, sets the go-left mask of each chunk (a
// ballot, into shared memory), finds the left rows of its segment before the tile (warp
// 0: the chunks' popcounts scanned, then its last lane publishes and looks back as
// partition_flag_tiles does), stages the tile in its final order in shared memory and
// writes it to `moved` in two coalesced runs, the right rows after the segment's
// segment_n_left left rows. sample_indices is only read and `moved` only written, so no
// copy is saved and no second launch waits for every tile's flags: 8 bytes of index a
// position (the two-launch split in place: 16, plus the masks). Segments whose split
// feature is negative are copied unchanged (every row "left"; no bin read, no look-back):
// the host lists every position of sample_indices in some segment, so `moved` is whole.
//   segment_n_left   (n_segments,) int64: left rows of each segment (the segment's length
//                    for a copied one)
//   moved            (n_positions,) int32: written at every position of every tile
extern "C" __global__ void __launch_bounds__(kPartitionThreadsPerBlock)
partition_move_tiles(
    const uint8_t* binned_columns, int64_t n_rows, const int32_t* sample_indices,
    const int64_t* segment_begins, const int64_t* segment_ends, const int64_t* first_tile,
    const int64_t* split_features, const int64_t* split_threshold_bins,
    const int64_t* split_default_left, const int64_t* segment_n_left, int32_t n_segments,
    int32_t missing_bin, int64_t epoch, uint64_t* tile_status, int32_t* moved) {
  const int64_t tile = blockIdx.x;
  const int32_t lane = static_cast<int32_t>(threadIdx.x) % kPartitionWarpSize;
  const int32_t warp = static_cast<int32_t>(threadIdx.x) / kPartitionWarpSize;
  __shared__ PartitionTile block_tile;
  __shared__ int64_t split[4];  // feature, threshold bin, default_left, segment's left rows
  __shared__ uint32_t chunk_masks[kPartitionChunksPerTile];
  __shared__ int32_t chunk_lefts_before[kPartitionChunksPerTile];  // in the tile
  __shared__ int32_t tile_n_left;
  __shared__ int64_t lefts_before_tile;
  __shared__ int32_t staged[kPartitionTileRows];
  if (threadIdx.x == 0) {
    block_tile = partition_load_tile(segment_begins, segment_ends, first_tile, n_segments, tile);
    split[0] = split_features[block_tile.segment];
    split[1] = split_threshold_bins[block_tile.segment];
    split[2] = split_default_left[block_tile.segment];
    split[3] = segment_n_left[block_tile.segment];
  }
  __syncthreads();
  const int64_t tile_begin = block_tile.begin;
  const int32_t tile_rows = static_cast<int32_t>(block_tile.end - tile_begin);
  const bool copied = split[0] < 0;
  const uint8_t* column = binned_columns + (copied ? 0 : split[0] * n_rows);
  const int32_t threshold_bin = static_cast<int32_t>(split[1]);
  const bool missing_goes_left = split[2] != 0;
  int32_t rows[kPartitionItemsPerThread];
  for (int32_t item = 0; item < kPartitionItemsPerThread; ++item) {
    const int32_t chunk = item * kPartitionWarpsPerBlock + warp;
    const int32_t offset = chunk * kPartitionWarpSize + lane;  // in the tile
    bool left = false;
    rows[item] = 0;
    if (offset < tile_rows) {
      rows[item] = sample_indices[tile_begin + offset];
      if (copied) {
        left = true;
      } else {
        const int32_t bin = column[rows[item]];
        left = bin <= threshold_bin || (bin == missing_bin && missing_goes_left);
      }
    }
    const uint32_t mask = __ballot_sync(GPUBOOST_FULL_WARP_MASK, left ? 1 : 0);
    if (lane == 0) chunk_masks[chunk] = mask;
  }
  __syncthreads();
  if (warp == 0) {
    const uint32_t mask = chunk_masks[lane];
    const int32_t lefts = __popc(mask);
    const int32_t lefts_through = partition_warp_inclusive_scan(lefts);
    chunk_lefts_before[lane] = lefts_through - lefts;
    if (lane == kPartitionWarpSize - 1) {
      tile_n_left = lefts_through;
      const int64_t segment_first = block_tile.segment_first;
      lefts_before_tile =
          copied ? tile_begin - block_tile.segment_begin  // every row of the segment left
                 : partition_resolve_tile(tile_status, epoch, segment_first, tile, lefts_through);
    }
  }
  __syncthreads();

  // Stage: the tile's left rows at [0, n_left) of `staged`, its right rows after them.
  const int32_t n_left = tile_n_left;
  for (int32_t item = 0; item < kPartitionItemsPerThread; ++item) {
    const int32_t chunk = item * kPartitionWarpsPerBlock + warp;
    const int32_t offset = chunk * kPartitionWarpSize + lane;
    if (offset < tile_rows) {
      staged[partition_staged_slot(chunk_masks[chunk], chunk_lefts_before[chunk], lane, offset,
                                   n_left)] = rows[item];
    }
  }
  __syncthreads();

  // staged[i] goes to left_base + i (i < n_left) or right_base + i (i >= n_left).
  const int64_t segment_begin = block_tile.segment_begin;
  const int64_t rights_before_tile = (tile_begin - segment_begin) - lefts_before_tile;
  const int64_t left_base = segment_begin + lefts_before_tile;
  const int64_t right_base = segment_begin + split[3] + rights_before_tile - n_left;
  for (int32_t i = static_cast<int32_t>(threadIdx.x); i < tile_rows;
       i += kPartitionThreadsPerBlock) {
    moved[(i < n_left ? left_base : right_base) + i] = staged[i];
  }
}
