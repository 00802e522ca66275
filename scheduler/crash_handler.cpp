#include "crash_handler.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "current.h"
#include "fiber.h"
#include "scheduler_impl.h"
#include "virtual_processor.h"
#include "weft/thread_dump.h"
#include "weft/process_end.h"

namespace weft::detail {

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr std::size_t kAltStackSize = 64 * 1024;

struct sigaction previous[std::size(kSignals)];

// Formats into a fixed buffer: malloc and stdio are not async-signal-safe.
class Line {
 public:
  Line& operator<<(const char* text) {
    while (*text != '\0' && length_ < sizeof(buffer_) - 1) buffer_[length_++] = *text++;
    return *this;
  }
  Line& operator<<(std::string_view text) {
    for (char c : text) {
      if (length_ < sizeof(buffer_) - 1) buffer_[length_++] = c;
    }
    return *this;
  }
  Line& operator<<(long long value) {
    char digits[24];
    int n = 0;
    const bool negative = value < 0;
    unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(value) : value;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    if (negative) *this << "-";
    while (n > 0 && length_ < sizeof(buffer_) - 1) buffer_[length_++] = digits[--n];
    return *this;
  }
  Line& hex(std::uintptr_t value) {
    char digits[16];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[value % 16];
      value /= 16;
    } while (value != 0);
    *this << "0x";
    while (n > 0 && length_ < sizeof(buffer_) - 1) buffer_[length_++] = digits[--n];
    return *this;
  }
  Line& upper(std::string_view text) {
    for (char c : text) {
      if (length_ < sizeof(buffer_) - 1) {
        buffer_[length_++] = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
    }
    return *this;
  }
  void write() {
    buffer_[length_++] = '\n';
    // The system call itself: libweft's write() may park a user thread waiting for the descriptor.
    ssize_t ignored = ::syscall(SYS_write, STDERR_FILENO, buffer_, length_);
    (void)ignored;
  }

 private:
  char buffer_[512];
  std::size_t length_ = 0;
};

void describe_thread(Line& line, const Fiber& fiber, int vp) {
  line << "thread " << static_cast<long long>(fiber.id) << " (type " << to_string(fiber.type);
  if (fiber.rank >= 0) line << ", rank " << static_cast<long long>(fiber.rank);
  line << ") on virtual processor " << static_cast<long long>(vp);
}

void overflow_message(const Fiber& fiber, int vp, const char* how) {
  Line line;
  line << "weft: stack overflow in ";
  describe_thread(line, fiber, vp);
  line << ": its " << static_cast<long long>(fiber.stack.size / 1024) << " KiB stack is exhausted ("
       << how << "); raise stack." << to_string(fiber.type) << " (--set stack."
       << to_string(fiber.type) << "=<size> or WEFT_STACK_";
  line.upper(to_string(fiber.type)) << "=<size>) or the thread's stack_size";
  line.write();
}

// Where the thread was: the instruction and the function and object that hold it, so that a crash
// in a rank's code names the function without a debugger. dladdr is not async-signal-safe, but
// the process is about to die of this signal either way.
void describe_location(Line& line, int signal, const siginfo_t* info, const void* context) {
  std::uintptr_t pc = 0;
#if defined(__x86_64__)
  pc = static_cast<std::uintptr_t>(
      static_cast<const ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  pc = static_cast<std::uintptr_t>(static_cast<const ucontext_t*>(context)->uc_mcontext.pc);
#endif
  if (signal == SIGSEGV || signal == SIGBUS) {
    line << " accessing ";
    line.hex(reinterpret_cast<std::uintptr_t>(info->si_addr));
  }
  if (pc == 0) return;
  line << " at ";
  line.hex(pc);
  Dl_info where = {};
  if (::dladdr(reinterpret_cast<void*>(pc), &where) == 0) return;
  if (where.dli_sname != nullptr) {
    line << " in " << where.dli_sname << "+";
    line.hex(pc - reinterpret_cast<std::uintptr_t>(where.dli_saddr));
  }
  if (where.dli_fname != nullptr) {
    line << " (" << where.dli_fname << "+";
    line.hex(pc - reinterpret_cast<std::uintptr_t>(where.dli_fbase));
    line << ")";
  }
}

// The other user threads, so that the report of a failing rank shows what the others were doing
// (rank 1 crashed while ranks 0 and 2 waited in MPI_Recv from it). Reads without locks: the
// process dies next, and a lock the crashing thread held would never be released.
void describe_other_threads(const Fiber& crashed) {
  const Scheduler::Impl* impl = running_scheduler();
  if (impl == nullptr) return;
  for (const auto& owned : impl->all_fibers) {
    const Fiber& fiber = *owned;
    if (&fiber == &crashed || !fiber.live.load(std::memory_order_relaxed)) continue;
    Line line;
    line << "weft:   other ";
    const int vp = fiber.vp.load(std::memory_order_relaxed);
    describe_thread(line, fiber, vp);
    switch (park_state(fiber.park.load(std::memory_order_relaxed))) {
      case ParkState::parked:
        line << ": parked";
        break;
      case ParkState::running:
        line << ": running or runnable";
        break;
      default:
        line << ": parking";
        break;
    }
    const auto* note =
        static_cast<const WaitNoteName*>(fiber.wait_note.load(std::memory_order_relaxed));
    if (note != nullptr && note->size > 0)
      line << " in " << std::string_view(note->name, note->size);
    line.write();
  }
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
  }
  return "a fatal signal";
}

void on_fatal_signal(int signal, siginfo_t* info, void* context) {
  // Another thread is ending the process: its exit handlers destroy state (a rank copy's, the
  // library's) that this thread may still have been using. The crash is a consequence of the
  // end, not its cause: wait for the process to be gone, with the ending thread's status.
  if (process_end_claimed_by_another()) {
    for (;;) ::pause();
  }
  VirtualProcessor* vp = current_vp();
  const Fiber* fiber = vp != nullptr ? vp->current() : nullptr;
  if (fiber == nullptr) {
    // Not a weft thread: whatever handled this signal before weft still does.
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      if (kSignals[i] != signal) continue;
      const struct sigaction& before = previous[i];
      if ((before.sa_flags & SA_SIGINFO) != 0 && before.sa_sigaction != nullptr) {
        before.sa_sigaction(signal, info, context);
        return;
      }
      if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
        before.sa_handler(signal);
        return;
      }
    }
  } else {
    if ((signal == SIGSEGV || signal == SIGBUS) && fiber->stack.in_guard(info->si_addr)) {
      overflow_message(*fiber, vp->index(), "guard page hit");
    } else {
      Line line;
      line << "weft: ";
      describe_thread(line, *fiber, vp->index());
      line << " crashed with " << signal_name(signal);
      describe_location(line, signal, info, context);
      line.write();
      describe_other_threads(*fiber);
    }
  }
  // Die of the original signal: returning re-executes the faulting instruction (or abort()
  // raises again) under the default action.
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(signal, &dfl, nullptr);
  if (info->si_code <= 0) ::raise(signal);
}

}  // namespace

CrashHandler::CrashHandler() {
  struct sigaction action = {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    ::sigaction(kSignals[i], &action, &previous[i]);
  }
}

CrashHandler::~CrashHandler() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    ::sigaction(kSignals[i], &previous[i], nullptr);
  }
}

AlternateSignalStack::AlternateSignalStack() : memory_(kAltStackSize) {
  stack_t stack = {};
  stack.ss_sp = memory_.data();
  stack.ss_size = memory_.size();
  ::sigaltstack(&stack, nullptr);
}

AlternateSignalStack::~AlternateSignalStack() {
  stack_t stack = {};
  stack.ss_flags = SS_DISABLE;
  ::sigaltstack(&stack, nullptr);
}

void report_stack_overflow(const Fiber& fiber, int vp) noexcept {
  overflow_message(fiber, vp, "canary overwritten");
  std::_Exit(EXIT_FAILURE);
}

}  // namespace weft::detail
