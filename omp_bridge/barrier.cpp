#include "task_scheduling.h"
#include "team.h"
#include "thread_state.h"
#include "weft/this_thread.h"
#include "weft/trace_team.h"

namespace weft::omp {

namespace {

// At a barrier or join, before taking queued tasks of its teammates, a thread lets the threads
// waiting for its core run first. In a team with more threads than cores those are teammates that
// have not finished their own part of the region: each creates its tasks and runs most of them
// at once (past the throttle), on its core, with its own block cache. Taken from the other core
// instead, the tasks of a teammate still creating leave it room under the throttle, so the rest
// of its share went through the queue, across the cores, and through the heap of the other
// kernel thread (syncbench's TASK, 8 threads on 2 cores: docs/omp_bridge.md). Once, on arrival:
// the teammates that ran meanwhile arrive too, and a thread alone on its core loses nothing (a
// yield with nobody to run returns at once).
void let_core_run_others_first(const TaskQueue& tasks) {
  if (tasks.maybe_ready()) this_thread::yield();
}

}  // namespace

bool TeamBarrier::try_complete(std::uint64_t generation) {
  if (arrived_.load(std::memory_order_acquire) != size_) return false;
  // arrived_ cannot drop before the barrier completes, so no task can be created between this
  // check and the compare-and-swap below except by a running task, which keeps pending() above 0.
  if (tasks_.pending() != 0) return false;
  int expected = size_;
  // acq_rel: the winner sees every arrival; its release of the generation publishes them all.
  if (!arrived_.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return false;
  generation_.store(generation + 1, std::memory_order_release);
  signal_.notify();
  return true;
}

void TeamBarrier::wait(ThreadState& self) {
  // The master's span is timed, the workers' read no clock but where they resumed from a park
  // (trace::TeamSpan): what shows who waited is the park, the resume and the master's span.
  // Each ends right after the wait's return, or after a task's span.
  const trace::TeamSpan span(trace::Category::omp, "barrier", 0, 0,
                             self.num() == 0 ? trace::Member::master : trace::Member::worker_wait);
  // Read before arriving: the barrier cannot complete (and move on) before this thread arrives.
  const std::uint64_t generation = generation_.load(std::memory_order_acquire);
  // acq_rel: publishes this thread's writes to whoever completes the barrier.
  arrived_.fetch_add(1, std::memory_order_acq_rel);
  let_core_run_others_first(tasks_);
  for (;;) {
    if (generation_.load(std::memory_order_acquire) != generation) return;
    if (cancelled_.load(std::memory_order_relaxed)) return;
    if (try_complete(generation)) return;
    if (run_one_task(self, nullptr)) continue;
    signal_.wait([&] {
      return generation_.load(std::memory_order_acquire) != generation || tasks_.maybe_ready() ||
             cancelled_.load(std::memory_order_relaxed) ||
             (arrived_.load(std::memory_order_relaxed) == size_ && tasks_.pending() == 0);
    });
  }
}

void worker_join(ThreadState& self, Team& team) {
  let_core_run_others_first(team.tasks);
  if (team.tasks.pending() != 0) {
    // A worker's join is recorded only where it waits for the team's tasks: otherwise it lasts
    // a few stores, and the master's join is the team's (2 records a worker less per region).
    const trace::TeamSpan join(trace::Category::omp, "join", 0, 0, trace::Member::worker_wait);
    while (team.tasks.pending() != 0) {
      if (run_one_task(self, nullptr)) continue;
      team.signal.wait([&] { return team.tasks.pending() == 0 || team.tasks.maybe_ready(); });
    }
  }
  // relaxed: the master waits for 0 only after it saw the join below, which comes after this.
  team.touching.fetch_add(1, std::memory_order_relaxed);
  // release: the worker's writes in the region, for the master.
  team.joined.fetch_add(1, std::memory_order_release);
  team.signal.notify();
  // release: the worker's last touch of the team.
  team.touching.fetch_sub(1, std::memory_order_release);
}

void master_join(ThreadState& self, Team& team) {
  const int workers = team.size - 1;
  auto done = [&] {
    // acquire: the workers' writes (with pending()'s acquire, the tasks').
    return team.joined.load(std::memory_order_acquire) == workers && team.tasks.pending() == 0;
  };
  let_core_run_others_first(team.tasks);
  while (!done()) {
    if (run_one_task(self, nullptr)) continue;
    team.signal.wait([&] { return done() || team.tasks.maybe_ready(); });
  }
  // A thread that made done() true may still be notifying: a short window.
  while (team.touching.load(std::memory_order_acquire) != 0) this_thread::yield();
}

}  // namespace weft::omp
