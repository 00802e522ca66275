#include "exit_functions.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "caller_identity.h"
#include "sanitizer.h"
#include "weft/this_thread.h"

// The sanitizers' runtimes intercept __cxa_atexit too and call the next definition, libweft's,
// from their own initialization, before instrumented code may run: those builds keep glibc's
// (and its fork hang, exit_functions_test skips its forks there).
#if !defined(WEFT_SANITIZER_ASAN) && !defined(WEFT_SANITIZER_TSAN)

namespace weft::detail {
namespace {

using CxaAtexit = int (*)(void (*)(void*), void*, void*);
using CxaFinalize = void (*)(void*);

// The definition of `name` next after libweft's (glibc's); the process cannot go on without it.
template <class Function>
Function next_definition(const char* name) noexcept {
  void* const found = ::dlsym(RTLD_NEXT, name);
  if (found == nullptr) {
    const std::string_view parts[] = {"weft: no ", name, " after libweft's (dlsym)\n"};
    for (std::string_view part : parts) {
      [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, part.data(), part.size());
    }
    std::abort();
  }
  return reinterpret_cast<Function>(found);
}

// glibc's definitions. Looked up at the first call, which another library's constructor may make
// before libweft's run, and at load (below): a child of fork must not be the first to ask, the
// loader's lock may have been taken at the fork.
CxaAtexit glibc_cxa_atexit() noexcept {
  static const CxaAtexit next = next_definition<CxaAtexit>("__cxa_atexit");
  return next;
}

CxaFinalize glibc_cxa_finalize() noexcept {
  static const CxaFinalize next = next_definition<CxaFinalize>("__cxa_finalize");
  return next;
}

void pause_briefly() noexcept {
  if (this_thread::is_weft_thread()) {
    this_thread::yield();
  } else {
    ::sched_yield();
  }
}

// The threads inside glibc's list code, by caller_identity (a destructor that parks may resume
// on another kernel thread), and whether a fork is under way. Constant-initialized: libraries
// loaded before libweft register from their constructors before libweft's run. Its spin lock
// guards a few instructions with no scheduling point in them, and a child of fork resets it (a
// pthread mutex taken by another thread at the fork would stay taken there).
class Gate {
 public:
  // Counts the caller in `depth` times, waiting while a fork is under way or waits to be made; a
  // thread already in counts again without waiting.
  void enter(std::uint64_t self, int depth = 1) noexcept {
    for (;;) {
      lock();
      if (Holder* holder = find(self)) {
        holder->depth += depth;
        unlock();
        return;
      }
      if (forks_ == 0) {
        if (Holder* free = find(0)) {
          *free = Holder{self, depth};
          ++used_;
          unlock();
          return;
        }
      }
      unlock();
      pause_briefly();
    }
  }

  void leave(std::uint64_t self) noexcept {
    lock();
    if (Holder* holder = find(self); holder != nullptr && --holder->depth == 0) release(holder);
    unlock();
  }

  // Counts the caller out whatever its depth; returns the depth, 0 when it was not in.
  int step_out(std::uint64_t self) noexcept {
    lock();
    Holder* holder = find(self);
    const int depth = holder != nullptr ? holder->depth : 0;
    if (holder != nullptr) release(holder);
    unlock();
    return depth;
  }

  // The fork's prepare handler: keeps newcomers out at once (threads that keep registering would
  // otherwise starve the fork), then returns once no other thread is in. The caller itself may be
  // in, when a function that glibc's list code calls without the trampoline forks: glibc has
  // released its lock around that call.
  void close(std::uint64_t self) noexcept {
    lock();
    ++forks_;
    for (;;) {
      const int others = used_ - (find(self) != nullptr ? 1 : 0);
      unlock();
      if (others == 0) return;
      pause_briefly();
      lock();
    }
  }

  void open() noexcept {
    lock();
    --forks_;
    unlock();
  }

