#include "cancellation.h"

#include "gomp_abi.h"
#include "team.h"

namespace weft::omp {

namespace {

// GOMP_cancel's `which` (GCC's gomp-constants.h).
constexpr int kParallel = 1;
constexpr int kLoop = 2;
constexpr int kSections = 4;
constexpr int kTaskgroup = 8;

// relaxed throughout: a cancellation flag only makes threads skip work; the barriers and joins
// that follow order everything else.
bool is_cancelled(ThreadState& state, int which) {
  switch (which) {
    case kParallel:
      return state.team().cancelled.load(std::memory_order_relaxed);
    case kLoop:
    case kSections: {
      const WorkShare* ws = state.context.loop.ws;
      return ws != nullptr && ws->cancelled.load(std::memory_order_relaxed);
    }
    case kTaskgroup: {
      return taskgroup_cancelled(state.task().counted_in);
    }
    default:
      return false;
  }
}

}  // namespace

bool cancelled(ThreadState& self, const WorkShare& ws) {
  return global_icvs().cancellation && (ws.cancelled.load(std::memory_order_relaxed) ||
                                        self.team().cancelled.load(std::memory_order_relaxed));
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

bool GOMP_cancellation_point(int which) {
  if (!global_icvs().cancellation) return false;
  ThreadState& state = self();
  return is_cancelled(state, which) || state.team().cancelled.load(std::memory_order_relaxed);
}

bool GOMP_cancel(int which, bool do_cancel) {
  if (!global_icvs().cancellation) return false;
  if (!do_cancel) return GOMP_cancellation_point(which);
  ThreadState& state = self();
  switch (which) {
    case kParallel:
      state.team().cancelled.store(true, std::memory_order_relaxed);
      // Threads asleep in a barrier leave it.
      state.team().signal.notify();
      break;
    case kLoop:
    case kSections:
      if (WorkShare* ws = state.context.loop.ws)
        ws->cancelled.store(true, std::memory_order_relaxed);
      break;
    case kTaskgroup:
      if (TaskGroup* group = state.task().group) {
        if (group->workshare && group->outer != nullptr) group = group->outer;
        group->cancelled.store(true, std::memory_order_relaxed);
      }
      break;
    default:
      break;
  }
  return true;
}

bool GOMP_barrier_cancel() {
  ThreadState& state = self();
  state.team().barrier.wait(state);
  return state.team().cancelled.load(std::memory_order_relaxed);
}

}  // extern "C"
