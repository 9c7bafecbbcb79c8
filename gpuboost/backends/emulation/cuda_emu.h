// cuda_emu.h -- run CUDA kernel sources on the CPU with g++ (see docs/EMULATION.md).
//
// gpuboost.backends.emulation compiles a `cuda/*.cu` file with
//     g++ -std=c++20 -DGPUBOOST_EMULATION -include cuda_emu.h -x c++ file.cu
// This header turns the CUDA dialect used by the kernels into plain C++:
//
// * execution model: a launch runs on a few OS worker threads (one per core,
//   at most one per warp) that run concurrently. Every GPU thread is a fiber
//   (its own stack) of the worker owning its warp; a worker switches fibers
//   when one waits at `__syncthreads` or a warp intrinsic, so barriers are real
//   (a barrier among the workers) and warp intrinsics are real exchanges among
//   the 32 lanes. Blocks run one after another on the same workers.
// * thread-block clusters (`__cluster_dims__(K, 1, 1)`, sm_90): the K blocks of a
//   cluster run one after another between cluster barriers. Each has its own
//   GPU threads (fibers) and dynamic shared memory; a block whose threads all
//   wait at a cluster barrier is parked (its fibers keep their stacks) and the
//   next block of the cluster runs; once all K are parked they resume in rank
//   order. cluster_map_shared maps an address of the dynamic shared memory to
//   the same offset in another block's. Cluster kernels may not use
//   static `__shared__` variables (one copy per module); launcher.py refuses them.
// * `threadIdx`, `blockIdx`, `blockDim`, `gridDim` are thread_local variables,
//   switched together with the fibers.
// * `__shared__` variables are function-scope `static` variables: one copy per
//   module, which is one copy per block because blocks never overlap.
//   The launcher (launcher.py) finds them in the ELF symbol table and fills
//   them, and the dynamic shared buffer, with kSharedPoisonByte before every
//   block, so a kernel that reads shared memory it never wrote sees garbage
//   (NaN for floating point) instead of the previous block's values.
// * failures inside a kernel (`assert`, `__trap`, misuse of warp intrinsics,
//   divergent `__syncthreads`, deadlocks) stop the launch and are reported to
//   Python as a RuntimeError; they do not abort the process.
//
// Everything the launcher calls is `extern "C"` and has default visibility;
// everything else is hidden (the library is built with -fvisibility=hidden),
// so several emulated modules loaded in one process never share state.
#ifndef GPUBOOST_CUDA_EMU_H
#define GPUBOOST_CUDA_EMU_H

#ifndef GPUBOOST_EMULATION
#error "cuda_emu.h is the g++ emulation of CUDA; build through gpuboost.backends.emulation"
#endif

// ---------------------------------------------------------------------------
// System headers: all of them before the CUDA keyword macros below, which
// would otherwise clash with attribute spellings inside the system headers.
// ---------------------------------------------------------------------------
#include <assert.h>
#include <dlfcn.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

// ---------------------------------------------------------------------------
// CUDA keywords.
// ---------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#if defined(GPUBOOST_EMU_INSTRUMENTED)
// Static shared variables in their own section, whose bounds the sanitizer knows
// (instrument.h).
#define __shared__ static __attribute__((section("gpuboost_shared")))
#else
#define __shared__ static
#endif
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __align__(alignment) __attribute__((aligned(alignment)))
#define __grid_constant__

//: Compute capability the emulation reports through __CUDA_ARCH__; the launch
//: limits in launcher.py are those of the same architecture.
#define GPUBOOST_EMULATED_CUDA_ARCH 800
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ GPUBOOST_EMULATED_CUDA_ARCH
#endif

#define GPUBOOST_EMU_EXPORT extern "C" __attribute__((visibility("default")))

// The instrumented flavour (sanitizer and traffic model, instrument.h) is built with
// -fsanitize=kernel-address, which makes g++ call a hook before every memory access.
// GPUBOOST_EMU_RUNTIME marks the emulation's own functions that must not be instrumented
// (the hooks, atomics); GPUBOOST_EMU_HOOK(call) calls into instrument.h from the runtime
// and vanishes from the plain flavour.
#if defined(GPUBOOST_EMU_INSTRUMENTED)
#define GPUBOOST_EMU_RUNTIME __attribute__((no_sanitize_address))
#define GPUBOOST_EMU_HOOK(call) (::gpuboost_emu::call)
#else
#define GPUBOOST_EMU_RUNTIME
#define GPUBOOST_EMU_HOOK(call) (static_cast<void>(0))
#endif

// ---------------------------------------------------------------------------
// Vector types and the built-in index variables.
// ---------------------------------------------------------------------------
struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
      : x(x_), y(y_), z(z_) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

#define GPUBOOST_EMU_VECTOR2(name, scalar, alignment)                        \
  struct __attribute__((aligned(alignment))) name {                         \
    scalar x, y;                                                            \
  };                                                                        \
  inline name make_##name(scalar x, scalar y) { return name{x, y}; }
#define GPUBOOST_EMU_VECTOR3(name, scalar)                                   \
  struct name {                                                             \
    scalar x, y, z;                                                         \
  };                                                                        \
  inline name make_##name(scalar x, scalar y, scalar z) { return name{x, y, z}; }
#define GPUBOOST_EMU_VECTOR4(name, scalar, alignment)                        \
  struct __attribute__((aligned(alignment))) name {                         \
    scalar x, y, z, w;                                                      \
  };                                                                        \
  inline name make_##name(scalar x, scalar y, scalar z, scalar w) {          \
    return name{x, y, z, w};                                                \
  }

GPUBOOST_EMU_VECTOR2(int2, int, 8)
GPUBOOST_EMU_VECTOR2(uint2, unsigned int, 8)
GPUBOOST_EMU_VECTOR2(float2, float, 8)
GPUBOOST_EMU_VECTOR2(double2, double, 16)
GPUBOOST_EMU_VECTOR2(longlong2, long long, 16)
GPUBOOST_EMU_VECTOR2(ulonglong2, unsigned long long, 16)
GPUBOOST_EMU_VECTOR3(int3, int)
GPUBOOST_EMU_VECTOR3(float3, float)
GPUBOOST_EMU_VECTOR4(int4, int, 16)
GPUBOOST_EMU_VECTOR4(uint4, unsigned int, 16)
GPUBOOST_EMU_VECTOR4(float4, float, 16)
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }

#undef GPUBOOST_EMU_VECTOR2
#undef GPUBOOST_EMU_VECTOR3
#undef GPUBOOST_EMU_VECTOR4

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
constexpr int warpSize = 32;

namespace gpuboost_emu {

//: Threads per warp.
constexpr unsigned kWarpSize = 32;
//: Mask naming every lane of a full warp.
constexpr unsigned kFullWarpMask = 0xffffffffu;
//: Byte written over shared memory before each block (NaN as float/double, -1 as integers).
constexpr unsigned char kSharedPoisonByte = 0xff;
//: Alignment of the dynamic shared memory buffer (as on a GPU).
constexpr size_t kDynamicSharedAlignment = 128;
//: Most blocks of a thread-block cluster (the portable cluster size of sm_90).
constexpr unsigned kMaxClusterBlocks = 8;
//: Bit of a barrier's site tag marking a cluster barrier (gpuboost_cluster_sync()).
constexpr uintptr_t kClusterSiteBit = uintptr_t{1} << 62;
//: Stack of each emulated GPU thread (fiber); a GPU thread has about 1 KiB.
constexpr size_t kFiberStackBytes = size_t{256} << 10;
//: Busy-wait iterations of a worker at a barrier before it sleeps.
constexpr int kBarrierSpinIterations = 64;
//: Length of one sleep at a barrier; between sleeps a waiting worker checks
//: whether the launch failed and whether it waited past the time limit.
constexpr long kBarrierSleepSliceNanoseconds = 20L * 1000L * 1000L;
constexpr long kNanosecondsPerSecond = 1000L * 1000L * 1000L;
//: Capacity of the message describing the first failure of a launch, and of
//: the block / thread location appended to it.
constexpr size_t kErrorMessageCapacity = 1024;
constexpr size_t kErrorLocationCapacity = 128;
//: Barrier "call site" of a worker whose own GPU threads met at different sites.
constexpr uintptr_t kSiteMismatch = ~uintptr_t{0};

//: Launch status codes returned to Python.
constexpr int kLaunchOk = 0;
constexpr int kLaunchKernelFailed = 1;
constexpr int kLaunchSetupFailed = 2;

// ---------------------------------------------------------------------------
// OS-level helpers: futex sleep / wake on a 32-bit word, clock, pause.
// ---------------------------------------------------------------------------
inline void futex_wait_for(uint32_t* word, uint32_t value, long nanoseconds) {
  timespec timeout{nanoseconds / kNanosecondsPerSecond, nanoseconds % kNanosecondsPerSecond};
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, &timeout, nullptr, 0);
}

