#include <string>

#include "spin_wait.h"
#include "weft/error.h"
#include "weft/sync.h"

namespace weft {

Barrier::Barrier(int count) : count_(count) {
  if (count < 1) {
    throw Error("weft::Barrier: count = " + std::to_string(count) + "; expected at least 1");
  }
}

bool Barrier::arrive_and_wait() {
  waiters_.lock.lock();
  const std::uint64_t phase = phase_.load(std::memory_order_relaxed);
  if (++arrived_ == count_) {
    arrived_ = 0;
    // release: the spinning waiters that see the new phase see every arrival's writes.
    phase_.store(phase + 1, std::memory_order_release);
    detail::WaiterChain woken = waiters_.take_all();
    waiters_.lock.unlock();
    woken.deliver();
    return true;
  }
  waiters_.lock.unlock();
  auto released = [&] { return phase_.load(std::memory_order_acquire) != phase; };
  if (detail::spin_wait(released)) return false;
  waiters_.lock.lock();
  if (released()) {
    waiters_.lock.unlock();
    return false;
  }
  // Only the last arrival of this phase notifies, so a notification means the phase ended.
  waiters_.wait();
  return false;
}

}  // namespace weft
