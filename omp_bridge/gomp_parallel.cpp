// GOMP's entry points for parallel regions, barriers, sections and single.
#include "gomp_abi.h"
#include "loop.h"
#include "parallel.h"
#include "task_reduction.h"
#include "team.h"
#include "weft/error.h"

namespace weft::omp {
namespace {

// Sections run as a dynamic loop of chunk 1 over section numbers 1..count.
IterationSpace sections_space(unsigned count) {
  return IterationSpace::of_long(1, static_cast<long>(count) + 1, 1);
}

constexpr LoopSchedule kOneByOne{false, ScheduleKind::dynamic, 1};

unsigned section_number(const IterationSpace& space, std::uint64_t lo) {
  return static_cast<unsigned>(space.at(lo));
}

// Enters the caller's next construct as a single; true in the thread that executes it.
WorkShare& enter_single(ThreadState& state, bool* first) {
  const std::uint64_t index = state.context.constructs++;
  WorkShare& ws = state.team().slots[index % kWorkShareSlots];
  Signal& signal = state.team().signal;
  *first = ws.enter(index, signal);
  if (*first) ws.published(signal);
  return ws;
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  run_parallel(fn, data, num_threads, flags);
}

// reduction(task, ...) on a parallel region: the registration's descriptor is the first word of
// `data`; its copies exist before the threads start, and every implicit task runs in the
// taskgroup that holds it. GCC's code combines the copies of the returned team size and then
// unregisters.
unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads,
                                  unsigned flags) {
  ThreadState& caller = self();
  const int size = reserve_threads(caller, team_size(caller, num_threads));
  TaskGroup group;
  group.reductions = *static_cast<uintptr_t**>(data);
  register_reductions(group.reductions, nullptr, nullptr, size);
  run_parallel(fn, data, static_cast<unsigned>(size), flags, {}, &group, true);
  release_threads(caller, size);
  return static_cast<unsigned>(size);
}

// The scope construct with task reductions: a worksharing construct of no work, whose first
// thread allocates the copies. GCC's code ends it with a barrier, combines, and calls
// GOMP_workshare_task_reduction_unregister.
void GOMP_scope_start(uintptr_t* reductions) {
  ThreadState& state = self();
  const std::uint64_t index = state.context.constructs++;
  WorkShare& ws = state.team().slots[index % kWorkShareSlots];
  Signal& signal = state.team().signal;
  const bool initializer = ws.enter(index, signal);
  register_workshare_reductions(state, ws, initializer, reductions);
  if (initializer) ws.published(signal);
  ws.leave(state.team().size, signal);
}

void GOMP_barrier() {
  ThreadState& state = self();
  state.team().barrier.wait(state);
}

unsigned GOMP_sections_start(unsigned count) {
  ThreadState& state = self();
  const IterationSpace space = sections_space(count);
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  if (!loop_start(state, space, kOneByOne, false, &lo, &hi)) return 0;
  return section_number(space, lo);
}

unsigned GOMP_sections2_start(unsigned count, uintptr_t* reductions, void** mem) {
  ThreadState& state = self();
  const IterationSpace space = sections_space(count);
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  if (!loop_start(state, space, kOneByOne, false, &lo, &hi, {reductions, mem})) return 0;
  return section_number(space, lo);
}

unsigned GOMP_sections_next() {
  ThreadState& state = self();
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  if (!loop_next(state, &lo, &hi)) return 0;
  return section_number(state.context.loop.ws->space, lo);
}

void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads, unsigned count,
                            unsigned flags) {
  run_parallel(fn, data, num_threads, flags, [count](ThreadState& master, WorkShare& ws) {
    prepare_loop(master, ws, sections_space(count), kOneByOne, false);
  });
}

void GOMP_sections_end() {
  loop_end(self(), true);
}
void GOMP_sections_end_nowait() {
  loop_end(self(), false);
}
bool GOMP_sections_end_cancel() {
  return loop_end(self(), true);
}

bool GOMP_single_start() {
  ThreadState& state = self();
  bool first = false;
  WorkShare& ws = enter_single(state, &first);
  ws.leave(state.team().size, state.team().signal);
  return first;
}

// copyprivate: the executing thread gets null and publishes its data through
// GOMP_single_copy_end; the others get that data. GCC puts a barrier after both, so the data
// outlives the copies.
void* GOMP_single_copy_start() {
  ThreadState& state = self();
  bool first = false;
  WorkShare& ws = enter_single(state, &first);
  if (first) {
    state.context.loop.ws = &ws;
    return nullptr;
  }
  // acquire: the executing thread's data, published with release.
  state.team().signal.wait([&] { return ws.copy_ready.load(std::memory_order_acquire); });
  void* data = ws.copy;
  ws.leave(state.team().size, state.team().signal);
  return data;
}

void GOMP_single_copy_end(void* data) {
  ThreadState& state = self();
  WorkShare& ws = *state.context.loop.ws;
  state.context.loop = {};
  ws.copy = data;
  ws.copy_ready.store(true, std::memory_order_release);
  state.team().signal.notify();
  ws.leave(state.team().size, state.team().signal);
}

}  // extern "C"