inline void futex_wake_all(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

inline double monotonic_seconds() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// ---------------------------------------------------------------------------
// Execution contexts of the fibers (one per GPU thread). On x86-64 a few lines
// of assembly switch stacks (callee-saved registers plus the x87 / SSE control
// words, as the System V ABI requires; it assumes no CET shadow stack, which
// Python processes do not enable); elsewhere, or with
// -DGPUBOOST_EMU_USE_UCONTEXT, POSIX swapcontext does the same, more slowly.
// ---------------------------------------------------------------------------
#if defined(__x86_64__) && !defined(GPUBOOST_EMU_USE_UCONTEXT)
extern "C" __attribute__((visibility("hidden"))) void gpuboost_emu_switch_stack(
    void** save_stack_pointer, void* load_stack_pointer);
__asm__(R"(
    .pushsection .text
    .p2align 4
    .globl gpuboost_emu_switch_stack
    .hidden gpuboost_emu_switch_stack
    .type gpuboost_emu_switch_stack, @function
gpuboost_emu_switch_stack:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $16, %rsp
    fnstcw (%rsp)
    stmxcsr 8(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    fldcw (%rsp)
    ldmxcsr 8(%rsp)
    addq $16, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size gpuboost_emu_switch_stack, .-gpuboost_emu_switch_stack
    .popsection
)");

//: Registers gpuboost_emu_switch_stack pushes (rbp, rbx, r12-r15).
constexpr int kSavedRegisters = 6;
//: Stack slots for the x87 and SSE control words.
constexpr int kControlWordSlots = 2;

struct ExecutionContext {
  void* stack_pointer = nullptr;
};

inline void switch_context(ExecutionContext& save, ExecutionContext& load) {
  gpuboost_emu_switch_stack(&save.stack_pointer, load.stack_pointer);
}

// Prepare `context` so that switching to it calls `entry` (which never returns)
// on the given stack, with the stack aligned as after a call instruction.
inline bool start_context(ExecutionContext& context, unsigned char* stack, size_t stack_bytes,
                          void (*entry)()) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + stack_bytes) & ~uintptr_t{15};
  uintptr_t* slot = reinterpret_cast<uintptr_t*>(top);
  *--slot = 0;                                   // where `entry` finds its return address
  *--slot = reinterpret_cast<uintptr_t>(entry);  // popped by the switch's `ret`
  for (int saved = 0; saved < kSavedRegisters; ++saved) *--slot = 0;
  slot -= kControlWordSlots;
  unsigned short x87_control = 0;
  unsigned int sse_control = 0;
  __asm__ __volatile__("fnstcw %0" : "=m"(x87_control));
  __asm__ __volatile__("stmxcsr %0" : "=m"(sse_control));
  memcpy(&slot[0], &x87_control, sizeof(x87_control));
  memcpy(&slot[1], &sse_control, sizeof(sse_control));
  context.stack_pointer = slot;
  return true;
}
#else
struct ExecutionContext {
  ucontext_t context;
};

inline void switch_context(ExecutionContext& save, ExecutionContext& load) {
  swapcontext(&save.context, &load.context);
}

inline bool start_context(ExecutionContext& context, unsigned char* stack, size_t stack_bytes,
                          void (*entry)()) {
  if (getcontext(&context.context) != 0) return false;
  context.context.uc_stack.ss_sp = stack;
  context.context.uc_stack.ss_size = stack_bytes;
  context.context.uc_link = nullptr;
  makecontext(&context.context, entry, 0);
  return true;
}
#endif

// ---------------------------------------------------------------------------
// Fiber stacks: one mapping, a guard page below each stack, kept for the
// module's lifetime and grown to the largest block launched so far.
// ---------------------------------------------------------------------------
inline unsigned char* g_stack_region = nullptr;
inline size_t g_stack_count = 0;
inline size_t g_stack_stride = 0;
inline size_t g_guard_bytes = 0;

inline bool ensure_fiber_stacks(size_t count) {
  if (count <= g_stack_count) return true;
  if (g_stack_region != nullptr) munmap(g_stack_region, g_stack_count * g_stack_stride);
  g_stack_region = nullptr;
  g_stack_count = 0;
  g_guard_bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  g_stack_stride = kFiberStackBytes + g_guard_bytes;
  void* region = mmap(nullptr, count * g_stack_stride, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) return false;
  g_stack_region = static_cast<unsigned char*>(region);
  g_stack_count = count;
  for (size_t index = 0; index < count; ++index) {
    mprotect(g_stack_region + index * g_stack_stride, g_guard_bytes, PROT_NONE);
  }
  return true;
}

inline unsigned char* fiber_stack(size_t index) {
  return g_stack_region + index * g_stack_stride + g_guard_bytes;
}

// ---------------------------------------------------------------------------
// Barrier between the worker threads of a launch, with drop-out (a worker whose
// GPU threads all returned leaves the block's barrier), per-phase sums (GPU
// threads that arrived, and how many with a true predicate) and a call-site tag
// so that threads meeting at different __syncthreads are detected.
//
// state_ packs (expected << 32) | arrived. Per-phase data lives in slot
// generation & 1 and is cleared by whoever completes the *next* phase (every
// reader has left by then).
// ---------------------------------------------------------------------------
class Barrier {
 public:
  enum Status { kCompleted, kAborted, kTimedOut };
  struct Phase {
    uint32_t true_count;
    uint32_t thread_count;
    bool sites_differ;
    Status status;
  };

  void reset(uint32_t expected) {
    __atomic_store_n(&state_, static_cast<uint64_t>(expected) << 32, __ATOMIC_RELAXED);
    for (int slot = 0; slot < 2; ++slot) clear_slot(slot);
  }

  // Arrive with the given sums and wait until every expected worker arrived.
  // The last one runs `on_complete` before anyone is released. While asleep,
  // a waiter gives up when *abort_flag becomes non-zero (status kAborted) or
  // after timeout_seconds > 0 (status kTimedOut).
  template <class OnComplete>
  Phase arrive_and_wait(uint32_t true_count, uint32_t thread_count, uintptr_t site,
                        double timeout_seconds, const uint32_t* abort_flag,
                        OnComplete&& on_complete) {
    const uint32_t generation_now = __atomic_load_n(&generation_, __ATOMIC_ACQUIRE);
    const int slot = generation_now & 1;
    __atomic_fetch_add(&true_count_[slot], true_count, __ATOMIC_RELAXED);
    __atomic_fetch_add(&thread_count_[slot], thread_count, __ATOMIC_RELAXED);
    if (site != 0) {
      uintptr_t unset = 0;
      if (site == kSiteMismatch ||
          (!__atomic_compare_exchange_n(&site_[slot], &unset, site, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED) &&
           unset != site)) {
        __atomic_store_n(&sites_differ_[slot], 1u, __ATOMIC_RELAXED);
      }
    }
    const uint64_t after = __atomic_add_fetch(&state_, 1, __ATOMIC_ACQ_REL);
    Status status = kCompleted;
    if (arrived_of(after) == expected_of(after)) {
      on_complete();
      complete(generation_now, after);
    } else {
      status = wait_for_generation_change(generation_now, timeout_seconds, abort_flag);
    }
    return Phase{__atomic_load_n(&true_count_[slot], __ATOMIC_RELAXED),
                 __atomic_load_n(&thread_count_[slot], __ATOMIC_RELAXED),
                 __atomic_load_n(&sites_differ_[slot], __ATOMIC_RELAXED) != 0, status};
  }

  Phase arrive_and_wait(uint32_t true_count, uint32_t thread_count, uintptr_t site,
                        double timeout_seconds, const uint32_t* abort_flag) {
    return arrive_and_wait(true_count, thread_count, site, timeout_seconds, abort_flag, [] {});
  }

  // Leave the barrier until the next reset.
  void arrive_and_drop() {
    const uint32_t generation_now = __atomic_load_n(&generation_, __ATOMIC_ACQUIRE);
    const uint64_t after = __atomic_sub_fetch(&state_, uint64_t{1} << 32, __ATOMIC_ACQ_REL);
    if (arrived_of(after) != 0 && arrived_of(after) == expected_of(after)) {
      complete(generation_now, after);
    }
  }

 private:
  static uint32_t arrived_of(uint64_t state) { return static_cast<uint32_t>(state); }
  static uint32_t expected_of(uint64_t state) { return static_cast<uint32_t>(state >> 32); }

  void clear_slot(int slot) {
    __atomic_store_n(&true_count_[slot], 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&thread_count_[slot], 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&site_[slot], uintptr_t{0}, __ATOMIC_RELAXED);
    __atomic_store_n(&sites_differ_[slot], 0u, __ATOMIC_RELAXED);
  }

  void complete(uint32_t generation_now, uint64_t after) {
    clear_slot((generation_now + 1) & 1);
    __atomic_store_n(&state_, static_cast<uint64_t>(expected_of(after)) << 32, __ATOMIC_RELAXED);
    __atomic_store_n(&generation_, generation_now + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sleepers_, __ATOMIC_SEQ_CST) != 0) futex_wake_all(&generation_);
  }

  bool changed(uint32_t generation_now) const {
    return __atomic_load_n(&generation_, __ATOMIC_ACQUIRE) != generation_now;
  }

  Status wait_for_generation_change(uint32_t generation_now, double timeout_seconds,
                                    const uint32_t* abort_flag) {
    for (int spin = 0; spin < kBarrierSpinIterations; ++spin) {
      if (changed(generation_now)) return kCompleted;
      cpu_relax();
    }
    const double start = monotonic_seconds();
    while (!changed(generation_now)) {
      __atomic_fetch_add(&sleepers_, 1u, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(&generation_, __ATOMIC_SEQ_CST) == generation_now) {
        futex_wait_for(&generation_, generation_now, kBarrierSleepSliceNanoseconds);
      }
      __atomic_fetch_sub(&sleepers_, 1u, __ATOMIC_SEQ_CST);
      if (changed(generation_now)) return kCompleted;
      if (abort_flag != nullptr && __atomic_load_n(abort_flag, __ATOMIC_ACQUIRE) != 0) {
        return kAborted;
      }
      if (timeout_seconds > 0 && monotonic_seconds() - start > timeout_seconds) return kTimedOut;
    }
    return kCompleted;
  }

  uint64_t state_ = 0;
  uint32_t generation_ = 0;
  uint32_t sleepers_ = 0;
  uint32_t true_count_[2] = {0, 0};
  uint32_t thread_count_[2] = {0, 0};
  uintptr_t site_[2] = {0, 0};
  uint32_t sites_differ_[2] = {0, 0};
};

// ---------------------------------------------------------------------------
// GPU threads (fibers), warps and the worker threads that run them.
//
// A launch starts `worker_count` OS threads (at most one per core and one per
// warp). Warp w of every block belongs to worker w % worker_count, and each
// of its 32 threads is a fiber of that worker: workers run concurrently, and
// a worker switches between its fibers whenever one waits at __syncthreads or
// a warp intrinsic. Warp intrinsics therefore never cross OS threads, and a
// __syncthreads phase is one barrier among the workers.
// ---------------------------------------------------------------------------
enum class FiberState : unsigned char { kRunnable, kAtBarrier, kAtWarpOperation, kFinished };

