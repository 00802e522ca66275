#include <optional>

#include "spin_wait.h"
#include "weft/sync.h"

namespace weft {

void Event::set() {
  waiters_.lock.lock();
  detail::WaiterChain woken;
  if (mode_ == Mode::manual) {
    set_.store(true, std::memory_order_release);
    woken = waiters_.take_all();
  } else {
    // An automatic event hands the set straight to one waiter, if any.
    woken = waiters_.take_one();
    if (woken.empty()) set_.store(true, std::memory_order_release);
  }
  waiters_.lock.unlock();
  woken.deliver();
}

void Event::clear() {
  set_.store(false, std::memory_order_relaxed);
}

bool Event::is_set() const {
  return set_.load(std::memory_order_acquire);
}

void Event::wait() {
  wait_until(std::chrono::steady_clock::time_point::max());
}

bool Event::wait_until(std::chrono::steady_clock::time_point deadline) {
  auto consume = [this] {
    if (mode_ == Mode::manual) return set_.load(std::memory_order_acquire);
    // A load first: a spinning waiter that tried the compare-and-swap every time would keep
    // taking the line from the thread about to set it.
    if (!set_.load(std::memory_order_relaxed)) return false;
    bool expected = true;
    return set_.compare_exchange_strong(expected, false, std::memory_order_acquire);
  };
  if (consume()) return true;
  if (detail::spin_wait(consume)) return true;
  waiters_.lock.lock();
  if (consume()) {
    waiters_.lock.unlock();
    return true;
  }
  std::optional<std::chrono::steady_clock::time_point> limit;
  if (deadline != std::chrono::steady_clock::time_point::max()) limit = deadline;
  return waiters_.wait(limit);
}

}  // namespace weft
