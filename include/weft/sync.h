// Blocking primitives for weft threads. A weft thread that waits parks (its core runs something
// else) after a short adaptive spin; a kernel thread outside weft that waits blocks in the kernel.
// Either kind of thread may wake either kind.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

#include "weft/detail/wait_list.h"

namespace weft {

class Mutex {
 public:
  void lock();
  bool try_lock();
  void unlock();

 private:
  friend class ConditionVariable;
  std::atomic<std::uint32_t> state_{0};  // 0 free, 1 locked, 2 locked with waiters
  detail::WaitList waiters_;
};

class ConditionVariable {
 public:
  void notify_one();
  void notify_all();
  void wait(std::unique_lock<Mutex>& lock);
  template <class Predicate>
  void wait(std::unique_lock<Mutex>& lock, Predicate pred) {
    while (!pred()) wait(lock);
  }
  // False when the deadline passed without a notification.
  bool wait_until(std::unique_lock<Mutex>& lock, std::chrono::steady_clock::time_point deadline);
  bool wait_for(std::unique_lock<Mutex>& lock, std::chrono::nanoseconds timeout) {
    return wait_until(lock, std::chrono::steady_clock::now() + timeout);
  }

 private:
  detail::WaitList waiters_;
};

// A reusable barrier for `count` threads.
class Barrier {
 public:
  explicit Barrier(int count);
  // Returns true in exactly one thread of each phase (the last to arrive).
  bool arrive_and_wait();

 private:
  const int count_;
  int arrived_ = 0;
  std::atomic<std::uint64_t> phase_{0};
  detail::WaitList waiters_;
};

// A flag threads wait on. Manual: stays set until clear(). Auto: each set() releases one waiter
// (or the next one to wait) and clears itself.
class Event {
 public:
  enum class Mode { manual, automatic };
  explicit Event(Mode mode = Mode::manual) : mode_(mode) {}
  void set();
  void clear();
  bool is_set() const;
  void wait();
  bool wait_until(std::chrono::steady_clock::time_point deadline);
  bool wait_for(std::chrono::nanoseconds timeout) {
    return wait_until(std::chrono::steady_clock::now() + timeout);
  }

 private:
  const Mode mode_;
  std::atomic<bool> set_{false};
  detail::WaitList waiters_;
};

// Collaborative wait: returns once pred() is true. `poll` (may be empty) is called to make
// progress on what the caller waits for. The caller first spins for an adaptive budget, calling
// poll and letting the other threads of its core of the same or higher priority run; then it
// parks, and its core runs poll and pred on its behalf (in its idle loop and at every 16th
// scheduling point) and wakes it when pred() holds. poll and pred must not block.
void wait_until(std::function<bool()> pred, std::function<void()> poll = {});

}  // namespace weft
