// LLVM's reductions (__kmpc_reduce, __kmpc_reduce_nowait and their ends). The compiler gives each
// thread's private copies (reduce_data), a function combining two such sets, and a lock; the
// runtime picks a method and the compiler's code does the rest by the returned value:
//   1  combine the private copies into the originals, then call the end;
//   2  combine them with atomics (the blocking form then calls the end);
//   0  nothing (the tree method's other threads, whose copies thread 0 combined).
// Methods: `alone` (a team of one), `critical` (1 under the lock), `atomic` (2, when the compiler
// offers it), `tree` (thread 0 combines every copy with reduce_func, then 1). The default is
// atomic for teams of up to 4 threads, else tree; KMP_FORCE_REDUCTION=critical|atomic|tree forces
// one, as with libomp.
#include <cstdlib>
#include <cstring>
#include <string>

#include "kmp_thread.h"
#include "team.h"
#include "weft/error.h"

namespace weft::omp {

using namespace kmp;
using weft::fatal;

namespace {

ReduceMethod forced_method() {
  static const ReduceMethod forced = [] {
    const char* text = std::getenv("KMP_FORCE_REDUCTION");
    if (text == nullptr || *text == '\0') return ReduceMethod::none;
    if (std::strcmp(text, "critical") == 0) return ReduceMethod::critical;
    if (std::strcmp(text, "atomic") == 0) return ReduceMethod::atomic;
    if (std::strcmp(text, "tree") == 0) return ReduceMethod::tree;
    fatal(std::string("KMP_FORCE_REDUCTION=\"") + text + "\": expected critical, atomic or tree");
  }();
  return forced;
}

ReduceMethod choose(const ThreadState& state, const ident_t* loc, bool has_function) {
  const Team& team = state.team();
  if (team.size == 1) {
    // The initial threads of a host teams league reduce into the same originals.
    return team.level > 0 || state.league_size == 1 ? ReduceMethod::alone : ReduceMethod::critical;
  }
  const bool atomic = loc != nullptr && (loc->flags & kIdentAtomicReduce) != 0;
  switch (forced_method()) {
    case ReduceMethod::critical:
      return ReduceMethod::critical;
    case ReduceMethod::atomic:
      return atomic ? ReduceMethod::atomic : ReduceMethod::critical;
    case ReduceMethod::tree:
      return has_function ? ReduceMethod::tree : ReduceMethod::critical;
    default:
      break;
  }
  constexpr int kAtomicUpTo = 4;
  if (atomic && team.size <= kAtomicUpTo) return ReduceMethod::atomic;
  return has_function ? ReduceMethod::tree : ReduceMethod::critical;
}

// The tree method: thread 0 combines every thread's copies into its own. The other threads'
// copies must live until then: a blocking reduction keeps them in the team's barrier, a nowait
// one until thread 0 says it is done.
kmp_int32 tree(ThreadState& state, KmpThread& kmp, void* reduce_data,
               void (*reduce_func)(void*, void*), bool blocking) {
  Team& team = state.team();
  const std::uint64_t index = state.context.constructs++;
  WorkShare& ws = team.slots[index % kWorkShareSlots];
  if (ws.enter(index, team.signal)) {
    ws.reduce_data.assign(static_cast<std::size_t>(team.size), nullptr);
    ws.published(team.signal);
  }
  ws.reduce_data[static_cast<std::size_t>(state.num())] = reduce_data;
  // acq_rel: publishes the copies' pointer and values to thread 0.
  if (ws.reduce_arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == team.size) {
    team.signal.notify();
  }
  if (state.num() == 0) {
    team.signal.wait(
        [&] { return ws.reduce_arrived.load(std::memory_order_acquire) == team.size; });
    for (std::size_t i = 1; i < ws.reduce_data.size(); ++i) {
      reduce_func(reduce_data, ws.reduce_data[i]);
    }
    if (blocking) {
      kmp.reduce_ws = &ws;
    } else {
      // release: the other threads' copies are no longer read.
      ws.reduce_done.store(true, std::memory_order_release);
      team.signal.notify();
      ws.leave(team.size, team.signal);
    }
    return 1;
  }
  if (blocking) {
    team.barrier.wait(state);
  } else {
    team.signal.wait([&] { return ws.reduce_done.load(std::memory_order_acquire); });
  }
  ws.leave(team.size, team.signal);
  return 0;
}

kmp_int32 reduce(const ident_t* loc, void* reduce_data, void (*reduce_func)(void*, void*),
                 kmp_critical_name* lock, bool blocking) {
  ThreadState& state = self();
  KmpThread& kmp = kmp_thread(state);
  const ReduceMethod method = choose(state, loc, reduce_func != nullptr);
  kmp.reduce = method;
  kmp.reduce_lock = lock;
  switch (method) {
    case ReduceMethod::critical:
      lock_critical(lock);
      return 1;
    case ReduceMethod::atomic:
      return 2;
    case ReduceMethod::tree:
      return tree(state, kmp, reduce_data, reduce_func, blocking);
    default:
      return 1;
  }
}

void end_reduce(const char* call, bool blocking) {
  ThreadState& state = self();
  KmpThread& kmp = kmp_thread(state);
  const ReduceMethod method = kmp.reduce;
  kmp.reduce = ReduceMethod::none;
  switch (method) {
    case ReduceMethod::none:
      fatal(std::string(call) + " without a reduction begun by this thread");
    case ReduceMethod::critical:
      unlock_critical(kmp.reduce_lock);
      break;
    case ReduceMethod::tree:
      if (blocking) {
        // Thread 0, whose copies now hold the result; the others wait in the barrier below.
        Team& team = state.team();
        kmp.reduce_ws->leave(team.size, team.signal);
        kmp.reduce_ws = nullptr;
      }
      break;
    default:
      break;
  }
  if (blocking) state.team().barrier.wait(state);
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;
using namespace weft::omp::kmp;

extern "C" {

kmp_int32 __kmpc_reduce_nowait(ident_t* loc, kmp_int32 /*gtid*/, kmp_int32 /*num_vars*/,
                               std::size_t /*reduce_size*/, void* reduce_data,
                               void (*reduce_func)(void*, void*), kmp_critical_name* lck) {
  return reduce(loc, reduce_data, reduce_func, lck, false);
}

// Called after method 1 only: method 2 of a nowait reduction has nothing to end.
void __kmpc_end_reduce_nowait(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_critical_name* /*lck*/) {
  end_reduce("__kmpc_end_reduce_nowait", false);
}

kmp_int32 __kmpc_reduce(ident_t* loc, kmp_int32 /*gtid*/, kmp_int32 /*num_vars*/,
                        std::size_t /*reduce_size*/, void* reduce_data,
                        void (*reduce_func)(void*, void*), kmp_critical_name* lck) {
  return reduce(loc, reduce_data, reduce_func, lck, true);
}

// Called after methods 1 and 2: the construct's barrier.
void __kmpc_end_reduce(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_critical_name* /*lck*/) {
  end_reduce("__kmpc_end_reduce", true);
}

}  // extern "C"
