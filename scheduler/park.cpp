#include "park.h"

#include "current.h"
#include "fiber.h"
#include "scheduler_impl.h"
#include "virtual_processor.h"
#include "weft/trace.h"

namespace weft::detail {

Fiber* current_fiber() noexcept {
  VirtualProcessor* vp = current_vp();
  return vp != nullptr ? vp->current() : nullptr;
}

std::uint64_t prepare_park(Fiber* self) noexcept {
  const std::uint64_t epoch = park_epoch(self->park.load(std::memory_order_relaxed)) + 1;
  // release: a waker that finds the registration (through a lock or a heap) sees this word.
  self->park.store(park_word(epoch, ParkState::parking), std::memory_order_release);
  return epoch;
}

void park() noexcept {
  current_vp()->park_current();
}

bool unpark(Fiber* fiber, std::uint64_t epoch) noexcept {
  std::uint64_t word = fiber->park.load(std::memory_order_acquire);
  for (;;) {
    if (park_epoch(word) != epoch) return false;
    switch (park_state(word)) {
      case ParkState::parking:
        // Still switching out: leave the requeue to the switch (VirtualProcessor::finish_switch).
        if (fiber->park.compare_exchange_weak(word, park_word(epoch, ParkState::pending),
                                              std::memory_order_acq_rel)) {
          return true;
        }
        break;
      case ParkState::parked:
        if (fiber->park.compare_exchange_weak(word, park_word(epoch, ParkState::running),
                                              std::memory_order_acq_rel)) {
          fiber->woken = true;
          if (trace::enabled(trace::Category::sched)) [[unlikely]] {
            const Fiber* waker = current_fiber();
            trace::wake(waker != nullptr ? waker->id : 0, fiber->id);
          }
          running_scheduler()->make_runnable(fiber);
          return true;
        }
        break;
      default:
        return false;
    }
  }
}

#if defined(WEFT_SANITIZER_TSAN)
SanitizerCallScope::SanitizerCallScope() noexcept : self_(current_fiber()) {
  if (self_ == nullptr) return;
  outer_ = self_->tsan_fiber;
  // Written before the switch: a processor that resumes this thread switches to tsan_fiber.
  self_->tsan_fiber = sanitizer::create_fiber();
  __tsan_switch_to_fiber(self_->tsan_fiber, 0);
}

SanitizerCallScope::~SanitizerCallScope() {
  if (self_ == nullptr) return;
  void* inner = self_->tsan_fiber;
  self_->tsan_fiber = outer_;
  __tsan_switch_to_fiber(outer_, 0);
  sanitizer::destroy_fiber(inner);
}
#endif

}  // namespace weft::detail
