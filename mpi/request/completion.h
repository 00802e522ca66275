// How a thread waits for operations that other threads complete (a receive matched by a sender, a
// rendezvous send copied by its receiver, a probe satisfied by an arrival).
//
// A Completion is one word: pending, done, freed (MPI_Request_free on a pending request: the
// completer then owns the request), or the address of the Parker of a thread waiting for it.
// The completer only swaps the word and, when a Parker was there, notifies it: it never touches
// the waiting thread's object otherwise, so a waiter may reclaim its request (even a stack one)
// the moment it sees "done". One Parker may be armed on many Completions (MPI_Waitany).
#pragma once

#include <atomic>
#include <cstdint>

#include "weft/detail/wait_list.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

namespace weft::mpi {

// A waiting thread's parking spot, on its own stack.
class Parker {
 public:
  // By a completer: counts one notification and wakes the waiter.
  void notify() noexcept;
  // Parks until more than `seen` notifications arrived; returns their number.
  std::uint32_t wait_beyond(std::uint32_t seen);
  // Returns once `expected` notifications arrived: from then on no completer touches the Parker,
  // which may go out of scope.
  void drain(std::uint32_t expected);

 private:
  std::uint32_t count_ = 0;  // guarded by waiters_.lock
  detail::WaitList waiters_;
};

class Completion {
 public:
  // Re-arms a completed persistent request; only its owner calls it, with nobody waiting.
  void reset() noexcept { state_.store(kPending, std::memory_order_relaxed); }
  // acquire: what the completer wrote before complete() is visible after done() is true.
  bool done() const noexcept { return state_.load(std::memory_order_acquire) == kDone; }

  // By the completer, after it wrote the results. Returns true when the owner had freed the
  // request: the caller must then dispose of it.
  bool complete() noexcept {
    // acq_rel: release publishes the results; acquire pairs with the arm() of a waiter.
    const std::uintptr_t old = state_.exchange(kDone, std::memory_order_acq_rel);
    if (old > kFreed) reinterpret_cast<Parker*>(old)->notify();
    return old == kFreed;
  }

  // By the owner: arranges for `parker` to be notified at completion. False when already done.
  bool arm(Parker* parker) noexcept {
    std::uintptr_t expected = kPending;
    return state_.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(parker),
                                          std::memory_order_acq_rel, std::memory_order_acquire);
  }
  // By the owner: withdraws `parker`. False when the completer already took it (and notifies
  // it, or has).
  bool disarm(Parker* parker) noexcept {
    std::uintptr_t expected = reinterpret_cast<std::uintptr_t>(parker);
    return state_.compare_exchange_strong(expected, kPending, std::memory_order_acq_rel,
                                          std::memory_order_acquire);
  }
  // By the owner, giving the pending request up. False when it is already done (the owner still
  // owns it then).
  bool mark_freed() noexcept {
    std::uintptr_t expected = kPending;
    return state_.compare_exchange_strong(expected, kFreed, std::memory_order_acq_rel,
                                          std::memory_order_acquire);
  }

 private:
  static constexpr std::uintptr_t kPending = 0, kDone = 1, kFreed = 2;
  std::atomic<std::uintptr_t> state_{kPending};
};

// The adaptive spin before a wait parks, one per rank: it doubles (plus 1 us) after a spin that
// saw the completion and halves after one that ended in a park, up to the scheduler's
// scheduler.spin_us ceiling, so a rank whose waits are long stops burning its core. A park that
// ended sooner than the ceiling raises it to twice that wait: spinning that long would have been
// cheaper than parking, and without it a run of long waits (large messages) would leave the
// budget at zero for the short ones that follow.
//
// A spin yields to the core's other threads. When the threads that ran meanwhile held the core
// longer each, on average, than kTurnOfComputingNs, they compute (they reach a
// scheduling point only at the end of a time slice): the spin then ends, and the next
// kSkippedSpins waits park at once, because a spinning thread is queued behind every computing
// thread's slice while a parked one is run at the first scheduling point after its wake-up. The
// wait after them probes with a spin again. Threads that take many short turns (ranks in a
// collective) do not count as computing, however long the yield.
class SpinBudget {
 public:
  void set_limit(std::int64_t limit_ns) noexcept;
  std::int64_t limit_ns() const noexcept { return limit(); }
  // Spins (yielding to the core's other threads) until done() or the budget runs out; true
  // when done.
  bool spin(const Completion& completion) noexcept;
  template <class Pred>
  bool spin_until(Pred&& pred) noexcept;
  // After a park of `parked_ns` that followed a failed spin.
  void parked(std::int64_t parked_ns) noexcept;
  // Parks so far, for the tools interface (mpi/mpi_t/).
  std::uint64_t parks() const noexcept { return parks_.load(std::memory_order_relaxed); }
  // Called at every round of a spin (the transport between processes, whose messages arrive
  // only when someone progresses it); none by default.
  void set_progress(bool (*progress)(void*), void* context) noexcept {
    progress_ = progress;
    progress_context_ = context;
  }

