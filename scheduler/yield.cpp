// this_thread::yield's scheduling half on a virtual processor (weft/detail/yield.h): the fast path
// of a pinned thread yielding to the next thread of its level, its extras, and the general path.
#include <cstddef>
#include <thread>

#include "current.h"
#include "scheduler_impl.h"
#include "switch_inline.h"
#include "virtual_processor.h"
#include "weft/trace.h"

namespace weft::detail {

[[gnu::always_inline]] inline bool VirtualProcessor::only_ready_has_work(
    std::uint32_t handled) const noexcept {
  // One branch for the four words: all zero.
  const auto inbox = reinterpret_cast<std::uintptr_t>(inbox_.load(std::memory_order_relaxed));
  return (inbox | (attention_.load(std::memory_order_relaxed) & ~handled) | shared_.mask_hint() |
          node_.queue.mask_hint()) == 0;
}

[[gnu::always_inline]] inline Fiber* VirtualProcessor::rotate_ready(Fiber* self,
                                                                    int floor) noexcept {
  // Safe before the switch: only this kernel thread takes fibers out of ready_, and it cannot
  // resume `self` before the caller's switch has saved its context.
  Fiber* next = ready_.rotate(floor, self);
  if (!next->ahead) wake_ahead_budget_ = kWakeAheadLimit;
  return next;
}

// Inlined into detail::prepare_yield, the one call a yield makes before its switch. Its fast path
// calls nothing, so that it saves no register: whatever needs a call (a switch hook, the trace,
// the check of a canary stack, the housekeeping's turn, the general path) goes to
// prepare_yield_with_extras, a tail call.
[[gnu::always_inline]] inline void VirtualProcessor::prepare_yield(PreparedYield& yield) noexcept {
  Fiber* self = current_;
  // Fast path of ranks yielding to ranks: only this processor's pinned queue has work, on the
  // yielder's own level, so there is nothing to age and no other queue to weigh. The sanitizers'
  // annotations must come just before the jump, on the switching frame: their builds take the
  // general path. Switch hooks and the trace are bits of the attention word
  // (only_ready_has_work); a pinned thread with a canary stack has no `fast_yield`.
  if (!sanitizer::kAnnotatesSwitches && self->fast_yield && until_housekeeping_ > 1 &&
      only_ready_has_work()) [[likely]] {
    const int floor = self->priority.load(std::memory_order_relaxed);
    const std::uint32_t mask = ready_.mask();
    if (mask == 1u << floor) [[likely]] {
      --until_housekeeping_;
      Fiber* next = rotate_ready(self, floor);
      yield.record = &self->yield_record;
      yield.switch_count = &switches_;
      // begin_switch without what the conditions above ruled out (a canary stack's check, the
      // idle context's switch hooks, the trace), nor the store of `next->vp`: a thread of ready_
      // is pinned here, and spawn set its `vp` to this processor for good. Only this kernel
      // thread writes the counter.
      const std::uint64_t switches = switches_.load(std::memory_order_relaxed);
      yield.switches = switches;
      current_ = next;
      switches_.store(switches + 1, std::memory_order_relaxed);
      yield.to = next->context;
      return;
    }
    if (mask == 0) {
      --until_housekeeping_;  // a pick all the same (see prepare_yield_with_extras)
      yield.to = nullptr;
      yield.turns = 0;
      return;
    }
  }
  prepare_yield_with_extras(yield);
}

void VirtualProcessor::prepare_yield_with_extras(PreparedYield& yield) noexcept {
  run_switch_hooks();
  // Before the count, so that a cut budget counts this pick.
  if ((attention_.load(std::memory_order_relaxed) & kHousekeepingSoon) != 0) [[unlikely]]
    take_attention(kHousekeepingSoon);
  // Every yield counts as a pick, even one that finds nothing else to run: a thread alone on its
  // processor, yielding in a loop, does not keep the timers, timer hooks and pollers of the
  // processor from ever running. Done before the choice, so that a thread the housekeeping
  // wakes can be the one chosen.
  count_pick();
  Fiber* self = current_;
  const int floor = self->priority.load(std::memory_order_relaxed);
  // The hooks have run and begin_switch records the trace: their bits do not stop this path.
  if (!sanitizer::kAnnotatesSwitches && self->placement.kind == Placement::Kind::pinned &&
      only_ready_has_work(kSwitchHooks | kTraceSched)) {
    // The fast path again, with the extras: the thread of the caller's level still switches
    // from the caller's frame.
    const std::uint32_t mask = ready_.mask();
    if (mask == 0) {
      if (trace::enabled(trace::Category::sched)) [[unlikely]]
        trace::clear_polling_mark();
      yield.to = nullptr;
      yield.turns = 0;
      return;
    }
    if (mask == 1u << floor) {
      Fiber* next = rotate_ready(self, floor);
      yield.record = &self->yield_record;
      yield.switch_count = &switches_;
      yield.switches = switches_.load(std::memory_order_relaxed);
      begin_switch(self, next, After::nothing);
      yield.to = next->context;
      return;
    }
  }
  yield.to = nullptr;
  yield.turns = yield_general(self, floor);
}

namespace {
// Out of line (a tail call), so that prepare_yield's fast path keeps `yield` in the register it
// came in instead of saving one for this call.
[[gnu::noinline, gnu::cold]] void yield_outside_weft(PreparedYield& yield) noexcept {
  std::this_thread::yield();
  yield.to = nullptr;
  yield.turns = 0;
}
}  // namespace

void prepare_yield(PreparedYield& yield) noexcept {
  // No switch before the end of this call: the kernel thread's own processor throughout.
  VirtualProcessor* vp = current_vp_before_switch();
  if (vp == nullptr || vp->current() == nullptr) [[unlikely]] {
    yield_outside_weft(yield);
    return;
  }
  vp->prepare_yield(yield);
}

SwitchTransfer switch_context(void* to, void* data) {
  // Called as a function returning SwitchTransfer, jump_fcontext is a tail call (a jump): a copy
  // of its transfer_t into a SwitchTransfer would keep a frame here for the resumed side to
  // return through, at the cost weft/detail/yield.h describes. Both are two pointers, returned in
  // the same two registers.
  static_assert(sizeof(SwitchTransfer) == sizeof(transfer_t) &&
                offsetof(SwitchTransfer, context) == offsetof(transfer_t, fctx) &&
                offsetof(SwitchTransfer, data) == offsetof(transfer_t, data));
  using Jump = SwitchTransfer (*)(void*, void*);
  // Through void (*)(), the type that GCC's -Wcast-function-type lets any function become.
  return reinterpret_cast<Jump>(reinterpret_cast<void (*)()>(&jump_fcontext))(to, data);
}

void finish_switch(SwitchTransfer from) noexcept {
  // A thread resumed from a fast-path yield is pinned: it resumes on the processor it left.
  current_vp()->finish_switch(transfer_t{from.context, from.data}, nullptr);
}

std::uint64_t VirtualProcessor::yield_general(Fiber* self, int floor) noexcept {
  // prepare_yield counted the pick.
  Fiber* next = choose(floor);
  if (next == nullptr) {
    // The caller goes on: a mark of trace::mark_polling_yield is for a switch of this yield only.
    if (trace::enabled(trace::Category::sched)) [[unlikely]]
      trace::clear_polling_mark();
    return 0;
  }
  const std::uint64_t before = switches_.load(std::memory_order_relaxed);
  const bool pinned = self->placement.kind == Placement::Kind::pinned;
  if (pinned) {
    // Safe before the switch: only this kernel thread takes fibers out of ready_, and it cannot
    // resume `self` before the switch below has saved its context.
    ready_.push_back(self);
    switch_to(self, next, After::nothing);
  } else {
    switch_to(self, next, After::requeue);
  }
  return turns_since(before, pinned);
}

std::uint64_t VirtualProcessor::turns_since(std::uint64_t switches, bool pinned) const noexcept {
  // A free thread may resume on another processor, whose count says nothing of this one's; a
  // pinned one resumes here, where `this` is still its processor.
  if (!pinned && current_vp() != this) return 1;
  // Every switch into a thread counts, the one back to the caller too.
  const std::uint64_t now = switches_.load(std::memory_order_relaxed);
  return now - switches > 1 ? now - switches - 1 : 1;
}

}  // namespace weft::detail
