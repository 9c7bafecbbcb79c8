// instrument.h -- the instrumented flavour of the emulation: a sanitizer (memcheck,
// racecheck, initcheck) and a memory-traffic model of every kernel launch
// (docs/EMULATION.md, "Sanitizer" and "Traffic model").
//
// Included by cuda_emu.h when the module is built with -DGPUBOOST_EMU_INSTRUMENTED
// (gpuboost/backends/emulation/compiler.py: INSTRUMENTATION_FLAGS), together with
//     -fsanitize=kernel-address -fsanitize-recover=kernel-address
//     --param asan-instrumentation-with-call-threshold=0 --param asan-stack=0
//     --param asan-globals=0
// With these flags g++ calls __asan_{load,store}{1,2,4,8,16}_noabort(address) and
// __asan_{load,store}N_noabort(address, size) before every memory access of the
// translation unit that it cannot prove to be a direct access to a named variable; this
// file defines them. Everything runs on the CPU: no shadow memory of AddressSanitizer,
// only these calls.
//
// What the hooks see and what they ignore. A launch copies every pointer argument into
// an *arena* mapped for the launch (launch_kernel_instrumented below): each allocation
// starts at the same address modulo kArenaAlignment as on a GPU and is surrounded by
// kRedzoneBytes of unmapped-for-the-kernel gap; the kernel receives arena pointers, and
// the dynamic shared memory lives in the arena too. Static __shared__ variables are put
// in their own ELF section (gpuboost_shared) by the instrumented `__shared__` macro. A
// hook therefore classifies an address with two range comparisons: inside the arena
// (device memory of the launch), inside the shared section (static shared memory), or
// neither -- the GPU thread's stack, the emulation's own data -- which is ignored. An
// address inside the arena or the shared section that belongs to no allocation the
// kernel may use is an out-of-bounds access.
//
// Checks (bits of InstrumentConfig::checks, launcher.py mirrors them):
// * memcheck: every global access falls inside one argument's allocation, no write goes
//   through memory passed only as `const T*`, every shared access falls inside the
//   block's dynamic shared memory or a static __shared__ variable of the kernel;
// * initcheck: no read of a byte never written (global memory: bytes of arrays made by
//   xp.empty that nothing wrote, known to Python; shared memory: never written in this
//   block);
// * racecheck: two GPU threads of a block accessing one byte between the same pair of
//   __syncthreads, at least one writing, not both through atomics, is a hazard (if they
//   are lanes of one warp, a __syncwarp between them also orders them); for global
//   memory, so is any such pair of threads of different blocks of the launch (blocks are
//   never ordered), unless the blocks are of one cluster and a cluster barrier lies
//   between the accesses; for shared memory, so is such a pair of threads of different
//   blocks of one cluster (distributed shared memory) with no cluster barrier between;
// * traffic: every access of a GPU thread to device or shared memory is logged per warp;
//   at every point where all lanes of the warp have met (a warp intrinsic, __syncthreads,
//   the end of the block) the log is cut into *warp instructions*: the k-th execution of
//   an instruction address by each lane since the last such point is one instruction of
//   the warp. Per instruction the model counts the distinct 32-byte sectors of global
//   memory (coalescing) and the shared-memory wavefronts (the most distinct 4-byte words
//   any of the 32 banks must serve; for atomics every lane's access, since atomics on one
//   word serialize).
// A failed check stops the launch like a failing assert; the message starts with the
// check's name and refers to instructions as @pc:0x<offset in the library>, which
// launcher.py replaces by file:line (addr2line on the -g1 debug lines).
#ifndef GPUBOOST_INSTRUMENT_H
#define GPUBOOST_INSTRUMENT_H

#ifndef GPUBOOST_EMU_INSTRUMENTED
#error "instrument.h belongs to the instrumented flavour of cuda_emu.h"
#endif

extern "C" char __start_gpuboost_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_gpuboost_shared[] __attribute__((weak, visibility("hidden")));

