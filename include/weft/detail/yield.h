// The inline part of weft::this_thread::yield (weft/this_thread.h); nothing here is for callers.
//
// A context switch is a jump, not a call that returns: the thread resumed goes on from where it
// switched away, and every function it then returns from was entered before the switch. The
// processor predicts a return from the calls it saw last, which were the other thread's, so each
// such return is mispredicted (about 8 ns a return on the development VM, against 6.5 ns for the
// whole switch). yield() therefore makes the switch from its caller's own frame: prepare_yield
// does the scheduling and returns, the switch is called inline, and finish_yield completes it
// inline too (a call only when the switch left more than saving a context), every call returning
// before the switch or entered after it.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft::detail {

struct Fiber;

// What the thread switched to does for the thread switched from, once its context is saved
// (VirtualProcessor::finish_switch).
enum class SwitchAfter : std::uint8_t { nothing, requeue, park, exit };

// Handed over by a context switch to the side resumed: on the stack of the side switched from,
// or, for a fast-path yield, in its Fiber (the same record at every such yield).
struct SwitchRecord {
  // Where the side resumed saves the switched-out context when that is all it has to do (`after`
  // is nothing and `from` a thread, not a processor's idle context); null otherwise.
  void** save_context;
  Fiber* from;
  SwitchAfter after;
};

// What a switch hands the side resumed: the context of the side switched from and its record
// (Boost.Context's transfer_t, which switch_context returns as it is).
struct SwitchTransfer {
  void* context;
  void* data;
};

struct PreparedYield {
  // The context to switch to; null when prepare_yield did the whole yield (`turns` is then its
  // result).
  void* to;
  std::uint64_t turns;
  // With `to`: the record to hand over, and the switch count of the caller's processor (the
  // caller is pinned to it, so it resumes there) with its value before the switch.
  SwitchRecord* record;
  const std::atomic<std::uint64_t>* switch_count;
  std::uint64_t switches;
};

void prepare_yield(PreparedYield& yield) noexcept;
// Boost.Context's jump_fcontext, called in tail position: no frame of its own to return through.
// Not noexcept: a noexcept function cannot end in a tail call to one that is not.
SwitchTransfer switch_context(void* to, void* data);
// The end of a switch that left more than saving a context (a requeue, a park, an ended thread,
// the idle context), on the processor of the thread resumed.
void finish_switch(SwitchTransfer from) noexcept;

inline std::uint64_t finish_yield(const PreparedYield& yield, SwitchTransfer from) noexcept {
  const auto* received = static_cast<const SwitchRecord*>(from.data);
  if (received->save_context != nullptr) [[likely]] {
    *received->save_context = from.context;
  } else {
    finish_switch(from);
  }
  // Every switch into a thread counts, the one back to the caller too.
  const std::uint64_t now = yield.switch_count->load(std::memory_order_relaxed);
  return now - yield.switches > 1 ? now - yield.switches - 1 : 1;
}

}  // namespace weft::detail
