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

#include "sanitizer.h"

namespace weft::detail {

struct Fiber;

// The calling user-level thread, or null on a kernel thread that weft does not run.
Fiber* current_fiber() noexcept;

std::uint64_t prepare_park(Fiber* self) noexcept;
void park() noexcept;
bool unpark(Fiber* fiber, std::uint64_t epoch) noexcept;

// ThreadSanitizer reaches weft's blocking calls through its own interceptors: libtsan comes
// first in a program's lookup order, so the program's read() or usleep() is TSan's, which calls
// libweft's. Inside an interceptor TSan ignores the synchronisation the running context makes
// (atomics, locks: they are the C library's own there). A user thread that parks in such a call
// would register its wait, requeue the thread it switched from and read its result with none of
// it seen: every scheduler and I/O manager structure it touched would be reported as raced.
// For the scope's life the calling user thread runs on a TSan fiber of its own, outside that
// ignored region (the switches in and out synchronise, as a context switch does). On a kernel
// thread that weft does not run, and in other builds, it does nothing.
class SanitizerCallScope {
 public:
#if defined(WEFT_SANITIZER_TSAN)
  SanitizerCallScope() noexcept;
  ~SanitizerCallScope();
#else
  SanitizerCallScope() noexcept = default;
#endif
  SanitizerCallScope(const SanitizerCallScope&) = delete;
  SanitizerCallScope& operator=(const SanitizerCallScope&) = delete;

#if defined(WEFT_SANITIZER_TSAN)
 private:
  Fiber* self_ = nullptr;
  void* outer_ = nullptr;
#endif
};

}  // namespace weft::detail