namespace gpuboost_emu {

// ---------------------------------------------------------------------------
// Interface with launcher.py (ctypes structures of the same layout).
// ---------------------------------------------------------------------------
//: Checks and measurements of an instrumented launch (InstrumentConfig::checks).
constexpr uint32_t kCheckMemcheck = 1u << 0;
constexpr uint32_t kCheckRacecheck = 1u << 1;
constexpr uint32_t kCheckInitcheck = 1u << 2;
constexpr uint32_t kMeasureTraffic = 1u << 3;
//: InstrumentAllocation::flags: some argument points to it through a non-const pointer.
constexpr uint32_t kAllocationWritable = 1u << 0;

//: A range of host memory handed to the kernel through one or more pointer arguments.
struct InstrumentAllocation {
  uint64_t host_address;
  uint64_t bytes;
  uint64_t alignment_offset;  // its address modulo kArenaAlignment on the device
  uint8_t* initialized;       // per byte 1 = written; updated in place; null: all written
  const char* label;          // e.g. "argument 2 'out'", for messages
  uint32_t flags;
  uint32_t reserved;
};

struct InstrumentConfig {
  uint32_t checks;
  uint32_t allocation_count;
  const InstrumentAllocation* allocations;
  uint32_t argument_count;
  uint32_t static_shared_count;       // registered static __shared__ variables
  const int32_t* argument_allocation;  // per argument: its allocation, -1 for a scalar
  const uint64_t* argument_offset;     // per argument: byte offset in its allocation
  const uint8_t* static_shared_allowed;  // per registered variable: the kernel may use it
  const char* const* static_shared_labels;
};

//: Traffic counters of a launch, in this order (gpuboost_emu_traffic_counter_names).
#define GPUBOOST_EMU_TRAFFIC_COUNTERS(X)                                                 \
  X(global_requests)          /* warp instructions accessing global memory */            \
  X(global_load_sectors)      /* distinct 32-byte sectors read, summed per instruction */ \
  X(global_store_sectors)                                                                \
  X(global_atomic_sectors)                                                               \
  X(global_bytes_requested)   /* bytes the lanes asked for */                            \
  X(global_atomics)           /* lane-level atomic operations */                         \
  X(shared_requests)          /* warp instructions accessing shared memory */            \
  X(shared_wavefronts)        /* bank-conflict ways, summed per instruction */           \
  X(shared_ideal_wavefronts)  /* the same without bank conflicts */                      \
  X(shared_atomics)                                                                      \
  X(shared_bytes_requested)

enum TrafficCounter {
#define GPUBOOST_EMU_COUNTER_ENUM(name) kTraffic_##name,
  GPUBOOST_EMU_TRAFFIC_COUNTERS(GPUBOOST_EMU_COUNTER_ENUM)
#undef GPUBOOST_EMU_COUNTER_ENUM
      kTrafficCounterCount
};

// ---------------------------------------------------------------------------
// Constants of the model.
// ---------------------------------------------------------------------------
//: Alignment of device allocations (cudaMalloc guarantees 256 bytes).
constexpr size_t kArenaAlignment = 256;
//: Gap before, between and after the allocations of the arena.
constexpr size_t kRedzoneBytes = 1024;
//: Distance around the static shared section in which an access counts as a shared one.
constexpr uintptr_t kSharedSectionSlack = 256;
//: Bytes of a global-memory sector (the unit of DRAM / L2 transactions).
constexpr uintptr_t kSectorBytes = 32;
//: Shared memory: banks, bytes per bank word, bytes one wavefront serves.
constexpr uintptr_t kSharedBanks = 32;
constexpr uintptr_t kSharedBankBytes = 4;
constexpr uintptr_t kWavefrontBytes = kSharedBanks * kSharedBankBytes;
//: Largest race shadow of a launch (48 bytes per tracked byte): beyond it racecheck
//: refuses to run instead of exhausting memory.
constexpr size_t kMaxRaceShadowBytes = size_t{4} << 30;

// Access kinds seen by the hooks.
enum AccessKind : uint8_t { kRead = 1, kWrite = 2, kAtomic = 3 };
enum Space : uint8_t { kGlobal = 0, kShared = 1 };

// ---------------------------------------------------------------------------
// Shadow state.
// ---------------------------------------------------------------------------
//: One access as racecheck remembers it.
struct RaceAccess {
  uint32_t epoch;      // 0: none; see Instrumentation::epoch
  uint32_t pc;         // instruction, as an offset in the library
  uint32_t warp_sync;  // __syncwarp count of the thread's warp at the access
  uint16_t thread;     // linear thread index in its block
  uint16_t atomic;
};

//: Per tracked byte: the last write and the last two readers from different threads.
struct RaceCell {
  RaceAccess write;
  RaceAccess reader;
  RaceAccess other_reader;
};

//: The block and cluster phase of a racecheck epoch (a barrier interval of one block).
struct EpochInfo {
  uint64_t block;          // linear index
  uint32_t cluster_phase;  // cluster barriers completed in the launch before it
};

//: A range of memory a kernel may access.
struct Region {
  uintptr_t begin;
  uintptr_t end;
  Space space;
  bool writable;
  bool allowed;        // static shared: a variable of this kernel
  const char* label;
  uint8_t* initialized;  // 1 byte per byte, null: not checked
  RaceCell* race;        // null: not tracked
  const InstrumentAllocation* allocation;  // global memory: what Python handed in
};

//: One logged access of a warp (traffic model).
struct LoggedAccess {
  uintptr_t pc;
  uintptr_t address;
  uint32_t size;
  uint8_t lane;
  uint8_t space;
  uint8_t kind;
  uint8_t unused;
};

struct WarpLog {
  LoggedAccess* entries = nullptr;
  size_t count = 0;
  size_t capacity = 0;
};

//: Open-addressing map from a 64-bit key to a 32-bit value, cleared in O(1).
struct StampedMap {
  uint64_t* keys = nullptr;
  uint32_t* values = nullptr;
  uint32_t* stamps = nullptr;
  size_t capacity = 0;  // a power of two
  size_t used = 0;
  uint32_t stamp = 1;
};

//: Scratch of the traffic analysis, one per worker thread.
struct TrafficScratch {
  StampedMap instructions;  // (address, space, kind) -> instruction number
  StampedMap occurrences;   // instruction -> executions by the current lane so far
  StampedMap groups;        // (instruction, execution) -> warp instruction
  uint32_t* group_of = nullptr;  // per log entry
  uint32_t* group_start = nullptr;
  uint32_t* order = nullptr;
  size_t entry_capacity = 0;
  size_t order_capacity = 0;
  size_t group_capacity = 0;
  uint64_t counters[kTrafficCounterCount];
};

struct Instrumentation {
  uint32_t checks = 0;
  const InstrumentConfig* config = nullptr;
  uintptr_t library_base = 0;

  // Device memory of the launch.
  unsigned char* arena = nullptr;
  size_t arena_bytes = 0;
  Region* regions = nullptr;  // allocations, then the dynamic shared memory per cluster
  size_t region_count = 0;    // rank, by address
  Region* dynamic_shared = nullptr;  // the running block's
  Region* first_dynamic_shared = nullptr;  // cluster rank 0's
  size_t dynamic_shared_bytes = 0;
  unsigned cluster_blocks = 1;
  // Per cluster rank: returned from the kernel; 1 + the cluster phase of the last access
  // of another block of the cluster to its shared memory (0: none).
  bool rank_returned[kMaxClusterBlocks] = {};
  uint32_t rank_remote_phase[kMaxClusterBlocks] = {};

  // Static shared memory: the gpuboost_shared section, widened by kSharedSectionSlack.
  uintptr_t static_begin = 0;
  uintptr_t static_bytes = 0;
  Region* static_regions = nullptr;  // by address
  size_t static_region_count = 0;

  // racecheck: epochs number the barrier intervals of the launch (block after block,
  // and for a cluster each block's run between cluster barriers), 1, 2, ...
  uint32_t epoch = 0;
  EpochInfo* epochs = nullptr;  // per epoch, from 1
  size_t epoch_capacity = 0;
  uint64_t current_block = 0;
  uint32_t cluster_phase = 0;
  uint32_t* rank_warp_syncs = nullptr;  // per cluster rank and warp: completed __syncwarp
  uint32_t* warp_syncs = nullptr;       // the running block's
  unsigned warps_per_block = 0;

  // traffic
  WarpLog* warp_logs = nullptr;
  TrafficScratch* scratch = nullptr;
  unsigned scratch_count = 0;
};

//: The instrumentation of the launch in progress (one at a time per module).
inline Instrumentation* g_instrument = nullptr;
inline pthread_mutex_t g_instrument_mutex = PTHREAD_MUTEX_INITIALIZER;

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------
GPUBOOST_EMU_RUNTIME inline uintptr_t library_base() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&library_base), &info) == 0) return 0;
  return reinterpret_cast<uintptr_t>(info.dli_fbase);
}

GPUBOOST_EMU_RUNTIME inline uint32_t pc_offset(const Instrumentation& state, uintptr_t pc) {
  // The return address follows the call; one byte back is inside the access's line.
  return static_cast<uint32_t>(pc - 1 - state.library_base);
}

