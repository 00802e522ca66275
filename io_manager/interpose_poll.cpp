// poll, ppoll, select, pselect, epoll_wait and epoll_pwait as libweft defines them: a user thread
// that would block waits on the I/O manager for the same descriptors (an epoll instance is
// itself a descriptor that is readable when it has events), then asks the C library again without
// waiting. The signal mask of ppoll, pselect and epoll_pwait applies to every check made on the
// caller's core (the C library's call with a zero timeout) and to the wait, which the spare
// kernel thread blocks on with the mask applied; a caught signal ends the call with EINTR
// (docs/io_manager.md, Signal masks).
#include <errno.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include <vector>

#include "blocking_call.h"
#include "libc.h"
#include "timer_heap.h"

namespace {

using weft::detail::steady_now_ns;
using weft::io::detail::Manager;
using weft::io::detail::set_errno;
using weft::io::detail::WaitEnd;
namespace libc = weft::io::libc;

bool expired(std::int64_t deadline_ns) {
  return deadline_ns >= 0 && steady_now_ns() >= deadline_ns;
}

bool valid(const timespec* t) {
  return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1'000'000'000;
}

bool is_zero(const timespec* t) {
  return t != nullptr && t->tv_sec == 0 && t->tv_nsec == 0;
}

std::int64_t deadline_after(const timespec* timeout) {
  if (timeout == nullptr) return -1;
  return steady_now_ns() + timeout->tv_sec * 1'000'000'000LL + timeout->tv_nsec;
}

// A wait that a caught signal ended: the call's answer.
int interrupted() {
  set_errno(EINTR);
  return -1;
}

// The checks below go through the masked calls even without a mask (the same system calls as
// poll, select and epoll_wait then): with one, a signal pending for the caller's core or the
// process that the mask leaves unblocked is caught there, on the caller's stack, and answered
// with EINTR, as the C library's call would.
int poll_until(Manager& manager, pollfd* fds, nfds_t count, std::int64_t deadline,
               const sigset_t* mask) {
  const timespec zero{0, 0};
  const int now = libc::ppoll(fds, count, &zero, mask);
  if (now != 0) return now;
  for (;;) {
    if (manager.wait(fds, count, deadline, mask) == WaitEnd::interrupted) return interrupted();
    const int ready = libc::ppoll(fds, count, &zero, mask);
    // Woken for an event that another reader consumed first: wait again while time is left.
    if (ready != 0 || expired(deadline)) return ready;
  }
}

// select and pselect; `left` (select's timeout) gets the time that was left, as Linux reports it.
int select_until(Manager& manager, int nfds, fd_set* read, fd_set* write, fd_set* except,
                 std::int64_t deadline, timeval* left, const sigset_t* mask) {
  fd_set asked[3];
  fd_set* sets[3] = {read, write, except};
  for (int i = 0; i < 3; ++i) {
    if (sets[i] != nullptr) asked[i] = *sets[i];
  }
  const timespec zero{0, 0};
  const int now = libc::pselect(nfds, read, write, except, &zero, mask);
  if (now != 0) return now;
  std::vector<pollfd> fds;
  for (int fd = 0; fd < nfds; ++fd) {
    short events = 0;
    if (read != nullptr && FD_ISSET(fd, &asked[0])) events |= POLLIN;
    if (write != nullptr && FD_ISSET(fd, &asked[1])) events |= POLLOUT;
    if (except != nullptr && FD_ISSET(fd, &asked[2])) events |= POLLPRI;
    if (events != 0) fds.push_back({fd, events, 0});
  }
  for (;;) {
    const WaitEnd end = manager.wait(fds.data(), fds.size(), deadline, mask);
    for (int i = 0; i < 3; ++i) {
      if (sets[i] != nullptr) *sets[i] = asked[i];
    }
    // Linux leaves the sets as they were when the call is interrupted.
    if (end == WaitEnd::interrupted) return interrupted();
    const int ready = libc::pselect(nfds, read, write, except, &zero, mask);
    if (ready != 0 || expired(deadline)) {
      if (left != nullptr) {
        const std::int64_t rest = ready != 0 ? deadline - steady_now_ns() : 0;
        left->tv_sec = rest > 0 ? rest / 1'000'000'000 : 0;
        left->tv_usec = rest > 0 ? (rest % 1'000'000'000) / 1000 : 0;
      }
      return ready;
    }
  }
}

int epoll_until(Manager& manager, int epfd, epoll_event* events, int max_events,
                std::int64_t deadline, const sigset_t* mask) {
  const int now = libc::epoll_pwait(epfd, events, max_events, 0, mask);
  if (now != 0) return now;
  pollfd instance{epfd, POLLIN, 0};
  for (;;) {
    if (manager.wait(&instance, 1, deadline, mask) == WaitEnd::interrupted) return interrupted();
    const int ready = libc::epoll_pwait(epfd, events, max_events, 0, mask);
    if (ready != 0 || expired(deadline)) return ready;
  }
}

}  // namespace

extern "C" {

int poll(pollfd* fds, nfds_t count, int timeout_ms) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || timeout_ms == 0) return libc::poll(fds, count, timeout_ms);
  return poll_until(*manager, fds, count, weft::io::detail::deadline_after_ms(timeout_ms), nullptr);
}

int ppoll(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || is_zero(timeout)) return libc::ppoll(fds, count, timeout, mask);
  if (timeout != nullptr && !valid(timeout)) {
    set_errno(EINVAL);
    return -1;
  }
  return poll_until(*manager, fds, count, deadline_after(timeout), mask);
}

int select(int nfds, fd_set* read, fd_set* write, fd_set* except, timeval* timeout) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || nfds < 0 || nfds > FD_SETSIZE ||
      (timeout != nullptr && timeout->tv_sec == 0 && timeout->tv_usec == 0)) {
    return libc::select(nfds, read, write, except, timeout);
  }
  if (timeout != nullptr && (timeout->tv_sec < 0 || timeout->tv_usec < 0)) {
    set_errno(EINVAL);
    return -1;
  }
  const std::int64_t deadline = timeout == nullptr
                                    ? -1
                                    : steady_now_ns() + timeout->tv_sec * 1'000'000'000LL +
                                          static_cast<std::int64_t>(timeout->tv_usec) * 1000;
  return select_until(*manager, nfds, read, write, except, deadline, timeout, nullptr);
}

int pselect(int nfds, fd_set* read, fd_set* write, fd_set* except, const timespec* timeout,
            const sigset_t* mask) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || nfds < 0 || nfds > FD_SETSIZE || is_zero(timeout)) {
    return libc::pselect(nfds, read, write, except, timeout, mask);
  }
  if (timeout != nullptr && !valid(timeout)) {
    set_errno(EINVAL);
    return -1;
  }
  // pselect leaves its timeout as it was.
  return select_until(*manager, nfds, read, write, except, deadline_after(timeout), nullptr, mask);
}

int epoll_wait(int epfd, epoll_event* events, int max_events, int timeout_ms) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || timeout_ms == 0) {
    return libc::epoll_wait(epfd, events, max_events, timeout_ms);
  }
  return epoll_until(*manager, epfd, events, max_events,
                     weft::io::detail::deadline_after_ms(timeout_ms), nullptr);
}

int epoll_pwait(int epfd, epoll_event* events, int max_events, int timeout_ms,
                const sigset_t* mask) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || timeout_ms == 0) {
    return libc::epoll_pwait(epfd, events, max_events, timeout_ms, mask);
  }
  return epoll_until(*manager, epfd, events, max_events,
                     weft::io::detail::deadline_after_ms(timeout_ms), mask);
}

}  // extern "C"