 private:
  // A turn this long means a thread that computes: well above a park and its wake-up (1-2 us)
  // and the I/O manager's poll at a switch (a system call, a few us on a VM).
  static constexpr std::int64_t kTurnOfComputingNs = 10'000;
  static constexpr int kSkippedSpins = 16;
  // Transport polls per yield when the core runs nobody else (spin_until).
  static constexpr int kPollsPerYield = 8;
  bool keep_spinning(std::int64_t start_ns) noexcept;
  void succeeded() noexcept;
  std::int64_t limit() const noexcept { return limit_ns_.load(std::memory_order_relaxed); }
  // relaxed: MPI_T_cvar_write of scheduler.spin_us changes it while the rank's threads spin.
  std::atomic<std::int64_t> limit_ns_{0};
  // relaxed: a heuristic shared by the rank's threads; a lost update costs nothing.
  std::atomic<std::int64_t> budget_ns_{0};
  // relaxed, like budget_ns_.
  std::atomic<int> spins_to_skip_{0};
  // relaxed: a statistic; fetch_add because the rank's threads may park at once, and a park
  // costs far more than the add.
  std::atomic<std::uint64_t> parks_{0};
  bool (*progress_)(void*) = nullptr;
  void* progress_context_ = nullptr;
};

std::int64_t monotonic_ns() noexcept;

template <class Pred>
bool SpinBudget::spin_until(Pred&& pred) noexcept {
  std::int64_t start = 0;  // read only once the first rounds failed: most waits end sooner
  // Whether the last yield ran other threads: only then is the next one timed (a clock read
  // costs as much as a yield that finds nothing else to run).
  bool others = true;
  for (unsigned round = 1;; ++round) {
    if (progress_ != nullptr) {
      // While the core has nothing else to run (the last yield ran nobody), poll the transport
      // several times per yield: a yield runs the switch hooks and every 16th one the
      // processor's housekeeping, which made a round several times the cost of one poll, and
      // a message that arrives during a round is seen only at the next poll.
      const int polls = others ? 1 : kPollsPerYield;
      bool met = false;
      for (int poll = 0; poll < polls && !met; ++poll) {
        progress_(progress_context_);
        met = pred();
      }
      if (met) {
        succeeded();
        return true;
      }
    } else if (pred()) {
      succeeded();
      return true;
    }
    if (round == 1) {
      const int skip = spins_to_skip_.load(std::memory_order_relaxed);
      if (skip > 0) {
        spins_to_skip_.store(skip - 1, std::memory_order_relaxed);
        return false;
      }
    }
    const std::int64_t before = others ? monotonic_ns() : 0;
    // A yield costs less than a pause instruction when the core has nothing else to run, and
    // when it has, the awaited event often depends on that other thread (ranks share cores).
    // Untimed in a trace: between its yields the thread only polls (trace::mark_polling_yield).
    trace::mark_polling_yield();
    const std::uint64_t turns = this_thread::yield();
    others = turns != 0;
    if (others && before != 0 &&
        monotonic_ns() - before > kTurnOfComputingNs * static_cast<std::int64_t>(turns)) {
      spins_to_skip_.store(kSkippedSpins, std::memory_order_relaxed);
      return false;
    }
    if (round % 16 == 0) {
      if (start == 0) {
        start = monotonic_ns();
      } else if (!keep_spinning(start)) {
        return false;
      }
    }
  }
}

inline bool SpinBudget::spin(const Completion& completion) noexcept {
  return spin_until([&] { return completion.done(); });
}

// Waits for one completion: spin, then park.
void wait(Completion& completion, SpinBudget& budget);

}  // namespace weft::mpi