//: Kinds of warp-level operation, to detect lanes meeting at different ones.
enum WarpOperation : uintptr_t {
  kWarpShuffle = 1,
  kWarpShuffleUp,
  kWarpShuffleDown,
  kWarpShuffleXor,
  kWarpVote,
  kWarpReduce,
  kWarpSync,
};

inline const char* warp_operation_name(uintptr_t operation) {
  switch (operation) {
    case kWarpShuffle: return "__shfl_sync";
    case kWarpShuffleUp: return "__shfl_up_sync";
    case kWarpShuffleDown: return "__shfl_down_sync";
    case kWarpShuffleXor: return "__shfl_xor_sync";
    case kWarpVote: return "__ballot_sync/__any_sync/__all_sync";
    case kWarpReduce: return "__reduce_*_sync";
    default: return "__syncwarp";
  }
}

struct Worker;
struct LaunchState;

struct Fiber {
  ExecutionContext context;
  unsigned char* stack = nullptr;
  Worker* worker = nullptr;
  unsigned rank = 0;  // linear thread index in the block
  unsigned warp = 0;
  unsigned lane = 0;
  uint3 thread_index{0, 0, 0};
  FiberState state = FiberState::kFinished;
  sigjmp_buf exit;  // where a failing GPU thread jumps to
};

struct WarpState {
  uint64_t exchange[2][kWarpSize];  // values published per lane, per phase slot
  Fiber* lanes[kWarpSize];
  uint32_t existing_lanes = 0;  // lanes that exist (a block's last warp may be partial)
  uint32_t live_lanes = 0;      // existing lanes that have not returned from the kernel
  uint32_t generation = 0;
  uint32_t arrived_lanes = 0;  // lanes waiting in the phase in progress
  uintptr_t operation = 0;     // operation of the phase in progress
  bool operations_differ = false;
  uint32_t completed_lanes[2] = {0, 0};  // per slot: lanes that took part
  bool completed_operations_differ[2] = {false, false};
};

struct BlockSyncResult {
  uint32_t true_count;    // threads whose predicate was non-zero
  uint32_t participants;  // threads that took part
};

struct Worker {
  LaunchState* launch = nullptr;
  unsigned index = 0;
  pthread_t thread{};
  bool thread_started = false;
  ExecutionContext scheduler;
  Fiber** fibers = nullptr;  // owned fibers, in rank order
  unsigned fiber_count = 0;
  unsigned* warps = nullptr;  // owned warps
  unsigned warp_count = 0;
  unsigned live_fibers = 0;
  // __syncthreads phase in progress on this worker
  unsigned at_barrier = 0;
  unsigned barrier_true = 0;
  uintptr_t barrier_site = 0;
  bool barrier_sites_differ = false;
  BlockSyncResult barrier_result{0, 0};
  bool barrier_result_sites_differ = false;
  // its GPU threads of the running block wait at a cluster barrier (gpuboost_cluster_sync())
  bool parked = false;
};

struct StaticSharedRange {
  unsigned char* address;
  size_t size;
};

inline StaticSharedRange* g_static_shared_ranges = nullptr;
inline size_t g_static_shared_range_count = 0;
//: One launch at a time per module: static shared memory and stacks are per module.
inline pthread_mutex_t g_launch_mutex = PTHREAD_MUTEX_INITIALIZER;

inline thread_local LaunchState* tls_launch = nullptr;
inline thread_local Fiber* tls_fiber = nullptr;

#if defined(GPUBOOST_EMU_INSTRUMENTED)
// Hooks of the instrumented flavour, defined in instrument.h.
inline void instrument_block_start(uint64_t linear_block, unsigned cluster_rank, bool resumed);
inline void instrument_cluster_barrier_completed();
inline const char* instrument_block_returned(unsigned cluster_rank);
inline void instrument_barrier_completed();
inline void instrument_warp_phase(WarpState& warp);
inline void instrument_worker_idle(Worker& worker);
inline unsigned char* instrument_dynamic_shared(unsigned char* fallback, unsigned cluster_rank);
inline void instrument_atomic(const void* address, uint32_t size, const void* pc);
#endif

struct LaunchState {
  dim3 grid;
  dim3 block;
  unsigned threads_per_block = 0;
  unsigned warps_per_block = 0;
  unsigned worker_count = 0;
  uint64_t total_blocks = 0;
  uint64_t next_block = 0;
  uint3 current_block{0, 0, 0};
  bool stop = false;
  double timeout_seconds = 0;

  unsigned char* dynamic_shared = nullptr;  // the running block's
  size_t dynamic_shared_bytes = 0;

  // Thread-block clusters: per rank of a cluster, its threads, warps, workers and
  // dynamic shared memory; fibers, warps, workers and dynamic_shared above point to
  // the running rank's. Without clusters, cluster_blocks is 1.
  unsigned cluster_blocks = 1;
  unsigned cluster_rank = 0;          // rank of the running block in its cluster
  uint64_t cluster_first_block = 0;   // linear index of the cluster's rank 0
  bool cluster_open = false;          // a cluster's blocks are in progress
  bool resuming = false;              // the running block resumes from a cluster barrier
  Fiber* rank_fibers[kMaxClusterBlocks] = {};
  WarpState* rank_warps[kMaxClusterBlocks] = {};
  Worker* rank_workers[kMaxClusterBlocks] = {};
  unsigned char* rank_shared[kMaxClusterBlocks] = {};
  bool rank_started[kMaxClusterBlocks] = {};
  bool rank_finished[kMaxClusterBlocks] = {};

  void (*run_kernel)(void*) = nullptr;
  void* kernel_call = nullptr;

  Barrier gate;           // all workers, between blocks
  Barrier block_barrier;  // __syncthreads, among the workers with live fibers
  Fiber* fibers = nullptr;
  WarpState* warps = nullptr;
  Worker* workers = nullptr;

  uint32_t failed = 0;
  pthread_mutex_t error_mutex = PTHREAD_MUTEX_INITIALIZER;
  char error_message[kErrorMessageCapacity + kErrorLocationCapacity] = {0};

  // Run by the last worker to reach the gate: set up the next block, or stop.
  void prepare_next_block();

  // Make rank `rank` of the current cluster the running block (poisoning its shared
  // memory when it starts).
  void select_rank(unsigned rank) {
    cluster_rank = rank;
    fibers = rank_fibers[rank];
    warps = rank_warps[rank];
    workers = rank_workers[rank];
    dynamic_shared = rank_shared[rank];
    const uint64_t linear = cluster_first_block + rank;
    current_block.x = static_cast<unsigned>(linear % grid.x);
    current_block.y = static_cast<unsigned>((linear / grid.x) % grid.y);
    current_block.z = static_cast<unsigned>(linear / (static_cast<uint64_t>(grid.x) * grid.y));
    resuming = rank_started[rank];
    if (!resuming) {
      rank_started[rank] = true;
      if (dynamic_shared_bytes != 0) {
        memset(dynamic_shared, kSharedPoisonByte, dynamic_shared_bytes);
      }
      for (size_t range = 0; range < g_static_shared_range_count; ++range) {
        memset(g_static_shared_ranges[range].address, kSharedPoisonByte,
               g_static_shared_ranges[range].size);
      }
    }
    for (unsigned index = 0; index < worker_count; ++index) workers[index].parked = false;
    GPUBOOST_EMU_HOOK(instrument_block_start(linear, rank, resuming));
    block_barrier.reset(worker_count);
  }

