// VirtualProcessor's inline parts that virtual_processor.cpp and yield.cpp both use: the count of
// a pick and the switch. Private to those two files.
#pragma once

#include "current.h"
#include "scheduler_impl.h"
#include "virtual_processor.h"
#include "weft/trace.h"

namespace weft::detail {

[[gnu::always_inline]] inline void VirtualProcessor::count_pick() noexcept {
  if (--until_housekeeping_ == 0) [[unlikely]] {
    housekeeping(false);
    until_housekeeping_ = housekeeping_budget();
  }
}

// Inlined into its callers: a thread resumed after jump_fcontext (which ends in a jump, not a
// return) returns through the frames it entered by, and each of those returns is mispredicted
// (see weft/detail/yield.h); inlined, the switch adds none of its own.
[[gnu::always_inline]] inline void VirtualProcessor::switch_to(Fiber* prev, Fiber* next,
                                                               After after) noexcept {
  begin_switch(prev, next, after);
  SwitchRecord record{after == After::nothing && prev != nullptr ? &prev->context : nullptr, prev,
                      after};
  void* fake_stack = nullptr;
  sanitizer::start_switch(
      after == After::exit ? nullptr : &fake_stack,
      next != nullptr ? sanitizer::StackBounds{next->stack.base, next->stack.size} : idle_stack_,
      next != nullptr ? next->tsan_fiber : idle_tsan_fiber_);
  // What resumes below is `prev`: the idle context and a pinned thread resume on this processor,
  // a free thread may resume on another one, where `this` is stale.
  const bool stays = prev == nullptr || prev->placement.kind == Placement::Kind::pinned;
  const transfer_t from = jump_fcontext(next != nullptr ? next->context : idle_context_, &record);
  (stays ? this : current_vp())->end_switch(from, fake_stack);
}

[[gnu::always_inline]] inline void VirtualProcessor::begin_switch(Fiber* prev, Fiber* next,
                                                                  After after) noexcept {
  if (prev != nullptr && !prev->stack.canary_intact()) report_stack_overflow(*prev, index_);
  current_ = next;
  if (next != nullptr) {
    next->vp.store(index_, std::memory_order_relaxed);
    // Only this kernel thread writes the counter; readers want an approximate figure.
    switches_.store(switches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // A user thread's scheduling points ran the hooks before choosing `next` (see
  // run_switch_hooks); the idle loop's switch into a thread runs them here.
  if (prev == nullptr && scheduler_.hooks.has_switch_hooks()) scheduler_.hooks.run_switch();
  if (trace::enabled(trace::Category::sched)) [[unlikely]]
    trace_switch(prev, after, next);
}

[[gnu::always_inline]] inline void VirtualProcessor::end_switch(transfer_t from,
                                                                void* fake_stack) noexcept {
  const auto* received = static_cast<const SwitchRecord*>(from.data);
  // The common case, a thread switched away from to run another, needs no call (but in ASan
  // builds).
  if (!sanitizer::kFinishesSwitch && received->save_context != nullptr) {
    *received->save_context = from.fctx;
  } else {
    finish_switch(from, fake_stack);
  }
}

}  // namespace weft::detail
