#include "weft/sync.h"

namespace weft {

void ConditionVariable::notify_one() {
  waiters_.lock.lock();
  detail::WaiterChain woken = waiters_.take_one();
  waiters_.lock.unlock();
  woken.deliver();
}

void ConditionVariable::notify_all() {
  waiters_.lock.lock();
  detail::WaiterChain woken = waiters_.take_all();
  waiters_.lock.unlock();
  woken.deliver();
}

void ConditionVariable::wait(std::unique_lock<Mutex>& lock) {
  // Listed before the mutex is released: a notify issued after the unlock finds us.
  waiters_.lock.lock();
  lock.unlock();
  waiters_.wait();
  lock.lock();
}

bool ConditionVariable::wait_until(std::unique_lock<Mutex>& lock,
                                   std::chrono::steady_clock::time_point deadline) {
  waiters_.lock.lock();
  lock.unlock();
  const bool notified = waiters_.wait(deadline);
  lock.lock();
  return notified;
}

}  // namespace weft
