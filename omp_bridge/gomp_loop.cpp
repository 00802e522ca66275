// GOMP's worksharing loop entry points (long and unsigned long long iteration variables), the
// combined parallel loops and ordered regions.
#include <string>

#include "gomp_abi.h"
#include "loop.h"
#include "parallel.h"
#include "weft/error.h"

namespace weft::omp {
namespace {

template <class T>
bool give(const IterationSpace& space, std::uint64_t lo, std::uint64_t hi, T* istart, T* iend) {
  *istart = static_cast<T>(space.at(lo));
  *iend = static_cast<T>(space.at(hi));
  return true;
}

// A null `istart` opens the construct for its requests only (loop.h).
template <class T>
bool start_loop(const IterationSpace& space, LoopSchedule schedule, bool ordered, T* istart,
                T* iend, ConstructRequests requests) {
  ThreadState& state = self();
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  if (!loop_start(state, space, schedule, ordered, istart != nullptr ? &lo : nullptr, &hi,
                  requests)) {
    return false;
  }
  return istart == nullptr || give(space, lo, hi, istart, iend);
}

bool start_long(long start, long end, long incr, LoopSchedule schedule, bool ordered, long* istart,
                long* iend, ConstructRequests requests = {}) {
  return start_loop(IterationSpace::of_long(start, end, incr), schedule, ordered, istart, iend,
                    requests);
}

bool start_ull(bool up, ull start, ull end, ull incr, LoopSchedule schedule, bool ordered,
               ull* istart, ull* iend, ConstructRequests requests = {}) {
  return start_loop(IterationSpace::of_ull(up, start, end, incr), schedule, ordered, istart, iend,
                    requests);
}

template <class T>
bool next_chunk(T* istart, T* iend) {
  ThreadState& state = self();
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  if (!loop_next(state, &lo, &hi)) return false;
  return give(state.context.loop.ws->space, lo, hi, istart, iend);
}

void parallel_loop(void (*fn)(void*), void* data, unsigned num_threads, long start, long end,
                   long incr, LoopSchedule schedule, unsigned flags) {
  const IterationSpace space = IterationSpace::of_long(start, end, incr);
  run_parallel(fn, data, num_threads, flags, [&](ThreadState& master, WorkShare& ws) {
    prepare_loop(master, ws, space, schedule, false);
  });
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;
using weft::omp::ScheduleKind;

extern "C" {

bool GOMP_loop_static_start(long start, long end, long incr, long chunk, long* istart, long* iend) {
  return start_long(start, end, incr, fixed_schedule(ScheduleKind::static_, chunk), false, istart,
                    iend);
}
bool GOMP_loop_dynamic_start(long start, long end, long incr, long chunk, long* istart,
                             long* iend) {
  return start_long(start, end, incr, fixed_schedule(ScheduleKind::dynamic, chunk), false, istart,
                    iend);
}
bool GOMP_loop_guided_start(long start, long end, long incr, long chunk, long* istart, long* iend) {
  return start_long(start, end, incr, fixed_schedule(ScheduleKind::guided, chunk), false, istart,
                    iend);
}
bool GOMP_loop_runtime_start(long start, long end, long incr, long* istart, long* iend) {
  return start_long(start, end, incr, kRuntimeSchedule, false, istart, iend);
}
// Weft's dynamic and guided schedules are monotonic, which nonmonotonic allows.
bool GOMP_loop_nonmonotonic_dynamic_start(long start, long end, long incr, long chunk, long* istart,
                                          long* iend) {
  return GOMP_loop_dynamic_start(start, end, incr, chunk, istart, iend);
}
bool GOMP_loop_nonmonotonic_guided_start(long start, long end, long incr, long chunk, long* istart,
                                         long* iend) {
  return GOMP_loop_guided_start(start, end, incr, chunk, istart, iend);
}
bool GOMP_loop_nonmonotonic_runtime_start(long start, long end, long incr, long* istart,
                                          long* iend) {
  return GOMP_loop_runtime_start(start, end, incr, istart, iend);
}
bool GOMP_loop_maybe_nonmonotonic_runtime_start(long start, long end, long incr, long* istart,
                                                long* iend) {
  return GOMP_loop_runtime_start(start, end, incr, istart, iend);
}
bool GOMP_loop_ordered_static_start(long start, long end, long incr, long chunk, long* istart,
                                    long* iend) {
  return start_long(start, end, incr, fixed_schedule(ScheduleKind::static_, chunk), true, istart,
                    iend);
}
bool GOMP_loop_ordered_dynamic_start(long start, long end, long incr, long chunk, long* istart,
                                     long* iend) {
  return start_long(start, end, incr, fixed_schedule(ScheduleKind::dynamic, chunk), true, istart,
                    iend);
}
bool GOMP_loop_ordered_guided_start(long start, long end, long incr, long chunk, long* istart,
                                    long* iend) {
  return start_long(start, end, incr, fixed_schedule(ScheduleKind::guided, chunk), true, istart,
                    iend);
}
bool GOMP_loop_ordered_runtime_start(long start, long end, long incr, long* istart, long* iend) {
  return start_long(start, end, incr, kRuntimeSchedule, true, istart, iend);
}

bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long* istart,
                     long* iend, uintptr_t* reductions, void** mem) {
  return start_long(start, end, incr, decode_schedule(sched, chunk, "GOMP_loop_start"), false,
                    istart, iend, {reductions, mem});
}
bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk, long* istart,
                             long* iend, uintptr_t* reductions, void** mem) {
  return start_long(start, end, incr, decode_schedule(sched, chunk, "GOMP_loop_start"), true,
                    istart, iend, {reductions, mem});
}

bool GOMP_loop_static_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_dynamic_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_guided_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_runtime_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_nonmonotonic_dynamic_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_nonmonotonic_guided_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_nonmonotonic_runtime_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_maybe_nonmonotonic_runtime_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ordered_static_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ordered_dynamic_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ordered_guided_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ordered_runtime_next(long* istart, long* iend) {
  return next_chunk(istart, iend);
}

void GOMP_loop_end() {
  loop_end(self(), true);
}
void GOMP_loop_end_nowait() {
  loop_end(self(), false);
}
bool GOMP_loop_end_cancel() {
  return loop_end(self(), true);
}

void GOMP_parallel_loop_static(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags) {
  parallel_loop(fn, data, num_threads, start, end, incr,
                fixed_schedule(ScheduleKind::static_, chunk), flags);
}
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, long chunk, unsigned flags) {
  parallel_loop(fn, data, num_threads, start, end, incr,
                fixed_schedule(ScheduleKind::dynamic, chunk), flags);
}
void GOMP_parallel_loop_guided(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags) {
  parallel_loop(fn, data, num_threads, start, end, incr,
                fixed_schedule(ScheduleKind::guided, chunk), flags);
}
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, unsigned flags) {
  parallel_loop(fn, data, num_threads, start, end, incr, kRuntimeSchedule, flags);
}
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, long chunk,
                                             unsigned flags) {
  GOMP_parallel_loop_dynamic(fn, data, num_threads, start, end, incr, chunk, flags);
}
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* data, unsigned num_threads,
                                            long start, long end, long incr, long chunk,
                                            unsigned flags) {
  GOMP_parallel_loop_guided(fn, data, num_threads, start, end, incr, chunk, flags);
}
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, unsigned flags) {
  GOMP_parallel_loop_runtime(fn, data, num_threads, start, end, incr, flags);
}
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* data,
                                                   unsigned num_threads, long start, long end,
                                                   long incr, unsigned flags) {
  GOMP_parallel_loop_runtime(fn, data, num_threads, start, end, incr, flags);
}

