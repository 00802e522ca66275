// How a team's threads wait for each other (barriers, joins, taskwait): spin a short budget,
// yielding the core to its other threads (in an oversubscribed team the awaited thread is often
// one of them), then sleep until a teammate that changed the awaited state calls notify(). A
// woken thread is queued at once, where a collaborative wait would wait for its core to poll.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>

#include "weft/sync.h"
#include "weft/this_thread.h"

namespace weft::omp {

class Signal {
 public:
  template <class Pred>
  void wait(Pred&& pred) {
    if (pred()) return;
    const auto deadline = std::chrono::steady_clock::now() + spin_budget();
    for (int round = 0; !pred(); ++round) {
      // The clock is read every few rounds only: a round is a yield, often a context switch.
      if ((round & 7) == 7 && std::chrono::steady_clock::now() >= deadline) {
        sleep(pred);
        return;
      }
      this_thread::yield();
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

 private:
  template <class Pred>
  void sleep(Pred& pred) {
    std::unique_lock<weft::Mutex> lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    while (!pred()) condition_.wait(lock);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // scheduler.spin_us, the budget every weft wait spins before it parks.
  static std::chrono::nanoseconds spin_budget();

  weft::Mutex mutex_;
  weft::ConditionVariable condition_;
  std::atomic<int> sleepers_{0};
};

}  // namespace weft::omp
