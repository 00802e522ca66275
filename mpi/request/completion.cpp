#include "request/completion.h"

#include <time.h>

#include <algorithm>

namespace weft::mpi {

void Parker::notify() noexcept {
  waiters_.lock.lock();
  ++count_;
  detail::WaiterChain woken = waiters_.take_all();
  // After this unlock the Parker is the waiter's again (see drain()).
  waiters_.lock.unlock();
  woken.deliver();
}

std::uint32_t Parker::wait_beyond(std::uint32_t seen) {
  for (;;) {
    waiters_.lock.lock();
    if (count_ > seen) {
      const std::uint32_t count = count_;
      waiters_.lock.unlock();
      return count;
    }
    waiters_.wait();  // releases the lock
  }
}

void Parker::drain(std::uint32_t expected) {
  // Reading the count under the lock orders this return after the last notifier's unlock, its
  // final touch of the Parker.
  for (std::uint32_t count = 0; count < expected;) count = wait_beyond(count);
  waiters_.lock.lock();
  waiters_.lock.unlock();
}

std::int64_t monotonic_ns() noexcept {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void SpinBudget::set_limit(std::int64_t limit_ns) noexcept {
  limit_ns_.store(limit_ns, std::memory_order_relaxed);
  budget_ns_.store(limit_ns / 4, std::memory_order_relaxed);
}

bool SpinBudget::keep_spinning(std::int64_t start_ns) noexcept {
  if (monotonic_ns() - start_ns < budget_ns_.load(std::memory_order_relaxed)) return true;
  budget_ns_.store(budget_ns_.load(std::memory_order_relaxed) / 2, std::memory_order_relaxed);
  return false;
}

void SpinBudget::succeeded() noexcept {
  const std::int64_t grown = budget_ns_.load(std::memory_order_relaxed) * 2 + 1000;
  budget_ns_.store(std::min(grown, limit()), std::memory_order_relaxed);
}

void SpinBudget::parked(std::int64_t parked_ns) noexcept {
  parks_.fetch_add(1, std::memory_order_relaxed);
  if (parked_ns >= limit()) return;
  const std::int64_t covering = 2 * parked_ns;
  if (covering > budget_ns_.load(std::memory_order_relaxed)) {
    budget_ns_.store(std::min(covering, limit()), std::memory_order_relaxed);
  }
}

void wait(Completion& completion, SpinBudget& budget) {
  if (completion.done() || budget.spin(completion)) return;
  Parker parker;
  if (!completion.arm(&parker)) return;
  const std::int64_t parked_at = monotonic_ns();
  parker.drain(1);
  budget.parked(monotonic_ns() - parked_at);
}

}  // namespace weft::mpi
