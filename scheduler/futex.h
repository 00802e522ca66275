// Kernel-side sleeping for kernel threads: the idle virtual processors and the threads outside
// weft that wait on a weft primitive.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace weft::detail {

// Sleeps while *word == expected, until woken or until the absolute CLOCK_MONOTONIC deadline
// (deadline_ns < 0: no deadline). Spurious returns are possible; callers loop.
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                       std::int64_t deadline_ns = -1) noexcept {
  timespec ts;
  timespec* timeout = nullptr;
  if (deadline_ns >= 0) {
    ts.tv_sec = deadline_ns / 1'000'000'000;
    ts.tv_nsec = deadline_ns % 1'000'000'000;
    timeout = &ts;
  }
  // FUTEX_WAIT_BITSET takes an absolute deadline on CLOCK_MONOTONIC, unlike FUTEX_WAIT.
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_BITSET_PRIVATE, expected,
            timeout, nullptr, FUTEX_BITSET_MATCH_ANY);
}

inline void futex_wake(std::atomic<std::uint32_t>* word, int count = 1) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr,
            nullptr, 0);
}

}  // namespace weft::detail
