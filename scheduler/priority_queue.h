// Run queues: one FIFO list per priority level and a bitmap of the non-empty levels.
// PriorityQueue is not synchronised (a virtual processor's own queue of pinned threads);
// SharedQueue adds a lock for queues that several kernel threads touch (a VP's stealable queue,
// a NUMA node's queue) and mirrors its bitmap in an atomic that pickers may read without the lock.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "fiber.h"
#include "weft/detail/spin_lock.h"
#include "weft/thread_type.h"

namespace weft::detail {

// Highest non-empty level of a bitmap, -1 when empty.
inline int top_level(std::uint32_t mask) noexcept {
  return mask == 0 ? -1 : 31 - std::countl_zero(mask);
}

class PriorityQueue {
 public:
  bool empty() const noexcept { return mask_ == 0; }
  std::uint32_t mask() const noexcept { return mask_; }
  std::size_t size() const noexcept { return size_; }

  void push_back(Fiber* fiber) noexcept { link(fiber, Where::back); }
  // Ahead of its level's queued fibers, behind those already queued ahead: a thread woken from a
  // wait (see VirtualProcessor::queue_ready). Threads woken together (timers expired in one
  // look) then run in the order they were woken, not the reverse.
  void push_front(Fiber* fiber) noexcept { link(fiber, Where::behind_ahead); }
  // First of its level, ahead of everything: a thread that hands its core to another for a moment
  // (VirtualProcessor::run_now). Its pick is not a turn either.
  void push_first(Fiber* fiber) noexcept { link(fiber, Where::first); }

  Fiber* pop_front(int level) noexcept {
    Fiber* fiber = levels_[level].head;
    if (fiber != nullptr) unlink(fiber);
    return fiber;
  }

  // pop_front(level) then push_back(fiber), for a yield to the next thread of the yielder's own
  // level (non-empty; `fiber`'s priority is `level`). The bitmap and the size stay as they are.
  Fiber* rotate(int level, Fiber* fiber) noexcept {
    Level& l = levels_[level];
    Fiber* next = l.head;
    Fiber* second = next->next;
    fiber->level = level;
    fiber->ahead = false;
    fiber->next = nullptr;
    fiber->queue.store(this, std::memory_order_relaxed);
    if (second == nullptr) {
      fiber->prev = nullptr;
      l.head = fiber;
    } else {
      second->prev = nullptr;
      l.head = second;
      fiber->prev = l.tail;
      l.tail->next = fiber;
    }
    l.tail = fiber;
    next->next = nullptr;
    next->queue.store(nullptr, std::memory_order_relaxed);
    return next;
  }

  void unlink(Fiber* fiber) noexcept {
    Level& l = levels_[fiber->level];
    if (fiber->prev != nullptr) {
      fiber->prev->next = fiber->next;
    } else {
      l.head = fiber->next;
    }
    if (fiber->next != nullptr) {
      fiber->next->prev = fiber->prev;
    } else {
      l.tail = fiber->prev;
    }
    if (l.head == nullptr) mask_ &= ~(1u << fiber->level);
    --size_;
    fiber->next = fiber->prev = nullptr;
    fiber->queue.store(nullptr, std::memory_order_relaxed);
  }

  // Moves every fiber whose priority changed since it was queued to its new level's tail.
  void requeue_changed() noexcept {
    Fiber* moved = nullptr;
    for (Level& l : levels_) {
      for (Fiber* f = l.head; f != nullptr;) {
        Fiber* next = f->next;
        if (f->priority.load(std::memory_order_relaxed) != f->level) {
          unlink(f);
          f->next = moved;
          moved = f;
        }
        f = next;
      }
    }
    while (moved != nullptr) {
      Fiber* next = moved->next;
      push_back(moved);
      moved = next;
    }
  }

 private:
  struct Level {
    Fiber* head = nullptr;
    Fiber* tail = nullptr;
  };

  enum class Where { back, behind_ahead, first };

