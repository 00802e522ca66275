// recvmmsg and sendmmsg as libweft defines them: a user thread that would block on a blocking
// socket waits on the I/O manager for it, so its core runs its other threads. Every other caller,
// a non-blocking socket and MSG_DONTWAIT get the C library's call unchanged.
#include <errno.h>
#include <sys/socket.h>
#include <time.h>

#include <cstdint>

#include "blocking_call.h"
#include "libc.h"
#include "timer_heap.h"

namespace {

using weft::detail::steady_now_ns;
using weft::io::detail::current_errno;
using weft::io::detail::Manager;
using weft::io::detail::non_blocking;
using weft::io::detail::set_errno;
using weft::io::detail::waiting_manager;
namespace libc = weft::io::libc;

bool valid(const timespec* t) noexcept {
  return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1'000'000'000;
}

}  // namespace

extern "C" {

// Receives what is there without blocking, into the slots left, until `count` messages came
// (one with MSG_WAITFORONE), waiting for the socket between tries, as the blocking call waits
// for them. The timeout bounds the whole call (the kernel only looks at it after each message,
// so its call may wait for ever for the first); it is updated to the time left, as the kernel
// does. With nothing received when the time is up: -1 with EAGAIN, as SO_RCVTIMEO answers.
int recvmmsg(int fd, mmsghdr* vector, unsigned count, int flags, timespec* timeout) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || count == 0 || (flags & MSG_DONTWAIT) != 0 ||
      (timeout != nullptr && !valid(timeout))) {
    return libc::recvmmsg(fd, vector, count, flags, timeout);
  }
  const std::int64_t deadline =
      timeout == nullptr ? -1
                         : steady_now_ns() + timeout->tv_sec * 1'000'000'000LL + timeout->tv_nsec;
  unsigned got = 0;
  int outcome = 0;
  for (;;) {
    const int received = libc::recvmmsg(fd, vector + got, count - got,
                                        (flags & ~MSG_WAITFORONE) | MSG_DONTWAIT, nullptr);
    if (received > 0) {
      got += static_cast<unsigned>(received);
      if (got == count || (flags & MSG_WAITFORONE) != 0) break;
      continue;
    }
    const int error = current_errno();
    // An error, or the end of a stream: the messages received are the answer, else the error.
    if (received == 0 || (error != EAGAIN && error != EWOULDBLOCK) || non_blocking(fd)) {
      outcome = received == 0 ? 0 : error;
      break;
    }
    if (deadline >= 0 && steady_now_ns() >= deadline) {
      outcome = EAGAIN;
      break;
    }
    pollfd entry{fd, POLLIN, 0};
    manager->wait(&entry, 1, deadline);
  }
  if (timeout != nullptr) {
    const std::int64_t left = deadline - steady_now_ns();
    timeout->tv_sec = left > 0 ? left / 1'000'000'000 : 0;
    timeout->tv_nsec = left > 0 ? left % 1'000'000'000 : 0;
  }
  if (got > 0 || outcome == 0) return static_cast<int>(got);
  set_errno(outcome);
  return -1;
}

// Sends message by message through the interposed sendmsg, which queues all of each, waiting for
// room as the blocking call does: a non-blocking batch could stop inside a message of a stream
// socket. An error after some messages went ends the call with their count, as the kernel's does.
int sendmmsg(int fd, mmsghdr* vector, unsigned count, int flags) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || count == 0 || (flags & MSG_DONTWAIT) != 0 || non_blocking(fd)) {
    return libc::sendmmsg(fd, vector, count, flags);
  }
  for (unsigned i = 0; i < count; ++i) {
    const ssize_t sent = ::sendmsg(fd, &vector[i].msg_hdr, flags);
    if (sent < 0) return i > 0 ? static_cast<int>(i) : -1;
    vector[i].msg_len = static_cast<unsigned>(sent);
  }
  return static_cast<int>(count);
}

}  // extern "C"