  // Keep the first failure of the launch; `with_thread` adds the current GPU thread.
  void record_error(const char* message, bool with_thread) {
    pthread_mutex_lock(&error_mutex);
    if (__atomic_load_n(&failed, __ATOMIC_RELAXED) == 0) {
      if (with_thread) {
        snprintf(error_message, sizeof(error_message),
                 "%s [block (%u, %u, %u), thread (%u, %u, %u)]", message, blockIdx.x,
                 blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
      } else {
        snprintf(error_message, sizeof(error_message), "%s [block (%u, %u, %u)]", message,
                 blockIdx.x, blockIdx.y, blockIdx.z);
      }
      __atomic_store_n(&failed, 1u, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&error_mutex);
  }

  bool has_failed() const { return __atomic_load_n(&failed, __ATOMIC_ACQUIRE) != 0; }
};

// A cluster runs in phases: every block of it that has not returned runs, in rank order,
// until it returns or waits at a cluster barrier; once each waits there, the next phase
// resumes them. A plain launch is a cluster of one block per cluster.
inline void LaunchState::prepare_next_block() {
  if (has_failed()) {
    stop = true;
    return;
  }
  if (cluster_open) {
    bool parked = false;
    for (unsigned index = 0; index < worker_count; ++index) parked |= workers[index].parked;
    rank_finished[cluster_rank] = !parked;
#if defined(GPUBOOST_EMU_INSTRUMENTED)
    if (!parked) {
      const char* hazard = instrument_block_returned(cluster_rank);
      if (hazard != nullptr) {
        record_error(hazard, false);
        stop = true;
        return;
      }
    }
#endif
    for (unsigned rank = cluster_rank + 1; rank < cluster_blocks; ++rank) {
      if (!rank_finished[rank]) {
        select_rank(rank);
        return;
      }
    }
    unsigned waiting = 0;
    for (unsigned rank = 0; rank < cluster_blocks; ++rank) waiting += rank_finished[rank] ? 0 : 1;
    if (waiting != 0) {
      if (waiting != cluster_blocks) {
        char message[kErrorMessageCapacity];
        snprintf(message, sizeof(message),
                 "cluster barrier: %u of the %u blocks of the cluster starting at linear block "
                 "%llu returned from the kernel while the others wait at gpuboost_cluster_sync(); every "
                 "block of a cluster must reach the same cluster barriers",
                 cluster_blocks - waiting, cluster_blocks,
                 static_cast<unsigned long long>(cluster_first_block));
        record_error(message, false);
        stop = true;
        return;
      }
      GPUBOOST_EMU_HOOK(instrument_cluster_barrier_completed());
      select_rank(0);
      return;
    }
    cluster_open = false;
  }
  if (next_block == total_blocks) {
    stop = true;
    return;
  }
  cluster_first_block = next_block;
  next_block += cluster_blocks;
  for (unsigned rank = 0; rank < cluster_blocks; ++rank) {
    rank_started[rank] = false;
    rank_finished[rank] = false;
  }
  cluster_open = true;
  select_rank(0);
}

// Record the failure (the first one of a launch wins) and leave the kernel.
[[noreturn]] inline void fail_thread(const char* format, ...)
    __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fail_thread(const char* format, ...) {
  char message[kErrorMessageCapacity];
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(message, sizeof(message), format, arguments);
  va_end(arguments);
  if (tls_launch == nullptr || tls_fiber == nullptr) {  // not inside an emulated launch
    fprintf(stderr, "gpuboost emulation: %s\n", message);
    abort();
  }
  tls_launch->record_error(message, true);
  siglongjmp(tls_fiber->exit, 1);
}

// Leave the kernel quietly when another GPU thread already failed the launch.
inline void check_launch_alive() {
  if (tls_launch->has_failed()) siglongjmp(tls_fiber->exit, 1);
}

inline void yield_to_worker(Fiber& fiber) { switch_context(fiber.context, fiber.worker->scheduler); }

inline void complete_warp_phase(WarpState& warp) {
  GPUBOOST_EMU_HOOK(instrument_warp_phase(warp));
  const int slot = warp.generation & 1;
  warp.completed_lanes[slot] = warp.arrived_lanes;
  warp.completed_operations_differ[slot] = warp.operations_differ;
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    Fiber* fiber = warp.lanes[lane];
    if ((warp.arrived_lanes & (1u << lane)) != 0 && fiber->state == FiberState::kAtWarpOperation) {
      fiber->state = FiberState::kRunnable;
    }
  }
  warp.arrived_lanes = 0;
  warp.operations_differ = false;
  ++warp.generation;
}

// The GPU thread returned from the kernel (or left it after a failure).
inline void fiber_returned(Fiber& fiber) {
  fiber.state = FiberState::kFinished;
  --fiber.worker->live_fibers;
  WarpState& warp = fiber.worker->launch->warps[fiber.warp];
  warp.live_lanes &= ~(1u << fiber.lane);
  if (warp.arrived_lanes != 0 && warp.arrived_lanes == warp.live_lanes) complete_warp_phase(warp);
}

inline void fiber_entry() {
  {
    Fiber* fiber = tls_fiber;
    LaunchState* launch = fiber->worker->launch;
    if (sigsetjmp(fiber->exit, 0) == 0) launch->run_kernel(launch->kernel_call);
  }
  Fiber* fiber = tls_fiber;  // re-read: locals do not survive siglongjmp
  fiber_returned(*fiber);
  yield_to_worker(*fiber);  // never resumed
  abort();
}

inline void resume(Worker& worker, Fiber& fiber) {
  tls_fiber = &fiber;
  threadIdx = fiber.thread_index;
  switch_context(worker.scheduler, fiber.context);
  tls_fiber = nullptr;
}

// Wake every waiting fiber of the worker; they see the failed launch and leave.
inline void release_waiting_fibers(Worker& worker) {
  for (unsigned index = 0; index < worker.fiber_count; ++index) {
    Fiber& fiber = *worker.fibers[index];
    if (fiber.state == FiberState::kAtBarrier || fiber.state == FiberState::kAtWarpOperation) {
      fiber.state = FiberState::kRunnable;
    }
  }
}

inline void report_deadlock(Worker& worker) {
  LaunchState& launch = *worker.launch;
  for (unsigned index = 0; index < worker.fiber_count; ++index) {
    const Fiber& fiber = *worker.fibers[index];
    if (fiber.state != FiberState::kAtWarpOperation) continue;
    const WarpState& warp = launch.warps[fiber.warp];
    char message[kErrorMessageCapacity];
    snprintf(message, sizeof(message),
             "deadlock: in warp %u, lanes 0x%08x wait in %s while the other running lanes "
             "0x%08x wait at __syncthreads (divergent warp intrinsic or barrier)",
             fiber.warp, warp.arrived_lanes, warp_operation_name(warp.operation),
             warp.live_lanes & ~warp.arrived_lanes);
    launch.record_error(message, false);
    return;
  }
  launch.record_error("deadlock between __syncthreads and warp intrinsics", false);
}

// Run the worker's GPU threads of the current block to completion.
// A block resumed after a cluster barrier continues its parked GPU threads.
inline void run_block(Worker& worker) {
  LaunchState& launch = *worker.launch;
  if (launch.resuming) {
    release_waiting_fibers(worker);
  } else {
    for (unsigned index = 0; index < worker.warp_count; ++index) {
      WarpState& warp = launch.warps[worker.warps[index]];
      warp.live_lanes = warp.existing_lanes;
      warp.arrived_lanes = 0;
      warp.operations_differ = false;
    }
    worker.live_fibers = worker.fiber_count;
    worker.at_barrier = 0;
    worker.barrier_true = 0;
    worker.barrier_sites_differ = false;
    for (unsigned index = 0; index < worker.fiber_count; ++index) {
      Fiber& fiber = *worker.fibers[index];
      fiber.state = FiberState::kRunnable;
      if (!start_context(fiber.context, fiber.stack, kFiberStackBytes, fiber_entry)) {
        launch.record_error("could not create a GPU thread context", false);
        fiber_returned(fiber);
      }
    }
  }
  while (worker.live_fibers != 0) {
    bool ran = false;
    for (unsigned index = 0; index < worker.fiber_count; ++index) {
      Fiber& fiber = *worker.fibers[index];
      if (fiber.state == FiberState::kRunnable) {
        resume(worker, fiber);
        ran = true;
      }
    }
    if (ran || worker.live_fibers == 0) continue;
    if (worker.at_barrier != worker.live_fibers) {
      report_deadlock(worker);
      release_waiting_fibers(worker);
      continue;
    }
    const uintptr_t site = worker.barrier_sites_differ ? kSiteMismatch : worker.barrier_site;
    GPUBOOST_EMU_HOOK(instrument_worker_idle(worker));
    const Barrier::Phase phase = launch.block_barrier.arrive_and_wait(
        worker.barrier_true, worker.at_barrier, site, launch.timeout_seconds, &launch.failed,
        [] { GPUBOOST_EMU_HOOK(instrument_barrier_completed()); });
    if (phase.status == Barrier::kTimedOut) {
      // Reported at once as well: if another worker's GPU thread loops forever,
      // the launch can never return.
      char message[kErrorMessageCapacity];
      snprintf(message, sizeof(message),
               "__syncthreads waited more than %.1f s (GPUBOOST_EMULATION_TIMEOUT) for "
               "other threads of the block: a GPU thread seems stuck in a loop",
               launch.timeout_seconds);
      fprintf(stderr, "gpuboost emulation: %s [block (%u, %u, %u)]\n", message, blockIdx.x,
              blockIdx.y, blockIdx.z);
      launch.record_error(message, false);
    }
    worker.barrier_result = BlockSyncResult{phase.true_count, phase.thread_count};
    worker.barrier_result_sites_differ = phase.sites_differ;
    worker.at_barrier = 0;
    worker.barrier_true = 0;
    worker.barrier_sites_differ = false;
    if (phase.status == Barrier::kCompleted && !phase.sites_differ && site != kSiteMismatch &&
        (site & kClusterSiteBit) != 0 && !launch.has_failed()) {
      worker.parked = true;  // the block's threads wait for the rest of the cluster
      return;
    }
    release_waiting_fibers(worker);
  }
  GPUBOOST_EMU_HOOK(instrument_worker_idle(worker));
  launch.block_barrier.arrive_and_drop();
}

// `first` is the worker's state for rank 0 of a cluster; each block runs with the
// worker of the same index among its rank's.
inline void run_worker(Worker& first) {
  LaunchState& launch = *first.launch;
  const unsigned index = first.index;
  tls_launch = &launch;
  blockDim = launch.block;
  gridDim = launch.grid;
  for (;;) {
    launch.gate.arrive_and_wait(0, 0, 0, 0.0, nullptr, [&] { launch.prepare_next_block(); });
    if (launch.stop) break;
    blockIdx = launch.current_block;
    run_block(launch.workers[index]);
  }
  tls_launch = nullptr;
}

inline void* worker_thread_main(void* argument) {
  run_worker(*static_cast<Worker*>(argument));
  return nullptr;
}

inline void copy_message(char* destination, uint64_t capacity, const char* message) {
  if (destination != nullptr && capacity != 0) snprintf(destination, capacity, "%s", message);
}

// Storage of one launch; released by the destructor.
struct LaunchStorage {
  Fiber* fibers = nullptr;
  Fiber** fiber_lists = nullptr;
  WarpState* warps = nullptr;
  unsigned* warp_lists = nullptr;
  Worker* workers = nullptr;
  unsigned char* dynamic_shared = nullptr;
  ~LaunchStorage() {
    delete[] fibers;
    delete[] fiber_lists;
    delete[] warps;
    delete[] warp_lists;
    delete[] workers;
    free(dynamic_shared);
  }
};

// CPUs this process may run on (respects taskset / cpusets, unlike the online count).
inline unsigned default_worker_count() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
    return static_cast<unsigned>(CPU_COUNT(&allowed));
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<unsigned>(online) : 1u;
}

