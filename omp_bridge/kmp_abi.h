// The types of LLVM's OpenMP runtime ABI (`__kmpc_*`, what clang 14 emits for the host and
// libomp 14 exports), as weft provides it over the same core as GCC's GOMP ABI. Layouts follow
// libomp's kmp.h; only what the entry points read or write is spelled out.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::omp::kmp {

using kmp_int32 = std::int32_t;
using kmp_uint32 = std::uint32_t;
using kmp_int64 = std::int64_t;
using kmp_uint64 = std::uint64_t;

// The source location every call passes first.
struct ident_t {
  kmp_int32 reserved_1;
  kmp_int32 flags;  // KMP_IDENT_* bits
  kmp_int32 reserved_2;
  kmp_int32 reserved_3;
  const char* psource;  // ";file;function;line;column;;"
};

// ident_t::flags: the compiler can do this construct's reduction with atomics.
inline constexpr kmp_int32 kIdentAtomicReduce = 0x10;

// An outlined parallel or teams region: the global and bound thread numbers, then its arguments
// (pointers, as clang passes them).
using kmpc_micro = void (*)(kmp_int32* global_tid, kmp_int32* bound_tid, ...);

// The compiler's storage for a critical section or a reduction's lock: 32 zeroed bytes.
using kmp_critical_name = kmp_int32[8];

struct kmp_task_t;
using kmp_routine_entry_t = kmp_int32 (*)(kmp_int32 gtid, kmp_task_t* task);

union kmp_cmplrdata_t {
  kmp_int32 priority;
  kmp_routine_entry_t destructors;
};

// The part of a task the compiler sees; its private data follows it.
struct kmp_task_t {
  void* shareds;
  kmp_routine_entry_t routine;
  kmp_int32 part_id;
  kmp_cmplrdata_t data1;  // destructors, with the destructors_thunk flag
  kmp_cmplrdata_t data2;  // priority, with the priority_specified flag
};

// __kmpc_omp_task_alloc's flags (kmp_tasking_flags_t's compiler bits).
namespace task_flags {
inline constexpr kmp_int32 kTied = 1 << 0;
inline constexpr kmp_int32 kFinal = 1 << 1;
inline constexpr kmp_int32 kMergedIf0 = 1 << 2;
inline constexpr kmp_int32 kDestructorsThunk = 1 << 3;
inline constexpr kmp_int32 kProxy = 1 << 4;
inline constexpr kmp_int32 kPrioritySpecified = 1 << 5;
inline constexpr kmp_int32 kDetachable = 1 << 6;
inline constexpr kmp_int32 kHiddenHelper = 1 << 7;
}  // namespace task_flags

struct kmp_depend_info_t {
  std::intptr_t base_addr;
  std::size_t len;
  kmp_uint32 flags;  // bit 0 in, bit 1 out, bit 2 mutexinoutset, bit 3 inoutset
};

// One loop of a doacross nest: inclusive bounds and the step.
struct kmp_dim {
  kmp_int64 lo;
  kmp_int64 up;
  kmp_int64 st;
};

// A task reduction item (__kmpc_taskred_init, __kmpc_taskred_modifier_init).
struct kmp_taskred_input_t {
  void* reduce_shar;  // the shared item
  void* reduce_orig;  // the original item, given to the initializer; null: reduce_shar
  std::size_t reduce_size;
  void* reduce_init;  // void (*)(void* private, void* original)
  void* reduce_fini;  // void (*)(void* private), or null
  void* reduce_comb;  // void (*)(void* into, void* from)
  kmp_uint32 flags;   // bit 0: initialize the copies lazily
};

// The older form (__kmpc_task_reduction_init, __kmpc_task_reduction_modifier_init).
struct kmp_task_red_input_t {
  void* reduce_shar;
  std::size_t reduce_size;
  void* reduce_init;  // void (*)(void* private)
  void* reduce_fini;
  void* reduce_comb;
  kmp_uint32 flags;
};

// enum sched_type: the schedules of __kmpc_for_static_init_* and __kmpc_dispatch_init_*.
namespace sched {
inline constexpr kmp_int32 kStaticChunked = 33;
inline constexpr kmp_int32 kStatic = 34;
inline constexpr kmp_int32 kDynamicChunked = 35;
inline constexpr kmp_int32 kGuidedChunked = 36;
inline constexpr kmp_int32 kRuntime = 37;
inline constexpr kmp_int32 kAuto = 38;
inline constexpr kmp_int32 kTrapezoidal = 39;
inline constexpr kmp_int32 kStaticGreedy = 40;
inline constexpr kmp_int32 kStaticBalanced = 41;
inline constexpr kmp_int32 kGuidedIterative = 42;
inline constexpr kmp_int32 kGuidedAnalytical = 43;
inline constexpr kmp_int32 kStaticSteal = 44;
inline constexpr kmp_int32 kStaticBalancedChunked = 45;
inline constexpr kmp_int32 kGuidedSimd = 46;
inline constexpr kmp_int32 kRuntimeSimd = 47;
inline constexpr kmp_int32 kOrderedLower = 64;  // ordered kinds: the plain kind + 32
inline constexpr kmp_int32 kOrderedUpper = 72;
inline constexpr kmp_int32 kDistributeStaticChunked = 91;
inline constexpr kmp_int32 kDistributeStatic = 92;
inline constexpr kmp_int32 kNoMergeLower = 160;  // "nomerge" kinds: the plain kind + 128
inline constexpr kmp_int32 kModifiers = (1 << 29) | (1 << 30);  // monotonic, nonmonotonic
}  // namespace sched

// __kmpc_cancel's kinds.
namespace cancel_kind {
inline constexpr kmp_int32 kParallel = 1;
inline constexpr kmp_int32 kLoop = 2;
inline constexpr kmp_int32 kSections = 3;
inline constexpr kmp_int32 kTaskgroup = 4;
}  // namespace cancel_kind

}  // namespace weft::omp::kmp

// Entry points one part of the layer calls from another.
extern "C" {
void __kmpc_end_taskgroup(weft::omp::kmp::ident_t* loc, weft::omp::kmp::kmp_int32 gtid);
}
