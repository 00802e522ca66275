// The control block of a user-level thread. Fiber objects are type-stable: they are recycled
// through the scheduler's pools and freed only with the scheduler, so that a late wake-up (a timer
// that fired while its fiber was woken otherwise) can always read the park word it checks.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "context.h"
#include "sanitizer.h"
#include "weft/detail/wait_list.h"
#include "weft/detail/yield.h"
#include "weft/stack_pool.h"
#include "weft/thread.h"

namespace weft::detail {

class PriorityQueue;
class ThreadStorage;

// The park word packs an epoch, bumped at every park, with the state of that park, so that a
// wake-up meant for an earlier park fails its compare-and-swap.
enum class ParkState : std::uint64_t {
  running = 0,  // running, or queued to run
  parking = 1,  // announced a park, still switching out
  parked = 2,   // switched out, waiting for a wake-up
  pending = 3,  // woken while still switching out: the switch must requeue it
};

inline constexpr std::uint64_t park_word(std::uint64_t epoch, ParkState state) {
  return epoch << 2 | static_cast<std::uint64_t>(state);
}
inline constexpr std::uint64_t park_epoch(std::uint64_t word) {
  return word >> 2;
}
inline constexpr ParkState park_state(std::uint64_t word) {
  return static_cast<ParkState>(word & 3);
}

struct Fiber {
  fcontext_t context = nullptr;
  Stack stack;
  void* tsan_fiber = nullptr;  // ThreadSanitizer builds only (sanitizer.h)

  // What a fast-path yield hands the thread it switches to (VirtualProcessor::prepare_yield):
  // always the same, so it is made once here rather than at every yield.
  SwitchRecord yield_record{&context, this, SwitchAfter::nothing};

  std::uint64_t id = 0;
  ThreadType type = ThreadType::user;
  int rank = -1;
  Placement placement;
  // Pinned, on a stack with a guard page (no canary to check at a switch): the two conditions of
  // a yield's fast path (VirtualProcessor::prepare_yield) that belong to the thread, set at
  // spawn.
  bool fast_yield = false;
  // Read by whoever queues the fiber; relaxed, since a queue only needs some recent value and
  // set_priority() moves a queued fiber under the queue's lock.
  std::atomic<int> priority{0};
  int base_priority = 0;  // what set_boosted(false) returns to; written by the thread itself
  // The virtual processor that last ran the fiber: where a free fiber is queued when woken.
  std::atomic<int> vp{0};
  // Thread::prefer_vp's request, -1 for none: where a free fiber is queued the next time it is
  // made runnable instead of `vp`. make_runnable takes it (the fiber is then in no queue, so `vp`
  // still names the queue a queued fiber is in). relaxed: a hint; any valid index will do.
  std::atomic<int> preferred_vp{-1};

  std::atomic<std::uint64_t> park{park_word(0, ParkState::running)};
  // What the thread waits on, for diagnostics (this_thread::set_wait_note); null when nothing
  // said. relaxed: readers check the park word around their read (thread_dump.cpp).
  std::atomic<const void*> wait_note{nullptr};
  // From spawn until the body has returned: what a thread dump lists (thread_dump.cpp).
  std::atomic<bool> live{false};

  // Run-queue links, owned by the queue the fiber is in (`queue`, null when in none).
  Fiber* next = nullptr;
  Fiber* prev = nullptr;
  int level = -1;
  std::atomic<PriorityQueue*> queue{nullptr};
  // Link of the lock-free inbox of a virtual processor.
  Fiber* inbox_next = nullptr;
  // Set by a wake-up before it queues the fiber (the queue's publication orders it), cleared by
  // the processor that queues it: a woken pinned thread goes ahead of threads that yielded. Only
  // pinned queues read it; a recycled fiber starts with it cleared.
  bool woken = false;
  // Queued by push_front or push_first: its pick is not a turn of the threads queued behind it.
  bool ahead = false;
  // While a trace records switches: the fiber's last switch out was a park, so its next switch in
  // resumes it from a wait (trace::ThreadInfo::resumes_park). Written by the processor that
  // switches out of it, read by the one that switches into it after the wake-up that queued it.
  bool trace_parked = false;

  std::function<void()> body;
  // this_thread::local_data(): a runtime's state for this thread, destroyed when the body returns.
  void* local_data = nullptr;
  void (*local_destroy)(void*) = nullptr;
  // Its own blocks of the modules registered by give_each_thread_own_tls; null until it touches
  // one, and again once its body has returned.
  ThreadStorage* storage = nullptr;

  // One reference for the running thread, one for the Thread handle until join or detach.
  std::atomic<int> refs{0};
  bool done = false;  // under joiners.lock
  WaitList joiners;

  Fiber* pool_next = nullptr;
};

}  // namespace weft::detail
