#include "parking_lot.h"

#include <array>
#include <cstdint>

namespace weft::omp {

void ParkingBucket::append(ParkedWaiter& waiter) {
  waiter.next = nullptr;
  if (tail != nullptr) {
    tail->next = &waiter;
  } else {
    head = &waiter;
  }
  tail = &waiter;
}

ParkedWaiter* ParkingBucket::take_first(const void* address, bool& more) {
  ParkedWaiter* previous = nullptr;
  ParkedWaiter* waiter = head;
  while (waiter != nullptr && waiter->address != address) {
    previous = waiter;
    waiter = waiter->next;
  }
  if (waiter == nullptr) {
    more = false;
    return nullptr;
  }
  ParkedWaiter* const after = waiter->next;
  (previous != nullptr ? previous->next : head) = after;
  if (tail == waiter) tail = previous;
  more = false;
  for (ParkedWaiter* other = after; other != nullptr && !more; other = other->next) {
    more = other->address == address;
  }
  return waiter;
}

ParkingBucket& parking_bucket(const void* address) {
  // One cache line each, so that unrelated locks' slow paths do not share a line; 64 buckets keep
  // the scans short (a bucket's queue holds the waiters of every lock that hashes to it).
  struct alignas(64) Padded {
    ParkingBucket bucket;
  };
  static std::array<Padded, 64> buckets;
  const auto bits = reinterpret_cast<std::uintptr_t>(address);
  return buckets[(bits >> 3 ^ bits >> 9) % buckets.size()].bucket;
}

}  // namespace weft::omp
