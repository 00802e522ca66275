// Blocking calls that cannot become waits on the I/O manager, since no descriptor becomes ready
// when they can go on: file locks (flock, fcntl's F_SETLKW and F_OFD_SETLKW, lockf) and waits for
// child processes (wait, waitpid, wait4, waitid). A user thread first tries the call's
// non-blocking form; when that would block, a spare kernel thread makes the blocking call while
// the caller is parked, and its core runs its other threads (PIOMan's hand-off). Every other
// caller gets the C library's call unchanged.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blocking_call.h"
#include "libc.h"

namespace {

using weft::io::detail::current_errno;
using weft::io::detail::Manager;
using weft::io::detail::on_spare_thread;
using weft::io::detail::waiting_manager;
namespace libc = weft::io::libc;

bool lock_taken_elsewhere() noexcept {
  const int error = current_errno();
  return error == EAGAIN || error == EACCES || error == EWOULDBLOCK;
}

int fcntl_call(int fd, int command, void* argument) {
  Manager* manager = waiting_manager();
  const bool waits = command == F_SETLKW || command == F_OFD_SETLKW;
  if (manager == nullptr || !waits) return libc::fcntl(fd, command, argument);
  const int result = libc::fcntl(fd, command == F_SETLKW ? F_SETLK : F_OFD_SETLK, argument);
  if (result == 0 || !lock_taken_elsewhere()) return result;
  return on_spare_thread(*manager, [=] { return libc::fcntl(fd, command, argument); });
}

}  // namespace

extern "C" {

int flock(int fd, int operation) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || (operation & (LOCK_NB | LOCK_UN)) != 0) {
    return libc::flock(fd, operation);
  }
  const int result = libc::flock(fd, operation | LOCK_NB);
  if (result == 0 || current_errno() != EWOULDBLOCK) return result;
  return on_spare_thread(*manager, [=] { return libc::flock(fd, operation); });
}

// The third argument, when the command has one, is read as a pointer-sized value, as the C
// library does.
int fcntl(int fd, int command, ...) {
  va_list arguments;
  va_start(arguments, command);
  void* argument = va_arg(arguments, void*);
  va_end(arguments);
  return fcntl_call(fd, command, argument);
}

// What programs built with _FILE_OFFSET_BITS=64 call (the same call on a 64-bit system).
int fcntl64(int fd, int command, ...) {
  va_list arguments;
  va_start(arguments, command);
  void* argument = va_arg(arguments, void*);
  va_end(arguments);
  return fcntl_call(fd, command, argument);
}

int lockf(int fd, int command, off_t length) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || command != F_LOCK) return libc::lockf(fd, command, length);
  const int result = libc::lockf(fd, F_TLOCK, length);
  if (result == 0 || !lock_taken_elsewhere()) return result;
  return on_spare_thread(*manager, [=] { return libc::lockf(fd, F_LOCK, length); });
}

pid_t wait4(pid_t pid, int* status, int options, rusage* usage) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || (options & WNOHANG) != 0) {
    return libc::wait4(pid, status, options, usage);
  }
  // 0: children to wait for, none changed yet; -1 (no such child) or a pid is the answer.
  const pid_t now = libc::wait4(pid, status, options | WNOHANG, usage);
  if (now != 0) return now;
  return on_spare_thread(*manager, [=] { return libc::wait4(pid, status, options, usage); });
}

pid_t waitpid(pid_t pid, int* status, int options) {
  return wait4(pid, status, options, nullptr);
}

pid_t wait(int* status) {
  return wait4(-1, status, 0, nullptr);
}

int waitid(idtype_t type, id_t id, siginfo_t* info, int options) {
  Manager* manager = waiting_manager();
  if (manager == nullptr || (options & WNOHANG) != 0 || info == nullptr) {
    return libc::waitid(type, id, info, options);
  }
  // With WNOHANG and nothing to report, waitid succeeds and leaves si_pid 0.
  info->si_pid = 0;
  const int now = libc::waitid(type, id, info, options | WNOHANG);
  if (now != 0 || info->si_pid != 0) return now;
  return on_spare_thread(*manager, [=] { return libc::waitid(type, id, info, options); });
}

}  // extern "C"
