// poll, select and epoll_wait as libweft defines them: a user thread that would block waits on
// the I/O manager for the same descriptors (an epoll instance is itself a descriptor that is
// readable when it has events), then asks the C library again without waiting.
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
namespace libc = weft::io::libc;

bool expired(std::int64_t deadline_ns) {
  return deadline_ns >= 0 && steady_now_ns() >= deadline_ns;
}

}  // namespace

extern "C" {

int poll(pollfd* fds, nfds_t count, int timeout_ms) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || timeout_ms == 0) return libc::poll(fds, count, timeout_ms);
  const int now = libc::poll(fds, count, 0);
  if (now != 0) return now;
  const std::int64_t deadline = weft::io::detail::deadline_after_ms(timeout_ms);
  for (;;) {
    manager->wait(fds, count, deadline);
    const int ready = libc::poll(fds, count, 0);
    // Woken for an event that another reader consumed first: wait again while time is left.
    if (ready != 0 || expired(deadline)) return ready;
  }
}

int select(int nfds, fd_set* read, fd_set* write, fd_set* except, timeval* timeout) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || nfds < 0 || nfds > FD_SETSIZE ||
      (timeout != nullptr && timeout->tv_sec == 0 && timeout->tv_usec == 0)) {
    return libc::select(nfds, read, write, except, timeout);
  }
  if (timeout != nullptr && (timeout->tv_sec < 0 || timeout->tv_usec < 0)) {
    errno = EINVAL;
    return -1;
  }
  fd_set asked[3];
  fd_set* sets[3] = {read, write, except};
  for (int i = 0; i < 3; ++i) {
    if (sets[i] != nullptr) asked[i] = *sets[i];
  }
  timeval zero{0, 0};
  const int now = libc::select(nfds, read, write, except, &zero);
  if (now != 0) return now;
  std::vector<pollfd> fds;
  for (int fd = 0; fd < nfds; ++fd) {
    short events = 0;
    if (read != nullptr && FD_ISSET(fd, &asked[0])) events |= POLLIN;
    if (write != nullptr && FD_ISSET(fd, &asked[1])) events |= POLLOUT;
    if (except != nullptr && FD_ISSET(fd, &asked[2])) events |= POLLPRI;
    if (events != 0) fds.push_back({fd, events, 0});
  }
  const std::int64_t deadline = timeout == nullptr
                                    ? -1
                                    : steady_now_ns() + timeout->tv_sec * 1'000'000'000LL +
                                          static_cast<std::int64_t>(timeout->tv_usec) * 1000;
  for (;;) {
    manager->wait(fds.data(), fds.size(), deadline);
    for (int i = 0; i < 3; ++i) {
      if (sets[i] != nullptr) *sets[i] = asked[i];
    }
    const int ready = libc::select(nfds, read, write, except, &zero);
    if (ready != 0 || expired(deadline)) {
      // Linux's select reports the time left through `timeout`.
      if (timeout != nullptr) {
        const std::int64_t left = ready != 0 ? deadline - steady_now_ns() : 0;
        timeout->tv_sec = left > 0 ? left / 1'000'000'000 : 0;
        timeout->tv_usec = left > 0 ? (left % 1'000'000'000) / 1000 : 0;
      }
      return ready;
    }
  }
}

int epoll_wait(int epfd, epoll_event* events, int max_events, int timeout_ms) {
  Manager* manager = weft::io::detail::waiting_manager();
  if (manager == nullptr || timeout_ms == 0) {
    return libc::epoll_wait(epfd, events, max_events, timeout_ms);
  }
  const int now = libc::epoll_wait(epfd, events, max_events, 0);
  if (now != 0) return now;
  const std::int64_t deadline = weft::io::detail::deadline_after_ms(timeout_ms);
  pollfd instance{epfd, POLLIN, 0};
  for (;;) {
    manager->wait(&instance, 1, deadline);
    const int ready = libc::epoll_wait(epfd, events, max_events, 0);
    if (ready != 0 || expired(deadline)) return ready;
  }
}

}  // extern "C"