  // The child has the forking thread alone: nobody is in there.
  void open_in_child() noexcept {
    locked_.store(false, std::memory_order_relaxed);
    forks_ = 0;
    used_ = 0;
    for (Holder& holder : holders_) holder = Holder{};
  }

 private:
  struct Holder {
    std::uint64_t thread = 0;
    int depth = 0;
  };

  // Bounds the kernel threads inside glibc's list code at once: none parks there, so a full
  // table only makes a newcomer wait for a slot.
  static constexpr int kHolders = 256;

  void lock() noexcept {
    // acquire/release: the table and the flag are read and written under the lock only.
    while (locked_.exchange(true, std::memory_order_acquire)) ::sched_yield();
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  // The slot of `thread`, or a free slot for 0; null when there is none.
  Holder* find(std::uint64_t thread) noexcept {
    for (Holder& holder : holders_) {
      if (holder.thread == thread) return &holder;
    }
    return nullptr;
  }

  void release(Holder* holder) noexcept {
    *holder = Holder{};
    --used_;
  }

  std::atomic<bool> locked_{false};
  int forks_ = 0;  // forks under way or waiting for the threads in to leave
  int used_ = 0;   // slots taken
  Holder holders_[kHolders];
};

constinit Gate gate;

// A function registered through libweft's __cxa_atexit, called by glibc through call_registered.
struct Registered {
  void (*function)(void*);
  void* argument;
};

// In and out of the gate around glibc's list code, also when a function it calls throws.
class Inside {
 public:
  explicit Inside(std::uint64_t self, int depth = 1) noexcept : self_(self) {
    gate.enter(self_, depth);
  }
  ~Inside() { gate.leave(self_); }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;

 private:
  std::uint64_t self_;
};

// glibc releases its lock while it calls a registered function: forks are let through meanwhile
// too, so that a function that runs long, waits for a forking thread or forks itself does not
// hold every fork of the process (or its own) up.
void call_registered(void* record) {
  const Registered registered = *static_cast<Registered*>(record);
  std::free(record);
  const std::uint64_t self = caller_identity();
  const int depth = gate.step_out(self);
  struct BackIn {
    std::uint64_t self;
    int depth;
    ~BackIn() {
      if (depth > 0) gate.enter(self, depth);
    }
  } back_in{self, depth};
  registered.function(registered.argument);
}

void close_gate() noexcept {
  gate.close(caller_identity());
}
void open_gate() noexcept {
  gate.open();
}
void open_gate_in_child() noexcept {
  gate.open_in_child();
}

[[maybe_unused]] const bool looked_up = glibc_cxa_atexit() != nullptr && glibc_cxa_finalize();
[[maybe_unused]] const int fork_handlers_registered =
    ::pthread_atfork(close_gate, open_gate, open_gate_in_child);

}  // namespace

void hold_exit_functions_until_the_end() noexcept {
  gate.enter(caller_identity());
}

bool exit_functions_gated() noexcept {
  return true;
}

}  // namespace weft::detail

using weft::detail::caller_identity;

// In front of glibc's (exit_functions.h); default visibility, so that every library of the
// process and the program bind to them.
extern "C" __attribute__((visibility("default"))) int __cxa_atexit(void (*function)(void*),
                                                                   void* argument, void* dso) {
  auto* record =
      static_cast<weft::detail::Registered*>(std::malloc(sizeof(weft::detail::Registered)));
  if (record == nullptr) return -1;
  *record = weft::detail::Registered{function, argument};
  int result = -1;
  {
    const weft::detail::Inside inside(caller_identity());
    result = weft::detail::glibc_cxa_atexit()(weft::detail::call_registered, record, dso);
  }
  if (result != 0) std::free(record);
  return result;
}

extern "C" __attribute__((visibility("default"))) void __cxa_finalize(void* dso) {
  const weft::detail::Inside inside(caller_identity());
  weft::detail::glibc_cxa_finalize()(dso);
}

#else

namespace weft::detail {

void hold_exit_functions_until_the_end() noexcept {}

bool exit_functions_gated() noexcept {
  return false;
}

}  // namespace weft::detail

#endif
