#include "weft/process_end.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include "weft/this_thread.h"

namespace weft {

namespace {

// Who ends the process, 0 while nobody does: a user thread by its weft id (top bit set), any other
// thread by its kernel thread id. A user thread's own id, since an exit handler that parks may
// resume it on another kernel thread.
std::atomic<std::uint64_t> ending_thread{0};

std::uint64_t caller() noexcept {
  if (this_thread::is_weft_thread()) return this_thread::id() | (std::uint64_t{1} << 63);
  return static_cast<std::uint64_t>(::gettid());
}

using Exit = void (*)(int);

// The C library's exit, looked up in the C library itself: the program loader defines an exit in
// front of it (tools/loader/process_exit.c) that comes back here. Looked up before any fork: the
// loader's lock may be held by another thread at the moment of a fork, and the child has none
// to release it.
Exit find_libc_exit() noexcept {
  void* const library = ::dlopen(LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
  return reinterpret_cast<Exit>(library != nullptr ? ::dlsym(library, "exit") : nullptr);
}
const Exit libc_exit = find_libc_exit();

void forget_claim_in_child() noexcept {
  ending_thread.store(0, std::memory_order_relaxed);  // one thread: nothing to order
}
[[maybe_unused]] const int fork_handler_registered =
    ::pthread_atfork(nullptr, nullptr, forget_claim_in_child);

// The threads inside a RankHandlersScope, by caller(). A rare path (a rank's end): a mutex is fine.
std::mutex runners_mutex;
std::vector<std::uint64_t> runners;

bool another_runs_rank_handlers(std::uint64_t self) {
  const std::lock_guard lock(runners_mutex);
  return std::any_of(runners.begin(), runners.end(), [self](auto r) { return r != self; });
}

void pause_briefly() noexcept {
  if (this_thread::is_weft_thread()) {
    this_thread::sleep_for(std::chrono::milliseconds(1));
  } else {
    ::usleep(1000);
  }
}

[[noreturn]] void wait_for_the_end() noexcept {
  for (;;) {
    if (this_thread::is_weft_thread()) {
      this_thread::sleep_for(std::chrono::hours(1));
    } else {
      ::pause();
    }
  }
}

}  // namespace

void claim_process_end() noexcept {
  const std::uint64_t self = caller();
  std::uint64_t expected = 0;
  // acq_rel: the winner's exit handlers see what the losers did before they asked.
  if (ending_thread.compare_exchange_strong(expected, self, std::memory_order_acq_rel) ||
      expected == self) {
    return;
  }
  wait_for_the_end();
}

bool process_end_claimed_by_another() noexcept {
  const std::uint64_t claimed = ending_thread.load(std::memory_order_acquire);
  return claimed != 0 && claimed != caller();
}

void end_process(int status) noexcept {
  claim_process_end();
  // A handler of a rank's end that ends the process itself is the scope's own thread: no wait.
  while (another_runs_rank_handlers(caller())) pause_briefly();
  if (libc_exit != nullptr) libc_exit(status);
  // No C library to ask (it cannot be: this runs in it): end without the exit handlers.
  ::_exit(status);
}

RankHandlersScope::RankHandlersScope() noexcept : runner_(caller()) {
  const std::lock_guard lock(runners_mutex);
  runners.push_back(runner_);
}

RankHandlersScope::~RankHandlersScope() {
  const std::lock_guard lock(runners_mutex);
  runners.erase(std::find(runners.begin(), runners.end(), runner_));
}

}  // namespace weft
