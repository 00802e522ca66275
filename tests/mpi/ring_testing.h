// What the tests of the rings of call slots (pair_ring_test.cpp, fan_ring_test.cpp) share: the
// ring's depth, and a reader that waits for the writers to get ahead of it.
#pragma once

#include <atomic>

#include "weft/this_thread.h"

namespace weft::mpi::testing {

// The ring's slots: calls a writer makes before it needs the readers to free one.
inline constexpr int kSlots = 8;
// More than that: the writers then wait for the readers to free slots.
inline constexpr int kAhead = 20;
// How many times a reader yields, at most, waiting for the writers to get kSlots calls ahead
// before it starts anyway (a count of yields, not a time: under a meeting the writers never get
// ahead and the expectation fails instead of hanging). Seconds of yields: with two virtual
// processors on a loaded machine, the other one's kernel thread may be off its core for a while.
inline constexpr long kPatience = 50'000'000;

inline long long value(int k) {
  return 1000003LL * k + 17;
}

// Waits for `done` to reach `target`, yielding; false if it never did within kPatience yields.
inline bool wait_for(const std::atomic<int>& done, int target) {
  for (long i = 0; i < kPatience; ++i) {
    if (done.load(std::memory_order_acquire) >= target) return true;
    weft::this_thread::yield();
  }
  return false;
}

}  // namespace weft::mpi::testing
