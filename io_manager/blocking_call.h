// What the interposed system calls share: whether the caller may wait on the I/O manager, and
// the wait for one descriptor to become ready.
#pragma once

#include <poll.h>

#include <cstdint>

#include "manager.h"
#include "spare_threads.h"

namespace weft::io::detail {

// The manager a blocking call should wait on, or null when the call must go straight to the C
// library: outside a user thread (the main thread, a VP's idle loop, any other kernel thread),
// inside one of the manager's callbacks, or with no scheduler running.
Manager* waiting_manager() noexcept;

// Parks the calling user thread until `fd` has one of `events`, unless it has them already, is
// not a descriptor to wait on (bad, or in error) or is non-blocking (its caller expects EAGAIN).
// The C library's call that follows then does not block, barring a race with another reader.
void await_fd(Manager& manager, int fd, short events) noexcept;

// True when `fd` is in non-blocking mode (or unusable): the call must not wait for it.
bool non_blocking(int fd) noexcept;

// Returns call() made on a spare kernel thread while the calling user thread is parked (or on
// this thread when every spare thread is busy); errno afterwards is the call's.
template <class Call>
auto on_spare_thread(Manager& manager, Call call) noexcept {
  decltype(call()) result{};
  auto body = [&] { result = call(); };
  manager.run_blocking([](void* context) noexcept { (*static_cast<decltype(body)*>(context))(); },
                       &body);
  return result;
}

// steady_clock ns after `timeout_ms` (a poll(2) timeout), -1 for a negative one.
std::int64_t deadline_after_ms(int timeout_ms) noexcept;

}  // namespace weft::io::detail
