#include "weft/detail/wait_list.h"

#include "current.h"
#include "fiber.h"
#include "futex.h"
#include "park.h"
#include "timer_heap.h"
#include "virtual_processor.h"

namespace weft::detail {

namespace {

std::int64_t to_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// A notified waiter whose own wake-up raced with a timeout waits for the waker to finish with
// its Waiter: the waker is between releasing the list's lock and delivering, a few instructions.
void await_delivery(const Waiter& waiter) {
  for (int spins = 0; waiter.delivered.load(std::memory_order_acquire) == 0; ++spins) {
    if (spins < 1024) {
      spin_pause();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

void WaiterChain::deliver() noexcept {
  Waiter* waiter = head_;
  head_ = nullptr;
  while (waiter != nullptr) {
    Waiter* next = waiter->next;
    Fiber* fiber = waiter->fiber;
    const std::uint64_t epoch = waiter->epoch;
    std::atomic<std::uint32_t>* word = &waiter->delivered;
    // release: the waiter may return as soon as it reads 1, so this is the last touch of it.
    word->store(1, std::memory_order_release);
    if (fiber != nullptr) {
      unpark(fiber, epoch);
    } else {
      // The futex address may already be dead: waking it is harmless (waits always re-check).
      futex_wake(word);
    }
    waiter = next;
  }
}

void WaitList::push_back(Waiter* waiter) noexcept {
  waiter->next = nullptr;
  waiter->prev = tail_;
  if (tail_ != nullptr) {
    tail_->next = waiter;
  } else {
    head_ = waiter;
  }
  tail_ = waiter;
}

bool WaitList::remove(Waiter* waiter) noexcept {
  if (waiter->notified) return false;
  if (waiter->prev != nullptr) {
    waiter->prev->next = waiter->next;
  } else {
    head_ = waiter->next;
  }
  if (waiter->next != nullptr) {
    waiter->next->prev = waiter->prev;
  } else {
    tail_ = waiter->prev;
  }
  return true;
}

WaiterChain WaitList::take_one() noexcept {
  Waiter* waiter = head_;
  if (waiter == nullptr) return {};
  head_ = waiter->next;
  if (head_ != nullptr) {
    head_->prev = nullptr;
  } else {
    tail_ = nullptr;
  }
  waiter->next = nullptr;
  waiter->notified = true;
  return WaiterChain(waiter);
}

WaiterChain WaitList::take_all() noexcept {
  Waiter* chain = head_;
  for (Waiter* w = chain; w != nullptr; w = w->next) w->notified = true;
  head_ = tail_ = nullptr;
  return WaiterChain(chain);
}

bool WaitList::wait(std::optional<std::chrono::steady_clock::time_point> deadline) {
  Waiter waiter;
  Fiber* self = current_fiber();
  if (self != nullptr) {
    waiter.fiber = self;
    waiter.epoch = prepare_park(self);
    push_back(&waiter);
    TimerNode timer;
    if (deadline) {
      timer.deadline_ns = to_ns(*deadline);
      timer.fiber = self;
      timer.epoch = waiter.epoch;
      current_vp()->add_timer(&timer);
    }
    lock.unlock();
    park();
    if (deadline) timer.heap->cancel(&timer);
    lock.lock();
    const bool notified = waiter.notified;
    if (!notified) remove(&waiter);
    lock.unlock();
    if (notified) await_delivery(waiter);
    return notified;
  }

  push_back(&waiter);
  lock.unlock();
  const std::int64_t deadline_ns = deadline ? to_ns(*deadline) : -1;
  while (waiter.delivered.load(std::memory_order_acquire) == 0) {
    if (deadline_ns >= 0 && steady_now_ns() >= deadline_ns) {
      lock.lock();
      const bool removed = remove(&waiter);
      lock.unlock();
      if (removed) return false;
      await_delivery(waiter);
      return true;
    }
    futex_wait(&waiter.delivered, 0, deadline_ns);
  }
  return true;
}

}  // namespace weft::detail