  void link(Fiber* fiber, Where where) noexcept {
    const int level = fiber->priority.load(std::memory_order_relaxed);
    Level& l = levels_[level];
    fiber->level = level;
    fiber->ahead = where != Where::back;
    if (where != Where::back) {
      // The fibers queued ahead are few (VirtualProcessor's wake-ahead budget bounds them).
      Fiber* after = nullptr;
      if (where == Where::behind_ahead) {
        for (Fiber* f = l.head; f != nullptr && f->ahead; f = f->next) after = f;
      }
      fiber->prev = after;
      fiber->next = after != nullptr ? after->next : l.head;
      if (fiber->next != nullptr) {
        fiber->next->prev = fiber;
      } else {
        l.tail = fiber;
      }
      if (after != nullptr) {
        after->next = fiber;
      } else {
        l.head = fiber;
      }
    } else {
      fiber->next = nullptr;
      fiber->prev = l.tail;
      if (l.tail != nullptr) l.tail->next = fiber;
      l.tail = fiber;
      if (l.head == nullptr) l.head = fiber;
    }
    mask_ |= 1u << level;
    ++size_;
    fiber->queue.store(this, std::memory_order_relaxed);
  }

  Level levels_[kPriorityLevels];
  std::uint32_t mask_ = 0;
  std::size_t size_ = 0;
};

class SharedQueue {
 public:
  // May be stale; a picker confirms under the lock.
  std::uint32_t mask_hint() const noexcept { return mask_.load(std::memory_order_relaxed); }
  // Sequentially consistent, for the sleep/wake handshake (see VirtualProcessor::sleep).
  std::uint32_t mask_seq_cst() const noexcept { return mask_.load(); }
  std::size_t size_hint() const noexcept { return size_.load(std::memory_order_relaxed); }
  // Pushes so far: a thief that sees the same count twice saw the same queued threads.
  std::uint32_t pushes_hint() const noexcept { return pushes_.load(std::memory_order_relaxed); }
  // Whether the queue holds one thread, queued by a thread of the queue's own processor, which
  // runs it at its next scheduling point (see VirtualProcessor::steal). Read after mask_seq_cst()
  // in the sleep handshake: the push's seq_cst publication of the mask orders this before it.
  bool owner_lone() const noexcept { return owner_lone_.load(std::memory_order_relaxed); }

  // Returns the queue's size after the push. `by_owner`: the caller runs on the queue's processor.
  std::size_t push_back(Fiber* fiber, bool by_owner = false) noexcept {
    lock_.lock();
    queue_.push_back(fiber);
    const std::size_t size = queue_.size();
    // relaxed, both: written under the lock, published by publish()'s seq_cst store of the mask.
    owner_lone_.store(by_owner && size == 1, std::memory_order_relaxed);
    pushes_.store(pushes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    publish();
    lock_.unlock();
    return size;
  }

  // The first fiber of the highest level at or above `min_level`, else null.
  Fiber* pop(int min_level = 0) noexcept {
    if (mask_hint() == 0) return nullptr;
    lock_.lock();
    Fiber* fiber = nullptr;
    const int level = top_level(queue_.mask());
    if (level >= min_level) {
      fiber = queue_.pop_front(level);
      // The thread left, if any, may have come from anywhere.
      owner_lone_.store(false, std::memory_order_relaxed);
      publish();
    }
    lock_.unlock();
    return fiber;
  }

  Fiber* pop_level(int level) noexcept {
    lock_.lock();
    Fiber* fiber = queue_.pop_front(level);
    if (fiber != nullptr) {
      owner_lone_.store(false, std::memory_order_relaxed);
      publish();
    }
    lock_.unlock();
    return fiber;
  }

  // Moves `fiber` to the level of its current priority if it is still in this queue.
  void reprioritize(Fiber* fiber) noexcept {
    lock_.lock();
    if (fiber->queue.load(std::memory_order_relaxed) == &queue_ &&
        fiber->level != fiber->priority.load(std::memory_order_relaxed)) {
      queue_.unlink(fiber);
      queue_.push_back(fiber);
      publish();
    }
    lock_.unlock();
  }

 private:
  void publish() noexcept {
    // seq_cst: pairs with the sleeping VP's re-check of this mask after it announced its sleep.
    mask_.store(queue_.mask());
    size_.store(queue_.size(), std::memory_order_relaxed);
  }

  SpinLock lock_;
  PriorityQueue queue_;
  std::atomic<std::uint32_t> mask_{0};
  std::atomic<std::size_t> size_{0};
  std::atomic<std::uint32_t> pushes_{0};
  std::atomic<bool> owner_lone_{false};
};

}  // namespace weft::detail
