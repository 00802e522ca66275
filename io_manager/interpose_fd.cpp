// read, readv, pread, preadv, write, writev and splice as libweft defines them for every program
// linked with it: a user thread whose descriptor is not ready waits on the I/O manager, so its core
// runs its other threads; a read that would block on a descriptor poll(2) calls ready (a regular
// file whose data is not in the page cache) is made by a spare kernel thread meanwhile. Every other
// caller gets the C library's call unchanged.
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

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

// A read from a user thread. The first try never blocks (RWF_NOWAIT): data, the end of the file
// or an error is the answer at once, in one system call. When it would block: a descriptor that
// poll(2) can watch is waited for on the manager; one that poll(2) calls ready although the read
// would block (a regular file or block device whose data must come from the disk) is read by a
// spare kernel thread. Descriptors without RWF_NOWAIT support get the poll-then-read path.
// `offset` as preadv2 takes it: -1 for the file position (read, readv), else pread's offset.
ssize_t read_vector(Manager& manager, int fd, const iovec* vector, int count,
                    off_t offset) noexcept {
  auto blocking_read = [=] {
    return offset < 0 ? libc::readv(fd, vector, count) : libc::preadv(fd, vector, count, offset);
  };
  // Data may come between the try and the poll(2) that then says ready: one more try tells that
  // apart from a read that must wait for the disk.
  bool ready_once = false;
  for (;;) {
    const ssize_t got = ::preadv2(fd, vector, count, offset, RWF_NOWAIT);
    if (got >= 0) {
      if (ready_once) manager.count_ready_reread();
      return got;
    }
    const int error = current_errno();
    if (error == EOPNOTSUPP || error == ENOSYS || error == EINVAL) {
      await_fd(manager, fd, POLLIN);
      return blocking_read();
    }
    // A non-blocking descriptor's caller expects the EAGAIN.
    if (error != EAGAIN || non_blocking(fd)) {
      set_errno(error);
      return -1;
    }
    pollfd entry{fd, POLLIN, 0};
    if (libc::poll(&entry, 1, 0) == 0) {
      manager.wait(&entry, 1, -1);
      continue;
    }
    if (!ready_once) {
      ready_once = true;
      continue;
    }
    return on_spare_thread(manager, blocking_read);
  }
}

// Descriptors a write found not to be sockets (ENOTSOCK), one bit each for the first
// kKnownDescriptors: their writes skip the send(2) try. A bit is never cleared: a number reused
// for a socket then takes the poll(2) path, correct and one system call dearer.
constexpr int kKnownDescriptors = 4096;
std::atomic<std::uint64_t> not_socket[kKnownDescriptors / 64];

bool known_not_socket(int fd) noexcept {
  // Relaxed: a hint; a stale bit only costs the ENOTSOCK try once more.
  return fd >= kKnownDescriptors ||
         (not_socket[fd / 64].load(std::memory_order_relaxed) >> (fd % 64) & 1) != 0;
}

void mark_not_socket(int fd) noexcept {
  if (fd < kKnownDescriptors) {
    not_socket[fd / 64].fetch_or(std::uint64_t{1} << (fd % 64), std::memory_order_relaxed);
  }
}

}  // namespace

// A write of a user thread. On a socket (what a thread most often waits on) it is the interposed
// send(2) with no flags, which the kernel makes the same call as write(2): tried with
// MSG_DONTWAIT, waiting for room between tries until all is queued, one system call when it
// fits. Any other descriptor (ENOTSOCK, remembered) waits until poll(2) says writable, then
// writes.
ssize_t write_bytes(Manager& manager, int fd, const void* buffer, size_t count) noexcept {
  if (!known_not_socket(fd)) {
    const ssize_t sent = ::send(fd, buffer, count, 0);
    if (sent >= 0 || current_errno() != ENOTSOCK) return sent;
    mark_not_socket(fd);
  }
  await_fd(manager, fd, POLLOUT);
  return libc::write(fd, buffer, count);
}

}  // namespace weft::io::detail

using weft::io::detail::await_fd;
using weft::io::detail::current_errno;
using weft::io::detail::Manager;
using weft::io::detail::non_blocking;
using weft::io::detail::read_vector;
using weft::io::detail::set_errno;
using weft::io::detail::waiting_manager;
using weft::io::detail::write_bytes;
namespace libc = weft::io::libc;

extern "C" {

ssize_t read(int fd, void* buffer, size_t count) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || count == 0) return libc::read(fd, buffer, count);
  const iovec vector{buffer, count};
  return read_vector(*manager, fd, &vector, 1, -1);
}

ssize_t readv(int fd, const iovec* vector, int count) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || count <= 0) return libc::readv(fd, vector, count);
  return read_vector(*manager, fd, vector, count, -1);
}

// A negative offset is the C library's error to report (preadv2 would take -1 for the file
// position).
ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || count == 0 || offset < 0) {
    return libc::pread(fd, buffer, count, offset);
  }
  const iovec vector{buffer, count};
  return read_vector(*manager, fd, &vector, 1, offset);
}

ssize_t preadv(int fd, const iovec* vector, int count, off_t offset) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || count <= 0 || offset < 0) {
    return libc::preadv(fd, vector, count, offset);
  }
  return read_vector(*manager, fd, vector, count, offset);
}

// What programs built with _FILE_OFFSET_BITS=64 call (the same calls on a 64-bit system).
ssize_t pread64(int fd, void* buffer, size_t count, off_t offset) {
  return pread(fd, buffer, count, offset);
}

ssize_t preadv64(int fd, const iovec* vector, int count, off_t offset) {
  return preadv(fd, vector, count, offset);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || count == 0) return libc::write(fd, buffer, count);
  return write_bytes(*manager, fd, buffer, count);
}

ssize_t writev(int fd, const iovec* vector, int count) {
  if (Manager* manager = waiting_manager(); manager != nullptr && count > 0) {
    await_fd(*manager, fd, POLLOUT);
  }
  return libc::writev(fd, vector, count);
}

// Waits until the input has data and the output room (an end that is bad, in error or
// non-blocking is not waited for), then moves with SPLICE_F_NONBLOCK; a race lost to another
// reader or writer waits again. The flag alone would not do: it spares only the pipe ends, a
// socket end may still block. A caller's own SPLICE_F_NONBLOCK goes to the C library.
ssize_t splice(int in, loff_t* in_offset, int out, loff_t* out_offset, size_t length,
               unsigned flags) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || length == 0 || (flags & SPLICE_F_NONBLOCK) != 0) {
    return libc::splice(in, in_offset, out, out_offset, length, flags);
  }
  for (;;) {
    await_fd(*manager, in, POLLIN);
    await_fd(*manager, out, POLLOUT);
    const ssize_t moved =
        libc::splice(in, in_offset, out, out_offset, length, flags | SPLICE_F_NONBLOCK);
    if (moved >= 0 || current_errno() != EAGAIN) return moved;
    // A non-blocking end's caller expects the EAGAIN.
    if (non_blocking(in) || non_blocking(out)) {
      set_errno(EAGAIN);
      return -1;
    }
  }
}

}  // extern "C"
