// The queue of threads waiting on a blocking primitive. A Waiter lives on the waiting thread's
// stack while it is listed; it is either a parked weft thread or a blocked kernel thread.
//
// Waking is two-phase: under the list's lock the waker unlinks waiters and marks them notified
// (take_one / take_all); after releasing the lock it delivers the wake-ups (WaiterChain), so
// waking never holds the lock across a futex call or a run-queue push. (ConditionVariable::wait
// releases its mutex, which may wake a thread, under its own list's lock: the order condition
// variable, then mutex, is the only nesting.) A notified waiter does not leave (its stack frame
// stays valid) until its wake-up has been delivered.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "weft/detail/spin_lock.h"

namespace weft::detail {

struct Fiber;

struct Waiter {
  Waiter* next = nullptr;
  Waiter* prev = nullptr;
  Fiber* fiber = nullptr;                   // null for a kernel thread outside weft
  std::uint64_t epoch = 0;                  // park epoch of `fiber`, so a late wake-up is ignored
  bool notified = false;                    // written under the list's lock
  std::atomic<std::uint32_t> delivered{0};  // set last by the waker; futex word of kernel waiters
};

// Waiters unlinked under the lock, to be woken after it is released.
class WaiterChain {
 public:
  WaiterChain() = default;
  explicit WaiterChain(Waiter* head) noexcept : head_(head) {}
  bool empty() const noexcept { return head_ == nullptr; }
  void deliver() noexcept;

 private:
  Waiter* head_ = nullptr;
};

class WaitList {
 public:
  SpinLock lock;  // guards the list and, by convention, the primitive's own state

  bool empty() const noexcept { return head_ == nullptr; }
  // Both require `lock` to be held.
  WaiterChain take_one() noexcept;
  WaiterChain take_all() noexcept;

  // Adds the calling thread (weft thread or kernel thread) to the list and waits. `lock` is held
  // on entry and released while waiting; it is not held on return. Returns true when notified,
  // false when `deadline` passed first.
  bool wait(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

 private:
  void push_back(Waiter* waiter) noexcept;
  bool remove(Waiter* waiter) noexcept;

  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
};

}  // namespace weft::detail
