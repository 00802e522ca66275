// LLVM's ABI for barriers, master and masked, single and copyprivate, critical sections, flush,
// ordered regions and cancellation, on the core's team barrier, worksharing slots, lock words
// and cancellation flags.
#include <atomic>
#include <cstdint>
#include <string>

#include "gomp_abi.h"
#include "kmp_thread.h"
#include "lock_word.h"
#include "loop.h"
#include "team.h"
#include "weft/error.h"

namespace weft::omp {
namespace {

// A critical section's lock is the first word of the compiler's kmp_critical_name.
std::uint32_t& critical_word(kmp::kmp_critical_name* name) {
  return *reinterpret_cast<std::uint32_t*>(name);
}

// Enters the caller's next worksharing construct and publishes it at once: for constructs whose
// threads share nothing set up in advance (single, copyprivate).
WorkShare& enter_construct(ThreadState& state, bool* first) {
  const std::uint64_t index = state.context.constructs++;
  WorkShare& ws = state.team().slots[index % kWorkShareSlots];
  Signal& signal = state.team().signal;
  *first = ws.enter(index, signal);
  if (*first) ws.published(signal);
  return ws;
}

}  // namespace

void lock_critical(kmp::kmp_critical_name* name) {
  lock_word(critical_word(name));
}
void unlock_critical(kmp::kmp_critical_name* name) {
  unlock_word(critical_word(name));
}

}  // namespace weft::omp

using namespace weft::omp;
using namespace weft::omp::kmp;

extern "C" {

void __kmpc_barrier(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ThreadState& state = self();
  state.team().barrier.wait(state);
}

// A barrier that is also a cancellation point: 1 when the region, or the loop or sections
// construct it ends, was cancelled. A cancelled construct's flag is cleared between two more
// barriers, once every thread has read it and before any may cancel the next construct.
kmp_int32 __kmpc_cancel_barrier(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ThreadState& state = self();
  Team& team = state.team();
  team.barrier.wait(state);
  if (!global_icvs().cancellation) return 0;
  // relaxed: the barriers order the flags with the cancelling threads' writes.
  if (team.cancelled.load(std::memory_order_relaxed)) return 1;
  if (!team.construct_cancelled.load(std::memory_order_relaxed)) return 0;
  team.barrier.wait(state);
  if (state.num() == 0) team.construct_cancelled.store(false, std::memory_order_relaxed);
  team.barrier.wait(state);
  return 1;
}

kmp_int32 __kmpc_master(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  return self().num() == 0 ? 1 : 0;
}
void __kmpc_end_master(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}

kmp_int32 __kmpc_masked(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 filter) {
  return self().num() == filter ? 1 : 0;
}
void __kmpc_end_masked(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}

// The first thread to reach a single construct executes it; the compiler adds the barrier.
kmp_int32 __kmpc_single(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ThreadState& state = self();
  bool first = false;
  WorkShare& ws = enter_construct(state, &first);
  ws.leave(state.team().size, state.team().signal);
  return first ? 1 : 0;
}
void __kmpc_end_single(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}

// copyprivate: the thread that executed the single (`didit`) publishes its data, every other
// thread copies from it with cpy_func(own, published); the second barrier keeps the published
// data alive until all copies are made.
void __kmpc_copyprivate(ident_t* /*loc*/, kmp_int32 /*gtid*/, std::size_t /*cpy_size*/,
                        void* cpy_data, void (*cpy_func)(void*, void*), kmp_int32 didit) {
  ThreadState& state = self();
  Team& team = state.team();
  bool first = false;
  WorkShare& ws = enter_construct(state, &first);
  if (didit != 0) ws.copy = cpy_data;
  team.barrier.wait(state);
  if (didit == 0 && ws.copy != nullptr) cpy_func(cpy_data, ws.copy);
  team.barrier.wait(state);
  ws.copy = nullptr;
  ws.leave(team.size, team.signal);
}

void __kmpc_critical(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_critical_name* name) {
  lock_critical(name);
}
// Hints are hints: every critical section is weft's parking lock (lock_word.h).
void __kmpc_critical_with_hint(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_critical_name* name,
                               kmp_uint32 /*hint*/) {
  lock_critical(name);
}
void __kmpc_end_critical(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_critical_name* name) {
  unlock_critical(name);
}

void __kmpc_flush(ident_t* /*loc*/) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// The caller's chunk of an ordered loop waits for its turn; the turn passes when the chunk ends
// (the next __kmpc_dispatch_next), so __kmpc_end_ordered has nothing to do.
void __kmpc_ordered(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ordered_wait(self());
}
void __kmpc_end_ordered(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}

kmp_int32 __kmpc_cancellationpoint(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 kind) {
  if (!global_icvs().cancellation) return 0;
  ThreadState& state = self();
  Team& team = state.team();
  // relaxed: a cancellation flag only makes threads skip work.
  if (team.cancelled.load(std::memory_order_relaxed)) return 1;
  switch (kind) {
    case cancel_kind::kLoop:
    case cancel_kind::kSections:
      return team.construct_cancelled.load(std::memory_order_relaxed) ? 1 : 0;
    case cancel_kind::kTaskgroup:
      return GOMP_cancellation_point(8) ? 1 : 0;
    default:
      return 0;
  }
}

kmp_int32 __kmpc_cancel(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 kind) {
  if (!global_icvs().cancellation) return 0;
  ThreadState& state = self();
  Team& team = state.team();
  switch (kind) {
    case cancel_kind::kParallel:
      return GOMP_cancel(1, true) ? 1 : 0;
    case cancel_kind::kLoop:
    case cancel_kind::kSections:
      // relaxed: as in __kmpc_cancellationpoint. A dynamic loop hands out no more chunks.
      team.construct_cancelled.store(true, std::memory_order_relaxed);
      if (WorkShare* ws = state.context.loop.ws)
        ws->cancelled.store(true, std::memory_order_relaxed);
      team.signal.notify();
      return 1;
    case cancel_kind::kTaskgroup:
      return GOMP_cancel(8, true) ? 1 : 0;
    default:
      weft::fatal("__kmpc_cancel: unknown construct kind " + std::to_string(kind));
  }
}

}  // extern "C"
