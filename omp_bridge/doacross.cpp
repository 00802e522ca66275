// Doacross loops (ordered(n) with depend(sink) and depend(source)): GCC shares out the first of
// the n loops over its normalized iterations 0..counts[0]-1, posts each finished iteration's
// normalized indices and waits for a sink's.
#include <cstdarg>
#include <string>

#include "gomp_abi.h"
#include "loop.h"
#include "team.h"
#include "weft/error.h"

namespace weft::omp {
namespace {

template <class T>
bool start(unsigned dims, const T* counts, LoopSchedule schedule, T* istart, T* iend,
           ConstructRequests requests = {}) {
  if (dims < 1) fatal("a doacross loop of " + std::to_string(dims) + " nested loops");
  ThreadState& state = self();
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  const auto first = static_cast<std::uint64_t>(counts[0]);
  const bool got = loop_start_prepared(
      state,
      [&](WorkShare& ws) {
        prepare_loop(state, ws, IterationSpace::of_ull(true, 0, first, 1), schedule, false);
        ws.doacross_counts.assign(counts, counts + dims);
        ws.doacross_posted = std::make_unique<std::atomic<std::uint64_t>[]>(first);
      },
      istart != nullptr ? &lo : nullptr, &hi, requests);
  if (!got) return false;
  if (istart == nullptr) return true;
  *istart = static_cast<T>(lo);
  *iend = static_cast<T>(hi);
  return true;
}

// The index of the inner iterations (the n-1 loops after the first) in their order; next(d)
// gives the index along loop d.
template <class Next>
std::uint64_t flatten(const WorkShare& ws, Next next) {
  std::uint64_t index = 0;
  for (std::size_t d = 1; d < ws.doacross_counts.size(); ++d) {
    index = index * ws.doacross_counts[d] + next(d);
  }
  return index;
}

template <class T>
void post(const T* indices) {
  ThreadState& state = self();
  WorkShare& ws = *state.context.loop.ws;
  const std::uint64_t inner =
      flatten(ws, [&](std::size_t d) { return static_cast<std::uint64_t>(indices[d]); });
  // release: the iteration's writes, for the threads whose sinks wait for it.
  ws.doacross_posted[static_cast<std::uint64_t>(indices[0])].store(inner + 1,
                                                                   std::memory_order_release);
  state.team().signal.notify();
}

template <class T>
void wait(T first, va_list rest) {
  ThreadState& state = self();
  const WorkShare& ws = *state.context.loop.ws;
  const std::uint64_t needed =
      flatten(ws, [&](std::size_t) { return static_cast<std::uint64_t>(va_arg(rest, T)); }) + 1;
  const auto outer = static_cast<std::uint64_t>(first);
  if (outer >= ws.doacross_counts[0]) return;
  // acquire: see what the sink iteration wrote.
  state.team().signal.wait(
      [&] { return ws.doacross_posted[outer].load(std::memory_order_acquire) >= needed; });
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;
using weft::omp::ScheduleKind;

extern "C" {

bool GOMP_loop_doacross_static_start(unsigned dims, long* counts, long chunk, long* istart,
                                     long* iend) {
  return start(dims, counts, fixed_schedule(ScheduleKind::static_, chunk), istart, iend);
}
bool GOMP_loop_doacross_dynamic_start(unsigned dims, long* counts, long chunk, long* istart,
                                      long* iend) {
  return start(dims, counts, fixed_schedule(ScheduleKind::dynamic, chunk), istart, iend);
}
bool GOMP_loop_doacross_guided_start(unsigned dims, long* counts, long chunk, long* istart,
                                     long* iend) {
  return start(dims, counts, fixed_schedule(ScheduleKind::guided, chunk), istart, iend);
}
bool GOMP_loop_doacross_runtime_start(unsigned dims, long* counts, long* istart, long* iend) {
  return start(dims, counts, kRuntimeSchedule, istart, iend);
}
bool GOMP_loop_doacross_start(unsigned dims, long* counts, long sched, long chunk, long* istart,
                              long* iend, uintptr_t* reductions, void** mem) {
  return start(dims, counts, decode_schedule(sched, chunk, "GOMP_loop_doacross_start"), istart,
               iend, {reductions, mem});
}
bool GOMP_loop_ull_doacross_static_start(unsigned dims, ull* counts, ull chunk, ull* istart,
                                         ull* iend) {
  return start(dims, counts, fixed_schedule(ScheduleKind::static_, static_cast<long>(chunk)),
               istart, iend);
}
bool GOMP_loop_ull_doacross_dynamic_start(unsigned dims, ull* counts, ull chunk, ull* istart,
                                          ull* iend) {
  return start(dims, counts, fixed_schedule(ScheduleKind::dynamic, static_cast<long>(chunk)),
               istart, iend);
}
bool GOMP_loop_ull_doacross_guided_start(unsigned dims, ull* counts, ull chunk, ull* istart,
                                         ull* iend) {
  return start(dims, counts, fixed_schedule(ScheduleKind::guided, static_cast<long>(chunk)), istart,
               iend);
}
bool GOMP_loop_ull_doacross_runtime_start(unsigned dims, ull* counts, ull* istart, ull* iend) {
  return start(dims, counts, kRuntimeSchedule, istart, iend);
}
bool GOMP_loop_ull_doacross_start(unsigned dims, ull* counts, long sched, ull chunk, ull* istart,
                                  ull* iend, uintptr_t* reductions, void** mem) {
  return start(dims, counts,
               decode_schedule(sched, static_cast<long>(chunk), "GOMP_loop_doacross_start"), istart,
               iend, {reductions, mem});
}

void GOMP_doacross_post(long* indices) {
  post(indices);
}
void GOMP_doacross_ull_post(ull* indices) {
  post(indices);
}
void GOMP_doacross_wait(long first, ...) {
  va_list rest;
  va_start(rest, first);
  wait(first, rest);
  va_end(rest);
}
void GOMP_doacross_ull_wait(ull first, ...) {
  va_list rest;
  va_start(rest, first);
  wait(first, rest);
  va_end(rest);
}

}  // extern "C"
