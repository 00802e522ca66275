// Where the waiters of a lock word sleep: a fixed table of buckets chosen by the word's address,
// each a queue of parked threads tagged with the address they wait for (WebKit's ParkingLot
// shape). Waking picks the oldest waiter of one address, so locks that share a bucket never wake
// each other, and the lock word's own bits are updated under the bucket's mutex, which is what
// makes "set the parked bit, then park" race-free against an unlock that clears it.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>

#include "weft/sync.h"
#include "weft/this_thread.h"

namespace weft::omp {

enum class Unparked {
  not_parked,  // validate() was false: the caller looks at the word again
  woken,       // woken to retry
  handed_off,  // woken as the new holder: the unlocker passed the lock on without releasing it
};

struct ParkedWaiter {
  const void* address = nullptr;
  ParkedWaiter* next = nullptr;
  weft::ConditionVariable wake;  // the waiter's own, so that waking it wakes nobody else
  bool woken = false;            // under the bucket's mutex
  bool handed_off = false;
  // Set by the waker once it no longer touches `wake`: the waiter's frame must outlive the
  // notification, which comes after the bucket's mutex is released.
  std::atomic<bool> released{false};
};

// How often an unlock may hand a lock over to its oldest waiter instead of letting whoever comes
// first take it: rarely, since a hand-off waits for the waiter to be scheduled, often on a core
// that must be woken first; but regularly, since weft does not preempt and a holder that takes
// the lock again and again would otherwise keep the others out for as long as it runs.
inline constexpr std::chrono::microseconds kFairInterval{1000};

struct ParkingBucket {
  weft::Mutex mutex;
  ParkedWaiter* head = nullptr;
  ParkedWaiter* tail = nullptr;
  std::chrono::steady_clock::time_point next_fair{};

  // Under `mutex`.
  void append(ParkedWaiter& waiter);
  // Unlinks the oldest waiter for `address` (null when none) and says whether another remains.
  ParkedWaiter* take_first(const void* address, bool& more);
};

ParkingBucket& parking_bucket(const void* address);

// Parks the caller on `address` if validate() holds under the bucket's mutex; returns once an
// unpark_one() for the address picked it.
template <class Validate>
Unparked park(const void* address, Validate&& validate) {
  ParkingBucket& bucket = parking_bucket(address);
  std::unique_lock<weft::Mutex> lock(bucket.mutex);
  if (!validate()) return Unparked::not_parked;
  ParkedWaiter me;
  me.address = address;
  bucket.append(me);
  while (!me.woken) me.wake.wait(lock);
  const bool handed_off = me.handed_off;
  lock.unlock();
  // acquire: pairs with the waker's release of `released`. The waker is a few instructions
  // from it (its notification reached us), unless its kernel thread was descheduled.
  while (!me.released.load(std::memory_order_acquire)) this_thread::yield();
  return handed_off ? Unparked::handed_off : Unparked::woken;
}

struct UnparkResult {
  bool found = false;  // a waiter was taken
  bool more = false;   // others remain
  bool fair = false;   // kFairInterval passed since the bucket's last hand-off: hand this one off
};

// Wakes the oldest waiter parked on `address`, if any. `decide(result)` runs under the bucket's
// mutex and returns whether that waiter gets the lock handed off (it may only when result.fair).
// The wake-up itself (which may wake a sleeping core, a system call) comes after the mutex is
// released: held across it, the mutex would make the threads of the bucket, the woken one first,
// queue behind the waker.
template <class Decide>
void unpark_one(const void* address, Decide&& decide) {
  ParkingBucket& bucket = parking_bucket(address);
  ParkedWaiter* waiter = nullptr;
  {
    std::lock_guard<weft::Mutex> lock(bucket.mutex);
    UnparkResult result;
    waiter = bucket.take_first(address, result.more);
    result.found = waiter != nullptr;
    if (result.found) {
      const auto now = std::chrono::steady_clock::now();
      result.fair = now >= bucket.next_fair;
      if (result.fair) bucket.next_fair = now + kFairInterval;
    }
    const bool handoff = decide(result);
    if (waiter == nullptr) return;
    waiter->woken = true;
    waiter->handed_off = handoff;
  }
  waiter->wake.notify_one();
  // release: the last touch of the waiter, whose frame may go as soon as it reads true.
  waiter->released.store(true, std::memory_order_release);
}

}  // namespace weft::omp
