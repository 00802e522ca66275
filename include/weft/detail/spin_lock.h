// A test-and-test-and-set lock for the scheduler's short critical sections (a queue push, a list
// unlink). Its holders never park or switch context while holding it. After a bounded spin the
// waiter yields its kernel thread: on an oversubscribed machine the holder may be descheduled.
#pragma once

#include <atomic>
#include <thread>

namespace weft::detail {

inline void spin_pause() noexcept {
  __builtin_ia32_pause();
}

class SpinLock {
 public:
  void lock() noexcept {
    // acquire: the critical section must see what the previous holder wrote before unlock().
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    lock_slow();
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  // release: publishes the critical section to the next holder.
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  void lock_slow() noexcept {
    for (int spins = 0;; ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < 128) {
          spin_pause();
        } else {
          std::this_thread::yield();
          spins = 0;
        }
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }

  std::atomic<bool> locked_{false};
};

}  // namespace weft::detail
