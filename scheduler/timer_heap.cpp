#include "timer_heap.h"

#include <time.h>

#include "park.h"

namespace weft::detail {

std::int64_t steady_now_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void TimerHeap::add(TimerNode* node) noexcept {
  node->heap = this;
  lock_.lock();
  // The heap grows only while its capacity is short; thousands of sleepers cost one allocation
  // each time the number doubles, never one per sleep.
  heap_.push_back(node);
  node->index = static_cast<int>(heap_.size()) - 1;
  sift_up(node->index);
  publish();
  lock_.unlock();
}

void TimerHeap::cancel(TimerNode* node) noexcept {
  lock_.lock();
  if (node->index >= 0) {
    remove_at(node->index);
    publish();
  }
  lock_.unlock();
}

int TimerHeap::expire(std::int64_t now_ns) noexcept {
  if (next_deadline() > now_ns) return 0;
  int fired = 0;
  for (;;) {
    lock_.lock();
    if (heap_.empty() || heap_.front()->deadline_ns > now_ns) {
      publish();
      lock_.unlock();
      return fired;
    }
    TimerNode* node = heap_.front();
    // Copy what the wake-up needs: once out of the heap the node's frame may unwind.
    Fiber* fiber = node->fiber;
    const std::uint64_t epoch = node->epoch;
    remove_at(0);
    publish();
    lock_.unlock();
    unpark(fiber, epoch);
    ++fired;
  }
}

void TimerHeap::remove_at(int i) noexcept {
  TimerNode* removed = heap_[i];
  TimerNode* last = heap_.back();
  heap_.pop_back();
  removed->index = -1;
  if (removed == last) return;
  place(i, last);
  sift_up(i);
  sift_down(last->index);
}

void TimerHeap::sift_up(int i) noexcept {
  TimerNode* node = heap_[i];
  while (i > 0) {
    const int parent = (i - 1) / 2;
    if (heap_[parent]->deadline_ns <= node->deadline_ns) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, node);
}

void TimerHeap::sift_down(int i) noexcept {
  const int n = static_cast<int>(heap_.size());
  TimerNode* node = heap_[i];
  for (;;) {
    int child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1]->deadline_ns < heap_[child]->deadline_ns) ++child;
    if (heap_[child]->deadline_ns >= node->deadline_ns) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, node);
}

}  // namespace weft::detail
