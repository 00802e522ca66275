// The C library's own versions of the calls libweft interposes. weft's code that must not wait
// on the I/O manager (the manager itself, and every call made outside a user thread) uses these.
#pragma once

#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

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

}  // namespace weft::io::libc