// Run `run_kernel(kernel_call)` on a grid x block launch with `requested_workers`
// OS threads (0: one per core), at most one per warp; blocks in clusters of
// `cluster_blocks` along x (1: no clusters).
inline int run_launch(void (*run_kernel)(void*), void* kernel_call, const uint32_t* grid,
                      const uint32_t* block, uint64_t dynamic_shared_bytes,
                      uint32_t cluster_blocks, double timeout_seconds,
                      uint32_t requested_workers, char* error_message, uint64_t error_capacity) {
  LaunchState launch;
  LaunchStorage storage;
  if (cluster_blocks == 0 || cluster_blocks > kMaxClusterBlocks || grid[0] % cluster_blocks != 0) {
    char message[kErrorMessageCapacity];
    snprintf(message, sizeof(message),
             "a cluster of %u blocks: the size must be 1..%u and divide the grid's x "
             "dimension (%u)",
             cluster_blocks, kMaxClusterBlocks, grid[0]);
    copy_message(error_message, error_capacity, message);
    return kLaunchSetupFailed;
  }
  launch.grid = dim3(grid[0], grid[1], grid[2]);
  launch.block = dim3(block[0], block[1], block[2]);
  launch.threads_per_block = block[0] * block[1] * block[2];
  launch.warps_per_block = (launch.threads_per_block + kWarpSize - 1) / kWarpSize;
  const unsigned wanted_workers = requested_workers != 0 ? requested_workers : default_worker_count();
  launch.worker_count = wanted_workers < launch.warps_per_block ? wanted_workers : launch.warps_per_block;
  launch.total_blocks = static_cast<uint64_t>(grid[0]) * grid[1] * grid[2];
  launch.timeout_seconds = timeout_seconds;
  launch.run_kernel = run_kernel;
  launch.kernel_call = kernel_call;
  launch.dynamic_shared_bytes = dynamic_shared_bytes;
  launch.cluster_blocks = cluster_blocks;

  const unsigned ranks = cluster_blocks;
  const size_t threads = launch.threads_per_block;
  const size_t buffer_bytes = (dynamic_shared_bytes / kDynamicSharedAlignment + 1) *
                              kDynamicSharedAlignment;
  storage.dynamic_shared = static_cast<unsigned char*>(
      aligned_alloc(kDynamicSharedAlignment, buffer_bytes * ranks));
  storage.fibers = new (std::nothrow) Fiber[threads * ranks];
  storage.fiber_lists = new (std::nothrow) Fiber*[threads * ranks];
  storage.warps = new (std::nothrow) WarpState[launch.warps_per_block * ranks];
  storage.warp_lists = new (std::nothrow) unsigned[launch.warps_per_block * ranks];
  storage.workers = new (std::nothrow) Worker[launch.worker_count * ranks];
  if (storage.dynamic_shared == nullptr || storage.fibers == nullptr ||
      storage.fiber_lists == nullptr || storage.warps == nullptr ||
      storage.warp_lists == nullptr || storage.workers == nullptr) {
    copy_message(error_message, error_capacity, "out of memory while setting up the launch");
    return kLaunchSetupFailed;
  }

  pthread_mutex_lock(&g_launch_mutex);
  if (!ensure_fiber_stacks(threads * ranks)) {
    pthread_mutex_unlock(&g_launch_mutex);
    copy_message(error_message, error_capacity, "could not map stacks for the GPU threads");
    return kLaunchSetupFailed;
  }

  // Per rank of a cluster: threads, warps and their assignment to workers
  // (warp w -> worker w % workers).
  for (unsigned rank = 0; rank < ranks; ++rank) {
    Fiber* fibers = storage.fibers + rank * threads;
    WarpState* warps = storage.warps + rank * launch.warps_per_block;
    Worker* workers = storage.workers + rank * launch.worker_count;
    launch.rank_fibers[rank] = fibers;
    launch.rank_warps[rank] = warps;
    launch.rank_workers[rank] = workers;
    launch.rank_shared[rank] = storage.dynamic_shared + rank * buffer_bytes;
#if defined(GPUBOOST_EMU_INSTRUMENTED)
    launch.rank_shared[rank] = instrument_dynamic_shared(launch.rank_shared[rank], rank);
#endif
    for (unsigned thread = 0; thread < threads; ++thread) {
      Fiber& fiber = fibers[thread];
      fiber.rank = thread;
      fiber.warp = thread / kWarpSize;
      fiber.lane = thread % kWarpSize;
      fiber.stack = fiber_stack(rank * threads + thread);
      fiber.thread_index.x = thread % block[0];
      fiber.thread_index.y = (thread / block[0]) % block[1];
      fiber.thread_index.z = thread / (block[0] * block[1]);
      warps[fiber.warp].lanes[fiber.lane] = &fiber;
    }
    for (unsigned warp = 0; warp < launch.warps_per_block; ++warp) {
      const unsigned remaining = launch.threads_per_block - warp * kWarpSize;
      WarpState& state = warps[warp];
      state.existing_lanes = remaining >= kWarpSize ? kFullWarpMask : (1u << remaining) - 1u;
      for (unsigned lane = remaining; lane < kWarpSize; ++lane) state.lanes[lane] = nullptr;
    }
    Fiber** fiber_lists = storage.fiber_lists + rank * threads;
    unsigned* warp_lists = storage.warp_lists + rank * launch.warps_per_block;
    unsigned next_fiber = 0;
    unsigned next_warp = 0;
    for (unsigned index = 0; index < launch.worker_count; ++index) {
      Worker& worker = workers[index];
      worker.launch = &launch;
      worker.index = index;
      worker.fibers = fiber_lists + next_fiber;
      worker.warps = warp_lists + next_warp;
      for (unsigned warp = index; warp < launch.warps_per_block; warp += launch.worker_count) {
        worker.warps[worker.warp_count++] = warp;
        for (unsigned lane = 0; lane < kWarpSize; ++lane) {
          Fiber* fiber = warps[warp].lanes[lane];
          if (fiber == nullptr) continue;
          fiber->worker = &worker;
          worker.fibers[worker.fiber_count++] = fiber;
        }
      }
      next_fiber += worker.fiber_count;
      next_warp += worker.warp_count;
    }
  }
  launch.fibers = launch.rank_fibers[0];
  launch.warps = launch.rank_warps[0];
  launch.workers = launch.rank_workers[0];
  launch.dynamic_shared = launch.rank_shared[0];
  launch.gate.reset(launch.worker_count);

  // Worker 0 runs on the calling thread, the others on new OS threads.
  int status = kLaunchOk;
  unsigned started = 1;
  Worker* const first_workers = launch.rank_workers[0];  // the OS threads' handles
  for (; started < launch.worker_count; ++started) {
    Worker& worker = first_workers[started];
    if (pthread_create(&worker.thread, nullptr, worker_thread_main, &worker) != 0) break;
    worker.thread_started = true;
  }
  if (started != launch.worker_count) {
    launch.record_error("could not start the worker threads of the launch", false);
    for (unsigned missing = started; missing < launch.worker_count; ++missing) {
      launch.gate.arrive_and_drop();
    }
    status = kLaunchSetupFailed;
  }
  const dim3 saved_block_dim = blockDim;
  const dim3 saved_grid_dim = gridDim;
  run_worker(first_workers[0]);
  blockDim = saved_block_dim;
  gridDim = saved_grid_dim;
  for (unsigned index = 1; index < launch.worker_count; ++index) {
    if (first_workers[index].thread_started) pthread_join(first_workers[index].thread, nullptr);
  }
  pthread_mutex_unlock(&g_launch_mutex);
  fflush(stdout);

  if (status == kLaunchOk && launch.has_failed()) status = kLaunchKernelFailed;
  if (status != kLaunchOk) copy_message(error_message, error_capacity, launch.error_message);
  return status;
}

// ---------------------------------------------------------------------------
// Kernel signatures and argument unpacking (used by the generated entry points).
// ---------------------------------------------------------------------------
template <class T>
constexpr char type_kind() {
  if constexpr (std::is_void_v<T>) return 'v';
  else if constexpr (std::is_same_v<T, bool>) return 'b';
  else if constexpr (std::is_floating_point_v<T>) return 'f';
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return 'i';
  else if constexpr (std::is_integral_v<T>) return 'u';
  else return 'x';
}

template <class T>
constexpr size_t type_bits() {
  if constexpr (std::is_void_v<T>) return 0;
  else return sizeof(T) * CHAR_BIT;
}

// Append the code of one parameter type: S<kind><bits> for a value,
// P<kind><bits>[c] for a pointer (c: the pointee is const), X<bytes> otherwise.
template <class T>
void append_parameter_code(char* out, size_t capacity) {
  char code[32];
  if constexpr (std::is_pointer_v<T>) {
    using Pointee = std::remove_pointer_t<T>;
    using Bare = std::remove_cv_t<Pointee>;
    if constexpr (type_kind<Bare>() == 'x') {
      snprintf(code, sizeof(code), "X%zu", sizeof(T));
    } else {
      snprintf(code, sizeof(code), "P%c%zu%s", type_kind<Bare>(), type_bits<Bare>(),
               std::is_const_v<Pointee> ? "c" : "");
    }
  } else if constexpr (type_kind<T>() != 'x' && type_kind<T>() != 'v') {
    snprintf(code, sizeof(code), "S%c%zu", type_kind<T>(), type_bits<T>());
  } else {
    snprintf(code, sizeof(code), "X%zu", sizeof(T));
  }
  const size_t used = strlen(out);
  snprintf(out + used, capacity - used, "%s%s", used == 0 ? "" : ",", code);
}

//: Capacity of a kernel's signature string.
constexpr size_t kSignatureCapacity = 1024;

template <class... Params>
const char* kernel_signature(void (*)(Params...)) {
  static char signature[kSignatureCapacity] = {0};
  if (signature[0] == 0) {
    (append_parameter_code<Params>(signature, sizeof(signature)), ...);
  }
  return signature;
}

template <class... Params, size_t... Index>
void invoke_kernel(void (*kernel)(Params...), void** arguments, std::index_sequence<Index...>) {
  kernel(*static_cast<std::remove_cv_t<Params>*>(arguments[Index])...);
}

