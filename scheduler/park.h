// Parking and waking user-level threads: the one mechanism every blocking primitive, sleep and
// join is built on.
//
// A thread parks in two steps. prepare_park() starts a new park epoch; the thread then registers
// itself wherever its wake-up will come from (a wait list, a timer), naming that epoch, and calls
// park(), which switches it out. unpark(fiber, epoch) may run at any moment after registration,
// on any kernel thread: if the fiber is still switching out, the switch itself requeues it, so no
// wake-up is lost; if the epoch is over, the call does nothing, so no wake-up is misdelivered.
#pragma once

#include <cstdint>

namespace weft::detail {

struct Fiber;

// The calling user-level thread, or null on a kernel thread that weft does not run.
Fiber* current_fiber() noexcept;

std::uint64_t prepare_park(Fiber* self) noexcept;
void park() noexcept;
bool unpark(Fiber* fiber, std::uint64_t epoch) noexcept;

}  // namespace weft::detail
