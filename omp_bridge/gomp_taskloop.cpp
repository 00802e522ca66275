// GOMP_taskloop: a loop cut into tasks, by default in a taskgroup.
#include <algorithm>

#include "gomp_abi.h"
#include "task_scheduling.h"

namespace weft::omp {
namespace {

// GOMP_taskloop's flags (GCC's gomp-constants.h).
constexpr unsigned kFinal = 1U << 1;
constexpr unsigned kUp = 1U << 8;
constexpr unsigned kGrainsize = 1U << 9;
constexpr unsigned kIf = 1U << 10;
constexpr unsigned kNogroup = 1U << 11;
constexpr unsigned kReduction = 1U << 12;
constexpr unsigned kStrict = 1U << 14;

void taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
              long arg_align, unsigned flags, unsigned long num_tasks, int priority,
              const IterationSpace& space) {
  // An empty loop with reductions still registers them: GCC's code combines and unregisters.
  if (space.count == 0 && (flags & kReduction) == 0) return;
  ThreadState& state = self();
  std::uint64_t tasks = 0;
  std::uint64_t grain = 0;
  if ((flags & kGrainsize) != 0) {
    grain = std::max<std::uint64_t>(1, num_tasks);
    tasks = std::max<std::uint64_t>(1, space.count / grain);
    if ((flags & kStrict) != 0) tasks = (space.count + grain - 1) / grain;
  } else {
    const std::uint64_t wanted =
        num_tasks != 0 ? num_tasks : static_cast<std::uint64_t>(state.team().size);
    tasks = std::min<std::uint64_t>(space.count, std::max<std::uint64_t>(1, wanted));
  }
  if (space.count == 0) tasks = 0;
  if ((flags & kNogroup) == 0) {
    GOMP_taskgroup_start();
    // reduction(...) on the taskloop: GCC's descriptor follows the two bounds in `data`; its
    // tasks find their thread's copy in it, and GCC's code combines the copies after the call.
    if ((flags & kReduction) != 0) {
      GOMP_taskgroup_reduction_register(static_cast<uintptr_t**>(data)[2]);
    }
  }
  std::uint64_t lo = 0;
  for (std::uint64_t t = 0; t < tasks; ++t) {
    std::uint64_t hi = 0;
    if ((flags & kStrict) != 0 && grain != 0) {
      hi = std::min(space.count, lo + grain);
    } else {
      hi = lo + space.count / tasks + (t < space.count % tasks ? 1 : 0);
    }
    long bounds[2] = {static_cast<long>(space.at(lo)), static_cast<long>(space.at(hi))};
    spawn_task(state, fn, data, cpyfn, arg_size, arg_align, (flags & kIf) != 0,
               (flags & kFinal) != 0, nullptr, task_priority(flags, priority), bounds);
    lo = hi;
  }
  if ((flags & kNogroup) == 0) GOMP_taskgroup_end();
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                   long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                   long start, long end, long step) {
  taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,
           IterationSpace::of_long(start, end, step));
}

void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                       long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                       ull start, ull end, ull step) {
  taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,
           IterationSpace::of_ull((flags & kUp) != 0, start, end, step));
}

}  // extern "C"
