// Signal sets as the I/O manager keeps them for the waits of ppoll, pselect and epoll_pwait: one
// bit per signal (Linux numbers signals 1 to 64), so that the spare kernel thread can combine
// the masks of several waits and test one against another cheaply.
#pragma once

#include <signal.h>

#include <cstdint>

namespace weft::io::detail {

// Bit s-1 set: signal s is blocked.
using SignalBits = std::uint64_t;

SignalBits signal_bits(const sigset_t& set) noexcept;
// The set of the blocked signals in `bits`; the C library's own signals (SIGCANCEL, SIGSETXID)
// are never in it, as with sigfillset.
sigset_t signal_set(SignalBits bits) noexcept;

// Blocks on the calling kernel thread every signal but the faults a bad instruction or access
// raises (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, which the crash handler reports), and
// restores the previous mask on destruction. A kernel thread started inside one inherits it.
class AsyncSignalsBlocked {
 public:
  AsyncSignalsBlocked() noexcept;
  ~AsyncSignalsBlocked();
  AsyncSignalsBlocked(const AsyncSignalsBlocked&) = delete;
  AsyncSignalsBlocked& operator=(const AsyncSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace weft::io::detail
