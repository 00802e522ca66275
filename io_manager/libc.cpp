#include "libc.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>

#include <atomic>
#include <string>

#include "weft/error.h"

namespace weft::io::libc {

namespace {

// The C library's definition of `name`, looked up in the C library itself: RTLD_NEXT would miss
// it when libweft comes after the C library in the lookup order (a program loaded with dlopen).
void* resolve(const char* name) noexcept {
  static void* const library = ::dlopen(LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
  void* symbol = library != nullptr ? ::dlsym(library, name) : nullptr;
  if (symbol == nullptr) fatal(std::string("cannot find the C library's ") + name + "()");
  return symbol;
}

// Resolved on first use and cached. Every thread resolves the same address, so a race only
// repeats the lookup; relaxed suffices since the pointer is the only data published.
// Plain function pointer types: decltype of the C library's declarations would carry attributes
// (nonnull, warn_unused_result) that a template argument drops.
template <class Pointer>
Pointer real(std::atomic<Pointer>& cache, const char* name) noexcept {
  Pointer function = cache.load(std::memory_order_relaxed);
  if (function == nullptr) {
    function = reinterpret_cast<Pointer>(resolve(name));
    cache.store(function, std::memory_order_relaxed);
  }
  return function;
}

std::atomic<ssize_t (*)(int, void*, size_t)> read_fn{nullptr};
std::atomic<ssize_t (*)(int, const void*, size_t)> write_fn{nullptr};
std::atomic<ssize_t (*)(int, void*, size_t, int)> recv_fn{nullptr};
std::atomic<ssize_t (*)(int, const void*, size_t, int)> send_fn{nullptr};
std::atomic<int (*)(int, sockaddr*, socklen_t*)> accept_fn{nullptr};
std::atomic<int (*)(int, const sockaddr*, socklen_t)> connect_fn{nullptr};
std::atomic<int (*)(pollfd*, nfds_t, int)> poll_fn{nullptr};
std::atomic<int (*)(int, fd_set*, fd_set*, fd_set*, timeval*)> select_fn{nullptr};
std::atomic<int (*)(int, epoll_event*, int, int)> epoll_wait_fn{nullptr};
std::atomic<int (*)(const timespec*, timespec*)> nanosleep_fn{nullptr};
std::atomic<int (*)(clockid_t, int, const timespec*, timespec*)> clock_nanosleep_fn{nullptr};
std::atomic<unsigned (*)(unsigned)> sleep_fn{nullptr};
std::atomic<int (*)(useconds_t)> usleep_fn{nullptr};

}  // namespace

ssize_t read(int fd, void* buffer, size_t count) {
  return real(read_fn, "read")(fd, buffer, count);
}
ssize_t write(int fd, const void* buffer, size_t count) {
  return real(write_fn, "write")(fd, buffer, count);
}
ssize_t recv(int fd, void* buffer, size_t length, int flags) {
  return real(recv_fn, "recv")(fd, buffer, length, flags);
}
ssize_t send(int fd, const void* buffer, size_t length, int flags) {
  return real(send_fn, "send")(fd, buffer, length, flags);
}
int accept(int fd, sockaddr* address, socklen_t* length) {
  return real(accept_fn, "accept")(fd, address, length);
}
int connect(int fd, const sockaddr* address, socklen_t length) {
  return real(connect_fn, "connect")(fd, address, length);
}
int poll(pollfd* fds, nfds_t count, int timeout_ms) {
  return real(poll_fn, "poll")(fds, count, timeout_ms);
}
int select(int nfds, fd_set* read, fd_set* write, fd_set* except, timeval* timeout) {
  return real(select_fn, "select")(nfds, read, write, except, timeout);
}
int epoll_wait(int epfd, epoll_event* events, int max_events, int timeout_ms) {
  return real(epoll_wait_fn, "epoll_wait")(epfd, events, max_events, timeout_ms);
}
int nanosleep(const timespec* request, timespec* remaining) {
  return real(nanosleep_fn, "nanosleep")(request, remaining);
}
int clock_nanosleep(clockid_t clock, int flags, const timespec* request, timespec* remaining) {
  return real(clock_nanosleep_fn, "clock_nanosleep")(clock, flags, request, remaining);
}
unsigned sleep(unsigned seconds) {
  return real(sleep_fn, "sleep")(seconds);
}
int usleep(useconds_t microseconds) {
  return real(usleep_fn, "usleep")(microseconds);
}

}  // namespace weft::io::libc
