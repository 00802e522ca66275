// Preemption of user threads that run a program's own code without a scheduling point.
//
// weft's threads are cooperative: one that neither yields nor blocks keeps its core, and the
// threads queued behind it there wait. Most code reaches a scheduling point soon (an MPI call, an
// OpenMP barrier, a lock), but a thread may also busy-wait on a plain variable for a teammate on
// the same core (`while (flag == 0);`), which then never runs. For code registered here, each
// virtual processor gets a timer on its own CPU clock (key scheduler.preempt_ms); when it fires
// and the running thread has not switched since the previous tick while other threads wait on
// that processor, its signal handler (SIGURG) switches the thread out as a yield would.
//
// Only code registered here is ever interrupted that way: a thread inside weft, the C library or
// any other shared object may hold a kernel-thread lock or be half-way through a scheduler
// operation, so it is left alone until it returns to registered code or reaches a scheduling
// point. weft's loader registers the ranks' copies of the program (or, with --no-privatize, the
// executable's code); code that inlines weft's own C++ API (weft/this_thread.h) should not be
// registered.
#pragma once

#include <cstddef>

namespace weft {

// Code in [begin, begin + size) may be preempted at any instruction. Ranges stay registered for
// the life of the process. Arms the virtual processors' timers of the running scheduler and of
// any started later, unless scheduler.preempt_ms is 0. Async-signal-unsafe; call it from one
// thread at a time. Throws weft::Error when the table of ranges is full.
void allow_preemption_in(const void* begin, std::size_t size);

}  // namespace weft
