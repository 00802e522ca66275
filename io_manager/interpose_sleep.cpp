// nanosleep, clock_nanosleep, sleep and usleep as libweft defines them: a user thread sleeps on
// the scheduler's timers (its core runs its other threads meanwhile); every other caller sleeps
// in the kernel as usual. The C library's sleep and usleep call its internal nanosleep, which
// no interposition reaches: hence all four.
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include <chrono>

#include "libc.h"
#include "manager.h"
#include "park.h"
#include "weft/this_thread.h"

namespace {

namespace libc = weft::io::libc;

bool user_thread() noexcept {
  return weft::detail::current_fiber() != nullptr && !weft::io::detail::Manager::bypassed();
}

bool valid(const timespec* t) noexcept {
  return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1'000'000'000;
}

std::chrono::nanoseconds duration(const timespec& t) noexcept {
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

}  // namespace

extern "C" {

int nanosleep(const timespec* request, timespec* remaining) {
  if (!user_thread()) return libc::nanosleep(request, remaining);
  if (request == nullptr) {
    errno = EFAULT;
    return -1;
  }
  if (!valid(request)) {
    errno = EINVAL;
    return -1;
  }
  // A parked thread is not interrupted by signals: the whole duration is slept.
  weft::this_thread::sleep_for(duration(*request));
  if (remaining != nullptr) *remaining = {0, 0};
  return 0;
}

int clock_nanosleep(clockid_t clock, int flags, const timespec* request, timespec* remaining) {
  // Other clocks (CPU time) have no scheduler timer: the kernel sleeps for them.
  if (!user_thread() || (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)) {
    return libc::clock_nanosleep(clock, flags, request, remaining);
  }
  if (request == nullptr) return EFAULT;
  if (!valid(request)) return EINVAL;
  std::chrono::nanoseconds wait = duration(*request);
  if ((flags & TIMER_ABSTIME) != 0) {
    timespec now{};
    ::clock_gettime(clock, &now);
    wait -= duration(now);
  }
  if (wait.count() > 0) weft::this_thread::sleep_for(wait);
  if (remaining != nullptr && (flags & TIMER_ABSTIME) == 0) *remaining = {0, 0};
  return 0;
}

unsigned sleep(unsigned seconds) {
  if (!user_thread()) return libc::sleep(seconds);
  weft::this_thread::sleep_for(std::chrono::seconds(seconds));
  return 0;
}

int usleep(useconds_t microseconds) {
  if (!user_thread()) return libc::usleep(microseconds);
  weft::this_thread::sleep_for(std::chrono::microseconds(microseconds));
  return 0;
}

}  // extern "C"