template <class... Params>
int launch_kernel(void (*kernel)(Params...), const uint32_t* grid, const uint32_t* block,
                  uint64_t dynamic_shared_bytes, uint32_t cluster_blocks,
                  double timeout_seconds, uint32_t workers, void** arguments,
                  char* error_message, uint64_t error_capacity) {
  struct Call {
    void (*kernel)(Params...);
    void** arguments;
  };
  Call call{kernel, arguments};
  auto run = [](void* pointer) {
    Call* target = static_cast<Call*>(pointer);
    invoke_kernel(target->kernel, target->arguments, std::index_sequence_for<Params...>{});
  };
  return run_launch(run, &call, grid, block, dynamic_shared_bytes, cluster_blocks,
                    timeout_seconds, workers, error_message, error_capacity);
}

// ---------------------------------------------------------------------------
// Block-level synchronisation.
// ---------------------------------------------------------------------------
inline unsigned char* dynamic_shared_memory() {
  if (tls_launch == nullptr) fail_thread("dynamic shared memory used outside a kernel launch");
  return tls_launch->dynamic_shared;
}

// `site_bits`: kClusterSiteBit for a cluster barrier (gpuboost_cluster_sync()), else 0.
inline BlockSyncResult block_sync(int predicate, int line, uintptr_t site_bits = 0) {
  check_launch_alive();
  Fiber& fiber = *tls_fiber;
  Worker& worker = *fiber.worker;
  const uintptr_t site = static_cast<uintptr_t>(line) | site_bits;
  if (worker.at_barrier == 0) {
    worker.barrier_site = site;
  } else if (worker.barrier_site != site) {
    worker.barrier_sites_differ = true;
  }
  ++worker.at_barrier;
  worker.barrier_true += predicate != 0;
  fiber.state = FiberState::kAtBarrier;
  yield_to_worker(fiber);
  check_launch_alive();
  if (worker.barrier_result_sites_differ) {
    fail_thread("divergent __syncthreads: threads of the block met at different __syncthreads "
                "or gpuboost_cluster_sync() calls (this one %s at line %d); every thread must reach the "
                "same barrier", site_bits != 0 ? "gpuboost_cluster_sync()" : "__syncthreads", line);
  }
  return worker.barrier_result;
}

// ---------------------------------------------------------------------------
// Thread-block clusters: the runtime of common.cuh's gpuboost_cluster_* helpers.
// ---------------------------------------------------------------------------
inline unsigned cluster_blocks() {
  if (tls_launch == nullptr) fail_thread("a cluster query outside a kernel launch");
  return tls_launch->cluster_blocks;
}

inline unsigned cluster_block_rank() {
  if (tls_launch == nullptr) fail_thread("a cluster query outside a kernel launch");
  return tls_launch->cluster_rank;
}

// The address at the same offset of block `rank`'s dynamic shared memory as `address`
// in the calling block's (the emulation maps only dynamic shared memory).
inline void* cluster_map_shared(const void* address, unsigned rank, int line) {
  check_launch_alive();
  const LaunchState& launch = *tls_launch;
  if (rank >= launch.cluster_blocks) {
    fail_thread("gpuboost_cluster_shared at line %d: rank %u, but the cluster has %u blocks",
                line, rank, launch.cluster_blocks);
  }
  const uintptr_t offset =
      reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(launch.dynamic_shared);
  if (offset > launch.dynamic_shared_bytes) {
    fail_thread("gpuboost_cluster_shared at line %d: the address is not in the block's dynamic "
                "shared memory (the emulation maps only `extern __shared__` memory)",
                line);
  }
  return launch.rank_shared[rank] + offset;
}

// ---------------------------------------------------------------------------
// Warp-level exchange: every lane publishes 8 bytes, then may read any lane's.
// ---------------------------------------------------------------------------
struct WarpExchange {
  const uint64_t* values;  // the phase's published values, indexed by lane
  uint32_t participants;   // lanes that took part
  unsigned lane;
};

inline WarpExchange warp_exchange(unsigned mask, uint64_t value, WarpOperation operation) {
  check_launch_alive();
  Fiber& fiber = *tls_fiber;
  WarpState& warp = tls_launch->warps[fiber.warp];
  const uint32_t lane_bit = 1u << fiber.lane;
  if ((mask & lane_bit) == 0) {
    fail_thread("%s called by lane %u with mask 0x%08x that does not name the lane",
                warp_operation_name(operation), fiber.lane, mask);
  }
  const int slot = warp.generation & 1;
  warp.exchange[slot][fiber.lane] = value;
  if (warp.arrived_lanes == 0) {
    warp.operation = operation;
  } else if (warp.operation != operation) {
    warp.operations_differ = true;
  }
  warp.arrived_lanes |= lane_bit;
  if (warp.arrived_lanes == warp.live_lanes) {
    complete_warp_phase(warp);
  } else {
    fiber.state = FiberState::kAtWarpOperation;
    yield_to_worker(fiber);
    check_launch_alive();
  }
  if (warp.completed_operations_differ[slot]) {
    fail_thread("lanes of warp %u met at different warp intrinsics (this one %s)", fiber.warp,
                warp_operation_name(operation));
  }
  const uint32_t participants = warp.completed_lanes[slot];
  const uint32_t expected_lanes = mask & warp.existing_lanes;
  if (participants != expected_lanes) {
    fail_thread("%s with mask 0x%08x: lanes 0x%08x took part but the mask names lanes 0x%08x "
                "of this warp. The emulation needs every lane named in the mask to execute the "
                "intrinsic, and every lane still running to be named (no divergent warp "
                "intrinsics, no lanes that returned early)",
                warp_operation_name(operation), mask, participants, expected_lanes);
  }
  return WarpExchange{warp.exchange[slot], participants, fiber.lane};
}

template <class T>
inline uint64_t to_exchange_bits(T value) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(uint64_t),
                "warp shuffles take values of at most 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &value, sizeof(T));
  return bits;
}

template <class T>
inline T from_exchange_bits(uint64_t bits) {
  T value;
  memcpy(&value, &bits, sizeof(T));
  return value;
}

inline void check_shuffle_width(int width, WarpOperation operation) {
  if (width <= 0 || width > static_cast<int>(kWarpSize) || (width & (width - 1)) != 0) {
    fail_thread("%s: width %d is not a power of two in [1, 32]", warp_operation_name(operation),
                width);
  }
}

// Read lane `source` of the exchange, or the own value when `source` is < 0.
template <class T>
inline T shuffle_result(const WarpExchange& exchange, int source, T own,
                        WarpOperation operation) {
  if (source < 0) return own;
  if ((exchange.participants & (1u << source)) == 0) {
    fail_thread("%s: lane %u reads lane %d, which did not take part (it is not in the mask or "
                "does not exist in this partial warp)",
                warp_operation_name(operation), exchange.lane, source);
  }
  return from_exchange_bits<T>(exchange.values[source]);
}

template <class T>
inline T shuffle_sync(unsigned mask, T value, int source_lane, int width) {
  check_shuffle_width(width, kWarpShuffle);
  const WarpExchange exchange = warp_exchange(mask, to_exchange_bits(value), kWarpShuffle);
  const int segment = static_cast<int>(exchange.lane) & ~(width - 1);
  return shuffle_result(exchange, segment + (source_lane & (width - 1)), value, kWarpShuffle);
}

template <class T>
inline T shuffle_up_sync(unsigned mask, T value, unsigned delta, int width) {
  check_shuffle_width(width, kWarpShuffleUp);
  const WarpExchange exchange = warp_exchange(mask, to_exchange_bits(value), kWarpShuffleUp);
  const int in_segment = static_cast<int>(exchange.lane) & (width - 1);
  const int source = in_segment >= static_cast<int>(delta)
                         ? static_cast<int>(exchange.lane) - static_cast<int>(delta)
                         : -1;
  return shuffle_result(exchange, source, value, kWarpShuffleUp);
}

template <class T>
inline T shuffle_down_sync(unsigned mask, T value, unsigned delta, int width) {
  check_shuffle_width(width, kWarpShuffleDown);
  const WarpExchange exchange = warp_exchange(mask, to_exchange_bits(value), kWarpShuffleDown);
  const int in_segment = static_cast<int>(exchange.lane) & (width - 1);
  const int source = in_segment + static_cast<int>(delta) < width
                         ? static_cast<int>(exchange.lane) + static_cast<int>(delta)
                         : -1;
  return shuffle_result(exchange, source, value, kWarpShuffleDown);
}

template <class T>
inline T shuffle_xor_sync(unsigned mask, T value, int lane_mask, int width) {
  check_shuffle_width(width, kWarpShuffleXor);
  const WarpExchange exchange = warp_exchange(mask, to_exchange_bits(value), kWarpShuffleXor);
  const int lane = static_cast<int>(exchange.lane);
  const int source = lane ^ (lane_mask & static_cast<int>(kWarpSize - 1));
  const int segment_end = (lane & ~(width - 1)) + width;
  return shuffle_result(exchange, source < segment_end ? source : -1, value, kWarpShuffleXor);
}

struct WarpVote {
  unsigned ballot;        // lanes whose predicate is true
  unsigned participants;  // lanes that voted
};

inline WarpVote warp_vote(unsigned mask, int predicate) {
  const WarpExchange exchange = warp_exchange(mask, predicate != 0, kWarpVote);
  unsigned ballot = 0;
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    if ((exchange.participants & (1u << lane)) != 0 && exchange.values[lane] != 0) {
      ballot |= 1u << lane;
    }
  }
  return WarpVote{ballot, exchange.participants};
}

template <class T, class Combine>
inline T warp_reduce(unsigned mask, T value, Combine combine) {
  const WarpExchange exchange = warp_exchange(mask, to_exchange_bits(value), kWarpReduce);
  bool first = true;
  T result = value;
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    if ((exchange.participants & (1u << lane)) == 0) continue;
    const T lane_value = from_exchange_bits<T>(exchange.values[lane]);
    result = first ? lane_value : combine(result, lane_value);
    first = false;
  }
  return result;
}

