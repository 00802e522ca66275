#include "spin_wait.h"
#include "weft/sync.h"

namespace weft {

namespace {
enum : std::uint32_t { kFree = 0, kLocked = 1, kContended = 2 };
}

bool Mutex::try_lock() {
  std::uint32_t expected = kFree;
  // acquire: the critical section sees what the previous holder wrote.
  return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                        std::memory_order_relaxed);
}

void Mutex::lock() {
  if (try_lock()) return;
  if (detail::spin_wait(
          [this] { return state_.load(std::memory_order_relaxed) == kFree && try_lock(); })) {
    return;
  }
  for (;;) {
    waiters_.lock.lock();
    // Marked contended under the list's lock: an unlock that sees it takes the same lock to wake
    // us, so it cannot run between this exchange and our enqueue.
    if (state_.exchange(kContended, std::memory_order_acquire) == kFree) {
      waiters_.lock.unlock();
      return;
    }
    waiters_.wait();
  }
}

void Mutex::unlock() {
  // release: publishes the critical section to the next owner.
  if (state_.exchange(kFree, std::memory_order_release) != kContended) return;
  waiters_.lock.lock();
  detail::WaiterChain next = waiters_.take_one();
  waiters_.lock.unlock();
  next.deliver();
}

}  // namespace weft
