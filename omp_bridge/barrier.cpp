#include "task_scheduling.h"
#include "team.h"
#include "thread_state.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

namespace weft::omp {

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
  // Ends right after the wait's return, or after a task's span.
  const trace::Span span(trace::Category::omp, "barrier", 0, trace::End::at_resume);
  // Read before arriving: the barrier cannot complete (and move on) before this thread arrives.
  const std::uint64_t generation = generation_.load(std::memory_order_acquire);
  // acq_rel: publishes this thread's writes to whoever completes the barrier.
  arrived_.fetch_add(1, std::memory_order_acq_rel);
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
  while (team.tasks.pending() != 0) {
    if (run_one_task(self, nullptr)) continue;
    team.signal.wait([&] { return team.tasks.pending() == 0 || team.tasks.maybe_ready(); });
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
  while (!done()) {
    if (run_one_task(self, nullptr)) continue;
    team.signal.wait([&] { return done() || team.tasks.maybe_ready(); });
  }
  // A thread that made done() true may still be notifying: a short window.
  while (team.touching.load(std::memory_order_acquire) != 0) this_thread::yield();
}

}  // namespace weft::omp
