// How a team's threads wait for each other (barriers, joins, taskwait): spin a budget, yielding
// the core to its other threads (in an oversubscribed team the awaited thread is often one of
// them), then sleep until a teammate that changed the awaited state calls notify(). A woken
// thread is queued at once, where a collaborative wait would wait for its core to poll.
//
// The budget adapts to how long the team's waits last: up to scheduler.spin_us, twice the length
// of a recent wait that ended asleep but within that bound (a longer spin would have caught it,
// without the wake-up), halved by waits longer than the bound (spinning only delayed the sleep),
// doubled back by waits that the spin caught. The pool keeps it from one region to the next.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

namespace weft::omp {

class Signal {
 public:
  Signal() : budget_ns_(max_budget().count()) {}

  template <class Pred>
  void wait(Pred&& pred) {
    if (pred()) return;
    // relaxed: a hint; a stale value only spins a little more or less.
    const std::int64_t budget = budget_ns_.load(std::memory_order_relaxed);
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::nanoseconds(budget);
    for (int round = 0; !pred(); ++round) {
      // The clock is read every few rounds only: a round is a yield, often a context switch.
      if ((round & 7) == 7 && std::chrono::steady_clock::now() >= deadline) {
        sleep(pred);
        slept(budget, std::chrono::steady_clock::now() - start);
        return;
      }
      trace::mark_polling_yield();
      this_thread::yield();
    }
    if (budget < max_budget().count()) {
      adapt(budget, std::min(max_budget().count(), 2 * budget));
    }
  }

  // Called after changing what waiters wait for; cheap when nobody sleeps.
  void notify() {
    // seq_cst fence: pairs with the one in sleep(), so that either the waiter sees the change or
    // this thread sees the sleeper.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard<weft::Mutex> lock(mutex_);
    condition_.notify_all();
  }

  std::int64_t budget_ns() const { return budget_ns_.load(std::memory_order_relaxed); }
  void set_budget_ns(std::int64_t budget) { budget_ns_.store(budget, std::memory_order_relaxed); }

 private:
  template <class Pred>
  void sleep(Pred& pred) {
    std::unique_lock<weft::Mutex> lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    while (!pred()) condition_.wait(lock);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  void slept(std::int64_t budget, std::chrono::nanoseconds waited) {
    const std::int64_t bound = max_budget().count();
    const std::int64_t next = waited.count() < bound ? std::min(bound, 2 * waited.count())
                                                     : std::max(kMinBudgetNs, budget / 2);
    adapt(budget, next);
  }

  // Written only when it changes, so that a team whose waits settle leaves the line shared.
  void adapt(std::int64_t budget, std::int64_t next) {
    if (next != budget) budget_ns_.store(next, std::memory_order_relaxed);
  }

  // scheduler.spin_us, the budget every weft wait spins at most before it parks.
  static std::chrono::nanoseconds max_budget();
  static constexpr std::int64_t kMinBudgetNs = 2000;

  weft::Mutex mutex_;
  weft::ConditionVariable condition_;
  std::atomic<int> sleepers_{0};
  std::atomic<std::int64_t> budget_ns_;
};

}  // namespace weft::omp
