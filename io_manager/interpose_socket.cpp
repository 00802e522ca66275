// The socket calls libweft defines (recv, recvfrom, recvmsg, send, sendto, sendmsg, accept,
// accept4, connect): a user thread makes the call without blocking (MSG_DONTWAIT, or after a
// readiness check) and, when it would block, waits on the I/O manager for its socket, so its core
// runs its other threads. Every other caller gets the C library's call unchanged.
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <vector>

#include "blocking_call.h"
#include "libc.h"

namespace {

using weft::io::detail::await_fd;
using weft::io::detail::current_errno;
using weft::io::detail::Manager;
using weft::io::detail::non_blocking;
using weft::io::detail::set_errno;
using weft::io::detail::waiting_manager;
namespace libc = weft::io::libc;

bool would_block() noexcept {
  const int error = current_errno();
  return error == EAGAIN || error == EWOULDBLOCK;
}

// A receive: attempt(flags) makes the call. MSG_WAITALL wants the whole length, which a
// non-blocking try would cut short: it waits for readiness, then makes the blocking call.
template <class Attempt>
ssize_t receive(int fd, int flags, Attempt attempt) noexcept {
  Manager* manager = waiting_manager();
  if (manager == nullptr || (flags & (MSG_DONTWAIT | MSG_WAITALL)) != 0) {
    if (manager != nullptr && (flags & MSG_WAITALL) != 0) await_fd(*manager, fd, POLLIN);
    return attempt(flags);
  }
  for (;;) {
    const ssize_t got = attempt(flags | MSG_DONTWAIT);
    if (got >= 0 || !would_block() || non_blocking(fd)) return got;
    pollfd entry{fd, POLLIN, 0};
    manager->wait(&entry, 1, -1);
  }
}

// A send that returns once everything is queued, as a blocking send does: attempt(offset, flags)
// sends what is left from `offset` without blocking; the caller waits for room between tries.
template <class Attempt>
ssize_t send_all(Manager& manager, int fd, std::size_t length, int flags, Attempt attempt) {
  std::size_t sent = 0;
  for (;;) {
    const ssize_t done = attempt(sent, flags | MSG_DONTWAIT);
    if (done >= 0) {
      sent += static_cast<std::size_t>(done);
      if (sent >= length) return static_cast<ssize_t>(sent);
      continue;
    }
    if (!would_block() || non_blocking(fd)) return sent > 0 ? static_cast<ssize_t>(sent) : -1;
    pollfd entry{fd, POLLOUT, 0};
    manager.wait(&entry, 1, -1);
  }
}

template <class Attempt>
ssize_t send_bytes(int fd, std::size_t length, int flags, Attempt attempt) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || (flags & MSG_DONTWAIT) != 0 || length == 0) return attempt(0, flags);
  return send_all(*manager, fd, length, flags, attempt);
}

int accept_call(int fd, sockaddr* address, socklen_t* length, int flags) {
  if (Manager* manager = waiting_manager()) await_fd(*manager, fd, POLLIN);
  return libc::accept4(fd, address, length, flags);
}

}  // namespace

extern "C" {

ssize_t recv(int fd, void* buffer, size_t length, int flags) {
  return receive(fd, flags, [=](int f) { return libc::recv(fd, buffer, length, f); });
}

ssize_t recvfrom(int fd, void* buffer, size_t length, int flags, sockaddr* address,
                 socklen_t* address_length) {
  // The address length is in and out: every try starts from the caller's.
  const socklen_t given = address_length != nullptr ? *address_length : 0;
  return receive(fd, flags, [=](int f) {
    if (address_length != nullptr) *address_length = given;
    return libc::recvfrom(fd, buffer, length, f, address, address_length);
  });
}

ssize_t recvmsg(int fd, msghdr* message, int flags) {
  // The kernel rewrites the name and control lengths: every try starts from the caller's.
  const socklen_t name_length = message->msg_namelen;
  const std::size_t control_length = message->msg_controllen;
  return receive(fd, flags, [=](int f) {
    message->msg_namelen = name_length;
    message->msg_controllen = control_length;
    return libc::recvmsg(fd, message, f);
  });
}

ssize_t send(int fd, const void* buffer, size_t length, int flags) {
  const char* bytes = static_cast<const char*>(buffer);
  return send_bytes(fd, length, flags, [=](std::size_t offset, int f) {
    return libc::send(fd, bytes + offset, length - offset, f);
  });
}

ssize_t sendto(int fd, const void* buffer, size_t length, int flags, const sockaddr* address,
               socklen_t address_length) {
  const char* bytes = static_cast<const char*>(buffer);
  return send_bytes(fd, length, flags, [=](std::size_t offset, int f) {
    return libc::sendto(fd, bytes + offset, length - offset, f, address, address_length);
  });
}

ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  Manager* manager = waiting_manager();
  std::size_t length = 0;
  for (std::size_t i = 0; i < message->msg_iovlen; ++i) length += message->msg_iov[i].iov_len;
  if (manager == nullptr || (flags & MSG_DONTWAIT) != 0 || length == 0) {
    return libc::sendmsg(fd, message, flags);
  }
  // After a partial send the rest goes from a copy of the vector that starts where it stopped;
  // the ancillary data (descriptors passed, credentials) went with the first bytes.
  std::vector<iovec> rest;
  msghdr tail{};
  return send_all(*manager, fd, length, flags, [&](std::size_t offset, int f) {
    if (offset == 0) return libc::sendmsg(fd, message, f);
    rest.clear();
    std::size_t skip = offset;
    for (std::size_t i = 0; i < message->msg_iovlen; ++i) {
      const iovec& piece = message->msg_iov[i];
      if (skip >= piece.iov_len) {
        skip -= piece.iov_len;
        continue;
      }
      rest.push_back({static_cast<char*>(piece.iov_base) + skip, piece.iov_len - skip});
      skip = 0;
    }
    tail = *message;
    tail.msg_iov = rest.data();
    tail.msg_iovlen = rest.size();
    tail.msg_control = nullptr;
    tail.msg_controllen = 0;
    return libc::sendmsg(fd, &tail, f);
  });
}

int accept(int fd, sockaddr* address, socklen_t* length) {
  return accept_call(fd, address, length, 0);
}

int accept4(int fd, sockaddr* address, socklen_t* length, int flags) {
  return accept_call(fd, address, length, flags);
}

int connect(int fd, const sockaddr* address, socklen_t length) {
  Manager* manager = waiting_manager();
  const int flags = manager != nullptr ? ::fcntl(fd, F_GETFL) : -1;
  if (flags < 0 || (flags & O_NONBLOCK) != 0) return libc::connect(fd, address, length);
  // Started non-blocking, then the descriptor gets its mode back at once: only the wait for the
  // connection's outcome parks.
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  const int result = libc::connect(fd, address, length);
  const int error = current_errno();
  ::fcntl(fd, F_SETFL, flags);
  if (result == 0 || error != EINPROGRESS) {
    set_errno(error);
    return result;
  }
  pollfd entry{fd, POLLOUT, 0};
  manager->wait(&entry, 1, -1);
  int outcome = 0;
  socklen_t size = sizeof outcome;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &outcome, &size) != 0) return -1;
  if (outcome != 0) {
    set_errno(outcome);
    return -1;
  }
  return 0;
}

}  // extern "C"
