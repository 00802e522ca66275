// The checked variants a program built with _FORTIFY_SOURCE calls instead of read, pread,
// recv, recvfrom, poll and ppoll when the buffer's size is known but the length is not (__read_chk
// and the others): the C library's versions call its internal read and never reach libweft's,
// so a user thread blocked in them would hold its core. These check the length as the C
// library does (a bad one ends the process through __chk_fail), then make the interposed call.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

extern "C" {

// The C library's report of a buffer overflow caught by a check; it ends the process.
[[noreturn]] void __chk_fail(void);

ssize_t __read_chk(int fd, void* buffer, size_t count, size_t buffer_length) {
  if (count > buffer_length) __chk_fail();
  return read(fd, buffer, count);
}

ssize_t __pread_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_length) {
  if (count > buffer_length) __chk_fail();
  return pread(fd, buffer, count, offset);
}

ssize_t __pread64_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_length) {
  if (count > buffer_length) __chk_fail();
  return pread(fd, buffer, count, offset);
}

ssize_t __recv_chk(int fd, void* buffer, size_t length, size_t buffer_length, int flags) {
  if (length > buffer_length) __chk_fail();
  return recv(fd, buffer, length, flags);
}

ssize_t __recvfrom_chk(int fd, void* buffer, size_t length, size_t buffer_length, int flags,
                       sockaddr* address, socklen_t* address_length) {
  if (length > buffer_length) __chk_fail();
  return recvfrom(fd, buffer, length, flags, address, address_length);
}

int __poll_chk(pollfd* fds, nfds_t count, int timeout_ms, size_t fds_length) {
  if (fds_length / sizeof *fds < count) __chk_fail();
  return poll(fds, count, timeout_ms);
}

int __ppoll_chk(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask,
                size_t fds_length) {
  if (fds_length / sizeof *fds < count) __chk_fail();
  return ppoll(fds, count, timeout, mask);
}

}  // extern "C"