inline unsigned current_live_lanes() {
  check_launch_alive();
  return tls_launch->warps[tls_fiber->warp].live_lanes;
}
// ---------------------------------------------------------------------------
// Atomics (relaxed, like CUDA's). Floating-point and min/max use a CAS loop.
// ---------------------------------------------------------------------------
template <class T, class Update>
GPUBOOST_EMU_RUNTIME inline T atomic_update(T* address, Update update) {
  T expected;
  __atomic_load(address, &expected, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = update(expected);
  } while (!__atomic_compare_exchange(address, &expected, &desired, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED));
  return expected;
}

template <class T>
GPUBOOST_EMU_RUNTIME inline T atomic_add(T* address, T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return atomic_update(address, [value](T old) { return old + value; });
  } else {
    return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
  }
}

template <class T>
GPUBOOST_EMU_RUNTIME inline T atomic_max(T* address, T value) {
  return atomic_update(address, [value](T old) { return old < value ? value : old; });
}

template <class T>
GPUBOOST_EMU_RUNTIME inline T atomic_min(T* address, T value) {
  return atomic_update(address, [value](T old) { return value < old ? value : old; });
}

template <class T>
GPUBOOST_EMU_RUNTIME inline T atomic_cas(T* address, T compare, T value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
  return compare;
}

template <class T>
GPUBOOST_EMU_RUNTIME inline T atomic_exchange(T* address, T value) {
  T previous;
  __atomic_exchange(address, &value, &previous, __ATOMIC_RELAXED);
  return previous;
}

}  // namespace gpuboost_emu

// ---------------------------------------------------------------------------
// Device-side failures: assert (also when a kernel re-includes <assert.h>,
// whose assert calls __assert_fail, defined here with hidden visibility) and
// __trap.
// ---------------------------------------------------------------------------
extern "C" void __assert_fail(const char* assertion, const char* file, unsigned int line,
                              const char* function) noexcept {
  gpuboost_emu::fail_thread("device-side assertion `%s` failed at %s:%u in %s", assertion, file,
                            line, function);
}

[[noreturn]] inline void __trap() { gpuboost_emu::fail_thread("__trap() called"); }
[[noreturn]] inline void __brkpt() { gpuboost_emu::fail_thread("__brkpt() called"); }

// ---------------------------------------------------------------------------
// Synchronisation intrinsics.
// ---------------------------------------------------------------------------
#define __syncthreads() (static_cast<void>(::gpuboost_emu::block_sync(0, __LINE__)))
#define __syncthreads_count(predicate) \
  (static_cast<int>(::gpuboost_emu::block_sync((predicate), __LINE__).true_count))
#define __syncthreads_and(predicate)                                             \
  ([](const ::gpuboost_emu::BlockSyncResult& result_) {                          \
    return static_cast<int>(result_.true_count == result_.participants);         \
  }(::gpuboost_emu::block_sync((predicate), __LINE__)))
#define __syncthreads_or(predicate) \
  (static_cast<int>(::gpuboost_emu::block_sync((predicate), __LINE__).true_count != 0))

inline void __syncwarp(unsigned mask = gpuboost_emu::kFullWarpMask) {
  gpuboost_emu::warp_exchange(mask, 0, gpuboost_emu::kWarpSync);
}

inline unsigned __activemask() { return gpuboost_emu::current_live_lanes(); }

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

template <class T>
inline T __shfl_sync(unsigned mask, T value, int source_lane, int width = warpSize) {
  return gpuboost_emu::shuffle_sync(mask, value, source_lane, width);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  return gpuboost_emu::shuffle_up_sync(mask, value, delta, width);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  return gpuboost_emu::shuffle_down_sync(mask, value, delta, width);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = warpSize) {
  return gpuboost_emu::shuffle_xor_sync(mask, value, lane_mask, width);
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return gpuboost_emu::warp_vote(mask, predicate).ballot;
}
inline int __any_sync(unsigned mask, int predicate) {
  return gpuboost_emu::warp_vote(mask, predicate).ballot != 0;
}
inline int __all_sync(unsigned mask, int predicate) {
  const gpuboost_emu::WarpVote vote = gpuboost_emu::warp_vote(mask, predicate);
  return vote.ballot == vote.participants;
}
inline int __uni_sync(unsigned mask, int predicate) {
  const gpuboost_emu::WarpVote vote = gpuboost_emu::warp_vote(mask, predicate);
  return vote.ballot == 0 || vote.ballot == vote.participants;
}

inline unsigned __reduce_add_sync(unsigned mask, unsigned value) {
  return gpuboost_emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a + b; });
}
inline int __reduce_add_sync(unsigned mask, int value) {
  return static_cast<int>(__reduce_add_sync(mask, static_cast<unsigned>(value)));
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned value) {
  return gpuboost_emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a < b ? a : b; });
}
inline int __reduce_min_sync(unsigned mask, int value) {
  return gpuboost_emu::warp_reduce(mask, value, [](int a, int b) { return a < b ? a : b; });
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  return gpuboost_emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a > b ? a : b; });
}
inline int __reduce_max_sync(unsigned mask, int value) {
  return gpuboost_emu::warp_reduce(mask, value, [](int a, int b) { return a > b ? a : b; });
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned value) {
  return gpuboost_emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a & b; });
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned value) {
  return gpuboost_emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a | b; });
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned value) {
  return gpuboost_emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a ^ b; });
}

// ---------------------------------------------------------------------------
// Atomic functions: exactly CUDA's overload set (for example there is no
// atomicAdd on long long; common.cuh has gpuboost_atomic_add_int64).
//
// In the instrumented flavour they are not instrumented themselves: each reports one
// atomic access to instrument.h, and is never inlined there, so that its return address
// is the instruction of the kernel that called it.
// ---------------------------------------------------------------------------
#if defined(GPUBOOST_EMU_INSTRUMENTED)
#define GPUBOOST_EMU_ATOMIC inline __attribute__((noinline, no_sanitize_address))
#define GPUBOOST_EMU_RECORD_ATOMIC(address)                                               \
  ::gpuboost_emu::instrument_atomic((address), static_cast<uint32_t>(sizeof(*(address))), \
                                    __builtin_return_address(0))
#else
#define GPUBOOST_EMU_ATOMIC inline
#define GPUBOOST_EMU_RECORD_ATOMIC(address) static_cast<void>(0)
#endif

// GPUBOOST_EMU_ATOMIC_FUNCTION(result, name, parameters, body): one atomic overload
// whose first parameter is `address`.
#define GPUBOOST_EMU_ATOMIC_FUNCTION(result, name, parameters, body) \
  GPUBOOST_EMU_ATOMIC result name parameters {                       \
    GPUBOOST_EMU_RECORD_ATOMIC(address);                             \
    return body;                                                     \
  }

#define GPUBOOST_EMU_ADD(type)                                                             \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicAdd, (type * address, type value),             \
                               gpuboost_emu::atomic_add(address, value))
GPUBOOST_EMU_ADD(int)
GPUBOOST_EMU_ADD(unsigned int)
GPUBOOST_EMU_ADD(unsigned long long)
GPUBOOST_EMU_ADD(float)
GPUBOOST_EMU_ADD(double)
#undef GPUBOOST_EMU_ADD

#define GPUBOOST_EMU_SUB(type)                                                             \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicSub, (type * address, type value),             \
                               __atomic_fetch_sub(address, value, __ATOMIC_RELAXED))
GPUBOOST_EMU_SUB(int)
GPUBOOST_EMU_SUB(unsigned int)
#undef GPUBOOST_EMU_SUB

#define GPUBOOST_EMU_EXCHANGE(type)                                                        \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicExch, (type * address, type value),            \
                               gpuboost_emu::atomic_exchange(address, value))
GPUBOOST_EMU_EXCHANGE(int)
GPUBOOST_EMU_EXCHANGE(unsigned int)
GPUBOOST_EMU_EXCHANGE(unsigned long long)
GPUBOOST_EMU_EXCHANGE(float)
#undef GPUBOOST_EMU_EXCHANGE

#define GPUBOOST_EMU_MIN_MAX(type)                                                         \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicMin, (type * address, type value),             \
                               gpuboost_emu::atomic_min(address, value))                  \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicMax, (type * address, type value),             \
                               gpuboost_emu::atomic_max(address, value))
GPUBOOST_EMU_MIN_MAX(int)
GPUBOOST_EMU_MIN_MAX(unsigned int)
GPUBOOST_EMU_MIN_MAX(long long)
GPUBOOST_EMU_MIN_MAX(unsigned long long)
#undef GPUBOOST_EMU_MIN_MAX

#define GPUBOOST_EMU_BITWISE(type)                                                         \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicAnd, (type * address, type value),             \
                               __atomic_fetch_and(address, value, __ATOMIC_RELAXED))      \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicOr, (type * address, type value),              \
                               __atomic_fetch_or(address, value, __ATOMIC_RELAXED))       \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicXor, (type * address, type value),             \
                               __atomic_fetch_xor(address, value, __ATOMIC_RELAXED))
GPUBOOST_EMU_BITWISE(int)
GPUBOOST_EMU_BITWISE(unsigned int)
GPUBOOST_EMU_BITWISE(long long)
GPUBOOST_EMU_BITWISE(unsigned long long)
#undef GPUBOOST_EMU_BITWISE

#define GPUBOOST_EMU_CAS(type)                                                             \
  GPUBOOST_EMU_ATOMIC_FUNCTION(type, atomicCAS, (type * address, type compare, type value), \
                               gpuboost_emu::atomic_cas(address, compare, value))
GPUBOOST_EMU_CAS(int)
GPUBOOST_EMU_CAS(unsigned int)
GPUBOOST_EMU_CAS(unsigned long long)
GPUBOOST_EMU_CAS(unsigned short)
#undef GPUBOOST_EMU_CAS

GPUBOOST_EMU_ATOMIC_FUNCTION(unsigned int, atomicInc, (unsigned int* address, unsigned int limit),
                             gpuboost_emu::atomic_update(address, [limit](unsigned int old) {
                               return old >= limit ? 0u : old + 1u;
                             }))
