// The spin before a park. A waiting weft thread first spins for its processor's adaptive budget:
// it grows when spins end in success and shrinks when they end in a park, so a core that keeps
// parking anyway stops burning cycles on spins. While spinning, the core's other runnable threads
// of the same or higher priority get the core (the awaited event may depend on them); lower ones
// get it through aging.
#pragma once

#include <thread>

#include "current.h"
#include "timer_heap.h"
#include "virtual_processor.h"
#include "weft/detail/spin_lock.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

namespace weft::detail {

// Returns true as soon as pred() holds, false when the budget ran out (the caller then parks).
template <class Pred>
bool spin_wait(Pred&& pred) {
  VirtualProcessor* vp = current_vp();
  if (vp == nullptr || vp->current() == nullptr) {
    for (int i = 0; i < 256; ++i) {
      if (pred()) return true;
      spin_pause();
    }
    return false;
  }
  const std::int64_t budget = vp->spin_budget_ns();
  const std::int64_t start = steady_now_ns();
  for (unsigned round = 1;; ++round) {
    if (pred()) {
      current_vp()->spin_succeeded();
      return true;
    }
    vp = current_vp();
    if (vp->has_local_work()) {
      // The awaited thread may be one of them: pausing here would only delay it.
      trace::mark_polling_yield();
      this_thread::yield();
    } else {
      for (int i = 0; i < 16; ++i) {
        if (pred()) {
          current_vp()->spin_succeeded();
          return true;
        }
        spin_pause();
      }
    }
    // The clock every fourth round: a read (about 50 ns on the development VM) costs as much as
    // a round that yields to another thread.
    if ((round & 3) == 0 && steady_now_ns() - start >= budget) {
      current_vp()->spin_failed();
      return false;
    }
  }
}

}  // namespace weft::detail
