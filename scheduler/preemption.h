// The scheduler's side of preemption (weft/preemption.h): a virtual processor's timer on its own
// CPU clock, and the check of the registered code ranges that the timer's signal handler makes.
#pragma once

#include <ctime>

namespace weft::detail {

// Created by a virtual processor on its own kernel thread, for its life. The timer runs on that
// thread's CPU clock, so that it ticks only while the processor runs something: a sleeping
// processor and a user thread blocked in a system call get no signal. With a period of 0 nothing
// is created and arm() does nothing.
class PreemptionTimer {
 public:
  explicit PreemptionTimer(long period_ms);
  ~PreemptionTimer();
  PreemptionTimer(const PreemptionTimer&) = delete;
  PreemptionTimer& operator=(const PreemptionTimer&) = delete;

  // Any thread; arming twice is harmless.
  void arm() noexcept;

 private:
  timer_t id_{};
  bool created_ = false;
  long period_ms_ = 0;
};

// Whether some code was registered with allow_preemption_in: a processor starting later arms its
// timer when it is.
bool preemptible_code_registered() noexcept;

}  // namespace weft::detail
