// Worksharing loops and sections: how a thread enters a loop construct, takes chunks of its
// iteration space by schedule, keeps ordered regions in iteration order, and leaves.
#pragma once

#include <cstdint>
#include <functional>

#include "icv.h"
#include "thread_state.h"
#include "work_share.h"

namespace weft::omp {

// A schedule as GCC's entry points name it: the runtime one reads run-sched-var.
struct LoopSchedule {
  bool runtime = false;
  ScheduleKind kind = ScheduleKind::static_;
  long chunk = 0;
  // LLVM's simd schedules (schedule(simd:...)): chunks are multiples of this SIMD width. A runtime
  // schedule then multiplies run-sched-var's chunk by it, as libomp does.
  long simd_width = 1;
};

// schedule(runtime): the kind and chunk come from OMP_SCHEDULE when the loop starts.
inline constexpr LoopSchedule kRuntimeSchedule{true, ScheduleKind::static_, 0, 1};
inline LoopSchedule fixed_schedule(ScheduleKind kind, long chunk) {
  return {false, kind, chunk, 1};
}
// The `sched` of a GOMP_*_start entry point (a kind, possibly with the monotonic bit); an unknown
// kind ends the program, naming `call`.
LoopSchedule decode_schedule(long sched, long chunk, const char* call);

// Initializes `ws` for a loop (the thread that entered it first does).
void prepare_loop(ThreadState& self, WorkShare& ws, const IterationSpace& space,
                  LoopSchedule schedule, bool ordered);

// What GCC's GOMP_*_start entry points of OpenMP 5 may also ask of a construct: `reductions`,
// its task reductions (reduction(task, ...), task_reduction.h), and `mem`, a request for *mem
// zeroed bytes shared by the team for the construct's length (lastprivate(conditional), inscan),
// whose address replaces *mem. Null when not asked.
struct ConstructRequests {
  std::uintptr_t* reductions = nullptr;
  void** mem = nullptr;
};

// Enters the caller's next worksharing construct as a loop and takes its first chunk [lo, hi) of
// iteration indices; false when none is left for the caller. With `lo` null (GCC's way of opening
// a construct only for `requests`), takes no chunk and returns true.
bool loop_start(ThreadState& self, const IterationSpace& space, LoopSchedule schedule, bool ordered,
                std::uint64_t* lo, std::uint64_t* hi, ConstructRequests requests = {});
// The same, with `prepare` initializing the construct in the thread that enters it first.
bool loop_start_prepared(ThreadState& self, const std::function<void(WorkShare&)>& prepare,
                         std::uint64_t* lo, std::uint64_t* hi, ConstructRequests requests = {});
bool loop_next(ThreadState& self, std::uint64_t* lo, std::uint64_t* hi);
// Leaves the loop; with `wait`, at the team's barrier. Returns whether the region was cancelled.
bool loop_end(ThreadState& self, bool wait);

// ordered regions: waits until the caller's chunk is the next in iteration order.
void ordered_wait(ThreadState& self);

}  // namespace weft::omp
