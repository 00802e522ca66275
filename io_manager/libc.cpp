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
std::atomic<ssize_t (*)(int, const iovec*, int)> readv_fn{nullptr};
std::atomic<ssize_t (*)(int, const iovec*, int)> writev_fn{nullptr};
std::atomic<ssize_t (*)(int, void*, size_t, off_t)> pread_fn{nullptr};
std::atomic<ssize_t (*)(int, const iovec*, int, off_t)> preadv_fn{nullptr};
std::atomic<ssize_t (*)(int, void*, size_t, int, sockaddr*, socklen_t*)> recvfrom_fn{nullptr};
std::atomic<ssize_t (*)(int, const void*, size_t, int, const sockaddr*, socklen_t)> sendto_fn{
    nullptr};
std::atomic<ssize_t (*)(int, msghdr*, int)> recvmsg_fn{nullptr};
std::atomic<ssize_t (*)(int, const msghdr*, int)> sendmsg_fn{nullptr};
std::atomic<int (*)(int, sockaddr*, socklen_t*, int)> accept4_fn{nullptr};
std::atomic<ssize_t (*)(int, loff_t*, int, loff_t*, size_t, unsigned)> splice_fn{nullptr};
std::atomic<int (*)(int, mmsghdr*, unsigned, int, timespec*)> recvmmsg_fn{nullptr};
std::atomic<int (*)(int, mmsghdr*, unsigned, int)> sendmmsg_fn{nullptr};
std::atomic<int (*)(pollfd*, nfds_t, const timespec*, const sigset_t*)> ppoll_fn{nullptr};
std::atomic<int (*)(int, fd_set*, fd_set*, fd_set*, const timespec*, const sigset_t*)> pselect_fn{
    nullptr};
std::atomic<int (*)(int, epoll_event*, int, int, const sigset_t*)> epoll_pwait_fn{nullptr};
std::atomic<int (*)(int, int)> flock_fn{nullptr};
// fcntl is variadic; its third argument, when there is one, is passed as a pointer-sized value
// (the C library reads it that way itself).
std::atomic<int (*)(int, int, void*)> fcntl_fn{nullptr};
std::atomic<int (*)(int, int, off_t)> lockf_fn{nullptr};
std::atomic<pid_t (*)(pid_t, int*, int, rusage*)> wait4_fn{nullptr};
std::atomic<pid_t (*)(pid_t, int*, int)> waitpid_fn{nullptr};
std::atomic<int (*)(idtype_t, id_t, siginfo_t*, int)> waitid_fn{nullptr};
std::atomic<int (*)(const char*)> system_fn{nullptr};
std::atomic<int (*)(FILE*)> pclose_fn{nullptr};
std::atomic<int (*)(pthread_t, void**)> pthread_join_fn{nullptr};
std::atomic<int (*)(pthread_t, void**)> pthread_tryjoin_np_fn{nullptr};

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

ssize_t readv(int fd, const iovec* vector, int count) {
  return real(readv_fn, "readv")(fd, vector, count);
}
ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  return real(pread_fn, "pread")(fd, buffer, count, offset);
}
ssize_t preadv(int fd, const iovec* vector, int count, off_t offset) {
  return real(preadv_fn, "preadv")(fd, vector, count, offset);
}
ssize_t writev(int fd, const iovec* vector, int count) {
  return real(writev_fn, "writev")(fd, vector, count);
}
ssize_t recvfrom(int fd, void* buffer, size_t length, int flags, sockaddr* address,
                 socklen_t* address_length) {
  return real(recvfrom_fn, "recvfrom")(fd, buffer, length, flags, address, address_length);
}
ssize_t sendto(int fd, const void* buffer, size_t length, int flags, const sockaddr* address,
               socklen_t address_length) {
  return real(sendto_fn, "sendto")(fd, buffer, length, flags, address, address_length);
}
ssize_t recvmsg(int fd, msghdr* message, int flags) {
  return real(recvmsg_fn, "recvmsg")(fd, message, flags);
}
ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  return real(sendmsg_fn, "sendmsg")(fd, message, flags);
}
int recvmmsg(int fd, mmsghdr* vector, unsigned count, int flags, timespec* timeout) {
  return real(recvmmsg_fn, "recvmmsg")(fd, vector, count, flags, timeout);
}
int sendmmsg(int fd, mmsghdr* vector, unsigned count, int flags) {
  return real(sendmmsg_fn, "sendmmsg")(fd, vector, count, flags);
}
int accept4(int fd, sockaddr* address, socklen_t* length, int flags) {
  return real(accept4_fn, "accept4")(fd, address, length, flags);
}
int ppoll(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask) {
  return real(ppoll_fn, "ppoll")(fds, count, timeout, mask);
}
int pselect(int nfds, fd_set* read, fd_set* write, fd_set* except, const timespec* timeout,
            const sigset_t* mask) {
  return real(pselect_fn, "pselect")(nfds, read, write, except, timeout, mask);
}
int epoll_pwait(int epfd, epoll_event* events, int max_events, int timeout_ms,
                const sigset_t* mask) {
  return real(epoll_pwait_fn, "epoll_pwait")(epfd, events, max_events, timeout_ms, mask);
}
ssize_t splice(int in, loff_t* in_offset, int out, loff_t* out_offset, size_t length,
               unsigned flags) {
  return real(splice_fn, "splice")(in, in_offset, out, out_offset, length, flags);
}
int flock(int fd, int operation) {
  return real(flock_fn, "flock")(fd, operation);
}
int fcntl(int fd, int command, void* argument) {
  return real(fcntl_fn, "fcntl")(fd, command, argument);
}
int lockf(int fd, int command, off_t length) {
  return real(lockf_fn, "lockf")(fd, command, length);
}
pid_t wait4(pid_t pid, int* status, int options, rusage* usage) {
  return real(wait4_fn, "wait4")(pid, status, options, usage);
}
pid_t waitpid(pid_t pid, int* status, int options) {
  return real(waitpid_fn, "waitpid")(pid, status, options);
}
int waitid(idtype_t type, id_t id, siginfo_t* info, int options) {
  return real(waitid_fn, "waitid")(type, id, info, options);
}
int pthread_join(pthread_t thread, void** value) {
  return real(pthread_join_fn, "pthread_join")(thread, value);
}
int pthread_tryjoin_np(pthread_t thread, void** value) {
  return real(pthread_tryjoin_np_fn, "pthread_tryjoin_np")(thread, value);
}
int system(const char* command) {
  return real(system_fn, "system")(command);
}
int pclose(FILE* stream) {
  return real(pclose_fn, "pclose")(stream);
}

}  // namespace weft::io::libc