GPUBOOST_EMU_ATOMIC_FUNCTION(unsigned int, atomicDec, (unsigned int* address, unsigned int limit),
                             gpuboost_emu::atomic_update(address, [limit](unsigned int old) {
                               return (old == 0u || old > limit) ? limit : old - 1u;
                             }))
#undef GPUBOOST_EMU_ATOMIC_FUNCTION

// Block- and system-scope variants: on one CPU every scope is the same.
#define GPUBOOST_EMU_SCOPED(name)                                                          \
  template <class... Arguments>                                                            \
  inline auto name##_block(Arguments... arguments)->decltype(name(arguments...)) {         \
    return name(arguments...);                                                             \
  }                                                                                        \
  template <class... Arguments>                                                            \
  inline auto name##_system(Arguments... arguments)->decltype(name(arguments...)) {        \
    return name(arguments...);                                                             \
  }
GPUBOOST_EMU_SCOPED(atomicAdd)
GPUBOOST_EMU_SCOPED(atomicSub)
GPUBOOST_EMU_SCOPED(atomicExch)
GPUBOOST_EMU_SCOPED(atomicMin)
GPUBOOST_EMU_SCOPED(atomicMax)
GPUBOOST_EMU_SCOPED(atomicAnd)
GPUBOOST_EMU_SCOPED(atomicOr)
GPUBOOST_EMU_SCOPED(atomicXor)
GPUBOOST_EMU_SCOPED(atomicCAS)
GPUBOOST_EMU_SCOPED(atomicInc)
GPUBOOST_EMU_SCOPED(atomicDec)
#undef GPUBOOST_EMU_SCOPED

// ---------------------------------------------------------------------------
// Integer intrinsics.
// ---------------------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x));
}
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline unsigned long long __brevll(unsigned long long x) {
  unsigned long long reversed = 0;
  for (int bit = 0; bit < 64; ++bit) reversed |= ((x >> bit) & 1ull) << (63 - bit);
  return reversed;
}
inline unsigned int __brev(unsigned int x) { return static_cast<unsigned int>(__brevll(x) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline int __mulhi(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) * b) >> 32);
}
__extension__ typedef unsigned __int128 gpuboost_emu_uint128;
__extension__ typedef __int128 gpuboost_emu_int128;
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<gpuboost_emu_uint128>(a) * b) >> 64);
}
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<gpuboost_emu_int128>(a) * b) >> 64);
}

// CUDA's global min / max overloads.
#define GPUBOOST_EMU_MIN_MAX_FUNCTIONS(type)                                 \
  inline type min(type a, type b) { return b < a ? b : a; }                 \
  inline type max(type a, type b) { return a < b ? b : a; }
GPUBOOST_EMU_MIN_MAX_FUNCTIONS(int)
GPUBOOST_EMU_MIN_MAX_FUNCTIONS(unsigned int)
GPUBOOST_EMU_MIN_MAX_FUNCTIONS(long)
GPUBOOST_EMU_MIN_MAX_FUNCTIONS(unsigned long)
GPUBOOST_EMU_MIN_MAX_FUNCTIONS(long long)
GPUBOOST_EMU_MIN_MAX_FUNCTIONS(unsigned long long)
#undef GPUBOOST_EMU_MIN_MAX_FUNCTIONS
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline unsigned int umin(unsigned int a, unsigned int b) { return b < a ? b : a; }
inline unsigned int umax(unsigned int a, unsigned int b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return b < a ? b : a; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return b < a ? b : a; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

// ---------------------------------------------------------------------------
// Floating point: reinterpretation, rounding conversions, fast-math aliases.
// <cmath> already provides rint, fabs, sqrt, exp, log, fmax, fmin, ... with
// float and double overloads, as CUDA does.
// ---------------------------------------------------------------------------
template <class To, class From>
inline To gpuboost_emu_bit_cast(From value) {
  static_assert(sizeof(To) == sizeof(From), "bit cast between types of different size");
  To result;
  memcpy(&result, &value, sizeof(To));
  return result;
}
inline float __int_as_float(int x) { return gpuboost_emu_bit_cast<float>(x); }
inline int __float_as_int(float x) { return gpuboost_emu_bit_cast<int>(x); }
inline float __uint_as_float(unsigned int x) { return gpuboost_emu_bit_cast<float>(x); }
inline unsigned int __float_as_uint(float x) { return gpuboost_emu_bit_cast<unsigned int>(x); }
inline double __longlong_as_double(long long x) { return gpuboost_emu_bit_cast<double>(x); }
inline long long __double_as_longlong(double x) { return gpuboost_emu_bit_cast<long long>(x); }
inline int __double2hiint(double x) {
  return static_cast<int>(__double_as_longlong(x) >> 32);
}
inline int __double2loint(double x) { return static_cast<int>(__double_as_longlong(x)); }
inline double __hiloint2double(int high, int low) {
  return __longlong_as_double(static_cast<long long>(
      (static_cast<unsigned long long>(static_cast<unsigned int>(high)) << 32) |
      static_cast<unsigned int>(low)));
}

// Round-to-nearest-even conversions (the CPU's default rounding mode) and
// round-toward-zero ones (C++ casts).
inline int __float2int_rn(float x) { return static_cast<int>(nearbyintf(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(nearbyint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(x); }
inline long long __double2ll_rn(double x) { return static_cast<long long>(nearbyint(x)); }
inline long long __double2ll_rz(double x) { return static_cast<long long>(x); }
inline long long __float2ll_rn(float x) { return static_cast<long long>(nearbyintf(x)); }
inline double __ll2double_rn(long long x) { return static_cast<double>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

// ---------------------------------------------------------------------------
// Memory access hints and timers.
// ---------------------------------------------------------------------------
template <class T>
inline T __ldg(const T* address) { return *address; }
template <class T>
inline T __ldcg(const T* address) { return *address; }
template <class T>
inline T __ldca(const T* address) { return *address; }
template <class T>
inline T __ldcs(const T* address) { return *address; }
template <class T>
inline void __stcg(T* address, T value) { *address = value; }
template <class T>
inline void __stcs(T* address, T value) { *address = value; }

inline long long clock64() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * gpuboost_emu::kNanosecondsPerSecond + now.tv_nsec;
}
inline void __nanosleep(unsigned int) { sched_yield(); }

// ---------------------------------------------------------------------------
// Entry points for the launcher.
// ---------------------------------------------------------------------------
// Register the static __shared__ variables (offsets from the library's load
// address, found by launcher.py in the ELF symbol table); they are poisoned
// before every block. Returns 0, or 1 when memory runs out.
GPUBOOST_EMU_EXPORT int gpuboost_emu_register_static_shared(const uint64_t* offsets,
                                                             const uint64_t* sizes,
                                                             uint64_t count) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&gpuboost_emu_register_static_shared), &info) == 0) return 1;
  auto* ranges = new (std::nothrow) gpuboost_emu::StaticSharedRange[count == 0 ? 1 : count];
  if (ranges == nullptr) return 1;
  unsigned char* base = static_cast<unsigned char*>(info.dli_fbase);
  for (uint64_t index = 0; index < count; ++index) {
    ranges[index] = gpuboost_emu::StaticSharedRange{base + offsets[index], sizes[index]};
  }
  pthread_mutex_lock(&gpuboost_emu::g_launch_mutex);
  delete[] gpuboost_emu::g_static_shared_ranges;
  gpuboost_emu::g_static_shared_ranges = ranges;
  gpuboost_emu::g_static_shared_range_count = count;
  pthread_mutex_unlock(&gpuboost_emu::g_launch_mutex);
  return 0;
}

#if defined(GPUBOOST_EMU_INSTRUMENTED)
#include "instrument.h"
// gpuboost_emu_launch_instrumented__<kernel>: the launch under the sanitizer and the
// traffic model (instrument.h); `counters` receives the launch's traffic counters.
#define GPUBOOST_EMU_DEFINE_INSTRUMENTED_ENTRY_POINT(kernel)                                \
  GPUBOOST_EMU_EXPORT int gpuboost_emu_launch_instrumented__##kernel(                       \
      const uint32_t* grid, const uint32_t* block, uint64_t dynamic_shared_bytes,          \
      uint32_t cluster_blocks, double timeout_seconds, uint32_t workers, void** arguments, \
      char* error_message, uint64_t error_capacity,                                        \
      const ::gpuboost_emu::InstrumentConfig* config, uint64_t* counters) {                \
    return ::gpuboost_emu::launch_kernel_instrumented(                                     \
        &kernel, grid, block, dynamic_shared_bytes, cluster_blocks, timeout_seconds,       \
        workers, arguments, error_message, error_capacity, config, counters);              \
  }
#else
#define GPUBOOST_EMU_DEFINE_INSTRUMENTED_ENTRY_POINT(kernel)
#endif

// The per-kernel entry points `gpuboost_emu_launch__<kernel>` and
// `gpuboost_emu_signature__<kernel>` (and in the instrumented flavour
// `gpuboost_emu_launch_instrumented__<kernel>`) are generated by launcher.py and
// appended to the kernel source.
#define GPUBOOST_EMU_DEFINE_ENTRY_POINTS(kernel)                                            \
  GPUBOOST_EMU_EXPORT int gpuboost_emu_launch__##kernel(                                    \
      const uint32_t* grid, const uint32_t* block, uint64_t dynamic_shared_bytes,          \
      uint32_t cluster_blocks, double timeout_seconds, uint32_t workers, void** arguments, \
      char* error_message, uint64_t error_capacity) {                                      \
    return ::gpuboost_emu::launch_kernel(&kernel, grid, block, dynamic_shared_bytes,       \
                                         cluster_blocks, timeout_seconds, workers,          \
                                         arguments, error_message, error_capacity);         \
  }                                                                                         \
  GPUBOOST_EMU_EXPORT const char* gpuboost_emu_signature__##kernel() {                      \
    return ::gpuboost_emu::kernel_signature(&kernel);                                      \
  }                                                                                         \
  GPUBOOST_EMU_DEFINE_INSTRUMENTED_ENTRY_POINT(kernel)

#endif  // GPUBOOST_CUDA_EMU_H
