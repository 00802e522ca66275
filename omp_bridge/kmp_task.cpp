// LLVM's ABI for explicit tasks (__kmpc_omp_task_alloc, __kmpc_omp_task*, the undeferred if0
// pair, taskwait, taskyield, taskgroup, taskloop, detach) on the core's tasks. The compiler fills
// the kmp_task_t the runtime allocates, so a task is one allocation of the core's Task with this
// layout as its argument block:
//   [KmpTaskHeader, 128 bytes][kmp_task_t and the task's private data][shared variables' pointers]
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "gomp_abi.h"
#include "kmp_thread.h"
#include "task_scheduling.h"
#include "weft/error.h"
#include "weft/this_thread.h"

namespace weft::omp {

using namespace kmp;
using weft::fatal;

namespace {

constexpr std::size_t kHeader = 128;  // the header's room, and the block's alignment

struct KmpTaskHeader {
  // The thread that allocated the task: the compiler calls __kmpc_omp_task, or the if0 pair, on
  // the same thread right after, which then need not look its state up again (a look-up costs
  // three calls into the scheduler, about 45 instructions: callgrind, taskcost inline).
  ThreadState* creator;
  kmp_int32 flags;  // __kmpc_omp_task_alloc's
  // The global thread number to pass the routine when its creator runs it at once; -1 when
  // queued, for whichever thread takes it (run_kmp_task then looks its own up).
  kmp_int32 runner_gtid;
  std::size_t size;  // of the whole block, for taskloop's copies
  // An if0 task's creator's ICVs, restored when the task completes: raw bytes, written by
  // __kmpc_omp_task_begin_if0 only, so that allocating a task does not initialize them.
  alignas(Icvs) unsigned char caller_icv[sizeof(Icvs)];
};

static_assert(sizeof(KmpTaskHeader) <= kHeader);
static_assert(std::is_trivially_copyable_v<Icvs>);

KmpTaskHeader& header_of(Task& task) {
  return *static_cast<KmpTaskHeader*>(task.data);
}
kmp_task_t* kmp_task_of(Task& task) {
  return reinterpret_cast<kmp_task_t*>(static_cast<char*>(task.data) + kHeader);
}
Task& task_of(kmp_task_t* kmp_task) {
  return *allocated_task_of(reinterpret_cast<char*>(kmp_task) - kHeader, kHeader);
}

void destroy_privates(KmpTaskHeader& header, kmp_task_t* kmp_task, kmp_int32 gtid) {
  if ((header.flags & task_flags::kDestructorsThunk) != 0)
    kmp_task->data1.destructors(gtid, kmp_task);
}

// The core's body of every LLVM task.
void run_kmp_task(void* data) {
  auto& header = *static_cast<KmpTaskHeader*>(data);
  auto* kmp_task = reinterpret_cast<kmp_task_t*>(static_cast<char*>(data) + kHeader);
  const kmp_int32 gtid = header.runner_gtid >= 0 ? header.runner_gtid : self().gtid;
  // No routine: libomp's `taskwait depend(...) nowait`, a task that only has dependences.
  if (kmp_task->routine == nullptr) return;
  // Without destructors, a tail call: the function then keeps nothing across the routine and
  // saves no registers (callgrind: 22 -> 12 instructions a task).
  if ((header.flags & task_flags::kDestructorsThunk) == 0) {
    kmp_task->routine(gtid, kmp_task);
    return;
  }
  kmp_task->routine(gtid, kmp_task);
  destroy_privates(header, kmp_task, gtid);
}

// Where a task's shared variables' pointers start in its argument block, after the header and
// the kmp_task_t, and the block's size.
struct Layout {
  Layout(std::size_t sizeof_kmp_task_t, std::size_t sizeof_shareds)
      : shareds_at((sizeof_kmp_task_t + alignof(void*) - 1) / alignof(void*) * alignof(void*)),
        size(kHeader + shareds_at + sizeof_shareds) {}
  std::size_t shareds_at;
  std::size_t size;
};

// Fills the header and the kmp_task_t of a task just allocated.
kmp_task_t* prepare(ThreadState& state, Task& task, kmp_int32 flags, const Layout& layout,
                    std::size_t sizeof_shareds, kmp_routine_entry_t entry) {
  auto* header = new (task.data) KmpTaskHeader;
  header->creator = &state;
  header->flags = flags;
  header->runner_gtid = -1;
  header->size = layout.size;
  kmp_task_t* kmp_task = kmp_task_of(task);
  std::memset(static_cast<void*>(kmp_task), 0, sizeof(kmp_task_t));
  kmp_task->shareds =
      sizeof_shareds != 0 ? reinterpret_cast<char*>(kmp_task) + layout.shareds_at : nullptr;
  kmp_task->routine = entry;
  task.fn = run_kmp_task;
  task.final = (flags & task_flags::kFinal) != 0;
  return kmp_task;
}

// __kmpc_omp_task_alloc's general path: the caller's state looked up, the block from the depot or
// the heap.
[[gnu::noinline]] kmp_task_t* allocate(kmp_int32 gtid, kmp_int32 flags,
                                       std::size_t sizeof_kmp_task_t, std::size_t sizeof_shareds,
                                       kmp_routine_entry_t entry) {
  ThreadState& state = self(gtid);
  const Layout layout(sizeof_kmp_task_t, sizeof_shareds);
  Task* task = allocate_task(&state.task_blocks, layout.size, kHeader);
  return prepare(state, *task, flags, layout, sizeof_shareds, entry);
}

std::vector<Dependence> decode(kmp_int32 ndeps, const kmp_depend_info_t* deps,
                               kmp_int32 ndeps_noalias, const kmp_depend_info_t* noalias) {
  std::vector<Dependence> result;
  result.reserve(static_cast<std::size_t>(std::max(0, ndeps) + std::max(0, ndeps_noalias)));
  auto add = [&](kmp_int32 n, const kmp_depend_info_t* list) {
    for (kmp_int32 i = 0; i < n; ++i) {
      // omp_all_memory: bit 7 of the flags (libomp's kmp_depend_info_t `all`), or an address of
      // all ones, as libomp reads both.
      if ((list[i].flags & 0x80) != 0 ||
          ((list[i].flags & 0xf) != 0 && list[i].base_addr == ~static_cast<std::intptr_t>(0))) {
        result.push_back({all_memory(), true});
        continue;
      }
      const kmp_uint32 kind = list[i].flags & 0xf;
      if (kind == 0) continue;
      // out, inout, mutexinoutset (4) and inoutset (8) order the task after every earlier
      // sibling on the address; in after the last writer.
      result.push_back({reinterpret_cast<void*>(list[i].base_addr), (kind & ~1U) != 0});
    }
  };
  add(ndeps, deps);
  add(ndeps_noalias, noalias);
  return result;
}

int priority_of(const KmpTaskHeader& header, const kmp_task_t* kmp_task) {
  if ((header.flags & task_flags::kPrioritySpecified) == 0 || kmp_task->data2.priority < 0)
    return 0;
  return std::min(kmp_task->data2.priority, global_icvs().max_task_priority);
}

// Runs or queues an allocated task as a child of the caller's current task.
void submit(ThreadState& state, Task& task, const std::vector<Dependence>& dependences,
            bool deferred) {
  kmp_task_t* kmp_task = kmp_task_of(task);
  KmpTaskHeader& header = header_of(task);
  task.priority = priority_of(header, kmp_task);
  Team& team = state.team();
  const bool included = state.task().final;
  if (included) task.final = true;
  // A detached task, or one with dependences, is queued even in a team of one or a full queue:
  // what it waits for may come from what its creator does next (fulfilling an event, say).
  const bool detached = task.detach.load(std::memory_order_relaxed) != 0;
  const bool now = !deferred || included ||
                   (!detached && dependences.empty() && (team.size == 1 || tasks_throttled(state)));
  // Run here to completion with nothing to wait for, it is not counted, as GCC's layer does not
  // count such a task: nobody could wait for it before it ends, and counting costs atomics on
  // lines the whole team shares (perf: most of syncbench's TASK once its block was cached).
  if (now && !detached && dependences.empty()) task.counted = false;
  adopt_child(state, task);
  if (!now) {
    header.runner_gtid = -1;
    queue_task(state, task, dependences);
    return;
  }
  header.runner_gtid = state.gtid;
  if (!deferred && detached) task.undeferred = true;
  if (!dependences.empty()) {
    {
      std::lock_guard<weft::Mutex> lock(team.tasks.lock());
      register_dependences(*task.parent, task, dependences);
    }
    wait_running_tasks(state, task.parent,
                       [&] { return task.blockers.load(std::memory_order_acquire) == 0; });
  }
  execute(state, task);
  // A counted task is released when it finishes; this one's own reference goes here (its
  // children, which may outlive it, hold theirs).
  if (!task.counted) release_task_run_at_once(&task, state.task_blocks);
}

// A deferrable task its creator runs at once with nothing to wait for or detach: neither counted
// nor queued, as GCC's layer's run_at_once (most tasks of programs that create many). Taken in
// __kmpc_omp_task itself, it spares submit's general path.
void run_at_once(ThreadState& state, Task& task) {
  if (state.task().final) task.final = true;
  task.counted = false;
  adopt_child(state, task);
  header_of(task).runner_gtid = state.gtid;
  execute(state, task);
  release_task_run_at_once(&task, state.task_blocks);
}

kmp_int32 omp_task(kmp_task_t* kmp_task, const std::vector<Dependence>& dependences) {
  Task& task = task_of(kmp_task);
  // An untied task's routine queues its own continuation at a task scheduling point and
  // returns; weft runs untied tasks as tied ones, so the continuation runs here, at once (on
  // whichever thread runs the task, not necessarily its creator). Such a call is the only one made
  // on a task already adopted (its parent set): the compiler's first call finds it fresh.
  if (task.parent != nullptr) {
    kmp_task->routine(self().gtid, kmp_task);
    return 0;
  }
  submit(*header_of(task).creator, task, dependences, true);
  return 0;
}

// __kmpc_omp_task's general path, out of line: its empty list of dependences then costs the fast
// path neither a frame nor a destructor.
[[gnu::noinline]] kmp_int32 omp_task_without_dependences(kmp_task_t* kmp_task) {
  return omp_task(kmp_task, {});
}

// taskloop's split of `count` iterations: the first iteration and the size of task `t`.
struct LoopSplit {
  std::uint64_t tasks = 0;
  std::uint64_t grain = 0;  // strict grainsize: every task but the last has exactly this many
  std::uint64_t at(std::uint64_t t, std::uint64_t count) const {
    if (grain != 0) return std::min(count, t * grain);
    return t * (count / tasks) + std::min(t, count % tasks);
  }
};

LoopSplit split(std::uint64_t count, kmp_int32 sched, kmp_uint64 value, bool strict, int threads) {
  LoopSplit result;
  switch (sched) {
    case 1: {  // grainsize: tasks of grainsize to twice grainsize - 1 iterations
      const std::uint64_t grain = std::max<std::uint64_t>(1, value);
      if (strict) {
        result.grain = grain;
        result.tasks = (count + grain - 1) / grain;
      } else {
        result.tasks = std::max<std::uint64_t>(1, count / grain);
      }
      break;
    }
    case 2:  // num_tasks
      result.tasks = std::min<std::uint64_t>(count, std::max<kmp_uint64>(1, value));
      break;
    default:
      result.tasks = std::min<std::uint64_t>(count, static_cast<std::uint64_t>(threads));
      break;
  }
  return result;
}

void taskloop(kmp_task_t* pattern, kmp_int32 if_val, kmp_uint64* lb, kmp_uint64* ub, kmp_int64 st,
              kmp_int32 nogroup, kmp_int32 sched, kmp_uint64 value, void* task_dup, bool strict) {
  ThreadState& state = self();
  Task& pattern_task = task_of(pattern);
  KmpTaskHeader& header = header_of(pattern_task);
  const std::ptrdiff_t lb_at = reinterpret_cast<char*>(lb) - reinterpret_cast<char*>(pattern);
  const std::ptrdiff_t ub_at = reinterpret_cast<char*>(ub) - reinterpret_cast<char*>(pattern);
  const kmp_uint64 lower = *lb;
  const kmp_uint64 upper = *ub;
  // The compiler calls this only for a loop of at least one iteration.
  const std::uint64_t count = st > 0 ? (upper - lower) / static_cast<kmp_uint64>(st) + 1
                                     : (lower - upper) / static_cast<kmp_uint64>(-st) + 1;
  const LoopSplit plan = split(count, sched, value, strict, state.team().size);
  using TaskDup = void (*)(kmp_task_t*, kmp_task_t*, kmp_int32);
  if (nogroup == 0) GOMP_taskgroup_start();
  for (std::uint64_t t = 0; t < plan.tasks; ++t) {
    const std::uint64_t first = plan.at(t, count);
    const std::uint64_t end = t + 1 == plan.tasks ? count : plan.at(t + 1, count);
    Task* task = allocate_task(&state.task_blocks, header.size, kHeader);
    std::memcpy(task->data, pattern_task.data, header.size);
    header_of(*task).creator = &state;
    kmp_task_t* copy = kmp_task_of(*task);
    if (pattern->shareds != nullptr) {
      copy->shareds = reinterpret_cast<char*>(copy) +
                      (static_cast<char*>(pattern->shareds) - reinterpret_cast<char*>(pattern));
    }
    task->fn = run_kmp_task;
    task->final = pattern_task.final;
    const auto st_bits = static_cast<kmp_uint64>(st);
    *reinterpret_cast<kmp_uint64*>(reinterpret_cast<char*>(copy) + lb_at) = lower + first * st_bits;
    *reinterpret_cast<kmp_uint64*>(reinterpret_cast<char*>(copy) + ub_at) =
        lower + (end - 1) * st_bits;
    if (task_dup != nullptr) {
      reinterpret_cast<TaskDup>(task_dup)(copy, pattern, t + 1 == plan.tasks ? 1 : 0);
    }
    submit(state, *task, {}, if_val != 0);
  }
  // The pattern never runs; its private objects are destroyed as a finished task's would be.
  destroy_privates(header, pattern, state.gtid);
  release_task(&pattern_task, &state.task_blocks);
  if (nogroup == 0) __kmpc_end_taskgroup(nullptr, state.gtid);
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;
using namespace weft::omp::kmp;

extern "C" {

kmp_task_t* __kmpc_omp_task_alloc(ident_t* /*loc*/, kmp_int32 gtid, kmp_int32 flags,
                                  std::size_t sizeof_kmp_task_t, std::size_t sizeof_shareds,
                                  kmp_routine_entry_t task_entry) {
  // The common case makes no call, so that the function saves no registers (14 instructions a
  // task: callgrind, taskcost inline): the caller's state found by its gtid, a block kept in its
  // cache.
  if (ThreadState* state = state_by_gtid(gtid)) [[likely]] {
    const Layout layout(sizeof_kmp_task_t, sizeof_shareds);
    constexpr std::size_t offset = task_data_offset(kHeader);
    const int size_class = TaskBlockCache::size_class(offset + layout.size);
    if (size_class >= 0) {
      if (void* block = state->task_blocks.take_kept(size_class)) {
        return prepare(*state, *make_cached_task(block, offset, size_class), flags, layout,
                       sizeof_shareds, task_entry);
      }
    }
  }
  return allocate(gtid, flags, sizeof_kmp_task_t, sizeof_shareds, task_entry);
}

// `target nowait` tasks: the host is weft's only device, so they are host tasks.
kmp_task_t* __kmpc_omp_target_task_alloc(ident_t* loc, kmp_int32 gtid, kmp_int32 flags,
                                         std::size_t sizeof_kmp_task_t, std::size_t sizeof_shareds,
                                         kmp_routine_entry_t task_entry, kmp_int64 /*device_id*/) {
  return __kmpc_omp_task_alloc(loc, gtid, flags, sizeof_kmp_task_t, sizeof_shareds, task_entry);
}

kmp_int32 __kmpc_omp_task(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_task_t* new_task) {
  Task& task = task_of(new_task);
  const KmpTaskHeader& header = header_of(task);
  if (task.parent == nullptr && task.detach.load(std::memory_order_relaxed) == 0 &&
      deferrable_runs_at_once(*header.creator)) {
    run_at_once(*header.creator, task);
    return 0;
  }
  return omp_task_without_dependences(new_task);
}

kmp_int32 __kmpc_omp_task_with_deps(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_task_t* new_task,
                                    kmp_int32 ndeps, kmp_depend_info_t* dep_list,
                                    kmp_int32 ndeps_noalias, kmp_depend_info_t* noalias_dep_list) {
  return omp_task(new_task, decode(ndeps, dep_list, ndeps_noalias, noalias_dep_list));
}

// The affinity clause is a hint; weft places tasks by its own scheduler.
kmp_int32 __kmpc_omp_reg_task_with_affinity(ident_t* /*loc*/, kmp_int32 /*gtid*/,
                                            kmp_task_t* /*new_task*/, kmp_int32 /*naffins*/,
                                            void* /*affin_list*/) {
  return 0;
}

// An undeferred task with dependences: the compiler waits for them here, then runs the task
// between __kmpc_omp_task_begin_if0 and __kmpc_omp_task_complete_if0.
void __kmpc_omp_wait_deps(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 ndeps,
                          kmp_depend_info_t* dep_list, kmp_int32 ndeps_noalias,
                          kmp_depend_info_t* noalias_dep_list) {
  const std::vector<Dependence> dependences =
      decode(ndeps, dep_list, ndeps_noalias, noalias_dep_list);
  if (!dependences.empty()) wait_dependences(self(), dependences);
}

void __kmpc_omp_task_begin_if0(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_task_t* kmp_task) {
  Task& task = task_of(kmp_task);
  ThreadState& state = *header_of(task).creator;
  task.undeferred = true;
  // Not counted anywhere (its creator runs it to completion) unless a detach event may outlast it.
  task.counted = task.detach.load(std::memory_order_relaxed) != 0;
  if (state.task().final) task.final = true;
  adopt_child(state, task);
  state.context.task = &task;
  std::memcpy(header_of(task).caller_icv, &state.icv(), sizeof(Icvs));
}

void __kmpc_omp_task_complete_if0(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_task_t* kmp_task) {
  Task& task = task_of(kmp_task);
  KmpTaskHeader& header = header_of(task);
  ThreadState& state = *header.creator;
  destroy_privates(header, kmp_task, state.gtid);
  state.context.task = task.parent;
  std::memcpy(&state.icv(), header.caller_icv, sizeof(Icvs));
  const bool counted = task.counted;
  complete(state, task);
  if (!counted) release_task_run_at_once(&task, state.task_blocks);
}

// The detach clause: the task's event handle is the task itself (omp_fulfill_event, api.cpp).
void* __kmpc_task_allow_completion_event(ident_t* /*loc*/, kmp_int32 /*gtid*/,
                                         kmp_task_t* kmp_task) {
  Task& task = task_of(kmp_task);
  task.detach.store(2, std::memory_order_relaxed);
  return &task;
}

kmp_int32 __kmpc_omp_taskwait(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  GOMP_taskwait();
  return 0;
}

kmp_int32 __kmpc_omp_taskyield(ident_t* /*loc*/, kmp_int32 /*gtid*/, int /*end_part*/) {
  GOMP_taskyield();
  return 0;
}

void __kmpc_taskgroup(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  GOMP_taskgroup_start();
}

void __kmpc_taskloop(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_task_t* task, kmp_int32 if_val,
                     kmp_uint64* lb, kmp_uint64* ub, kmp_int64 st, kmp_int32 nogroup,
                     kmp_int32 sched, kmp_uint64 grainsize, void* task_dup) {
  taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, task_dup, false);
}

// OpenMP 5.1's strict modifier of grainsize and num_tasks (modifier 1).
void __kmpc_taskloop_5(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_task_t* task, kmp_int32 if_val,
                       kmp_uint64* lb, kmp_uint64* ub, kmp_int64 st, kmp_int32 nogroup,
                       kmp_int32 sched, kmp_uint64 grainsize, kmp_int32 modifier, void* task_dup) {
  taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, task_dup, modifier != 0);
}

}  // extern "C"
