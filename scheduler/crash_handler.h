// Diagnostics for user threads that crash: a fault in a guard page is reported as a stack
// overflow naming the thread and the configuration key that raises its stack; any other fatal
// signal in a user thread names the thread too. The process then dies of the original signal.
#pragma once

#include <vector>

namespace weft::detail {

struct Fiber;

// Installs the handlers for the scheduler's lifetime and restores the previous ones after. A
// signal on a kernel thread that runs no weft thread goes to the handler installed before.
class CrashHandler {
 public:
  CrashHandler();
  ~CrashHandler();
  CrashHandler(const CrashHandler&) = delete;
  CrashHandler& operator=(const CrashHandler&) = delete;
};

// The handlers run on this stack: the faulting thread's own stack may be the one that is full.
class AlternateSignalStack {
 public:
  AlternateSignalStack();
  ~AlternateSignalStack();
  AlternateSignalStack(const AlternateSignalStack&) = delete;
  AlternateSignalStack& operator=(const AlternateSignalStack&) = delete;

 private:
  std::vector<char> memory_;
};

// A canary stack found overwritten at a switch: reports like a guard-page fault and ends the
// process.
[[noreturn]] void report_stack_overflow(const Fiber& fiber, int vp) noexcept;

}  // namespace weft::detail
