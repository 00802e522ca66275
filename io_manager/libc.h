// The C library's own versions of the calls libweft interposes. weft's code that must not wait
// on the I/O manager (the manager itself, and every call made outside a user thread) uses these.
#pragma once

#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include <cstdio>

namespace weft::io::libc {

ssize_t read(int fd, void* buffer, size_t count);
ssize_t write(int fd, const void* buffer, size_t count);
ssize_t recv(int fd, void* buffer, size_t length, int flags);
ssize_t send(int fd, const void* buffer, size_t length, int flags);
int accept(int fd, sockaddr* address, socklen_t* length);
int connect(int fd, const sockaddr* address, socklen_t length);
int poll(pollfd* fds, nfds_t count, int timeout_ms);
int select(int nfds, fd_set* read, fd_set* write, fd_set* except, timeval* timeout);
int epoll_wait(int epfd, epoll_event* events, int max_events, int timeout_ms);
int nanosleep(const timespec* request, timespec* remaining);
int clock_nanosleep(clockid_t clock, int flags, const timespec* request, timespec* remaining);
unsigned sleep(unsigned seconds);
int usleep(useconds_t microseconds);
ssize_t readv(int fd, const iovec* vector, int count);
ssize_t pread(int fd, void* buffer, size_t count, off_t offset);
ssize_t preadv(int fd, const iovec* vector, int count, off_t offset);
ssize_t writev(int fd, const iovec* vector, int count);
ssize_t recvfrom(int fd, void* buffer, size_t length, int flags, sockaddr* address,
                 socklen_t* address_length);
ssize_t sendto(int fd, const void* buffer, size_t length, int flags, const sockaddr* address,
               socklen_t address_length);
ssize_t recvmsg(int fd, msghdr* message, int flags);
ssize_t sendmsg(int fd, const msghdr* message, int flags);
int recvmmsg(int fd, mmsghdr* vector, unsigned count, int flags, timespec* timeout);
int sendmmsg(int fd, mmsghdr* vector, unsigned count, int flags);
int accept4(int fd, sockaddr* address, socklen_t* length, int flags);
int ppoll(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask);
int pselect(int nfds, fd_set* read, fd_set* write, fd_set* except, const timespec* timeout,
            const sigset_t* mask);
int epoll_pwait(int epfd, epoll_event* events, int max_events, int timeout_ms,
                const sigset_t* mask);
ssize_t splice(int in, loff_t* in_offset, int out, loff_t* out_offset, size_t length,
               unsigned flags);
int flock(int fd, int operation);
int fcntl(int fd, int command, void* argument);
int lockf(int fd, int command, off_t length);
pid_t wait4(pid_t pid, int* status, int options, rusage* usage);
pid_t waitpid(pid_t pid, int* status, int options);
int waitid(idtype_t type, id_t id, siginfo_t* info, int options);
int pthread_join(pthread_t thread, void** value);
int pthread_tryjoin_np(pthread_t thread, void** value);
int system(const char* command);
int pclose(FILE* stream);

}  // namespace weft::io::libc
