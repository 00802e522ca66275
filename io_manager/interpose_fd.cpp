// read, write, recv, send, accept and connect as libweft defines them for every program linked
// with it: a user thread whose descriptor is not ready waits on the I/O manager, so its core
// runs its other threads; every other caller gets the C library's call unchanged.
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "blocking_call.h"
#include "libc.h"
#include "park.h"
#include "timer_heap.h"

namespace weft::io::detail {

Manager* waiting_manager() noexcept {
  if (Manager::bypassed() || weft::detail::current_fiber() == nullptr) return nullptr;
  return Manager::running();
}

bool non_blocking(int fd) noexcept {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags < 0 || (flags & O_NONBLOCK) != 0;
}

std::int64_t deadline_after_ms(int timeout_ms) noexcept {
  if (timeout_ms < 0) return -1;
  return weft::detail::steady_now_ns() + static_cast<std::int64_t>(timeout_ms) * 1'000'000;
}

void await_fd(Manager& manager, int fd, short events) noexcept {
  pollfd entry{fd, events, 0};
  if (libc::poll(&entry, 1, 0) != 0 || non_blocking(fd)) return;
  manager.wait(&entry, 1, -1);
}

namespace {

bool would_block() noexcept {
  return errno == EAGAIN || errno == EWOULDBLOCK;
}

}  // namespace

}  // namespace weft::io::detail

using weft::io::detail::await_fd;
using weft::io::detail::Manager;
using weft::io::detail::non_blocking;
using weft::io::detail::waiting_manager;
namespace libc = weft::io::libc;

extern "C" {

ssize_t read(int fd, void* buffer, size_t count) {
  if (Manager* manager = waiting_manager(); manager != nullptr && count > 0) {
    await_fd(*manager, fd, POLLIN);
  }
  return libc::read(fd, buffer, count);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  if (Manager* manager = waiting_manager(); manager != nullptr && count > 0) {
    await_fd(*manager, fd, POLLOUT);
  }
  return libc::write(fd, buffer, count);
}

ssize_t recv(int fd, void* buffer, size_t length, int flags) {
  Manager* manager = waiting_manager();
  // MSG_WAITALL wants the whole length, which a non-blocking try would cut short.
  if (manager == nullptr || (flags & (MSG_DONTWAIT | MSG_WAITALL)) != 0) {
    if (manager != nullptr && (flags & MSG_WAITALL) != 0) await_fd(*manager, fd, POLLIN);
    return libc::recv(fd, buffer, length, flags);
  }
  for (;;) {
    const ssize_t got = libc::recv(fd, buffer, length, flags | MSG_DONTWAIT);
    if (got >= 0 || !weft::io::detail::would_block() || non_blocking(fd)) return got;
    pollfd entry{fd, POLLIN, 0};
    manager->wait(&entry, 1, -1);
  }
}

ssize_t send(int fd, const void* buffer, size_t length, int flags) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || (flags & MSG_DONTWAIT) != 0 || length == 0) {
    return libc::send(fd, buffer, length, flags);
  }
  // A blocking send returns once everything is queued: send what fits, wait, go on.
  const char* bytes = static_cast<const char*>(buffer);
  std::size_t sent = 0;
  for (;;) {
    const ssize_t done = libc::send(fd, bytes + sent, length - sent, flags | MSG_DONTWAIT);
    if (done >= 0) {
      sent += static_cast<std::size_t>(done);
      if (sent == length) return static_cast<ssize_t>(sent);
      continue;
    }
    if (!weft::io::detail::would_block() || non_blocking(fd)) {
      return sent > 0 ? static_cast<ssize_t>(sent) : -1;
    }
    pollfd entry{fd, POLLOUT, 0};
    manager->wait(&entry, 1, -1);
  }
}

int accept(int fd, sockaddr* address, socklen_t* length) {
  if (Manager* manager = waiting_manager()) await_fd(*manager, fd, POLLIN);
  return libc::accept(fd, address, length);
}

int connect(int fd, const sockaddr* address, socklen_t length) {
  Manager* manager = waiting_manager();
  const int flags = manager != nullptr ? ::fcntl(fd, F_GETFL) : -1;
  if (flags < 0 || (flags & O_NONBLOCK) != 0) return libc::connect(fd, address, length);
  // Started non-blocking, then the descriptor gets its mode back at once: only the wait for the
  // connection's outcome parks.
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  const int result = libc::connect(fd, address, length);
  const int error = errno;
  ::fcntl(fd, F_SETFL, flags);
  if (result == 0 || error != EINPROGRESS) {
    errno = error;
    return result;
  }
  pollfd entry{fd, POLLOUT, 0};
  manager->wait(&entry, 1, -1);
  int outcome = 0;
  socklen_t size = sizeof outcome;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &outcome, &size) != 0) return -1;
  if (outcome != 0) {
    errno = outcome;
    return -1;
  }
  return 0;
}

}  // extern "C"
