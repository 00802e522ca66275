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

#include "caller_identity.h"
#include "exit_functions.h"
#include "weft/this_thread.h"

namespace weft {

namespace {

// Who ends the process (detail::caller_identity: an exit handler that parks may resume on another
// kernel thread), 0 while nobody does.
std::atomic<std::uint64_t> ending_thread{0};

std::uint64_t caller() noexcept {
  return detail::caller_identity();
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

// The threads inside a RankHandlersScope, by caller(), and whether the thread that ends the process
// has found none: from then on glibc's exit runs every rank's handlers that are left, and a rank
// that ends after that leaves its handlers to it. Checking and closing under one lock: a rank that
// took its handlers just after the check would have them skipped by glibc's exit and be cut off
// in the middle of them. A rare path (a rank's end): a mutex is fine.
std::mutex runners_mutex;
std::vector<std::uint64_t> runners;
bool runners_closed = false;

// Closes the scopes to others once none but the caller's is open; false while one is.
bool close_rank_handlers(std::uint64_t self) {
  const std::lock_guard lock(runners_mutex);
  if (std::any_of(runners.begin(), runners.end(), [self](auto r) { return r != self; })) {
    return false;
  }
  runners_closed = true;
  return true;
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
  while (!close_rank_handlers(caller())) pause_briefly();
  detail::hold_exit_functions_until_the_end();
  if (libc_exit != nullptr) libc_exit(status);
  // No C library to ask (it cannot be: this runs in it): end without the exit handlers.
  ::_exit(status);
}

RankHandlersScope::RankHandlersScope() noexcept : runner_(caller()) {
  {
    const std::lock_guard lock(runners_mutex);
    if (!runners_closed) {
      runners.push_back(runner_);
      return;
    }
  }
  // The process is ending in another thread, whose exit runs this rank's handlers.
  wait_for_the_end();
}

RankHandlersScope::~RankHandlersScope() {
  const std::lock_guard lock(runners_mutex);
  runners.erase(std::find(runners.begin(), runners.end(), runner_));
}

}  // namespace weft
