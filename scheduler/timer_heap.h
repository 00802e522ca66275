// Deadlines of sleeping and timed-out threads of one virtual processor: a binary min-heap of
// nodes that live in the waiting threads' frames. Any kernel thread may expire it (an idle VP
// expires a busy one's timers), hence the lock; the earliest deadline is readable without it.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include "weft/detail/spin_lock.h"

namespace weft::detail {

struct Fiber;

struct TimerNode {
  std::int64_t deadline_ns = 0;  // steady_clock
  Fiber* fiber = nullptr;
  std::uint64_t epoch = 0;
  int index = -1;  // position in the heap, -1 when not in it
  class TimerHeap* heap = nullptr;
};

class TimerHeap {
 public:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  std::int64_t next_deadline() const noexcept { return next_.load(std::memory_order_acquire); }

  void add(TimerNode* node) noexcept;
  // Removes the node if it is still in the heap (it may have fired meanwhile).
  void cancel(TimerNode* node) noexcept;
  // Pops every node due at `now_ns` and wakes its fiber. Returns how many fired.
  int expire(std::int64_t now_ns) noexcept;

 private:
  void sift_up(int i) noexcept;
  void sift_down(int i) noexcept;
  void remove_at(int i) noexcept;
  void place(int i, TimerNode* node) noexcept {
    heap_[i] = node;
    node->index = i;
  }
  void publish() noexcept {
    // release: a VP that reads a deadline sees the node that set it when it takes the lock.
    next_.store(heap_.empty() ? kNever : heap_.front()->deadline_ns, std::memory_order_release);
  }

  SpinLock lock_;
  std::vector<TimerNode*> heap_;
  std::atomic<std::int64_t> next_{kNever};
};

std::int64_t steady_now_ns() noexcept;

}  // namespace weft::detail