bool GOMP_loop_ull_static_start(bool up, ull start, ull end, ull incr, ull chunk, ull* istart,
                                ull* iend) {
  return start_ull(up, start, end, incr,
                   fixed_schedule(ScheduleKind::static_, static_cast<long>(chunk)), false, istart,
                   iend);
}
bool GOMP_loop_ull_dynamic_start(bool up, ull start, ull end, ull incr, ull chunk, ull* istart,
                                 ull* iend) {
  return start_ull(up, start, end, incr,
                   fixed_schedule(ScheduleKind::dynamic, static_cast<long>(chunk)), false, istart,
                   iend);
}
bool GOMP_loop_ull_guided_start(bool up, ull start, ull end, ull incr, ull chunk, ull* istart,
                                ull* iend) {
  return start_ull(up, start, end, incr,
                   fixed_schedule(ScheduleKind::guided, static_cast<long>(chunk)), false, istart,
                   iend);
}
bool GOMP_loop_ull_runtime_start(bool up, ull start, ull end, ull incr, ull* istart, ull* iend) {
  return start_ull(up, start, end, incr, kRuntimeSchedule, false, istart, iend);
}
bool GOMP_loop_ull_nonmonotonic_dynamic_start(bool up, ull start, ull end, ull incr, ull chunk,
                                              ull* istart, ull* iend) {
  return GOMP_loop_ull_dynamic_start(up, start, end, incr, chunk, istart, iend);
}
bool GOMP_loop_ull_nonmonotonic_guided_start(bool up, ull start, ull end, ull incr, ull chunk,
                                             ull* istart, ull* iend) {
  return GOMP_loop_ull_guided_start(up, start, end, incr, chunk, istart, iend);
}
bool GOMP_loop_ull_nonmonotonic_runtime_start(bool up, ull start, ull end, ull incr, ull* istart,
                                              ull* iend) {
  return GOMP_loop_ull_runtime_start(up, start, end, incr, istart, iend);
}
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_start(bool up, ull start, ull end, ull incr,
                                                    ull* istart, ull* iend) {
  return GOMP_loop_ull_runtime_start(up, start, end, incr, istart, iend);
}
bool GOMP_loop_ull_ordered_static_start(bool up, ull start, ull end, ull incr, ull chunk,
                                        ull* istart, ull* iend) {
  return start_ull(up, start, end, incr,
                   fixed_schedule(ScheduleKind::static_, static_cast<long>(chunk)), true, istart,
                   iend);
}
bool GOMP_loop_ull_ordered_dynamic_start(bool up, ull start, ull end, ull incr, ull chunk,
                                         ull* istart, ull* iend) {
  return start_ull(up, start, end, incr,
                   fixed_schedule(ScheduleKind::dynamic, static_cast<long>(chunk)), true, istart,
                   iend);
}
bool GOMP_loop_ull_ordered_guided_start(bool up, ull start, ull end, ull incr, ull chunk,
                                        ull* istart, ull* iend) {
  return start_ull(up, start, end, incr,
                   fixed_schedule(ScheduleKind::guided, static_cast<long>(chunk)), true, istart,
                   iend);
}
bool GOMP_loop_ull_ordered_runtime_start(bool up, ull start, ull end, ull incr, ull* istart,
                                         ull* iend) {
  return start_ull(up, start, end, incr, kRuntimeSchedule, true, istart, iend);
}
bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull* istart,
                         ull* iend, uintptr_t* reductions, void** mem) {
  return start_ull(up, start, end, incr,
                   decode_schedule(sched, static_cast<long>(chunk), "GOMP_loop_start"), false,
                   istart, iend, {reductions, mem});
}
bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr, long sched, ull chunk,
                                 ull* istart, ull* iend, uintptr_t* reductions, void** mem) {
  return start_ull(up, start, end, incr,
                   decode_schedule(sched, static_cast<long>(chunk), "GOMP_loop_start"), true,
                   istart, iend, {reductions, mem});
}
bool GOMP_loop_ull_static_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_dynamic_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_guided_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_runtime_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_nonmonotonic_dynamic_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_nonmonotonic_guided_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_nonmonotonic_runtime_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_ordered_static_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_ordered_dynamic_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_ordered_guided_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}
bool GOMP_loop_ull_ordered_runtime_next(ull* istart, ull* iend) {
  return next_chunk(istart, iend);
}

void GOMP_ordered_start() {
  ordered_wait(self());
}
// The turn passes when the chunk ends (loop_next, loop_end), not here: an iteration may run no
// ordered region at all.
void GOMP_ordered_end() {}

}  // extern "C"
