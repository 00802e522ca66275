#include "preemption.h"

#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "current.h"
#include "scheduler_impl.h"
#include "virtual_processor.h"
#include "weft/error.h"
#include "weft/preemption.h"
#include "weft/this_thread.h"

namespace weft::detail {

namespace {

// SIGURG, as Go's runtime uses it: ignored by default, so a tick that arrives after the handler
// is gone ends nothing, and programs already expect it spuriously (out-of-band socket data).
constexpr int kSignal = SIGURG;

// Registered ranges: appended under `registry_lock`, read by the signal handler without a lock.
// A range is written before the count that covers it is published (release), and the handler
// reads the count with acquire, so it never sees a half-written range.
struct CodeRange {
  std::uintptr_t begin;
  std::uintptr_t end;
};
constexpr std::size_t kMaxRanges = 4096;
CodeRange ranges[kMaxRanges];
std::atomic<std::size_t> range_count{0};
std::mutex registry_lock;
struct sigaction previous_action;

bool in_registered_code(std::uintptr_t pc) noexcept {
  const std::size_t count = range_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < count; ++i) {
    if (pc >= ranges[i].begin && pc < ranges[i].end) return true;
  }
  return false;
}

bool interrupted_at(const void* context, std::uintptr_t& pc, std::uintptr_t& sp) noexcept {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  pc = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  sp = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  return true;
#elif defined(__aarch64__)
  pc = static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
  sp = static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
  return true;
#else
  (void)uc;
  (void)pc;
  (void)sp;
  return false;
#endif
}

// errno through out-of-line calls: the thread may resume on another kernel thread, whose errno
// is another variable, and __errno_location is declared const, so the compiler could reuse the
// address it computed before the switch.
[[gnu::noinline]] int read_errno() noexcept {
  asm volatile("" ::: "memory");
  return errno;
}
[[gnu::noinline]] void write_errno(int value) noexcept {
  asm volatile("" ::: "memory");
  errno = value;
}

void chain(int signal, siginfo_t* info, void* context) {
  if (previous_action.sa_flags & SA_SIGINFO) {
    if (previous_action.sa_sigaction != nullptr) previous_action.sa_sigaction(signal, info, context);
  } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
    previous_action.sa_handler(signal);
  }
}

void on_tick(int signal, siginfo_t* info, void* context) {
  if (info->si_code != SI_TIMER) {
    chain(signal, info, context);
    return;
  }
  std::uintptr_t pc = 0;
  std::uintptr_t sp = 0;
  if (!interrupted_at(context, pc, sp) || !in_registered_code(pc)) return;
  // Registered code is the program's own: the scheduler's state on this kernel thread is whole
  // (no weft code is half-way through on it), and no C library lock is held by code running
  // here, so switching from the handler is a yield like any other.
  VirtualProcessor* vp = current_vp();
  if (vp == nullptr || !vp->preemption_due(reinterpret_cast<const void*>(sp))) return;
  const int saved_errno = read_errno();
  this_thread::yield();
  // A free thread may have resumed on another kernel thread. Returning from the handler restores
  // the frame's registers, signal mask and alternate signal stack there; the alternate stack
  // saved in the frame is the previous kernel thread's, so put this one's in its place.
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0) {
    static_cast<ucontext_t*>(context)->uc_stack = current;
  }
  write_errno(saved_errno);
}

void install_handler() {
  struct sigaction action = {};
  action.sa_sigaction = on_tick;
  // SA_NODEFER: a thread preempted here may resume elsewhere, so the signal must not stay blocked
  // on this kernel thread while the threads switched to run. SA_RESTART: a tick that lands in a
  // system call restarts it where the call allows.
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  if (::sigaction(kSignal, &action, &previous_action) != 0) {
    throw Error(std::string("weft::allow_preemption_in: sigaction(SIGURG) failed: ") +
                std::strerror(errno));
  }
}

}  // namespace

PreemptionTimer::PreemptionTimer(long period_ms) : period_ms_(period_ms) {
#if defined(__x86_64__) || defined(__aarch64__)
  if (period_ms <= 0) return;
  struct sigevent event = {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = kSignal;
  event._sigev_un._tid = static_cast<pid_t>(::syscall(SYS_gettid));
  // Without a timer the processor's threads are cooperative only, as they were before.
  created_ = ::timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &id_) == 0;
#endif
}

PreemptionTimer::~PreemptionTimer() {
  if (created_) ::timer_delete(id_);
}

void PreemptionTimer::arm() noexcept {
  if (!created_) return;
  struct itimerspec spec = {};
  spec.it_value.tv_sec = period_ms_ / 1000;
  spec.it_value.tv_nsec = (period_ms_ % 1000) * 1'000'000;
  spec.it_interval = spec.it_value;
  ::timer_settime(id_, 0, &spec, nullptr);
}

bool preemptible_code_registered() noexcept {
  return range_count.load() != 0;
}

}  // namespace weft::detail

namespace weft {

void allow_preemption_in(const void* begin, std::size_t size) {
  using namespace detail;
  std::lock_guard lock(registry_lock);
  const std::size_t count = range_count.load(std::memory_order_relaxed);
  if (count == kMaxRanges) {
    throw Error("weft::allow_preemption_in: " + std::to_string(kMaxRanges) +
                " code ranges are registered already, the most it holds");
  }
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  ranges[count] = CodeRange{first, first + size};
  if (count == 0) install_handler();
  // seq_cst: a processor that starts now creates its timer, then reads the count (seq_cst); we
  // publish the count, then look at the processors' timers. One of the two arms it.
  range_count.store(count + 1);
  if (count != 0) return;
  if (Scheduler::Impl* scheduler = running_scheduler()) {
    for (const auto& vp : scheduler->vps) vp->arm_preemption();
  }
}

}  // namespace weft