GPUBOOST_EMU_RUNTIME inline const Region* find_region(const Region* regions, size_t count,
                                                       uintptr_t address) {
  size_t low = 0;
  size_t high = count;
  while (low < high) {  // first region with end > address
    const size_t middle = low + (high - low) / 2;
    if (regions[middle].end <= address) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (low < count && regions[low].begin <= address) return &regions[low];
  return nullptr;
}

GPUBOOST_EMU_RUNTIME inline const char* access_name(uint8_t kind) {
  return kind == kRead ? "read" : (kind == kWrite ? "write" : "atomic");
}

// Coordinates of linear thread `rank` of a block, as "(x, y, z)".
GPUBOOST_EMU_RUNTIME inline void format_thread(char* out, size_t capacity, unsigned rank) {
  const unsigned x = rank % blockDim.x;
  const unsigned y = (rank / blockDim.x) % blockDim.y;
  const unsigned z = rank / (blockDim.x * blockDim.y);
  snprintf(out, capacity, "(%u, %u, %u)", x, y, z);
}

GPUBOOST_EMU_RUNTIME inline void format_block(char* out, size_t capacity, uint64_t linear) {
  const unsigned x = static_cast<unsigned>(linear % gridDim.x);
  const unsigned y = static_cast<unsigned>((linear / gridDim.x) % gridDim.y);
  const unsigned z = static_cast<unsigned>(linear / (static_cast<uint64_t>(gridDim.x) * gridDim.y));
  snprintf(out, capacity, "(%u, %u, %u)", x, y, z);
}

// "offset 12 of argument 1 'out' (400 bytes)" or "12 bytes past the end of ...".
GPUBOOST_EMU_RUNTIME inline void describe_address(char* out, size_t capacity,
                                                  const Region* regions, size_t count,
                                                  uintptr_t address) {
  const Region* below = nullptr;
  const Region* above = nullptr;
  for (size_t index = 0; index < count; ++index) {
    const Region& region = regions[index];
    if (region.begin <= address && address < region.end) {
      snprintf(out, capacity, "offset %llu of %s (%llu bytes)",
               static_cast<unsigned long long>(address - region.begin), region.label,
               static_cast<unsigned long long>(region.end - region.begin));
      return;
    }
    if (region.end <= address && (below == nullptr || region.end > below->end)) below = &region;
    if (region.begin > address && (above == nullptr || region.begin < above->begin)) {
      above = &region;
    }
  }
  if (below != nullptr && (above == nullptr || address - below->end <= above->begin - address)) {
    snprintf(out, capacity, "%llu bytes past the end of %s (%llu bytes)",
             static_cast<unsigned long long>(address - below->end), below->label,
             static_cast<unsigned long long>(below->end - below->begin));
  } else if (above != nullptr) {
    snprintf(out, capacity, "%llu bytes before the start of %s (%llu bytes)",
             static_cast<unsigned long long>(above->begin - address), above->label,
             static_cast<unsigned long long>(above->end - above->begin));
  } else {
    snprintf(out, capacity, "an address that belongs to no allocation");
  }
}

// ---------------------------------------------------------------------------
// memcheck / initcheck.
// ---------------------------------------------------------------------------
[[noreturn]] GPUBOOST_EMU_RUNTIME inline void report_out_of_bounds(Instrumentation& state,
                                                                   Space space, uintptr_t address,
                                                                   uint32_t size, uint8_t kind,
                                                                   uintptr_t pc) {
  char where[kErrorMessageCapacity / 2];
  if (space == kGlobal) {
    describe_address(where, sizeof(where), state.regions, state.region_count, address);
    fail_thread("memcheck: out-of-bounds global %s of %u bytes at %s, @pc:0x%x",
                access_name(kind), size, where, pc_offset(state, pc));
  }
  if (address - reinterpret_cast<uintptr_t>(state.arena) < state.arena_bytes) {
    describe_address(where, sizeof(where), state.first_dynamic_shared, state.cluster_blocks,
                     address);
  } else {  // static shared memory: only the variables of this kernel count
    constexpr size_t kMaxListed = 64;
    Region allowed[kMaxListed];
    size_t count = 0;
    for (size_t index = 0; index < state.static_region_count && count < kMaxListed; ++index) {
      if (state.static_regions[index].allowed) allowed[count++] = state.static_regions[index];
    }
    describe_address(where, sizeof(where), allowed, count, address);
  }
  fail_thread("memcheck: out-of-bounds shared-memory %s of %u bytes at %s, @pc:0x%x",
              access_name(kind), size, where, pc_offset(state, pc));
}

GPUBOOST_EMU_RUNTIME inline void check_initialized(Instrumentation& state, const Region& region,
                                                   uintptr_t address, uint32_t size,
                                                   uintptr_t pc) {
  const uint8_t* initialized = region.initialized + (address - region.begin);
  for (uint32_t byte = 0; byte < size; ++byte) {
    if (initialized[byte] == 0) {
      char where[kErrorMessageCapacity / 2];
      describe_address(where, sizeof(where), &region, 1, address + byte);
      fail_thread("initcheck: %s read of %u bytes at %s, which was never written%s, @pc:0x%x",
                  region.space == kGlobal ? "global" : "shared-memory", size, where,
                  region.space == kGlobal ? " (an array made by xp.empty?)" : " in this block",
                  pc_offset(state, pc));
    }
  }
}

// ---------------------------------------------------------------------------
// racecheck.
// ---------------------------------------------------------------------------
//: Whether `earlier` and the current access `now` (same byte) may run in either order
//: on a GPU.
GPUBOOST_EMU_RUNTIME inline bool same_cluster(const Instrumentation& state, uint64_t block,
                                              uint64_t other) {
  return block / state.cluster_blocks == other / state.cluster_blocks;
}

GPUBOOST_EMU_RUNTIME inline bool unordered(const Instrumentation& state, Space space,
                                           const RaceAccess& earlier, const RaceAccess& now) {
  if (earlier.epoch == 0) return false;
  const EpochInfo& before = state.epochs[earlier.epoch];
  const EpochInfo& current = state.epochs[now.epoch];
  if (before.block != current.block) {
    const bool cluster_ordered = same_cluster(state, before.block, current.block) &&
                                 before.cluster_phase != current.cluster_phase;
    // Global memory: blocks are never ordered, but by a cluster barrier. Shared memory:
    // another block's is reached only inside a cluster (a later block of the emulation
    // reusing the buffer has memory of its own on a GPU).
    if (space == kGlobal) return !cluster_ordered;
    return same_cluster(state, before.block, current.block) && !cluster_ordered;
  }
  if (earlier.epoch != now.epoch || earlier.thread == now.thread) return false;
  const bool same_warp = earlier.thread / kWarpSize == now.thread / kWarpSize;
  return !(same_warp && earlier.warp_sync != now.warp_sync);
}

//: Start epoch `state.epoch + 1`, of the running block.
GPUBOOST_EMU_RUNTIME inline bool new_epoch(Instrumentation& state) {
  const size_t next = static_cast<size_t>(state.epoch) + 1;
  if (next >= state.epoch_capacity) {
    const size_t capacity = state.epoch_capacity == 0 ? 1024 : 2 * state.epoch_capacity;
    EpochInfo* grown =
        static_cast<EpochInfo*>(realloc(state.epochs, capacity * sizeof(EpochInfo)));
    if (grown == nullptr) return false;
    state.epochs = grown;
    state.epoch_capacity = capacity;
  }
  state.epochs[next] = EpochInfo{state.current_block, state.cluster_phase};
  state.epoch = static_cast<uint32_t>(next);
  return true;
}

[[noreturn]] GPUBOOST_EMU_RUNTIME inline void report_race(
    const Instrumentation& state, const Region& region, uintptr_t address, const char* hazard,
    const RaceAccess& earlier, const char* earlier_kind, const RaceAccess& now,
    const char* now_kind) {
  char where[kErrorMessageCapacity / 3];
  describe_address(where, sizeof(where), &region, 1, address);
  char earlier_thread[48];
  char now_thread[48];
  format_thread(earlier_thread, sizeof(earlier_thread), earlier.thread);
  format_thread(now_thread, sizeof(now_thread), now.thread);
  const char* space = region.space == kGlobal ? "global" : "shared-memory";
  const uint64_t earlier_block_index = state.epochs[earlier.epoch].block;
  if (earlier_block_index != state.epochs[now.epoch].block) {
    char earlier_block[48];
    format_block(earlier_block, sizeof(earlier_block), earlier_block_index);
    const bool clustered = same_cluster(state, earlier_block_index, state.epochs[now.epoch].block);
    fail_thread("racecheck: %s hazard on %s byte at %s between different blocks (%s): thread "
                "%s of block %s %s at @pc:0x%x, this thread %s at @pc:0x%x",
                hazard, space, where,
                clustered ? "of one cluster, with no gpuboost_cluster_sync() between them"
                          : "never ordered",
                earlier_thread, earlier_block, earlier_kind, earlier.pc, now_kind, now.pc);
  }
  const bool same_warp = earlier.thread / kWarpSize == now.thread / kWarpSize;
  fail_thread("racecheck: %s %s hazard on %s byte at %s: thread %s %s at @pc:0x%x, thread %s "
              "%s at @pc:0x%x, with no %s between them",
              same_warp ? "warp-level" : "block-level", hazard, space, where, earlier_thread,
              earlier_kind, earlier.pc, now_thread, now_kind, now.pc,
              same_warp ? "__syncwarp or __syncthreads" : "__syncthreads");
}

GPUBOOST_EMU_RUNTIME inline void check_race(Instrumentation& state, const Region& region,
                                            uintptr_t address, uint32_t size, uint8_t kind,
                                            uintptr_t pc) {
  const Fiber& fiber = *tls_fiber;
  RaceAccess now{state.epoch, pc_offset(state, pc), state.warp_syncs[fiber.warp],
                 static_cast<uint16_t>(fiber.rank), static_cast<uint16_t>(kind == kAtomic)};
  RaceCell* cells = region.race + (address - region.begin);
  for (uint32_t byte = 0; byte < size; ++byte) {
    RaceCell& cell = cells[byte];
    const bool writes = kind != kRead;
    const bool write_hazard =
        unordered(state, region.space, cell.write, now) && !(cell.write.atomic && now.atomic);
    if (write_hazard) {
      report_race(state, region, address + byte, writes ? "write-after-write" : "read-after-write",
                  cell.write, cell.write.atomic ? "did an atomic" : "wrote",
                  now, now.atomic ? "does an atomic" : (writes ? "writes" : "reads"));
    }
    if (writes) {
      const RaceAccess* readers[] = {&cell.reader, &cell.other_reader};
      for (const RaceAccess* reader : readers) {
        if (unordered(state, region.space, *reader, now)) {
          report_race(state, region, address + byte, "write-after-read", *reader, "read", now,
                      now.atomic ? "does an atomic" : "writes");
        }
      }
      cell.write = now;
    } else if (cell.reader.epoch != 0 && cell.reader.thread == now.thread &&
               state.epochs[cell.reader.epoch].block == state.current_block) {
      cell.reader = now;  // the same thread again: keep the other reader
    } else {
      cell.other_reader = cell.reader;
      cell.reader = now;
    }
  }
}

// ---------------------------------------------------------------------------
// Traffic: logging per warp, analysis when the lanes meet.
// ---------------------------------------------------------------------------
GPUBOOST_EMU_RUNTIME inline bool grow_array(void** pointer, size_t* capacity, size_t needed,
                                            size_t element_bytes) {
  if (needed <= *capacity) return true;
  size_t grown = *capacity == 0 ? 1024 : *capacity;
  while (grown < needed) grown *= 2;
  void* resized = realloc(*pointer, grown * element_bytes);
  if (resized == nullptr) return false;
  *pointer = resized;
  *capacity = grown;
  return true;
}

GPUBOOST_EMU_RUNTIME inline void log_access(Instrumentation& state, Space space,
                                            uintptr_t address, uint32_t size, uint8_t kind,
                                            uintptr_t pc) {
  const Fiber& fiber = *tls_fiber;
  WarpLog& log = state.warp_logs[fiber.warp];
  if (log.count == log.capacity &&
      !grow_array(reinterpret_cast<void**>(&log.entries), &log.capacity, log.count + 1,
                  sizeof(LoggedAccess))) {
    fail_thread("traffic model: out of memory for the access log");
  }
  log.entries[log.count++] = LoggedAccess{pc,
                                          address,
                                          size,
                                          static_cast<uint8_t>(fiber.lane),
                                          static_cast<uint8_t>(space),
                                          kind,
                                          0};
}

GPUBOOST_EMU_RUNTIME inline bool map_reserve(StampedMap& map, size_t entries) {
  if (entries * 2 <= map.capacity) return true;
  size_t capacity = map.capacity == 0 ? 1024 : map.capacity;
  while (capacity < entries * 2) capacity *= 2;
  free(map.keys);
  free(map.values);
  free(map.stamps);
  map.keys = static_cast<uint64_t*>(malloc(capacity * sizeof(uint64_t)));
  map.values = static_cast<uint32_t*>(malloc(capacity * sizeof(uint32_t)));
  map.stamps = static_cast<uint32_t*>(calloc(capacity, sizeof(uint32_t)));
  map.capacity = capacity;
  map.used = 0;
  map.stamp = 1;
  return map.keys != nullptr && map.values != nullptr && map.stamps != nullptr;
}

GPUBOOST_EMU_RUNTIME inline void map_clear(StampedMap& map) {
  map.used = 0;
  if (++map.stamp == 0) {  // wrapped: clear for real
    memset(map.stamps, 0, map.capacity * sizeof(uint32_t));
    map.stamp = 1;
  }
}

// The value of `key`, inserting `fresh` when absent (the map never fills: capacity is
// at least twice the entries it may receive).
GPUBOOST_EMU_RUNTIME inline uint32_t* map_slot(StampedMap& map, uint64_t key, uint32_t fresh) {
  uint64_t hash = key * 0x9e3779b97f4a7c15ull;
  size_t slot = static_cast<size_t>(hash >> 17) & (map.capacity - 1);
  while (map.stamps[slot] == map.stamp) {
    if (map.keys[slot] == key) return &map.values[slot];
    slot = (slot + 1) & (map.capacity - 1);
  }
  map.stamps[slot] = map.stamp;
  map.keys[slot] = key;
  map.values[slot] = fresh;
  ++map.used;
  return &map.values[slot];
}

// Distinct values of units[0..count) (small; sorted in place by insertion).
GPUBOOST_EMU_RUNTIME inline size_t sort_unique(uintptr_t* units, size_t count) {
  for (size_t i = 1; i < count; ++i) {
    const uintptr_t value = units[i];
    size_t j = i;
    while (j > 0 && units[j - 1] > value) {
      units[j] = units[j - 1];
      --j;
    }
    units[j] = value;
  }
  size_t distinct = 0;
  for (size_t i = 0; i < count; ++i) {
    if (distinct == 0 || units[distinct - 1] != units[i]) units[distinct++] = units[i];
  }
  return distinct;
}

//: Most units (sectors or bank words) one warp instruction's accesses can touch.
constexpr size_t kMaxUnitsPerInstruction = 4096;

// Count one warp instruction: `members` are indices of its log entries (one per lane).
GPUBOOST_EMU_RUNTIME inline void count_instruction(const LoggedAccess* entries,
                                                   const uint32_t* members, size_t count,
                                                   uint64_t* counters) {
  uintptr_t units[kMaxUnitsPerInstruction];
  size_t unit_count = 0;
  const LoggedAccess& first = entries[members[0]];
  uint64_t bytes = 0;
  if (first.space == kGlobal) {
    for (size_t index = 0; index < count; ++index) {
      const LoggedAccess& access = entries[members[index]];
      bytes += access.size;
      for (uintptr_t sector = access.address / kSectorBytes;
           sector <= (access.address + access.size - 1) / kSectorBytes &&
           unit_count < kMaxUnitsPerInstruction;
           ++sector) {
        units[unit_count++] = sector;
      }
    }
    const size_t sectors = sort_unique(units, unit_count);
    counters[kTraffic_global_requests] += 1;
    counters[kTraffic_global_bytes_requested] += bytes;
    if (first.kind == kAtomic) {
      counters[kTraffic_global_atomic_sectors] += sectors;
      counters[kTraffic_global_atomics] += count;
    } else if (first.kind == kWrite) {
      counters[kTraffic_global_store_sectors] += sectors;
    } else {
      counters[kTraffic_global_load_sectors] += sectors;
    }
    return;
  }
  // Shared memory: a word is (address / 4); its bank is word % 32.
  for (size_t index = 0; index < count; ++index) {
    const LoggedAccess& access = entries[members[index]];
    bytes += access.size;
    for (uintptr_t word = access.address / kSharedBankBytes;
         word <= (access.address + access.size - 1) / kSharedBankBytes &&
         unit_count < kMaxUnitsPerInstruction;
         ++word) {
      units[unit_count++] = word;
    }
  }
  size_t per_bank[kSharedBanks] = {0};
  size_t distinct_words;
  if (first.kind == kAtomic) {  // atomics on one word serialize: every access counts
    distinct_words = unit_count;
    for (size_t index = 0; index < unit_count; ++index) ++per_bank[units[index] % kSharedBanks];
  } else {  // one word read by several lanes is broadcast
    distinct_words = sort_unique(units, unit_count);
    for (size_t index = 0; index < distinct_words; ++index) {
      ++per_bank[units[index] % kSharedBanks];
    }
  }
  size_t wavefronts = 0;
  for (size_t bank = 0; bank < kSharedBanks; ++bank) {
    if (per_bank[bank] > wavefronts) wavefronts = per_bank[bank];
  }
  const size_t ideal = (distinct_words * kSharedBankBytes + kWavefrontBytes - 1) / kWavefrontBytes;
  counters[kTraffic_shared_requests] += 1;
  counters[kTraffic_shared_wavefronts] += wavefronts;
  counters[kTraffic_shared_ideal_wavefronts] += ideal > wavefronts ? wavefronts : ideal;
  counters[kTraffic_shared_bytes_requested] += bytes;
  if (first.kind == kAtomic) counters[kTraffic_shared_atomics] += count;
}

// Cut the warp's log into warp instructions and count them; empties the log.
GPUBOOST_EMU_RUNTIME inline void analyze_warp_log(Instrumentation& state, unsigned warp,
                                                  TrafficScratch& scratch) {
  WarpLog& log = state.warp_logs[warp];
  const size_t count = log.count;
  if (count == 0) return;
  log.count = 0;
  const LoggedAccess* entries = log.entries;
  if (!map_reserve(scratch.instructions, count) || !map_reserve(scratch.occurrences, count) ||
      !map_reserve(scratch.groups, count) ||
      !grow_array(reinterpret_cast<void**>(&scratch.group_of), &scratch.entry_capacity, count,
                  sizeof(uint32_t)) ||
      !grow_array(reinterpret_cast<void**>(&scratch.order), &scratch.order_capacity, count,
                  sizeof(uint32_t))) {
    fail_thread("traffic model: out of memory");
  }
  // Pass 1: the warp instruction of every entry: (instruction, k) for the k-th execution
  // of the instruction by its lane. A lane's entries are contiguous (lanes run one after
  // another between the points where they meet). An instruction is an address, a space
  // and a kind (a memcpy checks a load and a store at one address).
  map_clear(scratch.instructions);
  map_clear(scratch.groups);
  uint32_t instructions = 0;
  uint32_t groups = 0;
  int lane = -1;
  for (size_t index = 0; index < count; ++index) {
    const LoggedAccess& access = entries[index];
    if (access.lane != lane) {
      lane = access.lane;
      map_clear(scratch.occurrences);
    }
    const uint64_t key = (static_cast<uint64_t>(access.pc) << 3) |
                         (static_cast<uint64_t>(access.space) << 2) | access.kind;
    uint32_t* instruction = map_slot(scratch.instructions, key, instructions);
    if (*instruction == instructions) ++instructions;
    const uint32_t k = (*map_slot(scratch.occurrences, *instruction, 0))++;
    uint32_t* group =
        map_slot(scratch.groups, (static_cast<uint64_t>(*instruction) << 32) | k, groups);
    if (*group == groups) ++groups;
    scratch.group_of[index] = *group;
  }
  // Pass 2: entries ordered by warp instruction (counting sort).
  if (!grow_array(reinterpret_cast<void**>(&scratch.group_start), &scratch.group_capacity,
                  groups + 1, sizeof(uint32_t))) {
    fail_thread("traffic model: out of memory");
  }
  memset(scratch.group_start, 0, (groups + 1) * sizeof(uint32_t));
  for (size_t index = 0; index < count; ++index) ++scratch.group_start[scratch.group_of[index] + 1];
  for (uint32_t group = 0; group < groups; ++group) {
    scratch.group_start[group + 1] += scratch.group_start[group];
  }
  for (size_t index = 0; index < count; ++index) {
    scratch.order[scratch.group_start[scratch.group_of[index]]++] = static_cast<uint32_t>(index);
  }
  // group_start[g] is now the end of group g, where group g + 1 begins.
  uint32_t begin = 0;
  for (uint32_t group = 0; group < groups; ++group) {
    const uint32_t end = scratch.group_start[group];
    count_instruction(entries, scratch.order + begin, end - begin, scratch.counters);
    begin = end;
  }
}

GPUBOOST_EMU_RUNTIME inline TrafficScratch& worker_scratch(Instrumentation& state,
                                                           const Worker& worker) {
  return state.scratch[worker.index];
}

// ---------------------------------------------------------------------------
// The access hook (every instrumented load and store) and atomics.
// ---------------------------------------------------------------------------
GPUBOOST_EMU_RUNTIME inline void on_access(const void* pointer, uint32_t size, uint8_t kind,
                                           uintptr_t pc) {
  Instrumentation* state = g_instrument;
  if (state == nullptr) return;
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  const Region* region;
  Space space;
  if (address - reinterpret_cast<uintptr_t>(state->arena) < state->arena_bytes) {
    if (tls_fiber == nullptr) return;  // the emulation's own code, outside GPU threads
    region = find_region(state->regions, state->region_count, address);
    space = region != nullptr ? region->space
                              : (state->first_dynamic_shared != nullptr &&
                                         address >= state->first_dynamic_shared->begin
                                     ? kShared
                                     : kGlobal);
  } else if (address - state->static_begin < state->static_bytes) {
    if (tls_fiber == nullptr) return;
    region = find_region(state->static_regions, state->static_region_count, address);
    if (region != nullptr && !region->allowed) region = nullptr;
    space = kShared;
  } else {
    return;
  }
  const bool memcheck = (state->checks & kCheckMemcheck) != 0;
  if (region == nullptr || address + size > region->end) {
    if (memcheck) report_out_of_bounds(*state, space, address, size, kind, pc);
    return;
  }
  if (space == kShared && state->cluster_blocks > 1 && region != state->dynamic_shared &&
      region >= state->first_dynamic_shared &&
      region < state->first_dynamic_shared + state->cluster_blocks) {
    const unsigned rank = static_cast<unsigned>(region - state->first_dynamic_shared);
    if (memcheck && state->rank_returned[rank]) {
      fail_thread("memcheck: distributed shared-memory %s of %u bytes of cluster rank %u, "
                  "which has returned from the kernel (no gpuboost_cluster_sync() orders the access "
                  "before its exit), @pc:0x%x",
                  access_name(kind), size, rank, pc_offset(*state, pc));
    }
    state->rank_remote_phase[rank] = state->cluster_phase + 1;
  }
  if (memcheck && kind != kRead && !region->writable) {
    char where[kErrorMessageCapacity / 2];
    describe_address(where, sizeof(where), region, 1, address);
    fail_thread("memcheck: %s of %u bytes at %s, which the kernel only received through "
                "`const` pointers, @pc:0x%x",
                access_name(kind), size, where, pc_offset(*state, pc));
  }
  if (region->initialized != nullptr) {
    if (kind != kWrite) check_initialized(*state, *region, address, size, pc);
    if (kind != kRead) memset(region->initialized + (address - region->begin), 1, size);
  }
  if (region->race != nullptr) check_race(*state, *region, address, size, kind, pc);
  if ((state->checks & kMeasureTraffic) != 0) log_access(*state, space, address, size, kind, pc);
}

GPUBOOST_EMU_RUNTIME inline void instrument_atomic(const void* address,
                                                                              uint32_t size,
                                                                              const void* pc) {
  on_access(address, size, kAtomic, reinterpret_cast<uintptr_t>(pc));
}

// ---------------------------------------------------------------------------
// Hooks called by cuda_emu.h.
// ---------------------------------------------------------------------------
// A block starts, or resumes after a cluster barrier (`resumed`).
GPUBOOST_EMU_RUNTIME inline void instrument_block_start(uint64_t linear_block,
                                                        unsigned cluster_rank, bool resumed) {
  Instrumentation* state = g_instrument;
  if (state == nullptr) return;
  state->current_block = linear_block;
  if (state->first_dynamic_shared != nullptr) {
    state->dynamic_shared = state->first_dynamic_shared + cluster_rank;
  }
  if ((state->checks & kCheckRacecheck) != 0) {
    if (!new_epoch(*state)) tls_launch->record_error("racecheck: out of memory for its epochs", false);
    state->warp_syncs = state->rank_warp_syncs + cluster_rank * state->warps_per_block;
    if (!resumed) memset(state->warp_syncs, 0, state->warps_per_block * sizeof(uint32_t));
  }
  if (resumed) return;
  if (cluster_rank < kMaxClusterBlocks) {
    state->rank_returned[cluster_rank] = false;
    state->rank_remote_phase[cluster_rank] = 0;
  }
  if (state->dynamic_shared != nullptr && state->dynamic_shared->initialized != nullptr) {
    memset(state->dynamic_shared->initialized, 0, state->dynamic_shared_bytes);
  }
  for (size_t index = 0; index < state->static_region_count; ++index) {
    Region& region = state->static_regions[index];
    if (region.initialized != nullptr) memset(region.initialized, 0, region.end - region.begin);
  }
}

GPUBOOST_EMU_RUNTIME inline void instrument_barrier_completed() {
  Instrumentation* state = g_instrument;
  if (state != nullptr && (state->checks & kCheckRacecheck) != 0 && !new_epoch(*state)) {
    tls_launch->record_error("racecheck: out of memory for its epochs", false);
  }
}

// Block `cluster_rank` of the cluster in progress returned from the kernel. Returns an
// error message when another block of the cluster accessed its shared memory in the same
// cluster phase (nothing orders that access before the exit), else null.
GPUBOOST_EMU_RUNTIME inline const char* instrument_block_returned(unsigned cluster_rank) {
  Instrumentation* state = g_instrument;
  if (state == nullptr || state->cluster_blocks <= 1 || cluster_rank >= kMaxClusterBlocks) {
    return nullptr;
  }
  state->rank_returned[cluster_rank] = true;
  if ((state->checks & kCheckMemcheck) != 0 &&
      state->rank_remote_phase[cluster_rank] == state->cluster_phase + 1) {
    return "memcheck: a block of the cluster returned from the kernel while another block "
           "of the cluster accessed its shared memory with no gpuboost_cluster_sync() between them "
           "(distributed shared memory must not be accessed after its block may have exited)";
  }
  return nullptr;
}

// Every block of a cluster waits at a cluster barrier; they resume next.
GPUBOOST_EMU_RUNTIME inline void instrument_cluster_barrier_completed() {
  Instrumentation* state = g_instrument;
  if (state != nullptr) ++state->cluster_phase;
}

GPUBOOST_EMU_RUNTIME inline void instrument_warp_phase(WarpState& warp) {
  Instrumentation* state = g_instrument;
  if (state == nullptr || tls_launch == nullptr) return;
  const unsigned index = static_cast<unsigned>(&warp - tls_launch->warps);
  if (state->warp_syncs != nullptr && warp.operation == kWarpSync && !warp.operations_differ) {
    ++state->warp_syncs[index];
  }
  if ((state->checks & kMeasureTraffic) != 0 && tls_fiber != nullptr) {
    analyze_warp_log(*state, index, worker_scratch(*state, *tls_fiber->worker));
  }
}

// Every GPU thread of the worker waits at __syncthreads or has returned.
GPUBOOST_EMU_RUNTIME inline void instrument_worker_idle(Worker& worker) {
  Instrumentation* state = g_instrument;
  if (state == nullptr || (state->checks & kMeasureTraffic) == 0) return;
  for (unsigned index = 0; index < worker.warp_count; ++index) {
    analyze_warp_log(*state, worker.warps[index], worker_scratch(*state, worker));
  }
}

// The dynamic shared memory of cluster rank `cluster_rank`: in the arena.
GPUBOOST_EMU_RUNTIME inline unsigned char* instrument_dynamic_shared(unsigned char* fallback,
                                                                     unsigned cluster_rank) {
  Instrumentation* state = g_instrument;
  if (state == nullptr || state->first_dynamic_shared == nullptr) return fallback;
  return reinterpret_cast<unsigned char*>(state->first_dynamic_shared[cluster_rank].begin);
}

// ---------------------------------------------------------------------------
// An instrumented launch: the arena, copies in and out, the shadows.
// ---------------------------------------------------------------------------
GPUBOOST_EMU_RUNTIME inline size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

struct InstrumentedLaunch {
  Instrumentation state;
  ~InstrumentedLaunch() {
    Instrumentation& s = state;
    if (s.arena != nullptr) munmap(s.arena, s.arena_bytes);
    for (size_t index = 0; index < s.region_count; ++index) {
      free(s.regions[index].initialized);
      free(s.regions[index].race);
    }
    for (size_t index = 0; index < s.static_region_count; ++index) {
      free(s.static_regions[index].initialized);
      free(s.static_regions[index].race);
    }
    delete[] s.regions;
    delete[] s.static_regions;
    free(s.epochs);
    free(s.rank_warp_syncs);
    if (s.warp_logs != nullptr) {
      for (unsigned warp = 0; warp < s.warps_per_block; ++warp) free(s.warp_logs[warp].entries);
    }
    delete[] s.warp_logs;
    if (s.scratch != nullptr) {
      for (unsigned index = 0; index < s.scratch_count; ++index) {
        TrafficScratch& scratch = s.scratch[index];
        StampedMap* maps[] = {&scratch.instructions, &scratch.occurrences, &scratch.groups};
        for (StampedMap* map : maps) {
          free(map->keys);
          free(map->values);
          free(map->stamps);
        }
        free(scratch.group_of);
        free(scratch.group_start);
        free(scratch.order);
      }
    }
    delete[] s.scratch;
  }
};

GPUBOOST_EMU_RUNTIME inline bool allocate_shadows(Instrumentation& state, Region& region,
                                                  bool initialized_from_host,
                                                  size_t* race_bytes) {
  const size_t bytes = region.end - region.begin;
  if ((state.checks & kCheckInitcheck) != 0 &&
      (region.space == kShared || !initialized_from_host)) {
    region.initialized = static_cast<uint8_t*>(malloc(bytes == 0 ? 1 : bytes));
    if (region.initialized == nullptr) return false;
    if (region.space == kGlobal) memcpy(region.initialized, region.allocation->initialized, bytes);
  }
  if ((state.checks & kCheckRacecheck) != 0 && region.writable) {
    *race_bytes += bytes * sizeof(RaceCell);
    if (*race_bytes > kMaxRaceShadowBytes) return false;
    region.race = static_cast<RaceCell*>(calloc(bytes == 0 ? 1 : bytes, sizeof(RaceCell)));
    if (region.race == nullptr) return false;
  }
  return true;
}

// Set up `launch` for a kernel launch; rewrites the pointer arguments to the arena.
GPUBOOST_EMU_RUNTIME inline bool instrument_begin(InstrumentedLaunch& launch,
                                                  const InstrumentConfig& config,
                                                  const uint32_t* grid, const uint32_t* block,
                                                  uint64_t dynamic_shared_bytes,
                                                  uint32_t cluster_blocks,
                                                  uint32_t worker_count, void** arguments,
                                                  char* error_message, uint64_t error_capacity) {
  Instrumentation& state = launch.state;
  state.checks = config.checks;
  state.config = &config;
  state.library_base = library_base();
  const size_t threads = static_cast<size_t>(block[0]) * block[1] * block[2];
  state.warps_per_block = static_cast<unsigned>((threads + kWarpSize - 1) / kWarpSize);
  auto fail = [&](const char* message) {
    copy_message(error_message, error_capacity, message);
    return false;
  };

  // Layout: redzone, then every allocation (at its device alignment) followed by a
  // redzone, then the dynamic shared memory of each block of a cluster, each followed
  // by a redzone.
  const size_t count = config.allocation_count;
  const unsigned ranks = cluster_blocks == 0 ? 1 : cluster_blocks;
  state.cluster_blocks = ranks;
  state.regions = new (std::nothrow) Region[count + ranks];
  if (state.regions == nullptr) return fail("out of memory (instrumented launch)");
  size_t offset = kRedzoneBytes;
  for (size_t index = 0; index < count; ++index) {
    const InstrumentAllocation& allocation = config.allocations[index];
    offset = align_up(offset, kArenaAlignment) + allocation.alignment_offset % kArenaAlignment;
    Region& region = state.regions[index];
    region = Region{offset, offset + allocation.bytes, kGlobal,
                    (allocation.flags & kAllocationWritable) != 0, true, allocation.label,
                    nullptr, nullptr, &allocation};
    offset += allocation.bytes + kRedzoneBytes;
  }
  size_t shared_offsets[kMaxClusterBlocks];
  for (unsigned rank = 0; rank < ranks && rank < kMaxClusterBlocks; ++rank) {
    offset = align_up(offset, kArenaAlignment);
    shared_offsets[rank] = offset;
    offset += dynamic_shared_bytes + kRedzoneBytes;
  }
  state.arena_bytes = align_up(offset, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  void* arena = mmap(nullptr, state.arena_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED) {
    state.arena_bytes = 0;
    return fail("could not map the device memory of an instrumented launch");
  }
  state.arena = static_cast<unsigned char*>(arena);
  const uintptr_t base = reinterpret_cast<uintptr_t>(arena);
  size_t race_bytes = 0;
  for (size_t index = 0; index < count; ++index) {
    Region& region = state.regions[index];
    region.begin += base;
    region.end += base;
    const InstrumentAllocation& allocation = config.allocations[index];
    memcpy(reinterpret_cast<void*>(region.begin),
           reinterpret_cast<const void*>(allocation.host_address), allocation.bytes);
    if (!allocate_shadows(state, region, allocation.initialized == nullptr, &race_bytes)) {
      return fail("out of memory for the sanitizer's shadow of the launch's arguments "
                  "(racecheck keeps 48 bytes per byte of writable memory: use smaller data)");
    }
  }
  state.region_count = count;
  state.dynamic_shared_bytes = dynamic_shared_bytes;
  static const char* const kSharedLabels[kMaxClusterBlocks] = {
      "the dynamic shared memory",
      "the dynamic shared memory of cluster rank 1",
      "the dynamic shared memory of cluster rank 2",
      "the dynamic shared memory of cluster rank 3",
      "the dynamic shared memory of cluster rank 4",
      "the dynamic shared memory of cluster rank 5",
      "the dynamic shared memory of cluster rank 6",
      "the dynamic shared memory of cluster rank 7"};
  if (ranks > kMaxClusterBlocks) return fail("too many blocks per cluster");
  for (unsigned rank = 0; rank < ranks; ++rank) {
    Region& shared = state.regions[count + rank];
    shared = Region{base + shared_offsets[rank], base + shared_offsets[rank] + dynamic_shared_bytes,
                    kShared, true, true,
                    ranks == 1 ? kSharedLabels[0] : kSharedLabels[rank],
                    nullptr, nullptr, nullptr};
    if (!allocate_shadows(state, shared, true, &race_bytes)) {
      return fail("out of memory for the sanitizer's shadow of the dynamic shared memory");
    }
    state.region_count = count + rank + 1;
  }
  state.first_dynamic_shared = &state.regions[count];
  state.dynamic_shared = state.first_dynamic_shared;

  // Static shared memory: the registered variables of the gpuboost_shared section.
  if (__start_gpuboost_shared != nullptr && __stop_gpuboost_shared != __start_gpuboost_shared) {
    state.static_begin = reinterpret_cast<uintptr_t>(__start_gpuboost_shared) -
                         kSharedSectionSlack;
    state.static_bytes = static_cast<uintptr_t>(__stop_gpuboost_shared -
                                                __start_gpuboost_shared) +
                         2 * kSharedSectionSlack;
  }
  const size_t static_count = g_static_shared_range_count;
  state.static_regions = new (std::nothrow) Region[static_count == 0 ? 1 : static_count];
  if (state.static_regions == nullptr) return fail("out of memory (instrumented launch)");
  for (size_t index = 0; index < static_count; ++index) {
    const StaticSharedRange& range = g_static_shared_ranges[index];
    const uintptr_t begin = reinterpret_cast<uintptr_t>(range.address);
    Region region{begin, begin + range.size, kShared, true,
                  index < config.static_shared_count && config.static_shared_allowed[index] != 0,
                  index < config.static_shared_count ? config.static_shared_labels[index]
                                                     : "a static __shared__ variable",
                  nullptr, nullptr, nullptr};
    if (!allocate_shadows(state, region, true, &race_bytes)) {
      return fail("out of memory for the sanitizer's shadow of static shared memory");
    }
    size_t position = state.static_region_count++;  // insertion by address
    while (position > 0 && state.static_regions[position - 1].begin > begin) {
      state.static_regions[position] = state.static_regions[position - 1];
      --position;
    }
    state.static_regions[position] = region;
  }

  // Pointer arguments now point into the arena.
  for (uint32_t argument = 0; argument < config.argument_count; ++argument) {
    const int32_t allocation = config.argument_allocation[argument];
    if (allocation < 0) continue;
    *static_cast<uintptr_t*>(arguments[argument]) =
        state.regions[allocation].begin + config.argument_offset[argument];
  }

  if ((state.checks & kCheckRacecheck) != 0) {
    state.rank_warp_syncs = static_cast<uint32_t*>(
        calloc(static_cast<size_t>(state.warps_per_block) * ranks, sizeof(uint32_t)));
    if (state.rank_warp_syncs == nullptr) return fail("out of memory (racecheck)");
    state.warp_syncs = state.rank_warp_syncs;
  }
  if ((state.checks & kMeasureTraffic) != 0) {
    state.warp_logs = new (std::nothrow) WarpLog[state.warps_per_block];
    state.scratch_count = worker_count == 0 ? default_worker_count() : worker_count;
    if (state.scratch_count > state.warps_per_block) state.scratch_count = state.warps_per_block;
    state.scratch = new (std::nothrow) TrafficScratch[state.scratch_count];
    if (state.warp_logs == nullptr || state.scratch == nullptr) {
      return fail("out of memory (traffic model)");
    }
    for (unsigned index = 0; index < state.scratch_count; ++index) {
      memset(state.scratch[index].counters, 0, sizeof(state.scratch[index].counters));
    }
  }
  return true;
}

// Copy written memory and initialisation back to the host; sum the traffic counters.
GPUBOOST_EMU_RUNTIME inline void instrument_end(InstrumentedLaunch& launch, uint64_t* counters) {
  Instrumentation& state = launch.state;
  for (size_t index = 0; index < state.config->allocation_count; ++index) {
    const Region& region = state.regions[index];
    const InstrumentAllocation& allocation = *region.allocation;
    if (region.writable) {
      memcpy(reinterpret_cast<void*>(allocation.host_address),
             reinterpret_cast<const void*>(region.begin), allocation.bytes);
    }
    if (allocation.initialized != nullptr && region.initialized != nullptr) {
      memcpy(allocation.initialized, region.initialized, allocation.bytes);
    }
  }
  if (counters != nullptr) {
    memset(counters, 0, kTrafficCounterCount * sizeof(uint64_t));
    for (unsigned index = 0; index < state.scratch_count; ++index) {
      for (int counter = 0; counter < kTrafficCounterCount; ++counter) {
        counters[counter] += state.scratch[index].counters[counter];
      }
    }
  }
}

template <class... Params>
GPUBOOST_EMU_RUNTIME int launch_kernel_instrumented(
    void (*kernel)(Params...), const uint32_t* grid, const uint32_t* block,
    uint64_t dynamic_shared_bytes, uint32_t cluster_blocks, double timeout_seconds,
    uint32_t workers, void** arguments,
    char* error_message, uint64_t error_capacity, const InstrumentConfig* config,
    uint64_t* counters) {
  pthread_mutex_lock(&g_instrument_mutex);
  int status = kLaunchSetupFailed;
  {
    InstrumentedLaunch launch;
    if (instrument_begin(launch, *config, grid, block, dynamic_shared_bytes, cluster_blocks,
                         workers, arguments,
                         error_message, error_capacity)) {
      g_instrument = &launch.state;
      status = launch_kernel(kernel, grid, block, dynamic_shared_bytes, cluster_blocks,
                             timeout_seconds, workers,
                             arguments, error_message, error_capacity);
      g_instrument = nullptr;
      instrument_end(launch, counters);
    }
  }
  pthread_mutex_unlock(&g_instrument_mutex);
  return status;
}

}  // namespace gpuboost_emu

// ---------------------------------------------------------------------------
// The functions g++ calls before every instrumented access.
// ---------------------------------------------------------------------------
#define GPUBOOST_EMU_ACCESS_HOOKS(bytes)                                                  \
  extern "C" GPUBOOST_EMU_RUNTIME void __asan_load##bytes##_noabort(void* address) {        \
    ::gpuboost_emu::on_access(address, bytes, ::gpuboost_emu::kRead,                      \
                              reinterpret_cast<uintptr_t>(__builtin_return_address(0)));  \
  }                                                                                       \
  extern "C" GPUBOOST_EMU_RUNTIME void __asan_store##bytes##_noabort(void* address) {       \
    ::gpuboost_emu::on_access(address, bytes, ::gpuboost_emu::kWrite,                     \
                              reinterpret_cast<uintptr_t>(__builtin_return_address(0)));  \
  }
