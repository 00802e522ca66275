#include "signal_mask.h"

#include <pthread.h>

#include <initializer_list>

namespace weft::io::detail {

namespace {
constexpr int kLastSignal = 64;
}  // namespace

SignalBits signal_bits(const sigset_t& set) noexcept {
  SignalBits bits = 0;
  for (int signal = 1; signal <= kLastSignal; ++signal) {
    if (sigismember(&set, signal) == 1) bits |= SignalBits{1} << (signal - 1);
  }
  return bits;
}

sigset_t signal_set(SignalBits bits) noexcept {
  sigset_t set;
  sigemptyset(&set);
  for (int signal = 1; signal <= kLastSignal; ++signal) {
    // sigaddset refuses the C library's own signals: they stay deliverable.
    if ((bits >> (signal - 1)) & 1) sigaddset(&set, signal);
  }
  return set;
}

AsyncSignalsBlocked::AsyncSignalsBlocked() noexcept {
  sigset_t all;
  sigfillset(&all);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&all, fault);
  pthread_sigmask(SIG_BLOCK, &all, &previous_);
}

AsyncSignalsBlocked::~AsyncSignalsBlocked() {
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace weft::io::detail