GPUBOOST_EMU_ACCESS_HOOKS(1)
GPUBOOST_EMU_ACCESS_HOOKS(2)
GPUBOOST_EMU_ACCESS_HOOKS(4)
GPUBOOST_EMU_ACCESS_HOOKS(8)
GPUBOOST_EMU_ACCESS_HOOKS(16)
#undef GPUBOOST_EMU_ACCESS_HOOKS

extern "C" GPUBOOST_EMU_RUNTIME void __asan_loadN_noabort(void* address, long size) {
  if (size <= 0) return;
  ::gpuboost_emu::on_access(address, static_cast<uint32_t>(size), ::gpuboost_emu::kRead,
                            reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
extern "C" GPUBOOST_EMU_RUNTIME void __asan_storeN_noabort(void* address, long size) {
  if (size <= 0) return;
  ::gpuboost_emu::on_access(address, static_cast<uint32_t>(size), ::gpuboost_emu::kWrite,
                            reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
// Called before functions that do not return; nothing to clean up here.
extern "C" GPUBOOST_EMU_RUNTIME void __asan_handle_no_return() {}

// The names of the traffic counters, comma-separated, in InstrumentStats order.
GPUBOOST_EMU_EXPORT const char* gpuboost_emu_traffic_counter_names() {
#define GPUBOOST_EMU_COUNTER_NAME(name) #name ","
  return GPUBOOST_EMU_TRAFFIC_COUNTERS(GPUBOOST_EMU_COUNTER_NAME);
#undef GPUBOOST_EMU_COUNTER_NAME
}

#endif  // GPUBOOST_INSTRUMENT_H
